// SPDX-License-Identifier: GPL-2.0
//! Network namespaces as a whole: the initial one, whether one belongs to
//! another user namespace, and a walk of every one (`for_each_net`).
//! 6.12's `kernel` crate has none of this.

use crate::ffi;
use core::ptr::addr_of_mut;
use kernel::bindings;

/// The initial netns (`init_net`), which lives as long as the kernel.
pub(crate) fn init_net() -> *mut bindings::net {
    addr_of_mut!(ffi::init_net)
}

/// Whether `net` is owned by a user namespace other than the initial one
/// (`net->user_ns != &init_user_ns`): its root is not the host's.
///
/// # Safety
///
/// `net` is a live netns.
pub(crate) unsafe fn of_other_userns(net: *mut bindings::net) -> bool {
    // SAFETY: a live netns (the contract), whose `user_ns` is set when it
    // is made and never changes.
    unsafe { ffi::crem_h_net_other_userns(net) }
}

/// Calls `f` on every netns listed (`for_each_net`, under `net_rwsem`
/// read): the pernet inits of each have run, and its exits have not (a
/// netns is listed after its inits and unlisted before its exits). May
/// sleep, and `f` may: process context.
pub(crate) fn for_each(mut f: impl FnMut(*mut bindings::net)) {
    let sem = addr_of_mut!(ffi::net_rwsem);
    // SAFETY: the kernel's netns list lock, taken for reading (process
    // context, the contract).
    unsafe { bindings::down_read(sem) };
    // SAFETY: under `net_rwsem` the list does not change: each step gives
    // a listed, live netns, or null after the last.
    let mut net = unsafe { ffi::crem_h_net_next(core::ptr::null_mut()) };
    while !net.is_null() {
        f(net);
        // SAFETY: as above; `net` is listed.
        net = unsafe { ffi::crem_h_net_next(net) };
    }
    // SAFETY: taken above.
    unsafe { bindings::up_read(sem) };
}
