//! [`Prob`]: a non-negative real number in integer arithmetic, for the
//! binomial tail that chooses m.
//!
//! The kernel must not touch the FPU in these paths, and plain fixed point is
//! not enough: `(1 - p)^n` for n up to 510 and p up to 20 % is about 2^-164,
//! far below any fixed-point scale that still leaves room for products in
//! u128. So a value is kept as a 64-bit mantissa with a separate binary
//! exponent (`value = mantissa * 2^exponent`, mantissa normalized to
//! `[2^63, 2^64)`), i.e. binary-scaled fixed point whose scale travels with the
//! value. All operations are u64/u128 integer arithmetic and truncate (round
//! toward zero), so every operation has a relative error below 2^-63; a chain
//! of j operations is off by less than j * 2^-63 relative.
//!
//! Nothing here panics: shifts are range-checked and exponent arithmetic
//! saturates (real computations stay within ±2^16 of the exponent range).
//!
//! No u128 *division* either: the kernel does not link `__udivti3`, the helper
//! LLVM calls for it on x86-64. [`div_u128_by_u64`] divides with 64-bit
//! operations instead (u128 multiplication, shifts and comparisons are
//! inlined and fine).

use core::cmp::Ordering;
use core::ops::{Add, Div, Mul};

/// A non-negative real number: probabilities, and the ratios used while
/// computing them (which may exceed 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Prob {
    /// Normalized mantissa (top bit set), or 0 for the value zero.
    mant: u64,
    /// Binary exponent; 0 when `mant` is 0.
    exp: i32,
}

/// `floor(n / d)` (0 when `d` is 0) using only 64-bit divisions, because
/// the kernel has no `__udivti3`. Exact for all inputs.
pub fn div_u128_by_u64(n: u128, d: u64) -> u128 {
    if d == 0 {
        return 0;
    }
    let hi = (n >> 64) as u64;
    let q_hi = hi.checked_div(d).unwrap_or(0);
    let q_lo = div_128_64(hi.checked_rem(d).unwrap_or(0), n as u64, d);
    ((q_hi as u128) << 64) | q_lo as u128
}

/// `(u1 * 2^64 + u0) / v` for `u1 < v` (so the quotient fits in 64 bits):
/// Knuth's algorithm D with 32-bit digits ("divlu", Hacker's Delight 9-3).
/// Arithmetic wraps where the algorithm relies on exact modular results;
/// every product is bounded as commented, so nothing overflows unintentionally.
fn div_128_64(u1: u64, u0: u64, v: u64) -> u64 {
    const B: u64 = 1 << 32;
    const LO: u64 = B - 1;
    if v == 0 {
        return 0;
    }
    // Normalize so the divisor's top bit is set (s in 0..=63).
    let s = v.leading_zeros();
    let v = v.wrapping_shl(s);
    let (vn1, vn0) = (v >> 32, v & LO); // vn1 >= 2^31
    let un32 = u1.wrapping_shl(s) | u0.checked_shr(64u32.wrapping_sub(s)).unwrap_or(0);
    let un10 = u0.wrapping_shl(s);
    let (un1, un0) = (un10 >> 32, un10 & LO);
    // First quotient digit; corrected at most twice.
    let mut q1 = un32.checked_div(vn1).unwrap_or(0);
    let mut rhat = un32.checked_rem(vn1).unwrap_or(0);
    // rhat < B whenever the condition is evaluated, so (rhat << 32) | un1 is
    // exact; the product is only compared when q1 < B (no wrap).
    while q1 >= B || q1.wrapping_mul(vn0) > ((rhat << 32) | un1) {
        q1 = q1.wrapping_sub(1);
        rhat = rhat.wrapping_add(vn1);
        if rhat >= B {
            break;
        }
    }
    // The partial remainder is < v < 2^64: modular arithmetic is exact.
    let un21 = un32
        .wrapping_mul(B)
        .wrapping_add(un1)
        .wrapping_sub(q1.wrapping_mul(v));
    let mut q0 = un21.checked_div(vn1).unwrap_or(0);
    let mut rhat = un21.checked_rem(vn1).unwrap_or(0);
    while q0 >= B || q0.wrapping_mul(vn0) > ((rhat << 32) | un0) {
        q0 = q0.wrapping_sub(1);
        rhat = rhat.wrapping_add(vn1);
        if rhat >= B {
            break;
        }
    }
    (q1 << 32) | q0
}

