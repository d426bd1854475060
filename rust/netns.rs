// SPDX-License-Identifier: GPL-2.0
//! Per-network-namespace state, created and destroyed by the pernet
//! operations in `glue/crem_glue.c`.

use crate::config;
use crate::create::Creation;
use crate::crem_core::ctl::Config;
use crate::crem_core::engine::module_caps::{caps_for, FlowCaps};
use crate::ffi;
use crate::flow::{Flow, Spare};
use crate::kernel_ext::memcg::MemCg;
use crate::kernel_ext::work::{DelayedWork, Work};
use crate::pool::Pool;
use crate::removal::Removal;
use crate::socket::Socket;
use crate::table::FlowTable;
use core::ffi::c_void;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use kernel::bindings;
use kernel::prelude::*;

/// Per-netns counters, in the order of the `stats` attribute set of
/// netlink/crem.yaml (attribute = index + CREM_A_STATS_ROCE_LOCAL_IN): ABI,
/// append only.
#[derive(Clone, Copy)]
#[repr(usize)]
pub(crate) enum Counter {
    /// RoCEv2 packets seen at LOCAL_IN.
    RoceLocalIn,
    /// RoCEv2 packets seen at FORWARD.
    RoceForward,
    /// RoCEv2 packets seen at LOCAL_OUT.
    RoceLocalOut,
    /// RoCEv2 packets that carry a new PSN (CREM source packets).
    RoceSources,
    /// RoCEv2 packets that are not sources (ACK/NAK, READ responses, CNP).
    RoceOther,
    /// UDP 4791 packets whose BTH did not parse.
    RoceMalformed,
}

const NR_COUNTERS: usize = Counter::RoceMalformed as usize + 1;

/// Flow-stats counters, in the order of the attributes (`crem_engine.h`).
pub(crate) const FS_N: usize = ffi::CREM_FS_N as usize;

#[pin_data]
pub(crate) struct NetState {
    /// The CREM socket; closed by C's netns exit before the flows go. The
    /// first field, so that one still open when the state is dropped is
    /// released (its receive callback reads the state) first.
    #[pin]
    pub(crate) socket: Socket,
    /// Closed before the netns's last flush (`exit_flows`), and
    /// dropped (its work cancelled) before the rest: its work item reads
    /// the state (and finds the socket gone).
    #[pin]
    pub(crate) creation: Creation,
    /// Closed with creation and before the state is dropped (its refill
    /// reads the state).
    #[pin]
    pub(crate) pool: Pool,
    /// The collector and the flow-change work: cancelled at the netns's
    /// exit (`exit_flows`), before its last flush, and dropped (cancelled
    /// again, a no-op) before the table and removal state they read.
    #[pin]
    pub(crate) collector: DelayedWork,
    #[pin]
    pub(crate) events: Work,
    /// Removal's lock, its list of flows removed and the totals of flows
    /// gone (`crate::removal`).
    #[pin]
    pub(crate) removal: Removal,
    counters: [AtomicU64; NR_COUNTERS],
    /// The configuration (`crate::config`).
    #[pin]
    pub(crate) settings: config::Settings,
    /// The peers, reporters and flow defaults the datapath reads
    /// (`crate::config`).
    pub(crate) peers: config::Current,
    /// The netns's protected flows (`crate::flows`); emptied
    /// (`exit_flows`) before this state is freed.
    pub(crate) flows: FlowTable<Flow>,
    /// The memory cgroup of the task that made the netns: every flow of
    /// the netns is charged to it, those made by work items too, not to
    /// the kworkers' root cgroup.
    memcg: MemCg,
    net: NonNull<bindings::net>,
    /// What of C's per-netns state the flows' life reads and counts, until
    /// that state is Rust's (issue 15).
    c: CNet,
    /// The memory count of a state without C's (KUnit).
    mem_own: AtomicI64,
}

// C's `atomic64_t` is counted as an `AtomicI64`: the same size and
// alignment (not so on 32-bit machines with GENERIC_ATOMIC64, where this
// fails to build rather than count wrongly).
const _: () = assert!(
    core::mem::size_of::<bindings::atomic64_t>() == core::mem::size_of::<AtomicI64>()
        && core::mem::align_of::<bindings::atomic64_t>() == core::mem::align_of::<AtomicI64>()
);

/// C's per-netns state (`struct crem_net`, which outlives this one): the
/// state itself (null for a KUnit case's netns state: no notifications)
/// and its datapath counters.
struct CNet {
    cn: *mut ffi::crem_net,
    /// `cn->dp`, `CREM_NR_DP` atomics (null: not counted).
    dp: *const AtomicI64,
    /// `cn->msg_in` and `cn->msg_out`, `CREM_MSG_SLOTS` atomics each (null:
    /// not counted).
    msg_in: *const AtomicI64,
    msg_out: *const AtomicI64,
    /// `cn->mem`: octets the flows' stores keep (null: a KUnit state's
    /// own, `mem_own`).
    mem: *const AtomicI64,
}

