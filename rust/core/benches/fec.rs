//! Criterion benchmark of the Cauchy FEC coder, in MAC-bytes/s.
//!
//! `cargo bench -p crem-core --bench fec [-- --warm-up-time 0.3 --measurement-time 1]`
//!
//! Throughput is counted in GF(2^8) multiply-accumulate octets (one MAC
//! octet = `dst ^= c·src` on one byte), criterion's `Throughput::Bytes`:
//! * encode: streaming [`BlockEncoder`] with the scalar [`MulTable`]
//!   backend, m repairs over k sources of T octets: k·m·T MACs;
//! * decode of u lost sources with u repairs and the other k − u sources
//!   held: [`decode`] does, per recovered symbol, u MACs from the repairs
//!   and one MAC per held source (combined coefficient, nonzero for these
//!   positions): u·(u + (k − u))·T = u·k·T MACs.
//!
//! After criterion, the same encode work (k data shards → m parity shards of
//! T octets) is timed through `reed-solomon-erasure` (pure-Rust galois_8)
//! and ours, with the same std-timing loop, and a `ratio` line is printed
//! per cell: ours / reference (> 1 means ours is faster).

mod common;

use crem_core::fec::{decode, Bitmap, BlockEncoder, Code, DecodeScratch, Scheme, SliceSymbols};
use crem_core::gf::MulTable;
use criterion::{black_box, criterion_group, BenchmarkId, Criterion, Throughput};
use reed_solomon_erasure::galois_8::ReedSolomon;
use std::time::{Duration, Instant};

const KS: [u8; 3] = [32, 64, 128];
const MS: [u8; 3] = [2, 4, 8];
const TS: [usize; 2] = [1100, 4200];

fn table() -> Box<MulTable> {
    let rows: Box<[[u8; 256]; 256]> = vec![[0u8; 256]; 256].into_boxed_slice().try_into().unwrap();
    // SAFETY: MulTable is repr(transparent) over [[u8; 256]; 256].
    let mut t: Box<MulTable> = unsafe { Box::from_raw(Box::into_raw(rows).cast()) };
    t.init();
    t
}

fn data(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2654435761).wrapping_add(seed) >> 13) as u8)
        .collect()
}

/// Streaming encode state for one (k, m, T) cell with our coder.
struct Ours {
    enc: BlockEncoder,
    srcs: Vec<Vec<u8>>,
    buf: Vec<u8>,
}

impl Ours {
    fn new(k: u8, m: u8, t: usize) -> Self {
        let code = Code::new(Scheme::CauchyRs, k, t).unwrap();
        let enc = BlockEncoder::new(code, 0, m).unwrap();
        let buf = vec![0u8; enc.buffer_len()];
        let srcs = (0..k as u32).map(|j| data(t, j)).collect();
        Ours { enc, srcs, buf }
    }

    fn run(&mut self, tab: &MulTable) {
        self.enc.reset();
        self.buf.fill(0);
        for (j, s) in self.srcs.iter().enumerate() {
            self.enc
                .add_source(tab, j as u8, black_box(s), &mut self.buf)
                .unwrap();
        }
        black_box(&self.buf);
    }
}

/// The same encode through reed-solomon-erasure (whole block at once).
struct Reference {
    rs: ReedSolomon,
    srcs: Vec<Vec<u8>>,
    parity: Vec<Vec<u8>>,
}

impl Reference {
    fn new(k: u8, m: u8, t: usize) -> Self {
        let rs = ReedSolomon::new(k as usize, m as usize).unwrap();
        let srcs = (0..k as u32).map(|j| data(t, j)).collect();
        let parity = vec![vec![0u8; t]; m as usize];
        Reference { rs, srcs, parity }
    }

    fn run(&mut self) {
        let d: Vec<&[u8]> = self.srcs.iter().map(|s| black_box(&s[..])).collect();
        let mut p: Vec<&mut [u8]> = self.parity.iter_mut().map(|s| &mut s[..]).collect();
        self.rs.encode_sep(&d, &mut p).unwrap();
        black_box(&self.parity);
    }
}

