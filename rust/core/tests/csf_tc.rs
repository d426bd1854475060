//! Selective repeat: T/C AETH reports answered with Source Copy from
//! retention, with the in-flight guard, report and per-PSN deduplication,
//! the per-report bound and the ACK-timeout fallback.

mod csf_common;
use csf_common::*;

use crem_core::engine::csf::CsfParams;
use crem_core::engine::MS;
use crem_core::fec::parse_source_symbol;
use crem_core::psn::Psn;
use crem_core::wire::{FecScheme, Segment, TcAeth, TcAethReport};

/// Selective repeat alone (crem.ko's `recovery selective-repeat`): its CRF
/// sends no requests, so the CSF sends no tail notice either.
fn params() -> CsfParams {
    CsfParams {
        selective_repeat: true,
        tail_info: false,
        tc_batch_time: 100_000,
        tc_ack_timeout: 10 * MS,
        initial_srtt: MS,
        ..CsfParams::DEFAULT
    }
}

fn report(seq: u16, last: u32, segs: &[(u32, u32)]) -> TcAethReport {
    let s: Vec<Segment> = segs
        .iter()
        .map(|&(l, r)| Segment {
            left: Psn::new(l),
            right: Psn::new(r),
        })
        .collect();
    TcAethReport {
        flow_id: 0,
        seq,
        fragment: TcAeth::new(Psn::new(last), &s).unwrap(),
    }
}

/// PSNs 100..150, one per microsecond from t = 0.
fn sent() -> H<16, 4096> {
    let mut h: H<16, 4096> = H::new(params(), Some(cfg(1, 8, 0, 200)));
    for i in 0..50u32 {
        h.src(i as u64 * 1000, 100 + i, 1, &payload(100 + i, 60));
    }
    assert!(h.take().is_empty(), "m = 0: no ordinary repairs");
    h
}

fn copied(h: &mut H<16, 4096>) -> Vec<u32> {
    h.reps()
        .iter()
        .map(|r| {
            assert_eq!(r.scheme, FecScheme::SourceCopy);
            assert!(r.lost.is_some_and(|l| l.get(r.repair_index as usize)));
            let psn = r.block_start.wrapping_add(r.repair_index as u32).value();
            assert_eq!(
                parse_source_symbol(r.symbol).unwrap(),
                &payload(psn, 60)[..]
            );
            psn
        })
        .collect()
}

#[test]
fn gaps_and_guarded_tail_are_resent_once() {
    let mut h = sent();
    // The draft's shape: continuous to 109, then 115..=129, 140..=144.
    h.tc(2 * MS, &report(1, 109, &[(115, 129), (140, 144)]));
    let got = copied(&mut h);
    let want: Vec<u32> = (110..115).chain(130..140).chain(145..150).collect();
    assert_eq!(got, want);
    let c = *h.csf.counters();
    assert_eq!(c.repairs_source_copy, 20);
    assert_eq!(c.tc_lost_psns, 20);
    assert_eq!(c.tc_guarded_psns, 0);
    // The same report again, and an older one: ignored.
    h.tc(2 * MS + 1, &report(1, 109, &[(115, 129)]));
    h.tc(2 * MS + 2, &report(0, 109, &[(115, 129)]));
    assert!(h.take().is_empty());
    assert_eq!(h.csf.counters().tc_reports_duplicate, 2);
    // A newer report with the same gaps within one SRTT: nothing re-sent.
    h.tc(2 * MS + 3, &report(2, 109, &[(115, 129)]));
    assert!(h.take().is_empty());
    assert!(h.csf.counters().tc_deduped_psns >= 5);
    // After one SRTT they may go again.
    h.tc(4 * MS, &report(3, 109, &[(115, 149)]));
    assert_eq!(copied(&mut h), (110..115).collect::<Vec<_>>());
    // Acked PSNs are released and no longer answered.
    h.ack(5 * MS, 127);
    h.tc(7 * MS, &report(4, 109, &[(115, 149)]));
    assert!(h.take().is_empty());
    assert_eq!(h.csf.counters().tc_unknown_psns, 5);
}

