// SPDX-License-Identifier: GPL-2.0
//! The CREM socket (`rust/socket.rs`), on netns states of their own: a
//! port binds, the same port again is no change; a port another socket has
//! is refused (-EADDRINUSE) and the old socket keeps serving; datagrams
//! sent through the loopback come back through the udp-tunnel receive
//! hook to the dispatch, each counted once by type in and out and by what
//! became of it; an unbound socket's send is a counted drop; a socket left
//! bound is released with its state (kmemleak checks on the debug kernel).

use super::flow::param_ack;
use super::pool::{host_cfg, with_netns, with_netns_counted};
use super::{run, Checks};
use crate::ffi;
use crate::host::{msg_slot, MSG_SLOTS};
use crate::kernel_ext::bh;
use crate::netns::NetState;
use core::ffi::{c_char, c_int};
use core::fmt::Write;
use core::sync::atomic::{AtomicI64, Ordering};
use kernel::bindings;

/// Ports nothing else in the KUnit VM binds (the hook fixture's is 47011).
const PORT: u16 = 47_021;
const PORT2: u16 = 47_022;
const NR_DP: usize = ffi::crem_dp_CREM_NR_DP as usize;
const EADDRINUSE: c_int = -(bindings::EADDRINUSE as c_int);

/// C's counters of a netns, as `struct crem_net` has them.
struct Counts {
    dp: [bindings::atomic64_t; NR_DP],
    msg_in: [bindings::atomic64_t; MSG_SLOTS],
    msg_out: [bindings::atomic64_t; MSG_SLOTS],
}

/// Reads counter `i` of one of `Counts`' arrays, through a pointer to it.
fn read(a: *const bindings::atomic64_t, n: usize, i: usize) -> i64 {
    if i >= n {
        return -1;
    }
    // SAFETY: `a` is an array of `n` counters that outlives the call,
    // changed only atomically (an `atomic64_t` is an `AtomicI64`).
    unsafe { (*a.add(i).cast::<AtomicI64>()).load(Ordering::Relaxed) }
}

fn socket_binds_and_receives(w: &mut dyn Write) -> bool {
    let lo = [127, 0, 0, 1];
    // 127.0.0.1 is the peer of 10.9.0.0/24: what it sends is decoded.
    let mut cfg = host_cfg();
    cfg.n_peers = 1;
    let p = &mut cfg.peers[0];
    (p.prefix.len, p.prefix_len, p.addr.len) = (4, 24, 4);
    p.prefix.a[..4].copy_from_slice(&[10, 9, 0, 0]);
    p.addr.a[..4].copy_from_slice(&lo);
    // SAFETY: C's counters, integers, for which all zeros is valid.
    let mut counts: Counts = unsafe { core::mem::zeroed() };
    let k: *mut Counts = &mut counts;
    // SAFETY: `k` points to `counts`, which outlives the state; only
    // pointers to its arrays are taken, never references.
    let (dp, min, mout) = unsafe {
        (
            core::ptr::addr_of_mut!((*k).dp).cast::<bindings::atomic64_t>(),
            core::ptr::addr_of_mut!((*k).msg_in).cast::<bindings::atomic64_t>(),
            core::ptr::addr_of_mut!((*k).msg_out).cast::<bindings::atomic64_t>(),
        )
    };
    with_netns_counted(&cfg, dp, min, mout, w, |st, w| {
        let dp = |i: u32| read(dp, NR_DP, i as usize);
        let (inn, out) = (
            |i: usize| read(min, MSG_SLOTS, i),
            |i: usize| read(mout, MSG_SLOTS, i),
        );
        socket_in(st, u32::from_ne_bytes(lo), &dp, &inn, &out, w)
    })
}

fn socket_in(
    st: &NetState,
    lo: u32,
    dp: &dyn Fn(u32) -> i64,
    msg_in: &dyn Fn(usize) -> i64,
    msg_out: &dyn Fn(usize) -> i64,
    w: &mut dyn Write,
) -> bool {
    let s = &st.socket;
    // Another state: refused the port `st` has, it binds a free one, which
    // `st` cannot then take, keeping its own.
    let mut other = (false, false, false);
    let first = (s.reconfigure(st, PORT), s.bound(), s.reconfigure(st, PORT));
    let mut sink = NoWrite;
    with_netns(&host_cfg(), core::ptr::null_mut(), &mut sink, |o, _| {
        let os = &o.socket;
        other.0 = os.reconfigure(o, PORT) == Err(EADDRINUSE) && !os.bound();
        other.1 = os.reconfigure(o, PORT2) == Ok(()) && os.bound();
        other.2 = s.reconfigure(st, PORT2) == Err(EADDRINUSE) && s.bound();
        os.reconfigure(o, 0) == Ok(()) && !os.bound()
    });
    let mut c = Checks::new(w);
    c.check(
        first == (Ok(()), true, Ok(())),
        "binding a free port (twice)",
    );
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
    let (Some(ack), true) = (ack, c.ok) else {
        c.check(false, "no PARAM_ACK");
        return c.ok;
    };
    let (a, j) = (msg_slot(ack), msg_slot(&junk));
    c.check(a != j, "the two datagrams' slots");
    let sent = {
        let bh = bh::disable();
        (s.send(st, &bh, lo, 0, ack), s.send(st, &bh, lo, 0, &junk))
    };
    c.check(sent == (true, true), "not sent");
    // Received in softirq: up to 2 s (TCG).
    for _ in 0..200 {
        if dp(ffi::crem_dp_CREM_EV_MSG_IN) >= 2 {
            break;
        }
        // SAFETY: KUnit cases run in process context.
        unsafe { bindings::msleep(10) };
    }
    let out = (dp(ffi::crem_dp_CREM_EV_MSG_OUT), msg_out(a), msg_out(j));
    c.check(out == (2, 1, 1), "sent: msgs-out, by type");
    let inn = (dp(ffi::crem_dp_CREM_EV_MSG_IN), msg_in(a), msg_in(j));
    c.check(inn == (2, 1, 1), "received: msgs-in, by type (is lo up?)");
    if inn != (2, 1, 1) {
        let _ = write!(c.w, "in {inn:?} out {out:?}; ");
    }
    let fate = (
        dp(ffi::crem_dp_CREM_DROP_MSG_NO_FLOW),
        dp(ffi::crem_dp_CREM_DROP_MSG_INVALID),
        dp(ffi::crem_dp_CREM_DROP_MSG_PEER),
        dp(ffi::crem_dp_CREM_DROP_SEND),
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
        s.send(st, &bh, lo, 0, ack)
    };
    c.check(
        !sent && dp(ffi::crem_dp_CREM_DROP_SEND) == 1,
        "a send without a socket",
    );
    // Left bound: released with the state.
    c.check(s.reconfigure(st, PORT) == Ok(()), "binding again");
    c.ok
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
