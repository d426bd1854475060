// SPDX-License-Identifier: GPL-2.0
//! Per-CPU data: [`PerCpuWord`], one machine word per CPU.

use super::bh::Bh;
use crate::ffi;
use core::ffi::c_void;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::bindings;
use kernel::prelude::*;

/// One word per CPU, zero at first (`alloc_percpu`), freed on drop.
///
/// # Invariants
///
/// `self.0` is a live per-CPU allocation of one `AtomicUsize` per CPU.
pub(crate) struct PerCpuWord(NonNull<c_void>);

// SAFETY: the allocation is reachable from any CPU; each CPU's word is only
// read and written through `Bh`-guarded methods on that CPU, and it is an
// atomic, so sharing `&PerCpuWord` across threads races on nothing.
unsafe impl Sync for PerCpuWord {}
// SAFETY: the allocation is not tied to the task that made it.
unsafe impl Send for PerCpuWord {}

impl PerCpuWord {
    /// A zeroed word on every CPU.
    pub(crate) fn new() -> Result<Self> {
        let size = core::mem::size_of::<AtomicUsize>();
        // SAFETY: `__alloc_percpu` may sleep, and we are in process context
        // (module init); it returns null or a zeroed per-CPU allocation.
        let p = unsafe { ffi::crem_h_alloc_percpu(size, size) };
        NonNull::new(p).map(PerCpuWord).ok_or(ENOMEM)
    }

    /// This CPU's word, for as long as BH stays off.
    fn this_cpu<'a>(&'a self, _bh: &'a Bh) -> &'a AtomicUsize {
        // SAFETY: with BH off preemption is off, so `this_cpu_ptr` names
        // this CPU's word and the task stays on this CPU while `_bh`
        // lives; the word is a valid, zero-initialised `AtomicUsize`.
        unsafe { &*ffi::crem_h_this_cpu_ptr(self.0.as_ptr()).cast::<AtomicUsize>() }
    }

    /// This CPU's value.
    pub(crate) fn get(&self, bh: &Bh) -> usize {
        self.this_cpu(bh).load(Ordering::Relaxed)
    }

    /// Sets this CPU's value.
    pub(crate) fn set(&self, bh: &Bh, v: usize) {
        self.this_cpu(bh).store(v, Ordering::Relaxed)
    }
}

impl Drop for PerCpuWord {
    fn drop(&mut self) {
        // SAFETY: by the invariant this is a live per-CPU allocation, freed
        // once, here.
        unsafe { bindings::free_percpu(self.0.as_ptr()) }
    }
}
