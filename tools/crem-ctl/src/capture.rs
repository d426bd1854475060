//! `decode`/`roce` over many packets: a pcap or pcapng capture (`-r FILE`)
//! or `tcpdump -x` text. Each UDP datagram the command selects is printed
//! as one line (text), one JSON object per line (`-j`, as `ip -j monitor`
//! streams), or a header line and the single-packet output (`-v`); a
//! summary of what was read, decoded and skipped, and why, ends on stderr.
//!
//! Selection: `roce` takes UDP destination port 4791 (RoCEv2). `decode
//! --port N` takes datagrams from or to port N and reports those that do
//! not decode; without `--port` it takes every datagram that decodes as a
//! CREM message under crem-core's strict codecs (except port 4791's:
//! RoCEv2 can never be CREM, the CREM port is never 4791), as the CREM
//! port is the operator's choice and a capture does not say it.

use crate::dissect::{self, Skip};
use crate::pcap::{self, Record};
use crate::stdio::out;
use crate::{inspect, pretty, tcpdump, Fail, Res};
use crem_core::roce::ROCEV2_UDP_PORT;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// What to look for in each datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// CREM messages, on this UDP port or wherever they decode.
    Crem { port: Option<u16> },
    /// RoCEv2 packets (UDP destination port 4791).
    Roce,
}

#[derive(Clone, Copy, Debug)]
pub struct Opts {
    pub mode: Mode,
    pub json: bool,
    pub verbose: bool,
}

/// Why a packet was not printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Reason {
    Frame(Skip),
    /// A UDP port the command does not look at.
    OtherPort,
    /// UDP, but not a CREM message (`decode` without `--port`).
    NotCrem,
}

/// The counts the summary reports.
#[derive(Debug, Default)]
pub struct Summary {
    pub packets: u64,
    pub decoded: u64,
    /// Selected datagrams that did not decode.
    pub invalid: u64,
    /// RoCEv2 packets whose ICRC does not match (also counted decoded).
    pub icrc_mismatch: u64,
    skipped: BTreeMap<Reason, u64>,
}

/// Reads one capture's packets and renders them.
pub struct Capture {
    opts: Opts,
    pub summary: Summary,
}

impl Capture {
    pub fn new(opts: Opts) -> Capture {
        Capture {
            opts,
            summary: Summary::default(),
        }
    }

    fn skip(&mut self, r: Reason) -> Option<String> {
        *self.summary.skipped.entry(r).or_default() += 1;
        None
    }

