// SPDX-License-Identifier: GPL-2.0
//! The netns's flow table ([`FlowTable`] of [`Flow`]s, in `netns::NetState`)
//! as the C datapath, collector and netlink handlers reach it until they
//! move to Rust (docs/rust-datapath.md, step 4): insertion and removal of
//! a flow, and the lookups, each returning the flow's C half.
//!
//! Every lookup runs in the caller's RCU read-side section (the hooks and
//! the socket in softirq, the netlink handlers under `rcu_read_lock`), in
//! which the flow it returns stays alive; the caller removes flows under
//! its own lock (`crem_flows.lock`, which also orders them with its walks
//! that remove) and frees them an RCU grace period after they were
//! unlinked.

use crate::ffi;
use crate::flow::Flow;
use crate::kernel_ext::bh;
use crate::kernel_ext::rcu;
use crate::netns;
use crate::table::{Cursor, FlowKey, FlowTable, SIDE_CSF};
use core::ffi::{c_int, c_void};
use kernel::bindings;

/// The table of the netns whose state is `net`.
///
/// # Safety
///
/// `net` is null or C's per-netns state (`crate::netns`), live for `'a`.
unsafe fn table<'a>(net: *mut c_void) -> Option<&'a FlowTable<Flow>> {
    // SAFETY: per the function contract.
    unsafe { netns::state_opt(net) }.map(|st| &st.flows)
}

/// A flow's C half, or null.
fn c_of(f: Option<&Flow>) -> *mut ffi::crem_flow {
    f.map_or(core::ptr::null_mut(), Flow::c)
}

/// Takes the flow `rf` out of its table: false if it was not in it.
#[no_mangle]
extern "C" fn crem_rs_flow_unlink(rf: *mut Flow) -> bool {
    // SAFETY: C passes a live flow.
    let Some(f) = (unsafe { rf.as_ref() }) else {
        return false;
    };
    let Some(t) = f.table() else {
        return false;
    };
    let bh = bh::disable();
    // SAFETY: `t` is the only table the flow is ever inserted in.
    unsafe { t.unlink(f, &bh) }
}

/// The flow of the key (addresses in network order), or null.
#[no_mangle]
extern "C" fn crem_rs_flows_lookup(
    net: *mut c_void,
    saddr: u32,
    daddr: u32,
    dqp: u32,
    side: u8,
    kind: u8,
) -> *mut ffi::crem_flow {
    // SAFETY: C passes its per-netns state.
    let Some(t) = (unsafe { table(net) }) else {
        return core::ptr::null_mut();
    };
    let k = FlowKey {
        saddr,
        daddr,
        dqp,
        side,
        kind,
    };
    let g = rcu::read_lock();
    c_of(t.lookup(&k, &g))
}

/// The one flow with Flow ID `id` (and of `side` if it is not negative,
/// of `peer` if it is not 0), for the netlink handlers that name a flow by
/// ID; `*n`: how many flows match (the flow returned only if exactly one).
#[no_mangle]
extern "C" fn crem_rs_flows_find_id(
    net: *mut c_void,
    id: u32,
    side: c_int,
    peer: u32,
    n: *mut u32,
) -> *mut ffi::crem_flow {
    // SAFETY: C passes its per-netns state and an out-parameter.
    let (Some(t), Some(n)) = (unsafe { table(net) }, unsafe { n.as_mut() }) else {
        return core::ptr::null_mut();
    };
    let g = rcu::read_lock();
    let mut found = None;
    *n = 0;
    t.for_each(&g, |f| {
        let l = crate::table::InTable::links(f);
        if l.flow_id() == id
            && (side < 0 || c_int::from(l.key().side) == side)
            && (peer == 0 || l.peer() == peer)
        {
            found = Some(f);
            *n = n.saturating_add(1);
        }
    });
    if *n == 1 {
        c_of(found)
    } else {
        core::ptr::null_mut()
    }
}

/// Calls `f(flow, arg)` with every flow from `*pos` on (a walk of the key
/// chains, see `FlowTable::walk`; `pos` null: the whole table), in an RCU
/// read-side section (no sleeping), until it returns true: `*pos` is then
/// that flow's place, from which a later call goes on (a netlink dump's
/// next part), else the end. Under the caller's `crem_flows.lock`, `f` may
/// remove the flow it is given (the collector, flush): the walk goes on to
/// the next. Without the lock, a removal elsewhere never makes one call
/// skip a flow; across calls it may (and moves the generation).
#[no_mangle]
extern "C" fn crem_rs_flows_walk(
    net: *mut c_void,
    pos: *mut u64,
    f: Option<unsafe extern "C" fn(*mut ffi::crem_flow, *mut c_void) -> bool>,
    arg: *mut c_void,
) {
    // SAFETY: C passes its per-netns state.
    let (Some(t), Some(f)) = (unsafe { table(net) }, f) else {
        return;
    };
    // SAFETY: C's cursor, if any, valid for the call.
    let pos = unsafe { pos.as_mut() };
    let mut cur = pos
        .as_deref()
        .map_or(Cursor::default(), |p| Cursor::from_u64(*p));
    let g = rcu::read_lock();
    // SAFETY: C's callback and its argument, for a flow that stays alive
    // for the section (the owner's rule).
    t.walk(&mut cur, &g, |flow| unsafe { f(flow.c(), arg) });
    if let Some(p) = pos {
        *p = cur.to_u64();
    }
}

/// `dev` is being unregistered (RTNL held): no packet any flow holds keeps
/// a pointer to it. Every flow in the table for the whole walk is visited.
/// Returns how many held packets were dropped with it.
#[no_mangle]
extern "C" fn crem_rs_flows_dev_gone(net: *mut c_void, dev: *const bindings::net_device) -> u32 {
    // SAFETY: C passes its per-netns state.
    let Some(t) = (unsafe { table(net) }) else {
        return 0;
    };
    let g = rcu::read_lock();
    let mut dropped = 0u32;
    t.for_each(&g, |f| {
        // BH off per flow (its lock), not for the whole walk.
        let bh = bh::disable();
        dropped = dropped.saturating_add(f.dev_gone(&bh, dev));
    });
    dropped
}

/// Flows in the table: of `side`, or of both if it is negative.
#[no_mangle]
extern "C" fn crem_rs_flows_count(net: *mut c_void, side: c_int) -> u32 {
    // SAFETY: C passes its per-netns state.
    let Some(t) = (unsafe { table(net) }) else {
        return 0;
    };
    match u8::try_from(side) {
        Ok(s) => t.count(s),
        Err(_) => t
            .count(SIDE_CSF)
            .saturating_add(t.count(crate::table::SIDE_CRF)),
    }
}

/// The table's generation: moved by every insertion, removal and Flow ID
/// change (a dump that sees it move flags NLM_F_DUMP_INTR).
#[no_mangle]
extern "C" fn crem_rs_flows_gen(net: *mut c_void) -> u32 {
    // SAFETY: C passes its per-netns state.
    unsafe { table(net) }.map_or(0, FlowTable::gen)
}
