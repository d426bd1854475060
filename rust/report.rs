// SPDX-License-Identifier: GPL-2.0
//! The Path Reporter (the draft's "On-Path Path Reports", Method 3:
//! node-local drop accounting): a netns with `report` on learns which
//! RoCEv2 source packets it dropped itself and sends PATH_REPORTs about
//! them to the CSF that protects each flow's source.
//!
//! How it learns them: the kernel's drop tracepoint (`skb:kfree_skb`),
//! which every skb drop passes with a reason, whatever dropped it (any
//! qdisc, the CPU backlog, a driver ring), and which a node that drops
//! nothing never calls. `helpers.c` holds the probe (the tracepoint's
//! prototype and the reasons' names are C's and change between kernel
//! versions): it maps the reason to a cause, skips this module's own drops,
//! and calls [`crem_report_drop`] with the [`Reporter`] it was registered
//! with, one registration per reporting netns. The probe runs in the
//! dropper's context with preemption off: it records the drop in
//! crem-core's `report::Aggregator` under a BH lock and arms a timer; the
//! timer (softirq) encodes the due reports and sends them after the lock is
//! released, so nothing is sent from, or waits in, anyone's drop path.
//!
//! Where a report goes: the CSF configured as the peer for the flow's
//! source prefix, or else the flow's source address, at the CREM port; cut
//! to the path MTU toward it; at most `report-port-rate` per second per
//! egress interface (the draft's "per port"), and one per flow per
//! `report-flow-gap-us` (crem-core).
//!
//! Downstream reports: a PATH_REPORT from another of the domain's
//! reporters that passes this node (FORWARD) about a flow whose own report
//! is due within an interval has its hop entries merged into that report
//! ([`Reporter::downstream`]), which goes in its place; others go on.
//!
//! Lifetime: made and registered by config-set (`report` on), unregistered
//! and freed when it is turned off or the netns goes ([`Reporting`]); the
//! datapath finds it under RCU, and a grace period passes between its
//! unpublication and its end; the unregistration waits until no probe runs,
//! the timer's cancel until no callback does, before the memory goes.

use crate::addr::{Family, NetAddr};
use crate::crem_core::ctl::{Config, REPORT_PORT_BURST};
use crate::crem_core::nl::stat;
use crate::crem_core::report::TokenBucket;
use crate::crem_core::report::{
    self, parse_drop, Aggregator, Budget, Counters, Dropped, Merge, Params, Slot,
};
use crate::crem_core::wire::{FlowAddrs, LossCause};
use crate::dispatch;
use crate::ffi;
use crate::flow;
use crate::kernel_ext::bh::{self, new_bh_lock, Bh, BhLock};
use crate::kernel_ext::hrtimer::HrTimer;
use crate::kernel_ext::in6::In6Addr;
use crate::kernel_ext::rcu;
use crate::kernel_ext::skb::Lent;
use crate::netns::NetState;
use crate::socket::{Dest, Outbox};
use core::cell::Cell;
use core::ffi::{c_int, c_void};
use core::mem::offset_of;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::bindings;
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::Mutex;

/// Flows a reporter tracks at once (a slot each, about 1.8 KiB: 115 KiB in
/// all, charged to the configuring task's memory cgroup). A flow's slot is
/// busy from its first drop until a flow gap after its report; a drop of a
/// flow that finds none free is counted (`report-slots-full`), not kept.
const SLOTS: usize = 64;
/// The encoding buffer: larger than any report a slot can make (a header,
/// 16 hop entries, 64 own and 256 held PSN words: about 1.7 KiB); the path
/// MTU toward the CSF cuts it further.
const OUT: usize = 2048;
/// Egress interfaces with a rate limit of their own; the least recently
/// used one is reused for a new interface once it has been idle for
/// [`PORT_IDLE`].
const PORTS: usize = 8;
/// Nanoseconds a port's entry must be unused before another takes it.
const PORT_IDLE: u64 = 1_000_000_000;
/// Octets of a dropped packet read: IPv4 with options (60) or IPv6 (40),
/// UDP (8), BTH (12).
const HDRS: usize = 80;
/// UDP's header, which a report's budget leaves room for.
const UDP_HLEN: usize = 8;