    /// The output for one packet (newline-terminated), or `None` when it
    /// is skipped. `time` is `None` when the capture has none.
    pub fn packet(&mut self, rec: &Record, time: Option<&str>) -> Option<String> {
        self.summary.packets += 1;
        let cut = rec.data.len() < rec.orig_len as usize;
        let u = match dissect::network(rec.linktype, &rec.data).and_then(|n| dissect::udp(n, cut)) {
            Ok(u) => u,
            Err(s) => return self.skip(Reason::Frame(s)),
        };
        let on = |p: u16| u.src_port == p || u.dst_port == p;
        let addr = inspect::ip_udp_text(u.ip_version, u.src, u.dst, u.src_port, u.dst_port);
        let mut obj = Map::new();
        obj.insert("packet".into(), rec.number.into());
        obj.insert("time".into(), time.into());
        let (body, text, verbose) = match self.opts.mode {
            Mode::Crem { port } => {
                match port {
                    Some(p) if !on(p) => return self.skip(Reason::OtherPort),
                    None if on(ROCEV2_UDP_PORT) => return self.skip(Reason::OtherPort),
                    _ => {}
                }
                for (k, v) in [
                    ("ip-version", Value::from(u.ip_version)),
                    ("src", u.src.to_string().into()),
                    ("dst", u.dst.to_string().into()),
                    ("src-port", u.src_port.into()),
                    ("dst-port", u.dst_port.into()),
                ] {
                    obj.insert(k.into(), v);
                }
                match pretty::decode(u.payload) {
                    Ok(d) => (
                        Ok(Map::from_iter([(
                            "crem".to_string(),
                            Value::Object(d.json()),
                        )])),
                        format!("{addr} | {}", d.line()),
                        format!("{addr}\n{}", d.text()),
                    ),
                    Err(_) if port.is_none() => return self.skip(Reason::NotCrem),
                    Err(e) => (Err(e), addr.clone(), addr),
                }
            }
            Mode::Roce => {
                if u.dst_port != ROCEV2_UDP_PORT {
                    return self.skip(Reason::OtherPort);
                }
                match inspect::roce_report(u.ip) {
                    Ok(r) => {
                        if !r.icrc_ok {
                            self.summary.icrc_mismatch += 1;
                        }
                        let t = inspect::roce_text(&r);
                        // The report's keys go beside "packet" and "time".
                        let m = match serde_json::to_value(&r) {
                            Ok(Value::Object(m)) => m,
                            _ => Map::new(),
                        };
                        (Ok(m), t.lines().collect::<Vec<_>>().join(" | "), t)
                    }
                    Err(e) => (Err(e), addr.clone(), addr),
                }
            }
        };
        let body = match body {
            Ok(b) => {
                self.summary.decoded += 1;
                Ok(b)
            }
            Err(e) => {
                self.summary.invalid += 1;
                Err(e)
            }
        };
        let head = format!("{} {}", rec.number, time.unwrap_or("-"));
        Some(if self.opts.json {
            match body {
                Ok(m) => obj.extend(m),
                Err(e) => {
                    obj.insert("error".into(), e.into());
                }
            }
            let mut s = Value::Object(obj).to_string();
            s.push('\n');
            s
        } else {
            match body {
                Ok(_) if self.opts.verbose => {
                    let mut s = format!("{head}\n");
                    for l in verbose.lines() {
                        let _ = writeln!(s, "  {l}");
                    }
                    s
                }
                Ok(_) => format!("{head} {text}\n"),
                Err(e) => format!("{head} {text} | error: {e}\n"),
            }
        })
    }

    /// The datagrams that failed, if any: they make the exit status 1.
    pub fn failures(&self) -> Option<String> {
        let s = &self.summary;
        let mut v = Vec::new();
        if s.invalid > 0 {
            v.push(format!("{} did not decode", plural(s.invalid, "packet")));
        }
        if s.icrc_mismatch > 0 {
            v.push(format!(
                "{} with an ICRC mismatch",
                plural(s.icrc_mismatch, "packet")
            ));
        }
        (!v.is_empty()).then(|| v.join(", "))
    }

    /// "2 not UDP": `n` packets skipped for `r`.
    fn reason_text(&self, r: Reason, n: u64) -> String {
        let why = match (r, self.opts.mode) {
            (Reason::Frame(Skip::Fragment), _) => return plural(n, "IP fragment"),
            (Reason::Frame(Skip::Snaplen), _) => {
                "cut by the snap length (capture with tcpdump -s 0)".into()
            }
            (Reason::Frame(s), _) => s.text(),
            (Reason::OtherPort, Mode::Crem { port: Some(p) }) => format!("not to or from port {p}"),
            (Reason::OtherPort, Mode::Crem { port: None }) => "RoCEv2 (port 4791)".into(),
            (Reason::OtherPort, Mode::Roce) => "not to UDP port 4791".into(),
            (Reason::NotCrem, _) => "UDP but not CREM".into(),
        };
        format!("{n} {why}")
    }

    /// "12 packets: 8 decoded, 1 invalid, 3 skipped (2 not UDP, 1 IP
    /// fragment)".
    pub fn summary_text(&self) -> String {
        let s = &self.summary;
        let mut t = format!("{}: {} decoded", plural(s.packets, "packet"), s.decoded);
        if self.opts.mode == Mode::Roce {
            let _ = write!(t, " ({} ICRC mismatch)", s.icrc_mismatch);
        }
        let _ = write!(t, ", {} invalid", s.invalid);
        let skipped: u64 = s.skipped.values().sum();
        let _ = write!(t, ", {skipped} skipped");
        if skipped > 0 {
            let why: Vec<String> = s
                .skipped
                .iter()
                .map(|(r, n)| self.reason_text(*r, *n))
                .collect();
            let _ = write!(t, " ({})", why.join(", "));
        }
        t
    }

