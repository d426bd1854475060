// SPDX-License-Identifier: GPL-2.0
//! The datapath's per-packet cost at the netfilter hook (issue 14 item 9):
//! real IPv4 skbs through the FORWARD hook entry (`crem_nf_hook`: the UDP
//! port filter, the classification counters, the peer lookup, the RoCE
//! parse, the flow table, the flow's lock, engine and retention, the
//! REPAIRs queued and flushed after the packet went on), in the initial
//! netns set up as a gateway by the fixture below (`with_fixture`, which
//! binds and commits as config-set does).
//! Compare with `flow_csf_per_packet` (the flow's entry point alone) in the
//! same run: the difference is what the hook adds around the flow.
//!
//! The peer is 192.0.2.1 (TEST-NET-1), which the KUnit VM has no route to:
//! the REPAIRs are built and queued, then their route lookup fails and they
//! are counted as send failures, never transmitted, as the flow-level
//! benchmark hands them to a counter.

use super::bench::{per_packet_rounds, ROUNDS_PACKETS, ROUND_PACKETS};
use super::bench_work as work;
use super::flow::{hello, hello_ack, param_ack};
use super::run;
use crate::crem_core::ctl::{Addr, Config, Peer, Role};
use crate::crem_core::nl::{flow_stat, stat};
use crate::crem_core::psn::Psn;
use crate::crem_core::roce::{self, Bth, IPV4_HDR_LEN, UDP_HDR_LEN};
use crate::crem_core::wire::{FecScheme, ParamUpdate};
use crate::ffi;
use crate::flow::Flow;
use crate::flow_info::{Counters, FlowInfo};
use crate::kernel_ext::rcu;
use crate::kernel_ext::skb::Skb;
use crate::netns;
use crate::table::{FlowKey, InTable};
use core::ffi::{c_char, c_int};
use core::fmt::Write;
use core::ptr;
use kernel::bindings;
use kernel::prelude::*;

extern "C" {
    fn crem_kunit_hook_forward(skb: *mut bindings::sk_buff, tag: *mut core::ffi::c_void) -> u32;
    fn crem_kunit_hook_route(skb: *mut bindings::sk_buff) -> bool;
}

/// `skb` (ours to give) through the FORWARD hook, as netfilter calls it.
///
/// # Safety
///
/// `skb` is a packet the caller owns and gives away.
unsafe fn hook_forward(skb: *mut bindings::sk_buff) -> u32 {
    let tag = crate::hook_points::FORWARD as usize as *mut core::ffi::c_void;
    // SAFETY: the caller gives the packet; the tag is FORWARD's hook's.
    unsafe { crem_kunit_hook_forward(skb, tag) }
}

/// Addresses in network order, as the C side keeps them.
const fn be(a: [u8; 4]) -> u32 {
    u32::from_ne_bytes(a)
}
const SADDR: u32 = be([10, 0, 0, 1]);
const DADDR: u32 = be([10, 0, 1, 1]);
const PREFIX: u32 = be([10, 0, 1, 0]);
const PEER: u32 = be([192, 0, 2, 1]);
/// A CREM port nothing else in the KUnit VM binds.
const PORT: u16 = 47_011;
/// T, configured (symbol-len) so that it stays what the flow-level
/// benchmark codes with: the flow's RDMA MTU is an estimate (4096) until
/// its packets show 1024, and a T that followed would be proposed again
/// mid-run.
const SYMBOL_LEN: u16 = 1062;
/// The receiver flows' hold time (hold-us): a gap is given up (and what
/// waits behind it released) when it is over, so it outlasts a round even
/// on the debug kernel (about 0.15 s), and the rounds wait it out.
const HOLD_US: u32 = 500_000;
/// The netns's counters (`nl::stat`) read here.
const DP_DROP_MSG_INVALID: usize = stat::DROP_MSG_INVALID;
const DP_DROP_MSG_PEER: usize = stat::DROP_MSG_PEER;
const DP_DROP_MSG_NO_FLOW: usize = stat::DROP_MSG_NO_FLOW;
const DP_DROP_SEND: usize = stat::DROP_SEND;
const DP_FLOW_UP: usize = stat::FLOWS_CREATED;
const DP_FLOW_DOWN: usize = stat::FLOWS_REMOVED;
const ETH_P_IP: u16 = bindings::ETH_P_IP as u16;
const NF_STOLEN: u32 = 2;
const PKT_LEN: usize = IPV4_HDR_LEN + UDP_HDR_LEN + work::PACKET_LEN;
const ROCE_PORT: u16 = 4791;
/// An address outside the peer's prefix: RoCE to it is not protected.
const UNPROTECTED: u32 = be([10, 0, 2, 1]);

