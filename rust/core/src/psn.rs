//! 24-bit packet sequence numbers (PSNs) with serial-number arithmetic.
//!
//! RoCEv2 numbers packets with a 24-bit PSN that wraps from `0xFF_FFFF` to `0`.
//! [`Psn`] is the one PSN type used throughout crem-core: a newtype over `u32`
//! that always holds a value below 2^24.
//!
//! Ordering follows serial number arithmetic (RFC 1982) with `SERIAL_BITS = 24`:
//! `a` is *before* `b` when `b` can be reached from `a` by moving forward fewer
//! than 2^23 steps. Two PSNs exactly 2^23 apart are neither before nor after each
//! other ([`Psn::serial_cmp`] returns `None`). Because that relation is not a total
//! order, `Psn` deliberately does not implement `PartialOrd`/`Ord`; use
//! [`Psn::is_before`], [`Psn::is_after`], [`Psn::serial_cmp`] or [`Psn::diff`].
//!
//! [`PsnRange`] is a run of `count` consecutive PSNs starting at `start`, which
//! may wrap around zero.

use core::cmp::Ordering;
use core::fmt;
use core::ops::{Add, AddAssign, Sub, SubAssign};

/// A 24-bit packet sequence number. The inner value is always `< 2^24`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Psn(u32);

impl Psn {
    /// Number of bits of a PSN.
    pub const BITS: u32 = 24;
    /// Number of distinct PSNs, 2^24.
    pub const MODULUS: u32 = 1 << 24;
    /// Mask of the valid bits, `0xFF_FFFF`.
    pub const MASK: u32 = Self::MODULUS - 1;
    /// Half of the serial space, 2^23: the largest forward distance that is not
    /// "after" in serial arithmetic is `HALF - 1`.
    pub const HALF: u32 = 1 << 23;
    /// PSN zero.
    pub const ZERO: Psn = Psn(0);
    /// The largest PSN, `0xFF_FFFF`.
    pub const MAX: Psn = Psn(Self::MASK);

    /// Creates a PSN from the low 24 bits of `v` (higher bits are discarded).
    #[inline]
    pub const fn new(v: u32) -> Psn {
        Psn(v & Self::MASK)
    }

    /// Creates a PSN, or `None` if `v` does not fit in 24 bits.
    #[inline]
    pub const fn new_checked(v: u32) -> Option<Psn> {
        if v <= Self::MASK {
            Some(Psn(v))
        } else {
            None
        }
    }

    /// The numeric value, `< 2^24`.
    #[inline]
    pub const fn value(self) -> u32 {
        self.0
    }

    /// Decodes a PSN from three big-endian octets.
    #[inline]
    pub const fn from_be_bytes(b: [u8; 3]) -> Psn {
        Psn(((b[0] as u32) << 16) | ((b[1] as u32) << 8) | (b[2] as u32))
    }

    /// Encodes the PSN as three big-endian octets.
    #[inline]
    pub const fn to_be_bytes(self) -> [u8; 3] {
        [(self.0 >> 16) as u8, (self.0 >> 8) as u8, self.0 as u8]
    }

    /// `self + n` modulo 2^24.
    #[inline]
    pub const fn wrapping_add(self, n: u32) -> Psn {
        Psn(self.0.wrapping_add(n) & Self::MASK)
    }

    /// `self - n` modulo 2^24.
    #[inline]
    pub const fn wrapping_sub(self, n: u32) -> Psn {
        Psn(self.0.wrapping_sub(n) & Self::MASK)
    }

    /// `self + d` modulo 2^24 for a signed step `d`.
    #[inline]
    pub const fn wrapping_add_signed(self, d: i32) -> Psn {
        Psn(self.0.wrapping_add(d as u32) & Self::MASK)
    }

    /// The PSN following this one.
    #[inline]
    pub const fn next(self) -> Psn {
        self.wrapping_add(1)
    }

    /// The PSN preceding this one.
    #[inline]
    pub const fn prev(self) -> Psn {
        self.wrapping_sub(1)
    }

    /// Forward distance from `self` to `to`: the number of steps `n` in
    /// `0..2^24` such that `self + n == to` (mod 2^24).
    #[inline]
    pub const fn forward_distance(self, to: Psn) -> u32 {
        to.0.wrapping_sub(self.0) & Self::MASK
    }

    /// Signed serial difference `self - other`, in `-2^23 ..= 2^23 - 1`.
    ///
    /// Positive when `self` is after `other`, negative when before, zero when
    /// equal. For PSNs exactly 2^23 apart the result is `-2^23` in both
    /// directions (serial arithmetic leaves that case undefined).
    #[inline]
    pub const fn diff(self, other: Psn) -> i32 {
        let d = self.0.wrapping_sub(other.0) & Self::MASK;
        // Sign-extend the 24-bit two's-complement value.
        ((d << 8) as i32) >> 8
    }

