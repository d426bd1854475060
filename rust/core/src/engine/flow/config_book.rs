//! The receiver's record of the configurations its CRF engine holds: accept
//! order and when each was last needed, to decide which one may be released
//! when a new one needs the slot.

use super::super::crf::MAX_CONFIGS;
use super::super::Nanos;

#[derive(Clone, Copy, Debug)]
struct Entry {
    id: u8,
    used: bool,
    /// Accept order (larger = newer, serial).
    seq: u32,
    /// Last acceptance or REPAIR carrying it.
    seen: Nanos,
}

const FREE: Entry = Entry {
    id: 0,
    used: false,
    seq: 0,
    seen: 0,
};

#[derive(Clone, Copy, Debug)]
pub(super) struct ConfigBook {
    entries: [Entry; MAX_CONFIGS],
    seq: u32,
}

impl ConfigBook {
    pub(super) const fn new() -> Self {
        ConfigBook {
            entries: [FREE; MAX_CONFIGS],
            seq: 0,
        }
    }

    pub(super) fn clear(&mut self) {
        *self = ConfigBook::new();
    }

    /// Configurations held.
    pub(super) fn held(&self) -> usize {
        self.entries.iter().filter(|e| e.used).count()
    }

    /// `id` was accepted (again) at `now`: it becomes the newest.
    pub(super) fn accepted(&mut self, id: u8, now: Nanos) {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let slot = match self.entries.iter().position(|e| e.used && e.id == id) {
            Some(i) => Some(i),
            None => self.entries.iter().position(|e| !e.used),
        };
        if let Some(e) = slot.and_then(|i| self.entries.get_mut(i)) {
            *e = Entry {
                id,
                used: true,
                seq,
                seen: now,
            };
        }
    }

    /// A REPAIR (or a re-sent PARAM_UPDATE) of `id` arrived at `now`.
    pub(super) fn seen(&mut self, id: u8, now: Nanos) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.used && e.id == id) {
            e.seen = e.seen.max(now);
        }
    }

    pub(super) fn remove(&mut self, id: u8) {
        for e in self.entries.iter_mut().filter(|e| e.used && e.id == id) {
            *e = FREE;
        }
    }

    /// The configurations accepted after `id`.
    pub(super) fn newer_than(&self, id: u8) -> impl Iterator<Item = u8> + '_ {
        let seq = self
            .entries
            .iter()
            .find(|e| e.used && e.id == id)
            .map(|e| e.seq);
        self.entries
            .iter()
            .filter(move |e| e.used && seq.is_some_and(|s| (e.seq.wrapping_sub(s) as i32) > 0))
            .map(|e| e.id)
    }

    /// The oldest configuration that may be released at `now`: not the
    /// newest, not needed within the last `grace`, and not `in_use` (the
    /// caller's test: a live block, PSNs it may still cover).
    pub(super) fn releasable(
        &self,
        now: Nanos,
        grace: Nanos,
        in_use: impl Fn(u8) -> bool,
    ) -> Option<u8> {
        let newest = self
            .entries
            .iter()
            .filter(|e| e.used)
            .max_by(|a, b| (a.seq.wrapping_sub(b.seq) as i32).cmp(&0))?
            .seq;
        self.entries
            .iter()
            .filter(|e| e.used && e.seq != newest)
            .filter(|e| e.seen.saturating_add(grace) <= now && !in_use(e.id))
            .min_by(|a, b| (a.seq.wrapping_sub(b.seq) as i32).cmp(&0))
            .map(|e| e.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_idle_unused_goes_first_never_the_newest() {
        let mut b = ConfigBook::new();
        assert_eq!(b.releasable(100, 0, |_| false), None);
        b.accepted(1, 0);
        b.accepted(2, 10);
        b.accepted(3, 20);
        b.accepted(4, 30);
        assert_eq!(b.held(), 4);
        // Within the grace period nothing goes.
        assert_eq!(b.releasable(35, 40, |_| false), None);
        assert_eq!(b.releasable(100, 10, |_| false), Some(1));
        // In use (a live block) or recently seen: skipped.
        b.seen(2, 95);
        assert_eq!(b.releasable(100, 10, |id| id == 1), Some(3));
        b.remove(3);
        b.remove(1);
        assert_eq!(b.releasable(100, 10, |_| false), None); // 2 seen, 4 newest
        assert_eq!(b.held(), 2);
        // Re-accepting makes it the newest.
        b.accepted(2, 200);
        assert_eq!(b.releasable(300, 10, |_| false), Some(4));
        assert_eq!(b.newer_than(4).collect::<Vec<_>>(), vec![2]);
        assert_eq!(b.newer_than(2).count(), 0);
        assert_eq!(b.newer_than(9).count(), 0);
        b.clear();
        assert_eq!(b.held(), 0);
    }
}