/// `payload` inside IPv4/UDP from `saddr` to `daddr` port `dport`, as
/// FORWARD sees it (network header at data, a route).
fn ip_packet(saddr: u32, daddr: u32, dport: u16, payload: &[u8]) -> Option<Skb> {
    let mut p = [0u8; PKT_LEN];
    let len = IPV4_HDR_LEN + UDP_HDR_LEN + payload.len();
    let (ip, rest) = p.get_mut(..len)?.split_at_mut(IPV4_HDR_LEN);
    let (udp, data) = rest.split_at_mut(UDP_HDR_LEN);
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    ip[6] = 0x40; // DF
    ip[8] = 64;
    ip[9] = 17; // UDP
    ip[12..16].copy_from_slice(&saddr.to_ne_bytes());
    ip[16..20].copy_from_slice(&daddr.to_ne_bytes());
    let udp_len = (UDP_HDR_LEN + payload.len()) as u16;
    udp[0..2].copy_from_slice(&49_152u16.to_be_bytes());
    udp[2..4].copy_from_slice(&dport.to_be_bytes());
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    data.copy_from_slice(payload);
    let p = p.get_mut(..len)?;
    if !roce::set_ipv4_header_checksum(p) {
        return None;
    }
    let mut skb = Skb::alloc_atomic(128, len as u32)?;
    if !skb.put_data(p) {
        return None;
    }
    skb.reset_network_header();
    skb.set_protocol(ETH_P_IP);
    // SAFETY: a live skb of ours; the route it gets is released with it.
    unsafe { crem_kunit_hook_route(skb.as_ptr()) }.then_some(skb)
}

/// The benchmark's RDMA WRITE packet (`bench_work`) with PSN `psn` from
/// SADDR to DADDR, to UDP port `dport` (4791: RoCEv2).
fn write_to(daddr: u32, dport: u16, psn: u32) -> Option<Skb> {
    let mut pl = work::PACKET;
    work::set_psn(&mut pl, psn);
    ip_packet(SADDR, daddr, dport, &pl)
}

/// A source of the sender flow under test.
fn packet(psn: u32) -> Option<Skb> {
    write_to(DADDR, ROCE_PORT, psn)
}

/// A source of the receiver flow under test: the same WRITE, from the
/// peer's side (DADDR) to SADDR.
fn arriving(psn: u32) -> Option<Skb> {
    let mut pl = work::PACKET;
    work::set_psn(&mut pl, psn);
    ip_packet(DADDR, SADDR, ROCE_PORT, &pl)
}

/// The responder's RDMA ACK (BTH opcode 0x11, AETH "ACK", MSN 0) of PSN
/// `psn`, from DADDR back to SADDR (the requester's QP 0x12).
fn ack(psn: u32) -> Option<Skb> {
    let mut pl = [0u8; 20];
    pl[0] = 0x11;
    pl[2..4].copy_from_slice(&0xffffu16.to_be_bytes());
    pl[7] = 0x12;
    pl[9..12].copy_from_slice(&(psn & 0xff_ffff).to_be_bytes()[1..]);
    // AETH: syndrome 0 (ACK, credit count 0), MSN 0; then the ICRC, which
    // the sender side does not check.
    ip_packet(DADDR, SADDR, ROCE_PORT, &pl)
}

/// Through the FORWARD hook: true if it let the packet pass untouched.
fn accepted(skb: Skb) -> bool {
    // SAFETY: the hook entry takes the packet.
    unsafe { hook_forward(skb.into_raw()) == ffi::NF_ACCEPT }
}

fn info(f: *mut Flow) -> FlowInfo {
    let mut fi = FlowInfo::default();
    // SAFETY: a flow of the fixture (null: none): nothing removes it
    // before the teardown.
    if let Some(f) = unsafe { f.as_ref() } {
        f.info(&mut fi);
    }
    fi
}

