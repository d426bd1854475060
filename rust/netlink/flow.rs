// SPDX-License-Identifier: GPL-2.0
//! Flows over the family: a flow's attributes (`put_flow`, also the
//! notifications'), the dump, consistent under churn through the table's
//! generation (NLM_F_DUMP_INTR when it moved), and the ops that name one
//! flow by its Flow ID (get, del, set, reset) or make one (new).

use super::{errno, state};
use crate::addr::NetAddr;
use crate::crem_core::ctl;
use crate::crem_core::nl::{
    flow_stat, msg_type, side, CounterKind, FLOW_STATS, FLOW_STATS_MSGS_IN_BY_TYPE,
    FLOW_STATS_MSGS_OUT_BY_TYPE,
};
use crate::engine::PinRefused;
use crate::ffi::*;
use crate::flow::{info_buffer, Flow};
use crate::flow_info::{Counters, FlowInfo};
use crate::kernel_ext::bh;
use crate::kernel_ext::genl::{self, Attr, Attrs, Dump, ExtAck, Info, Msg, Writer};
use crate::kernel_ext::rcu;
use crate::netns::NetState;
use crate::table::{Cursor, FlowKey};
use core::ffi::c_int;
use kernel::bindings;
use kernel::error::{code::*, Result};

/// The flow set's attributes (`N` = its largest type + 1).
type FlowAttrs<'r> = Attrs<'r, { CREM_A_FLOW_MAX as usize + 1 }>;

/// A msg-types nest of `c` (by `nl::msg_type` index), from the set's
/// generated table.
pub(super) fn put_msg_types(w: &mut Writer<'_>, ty: u16, c: &[u64; msg_type::N]) -> Result {
    w.nest(ty.into(), |w| {
        for a in msg_type::COUNTERS {
            if let CounterKind::Value(i) = a.kind {
                w.uint(a.id.into(), c.get(i).copied().unwrap_or(0))?;
            }
        }
        Ok(())
    })
}

/// A flow-stats nest of `c`, from the set's generated table (a counter
/// the spec adds is written with nothing added here).
pub(super) fn put_counters(w: &mut Writer<'_>, ty: u16, c: &Counters) -> Result {
    w.nest(ty.into(), |w| {
        for a in flow_stat::COUNTERS {
            match (a.kind, a.id) {
                (CounterKind::Value(i), _) => w.uint(a.id.into(), c.get(i))?,
                (_, FLOW_STATS_MSGS_IN_BY_TYPE) => put_msg_types(w, a.id, &c.msgs_in)?,
                (_, FLOW_STATS_MSGS_OUT_BY_TYPE) => put_msg_types(w, a.id, &c.msgs_out)?,
                // A nest this kernel does not fill (none today): left out.
                _ => {}
            }
        }
        Ok(())
    })
}

/// The attributes of flow `f` (its state read into `fi`; a reply's or a
/// notification's): `ev`, a flow-change
/// event (`CREM_FLOW_EVENT_*`) with its close reason; `id`: with the Flow
/// ID (the reader has CAP_NET_ADMIN over the netns).
pub(crate) fn put_flow(
    w: &mut Writer<'_>,
    f: &Flow,
    fi: &mut FlowInfo,
    ev: Option<(u8, u16)>,
    id: bool,
) -> Result {
    f.info(fi);
    put_info(w, fi, ev, id)
}

