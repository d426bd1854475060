//! Per-PSN receive state over a sliding window of `W` consecutive PSNs.
//!
//! The CRF learns block boundaries only from REPAIR messages, which usually
//! arrive after the block's sources, so source state is kept per PSN rather
//! than per block. Slot `i` of the arrays holds the PSN `base + ((i −
//! base_slot) mod W)`; sliding the window only moves `base`/`base_slot` and
//! resets the slots it frees. The slot index is also the key under which
//! the caller's [`super::SymbolStore`] keeps the source packet.

use core::ptr::addr_of_mut;

use super::super::super::psn::Psn;
use super::Slots;

/// A source packet arrived (the original, or an RDMA retransmission).
pub(super) const RECEIVED: u16 = 1 << 0;
/// Restored by CREM (decoded or Source Copy) and verified.
pub(super) const RESTORED: u16 = 1 << 1;
/// Known absent position (READ request span or Present Bitmap).
pub(super) const ABSENT: u16 = 1 << 2;
/// CREM gave up on the PSN: recovery is left to the RDMA transport.
pub(super) const ABANDONED: u16 = 1 << 3;
/// The caller holds the packet until a release.
pub(super) const HELD: u16 = 1 << 4;
/// Handed to the RDMA receiver.
pub(super) const DELIVERED: u16 = 1 << 5;
/// The store keeps a copy of the source (usable for decoding).
pub(super) const KEPT: u16 = 1 << 6;
/// Covered by a known block (loss handled at block level).
pub(super) const IN_BLOCK: u16 = 1 << 7;
/// Missing and noticed as a gap (its `due` time is set).
pub(super) const DETECTED: u16 = 1 << 8;
/// Request rounds spent on a gap with no known block (2 bits).
pub(super) const ROUND_SHIFT: u32 = 9;
pub(super) const ROUND_MASK: u16 = 3 << ROUND_SHIFT;
/// The store keeps a copy of the source, no longer for decoding, only to
/// replay it into an RDMA resend pass that lost it (`crf/replay.rs`).
pub(super) const REPLAYABLE: u16 = 1 << 11;

/// The packet is there (for decoding and delivery).
pub(super) const HAVE: u16 = RECEIVED | RESTORED;
/// Nothing more to wait for at this PSN.
pub(super) const RESOLVED: u16 = RECEIVED | RESTORED | ABSENT | ABANDONED;

/// PSNs the window reaches back before the first PSN observed.
pub(super) const BEHIND: u32 = 255;

/// Coarse time for the per-PSN due field: 1.024 µs units, wrapping u32
/// (compared with wrapping differences; dues lie seconds, not the
/// 36-minute half range, from now).
#[inline]
pub(super) fn coarse(t: u64) -> u32 {
    (t >> 10) as u32
}

/// `coarse` rounded up, so a due time is never reached early.
#[inline]
pub(super) fn coarse_up(t: u64) -> u32 {
    coarse(t.saturating_add(1023))
}

/// The time to wake up for an exact due time `due` stored as
/// `coarse_up(due)`: by then [`reached`] holds.
#[inline]
pub(super) fn wake(due: u64) -> u64 {
    due.saturating_add(1023)
}

/// Whether coarse time `due` has been reached at `now`.
#[inline]
pub(super) fn reached(due: u32, now: u64) -> bool {
    (coarse(now).wrapping_sub(due) as i32) >= 0
}

/// A coarse due back in nanoseconds: a time at which [`reached`] holds
/// (`now` if it already does).
#[inline]
pub(super) fn due_nanos(due: u32, now: u64) -> u64 {
    let ahead = due.wrapping_sub(coarse(now)) as i32;
    if ahead <= 0 {
        return now;
    }
    now.saturating_add((ahead as u64) << 10)
}