    pub fn summary_json(&self) -> Value {
        let s = &self.summary;
        let skipped: Map<String, Value> = s
            .skipped
            .iter()
            .map(|(r, n)| {
                let k = match r {
                    Reason::Frame(f) => f.key(),
                    Reason::OtherPort => "other-port".into(),
                    Reason::NotCrem => "not-crem".into(),
                };
                (k, Value::from(*n))
            })
            .collect();
        let mut m = json!({
            "packets": s.packets,
            "decoded": s.decoded,
            "invalid": s.invalid,
        });
        if self.opts.mode == Mode::Roce {
            m["icrc-mismatch"] = s.icrc_mismatch.into();
        }
        m["skipped"] = Value::Object(skipped);
        json!({ "summary": m })
    }
}

fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Runs the command over a capture file (`-` for standard input): prints
/// each packet as it is read, then the summary on stderr.
pub fn run_file(path: &Path, opts: Opts) -> Res {
    let name = if path.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        path.display().to_string()
    };
    let input: Box<dyn std::io::Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(path).map_err(|e| Fail::Usage(format!("{name}: {e}")))?)
    };
    let mut c = Capture::new(opts);
    let res = (|| -> Result<(), pcap::Error> {
        let mut r = pcap::Reader::new(std::io::BufReader::new(input))?;
        while let Some(rec) = r.next_record()? {
            let time = rec.time.map(|t| t.to_string());
            if let Some(s) = c.packet(&rec, time.as_deref()) {
                out(&s);
            }
        }
        Ok(())
    })();
    finish(&c, res.map_err(|e| format!("{name}: {e}")))
}

/// Runs the command over `tcpdump -x` text.
pub fn run_text(text: &str, opts: Opts) -> Res {
    let pkts = tcpdump::parse(text).map_err(|e| Fail::Usage(format!("tcpdump text: {e}")))?;
    let mut c = Capture::new(opts);
    for (rec, time) in &pkts {
        if let Some(s) = c.packet(rec, time.as_deref()) {
            out(&s);
        }
    }
    finish(&c, Ok(()))
}

