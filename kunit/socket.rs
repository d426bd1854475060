// SPDX-License-Identifier: GPL-2.0
//! The CREM socket (`rust/socket.rs`), on netns states of their own: a
//! port binds, the same port again is no change; a port another socket has
//! is refused (-EADDRINUSE) and the old socket keeps serving; datagrams
//! sent through the loopback come back through the udp-tunnel receive
//! hook to the dispatch, each counted once by type in and out and by what
//! became of it, after the socket moved to another port; an unbound
//! socket's send is a counted drop; flow-new is refused (-ENOTCONN) until a
//! socket is bound; a socket left bound is released with its state
//! (kmemleak checks on the debug kernel). And a receiver flow answers to the
//! port its HELLO came from.

use super::flow::{hello, hello_ack, param_ack};
use super::pool::{host_cfg, with_netns};
use super::{run, Checks};
use crate::addr::NetAddr;
use crate::create;
use crate::crem_core::ctl::{Addr, Config, Peer};
use crate::crem_core::nl::stat;
use crate::host::msg_slot;
use crate::kernel_ext::bh;
use crate::netns::NetState;
use crate::socket::Dest;
use crate::table::{FlowKey, SIDE_CSF};
use core::ffi::{c_char, c_int};
use core::fmt::Write;
use kernel::bindings;

/// Ports nothing else in the KUnit VM binds (the hook fixture's is 47011).
const PORT: u16 = 47_021;
const PORT2: u16 = 47_022;
const EADDRINUSE: c_int = -(bindings::EADDRINUSE as c_int);
const ENOTCONN: c_int = -(bindings::ENOTCONN as c_int);

/// A state's CREM datagrams of msgs-by-type `slot`: received (`dir` 0)
/// or sent (1); -1 for no slot.
fn msgs(st: &NetState, dir: usize, slot: usize) -> i64 {
    match st.msg_counts().get(dir).and_then(|d| d.get(slot)) {
        Some(v) => *v as i64,
        None => -1,
    }
}

/// The loopback address.
const LO: [u8; 4] = [127, 0, 0, 1];

/// A host's configuration with room for flows, where 127.0.0.1 is the peer
/// of 10.9.0.0/24 (what it sends is decoded).
fn lo_peer_cfg() -> Config {
    let mut cfg = host_cfg();
    (cfg.max_flows, cfg.max_memory) = (4, 64 << 20);
    let _ = cfg.peers.push(Peer {
        prefix: Addr::V4([10, 9, 0, 0]),
        len: 24,
        addr: Addr::V4(LO),
    });
    cfg
}

fn socket_binds_and_receives(w: &mut dyn Write) -> bool {
    let (lo, cfg) = (LO, lo_peer_cfg());
    with_netns(&cfg, w, |st, w| {
        let dp = |i: usize| st.stat(i) as i64;
        let (inn, out) = (|i: usize| msgs(st, 0, i), |i: usize| msgs(st, 1, i));
        socket_in(st, NetAddr::from_v4(lo), &dp, &inn, &out, w)
    })
}

fn socket_in(
    st: &NetState,
    lo: NetAddr,
    dp: &dyn Fn(usize) -> i64,
    msg_in: &dyn Fn(usize) -> i64,
    msg_out: &dyn Fn(usize) -> i64,
    w: &mut dyn Write,
) -> bool {
    let s = &st.socket;
    // flow-new before the socket is bound: refused, nothing could be sent
    // (a peer is configured for the destination, 10.9.0.7).
    let mut rq = create::request_for(
        FlowKey {
            saddr: NetAddr::from_v4([10, 9, 1, 1]),
            daddr: NetAddr::from_v4([10, 9, 0, 7]),
            dqp: 1,
            side: SIDE_CSF,
            kind: 0,
        },
        NetAddr::NONE,
        0,
        64,
    );
    rq.fixed = false;
    let unbound = create::add(st, &rq.key.into(), rq.fixed, rq.k, rq.m);
    // Another state: refused the port `st` has, it binds a free one, which
    // `st` cannot then take, keeping its own.
    let mut other = (false, false, false);
    let first = (s.reconfigure(st, PORT), s.bound(), s.reconfigure(st, PORT));
    let mut sink = NoWrite;
    with_netns(&host_cfg(), &mut sink, |o, _| {
        let os = &o.socket;
        other.0 = os.reconfigure(o, PORT) == Err(EADDRINUSE) && !os.bound();
        other.1 = os.reconfigure(o, PORT2) == Ok(()) && os.bound();
        other.2 = s.reconfigure(st, PORT2) == Err(EADDRINUSE) && s.bound();
        os.reconfigure(o, 0) == Ok(()) && !os.bound()
    });
    // The port freed, `st` moves to it: the new socket bound, the old one
    // closed (the loopback datagrams below go to the new one).
    let moved = s.reconfigure(st, PORT2) == Ok(()) && s.bound();
    let mut c = Checks::new(w);
    c.check(unbound == ENOTCONN, "flow-new without a socket");
    if unbound != ENOTCONN {
        let _ = write!(c.w, "flow-new gave {unbound}; ");
    }
    c.check(
        first == (Ok(()), true, Ok(())),
        "binding a free port (twice)",
    );
    c.check(moved, "moving to another port");
    c.check(other.0, "a second socket on a bound port");
    c.check(other.1, "the second state on a free port");
    c.check(
        other.2,
        "the old socket did not keep serving when the new port was taken",
    );
    // Two datagrams to ourselves through the loopback: a PARAM_ACK for no
    // flow here, and three octets that are no message.
    let mut buf = [0u8; 64];
    let ack = param_ack(3, &mut buf).and_then(|n| buf.get(..n as usize));
    let junk = [0xffu8, 1, 2];
    // (Without a bound socket nothing below could pass.)
    let (Some(ack), true) = (ack, c.ok) else {
        c.check(
            false,
            "no PARAM_ACK, or the binding failed: no datagrams sent",
        );
        return c.ok;
    };
    let (a, j) = (msg_slot(ack), msg_slot(&junk));
    c.check(a != j, "the two datagrams' slots");
    let to = Dest {
        addr: lo,
        port: 0,
        tos: 0,
    };
    let sent = {
        let bh = bh::disable();
        (s.send(st, &bh, to, ack), s.send(st, &bh, to, &junk))
    };
    c.check(sent == (true, true), "not sent");
    // Received in softirq: up to 2 s (TCG).
    for _ in 0..200 {
        if dp(stat::MSGS_IN) >= 2 {
            break;
        }
        // SAFETY: KUnit cases run in process context.
        unsafe { bindings::msleep(10) };
    }
    let out = (dp(stat::MSGS_OUT), msg_out(a), msg_out(j));
    c.check(out == (2, 1, 1), "sent: msgs-out, by type");
    let inn = (dp(stat::MSGS_IN), msg_in(a), msg_in(j));
    c.check(inn == (2, 1, 1), "received: msgs-in, by type (is lo up?)");
    if inn != (2, 1, 1) {
        let _ = write!(c.w, "in {inn:?} out {out:?}; ");
    }
    let fate = (
        dp(stat::DROP_MSG_NO_FLOW),
        dp(stat::DROP_MSG_INVALID),
        dp(stat::DROP_MSG_PEER),
        dp(stat::DROP_SEND),
    );
    c.check(
        fate == (1, 1, 0, 0),
        "what became of them (no-flow, invalid, not-peer, send)",
    );
    if fate != (1, 1, 0, 0) {
        let _ = write!(c.w, "{fate:?}; ");
    }
    // Unbound: nothing sent, counted.
    c.check(s.reconfigure(st, 0) == Ok(()) && !s.bound(), "unbinding");
    let sent = {
        let bh = bh::disable();
        s.send(st, &bh, to, ack)
    };
    c.check(!sent && dp(stat::DROP_SEND) == 1, "a send without a socket");
    // Left bound: released with the state.
    c.check(s.reconfigure(st, PORT) == Ok(()), "binding again");
    // With a socket, flow-new makes its flow (removed again: the state
    // frees an empty table).
    let made = create::add(st, &rq.key.into(), rq.fixed, rq.k, rq.m);
    c.check(made == 0, "flow-new with a socket");
    if made != 0 {
        let _ = write!(c.w, "flow-new gave {made}; ");
    }
    super::create::empty(st);
    c.ok
}

