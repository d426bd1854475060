// SPDX-License-Identifier: GPL-2.0
//! A netns's CREM socket: an in-kernel UDP socket on the configured CREM
//! port (none until a role and a port are configured). Its datagrams arrive
//! through the udp-tunnel receive hook in softirq and go to
//! `dispatch.rs`; flows send their messages from whatever context their
//! engines run in, at once, or onto an [`Outbox`] the hook flushes once the
//! packet that caused them has gone on.
//!
//! The socket is published for those readers as an RCU pointer
//! ([`Socket::get`], under a [`Bh`]); the one writer at a time is
//! [`Socket::reconfigure`] (config-set, netns exit), which binds the new
//! socket before the old one goes, so that a port that cannot be bound
//! leaves the old one serving.

use crate::addr::NetAddr;
use crate::crem_core::nl::stat;
use crate::dispatch;
use crate::ffi;
use crate::flow::Flow;
use crate::host::msg_slot;
use crate::kernel_ext::bh::Bh;
use crate::kernel_ext::skb::{DropReason, Lent, Skb};
use crate::kernel_ext::udp_tunnel::{self, TunnelSock};
use crate::netns::{self, NetState};
use core::ffi::c_int;
use core::sync::atomic::{AtomicPtr, AtomicU16, Ordering};
use kernel::bindings::{self, sk_buff_head};
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::Mutex;

/// Room before a message for the UDP, IP (IPv6's 40 octets at most) and
/// link headers.
const HEADROOM: u32 = ffi::LL_MAX_HEADER + 40 + 8;
/// The UDP header a received datagram's data starts with.
const UDP_HLEN: usize = 8;

/// The netns's socket (see the module docs).
#[pin_data(PinnedDrop)]
pub(crate) struct Socket {
    /// The open socket, changed by one writer at a time (process context).
    #[pin]
    owner: Mutex<Option<KBox<TunnelSock>>>,
    /// `owner`'s socket as readers see it: set once it receives, cleared
    /// (and a grace period waited for) before it is released.
    cur: AtomicPtr<TunnelSock>,
    /// Its port (host order; 0: none), for the datapath's checks.
    port: AtomicU16,
}

