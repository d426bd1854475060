// SPDX-License-Identifier: GPL-2.0
//! A CREM datagram from the socket, to the flow it is for: checked against
//! the configured peers and Path Reporters, decoded once, routed by
//! crem-core (`wire::route`: which side, which key) and handed to the flow
//! the netns's table finds; a HELLO for a receiver flow there is none of
//! asks for one (`create.rs`), which answers it. What C still does around
//! it (`crem_flow_msg`): the counters of the verdict.

use crate::create;
use crate::crem_core::wire::{self, FlowAddrs, FlowKind, Route, Side};
use crate::flow::{self, Flow};
use crate::host;
use crate::kernel_ext::bh;
use crate::netns;
use crate::table::{kind_code, FlowKey, FlowTable, SIDE_CRF, SIDE_CSF};
use core::ffi::{c_int, c_void};

/// What became of a datagram (`enum crem_msg_verdict`, crem_engine.h).
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Handed to its flow.
    Fed = 0,
    /// A PATH_REPORT handed to its sender flow.
    ReportFed = 1,
    /// A HELLO for a receiver flow there is none of: asked for.
    NewFlow = 2,
    /// From an address that may not send it.
    NotPeer = 3,
    /// Not a valid message, or a HELLO of a flow this node cannot protect.
    Invalid = 4,
    /// For no flow here.
    NoFlow = 5,
}

fn side_code(s: Side) -> u8 {
    match s {
        Side::Sender => SIDE_CSF,
        Side::Receiver => SIDE_CRF,
    }
}

/// IPv4 addresses in network order (the table's), or `None` for IPv6,
/// which this version does not protect.
fn v4(a: FlowAddrs) -> Option<(u32, u32)> {
    match a {
        FlowAddrs::V4 { src, dst } => Some((u32::from_ne_bytes(src), u32::from_ne_bytes(dst))),
        _ => None,
    }
}

/// The TTL of a receiver flow's restored packets until its first packet
/// shows the path's.
const HELLO_FLOW_TTL: u8 = 64;

/// The datagram `msg` from `from` (network order) to the flow it is for,
/// in the netns whose state is `st`; `tos`: of its IP header (CE-marked on
/// the REPAIR path: congestion; the DSCP a HELLO's answer leaves with).
fn dispatch(st: &netns::NetState, from: u32, msg: &[u8], tos: u8) -> Verdict {
    let ce = flow::ce(tos);
    // BH is off for the whole dispatch (the flow's lock needs it, and it
    // is an RCU read-side section for the configuration and the table).
    let bh = bh::disable();
    let cfg = st.peers.get(&*bh);
    let (peer, reporter) = (cfg.is_peer(from), cfg.is_reporter(from));
    // Nothing is decoded from anyone else.
    if !peer && !reporter {
        return Verdict::NotPeer;
    }
    let Ok(m) = wire::decode(msg) else {
        return Verdict::Invalid;
    };
    // The message alone, without what the datagram carries past its
    // Length (which decoding ignores): what the flow and a queued
    // creation request keep.
    let msg = wire::Header::decode(msg).map_or(msg, |(_, m)| m);
    let route = wire::route(&m);
    if !wire::accepted_from(&route, peer, reporter) {
        return Verdict::NotPeer;
    }
    let t: &FlowTable<Flow> = &st.flows;
    let (flow, fed) = match route {
        Route::PathReport { addrs, dest_qp } => {
            // About the requests of a flow this node sends.
            let key = v4(addrs).map(|(saddr, daddr)| FlowKey {
                saddr,
                daddr,
                dqp: dest_qp,
                side: SIDE_CSF,
                kind: kind_code(FlowKind::Requests),
            });
            (key.and_then(|k| t.lookup(&k, &*bh)), Verdict::ReportFed)
        }
        Route::Hello {
            addrs,
            dest_qp,
            kind,
        } => {
            let (Some((saddr, daddr)), Some(kind)) = (v4(addrs), kind) else {
                return Verdict::Invalid;
            };
            // The peer that protects the flow's source prefix sends its
            // HELLOs, no other.
            if cfg.peer_for(saddr) != from {
                return Verdict::NotPeer;
            }
            let k = FlowKey {
                saddr,
                daddr,
                dqp: dest_qp,
                side: SIDE_CRF,
                kind: kind_code(kind),
            };
            let f = t.lookup(&k, &*bh);
            if f.is_none() {
                // Its answer leaves with the HELLO's DSCP (the protected
                // flow's); TTL as a fresh packet's.
                let rq = create::request_for(k, from, tos, HELLO_FLOW_TTL);
                st.creation.request(st, &rq, msg, &bh);
                return Verdict::NewFlow;
            }
            (f, Verdict::Fed)
        }
        // The sender learns its Flow ID here, by its HELLO's nonce.
        Route::Nonce(n) => (t.lookup_nonce(from, n, &*bh), Verdict::Fed),
        Route::Id {
            flow_id,
            side,
            or_receiver,
        } => {
            let f = t
                .lookup_id(from, flow_id, side_code(side), &*bh)
                .or_else(|| {
                    or_receiver
                        .then(|| t.lookup_id(from, flow_id, SIDE_CRF, &*bh))
                        .flatten()
                });
            (f, Verdict::Fed)
        }
    };
    match flow {
        Some(f) => {
            f.msg(&bh, msg, ce);
            fed
        }
        None => Verdict::NoFlow,
    }
}

/// The CREM socket's datagram `msg` (`len` octets) from `from` (network
/// order) with IP `tos`, in the netns whose Rust state is `net` (softirq,
/// under RCU): see [`dispatch`]. A `crem_msg_verdict`; `*slot`: its
/// msgs-by-type slot (< CREM_MSG_SLOTS), set whatever the verdict.
#[no_mangle]
extern "C" fn crem_rs_sock_msg(
    net: *mut c_void,
    from: u32,
    msg: *const u8,
    len: u32,
    tos: u8,
    slot: *mut u8,
) -> c_int {
    // SAFETY: C's out-parameter, valid for the call.
    let Some(slot) = (unsafe { slot.as_mut() }) else {
        return Verdict::Invalid as c_int;
    };
    *slot = 0;
    // SAFETY: C passes its per-netns state, live while its socket is.
    let Some(st) = (unsafe { netns::state_opt(net) }) else {
        return Verdict::Invalid as c_int;
    };
    let msg: &[u8] = if msg.is_null() {
        &[]
    } else {
        // SAFETY: the datagram's linear payload, valid for the call.
        unsafe { core::slice::from_raw_parts(msg, len as usize) }
    };
    *slot = host::msg_slot(msg) as u8;
    dispatch(st, from, msg, tos) as c_int
}
