// SPDX-License-Identifier: GPL-2.0
//! A netns's configuration, as the kernel keeps it: crem-core's
//! `ctl::Config` (what config-set commits and config-get shows) under a
//! lock, the five values the datapath reads per flow as atomics
//! ([`Settings`]), and, as an immutable snapshot the datapath reads under
//! RCU per packet without a lock, who it talks to: the peers (which CREM
//! function protects traffic to or from a prefix), the allow-listed Path
//! Reporters and a new flow's defaults ([`Peers`]).
//!
//! config-set (`crate::netlink::config`) publishes both with each commit
//! ([`NetState::commit`]); the hook (`crate::hook`), the socket's dispatch
//! (`crate::dispatch`) and flow-new (`crate::create`) read them.
//!
//! The locks, in the order they are taken: the netns's setter lock (one
//! config-set from its snapshot to its commit, and the socket's binding),
//! the initial netns's limits lock (a commit of its limits against another
//! netns's commit, see `crate::netlink::config`), the kernel's netns list
//! lock (`net_rwsem`, to lower every limited netns), then one netns's
//! configuration lock, held briefly, never two at once, and never across
//! a sleep (the commit's `synchronize_rcu` runs under the first two).

use crate::addr::{Family, NetAddr};
use crate::crem_core::ctl::{self, Addr, Config, Limits, Role};
use crate::engine::EngineParams;
use crate::kernel_ext::rcu::RcuDouble;
use crate::netns::NetState;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use kernel::prelude::*;
use kernel::sync::lock::{mutex::MutexBackend, Guard};
use kernel::sync::{new_mutex, Mutex};

const MAX_PEERS: usize = ctl::MAX_PEERS;
const MAX_REPORTERS: usize = ctl::MAX_REPORTERS;

/// The values of the configuration the datapath reads per flow or per
/// packet, each on its own (no two need to agree): written under the
/// configuration's lock with it, read without a lock.
struct Live {
    role: AtomicU8,
    k: AtomicU8,
    max_flows: AtomicU32,
    max_bdp: AtomicU32,
    max_memory: AtomicU64,
    spare_flows: AtomicU32,
}

impl Live {
    fn new(c: &Config) -> Live {
        Live {
            role: AtomicU8::new(c.role.into()),
            k: AtomicU8::new(c.k),
            max_flows: AtomicU32::new(c.max_flows),
            max_bdp: AtomicU32::new(c.max_bdp),
            max_memory: AtomicU64::new(c.max_memory),
            spare_flows: AtomicU32::new(c.spare_flows),
        }
    }

    fn store(&self, c: &Config) {
        self.role.store(c.role.into(), Ordering::Relaxed);
        self.k.store(c.k, Ordering::Relaxed);
        self.max_flows.store(c.max_flows, Ordering::Relaxed);
        self.max_bdp.store(c.max_bdp, Ordering::Relaxed);
        self.max_memory.store(c.max_memory, Ordering::Relaxed);
        self.spare_flows.store(c.spare_flows, Ordering::Relaxed);
    }
}

/// A netns's configuration and its locks.
#[pin_data]
pub(crate) struct Settings {
    /// One setter at a time from its snapshot to its commit (the family's
    /// `parallel_ops` lets requests run at once: two interleaved would
    /// each apply to the same snapshot, the later commit undoing the
    /// other's change, or commit a port that the other's socket serves);
    /// the socket is bound under it too (netns exit closes it so).
    #[pin]
    setter: Mutex<()>,
    /// The configuration. Held briefly: a snapshot, a commit, a clamp to
    /// the initial netns's limits.
    #[pin]
    cfg: Mutex<Config>,
    /// Orders a commit of the initial netns's limits (which lowers every
    /// netns of another user namespace above them) against the commit of
    /// such a netns (which clamps to them). The initial netns's only is
    /// used.
    #[pin]
    limits: Mutex<()>,
    live: Live,
}

