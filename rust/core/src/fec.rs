//! CREM FEC schemes: source symbols, repair encoding and erasure decoding.
//!
//! Implements the draft's "Source Blocks and Coding" section:
//!
//! * source symbol `S = uint16(len(P)) || P || zero padding to T`
//!   ([`build_source_symbol`], [`parse_source_symbol`]);
//! * scheme 1, Cauchy Reed-Solomon over GF(2^8):
//!   `C(i, j) = 1 / (x_i + y_j)`, `x_i = 255 - i`, `y_j = j`, and
//!   `R_i[L] = Σ_{j∈L} C(i, j)·S_j` ([`coefficient`], [`BlockEncoder`],
//!   [`encode_over`]);
//! * scheme 2, XOR parity (all coefficients 1, only Repair Index 0);
//! * scheme 0, Source Copy (repair i is source i);
//! * the decoder ([`decode`]) for any mix of ordinary repairs (L = Present
//!   Bitmap) and coded retransmissions (L = lost set of the request).
//!
//! Nothing here allocates: symbols live in caller buffers, and the
//! decoder's scratch ([`DecodeScratch`], 2.25 KiB) is caller-provided so
//! the kernel's 16 KiB stack is not at risk. Bulk arithmetic goes through a
//! [`MulAcc`] backend chosen by the caller (table, SIMD).
//!
//! Every function validates its inputs and reports an [`Error`]; none
//! panics, whatever the input.

use super::gf::{self, MulAcc, EXP, LOG};
use core::fmt;

/// Largest block size k (positions 0..=254).
pub const MAX_K: u8 = 255;

/// Largest symbol length T (a 16-bit field on the wire).
pub const MAX_T: usize = u16::MAX as usize;

/// Octets of the length prefix of a source symbol.
pub const LENGTH_PREFIX: usize = 2;

/// FEC scheme identifiers ("CREM FEC Schemes" registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Scheme {
    /// Repair Index i is source symbol i, unmodified (per-packet fallback).
    SourceCopy = 0,
    /// Cauchy Reed-Solomon over GF(2^8); support REQUIRED.
    CauchyRs = 1,
    /// One XOR parity symbol (m = 1, Repair Index 0), no coded retransmission.
    Xor = 2,
}

impl TryFrom<u8> for Scheme {
    type Error = Error;
    fn try_from(v: u8) -> Result<Self, Error> {
        match v {
            0 => Ok(Scheme::SourceCopy),
            1 => Ok(Scheme::CauchyRs),
            2 => Ok(Scheme::Xor),
            _ => Err(Error::UnknownScheme(v)),
        }
    }
}

impl From<Scheme> for u8 {
    fn from(s: Scheme) -> u8 {
        s as u8
    }
}

impl Scheme {
    /// Whether coded retransmission (RETX repairs over a lost set) is
    /// defined for the scheme; only Cauchy RS supports it.
    pub fn supports_retx(self) -> bool {
        matches!(self, Scheme::CauchyRs)
    }
}

