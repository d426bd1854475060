//! Answers to the CRF's REPAIR_REQUEST (draft "Coded Response" and
//! "Fallback") and proactive answers for PSNs a Path Reporter dropped
//! (the ruling in `csf.rs`).

use super::super::super::fec::Bitmap;
use super::super::super::gf::MulAcc;
use super::super::super::psn::Psn;
use super::super::super::wire::{
    BlockRequest, FecScheme, RangeRequest, RepairRequest, RequestKind,
};
use super::super::{Nanos, Sink};
use super::emit::{Coded, Kind};
use super::ring::Block;
use super::{CloseWhy, Csf, CsfIo, CsfStorage, SourceStore};

/// Range entries of one PSN-range request that are looked at (64 × 255
/// PSNs); the rest are counted and ignored.
pub const MAX_RANGE_ENTRIES: usize = 64;

/// Dropped PSNs of one path report that are looked at.
pub const MAX_PATH_PSNS: usize = 4096;

/// `Iterator::take` without its `try_fold`, whose decrement keeps an
/// overflow-check panic path in the kernel build.
struct Capped<I> {
    it: I,
    left: usize,
}

impl<I: Iterator> Iterator for Capped<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.left == 0 {
            return None;
        }
        self.left = self.left.wrapping_sub(1);
        self.it.next()
    }
}

impl<St: CsfStorage> Csf<St> {
    /// A REPAIR_REQUEST from the CRF (either form, FALLBACK or not).
    pub fn on_repair_request<G, K, S>(
        &mut self,
        now: Nanos,
        req: &RepairRequest<'_>,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.expire(now, io);
        let c = &mut self.counters;
        if req.fallback {
            c.requests_fallback = c.requests_fallback.wrapping_add(1);
        }
        match &req.kind {
            RequestKind::Block(_) => c.requests_block = c.requests_block.wrapping_add(1),
            RequestKind::Ranges(_) => c.requests_ranges = c.requests_ranges.wrapping_add(1),
        }
        if !self.coded_retx || self.muted {
            c.requests_disabled = c.requests_disabled.wrapping_add(1);
            return;
        }
        match &req.kind {
            RequestKind::Block(b) => self.on_block_request(now, b, req.fallback, io),
            RequestKind::Ranges(r) => self.on_range_request(now, r, req.fallback, io),
        }
    }

    fn on_block_request<G, K, S>(
        &mut self,
        now: Nanos,
        b: &BlockRequest,
        fallback: bool,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let Some(n) = self.ring.find_start(b.block_start) else {
            self.counters.requests_unknown_block =
                self.counters.requests_unknown_block.wrapping_add(1);
            return;
        };
        let Some(blk) = self.ring.get(n) else {
            return;
        };
        let lost = Bitmap::from_words(&b.lost.words());
        let consistent = !blk.open
            && b.k == blk.covered
            && b.config_id == blk.cfg.id
            && b.scheme == FecScheme::from_u8(u8::from(blk.cfg.scheme))
            && !lost.is_empty()
            && lost.is_subset(&blk.present);
        if !consistent {
            self.counters.requests_bad = self.counters.requests_bad.wrapping_add(1);
            return;
        }
        self.respond(
            now,
            n,
            &lost,
            b.repairs_held,
            b.suggested_m,
            b.request_id,
            fallback,
            io,
        );
    }