/// Top bit of a normalized mantissa.
const TOP: u64 = 1 << 63;

impl Prob {
    /// Zero.
    pub const ZERO: Prob = Prob { mant: 0, exp: 0 };
    /// One.
    pub const ONE: Prob = Prob {
        mant: TOP,
        exp: -63,
    };

    /// `v * 2^exp`, normalized (truncating the low bits).
    fn from_u128(v: u128, exp: i32) -> Prob {
        if v == 0 {
            return Prob::ZERO;
        }
        let lz = v.leading_zeros(); // 0..=127
        if lz >= 64 {
            let s = lz.wrapping_sub(64);
            Prob {
                mant: v.checked_shl(s).unwrap_or(0) as u64,
                exp: exp.saturating_sub(s as i32),
            }
        } else {
            let s = 64u32.wrapping_sub(lz);
            Prob {
                mant: v.checked_shr(s).unwrap_or(0) as u64,
                exp: exp.saturating_add(s as i32),
            }
        }
    }

    /// The integer `n`.
    pub fn from_int(n: u64) -> Prob {
        Prob::from_u128(n as u128, 0)
    }

    /// `num / den`, with a full 64-bit mantissa whatever the magnitudes.
    /// `den == 0` gives zero (an empty sample carries no probability).
    pub fn from_ratio(num: u64, den: u64) -> Prob {
        if num == 0 || den == 0 {
            return Prob::ZERO;
        }
        // Shift the numerator to the top of a u128 so that the quotient keeps
        // at least 64 significant bits (den < 2^64).
        let n = num as u128;
        let s = n.leading_zeros(); // >= 64
        let q = div_u128_by_u64(n.checked_shl(s).unwrap_or(0), den);
        Prob::from_u128(q, -(s as i32))
    }

    /// `ppb / 10^9` (parts per billion).
    pub fn from_ppb(ppb: u64) -> Prob {
        Prob::from_ratio(ppb, 1_000_000_000)
    }

    /// Whether the value is zero.
    pub const fn is_zero(&self) -> bool {
        self.mant == 0
    }

    /// Mantissa: `value = mantissa() * 2^exponent()` (for tests and
    /// diagnostics; never converted to a float in the crate).
    pub const fn mantissa(&self) -> u64 {
        self.mant
    }

    /// Binary exponent, see [`Prob::mantissa`].
    pub const fn exponent(&self) -> i32 {
        self.exp
    }

    /// Product (also `*`).
    pub fn product(self, other: Prob) -> Prob {
        if self.is_zero() || other.is_zero() {
            return Prob::ZERO;
        }
        Prob::from_u128(
            (self.mant as u128).wrapping_mul(other.mant as u128),
            self.exp.saturating_add(other.exp),
        )
    }

    /// Product with a non-negative integer.
    pub fn mul_int(self, n: u64) -> Prob {
        if self.is_zero() {
            return Prob::ZERO;
        }
        Prob::from_u128((self.mant as u128).wrapping_mul(n as u128), self.exp)
    }

    /// Quotient by a non-negative integer; division by zero gives zero.
    pub fn div_int(self, d: u64) -> Prob {
        if self.is_zero() || d == 0 {
            return Prob::ZERO;
        }
        Prob::from_u128(
            div_u128_by_u64((self.mant as u128) << 64, d),
            self.exp.saturating_sub(64),
        )
    }

