//! `crem-ctl decode -r` / `roce -r` and tcpdump text as the operator runs
//! them: output, summary, exit status of the built binary.

mod common;
use common::run;
use std::path::PathBuf;

fn unhex(s: &str) -> Vec<u8> {
    let d: String = s
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<String>()
        .split_whitespace()
        .collect();
    (0..d.len() / 2)
        .map(|i| u8::from_str_radix(&d[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// An IPv4/UDP packet 192.0.2.1:40000 -> 198.51.100.2:`dport`.
fn ipv4_udp(dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![
        0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 192, 0, 2, 1, 198, 51, 100, 2,
    ];
    p[2..4].copy_from_slice(&(28 + payload.len() as u16).to_be_bytes());
    p.extend(40000u16.to_be_bytes());
    p.extend(dport.to_be_bytes());
    p.extend((8 + payload.len() as u16).to_be_bytes());
    p.extend([0, 0]);
    p.extend(payload);
    p
}

/// A little-endian microsecond pcap of raw IP packets, 1 ms apart.
fn pcap(pkts: &[Vec<u8>]) -> Vec<u8> {
    let mut f = 0xa1b2_c3d4u32.to_le_bytes().to_vec();
    f.extend(2u16.to_le_bytes());
    f.extend(4u16.to_le_bytes());
    for v in [0u32, 0, 65535, 101] {
        f.extend(v.to_le_bytes());
    }
    for (i, p) in pkts.iter().enumerate() {
        for v in [
            1_700_000_000u32,
            1000 * i as u32,
            p.len() as u32,
            p.len() as u32,
        ] {
            f.extend(v.to_le_bytes());
        }
        f.extend(p);
    }
    f
}

/// Writes `bytes` to a file of this test process.
fn file(name: &str, bytes: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("crem-ctl-{}-{name}", std::process::id()));
    std::fs::write(&p, bytes).unwrap();
    p
}

const CLOSE: &str = "1900000c0000000700040000";

#[test]
fn decode_capture_output_summary_and_status() {
    let f = pcap(&[ipv4_udp(7470, &unhex(CLOSE)), ipv4_udp(53, b"\x12\x34")]);
    let path = file("ok.pcap", &f);
    let (code, out, err) = run(&["decode", "-r", path.to_str().unwrap()], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "1 1700000000.000000 IPv4 192.0.2.1 -> 198.51.100.2, UDP 40000 -> 7470 | \
         CREM CLOSE (type 9), flags 0x00, length 12, flow ID 7 | Reason circuit-breaker\n"
    );
    assert_eq!(
        err,
        "crem-ctl: 2 packets: 1 decoded, 0 invalid, 1 skipped (1 UDP but not CREM)\n"
    );
    // The same from standard input, as JSON.
    let (code, out, err) = run(&["-j", "decode", "-r", "-", "--port", "7470"], &f);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "{\"packet\":1,\"time\":\"1700000000.000000\",\"ip-version\":4,\"src\":\"192.0.2.1\",\
         \"dst\":\"198.51.100.2\",\"src-port\":40000,\"dst-port\":7470,\"crem\":{\"type\":\"CLOSE\",\
         \"type-value\":9,\"flags\":0,\"flag-names\":[],\"length\":12,\"flow-id\":7,\
         \"reason\":\"circuit-breaker\"}}\n"
    );
    assert_eq!(
        err,
        "{\"summary\":{\"packets\":2,\"decoded\":1,\"invalid\":0,\"skipped\":{\"other-port\":1}}}\n"
    );
    // A message on --port that does not decode: printed, and exit 1.
    let bad = pcap(&[ipv4_udp(7470, &unhex("1900000800000001"))]);
    let (code, out, err) = run(&["decode", "-r", "-", "--port", "7470"], &bad);
    assert_eq!(code, 1);
    assert!(
        out.ends_with("| error: invalid CLOSE: length field inconsistent with contents\n"),
        "{out}"
    );
    assert!(
        err.ends_with("crem-ctl: 1 packet did not decode\n"),
        "{err}"
    );
    std::fs::remove_file(path).unwrap();
}

#[test]
fn broken_captures_name_the_offset() {
    let f = pcap(&[ipv4_udp(7470, &unhex(CLOSE)), ipv4_udp(7470, &unhex(CLOSE))]);
    // Cut inside the second record: the first is printed, then the error.
    let cut = &f[..f.len() - 5];
    let (code, out, err) = run(&["decode", "-r", "-"], cut);
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        err.ends_with(
            "crem-ctl: standard input: offset 80: packet record truncated: \
             the file ends 35 octets into it, 40 expected\n"
        ),
        "{err}"
    );
    let (code, _, err) = run(&["roce", "-r", "-"], b"not a capture file");
    assert_eq!(code, 1);
    assert!(
        err.contains("offset 0: magic number 0x6e6f7420 unknown (text:"),
        "{err}"
    );
    let (code, _, err) = run(&["decode", "-r", "/nonexistent/x.pcap"], b"");
    assert_eq!(code, 2);
    assert!(err.starts_with("crem-ctl: /nonexistent/x.pcap: "), "{err}");
}

#[test]
fn roce_capture_and_icrc_mismatch() {
    let fx = |n: &str| {
        let p = format!(
            "{}/../../rust/core/tests/fixtures/{n}",
            env!("CARGO_MANIFEST_DIR")
        );
        unhex(&std::fs::read_to_string(p).unwrap())
    };
    let good = fx("rxe-v4-op04.hex");
    let mut bad = fx("rxe-v4-op11.hex");
    let n = bad.len();
    bad[n - 1] ^= 1;
    let (code, out, err) = run(&["roce", "-r", "-"], &pcap(&[good.clone(), bad]));
    assert_eq!(code, 1, "{err}");
    assert!(
        out.starts_with("1 1700000000.000000 IPv4 192.0.2.1 -> 203.0.113.1, UDP 59821 -> 4791"),
        "{out}"
    );
    assert!(out.lines().nth(1).unwrap().ends_with(": MISMATCH"), "{out}");
    assert_eq!(
        err,
        "crem-ctl: 2 packets: 2 decoded (1 ICRC mismatch), 0 invalid, 0 skipped\n\
         crem-ctl: 1 packet with an ICRC mismatch\n"
    );
    let (code, _, err) = run(&["roce", "-r", "-"], &pcap(&[good]));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn tcpdump_text_and_usage_errors() {
    let ip = ipv4_udp(7470, &unhex(CLOSE));
    let mut text =
        String::from("08:01:37.614993 IP 192.0.2.1.40000 > 198.51.100.2.7470: UDP, length 12\n");
    for (i, c) in ip.chunks(16).enumerate() {
        let g: Vec<String> = c
            .chunks(2)
            .map(|w| w.iter().map(|b| format!("{b:02x}")).collect())
            .collect();
        text += &format!("\t0x{:04x}:  {}\n", i * 16, g.join(" "));
    }
    let (code, out, err) = run(&["decode", "-"], text.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(
            "1 08:01:37.614993 IPv4 192.0.2.1 -> 198.51.100.2, UDP 40000 -> 7470 | CREM CLOSE"
        ),
        "{out}"
    );
    let (code, _, err) = run(&["decode", "-"], b"\t0x0000:  4500\n\t0x0020:  0000\n");
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "crem-ctl: tcpdump text: line 2: offset 0x0020, but the packet has 2 octets so far\n"
    );
    let (code, _, err) = run(&["decode", "--port", "7470", CLOSE], b"");
    assert_eq!(code, 2);
    assert!(
        err.contains("--port selects the packets of a capture"),
        "{err}"
    );
    let (code, _, err) = run(&["decode", "-r", "x.pcap", CLOSE], b"");
    assert_eq!(code, 2, "{err}");
    let (code, out, _) = run(&["decode", "--help"], b"");
    assert_eq!(code, 0);
    for w in [
        "-r, --read <FILE>",
        "--port <N>",
        "tcpdump -x",
        "EXIT STATUS:",
        "JSON (-j):",
    ] {
        assert!(out.contains(w), "{w} not in decode --help");
    }
}
