// SPDX-License-Identifier: GPL-2.0
//! RDMA ACKs kept back behind held READ responses.
//!
//! A requester's PSNs carry its requests, and the responder answers each
//! in their order: READ responses at the READ's PSNs, an ACK or NAK for
//! the others. The CRF of the responses (a responses-kind receiver flow)
//! holds the READ responses that follow a lost one until it is restored;
//! the ACKs of the same QP are no sources of that flow, and went on at
//! once, overtaking them. A requester that sees an ACK beyond a READ still
//! pending takes that READ's missing responses for lost and resends from
//! the first (rxe's completer: `COMPST_ERROR_RETRY`; the IBTA's implicit
//! NAK), so every restored gap with a SEND or WRITE behind it cost a
//! go-back-N pass, and the resent READ crossed the held originals (the
//! NVMe-over-RDMA writes of the stop 59 grid: 65 ACKs overtook held
//! responses in three 32 MiB writes, `results.py ack-overtakes`).
//!
//! So an ACK (or NAK) at PSN q from a peer, while its QP's responses flow
//! holds a packet before q (crem-core's `Crf::holds_before`), waits here,
//! in arrival order, charged like a held packet. It goes on when the
//! releases pass it: each held packet's release first sends the ACKs
//! before its PSN (releases are in PSN order, so nothing held is before
//! them any more), and after each engine call the ACKs nothing held is
//! before go on. No ACK waits longer than the hold time H from its
//! arrival (a packet held after it, behind another gap, could keep it
//! longer): the RDMA transport's own recovery is never delayed by more
//! than H, as the draft asks of held packets. The order holds whatever
//! happens: when a 33rd would wait the oldest goes on, and when one cannot
//! be kept (no memory or route) those waiting go on first (counted in
//! `acks-passed`, which names the ACKs that went on with held responses
//! still before them).
//!
//! In host mode an ACK that goes on takes the backlog and is recognised
//! when it comes back (`crate::backlog`); one the backlog had no room to
//! track comes back as a new ACK (counted in `backlog-untracked`), which
//! the reverse sender flows then read twice (harmless: an ACK releases
//! what it acknowledges once).

use crate::crem_core::engine::Nanos;
use crate::crem_core::psn::Psn;
use crate::kernel_ext::mem::FlowArray;
use crate::kernel_ext::skb::Skb;
use kernel::bindings;
use kernel::prelude::*;

/// ACKs a receiver flow can keep back at once. An ACK answers a SEND or
/// WRITE message (one per message, or per 64 packets of one: rxe's
/// coalescing), so a hold time's worth of them is few; more go on at once,
/// counted.
pub(crate) const ACKS: usize = 32;

struct Entry {
    skb: Option<Skb>,
    psn: Psn,
    /// When it goes on at the latest (arrival + H).
    until: Nanos,
}

/// A FIFO of ACKs and their PSNs (empty for a sender flow).
pub(crate) struct Acks {
    e: FlowArray<Entry>,
    head: usize,
    n: usize,
}

impl Acks {
    /// Room for `len` ACKs (process context: allocates, charged to the
    /// caller's memory cgroup).
    pub(crate) fn new(len: usize) -> Result<Self> {
        Ok(Acks {
            e: FlowArray::new(len, || Entry {
                skb: None,
                psn: Psn::ZERO,
                until: 0,
            })?,
            head: 0,
            n: 0,
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

    pub(crate) fn is_full(&self) -> bool {
        self.n >= self.e.len()
    }

    /// The oldest one's PSN and when it goes on at the latest.
    pub(crate) fn front(&self) -> Option<(Psn, Nanos)> {
        (self.n > 0)
            .then(|| self.e.get(self.head).map(|e| (e.psn, e.until)))
            .flatten()
    }

    /// Appends `skb` (PSN `psn`, to go on by `until`); gives it back if the
    /// queue is full.
    pub(crate) fn push(
        &mut self,
        psn: Psn,
        until: Nanos,
        skb: Skb,
    ) -> core::result::Result<(), Skb> {
        if self.is_full() {
            return Err(skb);
        }
        let i = self.at(self.n);
        let Some(slot) = self.e.get_mut(i) else {
            return Err(skb);
        };
        *slot = Entry {
            skb: Some(skb),
            psn,
            until,
        };
        self.n = self.n.saturating_add(1);
        Ok(())
    }

    /// Takes the oldest one.
    pub(crate) fn pop(&mut self) -> Option<(Psn, Skb)> {
        while self.n > 0 {
            let e = self.e.get_mut(self.head)?;
            let taken = e.skb.take().map(|skb| (e.psn, skb));
            self.head = self.at(1);
            self.n = self.n.saturating_sub(1);
            if taken.is_some() {
                return taken;
            }
        }
        None
    }

    /// Takes one that arrived on `dev` (being unregistered: no packet may
    /// keep a pointer to it), keeping the others' order; None when there
    /// is none left.
    pub(crate) fn take_on(&mut self, dev: *const bindings::net_device) -> Option<Skb> {
        let j = (0..self.n).find(|&j| {
            self.e
                .get(self.at(j))
                .and_then(|e| e.skb.as_ref())
                .is_some_and(|s| core::ptr::eq(s.dev(), dev))
        })?;
        let skb = self.e.get_mut(self.at(j))?.skb.take();
        // Close the hole: the later ones move up one place.
        for k in j..self.n.saturating_sub(1) {
            let next = self
                .e
                .get_mut(self.at(k.wrapping_add(1)))
                .map(|e| (e.skb.take(), e.psn, e.until));
            if let (Some((skb, psn, until)), Some(e)) = (next, self.e.get_mut(self.at(k))) {
                *e = Entry { skb, psn, until };
            }
        }
        self.n = self.n.saturating_sub(1);
        skb
    }
}