/// A netns's setter lock, held (see [`Settings`]), and whose it is: what
/// needs it ([`NetState::commit`], `crate::hook_points`) checks that it is
/// the lock of the settings it changes.
pub(crate) struct Setter<'a> {
    _held: Guard<'a, (), MutexBackend>,
    of: &'a Settings,
}

impl Setter<'_> {
    /// Whether this is the setter lock of `s`.
    pub(crate) fn holds(&self, s: &Settings) -> bool {
        core::ptr::eq(self.of, s)
    }
}

impl Settings {
    /// A new netns's, starting from `c`.
    pub(crate) fn new(c: &Config) -> impl PinInit<Settings> + '_ {
        let setter = new_mutex!((), "crem_setter");
        let cfg = new_mutex!(c.clone(), "crem_cfg");
        let limits = new_mutex!((), "crem_limits");
        let live = Live::new(c);
        // SAFETY: each field is initialised in place at `slot`, pinned
        // there; no initialiser can fail (`Infallible`), so none is left
        // to undo. (Written out rather than with `pin_init!`: see
        // `Pool::new`.)
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Settings| {
                setter.__pinned_init(core::ptr::addr_of_mut!((*slot).setter))?;
                cfg.__pinned_init(core::ptr::addr_of_mut!((*slot).cfg))?;
                limits.__pinned_init(core::ptr::addr_of_mut!((*slot).limits))?;
                core::ptr::addr_of_mut!((*slot).live).write(live);
                Ok(())
            })
        }
    }

    /// Takes the setter lock (process context; see [`Settings`]).
    pub(crate) fn setter(&self) -> Setter<'_> {
        Setter {
            _held: self.setter.lock(),
            of: self,
        }
    }

    /// Takes the limits lock (of the initial netns's settings).
    pub(crate) fn limits_lock(&self) -> Guard<'_, (), MutexBackend> {
        self.limits.lock()
    }

    /// A copy of the configuration into `to` (the caller's: a 1.4 KB
    /// configuration is not kept on the kernel stack).
    pub(crate) fn snapshot(&self, to: &mut Config) {
        to.clone_from(&self.cfg.lock());
    }

    /// Its max-flows and max-memory.
    pub(crate) fn limits(&self) -> Limits {
        self.cfg.lock().limits()
    }

    /// Lowers max-flows and max-memory to `lim` where above them; true if
    /// that changed the configuration.
    pub(crate) fn clamp(&self, lim: Limits) -> bool {
        let mut c = self.cfg.lock();
        let changed = ctl::clamp(&mut c, lim);
        self.live.store(&c);
        changed
    }

    /// The netns's role (`CREM_ROLE_*`).
    pub(crate) fn role(&self) -> u8 {
        self.live.role.load(Ordering::Relaxed)
    }

    /// The k of a new flow.
    pub(crate) fn k(&self) -> u8 {
        self.live.k.load(Ordering::Relaxed)
    }

    /// The `max-flows` limit, per side.
    pub(crate) fn max_flows(&self) -> u32 {
        self.live.max_flows.load(Ordering::Relaxed)
    }

    /// Packets in flight a new flow is sized for.
    pub(crate) fn max_bdp(&self) -> u32 {
        self.live.max_bdp.load(Ordering::Relaxed)
    }

    /// The `max-memory` limit, octets.
    pub(crate) fn max_memory(&self) -> u64 {
        self.live.max_memory.load(Ordering::Relaxed)
    }

    /// The spare flows a side keeps (`spare-flows`).
    pub(crate) fn spare_flows(&self) -> u32 {
        self.live.spare_flows.load(Ordering::Relaxed)
    }
}