/// Everything that can go wrong in this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Scheme value outside the registry.
    UnknownScheme(u8),
    /// k = 0, or T outside 2..=65535.
    InvalidParameters,
    /// The payload does not fit: len(P) > 65535 or T < len(P) + 2.
    PayloadTooLong,
    /// A caller buffer is shorter than required.
    BufferTooSmall,
    /// A source symbol shorter than its 2-octet length prefix.
    SymbolTooShort,
    /// The length prefix exceeds T − 2.
    BadLengthPrefix,
    /// The padding after the payload is not all zero.
    NonZeroPadding,
    /// A symbol (or repair buffer) whose length is not T (or m·T).
    LengthMismatch,
    /// A Repair Index not allowed for this scheme and k (Cauchy:
    /// i + k > 255; XOR: i != 0; Source Copy: i >= k).
    InvalidRepairIndex,
    /// A source position j >= k, or a bitmap naming one.
    InvalidPosition,
    /// The same source position fed twice to one encoder or set.
    DuplicateSource,
    /// Two repair symbols with the same Repair Index.
    DuplicateRepair,
    /// A repair symbol whose set L does not contain every unknown source,
    /// so the Cauchy MDS guarantee does not cover it.
    SetMissesUnknown,
    /// Fewer usable repair symbols than unknown sources: nothing was
    /// decoded (never a partial or wrong result).
    Insufficient {
        /// Unknown (lost) present sources.
        unknown: u8,
        /// Usable repair symbols held.
        usable: u8,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownScheme(s) => write!(f, "unknown FEC scheme {s}"),
            Error::InvalidParameters => f.write_str("invalid k or symbol length"),
            Error::PayloadTooLong => f.write_str("payload does not fit the symbol length"),
            Error::BufferTooSmall => f.write_str("buffer too small"),
            Error::SymbolTooShort => f.write_str("source symbol shorter than 2 octets"),
            Error::BadLengthPrefix => f.write_str("length prefix exceeds T - 2"),
            Error::NonZeroPadding => f.write_str("non-zero source symbol padding"),
            Error::LengthMismatch => f.write_str("symbol length differs from T"),
            Error::InvalidRepairIndex => f.write_str("repair index not valid for scheme and k"),
            Error::InvalidPosition => f.write_str("source position outside the block"),
            Error::DuplicateSource => f.write_str("duplicate source position"),
            Error::DuplicateRepair => f.write_str("duplicate repair index"),
            Error::SetMissesUnknown => f.write_str("repair set L misses an unknown source"),
            Error::Insufficient { unknown, usable } => {
                write!(
                    f,
                    "insufficient repairs: {usable} for {unknown} unknown sources"
                )
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Coefficients
// ---------------------------------------------------------------------------

/// Whether Repair Index `i` may be used with block size `k` (the draft's
/// `i + k <= 255` rule, with `k >= 1`). Under it, `C(i, j)` exists for
/// every position `j < k` and every square submatrix is non-singular.
#[inline]
pub fn repair_index_valid(i: u8, k: u8) -> bool {
    k >= 1 && i as u16 + k as u16 <= 255
}

/// Number of Cauchy Repair Indices available for block size `k`
/// (0..=255−k), i.e. how many distinct repair symbols a block can ever get.
#[inline]
pub fn cauchy_index_count(k: u8) -> u16 {
    if k == 0 {
        0
    } else {
        256 - k as u16
    }
}

/// The Cauchy coefficient `C(i, j) = 1 / ((255 − i) + j)`, defined when
/// `i + j < 255`.
#[inline]
pub fn coefficient(i: u8, j: u8) -> Option<u8> {
    if i as u16 + j as u16 >= 255 {
        return None;
    }
    Some(gf::inv((255 - i) ^ j))
}

/// log_α of C(i, j) for a valid pair (caller checked i + j < 255).
#[inline]
fn log_cauchy(i: u8, j: u8) -> u32 {
    // x_i + y_j is non-zero for valid pairs; 1/z has log 255 − log z.
    let z = (255u8.wrapping_sub(i)) ^ j;
    (255 - LOG[z as usize] as u32) % 255
}

#[inline]
fn exp(l: u32) -> u8 {
    EXP[(l % 255) as usize & 511]
}

// ---------------------------------------------------------------------------
// Bitmaps
// ---------------------------------------------------------------------------

/// A set of block positions (0..=255) in the wire layout of the Present and
/// Lost Source Bitmaps: bit j is bit `31 − j % 32` of 32-bit word `j / 32`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Bitmap {
    words: [u32; 8],
}

impl fmt::Debug for Bitmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[inline]
fn loc(j: u8) -> (usize, u32) {
    ((j >> 5) as usize & 7, 0x8000_0000u32 >> (j & 31))
}

impl Bitmap {
    /// The empty set.
    pub const EMPTY: Bitmap = Bitmap { words: [0; 8] };

    /// The empty set.
    pub const fn new() -> Self {
        Self::EMPTY
    }

    /// Positions 0..n (n is capped at 256): e.g. a block with all k
    /// positions present.
    pub fn first(n: usize) -> Self {
        let mut b = Self::EMPTY;
        for (w, word) in b.words.iter_mut().enumerate() {
            let lo = w * 32;
            *word = if n >= lo + 32 {
                u32::MAX
            } else if n > lo {
                !(u32::MAX >> (n - lo))
            } else {
                0
            };
        }
        b
    }

    /// From wire words (word 0 first, MSB = lowest position). Words beyond
    /// the eighth are ignored, missing words are zero.
    pub fn from_words(words: &[u32]) -> Self {
        let mut b = Self::EMPTY;
        for (d, s) in b.words.iter_mut().zip(words) {
            *d = *s;
        }
        b
    }

    /// The eight wire words; a block of k positions sends the first
    /// ceil(k/32).
    pub fn words(&self) -> [u32; 8] {
        self.words
    }

    /// From big-endian wire octets (as many as given, up to 32).
    pub fn from_be_bytes(bytes: &[u8]) -> Self {
        let mut b = Self::EMPTY;
        for (w, chunk) in b.words.iter_mut().zip(bytes.chunks(4)) {
            let mut v = [0u8; 4];
            for (d, s) in v.iter_mut().zip(chunk) {
                *d = *s;
            }
            *w = u32::from_be_bytes(v);
        }
        b
    }

    /// Whether position j is in the set.
    #[inline]
    pub fn contains(&self, j: u8) -> bool {
        let (w, m) = loc(j);
        self.words[w] & m != 0
    }

    /// Adds j; returns false if it was already there.
    #[inline]
    pub fn insert(&mut self, j: u8) -> bool {
        let (w, m) = loc(j);
        let was = self.words[w] & m != 0;
        self.words[w] |= m;
        !was
    }

    /// Removes j; returns whether it was there.
    #[inline]
    pub fn remove(&mut self, j: u8) -> bool {
        let (w, m) = loc(j);
        let was = self.words[w] & m != 0;
        self.words[w] &= !m;
        was
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        // At most 256: plain wrapping adds keep overflow-check paths out.
        self.words
            .iter()
            .fold(0usize, |a, w| a.wrapping_add(w.count_ones() as usize))
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// self ⊆ other.
    pub fn is_subset(&self, other: &Bitmap) -> bool {
        self.words
            .iter()
            .zip(&other.words)
            .all(|(a, b)| a & !b == 0)
    }

    /// self ∪ other.
    pub fn union(&self, other: &Bitmap) -> Bitmap {
        self.zip_with(other, |a, b| a | b)
    }

    /// self ∩ other.
    pub fn intersection(&self, other: &Bitmap) -> Bitmap {
        self.zip_with(other, |a, b| a & b)
    }

    /// self \ other.
    pub fn difference(&self, other: &Bitmap) -> Bitmap {
        self.zip_with(other, |a, b| a & !b)
    }

    fn zip_with(&self, other: &Bitmap, f: impl Fn(u32, u32) -> u32) -> Bitmap {
        let mut r = Self::EMPTY;
        for ((d, a), b) in r.words.iter_mut().zip(&self.words).zip(&other.words) {
            *d = f(*a, *b);
        }
        r
    }

    /// Whether every position is below k (i.e. the set fits a block of k).
    pub fn within(&self, k: u8) -> bool {
        self.is_subset(&Bitmap::first(k as usize))
    }

    /// Positions in ascending order.
    pub fn iter(&self) -> Positions {
        Positions {
            words: self.words,
            w: 0,
        }
    }
}

impl FromIterator<u8> for Bitmap {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> Self {
        let mut b = Bitmap::EMPTY;
        for j in iter {
            b.insert(j);
        }
        b
    }
}

/// Ascending iterator over the positions of a [`Bitmap`].
#[derive(Clone, Debug)]
pub struct Positions {
    words: [u32; 8],
    w: usize,
}

impl Iterator for Positions {
    type Item = u8;
    fn next(&mut self) -> Option<u8> {
        while let Some(word) = self.words.get_mut(self.w) {
            if *word != 0 {
                let b = word.leading_zeros();
                *word &= !(0x8000_0000u32 >> b);
                return Some(((self.w & 7) << 5) as u8 | b as u8);
            }
            self.w += 1;
        }
        None
    }
}

// ---------------------------------------------------------------------------
// Source symbols
// ---------------------------------------------------------------------------

/// Writes `S = uint16_be(len(P)) || P || zero padding` into `out[..t]`.
///
/// `out` may be longer than `t`; octets past `t` are left untouched.
pub fn build_source_symbol(payload: &[u8], t: usize, out: &mut [u8]) -> Result<(), Error> {
    let n = payload.len();
    let Ok(len16) = u16::try_from(n) else {
        return Err(Error::PayloadTooLong);
    };
    if t < n + LENGTH_PREFIX {
        return Err(Error::PayloadTooLong);
    }
    let Some(sym) = out.get_mut(..t) else {
        return Err(Error::BufferTooSmall);
    };
    let (prefix, rest) = sym.split_at_mut(LENGTH_PREFIX);
    prefix.copy_from_slice(&len16.to_be_bytes());
    let (body, pad) = rest.split_at_mut(n);
    body.copy_from_slice(payload);
    pad.fill(0);
    Ok(())
}

/// Recovers the payload P from a source symbol of length T = `sym.len()`.
///
/// Exact inverse of [`build_source_symbol`]: it accepts precisely the
/// symbols that function produces. In particular non-zero padding is an
/// error ([`Error::NonZeroPadding`]): the construction mandates zeros, so
/// anything else is evidence of a wrong decode (e.g. a forged or corrupted
/// repair symbol) and costs only a scan of the padding to detect, ahead of
/// the ICRC check.
pub fn parse_source_symbol(sym: &[u8]) -> Result<&[u8], Error> {
    let (Some(&hi), Some(&lo)) = (sym.first(), sym.get(1)) else {
        return Err(Error::SymbolTooShort);
    };
    let n = u16::from_be_bytes([hi, lo]) as usize;
    let rest = sym.get(LENGTH_PREFIX..).unwrap_or(&[]);
    if n > rest.len() {
        return Err(Error::BadLengthPrefix);
    }
    let (payload, pad) = rest.split_at(n);
    if pad.iter().any(|&b| b != 0) {
        return Err(Error::NonZeroPadding);
    }
    Ok(payload)
}

// ---------------------------------------------------------------------------
// Code parameters
// ---------------------------------------------------------------------------

/// Validated coding parameters of one block: scheme, k and T.
///
/// Small and `Copy`, so engines keep one per configuration and pass it to
/// every call instead of re-validating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code {
    scheme: Scheme,
    k: u8,
    t: u16,
}

impl Code {
    /// k must be 1..=255 and T 2..=65535.
    pub fn new(scheme: Scheme, k: u8, t: usize) -> Result<Self, Error> {
        if k == 0 || t < LENGTH_PREFIX {
            return Err(Error::InvalidParameters);
        }
        let Ok(t) = u16::try_from(t) else {
            return Err(Error::InvalidParameters);
        };
        Ok(Code { scheme, k, t })
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Block size k.
    pub fn k(&self) -> u8 {
        self.k
    }

    /// Symbol length T.
    pub fn t(&self) -> usize {
        // `max` restates the constructor's invariant for the optimiser, so
        // `chunks_exact(t)` compiles without its zero-size panic path.
        (self.t as usize).max(LENGTH_PREFIX)
    }

    /// Checks a Repair Index against the scheme and k.
    pub fn check_repair_index(&self, i: u8) -> Result<(), Error> {
        let ok = match self.scheme {
            Scheme::CauchyRs => repair_index_valid(i, self.k),
            Scheme::Xor => i == 0,
            Scheme::SourceCopy => i < self.k,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidRepairIndex)
        }
    }

    /// How many distinct Repair Indices the scheme allows for this k.
    pub fn index_count(&self) -> u16 {
        match self.scheme {
            Scheme::CauchyRs => cauchy_index_count(self.k),
            Scheme::Xor => 1,
            Scheme::SourceCopy => self.k as u16,
        }
    }

    /// Coefficient of source j in repair i under this scheme: Cauchy
    /// C(i, j), XOR 1, Source Copy 1 if i = j else 0. `None` if i or j is
    /// out of range.
    pub fn coefficient(&self, i: u8, j: u8) -> Option<u8> {
        if j >= self.k || self.check_repair_index(i).is_err() {
            return None;
        }
        match self.scheme {
            Scheme::CauchyRs => coefficient(i, j),
            Scheme::Xor => Some(1),
            Scheme::SourceCopy => Some(u8::from(i == j)),
        }
    }

    fn check_symbol(&self, s: &[u8]) -> Result<(), Error> {
        if s.len() == self.t() {
            Ok(())
        } else {
            Err(Error::LengthMismatch)
        }
    }
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/// `repair ^= coef(i, j)·symbol` for one repair buffer of length T.
///
/// The primitive under every encoder, for callers that keep each repair
/// symbol in its own buffer (e.g. its own skb). No duplicate tracking:
/// feeding a position twice cancels it (GF(2^8) has characteristic 2).
pub fn add_to_repair<G: MulAcc + ?Sized>(
    gf: &G,
    code: &Code,
    i: u8,
    j: u8,
    symbol: &[u8],
    repair: &mut [u8],
) -> Result<(), Error> {
    if j >= code.k {
        return Err(Error::InvalidPosition);
    }
    code.check_repair_index(i)?;
    code.check_symbol(symbol)?;
    code.check_symbol(repair)?;
    let c = code.coefficient(i, j).ok_or(Error::InvalidRepairIndex)?;
    gf.mul_acc(repair, symbol, c);
    Ok(())
}

/// Streaming encoder state for m consecutive repair symbols
/// (Repair Indices `first..first+m`) of one block.
///
/// The CSF feeds each source symbol once, as the packet passes, and never
/// re-reads the block. The state is 40 bytes and holds no borrow: the m·T
/// repair octets live in a flat caller buffer (repair n at `n·T..(n+1)·T`)
/// passed to each call, so an engine can keep both in its per-block state.
/// The buffer must be zeroed before the first source ([`zero_repairs`]).
///
/// The same encoder computes coded retransmissions: feed only the sources
/// of the lost set L, with `first` the first unused index; one pass over L
/// yields all M symbols. [`BlockEncoder::fed`] is then L.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEncoder {
    code: Code,
    first: u8,
    m: u8,
    fed: Bitmap,
}

/// Coefficients per [`MulAcc::mul_acc_rows`] call of the streaming
/// encoder (SIMD backends take them four at a time).
const COEF_GROUP: usize = 8;

/// Sources per [`MulAcc::dot_acc`] call of [`encode_over`] and [`decode`].
const DOT_GROUP: usize = 8;

/// Gathers (source, coefficient) pairs for one output and hands them to
/// [`MulAcc::dot_acc`] [`DOT_GROUP`] at a time.
struct Dot<'s> {
    srcs: [&'s [u8]; DOT_GROUP],
    coefs: [u8; DOT_GROUP],
    n: usize,
}

impl<'s> Dot<'s> {
    fn new() -> Self {
        Dot {
            srcs: [&[]; DOT_GROUP],
            coefs: [0; DOT_GROUP],
            n: 0,
        }
    }

    fn push<G: MulAcc + ?Sized>(&mut self, gf: &G, out: &mut [u8], s: &'s [u8], c: u8) {
        if let (Some(sp), Some(cp)) = (self.srcs.get_mut(self.n), self.coefs.get_mut(self.n)) {
            *sp = s;
            *cp = c;
            self.n = self.n.wrapping_add(1); // < DOT_GROUP
        }
        if self.n == DOT_GROUP {
            self.flush(gf, out);
        }
    }

    fn flush<G: MulAcc + ?Sized>(&mut self, gf: &G, out: &mut [u8]) {
        let n = self.n.min(DOT_GROUP);
        if n > 0 {
            gf.dot_acc(out, &self.srcs[..n], &self.coefs[..n]);
        }
        self.n = 0;
    }
}

/// Zeroes a repair buffer before accumulation.
pub fn zero_repairs(repairs: &mut [u8]) {
    repairs.fill(0);
}

impl BlockEncoder {
    /// Repair Indices `first..first+m` must all be valid for the code
    /// (Cauchy: `first + m − 1 + k <= 255`; XOR: only index 0).
    pub fn new(code: Code, first: u8, m: u8) -> Result<Self, Error> {
        for n in 0..m {
            let Some(i) = first.checked_add(n) else {
                return Err(Error::InvalidRepairIndex);
            };
            code.check_repair_index(i)?;
        }
        Ok(BlockEncoder {
            code,
            first,
            m,
            fed: Bitmap::EMPTY,
        })
    }

    /// The code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// Number of repair symbols accumulated.
    pub fn m(&self) -> u8 {
        self.m
    }

    /// Repair Index of repair n (n < m).
    pub fn repair_index(&self, n: u8) -> Option<u8> {
        if n < self.m {
            self.first.checked_add(n)
        } else {
            None
        }
    }

    /// Required length of the flat repair buffer: m·T.
    pub fn buffer_len(&self) -> usize {
        self.m as usize * self.code.t()
    }

    /// Positions fed so far: the Present Bitmap for an ordinary block, the
    /// set L for a coded retransmission.
    pub fn fed(&self) -> Bitmap {
        self.fed
    }

    /// Forgets the fed positions (the caller re-zeroes the buffer) so the
    /// state can serve the next block.
    pub fn reset(&mut self) {
        self.fed = Bitmap::EMPTY;
    }

    /// Accumulates source symbol `symbol` at position `j` into all m repair
    /// symbols. Position j may be fed only once; on error nothing changed.
    pub fn add_source<G: MulAcc + ?Sized>(
        &mut self,
        gf: &G,
        j: u8,
        symbol: &[u8],
        repairs: &mut [u8],
    ) -> Result<(), Error> {
        if j >= self.code.k {
            return Err(Error::InvalidPosition);
        }
        if self.fed.contains(j) {
            return Err(Error::DuplicateSource);
        }
        self.code.check_symbol(symbol)?;
        if repairs.len() != self.buffer_len() {
            return Err(Error::LengthMismatch);
        }
        let t = self.code.t();
        gf.batch(&mut |gf| {
            self.for_coefficient_groups(j, |n, coefs| {
                if let Some(rows) = repairs.get_mut(n.wrapping_mul(t)..) {
                    gf.mul_acc_rows(rows, t, symbol, coefs);
                }
            })
        });
        self.fed.insert(j);
        Ok(())
    }

    /// Calls `f(n, coefs)` for consecutive groups of the coefficients of
    /// position j in repairs n, n+1, …: groups of [`COEF_GROUP`] so the
    /// caller's [`MulAcc::mul_acc_rows`] loads each source vector once per
    /// group without a per-m stack buffer.
    fn for_coefficient_groups(&self, j: u8, mut f: impl FnMut(usize, &[u8])) {
        let mut n = 0u8;
        while n < self.m {
            let g = self.m.wrapping_sub(n).min(COEF_GROUP as u8);
            let mut coefs = [0u8; COEF_GROUP];
            for (x, c) in coefs.iter_mut().enumerate().take(g as usize) {
                let i = self.first.wrapping_add(n).wrapping_add(x as u8);
                // Indices were validated in `new`.
                *c = self.code.coefficient(i, j).unwrap_or(0);
            }
            f(n as usize, coefs.get(..g as usize).unwrap_or(&[]));
            n = n.wrapping_add(g); // <= m
        }
    }

    /// Like [`BlockEncoder::add_source`], but from the packet payload P
    /// itself: accumulates the source symbol `uint16(len(P)) || P || 0…`
    /// without materialising it, so a CSF that retains the packet (e.g. an
    /// skb clone) rather than a symbol copy needs no T-octet staging buffer.
    pub fn add_payload<G: MulAcc + ?Sized>(
        &mut self,
        gf: &G,
        j: u8,
        payload: &[u8],
        repairs: &mut [u8],
    ) -> Result<(), Error> {
        if j >= self.code.k {
            return Err(Error::InvalidPosition);
        }
        if self.fed.contains(j) {
            return Err(Error::DuplicateSource);
        }
        let t = self.code.t();
        let Ok(len16) = u16::try_from(payload.len()) else {
            return Err(Error::PayloadTooLong);
        };
        if payload.len() > t - LENGTH_PREFIX {
            return Err(Error::PayloadTooLong);
        }
        if repairs.len() != self.buffer_len() {
            return Err(Error::LengthMismatch);
        }
        let prefix = len16.to_be_bytes();
        gf.batch(&mut |gf| {
            self.for_coefficient_groups(j, |n, coefs| {
                // Row n's prefix at n·T, its body from n·T + 2; the zero
                // padding contributes nothing.
                if let Some(rows) = repairs.get_mut(n.wrapping_mul(t)..) {
                    gf.mul_acc_rows(rows, t, &prefix, coefs);
                    if let Some(bodies) = rows.get_mut(LENGTH_PREFIX..) {
                        gf.mul_acc_rows(bodies, t, payload, coefs);
                    }
                }
            })
        });
        self.fed.insert(j);
        Ok(())
    }
}

/// Computes `R_i[L] = Σ_{(j, S_j)} coef(i, j)·S_j` into `out` (length T)
/// over the given sources, in one call: a coded retransmission (L = the
/// lost set of the request) or a whole-block ordinary repair.
///
/// Returns L as a bitmap, for the REPAIR message. On error the content of
/// `out` is unspecified.
pub fn encode_over<'s, G, I>(
    gf: &G,
    code: &Code,
    i: u8,
    sources: I,
    out: &mut [u8],
) -> Result<Bitmap, Error>
where
    G: MulAcc + ?Sized,
    I: IntoIterator<Item = (u8, &'s [u8])>,
{
    code.check_repair_index(i)?;
    code.check_symbol(out)?;
    let mut sources = Some(sources);
    let mut set = Bitmap::EMPTY;
    // Overwritten: `batch` runs the closure exactly once.
    let mut res = Err(Error::LengthMismatch);
    gf.batch(&mut |gf| {
        out.fill(0);
        let mut dot = Dot::new();
        res = (|| {
            for (j, s) in sources.take().into_iter().flatten() {
                if j >= code.k {
                    return Err(Error::InvalidPosition);
                }
                if !set.insert(j) {
                    return Err(Error::DuplicateSource);
                }
                code.check_symbol(s)?;
                let c = code.coefficient(i, j).ok_or(Error::InvalidRepairIndex)?;
                dot.push(gf, out, s, c);
            }
            dot.flush(gf, out);
            Ok(())
        })();
    });
    res.map(|()| set)
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/// One received repair symbol as the decoder sees it.
#[derive(Clone, Copy, Debug)]
pub struct Repair<'a> {
    /// Repair Index i.
    pub index: u8,
    /// The set L of a coded retransmission (Lost Source Bitmap), or `None`
    /// for an ordinary repair, whose L is the Present Bitmap.
    pub lost: Option<&'a Bitmap>,
    /// The T octets of the symbol.
    pub data: &'a [u8],
}

/// Read access to the symbols a CRF holds for one block.
///
/// A trait rather than slices so that the kernel can serve symbols straight
/// from the storage it already has (skb data, per-block arrays) without
/// building a list of up to 255 references on its stack. The decoder walks
/// the repairs more than once, so answers must not change during a call.
pub trait BlockSymbols {
    /// Source symbol at position j if held (only present positions are
    /// asked).
    fn source(&self, j: u8) -> Option<&[u8]>;
    /// Number of repair slots; [`BlockSymbols::repair`] is asked for
    /// `0..repair_count()`.
    fn repair_count(&self) -> usize;
    /// Repair in slot n, or `None` for an empty slot (skipped).
    fn repair(&self, n: usize) -> Option<Repair<'_>>;
}

/// [`BlockSymbols`] over plain slices: `sources[j]` for position j and a
/// list of repairs. For tests, tools and fuzzing.
#[derive(Clone, Copy, Debug)]
pub struct SliceSymbols<'a> {
    /// Source symbol held at position j (missing entries = not held).
    pub sources: &'a [Option<&'a [u8]>],
    /// Repair symbols held.
    pub repairs: &'a [Repair<'a>],
}

