//! Blocks learned from REPAIR messages: the table of open blocks, their
//! repair symbols, incompleteness, requests and the fallback.

use super::super::super::fec::{self, Code, Scheme};
use super::super::super::psn::Psn;
use super::super::super::wire::{
    Bitmap256, BlockRequest, FecScheme, Repair, RepairRequest, RequestKind,
};
use super::super::{FecConfig, Nanos, Sink};
use super::index::{heap_pop, heap_push};
use super::window::{coarse_up, wake, ABANDONED, ABSENT, HAVE, IN_BLOCK, KEPT, RESOLVED};
use super::{
    inc, report, Asked, Crf, CrfHost, CrfStorage, MulAcc, Reject, Restored, SymbolStore, Workspace,
    CODED_ROUNDS, NEVER,
};

/// Where a block is in its recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Stage {
    /// Collecting symbols.
    Open = 0,
    /// A coded REPAIR_REQUEST is out.
    Requested,
    /// A FALLBACK request is out; next: release to RDMA.
    Fallback,
}

/// One open block. Public only as the element of the blocks' storage: its
/// fields are private.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    pub(super) live: bool,
    pub(super) cfg_id: u8,
    /// Scheme of the configuration (Source Copy symbols may come besides).
    pub(super) scheme: Scheme,
    pub(super) k: u8,
    pub(super) t: u16,
    pub(super) start: Psn,
    pub(super) present: Bitmap256,
    /// Positions whose restored packet failed verification.
    pub(super) failed: Bitmap256,
    pub(super) stage: Stage,
    /// Coded request rounds sent.
    pub(super) rounds: u8,
    /// A packet beyond the block, the LAST ordinary repair, or the tail
    /// notice (INFO with LAST, session 0) was seen.
    pub(super) triggered: bool,
    pub(super) deadline: Nanos,
    /// Request ID of the last request (the Repair Session ID to expect).
    pub(super) request_id: u16,
    /// Creation order, for evicting the oldest.
    pub(super) seq: u32,
    pub(super) decode_pending: bool,
    pub(super) counted_incomplete: bool,
    /// Decoding cannot work (buffer, codec): go straight to the fallback.
    pub(super) undecodable: bool,
    /// The block's first repair descriptor (its others follow through
    /// [`RepairMeta`]'s `next`, in ascending slot order); [`NIL`]: none.
    pub(super) first: u16,
    /// Entries of the engine's indexes (`crf/index.rs`), not about this
    /// block: kept when the slot is rewritten.
    pub(super) col: BlockCol,
}

/// "No slot" in the indexes' `u16` links (never a slot: there are at most
/// 65535 of each).
pub(super) const NIL: u16 = u16::MAX;

/// One entry of each block index, stored in a [`Block`] element
/// (`crf/index.rs`).
#[derive(Clone, Copy, Debug)]
pub(super) struct BlockCol {
    /// Entry of the ring of open blocks in start order.
    pub(super) ring: u16,
    /// Entry of the heap of free block slots.
    pub(super) free: u16,
}

impl Block {
    /// An unused slot (what a caller fills the storage with).
    pub const EMPTY: Block = Block {
        live: false,
        cfg_id: 0,
        scheme: Scheme::CauchyRs,
        k: 0,
        t: 0,
        start: Psn::ZERO,
        present: Bitmap256::EMPTY,
        failed: Bitmap256::EMPTY,
        stage: Stage::Open,
        rounds: 0,
        triggered: false,
        deadline: NEVER,
        request_id: 0,
        seq: 0,
        decode_pending: false,
        counted_incomplete: false,
        undecodable: false,
        first: NIL,
        col: BlockCol { ring: 0, free: 0 },
    };

    /// Position of `p` in the block.
    pub(super) fn position(&self, p: Psn) -> Option<usize> {
        let d = self.start.forward_distance(p);
        (d < self.k as u32).then_some(d as usize)
    }

    fn psn(&self, j: usize) -> Psn {
        self.start.wrapping_add(j as u32)
    }
}

/// One held repair symbol (its octets are in the store, same slot). Public
/// only as the element of the repairs' storage: its fields are private.
#[derive(Clone, Copy, Debug)]
pub struct RepairMeta {
    pub(super) live: bool,
    pub(super) block: u16,
    pub(super) index: u8,
    /// The set L the symbol covers (Present Bitmap for ordinary repairs).
    pub(super) lost: Bitmap256,
    /// Selected for the decode in progress.
    pub(super) sel: bool,
    /// The block's next repair descriptor (a higher slot); [`NIL`]: none.
    pub(super) next: u16,
    /// Entry of the heap of free repair slots (`crf/index.rs`), not about
    /// this descriptor: kept when the slot is rewritten.
    pub(super) free: u16,
}

