// SPDX-License-Identifier: GPL-2.0
//! High-resolution timers, as the datapath uses them: CLOCK_MONOTONIC,
//! absolute expiry, expiring in softirq (`HRTIMER_MODE_ABS_SOFT`), so that
//! the callback runs with BH off like the hooks and can take the same
//! [`BhLock`](super::bh::BhLock)s. Linux 6.12's `kernel` crate has no
//! hrtimer; a later kernel's `kernel::time::hrtimer` can replace this one.
//!
//! The callback is a plain `extern "C"` function that finds its owner from
//! the timer's address (the owner embeds the timer at a fixed offset). Its
//! soundness rests on one rule the owner keeps: the timer is cancelled
//! ([`HrTimer::cancel`], which waits for a running callback) before the
//! owner's memory goes. Dropping an `HrTimer` cancels it, so an owner that
//! declares its timer as its first field (dropped first) keeps the rule.

use kernel::bindings;
use kernel::prelude::*;
use kernel::types::Opaque;

/// The expiry callback: given the timer, returns `HRTIMER_NORESTART`.
pub(crate) type Callback =
    unsafe extern "C" fn(*mut bindings::hrtimer) -> bindings::hrtimer_restart;

/// A soft, absolute, CLOCK_MONOTONIC hrtimer (see the module docs).
#[repr(transparent)]
pub(crate) struct HrTimer {
    t: Opaque<bindings::hrtimer>,
}

// SAFETY: the kernel serialises every operation on an hrtimer with its
// base's lock; a `&HrTimer` only ever calls those operations.
unsafe impl Sync for HrTimer {}
// SAFETY: an hrtimer is not tied to the CPU that set it up.
unsafe impl Send for HrTimer {}

impl HrTimer {
    /// An idle timer that calls `f` when it expires.
    ///
    /// # Safety
    ///
    /// `f` may rely on what the timer is embedded in (it is given only the
    /// timer's address): the caller puts the timer where `f` expects it.
    pub(crate) unsafe fn new(f: Callback) -> impl PinInit<Self> {
        // SAFETY: `slot` is the timer's pinned, writable memory;
        // `hrtimer_init` initialises all of it, then the callback is set
        // before anyone can start it.
        let t = Opaque::ffi_init(move |slot: *mut bindings::hrtimer| unsafe {
            bindings::hrtimer_init(
                slot,
                bindings::CLOCK_MONOTONIC as bindings::clockid_t,
                bindings::hrtimer_mode_HRTIMER_MODE_ABS_SOFT,
            );
            (*slot).function = Some(f);
        });
        // SAFETY: `HrTimer` is a transparent wrapper of its `Opaque`, so
        // initialising that at `slot` initialises the timer, pinned where
        // it is; it cannot fail. (Written out rather than with `pin_init!`,
        // whose type-checking closure leaves a dead panic call in the
        // object, which vm/panic-sites.py would count.)
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Self| {
                t.__pinned_init(slot.cast::<Opaque<bindings::hrtimer>>())
            })
        }
    }

    /// The raw timer, as the callback receives it.
    pub(crate) fn as_ptr(&self) -> *mut bindings::hrtimer {
        self.t.get()
    }

    /// (Re)starts the timer to expire at `ns` on the monotonic clock
    /// (`ktime_get_ns`); a deadline in the past expires at once.
    pub(crate) fn start_abs(&self, ns: u64) {
        let at = i64::try_from(ns).unwrap_or(i64::MAX);
        // SAFETY: the timer was initialised by `new` and is pinned; the
        // kernel serialises starts against its callback and cancels.
        unsafe {
            bindings::hrtimer_start_range_ns(
                self.as_ptr(),
                at,
                0,
                bindings::hrtimer_mode_HRTIMER_MODE_ABS_SOFT,
            )
        };
    }

    /// Stops the timer and waits until its callback is not running. Never
    /// under a lock the callback takes (it would wait for itself).
    pub(crate) fn cancel(&self) {
        // SAFETY: as in `start_abs`.
        unsafe { bindings::hrtimer_cancel(self.as_ptr()) };
    }
}

impl Drop for HrTimer {
    fn drop(&mut self) {
        // No callback may run on memory that is about to go.
        self.cancel();
    }
}
