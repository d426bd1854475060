// SPDX-License-Identifier: GPL-2.0
//! Making a netns's flows: for the datapath at a flow's first packet (or
//! the HELLO that asks for a receiver flow), and for flow-new.
//!
//! An engine and its stores are too large for an atomic allocation, so the
//! datapath takes a spare from the pool (`pool.rs`) and the flow starts at
//! once; when there is none, the request waits in a bounded queue for a
//! work item, which makes the flow in process context, and the flow's
//! packets pass unprotected meanwhile. flow-new makes its flow in the
//! caller's context. Every way ends in [`Creation::insert`]: the flow goes
//! into the table, starts (a sender flow sends its HELLO, a receiver flow
//! answers the HELLO that asked for it), and listeners hear of it.
//!
//! Locking: `requests` (BH-safe) orders insertions with closing: once
//! [`Creation::close`] has set `closing` under it, nothing is queued or
//! inserted any more, so the netns's last flush finds every flow there
//! will be. The table's own lock nests inside it.

use crate::addr::NetAddr;
use crate::crem_core::nl::stat;
use crate::events::Notification;
use crate::ffi;
use crate::flow::{self, Flow, Spare};
use crate::kernel_ext::bh::{self, new_bh_lock, Bh, BhLock};
use crate::kernel_ext::genl::Msg;
use crate::kernel_ext::rcu;
use crate::kernel_ext::work::Work;
use crate::netns::NetState;
use crate::table::{FlowKey, Refused, SIDE_CSF};
use crate::trace;
use core::ffi::c_int;
use kernel::bindings;
use kernel::prelude::*;

/// Most requests queued at once: a burst of new connections beyond it
/// passes unprotected (counted) until the pool or the queue has room.
const MAX_PENDING: usize = 64;

/// The longest HELLO (IPv6: crem-core's `Hello::encoded_len`).
const MAX_HELLO: usize = 64;

/// What a flow is made for: its key and peer, and what its first packet
/// (or the HELLO that asked for it) shows of the path, the start of its
/// template (`flow::setup_request` sets it up from this and the netns
/// configuration).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FlowRequest {
    pub(crate) key: FlowKey,
    /// The peer's address.
    pub(crate) peer: NetAddr,
    /// The CREM port the peer sends from (its HELLO's, network order), 0:
    /// ours.
    pub(crate) peer_port: u16,
    pub(crate) tos: u8,
    pub(crate) ttl: u8,
    /// The packet's UDP source port (network order).
    pub(crate) sport: u16,
    /// Of the first packet's device, 0 if none.
    pub(crate) link_mtu: u32,
    /// flow-new with k and m: no adaptive policy.
    pub(crate) fixed: bool,
    pub(crate) k: u8,
    pub(crate) m: u8,
}

/// A queued request: the flow's and the HELLO that asked for it (a
/// receiver flow's), copied (the datagram is gone by the time the work
/// item runs).
#[derive(Clone, Copy)]
struct Request {
    rq: FlowRequest,
    hello_len: u8,
    hello: [u8; MAX_HELLO],
}

impl Request {
    fn hello(&self) -> &[u8] {
        self.hello.get(..usize::from(self.hello_len)).unwrap_or(&[])
    }
}

/// The queue, a ring: nothing is allocated under the lock or in softirq.
struct Requests {
    ring: [Option<Request>; MAX_PENDING],
    /// The oldest request's slot, and how many there are.
    head: usize,
    len: usize,
    /// The netns is going: nothing is queued or inserted any more.
    closing: bool,
}

impl Requests {
    /// Nothing queued, open.
    const EMPTY: Self = Requests {
        ring: [const { None }; MAX_PENDING],
        head: 0,
        len: 0,
        closing: false,
    };

    fn has(&self, k: &FlowKey) -> bool {
        self.ring.iter().flatten().any(|r| r.rq.key == *k)
    }

    fn push(&mut self, r: Request) -> bool {
        if self.len >= MAX_PENDING {
            return false;
        }
        // Both below MAX_PENDING: no overflow (`wrapping_add` only so that
        // no overflow check is compiled in).
        let Some(slot) = self
            .ring
            .get_mut(self.head.wrapping_add(self.len) % MAX_PENDING)
        else {
            return false;
        };
        *slot = Some(r);
        self.len = self.len.saturating_add(1);
        true
    }

    fn pop(&mut self) -> Option<Request> {
        let r = self.ring.get_mut(self.head)?.take()?;
        self.head = self.head.wrapping_add(1) % MAX_PENDING;
        self.len = self.len.saturating_sub(1);
        Some(r)
    }
}

