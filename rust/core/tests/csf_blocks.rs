//! CSF source blocks: Present Bitmap across PSN wrap and READ spans, the
//! closing rules, RDMA retransmissions, ordinary repairs that the real
//! decoder accepts, the m/k rate bound, spreading, configuration changes,
//! and retention (acks, budget, ring, age).

mod csf_common;
use csf_common::*;

use crem_core::engine::csf::{scratch_len, CsfParams, Inline, SourceVerdict};
use crem_core::engine::{FecConfig, MS};
use crem_core::fec::{Bitmap, Scheme};
use crem_core::psn::{Psn, PsnRange};
use crem_core::roce::{opcode, Bth, ICRC_LEN};
use std::collections::HashMap;

fn p() -> CsfParams {
    CsfParams::DEFAULT
}

#[test]
fn block_across_psn_wrap_decodes() {
    let mut h: H<8, 8192> = H::new(p(), Some(cfg(1, 6, 3, 100)));
    let start = 0xFF_FFFD;
    let pl: Vec<Vec<u8>> = (0..6u32)
        .map(|i| payload(start + i, 50 + i as usize))
        .collect();
    for i in 0..6u32 {
        assert_eq!(
            h.src(i as u64, start + i, 1, &pl[i as usize]),
            SourceVerdict::Retain
        );
    }
    let r = h.reps();
    assert_eq!(r.len(), 3);
    for (i, x) in r.iter().enumerate() {
        assert_eq!(x.block_start, Psn::new(start));
        assert_eq!(x.k, 6);
        assert_eq!(x.repair_index, i as u8);
        assert_eq!(to_fec(&x.present), Bitmap::first(6));
    }
    // Lose three sources (positions 1, 3 = PSN 0, 4 = PSN 1): recovered.
    let held: HashMap<u8, Vec<u8>> = [0u8, 2, 5]
        .iter()
        .map(|&j| (j, pl[j as usize].clone()))
        .collect();
    let got = decode_block(6, 100, &Bitmap::first(6), &held, &r).unwrap();
    for j in [1u8, 3, 4] {
        assert_eq!(got[&j], pl[j as usize]);
    }
    // The ack through PSN 2 (after the wrap) releases the block.
    h.ack(MS, 2);
    assert_eq!(h.csf.blocks_held(), 0);
    assert_eq!(h.store.released, [PsnRange::new(Psn::new(start), 6)]);
    assert!(h.store.pkts.is_empty());
    assert_eq!(h.csf.retention_octets(), 0);
}

/// A RoCEv2 UDP payload: BTH (+ RETH for READ) + body + ICRC.
fn roce(op: u8, psn: u32, reth_len: Option<u32>, body: usize) -> Vec<u8> {
    let mut v = vec![0u8; 12];
    Bth {
        opcode: op,
        se: false,
        mig_req: false,
        pad_count: 0,
        tver: 0,
        pkey: 0xffff,
        fecn: false,
        becn: false,
        resv6: 0,
        dest_qp: 0x11,
        ack_req: false,
        resv7: 0,
        psn: Psn::new(psn),
    }
    .write(&mut v)
    .unwrap();
    if let Some(len) = reth_len {
        v.extend_from_slice(&[0; 12]);
        v.extend_from_slice(&len.to_be_bytes());
    }
    if op == opcode::RC_ACKNOWLEDGE {
        v.extend_from_slice(&[0x1f, 0, 0, 1]);
    }
    v.extend((0..body).map(|i| i as u8));
    v.extend_from_slice(&[0; ICRC_LEN]);
    v
}