#[test]
fn in_flight_guard_spares_recent_psns() {
    let mut h = sent();
    // More sources just before the report: 150..=159 at 1.5 ms.
    for i in 0..10u32 {
        h.src(1_500_000 + i as u64, 150 + i, 1, &payload(150 + i, 60));
    }
    h.take();
    // Report at 2 ms, everything up to 139 received: 140..=149 were sent
    // long enough ago (lost), 150..=159 only 0.5 ms ago (in flight).
    h.tc(2 * MS, &report(1, 139, &[]));
    assert_eq!(copied(&mut h), (140..150).collect::<Vec<_>>());
    assert_eq!(h.csf.counters().tc_guarded_psns, 10);
    // Later they count.
    h.tc(5 * MS, &report(2, 149, &[]));
    assert_eq!(copied(&mut h), (150..160).collect::<Vec<_>>());
}

#[test]
fn per_report_bound_and_open_block() {
    let mut prm = params();
    prm.tc_max_per_report = 4;
    prm.idle_timeout = 100 * MS;
    let mut h: H<16, 4096> = H::new(prm, Some(cfg(1, 8, 0, 200)));
    for i in 0..4u32 {
        h.src(i as u64, 100 + i, 1, &payload(100 + i, 60));
    }
    // Block 100.. is open (k = 8, long idle): a gap in it closes it first.
    h.tc(5 * MS, &report(1, 99, &[(103, 103)]));
    assert_eq!(copied(&mut h), [100, 101, 102]);
    assert_eq!(h.csf.counters().blocks_closed_early, 1);
    for i in 4..30u32 {
        h.src(10 * MS + i as u64, 100 + i, 1, &payload(100 + i, 60));
    }
    h.take();
    h.tc(20 * MS, &report(2, 103, &[(129, 129)]));
    assert_eq!(copied(&mut h), [104, 105, 106, 107]);
    assert_eq!(h.csf.counters().tc_over_budget, 21);
}

#[test]
fn ack_timeout_and_disabled() {
    let mut h = sent();
    // Outstanding since the first source (t = 0): timeout at 10 ms.
    assert_eq!(h.csf.next_deadline(), Some(49_000 + 100_000));
    h.timer(MS);
    assert_eq!(h.csf.next_deadline(), Some(10 * MS));
    h.timer(10 * MS);
    assert_eq!(h.csf.counters().tc_ack_timeouts, 1);
    assert!(h.csf.tc_timed_out());
    assert_eq!(h.csf.next_deadline(), None);
    h.timer(30 * MS);
    assert_eq!(
        h.csf.counters().tc_ack_timeouts,
        1,
        "counted once per silence"
    );
    h.tc(31 * MS, &report(1, 149, &[]));
    assert!(!h.csf.tc_timed_out());
    assert_eq!(h.csf.next_deadline(), Some(41 * MS));
    // Everything acked: no timeout pending.
    h.ack(32 * MS, 149);
    assert_eq!(h.csf.next_deadline(), None);
    // Circuit breaker and mode off: reports ignored.
    let mut h = sent();
    h.csf.set_coded_retx(false);
    h.tc(2 * MS, &report(1, 109, &[(115, 129)]));
    h.csf.set_coded_retx(true);
    h.csf.set_selective_repeat(false);
    h.tc(2 * MS, &report(2, 109, &[(115, 129)]));
    // No Source Copy, and no tail notice (`tail_info` off: this CSF's CRF
    // sends no requests; `both_recoveries_send_the_tail_notice`).
    assert!(h.reps().is_empty());
    assert_eq!(h.csf.counters().tc_reports_ignored, 2);
}

// ---------------------------------------------------------------------------
// Multi-fragment reports (our ruling, `csf/tc.rs`): a full fragment
// (SegmentNum 4) is partial, its tail unknown; only a final fragment
// (SegmentNum ≤ 3) has its tail counted lost.

