//! Selective repeat: T/C AETH reports from the CRF answered with Source
//! Copy from retention (windowless-ACK draft §4 and §6, DESIGN §3).
//!
//! The lost PSNs of a fragment are the gaps between its received segments,
//! plus — for a *final* fragment only — the PSNs after the highest one
//! reported (in this or any earlier fragment) that were sent at least
//! SRTT + batching time before the fragment arrived (the in-flight guard:
//! anything later may simply not have arrived yet). Each lost PSN is
//! re-sent at most once per SRTT, at most `tc_max_per_report` per fragment,
//! within the retransmission budget shared with REPAIR_REQUEST answers
//! (`csf/budget.rs`; what it leaves out may go with a later report), and
//! only when retained and present; fragments older than or equal to the
//! newest one processed (16-bit Report Sequence, serial order) are ignored.
//!
//! # Our ruling: final and partial fragments
//!
//! A report with more segments than one fragment holds goes out as several
//! fragments (consecutive Report Sequences, each starting where the
//! previous one ended; `crf/tc.rs`). Each fragment is read on its own, with
//! no reassembly state, by a rule derived from SegmentNum alone:
//!
//! * SegmentNum = 4 (all three segment pairs used): *partial*. Its gaps are
//!   lost; the PSNs after its highest segment are **unknown**, not lost —
//!   more fragments may follow, or the CRF had more to say than fits.
//! * SegmentNum ≤ 3: *final*. Its gaps are lost and so is its tail (behind
//!   the guard). This is the draft's "SegmentNum = 1" case, extended to
//!   SegmentNum 2–3: such a fragment is always the last of its report.
//!
//! The CRF keeps its side: it fills every fragment but the last with three
//! segments, sends a final fragment only when nothing it knows received
//! lies above that fragment's highest segment (when segments are left
//! over, the report ends on a full fragment), and when the segments end
//! exactly on a full fragment it appends an end marker (SegmentNum 1, Last
//! Finished PSN = the highest segment's end). So a tail the CSF counts lost
//! was not received when the report left the CRF, a gap never holds a
//! received PSN, and a fragment that is lost, reordered (then ignored as
//! old) or left out only withholds information: recovery waits for the next
//! report (or for RDMA), nothing received is re-sent.

use super::super::super::fec::Bitmap;
use super::super::super::gf::MulAcc;
use super::super::super::psn::PsnRange;
use super::super::super::wire::tc_aeth::MAX_SEGMENTS;
use super::super::super::wire::{TcAeth, TcAethReport};
use super::super::{Nanos, Sink};
use super::emit::Kind;
use super::{CloseWhy, Csf, CsfIo, CsfStorage, SourceStore};

/// Whether `frag` is the last of its report (SegmentNum ≤ 3), so that the
/// PSNs after its highest segment were not received when it was sent; a
/// full fragment (SegmentNum = 4) leaves them unknown.
fn is_final(frag: &TcAeth) -> bool {
    frag.segments().len() < MAX_SEGMENTS
}

