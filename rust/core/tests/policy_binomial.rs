//! The binomial tail and the choice of m against high-precision references
//! computed here: exact big-integer arithmetic (p = a / 2^20, ε exactly the
//! value the policy compares with) and a direct f64 summation.

use crem_core::engine::policy::{
    any_loss, binomial_tail, choose_m, choose_m_after_round, max_m_for_k, round_tail, MChoice, Prob,
};
use proptest::prelude::*;
use std::cmp::Ordering;

// ---------------------------------------------------------------------------
// Minimal unsigned big integers (little-endian u64 limbs), test-only.

#[derive(Clone, Debug)]
struct Big(Vec<u64>);

impl Big {
    fn from(v: u128) -> Big {
        let mut b = Big(vec![v as u64, (v >> 64) as u64]);
        b.trim();
        b
    }
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
    fn mul_small(&self, m: u64) -> Big {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        let mut carry = 0u128;
        for &l in &self.0 {
            let v = l as u128 * m as u128 + carry;
            out.push(v as u64);
            carry = v >> 64;
        }
        out.push(carry as u64);
        let mut b = Big(out);
        b.trim();
        b
    }
    /// Exact division by a small divisor (panics if not exact).
    fn div_exact(&self, d: u64) -> Big {
        let mut out = vec![0u64; self.0.len()];
        let mut rem = 0u128;
        for i in (0..self.0.len()).rev() {
            let cur = (rem << 64) | self.0[i] as u128;
            out[i] = (cur / d as u128) as u64;
            rem = cur % d as u128;
        }
        assert_eq!(rem, 0, "inexact division");
        let mut b = Big(out);
        b.trim();
        b
    }
    fn mul(&self, o: &Big) -> Big {
        let mut out = vec![0u64; self.0.len() + o.0.len() + 1];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in o.0.iter().enumerate() {
                let v = a as u128 * b as u128 + out[i + j] as u128 + carry;
                out[i + j] = v as u64;
                carry = v >> 64;
            }
            let mut k = i + o.0.len();
            while carry != 0 {
                let v = out[k] as u128 + carry;
                out[k] = v as u64;
                carry = v >> 64;
                k += 1;
            }
        }
        let mut b = Big(out);
        b.trim();
        b
    }
    fn add(&self, o: &Big) -> Big {
        let n = self.0.len().max(o.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u128;
        for i in 0..n {
            let v =
                *self.0.get(i).unwrap_or(&0) as u128 + *o.0.get(i).unwrap_or(&0) as u128 + carry;
            out.push(v as u64);
            carry = v >> 64;
        }
        out.push(carry as u64);
        let mut b = Big(out);
        b.trim();
        b
    }
    /// self - o, requires self >= o.
    fn sub(&self, o: &Big) -> Big {
        assert!(self.cmp(o) != Ordering::Less);
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i128;
        for i in 0..self.0.len() {
            let v = self.0[i] as i128 - *o.0.get(i).unwrap_or(&0) as i128 - borrow;
            if v < 0 {
                out.push((v + (1i128 << 64)) as u64);
                borrow = 1;
            } else {
                out.push(v as u64);
                borrow = 0;
            }
        }
        let mut b = Big(out);
        b.trim();
        b
    }
    fn shl(&self, bits: u32) -> Big {
        let limbs = (bits / 64) as usize;
        let r = bits % 64;
        let mut out = vec![0u64; limbs];
        let mut carry = 0u64;
        for &l in &self.0 {
            if r == 0 {
                out.push(l);
            } else {
                out.push((l << r) | carry);
                carry = l >> (64 - r);
            }
        }
        out.push(carry);
        let mut b = Big(out);
        b.trim();
        b
    }
    fn pow(&self, n: u32) -> Big {
        let mut acc = Big::from(1);
        for _ in 0..n {
            acc = acc.mul(self);
        }
        acc
    }
    fn cmp(&self, o: &Big) -> Ordering {
        if self.0.len() != o.0.len() {
            return self.0.len().cmp(&o.0.len());
        }
        for i in (0..self.0.len()).rev() {
            match self.0[i].cmp(&o.0[i]) {
                Ordering::Equal => {}
                x => return x,
            }
        }
        Ordering::Equal
    }
}

