//! Indexes over the open blocks and the repair descriptors, so that no
//! per-packet lookup walks the whole storage (plan step 6, "Performance
//! hazard"):
//!
//! * the *ring*: the open blocks' slots in order of their start PSN, a
//!   ring buffer searched by bisection. Every open block starts within the
//!   window, at or after its base (`learn_block` refuses others, and
//!   `slide_to` frees the blocks its new base passes), so the distance from
//!   the base orders them; sliding the window removes a prefix and keeps
//!   the order of the rest. Blocks never overlap, so the block containing
//!   a PSN is the last one starting at or before it;
//! * two *free heaps*: the free block slots and the free repair slots, as
//!   binary min-heaps, so that a new block or repair takes the lowest free
//!   slot, as the linear search for it did;
//! * per block, its repair descriptors as a list linked through
//!   [`RepairMeta`]'s `next`, in ascending slot order (the order the scans
//!   of all descriptors visited them in).
//!
//! The ring and the heaps need one `u16` per slot: they are kept in the
//! `col` fields of the storage's elements (element `i` holds entry `i` of
//! the index, not anything about slot `i`), so the storage stays the
//! caller's two arrays. Writing a whole element keeps its `col`.

use super::super::super::psn::Psn;
use super::super::Nanos;
use super::blocks::{Block, RepairMeta, NIL};
use super::{Crf, CrfStorage, NEVER};

/// An element carrying one entry of a free heap.
pub(super) trait FreeCol {
    fn free_col(&self) -> u16;
    fn set_free_col(&mut self, v: u16);
}

impl FreeCol for Block {
    #[inline]
    fn free_col(&self) -> u16 {
        self.col.free
    }
    #[inline]
    fn set_free_col(&mut self, v: u16) {
        self.col.free = v;
    }
}

impl FreeCol for RepairMeta {
    #[inline]
    fn free_col(&self) -> u16 {
        self.free
    }
    #[inline]
    fn set_free_col(&mut self, v: u16) {
        self.free = v;
    }
}

#[inline]
fn hget<T: FreeCol>(a: &[T], i: usize) -> u16 {
    a.get(i).map_or(NIL, |x| x.free_col())
}

#[inline]
fn hset<T: FreeCol>(a: &mut [T], i: usize, v: u16) {
    if let Some(x) = a.get_mut(i) {
        x.set_free_col(v);
    }
}

/// Every slot free: `0, 1, ..` is a min-heap.
pub(super) fn heap_fill<T: FreeCol>(a: &mut [T], len: &mut usize) {
    for (i, x) in a.iter_mut().enumerate() {
        x.set_free_col(i as u16);
    }
    *len = a.len();
}

/// Adds free slot `v`.
pub(super) fn heap_push<T: FreeCol>(a: &mut [T], len: &mut usize, v: u16) {
    let mut i = *len;
    if i >= a.len() {
        return;
    }
    *len = i.wrapping_add(1);
    while i > 0 {
        let parent = (i - 1) / 2;
        let pv = hget(a, parent);
        if pv <= v {
            break;
        }
        hset(a, i, pv);
        i = parent;
    }
    hset(a, i, v);
}

/// Takes the lowest free slot.
pub(super) fn heap_pop<T: FreeCol>(a: &mut [T], len: &mut usize) -> Option<usize> {
    if *len == 0 {
        return None;
    }
    let top = hget(a, 0);
    let n = len.wrapping_sub(1);
    *len = n;
    let last = hget(a, n);
    let mut i = 0usize;
    loop {
        let l = i.wrapping_mul(2).wrapping_add(1);
        if l >= n {
            break;
        }
        let r = l.wrapping_add(1);
        let (c, cv) = if r < n && hget(a, r) < hget(a, l) {
            (r, hget(a, r))
        } else {
            (l, hget(a, l))
        };
        if last <= cv {
            break;
        }
        hset(a, i, cv);
        i = c;
    }
    hset(a, i, last);
    Some(top as usize)
}

impl<St: CrfStorage> Crf<St> {
    /// Empties every index (all slots free, no block, no repair).
    pub(super) fn reset_index(&mut self) {
        self.ring_head = 0;
        self.ring_len = 0;
        self.deadline_min = NEVER;
        self.deadline_stale = false;
        heap_fill(self.blocks.as_mut(), &mut self.free_blocks);
        heap_fill(self.repairs.as_mut(), &mut self.free_repairs);
    }

    /// An open block's deadline went from `old` to `new` (a block opened:
    /// from [`NEVER`]; closed: to [`NEVER`]): keeps the earliest deadline
    /// of the open blocks, or marks it to be found again when the block
    /// that had it moved away.
    pub(super) fn deadline_changed(&mut self, old: Nanos, new: Nanos) {
        if new < old {
            self.deadline_min = self.deadline_min.min(new);
        } else if new > old && old <= self.deadline_min {
            self.deadline_stale = true;
        }
    }

