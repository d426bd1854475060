// SPDX-License-Identifier: GPL-2.0
//! Restored packets as `rust/inject.rs` builds them, in kernel memory: a
//! real rxe packet, rebuilt from its UDP payload and its flow's template,
//! must come out as the octets rxe sent (IPv4: its Identification solved
//! from the ICRC, TTL, checksum, no ECN; IPv6: hop limit, traffic class
//! without ECN, flow label, UDP checksum 0 as rxe's), with the skb's
//! headers where the receive path expects them; and the per-CPU mark our
//! FORWARD hook uses to let our own restored packet by.

use super::run;
use crate::addr::NetAddr;
use crate::crem_core::engine::crf::Restored;
use crate::inject;
use crate::inject::Template;
use crate::kernel_ext::bh;
use core::ffi::{c_char, c_int};

/// A whole RoCEv2 RC SEND Only packet from rxe, IPv4 header on
/// (`rust/core/tests/fixtures/rxe-v4-op04.hex`): ID 0x356f, DF, TTL 64,
/// 192.0.2.1 -> 203.0.113.1, UDP 59821 -> 4791 without a checksum.
pub(super) const PACKET: [u8; 60] = [
    0x45, 0x00, 0x00, 0x3c, 0x35, 0x6f, 0x40, 0x00, 0x40, 0x11, 0x07, 0x3f, 0xc0, 0x00, 0x02, 0x01,
    0xcb, 0x00, 0x71, 0x01, 0xe9, 0xad, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x04, 0x00, 0xff, 0xff,
    0x00, 0x00, 0x00, 0x11, 0x80, 0xf2, 0x0a, 0x38, 0x00, 0x00, 0x55, 0xc3, 0xdd, 0xee, 0x86, 0x00,
    0x00, 0x00, 0x05, 0x38, 0x00, 0x00, 0x10, 0x00, 0x14, 0x1f, 0x93, 0x62,
];
pub(super) const UDP_PAYLOAD: usize = 28;

/// The template a flow notes from a packet like `PACKET` at its hook:
/// gateway (FORWARD, TTL already decremented) or host (LOCAL_IN), with the
/// noted packet CE-marked (its ECN is not the restored packet's).
pub(super) fn template(host: bool) -> Template {
    let be16 = |i: usize| u16::from_ne_bytes([PACKET[i], PACKET[i + 1]]);
    let be32 =
        |i: usize| u32::from_ne_bytes([PACKET[i], PACKET[i + 1], PACKET[i + 2], PACKET[i + 3]]);
    Template {
        saddr: NetAddr::from_be32(be32(12)),
        daddr: NetAddr::from_be32(be32(16)),
        sport: be16(20),
        frag_off: be16(6),
        tos: PACKET[1] | 0x03,
        ttl: if host { PACKET[8] } else { PACKET[8] - 1 },
        noted: true,
        host,
        mark: 0x2a,
        ifindex: 1,
        h_source: [2, 0, 0, 0, 0, 1],
        ..Template::default()
    }
}

/// A whole RoCEv2 RC SEND Only packet from rxe over IPv6
/// (`rust/core/tests/fixtures/rxe-v6-op04.hex`): traffic class 0, flow
/// label 0, hop limit 64, 2001:db8:a::1 -> 2001:db8:b::1, UDP 52850 -> 4791
/// without a checksum.
const PACKET6: [u8; 80] = [
    0x60, 0x00, 0x00, 0x00, 0x00, 0x28, 0x11, 0x40, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x0a, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x0b, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xce, 0x72, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
    0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x94, 0xf0, 0xd7, 0x00, 0x00, 0x55, 0x9d,
    0x8c, 0xba, 0xe6, 0xd0, 0x00, 0x00, 0x05, 0x1e, 0x00, 0x00, 0x10, 0x00, 0xe3, 0x51, 0x4d, 0x28,
];
const UDP_PAYLOAD6: usize = 48;

/// The template a flow notes from a packet like `PACKET6` (as
/// [`template`]).
fn template6(host: bool) -> Template {
    let mut a = [[0u8; 16]; 2];
    a[0].copy_from_slice(&PACKET6[8..24]);
    a[1].copy_from_slice(&PACKET6[24..40]);
    Template {
        saddr: NetAddr::from_v6(a[0]).unwrap_or_default(),
        daddr: NetAddr::from_v6(a[1]).unwrap_or_default(),
        sport: u16::from_ne_bytes([PACKET6[40], PACKET6[41]]),
        tos: 0x03,
        ttl: if host { PACKET6[7] } else { PACKET6[7] - 1 },
        noted: true,
        host,
        mark: 0x2a,
        ifindex: 1,
        h_source: [2, 0, 0, 0, 0, 1],
        ..Template::default()
    }
}

