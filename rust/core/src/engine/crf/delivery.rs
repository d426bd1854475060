//! The window's frontiers: in-order delivery with the hold time H, the
//! highest PSN and loss accounting, window slides, source-copy dropping and
//! READ spans.

use super::super::super::psn::{Psn, PsnRange};
use super::super::super::roce::RocePacket;
use super::super::{Nanos, Sink};
use super::window::{
    self, coarse_up, ABANDONED, ABSENT, DELIVERED, DETECTED, HAVE, HELD, IN_BLOCK, KEPT,
    REPLAYABLE, RESOLVED,
};
use super::Crf;
use super::{inc, report, CrfHost, CrfStorage, Delivery, Restored, SymbolStore, AHEAD, READ_SPANS};

/// Where a newly had packet goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// Before the in-order point: its successors were already passed on.
    Late,
    /// At the in-order point.
    InOrder,
    /// After a gap, not held (H = 0 or no room).
    OutOfOrder,
    /// After a gap, held.
    Hold,
}

impl<St: CrfStorage> Crf<St> {
    /// Decides how a packet that just became available is delivered.
    pub(super) fn decide(&mut self, p: Psn) -> Place {
        let dn = self.win.deliver_next;
        if p.is_before(dn) {
            return Place::Late;
        }
        if p == dn {
            return Place::InOrder;
        }
        if self.cfg.hold_time == 0 {
            return Place::OutOfOrder;
        }
        if self.hold.is_full() {
            inc(&mut self.counters.hold_full);
            return Place::OutOfOrder;
        }
        Place::Hold
    }

    /// Applies a decision (the packet was handed over, or is held).
    /// `can_release`: held successors may be released within this call.
    pub(super) fn apply_place<D: Delivery + ?Sized>(
        &mut self,
        p: Psn,
        place: Place,
        now: Nanos,
        can_release: bool,
        host: &mut D,
    ) {
        match place {
            Place::Late | Place::OutOfOrder => {
                self.win.set(p, DELIVERED);
            }
            Place::InOrder => {
                self.win.set(p, DELIVERED);
                self.win.deliver_next = p.next();
                self.advance_delivery(can_release, host);
            }
            Place::Hold => {
                let deadline = now.saturating_add(self.cfg.hold_time);
                if self.hold.push(p, deadline) {
                    self.win.set(p, HELD);
                    inc(&mut self.counters.held);
                } else {
                    // Unreachable after `decide`; delivered out of order.
                    self.win.set(p, DELIVERED);
                }
            }
        }
    }

    /// Moves the in-order point over delivered, absent and abandoned PSNs,
    /// releasing held packets on the way (or noting that releases are due
    /// when `can_release` is false).
    pub(super) fn advance_delivery<D: Delivery + ?Sized>(
        &mut self,
        can_release: bool,
        host: &mut D,
    ) {
        if can_release {
            self.release_pending = false;
        }
        for _ in 0..self.win.cap() {
            let p = self.win.deliver_next;
            let Some(s) = self.win.slot(p) else {
                return;
            };
            let f = self.win.at(s);
            if f & HELD != 0 {
                if !can_release {
                    self.release_pending = true;
                    return;
                }
                host.release(p);
                self.note_injected(p);
                self.win.clear(p, HELD);
                self.win.set(p, DELIVERED);
                inc(&mut self.counters.released_in_order);
            } else if f & (DELIVERED | ABSENT | ABANDONED) == 0 {
                return;
            }
            self.win.deliver_next = p.next();
        }
    }

    /// Whether a packet held for in-order release has a PSN before `psn`.
    ///
    /// An RDMA ACK or NAK at `psn` acknowledges the requester's PSNs before
    /// it; on a responses flow, if it reached the requester ahead of READ
    /// responses held here, the requester would take them for lost and
    /// resend from the first (rxe's completer: an ACK beyond a pending
    /// READ). The host keeps such an ACK back while this is true, and lets
    /// it go as the holds before it are released (each release is in PSN
    /// order, so an ACK before the released PSN may go first).
    ///
    /// Held PSNs all lie after the in-order point and at most at the
    /// highest PSN: the walk covers that span, stopping at the first held
    /// one (usually just after the gap at the in-order point).
    pub fn holds_before(&self, psn: Psn) -> bool {
        if self.hold.is_empty() {
            return false;
        }
        let mut p = self.win.deliver_next;
        for _ in 0..self.win.cap() {
            if !p.is_before(psn) || p.is_after(self.win.highest) {
                return false;
            }
            if self.win.get(p) & HELD != 0 {
                return true;
            }
            p = p.next();
        }
        false
    }

