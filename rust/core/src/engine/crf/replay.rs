//! Replaying the packets an RDMA resend pass lost, from the CRF's copies.
//!
//! When a loss is left to RDMA (a block given up, a hold expired, a packet
//! CREM never saw), a go-back-N sender resends every PSN from the lost one
//! on: a pass of up to a window of packets that the CRF received already,
//! so they are duplicates here, passed on uncoded. The pass crosses the
//! same lossy path: at 3 % loss a pass of 120 packets loses one with
//! probability 0.97, the receiver NAKs again, and the sender starts another
//! pass (a cascade, a round trip each; the sender's retransmission timer
//! when a pass's last packets are lost). Yet the CRF had most of these packets; it keeps
//! the copies it took for decoding a while longer ([`REPLAYABLE`], for the
//! last [`Crf::replay_span`] PSNs) and, when the next packet of a pass shows
//! that the pass skipped some of them, passes its copies on first (the
//! caller rebuilds them as restored packets), then a copy of the packet that
//! showed the gap, so that the receiver gets them in PSN order (a restored
//! packet can take a path that the packet at the hook would overtake). The
//! receiver takes a replayed packet it needs and drops one it has (a
//! duplicate, which rxe answers with an ACK): a replay never costs more
//! than that.
//!
//! A pass is told from the first transmission by its duplicates: the next
//! PSN expected in arrival order moves with every packet; a duplicate, or a
//! new PSN right after one, that comes later than that PSN shows a gap.
//! Only PSNs the CRF has a copy of are replayed, at most [`REPLAY_REACH`]
//! before the packet, so a first transmission's losses (not had here) and
//! reordering (the late packet is not had yet) replay nothing, and only
//! packets already handed on are (not one still held). A packet behind the
//! expected PSN starts a pass (the sender went back), unless it is one the
//! CRF passed on itself lately (replayed, restored or released) coming back
//! through our hook (host mode: they enter the receive path again), which
//! changes nothing. Reordering within a pass (51 after 52) replays 51,
//! which the receiver then gets twice.

use super::super::super::psn::Psn;
use super::super::{Nanos, MS};
use super::window::{DELIVERED, HAVE, KEPT, REPLAYABLE};
use super::{inc, Crf, CrfHost, CrfStorage, Restored, SymbolStore};

/// The most PSNs one packet may show a pass skipped: a resend pass's
/// losses are as bursty as the path's, and each costs a packet built here.
pub const REPLAY_REACH: u32 = 16;

/// How long after the CRF passed packets on they may come back through our
/// hook: in host mode they are queued to this CPU's backlog, which the
/// softirq that queued them runs before it ends. A range of such PSNs
/// grows for at most this long before it starts anew.
const ECHO_TIME: Nanos = 2 * MS;

/// Where the CRF is in the arrival order of the flow's packets.
#[derive(Clone, Copy, Debug)]
pub(super) struct ReplayState {
    /// The PSN expected next in arrival order (none before the first).
    next: Option<Psn>,
    /// The last packet was a duplicate: a new PSN after it still belongs
    /// to the pass (its last packets were lost, the sender went on).
    after_duplicate: bool,
    /// Replayable copies below this PSN have been dropped.
    drop_next: Psn,
    /// The PSNs the CRF passed on lately (lowest, highest), since when the
    /// range grows, and until when they may come back through our hook.
    echo: (Psn, Psn),
    echo_from: Nanos,
    echo_until: Nanos,
}

impl ReplayState {
    pub(super) const fn new() -> ReplayState {
        ReplayState {
            next: None,
            after_duplicate: false,
            drop_next: Psn::ZERO,
            echo: (Psn::ZERO, Psn::ZERO),
            echo_from: 0,
            echo_until: 0,
        }
    }
}

/// How a packet relates to what the CRF had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arrival {
    /// A PSN the CRF received before: a resend.
    Duplicate,
    /// A PSN not had, before the highest one seen: a lost packet resent,
    /// or a late one.
    Fill,
    /// A PSN not had, after the highest one seen.
    New,
}

impl<St: CrfStorage> Crf<St> {
    /// PSNs behind the highest whose copies are kept for replay: the
    /// packets in flight the window was sized for (a quarter of it,
    /// `module_caps`), which bounds a go-back-N pass. 0: replay is off.
    pub(super) fn replay_span(&self) -> u32 {
        if self.cfg.replay {
            (self.win.cap() / 4) as u32
        } else {
            0
        }
    }

    /// Starts the window at `first` (its first source or REPAIR), and
    /// replay's bookkeeping with it.
    pub(super) fn start_window(&mut self, first: Psn) {
        self.win.start(first);
        self.replay = ReplayState::new();
        self.replay.drop_next = first;
    }

