// SPDX-License-Identifier: GPL-2.0
//! Making flows (`rust/create.rs`), on a netns state of its own (no C
//! state: nothing is notified or sent): a request without a spare is
//! queued once and made by the work item; with a spare it is made at once;
//! `max-flows` refuses (counted); once closed nothing is queued or made.
//! The request queue alone: bounded, first in first out.

use super::run;
use crate::create::Creation;
use crate::ffi;
use crate::flow::{self, Flow};
use crate::kernel_ext::{bh, rcu};
use crate::netns::{self, NetState};
use crate::table::{FlowKey, InTable, SIDE_CRF};
use core::ffi::{c_char, c_int};
use core::fmt::Write;
use kernel::bindings;
use kernel::prelude::*;

const NR_DP: usize = ffi::crem_dp_CREM_NR_DP as usize;
const LIMIT: usize = ffi::crem_dp_CREM_DROP_FLOW_LIMIT as usize;
const MAX_FLOWS: u32 = 3;

/// A receiver flow's request from the HELLO of peer 192.0.2.7, for QP `qp`.
fn request(qp: u32) -> ffi::crem_flow_request {
    // SAFETY: a C struct of integers, for which all zeros is valid.
    let mut rq: ffi::crem_flow_request = unsafe { core::mem::zeroed() };
    rq.key.saddr = u32::from_ne_bytes([10, 0, 0, 1]);
    rq.key.daddr = u32::from_ne_bytes([10, 0, 1, 1]);
    rq.key.dqp = qp;
    rq.key.side = SIDE_CRF;
    rq.peer = u32::from_ne_bytes([192, 0, 2, 7]);
    (rq.tos, rq.ttl) = (0x88, 64);
    rq
}

fn key(qp: u32) -> FlowKey {
    let k = request(qp).key;
    FlowKey {
        saddr: k.saddr,
        daddr: k.daddr,
        dqp: k.dqp,
        side: k.side,
        kind: k.kind,
    }
}

/// `request` from the datapath: whether a flow came back at once, and of
/// the key asked for.
fn ask(st: &NetState, qp: u32) -> Option<bool> {
    let bh = bh::disable();
    let f = st.creation.request(st, &request(qp), &[], &bh)?;
    Some(InTable::links(f).key() == &key(qp))
}

fn has(st: &NetState, qp: u32) -> bool {
    let bh = bh::disable();
    st.flows.lookup(&key(qp), &*bh).is_some()
}

/// Waits up to 2 s (TCG) until the pool holds a receiver spare.
fn spare_ready(st: &NetState) -> bool {
    for _ in 0..200 {
        if st.pool.count(SIDE_CRF.into()) > 0 {
            return true;
        }
        // SAFETY: KUnit cases run in process context.
        unsafe { bindings::msleep(10) };
    }
    false
}

/// Empties the table: every flow unlinked, then freed a grace period later.
fn empty(st: &NetState) {
    let mut gone: KVec<*mut ffi::crem_flow> = KVec::new();
    {
        let bh = bh::disable();
        let g = rcu::read_lock();
        st.flows.for_each(&g, |f: &Flow| {
            // SAFETY: the flow is in this table, the only one it is in.
            if unsafe { st.flows.unlink(f, &bh) } {
                let _ = gone.push(f.c(), GFP_ATOMIC);
            }
        });
    }
    // SAFETY: process context; no lock held.
    unsafe { bindings::synchronize_rcu() };
    for c in gone.iter() {
        flow::crem_rs_flow_free(*c);
    }
}

