//! `crem-ctl peer [show]`: per configured peer, what its flows did, rolled
//! up here from the flow dump (as `wg show` sums a peer's transfer).

use crate::model::{Addr, Flow, Peer};
use crate::output::{format_age_ms, human_size};
use crate::parse::prefix_contains;
use serde::Serialize;
use std::fmt::Write;

/// The counters a row sums, by flow-stats name (the JSON key too).
const SUMMED: [&str; 5] = [
    "sources",
    "repairs-sent",
    "received",
    "repairs-received",
    "restored",
];

/// One peer entry and its flows, or (`prefix` None) the flows of a peer
/// address no entry names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Row {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<Addr>,
    #[serde(rename = "prefix-len", skip_serializing_if = "Option::is_none")]
    pub prefix_len: Option<u8>,
    pub addr: Addr,
    pub configured: bool,
    pub csf: u64,
    pub crf: u64,
    pub sources: u64,
    #[serde(rename = "repairs-sent")]
    pub repairs_sent: u64,
    pub received: u64,
    #[serde(rename = "repairs-received")]
    pub repairs_received: u64,
    pub restored: u64,
    /// The youngest flow's age; absent without flows.
    #[serde(rename = "newest-age-ms", skip_serializing_if = "Option::is_none")]
    pub newest_age_ms: Option<u64>,
    /// Octets held for its flows.
    pub memory: u64,
    /// Since its peer's last message to any of its flows (as `wg show`'s
    /// latest handshake); absent if none has heard from the peer.
    #[serde(rename = "last-msg-ms", skip_serializing_if = "Option::is_none")]
    pub last_msg_ms: Option<u64>,
}

impl Row {
    fn add(&mut self, f: &Flow) {
        match f.side.and_then(|s| s.name()) {
            Some("csf") => self.csf += 1,
            Some("crf") => self.crf += 1,
            _ => {}
        }
        let c = |name: &str| {
            f.stats
                .as_ref()
                .and_then(|s| s.counters.0.iter().find(|(k, _)| *k == name))
                .map_or(0, |x| x.1)
        };
        let [s, rs, r, rr, re] = SUMMED.map(c);
        self.sources += s;
        self.repairs_sent += rs;
        self.received += r;
        self.repairs_received += rr;
        self.restored += re;
        self.memory += f.memory.unwrap_or(0);
        if let Some(a) = f.age_ms {
            self.newest_age_ms = Some(self.newest_age_ms.map_or(a, |n| n.min(a)));
        }
        if let Some(a) = f.last_msg_ms {
            self.last_msg_ms = Some(self.last_msg_ms.map_or(a, |n| n.min(a)));
        }
    }
}

/// The row of each peer entry, in configuration order, then one per peer
/// address of flows no entry names. A flow counts under the entry whose
/// address is the flow's peer and whose prefix holds the flow's far host
/// (a sender flow's destination, a receiver flow's source), the longest if
/// several do; else under the first entry with its address.
pub fn summarize(peers: &[Peer], flows: &[Flow]) -> Vec<Row> {
    let mut rows: Vec<Row> = peers
        .iter()
        .map(|p| Row {
            prefix: Some(p.prefix.clone()),
            prefix_len: Some(p.prefix_len),
            addr: p.addr.clone(),
            configured: true,
            ..Row::default()
        })
        .collect();
    for f in flows {
        let Some(addr) = f.peer.clone() else { continue };
        let far = match f.side.and_then(|s| s.name()) {
            Some("crf") => f.src.as_ref(),
            _ => f.dst.as_ref(),
        }
        .and_then(Addr::ip);
        let same: Vec<usize> = (0..peers.len())
            .filter(|&i| peers[i].addr == addr)
            .collect();
        let holds = |i: &usize| {
            let p = &peers[*i];
            match (p.prefix.ip(), far) {
                (Some(pre), Some(h)) => prefix_contains(pre, p.prefix_len, h),
                _ => false,
            }
        };
        let i = same
            .iter()
            .filter(|i| holds(i))
            .max_by_key(|i| peers[**i].prefix_len)
            .or(same.first())
            .copied()
            .unwrap_or_else(
                || match rows.iter().position(|r| !r.configured && r.addr == addr) {
                    Some(i) => i,
                    None => {
                        rows.push(Row {
                            addr: addr.clone(),
                            ..Row::default()
                        });
                        rows.len() - 1
                    }
                },
            );
        rows[i].add(f);
    }
    rows
}

