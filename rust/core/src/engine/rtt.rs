//! Round-trip time estimation for one side of a flow: RFC 6298's smoothing
//! (SRTT, RTTVAR; alpha = 1/8, beta = 1/4) in integer nanoseconds, plus
//! the minimum RTT seen (the draft bounds the hold time by it).
//!
//! The estimator only smooths: which exchanges give samples, and Karn's rule
//! (no sample from an exchange whose answer cannot be matched to one
//! transmission), are the flows' business (`flow/sender.rs`,
//! `crf/probe.rs`).
//!
//! SRTT and RTTVAR are kept scaled (8·SRTT, 4·RTTVAR), as BSD and Linux TCP
//! do, so that the divisions by 8 and 4 lose nothing that accumulates: a
//! constant RTT R gives SRTT = R exactly from the first sample on, and
//! brings any earlier SRTT to R, the error shrinking by 7/8 per sample.

use super::{Nanos, MS, SEC};

/// Smallest RTT taken (samples below are raised to it): 10 µs, about the
/// round trip of two hosts on one switch and below what the timers built
/// on the SRTT resolve (the CRF's shortest timeout is 100 µs). A zero or
/// tiny sample (both ends in one clock tick) must not make those timers
/// spin.
pub const MIN_RTT: Nanos = 10_000;

/// Largest RTT taken (samples above are lowered to it): 4 s, twice a
/// geostationary double hop with deep queues. Karn's rule bounds the
/// samples anyway (an exchange answered only after its retransmission
/// timeout gives none); this keeps a stale match from inflating every
/// per-SRTT timer without bound.
pub const MAX_RTT: Nanos = 4 * SEC;

/// SRTT before the first sample when the caller has no hint (a hint of 0):
/// the multi-millisecond paths CREM is for.
pub const DEFAULT_RTT: Nanos = 10 * MS;

/// Clamps `rtt` into [`MIN_RTT`, `MAX_RTT`].
pub fn clamp_rtt(rtt: Nanos) -> Nanos {
    rtt.clamp(MIN_RTT, MAX_RTT)
}

/// SRTT, RTTVAR and the minimum RTT of one flow side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    /// 8 · SRTT.
    srtt8: Nanos,
    /// 4 · RTTVAR.
    rttvar4: Nanos,
    min_rtt: Nanos,
    samples: u64,
}

impl RttEstimator {
    /// An estimator that reports `hint` (clamped; [`DEFAULT_RTT`] for 0) as
    /// SRTT and minimum RTT until the first sample, which replaces it
    /// (RFC 6298 2.2: SRTT = R, RTTVAR = R/2).
    pub const fn new(hint: Nanos) -> RttEstimator {
        let r = if hint == 0 {
            DEFAULT_RTT
        } else if hint < MIN_RTT {
            MIN_RTT
        } else if hint > MAX_RTT {
            MAX_RTT
        } else {
            hint
        };
        RttEstimator {
            srtt8: r * 8,
            rttvar4: r * 2,
            min_rtt: r,
            samples: 0,
        }
    }

    /// Takes one RTT sample (clamped to [`MIN_RTT`, `MAX_RTT`]).
    pub fn sample(&mut self, rtt: Nanos) {
        let r = clamp_rtt(rtt);
        if self.samples == 0 {
            self.srtt8 = r.saturating_mul(8);
            self.rttvar4 = r.saturating_mul(2);
            self.min_rtt = r;
        } else {
            // RFC 6298 2.3: RTTVAR first, with the SRTT before this sample.
            let err = self.srtt().abs_diff(r);
            self.rttvar4 = self
                .rttvar4
                .saturating_sub(self.rttvar4 / 4)
                .saturating_add(err);
            self.srtt8 = self.srtt8.saturating_sub(self.srtt8 / 8).saturating_add(r);
            self.min_rtt = self.min_rtt.min(r);
        }
        self.samples = self.samples.saturating_add(1);
    }

    /// An upper bound on the RTT, from an exchange answered only after it
    /// was sent again (from its first transmission to the first answer:
    /// exact if that first copy got through, larger if a later copy was
    /// the one answered). Before the first sample it replaces the hint,
    /// min RTT included; it is no sample, so the first sample replaces it
    /// in turn; after one it is ignored.
    pub fn seed(&mut self, upper: Nanos) {
        if self.samples == 0 {
            let r = clamp_rtt(upper);
            self.srtt8 = r.saturating_mul(8);
            self.rttvar4 = r.saturating_mul(2);
            self.min_rtt = r;
        }
    }

    /// Smoothed RTT (the hint until the first sample). Always within
    /// [`MIN_RTT`, `MAX_RTT`] and at least [`RttEstimator::min_rtt`]: it is
    /// a weighted mean of clamped samples.
    pub fn srtt(&self) -> Nanos {
        self.srtt8 / 8
    }

    /// RTT variation (half the hint until the first sample).
    pub fn rttvar(&self) -> Nanos {
        self.rttvar4 / 4
    }