impl BlockSymbols for SliceSymbols<'_> {
    fn source(&self, j: u8) -> Option<&[u8]> {
        self.sources.get(j as usize).copied().flatten()
    }
    fn repair_count(&self) -> usize {
        self.repairs.len()
    }
    fn repair(&self, n: usize) -> Option<Repair<'_>> {
        self.repairs.get(n).copied()
    }
}

/// Caller-provided decoder scratch (2.25 KiB), kept off the stack for the
/// kernel. Contents are meaningless between calls.
#[derive(Clone, Debug)]
pub struct DecodeScratch {
    /// Repair Indices of the selected repairs, in selection order.
    idx: [u8; 256],
    /// Unknown positions, ascending.
    pos: [u8; 256],
    /// log of the row factors g_r of the Cauchy inverse.
    lg: [u8; 256],
    /// log of the column factors h_c of the Cauchy inverse.
    lh: [u8; 256],
    /// Combined coefficient of each known source for the current output.
    coef: [u8; 256],
    /// Coefficient rows of a group of outputs over the decode's inputs.
    rows: [[u8; 256]; DECODE_ROWS],
}

impl DecodeScratch {
    /// A zeroed scratch area.
    pub const fn new() -> Self {
        DecodeScratch {
            idx: [0; 256],
            pos: [0; 256],
            lg: [0; 256],
            lh: [0; 256],
            coef: [0; 256],
            rows: [[0; 256]; DECODE_ROWS],
        }
    }
}

