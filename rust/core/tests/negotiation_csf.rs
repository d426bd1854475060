//! CSF negotiation: HELLO backoff, HELLO_ACK checks, PARAM_UPDATE timing,
//! Effective PSN, statuses, configuration lifetimes, CLOSE.

mod negotiation_common;
use negotiation_common::*;

use crem_core::engine::negotiation::{
    ConfigParams, CsfNegotiation, CsfState, HelloAckOutcome, Ignored, NegEvent, ParamAckOutcome,
    ProposeError, MAX_CONFIGS,
};
use crem_core::engine::{FecConfig, Limits, Nanos, MS};
use crem_core::fec::Scheme;
use crem_core::psn::Psn;
use crem_core::wire::{
    AddressFamily, Close, CloseReason, HelloAck, Message, ParamAck, ParamStatus, FLOW_KIND_ROCEV2,
};

const NONCE: u64 = 0x0123_4567_89ab_cdef;
const FID: u32 = 0x5eed_0001;

fn ack_for(c: &CsfNegotiation) -> HelloAck {
    HelloAck {
        flow_id: FID,
        flow_kind: FLOW_KIND_ROCEV2,
        af: AddressFamily::V4,
        supported_schemes: CRF_LIMITS.schemes as u16,
        max_k: CRF_LIMITS.max_k,
        max_m: CRF_LIMITS.max_m,
        max_t: CRF_LIMITS.max_t,
        rdma_mtu: 4096,
        nonce: c.nonce(),
        max_open_blocks: CRF_LIMITS.max_open_blocks,
    }
}

fn established() -> (CsfNegotiation, Rec) {
    let mut c = csf();
    let mut s = Rec::default();
    c.start(0, NONCE, &mut s);
    let a = ack_for(&c);
    assert!(matches!(
        c.on_hello_ack(&a, &mut s),
        HelloAckOutcome::Established { .. }
    ));
    s.take();
    (c, s)
}

fn params(m: u8) -> ConfigParams {
    ConfigParams {
        scheme: Scheme::CauchyRs,
        k: 32,
        m,
        t: 4200,
    }
}

fn pack(id: u8, status: ParamStatus) -> ParamAck {
    ParamAck {
        flow_id: FID,
        config_id: id,
        status,
    }
}

/// Proposes, acknowledges and switches to `m` at the Effective PSN; returns
/// the config.
fn activate(c: &mut CsfNegotiation, s: &mut Rec, m: u8, next: Psn) -> FecConfig {
    let id = c.propose(0, MS, params(m), next, s).unwrap();
    assert_eq!(
        c.on_param_ack(&pack(id, ParamStatus::Accepted)),
        ParamAckOutcome::Accepted { config_id: id }
    );
    let (_, eff, acked) = c.pending_config().unwrap();
    assert!(acked);
    let cfg = c.config_for_block(eff, s).unwrap();
    assert_eq!(cfg.id, id);
    cfg
}

#[test]
fn hello_content() {
    let mut c = csf();
    let mut s = Rec::default();
    assert_eq!(c.state(), CsfState::Idle);
    assert_eq!(c.next_deadline(), None);
    c.start(5, NONCE, &mut s);
    let Message::Hello(h) = s.last() else {
        panic!()
    };
    assert_eq!(h.nonce, NONCE);
    assert_eq!(h.flow_label, 0x0000_1234); // low 24 bits of 0xAB00_1234
    assert_eq!(
        (h.max_k, h.max_m, h.max_t, h.rdma_mtu),
        (64, 16, 4200, 4096)
    );
    assert_eq!(h.supported_schemes, 0b111);
    assert_eq!(h.addrs, flow().addrs);
    assert_eq!(c.state(), CsfState::Hello { attempts: 1 });
    assert_eq!(c.next_deadline(), Some(5 + MS));
    assert_eq!(c.flow_id(), None);
    assert_eq!(c.effective_limits(), None);
}

