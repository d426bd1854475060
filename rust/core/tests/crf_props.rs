//! Property tests: arbitrary inputs never panic or exceed a capacity, and
//! an end-to-end lossy channel with a CSF model delivers every packet
//! byte-exact or accounts for it.

mod crf_util;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crem_core::engine::crf::{Crf, CrfConfig, SourceVerdict, TcThresholds};
use crem_core::engine::{FecConfig, MS};
use crem_core::fec::Scheme;
use crem_core::psn::Psn;
use crem_core::wire::{self, Bitmap256, FecScheme, Message, Repair};
use crf_util::*;
use proptest::prelude::*;

type Small = Crf<crem_core::engine::crf::Inline<4, 512, 16, 8>>;

#[derive(Clone, Debug)]
enum Op {
    Source {
        delta: i16,
        len: u8,
        ce: bool,
        read: Option<u32>,
    },
    Repair {
        cfg: u8,
        scheme: u8,
        k: u8,
        index: u8,
        start_delta: i16,
        present: [u32; 2],
        lost: Option<[u32; 2]>,
        last: bool,
        info: bool,
        session: u16,
        t_delta: i8,
        fill: u8,
    },
    Raw(Vec<u8>),
    Timer(u32),
    Accept {
        id: u8,
        scheme: u8,
        k: u8,
        m: u8,
        t: u8,
    },
    Release(u8),
    Hold(u32),
    Tc(Option<(u32, u16)>),
    Close,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<i16>(), any::<u8>(), any::<bool>(), proptest::option::weighted(0.1, 0u32..100_000))
            .prop_map(|(d, len, ce, read)| Op::Source { delta: d % 40, len, ce, read }),
        4 => (
            0u8..4, 0u8..4, 0u8..20, any::<u8>(), any::<i16>(), any::<[u32; 2]>(),
            proptest::option::of(any::<[u32; 2]>()), any::<bool>(), proptest::bool::weighted(0.1),
            0u16..4, -1i8..=1, any::<u8>()
        )
            .prop_map(|(cfg, scheme, k, index, sd, present, lost, last, info, session, t_delta, fill)| Op::Repair {
                cfg, scheme, k, index: index % 24, start_delta: sd % 64, present, lost, last, info,
                session, t_delta, fill,
            }),
        1 => proptest::collection::vec(any::<u8>(), 0..80).prop_map(Op::Raw),
        4 => (0u32..3_000_000).prop_map(Op::Timer),
        1 => (0u8..4, 0u8..4, 0u8..20, 0u8..4, 0u8..120)
            .prop_map(|(id, scheme, k, m, t)| Op::Accept { id, scheme, k, m, t }),
        1 => (0u8..4).prop_map(Op::Release),
        1 => (0u32..2_000_000).prop_map(Op::Hold),
        1 => proptest::option::of((0u32..2_000_000, 0u16..10)).prop_map(Op::Tc),
        1 => Just(Op::Close),
    ]
}

