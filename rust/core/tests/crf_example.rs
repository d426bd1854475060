//! The draft's coding example, end to end through the CRF: sources 0..2 of
//! the block at PSN 0x1000 are lost; the CRF holds S3, R0 and R1, asks for
//! one symbol over L = {0, 1, 2} (X = 3, r = 2, M_s = 1), and restores S0..S2
//! byte-exact from R2[L].

mod crf_util;

use crem_core::engine::MS;
use crem_core::psn::Psn;
use crem_core::wire::{Bitmap256, FecScheme, RequestKind};
use crf_util::*;

fn example_csf() -> Csf {
    let payloads = (0..4)
        .map(|j| Some(format!("RDMA-PKT-{j}").into_bytes()))
        .collect();
    Csf::new(cauchy(1, 4, 2, 16), 0x1000, payloads)
}

fn accept_all(_psn: u32, p: &[u8]) -> bool {
    p.starts_with(b"RDMA-PKT-")
}

fn run(loss_ppm: u32) -> (Rig, Csf) {
    let mut cfg = base_cfg();
    cfg.loss_ppm = loss_ppm;
    let mut rig = Rig::new(cfg);
    rig.host.verify = accept_all;
    assert!(rig.crf.accept_config(cauchy(1, 4, 2, 16)));
    let csf = example_csf();
    rig.at(MS);
    rig.source(0x1003, b"RDMA-PKT-3", false);
    for r in csf.ordinary(0) {
        rig.repair_bytes(&r, false);
    }
    // R0 and R1 are held, three sources unknown: nothing decoded yet.
    assert!(rig.host.restore_calls.is_empty());
    assert!(rig.sent().is_empty());
    // R1 carried LAST: after the reordering allowance the block is
    // incomplete.
    rig.advance(2 * MS + 1);
    (rig, csf)
}

#[test]
fn draft_coding_example() {
    let (mut rig, mut csf) = run(0);
    let sent = rig.sent();
    let reqs = requests(&sent);
    assert_eq!(reqs.len(), 1, "{sent:?}");
    let req = reqs[0];
    assert_eq!(req.flow_id, FLOW);
    assert!(!req.fallback);
    let RequestKind::Block(b) = req.kind else {
        panic!("block form expected");
    };
    assert_eq!(b.block_start, Psn::new(0x1000));
    assert_eq!(b.k, 4);
    assert_eq!(b.config_id, 1);
    assert_eq!(b.scheme, FecScheme::CauchyRs);
    assert_eq!(b.lost, [0usize, 1, 2].into_iter().collect::<Bitmap256>());
    assert_eq!(b.repairs_held, 2);
    assert_eq!(b.suggested_m, 1);
    assert_eq!(rig.crf.counters().requests_block, 1);
    assert_eq!(rig.crf.counters().blocks_incomplete, 1);

    // The CSF answers with R2[L]: check it is the draft's symbol.
    let answer = csf.answer(&req);
    assert_eq!(answer.len(), 1);
    let r2 = crem_core::wire::Repair::decode(&answer[0]).unwrap();
    assert_eq!(r2.repair_index, 2);
    assert_eq!(r2.session_id, b.request_id);
    assert_eq!(
        r2.symbol,
        [
            0x00, 0x35, 0x4f, 0xdf, 0x6d, 0x4b, 0x40, 0xb5, 0x7e, 0x5c, 0x40, 0x00, 0x00, 0x00,
            0x00, 0x00
        ]
    );
    rig.at(12 * MS);
    rig.repair_bytes(&answer[0], false);

    // S0..S2 restored byte-exact, handed over (late: S3 went first).
    let restored: Vec<(u32, Vec<u8>)> = rig
        .host
        .delivered
        .iter()
        .filter(|d| d.restored)
        .map(|d| (d.psn, d.bytes.clone()))
        .collect();
    assert_eq!(
        restored,
        (0..3)
            .map(|j| (0x1000 + j, format!("RDMA-PKT-{j}").into_bytes()))
            .collect::<Vec<_>>()
    );
    let c = rig.crf.counters();
    assert_eq!(c.restored, 3);
    assert_eq!(c.restored_late, 3);
    assert_eq!(c.decodes, 1);
    assert_eq!(c.blocks_completed, 1);
    assert_eq!(c.repairs, 3);
    assert_eq!(c.repairs_ordinary, 2);
    assert_eq!(c.repairs_retx, 1);
    assert_eq!(rig.crf.open_blocks(), 0);
    assert_eq!(rig.crf.repairs_held(), 0);
    assert!(rig.host.repairs.is_empty());
    // No further request once the block is complete.
    rig.advance(100 * MS);
    assert!(requests(&rig.sent()).is_empty());
}

#[test]
fn delta_when_loss_above_one_percent() {
    let (mut rig, _) = run(20_000);
    let sent = rig.sent();
    let reqs = requests(&sent);
    let RequestKind::Block(b) = reqs[0].kind else {
        panic!()
    };
    assert_eq!(b.repairs_held, 2);
    assert_eq!(b.suggested_m, 2, "M_s = X - r + 1");
}

#[test]
fn exactly_one_percent_is_not_above() {
    let (mut rig, _) = run(10_000);
    let sent = rig.sent();
    let RequestKind::Block(b) = requests(&sent)[0].kind else {
        panic!()
    };
    assert_eq!(b.suggested_m, 1);
}

#[test]
fn enough_ordinary_repairs_decode_without_request() {
    // Only S0 lost: R0 alone restores it as soon as it arrives.
    let mut rig = Rig::new(base_cfg());
    rig.host.verify = accept_all;
    rig.crf.accept_config(cauchy(1, 4, 2, 16));
    let csf = example_csf();
    for j in 1..4u32 {
        rig.source(0x1000 + j, format!("RDMA-PKT-{j}").as_bytes(), false);
    }
    let ord = csf.ordinary(0);
    rig.repair_bytes(&ord[0], false);
    assert_eq!(rig.crf.counters().restored, 1);
    assert_eq!(rig.host.delivered.last().unwrap().bytes, b"RDMA-PKT-0");
    // R1 is now unneeded.
    rig.repair_bytes(&ord[1], false);
    assert_eq!(rig.crf.counters().drop_unneeded, 1);
    rig.advance(50 * MS);
    assert!(requests(&rig.sent()).is_empty());
}
