//! The reporter's per-flow state: drops collected for one aggregation
//! interval, downstream entries merged into them, emission under the
//! per-flow gap.
//!
//! Storage is a slice of [`Slot`]s the caller lends (its length chosen at
//! run time); each slot has fixed-size PSN lists. Lookups scan the slice:
//! the table is small (a reporter tracks the flows it drops, for about a
//! flow gap), and a scan needs no hashing and no tombstones.

use super::super::engine::Nanos;
use super::super::psn::Psn;
use super::super::wire::{FlowAddrs, HopEntry, LossCause, Method, PathReport, MAX_HOP_ENTRIES};
use super::encode;
use super::parse::Dropped;

/// Own dropped PSNs one slot lists (all causes together). Ruling: 64, the
/// plan's default `report-psns`; a run-time limit ([`Params::psn_limit`])
/// may lower it. Later drops are counted in Lost Count only.
pub const SLOT_PSNS: usize = 64;
/// Downstream PSNs one slot holds for merged entries (in all of them).
/// Ruling: 256, about what a 1500-octet report has room for beside a full
/// own list; PSNs beyond it are left out and the report is Truncated.
pub const HELD_PSNS: usize = 256;
/// Downstream entries one slot holds: at least one entry is its own.
const MAX_HELD: usize = MAX_HOP_ENTRIES - 1;
/// Own causes: 0 unknown, 1 queue overflow, 2 transmission error.
pub(super) const CAUSES: usize = 3;

/// The reporter's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// This node's Node ID.
    pub node_id: u32,
    /// Aggregation interval (draft RECOMMENDED 50 µs); at least 1 ns.
    pub interval: Nanos,
    /// Least time between two reports about one flow.
    pub flow_gap: Nanos,
    /// Own PSNs listed per report, at most [`SLOT_PSNS`].
    pub psn_limit: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            node_id: 0,
            interval: 50_000,
            flow_gap: 1_000_000,
            psn_limit: SLOT_PSNS,
        }
    }
}

impl Params {
    fn sane(self) -> Params {
        Params {
            interval: self.interval.max(1),
            psn_limit: self.psn_limit.min(SLOT_PSNS),
            ..self
        }
    }
}

/// Counters the kernel exports (netns `stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Drops of non-source packets (ACK, READ response, CNP, …), ignored.
    pub non_source: u64,
    /// Drops not recorded because every slot was busy.
    pub slots_full: u64,
    /// Dropped PSNs known here but not listed in any report.
    pub psns_omitted: u64,
    /// PATH_REPORTs emitted.
    pub reports_emitted: u64,
    /// Reports held back past their interval by the per-flow gap.
    pub flow_deferred: u64,
    /// Downstream reports merged into an own report.
    pub merged: u64,
    /// Downstream reports to be forwarded unchanged.
    pub forwarded: u64,
    /// Hop entries left out (beyond 16, or beyond the MTU budget).
    pub entries_over: u64,
    /// Reports not emitted: not even one entry fits the budget.
    pub too_small: u64,
}

/// What to do with a downstream PATH_REPORT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    /// Merged into the own report due at this time: drop the original.
    Held(Nanos),
    /// Not merged: forward it unchanged, now.
    Forward,
}

/// What [`Aggregator::poll`] does with a due report, as the caller says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// Encode it in at most this many octets and emit it.
    Send(usize),
    /// Drop it (no route, the port's rate limit: the caller counts why);
    /// its slot is done all the same.
    Decline,
    /// Not this time: it stays pending (the caller could not decide yet:
    /// the kernel looks routes up outside its lock, for the flows
    /// [`Aggregator::due`] listed).
    Later,
}

/// An encoded PATH_REPORT handed to the caller by [`Aggregator::poll`].
#[derive(Clone, Copy, Debug)]
pub struct Emit<'a> {
    /// The reported flow (the CSF is the one for `addrs`' source).
    pub addrs: FlowAddrs,
    /// Its destination QP (the Flow Label).
    pub dest_qp: u32,
    /// The message, at most the budget.
    pub bytes: &'a [u8],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Free,
    /// Reported at `last_sent`; kept for the flow gap, reusable after it.
    Idle,
    /// Collecting; emitted at `due`.
    Pending,
}

/// A downstream hop entry held for merging; its PSNs are
/// `held_psns[start..start + n]`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    pub(super) node_id: u32,
    pub(super) period: u32,
    pub(super) lost: u32,
    pub(super) qdc_us: i32,
    pub(super) cause: LossCause,
    pub(super) start: u16,
    pub(super) n: u16,
}