fn scheme(s: u8) -> Scheme {
    match s {
        0 => Scheme::SourceCopy,
        2 => Scheme::Xor,
        _ => Scheme::CauchyRs,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(300)))]

    /// Arbitrary sequences of sources, REPAIRs (well-formed with random
    /// fields, and raw bytes), timers, configuration changes: no panic, no
    /// capacity exceeded, no release of a packet the caller does not hold,
    /// nothing held longer than the largest H in force.
    #[test]
    fn arbitrary_inputs_never_panic(ops in proptest::collection::vec(op(), 1..120)) {
        let mut cfg = CrfConfig::new(FLOW);
        cfg.hold_time = 500_000;
        cfg.reorder_allowance = 300_000;
        cfg.srtt = 2 * MS;
        let mut crf: Box<Small> = Box::new(Small::new(cfg));
        crf.accept_config(FecConfig { id: 1, scheme: Scheme::CauchyRs, k: 8, m: 2, t: 64 });
        let mut host = Host { source_cap: 512, repair_cap: 8, ..Default::default() };
        let mut ws = Ws::new(8 * 64);
        let mut now = 0u64;
        let mut cursor: u32 = 0xFF_FF00;
        let mut max_h = 500_000u64;
        let run_timers = |crf: &mut Small, host: &mut Host, ws: &mut Ws, until: u64| {
            for _ in 0..10_000 {
                match crf.next_deadline() {
                    Some(d) if d <= until => {
                        host.now = host.now.max(d);
                        let t = host.now;
                        crf.on_timer(t, host, &mut ws.ws());
                    }
                    _ => break,
                }
            }
            host.now = host.now.max(until);
        };
        for o in ops {
            match o {
                Op::Source { delta, len, ce, read } => {
                    cursor = cursor.wrapping_add(delta as i32 as u32) & 0xFF_FFFF;
                    let p = Psn::new(cursor);
                    let bytes = match read {
                        Some(d) => read_request(p, d),
                        None => send_packet(p, len as usize),
                    };
                    let v = crf.on_source(now, p, &bytes, ce, &mut host);
                    if v == SourceVerdict::Hold {
                        prop_assert!(!host.held.contains_key(&p.value()));
                        host.held.insert(p.value(), (bytes, false, now));
                    }
                }
                Op::Repair { cfg, scheme: sc, k, index, start_delta, present, lost, last, info, session, t_delta, fill } => {
                    let k = k.max(1);
                    let mut pres = Bitmap256::from_words([present[0], present[1], 0, 0, 0, 0, 0, 0]);
                    pres.truncate(k as usize);
                    if pres.is_empty() { pres.set(0); }
                    let lost = lost.map(|l| {
                        let mut b = Bitmap256::from_words([l[0], l[1], 0, 0, 0, 0, 0, 0]).and(&pres);
                        if b.is_empty() { b = pres; }
                        b
                    });
                    let t = (64i32 + t_delta as i32).max(1) as usize;
                    let sym = vec![fill; if info { 0 } else { t }];
                    let mut idx = index;
                    if sc == 0 {
                        idx = pres.iter().nth(index as usize % pres.count() as usize).unwrap_or(0) as u8;
                    }
                    let m = Repair {
                        flow_id: FLOW,
                        last,
                        info,
                        config_id: cfg,
                        scheme: FecScheme::from_u8(sc),
                        k,
                        repair_index: idx,
                        block_start: Psn::new(cursor.wrapping_add(start_delta as i32 as u32)),
                        session_id: session,
                        present: pres,
                        lost: if info || sc == 0 || sc == 2 { None } else { lost },
                        symbol: &sym,
                    };
                    let mut buf = vec![0u8; m.encoded_len()];
                    if let Ok(n) = m.encode(&mut buf) {
                        let d = Repair::decode(&buf[..n]).unwrap();
                        crf.on_repair(now, &d, fill & 1 == 1, &mut host, &mut ws.ws());
                    }
                }
                Op::Raw(bytes) => {
                    if let Ok(Message::Repair(r)) = wire::decode(&bytes) {
                        crf.on_repair(now, &r, false, &mut host, &mut ws.ws());
                    }
                }
                Op::Timer(dt) => {
                    now += dt as u64;
                    run_timers(&mut crf, &mut host, &mut ws, now);
                }
                Op::Accept { id, scheme: sc, k, m, t } => {
                    crf.accept_config(FecConfig { id, scheme: scheme(sc), k, m, t: t as u16 });
                }
                Op::Release(id) => {
                    if !crf.config_in_use(id) {
                        crf.release_config(id);
                    }
                }
                Op::Hold(h) => {
                    crf.set_hold_time(h as u64);
                    max_h = max_h.max(h as u64);
                }
                Op::Tc(t) => crf.set_tc(t.map(|(t, c)| TcThresholds { t_thresh: t as u64, c_thresh: c as u32 })),
                Op::Close => crf.close(&mut host),
            }
            host.now = now;
            // Pending releases run right away, as a caller would.
            run_timers(&mut crf, &mut host, &mut ws, now);
            prop_assert!(host.sources.len() <= 512);
            prop_assert!(host.repairs.len() <= 8);
            prop_assert!(crf.held() <= 16);
            prop_assert_eq!(crf.held(), host.held.len());
            prop_assert!(crf.open_blocks() <= 4);
            prop_assert!(crf.repairs_held() <= 8);
            prop_assert_eq!(crf.repairs_held(), host.repairs.len());
            prop_assert!(crf.debug_index_ok());
            prop_assert_eq!(host.bogus_releases, 0);
            for d in &host.delivered {
                prop_assert!(d.held_for <= max_h);
            }
            if let Some(d) = crf.next_deadline() {
                prop_assert!(d > now, "timer work left behind: {} <= {}", d, now);
            }
        }
        run_timers(&mut crf, &mut host, &mut ws, now + 10_000_000_000);
        prop_assert!(host.held.is_empty());
    }
}