    /// Serial-number comparison. `None` when the PSNs are exactly 2^23 apart,
    /// where RFC 1982 leaves the order undefined.
    #[inline]
    pub const fn serial_cmp(self, other: Psn) -> Option<Ordering> {
        let fwd = self.forward_distance(other);
        if fwd == 0 {
            Some(Ordering::Equal)
        } else if fwd < Self::HALF {
            Some(Ordering::Less)
        } else if fwd > Self::HALF {
            Some(Ordering::Greater)
        } else {
            None
        }
    }

    /// `self` strictly precedes `other` in serial order.
    #[inline]
    pub const fn is_before(self, other: Psn) -> bool {
        let fwd = self.forward_distance(other);
        fwd != 0 && fwd < Self::HALF
    }

    /// `self` strictly follows `other` in serial order.
    #[inline]
    pub const fn is_after(self, other: Psn) -> bool {
        other.is_before(self)
    }

    /// `self` precedes or equals `other`.
    #[inline]
    pub const fn is_before_or_eq(self, other: Psn) -> bool {
        self.forward_distance(other) < Self::HALF
    }

    /// `self` follows or equals `other`.
    #[inline]
    pub const fn is_after_or_eq(self, other: Psn) -> bool {
        other.is_before_or_eq(self)
    }

    /// The later of two PSNs in serial order (`self` if incomparable or equal).
    #[inline]
    pub const fn serial_max(self, other: Psn) -> Psn {
        if other.is_after(self) {
            other
        } else {
            self
        }
    }

    /// The earlier of two PSNs in serial order (`self` if incomparable or equal).
    #[inline]
    pub const fn serial_min(self, other: Psn) -> Psn {
        if other.is_before(self) {
            other
        } else {
            self
        }
    }
}

impl Add<u32> for Psn {
    type Output = Psn;
    #[inline]
    fn add(self, n: u32) -> Psn {
        self.wrapping_add(n)
    }
}

impl AddAssign<u32> for Psn {
    #[inline]
    fn add_assign(&mut self, n: u32) {
        *self = self.wrapping_add(n);
    }
}

impl Sub<u32> for Psn {
    type Output = Psn;
    #[inline]
    fn sub(self, n: u32) -> Psn {
        self.wrapping_sub(n)
    }
}

impl SubAssign<u32> for Psn {
    #[inline]
    fn sub_assign(&mut self, n: u32) {
        *self = self.wrapping_sub(n);
    }
}

impl From<Psn> for u32 {
    #[inline]
    fn from(p: Psn) -> u32 {
        p.0
    }
}

impl fmt::Debug for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Psn({:#08x})", self.0)
    }
}

impl fmt::Display for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// `count` consecutive PSNs starting at `start`, possibly wrapping past
/// `0xFF_FFFF`. A count of 2^24 or more covers every PSN; iteration still
/// yields exactly `count` items (repeating after 2^24).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct PsnRange {
    /// First PSN of the range.
    pub start: Psn,
    /// Number of PSNs in the range.
    pub count: u32,
}

impl PsnRange {
    /// A range of `count` PSNs starting at `start`.
    #[inline]
    pub const fn new(start: Psn, count: u32) -> PsnRange {
        PsnRange { start, count }
    }

    /// The range `[first, last]` inclusive, following serial order forward from
    /// `first` (so `from_inclusive(x, x)` has one element).
    #[inline]
    pub const fn from_inclusive(first: Psn, last: Psn) -> PsnRange {
        PsnRange {
            start: first,
            count: first.forward_distance(last) + 1,
        }
    }

    /// No PSN in the range.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Number of PSNs.
    #[inline]
    pub const fn len(&self) -> u32 {
        self.count
    }

    /// The PSN just past the range (`start + count`, modulo 2^24).
    #[inline]
    pub const fn end(&self) -> Psn {
        self.start.wrapping_add(self.count)
    }

    /// The last PSN of the range, or `None` when empty.
    #[inline]
    pub const fn last(&self) -> Option<Psn> {
        if self.count == 0 {
            None
        } else {
            Some(self.start.wrapping_add(self.count - 1))
        }
    }

    /// `p` lies in the range.
    #[inline]
    pub const fn contains(&self, p: Psn) -> bool {
        self.start.forward_distance(p) < self.count
    }

    /// Offset of `p` from `start` if `p` lies in the range.
    #[inline]
    pub const fn offset_of(&self, p: Psn) -> Option<u32> {
        let d = self.start.forward_distance(p);
        if d < self.count {
            Some(d)
        } else {
            None
        }
    }

    /// Iterates over the PSNs of the range in order.
    #[inline]
    pub const fn iter(&self) -> PsnRangeIter {
        PsnRangeIter {
            next: self.start,
            remaining: self.count,
        }
    }
}

impl IntoIterator for PsnRange {
    type Item = Psn;
    type IntoIter = PsnRangeIter;
    #[inline]
    fn into_iter(self) -> PsnRangeIter {
        self.iter()
    }
}

