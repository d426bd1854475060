//! Amplification bound (issue 12, item 13): one forged ~270-octet PSN-range
//! REPAIR_REQUEST with FALLBACK naming the whole retention must not make the
//! CSF resend it. Coded and Source Copy answers are paid from a per-flow
//! budget credited by the source octets the CSF itself sees (a share of the
//! measured flow rate) with a burst cap of a few blocks' worth.

mod csf_common;
use csf_common::*;

use crem_core::engine::csf::{CsfParams, REPAIR_HEADER_MAX};
use crem_core::engine::{Nanos, MS};
use crem_core::psn::{Psn, PsnRange};
use crem_core::wire::{
    Bitmap256, BlockRequest, FecScheme, LostRanges, RangeRequest, RepairRequest, RequestKind,
    TcAeth, TcAethReport,
};

const K: u8 = 32;
const T: u16 = 1100;
const PAYLOAD: usize = 1000;
/// One source every 10 µs: 100 000 source octets per millisecond.
const GAP: Nanos = 10_000;
const SRTT: Nanos = MS;
/// The kernel's retention ring (rust/engine.rs `CSF_BLOCKS`).
const BLOCKS: usize = 64;
/// The defaults the bound is derived from (`CsfParams::DEFAULT`).
const RATE_PERCENT: u64 = 25;
const BURST_BLOCKS: u64 = 4;
/// Most octets one answered symbol may be charged (checked before sending).
const SYMBOL_MAX: u64 = REPAIR_HEADER_MAX as u64 + T as u64;
/// Burst cap: BURST_BLOCKS whole blocks of symbols (151 552 octets).
const BURST: u64 = BURST_BLOCKS * K as u64 * SYMBOL_MAX;
/// Source octets the ring retains when full (64 blocks of 32 sources).
const RETAINED: u64 = BLOCKS as u64 * K as u64 * PAYLOAD as u64;
/// Depth of the budget: the burst cap or a quarter of the rate share of
/// the retained octets, whichever is more (151 552 octets here: the burst,
/// against 2 310 144 for resending the retention as Source Copy).
const DEPTH: u64 = if BURST > RETAINED * RATE_PERCENT / 400 {
    BURST
} else {
    RETAINED * RATE_PERCENT / 400
};

type Hb = H<BLOCKS, { 2 * T as usize }>;

fn params() -> CsfParams {
    CsfParams {
        flow_id: 0xBEEF,
        ..CsfParams::DEFAULT
    }
}

/// Sources `from..to` at the flow's rate, starting at `now`; returns the
/// time after the last one and the octets sent.
fn flow(h: &mut Hb, from: u32, to: u32, now: Nanos) -> (Nanos, u64) {
    let mut t = now;
    let mut octets = 0;
    for psn in from..to {
        h.src(t, psn, 1, &payload(psn, PAYLOAD));
        octets += PAYLOAD as u64;
        t += GAP;
    }
    (t, octets)
}

/// A range request naming every PSN of every retained block, FALLBACK set:
/// 64 entries, 8 + 4 + 64 · 4 = 268 octets on the wire.
fn whole_retention(h: &Hb, id: u16) -> (Vec<PsnRange>, u16) {
    let (start, _) = h.csf.oldest_block().unwrap();
    let ranges = (0..BLOCKS as u32)
        .map(|b| PsnRange::new(start.wrapping_add(b * K as u32), K as u32))
        .collect();
    (ranges, id)
}

fn range_req(ranges: &[PsnRange], id: u16, fallback: bool) -> RepairRequest<'_> {
    RepairRequest {
        flow_id: 0xBEEF,
        fallback,
        kind: RequestKind::Ranges(RangeRequest {
            request_id: id,
            ranges: LostRanges::from_slice(ranges),
        }),
    }
}

/// Octets and count of the answers (RETX: coded or Source Copy) in `msgs`.
fn answered(msgs: &[Vec<u8>]) -> (u64, u64) {
    let reps = repairs(msgs);
    let octets = msgs
        .iter()
        .zip(&reps)
        .filter(|(_, r)| r.lost.is_some() && !r.info)
        .map(|(m, _)| m.len() as u64)
        .sum();
    let n = reps.iter().filter(|r| r.lost.is_some() && !r.info).count();
    (octets, n as u64)
}

