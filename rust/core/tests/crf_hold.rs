//! Hold time H and in-order release.

mod crf_util;

use crem_core::engine::crf::{CrfConfig, SourceVerdict};
use crem_core::engine::MS;
use crem_core::psn::Psn;
use crf_util::*;
use proptest::prelude::*;

fn pkt(p: u32) -> Vec<u8> {
    send_packet(crem_core::psn::Psn::new(p), 40)
}

#[test]
fn gap_filled_within_h_releases_in_order() {
    let mut rig = Rig::new(base_cfg());
    for p in 0..5 {
        assert_eq!(rig.source(p, &pkt(p), false), SourceVerdict::Deliver);
    }
    for p in 6..10 {
        rig.at(10 + p as u64);
        assert_eq!(rig.source(p, &pkt(p), false), SourceVerdict::Hold);
    }
    assert_eq!(rig.crf.held(), 4);
    rig.at(100_000);
    assert_eq!(rig.source(5, &pkt(5), false), SourceVerdict::Deliver);
    assert_eq!(rig.host.delivered_psns(), (0..10).collect::<Vec<_>>());
    assert_eq!(rig.crf.held(), 0);
    assert!(rig.host.held.is_empty());
    let c = rig.crf.counters();
    assert_eq!(c.held, 4);
    assert_eq!(c.released_in_order, 4);
    assert_eq!(c.released_by_h, 0);
    // Each was held about 100 µs, less than H.
    assert!(rig.host.delivered.iter().all(|d| d.held_for < MS));
}

#[test]
fn h_expiry_releases_in_psn_order_and_late_packet_still_delivered() {
    let mut rig = Rig::new(base_cfg());
    rig.source(0, &pkt(0), false);
    // 1 lost; 2..6 arrive with 3 and 4 swapped.
    for (i, p) in [2u32, 4, 3, 5].into_iter().enumerate() {
        rig.at(100_000 * (i as u64 + 1));
        assert_eq!(rig.source(p, &pkt(p), false), SourceVerdict::Hold);
    }
    assert_eq!(rig.crf.next_deadline(), Some(100_000 + MS));
    rig.advance(100_000 + MS);
    // Packet 2's hold ran out: it goes past the gap, and 3, 4, 5 follow in
    // order (before their own deadlines): no gap remains before them.
    assert_eq!(rig.host.delivered_psns(), vec![0, 2, 3, 4, 5]);
    for d in &rig.host.delivered {
        assert!(d.held_for <= MS);
    }
    assert_eq!(rig.crf.counters().released_by_h, 1);
    assert_eq!(rig.crf.counters().released_in_order, 3);
    // The lost packet shows up late (RDMA retransmission): delivered now.
    rig.at(3 * MS);
    assert_eq!(rig.source(1, &pkt(1), false), SourceVerdict::Deliver);
    // New in-order traffic flows without holding.
    assert_eq!(rig.source(6, &pkt(6), false), SourceVerdict::Deliver);
    assert_eq!(rig.host.bogus_releases, 0);
}

#[test]
fn zero_hold_time_never_holds() {
    let mut cfg = base_cfg();
    cfg.hold_time = 0;
    let mut rig = Rig::new(cfg);
    for p in [0u32, 2, 3, 1, 7, 5, 4, 6] {
        assert_eq!(rig.source(p, &pkt(p), false), SourceVerdict::Deliver);
    }
    assert_eq!(rig.crf.counters().held, 0);
    assert_eq!(rig.crf.held(), 0);
}

#[test]
fn hold_queue_full_delivers_immediately() {
    let mut rig = Rig::new(base_cfg());
    rig.source(0, &pkt(0), false);
    let mut held = 0;
    for p in 2..400u32 {
        if rig.source(p, &pkt(p), false) == SourceVerdict::Hold {
            held += 1;
        }
    }
    assert_eq!(held, 256, "HELD capacity of TestCrf");
    assert_eq!(rig.crf.counters().hold_full, 398 - 256);
    rig.source(1, &pkt(1), false);
    assert!(rig.host.held.is_empty());
}

#[test]
fn restored_packet_fills_gap_then_successors_follow() {
    let payloads: Vec<Option<Vec<u8>>> = (0..8).map(|p| Some(pkt(p))).collect();
    let mut rig = Rig::new(base_cfg());
    let cfg = cauchy(1, 4, 1, 64);
    rig.crf.accept_config(cfg);
    let csf = Csf::new(cfg, 0, payloads.clone());
    for p in [0u32, 2, 3] {
        rig.source(p, payloads[p as usize].as_ref().unwrap(), false);
    }
    assert_eq!(rig.crf.held(), 2);
    rig.at(200_000);
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    assert_eq!(rig.host.delivered_psns(), vec![0, 1, 2, 3]);
    assert!(rig.host.delivered[1].restored);
    assert_eq!(rig.host.delivered[1].bytes, payloads[1].clone().unwrap());
    assert!(rig.host.delivered[2].held_for >= 200_000);
}

