//! The binomial tail behind the RECOMMENDED redundancy policy: the smallest m
//! such that a block of k + m packets loses more than m of them with
//! probability below ε, under independent losses with rate p.
//!
//! All arithmetic is [`Prob`] (64-bit mantissa, integer only). Precision: each
//! step of the recurrences below costs at most three operations of relative
//! error < 2^-63; after j steps the absolute error of a tail in [0, 1] is below
//! about `4 * j * 2^-63`, i.e. < 1.2e-16 for the largest blocks (j ≤ 256). The
//! tests check the results against an exact rational reference and a
//! floating-point reference (test code only) over k = 1..=255, p = 0..=20 %
//! and ε = 1e-2..1e-9; a choice of m can therefore only differ from exact
//! arithmetic when the true tail is within ~1e-16 of ε.

use super::prob::Prob;

/// Largest m allowed for a block of k positions. The scheme needs the ordinary
/// Repair Indices `0..m` to satisfy `i + k <= 255`, i.e. `m <= 256 - k`; we keep
/// one index spare (`m <= 255 - k`) so that coded retransmission of a block
/// always has at least one fresh Repair Index before falling back to Source
/// Copy.
pub const fn max_m_for_k(k: u8) -> u8 {
    u8::MAX.saturating_sub(k)
}

/// `P(X > m)` for `X ~ Binomial(n, p)`: the probability that more than m of n
/// packets are lost. Computed directly as the sum of the upper terms (no
/// cancellation), `O(n)`. `p` above one is treated as one.
pub fn binomial_tail(n: u16, m: u16, p: Prob) -> Prob {
    upper_terms(n, m, p, || None)
}

/// `Σ_{x > m} b_n(x) · w(x)` for `X ~ Binomial(n, p)`, `weight` giving w for
/// x = m + 1, m + 2, … in turn (`None`: 1, the term as it is). With every
/// weight at most one the sum is a probability; `p` above one is treated
/// as one (every packet lost: 1).
fn upper_terms(n: u16, m: u16, p: Prob, mut weight: impl FnMut() -> Option<Prob>) -> Prob {
    if m >= n || p.is_zero() {
        return Prob::ZERO;
    }
    let q = p.complement();
    if q.is_zero() {
        return Prob::ONE;
    }
    // b(x) = C(n, x) p^x q^(n-x); b(0) = q^n; b(x+1) = b(x) (n-x)/(x+1) p/q.
    let r = p / q;
    let mut b = q.pow(n as u32);
    let mut sum = Prob::ZERO;
    for x in 0..n {
        b = (b * r)
            .mul_int(u64::from(n.wrapping_sub(x)))
            .div_int(u64::from(x).wrapping_add(1));
        if x >= m {
            sum = sum + weight().map_or(b, |w| b * w);
        }
    }
    // Rounding can never push a probability above one.
    sum.min(Prob::ONE)
}

/// `P(at least one of k packets lost)` = `1 - (1 - p)^k`.
pub fn any_loss(k: u16, p: Prob) -> Prob {
    p.complement().pow(k as u32).complement()
}

/// Why [`choose_m`] returned its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MChoice {
    /// No loss measured.
    NoLoss,
    /// m = 0 because one coded-retransmission round already meets ε (see
    /// [`choose_m`]).
    RetxSuffices,
    /// The smallest m whose tail is below ε.
    Tail,
    /// Even the cap misses ε; the cap is returned.
    Capped,
    /// The smallest m whose blocks, after one coded-retransmission round,
    /// are left unrecovered with probability below ε (see
    /// [`choose_m_after_round`]).
    AfterRound,
}

/// The smallest m in `0..=cap` with `P(more than m of k + m lost) < eps`, or
/// `cap` if none (also bounded by [`max_m_for_k`]).
///
/// **m = 0 rule** (`retx_rule`, the draft's "coded retransmission alone meets
/// the target"): with m = 0 a block that loses X sources is repaired by one
/// coded retransmission of X symbols over the lost set, one RTT later; it is
/// still not recovered after that round only if one of those X symbols is lost
/// too. Averaging over X ~ Binomial(k, p):
/// `P(fail) = 1 - E[(1-p)^X] = 1 - (1 - p^2)^k ≈ k p^2`. When that is below ε
/// the block meets the same target with one extra RTT and no redundancy, so
/// m = 0. For k = 32 and ε = 1e-4 this is p below about 0.18 %, where FEC would
/// otherwise cost 3 % (m = 1) on a nearly clean path; the stricter reading
/// ("no loss at all in a block", `1 - (1-p)^k < ε`) would keep m > 0 down to
/// p = 3e-6 and is what `retx_rule = false` gives, since it is the tail for
/// m = 0.
///
/// The search uses `G(m+1) = G(m) - q * b_{k+m}(m+1)` with
/// `G(m) = P(X_{k+m} > m)` and `b_{n+1}(x+1) = b_n(x) * p * (n+1)/(x+1)`, so it
/// is `O(m)` overall (the tail is non-increasing in m, so the first hit is the
/// smallest).
pub fn choose_m(k: u8, p: Prob, eps: Prob, cap: u8, retx_rule: bool) -> (u8, MChoice) {
    let k = k.max(1);
    let cap = cap.min(max_m_for_k(k));
    if p.is_zero() {
        return (0, MChoice::NoLoss);
    }
    if retx_rule && any_loss(k as u16, p * p) < eps {
        return (0, MChoice::RetxSuffices);
    }
    let q = p.complement();
    if q.is_zero() {
        return (cap, MChoice::Capped);
    }
    let qk1 = q.pow(u32::from(k).saturating_sub(1));
    // G(0) = 1 - q^k; b = b_k(1) = k p q^(k-1).
    let mut g = (qk1 * q).complement();
    let mut b = (qk1 * p).mul_int(k as u64);
    let mut m: u8 = 0;
    loop {
        if g < eps {
            return (m, MChoice::Tail);
        }
        if m >= cap {
            return (cap, MChoice::Capped);
        }
        g = g.saturating_sub(q * b);
        let n1 = u64::from(k).wrapping_add(u64::from(m)).wrapping_add(1);
        b = (b * p).mul_int(n1).div_int(u64::from(m).wrapping_add(2));
        m = m.saturating_add(1);
    }
}