/// The CRF's fragments for: continuous to 101, received 103, 105, 107, 109,
/// 111 (103..=111 every other PSN), 113..=119; nothing after 119. Lost:
/// 102, 104, 106, 108, 110, 112 and the tail 120..=149.
fn two_fragments() -> [TcAethReport; 2] {
    [
        report(1, 101, &[(103, 103), (105, 105), (107, 107)]),
        report(2, 107, &[(109, 109), (111, 111), (113, 119)]),
    ]
}

fn end_marker() -> TcAethReport {
    report(3, 119, &[])
}

#[test]
fn partial_fragment_leaves_its_tail_unknown() {
    let mut h = sent();
    let [a, b] = two_fragments();
    // First fragment alone: its gaps, not the PSNs after 107 (109, 111 and
    // 113..=119 were received).
    h.tc(2 * MS, &a);
    assert_eq!(copied(&mut h), [102, 104, 106]);
    assert_eq!(h.csf.counters().tc_partial_fragments, 1);
    assert_eq!(h.csf.counters().tc_guarded_psns, 0);
    // Second one, also full: its gaps only.
    h.tc(2 * MS, &b);
    assert_eq!(copied(&mut h), [108, 110, 112]);
    assert_eq!(h.csf.counters().tc_partial_fragments, 2);
    // The end marker (SegmentNum 1, Last Finished PSN = 119) is final: the
    // tail after 119 is lost.
    h.tc(2 * MS, &end_marker());
    assert_eq!(copied(&mut h), (120..150).collect::<Vec<_>>());
    assert_eq!(h.csf.counters().tc_lost_psns, 6 + 30);
}

#[test]
fn final_fragment_with_segments_counts_its_tail() {
    let mut h = sent();
    h.tc(
        2 * MS,
        &report(1, 101, &[(103, 103), (105, 105), (107, 107)]),
    );
    assert_eq!(copied(&mut h), [102, 104, 106]);
    // A continuation with two segments is the last of its report.
    h.tc(2 * MS, &report(2, 107, &[(109, 109), (111, 139)]));
    let want: Vec<u32> = [108, 110].into_iter().chain(140..150).collect();
    assert_eq!(copied(&mut h), want);
    assert_eq!(h.csf.counters().tc_partial_fragments, 1);
}

#[test]
fn lost_fragment_delays_but_never_resends_received() {
    // The first fragment lost: the second one's gaps only (the PSNs before
    // its Last Finished PSN are not named at all).
    let mut h = sent();
    let [_, b] = two_fragments();
    h.tc(2 * MS, &b);
    assert_eq!(copied(&mut h), [108, 110, 112]);
    h.tc(2 * MS, &end_marker());
    assert_eq!(copied(&mut h), (120..150).collect::<Vec<_>>());
    // The second one lost: the end marker's tail starts after the highest
    // PSN shown received, which it names itself.
    let mut h = sent();
    let [a, _] = two_fragments();
    h.tc(2 * MS, &a);
    assert_eq!(copied(&mut h), [102, 104, 106]);
    h.tc(2 * MS, &end_marker());
    assert_eq!(copied(&mut h), (120..150).collect::<Vec<_>>());
    // The end marker lost: no tail this round (recovery waits for the next
    // report), nothing received re-sent.
    let mut h = sent();
    let [a, b] = two_fragments();
    h.tc(2 * MS, &a);
    h.tc(2 * MS, &b);
    assert_eq!(copied(&mut h), [102, 104, 106, 108, 110, 112]);
    // The next report, one SRTT later: still 120.. missing.
    h.tc(4 * MS, &report(4, 119, &[]));
    let mut want: Vec<u32> = (120..150).collect();
    assert_eq!(copied(&mut h), want);
    // Reordered: the second fragment first, the first one is then old and
    // ignored; the marker completes the report.
    let mut h = sent();
    let [a, b] = two_fragments();
    h.tc(2 * MS, &b);
    h.tc(2 * MS, &a);
    h.tc(2 * MS, &end_marker());
    want = [108, 110, 112].into_iter().chain(120..150).collect();
    assert_eq!(copied(&mut h), want);
    assert_eq!(h.csf.counters().tc_reports_duplicate, 1);
}