/// The fixture's netns state (the initial netns's), live while the module
/// is.
fn fixture() -> &'static netns::NetState {
    // SAFETY: KUnit cases run while the module is loaded, its pernet
    // operations registered.
    unsafe { netns::init_state() }
}

/// The netns's counter `i` (`nl::stat`).
fn dp(i: usize) -> u64 {
    fixture().stat(i)
}

/// The request flow of `side` of the key in the fixture's netns, or
/// null. Found under RCU, used after: nothing removes a flow of the
/// fixture before its teardown (no traffic ends, the collector keeps it
/// 30 s).
fn flow_find(saddr: u32, daddr: u32, dqp: u32, side: u8) -> *mut Flow {
    let key = FlowKey {
        saddr: crate::addr::NetAddr::from_be32(saddr),
        daddr: crate::addr::NetAddr::from_be32(daddr),
        dqp,
        side,
        kind: crate::table::KIND_REQUESTS,
    };
    let g = rcu::read_lock();
    fixture()
        .flows
        .lookup(&key, &g)
        .map_or(core::ptr::null_mut(), |f| core::ptr::from_ref(f).cast_mut())
}

/// flow-new's sender flow (fixed `k`, `m`) of the fixture's addresses and
/// `dqp`, or null.
fn flow_add(dqp: u32, k: u8, m: u8) -> *mut Flow {
    let key = FlowKey {
        saddr: crate::addr::NetAddr::from_be32(SADDR),
        daddr: crate::addr::NetAddr::from_be32(DADDR),
        dqp,
        side: crate::table::SIDE_CSF,
        kind: crate::table::KIND_REQUESTS,
    };
    if crate::create::add(fixture(), &key, true, k, m) != 0 {
        return core::ptr::null_mut();
    }
    flow_find(SADDR, DADDR, dqp, crate::table::SIDE_CSF)
}

/// The first `n` octets of `buf`, a CREM datagram from the fixture's
/// peer, as the socket hands it on (`dispatch::receive`).
fn peer_msg(buf: &[u8], n: u32) {
    let st = fixture();
    if let Some(m) = buf.get(..n as usize) {
        let src = crate::socket::Dest {
            addr: crate::addr::NetAddr::from_be32(PEER),
            port: PORT.to_be(),
            tos: 0,
        };
        crate::dispatch::receive(st, src, m);
    }
}

/// Feeds the flow's HELLO_ACK and then the PARAM_ACK of the configuration
/// it proposes through the socket's dispatch: true once
/// it protects.
fn establish(f: *mut Flow, nonce: u64) -> bool {
    let mut buf = [0u8; 64];
    // The HELLO's RDMA MTU is an estimate (the fixture's flow has no link),
    // echoed.
    let mtu = u16::try_from(info(f).rdma_mtu).unwrap_or(0);
    let Some(n) = hello_ack(nonce, mtu, &mut buf) else {
        return false;
    };
    peer_msg(&buf, n);
    // The PARAM_UPDATE it sent (to an unreachable peer) proposes the
    // configuration its info shows.
    let Some(n) = param_ack(info(f).config_id, &mut buf) else {
        return false;
    };
    peer_msg(&buf, n);
    info(f).state == 1
}

