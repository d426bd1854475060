// SPDX-License-Identifier: GPL-2.0
//! Removing a netns's flows, and the totals of flows gone.
//!
//! Every remover (flow-del, the collector, a flush when the socket or the
//! netns goes) takes a flow out of the table under the netns's removal
//! lock ([`NetState::remove`]), which orders removers among themselves and
//! with the collector's walk that removes: a flow is unlinked once, by
//! one of them, with the CLOSE reason that one chose. It then waits on the
//! netns's list of flows removed; [`NetState::reap`] (process context)
//! takes the list, waits an RCU grace period for the readers that found
//! those flows before (hooks, socket, timers, dumps: all under RCU), sends
//! their flow-down, ends their engines (their CLOSE), adds their last
//! counters to the netns's totals and frees them.
//!
//! Locking: the removal lock is BH-safe (removers take it with BH off,
//! flow-del inside its RCU section); the table's writer lock nests inside
//! it. A flow's lock is never taken under it (the engine's last counters
//! are read under the flow's lock, then added to the totals under this
//! one). Reapers are serialised by a mutex (process context), so a reap
//! returns only once every flow its caller removed is freed; the totals
//! and flow-reset take it too (taken before any RCU section or spinlock).

use crate::crem_core::nl::{close_reason, stat};
use crate::events::Notification;
use crate::ffi;
use crate::flow::{self, Flow};
use crate::flow_info::Counters;
use crate::kernel_ext::bh::{self, new_bh_lock, Bh, BhLock};
use crate::kernel_ext::rcu;
use crate::netns::NetState;
use core::ffi::c_int;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicI8, AtomicPtr, AtomicU32, Ordering};
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::Mutex;

/// A flow's part in its removal: the CLOSE reason its remover chose and
/// its place on the netns's list of flows removed (both written under the
/// removal lock, once, by the remover that unlinked it), and the
/// collector's choice between its two passes.
pub(crate) struct Mark {
    next: AtomicPtr<Flow>,
    close: AtomicI8,
    gc: AtomicI8,
    /// The totals pass that last counted it (`NetState::totals`: 0, none).
    counted: AtomicU32,
}

/// The CLOSE a removal sends (crem-draft, "CREM CLOSE Reasons", the
/// spec's close-reason enum), as a
/// flow's mark keeps it: a reason's code, or `CLOSE_NONE`: none (the CSF
/// ends silently; the CRF, which releases its held packets in any case,
/// closes as normal termination).
pub(crate) const CLOSE_NONE: i8 = -1;
pub(crate) const CLOSE_NORMAL: i8 = close_reason::NORMAL as i8;
pub(crate) const CLOSE_FLOW_ENDED: i8 = close_reason::FLOW_ENDED as i8;
pub(crate) const CLOSE_SYNC_FAILED: i8 = close_reason::SYNC_FAILED as i8;

/// The collector's mark of a flow it keeps (else a `CLOSE_*`).
pub(crate) const GC_KEEP: i8 = -2;

impl Mark {
    pub(crate) const fn new() -> Self {
        Mark {
            next: AtomicPtr::new(ptr::null_mut()),
            close: AtomicI8::new(CLOSE_NONE),
            // A flow made between the collector's passes stays.
            gc: AtomicI8::new(GC_KEEP),
            counted: AtomicU32::new(0),
        }
    }

    /// The collector's choice for the flow (its first pass, under RCU).
    pub(crate) fn set_gc(&self, close: i8) {
        self.gc.store(close, Ordering::Relaxed);
    }

    pub(crate) fn gc(&self) -> i8 {
        self.gc.load(Ordering::Relaxed)
    }
}

/// What the removal lock guards.
struct Removed {
    /// Flows unlinked and not yet freed, linked through [`Mark`]'s `next`.
    head: *mut Flow,
    /// Counters of flows gone (and of flow-resets), and the baseline of the
    /// last stats-reset: the totals are what flows count now, plus
    /// `retired`, minus `base`.
    retired: Counters,
    base: Counters,
}

// SAFETY: the list's flows are reachable by no one but the removal lock's
// holder (they are unlinked), on any CPU.
unsafe impl Send for Removed {}