#[test]
fn read_requests_leave_absent_positions() {
    let mut h: H<8, 8192> = H::new(p(), Some(cfg(1, 8, 2, 300)));
    // WRITE at 10, READ at 11 of 3 MTUs (PSNs 11..=13), WRITE at 14, READ at
    // 15 of 10 MTUs: covers 15..=17 of this block, the block closes by k.
    let w0 = roce(opcode::RC_WRITE_ONLY, 10, Some(64), 64);
    let r0 = roce(opcode::RC_READ_REQUEST, 11, Some(3 * 256 - 5), 0);
    let w1 = roce(opcode::RC_WRITE_ONLY, 14, Some(64), 64);
    let r1 = roce(opcode::RC_READ_REQUEST, 15, Some(10 * 256), 0);
    let pk = [&w0, &r0, &w1, &r1];
    for (i, x) in pk.iter().enumerate() {
        assert_eq!(h.roce(i as u64, x, 256), SourceVerdict::Retain);
    }
    // Acks are not sources; garbage is counted.
    assert_eq!(
        h.roce(5, &roce(opcode::RC_ACKNOWLEDGE, 3, None, 0), 256),
        SourceVerdict::NotSource
    );
    assert_eq!(h.roce(5, &[1, 2, 3], 256), SourceVerdict::NotSource);
    assert_eq!(h.csf.counters().drops.unparsable, 1);
    let r = h.reps();
    assert_eq!(r.len(), 2);
    let present: Bitmap = [0u8, 1, 4, 5].into_iter().collect();
    assert_eq!(to_fec(&r[0].present), present);
    assert_eq!(r[0].k, 8);
    assert_eq!(h.csf.counters().blocks_closed_k, 1);
    // Lose the two WRITEs: the repairs recover them; absent positions are
    // neither coded nor expected.
    let held: HashMap<u8, Vec<u8>> = [(1u8, r0.clone()), (5, r1.clone())].into();
    let got = decode_block(8, 300, &present, &held, &r).unwrap();
    assert_eq!(got[&0], w0);
    assert_eq!(got[&4], w1);
    // The next WRITE after the READ span (15 + 10 = 25) opens a new block.
    h.roce(10, &roce(opcode::RC_WRITE_ONLY, 25, Some(8), 8), 256);
    assert_eq!(h.csf.open_block(), Some((Psn::new(25), 1)));
    // An ack from the reverse direction releases the first block.
    h.csf
        .on_roce_reverse(11, &roce(opcode::RC_ACKNOWLEDGE, 17, None, 0), &mut h.store);
    assert_eq!(h.csf.blocks_held(), 1);
    assert_eq!(h.store.released, [PsnRange::new(Psn::new(10), 8)]);
}

#[test]
fn idle_close_retransmissions_and_late_sources() {
    let mut prm = p();
    prm.idle_timeout = 50_000;
    let mut h: H<8, 8192> = H::new(prm, Some(cfg(1, 32, 2, 100)));
    for i in 0..3u32 {
        h.src(1000 * i as u64, 100 + i, 1, &payload(100 + i, 40));
    }
    assert_eq!(h.csf.next_deadline(), Some(2000 + 50_000));
    // RDMA retransmits PSN 101 while the block is open: same position.
    assert_eq!(
        h.src(3000, 101, 1, &payload(101, 40)),
        SourceVerdict::Retransmission
    );
    assert_eq!(h.csf.counters().sources, 3);
    h.timer(51_999);
    assert!(h.out.msgs.is_empty());
    h.timer(52_000);
    let r = h.reps();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].k, 3);
    assert!(r[1].last);
    assert_eq!(h.csf.counters().blocks_closed_idle, 1);
    assert_eq!(h.csf.next_deadline(), None);
    // After the block closed: still a retransmission, counted.
    assert_eq!(
        h.src(60_000, 100, 1, &payload(100, 40)),
        SourceVerdict::Retransmission
    );
    assert_eq!(h.csf.counters().retransmitted_sources, 2);
    // A jump leaves absent positions; a late packet at one of them is not
    // coded.
    h.src(61_000, 103, 1, &payload(103, 40));
    h.src(61_100, 106, 1, &payload(106, 40));
    assert_eq!(
        h.src(61_200, 104, 1, &payload(104, 40)),
        SourceVerdict::Unprotected
    );
    assert_eq!(h.csf.counters().drops.late_source, 1);
    // A source after the idle timeout closes the block first (even if the
    // timer did not fire).
    h.src(500_000, 107, 1, &payload(107, 40));
    let r = h.reps();
    assert_eq!(r[0].k, 4);
    assert_eq!(
        to_fec(&r[0].present),
        [0u8, 3].into_iter().collect::<Bitmap>()
    );
    assert_eq!(h.csf.open_block(), Some((Psn::new(107), 1)));
    // A PSN beyond k closes the open block early.
    h.src(500_100, 107 + 40, 1, &payload(147, 40));
    assert_eq!(h.csf.counters().blocks_closed_early, 1);
}

