// SPDX-License-Identifier: GPL-2.0
//! A protected flow: its identity and place in the netns's flow table
//! ([`Links`]: key, peer, Flow ID, HELLO nonce), its engine and packet
//! stores, the lock that guards them, its timer, its part in its removal,
//! and what it counts outside the engine; one pinned object, made here
//! ([`Spare`], for `create.rs` and the spare pool, `pool.rs`) and freed by
//! [`free`] (`removal.rs`). The netlink handlers (`crate::netlink`) reach
//! it through [`Flow::info`], [`Flow::pin`] and [`Flow::reset`], each of
//! which takes the lock it needs.
//!
//! Locking: the state is a [`BhLock`]; every entry point disables BH for
//! its section (a no-op nesting in softirq, the one thing that makes
//! process-context callers safe), so a softirq can never spin on a lock its
//! own CPU holds. The timer expires in softirq and takes the same lock. A
//! removed flow is marked dead under the lock ([`Flow::kill`]), after
//! which neither an entry point nor the timer touches its engine, and its
//! timer is cancelled outside the lock (cancelling waits for a running
//! callback, which takes the lock).

use crate::addr::{Family, NetAddr};
use crate::create::FlowRequest;
use crate::crem_core::engine::module_caps::FlowCaps;
use crate::crem_core::engine::Nanos;
use crate::crem_core::nl::flow_stat as fs;
use crate::crem_core::roce::RocePacket;
use crate::crem_core::wire;
use crate::engine::{CrfTake, Engine, EngineParams, PinRefused};
use crate::flow_info::{Counters, FlowInfo};
use crate::host::{FlowIds, FlowOps, Host, Outside};
use crate::inject::Template;
use crate::kernel_ext::bh::{self, new_bh_lock, Bh, BhLock};
use crate::kernel_ext::hrtimer::HrTimer;
use crate::kernel_ext::mem::FlowAlloc;
use crate::kernel_ext::rcu;
use crate::kernel_ext::skb::Lent;
use crate::netns::NetState;
use crate::removal::Mark;
use crate::store::{Current, Owner};
use crate::table::{FlowKey, FlowTable, InTable, Links};
use crate::trace;
use core::ffi::c_int;
use core::mem::offset_of;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use kernel::alloc::Box;
use kernel::bindings::{self, sk_buff_head};
use kernel::prelude::*;

/// A flow's memory: charged to its memory cgroup, failing there rather than
/// reclaiming hard or OOM-killing (`FlowAlloc`), as its engine's.
pub(crate) type FlowBox = Pin<Box<Flow, FlowAlloc>>;

/// The IPv4 Don't Fragment flag, of the template's `frag_off`.
const IP_DF: u16 = 0x4000;

/// TOS bits of ECN, ECT(0) and CE.
const ECN_MASK: u8 = 3;
const ECN_ECT0: u8 = 2;
const ECN_CE: u8 = 3;

/// A packet or datagram with IP TOS `tos` arrived CE-marked.
pub(crate) fn ce(tos: u8) -> bool {
    tos & ECN_MASK == ECN_CE
}

/// One protected flow (see the module docs).
#[pin_data]
pub(crate) struct Flow {
    /// The first field, so dropped first: cancelled (waiting for a running
    /// callback) before the state its callback uses goes.
    #[pin]
    timer: HrTimer,
    #[pin]
    state: BhLock<Locked>,
    ops: &'static FlowOps,
    /// Its identity and links, set up with its engine, before it is
    /// inserted (a spare has none until it is taken).
    links: Links,
    /// Its netns (none: a KUnit case's flow, in no table, sending
    /// nowhere), which outlives its flows.
    netns: Option<NonNull<NetState>>,
    /// The UDP port (network order) its messages go to: the one its peer's
    /// HELLO (receiver flow) or HELLO_ACK (sender flow) came from, as the
    /// draft says; 0, ours, until then.
    peer_port: AtomicU16,
    /// When it was set up (`ktime_get_ns`), for the collector's retries.
    born_ns: AtomicU64,
    /// Its part in its removal (`crate::removal`).
    removal: Mark,
}

