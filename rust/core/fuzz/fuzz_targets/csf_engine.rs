//! The CSF engine driven by arbitrary sequences of sources (mostly in PSN
//! order, with retransmissions, jumps and READ spans), RDMA acks, timers,
//! configuration changes, and CREM messages decoded from the input (block
//! and range REPAIR_REQUESTs, T/C AETH reports, path reports). Requirements:
//! no panic; every message sent is a valid REPAIR; the ring and the
//! retention budget are never exceeded; the caller's store always holds
//! exactly the octets the engine accounts for; shutdown releases all.
#![no_main]

use crem_core::engine::csf::{Csf, CsfIo, CsfParams, Inline, SourceStore};
use crem_core::engine::{FecConfig, Sink};
use crem_core::fec::Scheme;
use crem_core::gf::RowPerCall;
use crem_core::psn::{Psn, PsnRange};
use crem_core::wire::{self, Message, Repair};
use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;

#[derive(Default)]
struct Store(HashMap<u32, Vec<u8>>);

impl SourceStore for Store {
    fn source(&self, psn: Psn) -> Option<&[u8]> {
        self.0.get(&psn.value()).map(|v| v.as_slice())
    }
    fn release(&mut self, range: PsnRange) {
        assert!(range.count >= 1 && range.count <= 255);
        for p in range.iter() {
            self.0.remove(&p.value());
        }
    }
}

/// Counts the messages sent (a provisional CSF must send none).
struct Out(u64);

impl Sink for Out {
    fn send(&mut self, msg: &[u8]) {
        assert!(Repair::decode(msg).is_ok(), "invalid REPAIR sent");
        self.0 += 1;
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
    fn bytes(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, rest) = self.0.split_at(n);
        self.0 = rest;
        a
    }
}

const BLOCKS: usize = 5;
const ACC: usize = 2048;

