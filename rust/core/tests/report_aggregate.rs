//! The reporter's aggregation table: timing, merging, truncation, a full
//! table, and round trips through `PathReport::decode`.

mod report_util;

use crem_core::report::{Aggregator, Budget, Merge, Params, Slot};
use crem_core::wire::{FlowAddrs, LossCause, Method, PathReport};
use report_util::*;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

fn params() -> Params {
    Params {
        node_id: 7,
        ..Params::default() // 50 µs, 1 ms, 64 PSNs
    }
}

#[test]
fn own_report_round_trips_after_one_interval() {
    let mut slots = [Slot::EMPTY; 4];
    let mut a = Aggregator::new(&mut slots[..], params());
    let f = v4(1);
    assert_eq!(
        a.on_drop(120 * US, &dropped(f, 0x11, 10), LossCause::QueueOverflow),
        Some(170 * US)
    );
    for p in [11, 12] {
        assert_eq!(
            a.on_drop(130 * US, &dropped(f, 0x11, p), LossCause::QueueOverflow),
            None
        );
    }
    assert_eq!(a.next_deadline(), Some(170 * US));
    assert!(poll(&mut a, 170 * US - 1, 1472).is_empty());
    let out = poll(&mut a, 170 * US, 1472);
    assert_eq!(out.len(), 1);
    let (bytes, addrs, qp) = &out[0];
    assert_eq!((*addrs, *qp), (f, 0x11));
    let r = PathReport::decode(bytes).expect("decodes");
    assert_eq!(bytes.len(), r.encoded_len());
    assert_eq!(
        (r.method, r.addrs, r.flow_label, r.truncated),
        (Method::NodeLocalDrop, f, 0x11, false)
    );
    let h = r.hops.iter().next().expect("one entry");
    assert_eq!((h.period, h.queue_delay_change_us), (2, 0)); // 120 µs / 50 µs
    assert_eq!(
        entries(&r),
        vec![(7, 3, LossCause::QueueOverflow, vec![10, 11, 12])]
    );
    assert_eq!(a.counters().reports_emitted, 1);
    assert_eq!((a.pending(), a.next_deadline()), (0, None));
    assert!(poll(&mut a, 10 * MS, 1472).is_empty());
}

#[test]
fn two_causes_give_two_own_entries_in_cause_order() {
    let mut slots = [Slot::EMPTY; 1];
    let mut a = Aggregator::new(&mut slots[..], params());
    let f = v6(3);
    let d = |p| dropped(f, 5, p);
    a.on_drop(0, &d(1), LossCause::QueueOverflow);
    a.on_drop(0, &d(2), LossCause::TransmissionError);
    a.on_drop(0, &d(3), LossCause::QueueOverflow);
    a.on_drop(0, &d(4), LossCause::Unknown);
    a.on_drop(0, &d(5), LossCause::Other(9)); // reported as unknown
    let out = poll(&mut a, MS, 1232);
    let r = PathReport::decode(&out[0].0).unwrap();
    assert_eq!(
        entries(&r),
        vec![
            (7, 2, LossCause::Unknown, vec![4, 5]),
            (7, 2, LossCause::QueueOverflow, vec![1, 3]),
            (7, 1, LossCause::TransmissionError, vec![2]),
        ]
    );
}