// SAFETY: `links` returns the same field every time, and `from_links` maps
// it back to the `Flow` it is a field of.
unsafe impl InTable for Flow {
    fn links(&self) -> &Links {
        &self.links
    }

    unsafe fn from_links(l: &Links) -> &Self {
        // SAFETY: `l` is the `links` field of a live `Flow` (the caller's
        // contract).
        unsafe { &*kernel::container_of!(l, Flow, links) }
    }
}

/// A flow's state under its lock.
struct Locked {
    engine: Engine,
    out: Outside,
    /// Removed: no engine call and no timer any more.
    dead: bool,
    /// When the timer is armed to expire on the monotonic clock (no earlier
    /// than the engine's deadline then), `u64::MAX` when it is not.
    deadline: u64,
    /// When a packet or a message of the flow was last seen (the collector
    /// removes flows idle for long).
    last_ns: u64,
    /// The counters at the last flow-reset (reported as the difference).
    base: Counters,
}

/// The datapath's clock (`ktime_get_ns`), which every engine deadline uses.
pub(crate) fn now() -> Nanos {
    // SAFETY: `ktime_get` only reads the timekeeper.
    u64::try_from(unsafe { bindings::ktime_get() }).unwrap_or(0)
}

/// The expiry callback of every flow's timer.
unsafe extern "C" fn flow_timer(t: *mut bindings::hrtimer) -> bindings::hrtimer_restart {
    // SAFETY: only `Flow::new` makes timers with this callback, so `t` is
    // the `timer` field of a `Flow` (`HrTimer` is a transparent wrapper of
    // the hrtimer), and the flow lives until its timer is cancelled (its
    // first field's drop), which waits for this callback.
    let f = unsafe { &*t.cast::<u8>().sub(offset_of!(Flow, timer)).cast::<Flow>() };
    // SAFETY: soft hrtimers expire in softirq (HRTIMER_SOFTIRQ): BH is off
    // for the whole callback.
    let bh = unsafe { Bh::assume() };
    f.expired(&bh);
    bindings::hrtimer_restart_HRTIMER_NORESTART
}

impl Flow {
    /// A flow of side `csf` in `net`, whose state is `netns` (none: a
    /// KUnit case's flow, in no table, sending nowhere),
    /// with capacities `caps`, its engine not yet set up. Process context;
    /// charged to the active memory cgroup, its structures to the netns's
    /// budget.
    pub(crate) fn new(
        net: NonNull<bindings::net>,
        netns: Option<NonNull<NetState>>,
        csf: bool,
        caps: &FlowCaps,
        ops: &'static FlowOps,
    ) -> Option<FlowBox> {
        let owner = Owner {
            #[cfg(crem_kunit)]
            ctx: NonNull::dangling(),
            net,
            netns,
            ops,
        };
        let engine = Engine::new(owner, csf, caps)?;
        let state = Locked {
            engine,
            out: Outside::default(),
            dead: false,
            deadline: u64::MAX,
            last_ns: 0,
            base: Counters::ZERO,
        };
        Box::pin_init(
            pin_init!(Flow {
                // SAFETY: this timer is the `timer` field of a `Flow`, which
                // `flow_timer` requires.
                timer <- unsafe { HrTimer::new(flow_timer) },
                state <- new_bh_lock!(state, "crem_flow"),
                ops,
                links: Links::new(FlowKey::default(), NetAddr::NONE),
                netns,
                peer_port: AtomicU16::new(0),
                born_ns: AtomicU64::new(0),
                removal: Mark::new(),
            }),
            // FlowAlloc's own flags apply (see there).
            GFP_KERNEL,
        )
        .ok()
    }