impl Default for DecodeScratch {
    fn default() -> Self {
        Self::new()
    }
}

/// Validates a decode without doing it: returns the set U of unknown
/// present sources if the held repairs can recover them, so a CRF can
/// decide to decode (and size the `u·T` output) cheaply.
///
/// Rules, checked over every held repair (not only the ones that would be
/// used), so the outcome does not depend on slot order:
/// * the Present Bitmap and every L must lie within k
///   ([`Error::InvalidPosition`]); held sources and repairs must be T
///   octets long ([`Error::LengthMismatch`]);
/// * Repair Indices must be valid for scheme and k
///   ([`Error::InvalidRepairIndex`]) and pairwise distinct
///   ([`Error::DuplicateRepair`]);
/// * (Cauchy, XOR) every repair's L must contain U
///   ([`Error::SetMissesUnknown`]); an engine that holds repairs no longer
///   covering U (e.g. after discarding a restored packet that failed its
///   ICRC) must leave them out;
/// * at least u = |U| repairs must be usable, else
///   [`Error::Insufficient`]; for Source Copy a repair is usable if its
///   index is in U.
pub fn check_decodable<S: BlockSymbols + ?Sized>(
    code: &Code,
    present: &Bitmap,
    symbols: &S,
) -> Result<Bitmap, Error> {
    let k = code.k;
    if !present.within(k) {
        return Err(Error::InvalidPosition);
    }
    let mut unknown = Bitmap::EMPTY;
    for j in present.iter() {
        match symbols.source(j) {
            Some(s) => code.check_symbol(s)?,
            None => {
                unknown.insert(j);
            }
        }
    }
    let mut seen = Bitmap::EMPTY;
    let mut usable = 0usize;
    for n in 0..symbols.repair_count() {
        let Some(r) = symbols.repair(n) else {
            continue;
        };
        code.check_symbol(r.data)?;
        code.check_repair_index(r.index)?;
        if !seen.insert(r.index) {
            return Err(Error::DuplicateRepair);
        }
        let l = r.lost.unwrap_or(present);
        if !l.within(k) {
            return Err(Error::InvalidPosition);
        }
        match code.scheme {
            Scheme::SourceCopy => {
                if unknown.contains(r.index) {
                    usable = usable.saturating_add(1);
                }
            }
            Scheme::CauchyRs | Scheme::Xor => {
                if !unknown.is_subset(l) {
                    return Err(Error::SetMissesUnknown);
                }
                usable = usable.saturating_add(1);
            }
        }
    }
    let u = unknown.len();
    if usable < u {
        return Err(Error::Insufficient {
            unknown: u as u8,
            usable: usable as u8,
        });
    }
    Ok(unknown)
}

