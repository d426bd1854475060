// SPDX-License-Identifier: GPL-2.0
//! GF(2^8) tables as the module builds them: in kernel memory, at run time.

use super::run;
use crate::crem_core::gf::{self, MulAcc, MulTable};
use core::ffi::{c_char, c_int};
use core::fmt::Write;

use kernel::prelude::*;

/// Allocates and builds the 64 KiB product table the way the datapath will.
fn build_table() -> Result<KBox<MulTable>> {
    let mut t = KBox::<MulTable>::new_uninit(GFP_KERNEL)?;
    // SAFETY: MulTable is plain bytes, valid for any content; zero it first so
    // it is initialised before `init` overwrites every entry.
    let t = unsafe {
        core::ptr::write_bytes(t.as_mut_ptr(), 0, 1);
        t.assume_init()
    };
    let mut t = t;
    t.init();
    Ok(t)
}

/// Every entry equals the definition: carry-less product reduced mod 0x11D.
#[no_mangle]
extern "C" fn crem_kunit_gf_tables_match_definition(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let Ok(t) = build_table() else {
            let _ = write!(w, "allocation failed");
            return false;
        };
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let (got, want) = (t.mul(a, b), gf::mul_bitwise(a, b));
                if got != want {
                    let _ = write!(
                        w,
                        "{a:#04x}*{b:#04x}: table {got:#04x}, definition {want:#04x}"
                    );
                    return false;
                }
            }
        }
        true
    })
}

/// The table-driven multiply-accumulate equals byte-wise definition products.
#[no_mangle]
extern "C" fn crem_kunit_gf_tables_mul_acc(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let Ok(t) = build_table() else {
            let _ = write!(w, "allocation failed");
            return false;
        };
        let mut src = [0u8; 1027]; // odd length: exercises the tail handling
        for (i, s) in src.iter_mut().enumerate() {
            *s = (i * 7 + 3) as u8;
        }
        for c in [0u8, 1, 2, 0x1d, 0x8e, 0xff] {
            let mut dst = [0x5au8; 1027];
            t.mul_acc(&mut dst, &src, c);
            for (i, (&d, &s)) in dst.iter().zip(src.iter()).enumerate() {
                if d != 0x5a ^ gf::mul_bitwise(c, s) {
                    let _ = write!(w, "c={c:#04x} byte {i}: {d:#04x}");
                    return false;
                }
            }
        }
        true
    })
}

/// The draft's Coding Example end to end in kernel memory: R0, R1 streamed,
/// R2[L] over the lost set, then S0..S2 recovered from S3, R0, R1, R2[L].
#[no_mangle]
extern "C" fn crem_kunit_coding_example_roundtrip(msg: *mut c_char, len: usize) -> c_int {
    use crate::crem_core::fec::{
        build_source_symbol, decode, encode_over, Bitmap, BlockEncoder, Code, DecodeScratch,
        Repair, Scheme, SliceSymbols,
    };
    const T: usize = 16;
    const R0: [u8; T] = *b"\x00\x1e\xf6\xcc\xd7\xc3\x77\xf0\xdd\xfc\x77\x4c\x00\x00\x00\x00";
    const R1: [u8; T] = *b"\x00\x1e\xf6\xcc\xd7\xc3\x77\xf0\xdd\xfc\x77\x4f\x00\x00\x00\x00";
    const R2L: [u8; T] = *b"\x00\x35\x4f\xdf\x6d\x4b\x40\xb5\x7e\x5c\x40\x00\x00\x00\x00\x00";
    run(msg, len, |w| {
        let (Ok(t), Ok(mut scratch)) = (build_table(), KBox::new(DecodeScratch::new(), GFP_KERNEL))
        else {
            let _ = write!(w, "allocation failed");
            return false;
        };
        let mut s = [[0u8; T]; 4];
        for (j, sym) in s.iter_mut().enumerate() {
            let p = [
                b'R',
                b'D',
                b'M',
                b'A',
                b'-',
                b'P',
                b'K',
                b'T',
                b'-',
                b'0' + j as u8,
            ];
            if build_source_symbol(&p, T, sym).is_err() {
                let _ = write!(w, "source symbol {j}");
                return false;
            }
        }
        let Ok(code) = Code::new(Scheme::CauchyRs, 4, T) else {
            let _ = write!(w, "code");
            return false;
        };
        // Ordinary repairs, streamed as the sources pass.
        let mut rep = [0u8; 2 * T];
        let Ok(mut enc) = BlockEncoder::new(code, 0, 2) else {
            let _ = write!(w, "encoder");
            return false;
        };
        for (j, sym) in s.iter().enumerate() {
            if enc.add_source(&*t, j as u8, sym, &mut rep).is_err() {
                let _ = write!(w, "add_source {j}");
                return false;
            }
        }
        if rep[..T] != R0 || rep[T..] != R1 {
            let _ = write!(w, "R0/R1 differ from the draft");
            return false;
        }
        // Coded retransmission over L = {0, 1, 2}.
        let mut r2 = [0u8; T];
        let lost = match encode_over(
            &*t,
            &code,
            2,
            s.iter().take(3).enumerate().map(|(j, x)| (j as u8, &x[..])),
            &mut r2,
        ) {
            Ok(l) => l,
            Err(_) => {
                let _ = write!(w, "encode_over");
                return false;
            }
        };
        if r2 != R2L {
            let _ = write!(w, "R2[L] differs from the draft");
            return false;
        }
        let present = Bitmap::from_words(&[0xF000_0000]);
        let held: [Option<&[u8]>; 4] = [None, None, None, Some(&s[3])];
        let repairs = [
            Repair {
                index: 0,
                lost: None,
                data: &R0,
            },
            Repair {
                index: 1,
                lost: None,
                data: &R1,
            },
            Repair {
                index: 2,
                lost: Some(&lost),
                data: &R2L,
            },
        ];
        let syms = SliceSymbols {
            sources: &held,
            repairs: &repairs,
        };
        let mut out = [0u8; 3 * T];
        match decode(&*t, &code, &present, &syms, &mut scratch, &mut out) {
            Ok(got) if got == lost => {}
            _ => {
                let _ = write!(w, "decode failed");
                return false;
            }
        }
        for (n, chunk) in out.chunks(T).enumerate() {
            if s.get(n).map(|x| &x[..]) != Some(chunk) {
                let _ = write!(w, "S{n} not recovered");
                return false;
            }
        }
        true
    })
}

