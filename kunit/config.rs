// SPDX-License-Identifier: GPL-2.0
//! What the datapath asks of the configuration (`rust/config.rs`): the peer
//! of an address by longest prefix, who is a peer or a Path Reporter, and
//! that a commit reaches readers through the lock-free `RcuDouble`.

use super::pool::with_netns;
use super::{run, Checks};
use crate::config::{self, Peers};
use crate::crem_core::ctl::{Addr, Config, Peer, Recovery, Role};
use crate::kernel_ext::rcu;
use core::ffi::{c_char, c_int};

fn ip(a: [u8; 4]) -> u32 {
    u32::from_ne_bytes(a)
}

/// A configuration with these IPv4 peers (prefix, length, peer) and
/// reporters, plus one IPv6 peer and one impossible prefix length, which
/// the datapath ignores.
fn cfg(peers: &[([u8; 4], u8, [u8; 4])], reporters: &[[u8; 4]]) -> Config {
    let mut c = Config::DEFAULT;
    for &(p, l, a) in peers {
        let _ = c.peers.push(Peer {
            prefix: Addr::V4(p),
            len: l,
            addr: Addr::V4(a),
        });
    }
    // ::/0 to 2001:db8::1: not IPv4.
    let mut v6 = [0; 16];
    v6[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    v6[15] = 1;
    let _ = c.peers.push(Peer {
        prefix: Addr::V6([0; 16]),
        len: 0,
        addr: Addr::V6(v6),
    });
    let _ = c.peers.push(Peer {
        prefix: Addr::V4([0; 4]),
        len: 33,
        addr: Addr::V4([9, 9, 9, 9]),
    });
    for &r in reporters {
        let _ = c.reporters.push(Addr::V4(r));
    }
    c
}

/// The longest prefix holding an address names its peer; without a match
/// there is none; IPv6 entries and bad lengths never match.
#[no_mangle]
extern "C" fn crem_kunit_config_peer_for(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let (a, b) = ([192, 0, 2, 1], [192, 0, 2, 2]);
        let p = Peers::of(&cfg(&[([10, 0, 0, 0], 8, a), ([10, 1, 0, 0], 16, b)], &[]));
        let cases = [
            ([10, 1, 2, 3], b),
            ([10, 2, 0, 1], a),
            ([10, 1, 255, 255], b),
            ([11, 0, 0, 1], [0; 4]),
            ([9, 9, 9, 9], [0; 4]),
        ];
        for (q, want) in cases {
            let got = p.peer_for(ip(q));
            if got != ip(want) {
                let _ = write!(w, "peer for {q:?}: {:?} ({want:?})", got.to_ne_bytes());
                return false;
            }
        }
        // A default route catches the rest, the longer prefixes still win.
        let c = [0, 0, 0, 9];
        let d = Peers::of(&cfg(&[([0; 4], 0, c), ([10, 1, 0, 0], 16, b)], &[]));
        if d.peer_for(ip([11, 0, 0, 1])) != ip(c) || d.peer_for(ip([10, 1, 0, 1])) != ip(b) {
            let _ = write!(
                w,
                "default route: {:?}",
                d.peer_for(ip([11, 0, 0, 1])).to_ne_bytes()
            );
            return false;
        }
        true
    })
}

/// Peers are known by their own address, reporters by theirs; neither by
/// an address they only protect.
#[no_mangle]
extern "C" fn crem_kunit_config_who(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let (a, r) = ([192, 0, 2, 1], [198, 51, 100, 7]);
        let p = Peers::of(&cfg(&[([10, 0, 0, 0], 8, a)], &[r]));
        let got = [
            (p.is_peer(ip(a)), p.is_reporter(ip(a))),
            (p.is_peer(ip(r)), p.is_reporter(ip(r))),
            (
                p.is_peer(ip([10, 0, 0, 1])),
                p.is_reporter(ip([10, 0, 0, 1])),
            ),
        ];
        if got != [(true, false), (false, true), (false, false)] {
            let _ = write!(w, "(peer, reporter) of peer, reporter, protected: {got:?}");
            return false;
        }
        true
    })
}

