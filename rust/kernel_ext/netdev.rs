// SPDX-License-Identifier: GPL-2.0
//! Network devices, borrowed under RCU.

use super::rcu;
use crate::ffi;
use kernel::bindings;
use kernel::types::Opaque;

/// `ARPHRD_ETHER`: an Ethernet device.
const ARPHRD_ETHER: u16 = ffi::ARPHRD_ETHER as u16;

/// A network device, only ever seen by reference.
#[repr(transparent)]
pub(crate) struct NetDevice(Opaque<bindings::net_device>);

impl NetDevice {
    /// The device of index `ifindex` in `net`, for as long as `_rcu` lasts.
    ///
    /// # Safety
    ///
    /// `net` is a live network namespace.
    pub(crate) unsafe fn by_index<'g>(
        net: *mut bindings::net,
        ifindex: i32,
        _rcu: &'g rcu::Guard,
    ) -> Option<&'g NetDevice> {
        // SAFETY: `net` is live (the caller's promise) and we are in an RCU
        // read-side critical section, as `dev_get_by_index_rcu` requires.
        let dev = unsafe { ffi::dev_get_by_index_rcu(net, ifindex) };
        // SAFETY: a device found under RCU is freed only after a grace
        // period, so it outlives the section `'g` borrows; `NetDevice` is
        // `repr(transparent)` over `net_device`.
        unsafe { dev.cast::<NetDevice>().as_ref() }
    }

    /// The `net_device`, for a kernel call.
    pub(crate) fn as_ptr(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// Its interface index.
    pub(crate) fn ifindex(&self) -> i32 {
        // SAFETY: `self` is a live device (see `by_index`).
        unsafe { ffi::crem_h_dev_ifindex(self.as_ptr()) }
    }

    /// Whether it is an Ethernet device (ARPHRD_ETHER).
    pub(crate) fn is_ether(&self) -> bool {
        // SAFETY: `self` is a live device (see `by_index`).
        unsafe { ffi::crem_h_dev_type(self.as_ptr()) == ARPHRD_ETHER }
    }

    /// Its Ethernet address (zero if it has none).
    pub(crate) fn ether_addr(&self) -> [u8; 6] {
        let mut a = [0u8; 6];
        // SAFETY: `self` is a live device, whose `dev_addr` buffer lives as
        // long as it does and holds `addr_len` octets, 6 for the Ethernet
        // devices read here. An address change (under RTNL, which we do not
        // hold) rewrites it in place: a race gives a mixed address for one
        // packet, as in C's `ether_addr_copy`, never an invalid read.
        unsafe {
            let p = ffi::crem_h_dev_addr(self.as_ptr());
            if !p.is_null() && self.is_ether() {
                core::ptr::copy_nonoverlapping(p, a.as_mut_ptr(), a.len());
            }
        }
        a
    }
}
