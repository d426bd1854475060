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

use super::super::super::psn::{Psn, PsnRange};
use super::super::super::wire::{Segment, TcAeth, TcAethReport};
use super::super::{Nanos, Sink, MS, SEC};

/// Segments the CRF tracks above the cumulative point.
pub const TC_SEGMENTS: usize = 16;
/// Fragments (TC_AETH messages) sent per report at most: 1 leading
/// continuous segment + 3 segments per fragment.
pub const MAX_TC_FRAGMENTS: usize = 4;

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
        let t = (srtt / 4).clamp(Self::MIN_T, Self::MAX_T);
        let c = rate_pps.saturating_mul(t) / SEC;
        TcThresholds {
            t_thresh: t,
            c_thresh: c.clamp(1, Self::MAX_C as u64) as u32,
        }
    }
}

/// Ordered, merged list of received PSN ranges above a reference point, of
/// fixed capacity `N`.
///
/// Ranges are kept disjoint and non-adjacent (adjacent ranges merge). When
/// full, the highest range is dropped: under-reporting receipt above the
/// last reported segment is harmless, since PSNs after the last segment are
/// never counted as lost. Ordering uses forward distance from the caller's
/// `origin`, which must not be after any range.
#[derive(Clone, Debug)]
pub struct SegmentList<const N: usize> {
    segs: [PsnRange; N],
    len: usize,
    dropped: u64,
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
            dropped: 0,
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

    /// Ranges dropped for capacity so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
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
    /// `false` if a range (`r` itself or the highest one) was dropped for
    /// capacity.
    pub fn insert(&mut self, origin: Psn, r: PsnRange) -> bool {
        if r.count == 0 || N == 0 {
            return true;
        }
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
        self.segs = out;
        self.len = n;
        if !ok {
            self.dropped = self.dropped.saturating_add(1);
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
    /// `segs.dropped()` already counted.
    pub(super) dropped_seen: u64,
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
            dropped_seen: 0,
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
    /// receiver must not read it as a cumulative acknowledgment). Resets
    /// the batch.
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
        for f in 0..MAX_TC_FRAGMENTS {
            if f > 0 && i >= total {
                break;
            }
            let mut segs = [Segment::default(); 3];
            let mut n = 0usize;
            while n < 3 {
                let Some(r) = self.segs.get(i) else {
                    break;
                };
                let Some(last) = r.last() else {
                    break;
                };
                if let Some(s) = segs.get_mut(n) {
                    *s = Segment {
                        left: r.start,
                        right: last,
                    };
                }
                n = n.wrapping_add(1);
                i = i.wrapping_add(1);
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
                Some(s) => lf = s.right,
                None => break,
            }
        }
        let dropped = self.segs.dropped();
        e.omitted = (total.saturating_sub(i) as u32).saturating_add(
            dropped
                .saturating_sub(self.dropped_seen)
                .min(u32::MAX as u64) as u32,
        );
        self.dropped_seen = dropped;
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

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
        // full: a new highest range is dropped
        assert!(!l.insert(o, r(140, 1)));
        assert_eq!(l.dropped(), 1);
        // full: a lower new range evicts the highest
        assert!(!l.insert(o, r(101, 1)));
        assert_eq!(list(&l), [(101, 1), (105, 7), (120, 1)]);
        // overlap spanning several
        assert!(l.insert(o, r(102, 30)));
        assert_eq!(list(&l), [(101, 31)]);
        assert_eq!(l.advance(Psn::new(100)), Psn::new(100));
        assert_eq!(l.advance(Psn::new(101)), Psn::new(132));
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
