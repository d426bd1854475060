//! Property tests: arbitrary message and time sequences never panic either
//! side, and a CSF and a CRF talking over a lossy, reordering channel agree on
//! every configuration the CSF uses.

mod negotiation_common;
use negotiation_common::*;

use crem_core::engine::negotiation::{
    choose_flow_id, ConfigParams, CrfState, CsfState, HelloAckOutcome, HelloOutcome, NegEvent,
    MAX_ATTEMPTS,
};
use crem_core::engine::{FecConfig, Nanos, MS};
use crem_core::fec::Scheme;
use crem_core::psn::Psn;
use crem_core::wire::{decode, CloseReason, Message};
use proptest::prelude::*;

/// Feeds one decoded message to the CSF.
fn csf_input(c: &mut crem_core::engine::negotiation::CsfNegotiation, m: &Message<'_>, s: &mut Rec) {
    match m {
        Message::HelloAck(a) => {
            c.on_hello_ack(a, s);
        }
        Message::ParamAck(a) => {
            c.on_param_ack(a);
        }
        Message::Close(x) => {
            c.on_close(x);
        }
        _ => {}
    }
}

fn crf_input(
    r: &mut crem_core::engine::negotiation::CrfNegotiation,
    m: &Message<'_>,
    s: &mut Rec,
    id: u32,
) {
    match m {
        Message::Hello(h) => {
            r.on_hello(h, || Some(id), s);
        }
        Message::ParamUpdate(p) => {
            r.on_param_update(p, s);
        }
        Message::Close(x) => {
            r.on_close(x);
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum Op {
    Bytes(Vec<u8>),
    /// A structurally valid message built from small numbers (likely to hit
    /// live flow IDs, nonces and Config IDs).
    Crafted(u8, u32, u8, u8, u8, u16),
    Timer(u64),
    Start(u64),
    Propose(u8, u8, u16, u32, u64),
    Block(u32),
    Closed(u8, u32),
    Close(u16),
    Lead(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..80).prop_map(Op::Bytes),
        (0u8..6, 0u32..4, 0u8..4, 0u8..70, 0u8..20, any::<u16>())
            .prop_map(|(a, b, c, d, e, f)| Op::Crafted(a, b, c, d, e, f)),
        any::<u64>().prop_map(Op::Timer),
        (0u64..3).prop_map(Op::Start),
        (0u8..70, 0u8..20, any::<u16>(), any::<u32>(), any::<u64>())
            .prop_map(|(a, b, c, d, e)| Op::Propose(a, b, c, d, e)),
        any::<u32>().prop_map(Op::Block),
        (0u8..8, any::<u32>()).prop_map(|(a, b)| Op::Closed(a, b)),
        any::<u16>().prop_map(Op::Close),
        any::<u32>().prop_map(Op::Lead),
    ]
}

fn crafted(kind: u8, fid: u32, id: u8, k: u8, m: u8, x: u16) -> Vec<u8> {
    use crem_core::wire::*;
    let msg = match kind {
        0 => Message::HelloAck(HelloAck {
            flow_id: fid,
            flow_kind: 1,
            af: AddressFamily::V4,
            supported_schemes: x,
            max_k: k,
            max_m: m,
            max_t: x,
            rdma_mtu: 4096,
            nonce: (x % 3) as u64,
            max_open_blocks: x,
        }),
        1 => Message::ParamAck(ParamAck {
            flow_id: fid,
            config_id: id,
            status: ParamStatus::from_u8(m % 5),
        }),
        2 => Message::Close(Close {
            flow_id: fid,
            reason: CloseReason::from_u16(x % 6),
        }),
        3 => Message::Hello(Hello {
            flow_kind: 1 + (m % 2),
            supported_schemes: x,
            max_k: k,
            max_m: m,
            max_t: x,
            rdma_mtu: 4096,
            nonce: (x % 3) as u64,
            addrs: FlowAddrs::V4 {
                src: [192, 0, 2, 1],
                dst: [192, 0, 2, 2],
            },
            flow_label: 5,
        }),
        _ => Message::ParamUpdate(ParamUpdate {
            flow_id: fid,
            config_id: id,
            scheme: FecScheme::from_u8(m % 4),
            k: k.max(1),
            m,
            t: x,
            effective_psn: Psn::new(x as u32),
        }),
    };
    let mut b = vec![0u8; 80];
    let n = msg.encode(&mut b).unwrap();
    b.truncate(n);
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Nothing panics, every sent message decodes, attempts stay bounded and
    /// deadlines are consistent.
    #[test]
    fn arbitrary_sequences_never_panic(ops in prop::collection::vec(op(), 0..60)) {
        let mut c = csf();
        let mut r = crf();
        let mut s = Rec::default();
        let mut now: Nanos = 0;
        for o in ops {
            match o {
                Op::Bytes(b) => {
                    if let Ok(m) = decode(&b) {
                        csf_input(&mut c, &m, &mut s);
                        crf_input(&mut r, &m, &mut s, 1);
                    }
                }
                Op::Crafted(kind, fid, id, k, m, x) => {
                    let b = crafted(kind, fid, id, k, m, x);
                    let m = decode(&b).unwrap();
                    csf_input(&mut c, &m, &mut s);
                    crf_input(&mut r, &m, &mut s, 1 + fid % 2);
                }
                Op::Timer(t) => {
                    now = now.max(t % (10 * 1_000_000_000));
                    let _ = c.on_timer(now, &mut s);
                    // After firing, the next deadline lies in the future.
                    if let Some(d) = c.next_deadline() {
                        prop_assert!(d > now);
                    }
                }
                Op::Start(n) => c.start(now, n, &mut s),
                Op::Propose(k, m, t, psn, srtt) => {
                    let scheme = [Scheme::CauchyRs, Scheme::Xor, Scheme::SourceCopy][(k % 3) as usize];
                    let _ = c.propose(now, srtt, ConfigParams { scheme, k, m, t }, Psn::new(psn), &mut s);
                }
                Op::Block(p) => {
                    if let Some(cfg) = c.config_for_block(Psn::new(p), &mut s) {
                        let _ = r.block_opened(cfg.id);
                    }
                }
                Op::Closed(id, n) => {
                    c.blocks_closed(id, n % 4);
                    r.block_closed(id);
                }
                Op::Close(x) => {
                    if x % 2 == 0 { c.close(CloseReason::from_u16(x), &mut s) } else { r.close(CloseReason::from_u16(x), &mut s) }
                }
                Op::Lead(l) => c.set_psn_lead(l),
            }
            if let CsfState::Hello { attempts } = c.state() {
                prop_assert!((1..=MAX_ATTEMPTS).contains(&attempts));
            }
            for b in s.take() {
                prop_assert!(decode(&b).is_ok());
            }
        }
        prop_assert!(c.counters().hello_sent <= 8 * (1 + c.counters().hello_gave_up + 3 * 60));
    }

    /// A CSF and a CRF over a channel that loses, delays and reorders
    /// messages: every block the CSF protects uses a configuration the CRF
    /// holds with the same parameters.
    #[test]
    fn lossy_channel_agreement(seed in any::<u64>(), loss_pct in 0u64..60, steps in 50usize..400) {
        let mut rng = seed | 1;
        let mut rnd = move || { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; rng };
        let mut c = csf();
        let mut r = crf();
        let mut cs = Rec::default();
        let mut rs = Rec::default();
        // (arrival time, bytes, to_crf)
        let mut wire: Vec<(Nanos, Vec<u8>, bool)> = vec![];
        let mut now: Nanos = 0;
        let mut psn = 0u32;
        let mut open: Vec<FecConfig> = vec![];
        let mut crf_open: Vec<u8> = vec![];
        let mut m = 1u8;
        c.set_psn_lead(40);
        c.start(0, rnd(), &mut cs);
        let mut gave_up = false;
        for _ in 0..steps {
            now += 1 + rnd() % (2 * MS);
            // Deliver messages due.
            wire.sort_by_key(|w| w.0);
            while wire.first().is_some_and(|w| w.0 <= now) {
                let (_, b, to_crf) = wire.remove(0);
                let msg = decode(&b).unwrap();
                if to_crf {
                    let id = (rnd() as u32) | 1;
                    match &msg {
                        Message::Hello(h) => {
                            let out = r.on_hello(h, || choose_flow_id(|| id, |_| false), &mut rs);
                            if matches!(out, HelloOutcome::Restarted { .. }) {
                                crf_open.clear();
                            }
                        }
                        _ => crf_input(&mut r, &msg, &mut rs, id),
                    }
                } else {
                    match &msg {
                        Message::HelloAck(a) => {
                            let out = c.on_hello_ack(a, &mut cs);
                            let incompatible = matches!(out, HelloAckOutcome::Incompatible { .. });
                            prop_assert!(!incompatible);
                        }
                        _ => csf_input(&mut c, &msg, &mut cs),
                    }
                }
            }
            if c.next_deadline().is_some_and(|d| d <= now) {
                match c.on_timer(now, &mut cs) {
                    Some(NegEvent::HelloGaveUp) | Some(NegEvent::ParamSyncFailed { .. }) => gave_up = true,
                    None => {}
                }
            }
            // The flow: a block every step.
            if let Some(cfg) = c.config_for_block(Psn::new(psn), &mut cs) {
                // The CRF must hold this exact configuration (unless the
                // channel lost the CRF's state in a restart, which needs a
                // new HELLO and cannot happen here).
                if r.state() == (CrfState::Established { flow_id: c.flow_id().unwrap() }) {
                    let held = r.config(cfg.id).map(|x| x.0);
                    prop_assert_eq!(held, Some(cfg));
                    // The REPAIR of the block may be lost.
                    if rnd() % 100 >= loss_pct {
                        prop_assert!(r.block_opened(cfg.id).is_some());
                        crf_open.push(cfg.id);
                    }
                }
                open.push(cfg);
            }
            psn = (psn + 8) & 0xFF_FFFF;
            // Blocks finish after a few steps.
            if open.len() > 6 {
                let done = open.remove(0);
                c.blocks_closed(done.id, 1);
            }
            if crf_open.len() > 4 {
                let done = crf_open.remove(0);
                r.block_closed(done);
            }
            // Policy: change m now and then.
            if rnd() % 10 == 0 {
                m = 1 + (m % 7);
                let _ = c.propose(now, 3 * MS, ConfigParams { scheme: Scheme::CauchyRs, k: 32, m, t: 1000 }, Psn::new(psn), &mut cs);
            }
            // Transmit with loss and random delay (reordering).
            for (msgs, to_crf) in [(cs.take(), true), (rs.take(), false)] {
                for b in msgs {
                    if rnd() % 100 >= loss_pct {
                        wire.push((now + 1 + rnd() % (3 * MS), b, to_crf));
                    }
                }
            }
            if gave_up { break; }
        }
        if !gave_up && loss_pct < 10 && steps > 200 {
            let est = matches!(c.state(), CsfState::Established { .. });
            prop_assert!(est, "state {:?}", c.state());
            prop_assert!(!open.is_empty(), "no block was ever protected");
        }
        let _ = MS;
    }
}