#[test]
fn unprotected_until_configured_and_oversize() {
    let mut h: H<8, 8192> = H::new(p(), None);
    assert_eq!(h.src(0, 5, 1, &payload(5, 10)), SourceVerdict::Unprotected);
    assert_eq!(h.csf.counters().unprotected_sources, 1);
    h.csf.set_config(cfg(1, 4, 1, 32), Psn::ZERO).unwrap();
    assert_eq!(h.src(1, 6, 1, &payload(6, 30)), SourceVerdict::Retain);
    // T - 2 = 30: a 31-octet payload cannot be coded.
    assert_eq!(h.src(2, 7, 1, &payload(7, 31)), SourceVerdict::Unprotected);
    assert_eq!(h.csf.counters().drops.oversize_payload, 1);
    h.src(3, 8, 1, &payload(8, 30));
    h.src(4, 9, 1, &payload(9, 30));
    let r = h.reps();
    assert_eq!(
        to_fec(&r[0].present),
        [0u8, 2, 3].into_iter().collect::<Bitmap>()
    );
    // Invalid configurations are refused and counted.
    for bad in [
        cfg(2, 0, 1, 32),
        cfg(2, 250, 7, 32),
        cfg(2, 4, 1, 1),
        FecConfig {
            scheme: Scheme::Xor,
            ..cfg(2, 4, 2, 32)
        },
        FecConfig {
            scheme: Scheme::SourceCopy,
            ..cfg(2, 4, 1, 32)
        },
    ] {
        assert!(h.csf.set_config(bad, Psn::ZERO).is_err());
    }
    assert_eq!(h.csf.counters().config_rejected, 5);
    assert!(h.csf.set_config(cfg(2, 250, 6, 32), Psn::ZERO).is_ok());
}

#[test]
fn config_change_at_effective_psn() {
    let mut h: H<8, 8192> = H::new(p(), Some(cfg(1, 4, 1, 64)));
    h.csf.set_config(cfg(2, 2, 2, 64), Psn::new(6)).unwrap();
    assert_eq!(h.csf.config().map(|c| c.id), Some(1));
    for i in 0..8u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    let r = h.reps();
    // Block 0..4 and 4..8 started before 6 (4 < 6): config 1 both.
    assert!(r.iter().all(|x| x.config_id == 1 && x.k == 4));
    assert!(h.csf.uses_config(1) && !h.csf.uses_config(2));
    for i in 8..10u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    let r = h.reps();
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|x| x.config_id == 2 && x.k == 2));
    assert_eq!(h.csf.config().map(|c| c.id), Some(2));
    h.ack(100, 7);
    assert!(!h.csf.uses_config(1));
}

#[test]
fn ordinary_repairs_within_m_over_k() {
    // k = 8, m = 2, burst of 2 blocks: long runs of short bursts (one
    // source each, closed by idle) get at most 2/8 of a repair per source
    // plus the initial burst.
    let mut prm = p();
    prm.idle_timeout = 10;
    let mut h: H<64, 8192> = H::new(prm, Some(cfg(1, 8, 2, 64)));
    let n = 400u32;
    for i in 0..n {
        h.src(100 * i as u64, 2 * i, 1, &payload(i, 20));
        h.timer(100 * i as u64 + 50);
        h.ack(100 * i as u64 + 60, 2 * i);
    }
    h.timer(u64::MAX / 2);
    let c = *h.csf.counters();
    assert!(c.repairs_ordinary <= (n as u64 * 2) / 8 + 4, "{c:?}");
    assert!(c.repairs_ordinary >= (n as u64 * 2) / 8 - 2, "{c:?}");
    assert!(c.drops.repair_rate_limited > 0);
    // Full blocks are never limited.
    let mut h: H<64, 8192> = H::new(p(), Some(cfg(1, 8, 2, 64)));
    for i in 0..800u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    let c = h.csf.counters();
    assert_eq!(c.repairs_ordinary, 200);
    assert_eq!(c.drops.repair_rate_limited, 0);
}