impl Socket {
    pub(crate) fn new() -> impl PinInit<Self> {
        let owner = new_mutex!(None, "crem_socket");
        // SAFETY: each field is initialised in place at `slot`, pinned
        // there; neither initialiser can fail (`Infallible`), so none is
        // left to undo. (Written out rather than with `pin_init!`, whose
        // type-checking closure leaves a dead panic call in the object,
        // which vm/panic-sites.py would count; see `Pool::new`.)
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Self| {
                owner.__pinned_init(core::ptr::addr_of_mut!((*slot).owner))?;
                core::ptr::addr_of_mut!((*slot).cur).write(AtomicPtr::new(core::ptr::null_mut()));
                core::ptr::addr_of_mut!((*slot).port).write(AtomicU16::new(0));
                Ok(())
            })
        }
    }

    /// The socket, if one is bound (under RCU: BH off).
    fn get<'a>(&'a self, _bh: &'a Bh) -> Option<&'a TunnelSock> {
        // SAFETY: a published socket is released only after it is
        // unpublished and a grace period has passed (`reconfigure`), which
        // this BH-off section, an RCU reader, holds back.
        unsafe { self.cur.load(Ordering::Acquire).as_ref() }
    }

    /// The port a socket is bound to now, if one is (a hint, as `bound`).
    pub(crate) fn port(&self) -> Option<u16> {
        Some(self.port.load(Ordering::Relaxed)).filter(|&p| p != 0)
    }

    /// Whether a socket is bound now (a hint: it may change at once).
    pub(crate) fn bound(&self) -> bool {
        !self.cur.load(Ordering::Relaxed).is_null()
    }

    /// Binds the socket of `st` to `port` (0: none), in process context,
    /// one caller at a time (under the netns's setter lock: config-set
    /// serialises its own with the commit that follows, netns exit). The new socket is bound before the old one
    /// goes: if `port` cannot be bound (in use, say) the old one keeps
    /// serving and the errno is returned. The old socket's flows go with
    /// it: they send through it.
    pub(crate) fn reconfigure(&self, st: &NetState, port: u16) -> Result<(), c_int> {
        let mut g = self.owner.lock();
        let same = match &*g {
            Some(s) => s.port() == port,
            None => port == 0,
        };
        if same {
            return Ok(());
        }
        let new = match port {
            0 => None,
            _ => Some(
                KBox::new(TunnelSock::bind(st.net(), port)?, GFP_KERNEL)
                    .map_err(|_| -(bindings::ENOMEM as c_int))?,
            ),
        };
        if let Some(old) = g.take() {
            // Unpublished, and deaf (a HELLO now would make a flow the
            // flush below could miss), before its flows go.
            self.cur.store(core::ptr::null_mut(), Ordering::Release);
            self.port.store(0, Ordering::Relaxed);
            old.stop_receiving();
            // SAFETY: process context, no spinlock held.
            unsafe { ffi::synchronize_net() };
            st.flush_flows(true);
            drop(old);
        }
        if let Some(new) = new {
            // SAFETY: `st` outlives its socket: the netns's exit closes it
            // (`netns::exit` binds it to 0) before the state goes,
            // and the state's drop would release it too (its `owner`).
            unsafe { new.receive(st.net(), (st as *const NetState).cast_mut().cast(), receive) };
            self.cur.store(
                core::ptr::from_ref::<TunnelSock>(&new).cast_mut(),
                Ordering::Release,
            );
            self.port.store(port, Ordering::Relaxed);
            *g = Some(new);
        }
        Ok(())
    }

    /// Sends message `msg` to `to` at once; counted in `st` as sent, or as
    /// a send drop.
    pub(crate) fn send(&self, st: &NetState, bh: &Bh, to: Dest, msg: &[u8]) -> bool {
        message(st, msg).is_some_and(|skb| self.xmit(st, bh, to, skb))
    }

    /// Sends message `skb` to `to`; counted in `st` (by its type) as sent,
    /// or as a send drop.
    fn xmit(&self, st: &NetState, bh: &Bh, to: Dest, skb: Skb) -> bool {
        let slot = msg_slot(skb.head());
        let sent = match (self.get(bh), to.addr.be32()) {
            (Some(s), Some(a)) => s.xmit(st.net(), skb, a, to.port, to.tos).is_ok(),
            // An IPv6 peer: from the IPv6 socket (none without IPv6 in
            // the kernel: dropped there, counted here).
            (Some(s), None) => s
                .xmit6(st.net(), skb, to.addr.octets(), to.port, to.tos)
                .is_ok(),
            (None, _) => {
                skb.drop_reason(DropReason::SocketClose);
                false
            }
        };
        if sent {
            st.count(stat::MSGS_OUT);
            st.count_msg_out(slot);
        } else {
            st.count(stat::DROP_SEND);
        }
        sent
    }

    /// Sends what was queued on `q` (by the hook's sender flows while it
    /// processed a packet, now that the packet has gone on; by the Path
    /// Reporter's timer): how many were sent, and how many not.
    pub(crate) fn flush(&self, st: &NetState, bh: &Bh, q: &mut Outbox) -> (u64, u64) {
        let (mut sent, mut failed) = (0u64, 0u64);
        while let Some(skb) = q.pop() {
            let to = Outbox::dest(&skb);
            match self.xmit(st, bh, to, skb) {
                true => sent = sent.wrapping_add(1),
                false => failed = failed.wrapping_add(1),
            }
        }
        (sent, failed)
    }
}

#[pinned_drop]
impl PinnedDrop for Socket {
    fn drop(self: Pin<&mut Self>) {
        // Normally closed already (netns exit). If not, unpublished first,
        // so that no sender finds it once it is released (`owner`'s drop,
        // after this).
        if !self
            .cur
            .swap(core::ptr::null_mut(), Ordering::AcqRel)
            .is_null()
        {
            // SAFETY: the state's drop runs in process context.
            unsafe { ffi::synchronize_net() };
        }
    }
}

/// A message in an skb of its own, with room for its headers (and, in
/// the test build, the fault injection's damage); None, counted in `st` as
/// a send drop, if out of memory.
fn message(st: &NetState, msg: &[u8]) -> Option<Skb> {
    let skb = u32::try_from(msg.len())
        .ok()
        .and_then(|n| Skb::alloc_atomic(HEADROOM, n))
        .and_then(|mut skb| skb.put_data(msg).then_some(skb));
    let Some(mut skb) = skb else {
        st.count(stat::DROP_SEND);
        return None;
    };
    fault::corrupt(&mut skb);
    Some(skb)
}

/// Messages a packet's processing caused, queued until the packet has gone
/// on (`hook.rs`), each with its [`Dest`] in its control block.
pub(crate) struct Outbox {
    q: sk_buff_head,
}