    /// Sets block `b`'s deadline.
    pub(super) fn set_deadline(&mut self, b: usize, d: Nanos) {
        let Some(x) = self.blocks.as_mut().get_mut(b) else {
            return;
        };
        let (old, live) = (x.deadline, x.live);
        x.deadline = d;
        if live {
            self.deadline_changed(old, d);
        }
    }

    /// The earliest deadline of the open blocks, found by walking them.
    pub(super) fn deadline_scan(&self) -> Nanos {
        self.open_iter().map(|x| x.deadline).min().unwrap_or(NEVER)
    }

    /// Finds the earliest deadline again if it went stale (at the end of
    /// each input, so that `next_deadline` need not).
    pub(super) fn refresh_deadline(&mut self) {
        if self.deadline_stale {
            self.deadline_min = self.deadline_scan();
            self.deadline_stale = false;
        }
    }

    /// The open blocks, in start order.
    pub(super) fn open_iter(&self) -> impl Iterator<Item = &Block> + '_ {
        (0..self.ring_len)
            .filter_map(|j| self.blocks.as_ref().get(self.ring_at(j)).filter(|b| b.live))
    }

    /// Where `p` falls in the window's order (its distance from the base).
    #[inline]
    fn key(&self, p: Psn) -> u32 {
        self.win.base.forward_distance(p)
    }

    #[inline]
    fn ring_phys(&self, j: usize) -> usize {
        let cap = self.blocks.as_ref().len();
        let i = self.ring_head.wrapping_add(j);
        if i >= cap {
            i.wrapping_sub(cap)
        } else {
            i
        }
    }

    /// The block slot at position `j` of the ring (`j < ring_len`).
    #[inline]
    pub(super) fn ring_at(&self, j: usize) -> usize {
        let i = self.ring_phys(j);
        self.blocks
            .as_ref()
            .get(i)
            .map_or(0, |x| x.col.ring as usize)
    }

    #[inline]
    fn ring_put(&mut self, j: usize, b: usize) {
        let i = self.ring_phys(j);
        if let Some(x) = self.blocks.as_mut().get_mut(i) {
            x.col.ring = b as u16;
        }
    }

    /// Order key of the block at ring position `j`.
    #[inline]
    fn ring_key(&self, j: usize) -> u32 {
        let b = self.ring_at(j);
        self.blocks
            .as_ref()
            .get(b)
            .map_or(u32::MAX, |x| self.key(x.start))
    }

    /// First ring position whose block starts at or after order key `k`.
    fn ring_lower_bound(&self, k: u32) -> usize {
        let (mut lo, mut hi) = (0usize, self.ring_len);
        while lo < hi {
            let mid = lo.wrapping_add(hi.wrapping_sub(lo) / 2);
            if self.ring_key(mid) < k {
                lo = mid.wrapping_add(1);
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Inserts block `b` at ring position `j`, moving the shorter side.
    fn ring_insert(&mut self, j: usize, b: usize) {
        let cap = self.blocks.as_ref().len();
        let len = self.ring_len;
        if len >= cap || j > len {
            return;
        }
        if j < len / 2 {
            self.ring_head = if self.ring_head == 0 {
                cap.wrapping_sub(1)
            } else {
                self.ring_head.wrapping_sub(1)
            };
            for i in 0..j {
                let v = self.ring_at(i.wrapping_add(1));
                self.ring_put(i, v);
            }
        } else {
            for i in (j..len).rev() {
                let v = self.ring_at(i);
                self.ring_put(i.wrapping_add(1), v);
            }
        }
        self.ring_put(j, b);
        self.ring_len = len.wrapping_add(1);
    }

    /// Removes ring position `j`, moving the shorter side.
    pub(super) fn ring_remove(&mut self, j: usize) {
        let cap = self.blocks.as_ref().len();
        let len = self.ring_len;
        if j >= len {
            return;
        }
        if j < len / 2 {
            for i in (0..j).rev() {
                let v = self.ring_at(i);
                self.ring_put(i.wrapping_add(1), v);
            }
            self.ring_head = self.ring_head.wrapping_add(1);
            if self.ring_head >= cap {
                self.ring_head = 0;
            }
        } else {
            for i in j..len.wrapping_sub(1) {
                let v = self.ring_at(i.wrapping_add(1));
                self.ring_put(i, v);
            }
        }
        self.ring_len = len.wrapping_sub(1);
    }

    /// Adds the block just written to slot `b` (live) to the ring.
    pub(super) fn ring_add(&mut self, b: usize) {
        let Some(x) = self.blocks.as_ref().get(b) else {
            return;
        };
        let j = self.ring_lower_bound(self.key(x.start));
        self.ring_insert(j, b);
    }

    /// Takes live block `b` out of the ring (its start is where the ring
    /// has it: call before the base passes it).
    pub(super) fn ring_drop(&mut self, b: usize) {
        let Some(x) = self.blocks.as_ref().get(b) else {
            return;
        };
        let j = self.ring_lower_bound(self.key(x.start));
        if j < self.ring_len && self.ring_at(j) == b {
            self.ring_remove(j);
            return;
        }
        // Not where its start puts it (cannot happen): look everywhere.
        for j in 0..self.ring_len {
            if self.ring_at(j) == b {
                self.ring_remove(j);
                return;
            }
        }
    }

    /// The open block starting at `start`.
    pub(super) fn find_block(&self, start: Psn) -> Option<usize> {
        let k = self.key(start);
        let j = self.ring_lower_bound(k);
        (j < self.ring_len && self.ring_key(j) == k).then(|| self.ring_at(j))
    }

    /// The open block containing `p`.
    pub(super) fn block_at(&self, p: Psn) -> Option<usize> {
        let k = self.key(p);
        // Open blocks lie within the window.
        if k as usize >= self.win.cap() {
            return None;
        }
        let j = self.ring_lower_bound(k.wrapping_add(1));
        if j == 0 {
            return None;
        }
        let b = self.ring_at(j.wrapping_sub(1));
        self.blocks
            .as_ref()
            .get(b)
            .filter(|x| x.live && x.position(p).is_some())
            .map(|_| b)
    }

    /// Whether an open block overlaps `k` positions from `start` (which
    /// lies in the window).
    pub(super) fn overlaps(&self, start: Psn, k: u8) -> bool {
        if self.block_at(start).is_some() {
            return true;
        }
        let j = self.ring_lower_bound(self.key(start));
        if j >= self.ring_len {
            return false;
        }
        let b = self.ring_at(j);
        self.blocks
            .as_ref()
            .get(b)
            .is_some_and(|x| x.live && start.forward_distance(x.start) < k as u32)
    }

    /// Diagnostic: whether the indexes agree with the storage (every
    /// open block once in the ring, in order; every free slot once in its
    /// heap, which is a heap; each block's repairs listed in ascending
    /// slot order, every live repair in its block's list). For tests and
    /// fuzzing.
    #[doc(hidden)]
    pub fn debug_index_ok(&self) -> bool {
        let blocks = self.blocks.as_ref();
        let repairs = self.repairs.as_ref();
        let live = blocks.iter().filter(|x| x.live).count();
        if live != self.ring_len || blocks.len() - live != self.free_blocks {
            return false;
        }
        let untriggered = blocks.iter().filter(|x| x.live && !x.triggered).count();
        if untriggered > self.untriggered {
            return false;
        }
        // A block waiting for the timer's decode makes the engine wait.
        if blocks.iter().any(|x| x.live && x.decode_pending) && !self.decode_pending {
            return false;
        }
        if !self.deadline_stale && self.deadline_min != self.deadline_scan() {
            return false;
        }
        let mut prev: Option<u32> = None;
        for j in 0..self.ring_len {
            let b = self.ring_at(j);
            let Some(x) = blocks.get(b).filter(|x| x.live) else {
                return false;
            };
            let k = self.key(x.start);
            if k as usize >= self.win.cap() || prev.is_some_and(|p| p >= k) {
                return false;
            }
            prev = Some(k);
        }
        if !heap_ok(blocks, self.free_blocks, |x| !x.live) {
            return false;
        }
        let rlive = repairs.iter().filter(|r| r.live).count();
        if repairs.len() - rlive != self.free_repairs
            || !heap_ok(repairs, self.free_repairs, |r| !r.live)
        {
            return false;
        }
        let mut listed = 0usize;
        for (b, x) in blocks.iter().enumerate() {
            if !x.live {
                if x.first != NIL {
                    return false;
                }
                continue;
            }
            let mut i = x.first;
            let mut last: Option<u16> = None;
            while i != NIL {
                let Some(r) = repairs.get(i as usize) else {
                    return false;
                };
                if !r.live || r.block as usize != b || last.is_some_and(|l| l >= i) {
                    return false;
                }
                listed += 1;
                if listed > repairs.len() {
                    return false;
                }
                last = Some(i);
                i = r.next;
            }
        }
        listed == rlive
    }
}

/// Whether the first `len` free columns of `a` are a min-heap of distinct
/// slots, each satisfying `free`.
fn heap_ok<T: FreeCol>(a: &[T], len: usize, free: impl Fn(&T) -> bool) -> bool {
    for i in 0..len {
        let v = hget(a, i);
        if !a.get(v as usize).is_some_and(&free) {
            return false;
        }
        if i > 0 && hget(a, (i - 1) / 2) >= v {
            return false;
        }
    }
    true
}