const DBITS: u32 = 20;
const D: u64 = 1 << DBITS;

/// ε as the policy holds it: eps = mant * 2^exp exactly (exp < 0).
fn eps_parts(eps: Prob) -> (Big, u32) {
    assert!(eps.exponent() < 0);
    (Big::from(eps.mantissa() as u128), (-eps.exponent()) as u32)
}

/// Compares an exact probability `num / 2^den_bits` with ε; also says whether
/// it is within a relative 1e-9 of ε (ambiguous for a 64-bit computation).
fn cmp_eps(num: &Big, den_bits: u32, eps: Prob) -> (Ordering, bool) {
    let (em, ee) = eps_parts(eps);
    let lhs = num.shl(ee); // num * 2^ee
    let rhs = em.shl(den_bits); // eps_mant * 2^den_bits
    let ord = lhs.cmp(&rhs);
    // |lhs - rhs| * 1e9 <= rhs ?
    let diff = match ord {
        Ordering::Less => rhs.sub(&lhs),
        _ => lhs.sub(&rhs),
    };
    let close = diff.mul_small(1_000_000_000).cmp(&rhs) != Ordering::Greater;
    (ord, close)
}

/// Exact reference for `choose_m` with p = a / 2^20: returns `None` when the
/// decision is ambiguous (a compared quantity within 1e-9 relative of ε).
fn exact_choose_m(k: u8, a: u64, eps: Prob, cap: u8, retx_rule: bool) -> Option<(u8, MChoice)> {
    let cap = cap.min(max_m_for_k(k));
    if a == 0 {
        return Some((0, MChoice::NoLoss));
    }
    let kk = k as u32;
    if retx_rule {
        // 1 - (1 - p^2)^k = (2^(40k) - (2^40 - a^2)^k) / 2^(40k)
        let full = Big::from(1).shl(2 * DBITS * kk);
        let q2 = Big::from((1u128 << (2 * DBITS)) - (a as u128 * a as u128)).pow(kk);
        let num = full.sub(&q2);
        let (ord, close) = cmp_eps(&num, 2 * DBITS * kk, eps);
        if close {
            return None;
        }
        if ord == Ordering::Less {
            return Some((0, MChoice::RetxSuffices));
        }
    }
    let b = D - a;
    // T(m) = G(m) * D^(k+m); T(0) = D^k - b^k.
    let mut t = Big::from(1)
        .shl(DBITS * kk)
        .sub(&Big::from(b as u128).pow(kk));
    // u(m) = C(k+m, m+1) a^(m+1) b^k ; u(0) = k a b^k
    let bk = Big::from(b as u128).pow(kk);
    let mut u = bk.mul_small(a).mul_small(k as u64);
    let mut m: u32 = 0;
    loop {
        let (ord, close) = cmp_eps(&t, DBITS * (kk + m), eps);
        if close {
            return None;
        }
        if ord == Ordering::Less {
            return Some((m as u8, MChoice::Tail));
        }
        if m >= cap as u32 {
            return Some((cap, MChoice::Capped));
        }
        // T(m+1) = T(m) * D - u(m)  (u(m) = q b_{k+m}(m+1) scaled by D^(k+m+1))
        t = t.shl(DBITS).sub(&u);
        // u(m+1) = u(m) * a * (k+m+1) / (m+2)
        u = u
            .mul_small(a)
            .mul_small((kk + m + 1) as u64)
            .div_exact((m + 2) as u64);
        m += 1;
    }
}

/// Exact tail P(X_n > m) by the definition, as numerator over 2^(20 n).
fn exact_tail_direct(n: u32, m: u32, a: u64) -> Big {
    let b = D - a;
    let mut sum = Big::from(0);
    let mut c = Big::from(1); // C(n, x)
    for x in 0..=n {
        if x > m {
            let term = c
                .mul(&Big::from(a as u128).pow(x))
                .mul(&Big::from(b as u128).pow(n - x));
            sum = sum.add(&term);
        }
        c = c.mul_small((n - x) as u64).div_exact(x as u64 + 1);
    }
    sum
}

