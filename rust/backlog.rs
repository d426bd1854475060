// SPDX-License-Identifier: GPL-2.0
//! Host mode's delivery order.
//!
//! In host mode the packets a receiver flow passes on (restored, released,
//! replayed) enter this host's receive path through the CPU's backlog
//! (`netif_rx`, `crate::inject`), and reach LOCAL_IN, hence RDMA, only when
//! the backlog runs. An original that arrives meanwhile, in the same NAPI
//! poll, goes straight up and overtakes them: rxe sees its PSN early, NAKs
//! and drops it, and its sender resends everything from the gap, a pass the
//! path may cut again (at 3 % loss host mode reached 0.07-0.09 of loss-free
//! where gateway mode, whose injection is synchronous, reached 0.74).
//!
//! So a flow remembers the packets it queued until they come back through
//! its hook, and while any is ahead, an original that would go on is queued
//! behind them instead. A packet that comes back passes the hook without
//! the engine, which has seen it already. The backlog is a FIFO per CPU, so
//! one that comes back takes with it those queued before it, which went
//! another way (dropped before LOCAL_IN: a route or filter drop; a full
//! backlog is seen at once): a packet that never comes back is forgotten
//! when one queued after it does, which the next original queued behind
//! ensures, or after [`LIFETIME`] at the latest. The order holds where a
//! flow's packets and its repairs are received on one CPU (one receive
//! queue, or RPS, which steers by the flow's hash; the VMs have one CPU);
//! packets queued on two CPUs' backlogs can come back in another order, and
//! those passed are forgotten (`backlog-unreturned`) and taken for
//! duplicates by the CRF when they do come back.
//!
//! The packets are recognised by their address and PSN; the address is
//! compared only, never followed. While a dropped one is remembered,
//! another skb at its address with its PSN (a duplicate, which the RDMA
//! receiver discards) would pass unexamined, as if ours.

use crate::crem_core::engine::{Nanos, MS};
use crate::kernel_ext::mem::FlowArray;
use crate::kernel_ext::skb::sk_buff;
use kernel::prelude::*;

/// Packets a receiver flow can have in the backlog and recognise (more go
/// unrecognised: the CRF takes them for duplicates when they come back).
pub(crate) const AHEAD: usize = 256;

/// How long a queued packet is waited for at most. The backlog runs in the
/// softirq that queued it, yet a slow machine can keep packets there for
/// over 10 ms (the debug kernel under TCG: with 10 ms here, 19,296 of
/// 19,531 packets queued behind were forgotten before they came back); a
/// packet that does not come back is normally forgotten sooner, when one
/// queued after it comes back.
pub(crate) const LIFETIME: Nanos = 500 * MS;

#[derive(Clone, Copy)]
struct Entry {
    skb: usize,
    psn: u32,
    at: Nanos,
}

/// The packets a flow queued to the backlog and has not seen come back.
pub(crate) struct Backlog {
    /// A ring (allocated with the flow's stores, empty for a sender): the
    /// oldest at `head`, `n` in use.
    e: FlowArray<Entry>,
    head: usize,
    n: usize,
    /// Packets queued that the flow did not see come back (forgotten after
    /// [`LIFETIME`], or passed by one queued after them).
    pub(crate) unreturned: u64,
    /// Packets queued with no room left to recognise them, and originals
    /// let go on ahead of the queued ones for want of it ([`AHEAD`]).
    pub(crate) untracked: u64,
}

impl Backlog {
    /// Room for `len` packets (process context: allocates, charged to the
    /// caller's memory cgroup).
    pub(crate) fn new(len: usize) -> Result<Self> {
        let empty = Entry {
            skb: 0,
            psn: 0,
            at: 0,
        };
        Ok(Backlog {
            e: FlowArray::new(len, || empty)?,
            head: 0,
            n: 0,
            unreturned: 0,
            untracked: 0,
        })
    }

    /// The octets `new(len)` allocates.
    pub(crate) const fn octets(len: usize) -> usize {
        FlowArray::<Entry>::octets(len)
    }

    /// The ring index of the `j`-th oldest entry.
    fn at(&self, j: usize) -> usize {
        self.e.ring_at(self.head, j)
    }

    /// The entries in use, oldest first (written without a panic path:
    /// the hook calls these in softirq).
    fn live(&self) -> impl Iterator<Item = &Entry> + '_ {
        (0..self.n).filter_map(|j| self.e.get(self.at(j)))
    }

    /// The PSNs queued and not seen back, oldest first (KUnit: the order
    /// the flow passed packets on in).
    #[cfg(crem_kunit)]
    pub(crate) fn queued_psns(&self) -> impl Iterator<Item = u32> + '_ {
        self.live().map(|e| e.psn)
    }

    /// Drops the `k` oldest entries.
    fn drop_first(&mut self, k: usize) {
        let k = k.min(self.n);
        self.head = self.at(k);
        self.n = self.n.saturating_sub(k);
    }

    /// Forgets the `k` oldest entries, which did not come back (counted).
    fn forget(&mut self, k: usize) {
        let k = k.min(self.n);
        self.unreturned = self.unreturned.saturating_add(k as u64);
        self.drop_first(k);
    }

    /// `skb` (PSN `psn`) was queued at `now`; false if there is no room to
    /// recognise it (counted).
    pub(crate) fn queued(&mut self, skb: *const sk_buff, psn: u32, now: Nanos) -> bool {
        self.forget_old(now);
        if self.n >= self.e.len() {
            self.untracked = self.untracked.saturating_add(1);
            return false;
        }
        let i = self.at(self.n);
        let Some(slot) = self.e.get_mut(i) else {
            return false;
        };
        *slot = Entry {
            skb: skb as usize,
            psn,
            at: now,
        };
        self.n = self.n.saturating_add(1);
        true
    }

    /// `skb` (PSN `psn`) reached our hook: true if it is one we queued
    /// (then forgotten, with the ones queued before it: they come back in
    /// queue order, so those went another way).
    pub(crate) fn returned(&mut self, skb: *const sk_buff, psn: u32, now: Nanos) -> bool {
        self.forget_old(now);
        let addr = skb as usize;
        // Searched by hand, as in `forget_old`.
        let (mut found, mut j) = (None, 0usize);
        for x in self.live() {
            if x.skb == addr && x.psn == psn {
                found = Some(j);
                break;
            }
            j = j.saturating_add(1);
        }
        match found {
            Some(i) => {
                self.forget(i);
                self.drop_first(1);
                true
            }
            None => false,
        }
    }

    /// Whether there is room to recognise one more; if not, counted
    /// untracked (the caller lets its packet go on without queueing it).
    pub(crate) fn room(&mut self) -> bool {
        let room = self.n < self.e.len();
        if !room {
            self.untracked = self.untracked.saturating_add(1);
        }
        room
    }

    /// Whether packets we queued are still ahead in the backlog.
    pub(crate) fn ahead(&mut self, now: Nanos) -> bool {
        self.forget_old(now);
        self.n > 0
    }

    /// Forgets the packets queued more than [`LIFETIME`] ago (dropped on
    /// their way).
    fn forget_old(&mut self, now: Nanos) {
        // Counted by hand: `Iterator::count`, `position` and `enumerate`
        // carry an overflow check (a panic path in softirq).
        let mut old = 0usize;
        for x in self.live() {
            if now.saturating_sub(x.at) <= LIFETIME {
                break;
            }
            old = old.saturating_add(1);
        }
        self.forget(old);
    }
}
