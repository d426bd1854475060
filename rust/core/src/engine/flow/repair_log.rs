//! REPAIR messages sent per time bucket, for the policy's "repairs sent
//! during the interval a LOSS_REPORT covers" (loss on the repair path).
//!
//! A ring of [`BUCKETS`] counters, each covering `width` ns and tagged with
//! its absolute bucket number, so stale buckets are recognised without a
//! sweep. With `width` between SRTT/16 and SRTT/4 the ring covers 4 to 16
//! SRTT, enough for a report interval of about one SRTT sent one SRTT
//! earlier; counts at the edges of the queried range are attributed whole
//! buckets (at most one bucket of error at each end).

use super::super::Nanos;

/// Buckets in the ring.
pub(super) const BUCKETS: usize = 64;

/// Narrowest bucket (keeps a tiny SRTT from making the ring useless).
const MIN_WIDTH: Nanos = 1_000;

#[derive(Clone, Copy, Debug)]
pub(super) struct RepairLog {
    width: Nanos,
    tag: [u64; BUCKETS],
    count: [u32; BUCKETS],
}

impl RepairLog {
    pub(super) const fn new() -> Self {
        RepairLog {
            width: MIN_WIDTH,
            tag: [u64::MAX; BUCKETS],
            count: [0; BUCKETS],
        }
    }

    /// Sizes the buckets for `srtt`. The SRTT moves with every RTT sample
    /// and a new width forgets the history, so the width is kept while it
    /// stays within SRTT/16..=SRTT/4 and is otherwise set to SRTT/8: the
    /// SRTT must halve or double before the log starts over.
    pub(super) fn set_srtt(&mut self, srtt: Nanos) {
        let lo = (srtt / 16).max(MIN_WIDTH);
        let hi = (srtt / 4).max(MIN_WIDTH);
        if self.width < lo || self.width > hi {
            *self = RepairLog::new();
            self.width = (srtt / 8).max(MIN_WIDTH);
        }
    }

    fn bucket(&self, t: Nanos) -> u64 {
        t.checked_div(self.width).unwrap_or(0)
    }

    /// `n` REPAIRs were sent at `now`.
    pub(super) fn record(&mut self, now: Nanos, n: u32) {
        if n == 0 {
            return;
        }
        let b = self.bucket(now);
        let i = (b % BUCKETS as u64) as usize;
        if let (Some(tag), Some(c)) = (self.tag.get_mut(i), self.count.get_mut(i)) {
            if *tag != b {
                *tag = b;
                *c = 0;
            }
            *c = c.saturating_add(n);
        }
    }

    /// REPAIRs sent in the buckets from the one holding `from` up to, not
    /// including, the one holding `to` (only those still in the ring).
    pub(super) fn sent_between(&self, from: Nanos, to: Nanos) -> u32 {
        let (a, z) = (self.bucket(from), self.bucket(to));
        let a = a.max(z.saturating_sub(BUCKETS as u64));
        let mut sum = 0u32;
        for b in a..z {
            let i = (b % BUCKETS as u64) as usize;
            if self.tag.get(i) == Some(&b) {
                sum = sum.saturating_add(self.count.get(i).copied().unwrap_or(0));
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_bucket_and_forgets_old_ones() {
        let mut l = RepairLog::new();
        l.set_srtt(16_000); // 1 µs buckets
        l.record(500, 2);
        l.record(1_500, 3);
        l.record(1_700, 1);
        l.record(5_000, 4);
        assert_eq!(l.sent_between(0, 1_000), 2);
        assert_eq!(l.sent_between(1_000, 5_000), 4);
        assert_eq!(l.sent_between(0, 6_000), 10);
        // The ring wraps: bucket 5 + 64 reuses slot 5.
        l.record(69_000, 7);
        assert_eq!(l.sent_between(0, 69_000), 0);
        assert_eq!(l.sent_between(60_000, 70_000), 7);
        // A much larger SRTT forgets everything…
        l.set_srtt(1_600_000);
        assert_eq!(l.sent_between(0, u64::MAX), 0);
        // … unless it stays within a factor of two of the one the width
        // was set for (200 µs buckets: SRTT/8).
        l.record(1_000_000, 5);
        for srtt in [1_000_000, 3_000_000, 800_000, 3_200_000] {
            l.set_srtt(srtt);
            assert_eq!(l.sent_between(0, 2_000_000), 5, "{srtt}");
        }
        l.set_srtt(3_300_000);
        assert_eq!(l.sent_between(0, 2_000_000), 0);
        l.record(u64::MAX, u32::MAX);
        l.record(u64::MAX, 1);
        assert_eq!(l.sent_between(0, u64::MAX), 0);
    }
}
