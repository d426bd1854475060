// SPDX-License-Identifier: GPL-2.0
//! A network device going away: no packet a flow holds may keep pointing
//! at it. The module's netdevice notifier (`kernel_ext/notifier.rs`, a
//! field of the module) calls [`DevGone::gone`] on NETDEV_UNREGISTER.

use crate::crem_core::nl::stat;
use crate::ffi;
use crate::kernel_ext::bh;
use crate::kernel_ext::notifier::OnGone;
use crate::kernel_ext::rcu;
use crate::netns;
use kernel::bindings;

/// The module's device-gone handler.
pub(crate) struct DevGone;

impl OnGone for DevGone {
    /// `dev` is being unregistered (RTNL held): no packet any flow of its
    /// netns holds keeps a pointer to it. Every flow in the table for the
    /// whole walk is visited, the held packets dropped with it counted;
    /// flows removed and not yet freed are freed before this returns.
    fn gone(dev: *mut bindings::net_device) {
        // SAFETY: a live device (the notifier's), whose netns outlives it:
        // its state is there (pernet exits run after the devices').
        let Some(st) = (unsafe { netns::of(ffi::crem_h_dev_net(dev)) }) else {
            return;
        };
        let mut dropped = 0u32;
        {
            let g = rcu::read_lock();
            st.flows.for_each(&g, |f| {
                // BH off per flow (its lock), not for the whole walk.
                let bh = bh::disable();
                dropped = dropped.saturating_add(f.dev_gone(&bh, dev));
            });
        }
        st.count_by(stat::DROP_DEV_GONE, u64::from(dropped));
        // A flow removed before the walk reached it (or earlier, its
        // reaper still to come, or reaping now) was not visited: it is
        // freed now, its packets let go while the device still exists. A
        // flow in the table through the whole walk was visited; none is
        // made for this device any more (it is down). (A reap waits a
        // grace period: process context, RTNL held, no RCU section.)
        st.reap(true);
    }
}