    fn on_range_request<G, K, S>(
        &mut self,
        now: Nanos,
        r: &RangeRequest<'_>,
        fallback: bool,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let extra = r.ranges.len().saturating_sub(MAX_RANGE_ENTRIES);
        self.counters.range_entries_truncated = self
            .counters
            .range_entries_truncated
            .wrapping_add(extra as u64);
        let ranges = || Capped {
            it: r.ranges.iter(),
            left: MAX_RANGE_ENTRIES,
        };
        // The peer must learn the final k: close an open block first.
        if let Some(b) = self.ring.newest().filter(|b| b.open) {
            if ranges().any(|x| !b.positions_in(&x).is_empty()) {
                self.close_open(now, CloseWhy::Early, io);
            }
        }
        let total = ranges().fold(0u64, |a, x| a.saturating_add(x.count as u64));
        let mut matched = 0u64;
        for n in 0..self.ring.len() {
            let Some(blk) = self.ring.get(n) else {
                break;
            };
            let named = ranges().fold(Bitmap::EMPTY, |a, x| a.union(&blk.positions_in(&x)));
            if named.is_empty() {
                continue;
            }
            matched = matched.saturating_add(named.len() as u64);
            let lost = named.intersection(&blk.present);
            if !lost.is_empty() {
                // r = 0: the CRF holds no repair of the block.
                let x = lost.len() as u8;
                self.respond(now, n, &lost, 0, x, r.request_id, fallback, io);
            } else if blk
                .last_info
                .is_some_and(|t| now < t.saturating_add(self.srtt))
            {
                self.counters.requests_rate_limited =
                    self.counters.requests_rate_limited.wrapping_add(1);
            } else {
                if let Some(b) = self.ring.get_mut(n) {
                    b.last_info = Some(now);
                }
                self.send_info(n, r.request_id, io);
            }
        }
        self.counters.range_psns_unknown = self
            .counters
            .range_psns_unknown
            .wrapping_add(total.saturating_sub(matched));
    }

    /// Answers a request for the lost set `lost` of block `n`: at most once
    /// per SRTT; coded with `M = clamp(M_s, X − r, X)` (at least 1) fresh
    /// indices, or Source Copy of L when FALLBACK is asked, the scheme has
    /// no coded retransmission, or fresh indices ran out. Either way never
    /// more symbols than the X lost sources named, and only what the
    /// retransmission budget pays for (`csf/budget.rs`): a block it left
    /// unanswered counts as not answered, so the next request may be.
    #[allow(clippy::too_many_arguments)]
    fn respond<G, K, S>(
        &mut self,
        now: Nanos,
        n: usize,
        lost: &Bitmap,
        r: u8,
        suggested: u8,
        session: u16,
        fallback: bool,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let Some(blk) = self.ring.get(n).copied() else {
            return;
        };
        if blk.released {
            self.counters.requests_released = self.counters.requests_released.wrapping_add(1);
            return;
        }
        if recent(blk.last_response, now, self.srtt) {
            // After a proactive answer only the positions it covered are on
            // their way: a request naming more is answered.
            if !blk.proactive {
                self.counters.requests_rate_limited =
                    self.counters.requests_rate_limited.wrapping_add(1);
                return;
            }
            if lost.is_subset(&blk.dropped) {
                self.counters.proactive_covered = self.counters.proactive_covered.wrapping_add(1);
                return;
            }
        }
        let (answered, _) = self.answer(
            &blk,
            n,
            lost,
            r,
            suggested,
            session,
            fallback,
            Kind::Retx,
            io,
        );
        if answered {
            if let Some(b) = self.ring.get_mut(n) {
                b.last_response = Some(now);
                b.proactive = false;
            }
        }
    }

