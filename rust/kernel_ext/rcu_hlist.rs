// SPDX-License-Identifier: GPL-2.0
//! Hash chains that readers walk under RCU, without a lock, while one
//! writer at a time adds, removes and moves entries: `hlist_nulls` of
//! `include/linux/rculist_nulls.h`, for objects that embed a [`Link`]
//! (6.12's `kernel` crate has no RCU list; the flow table, `table.rs`, is
//! built on this).
//!
//! Every chain ends in a marker that names its own bucket (the "nulls"
//! value: `bucket << 1 | 1`; a link's address is even). An entry may move
//! from one chain to another without a grace period (a flow whose Flow ID
//! changes): a reader standing on it follows it into its new chain, ends
//! on that chain's marker, sees the bucket is not the one it walks, and
//! walks its own again ([`Chains::find`]), so it misses no entry that was
//! in its chain for the whole walk. Entries are freed only a grace period
//! after they leave every chain (the owner's rule, stated on [`Chains::add`]).
//!
//! Orderings: every store of a link's address (a head, a `next`) is a
//! Release and every load a reader follows an Acquire
//! (`rcu_assign_pointer`/`rcu_dereference`; the kernel relies on address
//! dependencies where Rust's model needs Acquire), so a reader that
//! reaches an entry, from a head or from another entry, sees it as it was
//! written before it was linked.
//!
//! Not modelled: the addresses published are those of the `Link` fields,
//! and owners find their entry from them by offset (container_of), as the
//! kernel's lists do; under Stacked Borrows a pointer made from a field
//! reference does not cover the whole entry. Nothing here is checked by
//! Miri (it is kernel code); an owner-derived pointer would need the
//! entry's raw pointer at insertion, which `table.rs` does not keep.

use super::rcu::Reader;
use core::convert::Infallible;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use kernel::init::init_array_from_fn;
use kernel::prelude::*;

/// The end marker of chain `bucket`.
const fn end_of(bucket: usize) -> usize {
    (bucket << 1) | 1
}

/// A link of one chain, a field of the entry it links. An entry may have
/// several (one per chain set it is in).
pub(crate) struct Link {
    /// The next entry's link, or the chain's end marker (odd).
    next: AtomicUsize,
    /// The word that points at this link (a bucket head or the previous
    /// link's `next`); null while unlinked. Only the writer uses it (under
    /// the writers' serialisation), so Relaxed.
    pprev: AtomicPtr<AtomicUsize>,
}