/// The reporter's settings, from the netns's configuration.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settings {
    pub(crate) params: Params,
    /// Reports per second per egress interface.
    pub(crate) port_rate: u32,
}

/// An egress interface's rate limit.
#[derive(Clone, Copy)]
struct Port {
    ifindex: i32,
    used: u64,
    bucket: TokenBucket,
}

/// The per-port rate limits ("Reporters MUST rate-limit PATH_REPORT per
/// flow and per port": the flow's is crem-core's flow gap).
struct Ports {
    e: [Port; PORTS],
    rate: u32,
}

impl Ports {
    fn new(rate: u32) -> Ports {
        Ports {
            e: [Port {
                ifindex: 0,
                used: 0,
                bucket: TokenBucket::new(rate, REPORT_PORT_BURST),
            }; PORTS],
            rate,
        }
    }

    fn set(&mut self, rate: u32) {
        if self.rate != rate {
            self.rate = rate;
            for p in self.e.iter_mut() {
                p.bucket.set(rate, REPORT_PORT_BURST);
            }
        }
    }

    /// Whether the limit of interface `ifindex` allows a report now (and
    /// takes it).
    fn allows(&mut self, ifindex: i32, now: u64) -> bool {
        let rate = self.rate;
        let mut lru: Option<&mut Port> = None;
        for p in self.e.iter_mut() {
            if p.ifindex == ifindex {
                p.used = now;
                return p.bucket.take(now);
            }
            if lru.as_ref().is_none_or(|l| p.used < l.used) {
                lru = Some(p);
            }
        }
        // A port idle for a second has a full bucket anyway; a busier
        // one keeps its entry, and a ninth busy port waits (refused).
        let Some(p) = lru.filter(|l| now.saturating_sub(l.used) >= PORT_IDLE || l.ifindex == 0)
        else {
            return false;
        };
        *p = Port {
            ifindex,
            used: now,
            bucket: TokenBucket::new(rate, REPORT_PORT_BURST),
        };
        p.bucket.take(now)
    }
}

/// Due reports one timer round plans (routes, port limits) for; more wait
/// for the next round, at once.
const ROUND: usize = 16;

/// What the timer does with one due report.
#[derive(Clone, Copy)]
struct Plan {
    flow: Option<(FlowAddrs, u32)>,
    budget: Budget,
    /// Fed to this netns's own sender flow.
    local: bool,
    to: Dest,
}

impl Plan {
    /// Declined unless planned otherwise.
    const NONE: Plan = Plan {
        flow: None,
        budget: Budget::Decline,
        local: false,
        to: Dest::NONE,
    };
}

/// The slots, owned by the aggregator.
struct Slots(KVVec<Slot>);

impl AsRef<[Slot]> for Slots {
    fn as_ref(&self) -> &[Slot] {
        self.0.as_slice()
    }
}

impl AsMut<[Slot]> for Slots {
    fn as_mut(&mut self) -> &mut [Slot] {
        self.0.as_mut_slice()
    }
}

/// What the probe and the timer share, under the reporter's lock: a leaf
/// lock (nothing is taken inside it but the timer's base lock and the
/// allocator's: route lookups, which may take a neighbour's lock under
/// which the kernel drops packets, run outside it), never taken under a
/// flow's lock (a flow's own drops are this module's, which the probe
/// skips).
struct Inner {
    agg: Aggregator<Slots>,
    /// When the timer is set to expire (0: idle).
    armed: u64,
    /// The aggregator's counters already added to the netns's.
    seen: Counters,
    out: KVec<u8>,
}