impl RepairMeta {
    /// An unused slot (what a caller fills the storage with).
    pub const EMPTY: RepairMeta = RepairMeta {
        live: false,
        block: 0,
        index: 0,
        lost: Bitmap256::EMPTY,
        sel: false,
        next: NIL,
        free: 0,
    };
}

impl<St: CrfStorage> Crf<St> {
    fn block(&self, b: usize) -> Option<Block> {
        self.blocks.as_ref().get(b).copied().filter(|x| x.live)
    }

    /// Writes block slot `b`, keeping its index entries.
    fn put_block(&mut self, b: usize, x: Block) {
        if let Some(slot) = self.blocks.as_mut().get_mut(b) {
            let col = slot.col;
            *slot = Block { col, ..x };
        }
    }

    /// Writes repair slot `i`, keeping its index entry.
    fn put_repair(&mut self, i: usize, r: RepairMeta) {
        if let Some(slot) = self.repairs.as_mut().get_mut(i) {
            let free = slot.free;
            *slot = RepairMeta { free, ..r };
        }
    }

    /// The first repair descriptor of block `b`.
    pub(super) fn first_repair(&self, b: usize) -> u16 {
        self.blocks.as_ref().get(b).map_or(NIL, |x| x.first)
    }

    /// The repair descriptor after `i` in its block's list.
    pub(super) fn next_repair(&self, i: u16) -> u16 {
        self.repairs
            .as_ref()
            .get(i as usize)
            .map_or(NIL, |r| r.next)
    }

    /// A source of a known block arrived: look at the block at the next
    /// timer (never inside `on_source`, see the ordering contract).
    pub(super) fn mark_block_pending(&mut self, p: Psn) {
        if let Some(b) = self.block_at(p) {
            if let Some(x) = self.blocks.as_mut().get_mut(b) {
                x.decode_pending = true;
                self.decode_pending = true;
            }
        }
    }

    /// Present positions still missing (not had, not given up).
    pub(super) fn wanted(&self, x: &Block) -> Bitmap256 {
        let mut m = Bitmap256::EMPTY;
        for j in x.present.iter() {
            if self.win.get(x.psn(j)) & (HAVE | ABANDONED) == 0 {
                m.set(j);
            }
        }
        m
    }

    /// Present positions the decoder must solve for: those without a kept
    /// copy.
    pub(super) fn unknown(&self, x: &Block) -> Bitmap256 {
        let mut m = Bitmap256::EMPTY;
        for j in x.present.iter() {
            if self.win.get(x.psn(j)) & KEPT == 0 {
                m.set(j);
            }
        }
        m
    }

    /// Held repairs of block `b` that can help solve `unknown` (their L
    /// contains it).
    pub(super) fn usable(&self, b: usize, unknown: &Bitmap256) -> u32 {
        let mut n = 0u32;
        let mut i = self.first_repair(b);
        while let Some(r) = self.repairs.as_ref().get(i as usize) {
            if r.live && r.block as usize == b && unknown.is_subset_of(&r.lost) {
                n = n.saturating_add(1);
            }
            i = r.next;
        }
        n
    }

