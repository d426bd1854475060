//! Shared harness of the CSF tests: a store of retained packets, a sink that
//! keeps every message, and helpers to decode what the CSF sent with the
//! real FEC decoder.
#![allow(dead_code)]

use crem_core::engine::csf::{Csf, CsfIo, CsfParams, Inline, SourceStore, SourceVerdict};
use crem_core::engine::{FecConfig, Nanos, Sink};
use crem_core::fec::{
    self, build_source_symbol, Bitmap, Code, DecodeScratch, Scheme, SliceSymbols,
};
use crem_core::gf::RowPerCall;
use crem_core::psn::{Psn, PsnRange};
use crem_core::wire::{Repair, RepairRequest, TcAethReport};
use std::collections::{BTreeSet, HashMap};

/// The caller's packet storage.
#[derive(Default)]
pub struct Store {
    pub pkts: HashMap<u32, Vec<u8>>,
    pub released: Vec<PsnRange>,
    /// PSNs the store pretends not to hold.
    pub hide: BTreeSet<u32>,
}

impl SourceStore for Store {
    fn source(&self, psn: Psn) -> Option<&[u8]> {
        if self.hide.contains(&psn.value()) {
            return None;
        }
        self.pkts.get(&psn.value()).map(|v| v.as_slice())
    }
    fn release(&mut self, range: PsnRange) {
        assert!(range.count >= 1 && range.count <= 255, "{range:?}");
        for p in range.iter() {
            self.pkts.remove(&p.value());
        }
        self.released.push(range);
    }
}

/// Keeps every message sent.
#[derive(Default)]
pub struct Out {
    pub msgs: Vec<Vec<u8>>,
}

impl Sink for Out {
    fn send(&mut self, msg: &[u8]) {
        self.msgs.push(msg.to_vec());
    }
}

pub struct H<const B: usize, const A: usize> {
    pub csf: Box<Csf<Inline<B, A>>>,
    pub store: Store,
    pub out: Out,
    pub scratch: Vec<u8>,
}

macro_rules! io {
    ($s:ident) => {
        &mut CsfIo {
            gf: &RowPerCall,
            sink: &mut $s.out,
            store: &mut $s.store,
            scratch: &mut $s.scratch[..],
        }
    };
}

impl<const B: usize, const A: usize> H<B, A> {
    pub fn new(params: CsfParams, cfg: Option<FecConfig>) -> Self {
        let mut csf = Box::new(Csf::new(params));
        if let Some(c) = cfg {
            csf.set_config(c, Psn::ZERO).unwrap();
        }
        H {
            csf,
            store: Store::default(),
            out: Out::default(),
            scratch: vec![0; 84 + 4200],
        }
    }

    /// A source; retains it when told to.
    pub fn src(&mut self, now: Nanos, psn: u32, span: u32, payload: &[u8]) -> SourceVerdict {
        let v = self
            .csf
            .on_source(now, Psn::new(psn), span, payload, io!(self));
        if v.retain() {
            let old = self
                .store
                .pkts
                .insert(Psn::new(psn).value(), payload.to_vec());
            assert!(old.is_none(), "retain twice {psn}");
        }
        v
    }

    pub fn roce(&mut self, now: Nanos, udp: &[u8], mtu: u32) -> SourceVerdict {
        let v = self.csf.on_roce(now, udp, mtu, io!(self));
        if v.retain() {
            let psn = crem_core::roce::Bth::parse(udp).unwrap().psn;
            self.store.pkts.insert(psn.value(), udp.to_vec());
        }
        v
    }

    pub fn ack(&mut self, now: Nanos, psn: u32) {
        self.csf.on_rdma_ack(now, Psn::new(psn), &mut self.store);
    }

    pub fn timer(&mut self, now: Nanos) {
        self.csf.on_timer(now, io!(self));
    }

    /// The provisional configuration was acknowledged.
    pub fn confirm(&mut self) {
        self.csf.confirm(io!(self));
    }

    pub fn request(&mut self, now: Nanos, req: &RepairRequest<'_>) {
        self.csf.on_repair_request(now, req, io!(self));
    }

    pub fn tc(&mut self, now: Nanos, rep: &TcAethReport) {
        self.csf.on_tc_aeth(now, rep, io!(self));
    }

    pub fn path_drops(&mut self, now: Nanos, psns: &[u32]) {
        let it = psns.iter().map(|&p| Psn::new(p));
        self.csf.on_path_drops(now, it, io!(self));
    }

    pub fn take(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.out.msgs)
    }

    /// Takes the messages sent so far, decoded as REPAIRs (leaked: tests
    /// only).
    pub fn reps(&mut self) -> Vec<Repair<'static>> {
        let msgs: &'static [Vec<u8>] = Vec::leak(self.take());
        repairs(msgs)
    }
}

/// Decodes every message as a REPAIR (they all must be).
pub fn repairs(msgs: &[Vec<u8>]) -> Vec<Repair<'_>> {
    msgs.iter()
        .map(|m| Repair::decode(m).expect("a valid REPAIR"))
        .collect()
}

pub fn cfg(id: u8, k: u8, m: u8, t: u16) -> FecConfig {
    FecConfig {
        id,
        scheme: Scheme::CauchyRs,
        k,
        m,
        t,
    }
}

pub fn to_fec(b: &crem_core::wire::Bitmap256) -> Bitmap {
    Bitmap::from_words(&b.words())
}

/// Recovers the unknown present sources of one block from the source
/// payloads the CRF holds (`held`, by position) and the REPAIRs it got, with
/// the real decoder. Returns the payloads by position.
pub fn decode_block(
    k: u8,
    t: u16,
    present: &Bitmap,
    held: &HashMap<u8, Vec<u8>>,
    reps: &[Repair<'_>],
) -> Result<HashMap<u8, Vec<u8>>, fec::Error> {
    let t = t as usize;
    let code = Code::new(Scheme::CauchyRs, k, t)?;
    let syms: Vec<Option<Vec<u8>>> = (0..k)
        .map(|j| {
            held.get(&j).map(|p| {
                let mut s = vec![0u8; t];
                build_source_symbol(p, t, &mut s).unwrap();
                s
            })
        })
        .collect();
    let sources: Vec<Option<&[u8]>> = syms.iter().map(|s| s.as_deref()).collect();
    let lost: Vec<Option<Bitmap>> = reps.iter().map(|r| r.lost.as_ref().map(to_fec)).collect();
    let fr: Vec<fec::Repair<'_>> = reps
        .iter()
        .zip(&lost)
        .map(|(r, l)| fec::Repair {
            index: r.repair_index,
            lost: l.as_ref(),
            data: r.symbol,
        })
        .collect();
    let symbols = SliceSymbols {
        sources: &sources,
        repairs: &fr,
    };
    let mut scratch = DecodeScratch::new();
    let mut out = vec![0u8; 255 * t];
    let got = fec::decode(
        &RowPerCall,
        &code,
        present,
        &symbols,
        &mut scratch,
        &mut out,
    )?;
    let mut res = HashMap::new();
    for (n, j) in got.iter().enumerate() {
        let sym = &out[n * t..(n + 1) * t];
        res.insert(j, fec::parse_source_symbol(sym).unwrap().to_vec());
    }
    Ok(res)
}

/// Deterministic payload for a PSN.
pub fn payload(psn: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (psn as usize).wrapping_mul(31).wrapping_add(i * 7) as u8)
        .collect()
}