fn bench_encode(c: &mut Criterion) {
    let tab = table();
    let mut g = c.benchmark_group("encode");
    for t in TS {
        for k in KS {
            for m in MS {
                let id = format!("k{k}/m{m}/T{t}");
                g.throughput(Throughput::Bytes((k as usize * m as usize * t) as u64));
                let mut ours = Ours::new(k, m, t);
                g.bench_function(BenchmarkId::new("crem", &id), |b| b.iter(|| ours.run(&tab)));
                let mut reference = Reference::new(k, m, t);
                g.bench_function(BenchmarkId::new("rse", &id), |b| b.iter(|| reference.run()));
            }
        }
    }
    g.finish();
}

fn bench_decode(c: &mut Criterion) {
    let tab = table();
    let t = 1100usize;
    let mut g = c.benchmark_group("decode");
    for k in [32u8, 64] {
        for u in [1u8, 4, 16] {
            let code = Code::new(Scheme::CauchyRs, k, t).unwrap();
            let srcs: Vec<Vec<u8>> = (0..k as u32).map(|j| data(t, j)).collect();
            let present = Bitmap::first(k as usize);
            let mut enc = BlockEncoder::new(code, 0, u).unwrap();
            let mut buf = vec![0u8; enc.buffer_len()];
            for (j, s) in srcs.iter().enumerate() {
                enc.add_source(&*tab, j as u8, s, &mut buf).unwrap();
            }
            let (lost, held) = common::spread_loss(&srcs, k, u);
            let reps = common::ordinary_repairs(&buf, t);
            let syms = SliceSymbols {
                sources: &held,
                repairs: &reps,
            };
            let mut scratch = DecodeScratch::new();
            let mut out = vec![0u8; u as usize * t];
            let held_n = k as usize - u as usize;
            // u outputs, each u repair MACs + one per held source.
            let macs = u as usize * (u as usize + held_n) * t;
            g.throughput(Throughput::Bytes(macs as u64));
            g.bench_function(BenchmarkId::new("crem", format!("k{k}/u{u}/T{t}")), |b| {
                b.iter(|| {
                    decode(
                        &*tab,
                        &code,
                        &present,
                        black_box(&syms),
                        &mut scratch,
                        &mut out,
                    )
                    .unwrap()
                })
            });
            for (n, &j) in lost.iter().enumerate() {
                assert_eq!(out[n * t..(n + 1) * t], srcs[j][..]);
            }
        }
    }
    g.finish();
}

/// Best rate (MAC bytes/s) of `f` over a few short rounds.
fn rate(macs: usize, mut f: impl FnMut()) -> f64 {
    const ROUND: Duration = Duration::from_millis(15);
    f();
    let mut best = 0f64;
    for _ in 0..5 {
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < ROUND {
            f();
            n += 1;
        }
        best = best.max(n as f64 * macs as f64 / start.elapsed().as_secs_f64());
    }
    best
}

fn ratios() {
    let tab = table();
    println!("ratio lines: encode MAC-MB/s (10^6 MAC octets/s), ours = crem BlockEncoder+MulTable, ref = reed-solomon-erasure galois_8");
    for t in TS {
        for k in KS {
            for m in MS {
                let macs = k as usize * m as usize * t;
                let mut ours = Ours::new(k, m, t);
                let mut reference = Reference::new(k, m, t);
                let a = rate(macs, || ours.run(&tab)) / 1e6;
                let b = rate(macs, || reference.run()) / 1e6;
                println!(
                    "ratio encode k={k} m={m} T={t}: ours {a:.0} MB/s, ref {b:.0} MB/s, ours/ref {:.2}",
                    a / b
                );
            }
        }
    }
}

criterion_group!(benches, bench_encode, bench_decode);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // Skip the extra timing when criterion runs as a test (`cargo test
    // --benches`) or only lists benchmarks.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--list") {
        ratios();
    }
}
