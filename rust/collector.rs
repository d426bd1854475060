// SPDX-License-Identifier: GPL-2.0
//! The flow collector: once a second while flows exist, removes the flows
//! nothing uses any more, so that memory stays bounded by live traffic and
//! a flow whose negotiation failed or that was closed gets a fresh start:
//!   - idle: no packet and no message for `flow_idle_s` (RDMA QP numbers
//!     are reused, and a new connection must not inherit an old PSN
//!     space): CLOSE "flow ended";
//!   - unprotected (HELLO never answered) for [`RETRY_NS`]: CLOSE
//!     "parameter synchronization failed"; the next packet of the flow asks
//!     for a new one, with a new HELLO;
//!   - closed, for [`RETRY_NS`]: it has had its CLOSE.

use crate::crem_core::nl::flow_state;
use crate::crem_core::nl::stat;
use crate::ffi;
use crate::flow::Flow;
use crate::kernel_ext::bh;
use crate::kernel_ext::rcu;
use crate::kernel_ext::work::DelayedWork;
use crate::netns::NetState;
use crate::removal::GC_KEEP;
use crate::removal::{CLOSE_FLOW_ENDED, CLOSE_NONE, CLOSE_SYNC_FAILED};
use crate::table::{SIDE_CRF, SIDE_CSF};
use kernel::bindings;
use kernel::prelude::*;

/// How often the collector runs while flows exist.
const PERIOD_MS: u32 = 1000;
/// How long an unprotected or closed flow stays before a new one may be
/// made for its traffic.
pub(crate) const RETRY_NS: u64 = 5_000_000_000;
const NS_PER_S: u64 = 1_000_000_000;

/// The netns's collector: a delayed work item (`NetState::collector`).
///
/// # Safety
///
/// The item is the `collector` field of a `NetState`.
pub(crate) unsafe fn work() -> impl PinInit<DelayedWork> {
    // SAFETY: `collect` finds the `NetState` the item is a field of (the
    // caller's contract).
    unsafe { DelayedWork::new(collect) }
}

/// The collection work of every netns.
unsafe extern "C" fn collect(w: *mut bindings::work_struct) {
    // SAFETY: only `work` makes work items with this callback, the
    // `collector` field of a `NetState` (its contract); the state lives
    // until the work is cancelled (`exit_flows`, or the drop of the field),
    // which waits for this callback.
    let st = unsafe {
        let d = DelayedWork::from_work(w);
        &*kernel::container_of!(d, NetState, collector)
    };
    st.collect(crate::flow::now());
}

/// `t` older than `now` by more than `span`; `t` may be later than `now`
/// (a packet or a creation since `now` was read), which is no age at all.
fn older(t: u64, now: u64, span: u64) -> bool {
    (now.wrapping_sub(t) as i64) > span as i64
}

/// Seconds without packets or messages before a flow is removed (the
/// module parameter `flow_idle_s`; 0: never).
fn idle_ns() -> u64 {
    // SAFETY: the module parameter, an aligned u32 that sysfs writes
    // whole: read once, as `READ_ONCE` reads it.
    let s = unsafe { core::ptr::read_volatile(core::ptr::addr_of!(ffi::crem_flow_idle_s)) };
    u64::from(s).saturating_mul(NS_PER_S)
}

/// Whether `f` goes at `now`, and with which CLOSE ([`GC_KEEP`]: it stays).
pub(crate) fn stale(f: &Flow, now: u64, idle: u64) -> i8 {
    let Some((state, last_ns)) = f.activity() else {
        return GC_KEEP;
    };
    let retry = older(f.born_ns(), now, RETRY_NS);
    if idle != 0 && older(last_ns, now, idle) {
        CLOSE_FLOW_ENDED
    } else if retry && state == Some(flow_state::UNPROTECTED) {
        CLOSE_SYNC_FAILED
    } else if retry && state == Some(flow_state::CLOSING) {
        CLOSE_NONE
    } else {
        GC_KEEP
    }
}

impl NetState {
    /// Runs a collection a period from now, unless one is pending (any
    /// context), while the netns is not closing.
    pub(crate) fn start_collector(&self) {
        if !self.removal.closing() {
            self.collector.schedule_in_ms(PERIOD_MS);
        }
    }

    /// One collection at `now`: what goes is marked under RCU (each flow's
    /// lock taken in turn, BH off for it alone), then removed under the
    /// removal lock, and reaped (CLOSE to the peer, flow-down, freed).
    pub(crate) fn collect(&self, now: u64) {
        let idle = idle_ns();
        let mut any = false;
        {
            let g = rcu::read_lock();
            self.flows.for_each(&g, |f| {
                let c = stale(f, now, idle);
                f.removal().set_gc(c);
                any |= c != GC_KEEP;
            });
        }
        if any {
            let mut n = 0u64;
            {
                let bh = bh::disable();
                self.flows.for_each(&*bh, |f| {
                    let c = f.removal().gc();
                    if c != GC_KEEP && self.remove(f, c, &bh) {
                        n = n.saturating_add(1);
                    }
                });
            }
            self.count_by(stat::FLOWS_EXPIRED, n);
            self.reap(true);
        }
        if self.flows.count(SIDE_CSF) != 0 || self.flows.count(SIDE_CRF) != 0 {
            self.start_collector();
        }
    }
}
