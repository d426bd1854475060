// SPDX-License-Identifier: GPL-2.0
//! Benchmark workloads shared by the KUnit suite `crem_bench` (`kunit/bench.rs`,
//! in the kernel) and `rust/core/benches/csf.rs` (host user space): the same
//! code, timed by each side's monotonic clock, so that the two figures differ
//! only in where they run (kernel under QEMU or host user space) and in the
//! compiler flags. Both sides name crem-core `super::cc`. See `docs/perf.md`.
//!
//! Method: [`ROUNDS`] rounds of at least [`ROUND_NS`] each (about 200 ms in
//! all, after one warm-up operation); the best round (fewest ns per
//! operation) is reported, as the one least disturbed by other load on a
//! shared machine. Nothing here asserts on time: a workload fails only if it
//! misbehaves functionally (a packet not coded, a configuration rejected).

use super::cc::engine::csf::{self, Csf, CsfIo, CsfParams, SourceStore, SourceVerdict};
use super::cc::engine::{FecConfig, Sink};
use super::cc::fec::Scheme;
use super::cc::gf::{MulAcc, MulTable};
use super::cc::psn::{Psn, PsnRange};
use super::cc::roce::RocePacket;
use core::fmt::{self, Write};
use core::hint::black_box;
use core::ptr::addr_of_mut;

/// Rounds per workload and the least length of one.
const ROUNDS: u32 = 5;
/// Least length of one round, in ns.
const ROUND_NS: u64 = 40_000_000;

/// GF workload: one repair symbol accumulated over `SYMBOLS` source symbols
/// of `SYMBOL_LEN` octets (a k = 64 block), scalar table backend.
const SYMBOLS: usize = 64;
const SYMBOL_LEN: usize = 1100;

/// The module's CSF dimensions (`rust/engine.rs`: CSF_BLOCKS, CSF_ACC).
type BenchCsf = Csf<csf::Inline<64, { 16 * 1104 }>>;
/// Block size of the CSF workloads.
const K: u8 = 32;
const RDMA_MTU: u32 = 1024;
/// T for a 1024-octet RDMA MTU, as the module derives it (crem-core's
/// `roce::symbol_len_for_mtu`: BTH + RETH + ImmDt + payload + ICRC + 2).
const T: u16 = super::cc::roce::symbol_len_for_mtu(RDMA_MTU);
const SCRATCH: usize = csf::scratch_len(T);
/// Packets between clock reads (a clock read is ~20 ns natively).
const PACKET_BATCH: u64 = 256;

/// UDP payload (BTH through ICRC) of a real RoCEv2 RDMA WRITE Middle packet
/// captured from rxe: `rust/core/tests/fixtures/rxe-v4-op07.hex` from octet
/// 28 on (12-octet BTH, 1024 payload octets, 4-octet ICRC).
pub(super) const PACKET_LEN: usize = 1040;
pub(super) static PACKET: [u8; PACKET_LEN] = unhex(concat!(
    "0700ffff0000001100a504345a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475",
    "767778797a4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60616263",
    "6465666768696a6b6c6d6e6f707172737475767778797a4142434445464748494a4b4c4d4e4f5051",
    "52535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f70717273747576777879",
    "7a4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f6061626364656667",
    "68696a6b6c6d6e6f707172737475767778797a4142434445464748494a4b4c4d4e4f505152535455",
    "565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a414243",
    "4445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b",
    "6c6d6e6f707172737475767778797a4142434445464748494a4b4c4d4e4f50515253545556575859",
    "5a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a41424344454647",
    "48494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f",
    "707172737475767778797a4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d",
    "5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a4142434445464748494a4b",
    "4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f70717273",
    "7475767778797a4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f6061",
    "62636465666768696a6b6c6d6e6f707172737475767778797a4142434445464748494a4b4c4d4e4f",
    "505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f7071727374757677",
    "78797a4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465",
    "666768696a6b6c6d6e6f707172737475767778797a4142434445464748494a4b4c4d4e4f50515253",
    "5455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a41",
    "42434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60616263646566676869",
    "6a6b6c6d6e6f707172737475767778797a4142434445464748494a4b4c4d4e4f5051525354555657",
    "58595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a4142434445",
    "464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d",
    "6e6f707172737475767778797a4142434445464748494a4b4c4d4e4f505152535455565758595a5b",
    "5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a414243444514475fa9",
));
/// Octets 9..12 of the BTH: the PSN.
const PSN_AT: usize = 9;