    /// Releases, in PSN order, everything held up to each packet whose hold
    /// time has run out, skipping the gaps before it.
    pub(super) fn expire_holds<D: Delivery + ?Sized>(&mut self, now: Nanos, host: &mut D) {
        while let Some((p, deadline)) = self.hold.front() {
            if deadline > now {
                break;
            }
            self.hold.pop();
            if self.win.get(p) & HELD == 0 {
                continue;
            }
            let n = self.win.deliver_next.forward_distance(p) as usize;
            let mut q = self.win.deliver_next;
            for _ in 0..=n.min(self.win.cap()) {
                if self.win.get(q) & HELD != 0 {
                    host.release(q);
                    self.note_injected(q);
                    self.win.clear(q, HELD);
                    self.win.set(q, DELIVERED);
                    inc(&mut self.counters.released_by_h);
                }
                if q == p {
                    break;
                }
                q = q.next();
            }
            self.win.deliver_next = p.next();
            self.advance_delivery(true, host);
        }
    }

    /// The highest PSN moves to `psn`: counts the expected positions and
    /// triggers the blocks now "beyond", then notices gaps far enough
    /// behind.
    pub(super) fn advance_highest(&mut self, psn: Psn, now: Nanos) {
        let h = self.win.highest;
        let n = h.forward_distance(psn);
        // Positions skipped below the window (a jump): count via spans.
        let mut absent = 0u32;
        let first = h.next();
        let base = self.win.base;
        let mut from = first;
        if first.is_before(base) {
            let skipped = PsnRange::new(first, first.forward_distance(base));
            absent = absent.saturating_add(self.span_overlap(skipped));
            from = base;
        }
        let mut p = from;
        for _ in 0..self.win.cap() {
            if p.is_after(psn) {
                break;
            }
            if self.win.get(p) & ABSENT != 0 {
                absent = absent.saturating_add(1);
            }
            p = p.next();
        }
        report::add32(&mut self.report.iv.expected, n.saturating_sub(absent));
        self.win.highest = psn;

        if self.untriggered > 0 {
            let allowance = self.allowance();
            // `untriggered` is at least the untriggered open blocks (it is
            // not lowered when one is freed or triggered by its LAST
            // repair): once that many are seen, there are no more. They
            // are the latest, mostly: look from the last start back.
            let mut left = 0usize;
            let mut seen = 0usize;
            let mut j = self.ring_len;
            while j > 0 && seen < self.untriggered {
                j = j.wrapping_sub(1);
                let i = self.ring_at(j);
                let Some(b) = self
                    .blocks
                    .as_mut()
                    .get_mut(i)
                    .filter(|b| b.live && !b.triggered)
                else {
                    continue;
                };
                seen = seen.wrapping_add(1);
                let old = b.deadline;
                if psn.is_after_or_eq(b.start.wrapping_add(b.k as u32)) {
                    b.triggered = true;
                    if b.stage == super::blocks::Stage::Open {
                        b.deadline = b.deadline.min(now.saturating_add(allowance));
                    }
                } else {
                    left = left.wrapping_add(1);
                }
                let new = b.deadline;
                self.deadline_changed(old, new);
            }
            self.untriggered = left;
        }
        self.detect_gaps(now);
    }

