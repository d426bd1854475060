//! Windowless T/C AETH mode, receiver half: the dual-trigger batcher and
//! the segment list of received PSN ranges (windowless-ack draft §3,
//! DESIGN §3).
//!
//! Deviation from the draft, on purpose: the draft flushes the SegmentList
//! after each report while Last Finished PSN stays cumulative. A gap that
//! survives one batch would then make the next report describe the
//! previous batch's received PSNs as lost (they are neither in the new
//! segments nor before Last Finished PSN), and the CSF would resend them.
//! Here the list holds every received range *above* the cumulative point
//! and only the trigger state (start time, count) is reset per batch; the
//! list shrinks as the cumulative point advances over it.
//!
//! # Our ruling: fragments, final and partial
//!
//! A report is the leading continuous segment and the list's ranges in
//! increasing order, three per fragment; a continuation fragment starts
//! (Last Finished PSN) where the previous one's last segment ended. The CSF
//! reads each fragment on its own (`csf/tc.rs`): a full fragment
//! (SegmentNum 4) is *partial*, the PSNs after it are unknown; a fragment
//! with SegmentNum ≤ 3 is *final*, the PSNs after it count as lost once
//! old enough. The CRF therefore keeps two invariants:
//!
//! 1. The list is *complete*: every PSN observed at or after the cumulative
//!    point lies in one of its ranges. When it is full, a new range does
//!    not displace an old one; the lowest gap is given up instead (merged
//!    into its neighbours as if received). So a gap reported is never a
//!    received PSN; a given-up gap is one the CRF no longer asks for (it
//!    has been reported longest, its Source Copy is most likely on the way
//!    already; otherwise RDMA's own recovery takes it).
//! 2. A final fragment is sent only as the last fragment of a report whose
//!    segments all fit ([`MAX_TC_SEGMENTS`]): by 1., nothing observed lies
//!    above it. Segments that do not fit are left for later reports and the
//!    report ends on a full (partial) fragment; segments that end exactly on
//!    a full fragment are followed by an end marker (SegmentNum 1, Last
//!    Finished PSN = the highest segment's end).
//!
//! Losing, reordering or leaving out a fragment thus only withholds
//! information: no report makes the CSF re-send a PSN the CRF had.

use super::super::super::psn::{Psn, PsnRange};
use super::super::super::wire::tc_aeth::MAX_SEGMENTS;
use super::super::super::wire::{Segment, TcAeth, TcAethReport};
use super::super::{Nanos, Sink, MS, SEC};

/// Segments the CRF tracks above the cumulative point.
pub const TC_SEGMENTS: usize = 16;
/// Segments (after the leading continuous one) one report carries at most,
/// three per fragment.
pub const MAX_TC_SEGMENTS: usize = 12;
/// Fragments (TC_AETH messages) sent per report at most: the full ones
/// carrying [`MAX_TC_SEGMENTS`] and the final one (or end marker).
pub const MAX_TC_FRAGMENTS: usize = MAX_TC_SEGMENTS / MAX_SEGMENTS + 1;

/// Never-set time.
const NEVER: Nanos = Nanos::MAX;

/// The two batching thresholds of the dual trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcThresholds {
    /// Report when the batch is this old (cumulative receive time).
    pub t_thresh: Nanos,
    /// Report when this many PSNs were received in the batch.
    pub c_thresh: u32,
}

impl TcThresholds {
    /// Smallest T_thresh (one report per 20 µs at most by time).
    pub const MIN_T: Nanos = 20_000;
    /// Largest T_thresh.
    pub const MAX_T: Nanos = 5 * MS;
    /// Largest C_thresh.
    pub const MAX_C: u32 = 4096;

    /// T_thresh for `srtt` (see [`Self::from_rate`]): the CSF's in-flight
    /// guard counts it too.
    pub const fn t_thresh_for(srtt: Nanos) -> Nanos {
        let t = srtt / 4;
        if t < Self::MIN_T {
            Self::MIN_T
        } else if t > Self::MAX_T {
            Self::MAX_T
        } else {
            t
        }
    }

