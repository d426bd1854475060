// SPDX-License-Identifier: GPL-2.0
//! RCU read-side critical sections (6.12's `kernel` crate has none; upstream
//! later has `kernel::sync::rcu` with the same names).

use crate::ffi;
use core::marker::PhantomData;

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