    /// A source arrived before the lowest PSN seen so far (reordering at
    /// the start of the flow): the positions in between become expected
    /// and subject to gap detection.
    pub(super) fn extend_origin(&mut self, psn: Psn, now: Nanos) {
        let origin = self.win.origin;
        let n = psn.forward_distance(origin);
        let mut absent = 0u32;
        let mut p = psn;
        for _ in 0..(n as usize).min(self.win.cap()) {
            if self.win.get(p) & ABSENT != 0 {
                absent = absent.saturating_add(1);
            }
            p = p.next();
        }
        report::add32(&mut self.report.iv.expected, n.saturating_sub(absent));
        self.win.origin = psn;
        if psn.is_before(self.win.detect_next) {
            self.win.detect_next = psn;
        }
        self.win.unresolve(psn);
        self.detect_gaps(now);
    }

    /// Marks as detected the gaps at least the detection distance behind
    /// the highest PSN, with their due time.
    pub(super) fn detect_gaps(&mut self, now: Nanos) {
        let d = self.detect_distance();
        let due = now.saturating_add(self.allowance());
        let mut any = false;
        for _ in 0..self.win.cap() {
            let p = self.win.detect_next;
            if p.wrapping_add(d).is_after(self.win.highest) {
                break;
            }
            let Some(s) = self.win.slot(p) else {
                break;
            };
            let f = self.win.at(s);
            if f & (RESOLVED | IN_BLOCK | DETECTED) == 0 {
                self.win.set_gap(s, 0, coarse_up(due));
                any = true;
            }
            self.win.detect_next = p.next();
        }
        if any {
            self.gap_due_min = self.gap_due_min.min(window::wake(due));
        }
    }

    /// Moves the window so that `psn` lies `AHEAD` below its top. PSNs that
    /// leave are settled: held ones released (in order: all are below
    /// `psn`), kept ones dropped, unresolved ones counted lost.
    pub(super) fn slide_to<H: CrfHost + ?Sized>(&mut self, psn: Psn, now: Nanos, host: &mut H) {
        let new_base = psn.wrapping_sub((self.win.cap().saturating_sub(AHEAD + 1)) as u32);
        let n = self.win.base.forward_distance(new_base) as usize;
        if n == 0 {
            return;
        }
        let old_top = self.win.top();
        let highest = self.win.highest;
        let unresolved_from = self.win.resolve_next;
        let mut p = self.win.base;
        for _ in 0..n.min(self.win.cap()) {
            if let Some(s) = self.win.slot(p) {
                let f = self.win.at(s);
                if f & HELD != 0 {
                    host.release(p);
                    inc(&mut self.counters.released_forced);
                }
                if f & (KEPT | REPLAYABLE) != 0 {
                    host.drop_source(s);
                }
                if f & RESOLVED == 0
                    && p.is_after_or_eq(unresolved_from)
                    && p.is_before_or_eq(highest)
                {
                    inc(&mut self.counters.psns_lost_window);
                }
                self.win.wipe(s);
            }
            p = p.next();
        }
        self.win.base = new_base;
        let w = self.win.cap();
        self.win.base_slot = self
            .win
            .base_slot
            .wrapping_add(n.checked_rem(w).unwrap_or(0))
            .checked_rem(w)
            .unwrap_or(0);
        self.win.clamp_frontiers();
        // Blocks that started before the new base can no longer be tracked:
        // a prefix of the ring (all started at or after the old base, which
        // the new one follows by less than half the PSN space). They go in
        // slot order.
        let mut gone = 0usize;
        while gone < self.ring_len {
            let b = self.ring_at(gone);
            let before = self
                .blocks
                .as_ref()
                .get(b)
                .is_some_and(|x| x.live && x.start.is_before(new_base));
            if !before {
                break;
            }
            gone = gone.wrapping_add(1);
        }
        if gone == 1 {
            let b = self.ring_at(0);
            self.ring_remove(0);
            inc(&mut self.counters.blocks_evicted_window);
            self.free_block_in(b, false, host, false);
        } else if gone > 1 {
            for _ in 0..gone {
                self.ring_remove(0);
            }
            for b in 0..self.blocks.as_ref().len() {
                let gone = self
                    .blocks
                    .as_ref()
                    .get(b)
                    .is_some_and(|x| x.live && x.start.is_before(new_base));
                if gone {
                    inc(&mut self.counters.blocks_evicted_window);
                    self.free_block_in(b, false, host, false);
                }
            }
        }
        // Newly covered positions: apply the READ spans recorded for them.
        let new_top = self.win.top();
        let fresh_from = if n >= self.win.cap() {
            new_base
        } else {
            old_top
        };
        let fresh = PsnRange::new(fresh_from, fresh_from.forward_distance(new_top));
        for i in 0..READ_SPANS {
            let Some(span) = self.read_spans.get(i).copied() else {
                continue;
            };
            self.mark_span_absent(span, fresh, now, host, true);
        }
        self.advance_delivery(true, host);
    }