/// The summary on stderr, then the exit status: 1 for a capture that
/// could not be read to its end or for packets that failed.
fn finish(c: &Capture, read: Result<(), String>) -> Res {
    if c.opts.json {
        eprintln!("{}", c.summary_json());
    } else {
        eprintln!("crem-ctl: {}", c.summary_text());
    }
    read.map_err(Fail::Failed)?;
    match c.failures() {
        Some(f) => Err(Fail::Failed(f)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissect::tests::{ethernet, ipv4_udp, ipv6_udp, sll};
    use crate::inspect::tests::fixture;
    use crate::pcap::tests::{pcap, pcapng, read_all};
    use crate::pretty::tests::every_message;

    const A: [u8; 4] = [192, 0, 2, 1];
    const B: [u8; 4] = [198, 51, 100, 2];
    const A6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const B6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

    fn opts(mode: Mode, json: bool) -> Opts {
        Opts {
            mode,
            json,
            verbose: false,
        }
    }

    /// Everything a command prints for a capture file: stdout, and the
    /// capture with its summary.
    fn run(file: &[u8], o: Opts) -> (String, Capture) {
        let mut c = Capture::new(o);
        let mut s = String::new();
        for r in read_all(file).unwrap() {
            let t = r.time.map(|t| t.to_string());
            s.extend(c.packet(&r, t.as_deref()));
        }
        (s, c)
    }

    /// CREM traffic with what a capture of the CREM port's host also
    /// holds: RoCEv2, TCP, a fragment, DNS, a cut REPAIR, a bad message.
    fn crem_frames(v6: bool) -> Vec<Vec<u8>> {
        let msgs = every_message();
        let udp = |sport: u16, dport: u16, p: &[u8]| {
            if v6 {
                ipv6_udp(A6, B6, sport, dport, p)
            } else {
                ipv4_udp(A, B, sport, dport, p)
            }
        };
        let close = &msgs[9].1;
        let mut tcp = ipv4_udp(A, B, 1, 2, &[0; 20]);
        tcp[9] = 6;
        let mut frag = ipv4_udp(A, B, 40000, 7470, close);
        frag[6] = 0x20;
        let bad_close = [0x19, 0, 0, 8, 0, 0, 0, 1];
        vec![
            udp(40000, 7470, close),                             // 1
            udp(7470, 40000, &msgs[5].1),                        // 2 REPAIR_REQUEST
            udp(50000, 4791, &fixture("rxe-v4-op04.hex")[28..]), // 3 RoCEv2
            tcp,                                                 // 4
            frag,                                                // 5
            udp(5353, 53, b"\x12\x34\x01\x00"),                  // 6 DNS
            udp(40000, 7470, &msgs[0].1),                        // 7 REPAIR (cut)
            udp(40000, 7470, &bad_close),                        // 8
        ]
    }

    fn records(frames: &[Vec<u8>], wrap: fn(&[u8]) -> Vec<u8>) -> Vec<(u32, u32, Vec<u8>, u32)> {
        frames
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut d = wrap(f);
                let orig = d.len() as u32;
                if i == 6 {
                    d.truncate(d.len() - 10); // snap length
                }
                (1_700_000_000, i as u32 + 1, d, orig)
            })
            .collect()
    }

    fn file(be: bool, linktype: u32, recs: &[(u32, u32, Vec<u8>, u32)]) -> Vec<u8> {
        let r: Vec<(u32, u32, &[u8], u32)> = recs
            .iter()
            .map(|(s, u, d, o)| (*s, *u, &d[..], *o))
            .collect();
        pcap(be, false, linktype, &r)
    }

    #[test]
    fn decode_port_ethernet_v4_le() {
        let f = file(false, 1, &records(&crem_frames(false), ethernet));
        let (out, c) = run(&f, opts(Mode::Crem { port: Some(7470) }, false));
        assert_eq!(
            out,
            "\
1 1700000000.000001 IPv4 192.0.2.1 -> 198.51.100.2, UDP 40000 -> 7470 | CREM CLOSE (type 9), flags 0x00, length 12, flow ID 7 | Reason circuit-breaker
2 1700000000.000002 IPv4 192.0.2.1 -> 198.51.100.2, UDP 7470 -> 40000 | CREM REPAIR_REQUEST (type 6), flags 0x00, length 24, flow ID 7 | Config ID 1, Scheme cauchy, k 4, Repairs Held r 2, Block Start PSN 4096, Suggested M 1, Request ID 9, Lost Source Bitmap 0-2
8 1700000000.000008 IPv4 192.0.2.1 -> 198.51.100.2, UDP 40000 -> 7470 | error: invalid CLOSE: length field inconsistent with contents
"
        );
        assert_eq!(
            c.summary_text(),
            "8 packets: 2 decoded, 1 invalid, 5 skipped (1 not UDP, 1 IP fragment, \
             1 cut by the snap length (capture with tcpdump -s 0), 2 not to or from port 7470)"
        );
        assert_eq!(c.failures().as_deref(), Some("1 packet did not decode"));
        assert_eq!(
            c.summary_json().to_string(),
            r#"{"summary":{"packets":8,"decoded":2,"invalid":1,"skipped":{"not-udp":1,"ip-fragment":1,"snaplen":1,"other-port":2}}}"#
        );
    }

    #[test]
    fn decode_json_sll_v6_be() {
        let f = file(true, 113, &records(&crem_frames(true), sll));
        let (out, c) = run(&f, opts(Mode::Crem { port: Some(7470) }, true));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(
            lines[0],
            r#"{"packet":1,"time":"1700000000.000001","ip-version":6,"src":"2001:db8::1","dst":"2001:db8::2","src-port":40000,"dst-port":7470,"crem":{"type":"CLOSE","type-value":9,"flags":0,"flag-names":[],"length":12,"flow-id":7,"reason":"circuit-breaker"}}"#
        );
        assert_eq!(
            lines[2],
            r#"{"packet":8,"time":"1700000000.000008","ip-version":6,"src":"2001:db8::1","dst":"2001:db8::2","src-port":40000,"dst-port":7470,"error":"invalid CLOSE: length field inconsistent with contents"}"#
        );
        // The IPv4 TCP packet and fragment of the list are IPv4 in SLL too.
        assert_eq!(c.summary.decoded, 2);
    }

    /// Without --port: what decodes as CREM, on any port but 4791.
    #[test]
    fn decode_without_port_and_verbose() {
        let f = file(false, 1, &records(&crem_frames(false), ethernet));
        let (out, c) = run(&f, opts(Mode::Crem { port: None }, false));
        assert_eq!(out.lines().count(), 2, "{out}");
        assert_eq!(
            c.summary_text(),
            "8 packets: 2 decoded, 0 invalid, 6 skipped (1 not UDP, 1 IP fragment, \
             1 cut by the snap length (capture with tcpdump -s 0), 1 RoCEv2 (port 4791), \
             2 UDP but not CREM)"
        );
        assert_eq!(c.failures(), None);
        let mut o = opts(Mode::Crem { port: None }, false);
        o.verbose = true;
        let (out, _) = run(&f, o);
        assert!(out.starts_with(
            "1 1700000000.000001\n  IPv4 192.0.2.1 -> 198.51.100.2, UDP 40000 -> 7470\n  \
             CREM CLOSE (type 9), flags 0x00, length 12, flow ID 7\n    Reason: circuit-breaker (4)\n2 "
        ), "{out}");
    }

    /// A RoCEv2 packet over IPv6 from a fixture's UDP payload, its ICRC
    /// recomputed (the fixtures are IPv4).
    fn roce_v6(name: &str) -> Vec<u8> {
        let mut p = ipv6_udp(A6, B6, 50000, 4791, &fixture(name)[28..]);
        let icrc = crem_core::roce::icrc_from_ip_packet(&p).unwrap();
        let n = p.len();
        p[n - 4..].copy_from_slice(&icrc.to_le_bytes());
        p
    }

    #[test]
    fn roce_pcapng_ethernet_and_sll() {
        let v4 = fixture("rxe-v4-op04.hex");
        let ack = fixture("rxe-v4-op11.hex");
        let mut bad = fixture("rxe-v4-op0c.hex");
        let n = bad.len();
        bad[n - 6] ^= 1;
        let v6 = roce_v6("rxe-v4-op06.hex");
        let crem = ipv4_udp(A, B, 40000, 7470, &every_message()[9].1);
        let frames = [
            ethernet(&v4),
            ethernet(&ack),
            sll(&v6),
            ethernet(&bad),
            ethernet(&crem),
        ];
        let pkts: Vec<(u32, u64, &[u8], u32)> = frames
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let id = u32::from(i == 2);
                (id, 1_700_000_000_000_000 + i as u64, &f[..], f.len() as u32)
            })
            .collect();
        for be in [false, true] {
            let f = pcapng(be, &[(1, &[]), (113, &[])], &pkts);
            let (out, c) = run(&f, opts(Mode::Roce, false));
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), 4, "{out}");
            assert_eq!(
                lines[0],
                "1 1700000000.000000 IPv4 192.0.2.1 -> 203.0.113.1, UDP 59821 -> 4791, TOS 0x00 (ECN 0) | \
                 BTH: RC SEND_ONLY (0x04), PSN 15862328, dest QP 0x000011, P_Key 0xffff, AckReq 1, SE 0, FECN 0, BECN 0, pad 0 | \
                 CREM: source (carries a new PSN) | payload: 16 octets | \
                 ICRC: stored 0x62931f14, computed 0x62931f14: ok"
            );
            assert!(lines[2].starts_with(
                "3 1700000000.000002 IPv6 2001:db8::1 -> 2001:db8::2, UDP 50000 -> 4791, TOS 0x00 (ECN 0) | BTH: RC RDMA_WRITE_FIRST"
            ), "{}", lines[2]);
            assert!(lines[2].ends_with(": ok"), "{}", lines[2]);
            assert!(lines[3].ends_with(": MISMATCH"), "{}", lines[3]);
            assert_eq!(
                c.summary_text(),
                "5 packets: 4 decoded (1 ICRC mismatch), 0 invalid, 1 skipped (1 not to UDP port 4791)"
            );
            assert_eq!(
                c.failures().as_deref(),
                Some("1 packet with an ICRC mismatch")
            );
            let (out, c) = run(&f, opts(Mode::Roce, true));
            let first = out.lines().next().unwrap();
            assert_eq!(
                first,
                r#"{"packet":1,"time":"1700000000.000000","ip-version":4,"src":"192.0.2.1","dst":"203.0.113.1","src-port":59821,"dst-port":4791,"tos":0,"ecn":0,"opcode":4,"opcode-name":"RC SEND_ONLY","psn":15862328,"dest-qp":17,"pkey":65535,"ack-req":true,"se":false,"fecn":false,"becn":false,"pad-count":0,"source":true,"payload-len":16,"icrc":1653808916,"icrc-computed":1653808916,"icrc-ok":true}"#
            );
            assert_eq!(
                c.summary_json().to_string(),
                r#"{"summary":{"packets":5,"decoded":4,"invalid":0,"icrc-mismatch":1,"skipped":{"other-port":1}}}"#
            );
        }
    }

    /// tcpdump -x text goes through the same path.
    #[test]
    fn tcpdump_text_packets() {
        let ip = ipv4_udp(A, B, 40000, 7470, &every_message()[9].1);
        let mut text =
            String::from("12:00:00.000001 IP 192.0.2.1.40000 > 198.51.100.2.7470: UDP\n");
        for (i, c) in ip.chunks(16).enumerate() {
            let groups: Vec<String> = c.chunks(2).map(crate::hex::encode).collect();
            text += &format!("\t0x{:04x}:  {}\n", i * 16, groups.join(" "));
        }
        let mut c = Capture::new(opts(Mode::Crem { port: Some(7470) }, false));
        let mut out = String::new();
        for (r, t) in tcpdump::parse(&text).unwrap() {
            out.extend(c.packet(&r, t.as_deref()));
        }
        assert_eq!(
            out,
            "1 12:00:00.000001 IPv4 192.0.2.1 -> 198.51.100.2, UDP 40000 -> 7470 | \
             CREM CLOSE (type 9), flags 0x00, length 12, flow ID 7 | Reason circuit-breaker\n"
        );
    }

    /// Corrupted captures: every record the reader yields goes through the
    /// dissectors and decoders without a panic.
    #[test]
    fn corrupt_captures_never_panic() {
        let f = file(false, 1, &records(&crem_frames(false), ethernet));
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for mode in [
            Mode::Crem { port: Some(7470) },
            Mode::Crem { port: None },
            Mode::Roce,
        ] {
            for _ in 0..500 {
                let mut g = f.clone();
                for _ in 0..1 + rnd() % 8 {
                    // Past the file header, so most records still parse.
                    let i = 24 + (rnd() as usize) % (g.len() - 24);
                    g[i] = rnd() as u8;
                }
                let mut c = Capture::new(opts(mode, rnd() % 2 == 0));
                if let Ok(mut r) = pcap::Reader::new(&g[..]) {
                    while let Ok(Some(rec)) = r.next_record() {
                        let _ = c.packet(&rec, None);
                    }
                }
                let _ = (c.summary_text(), c.summary_json(), c.failures());
            }
        }
    }
}