impl IntoIterator for &PsnRange {
    type Item = Psn;
    type IntoIter = PsnRangeIter;
    #[inline]
    fn into_iter(self) -> PsnRangeIter {
        self.iter()
    }
}

/// Iterator over the PSNs of a [`PsnRange`].
#[derive(Clone, Debug)]
pub struct PsnRangeIter {
    next: Psn,
    remaining: u32,
}

impl Iterator for PsnRangeIter {
    type Item = Psn;

    #[inline]
    fn next(&mut self) -> Option<Psn> {
        if self.remaining == 0 {
            return None;
        }
        let p = self.next;
        self.next = p.next();
        self.remaining -= 1;
        Some(p)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.remaining as usize;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for PsnRangeIter {
    #[inline]
    fn next_back(&mut self) -> Option<Psn> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        Some(self.next.wrapping_add(self.remaining))
    }
}

impl ExactSizeIterator for PsnRangeIter {}

impl core::iter::FusedIterator for PsnRangeIter {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_and_bytes() {
        assert_eq!(Psn::new(0x1_23_45_67).value(), 0x23_45_67);
        assert_eq!(Psn::new_checked(0x100_0000), None);
        assert_eq!(Psn::new_checked(0xFF_FFFF), Some(Psn::MAX));
        assert_eq!(Psn::new(0x12_34_56).to_be_bytes(), [0x12, 0x34, 0x56]);
        assert_eq!(Psn::from_be_bytes([0xab, 0xcd, 0xef]).value(), 0xab_cd_ef);
    }

    #[test]
    fn wrap_arithmetic() {
        assert_eq!(Psn::MAX + 1, Psn::ZERO);
        assert_eq!(Psn::ZERO - 1, Psn::MAX);
        assert_eq!(Psn::new(5) - 10, Psn::new(0xFF_FFFB));
        assert_eq!(Psn::MAX.forward_distance(Psn::new(2)), 3);
        assert_eq!(Psn::new(2).forward_distance(Psn::MAX), 0xFF_FFFD);
        assert_eq!(Psn::new(2).diff(Psn::MAX), 3);
        assert_eq!(Psn::MAX.diff(Psn::new(2)), -3);
        assert_eq!(Psn::new(7).wrapping_add_signed(-8), Psn::MAX);
        let mut p = Psn::MAX;
        p += 2;
        assert_eq!(p, Psn::new(1));
        p -= 2;
        assert_eq!(p, Psn::MAX);
    }

    #[test]
    fn serial_order() {
        let a = Psn::new(0xFF_FFF0);
        let b = Psn::new(0x10);
        assert!(a.is_before(b));
        assert!(b.is_after(a));
        assert!(!a.is_after(b));
        assert!(a.is_before_or_eq(a));
        assert!(!a.is_before(a));
        assert_eq!(a.serial_cmp(b), Some(Ordering::Less));
        assert_eq!(a.serial_max(b), b);
        assert_eq!(a.serial_min(b), a);
        // exactly half apart: undefined
        let h = Psn::new(Psn::HALF);
        assert_eq!(Psn::ZERO.serial_cmp(h), None);
        assert!(!Psn::ZERO.is_before(h) && !Psn::ZERO.is_after(h));
        assert_eq!(Psn::ZERO.diff(h), -(Psn::HALF as i32));
        assert_eq!(h.diff(Psn::ZERO), -(Psn::HALF as i32));
        // just under half
        let h1 = Psn::new(Psn::HALF - 1);
        assert!(Psn::ZERO.is_before(h1));
        assert_eq!(h1.diff(Psn::ZERO), (Psn::HALF - 1) as i32);
    }

    #[test]
    fn ranges() {
        let r = PsnRange::new(Psn::new(0xFF_FFFE), 4);
        assert!(r.contains(Psn::MAX));
        assert!(r.contains(Psn::new(1)));
        assert!(!r.contains(Psn::new(2)));
        assert!(!r.contains(Psn::new(0xFF_FFFD)));
        assert_eq!(r.end(), Psn::new(2));
        assert_eq!(r.last(), Some(Psn::new(1)));
        assert_eq!(r.offset_of(Psn::new(0)), Some(2));
        let mut it = r.iter();
        assert_eq!(it.len(), 4);
        assert_eq!(it.next(), Some(Psn::new(0xFF_FFFE)));
        assert_eq!(it.next_back(), Some(Psn::new(1)));
        assert_eq!(it.next(), Some(Psn::MAX));
        assert_eq!(it.next(), Some(Psn::ZERO));
        assert_eq!(it.next(), None);
        assert_eq!(it.next_back(), None);
        let e = PsnRange::new(Psn::new(3), 0);
        assert!(e.is_empty());
        assert_eq!(e.last(), None);
        assert!(!e.contains(Psn::new(3)));
        assert_eq!(PsnRange::from_inclusive(Psn::MAX, Psn::new(1)).count, 3);
        let all = PsnRange::new(Psn::new(9), u32::MAX);
        assert!(all.contains(Psn::new(8)));
    }
}