    /// Moves the resolved point and drops source copies no block can need
    /// any more.
    ///
    /// Every block containing PSN p lies within k−1 of p, and blocks do
    /// not overlap. A source is needed while it is in a live block (kept
    /// until `free_block`), or while a *gap* (a PSN not resolved and in no
    /// live block: its block is not known yet, or was given back to gap
    /// tracking) lies within kmax−1 of it, the PSNs after `highest`
    /// counting as gaps. Any other block containing it is complete.
    ///
    /// Two sweeps drop the rest. The near one runs behind `need_next`, the
    /// first gap: everything before `need_next` − (kmax−1) but live
    /// blocks' sources goes. The far one runs ahead of `need_next`, its
    /// lead at `far_next`, and drops the source kmax−1 behind the lead
    /// when no gap it saw is within kmax−1 of that source. A source it
    /// keeps for a gap that is later resolved goes when the near sweep
    /// passes it.
    ///
    /// Before, sources were kept from the oldest live block or gap on, so
    /// a gap waiting a round trip for its coded retransmission kept a round
    /// trip of sources after it (crem-sim at 10 Gbit/s × 20 ms: 0.9 to 1.7
    /// BDP; docs/perf.md).
    pub(super) fn advance_resolve<S: SymbolStore + ?Sized>(&mut self, store: &mut S) {
        self.win.resolve_next = self.win.walk(self.win.resolve_next, RESOLVED);
        let from = self.win.need_next.serial_max(self.win.resolve_next);
        self.win.need_next = self.win.walk(from, RESOLVED | IN_BLOCK);
        if self.requests_from.is_none() {
            // No configuration yet, so no k: sources behind the frontier
            // may still belong to a block coded before PARAM_ACK whose
            // repairs are on their way. Keep them all (the window bounds
            // them); before, the first PSNs of such a block were dropped
            // and named lost in its request.
            return;
        }
        let reach = self.kmax.saturating_sub(1) as u32;
        let bound = self.win.need_next.wrapping_sub(reach);
        for _ in 0..self.win.cap() {
            let p = self.win.drop_next;
            if !p.is_before(bound) {
                break;
            }
            self.drop_unless_in_block(p, store);
            self.win.drop_next = p.next();
        }
        // The far sweep restarts after `need_next` (a gap, or past
        // `highest`) whenever the near one has caught up with it.
        if !self.win.far_next.is_after(self.win.need_next) {
            self.win.far_gap = self.win.need_next;
            self.win.far_next = self.win.need_next.next();
        }
        for _ in 0..self.win.cap() {
            let x = self.win.far_next;
            if x.is_after(self.win.highest) {
                break;
            }
            if self.win.get(x) & (RESOLVED | IN_BLOCK) == 0 {
                self.win.far_gap = x;
            }
            let q = x.wrapping_sub(reach);
            if q.wrapping_sub(reach).is_after(self.win.far_gap) {
                self.drop_unless_in_block(q, store);
            }
            self.win.far_next = x.next();
        }
    }

    /// Drops the kept source at `p` unless a live block covers it.
    fn drop_unless_in_block<S: SymbolStore + ?Sized>(&mut self, p: Psn, store: &mut S) {
        let Some(s) = self.win.slot(p) else {
            return;
        };
        let f = self.win.at(s);
        if f & KEPT != 0 && f & IN_BLOCK == 0 {
            self.retire_source(p, s, store);
        }
    }

    /// Number of PSNs of `r` inside recorded READ spans.
    fn span_overlap(&self, r: PsnRange) -> u32 {
        let mut n = 0u32;
        for s in self.read_spans.iter() {
            n = n.saturating_add(intersect(*s, r).count);
        }
        n.min(r.count)
    }

