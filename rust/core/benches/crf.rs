//! The CRF's cost per source packet, in user space, with the flow sized as
//! crem.ko sizes it (`module_caps::caps_for`) for the default max-bdp (32
//! open blocks) and for 6104 packets in flight (1024 open blocks, 8192
//! repair descriptors, a 32 Ki-PSN window). Plain `main`:
//! `cargo bench -p crem-core --bench crf`. Prints one
//! `crem-bench: crf_<case> max_bdp=.. blocks=.. open=.. ns=..` line per case:
//!
//! * `in_order`: sources in order, no REPAIR (no block open), as the
//!   KUnit `hook_crf_in_order` case;
//! * `open_blocks`: k = 32, each block's first two sources lost and one
//!   ordinary repair after its last source, so every block stays open
//!   (undecodable) until the window passes it: as many open blocks as the
//!   window holds (about 1000 at 6104, the 32 slots' worth at 256, then
//!   evicting the oldest);
//! * `open_blocks_late`: as `open_blocks`, each block's third source
//!   arriving after its repair (a packet of a known block: the timer runs).
//!
//! The clock advances 1 ns per packet, so no deadline passes: what is
//! timed is finding blocks and repairs, not requests.

use crem_core::engine::crf::{
    self, Crf, CrfConfig, CrfStorage, Delivery, HoldEntry, RepairMeta, Restored, SymbolStore,
    Workspace,
};
use crem_core::engine::module_caps::caps_for;
use crem_core::engine::{FecConfig, Nanos, Sink};
use crem_core::fec::{DecodeScratch, Scheme};
use crem_core::gf::RowPerCall;
use crem_core::psn::Psn;
use crem_core::wire::{Bitmap256, FecScheme, Repair};
use std::time::Instant;

#[derive(Debug)]
struct Vecs;

impl CrfStorage for Vecs {
    type Blocks = Vec<crf::Block>;
    type Flags = Vec<u16>;
    type Due = Vec<u32>;
    type Hold = Vec<HoldEntry>;
    type Repairs = Vec<RepairMeta>;
}

const T: usize = 64;
const K: u8 = 32;

struct Host {
    src: Vec<u8>,
    src_len: Vec<usize>,
    rep: Vec<u8>,
    rep_live: Vec<bool>,
}

impl SymbolStore for Host {
    fn keep_source(&mut self, slot: usize, _psn: Psn, payload: &[u8]) -> bool {
        let n = payload.len().min(T);
        self.src[slot * T..slot * T + n].copy_from_slice(&payload[..n]);
        self.src_len[slot] = n;
        true
    }
    fn source(&self, slot: usize) -> Option<&[u8]> {
        let n = *self.src_len.get(slot)?;
        (n > 0).then(|| &self.src[slot * T..slot * T + n])
    }
    fn drop_source(&mut self, slot: usize) {
        self.src_len[slot] = 0;
    }
    fn keep_repair(&mut self, slot: usize, symbol: &[u8]) -> bool {
        self.rep[slot * T..slot * T + T].copy_from_slice(&symbol[..T]);
        self.rep_live[slot] = true;
        true
    }
    fn repair(&self, slot: usize) -> Option<&[u8]> {
        self.rep_live[slot].then(|| &self.rep[slot * T..slot * T + T])
    }
    fn source_and_repair_mut(
        &mut self,
        source: usize,
        repair: usize,
    ) -> (Option<&[u8]>, Option<&mut [u8]>) {
        let n = self.src_len[source];
        (
            (n > 0).then(|| &self.src[source * T..source * T + n]),
            Some(&mut self.rep[repair * T..repair * T + T]),
        )
    }
    fn drop_repair(&mut self, slot: usize) {
        self.rep_live[slot] = false;
    }
}

impl Delivery for Host {
    fn restored(&mut self, _psn: Psn, _payload: &[u8], _hold: bool) -> Restored {
        Restored::Verified
    }
    fn replay(&mut self, _slot: usize, _psn: Psn) -> Restored {
        Restored::Verified
    }
    fn release(&mut self, _psn: Psn) {}
}

impl Sink for Host {
    fn send(&mut self, _msg: &[u8]) {}
}

