//! [`Bitmap256`]: a fixed-capacity set of block positions `0..256`.
//!
//! CREM carries two bitmaps over the k positions of a source block (k ≤ 255):
//! the Present Bitmap (which positions carry a source packet) and the Lost
//! Source Bitmap (the set L of a coded retransmission / repair request). On the
//! wire both are `ceil(k/32)` big-endian 32-bit words, and bit `j` — counted
//! from the most significant bit of the first word — refers to position `j`.
//!
//! `Bitmap256` stores the same layout in eight `u32` words (word `j / 32`, bit
//! `31 - j % 32`), so converting to and from the wire is a plain big-endian copy
//! of the first `ceil(k/32)` words. It is `Copy` (32 octets), needs no
//! allocation and never panics: out-of-range positions read as unset and
//! setting them is ignored (the setters report it).
//!
//! It is shared by the wire codecs and the FEC/block engines.

use core::fmt;

/// A set of positions `0..256` with the CREM on-the-wire bit order.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Bitmap256 {
    words: [u32; 8],
}

/// Number of 32-bit words a bitmap over `k` positions occupies on the wire:
/// `ceil(k / 32)` (0 for `k == 0`, 8 for `k == 255`).
#[inline]
pub const fn words_for(k: usize) -> usize {
    k.div_ceil(32)
}

impl Bitmap256 {
    /// Number of positions the bitmap can hold.
    pub const CAPACITY: usize = 256;
    /// The empty set.
    pub const EMPTY: Bitmap256 = Bitmap256 { words: [0; 8] };

    /// The empty set.
    #[inline]
    pub const fn new() -> Bitmap256 {
        Self::EMPTY
    }

    /// The set `{0, 1, …, n-1}` (`n` is clamped to 256).
    pub const fn first_n(n: usize) -> Bitmap256 {
        let mut words = [0u32; 8];
        let n = if n > Self::CAPACITY {
            Self::CAPACITY
        } else {
            n
        };
        let mut w = 0;
        while w < 8 {
            let lo = w * 32;
            if n >= lo + 32 {
                words[w] = u32::MAX;
            } else if n > lo {
                // n - lo in 1..32: the top (n - lo) bits.
                words[w] = !u32::MAX.wrapping_shr((n - lo) as u32);
            }
            w += 1;
        }
        Bitmap256 { words }
    }

    /// Builds a bitmap from its eight words (word 0 holds positions 0..32,
    /// position 0 in its most significant bit).
    #[inline]
    pub const fn from_words(words: [u32; 8]) -> Bitmap256 {
        Bitmap256 { words }
    }

    /// The eight words.
    #[inline]
    pub const fn words(&self) -> [u32; 8] {
        self.words
    }

    #[inline]
    const fn locate(j: usize) -> (usize, u32) {
        (j / 32, 1u32 << (31 - (j % 32) as u32))
    }

    /// Is position `j` in the set? `false` for `j >= 256`.
    #[inline]
    pub const fn get(&self, j: usize) -> bool {
        if j >= Self::CAPACITY {
            return false;
        }
        let (w, m) = Self::locate(j);
        self.words[w] & m != 0
    }

    /// Adds position `j`. Returns `false` (and does nothing) if `j >= 256`.
    #[inline]
    pub fn set(&mut self, j: usize) -> bool {
        self.assign(j, true)
    }

    /// Removes position `j`. Returns `false` (and does nothing) if `j >= 256`.
    #[inline]
    pub fn clear(&mut self, j: usize) -> bool {
        self.assign(j, false)
    }

    /// Sets position `j` to `v`. Returns `false` (and does nothing) if `j >= 256`.
    #[inline]
    pub fn assign(&mut self, j: usize, v: bool) -> bool {
        if j >= Self::CAPACITY {
            return false;
        }
        let (w, m) = Self::locate(j);
        if let Some(word) = self.words.get_mut(w) {
            if v {
                *word |= m;
            } else {
                *word &= !m;
            }
        }
        true
    }

