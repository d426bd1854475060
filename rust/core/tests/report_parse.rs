//! `report::parse_drop` on the rxe captures in `tests/fixtures/` (and an
//! IPv6 packet made from each), against the full RoCEv2 parser.

use crem_core::psn::Psn;
use crem_core::report::parse_drop;
use crem_core::roce;
use crem_core::wire::FlowAddrs;
use std::path::Path;

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hex"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable fixture");
            let hex: String = text
                .lines()
                .map(|l| l.split('#').next().unwrap_or(""))
                .flat_map(|l| l.chars())
                .filter(|c| !c.is_whitespace())
                .collect();
            let bytes = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
                .collect();
            (p.file_name().unwrap().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    v.sort();
    v
}

/// The same UDP datagram behind an IPv6 header (addresses 2001:db8::…).
fn as_v6(v4: &[u8]) -> Vec<u8> {
    let ip = roce::split_ip_udp(v4).expect("fixture splits");
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&(ip.udp.len() as u16).to_be_bytes());
    p.extend_from_slice(&[17, 64]);
    for last in [1u8, 2] {
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        a[15] = last;
        p.extend_from_slice(&a);
    }
    p.extend_from_slice(ip.udp);
    p
}

#[test]
fn fixtures_parse_like_the_full_parser() {
    let all = fixtures();
    assert!(all.len() >= 10, "rxe fixtures present");
    let sources: Vec<u8> = vec![0x04, 0x06, 0x07, 0x08, 0x0c, 0x64];
    for (name, pkt) in &all {
        let ip = roce::split_ip_udp(pkt).expect("fixture splits");
        let bth = roce::Bth::parse(ip.payload()).expect("fixture BTH");
        // A real IPv6 capture as it is; an IPv4 one as it is and rewritten
        // as IPv6.
        let cases = if pkt[0] >> 4 == 6 {
            vec![(
                pkt.clone(),
                FlowAddrs::V6 {
                    src: pkt[8..24].try_into().unwrap(),
                    dst: pkt[24..40].try_into().unwrap(),
                },
            )]
        } else {
            vec![
                (
                    pkt.clone(),
                    FlowAddrs::V4 {
                        src: pkt[12..16].try_into().unwrap(),
                        dst: pkt[16..20].try_into().unwrap(),
                    },
                ),
                (
                    as_v6(pkt),
                    FlowAddrs::V6 {
                        src: as_v6(pkt)[8..24].try_into().unwrap(),
                        dst: as_v6(pkt)[24..40].try_into().unwrap(),
                    },
                ),
            ]
        };
        for (pkt, addrs) in cases {
            let d = parse_drop(&pkt).unwrap_or_else(|| panic!("{name} parses"));
            assert_eq!(d.addrs, addrs, "{name}");
            assert_eq!(d.dest_qp, bth.dest_qp, "{name}");
            assert_eq!(d.psn, bth.psn, "{name}");
            assert_eq!(d.opcode, bth.opcode, "{name}");
            assert_eq!(d.is_source, sources.contains(&bth.opcode), "{name}");
            assert_eq!(d.is_source, roce::is_source_opcode(bth.opcode), "{name}");
            // Headers only (what the kernel copies out of the skb) suffice;
            // one octet less of the BTH does not.
            let l4 = if matches!(addrs, FlowAddrs::V4 { .. }) {
                20
            } else {
                40
            };
            assert_eq!(parse_drop(&pkt[..l4 + 8 + 12]), Some(d), "{name}");
            assert_eq!(parse_drop(&pkt[..l4 + 8 + 11]), None, "{name}");
        }
    }
}

#[test]
fn send_only_fixture_fields() {
    let all = fixtures();
    let (_, pkt) = all
        .iter()
        .find(|(n, _)| n == "rxe-v4-op04.hex")
        .expect("op04 fixture");
    let d = parse_drop(pkt).expect("parses");
    assert_eq!(
        d.addrs,
        FlowAddrs::V4 {
            src: [192, 0, 2, 1],
            dst: [203, 0, 113, 1]
        }
    );
    assert_eq!(
        (d.dest_qp, d.psn, d.is_source),
        (0x11, Psn::new(0xf20a38), true)
    );
}

#[test]
fn not_rocev2_or_malformed() {
    let all = fixtures();
    let pkt = &all[0].1;
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut p = pkt.clone();
        f(&mut p);
        parse_drop(&p)
    };
    assert!(with(&|_| {}).is_some());
    assert_eq!(with(&|p| p[23] = 0xb6), None); // dport 4791 → 4790
    assert_eq!(with(&|p| p[9] = 6), None); // TCP
    assert_eq!(with(&|p| p[0] = 0x55), None); // IHL 5 → version 5
    assert_eq!(with(&|p| p[0] = 0x44), None); // IHL 16 octets
    assert_eq!(with(&|p| p[7] = 1), None); // a later fragment
    assert_eq!(with(&|p| p[2..4].copy_from_slice(&[0, 39])), None); // too short for a BTH
    assert_eq!(with(&|p| p[24..26].copy_from_slice(&[0, 19])), None); // UDP length
                                                                      // IPv4 options are skipped.
    let opt = with(&|p| {
        p[0] = 0x46;
        let total = u16::from_be_bytes([p[2], p[3]]) + 4;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p.splice(20..20, [1, 1, 1, 0]);
    });
    assert_eq!(opt, parse_drop(pkt));
    // An IPv6 extension header is not walked.
    let mut v6 = as_v6(pkt);
    assert!(parse_drop(&v6).is_some());
    v6[6] = 0; // hop-by-hop options
    assert_eq!(parse_drop(&v6), None);
    for n in 0..40 {
        assert_eq!(parse_drop(&pkt[..n]), None);
    }
    assert_eq!(parse_drop(&[]), None);
}