#[test]
fn restored_after_a_gap_is_held_too() {
    // Block 0 loses 1 (no repair yet); block 1 loses 5 and gets its repair
    // first: 5 is restored but held behind the gap at 1.
    let payloads: Vec<Option<Vec<u8>>> = (0..8).map(|p| Some(pkt(p))).collect();
    let mut rig = Rig::new(base_cfg());
    let cfg = cauchy(1, 4, 1, 64);
    rig.crf.accept_config(cfg);
    let csf = Csf::new(cfg, 0, payloads.clone());
    for p in [0u32, 2, 3, 4, 6, 7] {
        rig.source(p, payloads[p as usize].as_ref().unwrap(), false);
    }
    rig.repair_bytes(&csf.ordinary(1)[0], false);
    assert_eq!(rig.host.delivered_psns(), vec![0]);
    assert!(rig.host.held.get(&5).is_some_and(|h| h.1));
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    assert_eq!(rig.host.delivered_psns(), (0..8).collect::<Vec<_>>());
}

/// `holds_before`: an RDMA ACK at PSN q would overtake a held packet
/// before q (the host keeps such an ACK back, `rust/hook.rs`).
#[test]
fn holds_before_names_what_an_ack_would_overtake() {
    let mut rig = Rig::new(base_cfg());
    let hb = |rig: &Rig, q: u32| rig.crf.holds_before(Psn::new(q));
    assert!(!hb(&rig, 0), "nothing seen");
    for p in 0..5 {
        rig.source(p, &pkt(p), false);
    }
    assert!(!hb(&rig, 3) && !hb(&rig, 9), "nothing held");
    // 5 lost, 6..9 held behind it.
    for p in 6..10 {
        rig.at(10 + u64::from(p));
        rig.source(p, &pkt(p), false);
    }
    assert!(!hb(&rig, 4), "only delivered PSNs before 4");
    assert!(!hb(&rig, 5), "ACK at the gap");
    assert!(!hb(&rig, 6), "only the gap before 6");
    assert!(hb(&rig, 7), "6 is held");
    assert!(hb(&rig, 10), "just past the highest");
    assert!(hb(&rig, 5000), "far past the highest");
    // The gap fills: everything goes on, nothing is before any PSN.
    rig.source(5, &pkt(5), false);
    assert_eq!(rig.host.delivered_psns(), (0..10).collect::<Vec<_>>());
    assert!(!hb(&rig, 10));
}

/// Held packets that go on at the end of H no longer keep ACKs back; nor
/// does a gap at the PSN wrap.
#[test]
fn holds_before_after_expiry_and_across_the_wrap() {
    let top = 0xFF_FFFEu32;
    let mut rig = Rig::new(base_cfg());
    rig.source(top - 1, &pkt(top - 1), false);
    // `top` lost; 0xFFFFFF, 0, 1 held.
    for p in [top + 1, 0, 1] {
        rig.source(p, &pkt(p), false);
    }
    assert_eq!(rig.crf.held(), 3);
    assert!(!rig.crf.holds_before(Psn::new(top)));
    assert!(!rig.crf.holds_before(Psn::new(top + 1)));
    assert!(rig.crf.holds_before(Psn::new(0)), "0xFFFFFF is held");
    assert!(rig.crf.holds_before(Psn::new(2)));
    rig.advance(2 * MS);
    assert_eq!(rig.crf.held(), 0);
    assert!(!rig.crf.holds_before(Psn::new(2)));
}

#[derive(Clone, Debug)]
struct Arrival {
    psn: u32,
    at: u64,
}

