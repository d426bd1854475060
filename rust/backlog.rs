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
//! behind them instead (the backlog is a FIFO, and a flow's packets share
//! one: RPS steers by the flow's hash). A packet that comes back passes the
//! hook without the engine, which has seen it already. The packets are
//! recognised by their address, compared only, never followed: one dropped
//! on its way (a full backlog is seen at once; a route or filter drop
//! before LOCAL_IN is not) is forgotten after [`LIFETIME`], within which
//! another skb at the same address would pass unexamined, as if ours.

use crate::crem_core::engine::{Nanos, MS};
use crate::kernel_ext::skb::sk_buff;

/// Packets a flow can have in the backlog and recognise (more go
/// unrecognised: the CRF takes them for duplicates when they come back).
pub(crate) const AHEAD: usize = 64;

/// How long a queued packet is waited for: the backlog runs within the
/// softirq that queued it.
const LIFETIME: Nanos = 10 * MS;

#[derive(Clone, Copy)]
struct Entry {
    skb: usize,
    at: Nanos,
}

/// The packets a flow queued to the backlog and has not seen come back.
pub(crate) struct Backlog {
    e: [Entry; AHEAD],
    n: usize,
}

impl Backlog {
    pub(crate) const fn new() -> Self {
        Backlog {
            e: [Entry { skb: 0, at: 0 }; AHEAD],
            n: 0,
        }
    }

    /// The entries in use (written without a panic path: the hook calls
    /// these in softirq).
    fn live(&self) -> &[Entry] {
        self.e.get(..self.n).unwrap_or(&[])
    }

    /// Drops the entries before `k` (the oldest), keeping the others in
    /// order.
    fn drop_first(&mut self, k: usize) {
        let k = k.min(self.n);
        let left = self.n.saturating_sub(k);
        for i in 0..left {
            if let Some(x) = self.e.get(i.wrapping_add(k)).copied() {
                if let Some(d) = self.e.get_mut(i) {
                    *d = x;
                }
            }
        }
        self.n = left;
    }

    /// `skb` was queued at `now`; false if there is no room to recognise it.
    pub(crate) fn queued(&mut self, skb: *const sk_buff, now: Nanos) -> bool {
        self.forget_old(now);
        let Some(slot) = self.e.get_mut(self.n) else {
            return false;
        };
        *slot = Entry {
            skb: skb as usize,
            at: now,
        };
        self.n = self.n.saturating_add(1);
        true
    }

    /// `skb` reached our hook: true if it is one we queued (then forgotten,
    /// with the ones queued before it: they come back in queue order, so
    /// those went another way).
    pub(crate) fn returned(&mut self, skb: *const sk_buff, now: Nanos) -> bool {
        self.forget_old(now);
        let addr = skb as usize;
        match self.live().iter().position(|x| x.skb == addr) {
            Some(i) => {
                self.drop_first(i.saturating_add(1));
                true
            }
            None => false,
        }
    }

    /// Whether packets we queued are still ahead in the backlog.
    pub(crate) fn ahead(&mut self, now: Nanos) -> bool {
        self.forget_old(now);
        self.n > 0
    }

    /// Forgets the packets queued more than [`LIFETIME`] ago (dropped on
    /// their way).
    fn forget_old(&mut self, now: Nanos) {
        let old = self
            .live()
            .iter()
            .take_while(|x| now.saturating_sub(x.at) > LIFETIME)
            .count();
        self.drop_first(old);
    }
}
