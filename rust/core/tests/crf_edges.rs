//! Edge paths: decode resources failing, store misbehaviour, settings,
//! request buffers that overflow, XOR blocks, stale and far REPAIRs.

mod crf_util;

use crem_core::engine::crf::{hold_time_for, CrfConfig, SliceStore, SymbolStore};
use crem_core::engine::{FecConfig, MS, SEC};
use crem_core::fec::Scheme;
use crem_core::psn::Psn;
use crem_core::wire::{Bitmap256, Repair, RequestKind};
use crf_util::*;

fn pkts(n: u32, len: usize) -> Vec<Option<Vec<u8>>> {
    (0..n)
        .map(|p| Some(send_packet(Psn::new(p), len)))
        .collect()
}

fn send(rig: &mut Rig, p: &[Option<Vec<u8>>], psns: impl IntoIterator<Item = u32>) {
    for q in psns {
        rig.source(q, p[q as usize].as_ref().unwrap(), false);
    }
}

#[test]
fn decode_buffer_too_small_goes_to_fallback() {
    let mut rig = Rig::new(base_cfg());
    rig.ws = Ws::new(100); // < 2·T
    let fc = cauchy(1, 4, 2, 80);
    rig.crf.accept_config(fc);
    let p = pkts(8, 40);
    let mut csf = Csf::new(fc, 0, p.clone());
    send(&mut rig, &p, [0, 3, 4]);
    for r in csf.ordinary(0) {
        rig.repair_bytes(&r, false);
    }
    assert_eq!(rig.crf.counters().decode_fail_buffer, 1);
    rig.advance(2 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].fallback, "undecodable: straight to Source Copy");
    for a in csf.answer(&reqs[0]) {
        rig.repair_bytes(&a, false);
    }
    assert_eq!(rig.crf.counters().restored, 2);
    assert_eq!(rig.crf.open_blocks(), 0);
}

#[test]
fn vanished_source_is_treated_as_unknown() {
    let mut rig = Rig::new(base_cfg());
    let fc = cauchy(1, 4, 2, 80);
    rig.crf.accept_config(fc);
    let p = pkts(8, 40);
    let csf = Csf::new(fc, 0, p.clone());
    send(&mut rig, &p, [0, 2, 3]);
    // The store loses source 0 behind the engine's back.
    let slot = *rig
        .host
        .sources
        .iter()
        .find(|(_, v)| v == &p[0].as_ref().unwrap())
        .unwrap()
        .0;
    rig.host.sources.remove(&slot);
    let ord = csf.ordinary(0);
    rig.repair_bytes(&ord[0], false);
    assert_eq!(rig.crf.counters().decode_fail_source, 1);
    // With the second repair, 0 and 1 are both solved for.
    rig.repair_bytes(&ord[1], false);
    assert_eq!(rig.crf.counters().restored, 1);
    assert!(rig.host.delivered.iter().any(|d| d.psn == 1 && d.restored));
    assert_eq!(rig.crf.open_blocks(), 0);
}

#[test]
fn oversized_source_cannot_help_decode() {
    let mut rig = Rig::new(base_cfg());
    let fc = cauchy(1, 4, 2, 80);
    rig.crf.accept_config(fc);
    let mut p = pkts(8, 40);
    p[0] = Some(send_packet(Psn::new(0), 100)); // longer than T − 2
    send(&mut rig, &p, [0, 2, 3]);
    let mut q = p.clone();
    q[0] = Some(send_packet(Psn::new(0), 10)); // what the CSF coded (model)
    let csf = Csf::new(fc, 0, q);
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    assert_eq!(rig.crf.counters().decode_fail_source, 1);
}