    /// Marks the PSNs of `span ∩ within` absent (not those already had or
    /// inside a known block), with the loss-report and T/C bookkeeping.
    fn mark_span_absent<S: Sink + ?Sized>(
        &mut self,
        span: PsnRange,
        within: PsnRange,
        now: Nanos,
        sink: &mut S,
        read: bool,
    ) {
        let r = intersect(span, within);
        let mut p = r.start;
        for _ in 0..(r.count as usize).min(self.win.cap()) {
            self.mark_absent(p, now, sink, read);
            p = p.next();
        }
    }

    /// Marks one PSN absent. Returns whether it changed.
    pub(super) fn mark_absent<S: Sink + ?Sized>(
        &mut self,
        p: Psn,
        now: Nanos,
        sink: &mut S,
        read: bool,
    ) -> bool {
        let f = self.win.get(p);
        if f & (HAVE | ABSENT | IN_BLOCK) != 0 || !self.win.set(p, ABSENT) {
            return false;
        }
        self.win.clear(p, ABANDONED);
        if p.is_before_or_eq(self.win.highest) {
            let e = &mut self.report.iv.expected;
            *e = e.saturating_sub(1);
        }
        if read {
            inc(&mut self.counters.read_absent);
        } else {
            inc(&mut self.counters.bitmap_absent);
        }
        self.tc_observe(PsnRange::new(p, 1), 0, now, sink);
        true
    }

    /// A FIRST or MIDDLE packet carries exactly the connection's RDMA MTU:
    /// the flow takes it (the HELLO's may be the CSF's estimate, made before
    /// it saw such a packet, see `FlowMtu`). True if `pkt` is one.
    fn learn_mtu(&mut self, pkt: &RocePacket<'_>) -> bool {
        match pkt.path_mtu() {
            Some(m) => {
                self.cfg.rdma_mtu = m;
                true
            }
            None => false,
        }
    }

    /// If `payload` is an RDMA READ request, its response PSNs never appear
    /// in this direction: mark them absent (and remember the span for
    /// positions beyond the window). A FIRST or MIDDLE packet sets the
    /// RDMA MTU the spans are counted with.
    pub(super) fn note_read<S: Sink + ?Sized>(
        &mut self,
        psn: Psn,
        payload: &[u8],
        now: Nanos,
        sink: &mut S,
    ) {
        let Ok(pkt) = RocePacket::parse(payload) else {
            return;
        };
        if self.learn_mtu(&pkt) {
            return;
        }
        if self.cfg.rdma_mtu == 0 {
            return;
        }
        let Some(Ok(span)) = pkt.read_span(self.cfg.rdma_mtu) else {
            return;
        };
        if span.count <= 1 {
            return;
        }
        let absent = PsnRange::new(psn.next(), span.count.saturating_sub(1));
        if !self.read_spans.contains(&absent) {
            if let Some(slot) = self.read_spans.get_mut(self.read_span_next % READ_SPANS) {
                *slot = absent;
            }
            self.read_span_next = self.read_span_next.wrapping_add(1) % READ_SPANS;
        }
        let within = PsnRange::new(self.win.base, self.win.cap() as u32);
        self.mark_span_absent(absent, within, now, sink, true);
        // T/C: the part beyond the window is absent too.
        let beyond = intersect(
            absent,
            PsnRange::new(self.win.top(), absent.count.min(1 << 23)),
        );
        if beyond.count > 0 {
            self.tc_observe(beyond, 0, now, sink);
        }
    }