    /// Finds or creates the block a REPAIR describes, applying its Present
    /// Bitmap to the window.
    pub(super) fn learn_block<H: CrfHost + ?Sized>(
        &mut self,
        msg: &Repair<'_>,
        fc: &FecConfig,
        now: Nanos,
        host: &mut H,
    ) -> Result<usize, Reject> {
        let k = msg.k;
        let scheme_ok = msg.info
            || msg.scheme == FecScheme::SourceCopy
            || msg.scheme.to_u8() == u8::from(fc.scheme);
        if k == 0
            || k > fc.k
            || !scheme_ok
            || (!msg.info && msg.symbol.len() != fc.t as usize)
            || msg.present.is_empty()
            || !msg.present.fits(k as usize)
        {
            return Err(Reject::Mismatch);
        }
        let start = msg.block_start;
        if !self.win.started {
            self.start_window(start);
        }
        if !start.is_after_or_eq(self.win.base) {
            return Err(Reject::Stale);
        }
        let last = start.wrapping_add(k as u32 - 1);
        if self.win.slot(last).is_none() {
            return Err(Reject::OutOfWindow);
        }
        if let Some(b) = self.find_block(start) {
            return match self.block(b) {
                Some(x) if x.k == k && x.cfg_id == msg.config_id && x.present == msg.present => {
                    Ok(b)
                }
                _ => Err(Reject::Inconsistent),
            };
        }
        if self.overlaps(start, k) {
            return Err(Reject::Inconsistent);
        }
        // The Present Bitmap is authoritative: absent positions resolve,
        // present ones undo a READ-span guess.
        let mut complete = true;
        for j in 0..k as usize {
            let p = start.wrapping_add(j as u32);
            let f = self.win.get(p);
            if msg.present.get(j) {
                if f & ABSENT != 0 && f & HAVE == 0 {
                    self.win.clear(p, ABSENT);
                    if p.is_before_or_eq(self.win.highest) {
                        report::add32(&mut self.report.iv.expected, 1);
                    }
                }
                if f & HAVE == 0 {
                    complete = false;
                }
            } else {
                self.mark_absent(p, now, host, false);
            }
        }
        if complete {
            return Err(Reject::Complete);
        }
        // The lowest free slot, else the oldest block's.
        let b = match heap_pop(self.blocks.as_mut(), &mut self.free_blocks) {
            Some(b) => b,
            None => {
                let oldest = self.oldest_block();
                self.evict_block(oldest, now, host);
                // The slot just freed, the only free one.
                let _ = heap_pop(self.blocks.as_mut(), &mut self.free_blocks);
                oldest
            }
        };
        let mut rounds = 0u8;
        for j in msg.present.iter() {
            let p = start.wrapping_add(j as u32);
            if let Some(s) = self.win.slot(p) {
                if self.win.at(s) & RESOLVED == 0 {
                    rounds = rounds.max(self.win.rounds_at(s));
                    // A block may reveal losses before the first PSN seen.
                    if p.is_before(self.win.resolve_next) {
                        self.win.resolve_next = p;
                    }
                }
            }
            self.win.set(p, IN_BLOCK);
        }
        let triggered = self
            .win
            .highest
            .is_after_or_eq(start.wrapping_add(k as u32));
        let requested = rounds > 0;
        let deadline = if requested {
            now.saturating_add(self.round_timeout())
        } else if triggered {
            now.saturating_add(self.allowance())
        } else {
            NEVER
        };
        self.block_clock = self.block_clock.wrapping_add(1);
        let x = Block {
            live: true,
            cfg_id: msg.config_id,
            scheme: fc.scheme,
            k,
            t: fc.t,
            start,
            present: msg.present,
            failed: Bitmap256::EMPTY,
            stage: if requested {
                Stage::Requested
            } else {
                Stage::Open
            },
            rounds: rounds.min(CODED_ROUNDS),
            triggered,
            deadline,
            request_id: if msg.lost.is_some() || msg.scheme == FecScheme::SourceCopy {
                msg.session_id
            } else {
                0
            },
            seq: self.block_clock,
            decode_pending: false,
            counted_incomplete: requested,
            undecodable: false,
            first: NIL,
            col: BlockCol { ring: 0, free: 0 },
        };
        self.put_block(b, x);
        self.ring_add(b);
        self.deadline_changed(NEVER, deadline);
        if !triggered {
            self.untriggered = self.untriggered.saturating_add(1);
        }
        inc(&mut self.counters.blocks_learned);
        Ok(b)
    }

    fn oldest_block(&self) -> usize {
        let clock = self.block_clock;
        let mut best = 0usize;
        let mut best_age = 0u32;
        for (i, x) in self.blocks.as_ref().iter().enumerate() {
            let age = clock.wrapping_sub(x.seq);
            if x.live && age >= best_age {
                best = i;
                best_age = age;
            }
        }
        best
    }

    /// Evicts a block for capacity; its missing PSNs go back to gap
    /// tracking (PSN-range requests) with the rounds already spent.
    fn evict_block<H: CrfHost + ?Sized>(&mut self, b: usize, now: Nanos, host: &mut H) {
        let Some(x) = self.block(b) else {
            return;
        };
        inc(&mut self.counters.blocks_evicted);
        let due = now.saturating_add(self.allowance());
        let mut any = false;
        for j in x.present.iter() {
            if let Some(s) = self.win.slot(x.psn(j)) {
                if self.win.at(s) & RESOLVED == 0 {
                    let rounds = self.win.rounds_at(s).max(x.rounds);
                    self.win.set_gap(s, rounds, coarse_up(due));
                    any = true;
                }
            }
        }
        if any {
            self.gap_due_min = self.gap_due_min.min(wake(due));
        }
        self.free_block(b, false, host);
    }