/// A restored IPv6 packet is the packet rxe sent, headers set; with a
/// flow label and a checksummed sender, it carries both and still
/// verifies.
#[no_mangle]
extern "C" fn crem_kunit_inject_restored_is_original6(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        for host in [false, true] {
            let skb = match inject::restore(&template6(host), &PACKET6[UDP_PAYLOAD6..]) {
                Ok(s) => s,
                Err(r) => {
                    let _ = write!(w, "v6 host {host}: not restored ({r:?})");
                    return false;
                }
            };
            let got = skb.head();
            if got != PACKET6 {
                let at = got.iter().zip(PACKET6.iter()).position(|(a, b)| a != b);
                let _ = write!(
                    w,
                    "v6 host {host}: {} octets, first difference at {at:?}: {:02x?}",
                    got.len(),
                    got.get(..48)
                );
                return false;
            }
            let heads = (skb.network_offset(), skb.transport_offset(), skb.protocol());
            if heads != (0, 40, 0x86dd) || skb.mark() != 0x2a || skb.headroom() < 14 {
                let _ = write!(
                    w,
                    "v6 host {host}: network/transport offsets, protocol {heads:?}, mark {}, headroom {}",
                    skb.mark(),
                    skb.headroom()
                );
                return false;
            }
        }
        // DSCP AF41 with CE, flow label 0xabcde, a sender that checksums.
        let mut t = template6(false);
        (t.tos, t.flow_label, t.udp_csum) = (0x8b, 0xabcde, true);
        let skb = match inject::restore(&t, &PACKET6[UDP_PAYLOAD6..]) {
            Ok(s) => s,
            Err(r) => {
                let _ = write!(w, "v6 flow label, checksum: not restored ({r:?})");
                return false;
            }
        };
        let got = skb.head();
        let Some(hdr) = got.get(..8) else {
            let _ = write!(w, "v6: {} octets", got.len());
            return false;
        };
        if hdr != [0x68, 0x8a, 0xbc, 0xde, 0x00, 0x28, 0x11, 0x40] {
            let _ = write!(w, "v6 traffic class/flow label: {hdr:02x?}");
            return false;
        }
        // The checksum over pseudo-header and datagram sums to 0xffff.
        // (Octets 8.. are the addresses, then the datagram, 40 octets.)
        let mut acc: u32 = 40 + 17; // UDP length, next header
        for p in got.get(8..).unwrap_or_default().chunks(2) {
            acc += u32::from(u16::from_be_bytes([p[0], *p.get(1).unwrap_or(&0)]));
        }
        while acc >> 16 != 0 {
            acc = (acc & 0xffff) + (acc >> 16);
        }
        let sent = got.get(46..48);
        if got.len() != 80 || acc != 0xffff || sent == Some(&[0, 0][..]) {
            let _ = write!(w, "v6 UDP checksum {sent:02x?}: sum {acc:#x}");
            return false;
        }
        true
    })
}

/// A restored packet is the packet the RDMA sender sent, headers set.
#[no_mangle]
extern "C" fn crem_kunit_inject_restored_is_original(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        for host in [false, true] {
            let skb = match inject::restore(&template(host), &PACKET[UDP_PAYLOAD..]) {
                Ok(s) => s,
                Err(r) => {
                    let _ = write!(w, "host {host}: not restored ({r:?})");
                    return false;
                }
            };
            let got = skb.head();
            if got != PACKET {
                let at = got.iter().zip(PACKET.iter()).position(|(a, b)| a != b);
                let _ = write!(
                    w,
                    "host {host}: {} octets, first difference at {at:?}: {:02x?}",
                    got.len(),
                    got.get(..28)
                );
                return false;
            }
            let heads = (skb.network_offset(), skb.transport_offset(), skb.protocol());
            if heads != (0, 20, 0x0800) || skb.mark() != 0x2a || skb.headroom() < 14 {
                let _ = write!(
                    w,
                    "host {host}: network/transport offsets, protocol {heads:?}, mark {}, headroom {}",
                    skb.mark(),
                    skb.headroom()
                );
                return false;
            }
        }
        true
    })
}

/// A payload that is not the one sent fails the ICRC (no Identification
/// fits), and a flow that has seen no packet cannot restore.
#[no_mangle]
extern "C" fn crem_kunit_inject_refuses_bad_payload(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut bad = [0u8; PACKET.len() - UDP_PAYLOAD];
        bad.copy_from_slice(&PACKET[UDP_PAYLOAD..]);
        bad[20] ^= 0x01; // one bit of the message
        let r = inject::restore(&template(false), &bad).err();
        if r != Some(Restored::IcrcFailed) {
            let _ = write!(w, "corrupt payload: {r:?}, not an ICRC failure");
            return false;
        }
        let mut bad6 = [0u8; PACKET6.len() - UDP_PAYLOAD6];
        bad6.copy_from_slice(&PACKET6[UDP_PAYLOAD6..]);
        bad6[20] ^= 0x01;
        let r = inject::restore(&template6(false), &bad6).err();
        if r != Some(Restored::IcrcFailed) {
            let _ = write!(w, "v6 corrupt payload: {r:?}, not an ICRC failure");
            return false;
        }
        let mut t = template(false);
        t.noted = false;
        let r = inject::restore(&t, &PACKET[UDP_PAYLOAD..]).err();
        if r != Some(Restored::NoHeader) {
            let _ = write!(w, "no template: {r:?}, not NO_HEADER");
            return false;
        }
        true
    })
}

/// Our FORWARD hook knows the restored packet this CPU forwards, and only
/// while it does.
#[no_mangle]
extern "C" fn crem_kunit_inject_forward_mark(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let (a, b) = (0x1000usize as *const _, 0x2000usize as *const _);
        let bh = bh::disable();
        let seen = inject::with_forward_mark(&bh, a, || (inject::own(a, &bh), inject::own(b, &bh)));
        let after = inject::own(a, &bh);
        drop(bh);
        if seen != (true, false) || after {
            let _ = write!(w, "marked: own {seen:?}; after: {after}");
            return false;
        }
        true
    })
}
