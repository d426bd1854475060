// SPDX-License-Identifier: GPL-2.0
//! The netns's configuration over the family: config-get, config-set, the
//! config-change-ntf notification, and the policy callbacks of the address
//! attributes. The rules and texts are crem-core's (`ctl`); this file
//! reads the attributes into a `ctl::Edit`, looks up what the rules need
//! from the kernel (routes, the initial netns's limits), binds the socket
//! and commits (`crate::config`).
//!
//! A netns owned by a user namespace other than the initial one (a
//! "limited" netns) gets no more flows and memory than the initial netns
//! allows: its own root may set its configuration, but must not take more
//! of the host than the host's admin gave any namespace. The initial
//! netns's limits lock orders a commit of those limits (which lowers every
//! limited netns above them: [`lower`]) against a limited netns's commit
//! (which clamps to them).

use super::{refuse, state};
use crate::crem_core::ctl::{self, Config, Field, Limits, Recovery, Role};
use crate::crem_core::nl::stat;
use crate::ffi::{self, *};
use crate::kernel_ext::genl::{self, Attr, Attrs, ExtAck, Group, Info, Msg, Writer};
use crate::kernel_ext::in6::In6Addr;
use crate::kernel_ext::net;
use crate::netns::{self, NetState};
use crate::report;
use core::ffi::c_int;
use kernel::bindings;
use kernel::error::{code::*, Result};
use kernel::prelude::*;

pub(crate) type ConfigAttrs<'r> = Attrs<'r, { CREM_A_CONFIG_MAX as usize + 1 }>;
type PeerAttrs<'r> = Attrs<'r, { CREM_A_PEER_MAX as usize + 1 }>;

/// The initial netns's state (it has one while the family is registered).
fn init_state<'a>() -> Result<&'a NetState> {
    state(net::init_net())
}

/// Whether `st`'s netns is limited (see the module's docs).
fn limited(st: &NetState) -> bool {
    // SAFETY: the netns of a state is live while the state is.
    unsafe { net::of_other_userns(st.net().as_ptr()) }
}

/// The initial netns's limits (exact under its limits lock).
fn init_limits() -> Result<Limits> {
    Ok(init_state()?.settings.limits())
}

/// The attributes of `c` (config-get's reply, config-change-ntf).
pub(crate) fn put_config(w: &mut Writer<'_>, c: &Config) -> Result {
    w.u16(CREM_A_CONFIG_PORT, c.port)?;
    w.u8(CREM_A_CONFIG_ROLE, c.role.into())?;
    w.u8(CREM_A_CONFIG_RECOVERY, c.recovery.into())?;
    w.u8(CREM_A_CONFIG_ADAPTIVE, c.adaptive.into())?;
    w.u8(CREM_A_CONFIG_K, c.k)?;
    w.u8(CREM_A_CONFIG_M, c.m)?;
    w.u16(CREM_A_CONFIG_SYMBOL_LEN, c.symbol_len)?;
    w.u32(CREM_A_CONFIG_EPSILON_PPB, c.epsilon_ppb)?;
    w.u8(CREM_A_CONFIG_M_CONG, c.m_cong)?;
    w.u32(CREM_A_CONFIG_HOLD_US, c.hold_us)?;
    w.u32(CREM_A_CONFIG_MAX_FLOWS, c.max_flows)?;
    w.u64(CREM_A_CONFIG_MAX_MEMORY, c.max_memory, CREM_A_CONFIG_PAD)?;
    w.u32(CREM_A_CONFIG_MAX_BDP, c.max_bdp)?;
    w.u8(CREM_A_CONFIG_REPORT, c.report.into())?;
    w.u32(CREM_A_CONFIG_NODE_ID, c.node_id)?;
    w.u32(CREM_A_CONFIG_REPORT_INTERVAL_US, c.report_interval_us)?;
    w.u32(CREM_A_CONFIG_REPORT_FLOW_GAP_US, c.report_flow_gap_us)?;
    w.u32(CREM_A_CONFIG_REPORT_PORT_RATE, c.report_port_rate)?;
    w.u8(CREM_A_CONFIG_REPORT_PSNS, c.report_psns)?;
    w.u32(CREM_A_CONFIG_SPARE_FLOWS, c.spare_flows)?;
    for r in c.reporters.iter() {
        w.bytes(CREM_A_CONFIG_REPORTER, r.octets())?;
    }
    for p in c.peers.iter() {
        w.nest(CREM_A_CONFIG_PEER, |w| {
            w.bytes(CREM_A_PEER_PREFIX, p.prefix.octets())?;
            w.u8(CREM_A_PEER_PREFIX_LEN, p.len)?;
            w.bytes(CREM_A_PEER_ADDR, p.addr.octets())
        })?;
    }
    Ok(())
}

