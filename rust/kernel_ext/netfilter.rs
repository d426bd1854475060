// SPDX-License-Identifier: GPL-2.0
//! Netfilter hooks of one netns (`nf_register_net_hook`), each a static
//! [`HookOps`]. 6.12's `kernel` crate has none.

use crate::ffi;
use core::ffi::c_void;
use kernel::bindings;
use kernel::error::{to_result, Result};

/// The signature of a hook function (`nf_hookfn`): the hook's `priv`, the
/// packet, netfilter's state; an `NF_*` verdict.
pub(crate) type HookFn =
    unsafe extern "C" fn(*mut c_void, *mut bindings::sk_buff, *const ffi::nf_hook_state) -> u32;

/// One hook: function, family, hook point, priority and `priv`. Netfilter
/// copies what it needs at registration (`nf_hook_entries_grow`); the ops
/// are named again to unregister.
#[repr(transparent)]
pub(crate) struct HookOps(ffi::nf_hook_ops);

// SAFETY: immutable after construction; its pointers (`priv`, a tag, and a
// null device) are never dereferenced through it by Rust.
unsafe impl Sync for HookOps {}

impl HookOps {
    /// A hook of `f` in family `pf` at hook point `hooknum` with priority
    /// `priority` (lower runs earlier); `f` gets `tag` as its `priv`.
    pub(crate) const fn new(f: HookFn, pf: u8, hooknum: u32, priority: i32, tag: usize) -> Self {
        HookOps(ffi::nf_hook_ops {
            hook: Some(f),
            pf,
            hooknum,
            priority,
            priv_: tag as *mut c_void,
            // SAFETY: the rest (the RCU head, no device, hook_ops_type
            // NF_HOOK_OP_UNDEFINED) is all zeros, valid for their types.
            ..unsafe { core::mem::zeroed() }
        })
    }

    /// Registers the hook in netns `net`. May sleep.
    ///
    /// # Safety
    ///
    /// `net` is live; the hook is not registered there yet, and is
    /// unregistered ([`Self::unregister`]) before `net` exits or what `f`
    /// reads is freed.
    pub(crate) unsafe fn register(&'static self, net: *mut bindings::net) -> Result {
        // SAFETY: the contract; the ops are static.
        to_result(unsafe { ffi::nf_register_net_hook(net, &self.0) })
    }

    /// Unregisters the hook from `net`. Calls in flight may still run until
    /// an RCU grace period (`synchronize_net`) has passed. May sleep.
    ///
    /// # Safety
    ///
    /// Registered in `net` by [`Self::register`], and `net` is live.
    pub(crate) unsafe fn unregister(&'static self, net: *mut bindings::net) {
        // SAFETY: the contract.
        unsafe { ffi::nf_unregister_net_hook(net, &self.0) };
    }
}
