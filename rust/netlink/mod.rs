// SPDX-License-Identifier: GPL-2.0
//! The "crem" generic netlink family's handlers, which its generated op
//! table (`netlink/crem-nl-gen.c`, from `netlink/crem.yaml`) names: the
//! configuration (`config`, with the policy callbacks of the address
//! attributes), counters (`stats`), flows (`flow`) and the flow
//! notifications `crate::events` sends.
//!
//! Flow IDs are the draft's defence against blind injection: like `wg
//! show` with keys, they go only to CAP_NET_ADMIN over the netns. The dump
//! omits them for others, flow-get's do (which names a flow by id: an
//! oracle) needs it, and so does joining the events group
//! (`GENL_MCAST_CAP_NET_ADMIN`).

mod config;
mod flow;
mod stats;

#[cfg(crem_kunit)]
pub(crate) use config::{edit, put_config, ConfigAttrs};
#[cfg(crem_kunit)]
pub(crate) use flow::put_info;
pub(crate) use flow::{put_flow, FLOW_MSG_SIZE};

use crate::crem_core::{ctl, nl};
use crate::ffi;
use crate::kernel_ext::genl::{self, Attr, Dump, ExtAck, FamilySpec, GroupSpec, Info};
use crate::netns::{self, NetState};
use core::ffi::c_int;
use kernel::bindings;
use kernel::error::{Error, Result};

// The generated group ids: events is the first and only group.
const _: () = assert!(ffi::CREM_NLGRP_EVENTS == 0 && nl::MCGRPS.len() == 1);

/// Registers the family (module init): the spec's name, version and
/// generated ops; its one multicast group, events, which carries Flow IDs,
/// joinable with CAP_NET_ADMIN over the netns only.
pub(crate) fn register() -> Result<genl::Registration> {
    // SAFETY: a constant the C side defines (`GENL_MCAST_CAP_NET_ADMIN`).
    let cap_net_admin = unsafe { ffi::crem_h_genl_mcast_cap_net_admin };
    genl::Registration::register(&FamilySpec {
        name: nl::FAMILY_NAME,
        version: nl::FAMILY_VERSION,
        ops: ops(),
        groups: &[GroupSpec {
            name: nl::MCGRP_EVENTS,
            flags: cap_net_admin,
        }],
    })
}

/// The generated op table (`netlink/crem-nl-gen.c`).
fn ops() -> &'static [ffi::genl_split_ops] {
    // SAFETY: a constant table of the generated C, never written.
    unsafe { &*core::ptr::addr_of!(ffi::crem_nl_ops) }
}

/// The request policy of `cmd`'s do in the op table (its `maxattr + 1`
/// entries), if it has one: KUnit parses as genetlink would.
#[cfg(crem_kunit)]
pub(crate) fn request_policy(cmd: u32) -> Option<&'static [bindings::nla_policy]> {
    let op = ops()
        .iter()
        .find(|o| u32::from(o.cmd) == cmd && !o.policy.is_null())?;
    let n = usize::try_from(op.maxattr).ok()?.checked_add(1)?;
    // SAFETY: the generated table's policies have `maxattr + 1` entries and
    // are constant.
    Some(unsafe { core::slice::from_raw_parts(op.policy, n) })
}

/// The netns state of `net` (every netns has one while the family's ops
/// can run: the pernet init made it before any socket of the netns
/// existed).
fn state<'a>(net: *mut bindings::net) -> Result<&'a NetState> {
    // SAFETY: a live netns, the request's, whose socket holds it.
    unsafe { netns::of(net) }.ok_or(kernel::error::code::ENODEV)
}

/// An errno the `kernel` crate has no constant for.
fn errno(e: u32) -> Error {
    Error::from_errno(-(e as c_int))
}

/// Says why in the extack (`at`: the attribute the refusal names, found
/// by the caller) and returns the refusal's errno: the texts are
/// crem-core's (`ctl::Why`), fixed ones as static strings.
fn refuse<'r>(ext: &ExtAck<'r>, r: &ctl::Refusal, at: Option<Attr<'r>>) -> Error {
    match r.why.fixed() {
        Some(text) => ext.msg(text, at),
        None => ext.fmt(format_args!("{}", r.why), at),
    }
    Error::from_errno(r.errno.to_kernel())
}

fn to_c(r: Result) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// Each doit of the op table: its request (attributes parsed by the op's
/// generated policy) to its handler; the prototype is checked against the
/// generated header's.
macro_rules! doit {
    ($name:ident, $cmd:expr, $handler:path) => {
        #[no_mangle]
        unsafe extern "C" fn $name(
            skb: *mut bindings::sk_buff,
            info: *mut ffi::genl_info,
        ) -> c_int {
            // SAFETY: genetlink calls a doit with its request's skb and
            // genl_info, live for the call; the maxattr is its op's.
            let info = unsafe { Info::from_raw(skb, info, genl::op_maxattr(ops(), $cmd)) };
            to_c($handler(&info))
        }
        const _: [unsafe extern "C" fn(*mut bindings::sk_buff, *mut ffi::genl_info) -> c_int; 2] =
            [$name, ffi::$name];
    };
}

doit!(
    crem_nl_config_get_doit,
    ffi::CREM_CMD_CONFIG_GET,
    config::get
);
doit!(
    crem_nl_config_set_doit,
    ffi::CREM_CMD_CONFIG_SET,
    config::set
);
doit!(crem_nl_stats_get_doit, ffi::CREM_CMD_STATS_GET, stats::get);
doit!(
    crem_nl_stats_reset_doit,
    ffi::CREM_CMD_STATS_RESET,
    stats::reset
);
doit!(crem_nl_flow_get_doit, ffi::CREM_CMD_FLOW_GET, flow::get);
doit!(crem_nl_flow_del_doit, ffi::CREM_CMD_FLOW_DEL, flow::del);
doit!(crem_nl_flow_set_doit, ffi::CREM_CMD_FLOW_SET, flow::set);
doit!(crem_nl_flow_new_doit, ffi::CREM_CMD_FLOW_NEW, flow::new);
doit!(
    crem_nl_flow_reset_doit,
    ffi::CREM_CMD_FLOW_RESET,
    flow::reset
);

/// flow-get's dump.
#[no_mangle]
unsafe extern "C" fn crem_nl_flow_get_dumpit(
    skb: *mut bindings::sk_buff,
    cb: *mut bindings::netlink_callback,
) -> c_int {
    // SAFETY: netlink calls a dumpit with the part's skb and the dump's
    // callback, live for the call.
    match unsafe { Dump::from_raw(skb, cb) } {
        Some(mut d) => flow::dump(&mut d),
        None => kernel::error::code::EINVAL.to_errno(),
    }
}
const _: [unsafe extern "C" fn(*mut bindings::sk_buff, *mut bindings::netlink_callback) -> c_int;
    2] = [crem_nl_flow_get_dumpit, ffi::crem_nl_flow_get_dumpit];