#[test]
fn flow_gap_defers_and_accumulates_other_flows_unaffected() {
    let mut slots = [Slot::EMPTY; 4];
    let mut a = Aggregator::new(&mut slots[..], params());
    let (f, g) = (v4(1), v4(2));
    let ovf = LossCause::QueueOverflow;
    assert_eq!(a.on_drop(0, &dropped(f, 1, 1), ovf), Some(50 * US));
    assert_eq!(poll(&mut a, 50 * US, 1472).len(), 1);
    // The next report of f waits for 50 µs + 1 ms; drops accumulate.
    assert_eq!(a.on_drop(100 * US, &dropped(f, 1, 2), ovf), Some(1050 * US));
    assert_eq!(a.counters().flow_deferred, 1);
    assert_eq!(a.on_drop(900 * US, &dropped(f, 1, 3), ovf), None);
    // Another flow is not limited by f's gap.
    assert_eq!(a.on_drop(100 * US, &dropped(g, 1, 9), ovf), Some(150 * US));
    let out = poll(&mut a, 150 * US, 1472);
    assert_eq!((out.len(), out[0].1), (1, g));
    assert_eq!(a.next_deadline(), Some(1050 * US));
    assert!(poll(&mut a, 1050 * US - 1, 1472).is_empty());
    let out = poll(&mut a, 1050 * US, 1472);
    let r = PathReport::decode(&out[0].0).unwrap();
    assert_eq!(entries(&r), vec![(7, 2, ovf, vec![2, 3])]);
    // A drop after the gap is due one interval later, not deferred.
    assert_eq!(
        a.on_drop(2100 * US, &dropped(f, 1, 4), ovf),
        Some(2150 * US)
    );
    assert_eq!(a.counters().flow_deferred, 1);
}

#[test]
fn full_psn_list_counts_everything_and_truncates() {
    let mut slots = [Slot::EMPTY; 1];
    let p = Params {
        psn_limit: 4,
        ..params()
    };
    let mut a = Aggregator::new(&mut slots[..], p);
    for i in 0..6 {
        a.on_drop(0, &dropped(v4(1), 1, i), LossCause::QueueOverflow);
    }
    let out = poll(&mut a, MS, 1472);
    let r = PathReport::decode(&out[0].0).unwrap();
    assert!(r.truncated);
    assert_eq!(
        entries(&r),
        vec![(7, 6, LossCause::QueueOverflow, vec![0, 1, 2, 3])]
    );
    assert_eq!(a.counters().psns_omitted, 2);
}

#[test]
fn non_source_drops_are_ignored() {
    let mut slots = [Slot::EMPTY; 1];
    let mut a = Aggregator::new(&mut slots[..], params());
    let mut d = dropped(v4(1), 1, 1);
    d.is_source = false;
    assert_eq!(a.on_drop(0, &d, LossCause::QueueOverflow), None);
    assert_eq!((a.pending(), a.counters().non_source), (0, 1));
}

/// Own 10 PSNs (1..=10) of flow v4(1) QP 1, merged with a downstream
/// entry of 10 (100..110); polled with `budget`.
fn own_and_merged(budget: usize) -> (Vec<(Vec<u8>, FlowAddrs, u32)>, crem_core::report::Counters) {
    let mut slots = [Slot::EMPTY; 1];
    let mut a = Aggregator::new(&mut slots[..], params());
    for p in 1..=10 {
        a.on_drop(0, &dropped(v4(1), 1, p), LossCause::QueueOverflow);
    }
    let ds = report(v4(1), 1, Method::NodeLocalDrop, false, &[hop(20, 100..110)]);
    assert_eq!(a.on_downstream_bytes(10 * US, &ds), Merge::Held(50 * US));
    let out = poll(&mut a, 50 * US, budget);
    (out, *a.counters())
}

#[test]
fn budget_cuts_psns_from_the_last_entry_backwards() {
    // 24 fixed + 2 × (20 + 40) = 144 octets.
    let (out, c) = own_and_merged(144);
    let r = PathReport::decode(&out[0].0).unwrap();
    assert!(!r.truncated);
    assert_eq!(
        entries(&r)[1],
        (20, 10, LossCause::QueueOverflow, (100..110).collect())
    );
    assert_eq!(c.psns_omitted, 0);

    let (out, c) = own_and_merged(143);
    let r = PathReport::decode(&out[0].0).unwrap();
    assert_eq!(
        (out[0].0.len(), r.truncated, c.psns_omitted),
        (140, true, 1)
    );
    assert_eq!(entries(&r)[1].3, (100..109).collect::<Vec<_>>());
    assert_eq!(entries(&r)[1].1, 10); // Lost Count is never cut

    let (out, c) = own_and_merged(100); // 11 words to cut
    let e = entries(&PathReport::decode(&out[0].0).unwrap());
    assert_eq!((e[0].3.len(), e[1].3.len(), c.psns_omitted), (9, 0, 11));

    let (out, _) = own_and_merged(64); // bare entries fit exactly
    let e = entries(&PathReport::decode(&out[0].0).unwrap());
    assert_eq!((e.len(), e[0].1, e[1].1), (2, 10, 10));

    let (out, c) = own_and_merged(63); // the merged entry goes
    let r = PathReport::decode(&out[0].0).unwrap();
    assert_eq!((out[0].0.len(), r.hops.len(), r.truncated), (44, 1, true));
    assert_eq!(c.entries_over, 1);

    let (out, c) = own_and_merged(43); // not even one entry
    assert!(out.is_empty());
    assert_eq!((c.too_small, c.reports_emitted), (1, 0));
}

