// SPDX-License-Identifier: GPL-2.0
//! Making flows, on a netns state of its own. The spare pool
//! (`rust/pool.rs`): empty at first (the first take falls back and starts
//! the refill), then full on both sides (its `spare-flows`, not the
//! default here); every take gives a flow of the
//! side asked for and is refilled; once closed, nothing is taken and
//! nothing is left (what it freed, kmemleak checks on the debug kernel:
//! `vm/guest/kunit.sh` scans after the module is unloaded). Set-up
//! (`flow::setup_request`): the identity and template come from the
//! request and the netns's configuration.

use super::{run, Checks};
use crate::addr::NetAddr;
use crate::crem_core::ctl::{Config, Recovery, Role};
use crate::crem_core::engine::module_caps::MAX_BDP_DEFAULT;
use crate::crem_core::nl::stat;
use crate::flow;
use crate::netns::{self, NetState};
use core::ffi::{c_char, c_int};
use core::fmt::Write;
use kernel::bindings;
use kernel::error::code::EINVAL;

const CSF: u8 = 0;
const CRF: u8 = 1;
/// The pool case's `spare-flows` (not the default: the pool holds what
/// the netns says).
const SPARE: usize = 6;

/// Waits up to 2 s (TCG) until both sides hold `n` spares.
fn settle(st: &NetState, n: usize) -> bool {
    for _ in 0..200 {
        if st.pool.count(CSF.into()) == n && st.pool.count(CRF.into()) == n {
            return true;
        }
        // SAFETY: KUnit cases run in process context.
        unsafe { bindings::msleep(10) };
    }
    false
}

/// A spare of `side` from the pool, checked and freed: whether there was
/// one and it had that side.
fn take(st: &NetState, side: u8, w: &mut dyn Write) -> Option<bool> {
    let f = st.pool.take(side, &st.flow_caps())?.into_raw();
    // SAFETY: a flow of the pool's, ours alone until freed below.
    let got = unsafe { crate::table::InTable::links(&*f).key().side };
    // SAFETY: as above; never inserted.
    unsafe { flow::free(f) };
    if got != side {
        let _ = write!(w, "a spare of side {got} for side {side}; ");
    }
    Some(got == side)
}

/// Runs `body` on a netns state of its own with configuration `cfg`, for
/// the initial netns's address (all its flows keep; a static), freed
/// after; false if none could be made. It counts in its own counters.
pub(super) fn with_netns(
    cfg: &Config,
    w: &mut dyn Write,
    body: impl FnOnce(&NetState, &mut dyn Write) -> bool,
) -> bool {
    let raw = netns::init(crate::kernel_ext::net::init_net(), false, cfg);
    // SAFETY: a state of `netns::init` (or null), freed below.
    let Some(st) = (unsafe { netns::state_opt(raw) }) else {
        let _ = write!(w, "no netns state");
        return false;
    };
    let ok = body(st, w);
    netns::exit(raw);
    ok
}

/// A configuration of zeros but the default limits: flows sized for 512
/// packets in flight (`max-bdp`), whose structures fit 64 MiB, four spares
/// a side.
fn limits_cfg() -> Config {
    Config {
        port: 0,
        role: Role::Disabled,
        recovery: Recovery::Coded,
        adaptive: false,
        k: 0,
        m: 0,
        m_cong: 0,
        symbol_len: 0,
        epsilon_ppb: 0,
        hold_us: 0,
        max_flows: 0,
        max_bdp: MAX_BDP_DEFAULT,
        max_memory: 64 << 20,
        report: false,
        node_id: 0,
        report_interval_us: 0,
        report_flow_gap_us: 0,
        report_port_rate: 0,
        report_psns: 0,
        reporters: Config::NO_REPORTERS,
        peers: Config::NO_PEERS,
        spare_flows: 4,
    }
}

fn pool_fills_and_closes(w: &mut dyn Write) -> bool {
    // A role that takes spares (a disabled one keeps none).
    let mut cfg = limits_cfg();
    (cfg.role, cfg.spare_flows) = (Role::Host, SPARE as u32);
    with_netns(&cfg, w, pool_fills_and_closes_in)
}

fn pool_fills_and_closes_in(st: &NetState, w: &mut dyn Write) -> bool {
    let mut c = Checks::new(w);
    c.check(
        st.pool.take(CSF, &st.flow_caps()).is_none(),
        "the first take found a spare",
    );
    c.check(settle(st, SPARE), "not filled after the first take");
    let mut all = true;
    for _ in 0..SPARE {
        all &= take(st, CSF, c.w) == Some(true);
    }
    all &= take(st, CRF, c.w) == Some(true);
    c.check(all, "a take failed or gave the wrong side");
    c.check(settle(st, SPARE), "not refilled after takes");
    st.pool.close();
    c.check(
        st.pool.take(CRF, &st.flow_caps()).is_none(),
        "a take after close",
    );
    c.check(
        st.pool.count(CSF.into()) == 0 && st.pool.count(CRF.into()) == 0,
        "spares left after close",
    );
    c.ok
}

