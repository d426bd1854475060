// SPDX-License-Identifier: GPL-2.0
//! Pernet operations (`register_pernet_subsys`): a subsystem's init and
//! exit for every network namespace, and its slot in each (`net_generic`).
//! 6.12's `kernel` crate has none.

use crate::ffi;
use core::ffi::{c_uint, c_void};
use kernel::bindings;
use kernel::error::{to_result, Result};

/// The subsystem registered: its init has run for every netns (and runs
/// for each new one), its exit runs for every netns on drop.
pub(crate) struct Registration(*mut ffi::pernet_operations);

// SAFETY: the registration is a handle to a static the kernel owns while
// registered; dropping it (unregistering) may happen on any thread.
unsafe impl Send for Registration {}
// SAFETY: it has no `&self` methods.
unsafe impl Sync for Registration {}

impl Registration {
    /// Registers `ops`.
    ///
    /// # Safety
    ///
    /// `ops` is a static, registered once: the kernel links it into its
    /// list and writes its id until the registration drops. Its callbacks
    /// are sound to call for any netns from then on.
    pub(crate) unsafe fn register(ops: *mut ffi::pernet_operations) -> Result<Self> {
        // SAFETY: the contract.
        to_result(unsafe { ffi::register_pernet_subsys(ops) })?;
        Ok(Registration(ops))
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: registered by `register`; every netns's exit has run when
        // this returns.
        unsafe { ffi::unregister_pernet_subsys(self.0) };
    }
}

/// The slot of netns `net` for the subsystem of id `id` (`net_generic`):
/// its `size` octets, zeroed before its init, freed after its exit.
///
/// # Safety
///
/// `net` is a live netns whose init of the subsystem has started and whose
/// exit has not ended, and `id` is the subsystem's (registered).
pub(crate) unsafe fn slot(net: *const bindings::net, id: c_uint) -> *mut c_void {
    // SAFETY: the contract.
    unsafe { ffi::crem_h_net_generic(net, id) }
}