/// Recovers the unknown present sources of a block.
///
/// Writes the u recovered source symbols to `out` in ascending position
/// order, symbol n at `out[n·T..(n+1)·T]` (`out` needs at least u·T
/// octets; the rest is untouched), and returns their positions. u = 0 is a
/// success that writes nothing. Validation is [`check_decodable`]'s and
/// happens before any output is written; if it passes, the result is
/// exact (every square Cauchy submatrix is invertible), otherwise nothing
/// is recovered — never a wrong symbol.
///
/// Method: with U = unknown positions (columns y_c), the first u held
/// repairs (rows x_r = 255 − i_r) and K = known present sources,
///   `R_r = Σ_c A[r][c]·S_c + Σ_{j∈K∩L_r} C(i_r, j)·S_j`,
/// so `S_c = Σ_r B[c][r]·R_r + Σ_{j∈K} e_{c,j}·S_j` with B = A⁻¹ and
/// `e_{c,j} = Σ_{r: j∈L_r} B[c][r]·C(i_r, j)`. B has the closed Cauchy
/// form `B[c][r] = g_r·h_c / (x_r + y_c)` with
/// `g_r = Π_c(x_r + y_c) / Π_{r'≠r}(x_r + x_r')` and
/// `h_c = Π_r(x_r + y_c) / Π_{c'≠c}(y_c + y_c')`, computed in O(u²) in the
/// log domain. This is the draft's "subtract the known sources, then
/// solve", reassociated so that the held repair symbols are only read
/// (they stay valid if the caller retries) and no T-sized scratch is
/// needed; the bulk cost is the same u·(u + |K|) multiply-accumulates of T
/// octets.
pub fn decode<G, S>(
    gf: &G,
    code: &Code,
    present: &Bitmap,
    symbols: &S,
    scratch: &mut DecodeScratch,
    out: &mut [u8],
) -> Result<Bitmap, Error>
where
    G: MulAcc + ?Sized,
    S: BlockSymbols + ?Sized,
{
    // Overwritten: `batch` runs the closure exactly once.
    let mut res = Err(Error::BufferTooSmall);
    gf.batch(&mut |gf| res = decode_in(gf, code, present, symbols, scratch, out));
    res
}

