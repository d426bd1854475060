//! GF(2^8) and Cauchy coder throughput. Plain `main`, std timing:
//! `cargo bench -p crem-core --bench gf`. Prints MB/s (10^6 bytes/s).

mod common;

use crem_core::fec::{decode, Bitmap, BlockEncoder, Code, DecodeScratch, Scheme, SliceSymbols};
use crem_core::gf::{self, MulAcc, MulTable, RowPerCall};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Each figure is the best of ROUNDS timed rounds of ROUND each: the best
/// round is the least disturbed by other load on a shared machine.
const ROUND: Duration = Duration::from_millis(100);
const ROUNDS: usize = 7;

fn table() -> Box<MulTable> {
    let rows: Box<[[u8; 256]; 256]> = vec![[0u8; 256]; 256].into_boxed_slice().try_into().unwrap();
    // SAFETY: MulTable is repr(transparent) over [[u8; 256]; 256].
    let mut t: Box<MulTable> = unsafe { Box::from_raw(Box::into_raw(rows).cast()) };
    t.init();
    t
}

/// Runs `f` (which processes `bytes` bytes) repeatedly; best MB/s.
fn rate(bytes: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..3 {
        f();
    }
    let mut best = 0f64;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < ROUND {
            for _ in 0..8 {
                f();
            }
            n += 8;
        }
        let r = (n as f64 * bytes as f64) / start.elapsed().as_secs_f64() / 1e6;
        best = best.max(r);
    }
    best
}

fn data(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2654435761).wrapping_add(seed) >> 13) as u8)
        .collect()
}

fn bench_mul_acc(name: &str, b: &dyn MulAcc) {
    for len in [1024usize, 8192] {
        let src = data(len, 1);
        let mut dst = data(len, 2);
        let mut c = 2u8;
        let r = rate(len, || {
            c = c.wrapping_add(1) | 2;
            b.mul_acc(black_box(&mut dst), black_box(&src), c);
        });
        println!("gf mul_acc {name} ({len} B): {r:.0} MB/s");
    }
}

fn backends(t: &MulTable) -> Vec<(&'static str, Box<dyn MulAcc + '_>)> {
    let mut v: Vec<(&'static str, Box<dyn MulAcc + '_>)> = vec![("scalar", Box::new(t))];
    #[cfg(target_arch = "x86_64")]
    for isa in gf::x86::Isa::ALL {
        if isa.cpu_has() {
            // SAFETY: detected; user space needs no FPU section.
            v.push((
                isa.name(),
                Box::new(unsafe { gf::x86::Simd::new_unchecked(isa) }),
            ));
        }
    }
    v
}

fn bench_encode(name: &str, b: &dyn MulAcc, k: u8, m: u8, t: usize) {
    let code = Code::new(Scheme::CauchyRs, k, t).unwrap();
    let srcs: Vec<Vec<u8>> = (0..k as u32).map(|j| data(t, j)).collect();
    let mut enc = BlockEncoder::new(code, 0, m).unwrap();
    let mut buf = vec![0u8; enc.buffer_len()];
    let r = rate(k as usize * t, || {
        enc.reset();
        buf.fill(0);
        for (j, s) in srcs.iter().enumerate() {
            enc.add_source(b, j as u8, black_box(s), &mut buf).unwrap();
        }
        black_box(&buf);
    });
    println!("cauchy encode {name} k={k} m={m} T={t}: {r:.0} MB/s of source");
}

fn bench_decode(name: &str, b: &dyn MulAcc, k: u8, u: u8, t: usize) {
    let code = Code::new(Scheme::CauchyRs, k, t).unwrap();
    let srcs: Vec<Vec<u8>> = (0..k as u32).map(|j| data(t, j)).collect();
    let present = Bitmap::first(k as usize);
    let mut enc = BlockEncoder::new(code, 0, u).unwrap();
    let mut buf = vec![0u8; enc.buffer_len()];
    for (j, s) in srcs.iter().enumerate() {
        enc.add_source(b, j as u8, s, &mut buf).unwrap();
    }
    let (lost, held) = common::spread_loss(&srcs, k, u);
    let reps = common::ordinary_repairs(&buf, t);
    let syms = SliceSymbols {
        sources: &held,
        repairs: &reps,
    };
    let mut scratch = DecodeScratch::new();
    let mut out = vec![0u8; u as usize * t];
    let r = rate(k as usize * t, || {
        decode(b, &code, &present, black_box(&syms), &mut scratch, &mut out).unwrap();
    });
    for (n, &j) in lost.iter().enumerate() {
        assert_eq!(out[n * t..(n + 1) * t], srcs[j][..]);
    }
    let per = (k as usize * t) as f64 / r; // microseconds per decode
    println!(
        "decode {name} u={u} of k={k} T={t}: {r:.0} MB/s of block, {:.0} MB/s recovered, {per:.1} us/block",
        r * u as f64 / k as f64
    );
}

fn main() {
    let t = table();
    let mut t2 = table();
    let n = 20;
    let s = Instant::now();
    for _ in 0..n {
        t2.init();
        black_box(&*t2);
    }
    println!(
        "gf MulTable init: {:.1} us",
        s.elapsed().as_secs_f64() * 1e6 / n as f64
    );

    for (name, b) in backends(&t) {
        bench_mul_acc(name, &*b);
    }
    bench_mul_acc("rowpercall", &RowPerCall);
    {
        let len = 8192;
        let src = data(len, 1);
        let mut dst = data(len, 2);
        let r = rate(len, || gf::xor_acc(black_box(&mut dst), black_box(&src)));
        println!("gf xor_acc ({len} B): {r:.0} MB/s");
    }
    for (name, b) in backends(&t) {
        bench_encode(name, &*b, 32, 4, 1024);
    }
    for (name, b) in backends(&t) {
        bench_decode(name, &*b, 32, 4, 1024);
    }
    for (name, b) in backends(&t) {
        bench_decode(name, &*b, 64, 16, 1024);
    }
}
