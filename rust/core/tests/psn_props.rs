//! Property tests for the 24-bit PSN type, across the wrap.

use core::cmp::Ordering;
use crem_core::psn::{Psn, PsnRange};
use proptest::prelude::*;

const M: u32 = 1 << 24;
const H: u32 = 1 << 23;

fn psn() -> impl Strategy<Value = Psn> {
    prop_oneof![
        any::<u32>().prop_map(Psn::new),
        (0u32..64).prop_map(|d| Psn::new(M - 32 + d)), // around the wrap
        (0u32..64).prop_map(|d| Psn::new(H - 32 + d)), // around half
    ]
}

proptest! {
    #[test]
    fn always_masked(v in any::<u32>(), n in any::<u32>()) {
        let p = Psn::new(v);
        prop_assert!(p.value() < M);
        prop_assert!((p + n).value() < M);
        prop_assert!((p - n).value() < M);
        prop_assert_eq!(Psn::from_be_bytes(p.to_be_bytes()), p);
    }

    #[test]
    fn add_sub_inverse(p in psn(), n in any::<u32>()) {
        prop_assert_eq!((p + n) - n, p);
        prop_assert_eq!(p + n, Psn::new(((p.value() as u64 + n as u64) % M as u64) as u32));
        prop_assert_eq!(p.forward_distance(p + n), n % M);
    }

    #[test]
    fn diff_consistent(a in psn(), b in psn()) {
        let d = a.diff(b);
        prop_assert!((-(H as i32)..(H as i32)).contains(&d));
        prop_assert_eq!(b.wrapping_add_signed(d), a);
        prop_assert_eq!((a.forward_distance(b) + b.forward_distance(a)) % M, 0);
        match a.serial_cmp(b) {
            Some(Ordering::Equal) => { prop_assert_eq!(a, b); prop_assert_eq!(d, 0); }
            Some(Ordering::Less) => {
                prop_assert!(a.is_before(b) && b.is_after(a) && !a.is_after(b));
                prop_assert!(d < 0);
                prop_assert_eq!(b.serial_cmp(a), Some(Ordering::Greater));
            }
            Some(Ordering::Greater) => {
                prop_assert!(a.is_after(b) && b.is_before(a));
                prop_assert!(d > 0);
            }
            None => {
                prop_assert_eq!(a.forward_distance(b), H);
                prop_assert!(!a.is_before(b) && !a.is_after(b));
            }
        }
    }

    #[test]
    fn order_across_wrap(a in psn(), step in 1u32..H) {
        let b = a + step;
        prop_assert!(a.is_before(b));
        prop_assert!(a.is_before_or_eq(b));
        prop_assert!(!b.is_before(a));
        prop_assert_eq!(b.diff(a), step as i32);
        prop_assert_eq!(a.serial_max(b), b);
        prop_assert_eq!(a.serial_min(b), a);
    }

    #[test]
    fn range_contains_iter(start in psn(), count in 0u32..600, probe in 0u32..700) {
        let r = PsnRange::new(start, count);
        let p = start + probe;
        prop_assert_eq!(r.contains(p), probe < count);
        prop_assert_eq!(r.iter().count() as u32, count);
        prop_assert_eq!(r.iter().len() as u32, count);
        for (i, q) in r.iter().enumerate() {
            prop_assert_eq!(q, start + i as u32);
            prop_assert!(r.contains(q));
        }
        prop_assert_eq!(r.iter().next_back(), r.last());
        prop_assert_eq!(r.end(), start + count);
        if count > 0 {
            prop_assert_eq!(PsnRange::from_inclusive(start, r.last().unwrap()), r);
        }
    }
}