#[test]
fn merge_keeps_order_and_caps_at_16_entries() {
    let mut slots = [Slot::EMPTY; 2];
    let mut a = Aggregator::new(&mut slots[..], params());
    let f = v4(1);
    a.on_drop(0, &dropped(f, 1, 1), LossCause::QueueOverflow);
    let r1 = report(
        f,
        1,
        Method::NodeLocalDrop,
        false,
        &[hop(100, 0..0), hop(101, 5..7)],
    );
    let hops: Vec<Hop> = (200..215).map(|n| hop(n, n..n + 1)).collect();
    let r2 = report(f, 1, Method::NodeLocalDrop, false, &hops);
    assert_eq!(a.on_downstream_bytes(0, &r1), Merge::Held(50 * US));
    assert_eq!(a.on_downstream_bytes(0, &r2), Merge::Held(50 * US));
    let c = *a.counters();
    assert_eq!((c.merged, c.entries_over, c.psns_omitted), (2, 2, 2));
    let out = poll(&mut a, 50 * US, 1472);
    assert_eq!(out.len(), 1);
    let r = PathReport::decode(&out[0].0).unwrap();
    assert!(r.truncated); // entries 213 and 214 listed a PSN each
    let nodes: Vec<u32> = entries(&r).iter().map(|e| e.0).collect();
    let want: Vec<u32> = [7, 100, 101].into_iter().chain(200..213).collect();
    assert_eq!(nodes, want);
    assert_eq!(
        entries(&r)[2],
        (101, 2, LossCause::QueueOverflow, vec![5, 6])
    );
    let e = r.hops.iter().nth(1).unwrap();
    assert_eq!((e.period, e.queue_delay_change_us), (9, -3));
}

#[test]
fn an_own_cause_after_a_full_merge_drops_the_last_held_entry() {
    let mut slots = [Slot::EMPTY; 1];
    let mut a = Aggregator::new(&mut slots[..], params());
    let f = v4(1);
    a.on_drop(0, &dropped(f, 1, 1), LossCause::QueueOverflow);
    let hops: Vec<Hop> = (200..215).map(|n| hop(n, 0..0)).collect();
    a.on_downstream_bytes(0, &report(f, 1, Method::NodeLocalDrop, false, &hops));
    a.on_drop(0, &dropped(f, 1, 2), LossCause::TransmissionError);
    let out = poll(&mut a, 50 * US, 1472);
    let r = PathReport::decode(&out[0].0).unwrap();
    assert_eq!(r.hops.len(), 16);
    assert!(!r.truncated); // the dropped entry listed no PSN
    assert_eq!(r.hops.iter().last().unwrap().node_id, 213);
    assert_eq!(a.counters().entries_over, 1);
}

