//! The parts of a sender/receiver flow pair both pair tests build on
//! (flow_pair.rs: messages delivered at once; rtt_flows.rs: over a delayed
//! link): sizes, limits, and the CSF's source store and message sink.
#![allow(dead_code)] // each test crate uses its own subset

use std::collections::HashMap;

use crem_core::engine::csf::SourceStore;
use crem_core::engine::flow::{ReceiverFlow, SenderFlow};
use crem_core::engine::{Limits, Nanos, Sink};
use crem_core::psn::{Psn, PsnRange};

pub const T: u16 = 1100;
pub const US: Nanos = 1_000;
pub type Snd = SenderFlow<64, { 4 * 1100 }>;
pub type Rcv = ReceiverFlow<16, 1024, 256, 128>;

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