#[test]
fn icrc_failure_without_fallback_releases_block() {
    let mut cfg = base_cfg();
    cfg.fallback_source_copy = false;
    let mut rig = Rig::new(cfg);
    let fc = cauchy(1, 4, 1, 80);
    rig.crf.accept_config(fc);
    let p = pkts(8, 40);
    let csf = Csf::new(fc, 0, p.clone());
    send(&mut rig, &p, [0, 1, 3]);
    let mut forged = csf.ordinary(0)[0].clone();
    let n = forged.len();
    forged[n - 80 + 2 + 20] ^= 0xff;
    rig.repair_bytes(&forged, false);
    let c = *rig.crf.counters();
    assert_eq!(c.icrc_failures, 1);
    assert_eq!(c.blocks_released, 1);
    assert_eq!(c.requests_fallback, 0);
    assert_eq!(rig.crf.open_blocks(), 0);
}

#[test]
fn restored_psn_mismatch_is_malformed() {
    // The CSF model codes a packet whose BTH names another PSN.
    let mut rig = Rig::new(base_cfg());
    let fc = cauchy(1, 4, 1, 80);
    rig.crf.accept_config(fc);
    let mut p = pkts(8, 40);
    let q = p.clone();
    p[2] = Some(send_packet(Psn::new(77), 40));
    let csf = Csf::new(fc, 0, p);
    send(&mut rig, &q, [0, 1, 3]);
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    assert_eq!(rig.crf.counters().restore_malformed, 1);
    assert_eq!(rig.crf.counters().restored, 0);
}

#[test]
fn xor_block_falls_back_without_coded_rounds() {
    let mut rig = Rig::new(base_cfg());
    let fc = FecConfig {
        id: 3,
        scheme: Scheme::Xor,
        k: 4,
        m: 1,
        t: 80,
    };
    rig.crf.accept_config(fc);
    let p = pkts(8, 40);
    let mut csf = Csf::new(fc, 0, p.clone());
    // One loss: the XOR parity restores it.
    send(&mut rig, &p, [0, 1, 3]);
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    assert_eq!(rig.crf.counters().restored, 1);
    // Two losses: no coded retransmission for XOR, FALLBACK at once.
    send(&mut rig, &p, [4, 7]);
    rig.repair_bytes(&csf.ordinary(1)[0], false);
    rig.advance(2 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].fallback);
    for a in csf.answer(&reqs[0]) {
        rig.repair_bytes(&a, false);
    }
    assert_eq!(rig.crf.counters().restored, 3);
}