#[test]
fn spread_repairs_over_next_sources() {
    let mut prm = p();
    prm.spread = true;
    prm.spread_deadline = 10_000;
    let mut h: H<8, 8192> = H::new(prm, Some(cfg(1, 4, 3, 64)));
    for i in 0..4u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    // The closing source already carries one.
    assert_eq!(h.reps().len(), 1);
    h.src(10, 4, 1, &payload(4, 20));
    let r = h.reps();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].block_start, Psn::ZERO);
    assert_eq!(r[0].repair_index, 1);
    assert_eq!(
        h.csf.next_deadline(),
        Some(3 + 10_000).min(Some(10 + 100_000))
    );
    h.timer(3 + 10_000);
    let r = h.reps();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].repair_index, 2);
    assert!(r[0].last);
    // A block closing while repairs are pending flushes them first.
    for i in 5..12u32 {
        h.src(20_000 + i as u64, i, 1, &payload(i, 20));
    }
    let r = h.reps();
    let idx: Vec<(u32, u8)> = r
        .iter()
        .map(|x| (x.block_start.value(), x.repair_index))
        .collect();
    assert_eq!(&idx[..4], &[(4, 0), (4, 1), (4, 2), (8, 0)]);
    // Acked while pending: the rest is cancelled.
    h.ack(30_000, 11);
    assert_eq!(h.csf.counters().drops.repair_cancelled_acked, 2);
    h.timer(1_000_000);
    assert!(h.reps().is_empty());
}

#[test]
fn retention_budget_ring_and_age() {
    let mut prm = p();
    prm.retention_budget = 1000;
    let mut h: H<4, 8192> = H::new(prm, Some(cfg(1, 4, 1, 200)));
    // 100-octet sources: the budget holds 10, i.e. 2.5 blocks.
    for i in 0..12u32 {
        let v = h.src(i as u64, i, 1, &payload(i, 100));
        assert!(v.retain());
        assert!(h.csf.retention_octets() <= 1000);
    }
    let c = *h.csf.counters();
    assert_eq!(c.given_up_budget, 1);
    assert!(c.retention_octets_max <= 1000);
    assert_eq!(h.store.released[0], PsnRange::new(Psn::ZERO, 4));
    // A single source larger than the budget: coded, not retained.
    let mut prm = p();
    prm.retention_budget = 50;
    let mut h2: H<4, 8192> = H::new(prm, Some(cfg(1, 4, 1, 200)));
    assert_eq!(
        h2.src(0, 0, 1, &payload(0, 100)),
        SourceVerdict::NotRetained
    );
    assert_eq!(h2.csf.counters().drops.not_retained, 1);
    // Ring full: the oldest block is given up.
    for i in 12..24u32 {
        h.src(100 + i as u64, i * 10, 1, &payload(i, 10));
    }
    assert!(h.csf.counters().given_up_ring > 0);
    assert!(h.csf.blocks_held() <= 4);
    // Age: closed blocks older than give_up_after are released.
    let mut prm = p();
    prm.give_up_after = 5 * MS;
    prm.idle_timeout = 10 * MS;
    let mut h: H<8, 8192> = H::new(prm, Some(cfg(1, 2, 1, 64)));
    for i in 0..6u32 {
        h.src(i as u64 * MS, i, 1, &payload(i, 20));
    }
    assert_eq!(h.csf.next_deadline(), Some(MS + 5 * MS));
    h.timer(6 * MS);
    assert_eq!(h.csf.counters().given_up_age, 1);
    h.timer(100 * MS);
    assert_eq!(h.csf.blocks_held(), 0);
    // Shutdown releases everything.
    let mut h: H<8, 8192> = H::new(p(), Some(cfg(1, 4, 1, 64)));
    for i in 0..6u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    h.csf.shutdown(&mut h.store);
    assert!(h.store.pkts.is_empty());
    assert_eq!(h.csf.counters().blocks_released_shutdown, 2);
    assert_eq!(h.csf.retention_octets(), 0);
}

