// SPDX-License-Identifier: GPL-2.0
//! Per-network-namespace state: made for every netns by the module's
//! pernet operations ([`register`]) and freed at the netns's exit, found
//! from the netns by [`of`].

use crate::config;
use crate::create::Creation;
use crate::crem_core::ctl::{Config, Role};
use crate::crem_core::engine::module_caps::{caps_for, FlowCaps};
use crate::crem_core::nl::stat;
use crate::ffi;
use crate::flow::{Flow, Spare};
use crate::hook_points::Hooks;
use crate::host::MSG_SLOTS;
use crate::kernel_ext::memcg::MemCg;
use crate::kernel_ext::pernet;
use crate::kernel_ext::work::{DelayedWork, Work};
use crate::pool::Pool;
use crate::removal::Removal;
use crate::report::Reporting;
use crate::socket::Socket;
use crate::table::FlowTable;
use core::ffi::{c_int, c_uint, c_void};
use core::ptr::{addr_of, addr_of_mut, NonNull};
use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use kernel::bindings;
use kernel::prelude::*;

#[pin_data]
pub(crate) struct NetState {
    /// The Path Reporter, if `report` is on: turned off by the netns's
    /// exit before anything else goes, and first to drop (its timer sends
    /// through the socket, its probe reads the state).
    #[pin]
    pub(crate) reporting: Reporting,
    /// The CREM socket; closed by the netns's exit before the flows go. The
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
    /// The netns's counters, by their index in the `stats` attribute set
    /// (`nl::stat`, generated from netlink/crem.yaml); the gauges'
    /// (flows-active, memory) and the nests' places are not counted in.
    stats: [AtomicU64; stat::N],
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
    /// The netfilter hooks registered in the netns (`crate::hook_points`).
    pub(crate) hooks: Hooks,
    /// CREM datagrams by msgs-by-type slot: received at the socket, sent.
    msgs: [[AtomicU64; MSG_SLOTS]; 2],
    /// Octets the flows keep (their structures and stores), against
    /// `max-memory`.
    mem: AtomicI64,
    /// Whether this is a netns's own state, whose events someone may hear
    /// and whose collector runs by itself (not a KUnit case's).
    own: bool,
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

