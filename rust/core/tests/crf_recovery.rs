//! Incompleteness, repair requests (block and PSN-range forms), rounds,
//! fallback, ICRC failures, eviction, READ spans, configurations.

mod crf_util;

use crem_core::engine::crf::{Crf, CrfConfig, SourceVerdict};
use crem_core::engine::MS;
use crem_core::psn::{Psn, PsnRange};
use crem_core::wire::{Bitmap256, Repair, RequestKind};
use crf_util::*;

fn pkts(n: u32) -> Vec<Option<Vec<u8>>> {
    (0..n).map(|p| Some(send_packet(Psn::new(p), 60))).collect()
}

fn bits(v: &[usize]) -> Bitmap256 {
    v.iter().copied().collect()
}

fn setup(k: u8, m: u8, n: u32) -> (Rig, Csf, Vec<Option<Vec<u8>>>) {
    let mut rig = Rig::new(base_cfg());
    let cfg = cauchy(1, k, m, 80);
    assert!(rig.crf.accept_config(cfg));
    let p = pkts(n);
    let csf = Csf::new(cfg, 0, p.clone());
    (rig, csf, p)
}

fn send(rig: &mut Rig, p: &[Option<Vec<u8>>], psns: impl IntoIterator<Item = u32>) {
    for q in psns {
        rig.source(q, p[q as usize].as_ref().unwrap(), false);
    }
}

#[test]
fn packet_beyond_block_triggers_after_allowance() {
    let (mut rig, csf, p) = setup(4, 2, 8);
    send(&mut rig, &p, [2, 3]);
    rig.repair_bytes(&csf.ordinary(0)[0], false); // R0 without LAST; R1 lost
    rig.advance(10 * MS);
    assert!(requests(&rig.sent()).is_empty(), "not triggered yet");
    rig.at(20 * MS);
    send(&mut rig, &p, [4]);
    rig.advance(21 * MS - 1);
    assert!(
        requests(&rig.sent()).is_empty(),
        "within the reordering allowance"
    );
    rig.advance(21 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 1);
    let RequestKind::Block(b) = reqs[0].kind else {
        panic!()
    };
    assert_eq!(b.lost, bits(&[0, 1]));
    assert_eq!((b.repairs_held, b.suggested_m), (1, 1));
}

#[test]
fn late_source_within_allowance_avoids_request() {
    let (mut rig, csf, p) = setup(4, 1, 8);
    send(&mut rig, &p, [0, 2, 3]);
    // R0 lost too; the block is learned from nothing, so only the gap is
    // there: a packet beyond the block plus the allowance, but 1 arrives
    // in time.
    send(&mut rig, &p, [4, 5]);
    rig.at(500_000);
    send(&mut rig, &p, [1]);
    rig.advance(50 * MS);
    assert!(requests(&rig.sent()).is_empty());
    assert_eq!(rig.host.delivered_psns(), (0..6).collect::<Vec<_>>());
    let _ = csf;
}

#[test]
fn range_form_when_no_repair_seen_m0() {
    // m = 0: nothing to wait for; the gap is requested by PSN range after
    // the allowance, answered with RETX, restored.
    let (mut rig, mut csf, p) = setup(8, 0, 8);
    send(&mut rig, &p, [0, 1, 2, 5, 6, 7]);
    rig.advance(MS - 1);
    assert!(requests(&rig.sent()).is_empty());
    rig.advance(MS + 2000);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 1);
    let RequestKind::Ranges(r) = reqs[0].kind else {
        panic!("RANGES form expected")
    };
    assert!(!reqs[0].fallback);
    assert_eq!(
        r.ranges.iter().collect::<Vec<_>>(),
        vec![PsnRange::new(Psn::new(3), 2)]
    );
    assert_eq!(rig.crf.counters().requests_ranges, 1);
    assert_eq!(rig.crf.counters().request_range_entries, 1);
    for a in csf.answer(&reqs[0]) {
        rig.repair_bytes(&a, false);
    }
    assert_eq!(rig.crf.counters().restored, 2);
    // H (1 ms) ran out before the answer: 5..7 went first, 3 and 4 late.
    assert_eq!(rig.host.delivered_psns(), vec![0, 1, 2, 5, 6, 7, 3, 4]);
    assert_eq!(rig.crf.counters().restored_late, 2);
    for d in &rig.host.delivered {
        assert_eq!(&d.bytes, p[d.psn as usize].as_ref().unwrap());
    }
    rig.advance(100 * MS);
    assert!(requests(&rig.sent()).is_empty());
}

