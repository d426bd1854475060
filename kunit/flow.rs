// SPDX-License-Identifier: GPL-2.0
//! A flow's Rust half (`rust/flow.rs`) driven through the entry points C
//! calls, on test ops (`host::FlowOps`) instead of the netns's table and socket: its timer
//! drives the engine (a CSF's unanswered HELLO is retransmitted by the
//! timer alone and gives up on schedule), killing it stops the timer, and
//! its counters and flow-reset report what it sent.

use super::bench::{per_packet_rounds, ROUNDS_PACKETS};
use super::bench_work as work;
use super::run;
use crate::crem_core::engine::module_caps::{caps_for, MAX_BDP_DEFAULT};
use crate::crem_core::engine::negotiation::{HELLO_RTO, MAX_ATTEMPTS};
use crate::crem_core::nl::{flow_stat, flow_state, side};
use crate::crem_core::roce::RocePacket;
use crate::crem_core::wire::{
    self, AddressFamily, FlowAddrs, Hello, HelloAck, Message, ParamAck, ParamStatus,
    FLOW_KIND_ROCEV2,
};
use crate::engine::EngineParams;
use crate::flow::{self, Flow};
use crate::flow_info::FlowInfo;
use crate::host::FlowOps;
use crate::inject::Template;
use crate::kernel_ext::bh::{self, Bh};
use crate::kernel_ext::skb::{Lent, Skb};
use crate::store::Owner;
use core::cell::Cell;
use core::ffi::{c_char, c_int};
use core::fmt::Write;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::bindings;
use kernel::prelude::*;

/// What the flow reached outside itself: the test's ops find it through
/// [`HOST`]. Cells: the flow's callbacks (under its lock, maybe in
/// softirq) and the test read it; the KUnit VM has one CPU and the
/// callbacks are serialised by the flow's lock.
#[derive(Default)]
struct TestHost {
    /// Messages sent, and those of type 2 (HELLO).
    sent: Cell<u32>,
    hellos: Cell<u32>,
    events: Cell<u32>,
    /// The Config ID of the last PARAM_UPDATE sent.
    proposed: Cell<Option<u8>>,
}

/// The running case's host (KUnit runs one case at a time, each with one
/// flow of `make`, freed before its host goes).
static HOST: AtomicPtr<TestHost> = AtomicPtr::new(core::ptr::null_mut());

fn host<'a>() -> Option<&'a TestHost> {
    // SAFETY: set by `make` to the running case's host, which outlives its
    // flow (the only caller of the ops); only shared references are made.
    unsafe { HOST.load(Ordering::Relaxed).as_ref() }
}

unsafe fn t_send(
    _: &Flow,
    _bh: &Bh,
    _tos: u8,
    _defer: *mut bindings::sk_buff_head,
    m: &[u8],
) -> bool {
    let Some(h) = host() else {
        return false;
    };
    h.sent.set(h.sent.get() + 1);
    match wire::decode(m) {
        Ok(Message::Hello(_)) => h.hellos.set(h.hellos.get() + 1),
        Ok(Message::ParamUpdate(u)) => h.proposed.set(Some(u.config_id)),
        _ => {}
    }
    true
}
unsafe fn t_charge(_: &Owner, _: u32) -> bool {
    true
}
unsafe fn t_uncharge(_: &Owner, _: u32) {}
fn t_event(_: &Flow) {
    if let Some(h) = host() {
        h.events.set(h.events.get() + 1);
    }
}

static TEST_OPS: FlowOps = FlowOps {
    send: t_send,
    charge: t_charge,
    uncharge: t_uncharge,
    event: t_event,
};

/// `FlowInfo::state` of an established and an unprotected flow.
const STATE_ESTABLISHED: u8 = flow_state::PROTECTED;
const STATE_UNPROTECTED: u8 = flow_state::UNPROTECTED;
/// msgs-out among the flow-stats counters.
const MSGS_OUT: usize = flow_stat::MSGS_OUT;

fn sleep_ms(ms: u32) {
    // SAFETY: KUnit cases run in process context, where sleeping is allowed.
    unsafe { bindings::msleep(ms) };
}

/// A set-up sender flow (fixed k = 8, m = 2, coded recovery) whose ops
/// reaches `h`; freed by `free`.
fn make(h: &TestHost) -> Option<*mut Flow> {
    make_km(h, 8, 2)
}

