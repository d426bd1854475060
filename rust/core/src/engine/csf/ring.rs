//! Retained block metadata and the ring that holds it, in storage the
//! caller sizes (a fixed array, or its own allocation: [`super::CsfStorage`]).
//!
//! Blocks enter the ring in PSN order (the newest may still be open) and
//! leave it oldest first (RDMA acknowledgment, give-up). The ring never
//! allocates and never panics: every index is reduced with `checked_rem`
//! and read with `get`.

use core::ptr::addr_of_mut;

use super::super::super::fec::{Bitmap, Scheme};
use super::super::super::psn::{Psn, PsnRange};
use super::super::{FecConfig, Nanos};
use super::Slots;

/// Metadata of one source block (the source bytes stay with the caller).
/// Public only as the element of a ring's storage: its fields are private.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    /// PSN of position 0.
    pub(super) start: Psn,
    /// Configuration the block was opened with.
    pub(super) cfg: FecConfig,
    /// Positions covered so far (present or absent); the block's k once
    /// closed.
    pub(super) covered: u8,
    /// Ordinary repairs accumulated for the block (m, capped by the
    /// accumulator size).
    pub(super) m_eff: u8,
    /// First Repair Index never used for the block (ordinary indices
    /// 0..m are reserved from the start).
    pub(super) next_index: u16,
    /// Still accepting sources.
    pub(super) open: bool,
    /// Positions that carry a source packet.
    pub(super) present: Bitmap,
    /// Positions a Path Reporter said it dropped that proactive answers
    /// of the current round (within an SRTT of the block's last answer)
    /// covered or, in the open block (never answered), will at its close.
    pub(super) dropped: Bitmap,
    /// The last response (`last_response`) was a proactive answer.
    pub(super) proactive: bool,
    /// Positions re-sent for T/C AETH reports in the current SRTT round.
    pub(super) tc_sent: Bitmap,
    /// Start of the current T/C AETH round.
    pub(super) tc_round: Nanos,
    /// Time of the last coded / Source Copy response, if any.
    pub(super) last_response: Option<Nanos>,
    /// Time of the last INFO reply, if any.
    pub(super) last_info: Option<Nanos>,
    /// Time the block was closed (give-up age).
    pub(super) closed_at: Nanos,
    /// Octets of retained source payloads.
    pub(super) retained: u64,
    /// Its sources were given up under the retention budget before the
    /// RDMA ACK (see `Csf::release_quiet`): the entry stays, so that the
    /// ACK and requests still find the block, but nothing is re-sent.
    pub(super) released: bool,
    /// Opened while the configuration was provisional (see
    /// [`super::Csf::set_provisional`]): its m_eff ordinary repairs are
    /// computed from the retained sources and sent once the configuration
    /// is confirmed and the block closed.
    pub(super) deferred: bool,
    /// The CRF was told where the block ends: its ordinary round sent
    /// LAST, or its tail notice went out (`Csf::tail_due`).
    pub(super) told: bool,
}

impl Block {
    /// An unused slot (what a caller fills a ring's storage with).
    pub const EMPTY: Block = Block {
        start: Psn::ZERO,
        cfg: FecConfig {
            id: 0,
            scheme: Scheme::CauchyRs,
            k: 1,
            m: 0,
            t: 2,
        },
        covered: 0,
        m_eff: 0,
        next_index: 0,
        open: false,
        present: Bitmap::EMPTY,
        dropped: Bitmap::EMPTY,
        proactive: false,
        tc_sent: Bitmap::EMPTY,
        tc_round: 0,
        last_response: None,
        last_info: None,
        closed_at: 0,
        retained: 0,
        released: false,
        deferred: false,
        told: false,
    };

    /// A freshly opened block.
    pub(super) fn open(start: Psn, cfg: FecConfig, m_eff: u8) -> Block {
        Block {
            start,
            cfg,
            m_eff,
            next_index: cfg.m as u16,
            open: true,
            ..Block::EMPTY
        }
    }

    /// The PSNs the block covers.
    pub(super) fn range(&self) -> PsnRange {
        PsnRange::new(self.start, self.covered as u32)
    }

    /// Position of `psn` if the block covers it.
    pub(super) fn position(&self, psn: Psn) -> Option<u8> {
        let d = self.start.forward_distance(psn);
        if d < self.covered as u32 {
            Some(d as u8)
        } else {
            None
        }
    }

    /// The positions of this block that `r` names (within `covered`).
    pub(super) fn positions_in(&self, r: &PsnRange) -> Bitmap {
        let covered = self.covered as u32;
        let off = self.start.forward_distance(r.start);
        let (lo, hi) = if off < covered {
            (off, covered.min(off.saturating_add(r.count)))
        } else {
            let d = r.start.forward_distance(self.start);
            if d < r.count {
                (0, covered.min(r.count.saturating_sub(d)))
            } else {
                (0, 0)
            }
        };
        Bitmap::first(hi as usize).difference(&Bitmap::first(lo as usize))
    }

    /// Unused Cauchy Repair Indices left (i + k <= 255 with k = covered).
    pub(super) fn fresh_indices(&self) -> u16 {
        let limit = 256u16.saturating_sub(self.covered as u16);
        limit.saturating_sub(self.next_index)
    }
}

