// SPDX-License-Identifier: GPL-2.0
//! The netns's flow table ([`FlowTable`] of [`Flow`]s, in `netns::NetState`)
//! as the netlink handlers (C until the control plane is Rust's) reach it:
//! the lookups, each returning the flow (opaque to C), flow-del's removal
//! (`crate::removal`), the totals and the walks of the dumps.
//!
//! Every lookup runs in the caller's RCU read-side section (the netlink
//! handlers under `rcu_read_lock`), in which the flow it returns stays
//! alive: removal frees flows an RCU grace period after they were
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

/// A flow as C holds it, or null.
fn c_of(f: Option<&Flow>) -> *mut ffi::crem_rs_flow {
    f.map_or(core::ptr::null_mut(), Flow::as_c)
}

/// flow-del: takes the flow `rf` (found in the caller's RCU read-side
/// section, which it is still in) out of its table, its engine to end with
/// a CLOSE of `close` (`CREM_CLOSE_*`): false if another remover took it
/// first. [`crem_rs_flows_reap`] frees it.
#[no_mangle]
extern "C" fn crem_rs_flow_remove(rf: *mut Flow, close: c_int) -> bool {
    // SAFETY: C passes a live flow (found under RCU, which it holds).
    let Some(f) = (unsafe { rf.as_ref() }) else {
        return false;
    };
    let (Some(st), Ok(close)) = (f.netns(), i8::try_from(close)) else {
        return false;
    };
    let bh = bh::disable();
    st.remove(f, close, &bh)
}

/// Frees the flows removed (process context): their flow-down, their
/// CLOSE, their last counters into the totals.
#[no_mangle]
extern "C" fn crem_rs_flows_reap(net: *mut c_void) {
    // SAFETY: C passes its per-netns state.
    if let Some(st) = unsafe { netns::state_opt(net) } {
        st.reap(true);
    }
}

/// The totals of every flow's counters, present and gone, since the last
/// stats-reset, into `sum` (`CREM_FS_N`); `rebase`: they restart from
/// here. Process context.
#[no_mangle]
extern "C" fn crem_rs_flows_totals(net: *mut c_void, sum: *mut u64, rebase: bool) {
    // SAFETY: C passes an array of CREM_FS_N counters.
    let Some(sum) = (unsafe { sum.cast::<[u64; netns::FS_N]>().as_mut() }) else {
        return;
    };
    *sum = [0; netns::FS_N];
    // SAFETY: C passes its per-netns state.
    if let Some(st) = unsafe { netns::state_opt(net) } {
        st.totals(sum, rebase);
    }
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
) -> *mut ffi::crem_rs_flow {
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
) -> *mut ffi::crem_rs_flow {
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
/// next part), else the end. A removal meanwhile never makes one call skip
/// a flow; across calls it may (and moves the generation).
#[no_mangle]
extern "C" fn crem_rs_flows_walk(
    net: *mut c_void,
    pos: *mut u64,
    f: Option<unsafe extern "C" fn(*mut ffi::crem_rs_flow, *mut c_void) -> bool>,
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
    t.walk(&mut cur, &g, |flow| unsafe { f(flow.as_c(), arg) });
    if let Some(p) = pos {
        *p = cur.to_u64();
    }
}

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
