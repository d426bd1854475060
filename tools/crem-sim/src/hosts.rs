//! What the engines call back into: the CSF's retained-source store and
//! message sink, and the CRF's symbol store, delivery and sink. Each checks
//! the engine's side of the contract and counts violations instead of
//! panicking, so a grid run reports them per cell.

use std::collections::HashMap;

use crem_core::engine::crf::{Delivery, Restored, SymbolStore};
use crem_core::engine::csf::SourceStore;
use crem_core::engine::Sink;
use crem_core::psn::{Psn, PsnRange};

use crate::traffic::icrc_ok;

/// Messages an engine handed to its sink, in order.
#[derive(Default)]
pub struct Outbox {
    /// Encoded CREM messages.
    pub msgs: Vec<Vec<u8>>,
}

impl Sink for Outbox {
    fn send(&mut self, msg: &[u8]) {
        self.msgs.push(msg.to_vec());
    }
}

/// The CSF caller's retained source packets (the kernel keeps skbs).
#[derive(Default)]
pub struct CsfStore {
    /// Retained UDP payloads by PSN value.
    pub pkts: HashMap<u32, Vec<u8>>,
    /// Sum of their lengths (must equal the engine's retention gauge).
    pub octets: u64,
    /// Release calls with an empty or over-long range.
    pub bad_release: u64,
    /// PSNs released.
    pub released: u64,
    /// The module's ring size (`module_caps::CSF_STORE_SLOTS`) when the
    /// module's engine is simulated, else 0 (no ring).
    pub ring_slots: u32,
    /// The PSN each ring slot last kept.
    pub slot_psn: HashMap<u32, u32>,
    /// Keeps that, in the module's ring, would have overwritten another
    /// PSN still retained (that packet lost to coded retransmission).
    pub ring_overwritten: u64,
}

impl CsfStore {
    /// Keeps a packet the engine said to retain; `false` if it already was.
    pub fn keep(&mut self, psn: Psn, bytes: &[u8]) -> bool {
        if self.pkts.contains_key(&psn.value()) {
            return false;
        }
        if self.ring_slots != 0 {
            let slot = psn.value() & (self.ring_slots - 1);
            if let Some(old) = self.slot_psn.insert(slot, psn.value()) {
                if self.pkts.contains_key(&old) {
                    self.ring_overwritten += 1;
                }
            }
        }
        self.octets += bytes.len() as u64;
        self.pkts.insert(psn.value(), bytes.to_vec());
        true
    }
}

impl SourceStore for CsfStore {
    fn source(&self, psn: Psn) -> Option<&[u8]> {
        self.pkts.get(&psn.value()).map(|v| v.as_slice())
    }
    fn release(&mut self, range: PsnRange) {
        if range.count == 0 || range.count > 255 {
            self.bad_release += 1;
        }
        for p in range.iter() {
            if let Some(v) = self.pkts.remove(&p.value()) {
                self.octets -= v.len() as u64;
                self.released += 1;
            }
        }
    }
}

/// How a copy of a source packet reached the RDMA receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Via {
    /// The first transmission, through the CRF.
    Original,
    /// An RDMA retransmission (the fallback), through the CRF.
    RdmaRetx,
    /// Restored by the CRF, after `rounds` CREM retransmission sessions
    /// (coded, Source Copy or selective repeat) covering it had arrived.
    Restored {
        /// 0 = ordinary repairs only (no extra RTT).
        rounds: u8,
    },
}

/// A packet the CRF passed to the RDMA receiver.
pub struct Delivered {
    /// Its PSN.
    pub psn: Psn,
    /// Its UDP payload.
    pub bytes: Vec<u8>,
    /// How it came.
    pub via: Via,
}

/// Contract violations seen by the CRF host.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct HostViolations {
    /// `keep_source` into a slot not dropped.
    pub source_slot_reused: u64,
    /// `keep_repair` into a slot not dropped.
    pub repair_slot_reused: u64,
    /// `release` for a PSN not held.
    pub bogus_release: u64,
    /// A PSN held twice at once.
    pub double_hold: u64,
    /// Restored packets whose ICRC failed.
    pub icrc_failed: u64,
}

/// The CRF's caller: symbol store, delivery (with the real ICRC check) and
/// sink.
pub struct CrfHost {
    sources: Vec<Option<Vec<u8>>>,
    repairs: Vec<Option<Vec<u8>>>,
    /// Packets held for the engine, by PSN value.
    pub held: HashMap<u32, (Vec<u8>, Via)>,
    /// Messages to the CSF.
    pub out: Outbox,
    /// Packets passed on, in order.
    pub delivered: Vec<Delivered>,
    /// Distinct CREM retransmission sessions that arrived covering each PSN.
    pub sessions: HashMap<u32, Vec<u16>>,
    /// Violations.
    pub v: HostViolations,
    /// Octets kept now and their peaks over the run ([`DataOctets`]).
    pub mem: DataOctets,
}

/// The CRF host's packet data, octets (UDP payloads as the engine hands
/// them over): what it keeps now, and the peaks over the run.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct DataOctets {
    /// Kept sources (the engine's source slots), now.
    pub sources: u64,
    /// Kept repair symbols, now.
    pub repairs: u64,
    /// Held packets (in-order release), now.
    pub held: u64,
    /// Peak of `sources`.
    pub sources_max: u64,
    /// Peak of `repairs`.
    pub repairs_max: u64,
    /// Peak of `held`.
    pub held_max: u64,
    /// Peak of the sum of the three (at one time).
    pub total_max: u64,
}