impl Inner {
    /// Adds what the aggregator counted since last time to the netns's
    /// counters.
    fn sync(&mut self, st: &NetState) {
        let (c, s) = (*self.agg.counters(), self.seen);
        for (i, now, was) in [
            (stat::REPORT_NON_SOURCE, c.non_source, s.non_source),
            (stat::REPORT_SLOTS_FULL, c.slots_full, s.slots_full),
            (stat::REPORT_PSNS_OMITTED, c.psns_omitted, s.psns_omitted),
            (
                stat::REPORTS_FLOW_DEFERRED,
                c.flow_deferred,
                s.flow_deferred,
            ),
            (stat::REPORTS_MERGED, c.merged, s.merged),
            (stat::REPORTS_FORWARDED, c.forwarded, s.forwarded),
            (stat::REPORT_ENTRIES_OVER, c.entries_over, s.entries_over),
            (stat::REPORT_TOO_SMALL, c.too_small, s.too_small),
        ] {
            if now != was {
                st.count_by(i, now.wrapping_sub(was));
            }
        }
        self.seen = c;
    }
}

/// A netns's reporter (see the module docs).
#[pin_data(PinnedDrop)]
pub(crate) struct Reporter {
    /// Cancelled (its drop waits for a running callback) after the probe
    /// is unregistered (`drop`) and before the rest goes: the first field.
    #[pin]
    timer: HrTimer,
    #[pin]
    inner: BhLock<Inner>,
    /// The timer's alone but for a change of rate: a leaf lock, taken
    /// without `inner`.
    #[pin]
    ports: BhLock<Ports>,
    /// The netns's state, which owns this reporter ([`Reporting`]) and
    /// outlives it.
    st: NonNull<NetState>,
    net: *mut bindings::net,
    /// The probe is registered with this reporter's address.
    registered: bool,
}

// SAFETY: the state it points to is shared (`NetState` is `Sync`) and
// outlives it; the netns pointer is only compared; the rest is behind its
// lock or the kernel's timer serialisation.
unsafe impl Send for Reporter {}
// SAFETY: as above: every shared access goes through the lock.
unsafe impl Sync for Reporter {}

impl Reporter {
    /// A reporter of `st` with `s`, its probe not yet registered. Process
    /// context; its memory is charged to the caller's memory cgroup.
    fn new(st: &NetState, s: Settings) -> Result<Pin<KBox<Reporter>>> {
        let slots = KVVec::from_elem(Slot::EMPTY, SLOTS, GFP_KERNEL_ACCOUNT)?;
        let inner = Inner {
            agg: Aggregator::new(Slots(slots), s.params),
            armed: 0,
            seen: Counters::default(),
            out: KVec::from_elem(0u8, OUT, GFP_KERNEL_ACCOUNT)?,
        };
        let (owner, net) = (NonNull::from(st), st.net().as_ptr());
        KBox::pin_init(
            pin_init!(Reporter {
                // SAFETY: `report_timer` finds the reporter from this, its
                // `timer` field.
                timer <- unsafe { HrTimer::new(report_timer) },
                inner <- new_bh_lock!(inner, "crem_reporter"),
                ports <- new_bh_lock!(Ports::new(s.port_rate), "crem_reporter_ports"),
                st: owner,
                net,
                registered: false,
            }),
            GFP_KERNEL_ACCOUNT,
        )
    }

    /// Registers the probe with this reporter: from now on every drop in
    /// the system calls it, and it keeps those of its netns. Process
    /// context (the registration sleeps).
    fn register(self: Pin<&mut Self>) -> Result {
        // SAFETY: the reporter is pinned, and its drop unregisters the
        // probe and waits for running ones before its memory goes.
        let this = unsafe { self.get_unchecked_mut() };
        // Set before any probe can hold a reference to it; cleared if the
        // registration fails (then none ever did).
        this.registered = true;
        let data = core::ptr::from_mut::<Reporter>(this).cast::<c_void>();
        // SAFETY: `data` is a reporter, which `crem_report_drop` expects.
        let r = kernel::error::to_result(unsafe { ffi::crem_h_drop_probe_register(data) });
        this.registered = r.is_ok();
        r
    }

    fn state(&self) -> &NetState {
        // SAFETY: the state owns this reporter and outlives it (`Reporting`).
        unsafe { self.st.as_ref() }
    }

