//! GF(2^8) arithmetic for the CREM Cauchy Reed-Solomon scheme.
//!
//! The field is the one the draft fixes for scheme 1: polynomial
//! x^8 + x^4 + x^3 + x^2 + 1 (0x11D), generator α = 2, addition = XOR.
//!
//! Three layers, from slow-but-table-free to fast:
//! * [`mul`], [`inv`], [`div`] use the `const`-built [`EXP`]/[`LOG`] tables
//!   (in `.rodata`, no initialisation, 768 bytes). They serve coefficient
//!   computation in the decoder, where only O(u²) products are needed.
//! * [`MulTable`]: the full 256×256 product table (64 KiB) built into memory
//!   the caller owns (the kernel kzallocs it once at module load) and used by
//!   the bulk [`MulAcc::mul_acc`] loop, one lookup per byte, eight bytes per
//!   64-bit word.
//! * [`x86`] (every x86_64 target, the soft-float kernel one included):
//!   SSSE3/AVX2 nibble `pshufb` and GFNI affine loops in inline assembly.
//!   CPU feature detection (and, in the kernel, the FPU section) is the
//!   caller's job, which is why its constructor is `unsafe`.
//!
//! The coder in [`super::fec`] is generic over [`MulAcc`], so the kernel can
//! plug in whichever backend it has chosen at load time.

/// The reduction polynomial x^8 + x^4 + x^3 + x^2 + 1 of the CREM draft.
pub const POLY: u16 = 0x11D;

const fn build_exp() -> [u8; 512] {
    // Doubled so that EXP[LOG[a] + LOG[b]] needs no modulo (max index 508).
    let mut t = [0u8; 512];
    let mut x: u16 = 1;
    let mut i = 0;
    while i < 512 {
        t[i] = x as u8;
        x <<= 1;
        if x & 0x100 != 0 {
            x ^= POLY;
        }
        i += 1;
    }
    t
}

const fn build_log() -> [u8; 256] {
    let exp = build_exp();
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 255 {
        t[exp[i] as usize] = i as u8;
        i += 1;
    }
    t
}

/// EXP[i] = α^(i mod 255), for 0 <= i < 512.
pub static EXP: [u8; 512] = build_exp();
/// LOG[a] = log_α(a) for a != 0; LOG[0] is 0 and meaningless (callers test 0 first).
pub static LOG: [u8; 256] = build_log();

/// Multiplies two field elements (log/exp tables; no initialisation needed).
#[inline]
pub fn mul(a: u8, b: u8) -> u8 {
    if a == 0 || b == 0 {
        return 0;
    }
    let i = LOG[a as usize] as usize + LOG[b as usize] as usize;
    EXP[i & 511]
}

/// Multiplicative inverse, with `inv(0) == 0`.
///
/// Total on purpose (it equals a^254, which is 0 for 0), so no caller has to
/// handle a failure; code that must not divide by zero checks first or uses
/// [`checked_div`].
#[inline]
pub fn inv(a: u8) -> u8 {
    if a == 0 {
        return 0;
    }
    EXP[(255 - LOG[a as usize] as usize) & 511]
}

/// a / b, with division by zero yielding 0 (see [`inv`]).
#[inline]
pub fn div(a: u8, b: u8) -> u8 {
    if a == 0 || b == 0 {
        return 0;
    }
    EXP[(LOG[a as usize] as usize + 255 - LOG[b as usize] as usize) & 511]
}

/// a / b, or `None` when b is zero.
#[inline]
pub fn checked_div(a: u8, b: u8) -> Option<u8> {
    if b == 0 {
        None
    } else {
        Some(div(a, b))
    }
}

/// Multiplication by α (= 2), the "xtime" step.
#[inline]
pub const fn mul2(a: u8) -> u8 {
    (a << 1)
        ^ (if a & 0x80 != 0 {
            (POLY & 0xFF) as u8
        } else {
            0
        })
}

/// Bitwise shift-and-add product: no tables, usable in `const` context.
///
/// Slow; for building tables at compile time and as a cross-check.
pub const fn mul_bitwise(a: u8, b: u8) -> u8 {
    let mut acc = 0u8;
    let mut x = a;
    let mut y = b;
    while y != 0 {
        if y & 1 != 0 {
            acc ^= x;
        }
        x = mul2(x);
        y >>= 1;
    }
    acc
}