impl NetState {
    /// Commits `c` (this netns's setter lock held: `setter`): the
    /// datapath's peers, reporters and flow defaults first, so that a flow
    /// set up once the role has changed has the new defaults too; then the
    /// configuration. Spares sized by the old one are replaced. True if `c`
    /// differs from the configuration it replaces (false, and nothing done,
    /// for another netns's lock). May sleep.
    ///
    /// The comparison and the store are two holds of the configuration's
    /// lock: a clamp between them (another netns's lower limits) would be
    /// undone. config-set holds the initial netns's limits lock across it,
    /// which every clamp of a configuration holds too.
    pub(crate) fn commit(&self, c: &Config, setter: &Setter<'_>) -> bool {
        if !setter.holds(&self.settings) || *self.settings.cfg.lock() == *c {
            return false;
        }
        // SAFETY: updates are serialised by this netns's setter lock, held
        // (checked above).
        unsafe { self.peers.update(|p| p.set(c)) };
        {
            let mut cur = self.settings.cfg.lock();
            cur.clone_from(c);
            self.settings.live.store(c);
        }
        self.pool.renew();
        true
    }
}

/// A peer: traffic to or from `prefix/len` is protected with the CREM
/// function at `addr`. `len` counts the bits of the 16-octet form (an IPv4
/// `/n` is `/96+n` of its mapped prefix); `family` is the prefix's, which
/// only addresses of that family match (a `::/0` must not take IPv4
/// traffic, whose mapped addresses it would hold).
#[derive(Clone, Copy)]
struct PeerEntry {
    prefix: NetAddr,
    len: u8,
    family: Family,
    addr: NetAddr,
}

impl PeerEntry {
    const NONE: PeerEntry = PeerEntry {
        prefix: NetAddr::NONE,
        len: 0,
        family: Family::V4,
        addr: NetAddr::NONE,
    };

    /// Whether `a` is in its prefix.
    fn holds(&self, a: &NetAddr) -> bool {
        a.family() == self.family && (a.as_u128() ^ self.prefix.as_u128()) & mask(self.len) == 0
    }
}

/// The mask of the first `len` bits of 128 (`len` at most 128).
fn mask(len: u8) -> u128 {
    // A shift by 128 (len 0) is none: no bit.
    u128::MAX
        .checked_shl(128u32.saturating_sub(u32::from(len)))
        .unwrap_or(0)
}

/// What a new flow starts with, of one configuration: its engine's
/// parameters with the configuration's fields set (recovery, adaptive, k,
/// m, m_cong, symbol_len, hold_us, epsilon_ppb), the flow's own zero (set
/// up fills them, and flow-new's fixed k and m); and whether restored and
/// held packets are delivered locally (host mode). The memory limit is not
/// here: another netns's commit may clamp it without a new snapshot
/// ([`Settings::max_memory`] has it).
#[derive(Clone, Copy)]
pub(crate) struct Defaults {
    pub(crate) engine: EngineParams,
    pub(crate) host: bool,
}

/// The peers and reporters of one configuration, of both families (an
/// entry matches only addresses of its own family), and its flows'
/// defaults.
pub(crate) struct Peers {
    peers: [PeerEntry; MAX_PEERS],
    n_peers: usize,
    reporters: [NetAddr; MAX_REPORTERS],
    n_reporters: usize,
    pub(crate) defaults: Defaults,
}

/// A configured peer's entry: its prefix masked to its length (so that a
/// lookup compares the masked address alone), or None for an impossible
/// length, for an address of another family than its prefix (`Peer::parse`
/// refuses both: defence), and for an IPv4-mapped IPv6 prefix or address
/// (which would alias IPv4 ones; [`NetAddr::from_ctl`]).
fn entry(p: &ctl::Peer) -> Option<PeerEntry> {
    let (prefix, addr) = (NetAddr::from_ctl(&p.prefix)?, NetAddr::from_ctl(&p.addr)?);
    let (family, len) = match p.prefix {
        Addr::V4(_) if p.len <= 32 => (Family::V4, p.len.saturating_add(96)),
        Addr::V6(_) if p.len <= 128 => (Family::V6, p.len),
        _ => return None,
    };
    if addr.family() != family {
        return None;
    }
    Some(PeerEntry {
        prefix: NetAddr::from_u128(prefix.as_u128() & mask(len)),
        len,
        family,
        addr,
    })
}