    /// New settings: pending reports keep their due times.
    fn update(&self, s: Settings) {
        let bh = bh::disable();
        self.inner.lock(&bh).agg.set_params(s.params);
        self.ports.lock(&bh).set(s.port_rate);
    }

    /// A drop of `d` for `cause` (BH off).
    fn record(&self, bh: &Bh, d: &Dropped, cause: LossCause) {
        let st = self.state();
        // Own drops of sources, by cause (others: report-non-source).
        if d.is_source {
            st.count(match cause {
                LossCause::QueueOverflow => stat::REPORT_DROPS_OVERFLOW,
                LossCause::TransmissionError => stat::REPORT_DROPS_TXERR,
                _ => stat::REPORT_DROPS_UNKNOWN,
            });
        }
        let now = flow::now();
        let mut g = self.inner.lock(bh);
        if let Some(due) = g.agg.on_drop(now, d, cause) {
            if g.armed == 0 || due < g.armed {
                g.armed = due;
                self.timer.start_abs(due);
            }
        }
        g.sync(st);
    }

    /// A PATH_REPORT `msg` from `from`, on its way through this node
    /// (FORWARD, BH off; `crate::intercept`) toward a CSF: `true` if its
    /// hop entries were merged into this node's own report of the same
    /// flow, due within an interval (the draft: up to 16 entries), which
    /// goes in its place; `false` if it goes on unchanged. Only reports from
    /// the domain's reporters (this node's `reporter` list, as a CSF's) are
    /// merged: a merged entry travels under this node's address, which the
    /// CSF trusts.
    pub(crate) fn downstream(&self, bh: &Bh, from: &NetAddr, msg: &[u8]) -> bool {
        let st = self.state();
        if !st.peers.get(bh).is_reporter(from) {
            st.count(stat::REPORTS_FORWARDED);
            return false;
        }
        let now = flow::now();
        let mut g = self.inner.lock(bh);
        let held = match g.agg.on_downstream_bytes(now, msg) {
            Merge::Held(due) => {
                if g.armed == 0 || due < g.armed {
                    g.armed = due;
                    self.timer.start_abs(due);
                }
                true
            }
            Merge::Forward => false,
        };
        g.sync(st);
        held
    }