#[test]
fn many_gaps_split_into_several_range_requests() {
    let mut rig = Rig::new(base_cfg());
    rig.crf.accept_config(cauchy(1, 8, 0, 80));
    rig.crf.set_hold_time(0);
    // 40 isolated losses: more than one request's 32 ranges.
    for i in 0..=40u32 {
        rig.source(2 * i, &send_packet(Psn::new(2 * i), 8), false);
    }
    rig.advance(2 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 2);
    let n: usize = reqs
        .iter()
        .map(|r| match r.kind {
            RequestKind::Ranges(x) => x.ranges.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(n, 40);
    assert_eq!(rig.crf.counters().request_range_entries, 40);
}

#[test]
fn long_gap_is_split_in_255_psn_ranges() {
    let mut rig = Rig::new(base_cfg());
    rig.crf.accept_config(cauchy(1, 8, 0, 80));
    rig.source(0, &send_packet(Psn::new(0), 8), false);
    rig.source(301, &send_packet(Psn::new(301), 8), false);
    rig.advance(2 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    let RequestKind::Ranges(r) = reqs[0].kind else {
        panic!()
    };
    let v: Vec<(u32, u32)> = r
        .ranges
        .iter()
        .map(|x| (x.start.value(), x.count))
        .collect();
    assert_eq!(v, vec![(1, 255), (256, 45)]);
}

#[test]
fn stale_and_far_repairs_are_dropped() {
    let mut rig = Rig::new(base_cfg());
    let fc = cauchy(1, 4, 1, 80);
    rig.crf.accept_config(fc);
    let p = pkts(8, 40);
    send(&mut rig, &p, [0]);
    let mut csf = Csf::new(fc, 0, p.clone());
    let r = csf.ordinary(0)[0].clone();
    let mut m = Repair::decode(&r).unwrap();
    let sym = m.symbol.to_vec();
    m.symbol = &sym;
    m.block_start = Psn::new(0xFF_0000);
    rig.repair(&m);
    assert_eq!(rig.crf.counters().drop_stale, 1);
    m.block_start = Psn::new(2000);
    rig.repair(&m);
    assert_eq!(rig.crf.counters().drop_out_of_window, 1);
    // A block in the window but ahead of every source: learned (REPAIR
    // overtook its sources), decoded once they come.
    csf.first = 0;
    send(&mut rig, &p, [1]);
    rig.repair_bytes(&csf.ordinary(1)[0], false);
    assert_eq!(rig.crf.open_blocks(), 1);
    send(&mut rig, &p, [2, 3, 4, 5, 7]);
    rig.advance(rig.now);
    assert!(rig.host.delivered.iter().any(|d| d.psn == 6 && d.restored));
}

#[test]
fn duplicate_and_invalid_repair_indices() {
    let mut rig = Rig::new(base_cfg());
    let fc = cauchy(1, 4, 2, 80);
    rig.crf.accept_config(fc);
    let p = pkts(8, 40);
    let csf = Csf::new(fc, 0, p.clone());
    send(&mut rig, &p, [0, 3]);
    let r0 = csf.ordinary(0)[0].clone();
    rig.repair_bytes(&r0, false);
    rig.repair_bytes(&r0, false);
    assert_eq!(rig.crf.counters().drop_duplicate, 1);
    let mut m = Repair::decode(&r0).unwrap();
    let sym = m.symbol.to_vec();
    m.symbol = &sym;
    m.repair_index = 252; // i + k > 255
    m.scheme = crem_core::wire::FecScheme::Other(9);
    rig.repair(&m);
    assert_eq!(rig.crf.counters().drop_mismatch, 1);
}

#[test]
fn repair_pool_capacity() {
    // 128 repair descriptors in TestCrf: 16 blocks × 8 held repairs, then
    // the 129th is refused.
    let mut rig = Rig::new(base_cfg());
    let fc = cauchy(1, 16, 9, 80);
    rig.crf.accept_config(fc);
    let p = pkts(17 * 16, 40);
    let csf = Csf::new(fc, 0, p.clone());
    for b in 0..17usize {
        // Every source of the block lost: 9 repairs never suffice.
        for r in csf.ordinary(b).into_iter().take(8) {
            rig.repair_bytes(&r, false);
        }
    }
    assert!(rig.crf.repairs_held() <= 128);
    assert!(rig.crf.counters().blocks_evicted >= 1);
    let _ = p;
}

#[test]
fn repair_descriptor_exhaustion_is_counted() {
    let mut cfg = base_cfg();
    cfg.hold_time = 0;
    let mut rig = Rig::new(cfg);
    let fc = cauchy(1, 16, 12, 80);
    rig.crf.accept_config(fc);
    let p = pkts(11 * 16, 40);
    let csf = Csf::new(fc, 0, p.clone());
    for b in 0..11usize {
        for r in csf.ordinary(b) {
            rig.repair_bytes(&r, false);
        }
    }
    assert_eq!(rig.crf.repairs_held(), 128);
    assert!(rig.crf.counters().drop_repair_capacity > 0);
}

#[test]
fn settings_and_helpers() {
    let mut rig = Rig::new(CrfConfig::new(1));
    rig.crf.set_rtt(5 * MS, 4 * MS);
    rig.crf.set_loss_ppm(123);
    rig.crf.set_rdma_mtu(4096);
    rig.crf.set_flow_id(FLOW);
    let c = rig.crf.config();
    assert_eq!(
        (c.srtt, c.loss_ppm, c.rdma_mtu, c.flow_id),
        (5 * MS, 123, 4096, FLOW)
    );
    // RttRule::Fixed (the default): H and the allowance stay.
    assert_eq!((c.hold_time, c.reorder_allowance), (MS, MS));
    assert_eq!(rig.crf.deliver_next(), None);
    rig.source(9, &send_packet(Psn::new(9), 4), false);
    assert_eq!(rig.crf.deliver_next(), Some(Psn::new(10)));
    assert!(rig.crf.debug_psn_state(Psn::new(9)).is_some());
    assert!(rig.crf.debug_psn_state(Psn::new(5000)).is_none());
    // One block of 32 at 1 Mpps = 32 µs; min RTT 100 µs caps at 25 µs.
    assert_eq!(hold_time_for(32, 1_000_000, 10 * MS), 32_000);
    assert_eq!(hold_time_for(32, 1_000_000, 100_000), 25_000);
    assert_eq!(hold_time_for(32, 0, SEC), SEC / 4);
}

#[test]
fn slice_store_backs_the_engine() {
    // The engine over the crate's SliceStore: the coding example's
    // sizes, with a custom delivery.
    use crem_core::engine::crf::{Delivery, Workspace};
    use crem_core::engine::Sink;
    struct D<'a> {
        store: SliceStore<'a>,
        out: Vec<u32>,
    }
    impl SymbolStore for D<'_> {
        fn keep_source(&mut self, s: usize, p: Psn, b: &[u8]) -> bool {
            self.store.keep_source(s, p, b)
        }
        fn source(&self, s: usize) -> Option<&[u8]> {
            self.store.source(s)
        }
        fn drop_source(&mut self, s: usize) {
            self.store.drop_source(s)
        }
        fn keep_repair(&mut self, s: usize, b: &[u8]) -> bool {
            self.store.keep_repair(s, b)
        }
        fn repair(&self, s: usize) -> Option<&[u8]> {
            self.store.repair(s)
        }
        fn source_and_repair_mut(
            &mut self,
            a: usize,
            b: usize,
        ) -> (Option<&[u8]>, Option<&mut [u8]>) {
            self.store.source_and_repair_mut(a, b)
        }
        fn drop_repair(&mut self, s: usize) {
            self.store.drop_repair(s)
        }
    }
    impl Delivery for D<'_> {
        fn restored(&mut self, psn: Psn, _p: &[u8], _hold: bool) -> Restored {
            self.out.push(psn.value());
            Restored::Verified
        }
        fn replay(&mut self, _slot: usize, psn: Psn) -> Restored {
            self.out.push(psn.value());
            Restored::Verified
        }
        fn release(&mut self, _psn: Psn) {}
    }
    impl Sink for D<'_> {
        fn send(&mut self, _m: &[u8]) {}
    }
    let mut src = vec![0u8; 1024 * 64];
    let mut src_len = vec![0u32; 1024];
    let mut rep = vec![0u8; 128 * 80];
    let mut rep_len = vec![0u32; 128];
    let mut d = D {
        store: SliceStore::new(&mut src, &mut src_len, &mut rep, &mut rep_len),
        out: Vec::new(),
    };
    let mut crf = Box::new(TestCrf::new(base_cfg()));
    let fc = cauchy(1, 4, 1, 80);
    crf.accept_config(fc);
    let p = pkts(4, 40);
    let csf = Csf::new(fc, 0, p.clone());
    for q in [0u32, 1, 3] {
        crf.on_source(
            0,
            Psn::new(q),
            p[q as usize].as_ref().unwrap(),
            false,
            &mut d,
        );
    }
    let mut ws = Ws::new(64 * 80);
    let r = csf.ordinary(0)[0].clone();
    let m = Repair::decode(&r).unwrap();
    let mut w = Workspace {
        gf: &ws.gf,
        scratch: &mut ws.scratch,
        out: &mut ws.out,
    };
    crf.on_repair(0, &m, false, &mut d, &mut w);
    assert_eq!(d.out, vec![2]);
    assert_eq!(d.store.repairs_kept(), 0);
    // The block is complete: its copies stay for replay (`crf/replay.rs`)
    // until they fall a quarter window behind the highest PSN.
    assert_eq!(d.store.sources_kept(), 3, "kept for replay");
    let far: u32 = 3 + 1024 / 4; // TestCrf's window: 1024 PSNs
    let q = far.to_be_bytes();
    crf.on_source(0, Psn::new(far), &q, false, &mut d);
    assert_eq!(d.store.sources_kept(), 1, "the replayable copies dropped");
}