/// The attributes of `fi` (see [`put_flow`]).
pub(crate) fn put_info(
    w: &mut Writer<'_>,
    fi: &FlowInfo,
    ev: Option<(u8, u16)>,
    id: bool,
) -> Result {
    let csf = fi.key.side == side::CSF;
    if id {
        w.u32(CREM_A_FLOW_ID, fi.flow_id)?;
    }
    // Addresses as config's: 4 octets for IPv4 (as ever), 16 for IPv6.
    w.bytes(CREM_A_FLOW_SRC, fi.key.saddr.wire())?;
    w.bytes(CREM_A_FLOW_DST, fi.key.daddr.wire())?;
    w.u32(CREM_A_FLOW_DEST_QP, fi.key.dqp)?;
    w.u8(CREM_A_FLOW_SIDE, fi.key.side)?;
    w.u8(CREM_A_FLOW_KIND, fi.key.kind)?;
    w.bytes(CREM_A_FLOW_PEER, fi.peer.wire())?;
    w.u8(CREM_A_FLOW_STATE, fi.state)?;
    w.u8(CREM_A_FLOW_CONFIG_ID, fi.config_id)?;
    w.u8(CREM_A_FLOW_SCHEME, fi.scheme)?;
    w.u8(CREM_A_FLOW_K, fi.k)?;
    w.u8(CREM_A_FLOW_M, fi.m)?;
    w.u16(CREM_A_FLOW_SYMBOL_LEN, fi.symbol_len)?;
    w.u32(CREM_A_FLOW_SRTT_US, fi.srtt_us)?;
    w.u32(CREM_A_FLOW_MIN_RTT_US, fi.min_rtt_us)?;
    w.u32(CREM_A_FLOW_RDMA_MTU, fi.rdma_mtu)?;
    if csf {
        w.u8(CREM_A_FLOW_RDMA_MTU_EXACT, fi.rdma_mtu_exact.into())?;
    }
    w.u32(CREM_A_FLOW_LOSS_PPM, fi.loss_ppm)?;
    w.u8(CREM_A_FLOW_LOSS_CLASS, fi.loss_class)?;
    w.u8(CREM_A_FLOW_BREAKER, fi.breaker)?;
    w.u64(CREM_A_FLOW_MEMORY, fi.mem, CREM_A_FLOW_PAD)?;
    w.u64(CREM_A_FLOW_AGE_MS, fi.age_ms, CREM_A_FLOW_PAD)?;
    put_counters(w, FLOW_STATS, &fi.counters)?;
    if csf {
        w.u8(CREM_A_FLOW_PINNED, fi.pinned.into())?;
    }
    if let Some(ms) = fi.last_msg_ms {
        w.u64(CREM_A_FLOW_LAST_MSG_MS, ms, CREM_A_FLOW_PAD)?;
    }
    if let Some(l) = fi.limits {
        w.u8(CREM_A_FLOW_SCHEMES, l.schemes)?;
        w.u8(CREM_A_FLOW_MAX_K, l.max_k)?;
        w.u8(CREM_A_FLOW_MAX_M, l.max_m)?;
        w.u16(CREM_A_FLOW_MAX_SYMBOL_LEN, l.max_t)?;
        w.u16(CREM_A_FLOW_MAX_OPEN_BLOCKS, l.max_open_blocks)?;
    }
    if let Some((ev, reason)) = ev {
        w.u8(CREM_A_FLOW_EVENT, ev)?;
        if u32::from(ev) == crem_flow_event_CREM_FLOW_EVENT_CLOSE_RECEIVED {
            w.u16(CREM_A_FLOW_CLOSE_REASON, reason)?;
        }
    }
    Ok(())
}

/// The payload of a message with one flow ([`put_flow`]), at most.
pub(crate) const FLOW_MSG_SIZE: usize = 6 * genl::total_size(4) // id, dest-qp, srtt-us, min-rtt-us, loss-ppm, rdma-mtu
    + 3 * genl::total_size(16) // src, dst, peer (IPv6's 16 octets at most)
    // side, kind, state, config-id, scheme, k, m, loss-class, breaker,
    // event, pinned, schemes, max-k, max-m, rdma-mtu-exact
    + 15 * genl::total_size(1)
    + 4 * genl::total_size(2) // symbol-len, close-reason, max-symbol-len, max-open-blocks
    + 3 * genl::total_size_64bit(8) // memory, age-ms, last-msg-ms
    + 3 * genl::total_size(0) // stats, msgs-{in,out}-by-type
    + (flow_stat::N + 2 * msg_type::N) * genl::total_size(8); // uints, 8 at most