#[test]
fn range_form_waits_k_positions_when_m_positive() {
    let (mut rig, _csf, p) = setup(4, 2, 16);
    send(&mut rig, &p, [0, 2, 3]);
    rig.advance(5 * MS);
    assert!(
        requests(&rig.sent()).is_empty(),
        "the block's repairs may still come"
    );
    send(&mut rig, &p, [4, 5]);
    rig.advance(7 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 1);
    assert!(matches!(reqs[0].kind, RequestKind::Ranges(_)));
}

#[test]
fn two_coded_rounds_then_fallback_then_release() {
    let (mut rig, mut csf, p) = setup(4, 1, 12);
    send(&mut rig, &p, [0, 3]);
    rig.repair_bytes(&csf.ordinary(0)[0], false); // LAST, r = 1 < 2 lost
    send(&mut rig, &p, [4, 5, 6]);
    let rt = 10 * MS + MS;
    rig.advance(MS);
    let r1 = rig.sent();
    let q1 = requests(&r1);
    assert_eq!(q1.len(), 1);
    let RequestKind::Block(b1) = q1[0].kind else {
        panic!()
    };
    assert_eq!((b1.repairs_held, b1.suggested_m), (1, 1));
    // The answer is lost. Round 2 after SRTT + allowance, new Request ID.
    rig.advance(MS + rt - 1);
    assert!(requests(&rig.sent()).is_empty());
    rig.advance(MS + rt);
    let r2 = rig.sent();
    let q2 = requests(&r2);
    assert_eq!(q2.len(), 1);
    let RequestKind::Block(b2) = q2[0].kind else {
        panic!()
    };
    assert_ne!(b1.request_id, b2.request_id);
    assert!(!q2[0].fallback);
    // Lost again: FALLBACK.
    rig.advance(MS + 2 * rt);
    let r3 = rig.sent();
    let q3 = requests(&r3);
    assert_eq!(q3.len(), 1);
    assert!(q3[0].fallback);
    let RequestKind::Block(b3) = q3[0].kind else {
        panic!()
    };
    assert_eq!(b3.lost, bits(&[1, 2]));
    assert_eq!(b3.suggested_m, 2);
    // Lost as well: the block is released to RDMA.
    rig.advance(MS + 3 * rt);
    let c = *rig.crf.counters();
    assert_eq!(c.requests_block, 2);
    assert_eq!(c.requests_fallback, 1);
    assert_eq!(c.blocks_fell_back, 1);
    assert_eq!(c.blocks_released, 1);
    assert_eq!(c.psns_abandoned, 2);
    assert_eq!(c.blocks_incomplete, 1);
    assert_eq!(rig.crf.open_blocks(), 0);
    assert!(rig.host.held.is_empty());
    // RDMA's retransmission arrives later: delivered, counted.
    assert_eq!(
        rig.source(1, p[1].as_ref().unwrap(), false),
        SourceVerdict::Deliver
    );
    assert_eq!(rig.crf.counters().sources_after_giveup, 1);
    rig.advance(MS + 10 * rt);
    assert!(requests(&rig.sent()).is_empty());
    let _ = csf.answer(&q1[0]);
}

#[test]
fn fallback_answer_restores_with_source_copy() {
    let (mut rig, mut csf, p) = setup(4, 1, 12);
    send(&mut rig, &p, [0, 3]);
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    send(&mut rig, &p, [4]);
    let rt = 11 * MS;
    rig.advance(MS + 2 * rt);
    let sent = rig.sent();
    let reqs = requests(&sent);
    let fb = reqs.iter().find(|r| r.fallback).expect("fallback request");
    for a in csf.answer(fb) {
        rig.repair_bytes(&a, false);
    }
    assert_eq!(rig.crf.counters().restored, 2);
    assert_eq!(rig.crf.counters().repairs_source_copy, 2);
    assert_eq!(rig.crf.open_blocks(), 0);
    assert_eq!(rig.crf.counters().blocks_completed, 1);
}