/// [`decode`]'s body, inside the backend's batch.
fn decode_in<S: BlockSymbols + ?Sized>(
    gf: &dyn MulAcc,
    code: &Code,
    present: &Bitmap,
    symbols: &S,
    scratch: &mut DecodeScratch,
    out: &mut [u8],
) -> Result<Bitmap, Error> {
    let unknown = check_decodable(code, present, symbols)?;
    let u = unknown.len();
    if u == 0 {
        return Ok(unknown);
    }
    let t = code.t();
    let Some(out) = u.checked_mul(t).and_then(|n| out.get_mut(..n)) else {
        return Err(Error::BufferTooSmall);
    };
    let known = present.difference(&unknown);

    for (c, j) in (0..u).zip(unknown.iter()) {
        scratch.pos[c & 0xFF] = j;
    }

    if code.scheme == Scheme::SourceCopy {
        for (chunk, j) in out.chunks_exact_mut(t).zip(unknown.iter()) {
            let mut done = false;
            for n in 0..symbols.repair_count() {
                if let Some(r) = symbols.repair(n) {
                    if r.index == j {
                        chunk.fill(0);
                        gf.xor_acc(chunk, r.data);
                        done = true;
                        break;
                    }
                }
            }
            if !done {
                // Only reachable if `symbols` changed since validation.
                return Err(Error::Insufficient {
                    unknown: u as u8,
                    usable: 0,
                });
            }
        }
        return Ok(unknown);
    }

    // Select the first u held repairs (all are valid, see check_decodable).
    let mut sel = 0usize;
    for n in 0..symbols.repair_count() {
        if sel == u {
            break;
        }
        if let Some(r) = symbols.repair(n) {
            scratch.idx[sel & 0xFF] = r.index;
            sel = sel.wrapping_add(1); // < u <= 255
        }
    }
    if sel < u {
        // Only reachable if `symbols` changed since validation.
        return Err(Error::Insufficient {
            unknown: u as u8,
            usable: sel as u8,
        });
    }

    let xor = code.scheme == Scheme::Xor;
    if !xor {
        cauchy_inverse_factors(scratch, u);
    }

    // Outputs DECODE_ROWS at a time: their coefficient rows over the inputs
    // (the u selected repairs, then the known sources in order) first, then
    // one pass over the inputs that updates all of them (each input is
    // loaded once per group, not once per output).
    let mut c0 = 0usize;
    while c0 < u {
        let g = u.wrapping_sub(c0).min(DECODE_ROWS);
        for x in 0..g {
            let c = c0.wrapping_add(x); // < u
            for j in known.iter() {
                scratch.coef[j as usize] = 0;
            }
            let yc = scratch.pos[c & 0xFF];
            let mut r = 0usize;
            for n in 0..symbols.repair_count() {
                if r == u {
                    break;
                }
                let Some(rep) = symbols.repair(n) else {
                    continue;
                };
                let (b_log, i) = if xor {
                    (0u32, 0u8)
                } else {
                    let i = scratch.idx[r & 0xFF];
                    let xr = 255 - i;
                    let l = scratch.lg[r & 0xFF] as u32 + scratch.lh[c & 0xFF] as u32 + 255
                        - LOG[(xr ^ yc) as usize] as u32;
                    (l % 255, i)
                };
                scratch.rows[x & 3][r & 0xFF] = exp(b_log);
                let l = rep.lost.unwrap_or(present);
                for j in l.intersection(&known).iter() {
                    let e = if xor { b_log } else { b_log + log_cauchy(i, j) };
                    scratch.coef[j as usize] ^= exp(e);
                }
                r = r.wrapping_add(1); // < u <= 255
            }
            // Known inputs follow the u repairs: u + |K| = |present| <= 255.
            for (ki, j) in (u..256).zip(known.iter()) {
                scratch.rows[x & 3][ki & 0xFF] = scratch.coef[j as usize];
            }
        }
        let (lo, hi) = (c0.wrapping_mul(t), c0.wrapping_add(g).wrapping_mul(t));
        let Some(group) = out.get_mut(lo..hi) else {
            break;
        };
        group.fill(0);
        let mut dot = DotRows::new(g);
        let mut input = 0usize;
        for n in 0..symbols.repair_count() {
            if input == u {
                break;
            }
            if let Some(rep) = symbols.repair(n) {
                dot.push(gf, group, &scratch.rows, rep.data, input);
                input = input.wrapping_add(1);
            }
        }
        for j in known.iter() {
            if let Some(s) = symbols.source(j) {
                dot.push(gf, group, &scratch.rows, s, input);
            }
            input = input.wrapping_add(1); // <= 255
        }
        dot.flush(gf, group, &scratch.rows);
        c0 = c0.wrapping_add(g); // <= u
    }
    Ok(unknown)
}

