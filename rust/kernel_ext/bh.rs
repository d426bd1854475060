// SPDX-License-Identifier: GPL-2.0
//! Bottom halves: [`Bh`], a proof that softirqs are off on this CPU,
//! [`disable`] to make one in process context, and [`BhLock`], a spinlock
//! that can only be taken with one.
//!
//! Linux 6.12's `SpinLock` has no `_bh` variant. A lock that softirq code
//! takes must never be taken elsewhere with BH on (a softirq interrupting
//! its holder on the same CPU would spin forever); the C rule "take it with
//! spin_lock_bh outside softirq" becomes a type here: [`BhLock::lock`]
//! wants a `&Bh`, which exists only where BH is off.

use crate::ffi;
use core::marker::PhantomData;
use core::ops::Deref;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::lock::spinlock::SpinLockBackend;
use kernel::sync::lock::Guard;
use kernel::sync::{LockClassKey, SpinLock};

/// Proof that bottom halves (and so preemption) are disabled on this CPU
/// for as long as it lives: no softirq runs here meanwhile, and this CPU's
/// per-CPU data stays this CPU's. Neither `Send` nor `Sync`: it belongs to
/// the CPU and the section it was made in.
pub(crate) struct Bh {
    _cpu_bound: PhantomData<*mut ()>,
}

impl Bh {
    /// The proof, for code that runs with BH disabled.
    ///
    /// # Safety
    ///
    /// The caller runs with bottom halves disabled (a softirq, a netfilter
    /// hook, or inside `local_bh_disable`) and keeps them disabled while
    /// the returned value lives.
    pub(crate) unsafe fn assume() -> Self {
        Bh {
            _cpu_bound: PhantomData,
        }
    }
}

/// Bottom halves disabled until this is dropped (`local_bh_disable`). The
/// datapath gets its [`Bh`] from its context; process-context callers
/// (netlink, the collector, teardown, the KUnit suites) make one with this.
pub(crate) struct BhDisabled(Bh);

/// Disables bottom halves on this CPU until the result is dropped. For
/// process and softirq context with interrupts enabled, where every caller
/// runs (`local_bh_enable` wants them on: lockdep warns otherwise).
pub(crate) fn disable() -> BhDisabled {
    // SAFETY: `local_bh_disable` may be called in any context but hard IRQ;
    // the `BhDisabled` pairs it with exactly one `local_bh_enable` on this
    // CPU (it is not `Send`).
    unsafe { ffi::crem_h_local_bh_disable() };
    // SAFETY: BH is disabled from here until `BhDisabled` drops.
    BhDisabled(unsafe { Bh::assume() })
}

impl Deref for BhDisabled {
    type Target = Bh;
    fn deref(&self) -> &Bh {
        &self.0
    }
}

impl Drop for BhDisabled {
    fn drop(&mut self) {
        // SAFETY: `disable` disabled BH, and this re-enables it once.
        unsafe { ffi::crem_h_local_bh_enable() };
    }
}

/// A spinlock of data that softirq code uses: the kernel's `SpinLock`
/// (lockdep sees its class as usual), taken only with BH off.
#[repr(transparent)]
pub(crate) struct BhLock<T> {
    inner: SpinLock<T>,
}

impl<T> BhLock<T> {
    /// A lock of `t`, of lockdep class `key` (see [`new_bh_lock!`]).
    pub(crate) fn new(t: T, name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        let inner = SpinLock::new(t, name, key);
        // SAFETY: `BhLock` is a transparent wrapper of its `SpinLock`, so
        // initialising the lock at `slot` initialises the `BhLock`, pinned
        // where the lock is; an error leaves nothing to drop, as for the
        // lock itself. (Written out rather than with `pin_init!`, whose
        // type-checking closure leaves a dead panic call in the object,
        // which vm/panic-sites.py would count.)
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Self| {
                inner.__pinned_init(slot.cast::<SpinLock<T>>())
            })
        }
    }

    /// Takes the lock; `bh` shows that no softirq can interrupt the holder
    /// on this CPU, and the guard cannot outlive it.
    pub(crate) fn lock<'a>(&'a self, _bh: &'a Bh) -> Guard<'a, T, SpinLockBackend> {
        self.inner.lock()
    }
}

/// A [`BhLock`] of a value, with a lockdep class of its own per call site
/// (as the kernel's `new_spinlock!`).
macro_rules! new_bh_lock {
    ($inner:expr, $name:literal $(,)?) => {
        $crate::kernel_ext::bh::BhLock::new(
            $inner,
            kernel::c_str!($name),
            kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_bh_lock;
