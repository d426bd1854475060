//! Shared harness for the CRF tests: a host (store, delivery with a real
//! ICRC check, sink), RoCEv2 packet builders, and a small CSF model that
//! encodes blocks and answers REPAIR_REQUESTs with `fec`.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};

pub use crem_core::engine::crf::Restored;
use crem_core::engine::crf::{Crf, CrfConfig, Delivery, SourceVerdict, SymbolStore, Workspace};
use crem_core::engine::{FecConfig, Nanos, Sink, MS};
use crem_core::fec::{self, build_source_symbol, Bitmap, Code, DecodeScratch, Scheme};
use crem_core::gf::RowPerCall;
use crem_core::psn::Psn;
use crem_core::roce::{self, Bth};
use crem_core::wire::{self, Bitmap256, FecScheme, Message, Repair, RepairRequest, RequestKind};

/// The engine size used by most tests.
pub type TestCrf = Crf<crem_core::engine::crf::Inline<16, 1024, 256, 128>>;

pub const FLOW: u32 = 0x0000_BEEF;

/// IPv4 header template of the protected flow (addresses from 192.0.2.0/24).
pub fn ip_header(udp_len: usize) -> [u8; 20] {
    let total = (20 + udp_len) as u16;
    let t = total.to_be_bytes();
    [
        0x45, 0x02, t[0], t[1], 0, 0, 0x40, 0, 64, 17, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2,
    ]
}

fn udp_datagram(payload: &[u8]) -> Vec<u8> {
    let len = (8 + payload.len()) as u16;
    let mut u = vec![0x12, 0x34, 0x12, 0xb7];
    u.extend_from_slice(&len.to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    u
}

/// ICRC check of a UDP payload, as the kernel module does it after
/// rebuilding the flow's IP/UDP headers.
pub fn icrc_ok(payload: &[u8]) -> bool {
    let udp = udp_datagram(payload);
    roce::verify_v4(&ip_header(udp.len()), &udp).unwrap_or(false)
}

pub fn finish(mut p: Vec<u8>) -> Vec<u8> {
    p.extend_from_slice(&[0; 4]);
    let udp = udp_datagram(&p);
    let c = roce::icrc_v4(&ip_header(udp.len()), &udp).unwrap();
    let n = p.len();
    p[n - 4..].copy_from_slice(&c.to_le_bytes());
    p
}

pub fn bth(opcode: u8, psn: Psn) -> [u8; 12] {
    let b = Bth {
        opcode,
        se: false,
        mig_req: false,
        pad_count: 0,
        tver: 0,
        pkey: 0xffff,
        fecn: false,
        becn: false,
        resv6: 0,
        dest_qp: 0x11,
        ack_req: false,
        resv7: 0,
        psn,
    };
    let mut out = [0u8; 12];
    b.write(&mut out).unwrap();
    out
}

/// An RC SEND ONLY packet (UDP payload) with `len` data octets and a valid
/// ICRC.
pub fn send_packet(psn: Psn, len: usize) -> Vec<u8> {
    let mut p = bth(roce::opcode::RC_SEND_ONLY, psn).to_vec();
    p.extend((0..len).map(|i| (i as u32).wrapping_mul(31).wrapping_add(psn.value()) as u8));
    finish(p)
}

/// An RC READ request for `dma_len` octets.
pub fn read_request(psn: Psn, dma_len: u32) -> Vec<u8> {
    let mut p = bth(roce::opcode::RC_READ_REQUEST, psn).to_vec();
    p.extend_from_slice(&0x1000u64.to_be_bytes());
    p.extend_from_slice(&7u32.to_be_bytes());
    p.extend_from_slice(&dma_len.to_be_bytes());
    finish(p)
}

/// What reached the RDMA receiver, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub psn: u32,
    pub bytes: Vec<u8>,
    pub restored: bool,
    pub at: Nanos,
    /// How long it was held (0 if never).
    pub held_for: Nanos,
}