/// A copy of `st`'s configuration (boxed: 1.4 KB); for a limited
/// netns, as it applies: its defaults may exceed the initial netns's
/// limits until its first config-set clamps them (nothing runs before
/// that: no port, no role).
fn snapshot(st: &NetState) -> Result<KBox<Config>> {
    let mut c = KBox::new(Config::DEFAULT, GFP_KERNEL)?;
    st.settings.snapshot(&mut c);
    if limited(st) {
        ctl::clamp(&mut c, init_limits()?);
    }
    Ok(c)
}

pub(super) fn get(info: &Info<'_>) -> Result {
    let st = state(info.net())?;
    let c = snapshot(st)?;
    let mut msg = Msg::new(Msg::goodsize(), bindings::GFP_KERNEL).ok_or(ENOMEM)?;
    let mut w = msg.reply_to(info)?;
    put_config(&mut w, &c)?;
    w.end();
    msg.reply(info)
}

/// config-change-ntf to the events group of `st`'s netns, if anyone listens
/// (process context); a notification lost is counted (drop-notify).
fn notify(st: &NetState) {
    let net = st.net().as_ptr();
    if !genl::has_listeners(net, Group::Events) {
        return;
    }
    let sent = snapshot(st).and_then(|c| {
        let mut msg = Msg::new(Msg::goodsize(), bindings::GFP_KERNEL).ok_or(ENOMEM)?;
        let mut w = msg.notification(CREM_CMD_CONFIG_CHANGE_NTF as u8)?;
        put_config(&mut w, &c)?;
        w.end();
        genl::multicast(msg, net, Group::Events, bindings::GFP_KERNEL)
    });
    match sent {
        // ESRCH: the listeners left meanwhile, not a drop.
        Err(e) if e != ESRCH => st.count(stat::DROP_NOTIFY),
        _ => {}
    }
}

/// The attribute a refusal names: one of the request's attributes, or the
/// list entry being read (`entry`, with its peer nest's attributes if it
/// is a peer); none for the request as a whole.
fn locate<'r>(
    f: Option<Field>,
    tb: &ConfigAttrs<'r>,
    entry: Option<(Attr<'r>, Option<&PeerAttrs<'r>>)>,
) -> Option<Attr<'r>> {
    match f? {
        Field::Request => None,
        Field::Config(id) => tb.get(id.into()),
        Field::Reporter(_) | Field::Peer(_) => entry.map(|(a, _)| a),
        Field::PeerAttr(_, id) => entry?.1?.get(id.into()),
        Field::Flow(_) => None,
    }
}