#[test]
fn present_bitmap_overrides_read_guess() {
    // A READ request span claims 2..=3 absent, but the block's Present
    // Bitmap says 3 is present (the CSF knows better, e.g. after an MTU
    // mismatch): 3 is a loss after all, and restored.
    let mut rig = Rig::new(base_cfg());
    let fc = cauchy(1, 4, 1, 120);
    rig.crf.accept_config(fc);
    let mut p: Vec<Option<Vec<u8>>> = pkts(8, 40);
    p[1] = Some(read_request(Psn::new(1), 3072));
    p[2] = None;
    let mut csf = Csf::new(fc, 0, p.clone());
    send(&mut rig, &p, [0, 1, 4]);
    assert_eq!(rig.crf.counters().read_absent, 2);
    rig.repair_bytes(&csf.ordinary(0)[0], false);
    // Trusting the span, the copies of 0 and 1 were already dropped: the
    // request names them too (the decoder lacks them), and the answer
    // restores 3.
    rig.advance(2 * MS);
    let sent = rig.sent();
    let reqs = requests(&sent);
    let RequestKind::Block(b) = reqs[0].kind else {
        panic!()
    };
    assert_eq!(b.lost, [0usize, 1, 3].into_iter().collect::<Bitmap256>());
    assert_eq!((b.repairs_held, b.suggested_m), (1, 2));
    for a in csf.answer(&reqs[0]) {
        rig.repair_bytes(&a, false);
    }
    assert!(rig.host.delivered.iter().any(|d| d.psn == 3 && d.restored));
    assert_eq!(
        rig.crf.counters().restored,
        1,
        "0 and 1 are not delivered twice"
    );
}