#[test]
fn hello_backoff_schedule_then_unprotected() {
    let mut c = csf();
    let mut s = Rec::default();
    let t0: Nanos = 1_000;
    c.start(t0, NONCE, &mut s);
    let mut sent_at = vec![t0];
    let mut now = t0;
    let mut events = vec![];
    while let Some(d) = c.next_deadline() {
        // Timer fires early: nothing happens.
        assert_eq!(c.on_timer(d - 1, &mut s), None);
        now = d;
        let before = s.0.len();
        if let Some(e) = c.on_timer(now, &mut s) {
            events.push((now, e));
        }
        if s.0.len() > before {
            sent_at.push(now);
        }
    }
    let rel: Vec<Nanos> = sent_at.iter().map(|t| (t - t0) / MS).collect();
    assert_eq!(rel, vec![0, 1, 3, 7, 15, 31, 63, 127]);
    assert_eq!(events, vec![(t0 + 255 * MS, NegEvent::HelloGaveUp)]);
    assert_eq!(c.state(), CsfState::Unprotected);
    assert!(s
        .msgs()
        .iter()
        .all(|m| matches!(m, Message::Hello(h) if h.nonce == NONCE)));
    let k = c.counters();
    assert_eq!(
        (k.hello_sent, k.hello_retransmits, k.hello_gave_up),
        (8, 7, 1)
    );
    // A late HELLO_ACK of another session does not protect the flow (one
    // of this session does: `late_hello_ack_after_give_up_establishes`).
    let mut a = ack_for(&c);
    a.nonce ^= 1;
    assert_eq!(
        c.on_hello_ack(&a, &mut s),
        HelloAckOutcome::Ignored(Ignored::BadNonce)
    );
    assert_eq!(c.state(), CsfState::Unprotected);
    assert_eq!(c.config_for_block(Psn::new(0), &mut s), None);
    // A new start begins a new schedule.
    c.start(now, NONCE + 1, &mut s);
    assert_eq!(c.state(), CsfState::Hello { attempts: 1 });
}

#[test]
fn hello_ack_checks() {
    let mut c = csf();
    let mut s = Rec::default();
    c.start(0, NONCE, &mut s);
    let good = ack_for(&c);
    let bad = [
        (
            HelloAck {
                nonce: NONCE ^ 1,
                ..good
            },
            Ignored::BadNonce,
        ),
        (HelloAck { flow_id: 0, ..good }, Ignored::Mismatch),
        (
            HelloAck {
                af: AddressFamily::V6,
                ..good
            },
            Ignored::Mismatch,
        ),
        (
            HelloAck {
                rdma_mtu: 1024,
                ..good
            },
            Ignored::Mismatch,
        ),
        (
            HelloAck {
                flow_kind: 9,
                ..good
            },
            Ignored::Mismatch,
        ),
    ];
    for (a, why) in bad {
        assert_eq!(c.on_hello_ack(&a, &mut s), HelloAckOutcome::Ignored(why));
        assert!(matches!(c.state(), CsfState::Hello { .. }));
    }
    assert_eq!(c.counters().hello_ack_bad_nonce, 1);
    assert_eq!(c.counters().hello_ack_mismatch, 4);
    let HelloAckOutcome::Established { flow_id, limits } = c.on_hello_ack(&good, &mut s) else {
        panic!()
    };
    assert_eq!(flow_id, FID);
    assert_eq!(limits, CSF_LIMITS.min(&CRF_LIMITS));
    assert_eq!(limits.max_open_blocks, 128);
    assert_eq!(limits.schemes, 0b011);
    assert_eq!(c.effective_limits(), Some(limits));
    assert_eq!(c.next_deadline(), None);
    assert_eq!(
        c.on_hello_ack(&good, &mut s),
        HelloAckOutcome::Ignored(Ignored::Duplicate)
    );
    let other = HelloAck {
        flow_id: 77,
        ..good
    };
    assert_eq!(
        c.on_hello_ack(&other, &mut s),
        HelloAckOutcome::Ignored(Ignored::Mismatch)
    );
    assert_eq!(c.flow_id(), Some(FID));
}

#[test]
fn incompatible_limits_close_and_stay_unprotected() {
    for f in [
        |a: &mut HelloAck| a.supported_schemes = 0b001,
        |a: &mut HelloAck| a.max_k = 0,
        |a: &mut HelloAck| a.max_t = 2,
        |a: &mut HelloAck| a.max_open_blocks = 0,
    ] {
        let mut c = csf();
        let mut s = Rec::default();
        c.start(0, NONCE, &mut s);
        let mut a = ack_for(&c);
        f(&mut a);
        s.take();
        assert_eq!(
            c.on_hello_ack(&a, &mut s),
            HelloAckOutcome::Incompatible { flow_id: FID }
        );
        assert_eq!(c.state(), CsfState::Unprotected);
        assert_eq!(
            s.msgs(),
            vec![Message::Close(Close {
                flow_id: FID,
                reason: CloseReason::Normal
            })]
        );
        assert_eq!(c.next_deadline(), None);
    }
}

