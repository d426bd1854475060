//! Human-readable output of configuration, counters and flows.

use crate::model::{scheme_name, Config, Flow, Stats};
use crate::parse::{format_duration_us, format_epsilon, format_size};
use std::fmt::Write;

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

/// The `config:` block of `crem-ctl show`.
pub fn config(c: &Config) -> String {
    let mut rows: Vec<(&str, String)> = Vec::new();
    rows.push((
        "port",
        match c.port {
            Some(0) => "0 (CREM inactive: no port configured)".into(),
            p => opt(p),
        },
    ));
    rows.push(("role", opt(c.role)));
    rows.push(("recovery", opt(c.recovery)));
    rows.push((
        "adaptive",
        match c.adaptive {
            Some(0) => "off (k and m stay as configured)".into(),
            Some(1) => "on (the policy chooses m)".into(),
            v => opt(v),
        },
    ));
    rows.push(("k", opt(c.k)));
    rows.push(("m", opt(c.m)));
    rows.push((
        "symbol-len",
        match c.symbol_len {
            Some(0) => "0 (derived from the RDMA MTU)".into(),
            v => opt(v),
        },
    ));
    rows.push((
        "epsilon",
        c.epsilon_ppb
            .map(|p| format!("{} ({p} ppb)", format_epsilon(p)))
            .unwrap_or_else(|| "-".into()),
    ));
    rows.push(("m-cong", opt(c.m_cong)));
    rows.push((
        "hold",
        c.hold_us
            .map(|h| {
                if h == 0 {
                    "0".to_string()
                } else {
                    format!("{} ({h} us)", format_duration_us(h))
                }
            })
            .unwrap_or_else(|| "-".into()),
    ));
    rows.push(("max-flows", opt(c.max_flows)));
    rows.push((
        "max-memory",
        c.max_memory
            .map(|m| {
                let f = format_size(m);
                if f == m.to_string() {
                    format!("{m} octets")
                } else {
                    format!("{f} ({m} octets)")
                }
            })
            .unwrap_or_else(|| "-".into()),
    ));
    let reporters: Vec<String> = c.reporter.iter().flatten().map(|a| a.to_string()).collect();
    let peers: Vec<String> = c
        .peer
        .iter()
        .flatten()
        .map(|p| format!("{}/{} via {}", p.prefix, p.prefix_len, p.addr))
        .collect();
    let mut s = String::from("config:\n");
    for (k, v) in rows {
        let _ = writeln!(s, "  {:<12}{v}", format!("{k}:"));
    }
    for (k, list) in [("reporter", reporters), ("peer", peers)] {
        if list.is_empty() {
            let _ = writeln!(s, "  {:<12}(none)", format!("{k}:"));
        }
        for (i, v) in list.iter().enumerate() {
            let label = if i == 0 {
                format!("{k}:")
            } else {
                String::new()
            };
            let _ = writeln!(s, "  {label:<12}{v}");
        }
    }
    s
}

/// The `stats:` block.
pub fn stats(st: &Stats) -> String {
    let w = st.0.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 2;
    let mut s = String::from("stats:\n");
    for (k, v) in &st.0 {
        let _ = writeln!(s, "  {:<w$}{v:>12}", format!("{k}:"));
    }
    s
}

/// The `stats --watch` block: counters and their rate since the last sample.
pub fn stats_rates(st: &Stats, prev: Option<&Stats>, secs: f64) -> String {
    let w = st.0.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 2;
    let mut s = String::new();
    for (k, v) in &st.0 {
        let rate = prev
            .and_then(|p| p.get(k))
            .map(|p| format!("{:>12.1}/s", v.saturating_sub(p) as f64 / secs))
            .unwrap_or_default();
        let _ = writeln!(s, "  {:<w$}{v:>12}{rate}", format!("{k}:"));
    }
    s
}

/// The flow table (or `flows: none`).
pub fn flows(list: &[Flow]) -> String {
    if list.is_empty() {
        return "flows: none\n".into();
    }
    let head = [
        "ID", "SRC", "DST", "DEST-QP", "STATE", "CFG", "SCHEME", "K", "M", "T", "SRTT", "LOSS",
        "CLASS", "BREAKER", "MEMORY",
    ];
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    for f in list {
        rows.push(vec![
            opt(f.id),
            opt(f.src.as_ref()),
            opt(f.dst.as_ref()),
            f.dest_qp
                .map(|q| format!("0x{q:06x}"))
                .unwrap_or_else(|| "-".into()),
            opt(f.state),
            opt(f.config_id),
            f.scheme.map(scheme_name).unwrap_or_else(|| "-".into()),
            opt(f.k),
            opt(f.m),
            opt(f.symbol_len),
            f.srtt_us
                .map(|u| format!("{u}us"))
                .unwrap_or_else(|| "-".into()),
            f.loss_ppm
                .map(|p| format!("{p}ppm"))
                .unwrap_or_else(|| "-".into()),
            opt(f.loss_class),
            opt(f.breaker),
            f.memory.map(format_size).unwrap_or_else(|| "-".into()),
        ]);
    }
    let n = head.len();
    let widths: Vec<usize> = (0..n)
        .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    let mut s = format!("flows: {}\n", list.len());
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(s, "  {}", line.join("  ").trim_end());
    }
    s
}