#[test]
fn zeroed_memory_then_init_is_a_working_engine() {
    // What the kernel does: allocate zeroed memory, then `init` in place.
    // SAFETY: every field of `Crf` is valid as all-zero bytes (see the
    // module documentation).
    let mut crf: Box<TestCrf> = unsafe { Box::<TestCrf>::new_zeroed().assume_init() };
    crf.init(base_cfg());
    let mut host = Host::default();
    let fc = cauchy(1, 4, 1, 80);
    assert!(crf.accept_config(fc));
    let p = pkts(4, 40);
    let csf = Csf::new(fc, 0, p.clone());
    for q in [0u32, 1, 3] {
        crf.on_source(
            0,
            Psn::new(q),
            p[q as usize].as_ref().unwrap(),
            false,
            &mut host,
        );
    }
    let r = csf.ordinary(0)[0].clone();
    let m = Repair::decode(&r).unwrap();
    let mut ws = Ws::new(80);
    crf.on_repair(0, &m, false, &mut host, &mut ws.ws());
    assert_eq!(crf.counters().restored, 1);
}

#[test]
fn engine_sizes() {
    use crem_core::engine::crf::Crf;
    let k = std::mem::size_of::<Crf<crem_core::engine::crf::Inline<64, 4096, 1024, 512>>>();
    let t = std::mem::size_of::<TestCrf>();
    eprintln!("kernel-size CRF {k} octets, test CRF {t} octets");
    assert!(k < 96 * 1024);
}