/// Where a message goes: an address and UDP port (network order; port 0:
/// ours, the CREM port of both ends unless a peer answered from another),
/// with an IP TOS. 20 octets: it rides in an skb's control block.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dest {
    pub(crate) addr: NetAddr,
    pub(crate) port: u16,
    pub(crate) tos: u8,
}

impl Dest {
    /// No destination (a message fed to a flow of this node).
    pub(crate) const NONE: Dest = Dest {
        addr: NetAddr::NONE,
        port: 0,
        tos: 0,
    };
}

impl Outbox {
    /// An empty queue, to be used where it is (its head points to itself).
    ///
    /// # Safety
    ///
    /// The returned value is initialised by [`Outbox::init`] before use and
    /// does not move after that.
    pub(crate) unsafe fn uninit() -> Self {
        // SAFETY: a C list head, all zeros until `init`.
        Outbox {
            q: unsafe { core::mem::zeroed() },
        }
    }

    /// Makes the queue empty where it is.
    pub(crate) fn init(&mut self) {
        // SAFETY: our queue head, not in use.
        unsafe { ffi::crem_h_skb_queue_head_init(&mut self.q) };
    }

    /// The queue, for the flow calls that fill it.
    pub(crate) fn as_ptr(&mut self) -> *mut sk_buff_head {
        &mut self.q
    }

    pub(crate) fn is_empty(&self) -> bool {
        // SAFETY: our queue, initialised (`init`'s contract).
        unsafe { ffi::crem_h_skb_queue_empty(&self.q) }
    }

    /// The next queued message, taken off the queue.
    pub(crate) fn pop(&mut self) -> Option<Skb> {
        // SAFETY: our queue, whose skbs it owns (`push`).
        unsafe { Skb::from_raw(ffi::crem_h_skb_dequeue(&mut self.q)) }
    }

    /// Queues `skb` for `to`.
    ///
    /// # Safety
    ///
    /// `q` is an initialised [`Outbox`]'s queue, used by this CPU alone.
    unsafe fn push(q: *mut sk_buff_head, to: Dest, skb: Skb) {
        const { assert!(core::mem::size_of::<Dest>() <= 48) };
        // SAFETY: the control block is the skb's own (48 octets, ours
        // while we own it), `Dest` fits in it and is `Copy`.
        unsafe { core::ptr::write_unaligned((*skb.as_ptr()).cb.as_mut_ptr().cast::<Dest>(), to) };
        // SAFETY: the caller's contract; the queue owns the skb from now on.
        unsafe { ffi::crem_h_skb_queue_tail(q, skb.into_raw()) };
    }

    /// Queues message `msg` for `to`, in an skb of its own; false (counted
    /// in `st` as a send drop) if out of memory.
    pub(crate) fn queue(&mut self, st: &NetState, to: Dest, msg: &[u8]) -> bool {
        let Some(skb) = message(st, msg) else {
            return false;
        };
        // SAFETY: our queue, initialised (`init`'s contract), and `&mut
        // self` makes this its only user.
        unsafe { Outbox::push(&mut self.q, to, skb) };
        true
    }

    /// Where a queued message goes.
    fn dest(skb: &Skb) -> Dest {
        // SAFETY: only `push` queues skbs, with a `Dest` in their control
        // block.
        unsafe { core::ptr::read_unaligned((*skb.as_ptr()).cb.as_ptr().cast::<Dest>()) }
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        while let Some(skb) = self.pop() {
            skb.drop_reason(DropReason::QueuePurge);
        }
    }
}

/// A flow's message `msg`, with `tos`, to its peer (the port it answered
/// from): at once, or onto `defer` (if not null) for the hook to flush. False if it could not be
/// (counted by the caller for the flow; a failed send also for the netns).
/// The flow's `FlowOps::NETNS` send.
///
/// # Safety
///
/// Called under the flow's lock (`bh`); `defer` is null or an
/// initialised [`Outbox`]'s queue of this CPU's caller.
pub(crate) unsafe fn flow_send(
    f: &Flow,
    bh: &Bh,
    tos: u8,
    defer: *mut sk_buff_head,
    msg: &[u8],
) -> bool {
    let Some(st) = f.netns() else {
        return false;
    };
    let to = Dest {
        addr: crate::table::InTable::links(f).peer(),
        port: f.peer_port(),
        tos,
    };
    if defer.is_null() {
        return st.socket.send(st, bh, to, msg);
    }
    let Some(skb) = message(st, msg) else {
        return false;
    };
    // SAFETY: the caller's contract.
    unsafe { Outbox::push(defer, to, skb) };
    true
}