/// flow-get's dump: the flows that fit in each part. `args[0]`: where the
/// walk of the table stopped (`Cursor`); `args[1]`: 0 before the first
/// part, then 1 + whether the ids are shown (decided once, so every part
/// of a dump agrees).
pub(super) fn dump(d: &mut Dump<'_>) -> c_int {
    let st = match state(d.net()) {
        Ok(st) => st,
        Err(e) => return e.to_errno(),
    };
    if d.args()[1] == 0 {
        d.args()[1] = 1 + isize::from(d.net_admin());
    }
    let ids = d.args()[1] == 2;
    let mut cur = Cursor::from_u64(d.args()[0] as u64);
    let Some(mut fi) = info_buffer() else {
        return ENOMEM.to_errno();
    };
    // Any change since the dump's first part flags the next message (or
    // NLMSG_DONE) NLM_F_DUMP_INTR; +1: a seq of 0 would mean "unset".
    d.set_seq(st.flows.gen().wrapping_add(1));
    let mut first = true;
    let mut err = 0;
    {
        let g = rcu::read_lock();
        st.flows.walk(&mut cur, &g, |f| {
            let Ok(mut w) = d.message(CREM_CMD_FLOW_GET as u8) else {
                return true;
            };
            if put_flow(&mut w, f, &mut fi, None, ids).is_err() {
                // (The message is cancelled.) A flow that does not fit an
                // empty part never will.
                if first {
                    err = genl::emsgsize().to_errno();
                }
                return true;
            }
            w.end();
            first = false;
            false
        });
    }
    d.args()[0] = cur.to_u64() as isize;
    if err != 0 {
        err
    } else {
        d.len()
    }
}

/// Which flow a request names: its id, and side and peer if given.
struct Sel {
    id: u32,
    side: Option<u8>,
    /// None: any.
    peer: Option<NetAddr>,
}

/// One address of a flow request, IPv4 (4 octets) or IPv6 (16, not
/// IPv4-mapped, which would alias an IPv4 flow); `what` names it in the
/// text; absent: an error if `required`, else None.
fn addr<'r>(
    tb: &FlowAttrs<'r>,
    ty: u32,
    what: &str,
    required: bool,
    ext: &ExtAck<'r>,
) -> Result<Option<NetAddr>> {
    let Some(a) = tb.get(ty) else {
        if !required {
            return Ok(None);
        }
        ext.missing(None, ty);
        ext.fmt(format_args!("a new flow needs {what}"), None);
        return Err(EINVAL);
    };
    let p = a.payload();
    let n = if let Ok(v4) = <[u8; 4]>::try_from(p) {
        Some(NetAddr::from_v4(v4))
    } else if let Ok(v6) = <[u8; 16]>::try_from(p) {
        NetAddr::from_v6(v6)
    } else {
        None
    };
    n.map(Some).ok_or_else(|| {
        ext.fmt(
            format_args!("{what} must be IPv4 (4 octets) or IPv6 (16, not IPv4-mapped)"),
            Some(a),
        );
        EINVAL
    })
}

fn sel_parse<'r>(info: &Info<'r>) -> Result<(Sel, FlowAttrs<'r>)> {
    let ext = info.extack();
    let tb: FlowAttrs<'r> = info.attrs();
    let Some(id_attr) = tb.get(CREM_A_FLOW_ID) else {
        ext.missing(None, CREM_A_FLOW_ID);
        ext.msg(c"the flow's id is required", None);
        return Err(EINVAL);
    };
    let id = id_attr.u32().unwrap_or(0);
    if id == 0 {
        ext.msg(
            c"id 0 names no flow (a flow still negotiating has no id yet)",
            Some(id_attr),
        );
        return Err(EINVAL);
    }
    // The policy allows only csf and crf.
    let side = tb.get(CREM_A_FLOW_SIDE).and_then(Attr::u8);
    // 0.0.0.0 (or ::) is any peer, as when the selector was a `__be32`
    // (0: any).
    let any = NetAddr::from_v4([0; 4]);
    let peer = addr(&tb, CREM_A_FLOW_PEER, "peer", false, &ext)?
        .filter(|p| *p != any && *p != NetAddr::NONE);
    Ok((Sel { id, side, peer }, tb))
}