    /// The inserted flow starts: a CSF sends its HELLO with `nonce`; a CRF
    /// takes the HELLO `hello` that asked for it (its first message in).
    pub(crate) fn start(&self, bh: &Bh, nonce: u64, hello: &[u8]) {
        self.with(bh, core::ptr::null_mut(), None, false, |e, h, t| {
            if e.is_csf() {
                e.csf_start(h, t, nonce);
            } else if !hello.is_empty() {
                h.count_in(hello);
                e.msg(h, t, hello, false);
            }
        });
    }

    /// A source packet of the CSF's flow: `pkt`, linear, whose RoCEv2 UDP
    /// payload is the `len` octets at `off`, parsed as `rp`; `seen`: its
    /// template fields. Its messages wait on `defer` until the packet has
    /// gone on.
    pub(crate) fn csf_source(
        &self,
        bh: &Bh,
        pkt: &Lent<'_>,
        (off, len): (u32, u32),
        rp: &RocePacket<'_>,
        seen: &Template,
        defer: *mut sk_buff_head,
    ) {
        let Some((cur, payload)) = current(pkt, off, len) else {
            return;
        };
        self.with(bh, defer, Some(seen), true, |e, h, t| {
            e.csf_source(h, t, rp, cur, payload);
        });
    }

    /// A source packet reached the CRF (as [`Self::csf_source`]; `ce`: it
    /// arrived CE-marked): what became of it.
    pub(crate) fn crf_source(
        &self,
        bh: &Bh,
        pkt: &Lent<'_>,
        (off, len): (u32, u32),
        psn: u32,
        seen: &Template,
        ce: bool,
    ) -> CrfTake {
        let Some((cur, payload)) = current(pkt, off, len) else {
            return CrfTake::Pass;
        };
        self.with(bh, core::ptr::null_mut(), Some(seen), true, |e, h, t| {
            e.crf_source(h, t, psn, cur, payload, ce)
        })
        .unwrap_or(CrfTake::Pass)
    }

    /// An RDMA ACK or NAK at `psn` for this responses flow's QP (`pkt`, the
    /// hook's packet, which it gives up if this says `Held`): kept back
    /// behind the packets held before it (`crate::acks`), or not.
    pub(crate) fn crf_ack(&self, bh: &Bh, pkt: &Lent<'_>, psn: u32) -> CrfTake {
        let Some(skb) = NonNull::new(pkt.as_ptr()) else {
            return CrfTake::Pass;
        };
        // Not the flow's own packet: its activity and template stay.
        self.with(bh, core::ptr::null_mut(), None, false, |e, _, t| {
            e.crf_ack(t, psn, skb)
        })
        .unwrap_or(CrfTake::Pass)
    }

    /// Its restored packets' template (KUnit: what set-up made of it).
    #[cfg(crem_kunit)]
    pub(crate) fn template(&self) -> Template {
        let bh = bh::disable();
        let mut g = self.state.lock(&bh);
        g.engine.stores().tpl
    }

    /// The UDP port (network order) its messages go to (0: ours).
    pub(crate) fn peer_port(&self) -> u16 {
        self.peer_port.load(Ordering::Relaxed)
    }

    /// Its peer sent its HELLO (receiver flow) or HELLO_ACK (sender flow)
    /// from UDP port `port` (network order): its messages go there.
    pub(crate) fn set_peer_port(&self, port: u16) {
        self.peer_port.store(port, Ordering::Relaxed);
    }

    /// When it was set up (`ktime_get_ns`).
    pub(crate) fn born_ns(&self) -> u64 {
        self.born_ns.load(Ordering::Relaxed)
    }

    /// Its part in its removal.
    pub(crate) fn removal(&self) -> &Mark {
        &self.removal
    }