    /// Number of positions in the set.
    #[inline]
    pub const fn count(&self) -> u32 {
        let mut n = 0;
        let mut w = 0;
        while w < 8 {
            n += self.words[w].count_ones();
            w += 1;
        }
        n
    }

    /// The set is empty.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        let mut w = 0;
        while w < 8 {
            if self.words[w] != 0 {
                return false;
            }
            w += 1;
        }
        true
    }

    /// All positions are below `n`, i.e. the set fits a block of `n` positions.
    #[inline]
    pub const fn fits(&self, n: usize) -> bool {
        self.and_not(&Self::first_n(n)).is_empty()
    }

    /// Removes every position `>= n`.
    #[inline]
    pub fn truncate(&mut self, n: usize) {
        *self = self.and(&Self::first_n(n));
    }

    /// Intersection.
    #[inline]
    pub const fn and(&self, other: &Bitmap256) -> Bitmap256 {
        let mut words = [0u32; 8];
        let mut w = 0;
        while w < 8 {
            words[w] = self.words[w] & other.words[w];
            w += 1;
        }
        Bitmap256 { words }
    }

    /// Union.
    #[inline]
    pub const fn or(&self, other: &Bitmap256) -> Bitmap256 {
        let mut words = [0u32; 8];
        let mut w = 0;
        while w < 8 {
            words[w] = self.words[w] | other.words[w];
            w += 1;
        }
        Bitmap256 { words }
    }

    /// Difference `self \ other`.
    #[inline]
    pub const fn and_not(&self, other: &Bitmap256) -> Bitmap256 {
        let mut words = [0u32; 8];
        let mut w = 0;
        while w < 8 {
            words[w] = self.words[w] & !other.words[w];
            w += 1;
        }
        Bitmap256 { words }
    }

    /// Every position of `self` is also in `other`.
    #[inline]
    pub const fn is_subset_of(&self, other: &Bitmap256) -> bool {
        self.and_not(other).is_empty()
    }

    /// The smallest position in the set.
    #[inline]
    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// The `n`-th smallest position in the set (0-based), if any.
    pub fn nth_set(&self, n: usize) -> Option<usize> {
        self.iter().nth(n)
    }

    /// Number of set positions strictly below `j` (the rank of `j`).
    pub fn rank(&self, j: usize) -> u32 {
        self.and(&Self::first_n(j)).count()
    }

    /// Iterates over the positions in the set, in increasing order.
    #[inline]
    pub const fn iter(&self) -> Ones {
        Ones {
            words: self.words,
            w: 0,
        }
    }

    /// Parses a bitmap from `words_for(k)` big-endian words. `bytes` must be a
    /// multiple of four octets and at most 32; returns `None` otherwise.
    pub fn from_be_bytes(bytes: &[u8]) -> Option<Bitmap256> {
        if bytes.len() % 4 != 0 || bytes.len() > 32 {
            return None;
        }
        let mut words = [0u32; 8];
        for (w, chunk) in words.iter_mut().zip(bytes.chunks_exact(4)) {
            if let &[a, b, c, d] = chunk {
                *w = u32::from_be_bytes([a, b, c, d]);
            }
        }
        Some(Bitmap256 { words })
    }

    /// Writes the first `out.len() / 4` words big-endian into `out`. Returns
    /// `false` if `out` is not a multiple of four octets or longer than 32.
    pub fn write_be_bytes(&self, out: &mut [u8]) -> bool {
        if out.len() % 4 != 0 || out.len() > 32 {
            return false;
        }
        for (chunk, w) in out.chunks_exact_mut(4).zip(self.words.iter()) {
            chunk.copy_from_slice(&w.to_be_bytes());
        }
        true
    }
}

impl fmt::Debug for Bitmap256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl IntoIterator for Bitmap256 {
    type Item = usize;
    type IntoIter = Ones;
    fn into_iter(self) -> Ones {
        self.iter()
    }
}