/// As [`make`], with a fixed (k, m) and T for an RDMA MTU of 1024.
fn make_km(h: &TestHost, k: u8, m: u8) -> Option<*mut Flow> {
    HOST.store(core::ptr::from_ref(h).cast_mut(), Ordering::Relaxed);
    // Its net is reached only to inject restored packets: a CSF never does.
    let caps = caps_for(MAX_BDP_DEFAULT, 32);
    let b = Flow::new(NonNull::dangling(), None, true, &caps, &TEST_OPS)?;
    // SAFETY: kept in place until `free` rebuilds the pinned box.
    let f = kernel::alloc::Box::into_raw(unsafe { Pin::into_inner_unchecked(b) });
    let mut p = EngineParams::default();
    p.side = side::CSF;
    p.k = k;
    p.m = m;
    p.dqp = 0x11;
    p.saddr = crate::addr::NetAddr::from_v4([10, 0, 0, 1]);
    p.daddr = crate::addr::NetAddr::from_v4([10, 0, 1, 1]);
    // Nothing releases what the benchmark's flow retains (no ACKs): the
    // ring's overwrites bound it, not this.
    p.retention_budget = 1 << 30;
    p.rtt_hint_ns = 10_000_000;
    // An Ethernet link: RDMA MTU 1024 (1500 - 96 rounded down), as the
    // benchmark's packets (T 1062).
    p.link_mtu = 1500;
    let tpl = Template::default();
    // In no netns's table (null): its Flow ID is nobody's business.
    // SAFETY: made above, not inserted, ours alone.
    if unsafe { flow::setup(f, &p, crate::addr::NetAddr::NONE, &tpl) } != 0 {
        free(f);
        return None;
    }
    Some(f)
}

/// Ends the flow as a removal does (no CLOSE), its last counters into
/// `fi` if given.
fn kill(f: *mut Flow, fi: Option<&mut FlowInfo>) {
    // SAFETY: a live flow of `make`, freed only by the case that made it,
    // after this.
    if let Some(f) = unsafe { f.as_ref() } {
        f.kill(-1, fi);
    }
}

/// Frees a flow of [`make`] (its host goes after it).
fn free(f: *mut Flow) {
    HOST.store(core::ptr::null_mut(), Ordering::Relaxed);
    // SAFETY: `make` took it out of its pinned box; each case frees it
    // once, when nothing else can reach it.
    unsafe { flow::drop_flow(f) };
}

/// Starts the flow (a sender flow sends its HELLO with `nonce`).
fn start(f: *mut Flow, nonce: u64) {
    // SAFETY: a live flow of `make`, freed only by the case that made it,
    // after this.
    let Some(f) = (unsafe { f.as_ref() }) else {
        return;
    };
    let bh = bh::disable();
    f.start(&bh, nonce, &[]);
}

fn info(f: *mut Flow) -> FlowInfo {
    let mut fi = FlowInfo::default();
    // SAFETY: a flow of the case's (null: none), alive until it frees it.
    if let Some(f) = unsafe { f.as_ref() } {
        f.info(&mut fi);
    }
    fi
}

/// Its HELLO unanswered, a started sender flow sends it again from its
/// timer alone, with doubling timeouts, MAX_ATTEMPTS times in all, then
/// gives up (unprotected) and sends nothing more.
#[no_mangle]
extern "C" fn crem_kunit_flow_timer_drives_hello(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let h = TestHost::default();
        let Some(f) = make(&h) else {
            let _ = write!(w, "no flow");
            return false;
        };
        let first = {
            // The first RTO is 1 ms: read before the timer can run.
            let _bh = bh::disable();
            start(f, 0x5eed);
            h.hellos.get()
        };
        // Every timeout, doubling from HELLO_RTO, and the give-up after the
        // last: (2^MAX_ATTEMPTS - 1) RTOs; twice that, for TCG's timing.
        let all = HELLO_RTO * ((1 << MAX_ATTEMPTS) - 1) / 1_000_000;
        sleep_ms(2 * all as u32 + 50);
        let fi = info(f);
        let (hellos, sent) = (h.hellos.get(), h.sent.get());
        sleep_ms(100);
        let later = h.sent.get();
        kill(f, None);
        free(f);
        let ok = first == 1
            && hellos == u32::from(MAX_ATTEMPTS)
            && sent == hellos
            && later == sent
            && fi.state == STATE_UNPROTECTED
            && fi.counters.flat.get(MSGS_OUT) == Some(&u64::from(sent));
        if !ok {
            let _ = write!(
                w,
                "HELLOs {first} at start (1), {hellos} in all ({MAX_ATTEMPTS}); sent {sent}, {later} later; state {} ({STATE_UNPROTECTED}); msgs-out {:?}",
                fi.state,
                fi.counters.flat.get(MSGS_OUT)
            );
        }
        ok
    })
}