    /// Its state (`enum crem_flow_state`, none for an engine not set up)
    /// and when a packet or message of it was last seen; None if it is
    /// dead.
    pub(crate) fn activity(&self) -> Option<(Option<u8>, u64)> {
        let bh = bh::disable();
        let mut g = self.state.lock(&bh);
        if g.dead {
            return None;
        }
        let last = g.last_ns;
        Some((g.engine.state_code(), last))
    }

    /// Its identity, state and counters since its last flow-reset, into
    /// `fi`.
    pub(crate) fn info(&self, fi: &mut FlowInfo) {
        {
            let bh = bh::disable();
            info_locked(&mut self.state.lock(&bh), fi);
        }
        self.identity(fi);
    }

    /// Its key, peer and age, into `fi`.
    fn identity(&self, fi: &mut FlowInfo) {
        fi.key = *self.links.key();
        fi.peer = self.links.peer();
        fi.age_ms = now().saturating_sub(self.born_ns()) / 1_000_000;
    }

    /// Ends the removed flow (process context, once, after it is
    /// unreachable): its engine ends with a CLOSE of `close_reason`
    /// (`removal::CLOSE_*`, none if negative; see `Engine::fini`), its last
    /// counters go to `fi` (if any) in the same section, it is marked
    /// dead, and its timer is cancelled.
    pub(crate) fn kill(&self, close_reason: c_int, mut fi: Option<&mut FlowInfo>) {
        if let Some(fi) = fi.as_deref_mut() {
            // What a flow that leaves nothing to report reports.
            *fi = FlowInfo::default();
        }
        let close = u16::try_from(close_reason)
            .ok()
            .map(wire::CloseReason::from_u16);
        {
            let bh = bh::disable();
            let mut g = self.state.lock(&bh);
            let l = &mut *g;
            if !l.dead {
                trace::flow_down(self.links.key(), &self.links.peer(), close_reason);
                let tos = msg_tos(&mut l.engine);
                // SAFETY: as in `Flow::with`.
                let ids = self.ids(&bh);
                let mut h = unsafe { Host::new(self, tos, core::ptr::null_mut(), &mut l.out, ids) };
                l.engine.fini(&mut h, close);
                // The engine stays readable once ended.
                if let Some(fi) = fi.as_deref_mut() {
                    info_locked(l, fi);
                }
                l.dead = true;
            }
        }
        if let Some(fi) = fi {
            self.identity(fi);
        }
        // Outside the lock, which a running callback may be waiting for.
        self.timer.cancel();
    }

    /// Takes one pending flow-change event: its number
    /// (`CREM_FLOW_EVENT_*`) and the close-received reason.
    pub(crate) fn take_event(&self) -> Option<(u8, u16)> {
        let bh = bh::disable();
        let mut g = self.state.lock(&bh);
        let l = &mut *g;
        if l.out.ev_pending == 0 || l.dead {
            return None;
        }
        let o = &mut l.out;
        let ev = o.ev_pending.trailing_zeros();
        o.ev_pending &= !(1 << ev);
        Some((ev as u8, o.close_reason))
    }