/// Decodes hex at compile time (a wrong length or digit fails the build).
const fn unhex<const N: usize>(s: &str) -> [u8; N] {
    const fn nibble(c: u8) -> u8 {
        match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => panic!("not a lower-case hex digit"),
        }
    }
    let b = s.as_bytes();
    assert!(b.len() == 2 * N);
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = (nibble(b[2 * i]) << 4) | nibble(b[2 * i + 1]);
        i += 1;
    }
    out
}

/// Everything large a workload uses (~190 KiB): allocated once by the
/// caller (vmalloc in the kernel), never on a stack.
pub(super) struct Arena {
    table: MulTable,
    csf: BenchCsf,
    symbols: [u8; SYMBOLS * SYMBOL_LEN],
    acc: [u8; SYMBOL_LEN],
    pkt: [u8; PACKET_LEN],
    scratch: [u8; SCRATCH],
}

impl Arena {
    /// Builds an arena in place.
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes of `size_of::<Arena>()` octets and
    /// aligned for `Arena`. Afterwards it holds a valid `Arena`.
    pub(super) unsafe fn init_at(slot: *mut Arena) {
        // SAFETY: `slot` is valid and aligned (caller). All-zero octets are
        // a valid value of every field but `csf`, which `Csf::init_at`
        // writes completely; so `*slot` is a valid `Arena` before the
        // reference is made.
        let a = unsafe {
            slot.write_bytes(0, 1);
            BenchCsf::init_at(addr_of_mut!((*slot).csf), CsfParams::DEFAULT);
            &mut *slot
        };
        a.table.init();
        for (i, s) in a.symbols.iter_mut().enumerate() {
            *s = ((i as u32).wrapping_mul(2_654_435_761) >> 13) as u8;
        }
        a.pkt.copy_from_slice(&PACKET);
    }
}

/// The operations and time of one round.
#[derive(Clone, Copy)]
struct Round {
    ops: u64,
    ns: u64,
}

/// Runs `op` in [`ROUNDS`] rounds, reading `clock` (ns) every `batch`
/// operations; returns the round with the fewest ns per operation.
fn best_round(clock: &mut impl FnMut() -> u64, batch: u64, mut op: impl FnMut()) -> Round {
    op();
    let mut best = Round { ops: 0, ns: 0 };
    for _ in 0..ROUNDS {
        let start = clock();
        let mut ops = 0u64;
        let ns = loop {
            for _ in 0..batch {
                op();
            }
            ops = ops.saturating_add(batch);
            let ns = clock().saturating_sub(start);
            if ns >= ROUND_NS {
                break ns;
            }
        };
        // ns/ops < best.ns/best.ops, without division.
        if best.ops == 0 || ns.saturating_mul(best.ops) < best.ns.saturating_mul(ops) {
            best = Round { ops, ns };
        }
    }
    best
}

/// `num / den` with one decimal, in integers (no floating point in the
/// kernel).
struct Dec(u64, u64);

impl fmt::Display for Dec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tenths = self.0.saturating_mul(10).checked_div(self.1).unwrap_or(0);
        write!(f, "{}.{}", tenths / 10, tenths % 10)
    }
}

/// GF(2^8) multiply-accumulate throughput of backend `gf` (named `name`;
/// `None`: the arena's scalar table): one operation is `acc ^= c_j · S_j`
/// over the 64 symbols of 1100 octets. Writes
/// `crem-bench: gf_mul_acc MB/s=.. bytes=.. ns=.. (NAME, ..)` (the best round).
pub(super) fn gf_mul_acc(
    clock: &mut impl FnMut() -> u64,
    a: &mut Arena,
    gf: Option<(&str, &dyn MulAcc)>,
    w: &mut dyn Write,
) -> bool {
    let Arena {
        table,
        symbols,
        acc,
        ..
    } = a;
    let (name, gf): (&str, &dyn MulAcc) = gf.unwrap_or(("scalar", &*table));
    let r = best_round(clock, 1, || {
        for (j, s) in symbols.chunks_exact(SYMBOL_LEN).enumerate() {
            // Coefficients 2..=255: 0 and 1 take the skip and XOR paths.
            let c = 2 + (j.wrapping_mul(37) % 254) as u8;
            gf.mul_acc(&mut acc[..], black_box(s), c);
        }
        black_box(&mut acc[..]);
    });
    let bytes = r.ops.saturating_mul((SYMBOLS * SYMBOL_LEN) as u64);
    let _ = write!(
        w,
        "crem-bench: gf_mul_acc MB/s={} bytes={bytes} ns={} ({name}, {SYMBOLS}x{SYMBOL_LEN} B)",
        Dec(bytes.saturating_mul(1000), r.ns),
        r.ns
    );
    true
}