#[test]
fn propose_sends_param_update_and_switches_at_effective_psn() {
    let (mut c, mut s) = established();
    c.set_psn_lead(100);
    let id = c
        .propose(0, 10 * MS, params(2), Psn::new(1000), &mut s)
        .unwrap();
    let Message::ParamUpdate(pu) = s.last() else {
        panic!()
    };
    assert_eq!(
        (pu.flow_id, pu.config_id, pu.k, pu.m, pu.t),
        (FID, id, 32, 2, 4200)
    );
    assert_eq!(pu.effective_psn, Psn::new(1100));
    assert_eq!(c.next_deadline(), Some(20 * MS));
    // No configuration yet: blocks are unprotected.
    assert_eq!(c.config_for_block(Psn::new(1000), &mut s), None);
    assert_eq!(
        c.on_param_ack(&pack(id, ParamStatus::Accepted)),
        ParamAckOutcome::Accepted { config_id: id }
    );
    assert_eq!(c.next_deadline(), None);
    assert_eq!(
        c.on_param_ack(&pack(id, ParamStatus::Accepted)),
        ParamAckOutcome::Ignored(Ignored::Duplicate)
    );
    // Before the Effective PSN: still nothing, even though acknowledged.
    assert_eq!(c.config_for_block(Psn::new(1099), &mut s), None);
    let cfg = c.config_for_block(Psn::new(1100), &mut s).unwrap();
    assert_eq!((cfg.id, cfg.m), (id, 2));
    assert_eq!(c.active_config(), Some(cfg));
    assert_eq!(c.pending_config(), None);
    assert_eq!(c.config(id), Some((cfg, 1)));
    // Same again: unchanged.
    assert_eq!(
        c.propose(0, MS, params(2), Psn::new(2000), &mut s),
        Err(ProposeError::Unchanged)
    );
    // Duplicate ack for the active one.
    assert_eq!(
        c.on_param_ack(&pack(id, ParamStatus::Accepted)),
        ParamAckOutcome::Ignored(Ignored::Duplicate)
    );
    assert_eq!(
        c.on_param_ack(&pack(id.wrapping_add(9), ParamStatus::Accepted)),
        ParamAckOutcome::Ignored(Ignored::UnknownConfig)
    );
    let wrong = ParamAck {
        flow_id: 3,
        ..pack(id, ParamStatus::Accepted)
    };
    assert_eq!(
        c.on_param_ack(&wrong),
        ParamAckOutcome::Ignored(Ignored::WrongFlow)
    );
}

#[test]
fn param_update_rto_doubles_then_close_reason_2() {
    let (mut c, mut s) = established();
    let srtt = 10 * MS;
    let t0 = 50 * MS;
    let id = c.propose(t0, srtt, params(3), Psn::new(0), &mut s).unwrap();
    let mut sent_at = vec![t0];
    let mut event = None;
    while let Some(d) = c.next_deadline() {
        assert_eq!(c.on_timer(d - 1, &mut s), None);
        let before = s.0.len();
        if let Some(e) = c.on_timer(d, &mut s) {
            event = Some((d, e));
        }
        if s.0.len() > before && matches!(s.last(), Message::ParamUpdate(_)) {
            sent_at.push(d);
        }
    }
    // RTO 20 ms, doubling: 20, 40, 80, ... ms between attempts; 8 attempts.
    let rel: Vec<Nanos> = sent_at.iter().map(|t| (t - t0) / MS).collect();
    assert_eq!(rel, vec![0, 20, 60, 140, 300, 620, 1260, 2540]);
    assert_eq!(
        event,
        Some((t0 + 5100 * MS, NegEvent::ParamSyncFailed { config_id: id }))
    );
    assert_eq!(
        s.last(),
        Message::Close(Close {
            flow_id: FID,
            reason: CloseReason::ParamSyncFailed
        })
    );
    assert_eq!(c.state(), CsfState::Closed(CloseReason::ParamSyncFailed));
    let k = c.counters();
    assert_eq!(
        (
            k.param_update_sent,
            k.param_update_retransmits,
            k.param_sync_failures,
            k.close_sent
        ),
        (8, 7, 1, 1)
    );
    assert!(s.msgs().iter().all(|m| match m {
        Message::ParamUpdate(p) => p.config_id == id,
        Message::Close(_) => true,
        _ => false,
    }));
    assert_eq!(c.active_config(), None);
    assert_eq!(
        c.propose(0, MS, params(1), Psn::new(0), &mut s),
        Err(ProposeError::NotEstablished)
    );
}

