//! The CRF's RTT samples: messages it sent that the CSF answers at once,
//! matched with the answer by the Repair Session ID.
//!
//! * REPAIR_REQUEST (either form, coded or FALLBACK) → the REPAIRs
//!   answering it: RETX symbols or Source Copy with "a Repair Session ID
//!   equal to the Request ID" (draft, "Coded Response": sent back to back on
//!   receipt), or INFO (our CSF gives INFO the Request ID too; a CSF that
//!   does not only gives fewer samples).
//! * T/C AETH report → the Source Copy symbols answering it, whose Repair
//!   Session ID is the report's sequence number (our ruling, DESIGN §3 and
//!   `csf/tc.rs`: the CSF re-sends the lost PSNs on receipt). A CRF in
//!   selective-repeat mode sends no request at all, so without these it
//!   would never measure.
//!
//! Karn's rule holds by construction: no request or report is ever sent
//! twice under one ID (a new round is a new Request ID, a new report a new
//! sequence number), and an answer is matched only while one exchange
//! alone can have caused it. Request IDs and report sequence numbers are
//! both 16-bit and counted apart, so a Source Copy answer (which either may
//! cause) matching one of each is ambiguous and gives no sample; so does an
//! ID that wrapped onto one still awaiting its answer. Only the first
//! answer counts (the rest of a back-to-back answer adds serialisation),
//! and an exchange older than [`MAX_RTT`] is forgotten.

use super::super::rtt::MAX_RTT;
use super::super::Nanos;

/// Exchanges awaiting their first answer; a new one replaces the oldest
/// (which then gives no sample). Requests leave at most a few per SRTT per
/// block, reports every T_thresh (≥ SRTT/4): 16 cover several SRTTs.
const PROBES: usize = 16;

/// What was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Asked {
    /// A REPAIR_REQUEST (Request ID).
    Request,
    /// The fragments of one T/C AETH report (sequence numbers).
    Report,
}

/// What arrived: a REPAIR with a Repair Session ID that answers something.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Answer {
    /// RETX symbol or INFO: answers only a request.
    Request,
    /// Source Copy: answers a FALLBACK (or exhausted) request, or a report.
    SourceCopy,
}

#[derive(Clone, Copy, Debug)]
struct Probe {
    live: bool,
    kind: Asked,
    /// First ID; the probe covers `id .. id + span` (a report's fragments).
    id: u16,
    span: u16,
    sent: Nanos,
}

impl Probe {
    const EMPTY: Probe = Probe {
        live: false,
        kind: Asked::Request,
        id: 0,
        span: 0,
        sent: 0,
    };

    fn covers(&self, id: u16) -> bool {
        self.live && id.wrapping_sub(self.id) < self.span
    }

    fn overlaps(&self, kind: Asked, id: u16, span: u16) -> bool {
        self.live
            && self.kind == kind
            && (self.id.wrapping_sub(id) < span || id.wrapping_sub(self.id) < self.span)
    }
}

/// The exchanges awaiting their answer.
#[derive(Clone, Copy, Debug)]
pub(super) struct Probes {
    p: [Probe; PROBES],
    /// Slot the next exchange takes (the oldest).
    next: usize,
}

impl Probes {
    pub(super) const fn new() -> Self {
        Probes {
            p: [Probe::EMPTY; PROBES],
            next: 0,
        }
    }

    /// `kind` with IDs `id .. id + span` was sent at `now`.
    pub(super) fn sent(&mut self, kind: Asked, id: u16, span: u16, now: Nanos) {
        if span == 0 {
            return;
        }
        // An ID that wrapped onto one still outstanding: an answer could be
        // for either, so neither is measured.
        let mut clash = false;
        for q in self.p.iter_mut().filter(|q| q.overlaps(kind, id, span)) {
            q.live = false;
            clash = true;
        }
        if clash {
            return;
        }
        if let Some(q) = self.p.get_mut(self.next) {
            *q = Probe {
                live: true,
                kind,
                id,
                span,
                sent: now,
            };
        }
        self.next = self.next.wrapping_add(1) % PROBES;
    }