impl Link {
    /// An unlinked link.
    pub(crate) const fn new() -> Self {
        Link {
            next: AtomicUsize::new(end_of(0)),
            pprev: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Whether the link is in a chain (writer's view: call with the
    /// writers serialised, as for [`Chains::add`]).
    pub(crate) fn is_linked(&self) -> bool {
        !self.pprev.load(Ordering::Relaxed).is_null()
    }
}

impl Default for Link {
    fn default() -> Self {
        Link::new()
    }
}

/// A set of `N` chains (a hash table's buckets), each nulls-terminated.
/// `N` is a constant so that a bucket index (taken modulo `N`) is always
/// in bounds: no run-time check, nothing that could panic.
pub(crate) struct Chains<const N: usize> {
    heads: KBox<[AtomicUsize; N]>,
}

impl<const N: usize> Chains<N> {
    /// `N` empty chains, in kernel memory charged to the caller's memory
    /// cgroup (process context).
    pub(crate) fn new() -> Result<Self> {
        const { assert!(N > 0) };
        let heads = init_array_from_fn::<_, N, _, Infallible>(|b| AtomicUsize::new(end_of(b)));
        Ok(Chains {
            heads: KBox::init(heads, GFP_KERNEL_ACCOUNT)?,
        })
    }

    fn head(&self, bucket: usize) -> &AtomicUsize {
        &self.heads[bucket % N]
    }

    /// Walks chain `bucket` (modulo the number of chains) under the reader's
    /// section, giving each entry's link to `f` until it returns
    /// something; walks the chain again if the walk ended in another one
    /// (an entry moved meanwhile), so `f` may see an entry twice. The links
    /// stay valid for the section (`'a`): an owner frees its entry a grace
    /// period after unlinking it ([`Self::add`]).
    pub(crate) fn find<'a, R>(
        &'a self,
        bucket: usize,
        _reader: &'a impl Reader,
        mut f: impl FnMut(&'a Link) -> Option<R>,
    ) -> Option<R> {
        let bucket = bucket % N;
        loop {
            let mut p = self.head(bucket).load(Ordering::Acquire);
            while p & 1 == 0 {
                // SAFETY: an even word in a chain is the address of a link
                // that is, or was less than a grace period ago, in one of
                // the chains of this set (`add`'s contract): its entry is
                // alive for the reader's section.
                let link = unsafe { &*(p as *const Link) };
                if let Some(r) = f(link) {
                    return Some(r);
                }
                p = link.next.load(Ordering::Acquire);
            }
            if p == end_of(bucket) {
                return None;
            }
        }
    }

    /// Puts `link` at the head of chain `bucket` (modulo the number of chains).
    ///
    /// # Safety
    ///
    /// - Writers of this set are serialised (one lock held by every
    ///   caller of `add` and `del`), and `link` is not linked.
    /// - `link` is in this set's chains only, and its entry stays where it
    ///   is, alive, while it is linked and for an RCU grace period after it
    ///   is unlinked by [`Self::del`].
    pub(crate) unsafe fn add(&self, bucket: usize, link: &Link) {
        let head = self.head(bucket);
        let first = head.load(Ordering::Relaxed);
        // Release, not only the head's: a reader standing on this link
        // (moved here under it, `move_to`) reaches `first` through this
        // store, and must see that entry as it was written.
        link.next.store(first, Ordering::Release);
        if first & 1 == 0 {
            // SAFETY: a link in this chain (writers serialised: it stays).
            let f = unsafe { &*(first as *const Link) };
            f.pprev.store(
                core::ptr::from_ref(&link.next).cast_mut(),
                Ordering::Relaxed,
            );
        }
        link.pprev
            .store(core::ptr::from_ref(head).cast_mut(), Ordering::Relaxed);
        // Publishes the link with its `next` (rcu_assign_pointer).
        head.store(core::ptr::from_ref(link) as usize, Ordering::Release);
    }

    /// Puts `link` at the end of chain `bucket` (modulo the number of
    /// chains): a chain filled this way keeps the order of insertion, so a
    /// walk resumed at the n-th entry of a chain (`FlowTable::walk`) never
    /// sees an entry added since a second time (removals before it make it
    /// skip one instead). The writer walks the chain to its end.
    ///
    /// # Safety
    ///
    /// As for [`Self::add`].
    pub(crate) unsafe fn add_tail(&self, bucket: usize, link: &Link) {
        let bucket = bucket % N;
        // The word to point at `link`: the head, or the last link's `next`.
        let mut last: &AtomicUsize = self.head(bucket);
        loop {
            let p = last.load(Ordering::Relaxed);
            if p & 1 != 0 {
                break;
            }
            // SAFETY: a link in this chain (writers serialised: it stays).
            last = unsafe { &(*(p as *const Link)).next };
        }
        // Release: as in `add`.
        link.next.store(end_of(bucket), Ordering::Release);
        link.pprev
            .store(core::ptr::from_ref(last).cast_mut(), Ordering::Relaxed);
        // Publishes the link with its `next` (rcu_assign_pointer).
        last.store(core::ptr::from_ref(link) as usize, Ordering::Release);
    }

    /// Takes `link` out of its chain; readers standing on it go on from
    /// where it was (its `next` is kept). A no-op if it is not linked.
    ///
    /// # Safety
    ///
    /// As for [`Self::add`]: writers serialised; `link` linked (if at all)
    /// in this set.
    pub(crate) unsafe fn del(&self, link: &Link) {
        let pprev = link.pprev.load(Ordering::Relaxed);
        if pprev.is_null() {
            return;
        }
        let next = link.next.load(Ordering::Relaxed);
        // SAFETY: `pprev` is the head or a linked link's `next` that points
        // at `link` (writers serialised, so it is still so).
        unsafe { (*pprev).store(next, Ordering::Release) };
        if next & 1 == 0 {
            // SAFETY: a link in the same chain, linked.
            let n = unsafe { &*(next as *const Link) };
            n.pprev.store(pprev, Ordering::Relaxed);
        }
        link.pprev.store(core::ptr::null_mut(), Ordering::Relaxed);
    }

    /// Moves `link` to the head of chain `bucket` without a grace period
    /// (readers on it follow it there and walk their own chain again).
    ///
    /// # Safety
    ///
    /// As for [`Self::add`], except that `link` may be linked (in this set).
    pub(crate) unsafe fn move_to(&self, bucket: usize, link: &Link) {
        // SAFETY: the caller's contract.
        unsafe {
            self.del(link);
            self.add(bucket, link);
        }
    }
}
