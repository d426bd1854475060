// SPDX-License-Identifier: GPL-2.0
//! Making flows (`rust/create.rs`), on a netns state of its own (no C
//! state: nothing is notified or sent): a request without a spare is
//! queued once and made by the work item; with a spare it is made at once;
//! `max-flows` refuses (counted); once closed nothing is queued or made.
//! The request queue alone: bounded, first in first out.

use super::pool::{host_cfg, with_netns};
use super::{run, Checks};
use crate::addr::NetAddr;
use crate::create::{self, Creation};
use crate::crem_core::nl::stat;
use crate::kernel_ext::bh;
use crate::netns::NetState;
use crate::removal::GC_KEEP;
use crate::table::{FlowKey, InTable, SIDE_CRF};
use core::ffi::{c_char, c_int};
use core::fmt::Write;
use kernel::bindings;

const LIMIT: usize = stat::DROP_FLOW_LIMIT;
const MAX_FLOWS: u32 = 3;

/// The receiver flow's key for QP `qp`.
pub(super) fn key(qp: u32) -> FlowKey {
    FlowKey {
        saddr: NetAddr::from_v4([10, 0, 0, 1]),
        daddr: NetAddr::from_v4([10, 0, 1, 1]),
        dqp: qp,
        side: SIDE_CRF,
        kind: 0,
    }
}

/// Its request from the HELLO of peer 192.0.2.7.
fn request(qp: u32) -> create::FlowRequest {
    create::request_for(key(qp), NetAddr::from_v4([192, 0, 2, 7]), 0x88, 64)
}

/// `request` from the datapath: whether a flow came back at once, and of
/// the key asked for.
pub(super) fn ask(st: &NetState, qp: u32) -> Option<bool> {
    let bh = bh::disable();
    let f = st.creation.request(st, &request(qp), &[], &bh)?;
    Some(InTable::links(f).key() == &key(qp))
}

pub(super) fn has(st: &NetState, qp: u32) -> bool {
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

/// Empties the table: every flow removed, as a flush does.
pub(super) fn empty(st: &NetState) {
    st.flush_flows(false);
}

fn create_queue_and_spares(w: &mut dyn Write) -> bool {
    let mut cfg = host_cfg();
    (cfg.max_flows, cfg.max_memory) = (MAX_FLOWS, 64 << 20);
    with_netns(&cfg, w, |st, w| {
        let limit = || st.stat(LIMIT) as i64;
        queue_and_spares_in(st, limit, w)
    })
}

fn queue_and_spares_in(st: &NetState, limit: impl Fn() -> i64, w: &mut dyn Write) -> bool {
    let mut c = Checks::new(w);
    // No spare yet: queued (once, asked twice), made by the work item.
    let queued0 = st.stat(stat::FLOWS_QUEUED);
    c.check(ask(st, 1).is_none(), "made without a spare");
    c.check(
        st.stat(stat::FLOWS_QUEUED) == queued0 + 1,
        "a queued flow not counted in flows-queued",
    );
    c.check(ask(st, 1).is_none(), "made without a spare (again)");
    c.check(st.creation.pending() <= 1, "queued twice");
    st.creation.flush();
    c.check(has(st, 1), "the queued request was not made");
    c.check(st.creation.pending() == 0, "left queued");
    // The identity netlink reports, and the collector's mark.
    {
        let bh = bh::disable();
        if let Some(f) = st.flows.lookup(&key(1), &*bh) {
            let mut fi = crate::flow_info::FlowInfo::default();
            f.info(&mut fi);
            let got = (fi.key.dqp, fi.key.side, fi.peer, f.removal().gc());
            let want = (1, SIDE_CRF, request(1).peer, GC_KEEP);
            c.check(got == want, "the flow's identity");
        }
    }
    // With a spare: made at once.
    c.check(spare_ready(st), "no spare after 2 s");
    c.check(ask(st, 2) == Some(true), "not made from a spare");
    // max-flows (3 receiver flows): the fourth refused, counted, not queued.
    c.check(spare_ready(st), "no spare after 2 s (2)");
    let third = ask(st, 3);
    st.creation.flush(); // if it was queued instead
    c.check(third != Some(false) && has(st, 3), "the third flow");
    let limit0 = limit();
    c.check(ask(st, 4).is_none(), "a flow over max-flows");
    c.check(limit() == limit0 + 1, "max-flows refusal not counted");
    c.check(st.creation.pending() == 0, "a refused request queued");
    c.check(st.flows.count(SIDE_CRF) == MAX_FLOWS, "flows in the table");
    // Closed: nothing queued or made, with room in the table.
    empty(st);
    st.close();
    c.check(ask(st, 5).is_none(), "made after close");
    st.creation.flush();
    c.check(
        !has(st, 5) && st.creation.pending() == 0,
        "queued or made after close",
    );
    c.check(st.flows.count(SIDE_CRF) == 0, "flows left");
    empty(st);
    c.ok
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
