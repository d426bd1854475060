// SPDX-License-Identifier: GPL-2.0
//! A network device going away: no packet a flow holds may keep pointing
//! at it. C's netdevice notifier (`glue/crem_glue.c`, until the
//! registrations are Rust's) calls this on NETDEV_UNREGISTER.

use crate::ffi;
use crate::kernel_ext::bh;
use crate::kernel_ext::rcu;
use crate::netns;
use core::ffi::c_void;
use kernel::bindings;

/// `dev` is being unregistered (RTNL held): no packet any flow holds keeps
/// a pointer to it. Every flow in the table for the whole walk is visited
/// (flows already unlinked are freed only after a grace period that this
/// walk holds off); the held packets dropped with it are counted.
#[no_mangle]
extern "C" fn crem_rs_flows_dev_gone(net: *mut c_void, dev: *const bindings::net_device) {
    // SAFETY: C passes its per-netns state.
    let Some(st) = (unsafe { netns::state_opt(net) }) else {
        return;
    };
    let g = rcu::read_lock();
    let mut dropped = 0u32;
    st.flows.for_each(&g, |f| {
        // BH off per flow (its lock), not for the whole walk.
        let bh = bh::disable();
        dropped = dropped.saturating_add(f.dev_gone(&bh, dev));
    });
    st.count_dp_by(ffi::crem_dp_CREM_DROP_DEV_GONE, u64::from(dropped));
}
