// SPDX-License-Identifier: GPL-2.0
//! What the datapath asks of the configuration (`rust/config.rs`): the peer
//! of an address by longest prefix, who is a peer or a Path Reporter (of
//! either family, never across families), and that a commit reaches
//! readers through the lock-free `RcuDouble`.

use super::pool::with_netns;
use super::{run, Checks};
use crate::addr::NetAddr;
use crate::config::{self, Peers};
use crate::crem_core::ctl::{Addr, Config, Peer, Recovery, Role};
use crate::kernel_ext::rcu;
use core::ffi::{c_char, c_int};
use kernel::prelude::*;

fn ip(a: [u8; 4]) -> NetAddr {
    NetAddr::from_v4(a)
}

/// A configuration with these IPv4 peers (prefix, length, peer) and
/// reporters, plus one IPv6 peer (`::/0`, which no IPv4 address matches)
/// and one impossible prefix length, which the datapath ignores.
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
/// there is none; IPv6 entries (even `::/0`) and bad lengths never match
/// an IPv4 address.
#[no_mangle]
extern "C" fn crem_kunit_config_peer_for(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let (a, b) = ([192, 0, 2, 1], [192, 0, 2, 2]);
        let p = Peers::of(&cfg(&[([10, 0, 0, 0], 8, a), ([10, 1, 0, 0], 16, b)], &[]));
        let cases = [
            ([10, 1, 2, 3], Some(b)),
            ([10, 2, 0, 1], Some(a)),
            ([10, 1, 255, 255], Some(b)),
            ([11, 0, 0, 1], None),
            ([9, 9, 9, 9], None),
        ];
        for (q, want) in cases {
            let got = p.peer_for(&ip(q));
            if got != want.map(ip) {
                let _ = write!(w, "peer for {q:?}: {:?} ({want:?})", got.map(|a| a.ctl()));
                return false;
            }
        }
        // A default route catches the rest, the longer prefixes still win.
        let c = [0, 0, 0, 9];
        let d = Peers::of(&cfg(&[([0; 4], 0, c), ([10, 1, 0, 0], 16, b)], &[]));
        if d.peer_for(&ip([11, 0, 0, 1])) != Some(ip(c))
            || d.peer_for(&ip([10, 1, 0, 1])) != Some(ip(b))
        {
            let _ = write!(
                w,
                "default route: {:?}",
                d.peer_for(&ip([11, 0, 0, 1])).map(|a| a.ctl())
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
            (p.is_peer(&ip(a)), p.is_reporter(&ip(a))),
            (p.is_peer(&ip(r)), p.is_reporter(&ip(r))),
            (
                p.is_peer(&ip([10, 0, 0, 1])),
                p.is_reporter(&ip([10, 0, 0, 1])),
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
        let Ok(cur) = KBox::init(config::current(&cfg(&[], &[])), GFP_KERNEL) else {
            let _ = write!(w, "allocation failed");
            return false;
        };
        let q = ip([10, 1, 2, 3]);
        let seen = |cur: &config::Current| cur.get(&rcu::read_lock()).peer_for(&q);
        let mut got = [seen(&cur), None, None, None];
        for (i, peer) in [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]
            .iter()
            .enumerate()
        {
            let c = cfg(&[([10, 0, 0, 0], 8, *peer)], &[]);
            // SAFETY: this test is the only writer.
            unsafe { cur.update(|p| p.set(&c)) };
            got[i + 1] = seen(&cur);
        }
        let want = [None, Some(ip([1; 4])), Some(ip([2; 4])), Some(ip([3; 4]))];
        if got != want {
            let _ = write!(w, "peer seen after each commit {got:x?} ({want:x?})");
            return false;
        }
        true
    })
}

/// A netns has the netfilter hooks of its role and `report` only
/// (`rust/hook_points.rs`): none while disabled, a host's LOCAL_IN and
/// LOCAL_OUT, a gateway's FORWARD, a reporter's FORWARD whatever its role,
/// each for IPv4 and IPv6 (bits 0-2 and 3-5); a role change adds before it
/// removes; another netns's setter lock changes nothing.
#[no_mangle]
extern "C" fn crem_kunit_config_hooks_per_role(msg: *mut c_char, len: usize) -> c_int {
    const fn both(point: u32) -> u8 {
        1 << point | 1 << (point + 3)
    }
    const IN: u8 = both(crate::hook_points::LOCAL_IN);
    const FWD: u8 = both(crate::hook_points::FORWARD);
    const OUT: u8 = both(crate::hook_points::LOCAL_OUT);
    run(msg, len, |w| {
        with_netns(&Config::DEFAULT, w, |st, w| {
            let mut c = Checks::new(w);
            c.check(st.hooks.registered() == 0, "hooks while disabled");
            {
                let set = st.settings.setter();
                let host = st.hooks.add(st, Role::Host, false, &set).is_ok();
                c.check(host && st.hooks.registered() == IN | OUT, "a host's hooks");
                let both = st.hooks.add(st, Role::Gateway, false, &set).is_ok();
                c.check(
                    both && st.hooks.registered() == IN | OUT | FWD,
                    "a gateway's added before a host's go",
                );
                st.hooks.keep(st, Role::Gateway, false, &set);
                c.check(st.hooks.registered() == FWD, "a gateway's only");
                st.hooks.keep(st, Role::Disabled, true, &set);
                c.check(st.hooks.registered() == FWD, "a reporter's: FORWARD");
                let host = st.hooks.add(st, Role::Host, true, &set).is_ok();
                st.hooks.keep(st, Role::Host, true, &set);
                c.check(
                    host && st.hooks.registered() == IN | OUT | FWD,
                    "a reporting host's: its own and FORWARD",
                );
                st.hooks.keep(st, Role::Host, false, &set);
                c.check(st.hooks.registered() == IN | OUT, "report off: a host's");
                let fwd = st.hooks.add(st, Role::Disabled, true, &set).is_ok();
                st.hooks.keep(st, Role::Disabled, true, &set);
                c.check(fwd && st.hooks.registered() == FWD, "a reporter only's");
            }
            {
                // SAFETY: KUnit cases run with the module loaded.
                let other = unsafe { crate::netns::init_state() };
                let set = other.settings.setter();
                let refused = st.hooks.add(st, Role::Host, false, &set).is_err();
                st.hooks.keep(st, Role::Disabled, false, &set);
                c.check(
                    refused && st.hooks.registered() == FWD,
                    "another netns's setter lock changed the hooks",
                );
            }
            let set = st.settings.setter();
            st.hooks.keep(st, Role::Disabled, false, &set);
            c.check(st.hooks.registered() == 0, "hooks after disabling");
            c.ok
        })
    })
}

/// `2001:db8:` followed by `rest` (octets 4 on), as the configuration's.
fn v6(rest: &[u8]) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    for (o, r) in a.iter_mut().skip(4).zip(rest) {
        *o = *r;
    }
    a
}

