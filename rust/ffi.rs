// SPDX-License-Identifier: GPL-2.0
//! Declarations of the C half (`glue/crem_glue.h`). Kept by hand because the
//! surface is a handful of functions with scalar and opaque-pointer arguments.

use core::ffi::c_int;

/// Hook points, as `enum crem_hook` in `crem_glue.h`.
pub(crate) const HOOK_LOCAL_IN: u32 = 0;
pub(crate) const HOOK_FORWARD: u32 = 1;
pub(crate) const HOOK_LOCAL_OUT: u32 = 2;

/// netfilter verdict that lets the packet continue unchanged.
pub(crate) const NF_ACCEPT: u32 = 1;

/// `enum nfproto` values of the families we hook.
pub(crate) const NFPROTO_IPV4: u8 = 2;
pub(crate) const NFPROTO_IPV6: u8 = 10;

extern "C" {
    pub(crate) fn crem_glue_register() -> c_int;
    pub(crate) fn crem_glue_unregister();
}