#[no_mangle]
extern "C" fn crem_kunit_pool_fills_and_closes(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, pool_fills_and_closes)
}

/// A flow set up for a request: its key, peer and template are the
/// request's and the configuration's (host mode here); a fixed (k, m)
/// passes; a request of the other side is refused.
fn flow_setup_from_request(w: &mut dyn Write) -> bool {
    with_netns(&host_cfg(), w, setup_from_request_in)
}

/// A host's configuration with the draft's defaults (k 32, m 2, adaptive)
/// and C's limits (flows sized for 512 packets in flight, 64 MiB).
pub(super) fn host_cfg() -> Config {
    let mut cfg = limits_cfg();
    (cfg.recovery, cfg.adaptive, cfg.k, cfg.m, cfg.m_cong) =
        (Recovery::SelectiveRepeat, true, 32, 2, 1);
    cfg.epsilon_ppb = 100_000;
    cfg.role = Role::Host;
    cfg
}

fn setup_from_request_in(st: &NetState, w: &mut dyn Write) -> bool {
    let a = NetAddr::from_v4([10, 0, 0, 1]);
    let b = NetAddr::from_v4([10, 0, 1, 1]);
    let peer = NetAddr::from_v4([192, 0, 2, 7]);
    let mut rq = crate::create::FlowRequest::default();
    rq.key.saddr = a;
    rq.key.daddr = b;
    rq.key.dqp = 0x42;
    rq.peer = peer;
    (rq.tos, rq.ttl, rq.sport, rq.link_mtu) = (0x88, 61, 0xc001u16.to_be(), 1500);
    let setup = |rq: &crate::create::FlowRequest| {
        let spare = st.alloc(CSF, &st.flow_caps())?;
        let rc = match flow::setup_request(&spare, st, rq) {
            Ok(()) => 0,
            Err(()) => EINVAL.to_errno(),
        };
        let f = spare.into_raw();
        Some((f, rc))
    };
    let mut ok = true;
    if let Some((f, rc)) = setup(&rq) {
        // SAFETY: set up above, freed below.
        let fl = unsafe { &*f };
        let t = fl.template();
        let k = crate::table::InTable::links(fl).key();
        let got = (
            rc,
            (t.saddr, t.daddr, t.tos, t.ttl, t.sport, t.frag_off, t.host),
            (k.saddr, k.daddr, k.dqp),
            crate::table::InTable::links(fl).peer(),
        );
        let want = (
            0,
            (a, b, 0x88, 61, 0xc001u16.to_be(), 0x4000u16.to_be(), true),
            (a, b, 0x42),
            peer,
        );
        if got != want {
            let _ = write!(w, "set up {got:x?}, not {want:x?}; ");
            ok = false;
        }
        // SAFETY: the pool's flow, never inserted, ours alone.
        unsafe { flow::free(f) };
    } else {
        let _ = write!(w, "no flow; ");
        ok = false;
    }
    // flow-new's fixed (k, m); a receiver flow's request for a sender
    // flow's engine.
    for (side, want) in [(CSF, 0), (CRF, EINVAL.to_errno())] {
        rq.fixed = true;
        (rq.k, rq.m, rq.key.side) = (8, 1, side);
        match setup(&rq) {
            Some((f, rc)) => {
                if rc != want {
                    let _ = write!(w, "request of side {side}: {rc} ({want}); ");
                    ok = false;
                }
                // SAFETY: the pool's flow, never inserted, ours alone.
                unsafe { flow::free(f) };
            }
            None => ok = false,
        }
    }
    ok
}

#[no_mangle]
extern "C" fn crem_kunit_flow_setup_from_request(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, flow_setup_from_request)
}

/// The netns's memory budget (`NetState::charge`, what every flow's stores
/// charge): charges up to `max-memory` are taken, the one past it is
/// refused whole and counted as drop-memory, and what is given back makes
/// room again.
fn netns_budget(w: &mut dyn Write) -> bool {
    let mut cfg = host_cfg();
    cfg.max_memory = 1000;
    with_netns(&cfg, w, |st, w| {
        let refused = || st.stat(stat::DROP_MEMORY);
        let mut c = Checks::new(w);
        c.check(st.charge(600) && st.charge(400), "charges up to max-memory");
        c.check(
            st.memory() == 1000 && refused() == 0,
            "1000 held, none refused",
        );
        c.check(!st.charge(1), "a charge past max-memory");
        c.check(
            st.memory() == 1000 && refused() == 1,
            "refused whole and counted",
        );
        st.uncharge(600);
        c.check(
            st.charge(500) && st.memory() == 900,
            "room again after giving back",
        );
        st.uncharge(900);
        c.check(st.memory() == 0, "all given back");
        c.ok
    })
}

#[no_mangle]
extern "C" fn crem_kunit_netns_budget(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, netns_budget)
}
