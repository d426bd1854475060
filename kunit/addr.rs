// SPDX-License-Identifier: GPL-2.0
//! The datapath's addresses (`rust/addr.rs`): an IPv4 address goes in
//! mapped and comes out as it went in (octets, `__be32`, 4-octet attribute,
//! configuration type, a message's AF 4 pair); an IPv6 one keeps its 16
//! octets and family; a mapped IPv6 address is refused where it would alias
//! an IPv4 one.

use super::{run, Checks};
use crate::addr::{Family, NetAddr};
use crate::crem_core::ctl::Addr;
use crate::crem_core::wire::FlowAddrs;
use core::ffi::{c_char, c_int};

#[no_mangle]
extern "C" fn crem_kunit_addr_round_trip(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut c = Checks::new(w);
        let o4 = [192, 0, 2, 7];
        let a = NetAddr::from_v4(o4);
        let mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 7];
        c.check(*a.octets() == mapped, "v4 stored ::ffff:a.b.c.d");
        c.check(a.family() == Family::V4, "v4 family");
        c.check(a.v4() == Some(o4), "v4 octets back");
        c.check(a.be32() == Some(u32::from_ne_bytes(o4)), "v4 __be32 back");
        c.check(NetAddr::from_be32(u32::from_ne_bytes(o4)) == a, "of __be32");
        c.check(a.wire() == o4, "v4 attribute: 4 octets");
        c.check(a.ctl() == Addr::V4(o4), "v4 as config's");
        c.check(
            NetAddr::from_ctl(&Addr::V4(o4)) == Some(a),
            "v4 of config's",
        );
        c.check(
            NetAddr::from_v6(mapped).is_none() && NetAddr::from_ctl(&Addr::V6(mapped)).is_none(),
            "a mapped IPv6 address refused",
        );
        let mut o6 = [0u8; 16];
        o6[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        o6[15] = 1;
        let b = NetAddr::from_v6(o6).unwrap_or(NetAddr::NONE);
        c.check(*b.octets() == o6 && b.family() == Family::V6, "v6 kept");
        c.check(b.v4().is_none() && b.be32().is_none(), "v6 has no v4");
        c.check(b.wire() == o6, "v6 attribute: 16 octets");
        c.check(b.ctl() == Addr::V6(o6), "v6 as config's");
        c.check(
            NetAddr::from_ctl(&Addr::V6(o6)) == Some(b),
            "v6 of config's",
        );
        c.check(
            NetAddr::default() == NetAddr::NONE && *NetAddr::NONE.octets() == [0; 16],
            "none is all zero",
        );
        // A message's pair, both ways.
        let f4 = FlowAddrs::V4 {
            src: o4,
            dst: [10, 0, 0, 1],
        };
        let p4 = NetAddr::of_flow(f4);
        c.check(
            p4 == Some((a, NetAddr::from_v4([10, 0, 0, 1]))),
            "AF 4 pair mapped",
        );
        c.check(
            p4.map(|(s, d)| NetAddr::flow(s, d)) == Some(f4),
            "AF 4 pair back",
        );
        let f6 = FlowAddrs::V6 { src: o6, dst: o6 };
        c.check(
            NetAddr::of_flow(f6).map(|(s, d)| NetAddr::flow(s, d)) == Some(f6),
            "AF 6 pair back",
        );
        c.check(
            NetAddr::of_flow(FlowAddrs::V6 {
                src: o6,
                dst: mapped,
            })
            .is_none(),
            "AF 6 pair with a mapped address refused",
        );
        // The words the table hashes: memory order.
        c.check(
            a.words()[3] == u32::from_ne_bytes(o4)
                && a.words()[2] == u32::from_ne_bytes([0, 0, 0xff, 0xff]),
            "words in memory order",
        );
        c.ok
    })
}