/// A datagram of the socket whose user data is a netns state
/// (`Socket::reconfigure`), in softirq: its UDP payload, whole and linear,
/// with its source address and port and IP TOS (its ECN too: a CE-marked
/// REPAIR is the draft's congestion signal for the repair path), to
/// `dispatch.rs`.
unsafe extern "C" fn receive(sk: *mut bindings::sock, skb: *mut bindings::sk_buff) -> c_int {
    // SAFETY: the socket hands us its reference to the datagram.
    let Some(mut skb) = (unsafe { Skb::from_raw(skb) }) else {
        return 0;
    };
    // SAFETY: a receive callback of `sk`; its user data, if not null, is
    // the live netns state it was set to (`reconfigure`).
    let Some(st) = (unsafe { netns::state_opt(udp_tunnel::user_data(sk)) }) else {
        skb.drop_reason(DropReason::SocketClose);
        return 0;
    };
    match source(&mut skb) {
        Ok(src) => {
            st.count(stat::MSGS_IN);
            dispatch::receive(st, src, skb.head().get(UDP_HLEN..).unwrap_or(&[]));
            // Consumed (dropped here: every message is copied where kept).
        }
        Err(why) => {
            st.count(stat::DROP_MSG_INVALID);
            skb.drop_reason(why);
        }
    }
    0
}

/// A received datagram made whole and linear: where it came from (address
/// and UDP port from its headers, its IPv4 TOS or IPv6 traffic class), or
/// why it cannot be read.
fn source(skb: &mut Skb) -> Result<Dest, DropReason> {
    let proto = u32::from(skb.protocol());
    if proto != bindings::ETH_P_IP && proto != bindings::ETH_P_IPV6 {
        return Err(DropReason::UnhandledProto);
    }
    if (skb.len() as usize) < UDP_HLEN {
        return Err(DropReason::PktTooSmall);
    }
    if !Lent::of(skb).linearize() {
        return Err(DropReason::Nomem);
    }
    let (addr, tos) = if proto == bindings::ETH_P_IP {
        let ip = skb.network_header::<20>().ok_or(DropReason::PktTooSmall)?;
        (NetAddr::from_v4([ip[12], ip[13], ip[14], ip[15]]), ip[1])
    } else {
        // The fixed header (extension headers, if any, follow it).
        let ip = skb.network_header::<40>().ok_or(DropReason::PktTooSmall)?;
        let mut a = [0u8; 16];
        a.copy_from_slice(&ip[8..24]);
        // An IPv4-mapped source is no IPv6 sender's (RFC 4291 2.5.5.2).
        let addr = NetAddr::from_v6(a).ok_or(DropReason::IpInAddrErrors)?;
        (addr, (ip[0] << 4) | (ip[1] >> 4))
    };
    let udp = skb.head();
    Ok(Dest {
        addr,
        port: udp.get(..2).map_or(0, |p| u16::from_ne_bytes([p[0], p[1]])),
        tos,
    })
}

/// Test-only fault injection for the end-to-end tests (the KUnit build
/// only, never the production module): corrupts one symbol octet of every
/// Nth coded (scheme 1) REPAIR this node sends, after encoding and before
/// the UDP checksum, as a corrupting middlebox would. N is the module
/// parameter `fault_corrupt_repair` (`helpers/helpers.c`; 0: off).
mod fault {
    use crate::kernel_ext::skb::Skb;

    #[cfg(crem_kunit)]
    pub(super) fn corrupt(skb: &mut Skb) {
        use core::sync::atomic::{AtomicU32, Ordering};
        /// A REPAIR's header with one bitmap word: smaller ones are not
        /// corrupted.
        const REPAIR_SYMBOL_MIN: usize = 24;
        static N: AtomicU32 = AtomicU32::new(0);
        // SAFETY: a module parameter, an aligned u32 written by sysfs: read
        // once, as READ_ONCE reads it.
        let every = unsafe {
            core::ptr::read_volatile(core::ptr::addr_of!(crate::ffi::crem_fault_corrupt_repair))
        };
        let Some(m) = skb.linear_mut() else {
            return;
        };
        let len = m.len();
        if every == 0 || len <= REPAIR_SYMBOL_MIN + 64 || m[0] != 0x11 || m[9] != 1 {
            return;
        }
        if N.fetch_add(1, Ordering::Relaxed).wrapping_add(1) % every != 0 {
            return;
        }
        if let Some(b) = m.get_mut(len - 40) {
            *b ^= 0x5a;
        }
    }

    #[cfg(not(crem_kunit))]
    pub(super) fn corrupt(_: &mut Skb) {}
}