/// A flow killed with its timer armed sends nothing more: the kill marks
/// it dead and cancels the timer before it is freed.
#[no_mangle]
extern "C" fn crem_kunit_flow_kill_stops_timer(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let h = TestHost::default();
        let Some(f) = make(&h) else {
            let _ = write!(w, "no flow");
            return false;
        };
        let mut fi = FlowInfo::default();
        {
            // The timer (a softirq) cannot run here before the kill.
            let _bh = bh::disable();
            start(f, 0x5eed);
            kill(f, Some(&mut fi));
        }
        let at_kill = h.sent.get();
        // Without the kill, the timer would resend HELLO for 255 ms.
        sleep_ms(400);
        let after = h.sent.get();
        free(f);
        // The kill's last counters are what it had sent.
        let reported = fi.counters.flat.get(MSGS_OUT).copied();
        if (at_kill, after, reported) != (1, 1, Some(1)) {
            let _ = write!(
                w,
                "sent {at_kill} before the kill (1), {after} after (1); the kill reported {reported:?} (1)"
            );
            return false;
        }
        true
    })
}

/// flow-reset hands back what was counted since the last one and counts
/// again from zero; a killed flow cannot be reset.
#[no_mangle]
extern "C" fn crem_kunit_flow_reset_counters(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let h = TestHost::default();
        let Some(f) = make(&h) else {
            let _ = write!(w, "no flow");
            return false;
        };
        let mut taken = FlowInfo::default();
        let (done, after) = {
            // No timer in between: one HELLO when reset.
            let _bh = bh::disable();
            start(f, 0x5eed);
            // SAFETY: the case's flow, alive until it frees it.
            let done = unsafe { &*f }.reset(&mut taken);
            (done, info(f).counters.flat.get(MSGS_OUT).copied())
        };
        let before = taken.counters.flat.get(MSGS_OUT).copied();
        // The timer resends HELLO from here on: counted after the reset.
        sleep_ms(50);
        let (later, sent) = {
            let _bh = bh::disable();
            (info(f).counters.flat.get(MSGS_OUT).copied(), h.sent.get())
        };
        kill(f, None);
        // SAFETY: as above (killed, not yet freed).
        let gone = unsafe { &*f }.reset(&mut taken);
        free(f);
        let ok = done
            && before == Some(1)
            && after == Some(0)
            && sent > 1
            && later == Some(u64::from(sent) - 1)
            && !gone;
        if !ok {
            let _ = write!(
                w,
                "reset {done} took msgs-out {before:?} (1), then {after:?} (0); later {later:?} of {sent} sent (sent - 1); reset after kill {gone} (false)"
            );
        }
        ok
    })
}

/// A new packet of the benchmark's RDMA WRITE (`bench_work`) with PSN
/// `psn`, as the hook would see its UDP payload.
fn packet(psn: u32) -> Option<Skb> {
    let mut p = work::PACKET;
    work::set_psn(&mut p, psn);
    let mut skb = Skb::alloc_atomic(0, work::PACKET_LEN as u32)?;
    skb.put_data(&p).then_some(skb)
}

/// The Flow ID the benchmarks' "peer" gives a flow.
pub(super) const PEER_FLOW_ID: u32 = 7;

/// The peer CRF's HELLO_ACK (Flow ID [`PEER_FLOW_ID`]) to a sender flow's
/// HELLO of `nonce` and RDMA MTU `rdma_mtu`, encoded into `buf`.
pub(super) fn hello_ack(nonce: u64, rdma_mtu: u16, buf: &mut [u8]) -> Option<u32> {
    let ack = HelloAck {
        flow_id: PEER_FLOW_ID,
        flow_kind: FLOW_KIND_ROCEV2,
        af: AddressFamily::V4,
        supported_schemes: 0b111,
        max_k: 255,
        max_m: 16,
        max_t: 4134,
        rdma_mtu,
        nonce,
        max_open_blocks: 64,
    };
    ack.encode(buf).ok().and_then(|n| u32::try_from(n).ok())
}

/// A peer CSF's HELLO (RDMA MTU 1024, its limits the widest) for the
/// IPv4 flow `src` > `dst`, destination QP `dqp`, with `nonce`.
pub(super) fn hello(src: [u8; 4], dst: [u8; 4], dqp: u32, nonce: u64) -> Hello {
    Hello {
        flow_kind: FLOW_KIND_ROCEV2,
        supported_schemes: 0b111,
        max_k: 255,
        max_m: 16,
        max_t: 4134,
        rdma_mtu: 1024,
        nonce,
        addrs: FlowAddrs::V4 { src, dst },
        flow_label: dqp,
    }
}

/// The peer's PARAM_ACK accepting configuration `config_id`, into `buf`.
pub(super) fn param_ack(config_id: u8, buf: &mut [u8]) -> Option<u32> {
    let pa = ParamAck {
        flow_id: PEER_FLOW_ID,
        config_id,
        status: ParamStatus::Accepted,
    };
    pa.encode(buf).ok().and_then(|n| u32::try_from(n).ok())
}