    /// A source of a responder flow: READ responses come in runs of
    /// consecutive PSNs (FIRST … LAST, or ONLY; an ATOMIC ACKNOWLEDGE is a
    /// run of one), and the PSNs between the end of one run and the start of
    /// the next carried the requester's other requests, which never come
    /// this way. Those are guessed absent, like a READ request's span in the
    /// request direction, so what follows is not held for them; a Present
    /// Bitmap that says otherwise undoes the guess (`learn_block`). A run
    /// whose LAST was lost leaves no guess: its gap waits for the block.
    pub(super) fn note_response<S: Sink + ?Sized>(
        &mut self,
        psn: Psn,
        payload: &[u8],
        now: Nanos,
        sink: &mut S,
    ) {
        let Ok(pkt) = RocePacket::parse(payload) else {
            return;
        };
        self.learn_mtu(&pkt);
        if pkt.info.first {
            if let Some(end) = self.resp_end {
                let from = end.next();
                if psn.is_after(from) {
                    let gap = PsnRange::new(from, from.forward_distance(psn));
                    let within = PsnRange::new(self.win.base, self.win.cap() as u32);
                    self.mark_span_absent(gap, within, now, sink, true);
                }
            }
        }
        if pkt.info.last && self.resp_end.is_none_or(|e| psn.is_after(e)) {
            self.resp_end = Some(psn);
        }
    }

    /// A restored packet became available: verify through the host, then
    /// deliver or hold it. Returns what became of it (a symbol that is no
    /// packet of that PSN counts as an ICRC failure: it is not the packet).
    pub(super) fn restore_one<H: CrfHost + ?Sized>(
        &mut self,
        p: Psn,
        payload: &[u8],
        now: Nanos,
        host: &mut H,
    ) -> Restored {
        if let Ok(bth) = super::super::super::roce::Bth::parse(payload) {
            if bth.psn != p {
                inc(&mut self.counters.restore_malformed);
                return Restored::IcrcFailed;
            }
        }
        let place = self.decide(p);
        match host.restored(p, payload, place == Place::Hold) {
            // A held one goes on at its release, noted there.
            Restored::Verified if place != Place::Hold => self.note_injected(p),
            Restored::Verified => {}
            Restored::IcrcFailed => {
                inc(&mut self.counters.icrc_failures);
                return Restored::IcrcFailed;
            }
            Restored::NoHeader => {
                inc(&mut self.counters.restore_no_header);
                return Restored::NoHeader;
            }
            Restored::Dropped => return Restored::Dropped,
        }
        inc(&mut self.counters.restored);
        report::add32(&mut self.report.iv.restored, 1);
        if place == Place::Late {
            inc(&mut self.counters.restored_late);
        }
        // A restored PSN shows the flow got that far, like an arrival:
        // later gaps must still be noticed if its original never comes.
        if p.is_after(self.win.highest) {
            self.advance_highest(p, now);
        } else if p.is_before(self.win.origin) {
            self.extend_origin(p, now);
        }
        self.win.clear(p, ABANDONED | ABSENT);
        self.win.set(p, window::RESTORED);
        self.apply_place(p, place, now, true, host);
        self.note_read(p, payload, now, host);
        self.tc_observe(PsnRange::new(p, 1), 1, now, host);
        Restored::Verified
    }
}

/// Intersection of two ranges (each shorter than 2^23), possibly empty.
pub(super) fn intersect(a: PsnRange, b: PsnRange) -> PsnRange {
    if a.count == 0 || b.count == 0 {
        return PsnRange::new(a.start, 0);
    }
    // Start: the later of the two starts that lies in the other range.
    let start = if b.contains(a.start) {
        a.start
    } else if a.contains(b.start) {
        b.start
    } else {
        return PsnRange::new(a.start, 0);
    };
    let a_left = a.count.saturating_sub(a.start.forward_distance(start));
    let b_left = b.count.saturating_sub(b.start.forward_distance(start));
    PsnRange::new(start, a_left.min(b_left))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: u32, n: u32) -> PsnRange {
        PsnRange::new(Psn::new(s), n)
    }

    #[test]
    fn intersections() {
        assert_eq!(intersect(r(10, 5), r(12, 10)), r(12, 3));
        assert_eq!(intersect(r(12, 10), r(10, 5)), r(12, 3));
        assert_eq!(intersect(r(10, 5), r(15, 5)).count, 0);
        assert_eq!(intersect(r(10, 0), r(10, 5)).count, 0);
        assert_eq!(intersect(r(0xFF_FFFE, 4), r(0, 10)), r(0, 2));
        assert_eq!(intersect(r(5, 100), r(10, 3)), r(10, 3));
    }
}