/// The one flow `sel` names, under `g`; else the reason in the extack.
fn find<'a>(
    st: &'a NetState,
    sel: &Sel,
    tb: &FlowAttrs<'_>,
    ext: &ExtAck<'_>,
    g: &'a rcu::Guard,
) -> Result<&'a Flow> {
    let mut found = None;
    let mut n = 0u32;
    st.flows.for_each(g, |f| {
        let l = crate::table::InTable::links(f);
        if l.flow_id() == sel.id
            && sel.side.map_or(true, |s| l.key().side == s)
            && sel.peer.is_none_or(|p| l.peer() == p)
        {
            found = Some(f);
            n = n.saturating_add(1);
        }
    });
    let id = sel.id;
    match (n, found) {
        (1, Some(f)) => return Ok(f),
        (0, _) => {
            let on_side = if sel.side.is_some() {
                " on that side"
            } else {
                ""
            };
            let with_peer = if sel.peer.is_some() {
                " with that peer"
            } else {
                ""
            };
            ext.fmt(
                format_args!("no flow with id {id}{on_side}{with_peer}"),
                tb.get(CREM_A_FLOW_ID),
            );
            Err(ENOENT)
        }
        _ => {
            ext.fmt(
                format_args!("{n} flows have id {id}: give side (and peer) too"),
                tb.get(CREM_A_FLOW_ID),
            );
            Err(errno(bindings::ENOTUNIQ))
        }
    }
}

