//! Property tests of the CSF: every symbol it sends is exactly what the
//! draft's equations give for the sources it saw (checked against
//! `fec::encode_over` over the true payloads), ordinary and coded symbols
//! decode with the real decoder, and arbitrary sequences of sources, acks,
//! requests, reports, configuration changes and time never panic and never
//! exceed a capacity (ring, retention budget; the caller's store always
//! holds exactly the octets the engine accounts).

mod csf_common;
use csf_common::*;

use crem_core::engine::csf::{
    scratch_len, Csf, CsfIo, CsfParams, Inline, SourceStore, SourceVerdict,
};
use crem_core::engine::{FecConfig, Nanos, MS};
use crem_core::fec::{build_source_symbol, encode_over, Bitmap, Code, Scheme};
use crem_core::gf::RowPerCall;
use crem_core::psn::{Psn, PsnRange};
use crem_core::wire::{
    self, Bitmap256, BlockRequest, FecScheme, LostRanges, Message, RangeRequest, Repair,
    RepairRequest, RequestKind, Segment, TcAeth, TcAethReport,
};
use proptest::prelude::*;
use std::collections::HashMap;

/// Payload length of a PSN (fixed, so RDMA retransmissions are identical).
fn plen(psn: u32, max: usize) -> usize {
    1 + (psn as usize).wrapping_mul(2654435761) % max
}

/// Checks one message against the true source payloads.
fn verify<'a>(msg: &'a [u8], truth: &HashMap<u32, Vec<u8>>) -> Repair<'a> {
    let r = Repair::decode(msg).expect("valid REPAIR");
    if r.info {
        return r;
    }
    let t = r.symbol.len();
    let src = |j: u8| -> Vec<u8> {
        let psn = r.block_start.wrapping_add(j as u32).value();
        let p = truth
            .get(&psn)
            .unwrap_or_else(|| panic!("no truth for {psn}"));
        let mut s = vec![0u8; t];
        build_source_symbol(p, t, &mut s).unwrap();
        s
    };
    match r.scheme {
        FecScheme::SourceCopy => {
            assert!(r.lost.is_some(), "Source Copy answers carry L");
            assert_eq!(r.symbol, &src(r.repair_index)[..]);
        }
        FecScheme::CauchyRs | FecScheme::XorParity => {
            let set = to_fec(&r.lost.unwrap_or(r.present));
            let scheme = if r.scheme == FecScheme::XorParity {
                Scheme::Xor
            } else {
                Scheme::CauchyRs
            };
            let code = Code::new(scheme, r.k, t).unwrap();
            let syms: Vec<(u8, Vec<u8>)> = set.iter().map(|j| (j, src(j))).collect();
            let mut out = vec![0u8; t];
            encode_over(
                &RowPerCall,
                &code,
                r.repair_index,
                syms.iter().map(|(j, s)| (*j, &s[..])),
                &mut out,
            )
            .unwrap();
            assert_eq!(
                r.symbol,
                &out[..],
                "symbol {} of {:?}",
                r.repair_index,
                r.block_start
            );
        }
        FecScheme::Other(s) => panic!("scheme {s}"),
    }
    r
}

