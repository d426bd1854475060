// SPDX-License-Identifier: GPL-2.0
//! Which netfilter hooks a netns has: those its role and its `report`
//! setting need, registered while it has them (a netns with CREM disabled
//! and not reporting has none, and costs its packets nothing). A host codes
//! at LOCAL_OUT what goes toward a peer and takes at LOCAL_IN what comes
//! from one; a gateway does both at FORWARD; a Path Reporter, whatever its
//! role, has FORWARD too, for the PATH_REPORTs it forwards. Each hook point
//! has one hook per family (IPv4, IPv6), both registered or neither: the
//! family comes from netfilter's state (`crem_h_nf_pf`), the tag is the
//! hook point.
//!
//! A change adds the new configuration's hooks before it is committed and
//! removes those it no longer needs after (`crate::netlink::config`), so no
//! packet the new role protects passes unhooked; the hook reads the role
//! per packet (`crate::hook`), and passes what the role does not protect at
//! that hook untouched.

use crate::config::Setter;
use crate::crem_core::ctl::Role;
use crate::ffi;
use crate::hook;
use crate::kernel_ext::netfilter::HookOps;
use crate::netns::{self, NetState};
use core::ffi::c_void;
use core::sync::atomic::{AtomicU8, Ordering};
use kernel::bindings;
use kernel::error::{code::EINVAL, Result};

/// Last in every chain: on the way in after filtering, on the way out
/// after filtering and NAT, so the CSF codes only packets that do leave
/// (and may pass them on itself, see `crate::hook`).
const PRIORITY: i32 = ffi::nf_ip_hook_priorities_NF_IP_PRI_LAST - 1;
const PRIORITY6: i32 = ffi::nf_ip6_hook_priorities_NF_IP6_PRI_LAST - 1;

/// The hook points the datapath tells apart: each is its hook's tag (the
/// `priv` netfilter passes back), the index of its IPv4 hook in [`OPS`]
/// (its IPv6 hook's is `POINTS` on).
pub(crate) const LOCAL_IN: u32 = 0;
pub(crate) const FORWARD: u32 = 1;
pub(crate) const LOCAL_OUT: u32 = 2;

/// Hook points, each with one hook per family.
const POINTS: usize = 3;

/// The hook of `point` (its tag) for family `pf` at netfilter hook `nf`.
const fn ops(pf: u8, nf: u32, prio: i32, point: u32) -> HookOps {
    HookOps::new(crem_nf_hook, pf, nf, prio, point as usize)
}

/// One hook per hook point and family: IPv4's in the hook points' order,
/// then IPv6's (so `OPS[point]` and `OPS[POINTS + point]` are `point`'s).
static OPS: [HookOps; 2 * POINTS] = [
    ops(
        ffi::NFPROTO_IPV4,
        ffi::nf_inet_hooks_NF_INET_LOCAL_IN,
        PRIORITY,
        LOCAL_IN,
    ),
    ops(
        ffi::NFPROTO_IPV4,
        ffi::nf_inet_hooks_NF_INET_FORWARD,
        PRIORITY,
        FORWARD,
    ),
    ops(
        ffi::NFPROTO_IPV4,
        ffi::nf_inet_hooks_NF_INET_LOCAL_OUT,
        PRIORITY,
        LOCAL_OUT,
    ),
    ops(
        ffi::NFPROTO_IPV6,
        ffi::nf_inet_hooks_NF_INET_LOCAL_IN,
        PRIORITY6,
        LOCAL_IN,
    ),
    ops(
        ffi::NFPROTO_IPV6,
        ffi::nf_inet_hooks_NF_INET_FORWARD,
        PRIORITY6,
        FORWARD,
    ),
    ops(
        ffi::NFPROTO_IPV6,
        ffi::nf_inet_hooks_NF_INET_LOCAL_OUT,
        PRIORITY6,
        LOCAL_OUT,
    ),
];

const _: () = assert!(LOCAL_IN == 0 && FORWARD == 1 && LOCAL_OUT == 2);

/// The hooks (bits by index in [`OPS`]) `role` and `report` need: the
/// role's hook points, and FORWARD for a reporter, for both families.
const fn needs(role: Role, report: bool) -> u8 {
    let mut points: u8 = match role {
        Role::Disabled => 0,
        Role::Host => 1 << LOCAL_IN | 1 << LOCAL_OUT,
        Role::Gateway => 1 << FORWARD,
    };
    if report {
        points |= 1 << FORWARD;
    }
    points | points << POINTS as u8
}

const _: () = assert!(2 * POINTS <= u8::BITS as usize);

/// The hooks registered in a netns (bits by index in [`OPS`]), changed
/// under its setter lock only.
pub(crate) struct Hooks(AtomicU8);

impl Hooks {
    pub(crate) const fn new() -> Hooks {
        Hooks(AtomicU8::new(0))
    }

    /// Which are registered now.
    pub(crate) fn registered(&self) -> u8 {
        self.0.load(Ordering::Relaxed)
    }

    /// Registers in `st`'s netns the hooks `role` and `report` need that
    /// it does not have (process context, under the setter lock). On an
    /// error, those it had are kept and those it registered stay
    /// registered too (a later [`Self::keep`] removes them).
    pub(crate) fn add(
        &self,
        st: &NetState,
        role: Role,
        report: bool,
        setter: &Setter<'_>,
    ) -> Result {
        if !setter.holds(&st.settings) {
            return Err(EINVAL);
        }
        let want = needs(role, report) & !self.registered();
        for (bit, ops) in (0u8..).zip(OPS.iter()) {
            if want & 1 << bit != 0 {
                // SAFETY: the netns is live while its state is; not
                // registered there (its bit is clear); unregistered by
                // `keep` before the state goes (`netns::exit`).
                unsafe { ops.register(st.net().as_ptr()) }?;
                self.0.fetch_or(1 << bit, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// Unregisters from `st`'s netns the hooks `role` and `report` do not
    /// need (process context, under the setter lock). Calls in flight may
    /// run until a grace period has passed.
    pub(crate) fn keep(&self, st: &NetState, role: Role, report: bool, setter: &Setter<'_>) {
        if !setter.holds(&st.settings) {
            return;
        }
        let drop = self.registered() & !needs(role, report);
        for (bit, ops) in (0u8..).zip(OPS.iter()) {
            if drop & 1 << bit != 0 {
                // SAFETY: registered there (its bit is set); the netns is
                // live while its state is.
                unsafe { ops.unregister(st.net().as_ptr()) };
                self.0.fetch_and(!(1 << bit), Ordering::Relaxed);
            }
        }
    }
}

/// Every packet at our hooks: its netns's state and the hook point (the
/// hook's tag) to the datapath (`crate::hook`).
///
/// # Safety
///
/// Netfilter calls it with a hook's `priv` (one of [`OPS`]' tags), packet
/// and state, for the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn crem_nf_hook(
    tag: *mut c_void,
    skb: *mut bindings::sk_buff,
    nf: *const ffi::nf_hook_state,
) -> u32 {
    // SAFETY: netfilter's state for the call.
    let net = unsafe { ffi::crem_h_nf_net(nf.cast()) };
    // SAFETY: the packet's netns, live while its hook runs; a hook is
    // registered only while the netns has a state (its exit unregisters
    // them and waits for those in flight before the state goes).
    let Some(st) = (unsafe { netns::of(net) }) else {
        return ffi::NF_ACCEPT;
    };
    // SAFETY: the hook's packet and state (the contract).
    unsafe { hook::run(st, tag as usize as u32, skb, nf.cast()) }
}