    /// Derives the thresholds from the sender's packet rate (packets/s) and
    /// the SRTT.
    ///
    /// T_thresh = SRTT/4 clamped to [`Self::MIN_T`, `Self::MAX_T`]: loss
    /// feedback then costs at most a quarter RTT on top of the RTT.
    /// C_thresh = rate · T_thresh (at least 1, at most [`Self::MAX_C`]):
    /// at the nominal rate both triggers fire together; a burst above the
    /// rate triggers on count (bounding the PSNs one report must describe
    /// and the reports per packet), a slowdown triggers on time (bounding
    /// feedback delay). Both are thus proportional to the sender's rate,
    /// as the draft asks, with the proportionality set by the path's RTT.
    pub fn from_rate(rate_pps: u64, srtt: Nanos) -> TcThresholds {
        let t = Self::t_thresh_for(srtt);
        let c = rate_pps.saturating_mul(t) / SEC;
        TcThresholds {
            t_thresh: t,
            c_thresh: c.clamp(1, Self::MAX_C as u64) as u32,
        }
    }

    /// The packet rate these thresholds were derived for (the inverse of
    /// [`Self::from_rate`], as far as its rounding allows).
    pub fn rate_pps(&self) -> u64 {
        u64::from(self.c_thresh)
            .saturating_mul(SEC)
            .checked_div(self.t_thresh)
            .unwrap_or(0)
    }
}

/// Ordered, merged list of received PSN ranges above a reference point, of
/// fixed capacity `N`.
///
/// Ranges are kept disjoint and non-adjacent (adjacent ranges merge). The
/// list never forgets a received PSN: when a new range needs a slot and
/// the list is full, the lowest gap (between the two lowest ranges of the
/// list with the new one) is given up, merged as if received. Dropping a
/// range instead would be unsafe: the PSNs of a dropped range would later
/// be reported inside a gap, or after a final fragment's last segment, and
/// the CSF would re-send them. Ordering uses forward distance from the
/// caller's `origin`, which must not be after any range.
#[derive(Clone, Debug)]
pub struct SegmentList<const N: usize> {
    segs: [PsnRange; N],
    len: usize,
    given_up: u64,
}

impl<const N: usize> Default for SegmentList<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> SegmentList<N> {
    /// An empty list.
    pub const fn new() -> Self {
        SegmentList {
            segs: [PsnRange::new(Psn::ZERO, 0); N],
            len: 0,
            given_up: 0,
        }
    }

    /// Empties the list.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No range.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Gaps given up (merged as if received) for capacity so far.
    pub fn given_up(&self) -> u64 {
        self.given_up
    }

    /// Range `i` in increasing order.
    pub fn get(&self, i: usize) -> Option<PsnRange> {
        if i < self.len {
            self.segs.get(i).copied()
        } else {
            None
        }
    }

