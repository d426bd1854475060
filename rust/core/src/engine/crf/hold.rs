//! The hold queue: packets held after a gap, in arrival order, each with the
//! time by which it must be released (arrival + H).
//!
//! Arrival order is also deadline order (every entry gets `now + H` with a
//! non-decreasing `now`), so the head is always the next packet whose hold
//! time runs out. Entries of packets released earlier (in order, or because
//! an older entry expired and released everything before it) stay in the
//! queue as stale entries and are skipped when they reach the head; they
//! expire within H like the rest, so the queue never holds more than the
//! packets of one hold time.

use core::ptr::addr_of_mut;

use super::super::super::psn::Psn;
use super::super::Nanos;
use super::Slots;

/// One held packet's PSN and release deadline. Public only as the element
/// of a hold queue's storage: its fields are private.
#[derive(Clone, Copy, Debug)]
pub struct HoldEntry {
    psn: Psn,
    deadline: Nanos,
}

impl HoldEntry {
    /// An unused entry (what a caller fills a queue's storage with).
    pub const EMPTY: HoldEntry = HoldEntry {
        psn: Psn::ZERO,
        deadline: 0,
    };
}

type Entry = HoldEntry;

/// FIFO of (PSN, release deadline) in `E`'s entries (their number is the
/// queue's capacity).
#[derive(Clone, Debug)]
pub(super) struct HoldQueue<E> {
    entries: E,
    head: usize,
    len: usize,
}

impl<const N: usize> HoldQueue<[HoldEntry; N]> {
    #[cfg(test)]
    pub(super) const fn new() -> Self {
        HoldQueue {
            entries: [HoldEntry::EMPTY; N],
            head: 0,
            len: 0,
        }
    }

    /// Writes an empty queue at `slot` without building one on the stack.
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes and aligned for `Self`.
    pub(super) unsafe fn init_at(slot: *mut Self) {
        // SAFETY: `slot` is valid and aligned (caller); element pointers
        // stay within `entries` (i < N); every field is written once.
        unsafe {
            let first = addr_of_mut!((*slot).entries).cast::<Entry>();
            for i in 0..N {
                first.add(i).write(Entry {
                    psn: Psn::ZERO,
                    deadline: 0,
                });
            }
            addr_of_mut!((*slot).head).write(0);
            addr_of_mut!((*slot).len).write(0);
        }
    }
}

impl<E: Slots<HoldEntry>> HoldQueue<E> {
    /// An empty queue in `entries` (whatever they hold is never read).
    pub(super) fn with(entries: E) -> Self {
        HoldQueue {
            entries,
            head: 0,
            len: 0,
        }
    }

    pub(super) fn cap(&self) -> usize {
        self.entries.as_ref().len()
    }

    pub(super) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// No entry, stale or live: nothing is held.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn is_full(&self) -> bool {
        self.len >= self.cap()
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Appends an entry; `false` if the queue is full.
    pub(super) fn push(&mut self, psn: Psn, deadline: Nanos) -> bool {
        let n = self.cap();
        if self.len >= n {
            return false;
        }
        let Some(i) = self.head.wrapping_add(self.len).checked_rem(n) else {
            return false;
        };
        let Some(e) = self.entries.as_mut().get_mut(i) else {
            return false;
        };
        *e = Entry { psn, deadline };
        self.len = self.len.wrapping_add(1);
        true
    }

    /// The oldest entry.
    pub(super) fn front(&self) -> Option<(Psn, Nanos)> {
        if self.len == 0 {
            return None;
        }
        self.entries
            .as_ref()
            .get(self.head)
            .map(|e| (e.psn, e.deadline))
    }

    /// Removes the oldest entry.
    pub(super) fn pop(&mut self) {
        if self.len > 0 {
            self.head = self
                .head
                .wrapping_add(1)
                .checked_rem(self.cap())
                .unwrap_or(0);
            self.len = self.len.wrapping_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo() {
        let mut q = HoldQueue::<[HoldEntry; 2]>::new();
        assert!(q.front().is_none());
        assert!(q.push(Psn::new(1), 10));
        assert!(q.push(Psn::new(2), 20));
        assert!(q.is_full());
        assert!(!q.push(Psn::new(3), 30));
        assert_eq!(q.front(), Some((Psn::new(1), 10)));
        q.pop();
        assert!(q.push(Psn::new(3), 30));
        assert_eq!(q.len(), 2);
        q.pop();
        assert_eq!(q.front(), Some((Psn::new(3), 30)));
        q.pop();
        q.pop();
        assert_eq!(q.len(), 0);
        q.push(Psn::new(4), 1);
        q.clear();
        assert!(q.front().is_none());
    }
}