/// A CSF that has retained 64 full blocks of 32 sources, repairs sent.
fn retained() -> (Hb, Nanos, u32) {
    let mut h = Hb::new(params(), Some(cfg(1, K, 1, T)));
    h.csf.set_srtt(SRTT);
    let n = BLOCKS as u32 * K as u32;
    let (now, _) = flow(&mut h, 0, n, 0);
    assert_eq!(h.csf.blocks_held(), BLOCKS);
    h.take();
    (h, now, n)
}

#[test]
fn one_range_request_cannot_resend_the_retention() {
    assert_eq!(CsfParams::DEFAULT.retx_rate_percent as u64, RATE_PERCENT);
    assert_eq!(CsfParams::DEFAULT.retx_burst_blocks as u64, BURST_BLOCKS);
    let (mut h, now, _) = retained();
    let (ranges, id) = whole_retention(&h, 1);
    let req = range_req(&ranges, id, true);
    assert_eq!(req.encoded_len(), 268);
    h.request(now, &req);
    let (octets, n) = answered(&h.take());
    // Unbounded, this is all 2048 sources as Source Copy (2 310 144
    // octets, 8 620 times the request). The depth allows 151 552.
    assert!(
        octets <= DEPTH,
        "{n} symbols, {octets} octets > depth {DEPTH}"
    );
    // Still a real answer: at least one whole block.
    assert!(n >= K as u64, "{n} symbols");
    let d = h.csf.counters().drops;
    assert!(d.retx_budget_limited > 0);
    assert_eq!(d.retx_budget_symbols, BLOCKS as u64 * K as u64 - n);
}

#[test]
fn repeated_requests_stay_within_the_flow_rate_share() {
    let (mut h, mut now, mut next) = retained();
    let mut total = 0u64;
    let mut sourced = 0u64;
    // Ten SRTTs: the flow goes on, the attacker asks for the whole
    // retention once per SRTT (every block is answerable again by then),
    // also in block form.
    for round in 0..10u16 {
        let (ranges, id) = whole_retention(&h, round);
        h.request(now, &range_req(&ranges, id, round % 2 == 0));
        let (start, _) = h.csf.oldest_block().unwrap();
        for b in 0..BLOCKS as u32 {
            h.request(now, &block_req(start.wrapping_add(b * K as u32), round));
        }
        total += answered(&h.take()).0;
        let per_srtt = (SRTT / GAP) as u32;
        let (t, o) = flow(&mut h, next, next + per_srtt, now);
        h.take();
        (now, next, sourced) = (t, next + per_srtt, sourced + o);
    }
    // 25 % of the 1 000 000 source octets of the ten SRTTs, plus the depth:
    // 401 552 octets (unbounded: about 23 MB).
    let bound = DEPTH + sourced * RATE_PERCENT / 100;
    assert!(total <= bound, "{total} octets > {bound}");
    // And the share is used: more than the burst alone.
    assert!(total > DEPTH, "{total}");
}

#[test]
fn forged_tc_reports_share_the_budget() {
    // Selective repeat answers T/C AETH reports with Source Copy; 256 PSNs
    // per report and a fresh Report Sequence each time would otherwise
    // resend the retention in eight reports.
    let mut h = Hb::new(
        CsfParams {
            selective_repeat: true,
            ..params()
        },
        Some(cfg(1, K, 1, T)),
    );
    h.csf.set_srtt(SRTT);
    let (now, _) = flow(&mut h, 0, BLOCKS as u32 * K as u32, 0);
    h.take();
    // Nothing received: every PSN after 0xFFFFFF sent before the guard is
    // lost.
    for seq in 1..=20u16 {
        let rep = TcAethReport {
            flow_id: 0xBEEF,
            seq,
            fragment: TcAeth::new(Psn::new(0xFF_FFFF), &[]).unwrap(),
        };
        h.tc(now + 2 * MS, &rep);
    }
    let (octets, n) = answered(&h.take());
    assert!(octets <= DEPTH, "{n} symbols, {octets} octets");
    assert!(n >= K as u64, "{n} symbols");
    assert!(h.csf.counters().drops.retx_budget_limited > 0);
}

fn block_req(start: Psn, id: u16) -> RepairRequest<'static> {
    lost_req(start, id, 0, K, Bitmap256::first_n(K as usize))
}