/// Deterministic bytes (xorshift) for the equivalence cases.
fn fill(buf: &mut [u8], mut x: u32) {
    for b in buf.iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = (x >> 7) as u8;
    }
}

/// One SIMD backend, through the datapath's `Coder` (so inside FPU
/// sections, as the hooks run it), against the table on the same inputs:
/// single products at lengths around every vector width, multi-row updates
/// of 1..=9 rows (every 4/2/1 grouping) with gapped strides, dot
/// products of 1..=20 sources (more than one pass of DOT_MAX), and
/// several dot products of the same sources (the four-row decode loops).
#[cfg(target_arch = "x86_64")]
fn simd_matches(t: &MulTable, c: &crate::gf::Coder, bufs: &mut [u8], w: &mut dyn Write) -> bool {
    const N: usize = 2400;
    let (src, rest) = bufs.split_at_mut(24 * N);
    let (want, got) = rest.split_at_mut(10 * N);
    fill(src, 0x1234_5678);
    for (i, len) in [
        1usize, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 1100, 1103, 2400,
    ]
    .into_iter()
    .enumerate()
    {
        let coef = 2 + (i as u8).wrapping_mul(29);
        fill(want, len as u32);
        got.copy_from_slice(want);
        t.mul_acc(&mut want[..len], &src[..len], coef);
        c.mul_acc(&mut got[..len], &src[..len], coef);
        if want != got {
            let _ = write!(w, "{}: mul_acc len {len} c {coef}", c.name());
            return false;
        }
    }
    for rows in 1..=9usize {
        for (len, gap) in [(1100usize, 0usize), (1041, 3), (64, 64), (7, 1)] {
            let stride = len + gap;
            let coefs: [u8; 9] = core::array::from_fn(|n| (n as u8).wrapping_mul(53) ^ rows as u8);
            fill(want, (rows * 1000 + len) as u32);
            got.copy_from_slice(want);
            let span = &src[..len];
            t.mul_acc_rows(want, stride, span, &coefs[..rows]);
            c.mul_acc_rows(got, stride, span, &coefs[..rows]);
            if want != got {
                let _ = write!(w, "{}: mul_acc_rows rows {rows} len {len} +{gap}", c.name());
                return false;
            }
        }
    }
    for n in 1..=20usize {
        for len in [1100usize, 100, 9] {
            let srcs: [&[u8]; 20] = core::array::from_fn(|j| &src[j * N..j * N + len]);
            let coefs: [u8; 20] = core::array::from_fn(|j| (j as u8).wrapping_mul(97) ^ n as u8);
            fill(want, (n * 7 + len) as u32);
            got.copy_from_slice(want);
            t.dot_acc(&mut want[..len], &srcs[..n], &coefs[..n]);
            c.dot_acc(&mut got[..len], &srcs[..n], &coefs[..n]);
            if want != got {
                let _ = write!(w, "{}: dot_acc sources {n} len {len}", c.name());
                return false;
            }
        }
    }
    for rows in [1usize, 4, 5, 8, 9] {
        for n in [1usize, 8, 9, 20] {
            let len = 1100;
            let srcs: [&[u8]; 20] = core::array::from_fn(|j| &src[j * N..j * N + len]);
            let coefs: [u8; 180] = core::array::from_fn(|x| (x as u8).wrapping_mul(13) ^ n as u8);
            fill(want, (rows * 31 + n) as u32);
            got.copy_from_slice(want);
            let span = rows * len;
            t.dot_acc_rows(&mut want[..span], &srcs[..n], &coefs[..rows * n]);
            c.dot_acc_rows(&mut got[..span], &srcs[..n], &coefs[..rows * n]);
            if want != got {
                let _ = write!(w, "{}: dot_acc_rows rows {rows} sources {n}", c.name());
                return false;
            }
        }
    }
    true
}

/// Every SIMD backend the kernel reports for this CPU equals the scalar
/// table (in `make check`'s VM, `-cpu max` under TCG exposes SSSE3 and
/// AVX2; GFNI where the CPU has it). Fails if there is none: a pass that
/// checked nothing would hide a VM without vector extensions.
#[no_mangle]
extern "C" fn crem_kunit_gf_simd_matches_scalar(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        #[cfg(target_arch = "x86_64")]
        {
            let (Ok(t), Ok(mut bufs)) = (
                build_table(),
                VVec::from_elem(0u8, 2400 * (24 + 20), GFP_KERNEL),
            ) else {
                let _ = write!(w, "allocation failed");
                return false;
            };
            let mut tested = 0;
            for s in crate::gf::available() {
                if !simd_matches(&t, &crate::gf::Coder::with(Some(s)), &mut bufs, w) {
                    return false;
                }
                tested += 1;
            }
            if tested == 0 {
                let _ = write!(w, "no SIMD backend on this CPU: nothing compared");
                return false;
            }
            let _ = write!(w, "backends equal to the table:");
            for s in crate::gf::available() {
                let _ = write!(w, " {}", s.isa().name());
            }
            true
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = write!(w, "no SIMD backends on this architecture");
            true
        }
    })
}
