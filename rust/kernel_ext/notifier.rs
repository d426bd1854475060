// SPDX-License-Identifier: GPL-2.0
//! Netdevice events (`register_netdevice_notifier`): a registration that
//! calls a handler for every device that goes away, and unregisters on
//! drop. 6.12's `kernel` crate has no notifier abstraction.

use crate::ffi;
use core::ffi::{c_int, c_void};
use core::pin::Pin;
use kernel::bindings;
use kernel::error::{to_result, Result};
use kernel::prelude::*;
use kernel::types::Opaque;

/// A netdevice notifier that calls `G` on NETDEV_UNREGISTER.
pub(crate) struct NetdevGone {
    /// Linked into the kernel's chain while registered: pinned.
    nb: Pin<KBox<Opaque<bindings::notifier_block>>>,
}

// SAFETY: the block is only touched by the kernel (under its chain's lock)
// and by `Drop`, from any thread.
unsafe impl Send for NetdevGone {}
// SAFETY: `&NetdevGone` gives no access to the block.
unsafe impl Sync for NetdevGone {}

impl NetdevGone {
    /// Registers `G::gone`'s notifier (process context; RTNL not held). The
    /// kernel replays NETDEV_REGISTER for existing devices, which this
    /// ignores.
    pub(crate) fn register<G: OnGone>() -> Result<Self> {
        let nb = KBox::pin(
            Opaque::new(bindings::notifier_block {
                notifier_call: Some(call::<G>),
                next: core::ptr::null_mut(),
                priority: 0,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: the block is pinned and outlives its registration (`Drop`
        // unregisters before it is freed).
        to_result(unsafe { ffi::register_netdevice_notifier(nb.get()) })?;
        Ok(NetdevGone { nb })
    }
}

impl Drop for NetdevGone {
    fn drop(&mut self) {
        // SAFETY: registered by `register`; after this returns the kernel
        // calls it no more (unregistration takes RTNL, under which calls
        // run).
        unsafe { ffi::unregister_netdevice_notifier(self.nb.get()) };
    }
}

/// What a device going away calls.
pub(crate) trait OnGone {
    /// `dev` is being unregistered; RTNL held.
    fn gone(dev: *mut bindings::net_device);
}

unsafe extern "C" fn call<G: OnGone>(
    _nb: *mut bindings::notifier_block,
    // `unsigned long`, which the kernel crate maps to `usize`.
    event: usize,
    ptr: *mut c_void,
) -> c_int {
    if event == ffi::netdev_cmd_NETDEV_UNREGISTER as usize {
        // SAFETY: netdevice notifiers run under RTNL with a
        // `netdev_notifier_info` for a live device.
        unsafe {
            ffi::crem_h_assert_rtnl();
            G::gone(ffi::crem_h_netdev_notifier_info_to_dev(ptr));
        }
    }
    bindings::NOTIFY_DONE as c_int
}
