// SPDX-License-Identifier: GPL-2.0
//! `struct in6_addr` as the helpers take it: 16 octets in network order,
//! 4-aligned (the C union's `u32` view), so that a pointer to one is a
//! valid `const struct in6_addr *`.

use crate::ffi;

/// An IPv6 address laid out as `struct in6_addr`.
#[repr(C, align(4))]
pub(crate) struct In6Addr(pub(crate) [u8; 16]);

const _: () = assert!(core::mem::size_of::<In6Addr>() == core::mem::size_of::<ffi::in6_addr>());
const _: () = assert!(core::mem::align_of::<In6Addr>() == core::mem::align_of::<ffi::in6_addr>());

impl In6Addr {
    /// For a helper that reads the address during the call.
    pub(crate) fn as_ptr(&self) -> *const ffi::in6_addr {
        core::ptr::from_ref(self).cast()
    }
}