fn f(p: Prob) -> f64 {
    to_f64(p)
}

fn to_f64(p: Prob) -> f64 {
    p.mantissa() as f64 * 2f64.powi(p.exponent())
}

/// Direct f64 reference for `round_tail`: Σ_{x>m} b_n(x) (1 − q^(x−m+1)).
fn f64_round_tail(n: u32, m: u32, p: f64) -> f64 {
    if m >= n || p == 0.0 {
        return 0.0;
    }
    let q = 1.0 - p;
    let mut c = 1.0f64; // C(n, x)
    let mut sum = 0.0;
    for x in 0..=n {
        if x > m {
            sum +=
                c * p.powi(x as i32) * q.powi((n - x) as i32) * (1.0 - q.powi((x - m + 1) as i32));
        }
        c = c * (n - x) as f64 / (x + 1) as f64;
    }
    sum
}

/// Direct f64 reference: sum of the upper terms.
fn f64_tail(n: u32, m: u32, p: f64) -> f64 {
    if m >= n {
        return 0.0;
    }
    let q = 1.0 - p;
    let mut b = q.powi(n as i32);
    let mut sum = 0.0;
    for x in 0..n {
        b *= (n - x) as f64 / (x + 1) as f64 * p / q;
        if x + 1 > m {
            sum += b;
        }
    }
    sum
}

const P_GRID: [f64; 15] = [
    0.0, 1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 1.8e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.15, 0.2,
];
const EPS_PPB: [u64; 5] = [10_000_000, 1_000_000, 100_000, 1_000, 1];

fn k_grid() -> Vec<u8> {
    let mut v: Vec<u8> = (1..=64).collect();
    v.extend([72, 80, 96, 100, 128, 160, 192, 200, 223, 240, 250, 254, 255]);
    v
}

fn p_of(pf: f64) -> (u64, Prob) {
    let a = (pf * D as f64).round() as u64;
    (a, Prob::from_ratio(a, D))
}