#[test]
fn without_fallback_the_block_is_released_after_two_rounds() {
    let mut cfg = base_cfg();
    cfg.fallback_source_copy = false;
    let mut rig = Rig::new(cfg);
    let fc = cauchy(1, 4, 1, 80);
    rig.crf.accept_config(fc);
    let p = pkts(8);
    let csf = Csf::new(fc, 0, p.clone());
    send(&mut rig, &p, [0, 3]);
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    rig.advance(MS + 2 * 11 * MS);
    let c = *rig.crf.counters();
    assert_eq!(c.requests_block, 2);
    assert_eq!(c.requests_fallback, 0);
    assert_eq!(c.blocks_released, 1);
}

#[test]
fn coded_retx_off_sends_no_request() {
    let mut cfg = base_cfg();
    cfg.coded_retx = false;
    let mut rig = Rig::new(cfg);
    let fc = cauchy(1, 4, 1, 80);
    rig.crf.accept_config(fc);
    let p = pkts(12);
    let csf = Csf::new(fc, 0, p.clone());
    send(&mut rig, &p, [0, 3, 4, 6, 7, 8, 9, 10]);
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    rig.advance(100 * MS);
    assert!(requests(&rig.sent()).is_empty());
    assert_eq!(rig.crf.counters().blocks_released, 1);
    assert!(rig.crf.counters().psns_abandoned >= 3);
}

#[test]
fn ranges_two_rounds_then_fallback_then_give_up() {
    let (mut rig, _csf, p) = setup(8, 0, 16);
    send(&mut rig, &p, [0, 2]);
    let rt = 11 * MS;
    rig.advance(MS + 2000);
    rig.advance(MS + rt + 4000);
    rig.advance(MS + 2 * rt + 6000);
    rig.advance(MS + 3 * rt + 8000);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 3);
    assert!(!reqs[0].fallback && !reqs[1].fallback && reqs[2].fallback);
    assert!(reqs
        .iter()
        .all(|r| matches!(r.kind, RequestKind::Ranges(_))));
    assert_eq!(rig.crf.counters().psns_abandoned, 1);
    assert_eq!(rig.crf.counters().requests_fallback, 1);
}

#[test]
fn icrc_failure_requests_fallback_for_that_position() {
    let (mut rig, mut csf, p) = setup(4, 1, 8);
    send(&mut rig, &p, [0, 1, 3]);
    let mut forged = csf.ordinary(0)[0].clone();
    let n = forged.len();
    forged[n - 80 + 2 + 30] ^= 0x5a; // inside the payload of the symbol
    rig.repair_bytes(&forged, false);
    let c = *rig.crf.counters();
    assert_eq!(c.icrc_failures, 1);
    assert_eq!(c.restored, 0);
    assert_eq!(c.requests_fallback, 1);
    assert_eq!(c.requests_fallback_icrc, 1);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].fallback);
    let RequestKind::Block(b) = reqs[0].kind else {
        panic!()
    };
    assert_eq!(b.lost, bits(&[2]));
    // The bad packet was not delivered; the Source Copy is.
    assert!(!rig.host.delivered.iter().any(|d| d.psn == 2));
    for a in csf.answer(&reqs[0]) {
        rig.repair_bytes(&a, false);
    }
    let d = rig.host.delivered.iter().find(|d| d.psn == 2).unwrap();
    assert_eq!(&d.bytes, p[2].as_ref().unwrap());
    assert_eq!(rig.crf.open_blocks(), 0);
}