/// One line for a config-changed notification.
pub fn config_line(c: &Config) -> String {
    let mut parts = Vec::new();
    let mut p = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            parts.push(format!("{k} {v}"));
        }
    };
    p("port", c.port.map(|v| v.to_string()));
    p("role", c.role.map(|v| v.to_string()));
    p("recovery", c.recovery.map(|v| v.to_string()));
    p(
        "adaptive",
        c.adaptive.map(|v| if v != 0 { "on" } else { "off" }.into()),
    );
    p("k", c.k.map(|v| v.to_string()));
    p("m", c.m.map(|v| v.to_string()));
    p("symbol-len", c.symbol_len.map(|v| v.to_string()));
    p("epsilon", c.epsilon_ppb.map(format_epsilon));
    p("m-cong", c.m_cong.map(|v| v.to_string()));
    p("hold", c.hold_us.map(format_duration_us));
    p("max-flows", c.max_flows.map(|v| v.to_string()));
    p("max-memory", c.max_memory.map(format_size));
    let r: Vec<String> = c.reporter.iter().flatten().map(|a| a.to_string()).collect();
    if !r.is_empty() {
        p("reporter", Some(r.join(",")));
    }
    let pe: Vec<String> = c.peer.iter().flatten().map(|x| x.to_string()).collect();
    if !pe.is_empty() {
        p("peer", Some(pe.join(",")));
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{enum_val, Addr, Peer};
    use crate::uapi::{FLOW_STATES, ROLE};

    #[test]
    fn config_block() {
        let c = Config {
            port: Some(50000),
            role: Some(enum_val(ROLE, 1)),
            k: Some(16),
            epsilon_ppb: Some(100_000),
            hold_us: Some(2000),
            max_memory: Some(64 << 20),
            reporter: Some(vec![
                Addr(vec![198, 51, 100, 1]),
                Addr(vec![198, 51, 100, 7]),
            ]),
            peer: Some(vec![]),
            ..Default::default()
        };
        let s = config(&c);
        assert!(
            s.starts_with("config:\n  port:       50000\n  role:       host\n"),
            "{s}"
        );
        assert!(s.contains("  epsilon:    1e-4 (100000 ppb)\n"), "{s}");
        assert!(s.contains("  hold:       2ms (2000 us)\n"), "{s}");
        assert!(s.contains("  max-memory: 64M (67108864 octets)\n"), "{s}");
        assert!(
            s.contains("  reporter:   198.51.100.1\n              198.51.100.7\n"),
            "{s}"
        );
        assert!(s.contains("  peer:       (none)\n"), "{s}");
        let line = config_line(&Config {
            peer: Some(vec![Peer {
                prefix: Addr(vec![203, 0, 113, 0]),
                prefix_len: 24,
                addr: Addr(vec![198, 51, 100, 2]),
            }]),
            ..c
        });
        assert_eq!(
            line,
            "port 50000 role host k 16 epsilon 1e-4 hold 2ms max-memory 64M \
             reporter 198.51.100.1,198.51.100.7 peer 203.0.113.0/24=198.51.100.2"
        );
    }

    #[test]
    fn flow_table() {
        assert_eq!(flows(&[]), "flows: none\n");
        let f = Flow {
            id: Some(7),
            src: Some(Addr(vec![192, 0, 2, 1])),
            dst: Some(Addr(vec![203, 0, 113, 1])),
            dest_qp: Some(0x11),
            state: Some(enum_val(FLOW_STATES, 1)),
            scheme: Some(1),
            k: Some(32),
            m: Some(2),
            memory: Some(1 << 20),
            ..Default::default()
        };
        let t = flows(&[f]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "flows: 1");
        assert!(
            lines[1].starts_with("  ID  SRC        DST          DEST-QP   STATE"),
            "{t}"
        );
        assert!(
            lines[2].contains("protected") && lines[2].contains("cauchy"),
            "{t}"
        );
        assert!(
            lines[2].contains("0x000011") && lines[2].ends_with("1M"),
            "{t}"
        );
    }
}