/// The table of `crem-ctl peer` (or `peers: none`).
pub fn text(rows: &[Row]) -> String {
    if rows.is_empty() {
        return "peers: none\n".into();
    }
    let head = [
        "PREFIX",
        "PEER",
        "CSF",
        "CRF",
        "SOURCES",
        "REPAIRS-SENT",
        "RECEIVED",
        "REPAIRS-RCVD",
        "RESTORED",
        "MEMORY",
        "NEWEST",
        "HEARD",
    ];
    let mut table: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    for r in rows {
        let prefix = match (&r.prefix, r.prefix_len) {
            (Some(p), Some(l)) => format!("{p}/{l}"),
            _ => "(not configured)".into(),
        };
        table.push(vec![
            prefix,
            r.addr.to_string(),
            r.csf.to_string(),
            r.crf.to_string(),
            r.sources.to_string(),
            r.repairs_sent.to_string(),
            r.received.to_string(),
            r.repairs_received.to_string(),
            r.restored.to_string(),
            human_size(r.memory),
            r.newest_age_ms.map_or("-".into(), format_age_ms),
            r.last_msg_ms.map_or("-".into(), format_age_ms),
        ]);
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|i| table.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    let mut s = format!("peers: {}\n", rows.len());
    for r in table {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            // Names left, numbers right.
            .map(|(i, (c, w))| {
                if i < 2 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        let _ = writeln!(s, "  {}", cells.join("  ").trim_end());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{enum_val, Counters, FlowStats};
    use crate::uapi::SIDE;
    use std::net::IpAddr;

    fn a(s: &str) -> Addr {
        Addr::from(s.parse::<IpAddr>().unwrap())
    }

    fn peer(prefix: &str, len: u8, addr: &str) -> Peer {
        Peer {
            prefix: a(prefix),
            prefix_len: len,
            addr: a(addr),
        }
    }

    fn flow(
        side: u8,
        src: &str,
        dst: &str,
        peer: &str,
        age: u64,
        c: &[(&'static str, u64)],
    ) -> Flow {
        Flow {
            side: Some(enum_val(SIDE, side.into())),
            src: Some(a(src)),
            dst: Some(a(dst)),
            peer: Some(a(peer)),
            age_ms: Some(age),
            memory: Some(1024),
            stats: Some(FlowStats {
                counters: Counters(c.to_vec()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn rolls_flows_up_per_peer_entry() {
        let peers = [
            peer("203.0.113.0", 24, "198.51.100.2"),
            // The same peer for a narrower prefix: the longest match wins.
            peer("203.0.113.128", 25, "198.51.100.2"),
            peer("2001:db8:1::", 48, "2001:db8::2"),
        ];
        let mut flows = [
            // Sender flows: by destination.
            flow(
                0,
                "192.0.2.1",
                "203.0.113.1",
                "198.51.100.2",
                5000,
                &[("sources", 100), ("repairs-sent", 12)],
            ),
            flow(
                0,
                "192.0.2.1",
                "203.0.113.200",
                "198.51.100.2",
                700,
                &[("sources", 7)],
            ),
            // A receiver flow: by source.
            flow(
                1,
                "203.0.113.9",
                "192.0.2.1",
                "198.51.100.2",
                3000,
                &[("received", 50), ("repairs-received", 6), ("restored", 2)],
            ),
            // Its far host in no entry's prefix: the first entry of its peer.
            flow(
                1,
                "198.18.0.1",
                "192.0.2.1",
                "198.51.100.2",
                100,
                &[("restored", 1)],
            ),
            // A peer no entry names.
            flow(
                1,
                "10.9.0.1",
                "192.0.2.1",
                "10.0.0.7",
                42,
                &[("received", 3)],
            ),
        ];
        // The peer last heard: the most recent of its flows'; none heard is "-".
        flows[0].last_msg_ms = Some(250);
        flows[2].last_msg_ms = Some(80);
        flows[4].last_msg_ms = Some(1500);
        let rows = summarize(&peers, &flows);
        let got: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.prefix_len,
                    r.addr.to_string(),
                    [
                        r.csf,
                        r.crf,
                        r.sources,
                        r.repairs_sent,
                        r.received,
                        r.repairs_received,
                        r.restored,
                        r.memory,
                    ],
                    r.newest_age_ms,
                    r.last_msg_ms,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    Some(24),
                    "198.51.100.2".into(),
                    [1, 2, 100, 12, 50, 6, 3, 3072],
                    Some(100),
                    Some(80)
                ),
                (
                    Some(25),
                    "198.51.100.2".into(),
                    [1, 0, 7, 0, 0, 0, 0, 1024],
                    Some(700),
                    None
                ),
                (Some(48), "2001:db8::2".into(), [0; 8], None, None),
                (
                    None,
                    "10.0.0.7".into(),
                    [0, 1, 0, 0, 3, 0, 0, 1024],
                    Some(42),
                    Some(1500)
                ),
            ]
        );
        assert!(rows[..3].iter().all(|r| r.configured) && !rows[3].configured);
        // JSON: the peer keys of the configuration, then the roll-up.
        assert_eq!(
            serde_json::to_string(&rows[2]).unwrap(),
            r#"{"prefix":"2001:db8:1::","prefix-len":48,"addr":"2001:db8::2","configured":true,"csf":0,"crf":0,"sources":0,"repairs-sent":0,"received":0,"repairs-received":0,"restored":0,"memory":0}"#
        );
        assert_eq!(
            serde_json::to_string(&rows[3]).unwrap(),
            r#"{"addr":"10.0.0.7","configured":false,"csf":0,"crf":1,"sources":0,"repairs-sent":0,"received":3,"repairs-received":0,"restored":0,"newest-age-ms":42,"memory":1024,"last-msg-ms":1500}"#
        );
        let t = text(&rows);
        eprintln!("{t}");
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "peers: 4");
        assert_eq!(
            lines[1],
            "  PREFIX            PEER          CSF  CRF  SOURCES  REPAIRS-SENT  RECEIVED  REPAIRS-RCVD  RESTORED  MEMORY  NEWEST  HEARD"
        );
        assert_eq!(
            lines[2],
            "  203.0.113.0/24    198.51.100.2    1    2      100            12        50             6         3      3K   100ms   80ms"
        );
        assert_eq!(
            lines[5],
            "  (not configured)  10.0.0.7        0    1        0             0         3             0         0      1K    42ms   1.5s"
        );
        assert_eq!(lines[3].split_whitespace().last(), Some("-"));
        assert_eq!(lines[4].split_whitespace().last(), Some("-"));
        assert_eq!(text(&[]), "peers: none\n");
    }
}