#[derive(Debug, Clone)]
enum Op {
    /// A new source after `gap` skipped PSNs, consuming `span` PSNs.
    Src {
        gap: u16,
        span: u16,
        dt: u32,
    },
    /// RDMA retransmission `back` PSNs behind the newest.
    Retx {
        back: u16,
    },
    Ack {
        back: u16,
    },
    Timer {
        dt: u32,
    },
    Req {
        pick: u8,
        lost: u64,
        r: u8,
        ms: u8,
        fallback: bool,
        mangle: u8,
    },
    Ranges {
        back: u16,
        count: u8,
        n: u8,
        fallback: bool,
    },
    Tc {
        seq: u16,
        last_back: u16,
        segs: Vec<(u8, u8)>,
    },
    Drops {
        backs: Vec<u16>,
    },
    Config {
        k: u8,
        m: u8,
        t: u16,
        ahead: u16,
        xor: bool,
    },
    Srtt(u32),
    Coded(bool),
    Ordinary(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (prop_oneof![4 => Just(0u16), 1 => 0u16..40], prop_oneof![6 => Just(1u16), 1 => 1u16..300], 0u32..50_000)
            .prop_map(|(gap, span, dt)| Op::Src { gap, span, dt }),
        1 => (1u16..200).prop_map(|back| Op::Retx { back }),
        2 => (0u16..400).prop_map(|back| Op::Ack { back }),
        2 => (0u32..3_000_000).prop_map(|dt| Op::Timer { dt }),
        2 => (any::<u8>(), any::<u64>(), 0u8..8, 0u8..64, any::<bool>(), 0u8..8).prop_map(
            |(pick, lost, r, ms, fallback, mangle)| Op::Req { pick, lost, r, ms, fallback, mangle }
        ),
        1 => (0u16..600, 1u8..=255, 1u8..4, any::<bool>())
            .prop_map(|(back, count, n, fallback)| Op::Ranges { back, count, n, fallback }),
        1 => (any::<u16>(), 0u16..600, prop::collection::vec((1u8..30, 0u8..30), 0..4))
            .prop_map(|(seq, last_back, segs)| Op::Tc { seq, last_back, segs }),
        1 => prop::collection::vec(0u16..500, 0..10).prop_map(|backs| Op::Drops { backs }),
        1 => (1u8..=255, 0u8..8, 4u16..600, 0u16..100, any::<bool>())
            .prop_map(|(k, m, t, ahead, xor)| Op::Config { k, m, t, ahead, xor }),
        1 => (0u32..20_000_000).prop_map(Op::Srtt),
        1 => any::<bool>().prop_map(Op::Coded),
        1 => any::<bool>().prop_map(Op::Ordinary),
    ]
}

#[derive(Debug, Clone)]
struct Setup {
    budget: u64,
    spread: bool,
    give_up: Nanos,
    k: u8,
    m: u8,
    t: u16,
    start: u32,
    tc_max: u16,
    retx_rate: u8,
    retx_burst: u8,
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        prop_oneof![Just(u64::MAX), 200u64..20_000],
        any::<bool>(),
        prop_oneof![Just(0u64), 1u64..20_000_000],
        1u8..=40,
        0u8..6,
        prop_oneof![Just(4u16), 16u16..400],
        prop_oneof![Just(0xFF_FF00u32), any::<u32>()],
        0u16..64,
        prop_oneof![Just(CsfParams::DEFAULT.retx_rate_percent), 0u8..=200],
        prop_oneof![Just(CsfParams::DEFAULT.retx_burst_blocks), 0u8..6],
    )
        .prop_map(
            |(budget, spread, give_up, k, m, t, start, tc_max, retx_rate, retx_burst)| Setup {
                budget,
                spread,
                give_up,
                k,
                m,
                t,
                start,
                tc_max,
                retx_rate,
                retx_burst,
            },
        )
}

const B: usize = 6;
const A: usize = 1024;