fn create_queue_and_spares(w: &mut dyn Write) -> bool {
    let net = core::ptr::addr_of_mut!(crate::ffi::init_net);
    // SAFETY: a C struct of integers, for which all zeros is valid.
    let mut cfg: ffi::crem_cfg = unsafe { core::mem::zeroed() };
    (cfg.recovery, cfg.adaptive, cfg.k, cfg.m, cfg.m_cong) = (1, 1, 32, 2, 1);
    cfg.epsilon_ppb = 100_000;
    cfg.role = ffi::crem_role_CREM_ROLE_HOST as u8;
    (cfg.max_flows, cfg.max_memory) = (MAX_FLOWS, 64 << 20);
    // SAFETY: as above (`atomic64_t` is an integer).
    let mut dp: [bindings::atomic64_t; NR_DP] = unsafe { core::mem::zeroed() };
    let raw = netns::crem_rs_net_init(net, core::ptr::null_mut(), &cfg, dp.as_mut_ptr());
    // SAFETY: a state of `crem_rs_net_init` (or null), freed at the end.
    let Some(st) = (unsafe { netns::state_opt(raw) }) else {
        let _ = write!(w, "no netns state");
        return false;
    };
    let mut ok = true;
    let mut check = |c: bool, what: &str, w: &mut dyn Write| {
        if !c {
            let _ = write!(w, "{what}; ");
            ok = false;
        }
    };
    // No spare yet: queued (once, asked twice), made by the work item.
    check(ask(st, 1).is_none(), "made without a spare", w);
    check(ask(st, 1).is_none(), "made without a spare (again)", w);
    check(st.creation.pending() <= 1, "queued twice", w);
    st.creation.flush();
    check(has(st, 1), "the queued request was not made", w);
    check(st.creation.pending() == 0, "left queued", w);
    // The C half's identity for netlink, and the collector's mark.
    {
        let bh = bh::disable();
        if let Some(f) = st.flows.lookup(&key(1), &*bh) {
            // SAFETY: in the table, alive for this BH-off section.
            let c = unsafe { &*f.c() };
            let got = (c.key.dqp, c.key.side, c.peer, c.gc_close, c.cn.is_null());
            let want = (1, SIDE_CRF, request(1).peer, ffi::CREM_GC_KEEP as i8, true);
            check(got == want, "the C half's identity", w);
        }
    }
    // With a spare: made at once.
    check(spare_ready(st), "no spare after 2 s", w);
    check(ask(st, 2) == Some(true), "not made from a spare", w);
    // max-flows (3 receiver flows): the fourth refused, counted, not queued.
    check(spare_ready(st), "no spare after 2 s (2)", w);
    let third = ask(st, 3);
    st.creation.flush(); // if it was queued instead
    check(third != Some(false) && has(st, 3), "the third flow", w);
    let limit0 = dp[LIMIT].counter;
    check(ask(st, 4).is_none(), "a flow over max-flows", w);
    check(
        dp[LIMIT].counter == limit0 + 1,
        "max-flows refusal not counted",
        w,
    );
    check(st.creation.pending() == 0, "a refused request queued", w);
    check(
        st.flows.count(SIDE_CRF) == MAX_FLOWS,
        "flows in the table",
        w,
    );
    // Closed: nothing queued or made, with room in the table.
    empty(st);
    st.close();
    check(ask(st, 5).is_none(), "made after close", w);
    st.creation.flush();
    check(
        !has(st, 5) && st.creation.pending() == 0,
        "queued or made after close",
        w,
    );
    check(st.flows.count(SIDE_CRF) == 0, "flows left", w);
    empty(st);
    netns::crem_rs_net_exit(raw);
    ok
}

#[no_mangle]
extern "C" fn crem_kunit_create_queue_and_spares(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, create_queue_and_spares)
}

/// The queue alone: 64 distinct requests fit, the 65th does not; they come
/// out oldest first, and the ring wraps.
fn create_queue_bounded(w: &mut dyn Write) -> bool {
    let q = Creation::test_queue();
    let mut q = match q {
        Some(q) => q,
        None => {
            let _ = write!(w, "no memory");
            return false;
        }
    };
    let mut ok = true;
    for round in 0..3u32 {
        let base = round * 100;
        let mut pushed = 0;
        for i in 0..65 {
            if q.push_test(&request(base + i)) {
                pushed += 1;
            }
        }
        let dup = q.has_test(&request(base + 3));
        let mut order = true;
        let mut popped = 0;
        while let Some(qp) = q.pop_test() {
            order &= qp == base + popped;
            popped += 1;
        }
        if (pushed, dup, order, popped) != (64, true, true, 64) {
            let _ = write!(
                w,
                "round {round}: pushed {pushed}, dup {dup}, in order {order}, popped {popped}; "
            );
            ok = false;
        }
        // Out of step with the ring's size: the next round wraps.
        for i in 0..5 {
            q.push_test(&request(i));
        }
        while q.pop_test().is_some() {}
    }
    ok
}

#[no_mangle]
extern "C" fn crem_kunit_create_queue_bounded(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, create_queue_bounded)
}