/// A request for the flow of `key` protected with `peer`, its template
/// starting from `tos` and `ttl` (of its first packet, or for a receiver
/// flow of the HELLO that asks for it); the rest is the caller's to fill.
pub(crate) fn request_for(key: FlowKey, peer: NetAddr, tos: u8, ttl: u8) -> FlowRequest {
    // No port, no link MTU, no fixed k and m unless the caller sets them.
    FlowRequest {
        key,
        peer,
        tos,
        ttl,
        ..FlowRequest::default()
    }
}

/// Why a flow was not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotMade {
    /// Out of memory (for the flow, its engine or a queued request).
    NoMemory,
    /// The engine refused the parameters (flow-new's k and m, or the
    /// netns's defaults).
    Refused,
    /// A flow of its key is in the table already.
    Exists,
    /// Its side has `max-flows` flows.
    Limit,
    /// The netns is going.
    Closing,
}

impl NotMade {
    /// Counted as `flow-alloc-failures` (the rest as C's table refusals
    /// were: not at all, or by the caller).
    fn counted_as_alloc(self) -> bool {
        matches!(self, NotMade::NoMemory | NotMade::Refused)
    }

    pub(crate) fn to_errno(self) -> c_int {
        match self {
            NotMade::NoMemory => ENOMEM.to_errno(),
            NotMade::Refused => EINVAL.to_errno(),
            NotMade::Exists => EEXIST.to_errno(),
            NotMade::Limit => ENOSPC.to_errno(),
            NotMade::Closing => -(bindings::ESHUTDOWN as c_int),
        }
    }
}

/// A netns's flow creation (see the module docs).
#[pin_data]
pub(crate) struct Creation {
    /// The first field, so dropped first: cancelled (waiting for a running
    /// creation) before the queue goes.
    #[pin]
    work: Work,
    #[pin]
    requests: BhLock<Requests>,
}