fuzz_target!(|data: &[u8]| {
    let mut inp = Input(data);
    let (Some(a), Some(b), Some(c)) = (inp.byte(), inp.byte(), inp.byte()) else {
        return;
    };
    let budget = if a & 1 == 0 { u64::MAX } else { 64 * b as u64 };
    let params = CsfParams {
        retention_budget: budget,
        spread: a & 2 != 0,
        selective_repeat: a & 4 != 0,
        give_up_after: if a & 8 != 0 { 1_000_000 * c as u64 } else { 0 },
        tc_max_per_report: 1 + (b as u16) * 4,
        fill_gaps: a & 16 != 0,
        // A store indexed by PSN modulo 16 to 2048 slots.
        retention_span: if a & 32 != 0 { 16 << (c >> 5) } else { 0 },
        ..CsfParams::DEFAULT
    };
    let mut csf: Box<Csf<Inline<BLOCKS, ACC>>> = Box::new(Csf::new(params));
    let mut store = Store::default();
    let mut scratch = vec![0u8; 84 + 600];
    let mut now = 0u64;
    let mut next = Psn::new((c as u32) << 16);
    let mut out = Out(0);
    while let Some(op) = inp.byte() {
        let provisional = csf.is_provisional();
        let sent = out.0;
        let io = &mut CsfIo {
            gf: &RowPerCall,
            sink: &mut out,
            store: &mut store,
            scratch: &mut scratch[..],
        };
        now = now.wrapping_add((op as u64 >> 4) * 20_000);
        match op & 15 {
            0..=4 => {
                let gap = if op & 0x10 != 0 {
                    inp.byte().unwrap_or(0) as u32
                } else {
                    0
                };
                let span = if op & 0x20 != 0 {
                    1 + inp.byte().unwrap_or(0) as u32 * 3
                } else {
                    1
                };
                let len = inp.byte().unwrap_or(0) as usize * 2;
                let psn = next.wrapping_add(gap);
                let payload: Vec<u8> = (0..len).map(|i| (i as u32 ^ psn.value()) as u8).collect();
                let v = csf.on_source(now, psn, span, &payload, io);
                if v.retain() {
                    assert!(
                        io.store.0.insert(psn.value(), payload).is_none(),
                        "retained twice"
                    );
                }
                next = psn.wrapping_add(span);
            }
            5 => {
                let back = inp.byte().unwrap_or(0) as u32 + 1;
                let p = next.wrapping_sub(back);
                let v = csf.on_source(now, p, 1, &[1, 2, 3], io);
                assert!(!v.retain() || !io.store.0.contains_key(&p.value()));
                if v.retain() {
                    io.store.0.insert(p.value(), vec![1, 2, 3]);
                }
            }
            6 => {
                let back = inp.u16().unwrap_or(0) as u32;
                csf.on_rdma_ack(now, next.wrapping_sub(back + 1), io.store);
            }
            7 => csf.on_timer(now.wrapping_add(inp.u16().unwrap_or(0) as u64 * 1000), io),
            8 => {
                let k = inp.byte().unwrap_or(0);
                let m = inp.byte().unwrap_or(0) & 7;
                let t = 4 + inp.byte().unwrap_or(0) as u16 * 2;
                let scheme = match op >> 6 {
                    0 | 1 => Scheme::CauchyRs,
                    2 => Scheme::Xor,
                    _ => Scheme::SourceCopy,
                };
                let id = inp.byte().unwrap_or(0);
                let eff = next.wrapping_add(inp.byte().unwrap_or(0) as u32);
                let cfg = FecConfig {
                    id,
                    scheme,
                    k,
                    m,
                    t,
                };
                if op & 0x20 != 0 {
                    let _ = csf.set_provisional(cfg);
                } else {
                    let _ = csf.set_config(cfg, eff);
                }
            }
            9 => csf.set_srtt(inp.u16().unwrap_or(0) as u64 * 1000),
            10 => {
                let f = inp.byte().unwrap_or(0);
                csf.set_coded_retx(f & 1 != 0);
                csf.set_ordinary_repairs(f & 2 != 0);
                csf.set_selective_repeat(f & 4 != 0);
                if f & 8 != 0 {
                    csf.confirm(io);
                }
                if f & 16 != 0 {
                    csf.drop_provisional(io.store);
                }
            }
            11 => {
                let psns: Vec<Psn> = (0..(op >> 4))
                    .map(|_| next.wrapping_sub(inp.byte().unwrap_or(0) as u32))
                    .collect();
                csf.on_path_drops(now, psns, io);
            }
            _ => {
                // A CREM message from the input, with PSNs made relative to
                // the newest so that they hit retained blocks.
                let n = inp.byte().unwrap_or(0) as usize;
                let mut msg = inp.bytes(n).to_vec();
                if msg.len() > 16 && op & 0x10 != 0 {
                    let base = next.wrapping_sub(msg[15] as u32).to_be_bytes();
                    msg[12..15].copy_from_slice(&base);
                }
                match wire::decode(&msg) {
                    Ok(Message::RepairRequest(r)) => csf.on_repair_request(now, &r, io),
                    Ok(Message::TcAeth(r)) => csf.on_tc_aeth(now, &r, io),
                    Ok(Message::PathReport(p)) => {
                        for h in p.hops.iter() {
                            csf.on_path_drops(now, h.dropped.iter(), io);
                        }
                    }
                    _ => {}
                }
            }
        }
        let _ = csf.next_deadline();
        if provisional && csf.is_provisional() {
            assert_eq!(out.0, sent, "a provisional CSF sent a message");
        }
        assert!(csf.blocks_held() <= BLOCKS);
        assert!(csf.retention_octets() <= budget);
        let in_store: u64 = store.0.values().map(|v| v.len() as u64).sum();
        assert_eq!(in_store, csf.retention_octets());
    }
    csf.shutdown(&mut store);
    assert!(store.0.is_empty());
    assert_eq!(csf.retention_octets(), 0);
});