#[derive(Clone, Copy, PartialEq)]
enum Case {
    InOrder,
    OpenBlocks,
    OpenBlocksLate,
}

fn run(case: Case, max_bdp: u32) -> (f64, usize, usize) {
    let caps = caps_for(max_bdp, K).crf;
    let storage = (
        vec![crf::Block::EMPTY; caps.blocks],
        vec![0u16; caps.window],
        vec![0u32; caps.window],
        vec![HoldEntry::EMPTY; caps.held],
        vec![RepairMeta::EMPTY; caps.repairs],
    );
    let mut cfg = CrfConfig::new(7);
    cfg.hold_time = 0;
    let mut crf: Box<Crf<Vecs>> = Box::new(Crf::with_storage(cfg, storage).expect("caps"));
    crf.accept_config(FecConfig {
        id: 1,
        scheme: Scheme::CauchyRs,
        k: K,
        m: 1,
        t: T as u16,
    });
    let mut host = Host {
        src: vec![0; caps.window * T],
        src_len: vec![0; caps.window],
        rep: vec![0; caps.repairs * T],
        rep_live: vec![false; caps.repairs],
    };
    let gf = RowPerCall;
    let mut scratch = Box::new(DecodeScratch::new());
    let mut out = vec![0u8; 64 * T];
    let mut ws = Workspace {
        gf: &gf,
        scratch: &mut scratch,
        out: &mut out,
    };
    let payload = [0x5au8; 40];
    let symbol = [0xa5u8; T];
    let mut now: Nanos = 1_000;
    let mut open_max = 0usize;
    // One step: a source, then the timer if due (as the kernel's hook).
    let step = |crf: &mut Crf<Vecs>,
                host: &mut Host,
                ws: &mut Workspace<'_, RowPerCall>,
                psn: u32,
                now: Nanos| {
        crf.on_source(now, Psn::new(psn), &payload, false, host);
        if crf.next_deadline().is_some_and(|d| d <= now) {
            crf.on_timer(now, host, ws);
        }
    };
    let blocks_total = |packets: u32| packets / u32::from(K);
    let warm = (caps.window as u32) * 2;
    let measured = 262_144u32;
    let mut t0 = Instant::now();
    let mut sources = 0u64;
    for blk in 0..blocks_total(warm + measured) {
        if blk == blocks_total(warm) {
            t0 = Instant::now();
            sources = 0;
        }
        let start = blk * u32::from(K);
        for j in 0..u32::from(K) {
            let lost = case != Case::InOrder && j < 2;
            let late = case == Case::OpenBlocksLate && j == 2;
            if lost || late {
                continue;
            }
            now += 1;
            step(&mut crf, &mut host, &mut ws, start + j, now);
            sources += 1;
        }
        if case == Case::InOrder {
            continue;
        }
        let msg = Repair {
            flow_id: 7,
            last: true,
            info: false,
            config_id: 1,
            scheme: FecScheme::CauchyRs,
            k: K,
            repair_index: 0,
            block_start: Psn::new(start),
            session_id: 0,
            present: Bitmap256::first_n(usize::from(K)),
            lost: None,
            symbol: &symbol,
        };
        now += 1;
        crf.on_repair(now, &msg, false, &mut host, &mut ws);
        if crf.next_deadline().is_some_and(|d| d <= now) {
            crf.on_timer(now, &mut host, &mut ws);
        }
        if case == Case::OpenBlocksLate {
            now += 1;
            step(&mut crf, &mut host, &mut ws, start + 2, now);
            sources += 1;
        }
        open_max = open_max.max(crf.open_blocks());
    }
    let ns = t0.elapsed().as_nanos() as f64 / sources as f64;
    (ns, caps.blocks, open_max)
}

fn main() {
    for (case, name) in [
        (Case::InOrder, "in_order"),
        (Case::OpenBlocks, "open_blocks"),
        (Case::OpenBlocksLate, "open_blocks_late"),
    ] {
        for max_bdp in [256u32, 6104] {
            let (ns, blocks, open) = run(case, max_bdp);
            println!(
                "crem-bench: crf_{name} max_bdp={max_bdp} blocks={blocks} open={open} ns={ns:.0}"
            );
        }
    }
}