/// Fills `row[x] = c·x` for all x, using linearity (about 256 XORs, no
/// lookups): row[a ^ b] = row[a] ^ row[b].
pub fn build_row(c: u8, row: &mut [u8; 256]) {
    row[0] = 0;
    let mut p = c; // c·2^b
    let mut bit = 1usize;
    while bit < 256 {
        let mut low = 0usize;
        while low < bit {
            let v = p ^ row[low & 0xFF];
            row[(bit | low) & 0xFF] = v;
            low += 1;
        }
        p = mul2(p);
        bit <<= 1;
    }
}

/// Low/high nibble product tables of `c`: c·x == lo[x & 15] ^ hi[x >> 4].
///
/// These are the 16-byte `pshufb` operands of the SIMD loops (lib/raid6
/// style); exposed so that a C or assembly implementation in the kernel can
/// use exactly the same tables.
pub const fn nibble_tables(c: u8) -> ([u8; 16], [u8; 16]) {
    let mut lo = [0u8; 16];
    let mut hi = [0u8; 16];
    let mut x = 0;
    while x < 16 {
        lo[x] = mul_bitwise(c, x as u8);
        hi[x] = mul_bitwise(c, (x as u8) << 4);
        x += 1;
    }
    (lo, hi)
}

/// Truncates both slices to their common length, the contract of every
/// bulk routine here: mismatched lengths never panic, the excess is ignored.
#[inline]
fn common<'d, 's>(dst: &'d mut [u8], src: &'s [u8]) -> (&'d mut [u8], &'s [u8]) {
    let n = dst.len().min(src.len());
    let (d, _) = dst.split_at_mut(n);
    let (s, _) = src.split_at(n);
    (d, s)
}

/// dst ^= src over the common length, a 64-bit word at a time (the kernel
/// build has no SSE, so auto-vectorisation cannot be relied on there).
pub fn xor_acc(dst: &mut [u8], src: &[u8]) {
    let (dst, src) = common(dst, src);
    let mut dc = dst.chunks_exact_mut(8);
    let mut sc = src.chunks_exact(8);
    for (d, s) in (&mut dc).zip(&mut sc) {
        if let (Ok(da), Ok(sa)) = (<[u8; 8]>::try_from(&*d), <[u8; 8]>::try_from(s)) {
            let v = u64::from_ne_bytes(da) ^ u64::from_ne_bytes(sa);
            d.copy_from_slice(&v.to_ne_bytes());
        }
    }
    for (d, s) in dc.into_remainder().iter_mut().zip(sc.remainder()) {
        *d ^= *s;
    }
}

/// dst ^= row[src] over the common length, where `row` is the product row
/// of some coefficient (see [`build_row`], [`MulTable::row`]).
///
/// Eight table lookups are gathered into one 64-bit word so that the
/// destination is read and written once per eight bytes.
pub fn mul_acc_row(dst: &mut [u8], src: &[u8], row: &[u8; 256]) {
    let (dst, src) = common(dst, src);
    let mut dc = dst.chunks_exact_mut(8);
    let mut sc = src.chunks_exact(8);
    for (d, s) in (&mut dc).zip(&mut sc) {
        if let (Ok(da), Ok(sa)) = (<[u8; 8]>::try_from(&*d), <[u8; 8]>::try_from(s)) {
            let p = [
                row[sa[0] as usize],
                row[sa[1] as usize],
                row[sa[2] as usize],
                row[sa[3] as usize],
                row[sa[4] as usize],
                row[sa[5] as usize],
                row[sa[6] as usize],
                row[sa[7] as usize],
            ];
            let v = u64::from_ne_bytes(da) ^ u64::from_ne_bytes(p);
            d.copy_from_slice(&v.to_ne_bytes());
        }
    }
    for (d, s) in dc.into_remainder().iter_mut().zip(sc.remainder()) {
        *d ^= row[*s as usize];
    }
}

/// dst ^= c·src over the common length, building the product row of `c` on
/// the stack (256 bytes) for this call.
///
/// Needs no table memory at all; the row build costs about as much as
/// 300 bytes of multiply-accumulate, so bulk users should prefer a
/// [`MulTable`].
pub fn mul_acc(dst: &mut [u8], src: &[u8], c: u8) {
    match c {
        0 => {}
        1 => xor_acc(dst, src),
        _ => {
            let mut row = [0u8; 256];
            build_row(c, &mut row);
            mul_acc_row(dst, src, &row);
        }
    }
}

/// dst = c·src over the common length (used to start an accumulation
/// without zeroing first).
pub fn mul_set(dst: &mut [u8], src: &[u8], c: u8) {
    let (dst, src) = common(dst, src);
    dst.fill(0);
    mul_acc(dst, src, c);
}