/// Test host: store, delivery, sink.
pub struct Host {
    pub now: Nanos,
    pub sources: HashMap<usize, Vec<u8>>,
    pub repairs: HashMap<usize, Vec<u8>>,
    pub source_cap: usize,
    pub repair_cap: usize,
    pub sent: Vec<Vec<u8>>,
    /// psn → (bytes, restored, held since)
    pub held: BTreeMap<u32, (Vec<u8>, bool, Nanos)>,
    pub delivered: Vec<Delivered>,
    /// Restored payloads (psn, bytes), including ICRC failures.
    pub restore_calls: Vec<(u32, Vec<u8>, bool)>,
    /// Verification: real ICRC by default.
    pub verify: fn(u32, &[u8]) -> bool,
    /// Whether the host could rebuild a packet's IP/UDP header (false: as
    /// the kernel before it saw any packet of the flow).
    pub header_known: bool,
    /// Releases for PSNs not held (must not happen).
    pub bogus_releases: u32,
    /// The packet of the `on_source` call in progress.
    pub current: Option<(u32, Vec<u8>)>,
    /// PSNs replayed from the store, in order.
    pub replayed: Vec<u32>,
}

fn verify_icrc(_psn: u32, p: &[u8]) -> bool {
    icrc_ok(p)
}

impl Default for Host {
    fn default() -> Self {
        Host {
            now: 0,
            sources: HashMap::new(),
            repairs: HashMap::new(),
            source_cap: usize::MAX,
            repair_cap: usize::MAX,
            sent: Vec::new(),
            held: BTreeMap::new(),
            delivered: Vec::new(),
            restore_calls: Vec::new(),
            verify: verify_icrc,
            header_known: true,
            bogus_releases: 0,
            current: None,
            replayed: Vec::new(),
        }
    }
}

impl SymbolStore for Host {
    fn keep_source(&mut self, slot: usize, _psn: Psn, payload: &[u8]) -> bool {
        if self.sources.len() >= self.source_cap && !self.sources.contains_key(&slot) {
            return false;
        }
        assert!(
            !self.sources.contains_key(&slot),
            "engine reused source slot {slot} without dropping it"
        );
        self.sources.insert(slot, payload.to_vec());
        true
    }
    fn source(&self, slot: usize) -> Option<&[u8]> {
        self.sources.get(&slot).map(|v| v.as_slice())
    }
    fn drop_source(&mut self, slot: usize) {
        self.sources.remove(&slot);
    }
    fn keep_repair(&mut self, slot: usize, symbol: &[u8]) -> bool {
        if self.repairs.len() >= self.repair_cap {
            return false;
        }
        assert!(!self.repairs.contains_key(&slot), "repair slot reused");
        self.repairs.insert(slot, symbol.to_vec());
        true
    }
    fn repair(&self, slot: usize) -> Option<&[u8]> {
        self.repairs.get(&slot).map(|v| v.as_slice())
    }
    fn source_and_repair_mut(
        &mut self,
        source: usize,
        repair: usize,
    ) -> (Option<&[u8]>, Option<&mut [u8]>) {
        (
            self.sources.get(&source).map(|v| v.as_slice()),
            self.repairs.get_mut(&repair).map(|v| v.as_mut_slice()),
        )
    }
    fn drop_repair(&mut self, slot: usize) {
        self.repairs.remove(&slot);
    }
}

impl Delivery for Host {
    fn can_restore(&self) -> bool {
        self.header_known
    }
    fn restored(&mut self, psn: Psn, payload: &[u8], hold: bool) -> Restored {
        if !self.header_known {
            return Restored::NoHeader;
        }
        let ok = (self.verify)(psn.value(), payload);
        self.restore_calls.push((psn.value(), payload.to_vec(), ok));
        if !ok {
            return Restored::IcrcFailed;
        }
        if hold {
            self.held
                .insert(psn.value(), (payload.to_vec(), true, self.now));
        } else {
            self.delivered.push(Delivered {
                psn: psn.value(),
                bytes: payload.to_vec(),
                restored: true,
                at: self.now,
                held_for: 0,
            });
        }
        Restored::Verified
    }
    fn replay(&mut self, slot: usize, psn: Psn) -> Restored {
        let Some(bytes) = self.sources.get(&slot).cloned() else {
            panic!("replay of slot {slot} (PSN {psn:?}), which holds nothing");
        };
        self.replayed.push(psn.value());
        self.restored(psn, &bytes, false)
    }
    fn release(&mut self, psn: Psn) {
        match self.held.remove(&psn.value()) {
            Some((bytes, restored, since)) => self.delivered.push(Delivered {
                psn: psn.value(),
                bytes,
                restored,
                at: self.now,
                held_for: self.now - since,
            }),
            None => self.bogus_releases += 1,
        }
    }
}