impl DataOctets {
    fn note(&mut self) {
        self.sources_max = self.sources_max.max(self.sources);
        self.repairs_max = self.repairs_max.max(self.repairs);
        self.held_max = self.held_max.max(self.held);
        let t = self.sources + self.repairs + self.held;
        self.total_max = self.total_max.max(t);
    }
}

impl CrfHost {
    /// A host with `window` source cells and `repairs` repair cells.
    pub fn new(window: usize, repairs: usize) -> CrfHost {
        CrfHost {
            sources: vec![None; window],
            repairs: vec![None; repairs],
            held: HashMap::new(),
            out: Outbox::default(),
            delivered: Vec::new(),
            sessions: HashMap::new(),
            v: HostViolations::default(),
            mem: DataOctets::default(),
        }
    }

    /// Holds a packet for the engine (a PSN held twice is counted).
    pub fn hold(&mut self, psn: Psn, bytes: Vec<u8>, via: Via) {
        self.mem.held += bytes.len() as u64;
        if let Some((old, _)) = self.held.insert(psn.value(), (bytes, via)) {
            self.v.double_hold += 1;
            self.mem.held -= old.len() as u64;
        }
        self.mem.note();
    }

    /// Records that a retransmission session covering `psn` arrived.
    pub fn note_session(&mut self, psn: Psn, session: u16) {
        let s = self.sessions.entry(psn.value()).or_default();
        if !s.contains(&session) {
            s.push(session);
        }
    }

    /// Source cells in use.
    pub fn sources_kept(&self) -> usize {
        self.sources.iter().filter(|s| s.is_some()).count()
    }

    /// Repair cells in use.
    pub fn repairs_kept(&self) -> usize {
        self.repairs.iter().filter(|s| s.is_some()).count()
    }
}

impl SymbolStore for CrfHost {
    fn keep_source(&mut self, slot: usize, _psn: Psn, payload: &[u8]) -> bool {
        match self.sources.get_mut(slot) {
            Some(c) => {
                if let Some(old) = c.take() {
                    self.v.source_slot_reused += 1;
                    self.mem.sources -= old.len() as u64;
                }
                *c = Some(payload.to_vec());
                self.mem.sources += payload.len() as u64;
                self.mem.note();
                true
            }
            None => false,
        }
    }
    fn source(&self, slot: usize) -> Option<&[u8]> {
        self.sources.get(slot)?.as_deref()
    }
    fn drop_source(&mut self, slot: usize) {
        if let Some(old) = self.sources.get_mut(slot).and_then(Option::take) {
            self.mem.sources -= old.len() as u64;
        }
    }
    fn keep_repair(&mut self, slot: usize, symbol: &[u8]) -> bool {
        match self.repairs.get_mut(slot) {
            Some(c) => {
                if let Some(old) = c.take() {
                    self.v.repair_slot_reused += 1;
                    self.mem.repairs -= old.len() as u64;
                }
                *c = Some(symbol.to_vec());
                self.mem.repairs += symbol.len() as u64;
                self.mem.note();
                true
            }
            None => false,
        }
    }
    fn repair(&self, slot: usize) -> Option<&[u8]> {
        self.repairs.get(slot)?.as_deref()
    }
    fn source_and_repair_mut(
        &mut self,
        source: usize,
        repair: usize,
    ) -> (Option<&[u8]>, Option<&mut [u8]>) {
        let s = self.sources.get(source).and_then(|c| c.as_deref());
        let r = self.repairs.get_mut(repair).and_then(|c| c.as_deref_mut());
        (s, r)
    }
    fn drop_repair(&mut self, slot: usize) {
        if let Some(old) = self.repairs.get_mut(slot).and_then(Option::take) {
            self.mem.repairs -= old.len() as u64;
        }
    }
}

impl Delivery for CrfHost {
    fn restored(&mut self, psn: Psn, payload: &[u8], hold: bool) -> Restored {
        if !icrc_ok(payload) {
            self.v.icrc_failed += 1;
            return Restored::IcrcFailed;
        }
        let rounds = self
            .sessions
            .get(&psn.value())
            .map_or(0, |s| s.len().min(255) as u8);
        let via = Via::Restored { rounds };
        if hold {
            self.hold(psn, payload.to_vec(), via);
        } else {
            self.delivered.push(Delivered {
                psn,
                bytes: payload.to_vec(),
                via,
            });
        }
        Restored::Verified
    }
    fn replay(&mut self, slot: usize, psn: Psn) -> Restored {
        // It stands in for an RDMA resend the path lost (the model's CRF
        // does not replay: `model.rs`).
        match self.sources.get(slot).and_then(|c| c.clone()) {
            Some(bytes) => {
                self.delivered.push(Delivered {
                    psn,
                    bytes,
                    via: Via::RdmaRetx,
                });
                Restored::Verified
            }
            None => Restored::Dropped,
        }
    }
    fn release(&mut self, psn: Psn) {
        match self.held.remove(&psn.value()) {
            Some((bytes, via)) => {
                self.mem.held -= bytes.len() as u64;
                self.delivered.push(Delivered { psn, bytes, via })
            }
            None => self.v.bogus_release += 1,
        }
    }
}

impl Sink for CrfHost {
    fn send(&mut self, msg: &[u8]) {
        self.out.send(msg);
    }
}