    /// The ranges in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = PsnRange> + '_ {
        self.segs.iter().take(self.len).copied()
    }

    /// Inserts `r`, merging with overlapping or adjacent ranges. Returns
    /// `false` if a gap was given up for capacity (see the type's docs).
    pub fn insert(&mut self, origin: Psn, r: PsnRange) -> bool {
        if r.count == 0 || N == 0 {
            return true;
        }
        if self.len < N || !self.separate(origin, r) {
            return self.merge_in(origin, r);
        }
        // Full, and `r` needs a slot of its own: merge the two lowest of the
        // ranges and `r` over the gap between them.
        let off = |p: Psn| origin.forward_distance(p) as u64;
        let s0 = self.get(0);
        let s1 = self.get(1);
        let (a, b) = match (s0, s1) {
            (Some(x), _) if off(r.start) < off(x.start) => (r, x),
            (Some(x), Some(y)) if off(r.start) < off(y.start) => (x, r),
            (Some(x), None) => (x, r),
            (Some(x), Some(y)) => (x, y),
            (None, _) => return self.merge_in(origin, r),
        };
        let lo = off(a.start);
        let hi = off(b.start).saturating_add(b.count as u64);
        self.merge_in(origin, mk(origin, lo, hi));
        self.merge_in(origin, r);
        self.given_up = self.given_up.saturating_add(1);
        false
    }

    /// `r` neither overlaps nor touches any range (it needs its own slot).
    fn separate(&self, origin: Psn, r: PsnRange) -> bool {
        let off = |p: Psn| origin.forward_distance(p) as u64;
        let lo = off(r.start);
        let hi = lo.saturating_add(r.count as u64);
        self.iter().all(|s| {
            let s_lo = off(s.start);
            let s_hi = s_lo.saturating_add(s.count as u64);
            s_hi < lo || s_lo > hi
        })
    }

    /// Inserts `r` when it fits (the list has room or `r` merges with a
    /// range); otherwise leaves the list as it was and returns `false`.
    fn merge_in(&mut self, origin: Psn, r: PsnRange) -> bool {
        let off = |p: Psn| origin.forward_distance(p) as u64;
        let mut lo = off(r.start);
        let mut hi = lo.saturating_add(r.count as u64);
        let mut out = [PsnRange::new(Psn::ZERO, 0); N];
        let mut n = 0usize;
        let mut placed = false;
        let mut ok = true;
        fn push<const N: usize>(x: PsnRange, out: &mut [PsnRange; N], n: &mut usize) -> bool {
            if let Some(slot) = out.get_mut(*n) {
                *slot = x;
                *n = n.wrapping_add(1);
                true
            } else {
                false
            }
        }
        for s in self.segs.iter().take(self.len).copied() {
            let s_lo = off(s.start);
            let s_hi = s_lo.saturating_add(s.count as u64);
            if s_hi < lo {
                ok &= push(s, &mut out, &mut n);
            } else if s_lo > hi {
                if !placed {
                    ok &= push(mk(origin, lo, hi), &mut out, &mut n);
                    placed = true;
                }
                ok &= push(s, &mut out, &mut n);
            } else {
                lo = lo.min(s_lo);
                hi = hi.max(s_hi);
            }
        }
        if !placed {
            ok &= push(mk(origin, lo, hi), &mut out, &mut n);
        }
        if ok {
            self.segs = out;
            self.len = n;
        }
        ok
    }

    /// Advances the cumulative point `cum` (the first PSN not known to be
    /// received) over leading ranges that start at or before it, removing
    /// them and any range entirely before it. Returns the new point.
    pub fn advance(&mut self, mut cum: Psn) -> Psn {
        let mut drop = 0usize;
        for s in self.segs.iter().take(self.len) {
            if s.start.is_after(cum) {
                break;
            }
            let end = s.end();
            if end.is_after(cum) {
                cum = end;
            }
            drop = drop.wrapping_add(1);
        }
        if drop > 0 {
            for i in 0..N {
                let v = self.segs.get(i.wrapping_add(drop)).copied();
                if let (Some(v), Some(d)) = (v, self.segs.get_mut(i)) {
                    *d = v;
                }
            }
            self.len = self.len.saturating_sub(drop);
        }
        cum
    }
}

fn mk(origin: Psn, lo: u64, hi: u64) -> PsnRange {
    let count = hi.saturating_sub(lo).min(Psn::MODULUS as u64) as u32;
    PsnRange::new(origin.wrapping_add(lo as u32), count)
}

/// Batcher and report builder.
#[derive(Clone, Debug)]
pub(super) struct TcState {
    pub(super) thr: Option<TcThresholds>,
    /// `cum` is meaningful.
    pub(super) started: bool,
    /// First PSN not known received (Last Finished PSN + 1).
    pub(super) cum: Psn,
    pub(super) segs: SegmentList<TC_SEGMENTS>,
    /// Arrival time of the first packet of the current batch (NEVER: none).
    pub(super) batch_start: Nanos,
    pub(super) count: u32,
    pub(super) seq: u16,
    /// `segs.given_up()` already counted.
    pub(super) given_up_seen: u64,
}

/// What one report emission did, for the counters.
pub(super) struct Emitted {
    pub(super) fragments: u32,
    pub(super) omitted: u32,
}

