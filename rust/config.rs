// SPDX-License-Identifier: GPL-2.0
//! Who the datapath talks to: the netns's peers (which CREM function
//! protects traffic to or from a prefix) and allow-listed Path Reporters,
//! as an immutable snapshot of the configuration that the datapath reads
//! under RCU, per packet, without a lock. config-set (C, `crem_nl.c`)
//! publishes a new snapshot with each commit ([`crem_rs_config_commit`]);
//! the hook (`crate::hook`), the socket's dispatch (`crate::dispatch`) and
//! flow-new (`crate::create`) read it.

use crate::ffi;
use crate::kernel_ext::rcu::RcuDouble;
use crate::netns;
use core::ffi::c_void;

const MAX_PEERS: usize = ffi::CREM_MAX_PEERS as usize;
const MAX_REPORTERS: usize = ffi::CREM_MAX_REPORTERS as usize;

/// An IPv4 peer: traffic to or from `prefix/len` is protected with the
/// CREM function at `addr` (addresses as `__be32`, in memory order).
#[derive(Clone, Copy)]
struct Peer4 {
    prefix: u32,
    mask: u32,
    len: u8,
    addr: u32,
}

/// What a new flow starts with, of one configuration: its engine's
/// parameters with the configuration's fields set (recovery, adaptive, k,
/// m, m_cong, symbol_len, hold_us, epsilon_ppb), the flow's own zero (set
/// up fills them, and flow-new's fixed k and m); and whether restored and
/// held packets are delivered locally (host mode). The memory limit is not
/// here: C keeps it (other netns's commits clamp it) and passes the
/// retention budget it allows.
#[derive(Clone, Copy)]
pub(crate) struct Defaults {
    pub(crate) engine: ffi::crem_engine_params,
    pub(crate) host: bool,
}

/// The peers and reporters of one configuration (IPv4: the datapath's
/// only family so far; IPv6 entries are kept by the configuration and not
/// used here), and its flows' defaults.
pub(crate) struct Peers {
    peers: [Peer4; MAX_PEERS],
    n_peers: usize,
    reporters: [u32; MAX_REPORTERS],
    n_reporters: usize,
    pub(crate) defaults: Defaults,
}

/// An IPv4 address of the configuration's (`crem_addr`), or None.
fn v4(a: &ffi::crem_addr) -> Option<u32> {
    let b: [u8; 4] = a.a.get(..4)?.try_into().ok()?;
    (a.len == 4).then_some(u32::from_ne_bytes(b))
}

impl Peers {
    /// No peer, no reporter (a new netns's configuration).
    pub(crate) const NONE: Peers = Peers {
        peers: [Peer4 {
            prefix: 0,
            mask: 0,
            len: 0,
            addr: 0,
        }; MAX_PEERS],
        n_peers: 0,
        reporters: [0; MAX_REPORTERS],
        n_reporters: 0,
        defaults: Defaults {
            // SAFETY: a C struct of integers, for which all zeros is valid.
            engine: unsafe { core::mem::zeroed() },
            host: false,
        },
    };

    /// The IPv4 peers and reporters of configuration `c`.
    pub(crate) fn from_cfg(c: &ffi::crem_cfg) -> Self {
        let mut p = Peers::NONE;
        let e = &mut p.defaults.engine;
        (e.recovery, e.adaptive, e.k, e.m, e.m_cong) = (c.recovery, c.adaptive, c.k, c.m, c.m_cong);
        (e.symbol_len, e.hold_us, e.epsilon_ppb) = (c.symbol_len, c.hold_us, c.epsilon_ppb);
        p.defaults.host = u32::from(c.role) == ffi::crem_role_CREM_ROLE_HOST;
        for e in c.peers.iter().take(usize::from(c.n_peers)) {
            let (Some(prefix), Some(addr)) = (v4(&e.prefix), v4(&e.addr)) else {
                continue;
            };
            if e.prefix_len > 32 {
                continue;
            }
            let mask = match e.prefix_len {
                0 => 0,
                l => (u32::MAX << (32 - u32::from(l))).to_be(),
            };
            if let Some(slot) = p.peers.get_mut(p.n_peers) {
                *slot = Peer4 {
                    prefix,
                    mask,
                    len: e.prefix_len,
                    addr,
                };
                p.n_peers = p.n_peers.saturating_add(1);
            }
        }
        for r in c.reporters.iter().take(usize::from(c.n_reporters)) {
            if let (Some(a), Some(slot)) = (v4(r), p.reporters.get_mut(p.n_reporters)) {
                *slot = a;
                p.n_reporters = p.n_reporters.saturating_add(1);
            }
        }
        p
    }

    fn peers(&self) -> &[Peer4] {
        self.peers.get(..self.n_peers).unwrap_or(&[])
    }

    /// The peer protecting traffic to or from `a` (the longest prefix
    /// holding it; the first of equal ones), or 0.
    pub(crate) fn peer_for(&self, a: u32) -> u32 {
        let mut best: Option<&Peer4> = None;
        for p in self.peers() {
            if a & p.mask == p.prefix && best.is_none_or(|b| p.len > b.len) {
                best = Some(p);
            }
        }
        best.map_or(0, |p| p.addr)
    }

    /// Whether `a` is a configured peer CREM function.
    pub(crate) fn is_peer(&self, a: u32) -> bool {
        self.peers().iter().any(|p| p.addr == a)
    }

    /// Whether `a` is an allow-listed Path Reporter.
    pub(crate) fn is_reporter(&self, a: u32) -> bool {
        let r = self.reporters.get(..self.n_reporters).unwrap_or(&[]);
        r.contains(&a)
    }
}

/// The netns's peers and reporters, as the datapath reads them.
pub(crate) type Current = RcuDouble<Peers>;

/// A new netns's, of its initial configuration `c` (no peers yet, its
/// defaults).
pub(crate) fn current(c: &ffi::crem_cfg) -> Current {
    RcuDouble::new(Peers::from_cfg(c), Peers::from_cfg(c))
}

/// config-set committed `c` (process context, under the netns's
/// `sock_mutex`, which serialises commits): the datapath uses its peers
/// and reporters from the return on (the old ones until then).
#[no_mangle]
extern "C" fn crem_rs_config_commit(state: *mut c_void, c: *const ffi::crem_cfg) {
    // SAFETY: C passes its netns state and its configuration, valid for
    // the call.
    let (Some(st), Some(c)) = (unsafe { netns::state_opt(state) }, unsafe { c.as_ref() }) else {
        return;
    };
    // SAFETY: commits are serialised by the caller (`sock_mutex`).
    unsafe { st.peers.update(|p| *p = Peers::from_cfg(c)) };
    // Spares of another max-bdp or k are replaced.
    st.pool.renew();
}