/// The kernel cannot rebuild a packet of a flow it has seen no packet of
/// (no UDP source port to put in the header): such a restoration is counted
/// apart, is no ICRC failure and asks for no Source Copy, which would fare
/// no better.
#[test]
fn restoration_without_a_header_is_no_icrc_failure() {
    let (mut rig, csf, p) = setup(4, 1, 8);
    rig.host.header_known = false;
    send(&mut rig, &p, [0, 1, 3]);
    for r in csf.ordinary(0) {
        rig.repair_bytes(&r, false);
    }
    let c = *rig.crf.counters();
    assert_eq!(c.restore_no_header, 1);
    assert_eq!(c.icrc_failures, 0);
    assert_eq!(c.restored, 0);
    assert_eq!(c.requests_fallback_icrc, 0);
    assert!(requests(&rig.sent()).iter().all(|r| !r.fallback));
    assert!(!rig.host.delivered.iter().any(|d| d.psn == 2));
}

/// A receiver flow made after its flow's packets passed (its first HELLO
/// lost: stop 51's e2e-burst, a READ-response flow) learns their blocks
/// from the REPAIRs and finds every position empty. It can rebuild none of
/// them (no packet of the flow seen), so it asks for none: before, it asked
/// for all 16 of each block, two coded rounds and a Source Copy fallback,
/// 58 coded symbols and 9 copies for packets that had been delivered.
#[test]
fn blocks_of_a_flow_never_seen_are_not_requested() {
    let (mut rig, mut csf, _p) = setup(16, 2, 32);
    rig.host.header_known = false;
    for b in 0..2 {
        for r in csf.ordinary(b) {
            rig.repair_bytes(&r, false);
        }
    }
    let mut asked = 0;
    for _ in 0..4 {
        let t = rig.now + 50 * MS;
        rig.advance(t);
        let sent = rig.sent();
        let reqs = requests(&sent);
        asked += reqs.len();
        let answers: Vec<_> = reqs.iter().flat_map(|r| csf.answer(r)).collect();
        for a in answers {
            rig.repair_bytes(&a, false);
        }
    }
    assert_eq!(asked, 0);
    let c = *rig.crf.counters();
    assert_eq!(c.blocks_unrestorable, 2);
    assert_eq!(c.psns_abandoned, 32);
    assert_eq!(rig.crf.open_blocks(), 0);
    // The same blocks with a header known: both are asked for.
    let (mut rig, csf, _p) = setup(16, 2, 32);
    for b in 0..2 {
        for r in csf.ordinary(b) {
            rig.repair_bytes(&r, false);
        }
    }
    rig.advance(50 * MS);
    assert!(requests(&rig.sent()).len() >= 2);
}

#[test]
fn malformed_decode_is_counted() {
    let (mut rig, csf, p) = setup(4, 1, 8);
    send(&mut rig, &p, [0, 1, 3]);
    let mut forged = csf.ordinary(0)[0].clone();
    let n = forged.len();
    forged[n - 1] ^= 1; // the padding: not a valid source symbol
    rig.repair_bytes(&forged, false);
    assert_eq!(rig.crf.counters().restore_malformed, 1);
    assert_eq!(rig.crf.counters().requests_fallback_icrc, 1);
}

