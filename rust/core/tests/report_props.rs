//! Property tests of the reporter's PATH_REPORTs: whatever drops and
//! downstream reports a table sees, every emitted report decodes, fits the
//! budget, has at most 16 entries, a Lost Count at least its PSN list, and
//! Truncated set exactly when a dropped PSN known here is not listed.

mod report_util;

use crem_core::report::{Aggregator, Merge, Params, Slot};
use crem_core::wire::{FlowAddrs, LossCause, Method, PathReport, MAX_HOP_ENTRIES};
use proptest::prelude::*;
use report_util::*;

const OWN: u32 = 7;

#[derive(Clone, Debug)]
enum Op {
    Drop {
        flow: usize,
        cause: u8,
        psn: u32,
    },
    Down {
        flow: usize,
        truncated: bool,
        method3: bool,
        hops: Vec<(u32, u8, usize)>,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..4, 0u8..4, 0u32..1 << 24)
            .prop_map(|(flow, cause, psn)| Op::Drop { flow, cause, psn }),
        1 => (
            0usize..5,
            any::<bool>(),
            prop::bool::weighted(0.9),
            prop::collection::vec((0u32..60, 0u8..3, 0usize..120), 0..=MAX_HOP_ENTRIES),
        )
            .prop_map(|(flow, truncated, method3, hops)| Op::Down { flow, truncated, method3, hops }),
    ]
}

fn flow(i: usize) -> (FlowAddrs, u32) {
    match i {
        0 => (v4(1), 1),
        1 => (v4(1), 2),
        2 => (v6(1), 1),
        3 => (v6(2), 0xff_ffff),
        _ => (v4(9), 9), // never dropped here
    }
}

