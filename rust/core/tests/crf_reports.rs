//! LOSS_REPORT and T/C AETH reports.

mod crf_util;

use crem_core::engine::crf::TcThresholds;
use crem_core::engine::MS;
use crem_core::psn::Psn;
use crem_core::wire::{self, LossReport, Message, Segment, TcAethReport};
use crf_util::*;

fn loss_reports(msgs: &[Vec<u8>]) -> Vec<LossReport> {
    msgs.iter()
        .filter_map(|m| match wire::decode(m) {
            Ok(Message::LossReport(r)) => Some(r),
            _ => None,
        })
        .collect()
}

fn tc_reports(msgs: &[Vec<u8>]) -> Vec<TcAethReport> {
    msgs.iter()
        .filter_map(|m| match wire::decode(m) {
            Ok(Message::TcAeth(r)) => Some(r),
            _ => None,
        })
        .collect()
}

fn pkt(p: u32) -> Vec<u8> {
    send_packet(Psn::new(p), 30)
}

#[test]
fn loss_report_counts_one_interval() {
    let mut rig = Rig::new(base_cfg());
    let fc = cauchy(1, 4, 1, 80);
    rig.crf.accept_config(fc);
    let p: Vec<Option<Vec<u8>>> = (0..8).map(|q| Some(pkt(q))).collect();
    let csf = Csf::new(fc, 0, p.clone());
    rig.at(MS);
    // Block 0: 1 lost and restored; block 1: 5 and 6 lost (unrecoverable
    // with m = 1). CE on 0 and on one repair.
    for q in [0u32, 2, 3, 4, 7] {
        rig.source(q, p[q as usize].as_ref().unwrap(), q == 0);
    }
    rig.repair_bytes(&csf.ordinary(0)[0], true);
    rig.repair_bytes(&csf.ordinary(1)[0], false);
    rig.advance(MS + 10 * MS - 1);
    assert!(loss_reports(&rig.sent()).is_empty());
    rig.advance(MS + 10 * MS);
    let sent = rig.sent();
    let r = loss_reports(&sent);
    assert_eq!(r.len(), 1);
    let r = r[0];
    assert_eq!(r.flow_id, FLOW);
    assert_eq!(r.interval_us, 10_000);
    assert_eq!(r.expected, 8);
    assert_eq!(r.received, 5, "before restoration");
    assert_eq!(r.restored, 1, "counted apart");
    assert_eq!(r.incomplete_blocks, 1);
    assert_eq!(r.ce_marked, 1);
    assert_eq!(r.repairs_received, 2);
    assert_eq!(r.repairs_ce_marked, 1);
    assert_eq!(rig.crf.counters().loss_reports, 1);
}

#[test]
fn loss_report_every_srtt_while_active_then_idle() {
    let mut rig = Rig::new(base_cfg());
    let mut t = 0;
    for q in 0..30u32 {
        rig.at(t);
        rig.source(q, &pkt(q), false);
        t += MS;
    }
    rig.advance(29 * MS);
    let n = loss_reports(&rig.sent()).len();
    assert_eq!(n, 2, "at 10 and 20 ms");
    rig.advance(100 * MS);
    let r = loss_reports(&rig.sent());
    assert_eq!(r.len(), 1, "the last active interval, then silence");
    assert_eq!(rig.crf.next_deadline(), None, "idle flow: no timer");
    // Activity resumes the reports.
    rig.at(200 * MS);
    rig.source(30, &pkt(30), false);
    rig.advance(211 * MS);
    let r = loss_reports(&rig.sent());
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].expected, 1);
    assert_eq!(r[0].interval_us, 10_000);
}

#[test]
fn read_span_not_expected() {
    let mut rig = Rig::new(base_cfg());
    rig.source(0, &pkt(0), false);
    rig.source(1, &read_request(Psn::new(1), 3 * 1024), false);
    rig.source(4, &pkt(4), false);
    rig.advance(20 * MS);
    let r = loss_reports(&rig.sent());
    assert_eq!(r[0].expected, 3);
    assert_eq!(r[0].received, 3);
}

fn tc_rig(c: u32, t: u64) -> Rig {
    let mut cfg = base_cfg();
    cfg.tc = Some(TcThresholds {
        t_thresh: t,
        c_thresh: c,
    });
    Rig::new(cfg)
}