/// Outputs per [`MulAcc::dot_acc_rows`] pass of [`decode`].
const DECODE_ROWS: usize = 4;

/// Gathers decode inputs (a symbol and its input number, the column of the
/// coefficient rows) and hands them to [`MulAcc::dot_acc_rows`]
/// [`DOT_GROUP`] at a time, for the `rows` outputs of a group.
struct DotRows<'s> {
    srcs: [&'s [u8]; DOT_GROUP],
    inputs: [usize; DOT_GROUP],
    n: usize,
    rows: usize,
}

impl<'s> DotRows<'s> {
    fn new(rows: usize) -> Self {
        DotRows {
            srcs: [&[]; DOT_GROUP],
            inputs: [0; DOT_GROUP],
            n: 0,
            rows: rows.min(DECODE_ROWS),
        }
    }

    fn push(
        &mut self,
        gf: &dyn MulAcc,
        out: &mut [u8],
        coef: &[[u8; 256]; DECODE_ROWS],
        s: &'s [u8],
        input: usize,
    ) {
        if let (Some(sp), Some(ip)) = (self.srcs.get_mut(self.n), self.inputs.get_mut(self.n)) {
            *sp = s;
            *ip = input;
            self.n = self.n.wrapping_add(1); // < DOT_GROUP
        }
        if self.n == DOT_GROUP {
            self.flush(gf, out, coef);
        }
    }

