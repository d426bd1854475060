// SPDX-License-Identifier: GPL-2.0
//! The datapath's one address type ([`NetAddr`]): 16 octets in network
//! order, an IPv4 address stored IPv4-mapped (`::ffff:a.b.c.d`, RFC 4291
//! 2.5.5.2), so that flow keys, peers and the table's hashes have one code
//! path for both families. An IPv4-mapped address never appears in an IPv6
//! header on the wire, so the mapping is unambiguous where the datapath
//! makes addresses: from IPv4 headers, and from IPv6 ones that are not
//! mapped (the configuration's and the wire's IPv6 addresses are converted
//! with [`NetAddr::from_v6`], which refuses mapped ones).
//!
//! "No address" is all zero (`::`, which no flow or peer can have).

use crate::crem_core::ctl::Addr;
use crate::crem_core::wire::FlowAddrs;

/// The prefix of an IPv4-mapped address.
const V4_MAPPED: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/// An address family.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Family {
    V4,
    V6,
}

/// An IPv4 or IPv6 address (see the module docs). `repr(C)`: it is part of
/// what the socket keeps in an skb's control block (`socket::Dest`).
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct NetAddr([u8; 16]);

impl NetAddr {
    /// No address.
    pub(crate) const NONE: NetAddr = NetAddr([0; 16]);

    /// The IPv4 address `a` (network order).
    pub(crate) const fn from_v4(a: [u8; 4]) -> NetAddr {
        let [a0, a1, a2, a3] = a;
        NetAddr([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a0, a1, a2, a3])
    }

    /// The IPv4 address `a` as a `__be32` (network order in memory): the
    /// KUnit cases' constants.
    #[cfg(crem_kunit)]
    pub(crate) const fn from_be32(a: u32) -> NetAddr {
        Self::from_v4(a.to_ne_bytes())
    }

    /// The IPv6 address `a`, unless it is IPv4-mapped (which would alias
    /// an IPv4 address: no such address is on the wire).
    pub(crate) fn from_v6(a: [u8; 16]) -> Option<NetAddr> {
        let n = NetAddr(a);
        (n.family() == Family::V6).then_some(n)
    }

    /// A configured address (an IPv6 one that is IPv4-mapped: none).
    pub(crate) fn from_ctl(a: &Addr) -> Option<NetAddr> {
        match *a {
            Addr::V4(v4) => Some(Self::from_v4(v4)),
            Addr::V6(v6) => Self::from_v6(v6),
        }
    }

    /// A flow's addresses as a message names them (an IPv6 pair with a
    /// mapped address: none, as [`Self::from_v6`]).
    pub(crate) fn of_flow(a: FlowAddrs) -> Option<(NetAddr, NetAddr)> {
        match a {
            FlowAddrs::V4 { src, dst } => Some((Self::from_v4(src), Self::from_v4(dst))),
            FlowAddrs::V6 { src, dst } => Some((Self::from_v6(src)?, Self::from_v6(dst)?)),
        }
    }

    /// A flow's addresses as messages carry them: IPv4 if both are
    /// (a flow's are of one family: its packets' header has both).
    pub(crate) fn flow(src: NetAddr, dst: NetAddr) -> FlowAddrs {
        match (src.v4(), dst.v4()) {
            (Some(src), Some(dst)) => FlowAddrs::V4 { src, dst },
            _ => FlowAddrs::V6 {
                src: src.0,
                dst: dst.0,
            },
        }
    }

    /// Its family; no address (`::`) is IPv6's unspecified address.
    pub(crate) fn family(&self) -> Family {
        if self.0.starts_with(&V4_MAPPED) {
            Family::V4
        } else {
            Family::V6
        }
    }

    /// The IPv4 address, if it is one.
    pub(crate) fn v4(&self) -> Option<[u8; 4]> {
        match self.0 {
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a0, a1, a2, a3] => Some([a0, a1, a2, a3]),
            _ => None,
        }
    }

    /// The IPv4 address as a `__be32` (network order in memory), if it is
    /// one.
    pub(crate) fn be32(&self) -> Option<u32> {
        self.v4().map(u32::from_ne_bytes)
    }

    /// The 16 octets (an IPv4 address mapped).
    pub(crate) fn octets(&self) -> &[u8; 16] {
        &self.0
    }

    /// The octets as the family's attributes carry them: 4 for IPv4, else
    /// 16.
    pub(crate) fn wire(&self) -> &[u8] {
        match self.0.split_last_chunk::<4>() {
            Some((_, v4)) if self.family() == Family::V4 => v4,
            _ => &self.0,
        }
    }

    /// As the configuration's type (its text, `Display`).
    pub(crate) fn ctl(&self) -> Addr {
        match self.v4() {
            Some(a) => Addr::V4(a),
            None => Addr::V6(self.0),
        }
    }

    /// The four 32-bit words in memory order (`in6_addr.s6_addr32`, what
    /// the kernel hashes: [`crate::table`]).
    pub(crate) fn words(&self) -> [u32; 4] {
        // Destructured, not indexed: nothing to check at run time.
        let [a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3] = self.0;
        [
            u32::from_ne_bytes([a0, a1, a2, a3]),
            u32::from_ne_bytes([b0, b1, b2, b3]),
            u32::from_ne_bytes([c0, c1, c2, c3]),
            u32::from_ne_bytes([d0, d1, d2, d3]),
        ]
    }

    /// As one big-endian number (prefix matching, `crate::config`).
    pub(crate) fn as_u128(&self) -> u128 {
        u128::from_be_bytes(self.0)
    }

    /// Of a big-endian number ([`Self::as_u128`]'s inverse).
    pub(crate) fn from_u128(v: u128) -> NetAddr {
        NetAddr(v.to_be_bytes())
    }
}
