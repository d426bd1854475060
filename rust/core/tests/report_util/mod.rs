//! Shared helpers of the `report_*` tests.
#![allow(dead_code)]

use crem_core::psn::Psn;
use crem_core::report::{Aggregator, Budget, Dropped, Emit, Slot};
use crem_core::wire::{
    DroppedPsns, FlowAddrs, HopEntries, HopEntry, LossCause, Method, PathReport,
};

pub fn v4(n: u8) -> FlowAddrs {
    FlowAddrs::V4 {
        src: [192, 0, 2, n],
        dst: [203, 0, 113, n],
    }
}

pub fn v6(n: u8) -> FlowAddrs {
    let mut src = [0u8; 16];
    src[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    let mut dst = src;
    src[15] = n;
    dst[14] = 1;
    dst[15] = n;
    FlowAddrs::V6 { src, dst }
}

pub fn dropped(addrs: FlowAddrs, dest_qp: u32, psn: u32) -> Dropped {
    Dropped {
        addrs,
        dest_qp,
        psn: Psn::new(psn),
        opcode: 0x04,
        is_source: true,
    }
}

/// A downstream entry's PSNs, owned.
pub struct Hop {
    pub node_id: u32,
    pub lost: u32,
    pub cause: LossCause,
    pub psns: Vec<Psn>,
}

pub fn hop(node_id: u32, psns: std::ops::Range<u32>) -> Hop {
    Hop {
        node_id,
        lost: psns.len() as u32,
        cause: LossCause::QueueOverflow,
        psns: psns.map(Psn::new).collect(),
    }
}

/// An encoded downstream PATH_REPORT.
pub fn report(
    addrs: FlowAddrs,
    dest_qp: u32,
    method: Method,
    truncated: bool,
    hops: &[Hop],
) -> Vec<u8> {
    let entries: Vec<HopEntry<'_>> = hops
        .iter()
        .map(|h| HopEntry {
            node_id: h.node_id,
            period: 9,
            lost_count: h.lost,
            queue_delay_change_us: -3,
            cause: h.cause,
            dropped: DroppedPsns::from_slice(&h.psns),
        })
        .collect();
    let m = PathReport {
        truncated,
        method,
        addrs,
        flow_label: dest_qp,
        hops: HopEntries::from_slice(&entries),
    };
    let mut buf = vec![0u8; m.encoded_len()];
    m.encode(&mut buf).expect("test report encodes");
    buf
}

/// Everything `poll` emits at `now` with `budget`, as owned octets.
pub fn poll(
    agg: &mut Aggregator<&mut [Slot]>,
    now: u64,
    budget: usize,
) -> Vec<(Vec<u8>, FlowAddrs, u32)> {
    let mut out = vec![0u8; budget];
    let mut v = Vec::new();
    agg.poll(
        now,
        &mut out,
        |_, _| Budget::Send(budget),
        |e: &Emit<'_>| {
            assert!(e.bytes.len() <= budget);
            v.push((e.bytes.to_vec(), e.addrs, e.dest_qp))
        },
    );
    v
}

/// One decoded hop entry, owned: (node, lost, cause, PSNs).
pub type Entry = (u32, u32, LossCause, Vec<u32>);

pub fn entries(r: &PathReport<'_>) -> Vec<Entry> {
    r.hops
        .iter()
        .map(|h| {
            (
                h.node_id,
                h.lost_count,
                h.cause,
                h.dropped.iter().map(|p| p.value()).collect(),
            )
        })
        .collect()
}
