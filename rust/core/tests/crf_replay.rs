//! Replaying what an RDMA resend pass lost (`crf/replay.rs`): a go-back-N
//! sender resends PSNs the CRF received already; when the path loses some
//! of them again, the CRF passes its copies on before the packet that
//! shows the gap, and that packet after them, in PSN order.

mod crf_util;

use crem_core::engine::crf::{CrfConfig, SourceVerdict, REPLAY_REACH};
use crem_core::engine::MS;
use crem_core::psn::Psn;
use crf_util::*;

const K: u8 = 4;

/// A rig whose first `n` PSNs arrived, in blocks of four with their
/// repairs, but PSN 5, restored from its block's repair: every block is
/// complete, their copies are kept for replay only (block 1's freed with
/// the block, the others' as the CRF moves on).
fn first_pass(cfg: CrfConfig, n: u32) -> (Rig, Vec<Vec<u8>>) {
    let mut rig = Rig::new(cfg);
    let fc = cauchy(1, K, 1, 120);
    assert!(rig.crf.accept_config(fc));
    let p: Vec<Vec<u8>> = (0..n + 64).map(|q| send_packet(Psn::new(q), 60)).collect();
    let csf = Csf::new(fc, 0, p.iter().cloned().map(Some).collect());
    for q in (0..n).filter(|&q| q != 5) {
        rig.source(q, &p[q as usize], false);
        if (q + 1) % K as u32 == 0 {
            let b = (q / K as u32) as usize;
            rig.repair_bytes(&csf.ordinary(b)[0], false);
        }
    }
    rig.advance(rig.now + 5 * MS);
    let c = rig.crf.counters();
    assert_eq!((c.restored, c.blocks_completed), (1, 1));
    rig.host.delivered.clear();
    (rig, p)
}

/// The PSNs delivered since the rig's last `clear`, in order.
fn delivered(rig: &Rig) -> Vec<u32> {
    rig.host.delivered.iter().map(|d| d.psn).collect()
}

/// A pass: `psns` arrive (the others of its range were lost); returns the
/// verdicts.
fn pass(rig: &mut Rig, p: &[Vec<u8>], psns: &[u32]) -> Vec<SourceVerdict> {
    psns.iter()
        .map(|&q| {
            rig.advance(rig.now + 100_000);
            rig.source(q, &p[q as usize], false)
        })
        .collect()
}

#[test]
fn a_resend_pass_that_loses_packets_gets_the_copies() {
    let (mut rig, p) = first_pass(base_cfg(), 40);
    // RDMA goes back to 10; the path loses 12, then 15 and 16.
    let v = pass(&mut rig, &p, &[10, 11, 13, 14, 17, 18]);
    assert_eq!(rig.host.replayed, vec![12, 15, 16]);
    assert_eq!(delivered(&rig), (10..=18).collect::<Vec<u32>>());
    use SourceVerdict::{Deliver, Replaced};
    assert_eq!(
        v,
        vec![Deliver, Deliver, Replaced, Deliver, Replaced, Deliver]
    );
    // Byte for byte the packets that arrived the first time.
    for d in &rig.host.delivered {
        assert_eq!(d.bytes, p[d.psn as usize]);
    }
    let c = rig.crf.counters();
    assert_eq!(c.sources_replayed, 3);
    assert_eq!(c.replay_failed, 0);
}

#[test]
fn without_replay_the_pass_keeps_its_gaps() {
    // The behaviour before: RDMA's receiver sees 13 without 12, NAKs, and
    // its sender starts another pass.
    let mut cfg = base_cfg();
    cfg.replay = false;
    let (mut rig, p) = first_pass(cfg, 40);
    pass(&mut rig, &p, &[10, 11, 13, 14, 17, 18]);
    assert!(rig.host.replayed.is_empty());
    assert_eq!(delivered(&rig), vec![10, 11, 13, 14, 17, 18]);
}

#[test]
fn a_pass_that_starts_with_the_lost_packet() {
    // PSN 20 never arrived the first time (given up to RDMA): the pass
    // starts with it, a PSN new here, and loses 22.
    let (mut rig, p) = first_pass(base_cfg(), 20);
    for q in 21..32 {
        rig.source(q, &p[q as usize], false);
    }
    rig.advance(rig.now + 1000 * MS);
    rig.host.delivered.clear();
    pass(&mut rig, &p, &[20, 21, 23, 24]);
    assert_eq!(rig.host.replayed, vec![22]);
    assert_eq!(delivered(&rig), (20..=24).collect::<Vec<u32>>());
}

#[test]
fn the_lost_end_of_a_pass_goes_before_the_next_new_packet() {
    let (mut rig, p) = first_pass(base_cfg(), 40);
    // The pass 30..=39 loses 38 and 39; the sender goes on with 40.
    pass(&mut rig, &p, &(30..38).chain([40]).collect::<Vec<u32>>());
    assert_eq!(rig.host.replayed, vec![38, 39]);
    assert_eq!(delivered(&rig), (30..=40).collect::<Vec<u32>>());
}

#[test]
fn our_own_copies_coming_back_change_nothing() {
    // Host mode: replayed and replacing copies pass our hook again.
    let (mut rig, p) = first_pass(base_cfg(), 40);
    pass(&mut rig, &p, &[10, 11, 13]);
    assert_eq!(rig.host.replayed, vec![12]);
    pass(&mut rig, &p, &[12, 13, 14, 15]);
    assert_eq!(rig.host.replayed, vec![12], "nothing replayed again");
    assert_eq!(rig.crf.counters().sources_replayed, 1);
}