impl TcState {
    pub(super) const fn new() -> Self {
        TcState {
            thr: None,
            started: false,
            cum: Psn::ZERO,
            segs: SegmentList::new(),
            batch_start: NEVER,
            count: 0,
            seq: 0,
            given_up_seen: 0,
        }
    }

    pub(super) fn reset(&mut self, thr: Option<TcThresholds>) {
        *self = TcState::new();
        self.thr = thr;
    }

    /// Records PSNs that RDMA now has (or that are known absent). `count`
    /// is how many of them count toward C_thresh. Returns whether a
    /// trigger fired.
    pub(super) fn observe(&mut self, r: PsnRange, count: u32, now: Nanos) -> bool {
        let Some(thr) = self.thr else {
            return false;
        };
        if r.count == 0 {
            return false;
        }
        if !self.started {
            self.started = true;
            self.cum = r.start;
        }
        // Clip what lies before the cumulative point.
        let (start, n) = if r.start.is_before(self.cum) {
            let skip = r.start.forward_distance(self.cum);
            (self.cum, r.count.saturating_sub(skip))
        } else {
            (r.start, r.count)
        };
        if n > 0 {
            self.segs.insert(self.cum, PsnRange::new(start, n));
            self.cum = self.segs.advance(self.cum);
        }
        if count > 0 {
            if self.batch_start == NEVER {
                self.batch_start = now;
            }
            self.count = self.count.saturating_add(count);
        }
        self.due(now, thr)
    }

    fn due(&self, now: Nanos, thr: TcThresholds) -> bool {
        self.batch_start != NEVER
            && (self.count >= thr.c_thresh || now.saturating_sub(self.batch_start) >= thr.t_thresh)
    }

    /// Whether the time trigger has fired.
    pub(super) fn time_due(&self, now: Nanos) -> bool {
        self.thr.is_some_and(|t| self.due(now, t))
    }

    /// When the time trigger fires (NEVER without a batch).
    pub(super) fn deadline(&self) -> Nanos {
        match self.thr {
            Some(t) if self.batch_start != NEVER => self.batch_start.saturating_add(t.t_thresh),
            _ => NEVER,
        }
    }