    /// Quotient (also `/`); division by zero gives zero.
    pub fn quotient(self, other: Prob) -> Prob {
        if self.is_zero() || other.is_zero() {
            return Prob::ZERO;
        }
        // mant << 64 < 2^128 and other.mant >= 2^63: the quotient has 64 or 65
        // significant bits.
        Prob::from_u128(
            div_u128_by_u64((self.mant as u128) << 64, other.mant),
            self.exp.saturating_sub(64).saturating_sub(other.exp),
        )
    }

    /// Both mantissas as u128 with 63 guard bits, aligned to the larger
    /// exponent: `(big << 63, small << 63 >> shift, exponent)`.
    fn aligned(big: Prob, small: Prob) -> (u128, u128, i32) {
        let shift = (big.exp as i64).saturating_sub(small.exp as i64);
        let a = (big.mant as u128) << 63;
        let b = if small.is_zero() || shift >= 127 {
            0
        } else {
            ((small.mant as u128) << 63)
                .checked_shr(shift.max(0) as u32)
                .unwrap_or(0)
        };
        (a, b, big.exp.saturating_sub(63))
    }

    /// Sum (also `+`).
    pub fn sum(self, other: Prob) -> Prob {
        let (big, small) = if self >= other {
            (self, other)
        } else {
            (other, self)
        };
        if small.is_zero() {
            return big;
        }
        let (a, b, e) = Prob::aligned(big, small);
        // a < 2^127 and b <= a, so the sum fits.
        Prob::from_u128(a.saturating_add(b), e)
    }

    /// Difference, saturating at zero.
    pub fn saturating_sub(self, other: Prob) -> Prob {
        if other >= self {
            return Prob::ZERO;
        }
        if other.is_zero() {
            return self;
        }
        let (a, b, e) = Prob::aligned(self, other);
        Prob::from_u128(a.saturating_sub(b), e)
    }

    /// `1 - self`, saturating at zero.
    pub fn complement(self) -> Prob {
        Prob::ONE.saturating_sub(self)
    }

    /// `self^n` by square and multiply.
    pub fn pow(self, mut n: u32) -> Prob {
        let mut acc = Prob::ONE;
        let mut base = self;
        while n > 0 {
            if n & 1 == 1 {
                acc = acc * base;
            }
            n >>= 1;
            if n > 0 {
                base = base * base;
            }
        }
        acc
    }

    /// `floor(self * scale)`, saturating at `u64::MAX`.
    pub fn scaled_floor(self, scale: u64) -> u64 {
        let v = self.mul_int(scale);
        if v.is_zero() {
            return 0;
        }
        if v.exp >= 1 {
            return u64::MAX;
        }
        match v.exp.checked_neg().and_then(|s| u32::try_from(s).ok()) {
            Some(s) => v.mant.checked_shr(s).unwrap_or(0),
            None => 0,
        }
    }

    /// The value in parts per billion (rounded to nearest, saturating).
    pub fn to_ppb(self) -> u64 {
        // floor((2 x 10^9 + 1) / 2), keeping saturation.
        match (self.mul_int(2_000_000_000) + Prob::ONE).scaled_floor(1) {
            u64::MAX => u64::MAX,
            v => v / 2,
        }
    }
}

impl Mul for Prob {
    type Output = Prob;
    fn mul(self, rhs: Prob) -> Prob {
        self.product(rhs)
    }
}

impl Div for Prob {
    type Output = Prob;
    fn div(self, rhs: Prob) -> Prob {
        self.quotient(rhs)
    }
}

impl Add for Prob {
    type Output = Prob;
    fn add(self, rhs: Prob) -> Prob {
        self.sum(rhs)
    }
}

impl PartialOrd for Prob {
    fn partial_cmp(&self, other: &Prob) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Prob {
    fn cmp(&self, other: &Prob) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            // Normalized mantissas: the exponent decides, then the mantissa.
            (false, false) => self.exp.cmp(&other.exp).then(self.mant.cmp(&other.mant)),
        }
    }
}
