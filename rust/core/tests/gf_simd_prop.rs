//! Every SIMD backend the CPU has equals the scalar definition on random
//! inputs: lengths around the vector widths, unaligned offsets, 1..=9 rows
//! (all the 4/2/1 groupings), strides with gaps, 1..=20 dot sources (more
//! than one pass of `DOT_MAX`).
#![cfg(target_arch = "x86_64")]

use crem_core::gf::x86::{Isa, Simd};
use crem_core::gf::{self, MulAcc};
use proptest::prelude::*;

fn backends() -> Vec<Simd> {
    let v: Vec<Simd> = Isa::ALL
        .into_iter()
        .filter(|&i| i.cpu_has())
        // SAFETY: detected; user space needs no FPU section.
        .map(|i| unsafe { Simd::new_unchecked(i) })
        .collect();
    // This machine type has all four; a CPU without them would make the
    // properties vacuous, which must not pass silently.
    assert!(!v.is_empty(), "no SIMD backend detected");
    v
}

fn reference_mul_acc(dst: &mut [u8], src: &[u8], c: u8) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= gf::mul_bitwise(c, *s);
    }
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn mul_acc_matches(src in bytes(300), init in bytes(300), skew in 0usize..64, c: u8) {
        for b in backends() {
            let s = &src[skew.min(src.len())..];
            let mut want = init.clone();
            reference_mul_acc(&mut want, s, c);
            let mut got = init.clone();
            b.mul_acc(&mut got, s, c);
            prop_assert_eq!(&got, &want, "{:?}", b.isa());
        }
    }

    #[test]
    fn mul_acc_rows_matches(
        src in bytes(400),
        coefs in prop::collection::vec(any::<u8>(), 0..10),
        gap in 0usize..70,
        short in 0usize..3,
        seed: u8,
    ) {
        let stride = src.len() + gap;
        // `short` > 0 cuts the buffer so the last row does not fit whole.
        let len = (coefs.len() * stride).saturating_sub(short * 7);
        let init: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect();
        let mut want = init.clone();
        for (n, &c) in coefs.iter().enumerate() {
            if n * stride < want.len() {
                reference_mul_acc(&mut want[n * stride..], &src, c);
            }
        }
        for b in backends() {
            let mut got = init.clone();
            b.mul_acc_rows(&mut got, stride, &src, &coefs);
            prop_assert_eq!(&got, &want, "{:?} stride {}", b.isa(), stride);
        }
    }

    #[test]
    fn overlapping_rows_follow_the_definition(src in bytes(200), c1: u8, c2: u8, stride in 0usize..100) {
        let init = vec![0x5a; src.len() + stride + 8];
        let mut want = init.clone();
        gf::mul_acc_rows_each(&gf::RowPerCall, &mut want, stride, &src, &[c1, c2]);
        for b in backends() {
            let mut got = init.clone();
            b.mul_acc_rows(&mut got, stride, &src, &[c1, c2]);
            prop_assert_eq!(&got, &want, "{:?}", b.isa());
        }
    }

    #[test]
    fn dot_acc_matches(
        len in 0usize..300,
        n in 0usize..21,
        extra in prop::collection::vec(0usize..5, 21),
        seed: u8,
    ) {
        let srcs: Vec<Vec<u8>> = (0..n)
            .map(|j| (0..len + extra[j]).map(|i| (i as u8 ^ seed).wrapping_mul(j as u8 | 1)).collect())
            .collect();
        let coefs: Vec<u8> = (0..n).map(|j| (j as u8).wrapping_mul(77) ^ seed).collect();
        let views: Vec<&[u8]> = srcs.iter().map(|v| v.as_slice()).collect();
        let init: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x33).collect();
        let mut want = init.clone();
        for (s, &c) in views.iter().zip(&coefs) {
            reference_mul_acc(&mut want, s, c);
        }
        for b in backends() {
            let mut got = init.clone();
            b.dot_acc(&mut got, &views, &coefs);
            prop_assert_eq!(&got, &want, "{:?}", b.isa());
            // A short source takes the definition's path: same answer.
            if let Some(first) = views.first() {
                let mut cut = views.clone();
                cut[0] = &first[..first.len().min(len / 2)];
                let mut want2 = init.clone();
                for (s, &c) in cut.iter().zip(&coefs) {
                    reference_mul_acc(&mut want2, s, c);
                }
                let mut got2 = init.clone();
                b.dot_acc(&mut got2, &cut, &coefs);
                prop_assert_eq!(&got2, &want2, "{:?} short", b.isa());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn dot_acc_rows_matches(
        len in 0usize..300,
        n in 1usize..21,
        rows in 1usize..10,
        seed: u8,
    ) {
        let srcs: Vec<Vec<u8>> = (0..n)
            .map(|j| (0..len + j % 3).map(|i| (i as u8 ^ seed).wrapping_mul(j as u8 | 1)).collect())
            .collect();
        let views: Vec<&[u8]> = srcs.iter().map(|v| v.as_slice()).collect();
        let coefs: Vec<u8> = (0..rows * n).map(|x| (x as u8).wrapping_mul(41) ^ seed).collect();
        let init: Vec<u8> = (0..rows * len).map(|i| (i as u8).wrapping_mul(7) ^ 0x5a).collect();
        let mut want = init.clone();
        for r in 0..rows {
            for (j, s) in views.iter().enumerate() {
                reference_mul_acc(&mut want[r * len..(r + 1) * len], s, coefs[r * n + j]);
            }
        }
        for b in backends() {
            let mut got = init.clone();
            b.dot_acc_rows(&mut got, &views, &coefs);
            prop_assert_eq!(&got, &want, "{:?} rows {} n {} len {}", b.isa(), rows, n, len);
        }
    }
}

#[test]
fn affine_matrices_multiply() {
    // The affine layout is the one part the loops cannot cross-check
    // against each other: test it against the definition for every c
    // through the GFNI backends, at a length with no tail.
    let src: Vec<u8> = (0..=255u8).collect();
    for b in backends() {
        for c in 0..=255u8 {
            let mut d = vec![0u8; 256];
            b.mul_acc(&mut d, &src, c);
            for x in 0..=255u8 {
                assert_eq!(
                    d[x as usize],
                    gf::mul_bitwise(c, x),
                    "{:?} {c}*{x}",
                    b.isa()
                );
            }
        }
    }
}