/// A bulk multiply-accumulate backend. The coder is generic over it so the
/// kernel can choose a scalar table or a SIMD implementation it has
/// detected, wrapped in its own FPU section.
///
/// Contract: both operations act on the common length of `dst` and `src`
/// and never panic.
pub trait MulAcc {
    /// dst ^= c·src.
    fn mul_acc(&self, dst: &mut [u8], src: &[u8], c: u8);
    /// dst ^= src.
    fn xor_acc(&self, dst: &mut [u8], src: &[u8]) {
        xor_acc(dst, src)
    }
    /// Row n of `dst` (`dst[n·stride..]`, over the common length with
    /// `src`) ^= coefs[n]·src, for every n: one source into the m repairs
    /// of a block laid out every `stride` octets. SIMD backends load each
    /// source vector once for several rows.
    fn mul_acc_rows(&self, dst: &mut [u8], stride: usize, src: &[u8], coefs: &[u8]) {
        mul_acc_rows_each(self, dst, stride, src, coefs)
    }
    /// dst ^= Σ coefs[n]·srcs[n] (each over its common length with `dst`):
    /// many sources into one output, accumulated in registers by SIMD
    /// backends so that `dst` is read and written once per few sources.
    fn dot_acc(&self, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
        dot_acc_each(self, dst, srcs, coefs)
    }
    /// Row r of `dst` (`dst[r·len..(r+1)·len]`, len = `dst.len() / rows`)
    /// ^= Σ_n coefs[r·srcs.len() + n]·srcs[n], for rows = coefs.len() /
    /// srcs.len(): several outputs of the same sources (a decode), which
    /// SIMD backends compute loading each source vector once.
    fn dot_acc_rows(&self, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
        dot_acc_rows_each(self, dst, srcs, coefs)
    }
    /// Runs `f` with the backend for one batch of coding: one source into
    /// its block's repairs, one decode, one coded retransmission. A kernel
    /// backend owns the FPU for the batch here, once, instead of per
    /// call; `f` does nothing but arithmetic (no I/O, no sleeping).
    fn batch(&self, f: &mut dyn FnMut(&dyn MulAcc)) {
        f(self.as_dyn())
    }
    /// `self` as a trait object (for [`MulAcc::batch`]'s default).
    fn as_dyn(&self) -> &dyn MulAcc;
}

/// [`MulAcc::mul_acc_rows`] by definition, one row at a time.
pub fn mul_acc_rows_each<G: MulAcc + ?Sized>(
    gf: &G,
    dst: &mut [u8],
    stride: usize,
    src: &[u8],
    coefs: &[u8],
) {
    for (n, &c) in coefs.iter().enumerate() {
        let Some(at) = n.checked_mul(stride) else {
            return;
        };
        if let Some(row) = dst.get_mut(at..) {
            gf.mul_acc(row, src, c);
        }
    }
}

/// [`MulAcc::dot_acc_rows`] by definition, one row at a time.
pub fn dot_acc_rows_each<G: MulAcc + ?Sized>(gf: &G, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
    let n = srcs.len();
    let rows = coefs.len().checked_div(n).unwrap_or(0);
    let Some(len) = dst.len().checked_div(rows) else {
        return;
    };
    // Indexed rather than `chunks().zip()`, whose indexing carries an
    // overflow check into the kernel build; r < rows keeps r·len and r·n
    // within the slices.
    for r in 0..rows {
        let (lo, cl) = (r.wrapping_mul(len), r.wrapping_mul(n));
        let (hi, ch) = (lo.wrapping_add(len), cl.wrapping_add(n));
        if let (Some(row), Some(cs)) = (dst.get_mut(lo..hi), coefs.get(cl..ch)) {
            gf.dot_acc(row, srcs, cs);
        }
    }
}

/// [`MulAcc::dot_acc`] by definition, one source at a time.
pub fn dot_acc_each<G: MulAcc + ?Sized>(gf: &G, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
    for (s, &c) in srcs.iter().zip(coefs) {
        gf.mul_acc(dst, s, c);
    }
}

/// Backend without table memory: builds a 256-byte row per call
/// (see [`mul_acc`]). For tests, tools and rare paths.
#[derive(Clone, Copy, Debug, Default)]
pub struct RowPerCall;

impl MulAcc for RowPerCall {
    fn as_dyn(&self) -> &dyn MulAcc {
        self
    }
    #[inline]
    fn mul_acc(&self, dst: &mut [u8], src: &[u8], c: u8) {
        mul_acc(dst, src, c)
    }
}