    /// What the flow calls outside itself (`host::FlowOps`).
    pub(crate) fn ops(&self) -> &'static FlowOps {
        self.ops
    }

    /// The flow's netns, if any.
    pub(crate) fn netns(&self) -> Option<&NetState> {
        // SAFETY: the flow's netns, which outlives its flows (it frees
        // them all before it goes).
        self.netns.map(|t| unsafe { t.as_ref() })
    }

    /// The table the flow is (or is to be) in, if any: its netns's.
    pub(crate) fn table(&self) -> Option<&FlowTable<Flow>> {
        self.netns().map(|st| &st.flows)
    }

    /// The flow's place in its table, for an engine call under its lock.
    fn ids<'a>(&'a self, bh: &'a Bh) -> FlowIds<'a> {
        // SAFETY: `table` is the only table the flow is ever inserted in
        // (`crate::flows` inserts it in `table()`, set once, at setup).
        unsafe { FlowIds::new(self.table().map(|t| (t, self)), bh) }
    }

    /// Arms the timer for the engine's next deadline if that is earlier
    /// than the one it is armed for. A later deadline (each packet pushes
    /// the CSF's end-of-burst one on) is left to the armed timer: it fires
    /// early, the engine finds nothing due (crem-core acts only on what is
    /// due at `now`) and it is armed again for the deadline then. So a
    /// stream costs about one timer start per end-of-burst interval instead
    /// of one per packet (`hrtimer_start` reprograms the clock event device
    /// when the timer is the earliest). Under the lock: never waits.
    fn arm(&self, l: &mut Locked) {
        if l.dead {
            return;
        }
        let Some(d) = l.engine.deadline() else {
            // An armed timer fires, finds nothing, and stays off.
            return;
        };
        if d >= l.deadline {
            return;
        }
        l.deadline = d;
        self.timer.start_abs(d);
    }

    /// Runs `f` with the live flow's engine and host (its messages wait
    /// on `defer` if not null), then rearms the timer; `seen`: the template
    /// fields of the packet the call is for, noted first (the messages it
    /// causes carry its DSCP); `touch`: a packet or message of the flow,
    /// which keeps it from the collector. None if the flow is dead.
    fn with<R>(
        &self,
        bh: &Bh,
        defer: *mut sk_buff_head,
        seen: Option<&Template>,
        touch: bool,
        f: impl FnOnce(&mut Engine, &mut Host<'_>, Nanos) -> R,
    ) -> Option<R> {
        let mut g = self.state.lock(bh);
        let l = &mut *g;
        if l.dead {
            return None;
        }
        // One clock read per call, for the engine and the collector.
        let t = now();
        if touch {
            l.last_ns = t;
        }
        if let Some(seen) = seen {
            note(&mut l.engine, seen);
        }
        let r = {
            let tos = msg_tos(&mut l.engine);
            // SAFETY: the flow is live and locked here; `defer` is the
            // caller's queue, live for the call.
            let mut h = unsafe { Host::new(self, tos, defer, &mut l.out, self.ids(bh)) };
            f(&mut l.engine, &mut h, t)
        };
        self.arm(l);
        Some(r)
    }

    /// An RDMA packet of the reverse direction (parsed): its ACKs release
    /// the CSF's retention.
    pub(crate) fn csf_reverse(&self, bh: &Bh, rp: &RocePacket<'_>) {
        self.with(bh, core::ptr::null_mut(), None, false, |e, _, t| {
            e.csf_reverse(t, rp)
        });
    }

    /// A CREM message for this flow (`ce`: its datagram arrived
    /// CE-marked).
    pub(crate) fn msg(&self, bh: &Bh, m: &[u8], ce: bool) {
        self.with(bh, core::ptr::null_mut(), None, true, |e, h, t| {
            h.count_in(m);
            e.msg(h, t, m, ce);
        });
    }

    /// `dev` is being unregistered (RTNL held): no stored packet keeps a
    /// pointer to it. Returns how many held packets were dropped with it.
    pub(crate) fn dev_gone(&self, bh: &Bh, dev: *const bindings::net_device) -> u32 {
        let mut g = self.state.lock(bh);
        if g.dead {
            return 0;
        }
        g.engine.dev_gone(dev)
    }

    fn expired(&self, bh: &Bh) {
        let mut g = self.state.lock(bh);
        let l = &mut *g;
        if l.dead {
            return;
        }
        l.deadline = u64::MAX;
        let tos = msg_tos(&mut l.engine);
        // SAFETY: as in `with`; the timer's messages are sent at once.
        let ids = self.ids(bh);
        let mut h = unsafe { Host::new(self, tos, core::ptr::null_mut(), &mut l.out, ids) };
        l.engine.timer(&mut h, now());
        self.arm(l);
    }
}