#[test]
fn choose_m_matches_exact_reference_on_grid() {
    let mut checked = 0;
    let mut ambiguous = 0;
    for k in k_grid() {
        for &pf in &P_GRID {
            let (a, p) = p_of(pf);
            for &e in &EPS_PPB {
                let eps = Prob::from_ppb(e);
                for retx in [false, true] {
                    for cap in [8u8, 255] {
                        let got = choose_m(k, p, eps, cap, retx);
                        match exact_choose_m(k, a, eps, cap, retx) {
                            Some(want) => {
                                assert_eq!(
                                    got, want,
                                    "k={k} p={pf} eps={e}ppb retx={retx} cap={cap}"
                                );
                                checked += 1;
                            }
                            None => ambiguous += 1,
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 10_000, "checked {checked}");
    assert!(ambiguous * 1000 < checked, "ambiguous {ambiguous}");
}

#[test]
fn exact_recurrence_agrees_with_definition() {
    // The reference's recurrence is itself checked against the definition.
    for k in [1u8, 2, 3, 7, 16, 32] {
        for &pf in &[1e-3, 2e-2, 0.2] {
            let (a, _) = p_of(pf);
            let b = D - a;
            let kk = k as u32;
            let mut t = Big::from(1)
                .shl(DBITS * kk)
                .sub(&Big::from(b as u128).pow(kk));
            let mut u = Big::from(b as u128)
                .pow(kk)
                .mul_small(a)
                .mul_small(k as u64);
            for m in 0..12u32 {
                let direct = exact_tail_direct(kk + m, m, a);
                assert_eq!(t.cmp(&direct), Ordering::Equal, "k={k} p={pf} m={m}");
                t = t.shl(DBITS).sub(&u);
                u = u
                    .mul_small(a)
                    .mul_small((kk + m + 1) as u64)
                    .div_exact((m + 2) as u64);
            }
        }
    }
}

#[test]
fn binomial_tail_matches_exact_small() {
    for n in 1..=24u32 {
        for &pf in &[1e-4, 1e-2, 0.2] {
            let (a, p) = p_of(pf);
            for m in 0..n {
                let exact = exact_tail_direct(n, m, a);
                let got = binomial_tail(n as u16, m as u16, p);
                // |got - exact| <= 1e-15 * exact (+ tiny absolute slack)
                let ge = got.mantissa() as u128;
                let gx = got.exponent();
                // got = ge * 2^gx ; exact = E / 2^(20n). Compare via f64 of the
                // ratio computed with big ints at 2^-60 resolution.
                let scale = 20 * n + 60; // bits
                let got_scaled = if gx >= -(scale as i32) {
                    Big::from(ge).shl((gx + scale as i32) as u32)
                } else {
                    Big::from(ge >> ((-(gx) - scale as i32) as u32).min(127))
                };
                let exact_scaled = exact.shl(60);
                let (lo, hi) = if got_scaled.cmp(&exact_scaled) == Ordering::Less {
                    (got_scaled, exact_scaled.clone())
                } else {
                    (exact_scaled.clone(), got_scaled)
                };
                let diff = hi.sub(&lo);
                // diff * 1e14 <= exact_scaled + 2^(20n) (absolute floor 2^-60)
                let bound = exact_scaled.add(&Big::from(1).shl(20 * n));
                assert!(
                    diff.mul_small(100_000_000_000_000).cmp(&bound) != Ordering::Greater,
                    "n={n} m={m} p={pf}"
                );
            }
        }
    }
}

#[test]
fn binomial_tail_matches_f64_reference_on_grid() {
    let mut checked = 0;
    for k in k_grid() {
        for &pf in &P_GRID {
            let (_, p) = p_of(pf);
            let pf = to_f64(p);
            for m in [0u32, 1, 2, 3, 5, 8, 13, 21, 40, 80, 160, 255] {
                let n = k as u32 + m;
                let want = f64_tail(n, m, pf);
                let got = to_f64(binomial_tail(n as u16, m as u16, p));
                if want > 1e-280 {
                    let rel = ((got - want) / want).abs();
                    assert!(rel < 1e-11, "k={k} m={m} p={pf}: got {got:e} want {want:e}");
                } else {
                    assert!(got < 1e-270);
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 5000);
}

#[test]
fn choose_m_matches_f64_reference_on_grid() {
    for k in k_grid() {
        for &pf in &P_GRID {
            let (_, p) = p_of(pf);
            let pf = to_f64(p);
            for &e in &EPS_PPB {
                let eps = e as f64 * 1e-9;
                let (got, _) = choose_m(k, p, Prob::from_ppb(e), 255, false);
                // Reference: smallest m with f64 tail < eps, skipping ambiguity.
                let cap = 255 - k as u32;
                let mut want = cap;
                let mut ambiguous = false;
                for m in 0..=cap {
                    let t = f64_tail(k as u32 + m, m, pf);
                    if ((t - eps) / eps).abs() < 1e-9 {
                        ambiguous = true;
                    }
                    if t < eps {
                        want = m;
                        break;
                    }
                }
                if !ambiguous {
                    assert_eq!(got as u32, want, "k={k} p={pf} eps={eps:e}");
                }
            }
        }
    }
}

#[test]
fn known_values() {
    let eps = Prob::from_ppb(100_000);
    let p = |x: u64| Prob::from_ppb(x);
    // k = 32, eps = 1e-4.
    assert_eq!(choose_m(32, p(0), eps, 255, true).0, 0);
    // Clean path: coded retransmission alone (k p^2 ~ 3.2e-5 < 1e-4).
    assert_eq!(
        choose_m(32, p(1_000_000), eps, 255, true),
        (0, MChoice::RetxSuffices)
    );
    // Just above sqrt(eps / k) ~ 0.177 %.
    assert_ne!(
        choose_m(32, p(1_800_000), eps, 255, true).1,
        MChoice::RetxSuffices
    );
    // 1 % loss: P(X_35 > 3) ~ 4.1e-4, P(X_36 > 4) ~ 2.9e-5.
    assert_eq!(
        choose_m(32, p(10_000_000), eps, 255, true),
        (4, MChoice::Tail)
    );
    // Capped by max_m.
    assert_eq!(
        choose_m(32, p(10_000_000), eps, 3, true),
        (3, MChoice::Capped)
    );
    // After one coded round (the demo's k 16, ε 1e-4): 0.1 % needs no
    // redundancy, 0.5 % one repair, 1 % two and 3 % four, where the tail
    // alone asks for 2, 2, 3 and 5 (issue 13 #8; values from the f64 sums).
    for (ppb, after, alone) in [
        (1_000_000, 0, 2),
        (5_000_000, 1, 2),
        (10_000_000, 2, 3),
        (30_000_000, 4, 5),
    ] {
        assert_eq!(choose_m_after_round(16, p(ppb), eps, 16).0, after, "{ppb}");
        assert_eq!(choose_m(16, p(ppb), eps, 16, false).0, alone, "{ppb}");
    }
    assert_eq!(
        choose_m_after_round(16, p(1_000_000), eps, 16).1,
        MChoice::RetxSuffices
    );
    assert_eq!(
        choose_m_after_round(16, p(5_000_000), eps, 16).1,
        MChoice::AfterRound
    );
    assert_eq!(
        choose_m_after_round(16, Prob::ONE, eps, 3),
        (3, MChoice::Capped)
    );
    assert_eq!(
        choose_m_after_round(16, Prob::ZERO, eps, 3),
        (0, MChoice::NoLoss)
    );
    // m = 0: Σ_{x≥1} b(x) (1 − q^(x+1)) = 1 − q^k − q ((1 − p²)^k − q^k),
    // the m = 0 rule's sum with the request.
    let r0 = to_f64(round_tail(32, 0, p(10_000_000)));
    let qk = 0.99f64.powi(32);
    let want = 1.0 - qk - 0.99 * ((1.0 - 1e-4f64).powi(32) - qk);
    assert!((r0 - want).abs() < 1e-15, "{r0} {want}");
    // any_loss
    let a = to_f64(any_loss(32, p(10_000_000)));
    assert!((a - (1.0 - 0.99f64.powi(32))).abs() < 1e-15);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The O(m) search agrees with the direct tail: the chosen m meets ε and
    /// m - 1 does not (unless capped / zero by rule).
    #[test]
    fn choose_m_consistent_with_tail(k in 1u8..=255, num in 0u64..=300_000, eps_ppb in 1u64..=50_000_000, cap in 0u8..=255, retx in any::<bool>()) {
        let p = Prob::from_ratio(num, 1_000_000);
        let eps = Prob::from_ppb(eps_ppb);
        let (m, why) = choose_m(k, p, eps, cap, retx);
        let cap = cap.min(max_m_for_k(k));
        prop_assert!(m <= cap);
        let tail = |m: u8| to_f64(binomial_tail(k as u16 + m as u16, m as u16, p));
        let e = to_f64(eps);
        match why {
            MChoice::NoLoss => prop_assert!(num == 0 && m == 0),
            MChoice::RetxSuffices => prop_assert!(m == 0 && to_f64(any_loss(k as u16, p * p)) < e),
            MChoice::Tail => {
                prop_assert!(tail(m) < e * (1.0 + 1e-9));
                if m > 0 { prop_assert!(tail(m - 1) >= e * (1.0 - 1e-9)); }
            }
            MChoice::Capped => {
                prop_assert_eq!(m, cap);
                prop_assert!(tail(m) >= e * (1.0 - 1e-9));
            }
            MChoice::AfterRound => prop_assert!(false, "choose_m never counts a round"),
        }
    }

    /// The search after a round agrees with the direct sum: the chosen m
    /// meets ε after one round and m - 1 does not; it never asks for more
    /// than the tail alone, and its m = 0 implies the m = 0 rule's.
    #[test]
    fn choose_m_after_round_consistent(k in 1u8..=255, num in 0u64..=300_000, eps_ppb in 1u64..=50_000_000, cap in 0u8..=40) {
        let p = Prob::from_ratio(num, 1_000_000);
        let eps = Prob::from_ppb(eps_ppb);
        let (m, why) = choose_m_after_round(k, p, eps, cap);
        let cap = cap.min(max_m_for_k(k));
        prop_assert!(m <= cap);
        prop_assert!(m <= choose_m(k, p, eps, cap, false).0);
        let after = |m: u8| f64_round_tail(k as u32 + m as u32, m as u32, to_f64(p));
        let e = to_f64(eps);
        match why {
            MChoice::NoLoss => prop_assert!(num == 0 && m == 0),
            MChoice::RetxSuffices => {
                prop_assert_eq!(m, 0);
                prop_assert_eq!(choose_m(k, p, eps, cap, true).1, MChoice::RetxSuffices);
            }
            MChoice::AfterRound => {
                prop_assert!(m > 0 && after(m) < e * (1.0 + 1e-6));
                prop_assert!(after(m - 1) >= e * (1.0 - 1e-6));
            }
            MChoice::Capped => {
                prop_assert_eq!(m, cap);
                prop_assert!(after(m) >= e * (1.0 - 1e-6));
            }
            MChoice::Tail => prop_assert!(false, "after a round is never the plain tail"),
        }
    }

    /// The tail never exceeds one, never panics, and is non-increasing in m
    /// along n = k + m.
    #[test]
    fn tail_bounded_and_monotone(k in 1u16..=255, m in 0u16..=255, num in 0u64..=1_000_000) {
        let p = Prob::from_ratio(num, 1_000_000);
        let t0 = binomial_tail(k + m, m, p);
        let t1 = binomial_tail(k + m + 1, m + 1, p);
        prop_assert!(t0 <= Prob::ONE);
        prop_assert!(to_f64(t1) <= to_f64(t0) * (1.0 + 1e-12) + 1e-300);
    }
}

/// Arithmetic of the integer-only number type.
#[test]
fn prob_basics() {
    assert_eq!(f(Prob::ONE), 1.0);
    assert_eq!(Prob::from_int(0), Prob::ZERO);
    assert_eq!(f(Prob::from_int(12345)), 12345.0);
    assert_eq!(f(Prob::from_ratio(1, 4)), 0.25);
    assert_eq!(Prob::from_ratio(5, 0), Prob::ZERO);
    assert!((f(Prob::from_ppb(100_000)) - 1e-4).abs() < 1e-19);
    let a = Prob::from_ratio(3, 7);
    let b = Prob::from_ratio(2, 9);
    assert!((f(a * b) - 6.0 / 63.0).abs() < 1e-17);
    assert!((f(a + b) - (3.0 / 7.0 + 2.0 / 9.0)).abs() < 1e-15);
    assert!((f(a.saturating_sub(b)) - (3.0 / 7.0 - 2.0 / 9.0)).abs() < 1e-15);
    assert_eq!(b.saturating_sub(a), Prob::ZERO);
    assert_eq!(a.saturating_sub(a), Prob::ZERO);
    assert!((f(a / b) - 27.0 / 14.0).abs() < 1e-15);
    assert_eq!(a / Prob::ZERO, Prob::ZERO);
    assert!((f(a.div_int(3)) - 1.0 / 7.0).abs() < 1e-17);
    assert_eq!(a.div_int(0), Prob::ZERO);
    assert!((f(a.mul_int(14)) - 6.0).abs() < 1e-15);
    assert!((f(a.complement()) - 4.0 / 7.0).abs() < 1e-15);
    assert!((f(Prob::from_ratio(4, 5).pow(510)) / 0.8f64.powi(510) - 1.0).abs() < 1e-13);
    assert_eq!(a.pow(0), Prob::ONE);
    assert_eq!(Prob::from_ratio(1, 2).to_ppb(), 500_000_000);
    assert_eq!(Prob::from_int(1 << 40).to_ppb(), u64::MAX);
    assert_eq!(Prob::ZERO.to_ppb(), 0);
    assert!(Prob::ZERO < a);
    assert!(b < a);
    assert_eq!(Prob::ZERO + a, a);
    assert_eq!(a + Prob::ZERO, a);
    // Far-apart magnitudes: the small one vanishes without panicking.
    let tiny = Prob::from_ratio(1, 2).pow(200);
    assert_eq!(a + tiny, a);
    assert_eq!(a.saturating_sub(tiny), a);
    assert_eq!(Prob::from_ratio(1, 2).pow(300).to_ppb(), 0);
}