/// Full 256×256 product table: `row(c)[x] == c·x`.
///
/// `#[repr(transparent)]` over `[[u8; 256]; 256]` and valid for any byte
/// content, so the kernel may kzalloc `size_of::<MulTable>()` (64 KiB) bytes,
/// cast the pointer, and call [`MulTable::init`]; nothing here builds a
/// `MulTable` on the stack. [`MulTable::verify`] re-checks it against
/// [`mul`] (for a KUnit case or a load-time self test).
#[repr(transparent)]
pub struct MulTable {
    /// rows[c][x] = c·x.
    pub rows: [[u8; 256]; 256],
}

impl MulTable {
    /// Size in bytes, for the allocator.
    pub const SIZE: usize = 256 * 256;

    /// (Re)builds the table in place. Uses no stack beyond a few words.
    pub fn init(&mut self) {
        build_into(&mut self.rows);
    }

    /// The product row of `c`.
    #[inline]
    pub fn row(&self, c: u8) -> &[u8; 256] {
        &self.rows[c as usize]
    }

    /// a·b by table lookup.
    #[inline]
    pub fn mul(&self, a: u8, b: u8) -> u8 {
        self.rows[a as usize][b as usize]
    }

    /// Compares every entry with the log/exp [`mul`]; returns the first
    /// wrong (a, b) pair.
    pub fn verify(&self) -> Result<(), (u8, u8)> {
        for (a, row) in self.rows.iter().enumerate() {
            for (b, &v) in row.iter().enumerate() {
                if v != mul(a as u8, b as u8) {
                    return Err((a as u8, b as u8));
                }
            }
        }
        Ok(())
    }
}

/// Builds the full product table into caller-provided memory.
pub fn build_into(rows: &mut [[u8; 256]; 256]) {
    for (c, row) in rows.iter_mut().enumerate() {
        build_row(c as u8, row);
    }
}

impl MulAcc for MulTable {
    fn as_dyn(&self) -> &dyn MulAcc {
        self
    }
    #[inline]
    fn mul_acc(&self, dst: &mut [u8], src: &[u8], c: u8) {
        match c {
            0 => {}
            1 => xor_acc(dst, src),
            _ => mul_acc_row(dst, src, self.row(c)),
        }
    }
}

impl<T: MulAcc + ?Sized> MulAcc for &T {
    #[inline]
    fn mul_acc(&self, dst: &mut [u8], src: &[u8], c: u8) {
        (**self).mul_acc(dst, src, c)
    }
    #[inline]
    fn xor_acc(&self, dst: &mut [u8], src: &[u8]) {
        (**self).xor_acc(dst, src)
    }
    #[inline]
    fn mul_acc_rows(&self, dst: &mut [u8], stride: usize, src: &[u8], coefs: &[u8]) {
        (**self).mul_acc_rows(dst, stride, src, coefs)
    }
    #[inline]
    fn dot_acc(&self, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
        (**self).dot_acc(dst, srcs, coefs)
    }
    #[inline]
    fn dot_acc_rows(&self, dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
        (**self).dot_acc_rows(dst, srcs, coefs)
    }
    fn batch(&self, f: &mut dyn FnMut(&dyn MulAcc)) {
        (**self).batch(f)
    }
    fn as_dyn(&self) -> &dyn MulAcc {
        (**self).as_dyn()
    }
}

#[cfg(target_arch = "x86_64")]
pub mod x86;

#[cfg(test)]
mod tests {
    use super::*;
    use std::boxed::Box;
    use std::vec::Vec;

    /// Independent reference: carry-less product then reduction mod 0x11D.
    fn clmul_ref(a: u8, b: u8) -> u8 {
        let mut p: u16 = 0;
        for i in 0..8 {
            if b & (1 << i) != 0 {
                p ^= (a as u16) << i;
            }
        }
        for i in (8..16).rev() {
            if p & (1 << i) != 0 {
                p ^= 0x11D << (i - 8);
            }
        }
        p as u8
    }

    pub(crate) fn boxed_table() -> Box<MulTable> {
        let v: Vec<[u8; 256]> = std::vec![[0u8; 256]; 256];
        let rows: Box<[[u8; 256]; 256]> = v.into_boxed_slice().try_into().unwrap();
        // SAFETY: MulTable is repr(transparent) over [[u8; 256]; 256].
        let mut t: Box<MulTable> = unsafe { Box::from_raw(Box::into_raw(rows).cast()) };
        t.init();
        t
    }