impl Sink for Host {
    fn send(&mut self, msg: &[u8]) {
        self.sent.push(msg.to_vec());
    }
}

impl Host {
    /// Decoded messages sent so far, and clears them.
    pub fn take_sent(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.sent)
    }

    pub fn delivered_psns(&self) -> Vec<u32> {
        self.delivered.iter().map(|d| d.psn).collect()
    }
}

/// Decoding workspace owned by a test.
pub struct Ws {
    pub gf: RowPerCall,
    pub scratch: Box<DecodeScratch>,
    pub out: Vec<u8>,
}

impl Ws {
    pub fn new(out_len: usize) -> Self {
        Ws {
            gf: RowPerCall,
            scratch: Box::new(DecodeScratch::new()),
            out: vec![0; out_len],
        }
    }
    pub fn ws(&mut self) -> Workspace<'_, RowPerCall> {
        Workspace {
            gf: &self.gf,
            scratch: &mut self.scratch,
            out: &mut self.out,
        }
    }
}

/// Engine + host + workspace, with time.
pub struct Rig {
    pub crf: Box<TestCrf>,
    pub host: Host,
    pub ws: Ws,
    pub now: Nanos,
}

impl Rig {
    pub fn new(cfg: CrfConfig) -> Rig {
        Rig {
            crf: Box::new(TestCrf::new(cfg)),
            host: Host::default(),
            ws: Ws::new(64 * 1100),
            now: 0,
        }
    }

    pub fn at(&mut self, t: Nanos) {
        self.now = self.now.max(t);
        self.host.now = self.now;
    }

    /// Runs the timer for every deadline up to `t`, then sets now = t.
    pub fn advance(&mut self, t: Nanos) {
        for _ in 0..100_000 {
            match self.crf.next_deadline() {
                Some(d) if d <= t => {
                    let d = d.max(self.now);
                    self.at(d);
                    let mut ws = self.ws.ws();
                    self.crf.on_timer(self.now, &mut self.host, &mut ws);
                }
                _ => break,
            }
        }
        self.at(t);
    }

    /// A source arrives: the verdict is applied like a caller would.
    pub fn source(&mut self, psn: u32, bytes: &[u8], ce: bool) -> SourceVerdict {
        let now = self.now;
        self.advance(now);
        let p = Psn::new(psn);
        let v = self.crf.on_source(self.now, p, bytes, ce, &mut self.host);
        match v {
            SourceVerdict::Deliver => self.host.delivered.push(Delivered {
                psn: p.value(),
                bytes: bytes.to_vec(),
                restored: false,
                at: self.now,
                held_for: 0,
            }),
            SourceVerdict::Hold => {
                assert!(
                    !self.host.held.contains_key(&p.value()),
                    "held twice: {psn}"
                );
                self.host
                    .held
                    .insert(p.value(), (bytes.to_vec(), false, self.now));
            }
            // The CRF delivered its copy (`restored`).
            SourceVerdict::Replaced => {}
        }
        // Pending releases run right after the packet was delivered.
        self.advance(self.now);
        v
    }

    pub fn repair_bytes(&mut self, msg: &[u8], ce: bool) {
        let now = self.now;
        self.advance(now);
        let m = Repair::decode(msg).expect("valid REPAIR");
        let mut ws = self.ws.ws();
        self.crf
            .on_repair(self.now, &m, ce, &mut self.host, &mut ws);
        self.advance(self.now);
    }

    pub fn repair(&mut self, m: &Repair<'_>) {
        let mut buf = vec![0u8; m.encoded_len()];
        m.encode(&mut buf).unwrap();
        self.repair_bytes(&buf, false);
    }

    /// Sent messages, decoded to owned form.
    pub fn sent(&mut self) -> Vec<Vec<u8>> {
        self.host.take_sent()
    }
}