// ---------------------------------------------------------------------------
// End-to-end channel.

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Source(u32),
    ToCrf(Vec<u8>),
    ToCsf(Vec<u8>),
}

#[derive(Clone, Debug)]
struct Channel {
    n: u32,
    k: u8,
    m: u8,
    src_loss: u8,
    crem_loss: u8,
    jitter: u32,
    hold: u64,
    seed: u64,
    coded: bool,
    tc: bool,
}

fn channel() -> impl Strategy<Value = Channel> {
    (
        (
            20u32..160,
            prop_oneof![Just(4u8), Just(8), Just(16)],
            0u8..4,
            0u8..25,
            0u8..30,
        ),
        (
            0u32..300_000,
            0u64..600_000,
            any::<u64>(),
            proptest::bool::weighted(0.85),
            any::<bool>(),
        ),
    )
        .prop_map(
            |((n, k, m, src_loss, crem_loss), (jitter, hold, seed, coded, tc))| Channel {
                n,
                k,
                m,
                src_loss,
                crem_loss,
                jitter,
                hold,
                seed,
                coded,
                tc,
            },
        )
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pct(&mut self, p: u8) -> bool {
        self.next() % 100 < p as u64
    }
    fn below(&mut self, n: u32) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n as u64
        }
    }
}

/// Runs the channel; returns the rig and the original payloads.
fn simulate(ch: &Channel) -> (Rig, Vec<Vec<u8>>, BTreeMap<u32, u32>) {
    let mut rng = Rng(ch.seed | 1);
    let mut cfg = base_cfg();
    cfg.hold_time = ch.hold;
    cfg.reorder_allowance = 300_000;
    cfg.srtt = 2 * MS;
    cfg.coded_retx = ch.coded;
    if ch.tc {
        cfg.tc = Some(TcThresholds::from_rate(100_000, 2 * MS));
    }
    let mut rig = Rig::new(cfg);
    let fc = cauchy(1, ch.k, ch.m, 160);
    assert!(rig.crf.accept_config(fc));
    let first = 0xFF_FFF0u32; // crosses the PSN wrap
    let payloads: Vec<Vec<u8>> = (0..ch.n)
        .map(|i| send_packet(Psn::new(first.wrapping_add(i)), 20 + (i as usize * 7) % 90))
        .collect();
    let mut csf = Csf::new(fc, first, payloads.iter().cloned().map(Some).collect());
    let mut q: BinaryHeap<Reverse<(u64, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |q: &mut BinaryHeap<Reverse<(u64, u64, Ev)>>, t: u64, e: Ev| {
        seq += 1;
        q.push(Reverse((t, seq, e)));
    };
    let one_way = MS;
    // The first packet, the last block and one packet after it are never
    // lost, so every loss is detectable (losses before the first packet
    // observed, with m = 0, and tail losses are RDMA's business).
    let safe_from = ch.n.saturating_sub(ch.k as u32 + 1);
    for i in 0..ch.n {
        let t = i as u64 * 10_000;
        let lost = i > 0 && i < safe_from && rng.pct(ch.src_loss);
        if !lost {
            push(&mut q, t + one_way + rng.below(ch.jitter), Ev::Source(i));
        }
        // Block closes: ordinary repairs.
        if let Some(b) = csf.blocks.iter().position(|&(o, k)| o + k as u32 == i + 1) {
            for r in csf.ordinary(b) {
                if !rng.pct(ch.crem_loss) {
                    push(&mut q, t + one_way + rng.below(ch.jitter), Ev::ToCrf(r));
                }
            }
        }
    }
    let mut arrivals: BTreeMap<u32, u32> = BTreeMap::new();
    let horizon = 10_000 * MS;
    loop {
        // Whichever comes first: the next message or the CRF's timer.
        let next_ev = q.peek().map(|Reverse((t, _, _))| *t);
        let next_timer = rig.crf.next_deadline();
        let timer_first = match (next_timer, next_ev) {
            (Some(d), Some(t)) => d < t,
            (Some(_), None) => true,
            _ => false,
        };
        if timer_first {
            let d = next_timer.unwrap_or(horizon);
            if d > horizon {
                break;
            }
            rig.advance(d);
        } else {
            let Some(Reverse((t, _, e))) = q.pop() else {
                break;
            };
            if t > horizon {
                break;
            }
            rig.advance(t);
            match e {
                Ev::Source(i) => {
                    *arrivals.entry(i).or_default() += 1;
                    let p = first.wrapping_add(i) & 0xFF_FFFF;
                    rig.source(p, &payloads[i as usize], false);
                }
                Ev::ToCrf(m) => rig.repair_bytes(&m, false),
                Ev::ToCsf(m) => {
                    if let Ok(Message::RepairRequest(r)) = wire::decode(&m) {
                        for a in csf.answer(&r) {
                            if !rng.pct(ch.crem_loss) {
                                push(&mut q, t + one_way + rng.below(ch.jitter / 4), Ev::ToCrf(a));
                            }
                        }
                    }
                }
            }
        }
        for m in rig.sent() {
            if !rng.pct(ch.crem_loss) {
                push(&mut q, rig.now + one_way, Ev::ToCsf(m));
            }
        }
    }
    rig.advance(rig.now + 1000 * MS);
    (rig, payloads, arrivals)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(120)))]

    /// Every packet reaches RDMA byte-exact as often as it arrived plus
    /// once if restored; a packet that never reaches it was given up and
    /// counted; with a loss-free CREM channel nothing is given up.
    #[test]
    fn lossy_channel_end_to_end(ch in channel()) {
        let (rig, payloads, arrivals) = simulate(&ch);
        let first = 0xFF_FFF0u32;
        let mut delivered: BTreeMap<u32, u32> = BTreeMap::new();
        for d in &rig.host.delivered {
            let i = d.psn.wrapping_sub(first) & 0xFF_FFFF;
            prop_assert!((i as usize) < payloads.len());
            prop_assert_eq!(&d.bytes, &payloads[i as usize], "psn {}", d.psn);
            *delivered.entry(i).or_default() += 1;
        }
        let mut restored: BTreeMap<u32, u32> = BTreeMap::new();
        for (p, _, ok) in &rig.host.restore_calls {
            if *ok {
                *restored.entry(p.wrapping_sub(first) & 0xFF_FFFF).or_default() += 1;
            }
        }
        let mut missing = 0u64;
        for i in 0..ch.n {
            let want = arrivals.get(&i).copied().unwrap_or(0) + restored.get(&i).copied().unwrap_or(0);
            prop_assert_eq!(delivered.get(&i).copied().unwrap_or(0), want, "psn offset {}", i);
            prop_assert!(restored.get(&i).copied().unwrap_or(0) <= 1);
            if want == 0 {
                missing += 1;
            }
        }
        let c = rig.crf.counters();
        prop_assert!(missing <= c.psns_abandoned + c.psns_lost_window,
            "missing {} abandoned {} {:?}", missing, c.psns_abandoned, c);
        if ch.crem_loss == 0 && ch.coded {
            prop_assert_eq!(missing, 0, "{:?}", c);
        }
        prop_assert!(rig.host.held.is_empty());
        // No packet arrives twice: reordering alone replays nothing.
        prop_assert_eq!(c.sources_replayed, 0);
        prop_assert_eq!(rig.host.bogus_releases, 0);
        prop_assert_eq!(c.icrc_failures, 0);
        for d in &rig.host.delivered {
            prop_assert!(d.held_for <= ch.hold);
        }
    }
}

#[test]
fn lossy_channel_smoke() {
    for seed in 1..40u64 {
        let ch = Channel {
            n: 150,
            k: 8,
            m: (seed % 3) as u8,
            src_loss: 15,
            crem_loss: if seed % 2 == 0 { 0 } else { 20 },
            jitter: 100_000,
            hold: 300_000,
            seed,
            coded: true,
            tc: seed % 3 == 0,
        };
        let (rig, _, _) = simulate(&ch);
        let c = rig.crf.counters();
        if ch.crem_loss == 0 {
            assert_eq!(c.psns_abandoned, 0, "{seed} {c:?}");
        }
        assert!(c.restored > 0, "{seed}");
    }
}