/// The TOS of a flow's messages: the protected flow's DSCP (its REPAIRs,
/// the draft says; its requests and reports too, so they meet the flow's
/// treatment on the way back); the CSF's are ECN capable (ECT(0)), so that
/// CE on the REPAIR path shows in LOSS_REPORT.
fn msg_tos(e: &mut Engine) -> u8 {
    let dscp = e.stores().tpl.tos & !ECN_MASK;
    if e.is_csf() {
        dscp | ECN_ECT0
    } else {
        dscp
    }
}

/// The flow's state and counters since its last flow-reset, into `fi`:
/// the engine's, then those counted here (each at its flow-stats index).
fn info_locked(l: &mut Locked, fi: &mut FlowInfo) {
    *fi = FlowInfo::default();
    if !l.dead {
        l.engine.info(fi);
    }
    let s = l.engine.stores().counted();
    let o = &l.out;
    let c = &mut fi.counters;
    for (i, v) in [
        (fs::MSGS_IN, o.msgs_in),
        (fs::MSGS_OUT, o.msgs_out),
        (fs::SEND_FAILURES, o.send_fail),
        (fs::STORE_FULL, s.store_full),
        (fs::ALLOC_FAILURES, s.clone_fail),
        (fs::HELD_DROPPED, s.held_dropped),
        (fs::INJECTED, s.injected),
        (fs::INJECT_FAILURES, s.inject_fail),
        (fs::STORE_OVERWRITTEN, s.overwritten),
        (fs::HELD_OVERWRITTEN, s.held_overwritten),
        (fs::QUEUED_BEHIND, s.queued_behind),
        (fs::ACKS_HELD, s.acks_held),
        (fs::ACKS_PASSED, s.acks_passed),
        (fs::BACKLOG_UNRETURNED, s.backlog_unreturned),
        (fs::BACKLOG_UNTRACKED, s.backlog_untracked),
    ] {
        c.set(i, v);
    }
    (c.msgs_in, c.msgs_out) = (o.msg_in, o.msg_out);
    c.sub(&l.base);
    fi.mem = l.engine.stores().mem();
    fi.last_ns = l.last_ns;
}

/// The packet being processed: `pkt` (linear) and its `len` payload
/// octets at `off` (None if they are not all in its data).
fn current<'a>(pkt: &'a Lent<'_>, off: u32, len: u32) -> Option<(Current, &'a [u8])> {
    let end = off.checked_add(len)?;
    let payload = pkt.linear().get(off as usize..end as usize)?;
    let skb = NonNull::new(pkt.as_ptr())?;
    Some((
        Current {
            skb,
            off,
            payload: payload.as_ptr(),
        },
        payload,
    ))
}

/// Notes what a packet of the flow shows of its path (its template for
/// restored packets: `seen`, filled by the hook).
fn note(e: &mut Engine, seen: &Template) {
    let t = &mut e.stores().tpl;
    if seen.ifindex != 0 {
        t.ifindex = seen.ifindex;
    }
    if seen.h_source.iter().any(|&b| b != 0) {
        t.h_source = seen.h_source;
    }
    t.mark = seen.mark;
    t.tos = seen.tos;
    t.ttl = seen.ttl;
    t.frag_off = seen.frag_off;
    t.flow_label = seen.flow_label;
    t.udp_csum = seen.udp_csum;
    t.sport = seen.sport;
    t.noted = true;
}

/// A flow that this code owns until it hands it over (to its table, whose
/// removal frees it with [`free`]).
///
/// # Invariants
///
/// `0` is a flow of [`Spare::new`], taken out of its pinned box (it stays
/// where it is), owned by this value alone.
pub(crate) struct Spare(NonNull<Flow>);

// SAFETY: a flow is not tied to a CPU; this value owns it alone.
unsafe impl Send for Spare {}