#[test]
fn param_rto_is_at_least_one_ms() {
    let (mut c, mut s) = established();
    c.propose(0, 100_000, params(3), Psn::new(0), &mut s)
        .unwrap();
    assert_eq!(c.next_deadline(), Some(MS));
    assert_eq!(c.on_timer(MS, &mut s), None);
    assert_eq!(c.next_deadline(), Some(3 * MS));
}

#[test]
fn effective_psn_passed_keeps_old_config_and_resends_later() {
    let (mut c, mut s) = established();
    c.set_psn_lead(64);
    let old = activate(&mut c, &mut s, 1, Psn::new(0));
    s.take();
    let id = c.propose(MS, MS, params(4), Psn::new(200), &mut s).unwrap();
    assert_eq!(c.pending_config().unwrap().1, Psn::new(264));
    s.take();
    // Blocks before the Effective PSN use the old config, nothing sent.
    assert_eq!(c.config_for_block(Psn::new(232), &mut s).unwrap(), old);
    assert!(s.0.is_empty());
    // The Effective PSN passes unacknowledged: old config, PARAM_UPDATE again
    // with Effective PSN = block start + lead.
    assert_eq!(c.config_for_block(Psn::new(264), &mut s).unwrap(), old);
    let Message::ParamUpdate(pu) = s.last() else {
        panic!()
    };
    assert_eq!((pu.config_id, pu.effective_psn), (id, Psn::new(328)));
    assert_eq!(c.counters().param_update_psn_resends, 1);
    // It does not consume an attempt or move the timer.
    assert_eq!(c.next_deadline(), Some(3 * MS));
    assert_eq!(c.config_for_block(Psn::new(296), &mut s).unwrap(), old);
    assert_eq!(s.0.len(), 1);
    // The ACK arrives; the switch happens at the new Effective PSN.
    assert!(matches!(
        c.on_param_ack(&pack(id, ParamStatus::Accepted)),
        ParamAckOutcome::Accepted { .. }
    ));
    assert_eq!(c.config_for_block(Psn::new(300), &mut s).unwrap(), old);
    let new = c.config_for_block(Psn::new(328), &mut s).unwrap();
    assert_eq!((new.id, new.m), (id, 4));
    // Old config: 5 open blocks (activate + 4 here), released after the last.
    assert_eq!(c.config(old.id).unwrap().1, 5);
    c.blocks_closed(old.id, 4);
    assert!(c.config(old.id).is_some());
    c.blocks_closed(old.id, 1);
    assert_eq!(c.config(old.id), None);
    assert_eq!(c.counters().configs_released, 1);
    c.blocks_closed(old.id, 1);
    assert_eq!(c.counters().block_closed_unknown, 1);
    c.blocks_closed(new.id, 5);
    assert_eq!(c.counters().block_accounting_errors, 1);
    // The active one is never released by block accounting.
    assert_eq!(c.config(new.id).map(|x| x.1), Some(0));
    // PSN wrap-around.
    let id3 = c
        .propose(MS, MS, params(5), Psn::new(0xFF_FFF0), &mut s)
        .unwrap();
    c.on_param_ack(&pack(id3, ParamStatus::Accepted));
    assert_eq!(
        c.config_for_block(Psn::new(0xFF_FFF8), &mut s).unwrap().id,
        new.id
    );
    assert_eq!(c.config_for_block(Psn::new(0x30), &mut s).unwrap().id, id3);
    assert_eq!(c.config(new.id), Some((new, 1)));
}