/// `P(a block of n packets is unrecovered after its m ordinary repairs and
/// one coded-retransmission round)` under independent losses with rate p: a
/// block losing x > m packets sends one request and gets x − m coded symbols
/// back, and stays unrecovered if the request or any of those symbols is
/// lost too, so the sum is `Σ_{x > m} b_n(x) · (1 − q^(x − m + 1))` (the
/// request crosses the reverse path, taken to lose as the forward one). The
/// m = 0 rule of [`choose_m`] (the draft's) leaves the request out; the extra
/// symbol the CRF asks for above 1 % loss is left out here too. `O(n)`;
/// never above [`binomial_tail`].
pub fn round_tail(n: u16, m: u16, p: Prob) -> Prob {
    let q = p.complement();
    // For x lost: q^(x − m + 1), the request and the x − m coded symbols
    // all arrive; x starts at m + 1.
    let mut qj = q;
    upper_terms(n, m, p, || {
        qj = qj * q;
        Some(qj.complement())
    })
}

/// The smallest m in `0..=cap` for which a block of k + m packets is left
/// unrecovered by its ordinary repairs *and* one coded-retransmission round
/// with probability below ε ([`round_tail`]), or `cap` if none.
///
/// This is the m = 0 rule of [`choose_m`] carried to every m (with the
/// request counted, so its m = 0 is never below the rule's), for a flow
/// whose coded round completes before RDMA sees the gap: the CRF holds the
/// packets after a loss for its hold time H, and when H covers the
/// reordering allowance, a block and a round trip, the round costs RDMA
/// nothing. [`choose_m`]'s tail assumes it costs a go-back-N, which is true
/// with the RECOMMENDED H (at most a quarter RTT) and asks for more
/// redundancy than such a flow needs (issue 13 #8: at 1 % and k 16, m 3
/// where m 2 and one round leave fewer than ε of the blocks to RDMA; at
/// 3 %, m 5 where m 4 does).
/// `O(m · (k + m))`, the search stopping at the first m that meets ε.
pub fn choose_m_after_round(k: u8, p: Prob, eps: Prob, cap: u8) -> (u8, MChoice) {
    let k = k.max(1);
    let cap = cap.min(max_m_for_k(k));
    if p.is_zero() {
        return (0, MChoice::NoLoss);
    }
    let mut m: u8 = 0;
    loop {
        let n = u16::from(k).wrapping_add(u16::from(m));
        if round_tail(n, u16::from(m), p) < eps {
            let why = if m == 0 {
                MChoice::RetxSuffices
            } else {
                MChoice::AfterRound
            };
            return (m, why);
        }
        if m >= cap {
            return (cap, MChoice::Capped);
        }
        m = m.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges() {
        let p = Prob::from_ratio(1, 100);
        assert_eq!(binomial_tail(10, 10, p), Prob::ZERO);
        assert_eq!(binomial_tail(10, 3, Prob::ZERO), Prob::ZERO);
        assert_eq!(binomial_tail(10, 3, Prob::ONE), Prob::ONE);
        assert_eq!(binomial_tail(10, 3, Prob::from_int(2)), Prob::ONE);
        let eps = Prob::from_ppb(100_000);
        assert_eq!(choose_m(32, Prob::ZERO, eps, 8, true), (0, MChoice::NoLoss));
        assert_eq!(choose_m(32, Prob::ONE, eps, 8, true), (8, MChoice::Capped));
        assert_eq!(choose_m(250, Prob::ONE, eps, 8, true), (5, MChoice::Capped));
        assert_eq!(
            choose_m(32, Prob::from_ratio(1, 10_000), eps, 8, true),
            (0, MChoice::RetxSuffices)
        );
        assert_eq!(
            choose_m(32, Prob::from_ratio(1, 10_000), eps, 8, false),
            (1, MChoice::Tail)
        );
        assert_eq!(choose_m(0, p, eps, 8, false).1, MChoice::Tail);
        assert_eq!(max_m_for_k(255), 0);
        assert_eq!(choose_m(255, p, eps, 8, false), (0, MChoice::Capped));
    }
}