#[test]
fn open_block_acked_closes_silently_and_small_scratch() {
    let mut h: H<8, 8192> = H::new(p(), Some(cfg(1, 8, 2, 64)));
    for i in 0..3u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    h.ack(10, 2);
    assert_eq!(h.csf.counters().blocks_closed_acked, 1);
    assert_eq!(h.csf.open_block(), None);
    h.timer(1_000_000);
    assert!(h.reps().is_empty());
    // A stale ack changes nothing.
    h.src(20, 3, 1, &payload(3, 20));
    h.ack(21, 1);
    assert_eq!(h.csf.blocks_held(), 1);
    // Scratch too small: counted, nothing sent, no panic.
    h.scratch = vec![0; 24 + 63];
    assert!(scratch_len(64) > 24 + 64);
    for i in 4..11u32 {
        h.src(30 + i as u64, i, 1, &payload(i, 20));
    }
    assert!(h.reps().is_empty());
    assert_eq!(h.csf.counters().drops.scratch_too_small, 2);
    // ACC smaller than m·T caps m.
    let mut h: H<8, 100> = H::new(p(), Some(cfg(1, 4, 3, 64)));
    for i in 0..4u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    assert_eq!(h.reps().len(), 1);
    assert_eq!(h.csf.counters().drops.m_capped, 1);
    // Reset in place.
    h.csf.reset(p());
    assert_eq!(h.csf.blocks_held(), 0);
    assert_eq!(h.csf.counters().sources, 0);
    assert_eq!(h.csf.config(), None);
}

#[test]
fn flow_id_defaults_and_source_copy_config() {
    assert_eq!(CsfParams::default(), CsfParams::DEFAULT);
    // Scheme 0 as a block configuration: no ordinary repairs, answers are
    // Source Copy; the Flow ID follows set_flow_id.
    let sc = FecConfig {
        scheme: Scheme::SourceCopy,
        ..cfg(4, 4, 0, 64)
    };
    let mut h: H<8, 8192> = H::new(p(), Some(sc));
    h.csf.set_flow_id(0xABCD);
    for i in 0..4u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    assert!(h.reps().is_empty());
    let ranges = [PsnRange::new(Psn::new(1), 1)];
    let req = crem_core::wire::RepairRequest {
        flow_id: 0xABCD,
        fallback: false,
        kind: crem_core::wire::RequestKind::Ranges(crem_core::wire::RangeRequest {
            request_id: 1,
            ranges: crem_core::wire::LostRanges::from_slice(&ranges),
        }),
    };
    h.request(MS, &req);
    let r = h.reps();
    assert_eq!(r.len(), 2);
    // The request came after the burst's end: first the tail notice of
    // the block (no ordinary repair told where it ends), then the answer.
    assert!(r[0].info && r[0].last && r[0].session_id == 0);
    assert_eq!((r[0].flow_id, r[0].k), (0xABCD, 4));
    assert_eq!(r[1].flow_id, 0xABCD);
    assert_eq!(r[1].scheme, crem_core::wire::FecScheme::SourceCopy);
    assert_eq!(r[1].repair_index, 1);
}

#[test]
fn sizes() {
    use crem_core::engine::csf::Csf;
    let per_block =
        (std::mem::size_of::<Csf<Inline<65, 0>>>() - std::mem::size_of::<Csf<Inline<1, 0>>>()) / 64;
    println!(
        "block record {per_block} octets, Csf<Inline<256, 8192>> {} octets",
        std::mem::size_of::<Csf<Inline<256, 8192>>>()
    );
    assert!(per_block <= 256);
}