/// config-set's attributes (`tb` by type, `list` in order) applied to `c`
/// (a snapshot): the scalars, then the reporter and peer lists in the
/// request's order, then the rules across them (`ctl::Edit`).
pub(crate) fn edit<'r>(
    c: &mut Config,
    tb: &ConfigAttrs<'r>,
    list: genl::Nested<'r>,
    ext: &ExtAck<'r>,
) -> Result<ctl::Given> {
    let mut e = ctl::Edit::new(c);
    let u8_of = |id| tb.get(id).and_then(Attr::u8);
    let u16_of = |id| tb.get(id).and_then(Attr::u16);
    let u32_of = |id| tb.get(id).and_then(Attr::u32);
    if let Some(v) = u16_of(CREM_A_CONFIG_PORT) {
        e.port(v);
    }
    // The policy admits only the enums' values.
    if let Some(v) = u8_of(CREM_A_CONFIG_ROLE).and_then(Role::from_u8) {
        e.role(v);
    }
    if let Some(v) = u8_of(CREM_A_CONFIG_RECOVERY).and_then(Recovery::from_u8) {
        e.recovery(v);
    }
    if let Some(v) = u8_of(CREM_A_CONFIG_ADAPTIVE) {
        e.adaptive(v != 0);
    }
    if let Some(v) = u8_of(CREM_A_CONFIG_K) {
        e.k(v);
    }
    if let Some(v) = u8_of(CREM_A_CONFIG_M) {
        e.m(v);
    }
    if let Some(v) = u16_of(CREM_A_CONFIG_SYMBOL_LEN) {
        e.symbol_len(v);
    }
    if let Some(v) = u32_of(CREM_A_CONFIG_EPSILON_PPB) {
        e.epsilon_ppb(v);
    }
    if let Some(v) = u8_of(CREM_A_CONFIG_M_CONG) {
        e.m_cong(v);
    }
    if let Some(v) = u32_of(CREM_A_CONFIG_HOLD_US) {
        e.hold_us(v);
    }
    if let Some(v) = u32_of(CREM_A_CONFIG_MAX_BDP) {
        e.max_bdp(v);
    }
    if let Some(v) = u32_of(CREM_A_CONFIG_MAX_FLOWS) {
        e.max_flows(v);
    }
    if let Some(v) = tb.get(CREM_A_CONFIG_MAX_MEMORY).and_then(Attr::u64) {
        e.max_memory(v);
    }
    // The policy admits 0 and 1.
    if let Some(v) = u8_of(CREM_A_CONFIG_REPORT) {
        e.report(v != 0);
    }
    if let Some(v) = u32_of(CREM_A_CONFIG_NODE_ID) {
        e.node_id(v);
    }
    if let Some(v) = u32_of(CREM_A_CONFIG_REPORT_INTERVAL_US) {
        e.report_interval_us(v);
    }
    if let Some(v) = u32_of(CREM_A_CONFIG_REPORT_FLOW_GAP_US) {
        e.report_flow_gap_us(v);
    }
    if let Some(v) = u32_of(CREM_A_CONFIG_REPORT_PORT_RATE) {
        e.report_port_rate(v);
    }
    if let Some(v) = u8_of(CREM_A_CONFIG_REPORT_PSNS) {
        e.report_psns(v);
    }
    if let Some(v) = u32_of(CREM_A_CONFIG_SPARE_FLOWS) {
        e.spare_flows(v);
    }
    // SAFETY: only the address of the generated policy is taken (an array
    // of `CREM_A_PEER_MAX + 1` entries, as the type says).
    let peer_policy = unsafe { &*core::ptr::addr_of!(ffi::crem_peer_nl_policy) };
    // The request was validated whole by the op's policy (genetlink parsed
    // it into `tb` before the handler ran).
    for a in list {
        let r = match u32::from(a.ty()) {
            CREM_A_CONFIG_REPORTER => e.reporter(a.payload()).map_err(|r| (r, None)),
            CREM_A_CONFIG_PEER if a.payload().is_empty() => {
                e.peer_empty();
                Ok(())
            }
            CREM_A_CONFIG_PEER => {
                let p = PeerAttrs::parse(a, peer_policy, ext)?;
                let prefix = p.get(CREM_A_PEER_PREFIX).map(Attr::payload);
                let len = p.get(CREM_A_PEER_PREFIX_LEN).and_then(Attr::u8);
                let addr = p.get(CREM_A_PEER_ADDR).map(Attr::payload);
                e.peer(prefix, len, addr).map_err(|r| (r, Some(p)))
            }
            _ => Ok(()),
        };
        if let Err((r, p)) = r {
            return Err(refuse(ext, &r, locate(r.at, tb, Some((a, p.as_ref())))));
        }
    }
    e.finish()
        .map_err(|r| refuse(ext, &r, locate(r.at, tb, None)))
}

/// The MTU of the route to address `a` in `st`'s netns, if there is one.
fn route_mtu(st: &NetState, a: ctl::Addr) -> Option<u32> {
    let net = st.net().as_ptr();
    // SAFETY (both): the netns of a state is live while the state is; a
    // route lookup in process context; the route is put before the return;
    // the IPv6 address (an `in6_addr` in layout) is read during the call
    // only.
    let mtu = match a {
        ctl::Addr::V4(a) => unsafe {
            ffi::crem_h_route_mtu4(net, u32::from_ne_bytes(a), core::ptr::null_mut())
        },
        ctl::Addr::V6(a) => unsafe {
            ffi::crem_h_route_mtu6(net, In6Addr(a).as_ptr(), core::ptr::null_mut())
        },
    };
    (mtu != 0).then_some(mtu)
}