    /// The copy of the source at `p` (slot `s`) is no longer needed for
    /// decoding: it is dropped, or kept for replay if `p` is recent enough
    /// (and where the sweep will find it).
    pub(super) fn retire_source<S: SymbolStore + ?Sized>(
        &mut self,
        p: Psn,
        s: usize,
        store: &mut S,
    ) {
        let span = self.replay_span();
        let recent = span > 0
            && p.is_after(self.win.highest.wrapping_sub(span))
            && p.is_after_or_eq(self.replay.drop_next);
        self.win.clear(p, KEPT);
        if recent && self.win.at(s) & HAVE != 0 {
            self.win.set(p, REPLAYABLE);
        } else {
            store.drop_source(s);
        }
    }

    /// Drops the replayable copies that fell [`Crf::replay_span`] behind
    /// the highest PSN.
    pub(super) fn replay_sweep<S: SymbolStore + ?Sized>(&mut self, store: &mut S) {
        let bound = self.win.highest.wrapping_sub(self.replay_span());
        if self.replay.drop_next.is_before(self.win.base) {
            self.replay.drop_next = self.win.base;
        }
        for _ in 0..self.win.cap() {
            let p = self.replay.drop_next;
            if !p.is_before_or_eq(bound) {
                break;
            }
            if let Some(s) = self.win.slot(p) {
                if self.win.at(s) & REPLAYABLE != 0 {
                    store.drop_source(s);
                    self.win.clear(p, REPLAYABLE);
                }
            }
            self.replay.drop_next = p.next();
        }
    }

    /// The CRF passed a packet of `p` on (restored, released or replayed):
    /// in host mode it comes back through our hook, where it is no resend.
    pub(super) fn note_injected(&mut self, p: Psn) {
        if !self.cfg.replay {
            return;
        }
        let now = self.last_now;
        let st = &mut self.replay;
        if now > st.echo_until || now > st.echo_from.saturating_add(ECHO_TIME) {
            st.echo = (p, p);
            st.echo_from = now;
        } else if p.is_before(st.echo.0) {
            st.echo.0 = p;
        } else if p.is_after(st.echo.1) {
            st.echo.1 = p;
        }
        st.echo_until = now.saturating_add(ECHO_TIME);
    }

    /// A source at `psn` arrived as `how` (`highest`: the highest PSN seen
    /// before it). Replays the copies of what the pass it belongs to
    /// skipped; true if any went (the caller then replaces the packet by a
    /// copy, [`super::SourceVerdict::Replaced`]).
    pub(super) fn replay_before<H: CrfHost + ?Sized>(
        &mut self,
        now: Nanos,
        psn: Psn,
        how: Arrival,
        highest: Psn,
        host: &mut H,
    ) -> bool {
        if !self.cfg.replay {
            return false;
        }
        let st = self.replay;
        let (lo, hi) = st.echo;
        if how == Arrival::Duplicate
            && now <= st.echo_until
            && psn.is_after_or_eq(lo)
            && psn.is_before_or_eq(hi)
        {
            // One of ours, back through the hook.
            return false;
        }
        let mut replayed = false;
        if let Some(r) = st.next.filter(|&r| psn.is_after(r)) {
            let shown = how == Arrival::Duplicate || st.after_duplicate;
            let gap = r.forward_distance(psn);
            if shown && gap <= REPLAY_REACH {
                replayed = self.replay_range(r, gap, highest, host);
            }
        }
        // Otherwise in order, or behind: a pass starts here.
        self.replay.next = Some(psn.next());
        self.replay.after_duplicate = how == Arrival::Duplicate;
        replayed
    }

    /// Replays the copies had of `n` PSNs from `from`, up to `highest`.
    fn replay_range<H: CrfHost + ?Sized>(
        &mut self,
        from: Psn,
        n: u32,
        highest: Psn,
        host: &mut H,
    ) -> bool {
        let mut any = false;
        let mut p = from;
        for _ in 0..n {
            if p.is_after(highest) {
                break;
            }
            if let Some(s) = self.win.slot(p) {
                let f = self.win.at(s);
                // Had, kept and handed on already (not one still held).
                if f & HAVE != 0 && f & (KEPT | REPLAYABLE) != 0 && f & DELIVERED != 0 {
                    match host.replay(s, p) {
                        Restored::Verified => {
                            inc(&mut self.counters.sources_replayed);
                            self.note_injected(p);
                            any = true;
                        }
                        _ => inc(&mut self.counters.replay_failed),
                    }
                }
            }
            p = p.next();
        }
        any
    }
}
