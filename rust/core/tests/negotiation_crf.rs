//! CRF negotiation: HELLO_ACK content and idempotence, restarts, Flow ID
//! choice, PARAM_UPDATE validation, configuration release, CLOSE.

mod negotiation_common;
use negotiation_common::*;

use crem_core::engine::negotiation::{
    choose_flow_id, CrfNegotiation, CrfState, HelloOutcome, Ignored, ParamOutcome, MAX_CONFIGS,
};
use crem_core::engine::{FecConfig, Limits};
use crem_core::fec::Scheme;
use crem_core::psn::Psn;
use crem_core::wire::{
    Close, CloseReason, FecScheme, FlowAddrs, Hello, HelloAck, Message, ParamAck, ParamStatus,
    ParamUpdate, FLOW_KIND_ROCEV2,
};

const FID: u32 = 0x0bad_cafe;

fn hello(nonce: u64) -> Hello {
    Hello {
        flow_kind: FLOW_KIND_ROCEV2,
        supported_schemes: 0b111,
        max_k: 64,
        max_m: 16,
        max_t: 4200,
        rdma_mtu: 1024,
        nonce,
        addrs: FlowAddrs::V6 {
            src: [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            dst: [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
        },
        flow_label: 0x00_4321,
    }
}

fn established() -> (CrfNegotiation, Rec) {
    let mut r = crf();
    let mut s = Rec::default();
    assert_eq!(
        r.on_hello(&hello(7), || Some(FID), &mut s),
        HelloOutcome::Accepted { flow_id: FID }
    );
    s.take();
    (r, s)
}

fn pu(id: u8, scheme: FecScheme, k: u8, m: u8, t: u16) -> ParamUpdate {
    ParamUpdate {
        flow_id: FID,
        config_id: id,
        scheme,
        k,
        m,
        t,
        effective_psn: Psn::new(100),
    }
}

fn acked(s: &Rec) -> ParamAck {
    match s.last() {
        Message::ParamAck(a) => a,
        m => panic!("{m:?}"),
    }
}

#[test]
fn hello_ack_content_and_size() {
    let mut r = crf();
    let mut s = Rec::default();
    assert_eq!(r.state(), CrfState::Idle);
    let h = hello(0x1122_3344_5566_7788);
    assert_eq!(
        r.on_hello(&h, || Some(FID), &mut s),
        HelloOutcome::Accepted { flow_id: FID }
    );
    assert_eq!(s.0.len(), 1);
    let want = HelloAck {
        flow_id: FID,
        flow_kind: FLOW_KIND_ROCEV2,
        af: h.addrs.af(),
        supported_schemes: CRF_LIMITS.schemes as u16,
        max_k: CRF_LIMITS.max_k,
        max_m: CRF_LIMITS.max_m,
        max_t: CRF_LIMITS.max_t,
        rdma_mtu: 1024,
        nonce: h.nonce,
        max_open_blocks: CRF_LIMITS.max_open_blocks,
    };
    assert_eq!(s.last(), Message::HelloAck(want));
    // Never larger than the HELLO (no amplification).
    assert!(s.0[0].len() <= Message::Hello(h).encoded_len());
    assert_eq!(r.flow_id(), Some(FID));
    assert_eq!(r.rdma_mtu(), Some(1024));
    assert_eq!(r.hello(), Some(&h));
    let eff = r.effective_limits().unwrap();
    assert_eq!(
        (
            eff.max_k,
            eff.max_m,
            eff.max_t,
            eff.max_open_blocks,
            eff.schemes
        ),
        (48, 8, 4200, 128, 0b011)
    );
}

#[test]
fn duplicate_hello_is_answered_identically() {
    let mut r = crf();
    let mut s = Rec::default();
    r.on_hello(&hello(7), || Some(FID), &mut s);
    for _ in 0..5 {
        assert_eq!(
            r.on_hello(
                &hello(7),
                || panic!("no new Flow ID for a duplicate"),
                &mut s
            ),
            HelloOutcome::Duplicate
        );
    }
    assert_eq!(s.0.len(), 6);
    assert!(s.0.iter().all(|m| *m == s.0[0]));
    // Configurations survive duplicates.
    r.on_param_update(&pu(1, FecScheme::CauchyRs, 32, 2, 1000), &mut s);
    r.on_hello(&hello(7), || None, &mut s);
    assert!(r.config(1).is_some());
    assert_eq!(r.counters().hello_duplicate, 6);
    assert_eq!(r.counters().hello_ack_sent, 7);
}

#[test]
fn new_nonce_restarts_with_a_new_flow_id() {
    let (mut r, mut s) = established();
    r.on_param_update(&pu(1, FecScheme::CauchyRs, 32, 2, 1000), &mut s);
    assert!(r.config(1).is_some());
    let out = r.on_hello(&hello(8), || Some(FID + 1), &mut s);
    assert_eq!(
        out,
        HelloOutcome::Restarted {
            old_flow_id: FID,
            flow_id: FID + 1
        }
    );
    assert_eq!(r.config(1), None);
    let Message::HelloAck(a) = s.last() else {
        panic!()
    };
    assert_eq!((a.flow_id, a.nonce), (FID + 1, 8));
    // Without a Flow ID the restart is not answered and the old session stays.
    assert_eq!(
        r.on_hello(&hello(9), || None, &mut s),
        HelloOutcome::Ignored(Ignored::NoFlowId)
    );
    assert_eq!(r.flow_id(), Some(FID + 1));
    assert_eq!(r.counters().hello_restart, 1);
}

#[test]
fn hello_refusals() {
    let mut r = crf();
    let mut s = Rec::default();
    let h = Hello {
        flow_kind: 2,
        ..hello(1)
    };
    assert_eq!(
        r.on_hello(&h, || Some(FID), &mut s),
        HelloOutcome::Ignored(Ignored::UnsupportedFlowKind)
    );
    assert_eq!(
        r.on_hello(&hello(1), || None, &mut s),
        HelloOutcome::Ignored(Ignored::NoFlowId)
    );
    assert_eq!(
        r.on_hello(&hello(1), || Some(0), &mut s),
        HelloOutcome::Ignored(Ignored::NoFlowId)
    );
    assert!(s.0.is_empty());
    assert_eq!(r.state(), CrfState::Idle);
    assert_eq!(r.counters().hello_no_flow_id, 2);
}

#[test]
fn flow_id_choice() {
    let mut draws = [0u32, 5, 6, 7].into_iter();
    assert_eq!(
        choose_flow_id(|| draws.next().unwrap_or(0), |id| id == 5),
        Some(6)
    );
    assert_eq!(choose_flow_id(|| 0, |_| false), None);
    let mut n = 0;
    assert_eq!(
        choose_flow_id(
            || {
                n += 1;
                n
            },
            |_| true
        ),
        None
    );
    assert_eq!(n, 16);
    // Spread: a simple LCG gives distinct ids, none zero.
    let mut x = 12345u32;
    let mut used = std::collections::HashSet::new();
    for _ in 0..1000 {
        let id = choose_flow_id(
            || {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                x
            },
            |id| used.contains(&id),
        )
        .unwrap();
        assert!(id != 0 && used.insert(id));
    }
}

#[test]
fn param_update_validation() {
    let (mut r, mut s) = established();
    let cases = [
        (
            pu(1, FecScheme::XorParity, 32, 1, 1000),
            ParamStatus::UnsupportedScheme,
        ),
        (
            pu(1, FecScheme::Other(77), 32, 1, 1000),
            ParamStatus::UnsupportedScheme,
        ),
        (
            pu(1, FecScheme::CauchyRs, 49, 1, 1000),
            ParamStatus::LimitsExceeded,
        ),
        (
            pu(1, FecScheme::CauchyRs, 32, 9, 1000),
            ParamStatus::LimitsExceeded,
        ),
        (
            pu(1, FecScheme::CauchyRs, 32, 1, 4201),
            ParamStatus::LimitsExceeded,
        ),
    ];
    for (p, st) in cases {
        assert_eq!(
            r.on_param_update(&p, &mut s),
            ParamOutcome::Rejected(st),
            "{p:?}"
        );
        assert_eq!(
            acked(&s),
            ParamAck {
                flow_id: FID,
                config_id: 1,
                status: st
            }
        );
        assert_eq!(r.config(1), None);
    }
    let p = pu(1, FecScheme::CauchyRs, 48, 8, 4200);
    let cfg = FecConfig {
        id: 1,
        scheme: Scheme::CauchyRs,
        k: 48,
        m: 8,
        t: 4200,
    };
    assert_eq!(
        r.on_param_update(&p, &mut s),
        ParamOutcome::Accepted { config: cfg }
    );
    assert_eq!(acked(&s).status, ParamStatus::Accepted);
    assert_eq!(r.config(1), Some((cfg, Psn::new(100))));
    // Retransmission / later Effective PSN: acknowledged again, same config.
    let p2 = ParamUpdate {
        effective_psn: Psn::new(900),
        ..p
    };
    assert_eq!(r.on_param_update(&p2, &mut s), ParamOutcome::Duplicate);
    assert_eq!(acked(&s).status, ParamStatus::Accepted);
    assert_eq!(r.config(1), Some((cfg, Psn::new(900))));
    // Source Copy is within the schemes {0, 1}.
    assert!(matches!(
        r.on_param_update(&pu(2, FecScheme::SourceCopy, 8, 0, 100), &mut s),
        ParamOutcome::Accepted { .. }
    ));
    // Wrong flow / before HELLO: ignored, not answered.
    let n = s.0.len();
    let wrong = ParamUpdate { flow_id: 3, ..p };
    assert_eq!(
        r.on_param_update(&wrong, &mut s),
        ParamOutcome::Ignored(Ignored::WrongFlow)
    );
    let mut fresh = crf();
    assert_eq!(
        fresh.on_param_update(&p, &mut s),
        ParamOutcome::Ignored(Ignored::WrongState)
    );
    assert_eq!(s.0.len(), n);
}

#[test]
fn cauchy_index_rule_on_crf() {
    let mut r = CrfNegotiation::new(Limits {
        max_k: 255,
        max_m: 255,
        max_t: 9000,
        ..CRF_LIMITS
    });
    let mut s = Rec::default();
    let h = Hello {
        max_k: 255,
        max_m: 255,
        max_t: 9000,
        ..hello(1)
    };
    r.on_hello(&h, || Some(FID), &mut s);
    assert_eq!(
        r.on_param_update(&pu(1, FecScheme::CauchyRs, 250, 7, 1000), &mut s),
        ParamOutcome::Rejected(ParamStatus::LimitsExceeded)
    );
    assert!(matches!(
        r.on_param_update(&pu(1, FecScheme::CauchyRs, 250, 6, 1000), &mut s),
        ParamOutcome::Accepted { .. }
    ));
}

#[test]
fn resources_exhausted_and_release_rule() {
    let (mut r, mut s) = established();
    for id in 0..MAX_CONFIGS as u8 {
        assert!(matches!(
            r.on_param_update(&pu(id, FecScheme::CauchyRs, 32, id % 8, 1000), &mut s),
            ParamOutcome::Accepted { .. }
        ));
    }
    let extra = pu(100, FecScheme::CauchyRs, 32, 1, 1000);
    assert_eq!(
        r.on_param_update(&extra, &mut s),
        ParamOutcome::Rejected(ParamStatus::ResourcesExhausted)
    );
    assert_eq!(acked(&s).status, ParamStatus::ResourcesExhausted);
    // Blocks of config 0 open; a block of the newer config 1 supersedes 0 but
    // 0 stays while its blocks are open.
    assert!(r.block_opened(0).is_some());
    assert!(r.block_opened(0).is_some());
    assert!(r.block_opened(1).is_some());
    assert!(r.config(0).is_some());
    r.block_closed(0);
    assert!(r.config(0).is_some());
    r.block_closed(0);
    assert_eq!(r.config(0), None);
    assert_eq!(r.counters().configs_released, 1);
    // Configs acknowledged after 1 are not superseded by it.
    assert!(r.config(2).is_some());
    // Now there is room.
    assert!(matches!(
        r.on_param_update(&extra, &mut s),
        ParamOutcome::Accepted { .. }
    ));
    // A block of 7 (acknowledged after 1..6) releases 1..6: 1 still has a block.
    assert!(r.block_opened(7).is_some());
    for id in 2..7 {
        assert_eq!(r.config(id), None, "{id}");
    }
    assert!(r.config(1).is_some());
    assert!(r.config(100).is_some());
    r.block_closed(1);
    assert_eq!(r.config(1), None);
    // Unknown ids are counted and refused.
    assert_eq!(r.block_opened(1), None);
    r.block_closed(55);
    assert_eq!(r.counters().unknown_config, 2);
    r.block_closed(7);
    r.block_closed(7);
    assert_eq!(r.counters().block_accounting_errors, 1);
}

#[test]
fn config_id_reused_with_other_parameters_replaces() {
    let (mut r, mut s) = established();
    r.on_param_update(&pu(3, FecScheme::CauchyRs, 32, 2, 1000), &mut s);
    r.block_opened(3);
    let out = r.on_param_update(&pu(3, FecScheme::CauchyRs, 16, 4, 1000), &mut s);
    assert!(matches!(out, ParamOutcome::Accepted { config } if config.k == 16));
    assert_eq!(r.config(3).unwrap().0.k, 16);
    assert_eq!(r.counters().config_replaced, 1);
}

#[test]
fn close_both_directions() {
    let (mut r, mut s) = established();
    r.on_param_update(&pu(1, FecScheme::CauchyRs, 32, 2, 1000), &mut s);
    assert_eq!(
        r.on_close(&Close {
            flow_id: FID + 1,
            reason: CloseReason::Normal
        }),
        None
    );
    assert_eq!(
        r.on_close(&Close {
            flow_id: FID,
            reason: CloseReason::FlowEnded
        }),
        Some(CloseReason::FlowEnded)
    );
    assert_eq!(r.state(), CrfState::Closed(CloseReason::FlowEnded));
    assert_eq!(r.config(1), None);
    assert_eq!(r.effective_limits(), None);
    assert_eq!(r.flow_id(), None);
    // After CLOSE a new HELLO starts a new flow.
    assert!(matches!(
        r.on_hello(&hello(50), || Some(FID + 5), &mut s),
        HelloOutcome::Accepted { .. }
    ));
    s.take();
    r.close(CloseReason::ResourcesExhausted, &mut s);
    assert_eq!(
        s.msgs(),
        vec![Message::Close(Close {
            flow_id: FID + 5,
            reason: CloseReason::ResourcesExhausted
        })]
    );
    s.take();
    r.close(CloseReason::Normal, &mut s);
    assert!(s.0.is_empty());
    assert_eq!(r.counters().close_sent, 1);
    assert_eq!(r.counters().close_received, 1);
}