/// Requests among sent messages.
pub fn requests(msgs: &[Vec<u8>]) -> Vec<RepairRequest<'_>> {
    msgs.iter()
        .filter_map(|m| match wire::decode(m) {
            Ok(Message::RepairRequest(r)) => Some(r),
            _ => None,
        })
        .collect()
}

/// A CSF model over an explicit list of source payloads (index = PSN −
/// first), cutting blocks of k (or a given layout) with `m` ordinary
/// repairs each, answering requests.
pub struct Csf {
    pub cfg: FecConfig,
    pub first: u32,
    /// payload per PSN offset; `None` = absent position.
    pub payloads: Vec<Option<Vec<u8>>>,
    /// (start offset, k) of each block.
    pub blocks: Vec<(u32, u8)>,
    /// next unused repair index per block.
    pub next_index: Vec<u8>,
}

impl Csf {
    pub fn new(cfg: FecConfig, first: u32, payloads: Vec<Option<Vec<u8>>>) -> Csf {
        let mut blocks = Vec::new();
        let mut o = 0u32;
        while (o as usize) < payloads.len() {
            let k = (cfg.k as usize).min(payloads.len() - o as usize) as u8;
            blocks.push((o, k));
            o += k as u32;
        }
        let n = blocks.len();
        Csf {
            cfg,
            first,
            payloads,
            blocks,
            next_index: vec![cfg.m; n],
        }
    }

    pub fn code(&self, k: u8) -> Code {
        Code::new(self.cfg.scheme, k, self.cfg.t as usize).unwrap()
    }

    fn symbol(&self, off: u32) -> Option<Vec<u8>> {
        let p = self.payloads.get(off as usize)?.as_ref()?;
        let mut s = vec![0u8; self.cfg.t as usize];
        build_source_symbol(p, self.cfg.t as usize, &mut s).ok()?;
        Some(s)
    }

    pub fn present(&self, b: usize) -> Bitmap256 {
        let (o, k) = self.blocks[b];
        (0..k as usize)
            .filter(|&j| self.payloads[(o as usize) + j].is_some())
            .collect()
    }

    /// Encodes repair `i` of block `b` over `lost` (None = ordinary).
    pub fn repair_msg(
        &self,
        b: usize,
        i: u8,
        lost: Option<Bitmap256>,
        session: u16,
        last: bool,
    ) -> Vec<u8> {
        let (o, k) = self.blocks[b];
        let present = self.present(b);
        let set = lost.unwrap_or(present);
        let code = self.code(k);
        let syms: Vec<(u8, Vec<u8>)> = set
            .iter()
            .map(|j| (j as u8, self.symbol(o + j as u32).unwrap()))
            .collect();
        let mut out = vec![0u8; self.cfg.t as usize];
        fec::encode_over(
            &RowPerCall,
            &code,
            i,
            syms.iter().map(|(j, s)| (*j, s.as_slice())),
            &mut out,
        )
        .unwrap();
        let m = Repair {
            flow_id: FLOW,
            last,
            info: false,
            config_id: self.cfg.id,
            scheme: FecScheme::from_u8(u8::from(self.cfg.scheme)),
            k,
            repair_index: i,
            block_start: Psn::new(self.first + o),
            session_id: session,
            present,
            lost,
            symbol: &out,
        };
        let mut buf = vec![0u8; m.encoded_len()];
        m.encode(&mut buf).unwrap();
        buf
    }

    /// Source Copy of position j of block b.
    pub fn source_copy(&self, b: usize, j: u8, session: u16, last: bool) -> Vec<u8> {
        let (o, k) = self.blocks[b];
        let sym = self.symbol(o + j as u32).unwrap();
        let m = Repair {
            flow_id: FLOW,
            last,
            info: false,
            config_id: self.cfg.id,
            scheme: FecScheme::SourceCopy,
            k,
            repair_index: j,
            block_start: Psn::new(self.first + o),
            session_id: session,
            present: self.present(b),
            lost: None,
            symbol: &sym,
        };
        let mut buf = vec![0u8; m.encoded_len()];
        m.encode(&mut buf).unwrap();
        buf
    }