impl<St: CsfStorage> Csf<St> {
    /// A T/C AETH report (the Private Use TC_AETH message) from the CRF.
    pub fn on_tc_aeth<G, K, S>(
        &mut self,
        now: Nanos,
        rep: &TcAethReport,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.expire(now, io);
        let c = &mut self.counters;
        c.tc_reports = c.tc_reports.wrapping_add(1);
        if !self.params.selective_repeat || !self.coded_retx || self.muted {
            c.tc_reports_ignored = c.tc_reports_ignored.wrapping_add(1);
            return;
        }
        if let Some(last) = self.tc.last_seq {
            if (rep.seq.wrapping_sub(last) as i16) <= 0 {
                c.tc_reports_duplicate = c.tc_reports_duplicate.wrapping_add(1);
                return;
            }
        }
        self.tc.last_seq = Some(rep.seq);
        self.tc.timed_out = false;
        self.tc.wait_since = if self.ring.is_empty() {
            None
        } else {
            Some(now)
        };

        let frag = rep.fragment;
        let mut budget = self.params.tc_max_per_report as u32;
        for gap in frag.lost_ranges() {
            self.tc_lost(now, &gap, rep.seq, &mut budget, io);
        }
        // PSNs an earlier fragment showed received are not lost now because
        // a later one ends lower.
        let highest = match self.tc.highest {
            Some(h) => h.serial_max(frag.highest()),
            None => frag.highest(),
        };
        self.tc.highest = Some(highest);
        // The tail after the highest PSN reported, behind the guard, and
        // only after a final fragment (module docs).
        if !is_final(&frag) {
            self.counters.tc_partial_fragments = self.counters.tc_partial_fragments.wrapping_add(1);
            return;
        }
        let Some(next) = self.next_psn else {
            return;
        };
        let tail = highest.next();
        if !tail.is_before(next) {
            return;
        }
        let guard = self.srtt.saturating_add(self.params.tc_batch_time);
        let sent = self
            .log
            .sent_before(now.saturating_sub(guard))
            .filter(|p| tail.is_before(*p))
            .unwrap_or(tail);
        let end = if sent.is_before(next) { sent } else { next };
        self.counters.tc_guarded_psns = self
            .counters
            .tc_guarded_psns
            .wrapping_add(end.forward_distance(next) as u64);
        if tail.is_before(end) {
            let r = PsnRange::new(tail, tail.forward_distance(end));
            self.tc_lost(now, &r, rep.seq, &mut budget, io);
        }
    }

    /// Re-sends the retained present sources of `range` not re-sent within
    /// the current SRTT, within `budget`.
    fn tc_lost<G, K, S>(
        &mut self,
        now: Nanos,
        range: &PsnRange,
        seq: u16,
        budget: &mut u32,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.counters.tc_lost_psns = self.counters.tc_lost_psns.wrapping_add(range.count as u64);
        if let Some(b) = self.ring.newest().filter(|b| b.open) {
            if !b.positions_in(range).is_empty() {
                self.close_open(now, CloseWhy::Early, io);
            }
        }
        let mut matched = 0u64;
        for n in 0..self.ring.len() {
            let srtt = self.srtt;
            let Some(b) = self.ring.get_mut(n) else {
                break;
            };
            let named = b.positions_in(range);
            if named.is_empty() {
                continue;
            }
            matched = matched.saturating_add(named.len() as u64);
            if b.released {
                let c = &mut self.counters;
                c.requests_released = c.requests_released.wrapping_add(1);
                continue;
            }
            if now >= b.tc_round.saturating_add(srtt) || now < b.tc_round {
                b.tc_round = now;
                b.tc_sent = Bitmap::EMPTY;
            }
            let lost = named.intersection(&b.present);
            let fresh = lost.difference(&b.tc_sent);
            let deduped = lost.len().saturating_sub(fresh.len());
            let mut left = *budget;
            let take: Bitmap = fresh
                .iter()
                .filter(|_| {
                    let ok = left > 0;
                    left = left.saturating_sub(1);
                    ok
                })
                .collect();
            let c = &mut self.counters;
            c.tc_deduped_psns = c.tc_deduped_psns.wrapping_add(deduped as u64);
            c.tc_over_budget = c
                .tc_over_budget
                .wrapping_add(fresh.len().saturating_sub(take.len()) as u64);
            if take.is_empty() {
                continue;
            }
            // What the retransmission budget left out stays unsent, so a
            // later report may still have it re-sent within this SRTT.
            let copied = self.send_source_copies(n, &take, seq, Kind::SourceCopy, io);
            let done = take.difference(&copied.over_budget);
            if let Some(b) = self.ring.get_mut(n) {
                b.tc_sent = b.tc_sent.union(&done);
            }
            *budget = budget.saturating_sub(done.len() as u32);
        }
        self.counters.tc_unknown_psns = self
            .counters
            .tc_unknown_psns
            .wrapping_add((range.count as u64).saturating_sub(matched));
    }
}