    /// The timer: sends the reports that are due (softirq).
    fn expired(&self, bh: &Bh) {
        let st = self.state();
        let now = flow::now();
        // SAFETY: initialised below before use, and not moved after.
        let mut q = unsafe { Outbox::uninit() };
        q.init();
        // Reports about flows this netns's own CSF sends (a gateway that
        // reports the drops of its own uplink): fed to them, not sent.
        // SAFETY: as `q`.
        let mut own = unsafe { Outbox::uninit() };
        own.init();
        // The flows due now (at most a round's), under the lock.
        let mut plan = [Plan::NONE; ROUND];
        let mut n = 0usize;
        self.inner.lock(bh).agg.due(now, |a, qp| {
            if let Some(p) = plan.get_mut(n) {
                p.flow = Some((*a, qp));
                n = n.wrapping_add(1);
            }
        });
        // Their destinations, routes and port limits, with the reporter's
        // lock released: a route lookup may take a neighbour's lock, under
        // which the kernel drops packets (the probe, which takes ours).
        let (mut limited, mut unroutable) = (0u64, 0u64);
        let cfg = st.peers.get(bh);
        for p in plan.iter_mut() {
            let Some((a, qp)) = p.flow else {
                break;
            };
            if dispatch::serves(st, a, qp, bh) {
                // Nothing goes on the wire: no route, MTU or port.
                (p.budget, p.local) = (Budget::Send(OUT), true);
                continue;
            }
            let Some((src, _)) = NetAddr::of_flow(a) else {
                continue;
            };
            let csf = cfg.peer_for(&src).unwrap_or(src);
            let Some((ifindex, mtu)) = route(st, &csf) else {
                unroutable = unroutable.wrapping_add(1);
                continue;
            };
            if !self.ports.lock(bh).allows(ifindex, now) {
                limited = limited.wrapping_add(1);
                continue;
            }
            let hdrs = match csf.family() {
                Family::V4 => 20 + UDP_HLEN,
                Family::V6 => 40 + UDP_HLEN,
            };
            p.budget = Budget::Send(usize::try_from(mtu).unwrap_or(0).saturating_sub(hdrs));
            p.to = Dest {
                addr: csf,
                port: 0,
                tos: 0,
            };
        }
        {
            let mut g = self.inner.lock(bh);
            let Inner {
                agg, armed, out, ..
            } = &mut *g;
            // The plan of the flow `budget` was last asked about, for
            // `emit` (poll calls them in turn, one flow at a time); a flow
            // due since the round began waits for the next (at once).
            let cur: Cell<Option<Plan>> = Cell::new(None);
            let budget = |a: &FlowAddrs, qp: u32| {
                let p = plan.iter().find(|p| p.flow == Some((*a, qp))).copied();
                cur.set(p);
                p.map_or(Budget::Later, |p| p.budget)
            };
            let next = agg.poll(now, out.as_mut_slice(), budget, |e| {
                let queued = match cur.get() {
                    Some(p) if p.local => own.queue(st, Dest::NONE, e.bytes),
                    Some(p) => q.queue(st, p.to, e.bytes),
                    None => false,
                };
                if !queued {
                    st.count(stat::REPORT_SEND_FAILURES);
                }
            });
            *armed = next.unwrap_or(0);
            if let Some(t) = next {
                self.timer.start_abs(t);
            }
            g.sync(st);
        }
        st.count_by(stat::REPORTS_PORT_LIMITED, limited);
        st.count_by(stat::REPORT_SEND_FAILURES, unroutable);
        // Outside the reporter's lock: a flow's lock is taken here.
        while let Some(m) = own.pop() {
            st.count(match dispatch::feed_own_report(st, m.head(), bh) {
                true => stat::REPORTS_LOCAL,
                // Its flow went meanwhile.
                false => stat::REPORT_SEND_FAILURES,
            });
        }
        let (sent, failed) = st.socket.flush(st, bh, &mut q);
        st.count_by(stat::REPORTS_SENT, sent);
        st.count_by(stat::REPORT_SEND_FAILURES, failed);
    }
}

#[pinned_drop]
impl PinnedDrop for Reporter {
    fn drop(self: Pin<&mut Self>) {
        if self.registered {
            // SAFETY: registered with this address (`register`); this
            // unregisters it and waits until no probe runs (process
            // context: the reporter goes in config-set or at netns exit).
            unsafe {
                ffi::crem_h_drop_probe_unregister(
                    core::ptr::from_ref::<Reporter>(&self).cast_mut().cast(),
                )
            };
        }
        // Then the timer's drop cancels it (the probe, which arms it, is
        // gone), and the rest goes.
    }
}

/// The route to `to`: its output interface and path MTU.
fn route(st: &NetState, to: &NetAddr) -> Option<(i32, u32)> {
    let mut ifindex: c_int = 0;
    let net = st.net().as_ptr();
    let mtu = match to.be32() {
        // SAFETY: a live netns (ours); `ifindex` is written before return.
        Some(a) => unsafe { ffi::crem_h_route_mtu4(net, a, &mut ifindex) },
        // SAFETY: as above; the address is 16 octets on our stack.
        None => unsafe {
            ffi::crem_h_route_mtu6(net, In6Addr(*to.octets()).as_ptr(), &mut ifindex)
        },
    };
    (mtu > 0).then_some((ifindex, mtu))
}

/// The reporter's timer expired.
unsafe extern "C" fn report_timer(t: *mut bindings::hrtimer) -> bindings::hrtimer_restart {
    // SAFETY: only `Reporter::new` makes timers with this callback, so `t`
    // is the `timer` field of a `Reporter`, which lives until the timer is
    // cancelled (its drop), which waits for this callback.
    let r = unsafe {
        &*t.cast::<u8>()
            .sub(offset_of!(Reporter, timer))
            .cast::<Reporter>()
    };
    // SAFETY: soft hrtimers expire in softirq: BH is off throughout.
    let bh = unsafe { Bh::assume() };
    r.expired(&bh);
    bindings::hrtimer_restart_HRTIMER_NORESTART
}