/// The netns's removal lock and what it guards (see the module docs).
pub(crate) struct Removal {
    state: BhLock<Removed>,
    /// One reaper at a time (process context): a remover whose flow
    /// another reaper took waits until that one has freed it, so that its
    /// flow-down, CLOSE and counters are out before its caller goes on
    /// (flow-del's reply, a socket change). The totals and flow-reset hold
    /// it too, so that no flow's counters move to `retired` while the
    /// totals add them up; the number is the totals' last pass.
    reaping: Mutex<u32>,
    /// The netns is going: its collector and event work are not queued
    /// any more (read under RCU or BH off by their queuers, which the
    /// closing waits for before it cancels them).
    closing: AtomicBool,
}

impl Removal {
    pub(crate) fn new() -> impl PinInit<Self> {
        let removed = Removed {
            head: ptr::null_mut(),
            retired: Counters::ZERO,
            base: Counters::ZERO,
        };
        let state = new_bh_lock!(removed, "crem_removal");
        let reaping = new_mutex!(0, "crem_reaping");
        // SAFETY: each field is initialised in place at `slot`, pinned
        // there; none can fail, so none is left to undo. (Written out
        // rather than with `pin_init!`: see `Pool::new`.)
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Self| {
                core::ptr::addr_of_mut!((*slot).closing).write(AtomicBool::new(false));
                reaping.__pinned_init(core::ptr::addr_of_mut!((*slot).reaping))?;
                state.__pinned_init(core::ptr::addr_of_mut!((*slot).state))
            })
        }
    }

    /// The netns is going: nothing queues its collector or event work
    /// from now on (once the queuers that looked before are done: the
    /// caller waits for them).
    pub(crate) fn set_closing(&self) {
        self.closing.store(true, Ordering::Relaxed);
    }

    pub(crate) fn closing(&self) -> bool {
        self.closing.load(Ordering::Relaxed)
    }
}

impl Drop for Removal {
    fn drop(&mut self) {
        // Every remover reaps what it removed: a flow left here would
        // never be freed.
        let bh = bh::disable();
        if !self.state.lock(&bh).head.is_null() {
            pr_warn!("removal state dropped with flows not reaped\n");
        }
    }
}

impl NetState {
    /// Takes `f` out of the table for removal, its engine to end with a
    /// CLOSE of `close` (`CLOSE_*`): false if another remover took it
    /// first. Any context; the caller found `f` in an RCU read-side
    /// section it is still in (or holds BH off), and [`Self::reap`] frees
    /// it later.
    pub(crate) fn remove(&self, f: &Flow, close: i8, bh: &Bh) -> bool {
        let mut r = self.removal.state.lock(bh);
        // SAFETY: the netns's table is the only table its flows are ever
        // inserted in.
        if !unsafe { self.flows.unlink(f, bh) } {
            return false;
        }
        let m = f.removal();
        m.close.store(close, Ordering::Relaxed);
        m.next.store(r.head, Ordering::Relaxed);
        r.head = ptr::from_ref(f).cast_mut();
        true
    }

    /// Removes every flow (`notify`: with a flow-down each; not while the
    /// netns is dismantled, when no one listens). Process context.
    pub(crate) fn flush_flows(&self, notify: bool) {
        {
            // BH off: the walk's RCU read-side section too.
            let bh = bh::disable();
            self.flows.for_each(&*bh, |f| {
                self.remove(f, CLOSE_NONE, &bh);
            });
        }
        self.reap(notify);
    }