    /// Frees a block: its repairs (and, with `drop_sources`, its kept
    /// sources) are dropped.
    pub(super) fn free_block<S: SymbolStore + ?Sized>(
        &mut self,
        b: usize,
        drop_sources: bool,
        store: &mut S,
    ) {
        self.free_block_in(b, drop_sources, store, true);
    }

    /// [`Crf::free_block`]; `in_ring`: the block is still in the ring (not
    /// taken out already because the window's base passed it).
    pub(super) fn free_block_in<S: SymbolStore + ?Sized>(
        &mut self,
        b: usize,
        drop_sources: bool,
        store: &mut S,
        in_ring: bool,
    ) {
        let Some(x) = self.block(b) else {
            return;
        };
        self.drop_repairs(b, store);
        for j in 0..x.k as usize {
            let p = x.psn(j);
            if let Some(s) = self.win.slot(p) {
                let f = self.win.at(s);
                if drop_sources && f & KEPT != 0 {
                    self.retire_source(p, s, store);
                }
                if f & (IN_BLOCK | RESOLVED) == IN_BLOCK {
                    // Back to gap tracking (an evicted block): the
                    // sources around it may be needed again.
                    self.win.unresolve(p);
                }
                if !drop_sources && f & KEPT != 0 {
                    self.win.kept_outside_block(p);
                }
                self.win.clear(p, IN_BLOCK);
            }
        }
        if in_ring {
            self.ring_drop(b);
        }
        self.deadline_changed(x.deadline, NEVER);
        self.put_block(b, Block::EMPTY);
        heap_push(self.blocks.as_mut(), &mut self.free_blocks, b as u16);
    }

    /// Drops every repair of block `b` (in ascending slot order).
    pub(super) fn drop_repairs<S: SymbolStore + ?Sized>(&mut self, b: usize, store: &mut S) {
        let mut i = self.first_repair(b);
        if let Some(x) = self.blocks.as_mut().get_mut(b) {
            x.first = NIL;
        }
        while let Some(r) = self.repairs.as_ref().get(i as usize) {
            let next = r.next;
            if r.live && r.block as usize == b {
                store.drop_repair(i as usize);
                self.put_repair(i as usize, RepairMeta::EMPTY);
                heap_push(self.repairs.as_mut(), &mut self.free_repairs, i);
            }
            i = next;
        }
    }

    /// Stores a coded repair symbol of block `b`.
    pub(super) fn add_repair<S: SymbolStore + ?Sized>(
        &mut self,
        b: usize,
        msg: &Repair<'_>,
        store: &mut S,
    ) {
        let Some(x) = self.block(b) else {
            return;
        };
        let valid = Code::new(x.scheme, x.k, x.t as usize)
            .is_ok_and(|c| c.check_repair_index(msg.repair_index).is_ok());
        // The block's list, and where the new slot goes in it.
        let mut dup = false;
        let mut i = x.first;
        while let Some(r) = self.repairs.as_ref().get(i as usize) {
            if r.live && r.block as usize == b && r.index == msg.repair_index {
                dup = true;
                break;
            }
            i = r.next;
        }
        if !valid || dup {
            inc(&mut self.counters.drop_duplicate);
            return;
        }
        // The lowest free slot.
        let Some(slot) = heap_pop(self.repairs.as_mut(), &mut self.free_repairs) else {
            inc(&mut self.counters.drop_repair_capacity);
            return;
        };
        if !store.keep_repair(slot, msg.symbol) {
            heap_push(self.repairs.as_mut(), &mut self.free_repairs, slot as u16);
            inc(&mut self.counters.drop_store_full);
            return;
        }
        // Linked after the last of the block's slots below it.
        let mut prev = NIL;
        let mut i = x.first;
        while (i as usize) < slot {
            prev = i;
            i = self.next_repair(i);
        }
        self.put_repair(
            slot,
            RepairMeta {
                live: true,
                block: b as u16,
                index: msg.repair_index,
                lost: msg.lost.unwrap_or(x.present),
                sel: false,
                next: i,
                free: 0,
            },
        );
        if prev == NIL {
            if let Some(y) = self.blocks.as_mut().get_mut(b) {
                y.first = slot as u16;
            }
        } else if let Some(r) = self.repairs.as_mut().get_mut(prev as usize) {
            r.next = slot as u16;
        }
    }

