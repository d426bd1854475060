// SPDX-License-Identifier: GPL-2.0
//! A work item embedded in a long-lived, pinned owner and queued on the
//! system workqueue any number of times, from any context. 6.12's
//! `kernel::workqueue` hands the owner to the queue by `Arc` or box on every
//! enqueue and has no cancel; an owner that lives in per-netns state and
//! must be quiet before it goes needs `cancel_work_sync` instead. A later
//! kernel's `Work` with a cancel can replace this one.
//!
//! As with [`HrTimer`](super::hrtimer::HrTimer), the callback is a plain
//! `extern "C"` function that finds its owner from the work's address, and
//! soundness rests on one rule the owner keeps: the work is cancelled
//! ([`Work::cancel_sync`], which waits for a running callback) before the
//! owner's memory goes. Dropping a `Work` cancels it, so an owner that
//! declares it as its first field keeps the rule.

use crate::ffi;
use kernel::bindings;
use kernel::prelude::*;
use kernel::types::Opaque;

/// The callback: given the work item.
pub(crate) type Callback = unsafe extern "C" fn(*mut bindings::work_struct);

/// A work item of the system workqueue (see the module docs).
#[repr(transparent)]
pub(crate) struct Work {
    w: Opaque<bindings::work_struct>,
}

// SAFETY: the workqueue serialises queueing and cancelling a work item
// with its own atomic state; a `&Work` only ever does those.
unsafe impl Sync for Work {}
// SAFETY: a work item is not tied to the CPU that set it up.
unsafe impl Send for Work {}

impl Work {
    /// An idle work item that runs `f` when queued.
    ///
    /// # Safety
    ///
    /// `f` may rely on what the work item is embedded in (it is given only
    /// the item's address): the caller puts it where `f` expects it.
    pub(crate) unsafe fn new(f: Callback) -> impl PinInit<Self> {
        // SAFETY: `slot` is the item's pinned, writable memory, which
        // `INIT_WORK` initialises whole.
        let w = Opaque::ffi_init(move |slot: *mut bindings::work_struct| unsafe {
            ffi::crem_h_init_work(slot, Some(f))
        });
        // SAFETY: `Work` is a transparent wrapper of its `Opaque`, so
        // initialising that at `slot` initialises the item, pinned where it
        // is; it cannot fail. (Not `pin_init!`: see `HrTimer::new`.)
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Self| {
                w.__pinned_init(slot.cast::<Opaque<bindings::work_struct>>())
            })
        }
    }

    /// Queues the item on the system workqueue unless it is queued already
    /// (any context).
    pub(crate) fn schedule(&self) {
        // SAFETY: the item was initialised by `new` and is pinned;
        // `queue_work_on` may be called in any context.
        unsafe {
            bindings::queue_work_on(
                bindings::wq_misc_consts_WORK_CPU_UNBOUND as _,
                bindings::system_wq,
                self.w.get(),
            )
        };
    }

    /// Takes the item off the queue and waits until its callback is not
    /// running (process context). What queues it again meanwhile is the
    /// owner's to stop first.
    pub(crate) fn cancel_sync(&self) {
        // SAFETY: as in `schedule`; the caller may sleep (the owner's
        // contract: it runs in process context).
        unsafe { bindings::cancel_work_sync(self.w.get()) };
    }

    /// Waits until the item, if queued, has run (process context).
    #[cfg(crem_kunit)]
    pub(crate) fn flush(&self) {
        // SAFETY: as in `cancel_sync`.
        unsafe { bindings::flush_work(self.w.get()) };
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        // No callback may run on memory that is about to go.
        self.cancel_sync();
    }
}

/// A delayed work item of the system workqueue, embedded and cancelled as
/// [`Work`] is (see the module docs): its callback is given the address
/// of the item's `work_struct`, which [`DelayedWork::from_work`] maps back.
/// 6.12's `kernel::workqueue` has no delayed work.
#[repr(transparent)]
pub(crate) struct DelayedWork {
    w: Opaque<bindings::delayed_work>,
}

// SAFETY: as for `Work`: the workqueue and the timer serialise queueing
// and cancelling with their own state; a `&DelayedWork` only does those.
unsafe impl Sync for DelayedWork {}
// SAFETY: a work item is not tied to the CPU that set it up.
unsafe impl Send for DelayedWork {}

impl DelayedWork {
    /// An idle delayed work item that runs `f` when it is due.
    ///
    /// # Safety
    ///
    /// As for [`Work::new`].
    pub(crate) unsafe fn new(f: Callback) -> impl PinInit<Self> {
        // SAFETY: `slot` is the item's pinned, writable memory, which
        // `INIT_DELAYED_WORK` initialises whole (its timer too).
        let w = Opaque::ffi_init(move |slot: *mut bindings::delayed_work| unsafe {
            ffi::crem_h_init_delayed_work(slot, Some(f))
        });
        // SAFETY: as in `Work::new`.
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Self| {
                w.__pinned_init(slot.cast::<Opaque<bindings::delayed_work>>())
            })
        }
    }

    /// The delayed item whose `work_struct` a callback was given.
    ///
    /// # Safety
    ///
    /// `w` is the `work` field of a live `DelayedWork`'s item.
    pub(crate) unsafe fn from_work<'a>(w: *mut bindings::work_struct) -> &'a Self {
        // SAFETY: per the function contract; `DelayedWork` is a transparent
        // wrapper of the item, whose `work` field `w` is.
        unsafe {
            &*w.cast::<u8>()
                .sub(core::mem::offset_of!(bindings::delayed_work, work))
                .cast::<Self>()
        }
    }

    /// Queues the item to run in `ms` milliseconds unless it is pending
    /// already (any context).
    pub(crate) fn schedule_in_ms(&self, ms: u32) {
        // SAFETY: `__msecs_to_jiffies` only computes.
        let delay = unsafe { bindings::__msecs_to_jiffies(ms) };
        // SAFETY: the item was initialised by `new` and is pinned;
        // `queue_delayed_work_on` may be called in any context.
        unsafe {
            bindings::queue_delayed_work_on(
                bindings::wq_misc_consts_WORK_CPU_UNBOUND as _,
                bindings::system_wq,
                self.w.get(),
                delay,
            )
        };
    }

    /// Takes the item off its timer and queue and waits until its callback
    /// is not running (process context). What queues it again meanwhile is
    /// the owner's to stop first.
    pub(crate) fn cancel_sync(&self) {
        // SAFETY: as in `schedule_in_ms`; the caller may sleep (the owner's
        // contract: it runs in process context).
        unsafe { bindings::cancel_delayed_work_sync(self.w.get()) };
    }
}

impl Drop for DelayedWork {
    fn drop(&mut self) {
        // No callback may run on memory that is about to go.
        self.cancel_sync();
    }
}