    /// Frees the flows removed so far (process context): a grace period
    /// after they were unlinked, each sends its flow-down (`notify`),
    /// ends its engine and adds its last counters to the totals.
    pub(crate) fn reap(&self, notify: bool) {
        let _one = self.removal.reaping.lock();
        let mut head = {
            let bh = bh::disable();
            let mut r = self.removal.state.lock(&bh);
            core::mem::replace(&mut r.head, ptr::null_mut())
        };
        if head.is_null() {
            return;
        }
        // SAFETY: process context, no lock held. No hook, socket, dump or
        // creation finds them after this.
        unsafe { ffi::synchronize_net() };
        // One buffer for their last counters (if it cannot be had, they
        // are lost to the totals, not to the flow-down, which reads them
        // itself).
        let mut fi = flow::info_buffer();
        while !head.is_null() {
            // SAFETY: a flow that `remove` unlinked and listed, reachable
            // by no one else since the grace period; freed once, below.
            let f = unsafe { &*head };
            head = f.removal().next.load(Ordering::Relaxed);
            if notify {
                // Its last state, before the engine ends.
                self.notify(f, Notification::Down);
            }
            let close = c_int::from(f.removal().close.load(Ordering::Relaxed));
            match fi.as_deref_mut() {
                Some(info) => {
                    f.kill(close, Some(&mut *info));
                    self.retire(&info.counters);
                }
                None => f.kill(close, None),
            }
            // SAFETY: as above: unreachable, freed once.
            unsafe { flow::free(ptr::from_ref(f).cast_mut()) };
            self.count(stat::FLOWS_REMOVED);
        }
    }

    /// Counters a flow no longer reports (it is gone, or was reset) go on
    /// counting in the netns's totals.
    pub(crate) fn retire(&self, c: &Counters) {
        let bh = bh::disable();
        self.removal.state.lock(&bh).retired.add(c);
    }

    /// The totals of every flow's counters, present and gone, since the
    /// last stats-reset, into `sum`; `rebase`: they start from here (a
    /// stats-reset; flow counters are never rewound). Process context.
    ///
    /// Exact under churn: with the reapers' mutex held no flow's counters
    /// move to `retired` (a reap, a flow-reset) while they are added up,
    /// and a flow removed but not yet reaped is still counted: the table
    /// is walked first, then the list of flows removed, whose chain no one
    /// changes but by pushing a new head while no reaper runs. A flow
    /// removed after the walk counted it is on that list too: each pass
    /// marks what it counted (`Mark::counted`), and counts a flow once.
    pub(crate) fn totals(&self, sum: &mut Counters, rebase: bool) {
        *sum = Counters::ZERO;
        let mut pass = self.removal.reaping.lock();
        *pass = pass.wrapping_add(1).max(1);
        let p = *pass;
        if let Some(mut fi) = flow::info_buffer() {
            let mut add = |f: &Flow| {
                if f.removal().counted.swap(p, Ordering::Relaxed) == p {
                    return;
                }
                f.info(&mut fi);
                sum.add(&fi.counters);
            };
            {
                let g = rcu::read_lock();
                self.flows.for_each(&g, &mut add);
            }
            let bh = bh::disable();
            let mut at = self.removal.state.lock(&bh).head;
            drop(bh);
            while !at.is_null() {
                // SAFETY: a flow on the list of flows removed, freed only
                // by a reaper, which cannot run (the mutex is held); its
                // `next` was set once, when it was pushed.
                let f = unsafe { &*at };
                add(f);
                at = f.removal().next.load(Ordering::Relaxed);
            }
        }
        let bh = bh::disable();
        let mut r = self.removal.state.lock(&bh);
        sum.add(&r.retired);
        sum.sub(&r.base);
        if rebase {
            r.base.add(sum);
        }
    }

    /// Holds off reaps and the totals while a flow-reset moves a flow's
    /// counters to `retired` (not while the totals add them up). Process
    /// context, taken before the caller's RCU section.
    pub(crate) fn hold_counters(&self) -> impl Sized + '_ {
        self.removal.reaping.lock()
    }

    /// The netns is going (process context, its socket closed): no flow
    /// is made any more, the collector and the event work stop, and every
    /// flow is removed (no flow-down: no one listens).
    pub(crate) fn exit_flows(&self) {
        // No flow is made from here on (its queue and spares dropped).
        self.close();
        self.removal.set_closing();
        // Readers (hooks, socket, timers) that saw the netns open may still
        // be queueing collection or event work: wait for them before
        // cancelling, or an item queued after its cancel would outlive
        // us. Nothing is inserted any more: the collector is not started
        // again.
        // SAFETY: process context, no lock held.
        unsafe { ffi::synchronize_net() };
        self.collector.cancel_sync();
        self.flush_flows(false);
        // No flow is left to mark an event.
        self.events.cancel_sync();
    }
}