    /// A Source Copy symbol: the source itself.
    pub(super) fn source_copy<H: CrfHost + ?Sized>(
        &mut self,
        b: usize,
        msg: &Repair<'_>,
        now: Nanos,
        host: &mut H,
    ) {
        let Some(x) = self.block(b) else {
            return;
        };
        let j = msg.repair_index as usize;
        if !x.present.get(j) {
            inc(&mut self.counters.drop_mismatch);
            return;
        }
        let p = x.psn(j);
        let Some(s) = self.win.slot(p) else {
            return;
        };
        if self.win.at(s) & HAVE != 0 {
            inc(&mut self.counters.drop_unneeded);
            return;
        }
        let Ok(payload) = fec::parse_source_symbol(msg.symbol) else {
            inc(&mut self.counters.restore_malformed);
            return;
        };
        if self.restore_one(p, payload, now, host) == Restored::Verified {
            if host.keep_source(s, p, payload) {
                self.win.set(p, KEPT);
            } else {
                inc(&mut self.counters.store_refused);
            }
            if let Some(x) = self.blocks.as_mut().get_mut(b) {
                x.failed.clear(j);
            }
        }
    }

    /// LAST flag: the ordinary round is complete (trigger), or the answer
    /// to our request is (evaluate after the allowance, not the timeout).
    /// An INFO with LAST answering no request (Repair Session ID 0) is a
    /// tail notice: the block ended with no (more) ordinary repairs, so
    /// its round is complete too (`Csf::tail_due`).
    pub(super) fn note_last(&mut self, b: usize, msg: &Repair<'_>, now: Nanos) {
        if !msg.last || (msg.info && !msg.is_tail_notice()) {
            return;
        }
        let due = now.saturating_add(self.allowance());
        let Some(x) = self.blocks.as_mut().get_mut(b).filter(|x| x.live) else {
            return;
        };
        let old = x.deadline;
        // A tail notice is no answer, whatever the scheme it names (a
        // Source Copy flow's blocks carry scheme 0 too); past the check
        // above, an INFO is one.
        let answer = !msg.info && (msg.lost.is_some() || msg.scheme == FecScheme::SourceCopy);
        if !answer {
            if !x.triggered {
                x.triggered = true;
                if x.stage == Stage::Open {
                    x.deadline = x.deadline.min(due);
                }
            }
        } else if msg.session_id == x.request_id && x.stage != Stage::Open {
            x.deadline = x.deadline.min(due);
        }
        let new = x.deadline;
        self.deadline_changed(old, new);
    }

    /// Completes or decodes block `b` if it can. Returns whether the block
    /// is gone.
    pub(super) fn check_block<H: CrfHost + ?Sized, G: MulAcc + ?Sized>(
        &mut self,
        b: usize,
        now: Nanos,
        host: &mut H,
        ws: &mut Workspace<'_, G>,
    ) -> bool {
        let Some(x) = self.block(b) else {
            return true;
        };
        if let Some(y) = self.blocks.as_mut().get_mut(b) {
            y.decode_pending = false;
        }
        // Decode whenever the held symbols suffice, also for positions
        // already given up: RDMA then need not retransmit them.
        if !x.undecodable && !self.lacking(&x).is_empty() {
            let unknown = self.unknown(&x);
            if self.usable(b, &unknown) >= unknown.count() {
                self.try_decode(b, unknown, now, host, ws);
            }
        }
        let Some(x) = self.block(b) else {
            return true;
        };
        if self.wanted(&x).is_empty() {
            self.complete_block(b, host);
            return true;
        }
        false
    }

    /// Present positions not had (missing or given up).
    fn lacking(&self, x: &Block) -> Bitmap256 {
        let mut m = Bitmap256::EMPTY;
        for j in x.present.iter() {
            if self.win.get(x.psn(j)) & HAVE == 0 {
                m.set(j);
            }
        }
        m
    }

    /// Frees a block with nothing left to wait for; it counts as completed
    /// if every present packet is had (not if some were given up).
    fn complete_block<S: SymbolStore + ?Sized>(&mut self, b: usize, store: &mut S) {
        if let Some(x) = self.block(b) {
            if self.lacking(&x).is_empty() {
                inc(&mut self.counters.blocks_completed);
            }
        }
        self.free_block(b, true, store);
    }