#[test]
fn reports_that_cannot_merge_are_forwarded_at_once() {
    let mut slots = [Slot::EMPTY; 2];
    let mut a = Aggregator::new(&mut slots[..], params());
    let f = v4(1);
    let ds = |qp, m| report(f, qp, m, false, &[hop(20, 1..2)]);
    // No own report pending.
    assert_eq!(
        a.on_downstream_bytes(0, &ds(1, Method::NodeLocalDrop)),
        Merge::Forward
    );
    a.on_drop(0, &dropped(f, 1, 1), LossCause::QueueOverflow);
    assert_eq!(
        a.on_downstream_bytes(0, &ds(2, Method::NodeLocalDrop)),
        Merge::Forward
    );
    assert_eq!(
        a.on_downstream_bytes(0, &ds(1, Method::AlternateMarking)),
        Merge::Forward
    );
    assert_eq!(
        a.on_downstream_bytes(0, &report(v6(1), 1, Method::NodeLocalDrop, false, &[])),
        Merge::Forward
    );
    assert_eq!(
        a.on_downstream_bytes(0, b"\x18\x00\x00\x08junk"),
        Merge::Forward
    );
    // Flow label bits above the QP are ignored, as by the CSF's routing.
    assert_eq!(
        a.on_downstream_bytes(
            0,
            &report(f, 0x7f00_0001, Method::NodeLocalDrop, false, &[])
        ),
        Merge::Held(50 * US)
    );
    poll(&mut a, 50 * US, 1472);
    // Own report deferred by the flow gap beyond one interval: forward.
    a.on_drop(60 * US, &dropped(f, 1, 2), LossCause::QueueOverflow);
    assert_eq!(
        a.on_downstream_bytes(60 * US, &ds(1, Method::NodeLocalDrop)),
        Merge::Forward
    );
    // Within one interval of its due time it merges again.
    assert_eq!(
        a.on_downstream_bytes(1000 * US, &ds(1, Method::NodeLocalDrop)),
        Merge::Held(1050 * US)
    );
    let c = a.counters();
    assert_eq!((c.forwarded, c.merged), (6, 2));
}

#[test]
fn merged_truncated_flag_and_lost_count_are_kept_consistent() {
    let mut slots = [Slot::EMPTY; 1];
    let mut a = Aggregator::new(&mut slots[..], params());
    let f = v4(1);
    a.on_drop(0, &dropped(f, 1, 1), LossCause::QueueOverflow);
    let mut h = hop(30, 10..13);
    h.lost = 1; // below its own list
    h.cause = LossCause::TransmissionError;
    a.on_downstream_bytes(0, &report(f, 1, Method::NodeLocalDrop, true, &[h]));
    let out = poll(&mut a, MS, 1472);
    let r = PathReport::decode(&out[0].0).unwrap();
    assert!(r.truncated);
    assert_eq!(
        entries(&r)[1],
        (30, 3, LossCause::TransmissionError, vec![10, 11, 12])
    );
}

#[test]
fn held_psns_beyond_the_slot_buffer_are_left_out() {
    let mut slots = [Slot::EMPTY; 1];
    let mut a = Aggregator::new(&mut slots[..], params());
    let f = v6(1);
    a.on_drop(0, &dropped(f, 1, 1), LossCause::QueueOverflow);
    let hops = [hop(40, 0..200), hop(41, 1000..1100)];
    a.on_downstream_bytes(0, &report(f, 1, Method::NodeLocalDrop, false, &hops));
    assert_eq!(a.counters().psns_omitted, 300 - 256);
    let out = poll(&mut a, MS, 9000);
    let r = PathReport::decode(&out[0].0).unwrap();
    let e = entries(&r);
    assert!(r.truncated);
    assert_eq!((e[1].3.len(), e[2].3.len(), e[2].1), (200, 56, 100));
}

#[test]
fn a_full_table_keeps_pending_and_limited_flows() {
    let mut slots = [Slot::EMPTY; 2];
    let mut a = Aggregator::new(&mut slots[..], params());
    let ovf = LossCause::QueueOverflow;
    assert!(a.on_drop(0, &dropped(v4(1), 1, 1), ovf).is_some());
    assert!(a.on_drop(0, &dropped(v4(2), 1, 1), ovf).is_some());
    assert_eq!(a.on_drop(0, &dropped(v4(3), 1, 1), ovf), None);
    assert_eq!(a.counters().slots_full, 1);
    // A known flow still records.
    assert_eq!(a.on_drop(10 * US, &dropped(v4(1), 1, 2), ovf), None);
    assert_eq!(poll(&mut a, 50 * US, 1472).len(), 2);
    // Both slots are within their flows' gap: still full.
    assert_eq!(a.on_drop(500 * US, &dropped(v4(3), 1, 2), ovf), None);
    assert_eq!(a.counters().slots_full, 2);
    // After the gap, a slot is reused.
    assert_eq!(
        a.on_drop(1050 * US, &dropped(v4(3), 1, 3), ovf),
        Some(1100 * US)
    );
    let out = poll(&mut a, 1100 * US, 1472);
    let r = PathReport::decode(&out[0].0).unwrap();
    assert_eq!((r.addrs, entries(&r)[0].3.clone()), (v4(3), vec![3]));
    // An empty table records nothing and never panics.
    let mut none: [Slot; 0] = [];
    let mut a = Aggregator::new(&mut none[..], params());
    assert_eq!(a.on_drop(0, &dropped(v4(1), 1, 1), ovf), None);
    assert_eq!(
        a.poll(
            0,
            &mut [],
            |_, _| panic!("no budget asked"),
            |_| panic!("nothing to emit")
        ),
        None
    );
}

