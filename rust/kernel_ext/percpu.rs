// SPDX-License-Identifier: GPL-2.0
//! Per-CPU data: [`PerCpuWord`], one machine word per CPU, and
//! [`PerCpuBox`], one boxed value per CPU lent to one user at a time.

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

/// Each possible CPU's slot of a [`PerCpuBox`]: its `T` (a `KVBox` given
/// up with `into_raw`) and whether a [`PerCpuBox::with`] on this CPU is
/// using it.
#[repr(C)]
struct Slot<T> {
    val: *mut T,
    busy: bool,
}

/// Possible CPUs, in order (`for_each_possible_cpu`).
fn possible_cpus() -> impl Iterator<Item = u32> {
    // SAFETY: reads `nr_cpu_ids`, fixed after boot.
    let n = unsafe { ffi::crem_h_nr_cpu_ids() };
    let mut cpu: i32 = -1;
    core::iter::from_fn(move || {
        // SAFETY: walks `cpu_possible_mask`, fixed after boot; `cpu` is -1
        // or a CPU below `nr_cpu_ids`.
        let next = unsafe { ffi::crem_h_next_possible_cpu(cpu) };
        (next < n).then(|| {
            cpu = next as i32;
            next
        })
    })
}

/// One `T` per possible CPU, each in its own `KVBox` (a `T` larger than the
/// per-CPU allocator's unit is fine), lent on its CPU to one user at a time
/// ([`PerCpuBox::with`]). Freed on drop.
///
/// # Invariants
///
/// `slots` is a live per-CPU allocation of one `Slot<T>` per CPU; the slot
/// of every possible CPU holds a `T` from `KVBox::into_raw` (made in
/// [`PerCpuBox::new`], freed only in `drop`), and `busy` is set exactly
/// while a `with` on that CPU runs.
pub(crate) struct PerCpuBox<T> {
    slots: NonNull<c_void>,
    _owns: core::marker::PhantomData<T>,
}

// SAFETY: each CPU's `T` is only reached through `with`, on that CPU with
// BH off, one user at a time (the busy flag): a `&PerCpuBox` shared across
// threads gives no two of them the same `T`. `T: Send` since the `T` made
// on one thread is used on every CPU and freed on another.
unsafe impl<T: Send> Sync for PerCpuBox<T> {}
// SAFETY: as above; the allocation is not tied to the task that made it.
unsafe impl<T: Send> Send for PerCpuBox<T> {}

impl<T> PerCpuBox<T> {
    /// A `T` for every possible CPU, each made by `init` (process context:
    /// it may sleep).
    pub(crate) fn new<E, I: Init<T, E>>(init: impl Fn() -> I) -> Result<Self>
    where
        Error: From<E>,
    {
        let size = core::mem::size_of::<Slot<T>>();
        let align = core::mem::align_of::<Slot<T>>();
        // SAFETY: process context (module init); returns null or a zeroed
        // per-CPU allocation: every slot empty and not busy.
        let p = unsafe { ffi::crem_h_alloc_percpu(size, align) };
        let this = PerCpuBox {
            slots: NonNull::new(p).ok_or(ENOMEM)?,
            _owns: core::marker::PhantomData,
        };
        for cpu in possible_cpus() {
            let val = KVBox::into_raw(KVBox::init(init(), GFP_KERNEL)?);
            // SAFETY: `cpu` is possible, so `per_cpu_ptr` names its slot;
            // nothing else uses the slots before `new` returns (on an
            // error, `drop` frees the ones made so far).
            unsafe { (*this.slot(cpu)).val = val };
        }
        Ok(this)
    }

    /// The slot of a possible CPU `cpu`.
    fn slot(&self, cpu: u32) -> *mut Slot<T> {
        // SAFETY: `slots` is a live per-CPU allocation (invariant).
        unsafe { ffi::crem_h_per_cpu_ptr(self.slots.as_ptr(), cpu).cast() }
    }

    /// Runs `f` with this CPU's `T`; `None` if this CPU's is already lent
    /// (a `with` further up this CPU's stack: a packet that our hook sees
    /// again from inside its own processing).
    pub(crate) fn with<R>(&self, _bh: &Bh, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        // SAFETY: with BH off preemption is off, so `this_cpu_ptr` names
        // this CPU's slot and the task stays on this CPU while `_bh` lives;
        // no softirq runs here meanwhile, so only this stack uses the slot.
        let slot: *mut Slot<T> = unsafe { ffi::crem_h_this_cpu_ptr(self.slots.as_ptr()).cast() };
        // SAFETY: the slot is valid (invariant); fields are read and written
        // through the raw pointer, never as a `&mut Slot` that a nested call
        // would alias.
        let val = unsafe {
            if (*slot).busy || (*slot).val.is_null() {
                return None;
            }
            (*slot).busy = true;
            (*slot).val
        };
        // SAFETY: `val` is this CPU's live `T` (invariant) and `busy` keeps
        // any other `with` on this CPU off it until we clear it below.
        let r = f(unsafe { &mut *val });
        // SAFETY: as above.
        unsafe { (*slot).busy = false };
        Some(r)
    }
}

impl<T> Drop for PerCpuBox<T> {
    fn drop(&mut self) {
        for cpu in possible_cpus() {
            let slot = self.slot(cpu);
            // SAFETY: the slot is valid (invariant); no `with` runs (we hold
            // `&mut self`); a non-null `val` came from `KVBox::into_raw` and
            // is freed once, here.
            unsafe {
                if !(*slot).val.is_null() {
                    drop(KVBox::from_raw((*slot).val));
                }
            }
        }
        // SAFETY: by the invariant this is a live per-CPU allocation, freed
        // once, here.
        unsafe { bindings::free_percpu(self.slots.as_ptr()) }
    }
}