impl Creation {
    /// Nothing queued, open.
    ///
    /// # Safety
    ///
    /// The value is the `creation` field of a [`NetState`], which its work
    /// item reaches from its address.
    pub(crate) unsafe fn new() -> impl PinInit<Self> {
        let requests = Requests::EMPTY;
        // SAFETY: the work item is the `work` field of a `Creation` that is
        // the `creation` field of a `NetState` (the caller's contract),
        // which `serve` requires.
        let work = unsafe { Work::new(serve) };
        let requests = new_bh_lock!(requests, "crem_create");
        // SAFETY: each field is initialised in place at `slot`, pinned
        // there; neither initialiser can fail. (Not `pin_init!`: see
        // `Pool::new`.)
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Self| {
                work.__pinned_init(core::ptr::addr_of_mut!((*slot).work))?;
                requests.__pinned_init(core::ptr::addr_of_mut!((*slot).requests))
            })
        }
    }

    /// From the datapath (BH off): the flow of request `rq`, made now from
    /// a spare and started (its HELLO, or its HELLO_ACK to `hello`, leaves
    /// ahead of the packet that asked for it), or None: then it is queued
    /// for the work item unless the queue is full or has it already, and
    /// the packets pass unprotected meanwhile. Drops are counted.
    pub(crate) fn request<'a>(
        &self,
        st: &'a NetState,
        rq: &FlowRequest,
        hello: &[u8],
        bh: &'a Bh,
    ) -> Option<&'a Flow> {
        if st.flows.count(rq.key.side) >= st.max_flows() {
            st.count(stat::DROP_FLOW_LIMIT);
            return None;
        }
        if let Some(spare) = st.pool.take(rq.key.side, &st.flow_caps()) {
            let ntf = Ntf::new(st, false);
            return match self.insert(st, spare, rq, hello, ntf, bh) {
                Ok(f) => Some(f),
                // Freed at once, BH off (in softirq, or at LOCAL_OUT in
                // process context): its engine's vfree is deferred then.
                Err((why, _spare)) => {
                    if why.counted_as_alloc() {
                        st.count(stat::DROP_FLOW_ALLOC);
                    }
                    None
                }
            };
        }
        let mut r = Request {
            rq: *rq,
            hello_len: 0,
            hello: [0; MAX_HELLO],
        };
        // A HELLO is at most MAX_HELLO octets: it was decoded, and
        // dispatch passes the message alone (its header's Length).
        let Some(h) = r.hello.get_mut(..hello.len()) else {
            return None;
        };
        h.copy_from_slice(hello);
        r.hello_len = hello.len() as u8;
        let mut q = self.requests.lock(bh);
        if q.has(&rq.key) {
            // Already asked for: this packet passes, this HELLO waits.
            st.count(stat::FLOW_WAITS);
            return None;
        }
        if q.closing || !q.push(r) {
            st.count(stat::DROP_FLOW_LIMIT);
            return None;
        }
        st.count(stat::FLOWS_QUEUED);
        // Queued under the lock that `close` sets closing under.
        self.work.schedule();
        None
    }

    /// Makes the flow of `rq` in process context (flow-new, the work
    /// item): allocated, set up, inserted and started. A failed allocation
    /// is counted (refused parameters are the caller's to count: an
    /// operator's flow-new hears of them itself).
    pub(crate) fn make(
        &self,
        st: &NetState,
        rq: &FlowRequest,
        hello: &[u8],
    ) -> Result<(), NotMade> {
        let Some(spare) = st.alloc(rq.key.side, &st.flow_caps()) else {
            st.count(stat::DROP_FLOW_ALLOC);
            return Err(NotMade::NoMemory);
        };
        // Allocated while it may still sleep.
        let ntf = Ntf::new(st, true);
        let made = {
            let bh = bh::disable();
            self.insert(st, spare, rq, hello, ntf, &bh).map(|_| ())
        };
        // A flow not made is freed here, with BH on again.
        made.map_err(|(why, _spare)| why)
    }

    /// Sets up `spare` for `rq`, inserts it and starts it, and announces it
    /// with `ntf`. The flow returned is the table's: it lives as long as
    /// the caller's BH-off section (a remover frees it a grace period after
    /// unlinking it). A flow not made comes back to be freed.
    fn insert<'a>(
        &self,
        st: &'a NetState,
        spare: Spare,
        rq: &FlowRequest,
        hello: &[u8],
        ntf: Ntf,
        bh: &'a Bh,
    ) -> Result<&'a Flow, (NotMade, Spare)> {
        if flow::setup_request(&spare, st, rq).is_err() {
            return Err((NotMade::Refused, spare));
        }
        // A sender flow's HELLO_ACK finds it by its HELLO's nonce.
        let nonce = if rq.key.side == SIDE_CSF {
            // SAFETY: `get_random_u64` may be called from any context.
            unsafe { bindings::get_random_u64() }
        } else {
            0
        };
        {
            let q = self.requests.lock(bh);
            if q.closing {
                return Err((NotMade::Closing, spare));
            }
            // SAFETY: the flow is boxed (it never moves); once inserted it
            // is the table's, whose remover frees it only a grace period
            // after unlinking it; `st.flows` is the table `setup_request`
            // gave it, the only one it is ever inserted in.
            let r = unsafe { st.flows.insert(spare.flow(), st.max_flows(), nonce, bh) };
            match r {
                Ok(()) => {}
                Err(Refused::Exists) => return Err((NotMade::Exists, spare)),
                Err(Refused::Limit) => return Err((NotMade::Limit, spare)),
            }
        }
        // The table's now (its removal frees it, `crate::removal`).
        let f = spare.into_raw();
        // SAFETY: just inserted: no remover frees it before the caller's
        // BH-off section (an RCU read-side one) ends.
        let f = unsafe { &*f };
        // A sender flow sends its HELLO; a receiver flow answers the HELLO
        // that asked for it.
        f.start(bh, nonce, hello);
        // Announced before a flow-down can be (a removal waits for this
        // section to end before it notifies).
        trace::flow_up(&FlowKey::from(rq.key), &rq.peer);
        ntf.flow_up(st, f);
        Ok(f)
    }

    /// The netns is going (process context): nothing is queued or
    /// inserted from now on, and what was queued is dropped.
    pub(crate) fn close(&self) {
        {
            let bh = bh::disable();
            self.requests.lock(&bh).closing = true;
        }
        // Nothing queues it again once closing is seen.
        self.work.cancel_sync();
        let bh = bh::disable();
        let mut q = self.requests.lock(&bh);
        while q.pop().is_some() {}
    }

    /// How many requests are queued.
    #[cfg(crem_kunit)]
    pub(crate) fn pending(&self) -> usize {
        let bh = bh::disable();
        let n = self.requests.lock(&bh).len;
        n
    }

    /// Waits until no creation is queued or running (KUnit: a case's
    /// requests served before it looks).
    #[cfg(crem_kunit)]
    pub(crate) fn flush(&self) {
        self.work.flush();
    }

    /// Serves the queue (the work item, process context).
    fn serve(&self, st: &NetState) {
        loop {
            let r = {
                let bh = bh::disable();
                let mut q = self.requests.lock(&bh);
                if q.closing {
                    return;
                }
                q.pop()
            };
            let Some(r) = r else {
                return;
            };
            // Memory is counted in `make`; refused parameters here (as a
            // spare's set-up failure is in `request`).
            if let Err(NotMade::Refused) = self.make(st, &r.rq, r.hello()) {
                st.count(stat::DROP_FLOW_ALLOC);
            }
            // SAFETY: process context (a work item), no lock held.
            unsafe { ffi::crem_h_cond_resched() };
        }
    }
}