/// A block request for `start` naming `lost`, `held` repairs held.
fn lost_req(start: Psn, id: u16, held: u8, m: u8, lost: Bitmap256) -> RepairRequest<'static> {
    RepairRequest {
        flow_id: 0xBEEF,
        fallback: false,
        kind: RequestKind::Block(BlockRequest {
            config_id: 1,
            scheme: FecScheme::CauchyRs,
            k: K,
            repairs_held: held,
            block_start: start,
            suggested_m: m,
            request_id: id,
            lost,
        }),
    }
}

#[test]
fn single_block_loss_is_still_repaired_at_once() {
    // A fresh flow: one block, three losses, one coded answer in full.
    let mut h = Hb::new(params(), Some(cfg(1, K, 1, T)));
    h.csf.set_srtt(SRTT);
    let (now, _) = flow(&mut h, 0, K as u32, 0);
    h.take();
    let mut l = Bitmap256::new();
    for j in [3, 9, 30] {
        l.set(j);
    }
    let req = lost_req(Psn::ZERO, 5, 1, 2, l);
    h.request(now, &req);
    let r = h.reps();
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|r| r.scheme == FecScheme::CauchyRs));
    assert_eq!(h.csf.counters().drops.retx_budget_limited, 0);
}

/// The losses of the last round trip are requested after the last source,
/// when nothing earns any more. A flow of a high bandwidth-delay product
/// (1024 blocks of 32 retained, 32 MB): 24 blocks lost 8 sources each, 192
/// coded symbols against a burst of 4 answers (128). Before, the budget
/// ran dry and the rest went unanswered (crem-sim at 100 Gbit/s x 20 ms:
/// 365 losses left to RDMA, 25 blocks fell back); the depth is now also a
/// quarter of the rate share of what is retained (2 MB here).
/// A CSF that has retained 1024 blocks of 32 sources (32 MB, a high
/// bandwidth-delay product), repairs sent; the time after the last.
fn big_retained() -> (Box<H<1024, { 2 * T as usize }>>, Nanos) {
    let prm = CsfParams {
        retention_budget: 64 << 20,
        ..params()
    };
    let mut h = Box::new(H::<1024, { 2 * T as usize }>::new(
        prm,
        Some(cfg(1, K, 1, T)),
    ));
    h.csf.set_srtt(SRTT);
    let mut now = 0;
    for psn in 0..1024 * K as u32 {
        h.src(now, psn, 1, &payload(psn, PAYLOAD));
        now += GAP;
    }
    assert_eq!(h.csf.blocks_held(), 1024);
    h.take();
    (h, now)
}

#[test]
fn the_last_round_trip_is_answered_after_the_last_source() {
    let (mut h, now) = big_retained();
    let (start, _) = h.csf.oldest_block().unwrap();
    let mut lost = Bitmap256::new();
    for j in 8..16 {
        lost.set(j);
    }
    let mut symbols = 0u64;
    for b in 0..24u32 {
        let req = lost_req(start.wrapping_add(b * K as u32), b as u16 + 1, 0, 8, lost);
        h.request(now + SRTT + b as u64 * GAP, &req);
        symbols += answered(&h.take()).1;
    }
    assert_eq!(h.csf.counters().drops.retx_budget_limited, 0);
    assert_eq!(symbols, 24 * 8);
}

/// The retained term's bound: one forged FALLBACK request of 64 ranges of
/// 255 PSNs (16 320 Source Copies, about 19 MB unbounded) draws at most a
/// quarter of the 25 % share of the 32 MB retained, 2 048 000 octets.
#[test]
fn a_forged_request_draws_at_most_the_retained_term() {
    let (mut h, now) = big_retained();
    let (start, _) = h.csf.oldest_block().unwrap();
    let ranges: Vec<PsnRange> = (0..64u32)
        .map(|i| PsnRange::new(start.wrapping_add(i * 255), 255))
        .collect();
    h.request(now + SRTT, &range_req(&ranges, 9, true));
    let (octets, n) = answered(&h.take());
    let depth = 1024 * K as u64 * PAYLOAD as u64 * RATE_PERCENT / 400;
    assert!(octets <= depth, "{n} symbols, {octets} octets > {depth}");
    assert!(
        octets + SYMBOL_MAX > depth,
        "{n} symbols, {octets} octets: the depth is paid"
    );
    assert!(h.csf.counters().drops.retx_budget_limited > 0);
}