#[derive(Clone, Copy, Default, Debug)]
struct Known {
    own: u64,
    held: u64,
    truncated: bool,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn emitted_reports_fit_and_flag_left_out_psns(
        ops in prop::collection::vec(op(), 1..60),
        nslots in 1usize..5,
        psn_limit in 0usize..70,
        budget in prop_oneof![0usize..200, 200usize..1600, Just(9000usize)],
    ) {
        let mut slots = vec![Slot::EMPTY; nslots];
        let p = Params { node_id: OWN, psn_limit, ..Params::default() };
        let mut a = Aggregator::new(&mut slots[..], p);
        let mut known = [Known::default(); 5];
        for (i, o) in ops.iter().enumerate() {
            let now = i as u64 * 100; // all within one interval
            match o {
                Op::Drop { flow: f, cause, psn } => {
                    let (addrs, qp) = flow(*f);
                    let full = a.counters().slots_full;
                    let d = dropped(addrs, qp, *psn);
                    a.on_drop(now, &d, LossCause::from_u8(*cause));
                    if a.counters().slots_full == full {
                        known[*f].own += 1;
                    }
                }
                Op::Down { flow: f, truncated, method3, hops } => {
                    let (addrs, qp) = flow(*f);
                    let hops: Vec<Hop> = hops
                        .iter()
                        .enumerate()
                        .map(|(j, &(lost, cause, n))| Hop {
                            node_id: 1000 + j as u32,
                            lost,
                            cause: LossCause::from_u8(cause),
                            psns: (0..n as u32).map(crem_core::psn::Psn::new).collect(),
                        })
                        .collect();
                    let m = if *method3 { Method::NodeLocalDrop } else { Method::AlternateMarking };
                    let bytes = report(addrs, qp, m, *truncated, &hops);
                    let merged = a.on_downstream_bytes(now, &bytes);
                    let pending = known[*f].own > 0;
                    prop_assert_eq!(matches!(merged, Merge::Held(_)), pending && *method3);
                    if let Merge::Held(_) = merged {
                        known[*f].held += hops.iter().map(|h| h.psns.len() as u64).sum::<u64>();
                        known[*f].truncated |= *truncated;
                    }
                }
            }
        }
        let out = poll(&mut a, 10_000_000, budget);
        let c = *a.counters();
        let with_drops = known.iter().filter(|k| k.own > 0).count();
        prop_assert_eq!(out.len() as u64 + c.too_small, with_drops as u64);
        let mut left_out = 0;
        for (bytes, addrs, qp) in &out {
            prop_assert!(bytes.len() <= budget);
            let r = PathReport::decode(bytes).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
            prop_assert_eq!((r.addrs, r.flow_label, r.method), (*addrs, *qp, Method::NodeLocalDrop));
            prop_assert!(r.hops.len() <= MAX_HOP_ENTRIES && !r.hops.is_empty());
            let f = (0..4).find(|&i| flow(i) == (*addrs, *qp)).expect("a dropped flow");
            let k = known[f];
            let mut listed = 0u64;
            let mut own_lost = 0u64;
            for (j, h) in r.hops.iter().enumerate() {
                prop_assert!(h.lost_count as usize >= h.dropped.len());
                listed += h.dropped.len() as u64;
                if h.node_id == OWN {
                    prop_assert!(h.cause.to_u8() <= 2);
                    own_lost += u64::from(h.lost_count);
                } else {
                    prop_assert!(j > 0, "own entry first");
                }
            }
            let all = k.own + k.held;
            prop_assert!(listed <= all);
            prop_assert_eq!(r.truncated, listed < all || k.truncated);
            prop_assert!(own_lost <= k.own);
            if budget >= 48 + 20 * MAX_HOP_ENTRIES {
                prop_assert_eq!(own_lost, k.own); // no own entry left out
            }
            left_out += all - listed;
        }
        if c.too_small == 0 {
            prop_assert_eq!(c.psns_omitted, left_out);
        }
        prop_assert_eq!(c.reports_emitted, out.len() as u64);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Polled at every deadline it returns, a table emits each flow's report
    /// exactly at max(first unreported drop + interval, last report +
    /// flow gap), and loses no drop.
    #[test]
    fn reports_come_one_interval_after_a_drop_and_one_gap_apart(
        drops in prop::collection::vec((0u64..400_000, 0usize..3), 1..80),
        interval in 1u64..100_000,
        gap in 0u64..2_000_000,
    ) {
        let mut slots = vec![Slot::EMPTY; 3];
        let p = Params { node_id: OWN, interval, flow_gap: gap, psn_limit: 64 };
        let mut a = Aggregator::new(&mut slots[..], p);
        let mut now = 0u64;
        let mut first: [Option<u64>; 3] = [None; 3];
        let mut last: [Option<u64>; 3] = [None; 3];
        let mut lost = [0u64; 3];
        let mut dropped_n = [0u64; 3];
        let run = |a: &mut Aggregator<&mut [Slot]>, until: u64, first: &mut [Option<u64>; 3],
                       last: &mut [Option<u64>; 3], lost: &mut [u64; 3]|
         -> Result<(), TestCaseError> {
            while let Some(t) = a.next_deadline().filter(|&t| t <= until) {
                for (bytes, addrs, qp) in poll(a, t, 1472) {
                    let f = (0..3).find(|&i| flow(i) == (addrs, qp)).expect("flow");
                    let want = (first[f].expect("a drop") + interval)
                        .max(last[f].map_or(0, |l| l + gap));
                    prop_assert_eq!(t, want);
                    let r = PathReport::decode(&bytes).expect("decodes");
                    lost[f] += r.hops.iter().map(|h| u64::from(h.lost_count)).sum::<u64>();
                    first[f] = None;
                    last[f] = Some(t);
                }
            }
            Ok(())
        };
        for &(dt, f) in &drops {
            now += dt;
            run(&mut a, now, &mut first, &mut last, &mut lost)?;
            let (addrs, qp) = flow(f);
            let armed = a.on_drop(now, &dropped(addrs, qp, 1), LossCause::QueueOverflow);
            prop_assert_eq!(armed.is_some(), first[f].is_none());
            first[f].get_or_insert(now);
            dropped_n[f] += 1;
        }
        run(&mut a, u64::MAX, &mut first, &mut last, &mut lost)?;
        prop_assert_eq!(lost, dropped_n);
        prop_assert_eq!(a.pending(), 0);
    }
}