/// Whether `h` (from an IP header on) is UDP to the RoCEv2 port: a packet
/// `parse_drop` could not read is then counted as such.
fn to_rocev2(h: &[u8]) -> bool {
    let first = h.first().copied().unwrap_or(0);
    let (l4, proto) = match first >> 4 {
        4 => (usize::from(first & 0x0f) << 2, h.get(9)),
        6 => (40, h.get(6)),
        _ => return false,
    };
    let port: Option<[u8; 2]> = h
        .get(l4.wrapping_add(2)..l4.wrapping_add(4))
        .and_then(|p| p.try_into().ok());
    proto == Some(&17) && port.map(u16::from_be_bytes) == Some(4791)
}

/// The PATH_REPORT cause of a drop `reason` (the probe's first question,
/// before it reads anything of the skb): 1 a queue overflowed (in 6.12
/// `QDISC_DROP` is every qdisc's enqueue drop: tail drop, RED, tbf,
/// netem's emulated loss too), 2 the packet arrived damaged or the device
/// could not carry it, 0 lost for another reason this node knows; -1 not
/// reported (policy, local delivery, a socket's queue purged, anything no
/// queue or link caused).
#[no_mangle]
pub(crate) extern "C" fn crem_drop_cause(reason: bindings::skb_drop_reason) -> c_int {
    use bindings::*;
    #[allow(non_upper_case_globals)]
    match reason {
        skb_drop_reason_SKB_DROP_REASON_QDISC_DROP
        | skb_drop_reason_SKB_DROP_REASON_FQ_BAND_LIMIT
        | skb_drop_reason_SKB_DROP_REASON_FQ_FLOW_LIMIT
        | skb_drop_reason_SKB_DROP_REASON_CPU_BACKLOG
        | skb_drop_reason_SKB_DROP_REASON_FULL_RING => 1,
        skb_drop_reason_SKB_DROP_REASON_IP_CSUM
        | skb_drop_reason_SKB_DROP_REASON_IP_INHDR
        | skb_drop_reason_SKB_DROP_REASON_UDP_CSUM
        | skb_drop_reason_SKB_DROP_REASON_SKB_CSUM
        | skb_drop_reason_SKB_DROP_REASON_PKT_TOO_SMALL
        | skb_drop_reason_SKB_DROP_REASON_HDR_TRUNC
        | skb_drop_reason_SKB_DROP_REASON_DEV_HDR
        | skb_drop_reason_SKB_DROP_REASON_DEV_READY => 2,
        skb_drop_reason_SKB_DROP_REASON_NOMEM
        | skb_drop_reason_SKB_DROP_REASON_NEIGH_CREATEFAIL
        | skb_drop_reason_SKB_DROP_REASON_NEIGH_FAILED
        | skb_drop_reason_SKB_DROP_REASON_NEIGH_QUEUEFULL
        | skb_drop_reason_SKB_DROP_REASON_NEIGH_DEAD
        | skb_drop_reason_SKB_DROP_REASON_IP_OUTNOROUTES
        | skb_drop_reason_SKB_DROP_REASON_IP_INNOROUTES
        | skb_drop_reason_SKB_DROP_REASON_PKT_TOO_BIG
        | skb_drop_reason_SKB_DROP_REASON_FQ_HORIZON_LIMIT
        | skb_drop_reason_SKB_DROP_REASON_SKB_GSO_SEG
        | skb_drop_reason_SKB_DROP_REASON_TC_EGRESS
        | skb_drop_reason_SKB_DROP_REASON_TC_INGRESS => 0,
        _ => -1,
    }
}