fn seg(l: u32, r: u32) -> Segment {
    Segment {
        left: Psn::new(l),
        right: Psn::new(r),
    }
}

#[test]
fn tc_count_trigger_with_segments() {
    let mut rig = tc_rig(6, 100 * MS);
    for q in [100u32, 101, 102, 105, 106, 109] {
        rig.source(q, &pkt(q), false);
    }
    let sent = rig.sent();
    let r = tc_reports(&sent);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].flow_id, FLOW);
    assert_eq!(r[0].seq, 0);
    let f = r[0].fragment;
    assert_eq!(f.last_finished(), Psn::new(102));
    assert_eq!(f.segment_num(), 3);
    assert_eq!(f.segments(), &[seg(105, 106), seg(109, 109)]);
    // The gap is filled: the next report is cumulative.
    for q in [103u32, 104, 107, 108, 110, 111] {
        rig.source(q, &pkt(q), false);
    }
    let sent = rig.sent();
    let r = tc_reports(&sent);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].seq, 1);
    assert_eq!(r[0].fragment.last_finished(), Psn::new(111));
    assert_eq!(r[0].fragment.segment_num(), 1);
    assert_eq!(rig.crf.counters().tc_reports, 2);
}

#[test]
fn tc_time_trigger() {
    let mut rig = tc_rig(1000, 2 * MS);
    rig.at(5 * MS);
    rig.source(0, &pkt(0), false);
    rig.source(2, &pkt(2), false);
    assert_eq!(rig.crf.next_deadline(), Some(5 * MS + MS));
    rig.advance(7 * MS - 1);
    assert!(tc_reports(&rig.sent()).is_empty());
    rig.advance(7 * MS);
    let sent = rig.sent();
    let r = tc_reports(&sent);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].fragment.last_finished(), Psn::new(0));
    assert_eq!(r[0].fragment.segments(), &[seg(2, 2)]);
    // No packets: no batch, no time trigger.
    rig.advance(50 * MS);
    assert!(tc_reports(&rig.sent()).is_empty());
}

#[test]
fn tc_many_segments_use_continuation_fragments() {
    let mut rig = tc_rig(1000, MS);
    rig.crf.set_hold_time(0);
    // 0, then every other PSN: 10 segments after the continuous one.
    rig.source(0, &pkt(0), false);
    for i in 1..=10u32 {
        rig.source(2 * i, &pkt(2 * i), false);
    }
    rig.advance(2 * MS);
    let sent = rig.sent();
    let r = tc_reports(&sent);
    assert_eq!(r.len(), 4);
    assert_eq!(r[0].fragment.last_finished(), Psn::new(0));
    assert_eq!(r[0].fragment.segments(), &[seg(2, 2), seg(4, 4), seg(6, 6)]);
    assert_eq!(r[1].fragment.last_finished(), Psn::new(6));
    assert_eq!(
        r[1].fragment.segments(),
        &[seg(8, 8), seg(10, 10), seg(12, 12)]
    );
    assert_eq!(r[3].fragment.segments(), &[seg(20, 20)]);
    let seqs: Vec<u16> = r.iter().map(|x| x.seq).collect();
    assert_eq!(seqs, vec![0, 1, 2, 3]);
    // Every gap is reported exactly once across the fragments.
    let gaps: Vec<u32> = r
        .iter()
        .flat_map(|x| x.fragment.lost_ranges().collect::<Vec<_>>())
        .flat_map(|g| g.iter().map(|p| p.value()).collect::<Vec<_>>())
        .collect();
    assert_eq!(gaps, (1..=10).map(|i| 2 * i - 1).collect::<Vec<_>>());
}

#[test]
fn tc_segment_overflow_is_counted() {
    let mut rig = tc_rig(10_000, MS);
    rig.crf.set_hold_time(0);
    rig.source(0, &pkt(0), false);
    for i in 1..=30u32 {
        rig.source(2 * i, &pkt(2 * i), false);
    }
    rig.advance(2 * MS);
    let sent = rig.sent();
    let r = tc_reports(&sent);
    assert_eq!(r.len(), 4, "fragment limit");
    assert!(rig.crf.counters().tc_segments_omitted >= 16 - 12);
}