/// FIFO of blocks, oldest first, in `R`'s slots (their number is the
/// ring's capacity).
#[derive(Debug)]
pub(super) struct Ring<R> {
    slots: R,
    head: usize,
    len: usize,
}

impl<const N: usize> Ring<[Block; N]> {
    /// Writes an empty ring at `slot`, slot by slot, so that no ring-sized
    /// temporary is built on the stack.
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes and properly aligned; its previous
    /// contents are overwritten without being dropped.
    pub(super) unsafe fn init_at(slot: *mut Self) {
        // SAFETY: the caller guarantees `slot` is valid and aligned; the
        // element pointers stay within the `slots` array (i < N), and every
        // field is written once with a valid value.
        unsafe {
            let first = addr_of_mut!((*slot).slots).cast::<Block>();
            for i in 0..N {
                first.add(i).write(Block::EMPTY);
            }
            addr_of_mut!((*slot).head).write(0);
            addr_of_mut!((*slot).len).write(0);
        }
    }
}

impl<R: Slots<Block>> Ring<R> {
    /// An empty ring in `slots` (whatever they hold is never read).
    pub(super) fn new(slots: R) -> Self {
        Ring {
            slots,
            head: 0,
            len: 0,
        }
    }

    /// Most blocks held.
    pub(super) fn capacity(&self) -> usize {
        self.slots.as_ref().len()
    }

    /// Forgets every block (no release: the caller does that first).
    pub(super) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// Number of blocks.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// No block held.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a push would evict the oldest block.
    pub(super) fn is_full(&self) -> bool {
        self.len >= self.capacity()
    }

    fn slot(&self, n: usize) -> Option<usize> {
        if n >= self.len {
            return None;
        }
        self.head.checked_add(n)?.checked_rem(self.capacity())
    }

    /// The n-th oldest block.
    pub(super) fn get(&self, n: usize) -> Option<&Block> {
        self.slots.as_ref().get(self.slot(n)?)
    }

    /// The n-th oldest block, mutably.
    pub(super) fn get_mut(&mut self, n: usize) -> Option<&mut Block> {
        let s = self.slot(n)?;
        self.slots.as_mut().get_mut(s)
    }

    /// The newest block.
    pub(super) fn newest(&self) -> Option<&Block> {
        self.get(self.len.checked_sub(1)?)
    }

    /// The newest block, mutably.
    pub(super) fn newest_mut(&mut self) -> Option<&mut Block> {
        self.get_mut(self.len.checked_sub(1)?)
    }

    /// The oldest block.
    pub(super) fn oldest(&self) -> Option<&Block> {
        self.get(0)
    }

    /// Appends a block; `false` when full or of capacity 0 (the caller
    /// evicts first).
    pub(super) fn push(&mut self, b: Block) -> bool {
        let n = self.capacity();
        if self.len >= n {
            return false;
        }
        let Some(s) = self
            .head
            .checked_add(self.len)
            .and_then(|x| x.checked_rem(n))
        else {
            return false;
        };
        match self.slots.as_mut().get_mut(s) {
            Some(slot) => {
                *slot = b;
                self.len = self.len.saturating_add(1);
                true
            }
            None => false,
        }
    }

    /// Removes and returns the oldest block.
    pub(super) fn pop_oldest(&mut self) -> Option<Block> {
        let b = *self.get(0)?;
        let n = self.capacity();
        self.head = self
            .head
            .checked_add(1)
            .and_then(|x| x.checked_rem(n))
            .unwrap_or(0);
        self.len = self.len.saturating_sub(1);
        Some(b)
    }

    /// Number of blocks, oldest first, for which `before` holds (blocks
    /// are in PSN order, so it holds for a prefix): a binary search, valid
    /// while the retained window spans less than 2^23 PSNs, which the
    /// retention budget guarantees in practice.
    fn prefix(&self, before: impl Fn(&Block) -> bool) -> usize {
        let (mut lo, mut hi) = (0usize, self.len);
        while lo < hi {
            let mid = lo.wrapping_add(hi.wrapping_sub(lo) / 2);
            match self.get(mid) {
                Some(b) if before(b) => lo = mid.wrapping_add(1),
                _ => hi = mid,
            }
        }
        lo
    }

    /// Age index of the block covering `psn`: the newest starting at or
    /// before it, if it covers `psn` (otherwise, or past the serial range
    /// of [`Ring::prefix`], `None`).
    pub(super) fn find(&self, psn: Psn) -> Option<usize> {
        let n = self
            .prefix(|b| b.start.is_before_or_eq(psn))
            .checked_sub(1)?;
        self.get(n)?.position(psn).map(|_| n)
    }

    /// Number of blocks starting before `psn` (serial order): the age
    /// index of the first one at or after it.
    pub(super) fn count_before(&self, psn: Psn) -> usize {
        self.prefix(|b| b.start.is_before(psn))
    }

    /// Age index of the block starting at `start`.
    pub(super) fn find_start(&self, start: Psn) -> Option<usize> {
        let n = self.find(start)?;
        (self.get(n)?.start == start).then_some(n)
    }
}
