//! Integer pacing state of the CSF: the ordinary-repair token bucket and the
//! send log used by the T/C AETH in-flight guard.

use super::super::super::psn::Psn;
use super::super::Nanos;

/// Token bucket that keeps ordinary repairs within m/k of the source rate
/// (draft: "The rate of ordinary repair symbols MUST NOT exceed m/k times
/// the measured rate of the protected flow").
///
/// The flow's rate is measured by the sources themselves: every source earns
/// m/k of a repair, every ordinary repair spends one. To stay exact in
/// integers, tokens are counted in units of 1/k of a repair for the k of the
/// current configuration (`scale`): a source earns m units, a repair costs
/// `scale` units. When k changes the balance is rescaled, rounding down, so
/// the bound is never exceeded. The balance is capped at `burst` blocks'
/// worth (m·burst repairs) so an idle flow does not bank credit, and starts
/// full: a "rate" needs a window, and this lets the first short bursts of a
/// flow (small RDMA messages closed by the idle timeout) be protected, while
/// over any run of sources the repairs stay within m/k of them plus the
/// burst.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Bucket {
    tokens: u64,
    scale: u8,
}

impl Bucket {
    /// An empty bucket.
    pub(super) const fn new() -> Self {
        Bucket {
            tokens: 0,
            scale: 0,
        }
    }

    fn rescale(&mut self, k: u8) {
        if self.scale != k {
            self.tokens = self
                .tokens
                .saturating_mul(k as u64)
                .checked_div(self.scale as u64)
                .unwrap_or(0);
            self.scale = k;
        }
    }

    /// One source of a block with (m, k) passed.
    pub(super) fn earn(&mut self, m: u8, k: u8, burst: u8) {
        let cap = self.credit(m, k, burst);
        self.tokens = self.tokens.saturating_add(m as u64).min(cap);
    }

    /// One source of a block whose repairs wait for a PARAM_ACK (opened
    /// under a provisional configuration): its m/k is owed and sent when
    /// the configuration is acknowledged, so it is banked beyond the cap
    /// (the next [`Bucket::earn`] caps whatever is left).
    pub(super) fn earn_banked(&mut self, m: u8, k: u8, burst: u8) {
        self.credit(m, k, burst);
        self.tokens = self.tokens.saturating_add(m as u64);
    }

    /// Sets the scale to k (full at the first source, rescaled after a
    /// change of k) and returns the cap, `burst` blocks' worth.
    fn credit(&mut self, m: u8, k: u8, burst: u8) -> u64 {
        let cap = (m as u64)
            .saturating_mul(k as u64)
            .saturating_mul(burst.max(1) as u64);
        if self.scale == 0 {
            self.scale = k;
            self.tokens = cap;
        } else {
            self.rescale(k);
        }
        cap
    }

    /// Takes up to `n` repairs' worth of tokens; returns how many.
    pub(super) fn take_up_to(&mut self, n: u16) -> u16 {
        let got = self.available().min(u64::from(n)) as u16;
        self.tokens = self
            .tokens
            .saturating_sub(u64::from(got).saturating_mul(self.scale as u64));
        got
    }

    /// Takes one repair's worth of tokens if available.
    pub(super) fn take(&mut self) -> bool {
        let cost = self.scale as u64;
        if cost != 0 && self.tokens >= cost {
            self.tokens = self.tokens.wrapping_sub(cost);
            true
        } else {
            false
        }
    }

    /// Whole repairs currently allowed (for tests and monitoring).
    pub(super) fn available(&self) -> u64 {
        self.tokens.checked_div(self.scale as u64).unwrap_or(0)
    }
}

/// Number of checkpoints of the send log.
const LOG_LEN: usize = 32;

/// Coarse history of "all PSNs before `psn` had been sent by `time`".
///
/// The T/C AETH in-flight guard (DESIGN §3) counts a PSN as lost only if it
/// was sent at least SRTT + batching time before the report. Per-PSN send
/// times would cost 8 octets per retained packet; instead the log keeps 32
/// checkpoints, starting a new one when the newest is older than a
/// granularity (1/8 of the guard), and updating the newest in place
/// otherwise. A query returns the newest checkpoint at or before the
/// cutoff, which is conservative: it may miss PSNs sent up to one
/// granularity before the cutoff, never include a later one.
#[derive(Clone, Copy, Debug)]
pub(super) struct SendLog {
    psn: [Psn; LOG_LEN],
    time: [Nanos; LOG_LEN],
    /// Index of the newest checkpoint.
    newest: usize,
    len: usize,
    /// Time the newest checkpoint was started.
    anchor: Nanos,
}

