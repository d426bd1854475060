// SPDX-License-Identifier: GPL-2.0
//! Memory of a flow: [`FlowArray`], a fixed-length array allocated with the
//! flow's GFP flags, and [`FlowAlloc`], an allocator with those flags for
//! the kernel's `Box`. 6.12's `Flags` cannot say `__GFP_RETRY_MAYFAIL` (its
//! field is private and the kernel crate has no such constant), and a flow
//! must be able to fail in its memory cgroup rather than reclaim hard or
//! OOM-kill a task to make room (README: flows and memory cgroups); so the
//! allocation is one helper (`crem_h_kvzalloc_flow`) with those flags.

use crate::ffi;
use core::alloc::Layout;
use core::ptr::NonNull;
use kernel::alloc::{AllocError, Allocator, Flags};
use kernel::prelude::*;

/// An [`Allocator`] for a flow's objects (`Box<_, FlowAlloc>`): kvzalloc
/// with the flow's flags (`GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
/// __GFP_NOWARN`, process context), whatever `Flags` the caller passes
/// (6.12's `Flags` cannot say them; pass `GFP_KERNEL`, which they refine).
/// It allocates and frees; it does not resize (a `Box` never does): a
/// resize fails and leaves the allocation as it was. Alignment up to 8.
pub(crate) struct FlowAlloc;

// SAFETY: memory from `crem_h_kvzalloc_flow` stays valid until `kvfree`,
// which only `realloc` with a size of 0 calls, on a pointer this allocator
// returned; alignment beyond kvzalloc's 8 is refused; a failed call leaves
// the old allocation valid.
unsafe impl Allocator for FlowAlloc {
    unsafe fn realloc(
        ptr: Option<NonNull<u8>>,
        layout: Layout,
        old_layout: Layout,
        _flags: Flags,
    ) -> core::result::Result<NonNull<[u8]>, AllocError> {
        match (ptr, layout.size()) {
            (Some(p), 0) => {
                if old_layout.size() != 0 {
                    // SAFETY: with a non-zero old layout, `p` is an
                    // allocation of this allocator (the caller's
                    // contract), from kvzalloc; freed once, here.
                    unsafe { ffi::kvfree(p.as_ptr().cast()) };
                }
                Ok(NonNull::slice_from_raw_parts(NonNull::dangling(), 0))
            }
            (None, 0) => Ok(NonNull::slice_from_raw_parts(NonNull::dangling(), 0)),
            (Some(_), _) => Err(AllocError),
            (None, size) if layout.align() <= 8 => {
                // SAFETY: process context (this allocator's contract);
                // returns null or `size` zeroed octets aligned to 8.
                let p = unsafe { ffi::crem_h_kvzalloc_flow(size) };
                let p = NonNull::new(p.cast::<u8>()).ok_or(AllocError)?;
                Ok(NonNull::slice_from_raw_parts(p, size))
            }
            (None, _) => Err(AllocError),
        }
    }
}

/// `len` values of `T` in one kvmalloc'd allocation, charged to the
/// active memory cgroup, freed (each value dropped) on drop.
///
/// # Invariants
///
/// `ptr` points to `len` initialised values of `T`, in memory from
/// `crem_h_kvzalloc_flow` that this value owns (dangling when `len` is 0
/// or `T` is zero-sized: nothing allocated).
pub(crate) struct FlowArray<T> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: a `FlowArray<T>` owns its values like a `Vec<T>` does.
unsafe impl<T: Send> Send for FlowArray<T> {}
// SAFETY: as above; `&FlowArray` gives only `&T`.
unsafe impl<T: Sync> Sync for FlowArray<T> {}