/// The draft: "the CRF sends to the address and port from which HELLO
/// came". A HELLO from a socket on another port than ours (state `b` on
/// PORT2, to `a` on PORT) makes `a` a receiver flow whose HELLO_ACK goes
/// back to PORT2: `b` receives it, `a` does not (before, every message went
/// to the sender's own port: `a` answered itself).
fn socket_answers_hello_port(w: &mut dyn Write) -> bool {
    let (lo, cfg) = (LO, lo_peer_cfg());
    let hello = hello([10, 9, 0, 1], [10, 9, 1, 1], 0x33, 0x5eed_0001);
    let (mut hb, mut ab) = ([0u8; 64], [0u8; 64]);
    let (Ok(n), Some(_)) = (hello.encode(&mut hb), hello_ack(1, 1024, &mut ab)) else {
        let _ = write!(w, "encoding");
        return false;
    };
    // Where a HELLO_ACK is counted.
    let ack_slot = msg_slot(&ab);
    let mut sink = NoWrite;
    let mut got = None;
    with_netns(&cfg, w, |a, w| {
        let mut c = Checks::new(w);
        c.check(a.socket.reconfigure(a, PORT) == Ok(()), "binding a");
        with_netns(&host_cfg(), &mut sink, |b, _| {
            let bound = b.socket.reconfigure(b, PORT2) == Ok(());
            let to = Dest {
                addr: NetAddr::from_v4(lo),
                port: PORT.to_be(),
                tos: 0,
            };
            let sent = {
                let bh = bh::disable();
                b.socket.send(b, &bh, to, hb.get(..n).unwrap_or(&[]))
            };
            // The flow is made by a work item (no spare yet), then answers.
            for _ in 0..200 {
                if msgs(b, 0, ack_slot) + msgs(a, 0, ack_slot) > 0 {
                    break;
                }
                // SAFETY: KUnit cases run in process context.
                unsafe { bindings::msleep(10) };
            }
            got = Some((bound, sent, msgs(b, 0, ack_slot)));
            let _ = b.socket.reconfigure(b, 0);
            true
        });
        a.creation.flush();
        let b_acks = got.map_or(-1, |g| g.2);
        let acks = (b_acks, msgs(a, 0, ack_slot));
        c.check(
            got.is_some_and(|g| g.0 && g.1),
            "b bound and sent its HELLO",
        );
        c.check(acks == (1, 0), "the HELLO_ACK went to the HELLO's port");
        if acks != (1, 0) {
            let _ = write!(c.w, "HELLO_ACKs at b, at a: {acks:?}; ");
        }
        super::create::empty(a);
        c.ok
    })
}

#[no_mangle]
extern "C" fn crem_kunit_socket_answers_hello_port(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, socket_answers_hello_port)
}

/// A `Write` that keeps nothing (the inner state's messages: its result
/// is checked by the caller).
struct NoWrite;

impl Write for NoWrite {
    fn write_str(&mut self, _: &str) -> core::fmt::Result {
        Ok(())
    }
}

#[no_mangle]
extern "C" fn crem_kunit_socket_binds_and_receives(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, socket_binds_and_receives)
}