/// Through the hook with the fixture set up and the flow established.
fn measure(f: *mut Flow, m: u8, w: &mut dyn Write) -> bool {
    let n = ROUNDS_PACKETS;
    // True if the packet went on through okfn in the hook (stolen).
    let forward = |skb: Skb| {
        // SAFETY: the hook entry takes the packet (consumed by the fixture's
        // okfn or after the verdict).
        unsafe { hook_forward(skb.into_raw()) == NF_STOLEN }
    };
    // Warm-up: the retention ring filled, slab caches grown.
    for psn in 0..n {
        if let Some(skb) = packet(psn) {
            forward(skb);
        }
    }
    let fails0 = dp(DP_DROP_SEND);
    let before = info(f);
    let mut stolen = 0u32;
    let (hook_ns, skb_ns, made) =
        per_packet_rounds(n, packet, |_, skb| stolen += u32::from(forward(skb)), || {});
    let send_failures = dp(DP_DROP_SEND).wrapping_sub(fails0);
    let fi = info(f);
    let n64 = u64::from(n);
    // flow-stats: sources and repairs of the run.
    let run = |i: usize| fi.counters.get(i).wrapping_sub(before.counters.get(i));
    let (sources, repairs) = (run(flow_stat::SOURCES), run(flow_stat::REPAIRS_SENT));
    let tails = run(flow_stat::TAIL_INFOS);
    // Every block closed in the run has its REPAIRs: m for a full one, and
    // for one the end-of-burst timer closed early (a loaded machine sees a
    // burst end between two packets) its share rounded up, so the blocks
    // of the run's sources bring at least m per 32 of them; the sources of
    // the block still open at the end (fewer than 32) have none yet. So
    // at least m fewer than m per 32 (a run once ended with 255 of 256,
    // its last block open).
    let want = u64::from(m) * (n64 / 32 - 1);
    let coded = if m == 0 {
        repairs == 0
    } else {
        repairs >= want
    };
    // A packet whose block's REPAIRs it triggered went on (okfn) before
    // them: stolen. About one per block, but on a slow kernel (the debug
    // one) the timer sees a burst end between two packets and sends some
    // blocks' REPAIRs itself (at least half are a packet's), and a block's
    // REPAIRs may leave with more than one packet (measured there: 68
    // stolen for 260 REPAIRs, 65 blocks' worth). What always holds: a
    // packet is stolen only for a message it let out, so never more than
    // the REPAIRs and tail notices sent (not every packet, as a packet
    // kept back for no message would be). A tail notice (stop 52) leaves
    // with the first packet after a burst's end when the timer has not
    // sent it yet: on the debug kernel 31 of 2048 packets with m 0.
    let stolen_ok = if m == 0 {
        u64::from(stolen) <= tails
    } else {
        stolen >= n / 64 && u64::from(stolen) <= repairs.saturating_add(tails)
    };
    if made != n || sources != n64 || !coded || !stolen_ok {
        let _ = write!(
            w,
            "hook: {made} packets made, {sources} coded ({n}), {repairs} repairs (at least {want}), {tails} tail notices, {stolen} passed on before their messages (at least {}), {send_failures} send failures",
            if m == 0 { 0 } else { n / 64 }
        );
        return false;
    }
    let _ = write!(
        w,
        "crem-bench: hook_csf_per_packet k=32 m={m} gf={} ns={} skb_ns={skb_ns} packets={n} passed_on_first={stolen} send_failures={send_failures}",
        crate::gf::Coder::chosen().name(),
        hook_ns,
    );
    true
}

/// Runs `body` with the fixture set up (the initial netns a gateway for
/// the peer's prefix), and puts it back after.
fn with_fixture(w: &mut dyn Write, body: impl FnOnce(&mut dyn Write) -> bool) -> bool {
    with_fixture_sized(0, w, body)
}

/// [`with_fixture`] with flows sized for `max_bdp` packets in flight (0:
/// the netns's, the default).
fn with_fixture_sized(
    max_bdp: u32,
    w: &mut dyn Write,
    body: impl FnOnce(&mut dyn Write) -> bool,
) -> bool {
    let st = fixture();
    let (Ok(mut saved), Ok(mut c)) = (
        KBox::new(Config::DEFAULT, GFP_KERNEL),
        KBox::new(Config::DEFAULT, GFP_KERNEL),
    ) else {
        let _ = write!(w, "fixture: out of memory");
        return false;
    };
    // As config-set would: the socket bound, then the configuration
    // committed, under the setter lock; put back as it was after.
    {
        let set = st.settings.setter();
        st.settings.snapshot(&mut saved);
        if let Err(e) = st.socket.reconfigure(st, PORT) {
            let _ = write!(w, "fixture: error {e}");
            return false;
        }
        c.clone_from(&saved);
        (c.role, c.port, c.symbol_len, c.hold_us) = (Role::Gateway, PORT, SYMBOL_LEN, HOLD_US);
        if max_bdp != 0 {
            c.max_bdp = max_bdp;
        }
        c.peers = Config::NO_PEERS;
        let _ = c.peers.push(Peer {
            prefix: Addr::V4(PREFIX.to_ne_bytes()),
            len: 24,
            addr: Addr::V4(PEER.to_ne_bytes()),
        });
        st.commit(&c, &set);
    }
    let ok = body(w);
    // A receiver flow's creation may still be queued: it ends first.
    st.creation.flush();
    {
        let set = st.settings.setter();
        // The fixture's flows go with its socket; the netns's own comes back.
        let _ = st.socket.reconfigure(st, 0);
        let _ = st.socket.reconfigure(st, saved.socket_port());
        st.commit(&saved, &set);
    }
    ok
}