impl SendLog {
    /// An empty log.
    pub(super) const fn new() -> Self {
        SendLog {
            psn: [Psn::ZERO; LOG_LEN],
            time: [0; LOG_LEN],
            newest: 0,
            len: 0,
            anchor: 0,
        }
    }

    /// Forgets the history.
    pub(super) fn clear(&mut self) {
        self.len = 0;
    }

    /// Every PSN before `next` has been sent by `now`.
    pub(super) fn record(&mut self, now: Nanos, next: Psn, granularity: Nanos) {
        let start_new = self.len == 0 || now.saturating_sub(self.anchor) >= granularity;
        if start_new {
            self.newest = if self.len == 0 {
                0
            } else {
                self.newest.wrapping_add(1) % LOG_LEN
            };
            self.len = self.len.wrapping_add(1).min(LOG_LEN);
            self.anchor = now;
        }
        if let (Some(p), Some(t)) = (
            self.psn.get_mut(self.newest),
            self.time.get_mut(self.newest),
        ) {
            *p = next;
            // Time never goes back within the log, whatever the caller says.
            *t = now.max(*t);
        }
    }

    /// The first PSN not known to have been sent at or before `cutoff`
    /// (every earlier PSN was), or `None` if no checkpoint is that old.
    pub(super) fn sent_before(&self, cutoff: Nanos) -> Option<Psn> {
        (0..self.len).find_map(|back| {
            let i = self.newest.wrapping_add(LOG_LEN).wrapping_sub(back) % LOG_LEN;
            match (self.time.get(i), self.psn.get(i)) {
                (Some(&t), Some(&p)) if t <= cutoff => Some(p),
                _ => None,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_exact_ratio_and_rescale() {
        let mut b = Bucket::new();
        assert!(!b.take());
        // Starts full: one block's worth with burst 1.
        b.earn(3, 7, 1);
        assert_eq!(b.available(), 3);
        assert!(b.take() && b.take() && b.take());
        assert!(!b.take());
        // m = 3, k = 7: seven sources earn exactly three repairs.
        for _ in 0..7 {
            b.earn(3, 7, 1);
        }
        assert_eq!(b.available(), 3);
        assert!(b.take() && b.take() && b.take());
        assert!(!b.take());
        // Cap: one block's worth with burst 1.
        for _ in 0..100 {
            b.earn(3, 7, 1);
        }
        assert_eq!(b.available(), 3);
        // Rescale to k = 14 keeps the value (21 units of 1/7 = 42 of 1/14).
        b.earn(0, 14, 1);
        assert_eq!(b.available(), 0); // cap with m = 0 is 0
        let mut b = Bucket::new();
        b.earn(2, 7, 4);
        while b.take() {}
        for _ in 0..7 {
            b.earn(2, 7, 4);
        }
        b.earn(1, 14, 4);
        // 14 units/7 = 2 repairs -> 28 units/14 + 1 = 29 -> 2 repairs.
        assert_eq!(b.available(), 2);
    }

    #[test]
    fn sendlog_conservative() {
        let mut l = SendLog::new();
        assert_eq!(l.sent_before(100), None);
        l.record(10, Psn::new(5), 10);
        l.record(15, Psn::new(6), 10); // same checkpoint, time 15
        l.record(25, Psn::new(9), 10); // new checkpoint
        assert_eq!(l.sent_before(9), None);
        assert_eq!(l.sent_before(14), None);
        assert_eq!(l.sent_before(15), Some(Psn::new(6)));
        assert_eq!(l.sent_before(30), Some(Psn::new(9)));
        for i in 0..100u32 {
            l.record(100 + i as u64 * 20, Psn::new(100 + i), 10);
        }
        // Only the last 32 checkpoints survive.
        assert_eq!(l.sent_before(100), None);
        assert_eq!(l.sent_before(10_000), Some(Psn::new(199)));
        l.clear();
        assert_eq!(l.sent_before(10_000), None);
        // Time going backwards does not make the log claim more.
        l.record(50, Psn::new(1), 10);
        l.record(40, Psn::new(2), 10);
        assert_eq!(l.sent_before(45), None);
    }
}