const NO_HELD: Held = Held {
    node_id: 0,
    period: 0,
    lost: 0,
    qdc_us: 0,
    cause: LossCause::Unknown,
    start: 0,
    n: 0,
};

/// One flow's reporting state (about 1.8 KiB, mostly the held PSNs: the
/// kernel lends a slice of these, allocated when reporting is turned on).
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    state: State,
    pub(super) addrs: FlowAddrs,
    pub(super) dest_qp: u32,
    pub(super) first_at: Nanos,
    due: Nanos,
    last_sent: Option<Nanos>,
    /// Own drops per cause (Lost Count).
    pub(super) lost: [u32; CAUSES],
    /// Own PSNs listed per cause, grouped in cause order in `psns`.
    pub(super) n: [u8; CAUSES],
    pub(super) psns: [Psn; SLOT_PSNS],
    /// Some dropped PSN is in no list (own list full, merged report
    /// Truncated or cut): the report's Truncated flag.
    pub(super) omitted: bool,
    pub(super) held: [Held; MAX_HELD],
    pub(super) n_held: u8,
    pub(super) held_psns: [Psn; HELD_PSNS],
    pub(super) n_held_psns: u16,
}

impl Slot {
    /// An unused slot.
    pub const EMPTY: Slot = Slot {
        state: State::Free,
        addrs: FlowAddrs::V4 {
            src: [0; 4],
            dst: [0; 4],
        },
        dest_qp: 0,
        first_at: 0,
        due: 0,
        last_sent: None,
        lost: [0; CAUSES],
        n: [0; CAUSES],
        psns: [Psn::ZERO; SLOT_PSNS],
        omitted: false,
        held: [NO_HELD; MAX_HELD],
        n_held: 0,
        held_psns: [Psn::ZERO; HELD_PSNS],
        n_held_psns: 0,
    };

    fn is(&self, addrs: &FlowAddrs, dest_qp: u32) -> bool {
        self.state != State::Free && self.dest_qp == dest_qp && self.addrs == *addrs
    }

    /// Reusable for another flow: free, or idle with its gap over.
    fn reusable(&self, now: Nanos, gap: Nanos) -> bool {
        match (self.state, self.last_sent) {
            (State::Free, _) | (State::Idle, None) => true,
            (State::Idle, Some(t)) => now >= t.saturating_add(gap),
            (State::Pending, _) => false,
        }
    }

    /// Own entries (causes with drops).
    pub(super) fn own_entries(&self) -> usize {
        // Not `count()`, which would compile in an overflow check.
        self.lost
            .iter()
            .filter(|&&l| l > 0)
            .fold(0, |n: usize, _| n.wrapping_add(1))
    }

    /// Starts a report; returns its due time and whether the gap pushed it.
    fn start(&mut self, now: Nanos, p: &Params) -> (Nanos, bool) {
        let by_interval = now.saturating_add(p.interval);
        let by_gap = self.last_sent.map_or(0, |t| t.saturating_add(p.flow_gap));
        self.state = State::Pending;
        self.first_at = now;
        self.due = by_interval.max(by_gap);
        self.lost = [0; CAUSES];
        self.n = [0; CAUSES];
        self.omitted = false;
        self.n_held = 0;
        self.n_held_psns = 0;
        (self.due, by_gap > by_interval)
    }

    /// Counts a drop and lists its PSN if there is room; false if omitted.
    fn record(&mut self, c: usize, psn: Psn, limit: usize) -> bool {
        if let Some(l) = self.lost.get_mut(c) {
            *l = l.saturating_add(1);
        }
        let total = self
            .n
            .iter()
            .fold(0usize, |a, &x| a.saturating_add(usize::from(x)));
        // Insert at the end of cause c's group, keeping groups in order.
        let pos = self
            .n
            .iter()
            .take(c.saturating_add(1))
            .fold(0usize, |a, &x| a.saturating_add(usize::from(x)));
        let listed = total < limit
            && match (self.psns.get_mut(pos..=total), self.n.get_mut(c)) {
                (Some(run), Some(nc)) => {
                    // psn in front, the rest one to the right (the last
                    // slot, free, takes the group's last): no panic path,
                    // unlike `rotate_right`.
                    let mut carry = psn;
                    for x in run.iter_mut() {
                        core::mem::swap(x, &mut carry);
                    }
                    *nc = nc.saturating_add(1);
                    true
                }
                _ => false,
            };
        self.omitted |= !listed;
        listed
    }