#[test]
fn tc_restored_and_absent_count_as_received() {
    let mut rig = tc_rig(1000, MS);
    let fc = cauchy(1, 4, 1, 80);
    rig.crf.accept_config(fc);
    let p: Vec<Option<Vec<u8>>> = (0..4).map(|q| Some(pkt(q))).collect();
    let csf = Csf::new(fc, 0, p.clone());
    rig.source(0, p[0].as_ref().unwrap(), false);
    rig.source(2, p[2].as_ref().unwrap(), false);
    rig.source(3, p[3].as_ref().unwrap(), false);
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    rig.source(4, &read_request(Psn::new(4), 2048), false);
    rig.source(6, &pkt(6), false);
    rig.advance(2 * MS);
    let sent = rig.sent();
    let r = tc_reports(&sent);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].fragment.last_finished(), Psn::new(6));
    assert_eq!(r[0].fragment.segment_num(), 1);
}

#[test]
fn tc_thresholds_from_rate() {
    let t = TcThresholds::from_rate(2_000_000, 8 * MS);
    assert_eq!(t.t_thresh, 2 * MS);
    assert_eq!(t.c_thresh, 4000);
}

/// With `tc_follows`, the T/C AETH thresholds are derived from the SRTT and
/// the rate the LOSS_REPORT intervals measure, not from the hint they start
/// with: 2 000 packets/s at SRTT 10 ms gives T_thresh 2.5 ms and C_thresh 5;
/// a 40 ms SRTT, T_thresh 5 ms (the cap) and C_thresh 10; a faster burst is
/// taken at once, a slower interval pulls the rate down by an eighth.
#[test]
fn tc_thresholds_follow_the_measured_rate_and_srtt() {
    let mut cfg = base_cfg();
    cfg.tc = Some(TcThresholds::from_rate(10_000, 10 * MS));
    cfg.tc_follows = true;
    let mut r = Rig::new(cfg);
    assert_eq!(r.crf.config().tc.map(|t| t.c_thresh), Some(25));
    assert_eq!(r.crf.rate_pps(), 0);
    // 2 000 packets/s for 50 ms: five report periods.
    for p in 0..100u32 {
        r.at(u64::from(p) * MS / 2);
        r.source(p, &pkt(p), false);
    }
    r.advance(50 * MS);
    assert!(!loss_reports(&r.sent()).is_empty());
    assert_eq!(r.crf.rate_pps(), 2_000);
    let tc = r.crf.config().tc.unwrap();
    assert_eq!((tc.t_thresh, tc.c_thresh), (2_500_000, 5));
    r.crf.set_rtt(40 * MS, 40 * MS);
    let tc = r.crf.config().tc.unwrap();
    assert_eq!((tc.t_thresh, tc.c_thresh), (5 * MS, 10));
    // A burst at 20 000 packets/s for 50 ms: its first 40 ms interval is
    // taken at once (C_thresh 100 at 5 ms), then the interval of its last
    // 10 ms and 30 ms idle (5 000/s) pulls the rate an eighth of the way.
    let t0 = r.now + 100 * MS;
    for i in 0..1000u32 {
        r.at(t0 + u64::from(i) * 50_000);
        r.source(100 + i, &pkt(100 + i), false);
        if i == 799 {
            r.advance(t0 + 40 * MS);
            assert_eq!(r.crf.rate_pps(), 20_000);
            assert_eq!(r.crf.config().tc.map(|t| t.c_thresh), Some(100));
        }
    }
    r.advance(t0 + 80 * MS);
    assert_eq!(r.crf.rate_pps(), 20_000 - 15_000 / 8);
    assert_eq!(r.crf.config().tc.map(|t| t.c_thresh), Some(90));
}

/// Without `tc_follows` the configured thresholds stay.
#[test]
fn tc_thresholds_stay_unless_they_follow() {
    let mut cfg = base_cfg();
    let th = TcThresholds::from_rate(10_000, 10 * MS);
    cfg.tc = Some(th);
    let mut r = Rig::new(cfg);
    for p in 0..100u32 {
        r.at(u64::from(p) * MS / 2);
        r.source(p, &pkt(p), false);
    }
    r.advance(50 * MS);
    r.crf.set_rtt(40 * MS, 40 * MS);
    assert_eq!(r.crf.rate_pps(), 2_000);
    assert_eq!(r.crf.config().tc, Some(th));
}