#[test]
fn nonzero_status_keeps_current_config() {
    for (status, field) in [
        (ParamStatus::UnsupportedScheme, 0),
        (ParamStatus::LimitsExceeded, 1),
        (ParamStatus::ResourcesExhausted, 2),
        (ParamStatus::Other(77), 3),
    ] {
        let (mut c, mut s) = established();
        let old = activate(&mut c, &mut s, 2, Psn::new(0));
        let id = c.propose(0, MS, params(6), Psn::new(500), &mut s).unwrap();
        assert_eq!(
            c.on_param_ack(&pack(id, status)),
            ParamAckOutcome::Rejected {
                config_id: id,
                status
            }
        );
        assert_eq!(c.pending_config(), None);
        assert_eq!(c.next_deadline(), None);
        assert_eq!(c.config(id), None);
        for p in [600, 5000, 100_000] {
            assert_eq!(c.config_for_block(Psn::new(p), &mut s).unwrap(), old);
        }
        let k = c.counters();
        let got = [
            k.param_rejected_unsupported_scheme,
            k.param_rejected_limits,
            k.param_rejected_resources,
            k.param_rejected_other,
        ];
        let mut want = [0; 4];
        want[field] = 1;
        assert_eq!(got, want);
        // Can try again afterwards, with a fresh Config ID.
        let id2 = c.propose(0, MS, params(6), Psn::new(500), &mut s).unwrap();
        assert_ne!(id2, id);
    }
}

#[test]
fn propose_refusals() {
    let mut c = csf();
    let mut s = Rec::default();
    assert_eq!(
        c.propose(0, MS, params(1), Psn::new(0), &mut s),
        Err(ProposeError::NotEstablished)
    );
    let (mut c, mut s) = established();
    // Effective limits: k <= 48, m <= 8, T <= 4200, schemes {0, 1}.
    for p in [
        ConfigParams { k: 49, ..params(1) },
        ConfigParams { m: 9, ..params(1) },
        ConfigParams {
            t: 4201,
            ..params(1)
        },
        ConfigParams { k: 0, ..params(1) },
        ConfigParams {
            scheme: Scheme::Xor,
            ..params(1)
        },
    ] {
        assert_eq!(
            c.propose(0, MS, p, Psn::new(0), &mut s),
            Err(ProposeError::OutsideLimits),
            "{p:?}"
        );
    }
    assert!(s.0.is_empty());
    let id = c.propose(0, MS, params(1), Psn::new(0), &mut s).unwrap();
    assert_eq!(
        c.propose(0, MS, params(2), Psn::new(0), &mut s),
        Err(ProposeError::Busy)
    );
    assert_eq!(
        c.propose(0, MS, params(1), Psn::new(0), &mut s),
        Err(ProposeError::Busy)
    );
    c.on_param_ack(&pack(id, ParamStatus::Accepted));
    assert_eq!(
        c.propose(0, MS, params(1), Psn::new(0), &mut s),
        Err(ProposeError::Unchanged)
    );
    // Acknowledged but not yet effective: may be superseded.
    let id2 = c.propose(0, MS, params(2), Psn::new(0), &mut s).unwrap();
    assert_eq!(c.config(id), None);
    assert_eq!(c.pending_config().unwrap().0.id, id2);
    assert_eq!(c.counters().propose_busy, 2);
    assert_eq!(c.counters().propose_refused, 5);
}

#[test]
fn cauchy_index_rule_and_xor_limits() {
    let mut c = CsfNegotiation::new(
        Limits {
            max_k: 255,
            max_m: 255,
            max_t: 9000,
            ..CSF_LIMITS
        },
        flow(),
    );
    let mut s = Rec::default();
    c.start(0, NONCE, &mut s);
    let a = HelloAck {
        max_k: 255,
        max_m: 255,
        max_t: 9000,
        supported_schemes: 0b111,
        ..ack_for(&c)
    };
    c.on_hello_ack(&a, &mut s);
    let p = |k, m, scheme| ConfigParams {
        scheme,
        k,
        m,
        t: 1000,
    };
    assert_eq!(
        c.propose(0, MS, p(250, 7, Scheme::CauchyRs), Psn::new(0), &mut s),
        Err(ProposeError::OutsideLimits)
    );
    assert_eq!(
        c.propose(0, MS, p(32, 2, Scheme::Xor), Psn::new(0), &mut s),
        Err(ProposeError::OutsideLimits)
    );
    assert!(c
        .propose(0, MS, p(250, 6, Scheme::CauchyRs), Psn::new(0), &mut s)
        .is_ok());
}