fn run(s: &Setup, ops: &[Op]) {
    let params = CsfParams {
        flow_id: 0x1234,
        retention_budget: s.budget,
        spread: s.spread,
        spread_deadline: 200_000,
        give_up_after: s.give_up,
        selective_repeat: true,
        tc_max_per_report: s.tc_max,
        retx_rate_percent: s.retx_rate,
        retx_burst_blocks: s.retx_burst,
        ..CsfParams::DEFAULT
    };
    let mut h: H<B, A> = H::new(params, None);
    // The retransmission budget: it starts with one burst for the first
    // configuration coded (at most the largest of those set), and earns
    // retx_rate % of each source coded. Counted in hundredths of octets.
    let burst_of =
        |k: u8, t: u16| s.retx_burst.max(1) as u64 * k as u64 * scratch_len(t) as u64 * 100;
    let mut retx_allowed = 0u64;
    let mut retx_initial = 0u64;
    let mut retx_sent = 0u64;
    if h.csf.set_config(cfg(1, s.k, s.m, s.t), Psn::ZERO).is_ok() {
        retx_initial = burst_of(s.k, s.t);
    }
    let mut truth: HashMap<u32, Vec<u8>> = HashMap::new();
    let mut t_max = s.t as usize;
    let mut now: Nanos = 0;
    let mut next = Psn::new(s.start);
    let mut started = false;
    let mut known: Vec<(Psn, u8, u8, Bitmap256)> = Vec::new();
    let mut cfg_id = 1u8;
    for o in ops {
        now = now.saturating_add(1);
        match o {
            Op::Src { gap, span, dt } => {
                now += *dt as u64;
                let psn = if started {
                    next.wrapping_add(*gap as u32)
                } else {
                    next
                };
                started = true;
                let len = plen(psn.value(), t_max.max(3) - 2);
                let p = payload(psn.value(), len);
                truth.insert(psn.value(), p.clone());
                let v = h.src(now, psn.value(), *span as u32, &p);
                if matches!(v, SourceVerdict::Retain | SourceVerdict::NotRetained) {
                    retx_allowed += p.len() as u64 * s.retx_rate as u64;
                }
                next = psn.wrapping_add(*span as u32);
            }
            Op::Retx { back } => {
                if started {
                    let psn = next.wrapping_sub(*back as u32).value();
                    if let Some(p) = truth.get(&psn).cloned() {
                        let v = h.src(now, psn, 1, &p);
                        assert!(!v.retain());
                    }
                }
            }
            Op::Ack { back } => h.ack(now, next.wrapping_sub(*back as u32 + 1).value()),
            Op::Timer { dt } => {
                now += *dt as u64;
                h.timer(now);
            }
            Op::Req {
                pick,
                lost,
                r,
                ms,
                fallback,
                mangle,
            } => {
                let (start, k, id, present) = known
                    .get(*pick as usize % known.len().max(1))
                    .copied()
                    .unwrap_or((next, 4, 1, Bitmap256::first_n(4)));
                let mut l = Bitmap256::new();
                for j in 0..k.min(64) {
                    if lost >> j & 1 == 1 && (present.get(j as usize) || *mangle == 1) {
                        l.set(j as usize);
                    }
                }
                if l.is_empty() {
                    continue;
                }
                let x = l.count() as u8;
                let req = RepairRequest {
                    flow_id: 0x1234,
                    fallback: *fallback,
                    kind: RequestKind::Block(BlockRequest {
                        config_id: if *mangle == 2 { id ^ 1 } else { id },
                        scheme: FecScheme::CauchyRs,
                        k: if *mangle == 3 { k.max(2) - 1 } else { k },
                        repairs_held: *r,
                        block_start: if *mangle == 4 { start.next() } else { start },
                        suggested_m: (*ms).min(x),
                        request_id: *pick as u16,
                        lost: l,
                    }),
                };
                h.request(now, &req);
            }
            Op::Ranges {
                back,
                count,
                n,
                fallback,
            } => {
                let ranges: Vec<PsnRange> = (0..*n as u32)
                    .map(|i| {
                        PsnRange::new(
                            next.wrapping_sub(*back as u32).wrapping_add(i * 300),
                            *count as u32,
                        )
                    })
                    .collect();
                let req = RepairRequest {
                    flow_id: 0x1234,
                    fallback: *fallback,
                    kind: RequestKind::Ranges(RangeRequest {
                        request_id: 9,
                        ranges: LostRanges::from_slice(&ranges),
                    }),
                };
                h.request(now, &req);
            }
            Op::Tc {
                seq,
                last_back,
                segs,
            } => {
                let last = next.wrapping_sub(*last_back as u32);
                let mut v = Vec::new();
                let mut p = last;
                for (g, l) in segs {
                    let left = p.wrapping_add(*g as u32 + 1);
                    let right = left.wrapping_add(*l as u32);
                    v.push(Segment { left, right });
                    p = right;
                }
                if let Ok(fragment) = TcAeth::new(last, &v) {
                    h.tc(
                        now,
                        &TcAethReport {
                            flow_id: 0x1234,
                            seq: *seq,
                            fragment,
                        },
                    );
                }
            }
            Op::Drops { backs } => {
                let psns: Vec<u32> = backs
                    .iter()
                    .map(|b| next.wrapping_sub(*b as u32).value())
                    .collect();
                h.path_drops(now, &psns);
            }
            Op::Config {
                k,
                m,
                t,
                ahead,
                xor,
            } => {
                cfg_id = cfg_id.wrapping_add(1);
                let c = FecConfig {
                    id: cfg_id,
                    scheme: if *xor { Scheme::Xor } else { Scheme::CauchyRs },
                    k: *k,
                    m: if *xor { (*m).min(1) } else { *m },
                    t: *t,
                };
                if h.csf
                    .set_config(c, next.wrapping_add(*ahead as u32))
                    .is_ok()
                {
                    t_max = t_max.min(*t as usize);
                    retx_initial = retx_initial.max(burst_of(*k, *t));
                }
            }
            Op::Srtt(v) => h.csf.set_srtt(*v as u64),
            Op::Coded(b) => h.csf.set_coded_retx(*b),
            Op::Ordinary(b) => h.csf.set_ordinary_repairs(*b),
        }
        // Every message is a valid REPAIR whose symbol is exactly right.
        for m in h.take() {
            let r = verify(&m, &truth);
            if r.lost.is_some() && !r.info {
                retx_sent += m.len() as u64 * 100;
            }
            assert_eq!(r.flow_id, 0x1234);
            if !known.iter().any(|b| b.0 == r.block_start) {
                known.push((r.block_start, r.k, r.config_id, r.present));
                if known.len() > 16 {
                    known.remove(0);
                }
            }
        }
        // However the requests and reports are chosen, coded and Source
        // Copy answers never exceed the budget credited plus the burst.
        assert!(
            retx_sent <= retx_initial + retx_allowed,
            "retransmitted {} > burst {} + credit {} (1/100 octets)",
            retx_sent,
            retx_initial,
            retx_allowed
        );
        // Capacities.
        let c = *h.csf.counters();
        // Proactive answers: at most one symbol per reported drop (the
        // draft: no more than the sources reported lost).
        assert!(c.repairs_proactive <= c.path_dropped_psns, "{c:?}");
        assert!(h.csf.blocks_held() <= B);
        assert!(c.retention_octets <= s.budget);
        assert!(c.retention_octets_max <= s.budget);
        let held: u64 = h.store.pkts.values().map(|v| v.len() as u64).sum();
        assert_eq!(held, c.retention_octets, "store and engine agree");
        // A deadline, if any, is computed without panicking.
        let _ = h.csf.next_deadline();
    }
    // Releasing everything leaves nothing behind.
    h.csf.shutdown(&mut h.store);
    assert!(h.store.pkts.is_empty());
    assert_eq!(h.csf.retention_octets(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_sequences_keep_invariants(s in setup(), ops in prop::collection::vec(op(), 1..160)) {
        run(&s, &ops);
    }

    /// Ordinary repairs of one block, absent positions included, recover any
    /// loss pattern they can with the real decoder.
    #[test]
    fn ordinary_repairs_decode(
        k in 1u8..=48,
        m in 1u8..=8,
        t in 64u16..200,
        start in prop_oneof![Just(0xFF_FFF0u32), any::<u32>()],
        spans in prop::collection::vec(prop_oneof![5 => Just(1u32), 1 => 2u32..5], 48),
        loss_seed in any::<u64>(),
    ) {
        let mut h: H<4, 4096> = H::new(CsfParams::DEFAULT, Some(cfg(1, k, m, t)));
        let mut psn = Psn::new(start);
        let mut pos = 0u32;
        let mut sources: HashMap<u8, Vec<u8>> = HashMap::new();
        let mut i = 0;
        while pos < k as u32 {
            let span = spans[i % spans.len()];
            i += 1;
            let p = payload(psn.value(), plen(psn.value(), t as usize - 2));
            h.src(i as u64, psn.value(), span, &p);
            sources.insert(pos as u8, p);
            pos += span;
            psn = psn.wrapping_add(span);
        }
        let reps = h.reps();
        prop_assert_eq!(reps.len(), m as usize);
        let present = to_fec(&reps[0].present);
        prop_assert_eq!(present, sources.keys().copied().collect::<Bitmap>());
        prop_assert_eq!(reps[0].block_start, Psn::new(start));
        // Lose up to m present sources (seeded choice).
        let mut lost = Bitmap::EMPTY;
        let mut seed = loss_seed;
        for j in present.iter() {
            if lost.len() < m as usize && seed & 1 == 1 {
                lost.insert(j);
            }
            seed = seed.rotate_right(1) ^ 0x9E37_79B9_7F4A_7C15;
        }
        let held: HashMap<u8, Vec<u8>> = sources.iter()
            .filter(|(j, _)| !lost.contains(**j))
            .map(|(j, p)| (*j, p.clone()))
            .collect();
        let got = decode_block(reps[0].k, t, &present, &held, &reps).unwrap();
        prop_assert_eq!(got.len(), lost.len());
        for j in lost.iter() {
            prop_assert_eq!(&got[&j], &sources[&j]);
        }
    }

    /// Coded retransmission: with r ordinary repairs held and X lost, the
    /// CSF's answer (M in [X − r, X]) plus what the CRF holds decodes.
    #[test]
    fn coded_retransmission_decodes(
        k in 2u8..=40,
        m in 0u8..=4,
        lost_bits in any::<u64>(),
        r_pick in any::<u8>(),
        delta in 0u8..2,
    ) {
        let t = 80u16;
        let mut h: H<4, 4096> = H::new(CsfParams::DEFAULT, Some(cfg(5, k, m, t)));
        let pl: Vec<Vec<u8>> = (0..k as u32).map(|i| payload(1000 + i, plen(i, 70))).collect();
        for (i, p) in pl.iter().enumerate() {
            h.src(i as u64, 1000 + i as u32, 1, p);
        }
        if m == 0 {
            h.timer(10 * MS);
        }
        let mut ordinary = h.reps();
        if m == 0 {
            // No ordinary round: the tail notice says where the block ends.
            prop_assert_eq!(ordinary.len(), 1);
            let n = &ordinary[0];
            prop_assert!(n.info && n.last && n.session_id == 0 && n.k == k, "{:?}", n);
            ordinary.clear();
        }
        prop_assert_eq!(ordinary.len(), m as usize);
        let lost: Bitmap = (0..k).filter(|j| lost_bits >> (j % 64) & 1 == 1).collect();
        prop_assume!(!lost.is_empty());
        let x = lost.len() as u8;
        let r = if m == 0 { 0 } else { r_pick % (m + 1) }.min(x);
        let ms = (x - r + delta).min(x);
        let mut l = Bitmap256::new();
        for j in lost.iter() {
            l.set(j as usize);
        }
        let req = RepairRequest {
            flow_id: 0,
            fallback: false,
            kind: RequestKind::Block(BlockRequest {
                config_id: 5, scheme: FecScheme::CauchyRs, k, repairs_held: r,
                block_start: Psn::new(1000), suggested_m: ms, request_id: 42, lost: l,
            }),
        };
        h.request(20 * MS, &req);
        let ans = h.reps();
        prop_assert!(ans.len() as u8 <= x, "never above the losses");
        prop_assert!(ans.len() as u8 >= (x - r).max(1));
        let held: HashMap<u8, Vec<u8>> = (0..k).filter(|j| !lost.contains(*j)).map(|j| (j, pl[j as usize].clone())).collect();
        let mut use_reps: Vec<_> = ordinary[..r as usize].to_vec();
        use_reps.extend(ans.iter().copied());
        let got = decode_block(k, t, &Bitmap::first(k as usize), &held, &use_reps).unwrap();
        for j in lost.iter() {
            prop_assert_eq!(&got[&j], &pl[j as usize]);
        }
    }

    /// Raw bytes as messages and packets: never a panic, capacities kept.
    #[test]
    fn garbage_never_panics(
        items in prop::collection::vec((any::<u8>(), any::<u32>(), any::<u32>(), prop::collection::vec(any::<u8>(), 0..80)), 1..120)
    ) {
        let mut csf: Box<Csf<Inline<3, 300>>> = Box::new(Csf::new(CsfParams { retention_budget: 500, selective_repeat: true, ..CsfParams::DEFAULT }));
        let _ = csf.set_config(cfg(1, 5, 2, 100), Psn::ZERO);
        let mut store = Store::default();
        let mut out = Out::default();
        let mut scratch = [0u8; 120];
        let mut now = 0u64;
        for (kind, a, b, bytes) in &items {
            now = now.wrapping_add(*b as u64 % 1_000_000);
            let io = &mut CsfIo { gf: &RowPerCall, sink: &mut out, store: &mut store, scratch: &mut scratch[..] };
            match kind % 8 {
                0 | 1 => {
                    let v = csf.on_source(now, Psn::new(*a), *b % 5, bytes, io);
                    if v.retain() {
                        io.store.pkts.insert(Psn::new(*a).value(), bytes.clone());
                    }
                }
                2 => csf.on_rdma_ack(now, Psn::new(*a), io.store),
                3 => csf.on_timer(now.wrapping_add(*a as u64), io),
                4 => { let _ = csf.on_roce(now, bytes, *a, io); }
                5 => csf.set_srtt(*a as u64),
                6 => csf.on_path_drops(now, bytes.chunks(3).map(|c| Psn::new(c.iter().fold(*a, |x, y| x.wrapping_mul(7).wrapping_add(*y as u32)))), io),
                _ => {
                    if let Ok(msg) = wire::decode(bytes) {
                        match msg {
                            Message::RepairRequest(r) => csf.on_repair_request(now, &r, io),
                            Message::TcAeth(r) => csf.on_tc_aeth(now, &r, io),
                            _ => {}
                        }
                    }
                }
            }
            prop_assert!(csf.blocks_held() <= 3);
            prop_assert!(csf.retention_octets() <= 500);
            for m in out.msgs.drain(..) {
                prop_assert!(Repair::decode(&m).is_ok());
            }
        }
        let _ = store.source(Psn::ZERO);
    }
}

#[test]
fn garbage_requests_as_wire_messages() {
    // Requests and reports built from wire bytes go through the same paths.
    let mut h: H<4, 4096> = H::new(
        CsfParams {
            selective_repeat: true,
            ..CsfParams::DEFAULT
        },
        Some(cfg(1, 4, 1, 64)),
    );
    for i in 0..4u32 {
        h.src(i as u64, i, 1, &payload(i, 20));
    }
    h.take();
    let req = RepairRequest {
        flow_id: 0,
        fallback: false,
        kind: RequestKind::Block(BlockRequest {
            config_id: 1,
            scheme: FecScheme::CauchyRs,
            k: 4,
            repairs_held: 1,
            block_start: Psn::ZERO,
            suggested_m: 1,
            request_id: 3,
            lost: Bitmap256::first_n(2),
        }),
    };
    let mut buf = [0u8; 64];
    let n = req.encode(&mut buf).unwrap();
    match wire::decode(&buf[..n]).unwrap() {
        Message::RepairRequest(r) => h.request(MS, &r),
        _ => unreachable!(),
    }
    let truth: HashMap<u32, Vec<u8>> = (0..4u32).map(|i| (i, payload(i, 20))).collect();
    let msgs = h.take();
    assert_eq!(msgs.len(), 1);
    verify(&msgs[0], &truth);
}
