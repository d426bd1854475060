// SPDX-License-Identifier: GPL-2.0
//! Spare flows, allocated in process context, so that the datapath can
//! start protecting a flow at its first packet: engines and stores are too
//! large for atomic allocations, and a flow created by a work item misses
//! the packets sent meanwhile (under load, tens of milliseconds: an RDMA
//! connection's whole first burst). Each side keeps `spare-flows` of them
//! (the netns's setting, up to [`SPARE_MAX`]): the largest burst of new
//! queue pairs protected from their first packet. The pool fills on first
//! use, on every configuration change and after every take; when a side is
//! empty, creation falls back to its work item (`create.rs`), which under
//! load makes a flow in tens to hundreds of milliseconds.

use crate::crem_core::ctl::SPARE_FLOWS_MAX;
use crate::crem_core::engine::module_caps::FlowCaps;
use crate::ffi;
use crate::flow::Spare;
use crate::kernel_ext::bh::{self, new_bh_lock, BhLock};
use crate::kernel_ext::work::Work;
use crate::netns::NetState;
use kernel::bindings;
use kernel::prelude::*;

/// Spares per side at most (the `spare-flows` policy's maximum).
const SPARE_MAX: usize = SPARE_FLOWS_MAX as usize;

/// No spares (a side's slots, all free).
type Side = [Option<Spare>; SPARE_MAX];
const EMPTY: Side = [const { None }; SPARE_MAX];

/// A netns's spare flows, per side (CSF, CRF).
#[pin_data]
pub(crate) struct Pool {
    /// The first field, so dropped first: cancelled (waiting for a running
    /// refill) before the spares go.
    #[pin]
    refill: Work,
    #[pin]
    spares: BhLock<Spares>,
}

struct Spares {
    /// Each side's spares (no allocation under the lock).
    side: [Side; 2],
    /// Their capacities (the netns's when they were made).
    caps: Option<FlowCaps>,
    /// The netns is going: no take, no refill.
    closing: bool,
}