#[test]
fn config_ids_wrap_and_never_reuse_ids_in_use() {
    let (mut c, mut s) = established();
    c.set_psn_lead(1);
    let first = activate(&mut c, &mut s, 1, Psn::new(0));
    // `first` keeps an open block forever; cycle through 300 changes, each new
    // config used by one block that is closed right after the next switch.
    let mut psn = 10u32;
    let mut prev = first;
    let mut seen = std::collections::HashSet::new();
    for i in 0..300u32 {
        let m = 2 + (i % 5) as u8;
        let m = if Some(m) == c.active_config().map(|a| a.m) {
            m + 1
        } else {
            m
        };
        let id = c.propose(0, MS, params(m), Psn::new(psn), &mut s).unwrap();
        assert_ne!(id, first.id, "reused an ID still in use");
        seen.insert(id);
        c.on_param_ack(&pack(id, ParamStatus::Accepted));
        psn += 10;
        let cfg = c.config_for_block(Psn::new(psn), &mut s).unwrap();
        assert_eq!(cfg.id, id);
        if prev.id != first.id {
            c.blocks_closed(prev.id, 1);
        }
        prev = cfg;
    }
    assert_eq!(seen.len(), 255);
    assert!(c.config(first.id).is_some());
}

#[test]
fn no_config_slot_when_all_are_in_use() {
    let (mut c, mut s) = established();
    c.set_psn_lead(1);
    let mut psn = 0;
    for i in 0..MAX_CONFIGS {
        activate(&mut c, &mut s, 1 + i as u8, Psn::new(psn));
        psn += 10;
    }
    // MAX_CONFIGS slots hold configurations with open blocks.
    assert_eq!(
        c.propose(0, MS, params(0), Psn::new(psn), &mut s),
        Err(ProposeError::NoConfigSlot)
    );
    let oldest = c
        .active_config()
        .unwrap()
        .id
        .wrapping_sub(MAX_CONFIGS as u8 - 1);
    c.blocks_closed(oldest, 1);
    assert!(c.propose(0, MS, params(0), Psn::new(psn), &mut s).is_ok());
}

#[test]
fn close_both_directions() {
    let (mut c, mut s) = established();
    activate(&mut c, &mut s, 2, Psn::new(0));
    assert_eq!(
        c.on_close(&Close {
            flow_id: 9,
            reason: CloseReason::Normal
        }),
        None
    );
    assert_eq!(
        c.on_close(&Close {
            flow_id: FID,
            reason: CloseReason::ResourcesExhausted
        }),
        Some(CloseReason::ResourcesExhausted)
    );
    assert_eq!(c.state(), CsfState::Closed(CloseReason::ResourcesExhausted));
    assert_eq!(c.active_config(), None);
    assert_eq!(c.config_for_block(Psn::new(5), &mut s), None);
    assert_eq!(
        c.on_close(&Close {
            flow_id: FID,
            reason: CloseReason::Normal
        }),
        None
    );
    let (mut c, mut s) = established();
    c.close(CloseReason::CircuitBreaker, &mut s);
    assert_eq!(
        s.msgs(),
        vec![Message::Close(Close {
            flow_id: FID,
            reason: CloseReason::CircuitBreaker
        })]
    );
    assert_eq!(c.state(), CsfState::Closed(CloseReason::CircuitBreaker));
    assert_eq!(
        c.on_param_ack(&pack(1, ParamStatus::Accepted)),
        ParamAckOutcome::Ignored(Ignored::WrongState)
    );
    // Closing before establishment sends nothing and stops HELLO.
    let mut c = csf();
    let mut s = Rec::default();
    c.start(0, NONCE, &mut s);
    s.take();
    c.close(CloseReason::FlowEnded, &mut s);
    assert!(s.0.is_empty());
    assert_eq!(c.next_deadline(), None);
    assert_eq!(c.on_timer(u64::MAX, &mut s), None);
}

#[test]
fn rtt_probe_only_for_exchanges_sent_once() {
    // HELLO: the first transmission is a probe, a re-sent one is not.
    let mut c = csf();
    let mut s = Rec::default();
    assert_eq!(c.rtt_probe(), None);
    c.start(7 * MS, NONCE, &mut s);
    assert_eq!(c.rtt_probe(), Some(7 * MS));
    c.on_timer(8 * MS, &mut s);
    assert_eq!(c.state(), CsfState::Hello { attempts: 2 });
    assert_eq!(c.rtt_probe(), None);
    let a = ack_for(&c);
    assert!(matches!(
        c.on_hello_ack(&a, &mut s),
        HelloAckOutcome::Established { .. }
    ));
    // Established, nothing pending.
    assert_eq!(c.rtt_probe(), None);
    // PARAM_UPDATE: a probe until its timeout re-sends it.
    let id = c
        .propose(10 * MS, MS, params(2), Psn::new(0), &mut s)
        .unwrap();
    assert_eq!(c.rtt_probe(), Some(10 * MS));
    c.on_timer(12 * MS, &mut s);
    assert_eq!(c.counters().param_update_retransmits, 1);
    assert_eq!(c.rtt_probe(), None);
    assert!(matches!(
        c.on_param_ack(&pack(id, ParamStatus::Accepted)),
        ParamAckOutcome::Accepted { .. }
    ));
    assert_eq!(c.rtt_probe(), None);
    // An Effective PSN re-send is a re-send too.
    let (mut c, mut s) = established();
    c.propose(0, MS, params(2), Psn::new(0), &mut s).unwrap();
    assert_eq!(c.rtt_probe(), Some(0));
    let (_, eff, _) = c.pending_config().unwrap();
    c.config_for_block(eff.wrapping_add(1), &mut s);
    assert_eq!(c.counters().param_update_psn_resends, 1);
    assert_eq!(c.rtt_probe(), None);
}

