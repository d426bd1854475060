// SPDX-License-Identifier: GPL-2.0
//! The datapath's GF(2^8) coder: crem-core's scalar product table, or the
//! fastest SIMD backend this CPU has. Like lib/raid6, the module times every
//! candidate on the encoder's own work at load, prints the rates and its
//! choice once, and keeps the choice for its lifetime.
//!
//! SIMD runs only inside a `kernel_fpu_begin()/end()` section
//! ([`fpu::with_fpu`]) around one batch of arithmetic (one source into its
//! block's repairs, one decode, one coded retransmission: see
//! [`MulAcc::batch`]), never around packet I/O, which may itself want the
//! FPU (a transmit path's checksum or crypto). Where the FPU cannot be taken
//! (`irq_fpu_usable()` false) the batch runs on the table: same result.

#[cfg(target_arch = "x86_64")]
use crate::crem_core::gf::x86::{Isa, Simd};
use crate::crem_core::gf::{MulAcc, MulTable};
#[cfg(target_arch = "x86_64")]
use crate::kernel_ext::fpu;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU8, Ordering};
use kernel::prelude::*;

/// GF(2^8) multiplication table, built once at module load.
struct Table(UnsafeCell<MulTable>);
// SAFETY: written only by `init` before any flow exists, read-only after.
unsafe impl Sync for Table {}
static TABLE: Table = Table(UnsafeCell::new(MulTable {
    rows: [[0; 256]; 256],
}));

fn table() -> &'static MulTable {
    // SAFETY: see `Table`: no writer after `init`.
    unsafe { &*TABLE.0.get() }
}

/// The chosen backend: 0 the table, n > 0 `Isa::ALL[n − 1]`. Written by
/// `init` before the hooks exist; relaxed loads suffice after that.
static CHOICE: AtomicU8 = AtomicU8::new(0);

/// Bytes below which a lone call (outside a batch) is not worth an FPU
/// section: the section costs about as much as this many table products.
const FPU_MIN: usize = 256;

/// The SIMD backends the kernel lets this CPU use, slowest first.
#[cfg(target_arch = "x86_64")]
pub(crate) fn available() -> impl Iterator<Item = Simd> {
    Isa::ALL.into_iter().filter_map(|isa| {
        let ymm = fpu::has(fpu::AVX) && fpu::xstate_has(fpu::XSTATE_YMM);
        let ok = match isa {
            Isa::Ssse3 => fpu::has(fpu::SSSE3),
            Isa::Avx2 => ymm && fpu::has(fpu::AVX2),
            Isa::Gfni => ymm && fpu::has(fpu::GFNI),
            Isa::Gfni512 => {
                ymm && fpu::has(fpu::GFNI)
                    && fpu::has(fpu::AVX512F)
                    && fpu::xstate_has(fpu::XSTATE_ZMM)
            }
        };
        // SAFETY: the kernel reports the instructions and saves their
        // register state; `Coder` uses the value only inside `with_fpu`.
        ok.then(|| unsafe { Simd::new_unchecked(isa) })
    })
}

/// The coder the datapath passes to crem-core (copy it freely).
#[derive(Clone, Copy)]
pub(crate) struct Coder {
    #[cfg(target_arch = "x86_64")]
    simd: Option<Simd>,
}

impl Coder {
    /// The backend chosen at load.
    pub(crate) fn chosen() -> Self {
        let n = CHOICE.load(Ordering::Relaxed) as usize;
        // SAFETY: `init` stores n > 0 only for an ISA `available()`
        // returned, whose contract `Coder` keeps (SIMD only in `with_fpu`).
        #[cfg(target_arch = "x86_64")]
        let simd = n
            .checked_sub(1)
            .and_then(|i| Isa::ALL.get(i))
            .map(|&isa| unsafe { Simd::new_unchecked(isa) });
        #[cfg(not(target_arch = "x86_64"))]
        let _ = n;
        Coder {
            #[cfg(target_arch = "x86_64")]
            simd,
        }
    }

    /// A coder over `simd` (None: the table), for the KUnit cases and the
    /// load-time benchmark.
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn with(simd: Option<Simd>) -> Self {
        Coder { simd }
    }