    /// Holds a downstream entry's fields and as many PSNs as fit; returns
    /// how many PSNs were left out.
    fn hold(&mut self, e: &HopEntry<'_>) -> u64 {
        let start = usize::from(self.n_held_psns);
        let room = HELD_PSNS.saturating_sub(start).min(u8::MAX as usize);
        let mut n = 0usize;
        for (dst, p) in self
            .held_psns
            .iter_mut()
            .skip(start)
            .take(room)
            .zip(e.dropped.iter())
        {
            *dst = p;
            n = n.saturating_add(1);
        }
        let total = e.dropped.len();
        let Some(h) = self.held.get_mut(usize::from(self.n_held)) else {
            return total as u64;
        };
        *h = Held {
            node_id: e.node_id,
            period: e.period,
            // A Lost Count below its own list is made consistent.
            lost: e.lost_count.max(u32::try_from(total).unwrap_or(u32::MAX)),
            qdc_us: e.queue_delay_change_us,
            cause: e.cause,
            start: start as u16,
            n: n as u16,
        };
        self.n_held = self.n_held.saturating_add(1);
        self.n_held_psns = start.saturating_add(n) as u16;
        total.saturating_sub(n) as u64
    }
}

impl Default for Slot {
    fn default() -> Slot {
        Slot::EMPTY
    }
}

/// Cause index of an own drop. Ruling: causes beyond the registry's 0-2
/// are reported as 0 (unknown); the kernel never produces them.
fn cause_index(c: LossCause) -> usize {
    match c {
        LossCause::QueueOverflow => 1,
        LossCause::TransmissionError => 2,
        LossCause::Unknown | LossCause::Other(_) => 0,
    }
}

/// The reporter's aggregation table, over slot storage `S` the caller
/// lends: a borrowed slice (`&mut [Slot]`, `&mut [Slot; N]`) or an owned
/// buffer (the kernel's, allocated when reporting is turned on, which the
/// table owns so that both can live in one object).
pub struct Aggregator<S> {
    slots: S,
    params: Params,
    counters: Counters,
}

impl<S: AsRef<[Slot]> + AsMut<[Slot]>> Aggregator<S> {
    /// A table over `slots` (all cleared); one slot per flow.
    pub fn new(mut slots: S, params: Params) -> Aggregator<S> {
        for s in slots.as_mut().iter_mut() {
            s.state = State::Free;
        }
        Aggregator {
            slots,
            params: params.sane(),
            counters: Counters::default(),
        }
    }

    /// The settings in force.
    pub const fn params(&self) -> &Params {
        &self.params
    }

    /// Changes the settings; pending reports keep their due times.
    pub fn set_params(&mut self, p: Params) {
        self.params = p.sane();
    }

    /// The counters.
    pub const fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Slots with a report pending.
    pub fn pending(&self) -> usize {
        self.slots
            .as_ref()
            .iter()
            .filter(|s| s.state == State::Pending)
            .fold(0, |n: usize, _| n.wrapping_add(1))
    }

    /// The earliest due time of a pending report.
    pub fn next_deadline(&self) -> Option<Nanos> {
        self.slots
            .as_ref()
            .iter()
            .filter(|s| s.state == State::Pending)
            .map(|s| s.due)
            .min()
    }

    /// The flow's slot, or a reusable one claimed for it.
    fn slot_for(&mut self, now: Nanos, addrs: &FlowAddrs, dest_qp: u32) -> Option<&mut Slot> {
        let gap = self.params.flow_gap;
        let mut spare = None;
        let mut found = None;
        for (i, s) in self.slots.as_ref().iter().enumerate() {
            if s.is(addrs, dest_qp) {
                found = Some(i);
                break;
            }
            if spare.is_none() && s.reusable(now, gap) {
                spare = Some(i);
            }
        }
        let claim = found.is_none();
        let s = self.slots.as_mut().get_mut(found.or(spare)?)?;
        if claim {
            s.state = State::Idle;
            s.addrs = *addrs;
            s.dest_qp = dest_qp;
            s.last_sent = None;
        }
        Some(s)
    }

    /// Records a drop of `d` for `cause`. Returns the due time when this
    /// drop starts a report (arm the timer for it); `None` if one was
    /// already pending, or the drop is not recorded (a non-source packet,
    /// or the table full: a full table evicts neither a pending report nor
    /// a flow still within its gap).
    pub fn on_drop(&mut self, now: Nanos, d: &Dropped, cause: LossCause) -> Option<Nanos> {
        if !d.is_source {
            self.counters.non_source = self.counters.non_source.wrapping_add(1);
            return None;
        }
        let p = self.params;
        let Some(s) = self.slot_for(now, &d.addrs, d.dest_qp) else {
            self.counters.slots_full = self.counters.slots_full.wrapping_add(1);
            return None;
        };
        let mut armed = None;
        let mut deferred = false;
        if s.state != State::Pending {
            let (due, by_gap) = s.start(now, &p);
            armed = Some(due);
            deferred = by_gap;
        }
        let listed = s.record(cause_index(cause), d.psn, p.psn_limit);
        self.counters.flow_deferred = self
            .counters
            .flow_deferred
            .wrapping_add(u64::from(deferred));
        self.counters.psns_omitted = self.counters.psns_omitted.wrapping_add(u64::from(!listed));
        armed
    }