/// The flow's peer answers: HELLO_ACK, then PARAM_ACK of the configuration
/// the flow proposes. True once it protects with it.
fn establish(f: *mut Flow, h: &TestHost, nonce: u64) -> bool {
    // SAFETY: a flow of `make_km`, not freed yet (the caller's).
    let Some(flow) = (unsafe { f.as_ref() }) else {
        return false;
    };
    let mut buf = [0u8; 64];
    let Some(n) = hello_ack(nonce, 1024, &mut buf) else {
        return false;
    };
    let bh = bh::disable();
    flow.msg(&bh, buf.get(..n as usize).unwrap_or(&[]), false);
    let Some(n) = h.proposed.get().and_then(|id| param_ack(id, &mut buf)) else {
        return false;
    };
    flow.msg(&bh, buf.get(..n as usize).unwrap_or(&[]), false);
    drop(bh);
    info(f).state == STATE_ESTABLISHED
}

/// The cost per source packet of a sender flow's entry point as the hook
/// calls it (`Flow::csf_source`: BH off, the flow's lock, its
/// template, the engine on the backend chosen at load, a clone retained,
/// the timer rearmed, its REPAIRs handed to the socket, here a counter),
/// k = 32 and `m`, beside the same packets' own skb work (allocation,
/// copy, free), which is subtracted. The flow is established first (the
/// peer's answers fed to it). Compare with `csf_per_packet` (the engine
/// alone) in the same run.
fn flow_per_packet(m: u8, w: &mut dyn Write) -> bool {
    let h = TestHost::default();
    let Some(f) = make_km(&h, 32, m) else {
        let _ = write!(w, "no flow");
        return false;
    };
    let seen = Template::default();
    let (flow_ns, skb_ns, made) = {
        // No timer during the run (it would only add noise).
        let _bh = bh::disable();
        start(f, 1);
        if !establish(f, &h, 1) {
            let _ = write!(w, "flow not established: state {}", info(f).state);
            kill(f, None);
            free(f);
            return false;
        }
        // Warm-up: a round through the flow first (slab caches grown, the
        // retention ring filled: later packets replace retained ones).
        let n = ROUNDS_PACKETS;
        // SAFETY: a live flow of `make_km`, freed below.
        let fl = unsafe { &*f };
        let send = |_psn: u32, mut skb: Skb| {
            // The flow's lock needs BH off (and it is, for the whole run).
            let bh = bh::disable();
            let pkt = Lent::of(&mut skb);
            // Parsed here, as the hook parses it (once per packet).
            let Some(rp) = pkt
                .linear()
                .get(..work::PACKET_LEN)
                .and_then(|p| RocePacket::parse(p).ok())
            else {
                return;
            };
            let at = (0, work::PACKET_LEN as u32);
            fl.csf_source(&bh, &pkt, at, &rp, &seen, core::ptr::null_mut());
        };
        for psn in 0..n {
            if let Some(skb) = packet(psn) {
                send(psn, skb);
            }
        }
        per_packet_rounds(n, packet, send, || {})
    };
    let fi = info(f);
    kill(f, None);
    free(f);
    let n = u64::from(ROUNDS_PACKETS);
    // flow-stats: sources and repairs, of the warm-up and the run.
    let c = &fi.counters;
    let (sources, repairs) = (
        c.get(flow_stat::SOURCES) / 2,
        c.get(flow_stat::REPAIRS_SENT) / 2,
    );
    let want_repairs = u64::from(m) * (n / 32);
    // Every block coded; a slow kernel (KASAN) may also see a burst end
    // between two packets and send its proactive repairs.
    let coded = if m == 0 {
        repairs == 0
    } else {
        repairs >= want_repairs
    };
    if made != ROUNDS_PACKETS || sources != n || !coded {
        let _ = write!(
            w,
            "flow: {made} packets made, {sources} coded ({n}), {repairs} repairs (at least {want_repairs})"
        );
        return false;
    }
    let _ = write!(
        w,
        "crem-bench: flow_csf_per_packet k=32 m={m} gf={} ns={} skb_ns={skb_ns} packets={n} msgs={}",
        crate::gf::Coder::chosen().name(),
        flow_ns,
        h.sent.get()
    );
    true
}

#[no_mangle]
extern "C" fn crem_kunit_flow_csf_per_packet(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| flow_per_packet(0, w))
}

#[no_mangle]
extern "C" fn crem_kunit_flow_csf_per_packet_m4(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| flow_per_packet(4, w))
}