#[test]
fn backed_off_rto_carries_to_the_next_update_until_one_is_clean() {
    // A 50 ms path with a 10 ms SRTT: RTO 20 ms, re-sent at 20 ms (RTO 40),
    // answered at 50 ms: ambiguous. The next PARAM_UPDATE starts at 40 ms.
    let (mut c, mut s) = established();
    let srtt = 10 * MS;
    let id = c.propose(0, srtt, params(1), Psn::new(0), &mut s).unwrap();
    c.on_timer(20 * MS, &mut s);
    assert_eq!(c.next_deadline(), Some(60 * MS));
    assert!(matches!(
        c.on_param_ack(&pack(id, ParamStatus::Accepted)),
        ParamAckOutcome::Accepted { .. }
    ));
    let (_, eff, _) = c.pending_config().unwrap();
    c.config_for_block(eff, &mut s).unwrap();
    let t = 100 * MS;
    let id = c.propose(t, srtt, params(2), eff, &mut s).unwrap();
    assert_eq!(c.next_deadline(), Some(t + 40 * MS));
    // Re-sent again at 40 ms (RTO 80), refused at 50 ms: a refusal answers
    // too, and the next one starts at 80 ms.
    c.on_timer(t + 40 * MS, &mut s);
    assert!(matches!(
        c.on_param_ack(&pack(id, ParamStatus::LimitsExceeded)),
        ParamAckOutcome::Rejected { .. }
    ));
    let t = 200 * MS;
    let id = c.propose(t, srtt, params(3), eff, &mut s).unwrap();
    assert_eq!(c.next_deadline(), Some(t + 80 * MS));
    // Answered before its timeout: a sample for the caller, and the carry
    // is gone.
    assert_eq!(c.rtt_probe(), Some(t));
    assert!(matches!(
        c.on_param_ack(&pack(id, ParamStatus::LimitsExceeded)),
        ParamAckOutcome::Rejected { .. }
    ));
    let t = 300 * MS;
    c.propose(t, srtt, params(4), eff, &mut s).unwrap();
    assert_eq!(c.next_deadline(), Some(t + 20 * MS));
    // A new session forgets the carry.
    let mut c2 = csf();
    c2.start(0, NONCE, &mut s);
    assert_eq!(c2.rtt_probe(), Some(0));
}

/// A HELLO_ACK of this session's nonce that arrives after the eighth HELLO
/// went unanswered (the CRF was made late) still establishes the flow; one
/// of another nonce does not, nor one after incompatible limits.
#[test]
fn late_hello_ack_after_give_up_establishes() {
    let mut c = csf();
    let mut s = Rec::default();
    c.start(0, NONCE, &mut s);
    while let Some(d) = c.next_deadline() {
        c.on_timer(d, &mut s);
    }
    assert_eq!(c.state(), CsfState::Unprotected);
    let mut other = ack_for(&c);
    other.nonce = NONCE ^ 1;
    assert_eq!(
        c.on_hello_ack(&other, &mut s),
        HelloAckOutcome::Ignored(Ignored::BadNonce)
    );
    // Another session's answer is not a late one of ours.
    assert_eq!(c.counters().hello_ack_late, 0);
    let a = ack_for(&c);
    assert!(matches!(
        c.on_hello_ack(&a, &mut s),
        HelloAckOutcome::Established { flow_id: FID, .. }
    ));
    assert_eq!(c.state(), CsfState::Established { flow_id: FID });
    assert_eq!(c.next_deadline(), None);
    assert_eq!(c.counters().hello_ack_late, 1);
}