    /// Name of the backend, as the load message prints it.
    pub(crate) fn name(&self) -> &'static str {
        #[cfg(target_arch = "x86_64")]
        if let Some(s) = self.simd {
            return s.isa().name();
        }
        "scalar"
    }

    /// Runs `f` on the SIMD backend inside an FPU section if there is one
    /// and `bytes` is worth it, else on the table.
    fn run(&self, bytes: usize, f: &mut dyn FnMut(&dyn MulAcc)) {
        #[cfg(target_arch = "x86_64")]
        if let Some(s) = self.simd {
            if bytes >= FPU_MIN && fpu::with_fpu(|| f(&s)).is_some() {
                return;
            }
        }
        let _ = bytes;
        f(table())
    }
}

impl MulAcc for Coder {
    fn as_dyn(&self) -> &dyn MulAcc {
        self
    }
    fn mul_acc(&self, dst: &mut [u8], src: &[u8], c: u8) {
        self.run(src.len(), &mut |g| g.mul_acc(dst, src, c))
    }
    fn mul_acc_rows(&self, dst: &mut [u8], stride: usize, src: &[u8], coefs: &[u8]) {
        let bytes = src.len().saturating_mul(coefs.len());
        self.run(bytes, &mut |g| g.mul_acc_rows(dst, stride, src, coefs))
    }
    fn dot_acc(&self, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
        let bytes = dst.len().saturating_mul(srcs.len());
        self.run(bytes, &mut |g| g.dot_acc(dst, srcs, coefs))
    }
    fn dot_acc_rows(&self, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
        let bytes = dst.len().saturating_mul(srcs.len());
        self.run(bytes, &mut |g| g.dot_acc_rows(dst, srcs, coefs))
    }
    fn batch(&self, f: &mut dyn FnMut(&dyn MulAcc)) {
        self.run(usize::MAX, f)
    }
}

/// The load-time benchmark's work: one 1100-octet source into 4 repairs
/// (the encoder's step at m = 4), octets of multiply-accumulate per call.
const BENCH_T: usize = 1100;
const BENCH_ROWS: usize = 4;
/// Least time per candidate, ns (lib/raid6 spends 16 jiffies on each).
const BENCH_NS: u64 = 4_000_000;

fn now_ns() -> u64 {
    // SAFETY: `ktime_get` only reads the timekeeper, running long before
    // modules load.
    u64::try_from(unsafe { kernel::bindings::ktime_get() }).unwrap_or(0)
}

/// MB/s of multiply-accumulate `c` reaches on the benchmark work in `buf`.
fn rate(c: &Coder, buf: &mut [u8]) -> u64 {
    let Some((src, rows)) = buf.split_at_mut_checked(BENCH_T) else {
        return 0;
    };
    let coefs = [0x8e, 0x1d, 0xc3, 0x57];
    let (start, mut calls) = (now_ns(), 0u64);
    let mut ns = 0;
    while ns < BENCH_NS {
        for _ in 0..16 {
            c.batch(&mut |g| g.mul_acc_rows(rows, BENCH_T, src, &coefs));
        }
        calls = calls.saturating_add(16);
        ns = now_ns().saturating_sub(start);
    }
    let bytes = calls.saturating_mul((BENCH_T * BENCH_ROWS) as u64);
    bytes.saturating_mul(1000) / ns.max(1)
}

/// Builds the table and chooses the backend (module init, before the hooks
/// are registered, so nothing reads either yet).
pub(crate) fn init() -> Result {
    // SAFETY: module init runs once, before any reader can exist.
    unsafe { (*TABLE.0.get()).init() };
    let mut buf = KVec::from_elem(0x5au8, BENCH_T * (1 + BENCH_ROWS), GFP_KERNEL)?;
    // One line per candidate, then the choice, as lib/raid6 prints them.
    let mut best = (0u8, rate(&Coder::chosen(), &mut buf));
    pr_info!("gf(2^8) scalar: {} MB/s multiply-accumulate\n", best.1);
    #[cfg(target_arch = "x86_64")]
    for s in available() {
        let r = rate(&Coder::with(Some(s)), &mut buf);
        pr_info!("gf(2^8) {}: {r} MB/s multiply-accumulate\n", s.isa().name());
        if r > best.1 {
            let n = Isa::ALL.iter().position(|&i| i == s.isa()).unwrap_or(0);
            best = (n as u8 + 1, r);
        }
    }
    CHOICE.store(best.0, Ordering::Relaxed);
    pr_info!("gf(2^8) using {}\n", Coder::chosen().name());
    Ok(())
}