    /// Smallest sample so far (the hint until the first sample).
    pub fn min_rtt(&self) -> Nanos {
        self.min_rtt
    }

    /// Samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_seed_replaces_the_hint_and_gives_way_to_the_first_sample() {
        let mut e = RttEstimator::new(10 * MS);
        e.seed(63 * MS);
        assert_eq!((e.srtt(), e.min_rtt(), e.samples()), (63 * MS, 63 * MS, 0));
        e.sample(50 * MS);
        assert_eq!(
            (e.srtt(), e.rttvar(), e.min_rtt()),
            (50 * MS, 25 * MS, 50 * MS)
        );
        e.seed(MS);
        assert_eq!((e.srtt(), e.min_rtt(), e.samples()), (50 * MS, 50 * MS, 1));
        e.seed(0);
        assert_eq!(e.srtt(), 50 * MS);
        let mut f = RttEstimator::new(10 * MS);
        f.seed(Nanos::MAX);
        assert_eq!(f.srtt(), MAX_RTT);
    }

    #[test]
    fn hint_until_the_first_sample_then_rfc6298() {
        let mut e = RttEstimator::new(10 * MS);
        assert_eq!(
            (e.srtt(), e.rttvar(), e.min_rtt()),
            (10 * MS, 5 * MS, 10 * MS)
        );
        assert_eq!(e.samples(), 0);
        // The first sample replaces the hint, min RTT included.
        e.sample(40 * MS);
        assert_eq!(
            (e.srtt(), e.rttvar(), e.min_rtt()),
            (40 * MS, 20 * MS, 40 * MS)
        );
        // RTTVAR = 3/4·20 + 1/4·|40 − 24| = 19; SRTT = 7/8·40 + 1/8·24 = 38.
        e.sample(24 * MS);
        assert_eq!(
            (e.srtt(), e.rttvar(), e.min_rtt()),
            (38 * MS, 19 * MS, 24 * MS)
        );
        assert_eq!(e.samples(), 2);
    }

    #[test]
    fn hints_and_samples_are_clamped() {
        assert_eq!(RttEstimator::new(0).srtt(), DEFAULT_RTT);
        assert_eq!(RttEstimator::new(1).srtt(), MIN_RTT);
        assert_eq!(RttEstimator::new(u64::MAX).srtt(), MAX_RTT);
        let mut e = RttEstimator::new(MS);
        e.sample(0);
        assert_eq!((e.srtt(), e.min_rtt()), (MIN_RTT, MIN_RTT));
        e.sample(u64::MAX);
        assert!(e.srtt() <= MAX_RTT);
        assert_eq!(e.min_rtt(), MIN_RTT);
    }

    #[test]
    fn constant_rtt_is_exact_and_jitter_shows_in_rttvar() {
        let mut e = RttEstimator::new(10 * MS);
        for _ in 0..20 {
            e.sample(1_234_567);
        }
        assert_eq!(e.srtt(), 1_234_567);
        assert!(e.rttvar() < 1_234_567 / 100);
        let mut j = RttEstimator::new(10 * MS);
        for i in 0..40u64 {
            j.sample(if i % 2 == 0 { 9 * MS } else { 11 * MS });
        }
        assert!(j.srtt().abs_diff(10 * MS) <= MS / 4, "{}", j.srtt());
        assert!(j.rttvar() >= MS / 2, "{}", j.rttvar());
        assert_eq!(j.min_rtt(), 9 * MS);
    }

    proptest! {
        #[test]
        fn bounds_hold_and_a_constant_rtt_is_reached(
            hint in any::<u64>(),
            history in proptest::collection::vec(any::<u64>(), 0..40),
            r in MIN_RTT..=MAX_RTT,
        ) {
            let mut e = RttEstimator::new(hint);
            let mut lowest = None::<Nanos>;
            for &s in &history {
                e.sample(s);
                let c = clamp_rtt(s);
                lowest = Some(lowest.map_or(c, |l| l.min(c)));
                prop_assert!((MIN_RTT..=MAX_RTT).contains(&e.srtt()));
                prop_assert!(e.min_rtt() <= e.srtt());
                prop_assert_eq!(Some(e.min_rtt()), lowest);
                prop_assert!(e.rttvar() <= MAX_RTT);
            }
            // A constant RTT: the error shrinks by 7/8 per sample (plus
            // nothing: scaled arithmetic), so 64 samples leave < 1/4096.
            let before = e.srtt().abs_diff(r);
            for _ in 0..64 {
                e.sample(r);
                prop_assert!((MIN_RTT..=MAX_RTT).contains(&e.srtt()));
            }
            prop_assert!(e.srtt().abs_diff(r) <= before / 4096 + 1,
                "srtt {} r {} before {}", e.srtt(), r, before);
            // From a fresh estimator, one sample is enough.
            let mut f = RttEstimator::new(hint);
            f.sample(r);
            prop_assert_eq!(f.srtt(), r);
        }
    }
}
