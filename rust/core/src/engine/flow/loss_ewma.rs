//! The CRF's path loss estimate (pre-restoration) in parts per million: an
//! EWMA of gain 1/8 over LOSS_REPORT intervals, in fixed point (ppm · 256),
//! feeding [`super::super::crf::Crf::set_loss_ppm`] (one extra symbol per
//! request above 1 %).

/// Fixed-point fraction bits.
const FRAC: u32 = 8;
/// EWMA gain 1 / 2^GAIN.
const GAIN: u32 = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LossEwma {
    /// ppm · 2^FRAC.
    scaled: u64,
}

impl LossEwma {
    pub(super) const fn new() -> Self {
        LossEwma { scaled: 0 }
    }

    /// Takes one report's counts in; an empty interval changes nothing.
    pub(super) fn update(&mut self, expected: u32, received: u32) {
        if expected == 0 {
            return;
        }
        let lost = u64::from(expected.saturating_sub(received));
        let ppm = lost.saturating_mul(1_000_000) / u64::from(expected);
        let target = ppm << FRAC;
        if target >= self.scaled {
            self.scaled = self.scaled.saturating_add((target - self.scaled) >> GAIN);
        } else {
            self.scaled = self.scaled.saturating_sub((self.scaled - target) >> GAIN);
        }
    }

    /// The estimate, ppm.
    pub(super) fn ppm(&self) -> u32 {
        (self.scaled >> FRAC).min(u64::from(u32::MAX)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converges_and_decays() {
        let mut e = LossEwma::new();
        e.update(0, 0);
        assert_eq!(e.ppm(), 0);
        e.update(100, 90); // 10 %: first step 1/8 of it
        assert_eq!(e.ppm(), 12_500);
        for _ in 0..200 {
            e.update(1000, 900);
        }
        assert!((99_000..=100_000).contains(&e.ppm()), "{}", e.ppm());
        for _ in 0..200 {
            e.update(1000, 1000);
        }
        assert!(e.ppm() < 100, "{}", e.ppm());
        e.update(u32::MAX, 0);
        assert!(e.ppm() <= 1_000_000);
        e.update(5, 9); // more received than expected: no loss
    }
}
