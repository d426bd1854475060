// SPDX-License-Identifier: GPL-2.0
//! Removal and the collector (`rust/removal.rs`, `rust/collector.rs`) on a
//! netns state of its own (not a netns's own: nothing is notified or sent): a
//! flow is removed once, whoever asks twice; it is freed and counted only
//! when reaped; its counters stay in the totals after it is gone, and a
//! stats-reset restarts them; the collector removes a flow idle for
//! `flow_idle_s`, keeps a fresh one, and counts what it removes.

use super::create::{ask, has, key};
use super::pool::{host_cfg, with_netns};
use super::{run, Checks};
use crate::collector::stale;
use crate::crem_core::ctl::Config;
use crate::crem_core::nl::stat;
use crate::ffi;
use crate::flow::{now, Flow};
use crate::flow_info::Counters;
use crate::kernel_ext::bh;
use crate::netns::NetState;
use crate::removal::GC_KEEP;
use crate::table::SIDE_CRF;
use core::ffi::{c_char, c_int};
use core::fmt::Write;

/// msgs-in among the flow-stats counters.
const MSGS_IN: usize = crate::crem_core::nl::flow_stat::MSGS_IN;
const NS_PER_S: u64 = 1_000_000_000;

/// A host's configuration with room for a few flows.
fn cfg() -> Config {
    let mut c = host_cfg();
    c.max_flows = 8;
    c
}

/// Makes the receiver flow of QP `qp` (queued, then made by the work).
fn make(st: &NetState, qp: u32) -> bool {
    if ask(st, qp).is_none() {
        st.creation.flush();
    }
    has(st, qp)
}

/// Runs `f` with the flow of QP `qp` (in a BH-off section).
fn with_flow<R>(st: &NetState, qp: u32, f: impl FnOnce(&Flow, &bh::Bh) -> R) -> Option<R> {
    let bh = bh::disable();
    let fl = st.flows.lookup(&key(qp), &*bh)?;
    Some(f(fl, &bh))
}

/// A message of no known type reaches the flow of QP `qp`: msgs-in counts it.
fn poke(st: &NetState, qp: u32) {
    with_flow(st, qp, |f, bh| f.msg(bh, &[0x1f], false));
}

fn msgs_in(st: &NetState, rebase: bool) -> u64 {
    let mut sum = Counters::ZERO;
    st.totals(&mut sum, rebase);
    sum.flat.get(MSGS_IN).copied().unwrap_or(u64::MAX)
}

fn removal_once_and_totals(w: &mut dyn Write) -> bool {
    with_netns(&cfg(), w, |st, w| {
        let mut c = Checks::new(w);
        c.check(make(st, 1) && make(st, 2), "flows not made");
        poke(st, 1);
        poke(st, 2);
        poke(st, 2);
        c.check(msgs_in(st, false) == 3, "totals of the live flows");
        // Two removers of flow 1: one takes it.
        let taken = with_flow(st, 1, |f, bh| {
            (
                st.remove(f, crate::removal::CLOSE_NORMAL, bh),
                st.remove(f, crate::removal::CLOSE_NONE, bh),
            )
        });
        c.check(taken == Some((true, false)), "removed other than once");
        c.check(!has(st, 1) && has(st, 2), "the table after the removal");
        c.check(st.flows.count(SIDE_CRF) == 1, "flows counted");
        // Listed, not yet freed: nothing counted before the reap.
        c.check(st.stat(stat::FLOWS_REMOVED) == 0, "counted before reaped");
        st.reap(true);
        c.check(
            st.stat(stat::FLOWS_REMOVED) == 1,
            "flows-removed after the reap",
        );
        // Its counters stay in the totals.
        c.check(msgs_in(st, false) == 3, "a removed flow's counters lost");
        st.reap(true);
        c.check(st.stat(stat::FLOWS_REMOVED) == 1, "reaped twice");
        // A stats-reset restarts the totals, gone flows and live ones alike.
        c.check(msgs_in(st, true) == 3, "totals at the reset");
        c.check(msgs_in(st, false) == 0, "totals after the reset");
        poke(st, 2);
        c.check(
            msgs_in(st, false) == 1,
            "totals counting on after the reset",
        );
        // The flush removes the rest.
        st.flush_flows(false);
        c.check(st.flows.count(SIDE_CRF) == 0, "flows left after the flush");
        c.check(st.stat(stat::FLOWS_REMOVED) == 2, "the flush's flow-down");
        c.check(msgs_in(st, false) == 1, "the flushed flow's counters lost");
        c.ok
    })
}

#[no_mangle]
extern "C" fn crem_kunit_removal_once_and_totals(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, removal_once_and_totals)
}

fn collector_expires_idle(w: &mut dyn Write) -> bool {
    with_netns(&cfg(), w, |st, w| {
        let mut c = Checks::new(w);
        c.check(make(st, 1) && make(st, 2), "flows not made");
        let t0 = now();
        let idle = 30 * NS_PER_S;
        // What goes, and why: a fresh flow stays, also at a time before its
        // last packet (no age at all); one idle for longer than the limit
        // ends with "flow ended", whatever its state; none with no limit.
        let marks = with_flow(st, 1, |f, _| {
            [
                stale(f, t0 + NS_PER_S, idle),
                stale(f, t0.saturating_sub(60 * NS_PER_S), idle),
                stale(f, t0 + 31 * NS_PER_S, idle),
                stale(f, t0 + 31 * NS_PER_S, 0),
            ]
        });
        let ended = crate::removal::CLOSE_FLOW_ENDED;
        let want = [GC_KEEP, GC_KEEP, ended, GC_KEEP];
        if marks != Some(want) {
            let _ = write!(c.w, "marks {marks:?}, not {want:?}; ");
            c.ok = false;
        }
        // A collection now keeps both (the module's flow_idle_s, 30 s by
        // default, unless a test set 0: never).
        st.collect(t0);
        c.check(has(st, 1) && has(st, 2), "a fresh flow collected");
        poke(st, 2);
        c.check(st.stat(stat::FLOWS_EXPIRED) == 0, "expired counted early");
        // 31 s on, both are idle: removed, counted, freed.
        // SAFETY: the module parameter, read as `collector::idle_ns` does.
        let idle_s =
            unsafe { core::ptr::read_volatile(core::ptr::addr_of!(ffi::crem_flow_idle_s)) };
        if idle_s == 30 {
            st.collect(t0 + 31 * NS_PER_S);
            c.check(!has(st, 1) && !has(st, 2), "idle flows kept");
            c.check(st.stat(stat::FLOWS_EXPIRED) == 2, "flows-expired");
            c.check(st.stat(stat::FLOWS_REMOVED) == 2, "flows-removed");
            c.check(st.flows.count(SIDE_CRF) == 0, "flows counted");
        } else {
            let _ = write!(c.w, "flow_idle_s is {idle_s}, not the default 30; ");
            c.ok = false;
        }
        st.flush_flows(false);
        c.ok
    })
}

#[no_mangle]
extern "C" fn crem_kunit_collector_expires_idle(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, collector_expires_idle)
}