impl NetState {
    /// A flow of `side` of this netns with capacities `caps`, its engine
    /// not yet set up (None if out of memory): charged to the netns's
    /// memory cgroup, whoever asks, and its structures to its budget.
    /// Process context.
    pub(crate) fn alloc(&self, side: u8, caps: &FlowCaps) -> Option<Spare> {
        self.memcg.charge(|| Spare::new(self, side, caps))
    }

    /// The netns.
    pub(crate) fn net(&self) -> NonNull<bindings::net> {
        self.net
    }

    /// The netns's C state, if it has one (not a KUnit case's).
    pub(crate) fn c_net(&self) -> Option<*mut ffi::crem_net> {
        (!self.c.cn.is_null()).then_some(self.c.cn)
    }

    /// The `max-flows` limit, per side.
    pub(crate) fn max_flows(&self) -> u32 {
        self.settings.max_flows()
    }

    /// The netns's role (`CREM_ROLE_*`).
    pub(crate) fn role(&self) -> u8 {
        self.settings.role()
    }

    /// What a flow made now is sized for: `max-bdp` packets in flight in
    /// blocks of the configured k.
    pub(crate) fn flow_caps(&self) -> FlowCaps {
        caps_for(self.settings.max_bdp(), self.settings.k())
    }

    /// The `max-memory` limit, octets.
    pub(crate) fn max_memory(&self) -> u64 {
        self.settings.max_memory()
    }

    /// Counts one of C's datapath counters (`enum crem_dp`).
    pub(crate) fn count_dp(&self, i: ffi::crem_dp) {
        self.count_dp_by(i, 1);
    }

    /// Adds `n` to one of C's datapath counters.
    pub(crate) fn count_dp_by(&self, i: ffi::crem_dp, n: u64) {
        count_at(self.c.dp, i as usize, ffi::crem_dp_CREM_NR_DP as usize, n);
    }

    /// The netns's memory budget (`max-memory`) for `n` octets a flow's
    /// stores keep: false, counted as drop-memory, if it would be exceeded.
    pub(crate) fn charge(&self, n: u32) -> bool {
        if !self.reserve(u64::from(n)) {
            self.count_dp(ffi::crem_dp_CREM_DROP_MEMORY);
            return false;
        }
        true
    }