    fn flush(&mut self, gf: &dyn MulAcc, out: &mut [u8], coef: &[[u8; 256]; DECODE_ROWS]) {
        let n = self.n.min(DOT_GROUP);
        self.n = 0;
        if n == 0 {
            return;
        }
        // Row-major rows × n, as dot_acc_rows reads them.
        let mut cs = [0u8; DECODE_ROWS * DOT_GROUP];
        for (x, row) in (0..self.rows).zip(coef.iter()) {
            for (b, &input) in (0..n).zip(self.inputs.iter()) {
                if let Some(c) = cs.get_mut(x.wrapping_mul(n).wrapping_add(b)) {
                    *c = row[input & 0xFF];
                }
            }
        }
        let m = self.rows.wrapping_mul(n); // <= 32
        if let (Some(srcs), Some(cs)) = (self.srcs.get(..n), cs.get(..m)) {
            gf.dot_acc_rows(out, srcs, cs);
        }
    }
}

/// Fills `lg`, `lh` with the logs of the closed-form Cauchy inverse factors
/// for the u selected repairs (`idx`) and unknown positions (`pos`).
fn cauchy_inverse_factors(s: &mut DecodeScratch, u: usize) {
    let u = u.min(255);
    // All sums of logs are taken mod 255; each term is < 255 and at most
    // 255 terms are added, far from u32 overflow (wrapping_add only keeps
    // the kernel's overflow-check panic paths out of the object).
    for r in 0..u {
        let xr = 255 - s.idx[r & 0xFF];
        let mut num = 0u32;
        for c in 0..u {
            num = num.wrapping_add(LOG[(xr ^ s.pos[c & 0xFF]) as usize] as u32);
        }
        let mut den = 0u32;
        for r2 in 0..u {
            if r2 != r {
                den = den.wrapping_add(LOG[(xr ^ (255 - s.idx[r2 & 0xFF])) as usize] as u32);
            }
        }
        s.lg[r & 0xFF] = ((num % 255 + 255 - den % 255) % 255) as u8;
    }
    for c in 0..u {
        let yc = s.pos[c & 0xFF];
        let mut num = 0u32;
        for r in 0..u {
            num = num.wrapping_add(LOG[((255 - s.idx[r & 0xFF]) ^ yc) as usize] as u32);
        }
        let mut den = 0u32;
        for c2 in 0..u {
            if c2 != c {
                den = den.wrapping_add(LOG[(yc ^ s.pos[c2 & 0xFF]) as usize] as u32);
            }
        }
        s.lh[c & 0xFF] = ((num % 255 + 255 - den % 255) % 255) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn scheme_ids() {
        for v in 0..=255u8 {
            match Scheme::try_from(v) {
                Ok(s) => assert_eq!(u8::from(s), v),
                Err(e) => {
                    assert!(v > 2);
                    assert_eq!(e, Error::UnknownScheme(v));
                }
            }
        }
        assert!(Scheme::CauchyRs.supports_retx());
        assert!(!Scheme::Xor.supports_retx());
    }

    #[test]
    fn bitmap_layout() {
        let b = Bitmap::from_words(&[0xF000_0000]);
        assert_eq!(b.iter().collect::<Vec<u8>>(), [0, 1, 2, 3]);
        assert_eq!(Bitmap::first(4), b);
        assert_eq!(Bitmap::from_be_bytes(&[0xe0, 0, 0, 0]).len(), 3);
        let mut x = Bitmap::new();
        assert!(x.insert(255));
        assert!(!x.insert(255));
        assert!(x.insert(32));
        assert_eq!(x.words()[1], 0x8000_0000);
        assert_eq!(x.words()[7], 1);
        assert!(!x.within(255));
        assert!(x.remove(255));
        assert!(x.within(33));
        assert!(!x.within(32));
        assert_eq!(Bitmap::first(256).len(), 256);
        assert_eq!(Bitmap::first(1000).len(), 256);
        assert_eq!(Bitmap::first(0), Bitmap::EMPTY);
        assert_eq!(Bitmap::first(33).len(), 33);
        assert!(Bitmap::first(33).contains(32));
        assert!(!Bitmap::first(33).contains(33));
    }

    #[test]
    fn coefficient_domain() {
        assert_eq!(coefficient(0, 254), Some(gf::inv(1)));
        assert_eq!(coefficient(0, 255), None);
        assert_eq!(coefficient(254, 0), Some(gf::inv(1)));
        assert_eq!(coefficient(255, 0), None);
        assert_eq!(coefficient(100, 155), None);
        assert!(repair_index_valid(0, 255));
        assert!(!repair_index_valid(1, 255));
        assert!(!repair_index_valid(0, 0));
        assert_eq!(cauchy_index_count(255), 1);
        assert_eq!(cauchy_index_count(1), 255);
        for i in 0..=255u8 {
            for j in 0..=255u8 {
                if let Some(c) = coefficient(i, j) {
                    assert_ne!(c, 0);
                    assert_eq!(gf::mul(c, (255 - i) ^ j), 1);
                    assert_eq!(exp(log_cauchy(i, j)), c);
                }
            }
        }
    }
}