/// IPv6 peers by longest prefix, family-isolated both ways: an IPv6
/// `::/0` never takes an IPv4 address (nor a mapped one), an IPv4
/// `0.0.0.0/0` never takes an IPv6 address; IPv6 peers and reporters are
/// known by their address; an IPv4-mapped IPv6 entry is ignored.
#[no_mangle]
extern "C" fn crem_kunit_config_v6_peers(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut c = Checks::new(w);
        let (pa, pb, pd) = (
            v6(&[0xf, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
            v6(&[0xf, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]),
            v6(&[0xf, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]),
        );
        let mut mapped = [0u8; 16];
        mapped[10..].copy_from_slice(&[0xff, 0xff, 10, 0, 0, 0]);
        let entries = [
            // 2001:db8:b::/48 and, longer, 2001:db8:b:1::/64.
            (Addr::V6(v6(&[0, 0xb])), 48, Addr::V6(pa)),
            (Addr::V6(v6(&[0, 0xb, 0, 1])), 64, Addr::V6(pb)),
            // The IPv6 default route: IPv6 only.
            (Addr::V6([0; 16]), 0, Addr::V6(pd)),
            // An IPv4-mapped IPv6 prefix: would alias 10.0.0.0/8, ignored.
            (Addr::V6(mapped), 104, Addr::V6(pa)),
            // An IPv4 default route: IPv4 only.
            (Addr::V4([0; 4]), 0, Addr::V4([192, 0, 2, 1])),
        ];
        // The entries, the last (IPv4's default route) only if `v4_default`.
        let config = |v4_default: bool| {
            let mut cf = Config::DEFAULT;
            let n = entries.len() - usize::from(!v4_default);
            for &(prefix, len, addr) in entries.iter().take(n) {
                let _ = cf.peers.push(Peer { prefix, len, addr });
            }
            let _ = cf.reporters.push(Addr::V6(pd));
            cf
        };
        let p = Peers::of(&config(true));
        let n6 = |a: [u8; 16]| NetAddr::from_v6(a);
        let q = |a: [u8; 16]| n6(a).and_then(|a| p.peer_for(&a));
        c.check(
            q(v6(&[0, 0xb, 0, 2, 5])) == n6(pa),
            "/48 holds 2001:db8:b:2::",
        );
        c.check(
            q(v6(&[0, 0xb, 0, 1, 5])) == n6(pb),
            "/64 wins in 2001:db8:b:1::",
        );
        c.check(q(v6(&[0, 0xc])) == n6(pd), "::/0 takes the rest of IPv6");
        c.check(
            p.peer_for(&ip([10, 1, 2, 3])) == Some(ip([192, 0, 2, 1])),
            "an IPv4 address: the IPv4 default route, not ::/0 nor the mapped /104",
        );
        // Without the IPv4 default route, nothing takes IPv4.
        let p4 = Peers::of(&config(false));
        c.check(
            p4.peer_for(&ip([10, 1, 2, 3])).is_none() && p4.peer_for(&ip([0; 4])).is_none(),
            "::/0 never matches an IPv4 (mapped) key",
        );
        // Only the IPv4 default route: nothing takes IPv6. (Not `cfg`,
        // which adds an IPv6 ::/0.)
        let mut only4 = Config::DEFAULT;
        let _ = only4.peers.push(Peer {
            prefix: Addr::V4([0; 4]),
            len: 0,
            addr: Addr::V4([192, 0, 2, 1]),
        });
        let p0 = Peers::of(&only4);
        c.check(
            n6(v6(&[0, 0xb])).and_then(|a| p0.peer_for(&a)).is_none(),
            "0.0.0.0/0 never matches an IPv6 key",
        );
        c.check(
            n6(pb).is_some_and(|a| p.is_peer(&a)) && n6(pd).is_some_and(|a| p.is_reporter(&a)),
            "IPv6 peer and reporter known",
        );
        c.ok
    })
}
