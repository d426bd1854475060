//! Property tests of the policy: arbitrary report/time sequences never panic
//! and decisions always respect the limits and the rules.

use crem_core::engine::policy::{Change, Policy, PolicyConfig, Why};
use crem_core::engine::{Limits, Nanos};
use crem_core::psn::Psn;
use crem_core::wire::{
    DroppedPsns, FlowAddrs, HopEntries, HopEntry, LossCause, LossReport, Method, PathReport,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Loss([u32; 8], u32, u64),
    Path(u32, i32, u8, bool, u64),
    Decide(u64, u64, Option<(u8, u8)>, u8, u8),
}

fn op() -> impl Strategy<Value = Op> {
    let count = prop_oneof![0u32..2000, any::<u32>()];
    prop_oneof![
        (
            prop::array::uniform8(count.clone()),
            count,
            0u64..3_000_000_000
        )
            .prop_map(|(a, b, c)| Op::Loss(a, b, c)),
        (
            any::<u32>(),
            any::<i32>(),
            any::<u8>(),
            any::<bool>(),
            0u64..3_000_000_000
        )
            .prop_map(|(a, b, c, d, e)| Op::Path(a, b, c, d, e)),
        (
            0u64..3_000_000_000,
            any::<u64>(),
            any::<Option<(u8, u8)>>(),
            any::<u8>(),
            any::<u8>()
        )
            .prop_map(|(a, b, c, d, e)| Op::Decide(a, b, c, d, e)),
    ]
}

fn cfg() -> impl Strategy<Value = PolicyConfig> {
    (
        any::<u8>(),
        any::<u32>(),
        any::<u8>(),
        any::<u8>(),
        any::<bool>(),
        any::<u32>(),
        any::<u32>(),
    )
        .prop_map(|(k, eps, m_cong, shift, retx, margin, min)| {
            let mut c = PolicyConfig::DEFAULT;
            c.k = k;
            c.epsilon_ppb = eps;
            c.m_cong = m_cong;
            c.loss_window_shift = shift;
            c.retx_rule = retx;
            c.repair_loss_margin_ppb = margin;
            c.repair_loss_min = min;
            c.breaker.min_expected = min % 100;
            c.breaker.window = (shift as u64) * 100_000_000;
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_respects_limits(cfg in prop_oneof![Just(PolicyConfig::DEFAULT), cfg()], ops in prop::collection::vec(op(), 0..80)) {
        let mut p = Policy::new(cfg);
        let mut now: Nanos = 0;
        for o in ops {
            match o {
                Op::Loss(v, sent, dt) => {
                    now = now.saturating_add(dt);
                    let r = LossReport {
                        flow_id: 1, interval_us: v[0], expected: v[1], received: v[2], restored: v[3],
                        incomplete_blocks: v[4], ce_marked: v[5], repairs_received: v[6], repairs_ce_marked: v[7],
                    };
                    let _ = p.on_loss_report(now, &r, sent);
                    prop_assert!(p.loss_ppb() <= 1_000_000_000);
                }
                Op::Path(lost, qd, cause, with_psn, dt) => {
                    now = now.saturating_add(dt);
                    let d = [Psn::new(lost)];
                    let hops = [HopEntry {
                        node_id: 1, period: 2, lost_count: lost, queue_delay_change_us: qd,
                        cause: LossCause::from_u8(cause),
                        dropped: if with_psn { DroppedPsns::from_slice(&d) } else { DroppedPsns::EMPTY },
                    }];
                    let r = PathReport {
                        truncated: false, method: Method::NodeLocalDrop,
                        addrs: FlowAddrs::V4 { src: [192, 0, 2, 1], dst: [192, 0, 2, 2] },
                        flow_label: 1, hops: HopEntries::from_slice(&hops),
                    };
                    p.on_path_report(now, &r);
                }
                Op::Decide(dt, srtt, cur, max_k, max_m) => {
                    now = now.saturating_add(dt);
                    let lim = Limits { schemes: 0b111, max_k, max_m, max_t: 1000, max_open_blocks: 10 };
                    let d = p.decide(now, srtt, cur, &lim);
                    prop_assert!(d.k >= 1);
                    prop_assert!(d.k <= cfg.k.max(1) && (d.k <= max_k || max_k == 0));
                    prop_assert!(d.m <= max_m);
                    prop_assert!(d.k as u16 + d.m as u16 <= 255);
                    prop_assert_eq!(d.scheme, crem_core::fec::Scheme::CauchyRs);
                    if d.why == Why::Breaker { prop_assert!(d.m == 0 && !d.coded_retx); }
                    if !d.coded_retx { prop_assert_eq!(d.why, Why::Breaker); }
                    if d.classification.congestion() && d.why != Why::Breaker { prop_assert!(d.m <= cfg.m_cong); }
                    if cur == Some((d.k, d.m)) { prop_assert_eq!(d.change, Change::None); }
                }
            }
        }
    }
}

mod division {
    use crem_core::engine::policy::prob::div_u128_by_u64;
    use proptest::prelude::*;

    #[test]
    fn edges() {
        let ds = [
            1u64,
            2,
            3,
            7,
            1 << 31,
            (1 << 32) - 1,
            1 << 32,
            (1 << 32) + 1,
            1 << 63,
            u64::MAX - 1,
            u64::MAX,
        ];
        let ns = [
            0u128,
            1,
            u64::MAX as u128,
            (u64::MAX as u128) + 1,
            u128::MAX,
            u128::MAX - 1,
            1 << 127,
            (1 << 64) * 3 + 5,
            0xffff_ffff_0000_0000_ffff_ffff_0000_0000,
        ];
        for &d in &ds {
            for &n in &ns {
                assert_eq!(div_u128_by_u64(n, d), n / d as u128, "{n} / {d}");
            }
        }
        assert_eq!(div_u128_by_u64(12345, 0), 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]
        #[test]
        fn matches_native(n in any::<u128>(), d in prop_oneof![1u64..=u64::MAX, 1u64..1000, (1u64 << 31)..(1u64 << 33)], shift in 0u32..128) {
            let n = n >> shift;
            prop_assert_eq!(div_u128_by_u64(n, d), n / d as u128);
        }
    }
}