/// A responder-direction flow (`fill_gaps`): READ responses skip the PSNs
/// the requester used for other requests. A short skip after a closed block
/// starts the next block at its end, so the skipped PSNs are absent
/// positions of a block (the CRF learns them from the Present Bitmap); a
/// long one starts the block at the source, as without `fill_gaps`.
#[test]
fn response_gaps_become_absent_positions() {
    let prm = CsfParams {
        fill_gaps: true,
        ..p()
    };
    let mut h: H<8, 8192> = H::new(prm, Some(cfg(1, 8, 2, 300)));
    // One READ's responses: PSNs 100..=107 fill a block and close it.
    for i in 0..8u32 {
        let r = roce(opcode::RC_READ_RESPONSE_MIDDLE, 100 + i, None, 64);
        assert_eq!(h.src(i as u64, 100 + i, 1, &r), SourceVerdict::Retain);
    }
    assert_eq!(h.csf.counters().blocks_closed_k, 1);
    // A SEND used PSN 108; the next READ's responses start at 109.
    let r = roce(opcode::RC_READ_RESPONSE_FIRST, 109, None, 64);
    assert_eq!(h.src(10, 109, 1, &r), SourceVerdict::Retain);
    assert_eq!(h.csf.open_block(), Some((Psn::new(108), 2)));
    for i in 1..7u32 {
        let r = roce(opcode::RC_READ_RESPONSE_MIDDLE, 109 + i, None, 64);
        h.src(10 + i as u64, 109 + i, 1, &r);
    }
    let r = h.reps();
    assert_eq!(r.len(), 4);
    assert_eq!(r[2].block_start, Psn::new(108));
    let present: Bitmap = (1u8..8).collect();
    assert_eq!(to_fec(&r[2].present), present);
    // Five skipped PSNs (> k/2) after that block: the next starts at its
    // source.
    let r = roce(opcode::RC_READ_RESPONSE_ONLY, 121, None, 64);
    h.src(20, 121, 1, &r);
    assert_eq!(h.csf.open_block(), Some((Psn::new(121), 1)));
}

/// `fill_gaps` across a configuration change to a smaller k (a fuzz
/// finding): the new block opens with the next configuration, so the gap
/// it may absorb is bounded by that k; every retained source lies in a block
/// and is released at shutdown.
#[test]
fn filled_gap_respects_the_next_configuration() {
    let prm = CsfParams {
        fill_gaps: true,
        ..p()
    };
    let mut h: H<8, 8192> = H::new(prm, Some(cfg(1, 16, 1, 64)));
    h.csf.set_config(cfg(2, 4, 1, 64), Psn::new(16)).unwrap();
    for i in 0..16u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    // 7 PSNs skipped: within 16/2, beyond 4/2: the block opens at the source.
    h.src(20, 23, 1, &payload(23, 20));
    assert_eq!(h.csf.open_block(), Some((Psn::new(23), 1)));
    h.csf.shutdown(&mut h.store);
    assert!(h.store.pkts.is_empty());
    assert_eq!(h.csf.retention_octets(), 0);
}