impl Pool {
    /// An empty pool (it fills on first use).
    ///
    /// # Safety
    ///
    /// The pool is the `pool` field of a [`NetState`], which its refill
    /// reaches from the pool's address.
    pub(crate) unsafe fn new() -> impl PinInit<Self> {
        let spares = Spares {
            side: [EMPTY; 2],
            caps: None,
            closing: false,
        };
        // SAFETY: the work item is the `refill` field of a `Pool` that is
        // the `pool` field of a `NetState` (the caller's contract), which
        // `refill` requires.
        let refill = unsafe { Work::new(refill) };
        let spares = new_bh_lock!(spares, "crem_pool");
        // SAFETY: each field is initialised in place at `slot`, pinned
        // there; neither initialiser can fail (`Infallible`), so none is
        // left to undo. (Written out rather than with `pin_init!`, whose
        // type-checking closure leaves a dead panic call in the object,
        // which vm/panic-sites.py would count; see `HrTimer::new`.)
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Self| {
                refill.__pinned_init(core::ptr::addr_of_mut!((*slot).refill))?;
                spares.__pinned_init(core::ptr::addr_of_mut!((*slot).spares))
            })
        }
    }

    /// A spare flow of `side` with capacities `caps` (the netns's now), or
    /// None (then one is on its way; spares of other capacities, made
    /// before a configuration change, are never handed out). Any context
    /// (the datapath's, in softirq).
    pub(crate) fn take(&self, side: u8, caps: &FlowCaps) -> Option<Spare> {
        let bh = bh::disable();
        let mut g = self.spares.lock(&bh);
        if g.closing {
            return None;
        }
        if g.caps != Some(*caps) {
            self.refill.schedule();
            return None;
        }
        let f = g
            .side
            .get_mut(usize::from(side))?
            .iter_mut()
            .find_map(Option::take);
        // Refilled after every take (and on the first, empty, one).
        self.refill.schedule();
        f
    }

    /// The netns is going (process context): no take or refill from now on;
    /// the spares are freed.
    pub(crate) fn close(&self) {
        {
            let bh = bh::disable();
            self.spares.lock(&bh).closing = true;
        }
        // Nothing queues it again once closing is seen.
        self.refill.cancel_sync();
        let gone = {
            let bh = bh::disable();
            let mut g = self.spares.lock(&bh);
            core::mem::replace(&mut g.side, [EMPTY; 2])
        };
        // Freed outside the lock (a flow's drop cancels its timer).
        drop(gone);
    }

    /// How many spares side `side` holds.
    #[cfg(crem_kunit)]
    pub(crate) fn count(&self, side: usize) -> usize {
        let bh = bh::disable();
        let g = self.spares.lock(&bh);
        g.side.get(side).map_or(0, held)
    }

    /// The side to make a spare for next, to hold `target` on each: the
    /// one holding fewer (the sender side on a tie), so that both fill
    /// alike when memory stops the fill early; None when both hold it or
    /// the netns is going.
    fn next_side(&self, target: usize) -> Option<usize> {
        let bh = bh::disable();
        let g = self.spares.lock(&bh);
        if g.closing {
            return None;
        }
        let n = [held(&g.side[0]), held(&g.side[1])];
        // The side holding fewer is below the target if either is.
        let side = usize::from(n[1] < n[0]);
        (n[side] < target).then_some(side)
    }

    /// The netns's configuration changed (process context): spares of
    /// capacities it no longer gives are replaced, and the sides filled to
    /// (or trimmed to) its `spare-flows`.
    pub(crate) fn renew(&self) {
        self.refill.schedule();
    }

    /// Fills both sides up to `spare-flows` (process context), allocating
    /// outside the lock, after dropping the spares made for other
    /// capacities than the netns's now and those beyond a lowered
    /// `spare-flows`; stops at the first failure (the next take tries
    /// again), once the netns holds half its `max-memory`, or when the
    /// netns is going.
    fn fill(&self, st: &NetState) {
        let caps = st.flow_caps();
        let target = target_of(st);
        let mut extra = [EMPTY; 2];
        {
            let bh = bh::disable();
            let mut g = self.spares.lock(&bh);
            // Spares of other capacities are all extra, as are those beyond
            // the target: moved out slot for slot (`take` and this fill
            // look at any slot).
            let keep = if g.caps == Some(caps) { target } else { 0 };
            g.caps = Some(caps);
            for (have, out) in g.side.iter_mut().zip(extra.iter_mut()) {
                let mut kept = 0usize;
                for (s, o) in have.iter_mut().zip(out.iter_mut()) {
                    if s.is_none() {
                        continue;
                    }
                    if kept < keep {
                        kept = kept.saturating_add(1);
                    } else {
                        *o = s.take();
                    }
                }
            }
        }
        // Freed outside the lock (a flow's drop cancels its timer).
        drop(extra);
        // The target read again each time: a lower one set meanwhile stops
        // this fill (its own renew trims what it made).
        while let Some(side) = self.next_side(target_of(st)) {
            // Spares never take the second half of the budget: the flows
            // they stand in for need it (a large max-bdp makes each spare
            // large).
            if st.memory_now() >= st.max_memory() / 2 {
                return;
            }
            let Some(f) = st.alloc(side as u8, &caps) else {
                return;
            };
            let bh = bh::disable();
            let mut g = self.spares.lock(&bh);
            if g.closing {
                // `f` is freed after the lock is released (declared before
                // the guard, dropped after it).
                return;
            }
            let Some(slot) = g
                .side
                .get_mut(side)
                .and_then(|v| v.iter_mut().find(|s| s.is_none()))
            else {
                // No free slot (cannot be: only this work fills, up to
                // SPARE_MAX); `f` is freed as above.
                return;
            };
            *slot = Some(f);
            drop(g);
            drop(bh);
            // Each allocation may have been long (reclaim): let others run
            // between them (as C's refill did).
            // SAFETY: process context (a work item), no lock held.
            unsafe { ffi::crem_h_cond_resched() };
        }
    }
}

/// The spares each side of `st`'s pool is to hold: `spare-flows`, at most
/// [`SPARE_MAX`]; none while its role is disabled (no datapath takes one:
/// a Path Reporter alone, or a netns not configured).
fn target_of(st: &NetState) -> usize {
    if st.role() == ffi::crem_role_CREM_ROLE_DISABLED as u8 {
        return 0;
    }
    usize::try_from(st.settings.spare_flows())
        .unwrap_or(SPARE_MAX)
        .min(SPARE_MAX)
}

/// The spares a side holds.
fn held(v: &Side) -> usize {
    v.iter()
        .fold(0usize, |n, s| n.saturating_add(usize::from(s.is_some())))
}

/// The refill work of every pool.
unsafe extern "C" fn refill(w: *mut bindings::work_struct) {
    // SAFETY: only `Pool::new` makes work items with this callback, in the
    // `refill` field of a pool that is the `pool` field of a `NetState`
    // (its contract); the state lives until the work is cancelled (its
    // pool's first field's drop), which waits for this callback.
    let st = unsafe {
        let pool = kernel::container_of!(w.cast::<Work>(), Pool, refill);
        &*kernel::container_of!(pool, NetState, pool)
    };
    st.pool.fill(st);
}
