//! Gaps with no known block: PSN-range REPAIR_REQUESTs, their rounds and
//! the fallback.

use super::super::super::psn::{Psn, PsnRange};
use super::super::super::wire::{LostRanges, RangeRequest, RepairRequest, RequestKind};
use super::super::{Nanos, Sink};
use super::window::{coarse_up, due_nanos, reached, wake, ABANDONED, DETECTED, IN_BLOCK, RESOLVED};
use super::{add, inc, Asked, Crf, CrfHost, CrfStorage, CODED_ROUNDS, NEVER, RANGES_PER_REQUEST};

/// Largest Count of one range entry on the wire.
const MAX_COUNT: u32 = 255;

/// Ranges of one request being built.
struct RangeBuf {
    r: [PsnRange; RANGES_PER_REQUEST],
    n: usize,
}

impl RangeBuf {
    const fn new() -> Self {
        RangeBuf {
            r: [PsnRange::new(Psn::ZERO, 0); RANGES_PER_REQUEST],
            n: 0,
        }
    }

    /// Adds `p`; `false` if the buffer is full (flush and retry).
    fn push(&mut self, p: Psn) -> bool {
        if let Some(last) = self.n.checked_sub(1).and_then(|i| self.r.get_mut(i)) {
            if last.end() == p && last.count < MAX_COUNT {
                last.count = last.count.wrapping_add(1);
                return true;
            }
        }
        match self.r.get_mut(self.n) {
            Some(slot) => {
                *slot = PsnRange::new(p, 1);
                self.n = self.n.wrapping_add(1);
                true
            }
            None => false,
        }
    }

    fn ranges(&self) -> &[PsnRange] {
        self.r.get(..self.n).unwrap_or(&[])
    }
}

impl<St: CrfStorage> Crf<St> {
    /// Handles the detected gaps whose time has come: request them by PSN
    /// range (two coded rounds), then FALLBACK, then give up.
    ///
    /// Gaps are detected one by one as the highest PSN moves past them, so
    /// the PSNs of one burst fall due one packet interval apart. The CSF
    /// answers one request per block per SRTT, so requesting them one by
    /// one would make all but the first wait a round. Instead, a gap due
    /// for its first request takes along, in the same request, every other
    /// missing PSN of no known block that has had no request yet and lies
    /// less than `k` (the block size) after it: those PSNs are already
    /// behind the highest PSN and likely share its block.
    pub(super) fn scan_gaps<H: CrfHost + ?Sized>(&mut self, now: Nanos, host: &mut H) {
        if self.gap_due_min > now {
            return;
        }
        match self.requests_from {
            // accept_config arms the scan.
            None => {
                self.gap_due_min = NEVER;
                return;
            }
            Some(from) if from > now => {
                self.gap_due_min = from;
                return;
            }
            Some(_) => {}
        }
        let rt = now.saturating_add(self.round_timeout());
        let coded = self.cfg.coded_retx;
        let fallback = coded && self.cfg.fallback_source_copy;
        let mut req = RangeBuf::new();
        let mut fb = RangeBuf::new();
        let mut next = NEVER;
        let mut gave_up = false;
        let span = self.batch_span();
        // PSNs before this one join a first request (see above).
        let mut batch_end: Option<Psn> = None;
        let mut p = self.win.resolve_next;
        for _ in 0..self.win.cap() {
            if p.is_after(self.win.highest) {
                break;
            }
            let Some(s) = self.win.slot(p) else {
                break;
            };
            let f = self.win.at(s);
            let batched = coded
                && f & (RESOLVED | IN_BLOCK) == 0
                && self.win.rounds_at(s) == 0
                && batch_end.is_some_and(|e| p.is_before(e));
            if batched {
                // Missing, no request yet, near a gap being requested:
                // request it now, whether detected (and due) or not.
                if !req.push(p) {
                    send_ranges(self.cfg.flow_id, req.ranges(), false, self, host);
                    req = RangeBuf::new();
                    req.push(p);
                }
                if f & DETECTED != 0 && reached(self.win.due_at(s), now) {
                    // Due on its own: it extends the batch like any other.
                    batch_end = Some(p.wrapping_add(span));
                }
                self.win.set_gap(s, 1, coarse_up(rt));
                next = next.min(wake(rt));
            } else if f & (RESOLVED | IN_BLOCK) == 0 && f & DETECTED != 0 {
                let due = self.win.due_at(s);
                if !reached(due, now) {
                    next = next.min(due_nanos(due, now));
                } else {
                    let rounds = self.win.rounds_at(s);
                    let buf = if coded && rounds < CODED_ROUNDS {
                        Some((&mut req, false))
                    } else if fallback && rounds == CODED_ROUNDS {
                        Some((&mut fb, true))
                    } else {
                        None
                    };
                    match buf {
                        Some((buf, is_fb)) => {
                            if !buf.push(p) {
                                send_ranges(self.cfg.flow_id, buf.ranges(), is_fb, self, host);
                                *buf = RangeBuf::new();
                                buf.push(p);
                            }
                            self.win.set_gap(s, rounds.saturating_add(1), coarse_up(rt));
                            next = next.min(wake(rt));
                            if !is_fb && rounds == 0 {
                                batch_end = Some(p.wrapping_add(span));
                            }
                        }
                        None => {
                            self.win.set(p, ABANDONED);
                            inc(&mut self.counters.psns_abandoned);
                            gave_up = true;
                        }
                    }
                }
            }
            p = p.next();
        }
        let id = self.cfg.flow_id;
        send_ranges(id, req.ranges(), false, self, host);
        send_ranges(id, fb.ranges(), true, self, host);
        self.gap_due_min = next;
        if gave_up {
            self.advance_resolve(host);
            self.advance_delivery(true, host);
        }
    }

    /// How far after a gap due for its first request other missing PSNs
    /// join that request: the block size k of the current configuration
    /// (at least 1).
    fn batch_span(&self) -> u32 {
        self.current_config().map_or(1, |c| u32::from(c.k)).max(1)
    }
}

/// Sends one PSN-range REPAIR_REQUEST (nothing for an empty list).
fn send_ranges<St: CrfStorage, S>(
    flow_id: u32,
    ranges: &[PsnRange],
    fallback: bool,
    crf: &mut Crf<St>,
    sink: &mut S,
) where
    S: Sink + ?Sized,
{
    if ranges.is_empty() {
        return;
    }
    let id = crf.next_request_id();
    let req = RepairRequest {
        flow_id,
        fallback,
        kind: RequestKind::Ranges(RangeRequest {
            request_id: id,
            ranges: LostRanges::from_slice(ranges),
        }),
    };
    let mut buf = [0u8; 8 + 4 + 4 * RANGES_PER_REQUEST];
    if let Ok(n) = req.encode(&mut buf) {
        sink.send(buf.get(..n).unwrap_or(&[]));
        crf.probe_sent(Asked::Request, id, 1);
        let c = &mut crf.counters;
        inc(if fallback {
            &mut c.requests_fallback
        } else {
            &mut c.requests_ranges
        });
        add(&mut c.request_range_entries, ranges.len() as u64);
    }
}