/// What a reply with one flow shows.
enum Target<'s, 'r> {
    /// The flow a request names.
    Named(&'s Sel, &'s FlowAttrs<'r>),
    /// The flow of a key (flow-new's).
    Key(&'s FlowKey),
}

/// Replies with one flow, with its Flow ID (by id, flow-get's do, or a new
/// flow, flow-new: both need CAP_NET_ADMIN).
fn reply(info: &Info<'_>, st: &NetState, t: Target<'_, '_>) -> Result {
    let ext = info.extack();
    let mut fi = info_buffer().ok_or(ENOMEM)?;
    let mut msg = Msg::new(FLOW_MSG_SIZE, bindings::GFP_KERNEL).ok_or(ENOMEM)?;
    let mut w = msg.reply_to(info)?;
    {
        let g = rcu::read_lock();
        let f = match t {
            Target::Named(sel, tb) => find(st, sel, tb, &ext, &g)?,
            Target::Key(k) => st.flows.lookup(k, &g).ok_or_else(|| {
                ext.msg(
                    c"the flow was set up, then removed at once (flow-del, or a configuration change)",
                    None,
                );
                ENOENT
            })?,
        };
        put_flow(&mut w, f, &mut fi, None, true)?;
    }
    w.end();
    msg.reply(info)
}

pub(super) fn get(info: &Info<'_>) -> Result {
    // An answer by id tells whether the id exists: only for those who may
    // see ids.
    if !info.net_admin() {
        info.extack().msg(
            c"flow-get by id needs CAP_NET_ADMIN: Flow IDs are kept from other users (they guard against blind injection); the dump lists flows without them",
            None,
        );
        return Err(EPERM);
    }
    let (sel, tb) = sel_parse(info)?;
    reply(info, state(info.net())?, Target::Named(&sel, &tb))
}

pub(super) fn del(info: &Info<'_>) -> Result {
    let st = state(info.net())?;
    let (sel, tb) = sel_parse(info)?;
    let removed = {
        let g = rcu::read_lock();
        let f = find(st, &sel, &tb, &info.extack(), &g)?;
        let bh = bh::disable();
        st.remove(f, crate::removal::CLOSE_NORMAL, &bh)
    };
    // Its flow-down and CLOSE before the reply (the one removed
    // meanwhile's too).
    st.reap(true);
    if !removed {
        info.extack()
            .msg(c"the flow is gone (removed meanwhile)", None);
        return Err(ENOENT);
    }
    Ok(())
}

/// k and m of a flow request, given together (flow-set, flow-new): the rules
/// are crem-core's (`ctl::km`, config-set's texts for the two it shares).
fn km(tb: &FlowAttrs<'_>, ext: &ExtAck<'_>) -> Result<(u8, u8)> {
    // Present but unreadable (the policy makes that impossible) is 0.
    let get = |id| tb.get(id).map(|a| a.u8().unwrap_or(0));
    ctl::km(get(CREM_A_FLOW_K), get(CREM_A_FLOW_M)).map_err(|r| {
        let at = match r.at {
            Some(ctl::Field::Flow(id)) => tb.get(u32::from(id)),
            _ => None,
        };
        super::refuse(ext, &r, at)
    })
}

/// flow-set's refusals from the engine (`Flow::pin`).
fn pin_refused(why: PinRefused, at: Option<Attr<'_>>, ext: &ExtAck<'_>) -> kernel::error::Error {
    let (text, e) = match why {
        PinRefused::NotSender => {
            ext.msg(c"only a sender (csf) flow chooses its k and m", at);
            return EINVAL;
        }
        PinRefused::Busy => (
            c"the flow's previous configuration is not in effect yet (it starts at its Effective PSN, after more packets): retry later",
            EBUSY,
        ),
        PinRefused::OutsideLimits => (
            c"k or m is outside the limits negotiated with the peer (see the flow's k/m maxima in HELLO)",
            ERANGE,
        ),
        PinRefused::NoSlot => (
            c"the peer holds no free configuration slot: retry later",
            EBUSY,
        ),
        PinRefused::NotEstablished => (
            c"the flow is not protected (negotiating, or unprotected): nothing to pin",
            EAGAIN,
        ),
        PinRefused::NoPolicy => (
            c"the flow was set up with adaptive off: there is no policy to hand it back to",
            errno(bindings::EOPNOTSUPP),
        ),
        PinRefused::Failed => (c"the flow is gone", ENOENT),
    };
    ext.msg(text, None);
    e
}

pub(super) fn set(info: &Info<'_>) -> Result {
    let ext = info.extack();
    let st = state(info.net())?;
    let (sel, tb) = sel_parse(info)?;
    let pin = tb.has(CREM_A_FLOW_K) || tb.has(CREM_A_FLOW_M);
    let pinned = tb.get(CREM_A_FLOW_PINNED);
    match (pin, pinned.map(|a| a.u8().unwrap_or(0))) {
        (true, Some(0)) => {
            ext.msg(
                c"give k and m to pin the flow, or pinned 0 to unpin it, not both",
                pinned,
            );
            return Err(EINVAL);
        }
        (false, None) => {
            ext.msg(
                c"nothing to set: give k and m (pin), or pinned 0 (adaptive)",
                None,
            );
            return Err(EINVAL);
        }
        (false, Some(_nonzero @ 1..)) => {
            ext.msg(c"pinned 1 needs the k and m to pin", pinned);
            return Err(EINVAL);
        }
        _ => {}
    }
    let (k, m) = if pin { km(&tb, &ext)? } else { (0, 0) };
    let g = rcu::read_lock();
    let f = find(st, &sel, &tb, &ext, &g)?;
    f.pin(k, m, pin)
        .map_err(|why| pin_refused(why, tb.get(CREM_A_FLOW_ID), &ext))
}

pub(super) fn new(info: &Info<'_>) -> Result {
    let ext = info.extack();
    let st = state(info.net())?;
    let tb: FlowAttrs<'_> = info.attrs();
    // Required: an absent one was refused.
    let saddr = addr(&tb, CREM_A_FLOW_SRC, "src", true, &ext)?.unwrap_or_default();
    let daddr = addr(&tb, CREM_A_FLOW_DST, "dst", true, &ext)?.unwrap_or_default();
    // A packet's header has both: a flow's addresses are of one family.
    if saddr.family() != daddr.family() {
        ext.msg(
            c"src and dst must be of one family (both IPv4 or both IPv6)",
            tb.get(CREM_A_FLOW_DST),
        );
        return Err(EINVAL);
    }
    let Some(qp) = tb.get(CREM_A_FLOW_DEST_QP) else {
        ext.missing(None, CREM_A_FLOW_DEST_QP);
        ext.msg(c"a new flow needs dest-qp", None);
        return Err(EINVAL);
    };
    let dqp = qp.u32().unwrap_or(u32::MAX);
    if dqp > 0xff_ffff {
        ext.msg(c"dest-qp is a 24-bit queue pair number", Some(qp));
        return Err(EINVAL);
    }
    if let Some(s) = tb.get(CREM_A_FLOW_SIDE) {
        if s.u8().map(u32::from) != Some(crem_side_CREM_SIDE_CSF) {
            ext.msg(
                c"only a sender (csf) flow can be added: a receiver flow is set up by its peer's HELLO",
                Some(s),
            );
            return Err(EINVAL);
        }
    }
    let kind = tb
        .get(CREM_A_FLOW_KIND)
        .and_then(Attr::u8)
        .unwrap_or(crate::table::KIND_REQUESTS);
    let fixed = tb.has(CREM_A_FLOW_K) || tb.has(CREM_A_FLOW_M);
    let (k, m) = if fixed { km(&tb, &ext)? } else { (0, 0) };
    let key = FlowKey {
        saddr,
        daddr,
        dqp,
        side: crate::table::SIDE_CSF,
        kind,
    };
    add(st, &key, fixed, k, m, &ext)?;
    // The flow as it is now (a flow-del may have taken it meanwhile).
    reply(info, st, Target::Key(&key))
}

/// flow-new's sender flow of `key` (`fixed`: it keeps `k` and `m`, no
/// adaptive policy), made now; what went wrong in the extack.
fn add(st: &NetState, key: &FlowKey, fixed: bool, k: u8, m: u8, ext: &ExtAck<'_>) -> Result {
    let rc = crate::create::add(st, key, fixed, k, m);
    let e = kernel::error::Error::from_errno(rc);
    match u32::try_from(-rc).unwrap_or(0) {
        0 => return Ok(()),
        bindings::ENOMEM => {}
        bindings::ENOTCONN => ext.msg(
            c"CREM is not running in this netns: set port and role first",
            None,
        ),
        bindings::EHOSTUNREACH => {
            let dst = key.daddr.ctl();
            ext.fmt(
                format_args!(
                    "no peer is configured for the destination {dst} (set peer PREFIX=ADDR)"
                ),
                None,
            );
        }
        bindings::EEXIST => ext.msg(
            c"a sender flow for these addresses, dest-qp and kind exists",
            None,
        ),
        bindings::ENOSPC => ext.fmt(
            format_args!(
                "max-flows ({}) sender flows are set up already",
                st.max_flows()
            ),
            None,
        ),
        bindings::EINVAL => ext.msg(
            c"the engine refused the flow's parameters (k, m or the netns defaults)",
            None,
        ),
        _ => ext.msg(c"CREM is stopping in this netns", None),
    }
    Err(e)
}

pub(super) fn reset(info: &Info<'_>) -> Result {
    let ext = info.extack();
    let st = state(info.net())?;
    let (sel, tb) = sel_parse(info)?;
    let mut fi = info_buffer().ok_or(ENOMEM)?;
    let _counting = st.hold_counters();
    let g = rcu::read_lock();
    let f = find(st, &sel, &tb, &ext, &g)?;
    // What it counted since its last reset moves to the totals' share of
    // flows gone, in the section a removal reads its counters in.
    if !f.reset(&mut fi) {
        ext.msg(c"the flow is gone", None);
        return Err(ENOENT);
    }
    Ok(())
}