impl Spare {
    /// A flow of `side` in `st`'s netns with capacities `caps`, its engine
    /// not yet set up (None if out of memory). Process context: charged to
    /// the active memory cgroup, and may fail there, its structures to the
    /// netns's budget.
    pub(crate) fn new(st: &NetState, side: u8, caps: &FlowCaps) -> Option<Self> {
        let csf = side == crate::table::SIDE_CSF;
        let netns = Some(NonNull::from(st));
        let f = Flow::new(st.net(), netns, csf, caps, &FlowOps::NETNS)?;
        // SAFETY: kept where it is (a pointer) until `free` rebuilds the
        // pinned box.
        let f = Box::into_raw(unsafe { Pin::into_inner_unchecked(f) });
        // SAFETY: not in a table yet, its timer not armed: this is the only
        // reference to it, and the field is not pinned (see `setup`).
        unsafe { (*f).links.set_side(side) };
        // INVARIANT: made here, out of its box, ours alone.
        NonNull::new(f).map(Spare)
    }

    /// The flow.
    pub(crate) fn flow(&self) -> &Flow {
        // SAFETY: a live flow of `new` (the invariant), owned by this value,
        // which it outlives.
        unsafe { self.0.as_ref() }
    }

    /// Hands the flow over (to its table, whose removal frees it with
    /// [`free`]).
    pub(crate) fn into_raw(self) -> *mut Flow {
        let f = self.0.as_ptr();
        core::mem::forget(self);
        f
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        // SAFETY: ours alone (the invariant), never inserted.
        unsafe { drop_flow(self.0.as_ptr()) };
    }
}

/// Frees a flow (null: nothing) that `Box::into_raw` took out of its
/// pinned box: its timer cancelled, its stores releasing what they keep.
///
/// # Safety
///
/// `rf` is null or such a flow, which no one can reach any more; it was
/// pinned there and is dropped in place.
pub(crate) unsafe fn drop_flow(rf: *mut Flow) {
    if !rf.is_null() {
        // SAFETY: per the function contract.
        drop(unsafe { Pin::new_unchecked(Box::<Flow, FlowAlloc>::from_raw(rf)) });
    }
}

/// Frees a flow of [`Spare::new`] (killed first if it was started; null:
/// nothing).
///
/// # Safety
///
/// `f` was handed out by [`Spare::into_raw`] and no one can reach it any
/// more (removed from its table a grace period ago, or never inserted).
pub(crate) unsafe fn free(f: *mut Flow) {
    // SAFETY: per the function contract: `into_raw` kept it out of its box.
    unsafe { drop_flow(f) };
}

/// The initial RTT estimate of a flow's engine, until its first sample.
const RTT_HINT_NS: u64 = 10_000_000;

/// Sets up the flow `rf`: its
/// identity from `p` and `peer`, its engine from `p` and
/// its template from `tpl` (any context, once, before the flow is
/// inserted: its maker holds the only pointer to it). 0, or -EINVAL.
///
/// # Safety
///
/// `rf` is null or a live flow not inserted yet, reachable by no one else;
pub(crate) unsafe fn setup(
    rf: *mut Flow,
    p: &EngineParams,
    peer: NetAddr,
    tpl: &Template,
) -> c_int {
    if rf.is_null() {
        return EINVAL.to_errno();
    }
    let key = FlowKey {
        saddr: p.saddr,
        daddr: p.daddr,
        dqp: p.dqp,
        side: p.side,
        kind: p.kind,
    };
    // SAFETY: a live flow, not inserted yet (the caller's contract): this
    // is the only reference to it, its timer is not armed, and this
    // field is not pinned (its links are linked only once it is
    // inserted).
    unsafe {
        (*rf).links.set_identity(key, peer);
    }
    // SAFETY: a live flow (the caller's contract).
    let Some(f) = (unsafe { rf.as_ref() }) else {
        return EINVAL.to_errno();
    };
    let bh = bh::disable();
    let mut g = f.state.lock(&bh);
    let l = &mut *g;
    if l.engine.init(p).is_err() {
        return EINVAL.to_errno();
    }
    l.engine.stores().tpl = *tpl;
    l.last_ns = now();
    0
}