    /// Reserves `n` octets of a flow's structures (its engine's and its
    /// stores' arrays) from the budget: false, not counted (the caller
    /// counts the flow it could not make), if it would be exceeded.
    pub(crate) fn reserve(&self, n: u64) -> bool {
        let m = self.mem();
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        let after = m.fetch_add(n, Ordering::Relaxed).saturating_add(n);
        if u64::try_from(after).unwrap_or(u64::MAX) > self.max_memory() {
            m.fetch_sub(n, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Gives back `n` octets reserved.
    pub(crate) fn release(&self, n: u64) {
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        self.mem().fetch_sub(n, Ordering::Relaxed);
    }

    /// Gives back `n` octets charged.
    pub(crate) fn uncharge(&self, n: u32) {
        self.release(u64::from(n));
    }

    /// Octets the flows' stores keep now.
    #[cfg(crem_kunit)]
    pub(crate) fn memory(&self) -> i64 {
        self.mem().load(Ordering::Relaxed)
    }

    /// As [`Self::memory`], as stats-get reports it (the `s64` as a `u64`).
    pub(crate) fn memory_now(&self) -> u64 {
        self.mem().load(Ordering::Relaxed) as u64
    }

    /// The hook's counters, in their attributes' order (`Counter`).
    pub(crate) fn hook_counters(&self) -> [u64; NR_COUNTERS] {
        let mut v = [0; NR_COUNTERS];
        for (o, c) in v.iter_mut().zip(self.counters.iter()) {
            *o = c.load(Ordering::Relaxed);
        }
        v
    }

    /// One of C's datapath counters (`enum crem_dp`; 0 if not counted).
    pub(crate) fn dp(&self, i: ffi::crem_dp) -> u64 {
        read_at(self.c.dp, i as usize, ffi::crem_dp_CREM_NR_DP as usize)
    }

    /// CREM datagrams by msgs-by-type slot: received, then sent.
    pub(crate) fn msg_counts(&self) -> [u64; 2 * crate::host::MSG_SLOTS] {
        let mut v = [0; 2 * crate::host::MSG_SLOTS];
        let (i, o) = v.split_at_mut(crate::host::MSG_SLOTS);
        for (n, (a, b)) in (0..crate::host::MSG_SLOTS).zip(i.iter_mut().zip(o.iter_mut())) {
            *a = read_at(self.c.msg_in, n, crate::host::MSG_SLOTS);
            *b = read_at(self.c.msg_out, n, crate::host::MSG_SLOTS);
        }
        v
    }

    /// Flows in the table, both sides.
    pub(crate) fn flows_active(&self) -> u32 {
        self.flows
            .count(crate::table::SIDE_CSF)
            .saturating_add(self.flows.count(crate::table::SIDE_CRF))
    }

    /// stats-reset: the netns's own counters restart from 0 (the flows'
    /// are never rewound: see `totals`).
    pub(crate) fn reset_counters(&self) {
        for c in self.counters.iter() {
            c.store(0, Ordering::Relaxed);
        }
        for i in 0..ffi::crem_dp_CREM_NR_DP as usize {
            store_at(self.c.dp, i, ffi::crem_dp_CREM_NR_DP as usize);
        }
        for i in 0..crate::host::MSG_SLOTS {
            store_at(self.c.msg_in, i, crate::host::MSG_SLOTS);
            store_at(self.c.msg_out, i, crate::host::MSG_SLOTS);
        }
    }

    fn mem(&self) -> &AtomicI64 {
        // SAFETY: `mem` is C's `atomic64_t` (an `AtomicI64`, only ever
        // changed atomically), which outlives this state.
        unsafe { self.c.mem.as_ref() }.unwrap_or(&self.mem_own)
    }

    /// Counts a CREM datagram of msgs-by-type `slot` received at the
    /// socket, or sent.
    pub(crate) fn count_msg_in(&self, slot: usize) {
        count_at(self.c.msg_in, slot, crate::host::MSG_SLOTS, 1);
    }

    pub(crate) fn count_msg_out(&self, slot: usize) {
        count_at(self.c.msg_out, slot, crate::host::MSG_SLOTS, 1);
    }

    /// The netns makes no flow any more (process context): queued
    /// requests and spares are dropped.
    pub(crate) fn close(&self) {
        self.creation.close();
        self.pool.close();
    }

    pub(crate) fn count(&self, c: Counter) {
        if let Some(v) = self.counters.get(c as usize) {
            v.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn get(&self, c: Counter) -> u64 {
        self.counters
            .get(c as usize)
            .map_or(0, |v| v.load(Ordering::Relaxed))
    }
}

/// Adds `v` to `a[i]`, one of C's arrays of `n` counters (null: none).
fn count_at(a: *const AtomicI64, i: usize, n: usize, v: u64) {
    if let Some(c) = c_counter(a, i, n) {
        c.fetch_add(i64::try_from(v).unwrap_or(i64::MAX), Ordering::Relaxed);
    }
}

/// `a[i]`, one of C's arrays of `n` counters (null: none, 0).
fn read_at(a: *const AtomicI64, i: usize, n: usize) -> u64 {
    c_counter(a, i, n).map_or(0, |c| c.load(Ordering::Relaxed) as u64)
}

/// Zeroes `a[i]`, one of C's arrays of `n` counters (null: none).
fn store_at(a: *const AtomicI64, i: usize, n: usize) {
    if let Some(c) = c_counter(a, i, n) {
        c.store(0, Ordering::Relaxed);
    }
}

/// `a[i]`, one of C's arrays of `n` counters; None for a null array (not
/// counted) or an index outside it.
fn c_counter<'a>(a: *const AtomicI64, i: usize, n: usize) -> Option<&'a AtomicI64> {
    if a.is_null() || i >= n {
        return None;
    }
    // SAFETY: `a` is one of C's arrays of `n` `atomic64_t` (an `s64` each,
    // as `AtomicI64`, only ever changed atomically), which outlive the
    // state that holds them (`CNet`); `i` is in it.
    Some(unsafe { &*a.add(i) })
}

/// # Safety
/// `state` must come from [`crem_rs_net_init`] and not have been freed.
pub(crate) unsafe fn state<'a>(state: *mut c_void) -> &'a NetState {
    // SAFETY: per the function contract.
    unsafe { &*(state as *const NetState) }
}

/// The state of netns `net`, if it has one (every netns has while the
/// module's pernet operations are registered; its exit frees it after the
/// netns's sockets and devices are gone).
///
/// # Safety
///
/// `net` is a live netns, and the caller holds it for the state's use (a
/// request's socket, a device of it).
pub(crate) unsafe fn of<'a>(net: *mut bindings::net) -> Option<&'a NetState> {
    // SAFETY: a live netns (the contract); C's state of it holds ours.
    unsafe { state_opt(ffi::crem_glue_state(net)) }
}

/// As [`state`], for a pointer C may pass null.
///
/// # Safety
///
/// As for [`state`] when `state` is not null.
pub(crate) unsafe fn state_opt<'a>(state: *mut c_void) -> Option<&'a NetState> {
    // SAFETY: per the function contract.
    (!state.is_null()).then(|| unsafe { self::state(state) })
}

/// The state of netns `net` (pernet init, in the task that makes it), or
/// null if out of memory. `cn` is C's state of it (null: a KUnit case's),
/// `dp` its datapath counters and `msg_in`, `msg_out` its msgs-by-type
/// counters (null: not counted) and `mem` the octets its flows keep (null:
/// counted in the state), each outliving the state. Its configuration is
/// a new netns's ([`Config::DEFAULT`]).
#[no_mangle]
pub(crate) extern "C" fn crem_rs_net_init(
    net: *mut bindings::net,
    cn: *mut ffi::crem_net,
    dp: *mut bindings::atomic64_t,
    msg_in: *mut bindings::atomic64_t,
    msg_out: *mut bindings::atomic64_t,
    mem: *mut bindings::atomic64_t,
) -> *mut c_void {
    init(net, cn, &Config::DEFAULT, dp, msg_in, msg_out, mem)
}

/// As [`crem_rs_net_init`], configured as `cfg` (KUnit's states).
pub(crate) fn init(
    net: *mut bindings::net,
    cn: *mut ffi::crem_net,
    cfg: &Config,
    dp: *mut bindings::atomic64_t,
    msg_in: *mut bindings::atomic64_t,
    msg_out: *mut bindings::atomic64_t,
    mem: *mut bindings::atomic64_t,
) -> *mut c_void {
    let (Some(net), Ok(flows)) = (NonNull::new(net), FlowTable::new()) else {
        return core::ptr::null_mut();
    };
    let c = CNet {
        cn,
        dp: dp.cast::<AtomicI64>(),
        msg_in: msg_in.cast::<AtomicI64>(),
        msg_out: msg_out.cast::<AtomicI64>(),
        mem: mem.cast::<AtomicI64>(),
    };
    let st = pin_init!(NetState {
        socket <- Socket::new(),
        // SAFETY: this is the `creation` field of a `NetState`.
        creation <- unsafe { Creation::new() },
        // SAFETY: the pool is the `pool` field of a `NetState`.
        pool <- unsafe { Pool::new() },
        // SAFETY: these are the `collector` and `events` fields of a
        // `NetState`.
        collector <- unsafe { crate::collector::work() },
        events <- unsafe { crate::events::work() },
        removal <- Removal::new(),
        counters: [const { AtomicU64::new(0) }; NR_COUNTERS],
        settings <- config::Settings::new(cfg),
        peers: config::current(cfg),
        flows,
        memcg: MemCg::of_current(),
        net,
        c,
        mem_own: AtomicI64::new(0),
    });
    match KBox::pin_init(st, GFP_KERNEL) {
        // SAFETY: C keeps the state where it is (a pointer) until
        // `crem_rs_net_exit` rebuilds the pinned box.
        Ok(b) => KBox::into_raw(unsafe { Pin::into_inner_unchecked(b) }).cast(),
        Err(_) => core::ptr::null_mut(),
    }
}

#[no_mangle]
pub(crate) extern "C" fn crem_rs_net_exit(state: *mut c_void) {
    if state.is_null() {
        return;
    }
    // SAFETY: `state` came from `KBox::into_raw` in `crem_rs_net_init`,
    // pinned there and dropped in place; the C side unregistered the hooks
    // and waited for RCU readers before calling.
    let st = unsafe { Pin::new_unchecked(KBox::from_raw(state.cast::<NetState>())) };
    // The network side quiet first: no datagram makes a flow after. (No
    // netlink request of the netns runs: its sockets are gone.)
    {
        let set = st.settings.setter();
        let _ = st.socket.reconfigure(&st, 0);
        drop(set);
    }
    // Its work items quiet (they read the state) and its flows gone before
    // the state is dropped.
    st.exit_flows();
    pr_info!(
        "netns exit: roce in={} fwd={} out={} sources={} other={} malformed={}\n",
        st.get(Counter::RoceLocalIn),
        st.get(Counter::RoceForward),
        st.get(Counter::RoceLocalOut),
        st.get(Counter::RoceSources),
        st.get(Counter::RoceOther),
        st.get(Counter::RoceMalformed)
    );
}