    /// Sends the report: the leading continuous segment and up to three
    /// further segments per fragment. A continuation fragment's Last
    /// Finished PSN is the right end of the previous fragment's last
    /// segment, so its gaps are exactly the ones after that point (a
    /// receiver must not read it as a cumulative acknowledgment). Every
    /// fragment but the last is full; the last is final (SegmentNum ≤ 3,
    /// possibly an end marker) only when every segment was sent, else it is
    /// a full one and the rest waits for a later report (module docs).
    /// Resets the batch.
    pub(super) fn emit<S: Sink + ?Sized>(&mut self, flow_id: u32, sink: &mut S) -> Emitted {
        let mut e = Emitted {
            fragments: 0,
            omitted: 0,
        };
        self.batch_start = NEVER;
        self.count = 0;
        if !self.started {
            return e;
        }
        let mut lf = self.cum.prev();
        let mut i = 0usize;
        let total = self.segs.len();
        let limit = total.min(MAX_TC_SEGMENTS);
        for _ in 0..MAX_TC_FRAGMENTS {
            let mut segs = [Segment::default(); MAX_SEGMENTS];
            let mut n = 0usize;
            for s in segs.iter_mut() {
                let Some((r, last)) = self
                    .segs
                    .get(i)
                    .filter(|_| i < limit)
                    .and_then(|r| r.last().map(|l| (r, l)))
                else {
                    break;
                };
                *s = Segment {
                    left: r.start,
                    right: last,
                };
                n = n.wrapping_add(1);
                i = i.wrapping_add(1);
            }
            let full = n == MAX_SEGMENTS;
            // A short fragment is final: never while segments remain.
            if !full && i < total {
                break;
            }
            let used = segs.get(..n).unwrap_or(&[]);
            let Ok(fragment) = TcAeth::new(lf, used) else {
                break;
            };
            let msg = TcAethReport {
                flow_id,
                seq: self.seq,
                fragment,
            };
            let mut buf = [0u8; TcAethReport::LEN];
            if let Ok(len) = msg.encode(&mut buf) {
                sink.send(buf.get(..len).unwrap_or(&[]));
                self.seq = self.seq.wrapping_add(1);
                e.fragments = e.fragments.saturating_add(1);
            }
            match used.last() {
                // Full: more segments, or the end marker, follow.
                Some(s) if full && (i < limit || i >= total) => lf = s.right,
                // Final sent, or segments left over after a full one.
                _ => break,
            }
        }
        let given_up = self.segs.given_up();
        e.omitted = (total.saturating_sub(i) as u32).saturating_add(
            given_up
                .saturating_sub(self.given_up_seen)
                .min(u32::MAX as u64) as u32,
        );
        self.given_up_seen = given_up;
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;
    use std::vec::Vec;

    #[derive(Default)]
    struct Out(Vec<TcAethReport>);

    impl Sink for Out {
        fn send(&mut self, msg: &[u8]) {
            self.0.push(TcAethReport::decode(msg).unwrap());
        }
    }

    fn state() -> TcState {
        let mut t = TcState::new();
        t.reset(Some(TcThresholds {
            t_thresh: MS,
            c_thresh: u32::MAX,
        }));
        t
    }

    fn emit(t: &mut TcState) -> Vec<TcAethReport> {
        let mut o = Out::default();
        let e = t.emit(1, &mut o);
        assert_eq!(e.fragments as usize, o.0.len());
        o.0
    }

    /// The CSF's reading of one fragment (`csf/tc.rs`) without the
    /// in-flight guard: the gaps, and for a final fragment the PSNs after
    /// the highest one reported so far up to `top` (the newest sent).
    fn claimed_lost(f: &TcAeth, highest: &mut Option<Psn>, top: Psn) -> Vec<Psn> {
        let mut v: Vec<Psn> = f.lost_ranges().flat_map(|g| g.iter()).collect();
        let h = highest.map_or(f.highest(), |h| h.serial_max(f.highest()));
        *highest = Some(h);
        if f.segments().len() < MAX_SEGMENTS {
            let mut p = h.next();
            while p.is_before_or_eq(top) {
                v.push(p);
                p = p.next();
            }
        }
        v
    }

    #[test]
    fn fragments_final_partial_and_end_marker() {
        for n in 0..=15u32 {
            let mut t = state();
            t.observe(r(1000, 1), 1, 0);
            for i in 1..=n {
                t.observe(r(1000 + 2 * i, 1), 1, 0);
            }
            let f = emit(&mut t);
            let want = if n as usize > MAX_TC_SEGMENTS {
                MAX_TC_SEGMENTS / 3
            } else {
                n as usize / 3 + 1
            };
            assert_eq!(f.len(), want, "{n} segments");
            assert!(f.len() <= MAX_TC_FRAGMENTS);
            let (last, init) = f.split_last().unwrap();
            // Every fragment but the last is full.
            assert!(init.iter().all(|x| x.fragment.segment_num() == 4));
            // Consecutive, chained.
            for (i, w) in f.windows(2).enumerate() {
                assert_eq!(w[1].seq, w[0].seq.wrapping_add(1), "{i}");
                assert_eq!(w[1].fragment.last_finished(), w[0].fragment.highest());
            }
            if n as usize > MAX_TC_SEGMENTS {
                // Segments left over: the report ends partial.
                assert_eq!(last.fragment.segment_num(), 4);
                assert_eq!(last.fragment.highest(), Psn::new(1000 + 2 * 12));
            } else {
                // Final, at the highest PSN received (an end marker when
                // the segments ended on a full fragment).
                assert_eq!(last.fragment.segment_num() as u32, n % 3 + 1);
                assert_eq!(last.fragment.highest(), Psn::new(1000 + 2 * n));
            }
        }
    }

    #[test]
    fn overflow_gives_up_the_lowest_gap_and_stays_complete() {
        let mut t = state();
        t.observe(r(0, 1), 1, 0);
        // 1, 3, 5, ... lost: 20 segments for a list of 16.
        for i in 1..=20u32 {
            t.observe(r(2 * i, 1), 1, 0);
        }
        assert_eq!(t.segs.len(), TC_SEGMENTS);
        assert_eq!(t.segs.given_up(), 4);
        // The lowest gaps 3, 5, 7, 9 were given up; nothing received is
        // missing from the list.
        assert_eq!(t.segs.get(0), Some(r(2, 9)));
        assert_eq!(t.segs.get(15).and_then(|x| x.last()), Some(Psn::new(40)));
        let mut o = Out::default();
        let e = t.emit(1, &mut o);
        assert_eq!(e.fragments, 4);
        assert_eq!(e.omitted, 4 + 4, "4 segments left over, 4 gaps given up");
        // Filling the lowest gap lets the cumulative point pass the given-up
        // ones; the next report is then complete and final.
        t.observe(r(1, 1), 1, 0);
        assert_eq!(t.cum, Psn::new(11));
        for p in [11, 13, 15] {
            t.observe(r(p, 1), 1, 0);
        }
        assert_eq!(t.cum, Psn::new(17));
        let f = emit(&mut t);
        assert_eq!(f.len(), 5, "12 segments and the end marker");
        let last = f.last().unwrap().fragment;
        assert_eq!(last.segment_num(), 1);
        assert_eq!(last.highest(), Psn::new(40));
    }

    proptest! {
        /// Whatever the losses, the list overflows and the fragments the
        /// CSF gets (any subset, any order), no PSN the CRF had observed
        /// when it sent the report is claimed lost; and a complete report
        /// (no overflow, all segments fit) delivered whole names exactly
        /// the missing PSNs.
        #[test]
        fn fragments_never_claim_received_psns_lost(
            start in prop_oneof![Just(0u32), Just(0xFF_FF00u32), any::<u32>()],
            recv in proptest::collection::vec(any::<bool>(), 1..400),
            emit_every in 1usize..80,
            swap in proptest::collection::vec(any::<u8>(), 0..64),
            drop in proptest::collection::vec(any::<bool>(), 0..64),
        ) {
            let start = Psn::new(start);
            let mut t = state();
            let mut seen: BTreeSet<u32> = BTreeSet::new();
            let mut highest: Option<Psn> = None;
            let mut last_seq: Option<u16> = None;
            let mut k = 0usize;
            for (i, &ok) in recv.iter().enumerate() {
                let p = start.wrapping_add(i as u32);
                if ok || i == 0 {
                    t.observe(PsnRange::new(p, 1), 1, 0);
                    seen.insert(p.value());
                }
                if i % emit_every != emit_every - 1 && i + 1 != recv.len() {
                    continue;
                }
                let overflowed = t.segs.given_up() > 0;
                let complete = !overflowed && t.segs.len() <= MAX_TC_SEGMENTS;
                let mut f = emit(&mut t);
                // Whole, in order: exactly the missing PSNs when complete.
                let mut h2 = highest;
                let mut all: BTreeSet<u32> = BTreeSet::new();
                for x in &f {
                    for q in claimed_lost(&x.fragment, &mut h2, p) {
                        prop_assert!(!seen.contains(&q.value()), "{q:?} received");
                        all.insert(q.value());
                    }
                }
                if complete {
                    let missing: BTreeSet<u32> = (0..=i as u32)
                        .map(|d| start.wrapping_add(d).value())
                        .filter(|q| !seen.contains(q))
                        .filter(|&q| !Psn::new(q).is_before(t.cum))
                        .collect();
                    let lo = f.first().map(|x| x.fragment.last_finished());
                    let all: BTreeSet<u32> = all
                        .into_iter()
                        .filter(|&q| lo.is_none_or(|l| Psn::new(q).is_after(l)))
                        .collect();
                    prop_assert_eq!(all, missing);
                }
                // Dropped and reordered, read with the CSF's sequence check.
                for j in 0..f.len() {
                    let a = swap.get(k).map_or(0, |&v| v as usize) % f.len();
                    f.swap(j, a);
                    k += 1;
                }
                for x in &f {
                    k += 1;
                    if drop.get(k).copied().unwrap_or(false) {
                        continue;
                    }
                    if last_seq.is_some_and(|l| (x.seq.wrapping_sub(l) as i16) <= 0) {
                        continue;
                    }
                    last_seq = Some(x.seq);
                    for q in claimed_lost(&x.fragment, &mut highest, p) {
                        prop_assert!(!seen.contains(&q.value()), "{q:?} received");
                    }
                }
            }
        }
    }

    fn r(s: u32, n: u32) -> PsnRange {
        PsnRange::new(Psn::new(s), n)
    }

    fn list<const N: usize>(l: &SegmentList<N>) -> Vec<(u32, u32)> {
        l.iter().map(|x| (x.start.value(), x.count)).collect()
    }

    #[test]
    fn merge_and_capacity() {
        let o = Psn::new(100);
        let mut l = SegmentList::<3>::new();
        assert!(l.insert(o, r(110, 2)));
        assert!(l.insert(o, r(105, 2)));
        assert!(l.insert(o, r(120, 1)));
        assert_eq!(list(&l), [(105, 2), (110, 2), (120, 1)]);
        // 107..110 is adjacent to both neighbours: all three merge
        assert!(l.insert(o, r(107, 3)));
        assert_eq!(list(&l), [(105, 7), (120, 1)]);
        assert!(l.insert(o, r(130, 1)));
        // full: a new highest range gives up the lowest gap (112..120)
        assert!(!l.insert(o, r(140, 1)));
        assert_eq!(l.given_up(), 1);
        assert_eq!(list(&l), [(105, 16), (130, 1), (140, 1)]);
        // full: a new lowest range merges with the lowest one over its gap
        assert!(!l.insert(o, r(101, 1)));
        assert_eq!(list(&l), [(101, 20), (130, 1), (140, 1)]);
        // full: a new second-lowest range merges with the lowest one
        assert!(!l.insert(o, r(125, 2)));
        assert_eq!(list(&l), [(101, 26), (130, 1), (140, 1)]);
        assert_eq!(l.given_up(), 3);
        // full, but merging with a range: nothing given up
        assert!(l.insert(o, r(131, 2)));
        assert!(l.insert(o, r(141, 1)));
        assert_eq!(list(&l), [(101, 26), (130, 3), (140, 2)]);
        assert_eq!(l.given_up(), 3);
        // overlap spanning several
        assert!(l.insert(o, r(102, 50)));
        assert_eq!(list(&l), [(101, 51)]);
        assert_eq!(l.advance(Psn::new(100)), Psn::new(100));
        assert_eq!(l.advance(Psn::new(101)), Psn::new(152));
        assert!(l.is_empty());
        assert!(l.insert(o, r(0, 0)));
        l.clear();
        assert_eq!(l.len(), 0);
        assert!(l.get(0).is_none());
    }

    #[test]
    fn wraps() {
        let o = Psn::new(0xFF_FFF0);
        let mut l = SegmentList::<4>::default();
        l.insert(o, r(0xFF_FFFE, 4));
        l.insert(o, r(0xFF_FFF8, 2));
        assert_eq!(list(&l), [(0xFF_FFF8, 2), (0xFF_FFFE, 4)]);
        assert_eq!(l.advance(Psn::new(0xFF_FFF8)), Psn::new(0xFF_FFFA));
        assert_eq!(l.advance(Psn::new(0xFF_FFFF)), Psn::new(2));
    }

    #[test]
    fn thresholds() {
        let t = TcThresholds::from_rate(1_000_000, 10 * MS);
        assert_eq!(t.t_thresh, 2_500_000);
        assert_eq!(t.c_thresh, 2500);
        let t = TcThresholds::from_rate(0, 0);
        assert_eq!(t.t_thresh, TcThresholds::MIN_T);
        assert_eq!(t.c_thresh, 1);
        let t = TcThresholds::from_rate(u64::MAX, u64::MAX);
        assert_eq!(t.t_thresh, TcThresholds::MAX_T);
        assert_eq!(t.c_thresh, TcThresholds::MAX_C);
    }
}
