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
