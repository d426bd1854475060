// SPDX-License-Identifier: GPL-2.0
//! A reference to a memory cgroup, and charging to it from elsewhere: what a
//! netns's flows need so that memory a work item allocates for them is
//! charged to the cgroup of the task that made the netns, not to the
//! kworkers' root cgroup. 6.12's `kernel` crate has no memory cgroups.

use crate::ffi;
use core::ffi::c_void;
use core::ptr::NonNull;

/// A counted reference to a memory cgroup (none without CONFIG_MEMCG or
/// with memory cgroups disabled: then allocations go where they would).
pub(crate) struct MemCg(Option<NonNull<c_void>>);

// SAFETY: a counted reference may be used and dropped on any CPU.
unsafe impl Send for MemCg {}
// SAFETY: `&MemCg` only makes it the active cgroup of the caller's own
// task or interrupt context.
unsafe impl Sync for MemCg {}

impl MemCg {
    /// The memory cgroup of the current task (process context).
    pub(crate) fn of_current() -> Self {
        // SAFETY: process context (the caller's); returns a counted
        // reference or null.
        MemCg(NonNull::new(unsafe { ffi::crem_h_memcg_of_current() }))
    }

    /// Runs `f` with allocations charged to this cgroup (those with
    /// `__GFP_ACCOUNT`), then restores the caller's.
    pub(crate) fn charge<R>(&self, f: impl FnOnce() -> R) -> R {
        let p = self.0.map_or(core::ptr::null_mut(), NonNull::as_ptr);
        // SAFETY: our counted reference keeps the cgroup alive while it is
        // active; the previous one is restored before we return.
        let old = unsafe { ffi::crem_h_set_active_memcg(p) };
        let r = f();
        // SAFETY: `old` was the active cgroup before (restoring it).
        unsafe { ffi::crem_h_set_active_memcg(old) };
        r
    }
}

impl Drop for MemCg {
    fn drop(&mut self) {
        if let Some(p) = self.0 {
            // SAFETY: our counted reference, dropped once, here.
            unsafe { ffi::crem_h_memcg_put(p.as_ptr()) };
        }
    }
}