/// Writes `psn` into the packet's BTH.
pub(super) fn set_psn(pkt: &mut [u8; PACKET_LEN], psn: u32) {
    if let Some(p) = pkt.get_mut(PSN_AT..PSN_AT + 3) {
        p.copy_from_slice(&Psn::new(psn).to_be_bytes());
    }
}

/// The classification a hook does per packet: [`RocePacket::parse`] of the
/// WRITE packet (PSN rewritten each time). Writes `crem-bench: roce_parse
/// ns=.. packets=..` (per packet, the best round).
pub(super) fn roce_parse(
    clock: &mut impl FnMut() -> u64,
    a: &mut Arena,
    w: &mut dyn Write,
) -> bool {
    let pkt = &mut a.pkt;
    let (mut psn, mut sources, mut total) = (0u32, 0u64, 0u64);
    let r = best_round(clock, PACKET_BATCH, || {
        set_psn(pkt, psn);
        psn = psn.wrapping_add(1);
        let p = RocePacket::parse(black_box(&pkt[..]));
        if p.as_ref().is_ok_and(|p| p.is_source()) {
            sources = sources.wrapping_add(1);
        }
        black_box(&p);
        total = total.wrapping_add(1);
    });
    if sources != total {
        let _ = write!(
            w,
            "roce_parse: {sources} of {total} packets parsed as sources"
        );
        return false;
    }
    let _ = write!(
        w,
        "crem-bench: roce_parse ns={} packets={}",
        Dec(r.ns, r.ops),
        r.ops
    );
    true
}

/// Retains nothing: the benchmark measures the engine, not a packet store.
struct NoStore;

impl SourceStore for NoStore {
    fn source(&self, _psn: Psn) -> Option<&[u8]> {
        None
    }
    fn release(&mut self, _range: PsnRange) {}
}

/// Drops every message (counting them).
struct DropSink(u64);

impl Sink for DropSink {
    fn send(&mut self, msg: &[u8]) {
        black_box(msg);
        self.0 = self.0.wrapping_add(1);
    }
}

/// The CSF's per-packet cost: [`Csf::on_roce`] (parse, block bookkeeping,
/// retention accounting and, for m > 0, encoding into m repairs) for the
/// WRITE packet with increasing PSNs, k = 32, a fake clock advancing 100 ns a
/// packet, and an RDMA ACK every k packets releasing the block before the
/// last (so one or two blocks are held, as on a clean path), coding with
/// `gf` as in [`gf_mul_acc`]. Writes
/// `crem-bench: csf_per_packet k=32 m=.. gf=NAME ns=.. packets=..`.
pub(super) fn csf_per_packet(
    clock: &mut impl FnMut() -> u64,
    a: &mut Arena,
    m: u8,
    gf: Option<(&str, &dyn MulAcc)>,
    w: &mut dyn Write,
) -> bool {
    let Arena {
        table,
        csf,
        pkt,
        scratch,
        ..
    } = a;
    csf.reset(CsfParams::DEFAULT);
    let cfg = FecConfig {
        id: 1,
        scheme: Scheme::CauchyRs,
        k: K,
        m,
        t: T,
    };
    if csf.set_config(cfg, Psn::ZERO).is_err() {
        let _ = write!(w, "csf: configuration k={K} m={m} T={T} rejected");
        return false;
    }
    let (name, gf): (&str, &dyn MulAcc) = gf.unwrap_or(("scalar", &*table));
    let (mut store, mut sink) = (NoStore, DropSink(0));
    let (mut psn, mut now, mut retained, mut total) = (0u32, 0u64, 0u64, 0u64);
    let r = best_round(clock, PACKET_BATCH, || {
        set_psn(pkt, psn);
        now = now.wrapping_add(100);
        let mut io = CsfIo {
            gf,
            sink: &mut sink,
            store: &mut store,
            scratch: &mut scratch[..],
        };
        if csf.on_roce(now, &pkt[..], RDMA_MTU, &mut io) == SourceVerdict::Retain {
            retained = retained.wrapping_add(1);
        }
        total = total.wrapping_add(1);
        psn = psn.wrapping_add(1);
        if psn % u32::from(K) == 0 {
            let through = Psn::new(psn).wrapping_sub(u32::from(K) + 1);
            csf.on_rdma_ack(now, through, &mut store);
        }
    });
    let c = csf.counters();
    if retained != total || c.sources != total || (m > 0 && sink.0 == 0) {
        let _ = write!(
            w,
            "csf: {total} packets, {} coded, {retained} retained, {} messages",
            c.sources, sink.0
        );
        return false;
    }
    let _ = write!(
        w,
        "crem-bench: csf_per_packet k={K} m={m} gf={name} ns={} packets={}",
        Dec(r.ns, r.ops),
        r.ops
    );
    true
}
