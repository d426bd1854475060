//! Shared helpers of the negotiation tests.
#![allow(dead_code)]

use crem_core::engine::negotiation::{CrfNegotiation, CsfNegotiation, FlowDescriptor};
use crem_core::engine::{Limits, Sink};
use crem_core::wire::{decode, FlowAddrs, FlowKind, Message};

/// A sink that keeps every message sent.
#[derive(Default)]
pub struct Rec(pub Vec<Vec<u8>>);

impl Sink for Rec {
    fn send(&mut self, msg: &[u8]) {
        self.0.push(msg.to_vec());
    }
}

impl Rec {
    pub fn take(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.0)
    }
    pub fn msgs(&self) -> Vec<Message<'_>> {
        self.0
            .iter()
            .map(|b| decode(b).expect("engine sent an undecodable message"))
            .collect()
    }
    pub fn last(&self) -> Message<'_> {
        decode(self.0.last().expect("nothing sent")).expect("undecodable")
    }
}

pub const CSF_LIMITS: Limits = Limits {
    schemes: 0b111,
    max_k: 64,
    max_m: 16,
    max_t: 4200,
    max_open_blocks: u16::MAX,
};

pub const CRF_LIMITS: Limits = Limits {
    schemes: 0b011,
    max_k: 48,
    max_m: 8,
    max_t: 4300,
    max_open_blocks: 128,
};

pub fn flow() -> FlowDescriptor {
    FlowDescriptor {
        addrs: FlowAddrs::V4 {
            src: [192, 0, 2, 1],
            dst: [198, 51, 100, 7],
        },
        dest_qp: 0xAB00_1234,
        rdma_mtu: 4096,
        kind: FlowKind::Requests,
    }
}

pub fn csf() -> CsfNegotiation {
    CsfNegotiation::new(CSF_LIMITS, flow())
}

pub fn crf() -> CrfNegotiation {
    CrfNegotiation::new(CRF_LIMITS)
}
