//! The per-port limit of a reporter: a token bucket in integer nanoseconds.

use super::super::engine::Nanos;

/// Credit units per token: a token is earned in 10^9 / rate ns, so counting
/// credit in 10^-9 tokens makes every nanosecond earn exactly `rate` units.
const UNIT: u64 = 1_000_000_000;

/// At most `rate_per_s` reports per second on average, and `burst` at once.
///
/// The bucket starts full, as the CSF's repair bucket does: the first burst
/// of drops after a quiet period is what a reporter exists to tell. Ruling:
/// a burst of 0 is taken as 1 (a bucket that never passes anything is
/// "reporting off", which the caller expresses by not reporting); a rate of
/// 0 lets the initial burst through and nothing after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    rate_per_s: u32,
    burst: u32,
    /// Credit in 10^-9 tokens, at most `burst · UNIT` (< 2^63).
    credit: u64,
    /// Time of the last refill; never goes back.
    last: Nanos,
}

impl TokenBucket {
    /// A full bucket.
    pub const fn new(rate_per_s: u32, burst: u32) -> TokenBucket {
        let burst = if burst == 0 { 1 } else { burst };
        TokenBucket {
            rate_per_s,
            burst,
            credit: (burst as u64).saturating_mul(UNIT),
            last: 0,
        }
    }

    /// Changes the limit, keeping the credit (capped at the new burst).
    pub fn set(&mut self, rate_per_s: u32, burst: u32) {
        self.rate_per_s = rate_per_s;
        self.burst = burst.max(1);
        self.credit = self.credit.min(self.cap());
    }

    /// Average rate, reports per second.
    pub const fn rate_per_s(&self) -> u32 {
        self.rate_per_s
    }

    /// Largest burst.
    pub const fn burst(&self) -> u32 {
        self.burst
    }

    fn cap(&self) -> u64 {
        u64::from(self.burst).saturating_mul(UNIT)
    }

    fn refill(&mut self, now: Nanos) {
        // A clock that steps back earns nothing and does not move `last`
        // back (which would earn the same time twice).
        let elapsed = now.saturating_sub(self.last);
        self.last = self.last.max(now);
        let earned = elapsed.saturating_mul(u64::from(self.rate_per_s));
        self.credit = self.credit.saturating_add(earned).min(self.cap());
    }

    /// Takes one token if there is one.
    pub fn take(&mut self, now: Nanos) -> bool {
        self.refill(now);
        match self.credit.checked_sub(UNIT) {
            Some(c) => {
                self.credit = c;
                true
            }
            None => false,
        }
    }

    /// Whole tokens available at `now` (for monitoring and tests).
    pub fn available(&mut self, now: Nanos) -> u32 {
        self.refill(now);
        u32::try_from(self.credit / UNIT).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_burst_exact() {
        let mut b = TokenBucket::new(10_000, 3); // one token per 100 µs
        assert!(b.take(0) && b.take(0) && b.take(0));
        assert!(!b.take(0));
        assert!(!b.take(99_999));
        assert!(b.take(100_000));
        assert!(!b.take(100_000));
        // A long pause earns the burst, no more.
        assert_eq!(b.available(10_000_000_000), 3);
        // Over a second: burst + rate.
        let mut b = TokenBucket::new(1000, 5);
        let passed = (0..2_000_000u64)
            .step_by(100)
            .map(|t| t * 500) // 0 .. 1 s in 50 µs steps
            .filter(|&t| b.take(t))
            .count();
        assert_eq!(passed, 5 + 1000 - 1);
    }

    #[test]
    fn clock_back_and_edge_values() {
        let mut b = TokenBucket::new(1, 1);
        assert!(b.take(5_000_000_000));
        assert!(!b.take(1)); // stepped back: nothing earned
        assert!(!b.take(5_999_999_999));
        assert!(b.take(6_000_000_000));
        let mut z = TokenBucket::new(0, 0);
        assert_eq!(z.burst(), 1);
        assert!(z.take(0));
        assert!(!z.take(u64::MAX));
        let mut m = TokenBucket::new(u32::MAX, u32::MAX);
        assert!(m.take(u64::MAX));
        assert_eq!(m.available(u64::MAX), u32::MAX - 1);
        m.set(1, 2);
        assert_eq!(m.available(u64::MAX), 2);
    }
}
