//! The parts of a sender/receiver flow pair both pair tests build on
//! (flow_pair.rs: messages delivered at once; rtt_flows.rs: over a delayed
//! link): sizes, limits, and the CSF's source store and message sink.
#![allow(dead_code)] // each test crate uses its own subset

use std::collections::HashMap;

use crem_core::engine::csf::{CsfIo, CsfParams, Inline, SourceStore, SourceVerdict};
use crem_core::engine::flow::SenderParams;
use crem_core::engine::flow::{ReceiverFlow, SenderFlow};
use crem_core::engine::negotiation::FlowDescriptor;
use crem_core::engine::{Limits, Nanos, Sink, MS};
use crem_core::fec::Scheme;
use crem_core::gf::RowPerCall;
use crem_core::psn::{Psn, PsnRange};
use crem_core::wire::{FlowAddrs, FlowKind};

pub const T: u16 = 1100;
pub const US: Nanos = 1_000;
pub type Snd = SenderFlow<Inline<64, { 4 * 1100 }>>;
pub type Rcv = ReceiverFlow<crem_core::engine::crf::Inline<16, 1024, 256, 128>>;

/// Both sides' limits: every scheme, k up to 255, m up to 16, T.
pub fn limits(open_blocks: u16) -> Limits {
    Limits {
        schemes: 0b111,
        max_k: 255,
        max_m: 16,
        max_t: T,
        max_open_blocks: open_blocks,
    }
}

/// The CSF's retained sources, by PSN.
#[derive(Default)]
pub struct Store(pub HashMap<u32, Vec<u8>>);

impl SourceStore for Store {
    fn source(&self, psn: Psn) -> Option<&[u8]> {
        self.0.get(&psn.value()).map(|v| v.as_slice())
    }
    fn release(&mut self, range: PsnRange) {
        for p in range.iter() {
            self.0.remove(&p.value());
        }
    }
}

/// Messages a side sent, in order.
#[derive(Default)]
pub struct Out(pub Vec<Vec<u8>>);

impl Sink for Out {
    fn send(&mut self, msg: &[u8]) {
        self.0.push(msg.to_vec());
    }
}

/// The RDMA sender's packet `bytes` (PSN `psn`) through the sender flow at
/// `now`: its messages go to `out`, and the packet to `store` if it is to
/// be retained.
pub fn csf_source(
    snd: &mut Snd,
    now: Nanos,
    psn: u32,
    bytes: &[u8],
    out: &mut Out,
    store: &mut Store,
    scratch: &mut [u8],
) {
    let io = &mut CsfIo {
        gf: &RowPerCall,
        sink: out,
        store,
        scratch,
    };
    if snd.on_source(now, bytes, io) == SourceVerdict::Retain {
        store.0.insert(psn, bytes.to_vec());
    }
}

/// The flow both pair tests protect: 192.0.2.1 -> 192.0.2.2, QP 0x11.
pub fn flow() -> FlowDescriptor {
    FlowDescriptor {
        addrs: FlowAddrs::V4 {
            src: [192, 0, 2, 1],
            dst: [192, 0, 2, 2],
        },
        dest_qp: 0x11,
        rdma_mtu: 1024,
        kind: FlowKind::Requests,
    }
}

/// A sender flow with a fixed (k, m), RTT hint `hint`, no early protection.
pub fn sender_params(k: u8, m: u8, hint: Nanos) -> SenderParams {
    SenderParams {
        csf: CsfParams {
            initial_srtt: hint,
            idle_timeout: MS,
            ..CsfParams::DEFAULT
        },
        policy: None,
        fixed_k: k,
        fixed_m: m,
        scheme: Scheme::CauchyRs,
        t: T,
        t_follows_mtu: false,
        early: false,
        rtt_hint: hint,
        block_time_hint: 0,
        psn_lead: 16,
        peer_hold: 0,
        limits: limits(u16::MAX),
        flow: flow(),
        initial_psn: Psn::new(0),
    }
}