pub(super) fn set(info: &Info<'_>) -> Result {
    let net = info.net();
    let st = state(net)?;
    let ext = info.extack();
    let tb: ConfigAttrs<'_> = info.attrs();
    let mut c = KBox::new(Config::DEFAULT, GFP_KERNEL)?;
    let init = init_state()?;
    let limited = limited(st);
    let at = |r: &ctl::Refusal| locate(r.at, &tb, None);

    let setter = st.settings.setter();
    st.settings.snapshot(&mut c);
    let (serving, was) = (c.socket_port(), (c.role, c.report));
    let given = edit(&mut c, &tb, info.list(), &ext)?;
    if limited {
        ctl::check_limits(&mut c, given, init_limits()?).map_err(|r| refuse(&ext, &r, at(&r)))?;
    }
    ctl::check_mtu(&c, given, |a| route_mtu(st, a)).map_err(|r| refuse(&ext, &r, at(&r)))?;
    // The new role's and report's hooks (`crate::hook_points`), then the
    // socket (which exists while a role is active or the netns reports),
    // before the commit; on a failure, the hooks are the old ones again.
    let hooked = match st.hooks.add(st, c.role, c.report, &setter) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    };
    let bound = match hooked {
        0 => st
            .socket
            .reconfigure(st, c.socket_port())
            .err()
            .unwrap_or(0),
        _ => 0,
    };
    let up =
        ctl::hooks_result(given, hooked).and_then(|()| ctl::bind_result(&c, given, serving, bound));
    if let Err(r) = up {
        st.hooks.keep(st, was.0, was.1, &setter);
        return Err(refuse(&ext, &r, at(&r)));
    }
    // The Path Reporter as configured, before the commit: one that cannot
    // start (out of memory, the tracepoint refused) leaves the old
    // configuration in force, its socket and hooks too.
    if let Err(e) = st.reporting.apply(st, report::settings(&c, st)) {
        let _ = st.socket.reconfigure(st, serving);
        st.hooks.keep(st, was.0, was.1, &setter);
        ext.fmt(
            format_args!("cannot start the Path Reporter (errno {})", e.to_errno()),
            None,
        );
        return Err(e);
    }

    let changed = {
        let _limits = init.settings.limits_lock();
        if limited {
            // Exact now: the initial netns's may have moved.
            ctl::clamp(&mut c, init.settings.limits());
        }
        let old = st.settings.limits();
        let changed = st.commit(&c, &setter);
        if core::ptr::eq(st, init) && c.limits().below(&old) {
            lower(c.limits());
        }
        changed
    };
    // A disabled role keeps no flow. The socket's closing removes them,
    // but a reporter's stays bound (its port serves its reports).
    if c.role == Role::Disabled && was.0 != Role::Disabled {
        st.flush_flows(true);
    }
    // The hooks the old configuration needed and the new one does not.
    st.hooks.keep(st, c.role, c.report, &setter);
    drop(setter);
    // Only real changes are notified.
    if changed {
        notify(st);
    }
    Ok(())
}

/// The initial netns's limits are now `lim`: every limited netns above
/// them is lowered, and notified. Under the initial netns's limits lock.
fn lower(lim: Limits) {
    net::for_each(|n| {
        // SAFETY: listed, so live, its pernet init run and its exit not
        // begun (a netns is unlisted before its exits), while the list
        // lock is held; at module unload, when our exits run for every
        // netns, the family is unregistered first, which waits for this
        // handler.
        let Some(st) = (unsafe { netns::of(n) }) else {
            return;
        };
        if !limited(st) {
            return;
        }
        if st.settings.clamp(lim) {
            notify(st);
        }
    });
}

/// The policy of every address attribute (`netlink/gen.sh` names it):
/// IPv4 or IPv6, 4 or 16 octets.
///
/// # Safety
///
/// Netlink's policy validation calls it with an attribute of the request
/// and the request's extack (or null).
#[no_mangle]
unsafe extern "C" fn crem_nl_validate_addr(
    attr: *const bindings::nlattr,
    extack: *mut bindings::netlink_ext_ack,
) -> c_int {
    // SAFETY: the contract: an attribute whose header and payload netlink
    // checked against the request, alive for the call.
    let Some(a) = (unsafe { Attr::from_raw(attr) }) else {
        return EINVAL.to_errno();
    };
    match ctl::Addr::from_bytes(a.payload()) {
        Ok(_) => 0,
        Err(why) => {
            // SAFETY: the request's extack (or null), for the call.
            let ext = unsafe { ExtAck::from_raw(extack) };
            refuse(&ext, &ctl::Refusal::new(None, why), Some(a)).to_errno()
        }
    }
}

/// A reporter's: an address, or empty (which clears the list).
///
/// # Safety
///
/// As for [`crem_nl_validate_addr`].
#[no_mangle]
unsafe extern "C" fn crem_nl_validate_reporter(
    attr: *const bindings::nlattr,
    extack: *mut bindings::netlink_ext_ack,
) -> c_int {
    // SAFETY: as in `crem_nl_validate_addr`.
    match unsafe { Attr::from_raw(attr) } {
        Some(a) if a.payload().is_empty() => 0,
        // SAFETY: the contract, passed on.
        _ => unsafe { crem_nl_validate_addr(attr, extack) },
    }
}

const _: [unsafe extern "C" fn(*const bindings::nlattr, *mut bindings::netlink_ext_ack) -> c_int;
    4] = [
    crem_nl_validate_addr,
    ffi::crem_nl_validate_addr,
    crem_nl_validate_reporter,
    ffi::crem_nl_validate_reporter,
];