impl IntoIterator for &Bitmap256 {
    type Item = usize;
    type IntoIter = Ones;
    fn into_iter(self) -> Ones {
        self.iter()
    }
}

impl FromIterator<usize> for Bitmap256 {
    /// Collects positions; positions `>= 256` are ignored.
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Bitmap256 {
        let mut b = Bitmap256::new();
        for j in iter {
            b.set(j);
        }
        b
    }
}

/// Iterator over the set positions of a [`Bitmap256`], ascending.
#[derive(Clone, Debug)]
pub struct Ones {
    words: [u32; 8],
    w: usize,
}

impl Iterator for Ones {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while let Some(word) = self.words.get_mut(self.w) {
            if *word != 0 {
                let lz = word.leading_zeros();
                *word &= !(1u32 << (31 - lz));
                // self.w < 8 here; wrapping ops keep panic paths out.
                return Some(self.w.wrapping_mul(32).wrapping_add(lz as usize));
            }
            self.w += 1;
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.words.get(self.w..).map_or(0, |ws| {
            ws.iter()
                .fold(0usize, |n, w| n.wrapping_add(w.count_ones() as usize))
        });
        (n, Some(n))
    }
}

impl ExactSizeIterator for Ones {}
impl core::iter::FusedIterator for Ones {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msb_first_layout() {
        let mut b = Bitmap256::new();
        for j in 0..4 {
            assert!(b.set(j));
        }
        assert_eq!(b.words()[0], 0xF000_0000);
        let mut out = [0u8; 4];
        assert!(b.write_be_bytes(&mut out));
        assert_eq!(out, [0xf0, 0, 0, 0]);
        assert_eq!(
            Bitmap256::from_be_bytes(&[0xe0, 0, 0, 0]),
            Some([0usize, 1, 2].into_iter().collect())
        );
        assert!(b.set(255));
        assert_eq!(b.words()[7], 1);
        assert!(!b.set(256));
        assert!(!b.get(256));
        assert_eq!(b.count(), 5);
        let mut it = b.iter();
        assert_eq!(it.len(), 5);
        assert_eq!(it.next(), Some(0));
        assert_eq!(b.iter().last(), Some(255));
    }

    #[test]
    fn first_n_and_fits() {
        assert!(Bitmap256::first_n(0).is_empty());
        assert_eq!(Bitmap256::first_n(1).words()[0], 0x8000_0000);
        assert_eq!(Bitmap256::first_n(32).words()[0], u32::MAX);
        assert_eq!(Bitmap256::first_n(33).words()[1], 0x8000_0000);
        assert_eq!(Bitmap256::first_n(255).count(), 255);
        assert_eq!(Bitmap256::first_n(1000).count(), 256);
        let mut b = Bitmap256::first_n(10);
        assert!(b.fits(10));
        assert!(!b.fits(9));
        b.truncate(4);
        assert_eq!(b, Bitmap256::first_n(4));
        assert_eq!(b.rank(2), 2);
        assert_eq!(b.nth_set(3), Some(3));
        assert_eq!(b.nth_set(4), None);
        assert!(b.is_subset_of(&Bitmap256::first_n(5)));
        assert!(!Bitmap256::first_n(5).is_subset_of(&b));
    }

    #[test]
    fn bad_lengths() {
        assert_eq!(Bitmap256::from_be_bytes(&[0; 3]), None);
        assert_eq!(Bitmap256::from_be_bytes(&[0; 36]), None);
        assert!(!Bitmap256::EMPTY.write_be_bytes(&mut [0u8; 5]));
        assert_eq!(words_for(0), 0);
        assert_eq!(words_for(1), 1);
        assert_eq!(words_for(32), 1);
        assert_eq!(words_for(33), 2);
        assert_eq!(words_for(255), 8);
    }
}