    /// Whether this is a netns's own state (not a KUnit case's).
    pub(crate) fn own(&self) -> bool {
        self.own
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

    /// Counts one of the netns's counters (`nl::stat`).
    pub(crate) fn count(&self, i: usize) {
        self.count_by(i, 1);
    }

    /// Adds `n` to one of the netns's counters.
    pub(crate) fn count_by(&self, i: usize, n: u64) {
        if let Some(c) = self.stats.get(i) {
            c.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// One of the netns's counters (`nl::stat`; 0 for a gauge's).
    pub(crate) fn stat(&self, i: usize) -> u64 {
        self.stats.get(i).map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// The netns's memory budget (`max-memory`) for `n` octets a flow's
    /// stores keep: false, counted as drop-memory, if it would be exceeded.
    pub(crate) fn charge(&self, n: u32) -> bool {
        if !self.reserve(u64::from(n)) {
            self.count(stat::DROP_MEMORY);
            return false;
        }
        true
    }

    /// Reserves `n` octets of a flow's structures (its engine's and its
    /// stores' arrays) from the budget: false, not counted (the caller
    /// counts the flow it could not make), if it would be exceeded.
    pub(crate) fn reserve(&self, n: u64) -> bool {
        let m = &self.mem;
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
        self.mem.fetch_sub(n, Ordering::Relaxed);
    }

    /// Gives back `n` octets charged.
    pub(crate) fn uncharge(&self, n: u32) {
        self.release(u64::from(n));
    }

    /// Octets the flows' stores keep now.
    #[cfg(crem_kunit)]
    pub(crate) fn memory(&self) -> i64 {
        self.mem.load(Ordering::Relaxed)
    }

    /// As [`Self::memory`], as stats-get reports it (the `s64` as a `u64`).
    pub(crate) fn memory_now(&self) -> u64 {
        self.mem.load(Ordering::Relaxed) as u64
    }

    /// CREM datagrams by msgs-by-type slot: received, then sent.
    pub(crate) fn msg_counts(&self) -> [[u64; MSG_SLOTS]; 2] {
        let mut v = [[0; MSG_SLOTS]; 2];
        for (o, c) in v.iter_mut().flatten().zip(self.msgs.iter().flatten()) {
            *o = c.load(Ordering::Relaxed);
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
        let msgs = self.msgs.iter().flatten();
        for c in Iterator::chain(self.stats.iter(), msgs) {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// Counts a CREM datagram of msgs-by-type `slot` received at the
    /// socket, or sent.
    pub(crate) fn count_msg_in(&self, slot: usize) {
        self.count_msg(0, slot);
    }

    pub(crate) fn count_msg_out(&self, slot: usize) {
        self.count_msg(1, slot);
    }

    fn count_msg(&self, dir: usize, slot: usize) {
        if let Some(c) = self.msgs.get(dir).and_then(|d| d.get(slot)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The netns makes no flow any more (process context): queued
    /// requests and spares are dropped.
    pub(crate) fn close(&self) {
        self.creation.close();
        self.pool.close();
    }
}

/// # Safety
/// `state` must come from [`init`] and not have been freed.
pub(crate) unsafe fn state<'a>(state: *mut c_void) -> &'a NetState {
    // SAFETY: per the function contract.
    unsafe { &*(state as *const NetState) }
}

/// As [`state`], for a pointer that may be null.
///
/// # Safety
///
/// As for [`state`] when `state` is not null.
pub(crate) unsafe fn state_opt<'a>(state: *mut c_void) -> Option<&'a NetState> {
    // SAFETY: per the function contract.
    (!state.is_null()).then(|| unsafe { self::state(state) })
}

/// The pernet id the kernel gives the module's operations (written once,
/// when they are registered, before any init runs).
static mut NET_ID: c_uint = 0;

/// The module's pernet operations: each netns's slot holds a pointer to
/// its state.
static mut PERNET: ffi::pernet_operations = ffi::pernet_operations {
    init: Some(net_init),
    exit: Some(net_exit),
    id: addr_of_mut!(NET_ID),
    size: core::mem::size_of::<*mut NetState>(),
    // SAFETY: the rest (the list head the kernel links, no pre-exit or
    // batched exit) is all zeros, valid for their types.
    ..unsafe { core::mem::zeroed() }
};

/// Makes a state for every netns, now and as each is made, and frees each
/// at the netns's exit; all of them when the registration drops.
pub(crate) fn register() -> Result<pernet::Registration> {
    // SAFETY: the static operations, registered once (module init); their
    // callbacks are sound for any netns.
    unsafe { pernet::Registration::register(addr_of_mut!(PERNET)) }
}

/// The slot of `net` that holds its state's address.
///
/// # Safety
///
/// As for [`pernet::slot`], the operations registered.
unsafe fn slot(net: *const bindings::net) -> *mut *mut c_void {
    // SAFETY: the contract; the id was written at registration.
    unsafe { pernet::slot(net, addr_of!(NET_ID).read()).cast() }
}

/// The state of netns `net`, if it has one (every netns has while the
/// module's pernet operations are registered, from its init to its exit,
/// which frees it after the netns's hooks are gone and its socket is
/// closed).
///
/// # Safety
///
/// `net` is a live netns, and the caller holds it for the state's use (a
/// request's socket, a device of it, a packet at its hook), within the
/// registration's life.
pub(crate) unsafe fn of<'a>(net: *mut bindings::net) -> Option<&'a NetState> {
    // SAFETY: a live netns (the contract); its slot holds null or its
    // state, alive until its exit.
    unsafe { state_opt(slot(net).read()) }
}

/// The initial netns's state.
///
/// # Safety
///
/// The module's pernet operations are registered (the module is loaded
/// and initialised), so the initial netns has a state.
#[cfg(crem_kunit)]
pub(crate) unsafe fn init_state<'a>() -> &'a NetState {
    // SAFETY: the contract: the initial netns's init of our operations
    // ran, and its exit runs only when they are unregistered.
    unsafe { state(slot(crate::kernel_ext::net::init_net()).read()) }
}

/// Pernet init: the state of `net` (in the task that makes the netns).
unsafe extern "C" fn net_init(net: *mut bindings::net) -> c_int {
    let st = init(net, true, &Config::DEFAULT);
    if st.is_null() {
        return ENOMEM.to_errno();
    }
    // SAFETY: the netns's init of our operations: its slot is ours.
    unsafe { slot(net).write(st) };
    0
}

/// Pernet exit: the state of `net` goes (its hooks, its socket, its flows,
/// then the state).
unsafe extern "C" fn net_exit(net: *mut bindings::net) {
    // SAFETY: the netns's exit of our operations: its slot is ours.
    let st = unsafe { slot(net).read() };
    exit(st);
    // SAFETY: as above.
    unsafe { slot(net).write(core::ptr::null_mut()) };
}

/// The state of netns `net` (null if out of memory), configured as `cfg`;
/// `own`: the netns's own (pernet init), else a KUnit case's.
pub(crate) fn init(net: *mut bindings::net, own: bool, cfg: &Config) -> *mut c_void {
    let (Some(net), Ok(flows)) = (NonNull::new(net), FlowTable::new()) else {
        return core::ptr::null_mut();
    };
    let st = pin_init!(NetState {
        reporting <- Reporting::new(),
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
        stats: [const { AtomicU64::new(0) }; stat::N],
        settings <- config::Settings::new(cfg),
        peers <- config::current(cfg),
        flows,
        memcg: MemCg::of_current(),
        net,
        hooks: Hooks::new(),
        msgs: [const { [const { AtomicU64::new(0) }; MSG_SLOTS] }; 2],
        mem: AtomicI64::new(0),
        own,
    });
    match KBox::pin_init(st, GFP_KERNEL) {
        // SAFETY: the state stays where it is (a pointer) until `exit`
        // rebuilds the pinned box.
        Ok(b) => KBox::into_raw(unsafe { Pin::into_inner_unchecked(b) }).cast(),
        Err(_) => core::ptr::null_mut(),
    }
}

/// Frees a state of [`init`] (null: none): its hooks go and those in
/// flight end, its socket closes, its flows go, then the state.
pub(crate) fn exit(state: *mut c_void) {
    if state.is_null() {
        return;
    }
    // SAFETY: `state` came from `KBox::into_raw` in `init`, pinned there
    // and dropped in place, once.
    let st = unsafe { Pin::new_unchecked(KBox::from_raw(state.cast::<NetState>())) };
    {
        let set = st.settings.setter();
        // No drop reported, no report sent, from here on.
        let _ = st.reporting.apply(&st, None);
        st.hooks.keep(&st, Role::Disabled, false, &set);
        // Hooks run under RCU: those in flight end before the state goes.
        // SAFETY: process context, no spinlock held.
        unsafe { ffi::synchronize_net() };
        // The network side quiet: no datagram makes a flow after. (No
        // netlink request of the netns runs: its sockets are gone.)
        let _ = st.socket.reconfigure(&st, 0);
        drop(set);
    }
    // Its work items quiet (they read the state) and its flows gone before
    // the state is dropped.
    st.exit_flows();
    pr_info!(
        "netns exit: roce in={} fwd={} out={} sources={} other={} malformed={}\n",
        st.stat(stat::ROCE_LOCAL_IN),
        st.stat(stat::ROCE_FORWARD),
        st.stat(stat::ROCE_LOCAL_OUT),
        st.stat(stat::SOURCES),
        st.stat(stat::NON_SOURCES),
        st.stat(stat::MALFORMED)
    );
}