/// The creation work of every netns.
unsafe extern "C" fn serve(w: *mut bindings::work_struct) {
    // SAFETY: only `Creation::new` makes work items with this callback, in
    // the `work` field of a `Creation` that is the `creation` field of a
    // `NetState` (its contract); the state lives until the work is
    // cancelled (`close`, or the drop of its first field), which waits for
    // this callback.
    let st = unsafe {
        let c = kernel::container_of!(w.cast::<Work>(), Creation, work);
        &*kernel::container_of!(c, NetState, creation)
    };
    st.creation.serve(st);
}

/// A flow-up notification allocated ahead: none if no one listens, if
/// memory ran out (counted) or for a netns state without C's (KUnit).
/// Freed unused (`consume_skb`: not a drop) unless sent.
struct Ntf(Option<Msg>);

impl Drop for Ntf {
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            m.unused();
        }
    }
}

impl Ntf {
    fn new(st: &NetState, may_sleep: bool) -> Self {
        Ntf(st.ntf_alloc(may_sleep))
    }

    /// The flow `f` is listed and started (BH off: nothing here sleeps):
    /// the netns counts it, its collector runs, and listeners hear of it
    /// before they can of its flow-down (a removal waits for this section
    /// to end before it notifies).
    fn flow_up(mut self, st: &NetState, f: &Flow) {
        st.count(stat::FLOWS_CREATED);
        // A KUnit case's netns state (not a netns's own) collects when the case
        // says so, never behind its back.
        if st.own() {
            st.start_collector();
        }
        st.ntf_send(self.0.take(), f, Notification::Up);
    }
}

/// flow-new (process context): the operator's sender flow of `key` (its
/// peer: the one configured for its destination; `fixed`: it keeps `k`
/// and `m`, no adaptive policy), made and started now. 0, -ENOTCONN (no
/// role or no CREM port: nothing could be sent), -EHOSTUNREACH (no peer
/// for its destination), -EEXIST (its key is taken), -ENOSPC
/// (`max-flows`), -ENOMEM, -EINVAL (the engine refused its parameters) or
/// -ESHUTDOWN (the netns is going).
pub(crate) fn add(st: &NetState, key: &FlowKey, fixed: bool, k: u8, m: u8) -> c_int {
    // Nothing could be sent: no role, or no port (config-set binds the
    // socket before it commits a role, so both are asked).
    if st.role() == ffi::crem_role_CREM_ROLE_DISABLED as u8 || !st.socket.bound() {
        return -(bindings::ENOTCONN as c_int);
    }
    let (peer, taken) = {
        let g = rcu::read_lock();
        (
            st.peers.get(&g).peer_for(&key.daddr),
            st.flows.lookup(key, &g).is_some(),
        )
    };
    // Checked ahead too (insertion would refuse), so that nothing is
    // allocated for a flow that cannot be.
    let Some(peer) = peer else {
        return -(bindings::EHOSTUNREACH as c_int);
    };
    if taken {
        return NotMade::Exists.to_errno();
    }
    if st.flows.count(key.side) >= st.max_flows() {
        return NotMade::Limit.to_errno();
    }
    let rq = FlowRequest {
        key: *key,
        ttl: 64,
        fixed,
        k,
        m,
        peer,
        ..FlowRequest::default()
    };
    match st.creation.make(st, &rq, &[]) {
        Ok(()) => 0,
        Err(why) => why.to_errno(),
    }
}

/// The request queue alone, for KUnit (`kunit/create.rs`).
#[cfg(crem_kunit)]
pub(crate) struct TestQueue(Requests);

#[cfg(crem_kunit)]
impl Creation {
    pub(crate) fn test_queue() -> Option<KBox<TestQueue>> {
        KBox::new(TestQueue(Requests::EMPTY), GFP_KERNEL).ok()
    }
}

#[cfg(crem_kunit)]
impl TestQueue {
    pub(crate) fn push_test(&mut self, rq: &FlowRequest) -> bool {
        self.0.push(Request {
            rq: *rq,
            hello_len: 0,
            hello: [0; MAX_HELLO],
        })
    }

    pub(crate) fn has_test(&self, rq: &FlowRequest) -> bool {
        self.0.has(&rq.key)
    }

    /// The oldest request's destination QP.
    pub(crate) fn pop_test(&mut self) -> Option<u32> {
        self.0.pop().map(|r| r.rq.key.dqp)
    }
}