/// Per-PSN state of the window.
#[derive(Clone, Debug)]
pub(super) struct Window<F, D> {
    /// Per-slot flags and due times, in storage of one length (checked by
    /// [`super::Crf::with_storage`]): the window's size.
    pub(super) flags: F,
    pub(super) due: D,
    /// Set by the first source or REPAIR.
    pub(super) started: bool,
    /// First PSN of the window.
    pub(super) base: Psn,
    /// Slot of `base`.
    pub(super) base_slot: usize,
    /// Highest source PSN seen (`base - 1` before the first source).
    pub(super) highest: Psn,
    /// Lowest PSN not yet passed to RDMA in order.
    pub(super) deliver_next: Psn,
    /// Lowest PSN not resolved.
    pub(super) resolve_next: Psn,
    /// Lowest PSN neither resolved nor covered by a live block: a source
    /// more than k − 1 before it belongs to no block that can still be
    /// decoded (see `Crf::advance_resolve`). Never behind `resolve_next`.
    pub(super) need_next: Psn,
    /// Source copies below this PSN have been dropped, but those of live
    /// blocks (dropped when their block is freed).
    pub(super) drop_next: Psn,
    /// Next PSN the far sweep looks at (see `Crf::advance_resolve`): it
    /// drops sources ahead of `need_next` that no gap is near.
    pub(super) far_next: Psn,
    /// The last gap (unresolved, in no live block) the far sweep saw.
    pub(super) far_gap: Psn,
    /// Lowest PSN not yet examined for gap detection.
    pub(super) detect_next: Psn,
    /// Lowest source PSN seen: positions from here on are expected.
    pub(super) origin: Psn,
}

impl<const W: usize> Window<[u16; W], [u32; W]> {
    #[cfg(test)]
    pub(super) fn new() -> Self {
        Window::with([0; W], [0; W])
    }

    /// Writes an empty window at `slot` without building one on the stack.
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes and aligned for `Self`.
    pub(super) unsafe fn init_at(slot: *mut Self) {
        // SAFETY: `slot` is valid and aligned (caller); `flags` and `due`
        // are integer arrays, for which zero octets are valid values; every
        // other field is written once through its raw field pointer.
        unsafe {
            addr_of_mut!((*slot).flags).cast::<u16>().write_bytes(0, W);
            addr_of_mut!((*slot).due).cast::<u32>().write_bytes(0, W);
            addr_of_mut!((*slot).started).write(false);
            addr_of_mut!((*slot).base).write(Psn::ZERO);
            addr_of_mut!((*slot).base_slot).write(0);
            addr_of_mut!((*slot).highest).write(Psn::ZERO);
            addr_of_mut!((*slot).deliver_next).write(Psn::ZERO);
            addr_of_mut!((*slot).resolve_next).write(Psn::ZERO);
            addr_of_mut!((*slot).need_next).write(Psn::ZERO);
            addr_of_mut!((*slot).drop_next).write(Psn::ZERO);
            addr_of_mut!((*slot).far_next).write(Psn::ZERO);
            addr_of_mut!((*slot).far_gap).write(Psn::ZERO);
            addr_of_mut!((*slot).detect_next).write(Psn::ZERO);
            addr_of_mut!((*slot).origin).write(Psn::ZERO);
        }
    }
}

impl<F: Slots<u16>, D: Slots<u32>> Window<F, D> {
    /// An empty window in `flags` and `due` (of one length; zeroed here).
    pub(super) fn with(flags: F, due: D) -> Self {
        let mut w = Window {
            flags,
            due,
            started: false,
            base: Psn::ZERO,
            base_slot: 0,
            highest: Psn::ZERO,
            deliver_next: Psn::ZERO,
            resolve_next: Psn::ZERO,
            need_next: Psn::ZERO,
            drop_next: Psn::ZERO,
            far_next: Psn::ZERO,
            far_gap: Psn::ZERO,
            detect_next: Psn::ZERO,
            origin: Psn::ZERO,
        };
        w.reset();
        w
    }

    /// PSNs tracked.
    #[inline]
    pub(super) fn cap(&self) -> usize {
        self.flags.as_ref().len().min(self.due.as_ref().len())
    }