/// Commits alternate the two copies; a reader sees each commit whole after
/// it returns, and a new netns has no peer; a snapshot's flow defaults are
/// its configuration's, field by field.
#[no_mangle]
extern "C" fn crem_kunit_config_commits(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut c = cfg(&[], &[]);
        (c.recovery, c.adaptive, c.k, c.m, c.m_cong) = (Recovery::Both, true, 17, 3, 5);
        (c.symbol_len, c.hold_us, c.epsilon_ppb) = (1062, 700, 90_000);
        c.role = Role::Host;
        let d = Peers::of(&c).defaults;
        let e = &d.engine;
        let got = (
            (e.recovery, e.adaptive, e.k, e.m, e.m_cong),
            (e.symbol_len, e.hold_us, e.epsilon_ppb),
            d.host,
        );
        if got != ((2, 1, 17, 3, 5), (1062, 700, 90_000), true) {
            let _ = write!(w, "defaults {got:?}");
            return false;
        }
        c.role = Role::Gateway;
        if Peers::of(&c).defaults.host {
            let _ = write!(w, "a gateway's defaults say host");
            return false;
        }
        let cur = config::current(&cfg(&[], &[]));
        let q = ip([10, 1, 2, 3]);
        let seen = |cur: &config::Current| cur.get(&rcu::read_lock()).peer_for(q);
        let mut got = [seen(&cur), 0, 0, 0];
        for (i, peer) in [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]
            .iter()
            .enumerate()
        {
            let c = cfg(&[([10, 0, 0, 0], 8, *peer)], &[]);
            // SAFETY: this test is the only writer.
            unsafe { cur.update(|p| *p = Peers::of(&c)) };
            got[i + 1] = seen(&cur);
        }
        let want = [0, ip([1; 4]), ip([2; 4]), ip([3; 4])];
        if got != want {
            let _ = write!(w, "peer seen after each commit {got:x?} ({want:x?})");
            return false;
        }
        true
    })
}

/// A netns has the netfilter hooks of its role only (`rust/hook_points.rs`):
/// none while disabled, a host's LOCAL_IN and LOCAL_OUT, a gateway's
/// FORWARD; a role change adds before it removes; another netns's setter
/// lock changes nothing.
#[no_mangle]
extern "C" fn crem_kunit_config_hooks_per_role(msg: *mut c_char, len: usize) -> c_int {
    const IN: u8 = 1 << crate::hook_points::LOCAL_IN;
    const FWD: u8 = 1 << crate::hook_points::FORWARD;
    const OUT: u8 = 1 << crate::hook_points::LOCAL_OUT;
    run(msg, len, |w| {
        with_netns(&Config::DEFAULT, w, |st, w| {
            let mut c = Checks::new(w);
            c.check(st.hooks.registered() == 0, "hooks while disabled");
            {
                let set = st.settings.setter();
                let host = st.hooks.add(st, Role::Host, &set).is_ok();
                c.check(host && st.hooks.registered() == IN | OUT, "a host's hooks");
                let both = st.hooks.add(st, Role::Gateway, &set).is_ok();
                c.check(
                    both && st.hooks.registered() == IN | OUT | FWD,
                    "a gateway's added before a host's go",
                );
                st.hooks.keep(st, Role::Gateway, &set);
                c.check(st.hooks.registered() == FWD, "a gateway's only");
            }
            {
                // SAFETY: KUnit cases run with the module loaded.
                let other = unsafe { crate::netns::init_state() };
                let set = other.settings.setter();
                let refused = st.hooks.add(st, Role::Host, &set).is_err();
                st.hooks.keep(st, Role::Disabled, &set);
                c.check(
                    refused && st.hooks.registered() == FWD,
                    "another netns's setter lock changed the hooks",
                );
            }
            let set = st.settings.setter();
            st.hooks.keep(st, Role::Disabled, &set);
            c.check(st.hooks.registered() == 0, "hooks after disabling");
            c.ok
        })
    })
}