/// Runs `body` on an established sender flow (k = 32, fixed `m`) for the
/// benchmark's packets, in the fixture.
fn with_flow(
    m: u8,
    w: &mut dyn Write,
    body: impl FnOnce(*mut Flow, &mut dyn Write) -> bool,
) -> bool {
    let Ok(dqp) = Bth::parse(&work::PACKET).map(|b| b.dest_qp) else {
        return false;
    };
    with_fixture(w, |w| {
        let f = flow_add(dqp, 32, m);
        // SAFETY: a flow of the fixture's netns: nothing removes it before
        // the teardown (`flow_find`).
        let Some(nonce) = (unsafe { f.as_ref() }).map(|f| f.links().nonce()) else {
            let _ = write!(w, "flow-new failed");
            return false;
        };
        if !establish(f, nonce) {
            let _ = write!(
                w,
                "flow not established: state {}; messages invalid {}, not from a peer {}, for no flow {}",
                info(f).state,
                dp(DP_DROP_MSG_INVALID),
                dp(DP_DROP_MSG_PEER),
                dp(DP_DROP_MSG_NO_FLOW)
            );
            return false;
        }
        body(f, w)
    })
}

/// The fixture netns's RoCEv2 counters: seen at FORWARD, sources.
fn roce_seen() -> (u64, u64) {
    let st = fixture();
    (st.stat(stat::ROCE_FORWARD), st.stat(stat::SOURCES))
}

/// Packets the hook lets pass untouched (`name`): their cost in the hook,
/// each one accepted. `roce`: whether the hook classifies them as RoCEv2
/// sources (the Rust half counts them) or filters them out before.
/// Neither makes a flow.
fn passing(name: &str, roce: bool, make: impl Fn(u32) -> Option<Skb>, w: &mut dyn Write) -> bool {
    with_fixture(w, |w| {
        let mut other = 0u32;
        let seen0 = roce_seen();
        let up0 = dp(DP_FLOW_UP);
        let (ns, skb_ns, made) =
            per_packet_rounds(0, &make, |_, skb| other += u32::from(!accepted(skb)), || {});
        let seen1 = roce_seen();
        let seen = (seen1.0 - seen0.0, seen1.1 - seen0.1);
        let flows = dp(DP_FLOW_UP) - up0;
        let want = if roce { u64::from(made) } else { 0 };
        if made != ROUNDS_PACKETS || other != 0 || seen != (want, want) || flows != 0 {
            let _ = write!(
                w,
                "{name}: {made} packets made, {other} not accepted; {} seen as RoCEv2 and {} as sources ({want}), {flows} flows made",
                seen.0, seen.1
            );
            return false;
        }
        let _ = write!(
            w,
            "crem-bench: {name} ns={ns} skb_ns={skb_ns} packets={made}"
        );
        true
    })
}

/// RDMA ACKs of the reverse direction: each finds the sender flows of its
/// address pair, whose engines release the retained sources it covers.
fn reverse_acks(w: &mut dyn Write) -> bool {
    with_flow(0, w, |f, w| {
        let n = ROUNDS_PACKETS;
        for psn in 0..n {
            if let Some(skb) = packet(psn) {
                // SAFETY: the hook entry takes the packet.
                unsafe { hook_forward(skb.into_raw()) };
            }
        }
        let held = info(f).mem;
        let mut other = 0u32;
        let (ns, skb_ns, made) =
            per_packet_rounds(0, ack, |_, skb| other += u32::from(!accepted(skb)), || {});
        let left = info(f).mem;
        // Every source was acknowledged: its retention is released.
        if made != n || other != 0 || held == 0 || left != 0 {
            let _ = write!(
                w,
                "acks: {made} made, {other} not accepted; retained {held} octets before, {left} after"
            );
            return false;
        }
        let _ = write!(
            w,
            "crem-bench: hook_reverse_ack ns={} skb_ns={skb_ns} packets={made} released={held}",
            ns
        );
        true
    })
}

