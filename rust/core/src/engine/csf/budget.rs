//! The retransmission budget: bounds what REPAIR_REQUESTs and T/C AETH
//! reports can make the CSF send (issue 12, item 13).
//!
//! Each block is answered at most once per SRTT, but one PSN-range request
//! of 64 entries (268 octets) names up to 64 blocks, and nothing else
//! limited the answer: with FALLBACK the whole retention went out as Source
//! Copy once per SRTT (64 blocks of k = 32 with T = 1100: 2 310 144 octets
//! per request). The draft bounds this traffic by "the rate limits"
//! (Congestion Control Considerations, Security Considerations); this
//! budget is how the CSF keeps them against a peer it cannot trust.
//!
//! A token bucket in octets, credited from the flow's own source octets as
//! the CSF sees them (the measured rate of the protected flow, which a
//! remote peer cannot inflate) at `retx_rate_percent`, and debited by the
//! octets of every coded retransmission and Source Copy message sent. It
//! holds at most `retx_burst_blocks` whole answers (k symbols of the
//! largest message for T) or a quarter of `retx_rate_percent` of the
//! retained source octets (6.25 % at the default 25), whichever is more,
//! and starts full, so that the first losses of a flow, or one block lost
//! whole, are repaired at once. The second term pays for the losses of the
//! last round trip before the flow pauses or ends, requested when no
//! source earns any more: at 100 Gbit/s and 20 ms that is some 500 symbols
//! at 1 % loss, four blocks' worth is 128 (stop 44: 365 losses went to
//! RDMA). It covers a loss rate up to about 6 % of what is retained; a
//! forged request can draw no more at once (Security Considerations: a
//! quarter of the share, not the whole, so that one 268-octet request does
//! not send a quarter of the retention). Over any interval the answers stay
//! within the share of the source octets plus the depth, however many
//! requests arrive. An answer the budget
//! cannot pay is cut short (Source Copy: the positions that fit) or not
//! sent (coded: fewer than M symbols would not decode); the block stays
//! unanswered, so a later request finds it once the budget has refilled.
//! Ordinary, proactive and INFO messages are not charged: the m/k bucket
//! and the per-block limits bound those.
//!
//! Integers only: tokens are counted in hundredths of an octet so that the
//! percentage credit is exact.

use super::{scratch_len, Csf, CsfStorage};

/// Token units per octet (the credit is a percentage).
const UNIT: u64 = 100;

/// Token bucket of retransmission octets (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RetxBudget {
    /// Hundredths of an octet.
    tokens: u64,
    /// Filled once: the first source fills it to its cap.
    started: bool,
}

impl RetxBudget {
    /// An empty budget (filled by the first source).
    pub(super) const fn new() -> Self {
        RetxBudget {
            tokens: 0,
            started: false,
        }
    }

    /// A new source of `len` octets passed in a block coded with k and T,
    /// with `retained` octets held (this source included): earns `percent`
    /// % of it, up to `burst` whole answers for (k, T) or a quarter of
    /// `percent` % of the retained octets, whichever is more. The losses of
    /// the last round trip before the flow pauses or ends are requested
    /// when no source earns any more: a depth of a few blocks cannot pay
    /// them at a high bandwidth-delay product.
    pub(super) fn earn(
        &mut self,
        len: usize,
        percent: u8,
        burst: u8,
        k: u8,
        t: u16,
        retained: u64,
    ) {
        let cap = (burst.max(1) as u64)
            .saturating_mul(k as u64)
            .saturating_mul(scratch_len(t) as u64)
            .saturating_mul(UNIT)
            .max(retained.saturating_mul(percent as u64) / 4);
        if !self.started {
            self.started = true;
            self.tokens = cap;
        }
        let credit = (len as u64).saturating_mul(percent as u64);
        self.tokens = self.tokens.saturating_add(credit).min(cap);
    }

    /// Messages of at most `octets` each that can be paid for now.
    pub(super) fn affordable(&self, octets: usize) -> u64 {
        self.tokens
            .checked_div((octets as u64).saturating_mul(UNIT))
            .unwrap_or(0)
    }

    /// A message of `octets` was sent.
    pub(super) fn spend(&mut self, octets: usize) {
        self.tokens = self
            .tokens
            .saturating_sub((octets as u64).saturating_mul(UNIT));
    }

    /// Whole octets available (for tests and monitoring).
    pub(super) fn octets(&self) -> u64 {
        self.tokens / UNIT
    }
}

impl<St: CsfStorage> Csf<St> {
    /// Answer symbols of T octets the budget pays for now.
    pub(super) fn retx_affordable(&self, t: u16) -> u64 {
        self.retx_budget.affordable(scratch_len(t))
    }

    /// `symbols` answer symbols not sent for want of budget.
    pub(super) fn count_retx_limited(&mut self, symbols: usize) {
        if symbols > 0 {
            let d = &mut self.counters.drops;
            d.retx_budget_limited = d.retx_budget_limited.wrapping_add(1);
            d.retx_budget_symbols = d.retx_budget_symbols.wrapping_add(symbols as u64);
        }
    }

    /// Octets of coded retransmission and Source Copy the budget holds now.
    pub fn retx_budget_octets(&self) -> u64 {
        self.retx_budget.octets()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_full_caps_and_credits_exactly() {
        let mut b = RetxBudget::new();
        assert_eq!(b.affordable(100), 0);
        // k = 2, T = 16: a whole answer is 2 · (84 + 16) = 200 octets.
        b.earn(10, 25, 1, 2, 16, 0);
        assert_eq!(b.octets(), 200);
        assert_eq!(b.affordable(100), 2);
        b.spend(150);
        assert_eq!(b.octets(), 50);
        // 25 % of 3 octets is 0.75: kept, not rounded away.
        for _ in 0..4 {
            b.earn(3, 25, 1, 2, 16, 0);
        }
        assert_eq!(b.octets(), 53);
        for _ in 0..1000 {
            b.earn(1000, 25, 1, 2, 16, 0);
        }
        assert_eq!(b.octets(), 200, "capped");
        b.spend(usize::MAX);
        assert_eq!(b.affordable(1), 0);
        // Burst 0 still allows one whole answer.
        let mut b = RetxBudget::new();
        b.earn(0, 0, 0, 255, u16::MAX, 0);
        assert_eq!(b.affordable(scratch_len(u16::MAX)), 255);
        assert_eq!(b.affordable(0), 0);
    }
}