fn arrivals() -> impl Strategy<Value = (Vec<Arrival>, u64)> {
    (
        proptest::collection::vec((any::<bool>(), 0u64..3_000_000), 1..150),
        0u64..2_000_000,
    )
        .prop_map(|(v, h)| {
            let mut a: Vec<Arrival> = v
                .iter()
                .enumerate()
                .filter(|(i, (lost, _))| !*lost || i % 3 == 0)
                .map(|(i, (_, jitter))| Arrival {
                    psn: i as u32,
                    at: i as u64 * 20_000 + jitter,
                })
                .collect();
            a.sort_by_key(|x| x.at);
            (a, h)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(200)))]

    /// Arbitrary losses and arrival orders: every packet is delivered
    /// exactly once, none is held longer than H, releases only for held
    /// packets, nothing stays held.
    #[test]
    fn no_packet_held_longer_than_h((arr, h) in arrivals()) {
        let mut cfg = base_cfg();
        cfg.hold_time = h;
        let mut rig = Rig::new(cfg);
        for a in &arr {
            rig.advance(a.at);
            rig.source(a.psn, &pkt(a.psn), false);
            for d in &rig.host.delivered {
                prop_assert!(d.held_for <= h, "held {} > H {}", d.held_for, h);
            }
        }
        rig.advance(10_000_000);
        prop_assert!(rig.host.held.is_empty());
        prop_assert_eq!(rig.crf.held(), 0);
        prop_assert_eq!(rig.host.bogus_releases, 0);
        let mut got = rig.host.delivered_psns();
        got.sort_unstable();
        let mut want: Vec<u32> = arr.iter().map(|a| a.psn).collect();
        want.sort_unstable();
        prop_assert_eq!(got, want);
        for d in &rig.host.delivered {
            prop_assert!(d.held_for <= h);
        }
    }

    /// `holds_before(q)` is exactly "the host holds a PSN before q", at
    /// every step of arbitrary losses and arrival orders.
    #[test]
    fn holds_before_matches_the_held_packets((arr, h) in arrivals()) {
        let mut cfg = base_cfg();
        cfg.hold_time = h;
        let mut rig = Rig::new(cfg);
        let n = arr.iter().map(|a| a.psn).max().unwrap_or(0) + 3;
        for a in &arr {
            rig.advance(a.at);
            rig.source(a.psn, &pkt(a.psn), false);
            for q in 0..n {
                let q = Psn::new(q);
                let want = rig.host.held.keys().any(|&p| Psn::new(p).is_before(q));
                prop_assert_eq!(rig.crf.holds_before(q), want, "ACK at {:?}", q);
            }
        }
    }

    /// With no loss and a hold time longer than any reordering, RDMA sees
    /// the packets in PSN order whatever the arrival order.
    #[test]
    fn reordering_within_h_is_undone((arr, _h) in arrivals()) {
        let mut cfg = base_cfg();
        cfg.hold_time = 10 * MS;
        let mut rig = Rig::new(cfg);
        let n = arr.iter().map(|a| a.psn).max().unwrap_or(0) + 1;
        let mut all: Vec<Arrival> = (0..n)
            .map(|p| arr.iter().find(|a| a.psn == p).cloned()
                .unwrap_or(Arrival { psn: p, at: p as u64 * 20_000 }))
            .map(|mut a| { a.at = if a.psn == 0 { 0 } else { a.at.max(1) }; a })
            .collect();
        all.sort_by_key(|a| a.at);
        for a in &all {
            rig.advance(a.at);
            rig.source(a.psn, &pkt(a.psn), false);
        }
        rig.advance(100 * MS);
        prop_assert_eq!(rig.host.delivered_psns(), (0..n).collect::<Vec<_>>());
        prop_assert_eq!(rig.crf.counters().released_by_h, 0);
    }
}

/// A READ response of PSNs `first..first+n`, as the responder sends it.
fn response_run(first: u32, n: u32) -> Vec<(u32, Vec<u8>)> {
    use crem_core::roce::opcode::*;
    (0..n)
        .map(|i| {
            let op = match (i, n) {
                (_, 1) => RC_READ_RESPONSE_ONLY,
                (0, _) => RC_READ_RESPONSE_FIRST,
                (i, n) if i + 1 == n => RC_READ_RESPONSE_LAST,
                _ => RC_READ_RESPONSE_MIDDLE,
            };
            let psn = crem_core::psn::Psn::new(first + i);
            let mut p = bth(op, psn).to_vec();
            p.extend((0..40u32).map(|b| b.wrapping_add(first + i) as u8));
            (first + i, finish(p))
        })
        .collect()
}

/// A responder flow: the PSNs between two READ response runs carried the
/// requester's other requests. They are guessed absent, so the next run is
/// not held for them; a gap inside a run (a lost response) still holds.
/// Without `responses`, the same gap holds what follows.
#[test]
fn responder_flow_guesses_the_gaps_between_read_runs() {
    for responses in [true, false] {
        let mut rig = Rig::new(CrfConfig {
            responses,
            ..base_cfg()
        });
        for (p, b) in response_run(100, 4) {
            assert_eq!(rig.source(p, &b, false), SourceVerdict::Deliver);
        }
        // 104 and 105 were two SENDs of the requester; a run of 3 follows.
        let run = response_run(106, 3);
        let want = if responses {
            SourceVerdict::Deliver
        } else {
            SourceVerdict::Hold
        };
        assert_eq!(
            rig.source(106, &run[0].1, false),
            want,
            "responses={responses}"
        );
        if responses {
            assert_eq!(rig.crf.counters().read_absent, 2);
            // 107 lost: 108 (the run's LAST) waits for it.
            assert_eq!(rig.source(108, &run[2].1, false), SourceVerdict::Hold);
            // An ONLY response right after the run starts no guess.
            let only = response_run(109, 1);
            assert_eq!(rig.source(109, &only[0].1, false), SourceVerdict::Hold);
            assert_eq!(rig.crf.counters().read_absent, 2);
        }
    }
}