/// The peer CSF's HELLO for the receiver flow of `arriving`'s packets,
/// then, once a work item has made the flow, its PARAM_UPDATE (k = 32,
/// `m`, T = SYMBOL_LEN from PSN 0): the flow, protecting, or None.
fn receiver(m: u8, w: &mut dyn Write) -> Option<*mut Flow> {
    let dqp = Bth::parse(&work::PACKET).ok()?.dest_qp;
    let hello = hello(DADDR.to_ne_bytes(), SADDR.to_ne_bytes(), dqp, 99);
    let mut buf = [0u8; 128];
    let n = u32::try_from(hello.encode(&mut buf).ok()?).ok()?;
    peer_msg(&buf, n);
    // Without a spare (the pool fills on first use) a work item makes it.
    let mut f = core::ptr::null_mut::<Flow>();
    for _ in 0..200 {
        f = flow_find(DADDR, SADDR, dqp, ffi::crem_side_CREM_SIDE_CRF as u8);
        if !f.is_null() {
            break;
        }
        // SAFETY: a KUnit case runs in process context.
        unsafe { bindings::msleep(10) };
    }
    if f.is_null() {
        let _ = write!(w, "no receiver flow 2 s after its HELLO");
        return None;
    }
    let update = ParamUpdate {
        flow_id: info(f).flow_id,
        config_id: 1,
        scheme: FecScheme::CauchyRs,
        k: 32,
        m,
        t: SYMBOL_LEN,
        effective_psn: Psn::new(0),
    };
    let n = u32::try_from(update.encode(&mut buf).ok()?).ok()?;
    peer_msg(&buf, n);
    let fi = info(f);
    if fi.state != 1 || fi.k != 32 {
        let _ = write!(
            w,
            "receiver flow {} not set up: state {}, k {}",
            fi.flow_id, fi.state, fi.k
        );
        return None;
    }
    Some(f)
}

/// Sources arriving from the peer at a receiver flow (k = 32, m = 4): in
/// order (`gap` false: each kept for decoding and passed on), or each
/// round after a lost first packet (`gap`: the rest of the round held for
/// in-order release, which the hold time ends after the round; only the
/// held ones are counted). `max_bdp`: the flow's sizing (0: the default),
/// printed with its open blocks, which the CRF still searches linearly.
fn crf_per_packet(gap: bool, max_bdp: u32, w: &mut dyn Write) -> bool {
    with_fixture_sized(max_bdp, w, |w| {
        let Some(f) = receiver(4, w) else {
            return false;
        };
        let n = ROUNDS_PACKETS;
        let forward = |skb: Skb| {
            // SAFETY: the hook entry takes the packet.
            unsafe { hook_forward(skb.into_raw()) }
        };
        // Warm-up, in order.
        for psn in 0..n {
            if let Some(skb) = arriving(psn) {
                forward(skb);
            }
        }
        let (mut stolen, mut other) = (0u32, 0u32);
        let make = |psn: u32| {
            // Each round's first packet is lost (never made): the rest
            // wait behind it.
            if gap && psn % ROUND_PACKETS == 0 {
                return None;
            }
            arriving(psn)
        };
        // Before each round, untimed: the last round's held packets are
        // released (their hold time is over).
        let settle = || {
            // SAFETY: a KUnit case runs in process context.
            unsafe { bindings::msleep(if gap { HOLD_US / 1000 + 100 } else { 0 }) }
        };
        let (ns, skb_ns, made) = per_packet_rounds(
            n,
            make,
            |_, skb| match forward(skb) {
                NF_STOLEN => stolen += 1,
                v if v == ffi::NF_ACCEPT => {}
                _ => other += 1,
            },
            settle,
        );
        let want = if gap { n - n / ROUND_PACKETS } else { n };
        let sources = info(f).counters.get(flow_stat::RECEIVED);
        // In order nothing is held. After a gap what follows is held until
        // the hold time ends, which a round outlasts on the normal kernel
        // (all 2040 held) but not always on a loaded debug one (845 of 2040
        // in one run beside `make check`): at least each round's first 16
        // packets. (No upper bound: every packet made follows a gap.)
        let held_ok = if gap {
            stolen >= 16 * (n / ROUND_PACKETS)
        } else {
            stolen == 0
        };
        if made != want || other != 0 || !held_ok || sources < u64::from(n + want) {
            let _ = write!(
                w,
                "crf: {made} made ({want}), {stolen} held, {other} dropped, {sources} sources counted"
            );
            return false;
        }
        let name = if gap {
            "hook_crf_held"
        } else {
            "hook_crf_in_order"
        };
        let _ = write!(
            w,
            "crem-bench: {name} k=32 m=4 ns={} skb_ns={skb_ns} packets={made} held={stolen} max_open_blocks={}",
            ns,
            info(f).limits.map_or(0, |l| l.max_open_blocks)
        );
        true
    })
}

