//! RoCEv2 ICRC and header parsing tests.
//!
//! The ICRC is checked against (1) a CNP captured from a Mellanox ConnectX-4
//! Lx NIC (published in scapy's RoCE regression tests), (2) an IPv6 packet
//! whose ICRC was computed with Python's `zlib.crc32`, and (3) an independent
//! bit-by-bit CRC-32 over an explicitly masked pseudo-packet, on random
//! packets.

use crem_core::psn::Psn;
use crem_core::roce::{self, AethKind, Bth, PsnRole, RocePacket};
use proptest::prelude::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Bit-at-a-time reflected CRC-32 (no tables), independent of the crate's.
fn crc32_bitwise(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// Reference ICRC: build the masked pseudo-packet explicitly and CRC it.
fn reference_icrc(pkt: &[u8]) -> u32 {
    let v6 = pkt[0] >> 4 == 6;
    let ip_len = if v6 { 40 } else { 20 };
    let total = if v6 {
        40 + u16::from_be_bytes([pkt[4], pkt[5]]) as usize
    } else {
        u16::from_be_bytes([pkt[2], pkt[3]]) as usize
    };
    let mut p = pkt[..total].to_vec();
    if v6 {
        p[0] |= 0x0f;
        p[1] = 0xff;
        p[2] = 0xff;
        p[3] = 0xff;
        p[7] = 0xff;
    } else {
        p[1] = 0xff;
        p[8] = 0xff;
        p[10] = 0xff;
        p[11] = 0xff;
    }
    p[ip_len + 6] = 0xff;
    p[ip_len + 7] = 0xff;
    p[ip_len + 8 + 4] = 0xff;
    let mut data = vec![0xffu8; 8];
    data.extend_from_slice(&p[..total - 4]);
    crc32_bitwise(&data)
}

/// Ones'-complement IPv4 header checksum, so synthetic packets look real.
fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in h.chunks(2) {
        s += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// Builds an IPv4 RoCEv2 packet (ICRC field zero).
fn build_v4(tos: u8, ttl: u8, sport: u16, bth: [u8; 12], rest: &[u8]) -> Vec<u8> {
    let udp_len = 8 + 12 + rest.len() + 4;
    let total = 20 + udp_len;
    let mut p = vec![
        0x45,
        tos,
        (total >> 8) as u8,
        total as u8,
        0x12,
        0x34,
        0x40,
        0x00,
        ttl,
        17,
        0,
        0,
        192,
        0,
        2,
        1,
        198,
        51,
        100,
        7,
    ];
    let c = ipv4_checksum(&p);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(&sport.to_be_bytes());
    p.extend_from_slice(&4791u16.to_be_bytes());
    p.extend_from_slice(&(udp_len as u16).to_be_bytes());
    p.extend_from_slice(&[0x5a, 0xa5]);
    p.extend_from_slice(&bth);
    p.extend_from_slice(rest);
    p.extend_from_slice(&[0; 4]);
    p
}

/// CNP captured on a ConnectX-4 Lx (IP packet only; Ethernet header removed).
const CX4_CNP: &str =
    "45c2 003c 718c 4000 4011 9161 0a00 1101 0a00 1201 0000 12b7 0028 0000 8100 ffff 4000
                       0118 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 82fd 002a";

/// IPv6 RC RDMA WRITE Only, ICRC computed with Python zlib.crc32.
const PY_V6_WRITE: &str = "66abeef10068113f20010db800000000000000000000000120010db8000000000000000000000002\
c12312b7006812340a00ffff4000123480abcdef00007f1234567000deadbeef00000040030a11181f262d343b424950575e656c737a\
81888f969da4abb2b9c0c7ced5dce3eaf1f8ff060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bc56b6187f";

#[test]
fn connectx4_cnp_capture() {
    let pkt = hex(CX4_CNP);
    assert_eq!(pkt.len(), 60);
    assert_eq!(roce::icrc_from_ip_packet(&pkt), Ok(0x2a00_fd82));
    assert_eq!(roce::verify_ip_packet(&pkt), Ok(true));
    assert_eq!(reference_icrc(&pkt), 0x2a00_fd82);
    let ip = roce::split_ip_udp(&pkt).unwrap();
    assert_eq!(ip.dst_port, roce::ROCEV2_UDP_PORT);
    assert_eq!(ip.ecn(), 2);
    let r = RocePacket::parse(ip.payload()).unwrap();
    assert_eq!(r.info.role, PsnRole::Cnp);
    assert!(r.bth.becn && !r.bth.fecn);
    assert_eq!(r.bth.dest_qp, 0x118);
    assert!(!r.is_source());
    // A corrupted octet is detected.
    let mut bad = pkt.clone();
    bad[40] ^= 1;
    assert_eq!(roce::verify_ip_packet(&bad), Ok(false));
}

#[test]
fn python_zlib_ipv6_vector() {
    let pkt = hex(PY_V6_WRITE);
    assert_eq!(roce::icrc_from_ip_packet(&pkt), Ok(0x7f18_b656));
    assert_eq!(roce::verify_ip_packet(&pkt), Ok(true));
    let ip = roce::split_ip_udp(&pkt).unwrap();
    assert_eq!(ip.version, roce::IpVersion::V6);
    assert_eq!(ip.tos, 0x6a);
    assert_eq!(roce::verify_v6(ip.ip_hdr, ip.udp), Ok(true));
    let r = RocePacket::parse(ip.payload()).unwrap();
    assert_eq!(r.bth.opcode, roce::opcode::RC_WRITE_ONLY);
    assert_eq!(r.bth.psn, Psn::new(0xabcdef));
    assert_eq!(r.reth.unwrap().dma_len, 64);
    assert_eq!(r.payload.len(), 64);
    assert!(r.is_source());
}

#[test]
fn synthetic_v4_send_matches_bitwise_reference() {
    let bth = [
        0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x07,
    ];
    let payload: Vec<u8> = (0..100u8).collect();
    let mut pkt = build_v4(0x02, 64, 0xc001, bth, &payload);
    let want = reference_icrc(&pkt);
    assert_eq!(roce::icrc_from_ip_packet(&pkt), Ok(want));
    assert_eq!(roce::verify_ip_packet(&pkt), Ok(false));
    assert_eq!(roce::fill_icrc_ip_packet(&mut pkt), Ok(want));
    assert_eq!(&pkt[pkt.len() - 4..], &want.to_le_bytes());
    assert_eq!(roce::verify_ip_packet(&pkt), Ok(true));
    let ip = roce::split_ip_udp(&pkt).unwrap();
    assert_eq!(roce::icrc_v4(ip.ip_hdr, ip.udp), Ok(want));
    assert_eq!(roce::verify_v4(ip.ip_hdr, ip.udp), Ok(true));
    // Trailing link-layer padding is ignored.
    let mut padded = pkt.clone();
    padded.extend_from_slice(&[0; 6]);
    assert_eq!(roce::verify_ip_packet(&padded), Ok(true));
}

#[test]
fn read_request_and_ack() {
    // RC READ request for 10000 octets at PSN 0xFFFFFE.
    let bth = [0x0c, 0, 0xff, 0xff, 0, 0, 0, 0x22, 0x80, 0xff, 0xff, 0xfe];
    let mut reth = Vec::new();
    reth.extend_from_slice(&0x1000u64.to_be_bytes());
    reth.extend_from_slice(&0xabcdu32.to_be_bytes());
    reth.extend_from_slice(&10000u32.to_be_bytes());
    let mut pkt = build_v4(0, 64, 1, bth, &reth);
    roce::fill_icrc_ip_packet(&mut pkt).unwrap();
    let ip = roce::split_ip_udp(&pkt).unwrap();
    let r = RocePacket::parse(ip.payload()).unwrap();
    assert_eq!(r.info.role, PsnRole::ReadRequest);
    let span = r.read_span(4096).unwrap().unwrap();
    assert_eq!(span.count, 3);
    assert_eq!(span.start, Psn::new(0xFF_FFFE));
    assert_eq!(span.end(), Psn::new(1));
    assert_eq!(r.acked_through(), None);

    // ACK for PSN 5, NAK (PSN sequence error) at PSN 9.
    for (syn, psn, want) in [(0x1fu8, 5u8, 5u32), (0x60, 9, 8), (0x2e, 9, 8)] {
        let bth = [0x11, 0, 0xff, 0xff, 0, 0, 0, 0x22, 0, 0, 0, psn];
        let mut pkt = build_v4(0, 64, 1, bth, &[syn, 0, 0, 3]);
        roce::fill_icrc_ip_packet(&mut pkt).unwrap();
        let ip = roce::split_ip_udp(&pkt).unwrap();
        let r = RocePacket::parse(ip.payload()).unwrap();
        assert_eq!(r.info.role, PsnRole::Ack);
        assert_eq!(r.aeth.unwrap().msn, 3);
        assert_eq!(r.acked_through(), Some(Psn::new(want)));
        if syn == 0x1f {
            assert_eq!(r.aeth.unwrap().kind(), AethKind::Ack { credit_code: 31 });
        }
    }
}

#[test]
fn rejects_unsupported() {
    let bth = [0x04, 0, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 1];
    let pkt = build_v4(0, 64, 1, bth, &[1, 2, 3, 4]);
    let mut opt = pkt.clone();
    opt[0] = 0x46;
    assert_eq!(
        roce::icrc_from_ip_packet(&opt),
        Err(roce::Error::Unsupported("ipv4 options"))
    );
    let mut tcp = pkt.clone();
    tcp[9] = 6;
    assert_eq!(
        roce::icrc_from_ip_packet(&tcp),
        Err(roce::Error::Unsupported("not udp"))
    );
    assert_eq!(
        roce::icrc_from_ip_packet(&pkt[..30]),
        Err(roce::Error::Truncated)
    );
    let mut short_udp = pkt.clone();
    short_udp[24] = 0;
    short_udp[25] = 4;
    assert_eq!(
        roce::icrc_from_ip_packet(&short_udp),
        Err(roce::Error::BadField("udp_length"))
    );
    assert_eq!(
        RocePacket::parse(&[0x15; 20]),
        Err(roce::Error::Unsupported("opcode"))
    );
    // Pad count larger than the payload.
    let mut p = [0u8; 16];
    p[0] = 0x11;
    p[1] = 0x30;
    assert!(RocePacket::parse(&p).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn icrc_matches_reference_and_masks(
        tos in any::<u8>(), ttl in any::<u8>(), sport in any::<u16>(), bth in any::<[u8; 12]>(),
        rest in prop::collection::vec(any::<u8>(), 0..300), v6 in any::<bool>(),
        flip in any::<usize>(), bit in 0u8..8,
    ) {
        let mut pkt = build_v4(tos, ttl, sport, bth, &rest);
        if v6 {
            // Re-wrap the UDP datagram in an IPv6 header.
            let udp = pkt[20..].to_vec();
            let mut p6 = vec![0x60 | (tos >> 4), (tos << 4) | 0x0a, 0xbc, 0xde];
            p6.extend_from_slice(&(udp.len() as u16).to_be_bytes());
            p6.push(17);
            p6.push(ttl);
            p6.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
            p6.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
            p6.extend_from_slice(&udp);
            pkt = p6;
        }
        let want = reference_icrc(&pkt);
        prop_assert_eq!(roce::icrc_from_ip_packet(&pkt), Ok(want));
        prop_assert_eq!(roce::fill_icrc_ip_packet(&mut pkt), Ok(want));
        prop_assert_eq!(roce::verify_ip_packet(&pkt), Ok(true));

        let ip_len = if v6 { 40 } else { 20 };
        let masked: Vec<usize> = if v6 { vec![0, 1, 2, 3, 7] } else { vec![1, 8, 10, 11] }
            .into_iter()
            .chain([ip_len + 6, ip_len + 7, ip_len + 8 + 4])
            .collect();
        let i = flip % (pkt.len() - 4);
        let mut m = pkt.clone();
        if v6 && i == 0 {
            m[0] ^= 1 << (bit % 4); // keep the version nibble
        } else {
            m[i] ^= 1 << bit;
        }
        // Length fields must stay consistent for the packet to parse at all.
        let length_field = if v6 { i == 4 || i == 5 } else { i == 2 || i == 3 || i == 0 || i == 9 || i == 6 || i == 7 }
            || i == ip_len + 4 || i == ip_len + 5 || (v6 && i == 6);
        if !length_field {
            let ok = roce::verify_ip_packet(&m);
            prop_assert_eq!(ok, Ok(masked.contains(&i)), "flipped octet {}", i);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), mtu in any::<u32>()) {
        let _ = roce::icrc_from_ip_packet(&bytes);
        let _ = roce::verify_ip_packet(&bytes);
        let mut b = bytes.clone();
        let _ = roce::fill_icrc_ip_packet(&mut b);
        let _ = roce::split_ip_udp(&bytes);
        let _ = roce::icrc_v4(&bytes, &bytes);
        let _ = roce::icrc_v6(&bytes, &bytes);
        let _ = roce::stored_icrc(&bytes);
        let _ = Bth::parse(&bytes);
        let _ = roce::Reth::parse(&bytes);
        let _ = roce::Aeth::parse(&bytes).map(|a| (a.kind(), a.credits()));
        if let Ok(p) = RocePacket::parse(&bytes) {
            let _ = p.read_span(mtu);
            let _ = p.acked_through();
            prop_assert!(p.payload.len() <= bytes.len());
        }
        // Plausible IPv4 RoCE framing with random contents.
        if bytes.len() >= 48 {
            let mut p = bytes.clone();
            p[0] = 0x45;
            let l = (p.len() as u16).to_be_bytes();
            p[2] = l[0];
            p[3] = l[1];
            p[6] &= 0xc0;
            p[7] = 0;
            p[9] = 17;
            let ul = ((p.len() - 20) as u16).to_be_bytes();
            p[24] = ul[0];
            p[25] = ul[1];
            prop_assert!(roce::icrc_from_ip_packet(&p).is_ok());
            let _ = RocePacket::parse(roce::split_ip_udp(&p).unwrap().payload());
        }
    }
}