    /// An answer with Repair Session ID `session` arrived at `now`: the RTT
    /// if exactly one outstanding exchange can have caused it (that one is
    /// then done; one that cannot be told apart is dropped).
    pub(super) fn answered(&mut self, answer: Answer, session: u16, now: Nanos) -> Option<Nanos> {
        let fits = |q: &Probe| {
            q.covers(session) && (answer == Answer::SourceCopy || q.kind == Asked::Request)
        };
        // Counted by hand: `Iterator::count` keeps an overflow panic path
        // in the kernel build.
        let mut n = 0usize;
        let mut sent = None;
        for q in self.p.iter_mut().filter(|q| fits(q)) {
            q.live = false;
            sent = Some(q.sent);
            n = n.saturating_add(1);
        }
        let rtt = now.checked_sub(sent?)?;
        (n == 1 && rtt <= MAX_RTT).then_some(rtt)
    }

    /// Forgets every exchange (new session).
    pub(super) fn clear(&mut self) {
        *self = Probes::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_answer_of_one_exchange_only() {
        let mut p = Probes::new();
        p.sent(Asked::Request, 7, 1, 1_000);
        assert_eq!(p.answered(Answer::Request, 6, 5_000), None);
        assert_eq!(p.answered(Answer::Request, 7, 5_000), Some(4_000));
        // The rest of a back-to-back answer: no second sample.
        assert_eq!(p.answered(Answer::Request, 7, 5_100), None);
        // A report's fragments share one probe; a RETX never answers one.
        p.sent(Asked::Report, 65_535, 3, 10_000);
        assert_eq!(p.answered(Answer::Request, 0, 12_000), None);
        assert_eq!(p.answered(Answer::SourceCopy, 1, 12_000), Some(2_000));
        assert_eq!(p.answered(Answer::SourceCopy, 0, 12_000), None);
    }

    #[test]
    fn ambiguous_matches_give_nothing() {
        let mut p = Probes::new();
        // Request 5 and report 5 both outstanding: Source Copy 5 is either.
        p.sent(Asked::Request, 5, 1, 0);
        p.sent(Asked::Report, 4, 2, 100);
        assert_eq!(p.answered(Answer::SourceCopy, 5, 1_000), None);
        // Both were dropped.
        assert_eq!(p.answered(Answer::SourceCopy, 4, 1_000), None);
        // A RETX 5 could only have answered the request, but that one is
        // gone too (it cannot be told which came first).
        assert_eq!(p.answered(Answer::Request, 5, 1_000), None);
        // An ID wrapping onto an outstanding one: neither is measured.
        p.sent(Asked::Request, 9, 1, 0);
        p.sent(Asked::Request, 9, 1, 500);
        assert_eq!(p.answered(Answer::Request, 9, 1_000), None);
    }

    #[test]
    fn old_stale_and_evicted_exchanges() {
        let mut p = Probes::new();
        p.sent(Asked::Request, 1, 1, 0);
        assert_eq!(p.answered(Answer::Request, 1, MAX_RTT + 1), None);
        // Time going backwards gives nothing (and no panic).
        p.sent(Asked::Request, 2, 1, 1_000);
        assert_eq!(p.answered(Answer::Request, 2, 10), None);
        // The 17th exchange replaces the first.
        for i in 0..=PROBES as u16 {
            p.sent(Asked::Request, 100 + i, 1, u64::from(i));
        }
        assert_eq!(p.answered(Answer::Request, 100, 50), None);
        assert_eq!(p.answered(Answer::Request, 101, 50), Some(49));
        p.sent(Asked::Report, 0, 0, 0);
        assert_eq!(p.answered(Answer::SourceCopy, 0, 1), None);
        p.clear();
        assert_eq!(p.answered(Answer::Request, 102, 50), None);
    }
}