fn hook_per_packet(m: u8, w: &mut dyn Write) -> bool {
    with_flow(m, w, |f, w| measure(f, m, w))
}

#[no_mangle]
extern "C" fn crem_kunit_hook_not_roce(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        passing(
            "hook_not_roce",
            false,
            |psn| write_to(DADDR, ROCE_PORT - 1, psn),
            w,
        )
    })
}

#[no_mangle]
extern "C" fn crem_kunit_hook_unprotected(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        passing(
            "hook_unprotected",
            true,
            |psn| write_to(UNPROTECTED, ROCE_PORT, psn),
            w,
        )
    })
}

#[no_mangle]
extern "C" fn crem_kunit_hook_crf_in_order(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| crf_per_packet(false, 0, w))
}

#[no_mangle]
extern "C" fn crem_kunit_hook_crf_held(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| crf_per_packet(true, 0, w))
}

/// As `hook_crf_in_order`, the flow sized for 6104 packets in flight (10
/// Gbit/s x 20 ms at 4 KiB): 1024 open blocks.
#[no_mangle]
extern "C" fn crem_kunit_hook_crf_in_order_6104(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| crf_per_packet(false, 6104, w))
}

#[no_mangle]
extern "C" fn crem_kunit_hook_crf_held_6104(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| crf_per_packet(true, 6104, w))
}

#[no_mangle]
extern "C" fn crem_kunit_hook_reverse_ack(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, reverse_acks)
}

#[no_mangle]
extern "C" fn crem_kunit_hook_csf_per_packet(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| hook_per_packet(0, w))
}

#[no_mangle]
extern "C" fn crem_kunit_hook_csf_per_packet_m4(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| hook_per_packet(4, w))
}

/// A device that goes away while a flow of its netns is removed but not
/// yet freed (a remover's reap still to come): when the device-gone
/// handler returns, that flow is freed too, so no packet it kept (held
/// ones, retained clones) still points at the device, which is freed
/// after the handler.
fn dev_gone_reaps_removed(w: &mut dyn Write) -> bool {
    with_flow(0, w, |f, w| {
        let st = fixture();
        // SAFETY: the fixture's flow, alive until it is reaped.
        let Some(fr) = (unsafe { f.as_ref() }) else {
            return false;
        };
        let down0 = dp(DP_FLOW_DOWN);
        let removed = {
            let bh = crate::kernel_ext::bh::disable();
            st.remove(fr, crate::removal::CLOSE_NORMAL, &bh)
        };
        // Removed, not reaped: no flow-down yet.
        let pending = dp(DP_FLOW_DOWN) == down0;
        let lo = {
            let g = rcu::read_lock();
            // SAFETY: the initial netns, live while the kernel is.
            unsafe {
                crate::kernel_ext::netdev::NetDevice::by_index(
                    ptr::addr_of_mut!(ffi::init_net),
                    1,
                    &g,
                )
            }
            .map(|d| d.as_ptr())
        };
        let Some(lo) = lo else {
            let _ = write!(w, "no loopback device");
            return false;
        };
        // SAFETY: process context; the handler runs under RTNL as the
        // notifier's does. The initial netns's loopback outlives the case.
        unsafe {
            ffi::rtnl_lock();
            <crate::device::DevGone as crate::kernel_ext::notifier::OnGone>::gone(lo);
            ffi::rtnl_unlock();
        }
        let downs = dp(DP_FLOW_DOWN).wrapping_sub(down0);
        if !removed || !pending || downs != 1 {
            let _ = write!(
                w,
                "removed {removed}, pending {pending}; flow-downs when the device-gone handler returned: {downs} (1)"
            );
            return false;
        }
        true
    })
}

#[no_mangle]
extern "C" fn crem_kunit_hook_dev_gone_reaps(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, dev_gone_reaps_removed)
}