#[test]
fn a_new_pass_further_back_restarts() {
    let (mut rig, p) = first_pass(base_cfg(), 40);
    pass(&mut rig, &p, &[30, 31, 32, 33, 34, 35]);
    // The sender goes back to 8 (a timeout): far behind, a new pass.
    pass(&mut rig, &p, &[8, 9, 11]);
    assert_eq!(rig.host.replayed, vec![10]);
}

#[test]
fn first_transmissions_and_reordering_replay_nothing() {
    let (mut rig, p) = first_pass(base_cfg(), 40);
    // New PSNs, one lost (42), one late (44 after 45), one far ahead.
    pass(&mut rig, &p, &[40, 41, 43, 45, 44, 46, 47, 60]);
    assert!(rig.host.replayed.is_empty());
    assert_eq!(rig.crf.counters().sources_replayed, 0);
}

#[test]
fn a_gap_beyond_the_reach_is_not_filled() {
    // More than REPLAY_REACH lost in a row: RDMA's own recovery.
    let (mut rig, p) = first_pass(base_cfg(), 60);
    let after = 10 + REPLAY_REACH + 1;
    pass(&mut rig, &p, &[9, after]);
    assert!(rig.host.replayed.is_empty());
    // Exactly the reach is filled.
    let (mut rig, p) = first_pass(base_cfg(), 60);
    pass(&mut rig, &p, &[9, 10 + REPLAY_REACH]);
    assert_eq!(
        rig.host.replayed,
        (10..10 + REPLAY_REACH).collect::<Vec<u32>>()
    );
}

#[test]
fn copies_a_quarter_window_behind_are_gone() {
    // TestCrf's window: 1024 PSNs; copies are kept for the last 256.
    let (mut rig, p) = first_pass(base_cfg(), 300);
    assert_eq!(rig.host.sources.len(), 256, "the last 256 copies");
    pass(&mut rig, &p, &[40, 42]);
    assert!(rig.host.replayed.is_empty(), "41 fell out of the span");
    pass(&mut rig, &p, &[280, 282]);
    assert_eq!(rig.host.replayed, vec![281]);
}

#[test]
fn close_drops_every_copy() {
    let (mut rig, _) = first_pass(base_cfg(), 40);
    assert_eq!(rig.host.sources.len(), 39, "all but the restored 5");
    rig.crf.close(&mut rig.host);
    assert!(rig.host.sources.is_empty());
}

#[test]
fn packets_it_passed_on_coming_back_are_no_pass() {
    // Host mode: released and restored packets enter the receive path
    // again and pass our hook as duplicates, after newer originals.
    let (mut rig, p) = first_pass(base_cfg(), 40);
    let fc = cauchy(1, K, 1, 120);
    let csf = Csf::new(fc, 0, p.iter().cloned().map(Some).collect());
    // 40 is lost: 41 to 43 are held until its block's repair restores it.
    use SourceVerdict::{Deliver, Hold};
    assert_eq!(pass(&mut rig, &p, &[41, 42, 43]), vec![Hold, Hold, Hold]);
    rig.repair_bytes(&csf.ordinary(10)[0], false);
    assert_eq!(delivered(&rig), vec![40, 41, 42, 43]);
    let v = pass(&mut rig, &p, &[44, 45, 41, 42, 43, 46]);
    assert_eq!(v, vec![Deliver; 6]);
    assert!(
        rig.host.replayed.is_empty(),
        "44 and 45 replayed: {:?}",
        rig.host.replayed
    );
}

#[test]
fn a_packet_still_held_is_not_replayed() {
    let (mut rig, p) = first_pass(base_cfg(), 48);
    // 48 is lost; 49 and 50 wait for it.
    pass(&mut rig, &p, &[49, 50]);
    // A pass from 46 (a NAK's, say) loses 47, then the sender goes on.
    pass(&mut rig, &p, &[46, 51]);
    assert_eq!(
        rig.host.replayed,
        vec![47],
        "49 and 50 are held, not replayed"
    );
}

#[test]
fn copies_are_swept_when_a_repair_started_the_window() {
    // The first message is a REPAIR, of a block high in the PSN space.
    // Before, replay's bookkeeping started at PSN 0 whatever started the
    // window: here 0 lies after every PSN of the flow, and 3 copies were
    // kept, not 256 (a window based just below 2^23 would have kept a
    // whole window).
    let first = 0x90_0000u32;
    let mut rig = Rig::new(base_cfg());
    let fc = cauchy(1, K, 1, 120);
    assert!(rig.crf.accept_config(fc));
    let p: Vec<Vec<u8>> = (0..400)
        .map(|i| send_packet(Psn::new(first + i), 60))
        .collect();
    let csf = Csf::new(fc, first, p.iter().cloned().map(Some).collect());
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    for i in 0..400u32 {
        rig.source(first + i, &p[i as usize], false);
        if (i + 1) % K as u32 == 0 && i >= K as u32 {
            rig.repair_bytes(&csf.ordinary((i / K as u32) as usize)[0], false);
        }
    }
    rig.advance(rig.now + 5 * MS);
    assert_eq!(rig.host.sources.len(), 256, "the last quarter window");
}