    /// INFO message of block b.
    pub fn info(&self, b: usize, session: u16) -> Vec<u8> {
        let (o, k) = self.blocks[b];
        let m = Repair {
            flow_id: FLOW,
            last: false,
            info: true,
            config_id: self.cfg.id,
            scheme: FecScheme::from_u8(u8::from(self.cfg.scheme)),
            k,
            repair_index: 0,
            block_start: Psn::new(self.first + o),
            session_id: session,
            present: self.present(b),
            lost: None,
            symbol: &[],
        };
        let mut buf = vec![0u8; m.encoded_len()];
        m.encode(&mut buf).unwrap();
        buf
    }

    /// The ordinary repairs of block b (LAST on the last).
    pub fn ordinary(&self, b: usize) -> Vec<Vec<u8>> {
        let m = self.cfg.m;
        (0..m)
            .map(|i| self.repair_msg(b, i, None, 0, i + 1 == m))
            .collect()
    }

    fn block_of(&self, psn: u32) -> Option<(usize, u8)> {
        let off = psn.wrapping_sub(self.first) & 0xFF_FFFF;
        self.blocks
            .iter()
            .position(|&(o, k)| off >= o && off < o + k as u32)
            .map(|b| (b, (off - self.blocks[b].0) as u8))
    }

    /// Answers a request the way the draft's CSF does (M = M_s coded over
    /// L, RETX, fresh indices; RANGES → per block with r = 0; INFO for
    /// absent positions; FALLBACK → Source Copy).
    pub fn answer(&mut self, req: &RepairRequest<'_>) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let id = req.request_id();
        let mut per_block: BTreeMap<usize, (Bitmap256, bool, u8)> = BTreeMap::new();
        match &req.kind {
            RequestKind::Block(b) => {
                let Some((bi, _)) = self.block_of(b.block_start.value()) else {
                    return out;
                };
                per_block.insert(bi, (b.lost, false, b.suggested_m));
            }
            RequestKind::Ranges(r) => {
                for range in r.ranges.iter() {
                    for p in range.iter() {
                        if let Some((bi, j)) = self.block_of(p.value()) {
                            let e = per_block.entry(bi).or_insert((Bitmap256::EMPTY, false, 0));
                            if self.payloads[(self.blocks[bi].0 + j as u32) as usize].is_some() {
                                e.0.set(j as usize);
                            } else {
                                e.1 = true;
                            }
                        }
                    }
                }
                for e in per_block.values_mut() {
                    e.2 = e.0.count() as u8;
                }
            }
        }
        for (bi, (lost, info, m)) in per_block {
            if info || lost.is_empty() {
                out.push(self.info(bi, id));
            }
            if lost.is_empty() {
                continue;
            }
            let (_, k) = self.blocks[bi];
            let coded = !req.fallback && self.cfg.scheme == Scheme::CauchyRs;
            if coded {
                let mut sent = 0;
                while sent < m {
                    let i = self.next_index[bi];
                    if i as u16 + k as u16 > 255 {
                        break;
                    }
                    self.next_index[bi] += 1;
                    sent += 1;
                    out.push(self.repair_msg(bi, i, Some(lost), id, sent == m));
                }
            } else {
                let n = lost.count();
                for (c, j) in lost.iter().enumerate() {
                    out.push(self.source_copy(bi, j as u8, id, c + 1 == n as usize));
                }
            }
        }
        out
    }
}

pub fn cauchy(id: u8, k: u8, m: u8, t: u16) -> FecConfig {
    FecConfig {
        id,
        scheme: Scheme::CauchyRs,
        k,
        m,
        t,
    }
}

pub fn base_cfg() -> CrfConfig {
    let mut c = CrfConfig::new(FLOW);
    c.hold_time = MS;
    c.reorder_allowance = MS;
    c.srtt = 10 * MS;
    c
}

/// Converts a wire bitmap to the fec one (tests only).
pub fn to_fec(b: &Bitmap256) -> Bitmap {
    Bitmap::from_words(&b.words())
}

/// Proptest case count: `n`, or `CRF_CASES` from the environment for long
/// runs.
pub fn cases(n: u32) -> u32 {
    std::env::var("CRF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n)
}