/// The IP header of a dropped packet of IP version `version`, read into
/// `buf` (with what follows it, up to its length): at its network offset,
/// or at its data where that offset is not one (a header never set, or
/// pulled past: then the data may start anywhere, and the version nibble
/// decides).
fn ip_header<'b>(
    pkt: &'b Lent<'_>,
    version: u8,
    buf: &'b mut [u8; HDRS],
) -> Option<(i32, &'b [u8])> {
    let len = i64::from(pkt.len());
    let at = |off: i32| {
        let n = usize::try_from(len.wrapping_sub(i64::from(off))).unwrap_or(0);
        n.min(HDRS)
    };
    let noff = pkt.network_offset();
    let mut first = [0u8; 1];
    let good = |off: i32, first: &mut [u8; 1]| {
        pkt.header(off, first)
            .and_then(|b| b.first().copied())
            .is_some_and(|b| b >> 4 == version)
    };
    let off = if good(noff, &mut first) {
        noff
    } else if noff != 0 && good(0, &mut first) {
        0
    } else {
        return None;
    };
    let n = at(off);
    Some((off, pkt.header(off, buf.get_mut(..n)?)?))
}

/// Where the transport header is in `h`, an IPv4 or IPv6 header.
fn l4_offset(h: &[u8]) -> usize {
    let first = h.first().copied().unwrap_or(0);
    match first >> 4 {
        4 => usize::from(first & 0x0f) << 2,
        _ => 40,
    }
}

/// GSO segments of one aggregate read at most (a UDP GRO aggregate holds up
/// to 64).
const MAX_SEGS: u32 = 64;

/// The drop probe's Rust half (`helpers.c`'s `crem_drop_probe`): `skb`
/// was dropped in `net` for a reason of `cause` (0 unknown, 1 queue
/// overflow, 2 transmission error; -1: a reported reason, but with
/// interrupts off here, so the drop is counted, not recorded).
///
/// # Safety
///
/// `data` is a registered [`Reporter`]; `skb` is the live packet being
/// dropped, which no one changes during the call; preemption is off.
#[no_mangle]
pub(crate) unsafe extern "C" fn crem_report_drop(
    data: *mut c_void,
    net: *mut bindings::net,
    skb: *mut bindings::sk_buff,
    cause: c_int,
) {
    // SAFETY: the contract: a reporter, alive while registered.
    let r = unsafe { &*data.cast::<Reporter>() };
    // Every reporting netns's probe sees every drop: the others' go first.
    if r.net != net {
        return;
    }
    // SAFETY: the contract: the packet is live and ours to read meanwhile.
    let Some(pkt) = (unsafe { Lent::new(skb) }) else {
        return;
    };
    let version = match pkt.protocol() {
        0x0800 => 4,
        0x86dd => 6,
        _ => return,
    };
    let mut buf = [0u8; HDRS];
    let Some((off, h)) = ip_header(&pkt, version, &mut buf) else {
        return;
    };
    let st = r.state();
    let Some(d) = parse_drop(h) else {
        if to_rocev2(h) {
            st.count(stat::REPORT_UNPARSED);
        }
        return;
    };
    let cause = match cause {
        1 => LossCause::QueueOverflow,
        2 => LossCause::TransmissionError,
        0 => LossCause::Unknown,
        _ => {
            st.count(stat::REPORT_DROPS_IGNORED);
            return;
        }
    };
    // In process context BH may be on (a local sender's drop); the lock
    // wants it off. (Interrupts are on: the probe checked.)
    let bh = bh::disable();
    r.record(&bh, &d, cause);
    // The headers, as a copy (`h` may be the packet's own octets).
    let mut one = [0u8; HDRS];
    if let Some(dst) = one.get_mut(..h.len()) {
        dst.copy_from_slice(h);
    }
    let bth_at = l4_offset(h).wrapping_add(8);
    // A GSO aggregate (UDP GRO on a forwarding path) drops all its
    // packets: each segment's BTH follows the one before by the segment
    // size, behind the one IP and UDP header.
    let Some((segs, size)) = pkt.gso_layout() else {
        return;
    };
    for i in 1..segs.min(MAX_SEGS) {
        let seg_off = i64::from(i).wrapping_mul(i64::from(size));
        let at = i64::from(off)
            .wrapping_add(bth_at as i64)
            .wrapping_add(seg_off);
        let mut bth = [0u8; 12];
        let read = i32::try_from(at)
            .ok()
            .and_then(|at| pkt.header(at, &mut bth))
            .map(|b| b.len());
        let Some(dst) = one.get_mut(bth_at..bth_at.wrapping_add(12)) else {
            return;
        };
        if read != Some(12) {
            st.count(stat::REPORT_UNPARSED);
            return;
        }
        dst.copy_from_slice(&bth);
        if let Some(d) = one.get(..bth_at.wrapping_add(12)).and_then(parse_drop) {
            r.record(&bh, &d, cause);
        }
    }
    if segs > MAX_SEGS {
        st.count_by(
            stat::REPORT_UNPARSED,
            u64::from(segs.wrapping_sub(MAX_SEGS)),
        );
    }
}