#[test]
fn a_slot_stays_small_enough_to_lend_by_the_hundred() {
    let n = std::mem::size_of::<Slot>();
    assert!(n <= 2048, "Slot is {n} octets");
}

#[test]
fn each_flow_gets_its_own_budget_and_a_declined_report_is_done() {
    // Owned storage (the kernel's form) works as a borrowed slice does.
    let mut a = Aggregator::new(vec![Slot::EMPTY; 3], params());
    let ovf = LossCause::QueueOverflow;
    for (f, qp) in [(v4(1), 1), (v4(2), 2), (v4(3), 3)] {
        for p in 0..40 {
            a.on_drop(0, &dropped(f, qp, p), ovf);
        }
    }
    let mut asked = Vec::new();
    let mut sent = Vec::new();
    let mut out = [0u8; 2048];
    let next = a.poll(
        50 * US,
        &mut out,
        |addrs, qp| {
            asked.push((*addrs, qp));
            // Flow 1: a small path MTU; flow 2: declined (a port's rate
            // limit); flow 3: plenty.
            match qp {
                1 => Budget::Send(100),
                2 => Budget::Decline,
                _ => Budget::Send(4096),
            }
        },
        |e| sent.push((e.dest_qp, e.bytes.to_vec())),
    );
    assert_eq!(next, None);
    assert_eq!(asked.len(), 3);
    assert_eq!(sent.len(), 2);
    let small = PathReport::decode(&sent[0].1).unwrap();
    assert!(sent[0].1.len() <= 100 && small.truncated);
    assert_eq!(entries(&small)[0].1, 40); // Lost Count is never cut
    let whole = PathReport::decode(&sent[1].1).unwrap();
    assert_eq!((sent[1].0, whole.truncated), (3, false));
    assert_eq!(entries(&whole)[0].3.len(), 40);
    // The declined one is not pending any more, nor counted too small.
    assert_eq!((a.pending(), a.counters().too_small), (0, 0));
    assert_eq!(a.counters().reports_emitted, 2);
}

#[test]
fn a_report_kept_for_later_stays_due_and_is_listed() {
    let mut slots = [Slot::EMPTY; 2];
    let mut a = Aggregator::new(&mut slots[..], params());
    a.on_drop(0, &dropped(v4(1), 1, 5), LossCause::QueueOverflow);
    a.on_drop(10 * US, &dropped(v4(2), 2, 6), LossCause::QueueOverflow);
    let mut listed = Vec::new();
    a.due(50 * US, |_, qp| listed.push(qp));
    assert_eq!(listed, vec![1]); // flow 2 is due at 60 µs
    let mut out = [0u8; 512];
    let mut sent = 0;
    let next = a.poll(
        70 * US,
        &mut out,
        |_, qp| match qp {
            1 => Budget::Later,
            _ => Budget::Send(512),
        },
        |_| sent += 1,
    );
    // Flow 1 kept: still pending and due at once; flow 2 sent.
    assert_eq!((sent, a.pending(), next), (1, 1, Some(50 * US)));
    let next = a.poll(70 * US, &mut out, |_, _| Budget::Send(512), |_| sent += 1);
    assert_eq!((sent, a.pending(), next), (2, 0, None));
}
