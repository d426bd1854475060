// SPDX-License-Identifier: GPL-2.0
//! Bottom halves: [`Bh`], a proof that softirqs are off on this CPU, and
//! [`disable`] to make one in process context.

#[cfg(crem_kunit)]
use crate::ffi;
use core::marker::PhantomData;
#[cfg(crem_kunit)]
use core::ops::Deref;

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
/// datapath gets its [`Bh`] from its context; process-context callers (the
/// KUnit suites so far) make one with this.
#[cfg(crem_kunit)]
pub(crate) struct BhDisabled(Bh);

/// Disables bottom halves on this CPU until the result is dropped.
#[cfg(crem_kunit)]
pub(crate) fn disable() -> BhDisabled {
    // SAFETY: `local_bh_disable` may be called in any context but hard IRQ;
    // the `BhDisabled` pairs it with exactly one `local_bh_enable` on this
    // CPU (it is not `Send`).
    unsafe { ffi::crem_h_local_bh_disable() };
    // SAFETY: BH is disabled from here until `BhDisabled` drops.
    BhDisabled(unsafe { Bh::assume() })
}

#[cfg(crem_kunit)]
impl Deref for BhDisabled {
    type Target = Bh;
    fn deref(&self) -> &Bh {
        &self.0
    }
}

#[cfg(crem_kunit)]
impl Drop for BhDisabled {
    fn drop(&mut self) {
        // SAFETY: `disable` disabled BH, and this re-enables it once.
        unsafe { ffi::crem_h_local_bh_enable() };
    }
}