impl<T> FlowArray<T> {
    /// `len` values, each `fill()` (process context: may sleep).
    pub(crate) fn new(len: usize, fill: impl Fn() -> T) -> Result<Self> {
        // kvzalloc aligns to 8 at least, not to a type's larger alignment.
        const { assert!(core::mem::align_of::<T>() <= 8) };
        let size = len.checked_mul(core::mem::size_of::<T>()).ok_or(ENOMEM)?;
        let ptr = if size == 0 {
            NonNull::dangling()
        } else {
            // SAFETY: process context (the caller's); returns null or
            // `size` zeroed octets aligned to 8 at least (kmalloc's
            // minimum; vmalloc's is a page), enough for `T` (asserted
            // above).
            let p = unsafe { ffi::crem_h_kvzalloc_flow(size) };
            NonNull::new(p.cast::<T>()).ok_or(ENOMEM)?
        };
        for i in 0..len {
            // SAFETY: `i < len`, inside the allocation; each slot is written
            // once before any is read.
            unsafe { ptr.as_ptr().add(i).write(fill()) };
        }
        // INVARIANT: every value written above.
        Ok(FlowArray { ptr, len })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The octets `new(len, ..)` allocates.
    pub(crate) const fn octets(len: usize) -> usize {
        len.saturating_mul(core::mem::size_of::<T>())
    }

    /// The index `j` places after `head`, the array taken as a ring (0 if
    /// it is empty).
    pub(crate) fn ring_at(&self, head: usize, j: usize) -> usize {
        head.wrapping_add(j).checked_rem(self.len).unwrap_or(0)
    }

    fn as_slice(&self) -> &[T] {
        // SAFETY: by the invariant, `len` initialised values at `ptr`.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, borrowed exclusively through `&mut self`.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        self.as_slice().get(i)
    }

    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.as_mut_slice().get_mut(i)
    }

    pub(crate) fn iter_mut(&mut self) -> core::slice::IterMut<'_, T> {
        self.as_mut_slice().iter_mut()
    }
}

impl<T> AsRef<[T]> for FlowArray<T> {
    fn as_ref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> AsMut<[T]> for FlowArray<T> {
    fn as_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

/// Its length only (an engine's `Debug` prints its storage this way).
impl<T> core::fmt::Debug for FlowArray<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "FlowArray[{}]", self.len)
    }
}

impl<T> Drop for FlowArray<T> {
    fn drop(&mut self) {
        // SAFETY: the values are initialised (invariant) and dropped once,
        // here.
        unsafe { core::ptr::drop_in_place(self.as_mut_slice()) };
        if self.len != 0 && core::mem::size_of::<T>() != 0 {
            // SAFETY: the allocation came from `crem_h_kvzalloc_flow`
            // (kvzalloc), freed once, here.
            unsafe { ffi::kvfree(self.ptr.as_ptr().cast()) };
        }
    }
}

/// A private copy of some octets, made in atomic context (`kmemdup` with
/// `GFP_ATOMIC`: not charged to a memory cgroup, as no softirq allocation
/// is), freed on drop.
///
/// # Invariants
///
/// `ptr` points to `len` octets from `kmemdup` that this value owns
/// (dangling when `len` is 0: nothing allocated).
pub(crate) struct Copied {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: plain owned memory.
unsafe impl Send for Copied {}

impl Copied {
    /// A copy of `data` (None if out of memory).
    pub(crate) fn new_atomic(data: &[u8]) -> Option<Self> {
        if data.is_empty() {
            return Some(Copied {
                ptr: NonNull::dangling(),
                len: 0,
            });
        }
        // SAFETY: `data` is readable for its length; `kmemdup` may be
        // called in any context with GFP_ATOMIC and returns null or a new
        // allocation of that length holding a copy.
        let p = unsafe { ffi::crem_h_kmemdup_atomic(data.as_ptr().cast(), data.len()) };
        NonNull::new(p.cast::<u8>()).map(|ptr| Copied {
            ptr,
            len: data.len(),
        })
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: by the invariant, `len` octets at `ptr`, initialised (a
        // copy).
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, borrowed exclusively through `&mut self`.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Copied {
    fn drop(&mut self) {
        if self.len != 0 {
            // SAFETY: by the invariant the allocation is ours, from
            // `kmemdup`, freed once, here.
            unsafe { kernel::bindings::kfree(self.ptr.as_ptr().cast()) };
        }
    }
}