impl Peers {
    /// No peer, no reporter (a new netns's configuration).
    pub(crate) const NONE: Peers = Peers {
        peers: [PeerEntry::NONE; MAX_PEERS],
        n_peers: 0,
        reporters: [NetAddr::NONE; MAX_REPORTERS],
        n_reporters: 0,
        defaults: Defaults {
            engine: EngineParams::ZERO,
            host: false,
        },
    };

    /// The peers and reporters of configuration `c`, and its flows'
    /// defaults, as a value (KUnit's: the netns's are made and set in
    /// place, [`current`] and [`Self::set`]).
    #[cfg(crem_kunit)]
    pub(crate) fn of(c: &Config) -> Self {
        let mut p = Peers::NONE;
        p.set(c);
        p
    }

    /// Makes this `c`'s ([`Self::of`]) where it is: a commit rewrites the
    /// unused copy in place, with no 1.4 KiB temporary on the stack.
    pub(crate) fn set(&mut self, c: &Config) {
        let p = self;
        (p.n_peers, p.n_reporters) = (0, 0);
        p.defaults = Defaults {
            engine: EngineParams::ZERO,
            host: false,
        };
        let e = &mut p.defaults.engine;
        (e.recovery, e.adaptive, e.k, e.m, e.m_cong) =
            (c.recovery.into(), c.adaptive.into(), c.k, c.m, c.m_cong);
        (e.symbol_len, e.hold_us, e.epsilon_ppb) = (c.symbol_len, c.hold_us, c.epsilon_ppb);
        p.defaults.host = c.role == Role::Host;
        for e in c.peers.iter() {
            if let (Some(en), Some(slot)) = (entry(e), p.peers.get_mut(p.n_peers)) {
                *slot = en;
                p.n_peers = p.n_peers.saturating_add(1);
            }
        }
        for r in c.reporters.iter() {
            if let (Some(a), Some(slot)) =
                (NetAddr::from_ctl(r), p.reporters.get_mut(p.n_reporters))
            {
                *slot = a;
                p.n_reporters = p.n_reporters.saturating_add(1);
            }
        }
    }

    fn peers(&self) -> &[PeerEntry] {
        self.peers.get(..self.n_peers).unwrap_or(&[])
    }

    /// The peer protecting traffic to or from `a` (the longest prefix of
    /// its family holding it; the first of equal ones), if any.
    pub(crate) fn peer_for(&self, a: &NetAddr) -> Option<NetAddr> {
        let mut best: Option<&PeerEntry> = None;
        for p in self.peers() {
            if p.holds(a) && best.is_none_or(|b| p.len > b.len) {
                best = Some(p);
            }
        }
        best.map(|p| p.addr)
    }

    /// Whether `a` is a configured peer CREM function.
    pub(crate) fn is_peer(&self, a: &NetAddr) -> bool {
        self.peers().iter().any(|p| p.addr == *a)
    }

    /// Whether `a` is an allow-listed Path Reporter.
    pub(crate) fn is_reporter(&self, a: &NetAddr) -> bool {
        let r = self.reporters.get(..self.n_reporters).unwrap_or(&[]);
        r.contains(a)
    }
}

/// The netns's peers and reporters, as the datapath reads them.
pub(crate) type Current = RcuDouble<Peers>;

/// A new netns's, of its initial configuration `c`, made in place (two
/// `Peers` of ~1.4 KiB: not on the stack of the netns's init).
pub(crate) fn current(c: &Config) -> impl kernel::init::Init<Current> + '_ {
    // SAFETY: the closure leaves a whole `Peers` at `p` (all of it written
    // by the constant, then set in place).
    unsafe {
        RcuDouble::init_each(move |p: *mut Peers| {
            p.write(Peers::NONE);
            (*p).set(c);
        })
    }
}