    /// The block's deadline passed: it is incomplete; request, fall back or
    /// release it.
    pub(super) fn evaluate_block<H: CrfHost + ?Sized, G: MulAcc + ?Sized>(
        &mut self,
        b: usize,
        now: Nanos,
        host: &mut H,
        ws: &mut Workspace<'_, G>,
    ) {
        if self.check_block(b, now, host, ws) {
            return;
        }
        let Some(x) = self.block(b) else {
            return;
        };
        let rt = now.saturating_add(self.round_timeout());
        if x.stage == Stage::Open && !x.triggered {
            self.set_deadline(b, NEVER);
            return;
        }
        if !host.can_restore() {
            // Nothing it lacks could be rebuilt (no packet of the flow seen):
            // most likely it passed before the flow was made, and if it was
            // lost, the RDMA transport's resend is the flow's first packet.
            inc(&mut self.counters.blocks_unrestorable);
            self.abandon_block(b, host);
            return;
        }
        if !x.counted_incomplete {
            inc(&mut self.counters.blocks_incomplete);
            report::add32(&mut self.report.iv.incomplete, 1);
        }
        let coded_ok = self.cfg.coded_retx
            && x.scheme.supports_retx()
            && !x.undecodable
            && x.failed.is_empty();
        let next = if x.stage != Stage::Fallback && coded_ok && x.rounds < CODED_ROUNDS {
            self.send_block_request(b, false, host);
            Some((Stage::Requested, x.rounds.saturating_add(1)))
        } else if x.stage != Stage::Fallback && self.cfg.coded_retx && self.cfg.fallback_source_copy
        {
            self.send_block_request(b, true, host);
            inc(&mut self.counters.blocks_fell_back);
            Some((Stage::Fallback, x.rounds))
        } else {
            None
        };
        match next {
            Some((stage, rounds)) => {
                if let Some(y) = self.blocks.as_mut().get_mut(b) {
                    y.stage = stage;
                    y.rounds = rounds;
                    y.counted_incomplete = true;
                }
                self.set_deadline(b, rt);
            }
            None => self.abandon_block(b, host),
        }
    }

    /// Stops waiting for the block: its missing PSNs are left to RDMA's own
    /// retransmission, and what was held behind them moves on.
    pub(super) fn abandon_block<H: CrfHost + ?Sized>(&mut self, b: usize, host: &mut H) {
        let Some(x) = self.block(b) else {
            return;
        };
        let wanted = self.wanted(&x);
        for j in wanted.iter() {
            self.win.set(x.psn(j), ABANDONED);
            inc(&mut self.counters.psns_abandoned);
        }
        inc(&mut self.counters.blocks_released);
        self.free_block(b, true, host);
        self.advance_resolve(host);
        self.advance_delivery(true, host);
    }

    /// Sends the block-form REPAIR_REQUEST for block `b`: coded (L = the
    /// sources the decoder lacks, r = usable repairs held, M_s = X − r + δ)
    /// or FALLBACK (L = the missing sources, Source Copy of each).
    pub(super) fn send_block_request<S: Sink + ?Sized>(
        &mut self,
        b: usize,
        fallback: bool,
        sink: &mut S,
    ) {
        let Some(x) = self.block(b) else {
            return;
        };
        let (lost, r) = if fallback {
            (self.wanted(&x), 0u32)
        } else {
            let u = self.unknown(&x);
            (u, self.usable(b, &u))
        };
        if lost.is_empty() {
            return;
        }
        let xc = lost.count();
        let ms = if fallback {
            xc
        } else {
            let delta = u32::from(self.cfg.loss_ppm > 10_000);
            xc.saturating_sub(r).saturating_add(delta).clamp(1, xc)
        };
        let id = self.next_request_id();
        if let Some(y) = self.blocks.as_mut().get_mut(b) {
            y.request_id = id;
        }
        let req = RepairRequest {
            flow_id: self.cfg.flow_id,
            fallback,
            kind: RequestKind::Block(BlockRequest {
                config_id: x.cfg_id,
                scheme: FecScheme::from_u8(u8::from(x.scheme)),
                k: x.k,
                repairs_held: r.min(255) as u8,
                block_start: x.start,
                suggested_m: ms.min(255) as u8,
                request_id: id,
                lost,
            }),
        };
        let mut buf = [0u8; 8 + 12 + 32];
        if let Ok(n) = req.encode(&mut buf) {
            sink.send(buf.get(..n).unwrap_or(&[]));
            self.probe_sent(Asked::Request, id, 1);
            if fallback {
                inc(&mut self.counters.requests_fallback);
            } else {
                inc(&mut self.counters.requests_block);
            }
        }
    }
}
