// SPDX-License-Identifier: GPL-2.0
//! What a flow reports (flow-get, the flow notifications, flow-reset, the
//! netns's totals): [`FlowInfo`], its identity and state in the units of
//! the flow attributes, and [`Counters`], one per attribute of the
//! flow-stats set of netlink/crem.yaml, indexed by the generated
//! `nl::flow_stat` and `nl::msg_type` constants.
//!
//! A counter added to the spec is reported with nothing added to the
//! netlink code (`netlink::flow::put_counters` writes the set from its
//! generated table): only the code that counts it sets its index (the
//! engine's in `Engine::info`, the datapath's in `flow::info_locked`).

use crate::addr::NetAddr;
use crate::crem_core::engine::Limits;
use crate::crem_core::nl::{flow_stat, msg_type};
use crate::table::FlowKey;

/// A flow's counters: the flow-stats set's `u64` attributes, then its two
/// msg-types nests.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Counters {
    /// By `nl::flow_stat` index.
    pub(crate) flat: [u64; flow_stat::N],
    /// msgs-in-by-type, by `nl::msg_type` index.
    pub(crate) msgs_in: [u64; msg_type::N],
    /// msgs-out-by-type, by `nl::msg_type` index.
    pub(crate) msgs_out: [u64; msg_type::N],
}

impl Counters {
    /// All zero.
    pub(crate) const ZERO: Self = Counters {
        flat: [0; flow_stat::N],
        msgs_in: [0; msg_type::N],
        msgs_out: [0; msg_type::N],
    };

    /// Every counter, in one order (flat, in, out).
    fn each_mut(&mut self) -> impl Iterator<Item = &mut u64> {
        self.flat
            .iter_mut()
            .chain(self.msgs_in.iter_mut())
            .chain(self.msgs_out.iter_mut())
    }

    /// Every counter, in the same order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &u64> {
        self.flat
            .iter()
            .chain(self.msgs_in.iter())
            .chain(self.msgs_out.iter())
    }

    /// Adds `o`, counter by counter (wrapping, as the counters do).
    pub(crate) fn add(&mut self, o: &Self) {
        for (a, b) in self.each_mut().zip(o.iter()) {
            *a = a.wrapping_add(*b);
        }
    }

    /// Takes `o` away, counter by counter (a flow-reset's base: what was
    /// counted since).
    pub(crate) fn sub(&mut self, o: &Self) {
        for (a, b) in self.each_mut().zip(o.iter()) {
            *a = a.wrapping_sub(*b);
        }
    }

    /// Sets counter `i` (`nl::flow_stat`) to `v`.
    pub(crate) fn set(&mut self, i: usize, v: u64) {
        if let Some(c) = self.flat.get_mut(i) {
            *c = v;
        }
    }

    /// Counter `i` (`nl::flow_stat`).
    pub(crate) fn get(&self, i: usize) -> u64 {
        self.flat.get(i).copied().unwrap_or(0)
    }
}

impl Default for Counters {
    fn default() -> Self {
        Self::ZERO
    }
}

/// A flow's identity, state and counters, in the units of the flow
/// attributes. A flow that leaves nothing to report (a removed one, an
/// engine not set up) reports the default: zeros, nothing optional.
#[derive(Clone, Copy, Default)]
pub(crate) struct FlowInfo {
    pub(crate) key: FlowKey,
    /// The peer's address.
    pub(crate) peer: NetAddr,
    /// Since it was set up.
    pub(crate) age_ms: u64,
    /// `nl::flow_state`.
    pub(crate) state: u8,
    pub(crate) config_id: u8,
    /// `nl::fec_scheme`.
    pub(crate) scheme: u8,
    pub(crate) k: u8,
    pub(crate) m: u8,
    pub(crate) symbol_len: u16,
    /// `nl::loss_class`.
    pub(crate) loss_class: u8,
    /// `nl::breaker`.
    pub(crate) breaker: u8,
    pub(crate) pinned: bool,
    pub(crate) flow_id: u32,
    pub(crate) srtt_us: u32,
    pub(crate) min_rtt_us: u32,
    pub(crate) loss_ppm: u32,
    pub(crate) rdma_mtu: u32,
    pub(crate) rdma_mtu_exact: bool,
    /// The negotiated limits, once there are.
    pub(crate) limits: Option<Limits>,
    /// Milliseconds since a message from the peer last reached the engine,
    /// once one did.
    pub(crate) last_msg_ms: Option<u64>,
    /// Octets its stores keep, charged to max-memory.
    pub(crate) mem: u64,
    /// `ktime_get_ns()` of its last packet or message.
    pub(crate) last_ns: u64,
    pub(crate) counters: Counters,
}