/// A netns's reporter, if `report` is on: changed by config-set under the
/// netns's setter lock, and by its exit.
#[pin_data]
pub(crate) struct Reporting {
    #[pin]
    cur: Mutex<Option<Pin<KBox<Reporter>>>>,
    /// The reporter in `cur`, for the datapath (FORWARD: downstream reports
    /// to merge), which reads it under RCU: published once registered,
    /// cleared and a grace period waited for before it goes.
    live: AtomicPtr<Reporter>,
}

impl Reporting {
    pub(crate) fn new() -> impl PinInit<Self> {
        let cur = new_mutex!(None, "crem_reporting");
        // SAFETY: both fields are initialised in place at `slot`, pinned
        // there; the mutex's initialiser cannot fail. (Written out rather
        // than with `pin_init!`, whose type-checking closure leaves a dead
        // panic call in the object, which vm/panic-sites.py would count.)
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Self| {
                core::ptr::addr_of_mut!((*slot).live).write(AtomicPtr::new(ptr::null_mut()));
                cur.__pinned_init(core::ptr::addr_of_mut!((*slot).cur))
            })
        }
    }

    /// Reporting as `s` says (None: off), in process context: a reporter
    /// made and registered, given new settings, or unregistered and freed.
    pub(crate) fn apply(&self, st: &NetState, s: Option<Settings>) -> Result {
        let mut cur = self.cur.lock();
        match (s, cur.as_ref()) {
            (Some(s), Some(r)) => r.update(s),
            (Some(s), None) => {
                let mut r = Reporter::new(st, s)?;
                r.as_mut().register()?;
                let p = core::ptr::from_ref::<Reporter>(&*r).cast_mut();
                *cur = Some(r);
                // Pinned in its box: the address stays until it is freed.
                self.live.store(p, Ordering::Release);
            }
            (None, Some(_)) => {
                self.live.store(ptr::null_mut(), Ordering::Release);
                // SAFETY: process context (config-set, netns exit). After
                // it no datapath reader holds the reporter about to go.
                unsafe { bindings::synchronize_rcu() };
                *cur = None;
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// The reporter, if `report` is on, for the length of the caller's RCU
    /// read-side section (a BH-off region is one).
    pub(crate) fn live<'a>(&'a self, _rcu: &'a impl rcu::Reader) -> Option<&'a Reporter> {
        let p = self.live.load(Ordering::Acquire);
        // SAFETY: a published reporter is freed only after it is cleared
        // here and a grace period has passed (`apply`), and the caller is
        // in a read-side section, which that grace period waits for.
        unsafe { p.as_ref() }
    }
}

const _: () = assert!(report::SLOT_PSNS <= 255 && OUT >= 1800);

/// The reporter's settings in the configuration `c` of `st`'s netns; None
/// while `report` is off. Node ID 0 is "auto": the netns cookie's low 32
/// bits (unique on this host; an operator sets node-id where IDs must be
/// unique across the domain).
pub(crate) fn settings(c: &Config, st: &NetState) -> Option<Settings> {
    // SAFETY: our live netns.
    let cookie = unsafe { ffi::crem_h_net_cookie(st.net().as_ptr()) };
    c.report.then(|| Settings {
        params: c.report_params(cookie as u32),
        port_rate: c.report_port_rate,
    })
}
