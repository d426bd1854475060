// SPDX-License-Identifier: GPL-2.0
//! RCU read-side critical sections, and [`RcuDouble`], a value readers use
//! without a lock (6.12's `kernel` crate has none; upstream later has
//! `kernel::sync::rcu` with the same names).

use super::bh::Bh;
use crate::ffi;
use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::ptr::addr_of_mut;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::bindings;
use kernel::init::{init_from_closure, Init};

/// A proof that the holder is in an RCU read-side critical section: a
/// [`Guard`], or a [`Bh`] (a BH-off region is one, `rcupdate.h`).
pub(crate) trait Reader {}
impl Reader for Bh {}
impl Reader for Guard {}

/// An RCU read-side critical section, ended on drop. What is borrowed under
/// it (a device found by index) lives at least as long as it does.
pub(crate) struct Guard {
    _cpu_bound: PhantomData<*mut ()>,
}

/// Enters an RCU read-side critical section.
pub(crate) fn read_lock() -> Guard {
    // SAFETY: `rcu_read_lock` may be called in any context; the `Guard`
    // pairs it with exactly one `rcu_read_unlock`, on this CPU's task
    // (`Guard` is not `Send`).
    unsafe { ffi::crem_h_rcu_read_lock() };
    Guard {
        _cpu_bound: PhantomData,
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // SAFETY: `read_lock` entered the section this ends.
        unsafe { ffi::crem_h_rcu_read_unlock() };
    }
}

/// A value that readers use under RCU, without a lock, and one writer at a
/// time updates: two copies, the readers' and the writer's; an update
/// writes the other copy, publishes it (`rcu_assign_pointer`) and waits a
/// grace period (`synchronize_rcu`), after which no reader holds the old
/// copy, the next update's to write. Nothing is allocated, so an update
/// cannot fail. Readers prove they are in a read-side section ([`Reader`]).
pub(crate) struct RcuDouble<T> {
    copies: [UnsafeCell<T>; 2],
    /// Which copy readers use.
    current: AtomicUsize,
}

impl<T> RcuDouble<T> {
    /// Both copies made where they are by `init` (equal: readers start on
    /// the first), so that a large `T` never passes through the stack (a
    /// value built and moved in would, twice).
    ///
    /// # Safety
    ///
    /// `init` leaves the `T` its argument points to initialised.
    pub(crate) unsafe fn init_each(init: impl Fn(*mut T)) -> impl Init<Self> {
        // SAFETY: both copies are initialised by `init` (the caller's
        // contract) and `current` is written, so the value is whole when
        // Ok is returned; nothing fails half way.
        unsafe {
            init_from_closure(move |slot: *mut Self| {
                let copies = addr_of_mut!((*slot).copies).cast::<UnsafeCell<T>>();
                for i in 0..2 {
                    // `UnsafeCell<T>` has `T`'s layout; `i` is within the
                    // array of two.
                    init(UnsafeCell::raw_get(copies.add(i)));
                }
                addr_of_mut!((*slot).current).write(AtomicUsize::new(0));
                Ok(())
            })
        }
    }

    /// The current value, for as long as the reader's section lasts.
    pub(crate) fn get<'a>(&'a self, _reader: &'a impl Reader) -> &'a T {
        // Acquire pairs with the Release of `update`: the copy is seen as
        // written (rcu_dereference).
        let i = self.current.load(Ordering::Acquire) & 1;
        // SAFETY: the current copy is written only after it has stopped
        // being current and a grace period has passed (`update`), which
        // this reader's read-side section (`_reader`) holds off.
        unsafe { &*self.copies[i].get() }
    }

    /// Writes the other copy with `f`, makes it current, and waits until no
    /// reader can hold the old one (may sleep: process context).
    ///
    /// # Safety
    ///
    /// Updates are serialised by the caller: one at a time.
    pub(crate) unsafe fn update(&self, f: impl FnOnce(&mut T)) {
        let next = (self.current.load(Ordering::Relaxed) & 1) ^ 1;
        // SAFETY: `next` is not current, and the previous update waited a
        // grace period after making it so: no reader holds it, and no
        // other writer runs (the caller's contract).
        f(unsafe { &mut *self.copies[next].get() });
        self.current.store(next, Ordering::Release);
        // SAFETY: process context (the caller's contract), no spinlock
        // held (sleeping locks may be).
        unsafe { bindings::synchronize_rcu() };
    }
}

// SAFETY: readers get `&T` from any CPU, the writer writes a copy no reader
// holds: `T` must be `Sync` and `Send`.
unsafe impl<T: Send + Sync> Sync for RcuDouble<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Send for RcuDouble<T> {}