#[test]
fn eviction_at_capacity() {
    // 17 incomplete blocks in a 16-block CRF: the oldest is evicted and its
    // losses go back to PSN-range tracking.
    let (mut rig, csf, p) = setup(4, 2, 17 * 4 + 4);
    for b in 0..17u32 {
        send(&mut rig, &p, [4 * b + 2, 4 * b + 3]);
        rig.repair_bytes(&csf.ordinary(b as usize)[0], false);
    }
    assert_eq!(rig.crf.open_blocks(), 16);
    assert_eq!(rig.crf.counters().blocks_evicted, 1);
    assert_eq!(rig.crf.counters().blocks_learned, 17);
    rig.advance(3 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    let ranges: Vec<_> = reqs
        .iter()
        .filter_map(|r| match r.kind {
            RequestKind::Ranges(x) => Some(x.ranges.iter().collect::<Vec<_>>()),
            _ => None,
        })
        .collect();
    assert!(
        ranges.iter().flatten().any(|r| r.start == Psn::new(0)),
        "evicted block's losses requested by range: {ranges:?}"
    );
    assert!(rig.crf.open_blocks() <= 16);
}

#[test]
fn read_request_span_is_not_loss() {
    let mut rig = Rig::new(base_cfg());
    rig.crf.accept_config(cauchy(1, 8, 0, 1200));
    rig.source(0, &send_packet(Psn::new(0), 10), false);
    // READ of 4096 octets at MTU 1024: PSNs 1..=4, 2..=4 absent here.
    rig.source(1, &read_request(Psn::new(1), 4096), false);
    assert_eq!(
        rig.source(5, &send_packet(Psn::new(5), 10), false),
        SourceVerdict::Deliver
    );
    rig.advance(50 * MS);
    assert!(requests(&rig.sent()).is_empty());
    assert_eq!(rig.crf.counters().read_absent, 3);
    assert_eq!(rig.crf.counters().held, 0);
}

#[test]
fn read_span_beyond_the_window_is_remembered() {
    let mut rig = Rig::new(base_cfg());
    rig.crf.accept_config(cauchy(1, 8, 0, 1200));
    rig.source(0, &send_packet(Psn::new(0), 10), false);
    // 3000 PSNs: far beyond a 1024-PSN window.
    rig.source(1, &read_request(Psn::new(1), 3000 * 1024), false);
    let v = rig.source(3001, &send_packet(Psn::new(3001), 10), false);
    assert_eq!(v, SourceVerdict::Deliver);
    rig.advance(50 * MS);
    assert!(requests(&rig.sent()).is_empty());
    assert_eq!(rig.crf.counters().psns_lost_window, 0);
}

#[test]
fn info_marks_absent_positions() {
    // Positions 1 and 2 absent at the CSF (e.g. a READ it saw, with an MTU
    // we did not know): the RANGES request is answered with INFO.
    let mut cfg = base_cfg();
    cfg.rdma_mtu = 0;
    let mut rig = Rig::new(cfg);
    let fc = cauchy(1, 4, 0, 80);
    rig.crf.accept_config(fc);
    let mut p = pkts(8);
    p[1] = None;
    p[2] = None;
    let mut csf = Csf::new(fc, 0, p.clone());
    send(&mut rig, &p, [0, 3, 4]);
    rig.advance(2 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 1);
    let ans = csf.answer(&reqs[0]);
    assert_eq!(ans.len(), 1);
    assert!(Repair::decode(&ans[0]).unwrap().info);
    rig.repair_bytes(&ans[0], false);
    assert_eq!(rig.crf.counters().repairs_info, 1);
    assert_eq!(rig.crf.counters().bitmap_absent, 2);
    rig.advance(100 * MS);
    assert!(requests(&rig.sent()).is_empty());
}

#[test]
fn repairs_for_unknown_or_released_configs_are_dropped() {
    let (mut rig, csf, p) = setup(4, 1, 8);
    send(&mut rig, &p, [0, 1, 3]);
    let other = Csf::new(cauchy(2, 4, 1, 80), 0, p.clone());
    rig.repair_bytes(&other.ordinary(0)[0], false);
    assert_eq!(rig.crf.counters().drop_unknown_config, 1);
    assert!(!rig.crf.config_in_use(1));
    assert_eq!(rig.crf.blocks_using(1), 0);
    assert!(rig.crf.release_config(1));
    assert!(!rig.crf.release_config(1));
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    assert_eq!(rig.crf.counters().drop_unknown_config, 2);
    // Accept 2: now usable.
    assert!(rig.crf.accept_config(cauchy(2, 4, 1, 80)));
    rig.repair_bytes(&other.ordinary(0)[0], false);
    assert_eq!(rig.crf.counters().restored, 1);
}

#[test]
fn config_table_rules() {
    let mut rig = Rig::new(base_cfg());
    let c = &mut rig.crf;
    assert!(c.current_config().is_none());
    assert!(c.accept_config(cauchy(1, 4, 1, 80)));
    assert!(c.accept_config(cauchy(1, 4, 1, 80)), "identical: no-op");
    assert!(
        !c.accept_config(cauchy(1, 8, 1, 80)),
        "same id, other params"
    );
    assert!(!c.accept_config(cauchy(9, 0, 1, 80)), "k = 0");
    assert!(c.accept_config(cauchy(2, 8, 2, 80)));
    assert!(c.accept_config(cauchy(3, 8, 2, 80)));
    assert!(c.accept_config(cauchy(4, 8, 2, 80)));
    assert!(!c.accept_config(cauchy(5, 8, 2, 80)), "table full");
    assert_eq!(c.counters().configs_refused, 3);
    assert_eq!(c.current_config().unwrap().id, 4);
    assert!(c.release_config(4));
    assert_eq!(c.current_config().unwrap().id, 3);
    assert_eq!(c.accepted_config(2).unwrap().k, 8);
}

#[test]
fn mismatched_and_wrong_flow_repairs_are_dropped() {
    let (mut rig, csf, p) = setup(4, 1, 8);
    send(&mut rig, &p, [0, 1, 3]);
    let good = csf.ordinary(0)[0].clone();
    let mut m = Repair::decode(&good).unwrap();
    let sym = m.symbol.to_vec();
    m.flow_id = 7;
    rig.repair(&m);
    assert_eq!(rig.crf.counters().drop_wrong_flow, 1);
    m.flow_id = FLOW;
    let short = sym[..40].to_vec();
    m.symbol = &short;
    rig.repair(&m);
    assert_eq!(rig.crf.counters().drop_mismatch, 1);
    m.symbol = &sym;
    m.k = 5;
    rig.repair(&m);
    assert_eq!(rig.crf.counters().drop_mismatch, 2);
    m.k = 4;
    m.block_start = Psn::new(2); // overlaps nothing known, but conflicts later
    rig.repair(&m);
    m.block_start = Psn::new(0);
    rig.repair(&m);
    assert_eq!(rig.crf.counters().drop_inconsistent, 1);
}

#[test]
fn window_slide_releases_and_counts() {
    let (mut rig, _csf, p) = setup(4, 1, 8);
    send(&mut rig, &p, [0, 2]);
    assert_eq!(rig.crf.held(), 1);
    // A jump far ahead: the window moves, 2 is released, 1 counted lost.
    let far = send_packet(Psn::new(5000), 10);
    // 5000 itself waits (at most H) behind the positions it skipped.
    assert_eq!(rig.source(5000, &far, false), SourceVerdict::Hold);
    assert_eq!(
        rig.host.held.keys().copied().collect::<Vec<_>>(),
        vec![5000]
    );
    assert_eq!(rig.crf.counters().released_forced, 1);
    assert_eq!(rig.crf.counters().psns_lost_window, 1);
    // Old PSNs are now before the window: delivered untracked.
    rig.source(1, p[1].as_ref().unwrap(), false);
    assert_eq!(rig.crf.counters().sources_stale, 1);
    assert!(rig.host.sources.len() <= 1024);
}

#[test]
fn close_releases_everything() {
    let (mut rig, csf, p) = setup(4, 2, 8);
    send(&mut rig, &p, [0, 2, 3]);
    // A repair of block 1 (all its sources missing): held, not decodable.
    rig.repair_bytes(&csf.ordinary(1)[0], false);
    assert_eq!(rig.crf.held(), 2);
    assert_eq!(rig.crf.repairs_held(), 1);
    assert!(rig.crf.config_in_use(1));
    assert_eq!(rig.crf.blocks_using(1), 1);
    rig.crf.close(&mut rig.host);
    assert_eq!(rig.host.delivered_psns(), vec![0, 2, 3]);
    assert!(rig.host.sources.is_empty());
    assert!(rig.host.repairs.is_empty());
    assert_eq!(rig.crf.next_deadline(), None);
    assert_eq!(rig.crf.open_blocks(), 0);
}

#[test]
fn store_refusal_is_survived() {
    let (mut rig, csf, p) = setup(4, 2, 8);
    rig.host.source_cap = 1;
    send(&mut rig, &p, [0, 1, 3]);
    assert_eq!(rig.crf.counters().store_refused, 2);
    for r in csf.ordinary(0) {
        rig.repair_bytes(&r, false);
    }
    // Unknown for the decoder: 1, 2, 3 (only 0 kept) > 2 repairs.
    assert_eq!(rig.crf.counters().restored, 0);
    rig.advance(3 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    let RequestKind::Block(b) = reqs[0].kind else {
        panic!()
    };
    assert_eq!(b.lost, bits(&[1, 2, 3]));
    assert_eq!(b.repairs_held, 2);
    rig.host.repair_cap = 0;
    let mut csf = csf;
    for a in csf.answer(&reqs[0]) {
        rig.repair_bytes(&a, false);
    }
    assert_eq!(rig.crf.counters().drop_store_full, 1);
}

#[test]
fn small_engine_in_place_init() {
    let mut crf: Box<Crf<crem_core::engine::crf::Inline<1, 512, 1, 1>>> =
        Box::new(Crf::new(CrfConfig::new(3)));
    crf.init(CrfConfig::new(4));
    assert_eq!(crf.config().flow_id, 4);
    assert_eq!(crf.next_deadline(), None);
    assert_eq!(crf.deliver_next(), None);
}

#[test]
fn late_fallback_answer_still_restores_given_up_packets() {
    let (mut rig, mut csf, p) = setup(4, 1, 12);
    send(&mut rig, &p, [0, 3]);
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    send(&mut rig, &p, [4, 5, 6]);
    // Every answer lost: two coded rounds, FALLBACK, release to RDMA.
    rig.advance(MS + 4 * 11 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    let fb = *reqs.iter().find(|r| r.fallback).unwrap();
    assert_eq!(rig.crf.counters().blocks_released, 1);
    assert_eq!(rig.crf.counters().blocks_completed, 0);
    // The Source Copy answer shows up very late: RDMA still gets 1 and 2
    // sooner than from its own retransmission.
    for a in csf.answer(&fb) {
        rig.repair_bytes(&a, false);
    }
    assert_eq!(rig.crf.counters().restored, 2);
    assert_eq!(rig.crf.counters().blocks_completed, 1);
    assert_eq!(rig.crf.open_blocks(), 0);
}

/// A tail notice (INFO, LAST, Repair Session ID 0) ends a block's round:
/// the CRF requests the lost last source after the allowance, whatever
/// the flow's scheme. Before the review fix a Source Copy flow's notice
/// (scheme 0 in its header) was taken for an answer to a request and
/// ignored: 0 requests.
#[test]
fn tail_notice_draws_a_request_in_every_scheme() {
    use crem_core::engine::FecConfig;
    use crem_core::fec::Scheme;
    use crem_core::wire::FecScheme;
    for scheme in [Scheme::CauchyRs, Scheme::SourceCopy] {
        let mut rig = Rig::new(base_cfg());
        let cfg = FecConfig {
            id: 1,
            scheme,
            k: 4,
            m: 0,
            t: 80,
        };
        assert!(rig.crf.accept_config(cfg));
        for q in 0..3u32 {
            let v = rig.source(q, &send_packet(Psn::new(q), 60), false);
            assert_ne!(v, SourceVerdict::Hold);
        }
        // PSN 3, the burst's last, is lost; the notice arrives.
        let notice = Repair {
            flow_id: FLOW,
            last: true,
            info: true,
            config_id: 1,
            scheme: FecScheme::from_u8(u8::from(scheme)),
            k: 4,
            repair_index: 0,
            block_start: Psn::new(0),
            session_id: 0,
            present: bits(&[0, 1, 2, 3]),
            lost: None,
            symbol: &[],
        };
        let mut buf = vec![0u8; notice.encoded_len()];
        notice.encode(&mut buf).unwrap();
        rig.at(MS);
        rig.repair_bytes(&buf, false);
        rig.advance(3 * MS);
        let sent = rig.sent();
        let reqs = requests(&sent);
        assert_eq!(reqs.len(), 1, "{scheme:?}");
        match reqs[0].kind {
            RequestKind::Block(b) => {
                assert_eq!((b.block_start, b.k), (Psn::new(0), 4));
                assert_eq!(b.lost, bits(&[3]), "{scheme:?}");
            }
            _ => panic!("{scheme:?}: a block request"),
        }
    }
}
