//! The CRF engine driven by arbitrary sequences of source packets (PSNs
//! near a moving cursor, READ requests, CE marks), REPAIR messages (built
//! from input fields so they pass the codec, and raw bytes), timers,
//! configuration changes, hold-time and T/C AETH changes, and close.
//! Requirements: no panic; no capacity exceeded; the store and the held set
//! always match the engine's accounting; releases only for held packets;
//! every message sent is a valid REPAIR_REQUEST, LOSS_REPORT or TC_AETH;
//! after a long quiet time nothing stays held. The engine's storage is
//! sized by the first four input octets (as the kernel sizes each flow's
//! at run time): 1 to 8 open blocks, a window of 512 to 1532 PSNs (not
//! only powers of two), 1 to 32 held packets, 1 to 16 repairs.
#![no_main]

use crem_core::engine::crf::{
    self, Crf, CrfCaps, CrfConfig, CrfStorage, Delivery, HoldEntry, RepairMeta, Restored,
    SourceVerdict, SymbolStore, TcThresholds, Workspace,
};
use crem_core::engine::{FecConfig, Nanos, Sink};
use crem_core::fec::{DecodeScratch, Scheme};
use crem_core::gf::RowPerCall;
use crem_core::psn::Psn;
use crem_core::wire::{self, Bitmap256, FecScheme, Message, Repair};
use libfuzzer_sys::fuzz_target;
use std::collections::{HashMap, HashSet};

/// Storage of a length chosen at run time.
#[derive(Debug)]
struct Vecs;

impl CrfStorage for Vecs {
    type Blocks = Vec<crf::Block>;
    type Flags = Vec<u16>;
    type Due = Vec<u32>;
    type Hold = Vec<HoldEntry>;
    type Repairs = Vec<RepairMeta>;
}

type Engine = Crf<Vecs>;

#[derive(Default)]
struct Host {
    caps: Option<CrfCaps>,
    sources: HashMap<usize, Vec<u8>>,
    repairs: HashMap<usize, Vec<u8>>,
    held: HashSet<u32>,
}

impl SymbolStore for Host {
    fn keep_source(&mut self, slot: usize, _psn: Psn, payload: &[u8]) -> bool {
        assert!(slot < self.caps.map_or(0, |c| c.window));
        assert!(self.sources.insert(slot, payload.to_vec()).is_none());
        true
    }
    fn source(&self, slot: usize) -> Option<&[u8]> {
        self.sources.get(&slot).map(|v| v.as_slice())
    }
    fn drop_source(&mut self, slot: usize) {
        assert!(self.sources.remove(&slot).is_some());
    }
    fn keep_repair(&mut self, slot: usize, symbol: &[u8]) -> bool {
        assert!(slot < self.caps.map_or(0, |c| c.repairs));
        assert!(self.repairs.insert(slot, symbol.to_vec()).is_none());
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
        assert!(self.repairs.remove(&slot).is_some());
    }
}

impl Delivery for Host {
    fn restored(&mut self, psn: Psn, _payload: &[u8], hold: bool) -> Restored {
        // Some "ICRC failures", and some packets without a header.
        match psn.value() % 7 {
            3 => return Restored::IcrcFailed,
            5 => return Restored::NoHeader,
            _ => {}
        }
        if hold {
            assert!(self.held.insert(psn.value()));
        }
        Restored::Verified
    }
    fn replay(&mut self, slot: usize, psn: Psn) -> Restored {
        assert!(self.sources.contains_key(&slot), "replay of a slot that holds nothing");
        match psn.value() % 11 {
            4 => Restored::Dropped,
            _ => Restored::Verified,
        }
    }
    fn release(&mut self, psn: Psn) {
        assert!(
            self.held.remove(&psn.value()),
            "release of a packet not held"
        );
    }
}

impl Sink for Host {
    fn send(&mut self, msg: &[u8]) {
        match wire::decode(msg) {
            Ok(Message::RepairRequest(_)) | Ok(Message::LossReport(_)) | Ok(Message::TcAeth(_)) => {
            }
            other => panic!("CRF sent {other:?}"),
        }
    }
}

struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*b)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes([self.byte()?, self.byte()?]))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes([
            self.byte()?,
            self.byte()?,
            self.byte()?,
            self.byte()?,
        ]))
    }
    fn bytes(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, rest) = self.0.split_at(n);
        self.0 = rest;
        a
    }
}

fn packet(psn: Psn, opcode: u8, body: &[u8]) -> Vec<u8> {
    let p = psn.to_be_bytes();
    let mut v = vec![opcode, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0, p[0], p[1], p[2]];
    v.extend_from_slice(body);
    v.extend_from_slice(&[0; 4]);
    v
}

fn run_timers(crf: &mut Engine, host: &mut Host, ws: &mut Workspace<'_, RowPerCall>, until: Nanos) {
    for _ in 0..10_000 {
        match crf.next_deadline() {
            Some(d) if d <= until => crf.on_timer(d, host, ws),
            _ => break,
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let mut cfg = CrfConfig::new(7);
    cfg.hold_time = 200_000;
    cfg.reorder_allowance = 100_000;
    cfg.srtt = 1_000_000;
    let (Some(b), Some(w), Some(h), Some(r)) =
        (input.byte(), input.byte(), input.byte(), input.byte())
    else {
        return;
    };
    let caps = CrfCaps {
        blocks: 1 + usize::from(b % 8),
        window: 512 + 4 * usize::from(w),
        held: 1 + usize::from(h % 32),
        repairs: 1 + usize::from(r % 16),
    };
    let storage = (
        vec![crf::Block::EMPTY; caps.blocks],
        vec![0; caps.window],
        vec![0; caps.window],
        vec![HoldEntry::EMPTY; caps.held],
        vec![RepairMeta::EMPTY; caps.repairs],
    );
    let mut crf: Box<Engine> = Box::new(Engine::with_storage(cfg, storage).expect("valid caps"));
    assert_eq!(crf.caps(), caps);
    crf.accept_config(FecConfig {
        id: 1,
        scheme: Scheme::CauchyRs,
        k: 8,
        m: 2,
        t: 48,
    });
    let mut host = Host {
        caps: Some(caps),
        ..Host::default()
    };
    let gf = RowPerCall;
    let mut scratch = Box::new(DecodeScratch::new());
    let mut out = vec![0u8; 4 * 48];
    let mut ws = Workspace {
        gf: &gf,
        scratch: &mut scratch,
        out: &mut out,
    };
    let mut now: Nanos = 0;
    let mut cursor: u32 = 0xFF_FFF0;
    while let Some(op) = input.byte() {
        match op % 10 {
            0..=3 => {
                let d = input.byte().unwrap_or(1) as i8;
                cursor = cursor.wrapping_add(d as i32 as u32) & 0xFF_FFFF;
                let psn = Psn::new(cursor);
                let flags = input.byte().unwrap_or(0);
                let len = input.byte().unwrap_or(0) as usize % 40;
                let bytes = if flags & 0x80 != 0 {
                    let mut reth = vec![0u8; 12];
                    reth.extend_from_slice(&input.u32().unwrap_or(0).to_be_bytes());
                    packet(psn, 0x0c, &reth)
                } else {
                    packet(psn, 0x04, input.bytes(len))
                };
                if crf.on_source(now, psn, &bytes, flags & 1 != 0, &mut host) == SourceVerdict::Hold
                {
                    assert!(host.held.insert(psn.value()));
                }
            }
            4 | 5 => {
                let k = (input.byte().unwrap_or(1) % 12).max(1);
                let scheme = input.byte().unwrap_or(1) % 3;
                let index = input.byte().unwrap_or(0) % 16;
                let start = cursor.wrapping_add(input.byte().unwrap_or(0) as i8 as i32 as u32);
                let word = (input.u16().unwrap_or(0xffff) as u32) << 16;
                let mut present = Bitmap256::from_words([word, 0, 0, 0, 0, 0, 0, 0]);
                present.truncate(k as usize);
                if present.is_empty() {
                    present.set(0);
                }
                let fl = input.byte().unwrap_or(0);
                let lost = present.and(&Bitmap256::from_words([
                    (input.u16().unwrap_or(0xffff) as u32) << 16,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                ]));
                let info = fl & 0x20 != 0;
                let idx = if scheme == 0 {
                    present
                        .iter()
                        .nth(index as usize % present.count() as usize)
                        .unwrap_or(0) as u8
                } else {
                    index
                };
                let sym_len = if info { 0 } else { 48 + (fl as usize % 3) - 1 };
                let sym: Vec<u8> = (0..sym_len).map(|_| input.byte().unwrap_or(0)).collect();
                let m = Repair {
                    flow_id: if fl & 0x10 != 0 { 8 } else { 7 },
                    last: fl & 0x40 != 0,
                    info,
                    config_id: if fl & 0x08 != 0 { 2 } else { 1 },
                    scheme: FecScheme::from_u8(scheme),
                    k,
                    repair_index: idx,
                    block_start: Psn::new(start),
                    session_id: (fl & 3) as u16,
                    present,
                    lost: if fl & 0x80 != 0 && !info && scheme == 1 && !lost.is_empty() {
                        Some(lost)
                    } else {
                        None
                    },
                    symbol: &sym,
                };
                let mut buf = vec![0u8; m.encoded_len()];
                if let Ok(n) = m.encode(&mut buf) {
                    let r = Repair::decode(&buf[..n]).unwrap();
                    crf.on_repair(now, &r, fl & 4 != 0, &mut host, &mut ws);
                }
            }
            6 => {
                let n = input.byte().unwrap_or(0) as usize;
                let raw = input.bytes(n).to_vec();
                if let Ok(Message::Repair(r)) = wire::decode(&raw) {
                    crf.on_repair(now, &r, false, &mut host, &mut ws);
                }
            }
            7 => {
                now = now.saturating_add(input.u16().unwrap_or(0) as u64 * 64);
                run_timers(&mut crf, &mut host, &mut ws, now);
            }
            8 => {
                let a = input.byte().unwrap_or(0);
                let b = input.byte().unwrap_or(0);
                match a % 6 {
                    0 => {
                        crf.accept_config(FecConfig {
                            id: b % 4,
                            scheme: match b >> 6 {
                                0 => Scheme::SourceCopy,
                                2 => Scheme::Xor,
                                _ => Scheme::CauchyRs,
                            },
                            k: (b >> 2) % 16,
                            m: b % 3,
                            t: 48,
                        });
                    }
                    1 => {
                        if !crf.config_in_use(b % 4) {
                            crf.release_config(b % 4);
                        }
                    }
                    2 => crf.set_hold_time((b as u64) * 1000),
                    3 => crf.set_tc(if b == 0 {
                        None
                    } else {
                        Some(TcThresholds {
                            t_thresh: b as u64 * 10_000,
                            c_thresh: (b % 9) as u32,
                        })
                    }),
                    4 => crf.set_loss_ppm(b as u32 * 1000),
                    _ => crf.close(&mut host),
                }
            }
            _ => {
                // Pending work, as a caller runs it right after an input.
                run_timers(&mut crf, &mut host, &mut ws, now);
            }
        }
        assert!(host.sources.len() <= caps.window);
        assert!(host.repairs.len() <= caps.repairs);
        assert_eq!(crf.repairs_held(), host.repairs.len());
        assert_eq!(crf.held(), host.held.len());
        assert!(crf.held() <= caps.held);
        assert!(crf.open_blocks() <= caps.blocks);
        assert!(crf.debug_index_ok(), "CRF indexes out of step");
    }
    run_timers(
        &mut crf,
        &mut host,
        &mut ws,
        now.saturating_add(3_600_000_000_000),
    );
    assert!(host.held.is_empty(), "held after a quiet hour");
    crf.close(&mut host);
    assert!(host.sources.is_empty() && host.repairs.is_empty());
});