    #[test]
    fn exp_log_consistent() {
        assert_eq!(EXP[0], 1);
        assert_eq!(EXP[1], 2);
        assert_eq!(EXP[255], 1);
        let mut seen = [false; 256];
        for (i, &v) in EXP.iter().enumerate().take(255) {
            assert_ne!(v, 0);
            assert!(!seen[v as usize], "α is not primitive");
            seen[v as usize] = true;
            assert_eq!(LOG[v as usize] as usize, i);
        }
        for (i, &v) in EXP.iter().enumerate() {
            assert_eq!(v, EXP[i % 255]);
        }
    }

    #[test]
    fn mul_matches_reference_exhaustive() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let r = clmul_ref(a, b);
                assert_eq!(mul(a, b), r, "{a} * {b}");
                assert_eq!(mul_bitwise(a, b), r);
            }
        }
    }

    #[test]
    fn field_axioms() {
        for a in 0..=255u8 {
            assert_eq!(mul(a, 1), a);
            assert_eq!(mul(a, 0), 0);
            if a != 0 {
                assert_eq!(mul(a, inv(a)), 1, "inv {a}");
                assert_eq!(div(a, a), 1);
                assert_eq!(checked_div(a, 0), None);
            }
            assert_eq!(div(a, 0), 0);
            for b in 0..=255u8 {
                assert_eq!(mul(a, b), mul(b, a));
                if b != 0 {
                    assert_eq!(mul(div(a, b), b), a);
                    assert_eq!(checked_div(a, b), Some(div(a, b)));
                }
            }
        }
        assert_eq!(inv(0), 0);
        // Associativity and distributivity on a sample grid.
        for a in (0..=255u8).step_by(7) {
            for b in (0..=255u8).step_by(5) {
                for c in (0..=255u8).step_by(3) {
                    assert_eq!(mul(mul(a, b), c), mul(a, mul(b, c)));
                    assert_eq!(mul(a, b ^ c), mul(a, b) ^ mul(a, c));
                }
            }
        }
    }

    #[test]
    fn table_build_matches_mul() {
        let t = boxed_table();
        assert_eq!(t.verify(), Ok(()));
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(t.mul(a, b), clmul_ref(a, b));
            }
        }
        let mut bad = boxed_table();
        bad.rows[7][9] ^= 1;
        assert_eq!(bad.verify(), Err((7, 9)));
    }

    #[test]
    fn nibbles_match() {
        for c in 0..=255u8 {
            let (lo, hi) = nibble_tables(c);
            for x in 0..=255u8 {
                assert_eq!(lo[(x & 15) as usize] ^ hi[(x >> 4) as usize], mul(c, x));
            }
        }
    }

    fn check_backend(b: &dyn MulAcc) {
        let src: Vec<u8> = (0..1000u32).map(|i| (i * 37 + 11) as u8).collect();
        for &c in &[0u8, 1, 2, 3, 0x1d, 0x80, 0xfd, 0xff] {
            for len in [0usize, 1, 7, 8, 15, 16, 31, 32, 33, 63, 100, 1000] {
                let init: Vec<u8> = (0..len as u32).map(|i| (i * 101 + 3) as u8).collect();
                let mut d = init.clone();
                b.mul_acc(&mut d, &src[..len], c);
                for i in 0..len {
                    assert_eq!(d[i], init[i] ^ mul(c, src[i]), "c={c} len={len} i={i}");
                }
                let mut d = init.clone();
                b.xor_acc(&mut d, &src[..len]);
                for i in 0..len {
                    assert_eq!(d[i], init[i] ^ src[i]);
                }
            }
        }
        // Mismatched lengths: common prefix only, no panic.
        let mut short = [1u8; 5];
        b.mul_acc(&mut short, &src, 3);
        assert_eq!(short[4], 1 ^ mul(3, src[4]));
        let mut long = [1u8; 20];
        b.mul_acc(&mut long, &src[..3], 3);
        assert_eq!(long[3..], [1u8; 17]);
    }

    #[test]
    fn bulk_backends() {
        check_backend(&RowPerCall);
        let t = boxed_table();
        check_backend(&*t);
        let mut d = [9u8; 33];
        mul_set(&mut d, &[5u8; 33], 7);
        assert_eq!(d, [mul(5, 7); 33]);
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[test]
    fn simd_backends() {
        for isa in x86::Isa::ALL {
            if isa.cpu_has() {
                // SAFETY: detected; user space needs no FPU section.
                check_backend(&unsafe { x86::Simd::new_unchecked(isa) });
            }
        }
    }
}