    pub(super) fn reset(&mut self) {
        self.flags.as_mut().fill(0);
        self.due.as_mut().fill(0);
        self.started = false;
        self.base = Psn::ZERO;
        self.base_slot = 0;
        self.highest = Psn::ZERO;
        self.deliver_next = Psn::ZERO;
        self.resolve_next = Psn::ZERO;
        self.need_next = Psn::ZERO;
        self.drop_next = Psn::ZERO;
        self.far_next = Psn::ZERO;
        self.far_gap = Psn::ZERO;
        self.detect_next = Psn::ZERO;
        self.origin = Psn::ZERO;
    }

    /// Starts the window for a flow whose first observed PSN is `first`
    /// (nothing seen yet). The window reaches `BEHIND` PSNs back, so a block
    /// that began with lost packets (revealed later by its REPAIR) still
    /// fits; those earlier positions are not counted as expected or as gaps.
    pub(super) fn start(&mut self, first: Psn) {
        self.started = true;
        self.base = first.wrapping_sub(BEHIND);
        self.base_slot = 0;
        self.highest = first.prev();
        self.deliver_next = first;
        self.resolve_next = first;
        self.need_next = first;
        self.drop_next = first;
        self.far_next = first;
        self.far_gap = first;
        self.detect_next = first;
        self.origin = first;
    }

    /// One past the last PSN of the window.
    pub(super) fn top(&self) -> Psn {
        self.base.wrapping_add(self.cap() as u32)
    }

    /// Slot of `p`, if `p` lies in the window.
    #[inline]
    pub(super) fn slot(&self, p: Psn) -> Option<usize> {
        if !self.started {
            return None;
        }
        let w = self.cap();
        let d = self.base.forward_distance(p) as usize;
        if d >= w {
            return None;
        }
        let s = self.base_slot.wrapping_add(d);
        Some(if s >= w { s.wrapping_sub(w) } else { s })
    }

    /// Flags of `p` (0 outside the window).
    #[inline]
    pub(super) fn get(&self, p: Psn) -> u16 {
        self.slot(p)
            .and_then(|s| self.flags.as_ref().get(s).copied())
            .unwrap_or(0)
    }

    /// Flags of slot `s`.
    #[inline]
    pub(super) fn at(&self, s: usize) -> u16 {
        self.flags.as_ref().get(s).copied().unwrap_or(0)
    }

    /// Sets bits on `p`; `false` if `p` is outside the window.
    #[inline]
    pub(super) fn set(&mut self, p: Psn, bits: u16) -> bool {
        match self.slot(p).and_then(|s| self.flags.as_mut().get_mut(s)) {
            Some(f) => {
                *f |= bits;
                true
            }
            None => false,
        }
    }

    /// Clears bits on `p`.
    #[inline]
    pub(super) fn clear(&mut self, p: Psn, bits: u16) {
        if let Some(f) = self.slot(p).and_then(|s| self.flags.as_mut().get_mut(s)) {
            *f &= !bits;
        }
    }

    /// Rounds spent on the gap at slot `s`.
    pub(super) fn rounds_at(&self, s: usize) -> u8 {
        ((self.at(s) & ROUND_MASK) >> ROUND_SHIFT) as u8
    }

    /// Sets the rounds and the due time of slot `s`, marking it detected.
    pub(super) fn set_gap(&mut self, s: usize, rounds: u8, due: u32) {
        if let Some(f) = self.flags.as_mut().get_mut(s) {
            *f = (*f & !ROUND_MASK) | (((rounds.min(3) as u16) << ROUND_SHIFT) & ROUND_MASK);
            *f |= DETECTED;
        }
        if let Some(d) = self.due.as_mut().get_mut(s) {
            *d = due;
        }
    }

    /// Due time of slot `s`.
    pub(super) fn due_at(&self, s: usize) -> u32 {
        self.due.as_ref().get(s).copied().unwrap_or(0)
    }