/// Sets up the flow `spare` for request `rq` in the netns whose state is
/// `st`: its identity from `rq`, its engine from the configuration the
/// netns last committed (flow-new's fixed k and m over it) and its memory
/// limit, its template from what `rq` saw (any context, before the flow is
/// inserted). Err if the engine refuses the parameters.
pub(crate) fn setup_request(spare: &Spare, st: &NetState, rq: &FlowRequest) -> Result<(), ()> {
    let d = {
        let r = rcu::read_lock();
        st.peers.get(&r).defaults
    };
    let k = &rq.key;
    let mut p = d.engine;
    if rq.fixed {
        (p.adaptive, p.k, p.m) = (0, rq.k, rq.m);
    }
    (p.side, p.kind, p.dqp, p.saddr, p.daddr) = (k.side, k.kind, k.dqp, k.saddr, k.daddr);
    // A flow's stores may keep a quarter of the netns's memory.
    (p.link_mtu, p.retention_budget, p.rtt_hint_ns) =
        (rq.link_mtu, st.max_memory() / 4, RTT_HINT_NS);
    // The rest is noted from the flow's packets (IPv6: flow label and
    // UDP checksum; IPv4's DF until then, as RoCEv2 senders set it).
    let v6 = k.daddr.family() == Family::V6;
    let tpl = Template {
        saddr: k.saddr,
        daddr: k.daddr,
        tos: rq.tos,
        ttl: rq.ttl,
        sport: rq.sport,
        frag_off: if v6 { 0 } else { IP_DF.to_be() },
        host: d.host,
        ..Template::default()
    };
    spare.flow().born_ns.store(now(), Ordering::Relaxed);
    spare.flow().set_peer_port(rq.peer_port);
    // SAFETY: a flow of ours not inserted yet (a `Spare` owns it alone),
    // whose netns is `st`, whose table outlives its flows.
    match unsafe { setup(spare.0.as_ptr(), &p, rq.peer, &tpl) } {
        0 => Ok(()),
        _ => Err(()),
    }
}

impl Flow {
    /// flow-set: `pin`: pin (k, m); else back to the adaptive policy
    /// (`PinRefused::Failed` for a flow gone meanwhile).
    pub(crate) fn pin(&self, k: u8, m: u8, pin: bool) -> Result<(), PinRefused> {
        if self.links.key().side != crate::table::SIDE_CSF {
            return Err(PinRefused::NotSender);
        }
        let bh = bh::disable();
        let rc = self.with(&bh, core::ptr::null_mut(), None, false, |e, h, t| {
            e.csf_pin(h, t, pin.then_some((k, m)))
        });
        rc.unwrap_or(Err(PinRefused::Failed))
    }

    /// flow-reset: the counters since the last reset into `fi` (added to
    /// the netns's totals of flows gone), and a new base; in the section a
    /// removal reads its last counters in, so nothing is counted twice.
    /// False (nothing done) if the flow is gone.
    pub(crate) fn reset(&self, fi: &mut FlowInfo) -> bool {
        let bh = bh::disable();
        let mut g = self.state.lock(&bh);
        let l = &mut *g;
        if l.dead {
            return false;
        }
        info_locked(l, fi);
        l.base.add(&fi.counters);
        drop(g);
        // What it counted since its last reset moves to the totals' share
        // of flows gone.
        if let Some(st) = self.netns() {
            st.retire(&fi.counters);
        }
        true
    }
}

/// A flow's state and counters, off the stack (process context; None if
/// out of memory).
pub(crate) fn info_buffer() -> Option<KBox<FlowInfo>> {
    KBox::new(FlowInfo::default(), GFP_KERNEL).ok()
}