    /// [`Csf::respond`] past the once-per-SRTT check: whether the block
    /// counts as answered (false if the budget let nothing go out), and
    /// the positions of `lost` the symbols sent recover. `kind` is `Retx`
    /// for a request's answer, `Proactive` for a report's (its symbols
    /// counted apart).
    #[allow(clippy::too_many_arguments)]
    fn answer<G, K, S>(
        &mut self,
        blk: &Block,
        n: usize,
        lost: &Bitmap,
        r: u8,
        suggested: u8,
        session: u16,
        fallback: bool,
        kind: Kind,
        io: &mut CsfIo<'_, G, K, S>,
    ) -> (bool, Bitmap)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        if !fallback && blk.cfg.scheme.supports_retx() {
            let x = lost.len() as u16;
            let m = (suggested as u16)
                .max(x.saturating_sub(r as u16))
                .min(x)
                .max(1);
            if m <= blk.fresh_indices() {
                match self.send_coded(n, lost, m, session, kind, io) {
                    Coded::Sent => {
                        if kind == Kind::Retx {
                            let c = &mut self.counters;
                            c.retx_lost = c.retx_lost.wrapping_add(u64::from(x));
                        }
                        return (true, *lost);
                    }
                    Coded::OverBudget => return (false, Bitmap::EMPTY),
                    Coded::SourceMissing => {}
                }
            } else {
                self.counters.retx_indices_exhausted =
                    self.counters.retx_indices_exhausted.wrapping_add(1);
            }
        }
        let copy = if kind == Kind::Retx {
            Kind::SourceCopy
        } else {
            kind
        };
        let copied = self.send_source_copies(n, lost, session, copy, io);
        let answered = !copied.sent.is_empty() || copied.over_budget.is_empty();
        (answered, copied.sent)
    }

    /// PSNs an allow-listed Path Reporter says it dropped (the caller
    /// checked the reporter). The newly reported positions of a closed
    /// block are answered at once ([`Csf::answer_proactive`]), a run of
    /// PSNs in one block together (reports list them in order); the open
    /// block's when it closes.
    pub fn on_path_drops<G, K, S, I>(&mut self, now: Nanos, dropped: I, io: &mut CsfIo<'_, G, K, S>)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
        I: IntoIterator<Item = Psn>,
    {
        self.expire(now, io);
        if self.muted {
            // Nothing may be sent yet; the CRF asks later anyway.
            return;
        }
        let capped = Capped {
            it: dropped.into_iter(),
            left: MAX_PATH_PSNS,
        };
        // The closed block whose new positions are being gathered.
        let mut run: Option<(usize, Bitmap)> = None;
        for p in capped {
            let c = &mut self.counters;
            c.path_dropped_psns = c.path_dropped_psns.wrapping_add(1);
            let Some(n) = self.ring.find(p) else {
                c.path_unknown_psns = c.path_unknown_psns.wrapping_add(1);
                continue;
            };
            if let Some((r, set)) = run.take_if(|(r, _)| *r != n) {
                self.answer_proactive(now, r, &set, io);
            }
            let srtt = self.srtt;
            let Some(b) = self.ring.get_mut(n) else {
                continue;
            };
            if b.released {
                let c = &mut self.counters;
                c.requests_released = c.requests_released.wrapping_add(1);
                continue;
            }
            let Some(j) = b.position(p).filter(|&j| b.present.contains(j)) else {
                continue;
            };
            if b.open {
                b.dropped.insert(j);
                continue;
            }
            // Dedup within the current round only: a PSN reported again an
            // SRTT after its answer was dropped again (its resend).
            let fresh = run.is_none();
            if fresh && !(b.proactive && recent(b.last_response, now, srtt)) {
                b.dropped = Bitmap::EMPTY;
            }
            if b.dropped.insert(j) {
                let set = run.get_or_insert((n, Bitmap::EMPTY));
                set.1.insert(j);
            }
        }
        if let Some((r, set)) = run {
            self.answer_proactive(now, r, &set, io);
        }
    }

    /// The proactive answer for the newly reported positions `set` of
    /// closed block `n`: a coded retransmission of |set| fresh symbols
    /// over them (or Source Copy of them), all or none, paid from the
    /// retransmission budget, so that the volume never exceeds the sources
    /// reported lost. Not while the circuit breaker holds retransmissions
    /// off, nor within an SRTT of a request's answer for the block (that
    /// one was computed over what the CRF missed; it asks again if that was
    /// not all). What is not sent is counted `proactive_limited`, taken out
    /// of the block's `dropped` (a request for it is answered) and left to
    /// the CRF's request.
    pub(super) fn answer_proactive<G, K, S>(
        &mut self,
        now: Nanos,
        n: usize,
        set: &Bitmap,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let Some(blk) = self.ring.get(n).copied() else {
            return;
        };
        let answered_request = !blk.proactive && recent(blk.last_response, now, self.srtt);
        let covered = if self.coded_retx && !self.muted && !blk.released && !answered_request {
            self.answer(&blk, n, set, 0, 0, 0, false, Kind::Proactive, io)
                .1
        } else {
            Bitmap::EMPTY
        };
        let left = set.difference(&covered);
        if let Some(b) = self.ring.get_mut(n) {
            b.dropped = b.dropped.difference(&left);
            if !covered.is_empty() {
                b.last_response = Some(now);
                b.proactive = true;
            }
        }
        let c = &mut self.counters.drops;
        c.proactive_limited = c.proactive_limited.wrapping_add(left.len() as u64);
    }
}

/// `at` is less than an SRTT before `now`.
fn recent(at: Option<Nanos>, now: Nanos, srtt: Nanos) -> bool {
    at.is_some_and(|t| now < t.saturating_add(srtt))
}