    /// A downstream PATH_REPORT on its way through this node: merged into
    /// this node's pending report about the same flow if that is Method 3
    /// and due within one aggregation interval, else to be forwarded.
    /// Entries beyond 16 in all are dropped and counted.
    pub fn on_downstream(&mut self, now: Nanos, r: &PathReport<'_>) -> Merge {
        let horizon = now.saturating_add(self.params.interval);
        let qp = r.flow_label & 0xff_ffff;
        let slot = self.slots.as_mut().iter_mut().find(|s| {
            s.state == State::Pending && s.due <= horizon && s.dest_qp == qp && s.addrs == r.addrs
        });
        let Some(s) = slot.filter(|_| r.method == Method::NodeLocalDrop) else {
            self.counters.forwarded = self.counters.forwarded.wrapping_add(1);
            return Merge::Forward;
        };
        let c = &mut self.counters;
        for e in r.hops.iter() {
            if s.own_entries().saturating_add(usize::from(s.n_held)) >= MAX_HOP_ENTRIES {
                c.entries_over = c.entries_over.wrapping_add(1);
                c.psns_omitted = c.psns_omitted.wrapping_add(e.dropped.len() as u64);
                s.omitted |= !e.dropped.is_empty();
                continue;
            }
            let left_out = s.hold(&e);
            c.psns_omitted = c.psns_omitted.wrapping_add(left_out);
            s.omitted |= left_out > 0;
        }
        s.omitted |= r.truncated;
        c.merged = c.merged.wrapping_add(1);
        Merge::Held(s.due)
    }

    /// [`Aggregator::on_downstream`] on the octets of a UDP payload to the
    /// CREM port; anything that is no valid PATH_REPORT is forwarded.
    pub fn on_downstream_bytes(&mut self, now: Nanos, bytes: &[u8]) -> Merge {
        match PathReport::decode(bytes) {
            Ok(r) => self.on_downstream(now, &r),
            Err(_) => {
                self.counters.forwarded = self.counters.forwarded.wrapping_add(1);
                Merge::Forward
            }
        }
    }

    /// Calls `f` with the flow of every report due at `now`.
    pub fn due(&self, now: Nanos, mut f: impl FnMut(&FlowAddrs, u32)) {
        for s in self.slots.as_ref().iter() {
            if s.state == State::Pending && s.due <= now {
                f(&s.addrs, s.dest_qp);
            }
        }
    }

    /// Emits the reports due at `now` as `budget` says (per flow: its
    /// budget, the path MTU toward its CSF less the IP and UDP headers;
    /// or decline it; or keep it for later), each encoded into `out` cut
    /// to its budget and passed to `emit`. Returns the next due time (a
    /// report kept for later is due at once).
    pub fn poll(
        &mut self,
        now: Nanos,
        out: &mut [u8],
        mut budget: impl FnMut(&FlowAddrs, u32) -> Budget,
        mut emit: impl FnMut(&Emit<'_>),
    ) -> Option<Nanos> {
        let p = self.params;
        let mut next: Option<Nanos> = None;
        for s in self.slots.as_mut().iter_mut() {
            if s.state != State::Pending {
                continue;
            }
            if s.due > now {
                next = Some(next.map_or(s.due, |n| n.min(s.due)));
                continue;
            }
            // A declined report is done all the same: its drops are
            // history by the next one.
            let room = match budget(&s.addrs, s.dest_qp) {
                Budget::Send(room) => Some(room),
                Budget::Decline => None,
                Budget::Later => {
                    next = Some(next.map_or(s.due, |n| n.min(s.due)));
                    continue;
                }
            };
            if let Some(room) = room {
                let buf = out.get_mut(..room.min(out.len())).unwrap_or(&mut []);
                let c = &mut self.counters;
                match encode::report(s, &p, buf, c).and_then(|n| buf.get(..n)) {
                    Some(bytes) => {
                        emit(&Emit {
                            addrs: s.addrs,
                            dest_qp: s.dest_qp,
                            bytes,
                        });
                        c.reports_emitted = c.reports_emitted.wrapping_add(1);
                    }
                    None => c.too_small = c.too_small.wrapping_add(1),
                }
            }
            s.state = State::Idle;
            s.last_sent = Some(now);
        }
        next
    }
}