#[test]
fn report_ending_on_a_full_fragment_leaves_the_rest_unknown() {
    // The CRF had more segments than a report carries: the report ends on a
    // full fragment and nothing after it is re-sent, however old.
    let mut h = sent();
    h.tc(
        2 * MS,
        &report(1, 101, &[(103, 103), (105, 105), (107, 107)]),
    );
    h.tc(
        2 * MS,
        &report(2, 107, &[(109, 109), (111, 111), (113, 113)]),
    );
    h.tc(
        2 * MS,
        &report(3, 113, &[(115, 115), (117, 117), (119, 119)]),
    );
    h.tc(
        2 * MS,
        &report(4, 119, &[(121, 121), (123, 123), (125, 125)]),
    );
    let want: Vec<u32> = (102..125).step_by(2).collect();
    assert_eq!(copied(&mut h), want);
    assert_eq!(h.csf.counters().tc_partial_fragments, 4);
    assert_eq!(h.csf.counters().tc_guarded_psns, 0);
}

/// With `rtt_derived`, the timings that depend on the path follow each
/// SRTT: the CRF's batching time (SRTT/4, at most 5 ms), the T/C ACK
/// timeout (4 SRTT) and a response flow's give-up age (8 SRTT), the last
/// two at least 100 ms; without it they stay as set.
#[test]
fn tc_timings_follow_the_srtt() {
    let derived = CsfParams {
        rtt_derived: true,
        give_up_after: 1,
        ..params()
    }
    .with_rtt(10 * MS);
    let mut h: H<16, 4096> = H::new(derived, None);
    let p = *h.csf.params();
    assert_eq!(
        (p.tc_batch_time, p.tc_ack_timeout, p.give_up_after),
        (2_500_000, 100 * MS, 100 * MS)
    );
    h.csf.set_srtt(40 * MS);
    let p = *h.csf.params();
    assert_eq!(
        (p.tc_batch_time, p.tc_ack_timeout, p.give_up_after),
        (5 * MS, 160 * MS, 320 * MS)
    );
    let mut fixed: H<16, 4096> = H::new(params(), None);
    fixed.csf.set_srtt(40 * MS);
    assert_eq!(*fixed.csf.params(), params());
}

/// Both recoveries (`recovery both`): the CRF requests as well, so the end
/// of a burst gets its tail notice, once, beside the T/C answers. Before
/// (stop 52) selective repeat turned the notice off and a lost tail waited
/// for the RDMA timer when the guarded tail did not cover it (rping in
/// `both`: 11 rxe timeouts against 1-2 with coded recovery alone): 0
/// notices here.
#[test]
fn both_recoveries_send_the_tail_notice() {
    let p = CsfParams {
        tail_info: true,
        ..params()
    };
    let mut h: H<16, 4096> = H::new(p, Some(cfg(1, 8, 0, 200)));
    for i in 0..3u32 {
        h.src(i as u64 * 1000, 100 + i, 1, &payload(100 + i, 60));
    }
    h.timer(10 * MS);
    let r = h.reps();
    let n: Vec<_> = r.iter().filter(|x| x.is_tail_notice()).collect();
    assert_eq!(n.len(), 1, "{r:?}");
    assert_eq!((n[0].block_start, n[0].k), (Psn::new(100), 3));
    assert_eq!(h.csf.counters().tail_infos, 1);
    // The T/C answer still comes: PSN 102 reported lost.
    h.tc(11 * MS, &report(1, 101, &[]));
    assert_eq!(copied(&mut h), vec![102]);
    h.timer(100 * MS);
    assert!(h.reps().iter().all(|x| !x.is_tail_notice()), "once a burst");
    assert_eq!(h.csf.counters().tail_infos, 1);
}
