//! Which source copies the CRF keeps: the sources of blocks still in
//! recovery and those near a gap whose block is not known yet, not
//! everything after the oldest of them (crem-sim at 10 Gbit/s × 20 ms kept
//! a round trip of sources behind one coded retransmission: 0.9 to 1.7
//! BDP; docs/perf.md).

mod crf_util;

use crem_core::psn::Psn;
use crem_core::wire::RequestKind;
use crf_util::*;

fn pkts(n: u32) -> Vec<Option<Vec<u8>>> {
    (0..n).map(|p| Some(send_packet(Psn::new(p), 60))).collect()
}

/// These tests are about the copies kept for decoding: without those kept
/// a quarter window longer for replaying resend passes (`crf_replay.rs`).
fn decoding_only() -> crem_core::engine::crf::CrfConfig {
    let mut c = base_cfg();
    c.replay = false;
    c
}

/// The PSNs whose sources the host keeps, ascending.
fn kept(rig: &Rig) -> Vec<u32> {
    let mut v: Vec<u32> = rig
        .host
        .sources
        .values()
        .map(|b| {
            crem_core::roce::Bth::parse(b)
                .expect("a kept source")
                .psn
                .value()
        })
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn a_block_in_recovery_keeps_only_its_own_sources() {
    let mut rig = Rig::new(decoding_only());
    let cfg = cauchy(1, 4, 1, 80);
    assert!(rig.crf.accept_config(cfg));
    let p = pkts(64);
    let mut csf = Csf::new(cfg, 0, p.clone());
    // Block 0 loses PSNs 1 and 2; its one repair cannot restore both.
    for q in [0, 3] {
        rig.source(q, p[q as usize].as_ref().unwrap(), false);
    }
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    // Fifteen complete blocks follow, with their repairs.
    for b in 1..16usize {
        for q in 4 * b as u32..4 * b as u32 + 4 {
            rig.source(q, p[q as usize].as_ref().unwrap(), false);
        }
        rig.repair_bytes(&csf.ordinary(b)[0], false);
    }
    rig.advance(rig.now + 2 * 1_000_000);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 1, "block 0 is requested");
    assert!(matches!(reqs[0].kind, RequestKind::Block(_)));
    // While its answer is on the way, the CRF keeps block 0's two sources
    // and the last k − 1 (a block of the future may still hold them), not
    // the 60 sources since block 0 (before: 0, 3 and 4 to 63).
    assert_eq!(kept(&rig), vec![0, 3, 61, 62, 63]);
    for a in csf.answer(&reqs[0]) {
        rig.repair_bytes(&a, false);
    }
    assert_eq!(rig.crf.counters().restored, 2);
    assert_eq!(kept(&rig), vec![61, 62, 63]);
    // H (1 ms) ran out first: 1 and 2 were delivered late.
    let mut d = rig.host.delivered_psns();
    d.sort_unstable();
    assert_eq!(d, (0..64).collect::<Vec<_>>());
}

#[test]
fn a_gap_of_no_known_block_keeps_its_neighbourhood() {
    // m = 0: no repairs, so the gap's block is not known until the answer
    // to its PSN-range request names it. Any block holding PSN 20 lies
    // within 17..=23 (k = 4): those sources are kept, the rest goes.
    let mut rig = Rig::new(decoding_only());
    let cfg = cauchy(1, 4, 0, 80);
    assert!(rig.crf.accept_config(cfg));
    let p = pkts(64);
    let mut csf = Csf::new(cfg, 0, p.clone());
    for q in (0..64).filter(|&q| q != 20) {
        rig.source(q, p[q as usize].as_ref().unwrap(), false);
    }
    // Before: 17 to 63, everything from the gap's reach on.
    assert_eq!(kept(&rig), vec![17, 18, 19, 21, 22, 23, 61, 62, 63]);
    rig.advance(rig.now + 2 * 1_000_000);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 1);
    assert!(matches!(reqs[0].kind, RequestKind::Ranges(_)));
    for a in csf.answer(&reqs[0]) {
        rig.repair_bytes(&a, false);
    }
    assert_eq!(rig.crf.counters().restored, 1);
    assert_eq!(kept(&rig), vec![61, 62, 63]);
}

/// An evicted block's sources, and late arrivals, are dropped once no gap
/// needs them (before the review of stop 44 they stayed until the window
/// slid past them: the sweep had passed them).
#[test]
fn an_evicted_block_lets_its_sources_go() {
    let mut rig = Rig::new(decoding_only());
    let cfg = cauchy(1, 4, 1, 80);
    assert!(rig.crf.accept_config(cfg));
    let p = pkts(128);
    let csf = Csf::new(cfg, 0, p.clone());
    // 17 blocks lose their positions 1 and 2 and are learned from their
    // one repair: the CRF holds 16, so block 0 is evicted.
    for b in 0..17usize {
        for q in [4 * b as u32, 4 * b as u32 + 3] {
            rig.source(q, p[q as usize].as_ref().unwrap(), false);
        }
        rig.repair_bytes(&csf.ordinary(b)[0], false);
    }
    assert!(rig.crf.counters().blocks_evicted >= 1);
    // RDMA resends block 0's two; clean traffic follows.
    for q in [1, 2] {
        rig.source(q, p[q as usize].as_ref().unwrap(), false);
    }
    for q in 68..128 {
        rig.source(q, p[q as usize].as_ref().unwrap(), false);
    }
    let k = kept(&rig);
    assert!(k.iter().all(|&q| q >= 4), "{k:?}");
}