/// A caller whose store keeps sources by PSN modulo its size (the module's
/// ring) sets `retention_span` to that size: the CSF then never retains a
/// PSN that far ahead of its oldest retained one (it gives the oldest
/// blocks up first, counted as the ring being full), so no kept source is
/// lost to another's slot. Across the 24-bit wrap, with responses' absent
/// positions, and with a span shorter than a block (not retained then).
#[test]
fn retention_span_bounds_the_psns_retained() {
    let span = 128u32;
    let mut prm = p();
    prm.retention_span = span;
    let mut h: H<64, 8192> = H::new(prm, Some(cfg(1, 16, 0, 64)));
    let start = 0xff_ff00u32;
    let mut psn = start;
    for i in 0..1000u32 {
        // Every 7th source is a READ request answered by 3 positions.
        let n = if i % 7 == 0 { 3 } else { 1 };
        let v = h.src(i as u64 * 1000, psn, n, &payload(i, 40));
        assert!(v.retain(), "{i}: {v:?}");
        let oldest = h
            .store
            .pkts
            .keys()
            .map(|&q| Psn::new(q).forward_distance(Psn::new(psn)))
            .max();
        assert!(
            oldest.unwrap_or(0) < span,
            "{i}: PSN {psn:#x} retained {oldest:?} after the oldest"
        );
        // No two retained PSNs share a slot of a `span`-slot store.
        let mut slots: Vec<u32> = h.store.pkts.keys().map(|&q| q % span).collect();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(
            slots.len(),
            h.store.pkts.len(),
            "{i}: two retained PSNs alias"
        );
        psn = Psn::new(psn).wrapping_add(n).value();
    }
    let c = *h.csf.counters();
    // About 80 blocks of 16 positions, of which 8 fit the span.
    assert!(c.given_up_ring > 60, "{c:?}");
    assert_eq!(c.drops.not_retained, 0);
    // A span shorter than a block: the sources past it are not retained.
    let mut prm = p();
    prm.retention_span = 10;
    let mut h: H<64, 8192> = H::new(prm, Some(cfg(1, 16, 0, 64)));
    let v: Vec<bool> = (0..16u32)
        .map(|i| h.src(i as u64, i, 1, &payload(i, 40)).retain())
        .collect();
    assert_eq!(v.iter().filter(|&&r| r).count(), 10, "{v:?}");
    assert_eq!(h.csf.counters().drops.not_retained, 6);
}

fn notices(r: &[crem_core::wire::Repair<'_>]) -> usize {
    r.iter().filter(|x| x.is_tail_notice()).count()
}

/// A new session (`SenderFlow::unprotect` restarts the CSF) starts
/// untold: the RDMA transport's resend of a lost one-packet message at
/// the PSN whose block had its notice gets a notice of its own. Before the
/// review fix the CSF kept the last told Block Start PSN across a restart:
/// 0 notices.
#[test]
fn a_restarted_csf_tells_a_block_at_a_psn_told_before() {
    let mut h: H<8, 8192> = H::new(CsfParams::DEFAULT, Some(cfg(1, 4, 0, 64)));
    h.src(0, 100, 1, &payload(100, 20));
    h.timer(MS);
    assert_eq!(notices(&h.reps()), 1);
    h.csf.shutdown(&mut h.store);
    h.csf.restart(CsfParams::DEFAULT);
    h.csf.set_config(cfg(1, 4, 0, 64), Psn::ZERO).unwrap();
    h.src(2 * MS, 100, 1, &payload(100, 20));
    h.timer(3 * MS);
    assert_eq!(notices(&h.reps()), 1);
    assert_eq!(h.csf.counters().tail_infos, 2);
}

/// Spread mode: an older block's last spread repair (LAST) going out
/// after the newest block's notice tells only that older block: the
/// newest one's notice is sent once.
#[test]
fn a_tail_notice_goes_out_once_beside_spread_repairs() {
    let p = CsfParams {
        spread: true,
        ..CsfParams::DEFAULT
    };
    let mut h: H<8, 8192> = H::new(p, Some(cfg(1, 4, 2, 64)));
    h.csf.set_config(cfg(2, 4, 0, 64), Psn::new(4)).unwrap();
    for i in 0..4u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    // The m 0 block opens; the m 2 block's repairs are spread.
    h.src(10, 4, 1, &payload(4, 20));
    let mut all = h.reps();
    let mut t = 10;
    while let Some(d) = h.csf.next_deadline().filter(|d| *d <= 5 * MS) {
        t = t.max(d);
        h.timer(t);
        all.extend(h.reps());
    }
    assert_eq!(h.csf.counters().tail_infos, 1);
    assert_eq!(notices(&all), 1);
    let n = all.iter().find(|r| r.info).unwrap();
    assert_eq!((n.block_start, n.k), (Psn::new(4), 1));
}