    /// Clears slot `s` completely.
    pub(super) fn wipe(&mut self, s: usize) {
        if let Some(f) = self.flags.as_mut().get_mut(s) {
            *f = 0;
        }
        if let Some(d) = self.due.as_mut().get_mut(s) {
            *d = 0;
        }
    }

    /// The first PSN from `from` on (up to one past `highest`) that has
    /// none of the flags `any`: where a frontier that passes such PSNs
    /// stops.
    pub(super) fn walk(&self, from: Psn, any: u16) -> Psn {
        let mut p = from;
        for _ in 0..self.cap() {
            if p.is_after(self.highest) || self.get(p) & any == 0 {
                break;
            }
            p = p.next();
        }
        p
    }

    /// `p` is unresolved again, or newly expected (a block gave it back to
    /// gap tracking, or the origin moved back): both frontiers that pass
    /// only resolved PSNs return to it.
    pub(super) fn unresolve(&mut self, p: Psn) {
        if p.is_before(self.resolve_next) {
            self.resolve_next = p;
        }
        if p.is_before(self.need_next) {
            self.need_next = p;
        }
    }

    /// A source at `p` was kept and no live block covers it: if the near
    /// sweep has passed `p`, it returns to it (an evicted block's sources,
    /// a late arrival), so that they go once no gap needs them rather
    /// than when the window slides.
    pub(super) fn kept_outside_block(&mut self, p: Psn) {
        if p.is_before(self.drop_next) && !p.is_before(self.base) {
            self.drop_next = p;
        }
    }

    /// Raises every frontier to at least `base` after a slide.
    pub(super) fn clamp_frontiers(&mut self) {
        let b = self.base;
        for f in [
            &mut self.deliver_next,
            &mut self.resolve_next,
            &mut self.need_next,
            &mut self.drop_next,
            &mut self.far_next,
            &mut self.far_gap,
            &mut self.detect_next,
            &mut self.origin,
        ] {
            if f.is_before(b) {
                *f = b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_wrap() {
        let mut w = Window::<[u16; 8], [u32; 8]>::new();
        assert_eq!(w.slot(Psn::ZERO), None);
        w.start(Psn::new(0xFF_FFFE).wrapping_add(BEHIND));
        w.base_slot = 6;
        assert_eq!(w.slot(Psn::new(0xFF_FFFE)), Some(6));
        assert_eq!(w.slot(Psn::new(1)), Some(1));
        assert_eq!(w.slot(Psn::new(5)), Some(5));
        assert_eq!(w.slot(Psn::new(6)), None);
        assert_eq!(w.top(), Psn::new(6));
        assert!(w.set(Psn::new(1), RECEIVED | KEPT));
        assert_eq!(w.get(Psn::new(1)), RECEIVED | KEPT);
        w.clear(Psn::new(1), KEPT);
        assert_eq!(w.at(1), RECEIVED);
        assert!(!w.set(Psn::new(7), RECEIVED));
        w.set_gap(2, 5, 77);
        assert_eq!(w.rounds_at(2), 3);
        assert_eq!(w.due_at(2), 77);
        w.wipe(2);
        assert_eq!(w.at(2), 0);
        w.reset();
        assert!(!w.started);
    }

    #[test]
    fn coarse_time() {
        for t in [0u64, 1, 1023, 1024, 5000, 1 << 40] {
            assert!(reached(coarse_up(t), wake(t)));
        }
        assert!(reached(coarse_up(5000), 5000 + 1023));
        assert!(!reached(coarse_up(5000), 3000));
        let d = coarse_up(1 << 45);
        assert!(reached(d, 1 << 45));
        assert!(due_nanos(d, (1 << 45) - 5000) >= (1 << 45));
        // wrap of the coarse clock
        let t = (u32::MAX as u64) << 10;
        let d = coarse_up(t + 4096);
        assert!(!reached(d, t));
        assert!(reached(d, t + 4096));
        assert_eq!(due_nanos(coarse(t), t + 10), t + 10);
    }
}