/// The totals (stats-get's sum of every flow's counters) lose nothing of a
/// flow removed and not yet reaped, and count it once: before its reap
/// they are at least what they were with it in the table, and after it
/// too.
fn totals_keep_removed(w: &mut dyn Write) -> bool {
    with_flow(0, w, |f, w| {
        let st = fixture();
        // SAFETY: the fixture's flow, alive until it is reaped.
        let Some(fr) = (unsafe { f.as_ref() }) else {
            return false;
        };
        let mut before = Counters::ZERO;
        st.totals(&mut before, false);
        let own = info(f).counters;
        let removed = {
            let bh = crate::kernel_ext::bh::disable();
            st.remove(fr, crate::removal::CLOSE_NORMAL, &bh)
        };
        let mut pending = Counters::ZERO;
        st.totals(&mut pending, false);
        st.reap(false);
        let mut after = Counters::ZERO;
        st.totals(&mut after, false);
        // Counters only grow (the flow's timer may count meanwhile).
        let lost =
            |a: &Counters, b: &Counters| a.iter().zip(b.iter()).filter(|(x, y)| y < x).count();
        let (lost_pending, lost_after) = (lost(&before, &pending), lost(&pending, &after));
        let counted = own.iter().filter(|v| **v != 0).count();
        if !removed || counted == 0 || lost_pending != 0 || lost_after != 0 {
            let _ = write!(
                w,
                "removed {removed}; the flow counted in {counted} counters; counters lower while removed: {lost_pending}, after its reap: {lost_after}"
            );
            return false;
        }
        true
    })
}

#[no_mangle]
extern "C" fn crem_kunit_hook_totals_keep_removed(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, totals_keep_removed)
}

/// A Path Reporter whose role is disabled (the fixture's netns with role
/// disabled and report on: its socket still bound, its FORWARD hook
/// registered for the reports it forwards) lets RoCEv2 through its
/// FORWARD hook untouched: every packet accepted, none counted as seen,
/// no flow made; and a peer's HELLO to its socket makes no flow either
/// (drop-msg-no-flow).
fn reporter_only_passes(w: &mut dyn Write) -> bool {
    with_fixture(w, |w| {
        let st = fixture();
        let Ok(mut c) = KBox::new(Config::DEFAULT, GFP_KERNEL) else {
            return false;
        };
        {
            let set = st.settings.setter();
            st.settings.snapshot(&mut c);
            (c.role, c.report) = (Role::Disabled, true);
            st.commit(&c, &set);
        }
        let (seen0, up0, no_flow0) = (roce_seen(), dp(DP_FLOW_UP), dp(DP_DROP_MSG_NO_FLOW));
        let skip0 = dp(stat::SKIP_BRIDGED) + dp(stat::SKIP_IPV6_EXT) + dp(stat::MALFORMED);
        let mut other = 0u32;
        for psn in 0..64 {
            for skb in [packet(psn), arriving(psn), ack(psn)].into_iter().flatten() {
                other += u32::from(!accepted(skb));
            }
        }
        let mut buf = [0u8; 128];
        let Ok(dqp) = Bth::parse(&work::PACKET).map(|b| b.dest_qp) else {
            return false;
        };
        let h = hello(DADDR.to_ne_bytes(), SADDR.to_ne_bytes(), dqp, 99);
        if let Some(n) = h.encode(&mut buf).ok().and_then(|n| u32::try_from(n).ok()) {
            peer_msg(&buf, n);
        }
        st.creation.flush();
        let skip = dp(stat::SKIP_BRIDGED) + dp(stat::SKIP_IPV6_EXT) + dp(stat::MALFORMED);
        let (seen, flows) = (roce_seen(), dp(DP_FLOW_UP) - up0);
        let no_flow = dp(DP_DROP_MSG_NO_FLOW) - no_flow0;
        if other != 0 || seen != seen0 || skip != skip0 || flows != 0 || no_flow != 1 {
            let _ = write!(
                w,
                "{other} not accepted; seen {seen:?} (was {seen0:?}), other counters {skip} (was {skip0}); {flows} flows made; HELLO for no flow: {no_flow} (1)"
            );
            return false;
        }
        true
    })
}

#[no_mangle]
extern "C" fn crem_kunit_hook_reporter_only_passes(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, reporter_only_passes)
}
