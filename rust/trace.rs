// SPDX-License-Identifier: GPL-2.0
//! The module's tracepoints (tracefs `events/crem/`, defined in
//! `helpers/crem_trace.h`): a flow's life (up, down), its flow-change events
//! (circuit breaker, CLOSE received), the FEC configuration in force, each
//! decoded source packet, each REPAIR_REQUEST. Each is a static key: a
//! disabled one costs a call and a test; `request` decodes its message only
//! when enabled. The counters stay the complete record; these say which
//! flow and when.

use crate::addr::NetAddr;
use crate::crem_core::engine::FecConfig;
use crate::crem_core::psn::Psn;
use crate::crem_core::wire::{self, Message, RequestKind};
use crate::ffi;
use crate::table::FlowKey;

/// The key as the tracepoints take it.
fn c(k: &FlowKey) -> ffi::crem_trace_key {
    ffi::crem_trace_key {
        saddr: *k.saddr.octets(),
        daddr: *k.daddr.octets(),
        dqp: k.dqp,
        side: k.side,
        kind: k.kind,
    }
}

/// Flow `k` of `peer` is in its table and started.
pub(crate) fn flow_up(k: &FlowKey, peer: &NetAddr) {
    // SAFETY: the key and the peer's 16 octets are ours for the call; the
    // wrapper only records them.
    unsafe { ffi::crem_h_trace_flow_up(&c(k), peer.octets().as_ptr()) };
}

/// Flow `k` is removed, its engine ended with CLOSE `close` (-1: none).
pub(crate) fn flow_down(k: &FlowKey, peer: &NetAddr, close: i32) {
    // SAFETY: as in `flow_up`.
    unsafe { ffi::crem_h_trace_flow_down(&c(k), peer.octets().as_ptr(), close) };
}

/// A flow-change event (`CREM_FLOW_EVENT_*`, `reason`: of a CLOSE).
pub(crate) fn flow_change(k: &FlowKey, event: u32, reason: u16) {
    // SAFETY: as in `flow_up`.
    unsafe { ffi::crem_h_trace_flow_change(&c(k), event, reason) };
}

/// The FEC configuration in force is now `cfg`.
pub(crate) fn config(k: &FlowKey, cfg: &FecConfig) {
    // SAFETY: as in `flow_up`.
    unsafe { ffi::crem_h_trace_config(&c(k), cfg.id, cfg.scheme as u8, cfg.k, cfg.m, cfg.t) };
}

/// Source packet `psn` decoded: `held` or on its way, `ok` or dropped.
pub(crate) fn restore(k: &FlowKey, psn: Psn, held: bool, ok: bool) {
    // SAFETY: as in `flow_up`.
    unsafe { ffi::crem_h_trace_restore(&c(k), psn.value(), held, ok) };
}

/// REPAIR_REQUEST `msg` is being sent (decoded only if the event is on).
pub(crate) fn request(k: &FlowKey, msg: &[u8]) {
    // SAFETY: reads the tracepoint's static key.
    if !unsafe { ffi::crem_h_trace_request_enabled() } {
        return;
    }
    let Ok(Message::RepairRequest(r)) = wire::decode(msg) else {
        return;
    };
    let sat = |n: u64| u8::try_from(n).unwrap_or(u8::MAX);
    let (ranges, first, n, lost) = match r.kind {
        RequestKind::Block(b) => (
            false,
            b.block_start.value(),
            b.k,
            sat(b.lost_count().into()),
        ),
        RequestKind::Ranges(rr) => (
            true,
            rr.ranges.iter().next().map_or(0, |x| x.start.value()),
            sat(rr.ranges.len() as u64),
            sat(rr.ranges.total_psns()),
        ),
    };
    // SAFETY: as in `flow_up`.
    unsafe { ffi::crem_h_trace_request(&c(k), ranges, r.fallback, first, n, lost) };
}
