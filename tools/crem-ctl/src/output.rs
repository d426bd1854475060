//! Human-readable output of configuration, counters and flows.

use crate::model::{
    close_reason_name, scheme_name, scheme_set_names, ByType, Config, Counters, Flow, Stats,
};
use crate::parse::{format_duration_us, format_epsilon, format_size};
use crate::uapi::{AttrSet, AttrSpec, AttrType, FLOW_STATS_SET, STATS_SET};
use crem_core::ctl::REPORT_PORT_BURST;
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
    rows.push((
        "report",
        match c.report.map(|r| r.value) {
            Some(0) => "off".into(),
            Some(1) => "on (a Path Reporter: reports its own drops of RoCEv2)".into(),
            _ => opt(c.report),
        },
    ));
    rows.push(("recovery", opt(c.recovery)));
    rows.push((
        "adaptive",
        match c.adaptive.map(|a| a.value) {
            Some(0) => "off (k and m stay as configured)".into(),
            Some(1) => "on (the policy chooses m)".into(),
            _ => opt(c.adaptive),
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
    rows.push(("max-bdp", opt(c.max_bdp)));
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
    rows.push((
        "node-id",
        match c.node_id {
            Some(0) => "0 (auto: the netns cookie's low 32 bits)".into(),
            v => opt(v),
        },
    ));
    rows.push(("report-interval-us", opt(c.report_interval_us)));
    rows.push(("report-flow-gap-us", opt(c.report_flow_gap_us)));
    rows.push((
        "report-port-rate",
        c.report_port_rate
            .map(|r| format!("{r} reports/s (burst {REPORT_PORT_BURST})"))
            .unwrap_or_else(|| "-".into()),
    ));
    rows.push(("report-psns", opt(c.report_psns)));
    rows.push(("spare-flows", opt(c.spare_flows)));
    let reporters: Vec<String> = c.reporter.iter().flatten().map(|a| a.to_string()).collect();
    let peers: Vec<String> = c
        .peer
        .iter()
        .flatten()
        .map(|p| format!("{}/{} via {}", p.prefix, p.prefix_len, p.addr))
        .collect();
    // Values in a column after the longest key.
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 2;
    let mut s = String::from("config:\n");
    for (k, v) in rows {
        let _ = writeln!(s, "  {:<w$}{v}", format!("{k}:"));
    }
    for (k, list) in [("reporter", reporters), ("peer", peers)] {
        if list.is_empty() {
            let _ = writeln!(s, "  {:<w$}(none)", format!("{k}:"));
        }
        for (i, v) in list.iter().enumerate() {
            let label = if i == 0 {
                format!("{k}:")
            } else {
                String::new()
            };
            let _ = writeln!(s, "  {label:<w$}{v}");
        }
    }
    s
}

/// The sections of the human `stats` output, in order.
const STATS_TITLES: [&str; 5] = [
    "hooks (RoCEv2 packets)",
    "flows and messages",
    "drops",
    "path reporter",
    "now (gauges)",
];

/// The hook's counters (the first section).
const HOOK_COUNTERS: &[&str] = &[
    "roce-local-in",
    "roce-forward",
    "roce-local-out",
    "sources",
    "non-sources",
    "malformed",
];

/// The section of the "stats" counter `name`: the hook's, the gauges, a
/// drop (its name begins with drop- or skip-), the Path Reporter's (report-
/// or reports-), else flows and messages. A counter the spec adds finds its
/// section by its name: nothing to add here.
pub fn stats_section(name: &str) -> &'static str {
    if HOOK_COUNTERS.contains(&name) {
        STATS_TITLES[0]
    } else if GAUGES.contains(&name) {
        STATS_TITLES[4]
    } else if name.starts_with("drop-") || name.starts_with("skip-") {
        STATS_TITLES[2]
    } else if name.starts_with("report-") || name.starts_with("reports-") {
        STATS_TITLES[3]
    } else {
        STATS_TITLES[1]
    }
}

/// The sections of the "stats" set's counters (spec order within each).
pub fn stats_groups() -> Vec<(&'static str, Vec<&'static str>)> {
    groups(&STATS_SET, &STATS_TITLES, |a| stats_section(a.name))
}

/// The u64 counters of `set` in the sections `titles`, each where
/// `section` puts it (spec order within each).
fn groups(
    set: &AttrSet,
    titles: &[&'static str],
    section: impl Fn(&AttrSpec) -> &'static str,
) -> Vec<(&'static str, Vec<&'static str>)> {
    titles
        .iter()
        .map(|&t| {
            let names = set
                .attrs
                .iter()
                .filter(|a| a.ty == AttrType::Uint && section(a) == t)
                .map(|a| a.name)
                .collect();
            (t, names)
        })
        .collect()
}

/// The "stats" attributes that are gauges, not counters: no rate.
pub const GAUGES: &[&str] = &["flows-active", "memory"];

/// The sections of a "flow-stats" nest (the totals, or one flow's
/// counters), in order.
const FLOW_STATS_TITLES: [&str; 3] = ["sender (CSF)", "receiver (CRF)", "messages and memory"];

/// The section of a flow-stats counter whose spec doc is `doc`: the
/// sender's ("CSF: ...", "CSF, selective repeat: ..."), the receiver's
/// ("CRF: ...", "CRF, host mode: ..."), else messages and memory. A counter
/// the spec adds finds its section by its doc.
pub fn flow_stats_section(doc: &str) -> &'static str {
    if doc.starts_with("CSF:") || doc.starts_with("CSF,") {
        FLOW_STATS_TITLES[0]
    } else if doc.starts_with("CRF:") || doc.starts_with("CRF,") {
        FLOW_STATS_TITLES[1]
    } else {
        FLOW_STATS_TITLES[2]
    }
}

/// The sections of the flow-stats counters (spec order within each).
pub fn flow_stats_groups() -> Vec<(&'static str, Vec<&'static str>)> {
    groups(&FLOW_STATS_SET, &FLOW_STATS_TITLES, |a| {
        flow_stats_section(a.doc)
    })
}

/// A titled group of (name, value, is-gauge) rows.
type Section = (String, Vec<(&'static str, u64, bool)>);

/// Splits `c` into the sections of `groups` (titles prefixed with `prefix`),
/// marking the `gauges`; counters no group names (none today) land in a
/// last "other" section.
fn sections<G: AsRef<[&'static str]>>(
    prefix: &str,
    groups: &[(&str, G)],
    gauges: &[&str],
    c: &Counters,
    out: &mut Vec<Section>,
) {
    let row = |n: &'static str, v: u64| (n, v, gauges.contains(&n));
    for (title, names) in groups {
        let rows: Vec<_> =
            c.0.iter()
                .filter(|(n, _)| names.as_ref().contains(n))
                .map(|&(n, v)| row(n, v))
                .collect();
        if !rows.is_empty() {
            out.push((format!("{prefix}{title}"), rows));
        }
    }
    let other: Vec<_> =
        c.0.iter()
            .filter(|(n, _)| !groups.iter().any(|(_, g)| g.as_ref().contains(n)))
            .map(|&(n, v)| row(n, v))
            .collect();
    if !other.is_empty() {
        out.push((format!("{prefix}other"), other));
    }
}

fn stats_sections(st: &Stats) -> Vec<Section> {
    let mut v = Vec::new();
    sections("", &stats_groups(), GAUGES, &st.counters, &mut v);
    if let Some(t) = &st.totals {
        sections(
            "flow totals, ",
            &flow_stats_groups(),
            &[],
            &t.counters,
            &mut v,
        );
    }
    v
}

/// Renders sections at `indent`, values aligned; with `prev`, a rate column
/// (per second over `secs`) for every counter that `prev` also has.
fn render(secs: &[Section], prev: Option<&[Section]>, dt: f64, indent: usize) -> String {
    let w = secs
        .iter()
        .flat_map(|(_, r)| r.iter().map(|(n, _, _)| n.len()))
        .max()
        .unwrap_or(0)
        + 2;
    let vw = secs
        .iter()
        .flat_map(|(_, r)| r.iter().map(|(_, v, _)| v.to_string().len()))
        .max()
        .unwrap_or(0)
        .max(12);
    let pad = " ".repeat(indent);
    let mut s = String::new();
    for (title, rows) in secs {
        let _ = writeln!(s, "{pad}{title}:");
        let before = prev.and_then(|p| p.iter().find(|(t, _)| t == title));
        for (n, v, gauge) in rows {
            let rate = before
                .filter(|_| !gauge)
                .and_then(|(_, r)| r.iter().find(|(pn, _, _)| pn == n))
                .map(|(_, p, _)| format!("{:>12.1}/s", v.saturating_sub(*p) as f64 / dt))
                .unwrap_or_default();
            let _ = writeln!(s, "{pad}  {:<w$}{v:>vw$}{rate}", format!("{n}:"));
        }
    }
    s
}

/// A flow's negotiated limits in one line, or `-` before they are known.
fn flow_limits(f: &Flow) -> String {
    match (f.schemes, f.max_k, f.max_m, f.max_symbol_len) {
        (Some(s), Some(k), Some(m), Some(t)) => {
            let mut v = format!(
                "k <= {k}, m <= {m}, symbol-len <= {t}, schemes {}",
                scheme_set_names(s)
            );
            if let Some(b) = f.max_open_blocks {
                let _ = write!(v, ", {b} open blocks");
            }
            v
        }
        _ => "-".into(),
    }
}

/// The "messages by type" table of `b`, titled `title`, at `indent`: one
/// row per message type counted at least once in either direction, in spec
/// order (TYPE, IN, OUT; `-` for a direction the module did not send), or
/// `TITLE: none`. With `prev`, two more columns: the rates per second since
/// `prev` (`dt` seconds ago). Empty if the module sent no by-type nest.
pub fn by_type_table(
    title: &str,
    b: &ByType,
    prev: Option<&ByType>,
    dt: f64,
    indent: usize,
) -> String {
    if b.is_absent() {
        return String::new();
    }
    let pad = " ".repeat(indent);
    let rows = b.nonzero_rows();
    if rows.is_empty() {
        return format!("{pad}{title}: none\n");
    }
    let prev = prev.filter(|p| !p.is_absent());
    let mut head = vec!["TYPE", "IN", "OUT"];
    if prev.is_some() {
        head.extend(["IN/S", "OUT/S"]);
    }
    let mut cells: Vec<Vec<String>> = vec![head.iter().map(|h| h.to_string()).collect()];
    for (name, i, o) in rows {
        let mut r = vec![name.to_string(), opt(i), opt(o)];
        if let Some(p) = prev {
            let (pi, po) = p.count(name);
            let rate = |now: Option<u64>, before: Option<u64>| match (now, before) {
                (Some(n), Some(b)) => format!("{:.1}", n.saturating_sub(b) as f64 / dt),
                _ => "-".into(),
            };
            r.push(rate(i, pi));
            r.push(rate(o, po));
        }
        cells.push(r);
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|c| cells.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut s = format!("{pad}{title}:\n");
    for r in cells {
        let mut line = format!("{:<w$}", r[0], w = widths[0]);
        for (c, w) in r[1..].iter().zip(&widths[1..]) {
            let _ = write!(line, "  {c:>w$}");
        }
        let _ = writeln!(s, "{pad}  {line}");
    }
    s
}

/// The by-type tables of `stats`: the CREM socket's, then the flow totals'.
fn stats_by_type(st: &Stats, prev: Option<&Stats>, dt: f64) -> String {
    let mut s = by_type_table(
        "messages by type (CREM socket)",
        &st.by_type,
        prev.map(|p| &p.by_type),
        dt,
        2,
    );
    if let Some(t) = &st.totals {
        let pt = prev.and_then(|p| p.totals.as_ref()).map(|t| &t.by_type);
        s.push_str(&by_type_table(
            "flow totals, messages by type",
            &t.by_type,
            pt,
            dt,
            2,
        ));
    }
    s
}

/// The `stats:` block: sections of counters, then the flow totals, then
/// the messages by type.
pub fn stats(st: &Stats) -> String {
    format!(
        "stats:\n{}{}",
        render(&stats_sections(st), None, 1.0, 2),
        stats_by_type(st, None, 1.0)
    )
}

/// The `stats --watch` block: counters and their rate since the last
/// sample (`secs` ago); gauges get no rate.
pub fn stats_rates(st: &Stats, prev: Option<&Stats>, secs: f64) -> String {
    let p = prev.map(stats_sections);
    render(&stats_sections(st), p.as_deref(), secs, 2) + &stats_by_type(st, prev, secs)
}

/// Octets in the largest 1024-based unit they reach: exact (`64M`) when a
/// multiple of it, else to one decimal (`1.5M`); below 1K the plain number.
pub fn human_size(v: u64) -> String {
    match [(40, "T"), (30, "G"), (20, "M"), (10, "K")]
        .into_iter()
        .find(|(sh, _)| v >= 1u64 << sh)
    {
        None => v.to_string(),
        Some((sh, suf)) if v % (1u64 << sh) == 0 => format!("{}{suf}", v >> sh),
        Some((sh, suf)) => format!("{:.1}{suf}", v as f64 / (1u64 << sh) as f64),
    }
}

/// A flow's age: `850ms`, `12.3s`, `4m05s`, `2h07m`, `3d04h`.
pub fn format_age_ms(ms: u64) -> String {
    let s = ms / 1000;
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{}.{}s", s, (ms % 1000) / 100),
        60_000..3_600_000 => format!("{}m{:02}s", s / 60, s % 60),
        3_600_000..86_400_000 => format!("{}h{:02}m", s / 3600, (s / 60) % 60),
        _ => format!("{}d{:02}h", s / 86_400, (s / 3600) % 24),
    }
}

/// A smoothed RTT: `850us`, `25.0ms`.
pub fn format_srtt_us(us: u32) -> String {
    if us < 1000 {
        format!("{us}us")
    } else {
        format!("{:.1}ms", f64::from(us) / 1000.0)
    }
}

fn or_dash(v: Option<String>) -> String {
    v.filter(|s| !s.is_empty()).unwrap_or_else(|| "-".into())
}

/// The counters `-s` shows under each flow of the table, by side: the
/// ones that say whether protection works (what was sent and received,
/// repaired, given up), then the CREM messages both sides count.
const INLINE_CSF: &[&str] = &[
    "sources",
    "repairs-sent",
    "coded-retx",
    "source-copies",
    "requests-received",
    "blocks-given-up",
    "unprotected",
];
const INLINE_CRF: &[&str] = &[
    "received",
    "repairs-received",
    "restored",
    "icrc-failures",
    "requests-sent",
    "fallbacks",
    "abandoned",
];
const INLINE_BOTH: &[&str] = &["msgs-in", "msgs-out"];

/// A flow's counters as `ip -s link` shows them: a line of names and a
/// line of values, right-aligned under them, at `indent`; `-` for a
/// counter the module did not send. A flow of unknown side gets both
/// sides' counters.
pub fn flow_counters_inline(f: &Flow, indent: usize) -> String {
    let side = f.side.and_then(|s| s.name());
    let names: Vec<&str> = match side {
        Some("csf") => INLINE_CSF.to_vec(),
        Some("crf") => INLINE_CRF.to_vec(),
        _ => [INLINE_CSF, INLINE_CRF].concat(),
    }
    .into_iter()
    .chain(INLINE_BOTH.iter().copied())
    .collect();
    let values: Vec<String> = names
        .iter()
        .map(|n| {
            let v = f
                .stats
                .as_ref()
                .and_then(|s| s.counters.0.iter().find(|(k, _)| k == n));
            opt(v.map(|x| x.1))
        })
        .collect();
    let (mut head, mut vals) = (String::new(), String::new());
    for (n, v) in names.iter().zip(&values) {
        let w = n.len().max(v.len());
        let _ = write!(head, "  {n:>w$}");
        let _ = write!(vals, "  {v:>w$}");
    }
    let pad = " ".repeat(indent.saturating_sub(2));
    format!("{pad}{head}\n{pad}{vals}\n")
}

/// The flow table (or `flows: none`): one line per flow, and with `stats`
/// (-s) the flow's counters under it. `of`: the number of flows before a
/// filter chose `list`, said in the title.
pub fn flows(list: &[Flow], stats: bool, of: Option<usize>) -> String {
    let count = match (list.len(), of) {
        (0, None) => return "flows: none\n".into(),
        (0, Some(t)) => return format!("flows: none of {t} match\n"),
        (n, None) => n.to_string(),
        (n, Some(t)) => format!("{n} of {t} match"),
    };
    let head = [
        "ID",
        "SIDE",
        "KIND",
        "SRC -> DST",
        "DEST-QP",
        "PEER",
        "STATE",
        "SCHEME",
        "K/M/T",
        "SRTT",
        "MIN-RTT",
        "LOSS",
        "CLASS",
        "BREAKER",
        "MEMORY",
        "AGE",
    ];
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    for f in list {
        rows.push(vec![
            opt(f.id),
            opt(f.side),
            opt(f.kind),
            format!(
                "{} -> {}",
                or_dash(f.src.as_ref().map(|a| a.to_string())),
                or_dash(f.dst.as_ref().map(|a| a.to_string()))
            ),
            or_dash(f.dest_qp.map(|q| format!("0x{q:06x}"))),
            or_dash(f.peer.as_ref().map(|a| a.to_string())),
            opt(f.state),
            or_dash(f.scheme.map(|x| scheme_name(x.value))),
            format!("{}/{}/{}", opt(f.k), opt(f.m), opt(f.symbol_len)),
            or_dash(f.srtt_us.map(format_srtt_us)),
            or_dash(f.min_rtt_us.map(format_srtt_us)),
            or_dash(f.loss_ppm.map(|p| format!("{p}ppm"))),
            opt(f.loss_class),
            opt(f.breaker),
            or_dash(f.memory.map(human_size)),
            or_dash(f.age_ms.map(format_age_ms)),
        ]);
    }
    let n = head.len();
    let widths: Vec<usize> = (0..n)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut s = format!("flows: {count}\n");
    // The heading row has no flow.
    let flows = std::iter::once(None).chain(list.iter().map(Some));
    for (r, f) in rows.iter().zip(flows) {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(s, "  {}", line.join("  ").trim_end());
        if let Some(f) = f.filter(|_| stats) {
            s.push_str(&flow_counters_inline(f, 6));
        }
    }
    s
}

/// One flow in full (`crem-ctl flow show ID`): every attribute, then its
/// counters by section.
pub fn flow_detail(f: &Flow) -> String {
    let rows: Vec<(&str, String)> = vec![
        (
            "side",
            match f.side.and_then(|s| s.name()) {
                Some("csf") => "csf (sender: protects packets toward the peer)".into(),
                Some("crf") => "crf (receiver: restores packets from the peer)".into(),
                _ => opt(f.side),
            },
        ),
        (
            "kind",
            match f.kind.and_then(|s| s.name()) {
                Some("requests") => "requests (requester packets)".into(),
                Some("responses") => "responses (READ responses, ATOMIC ACKs)".into(),
                _ => opt(f.kind),
            },
        ),
        ("src", or_dash(f.src.as_ref().map(|a| a.to_string()))),
        ("dst", or_dash(f.dst.as_ref().map(|a| a.to_string()))),
        (
            "dest-qp",
            or_dash(f.dest_qp.map(|q| format!("0x{q:06x} ({q})"))),
        ),
        ("peer", or_dash(f.peer.as_ref().map(|a| a.to_string()))),
        ("state", opt(f.state)),
        ("config-id", opt(f.config_id)),
        (
            "scheme",
            or_dash(
                f.scheme
                    .map(|x| format!("{} ({})", scheme_name(x.value), x.value)),
            ),
        ),
        ("k", opt(f.k)),
        ("m", opt(f.m)),
        ("symbol-len", opt(f.symbol_len)),
        (
            "rdma-mtu",
            match (f.rdma_mtu, f.rdma_mtu_exact) {
                (Some(0), _) => "- (no HELLO yet)".into(),
                (Some(m), Some(0)) => {
                    format!("{m} (estimate: no FIRST or MIDDLE packet seen yet)")
                }
                (Some(m), Some(_)) => format!("{m} (seen in the flow's packets)"),
                (Some(m), None) => format!("{m} (the HELLO's, or seen in the flow's packets)"),
                (None, _) => "-".into(),
            },
        ),
        (
            "srtt",
            or_dash(f.srtt_us.map(|u| format!("{} ({u} us)", format_srtt_us(u)))),
        ),
        (
            "min-rtt",
            or_dash(
                f.min_rtt_us
                    .map(|u| format!("{} ({u} us)", format_srtt_us(u))),
            ),
        ),
        (
            "loss",
            or_dash(
                f.loss_ppm
                    .map(|p| format!("{p} ppm ({:.4}%)", f64::from(p) / 10_000.0)),
            ),
        ),
        ("loss-class", opt(f.loss_class)),
        ("breaker", opt(f.breaker)),
        (
            "pinned",
            match f.pinned {
                Some(0) => "no (the adaptive policy or the fixed k/m chooses)".into(),
                Some(_) => "yes (flow set: k and m stay as pinned)".into(),
                None => "-".into(),
            },
        ),
        ("limits", flow_limits(f)),
        (
            "memory",
            or_dash(f.memory.map(|m| format!("{} ({m} octets)", human_size(m)))),
        ),
        (
            "age",
            or_dash(f.age_ms.map(|a| format!("{} ({a} ms)", format_age_ms(a)))),
        ),
        (
            "heard",
            f.last_msg_ms.map_or_else(
                || "never (no message from the peer yet)".into(),
                |a| format!("{} ago ({a} ms): the peer's last message", format_age_ms(a)),
            ),
        ),
    ];
    let mut s = match f.id {
        // flow add's reply, a sender flow before the peer's HELLO_ACK.
        Some(0) => "flow 0 (no Flow ID yet: the peer's HELLO_ACK assigns it):\n".to_string(),
        id => format!("flow {}:\n", opt(id)),
    };
    for (k, v) in rows {
        let _ = writeln!(s, "  {:<12}{v}", format!("{k}:"));
    }
    match &f.stats {
        Some(c) => {
            let mut secs = Vec::new();
            sections("", &flow_stats_groups(), &[], &c.counters, &mut secs);
            // A flow is one side: the other side's counters are always zero.
            let other = match f.side.as_ref().map(|s| s.to_string()).as_deref() {
                Some("csf") => Some("receiver (CRF)"),
                Some("crf") => Some("sender (CSF)"),
                _ => None,
            };
            secs.retain(|(title, _)| Some(title.as_str()) != other);
            s.push_str("  counters:\n");
            s.push_str(&render(&secs, None, 1.0, 4));
            s.push_str(&by_type_table("messages by type", &c.by_type, None, 1.0, 4));
        }
        None => s.push_str("  counters:   -\n"),
    }
    s
}

/// One line for a flow-up/flow-down/flow-change notification.
pub fn flow_line(f: &Flow) -> String {
    let ev = match (f.event, f.close_reason) {
        (Some(e), Some(r)) => format!("{e} (reason {}) ", close_reason_name(r)),
        (Some(e), None) => format!("{e} "),
        _ => String::new(),
    };
    ev + &format!(
        "id {} {} {} {} -> {} dest-qp {} peer {} state {}",
        opt(f.id),
        opt(f.side),
        opt(f.kind),
        or_dash(f.src.as_ref().map(|a| a.to_string())),
        or_dash(f.dst.as_ref().map(|a| a.to_string())),
        or_dash(f.dest_qp.map(|q| format!("0x{q:06x}"))),
        or_dash(f.peer.as_ref().map(|a| a.to_string())),
        opt(f.state),
    )
}

/// A flag's value as a key takes it.
pub fn on_off(v: u8) -> String {
    if v != 0 { "on" } else { "off" }.into()
}

/// One line for a config-change-ntf notification.
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
    p("adaptive", c.adaptive.map(|v| on_off(v.value)));
    p("k", c.k.map(|v| v.to_string()));
    p("m", c.m.map(|v| v.to_string()));
    p("symbol-len", c.symbol_len.map(|v| v.to_string()));
    p("epsilon", c.epsilon_ppb.map(format_epsilon));
    p("m-cong", c.m_cong.map(|v| v.to_string()));
    p("hold", c.hold_us.map(format_duration_us));
    p("max-flows", c.max_flows.map(|v| v.to_string()));
    p("max-memory", c.max_memory.map(format_size));
    p("max-bdp", c.max_bdp.map(|v| v.to_string()));
    p("report", c.report.map(|v| on_off(v.value)));
    p("node-id", c.node_id.map(|v| v.to_string()));
    p(
        "report-interval-us",
        c.report_interval_us.map(|v| v.to_string()),
    );
    p(
        "report-flow-gap-us",
        c.report_flow_gap_us.map(|v| v.to_string()),
    );
    p(
        "report-port-rate",
        c.report_port_rate.map(|v| v.to_string()),
    );
    p("report-psns", c.report_psns.map(|v| v.to_string()));
    p("spare-flows", c.spare_flows.map(|v| v.to_string()));
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
    use crate::attr;
    use crate::model::{self, enum_val, Addr, Peer};
    use crate::uapi::{
        AttrType, FLOW_EVENT, FLOW_KIND, FLOW_SET, FLOW_STATE, FLOW_STATS_SET, REPORT, ROLE, SIDE,
        STATS_SET,
    };

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
        // Values after the longest key (report-interval-us: 19 with ':').
        assert!(
            s.starts_with(
                "config:\n  port:               50000\n  role:               host\n  report:             -\n"
            ),
            "{s}"
        );
        assert!(
            s.contains("  epsilon:            1e-4 (100000 ppb)\n"),
            "{s}"
        );
        assert!(s.contains("  hold:               2ms (2000 us)\n"), "{s}");
        assert!(
            s.contains("  max-memory:         64M (67108864 octets)\n"),
            "{s}"
        );
        assert!(
            s.contains("  reporter:           198.51.100.1\n                      198.51.100.7\n"),
            "{s}"
        );
        assert!(s.contains("  peer:               (none)\n"), "{s}");
        // A reporter only: its role and report side by side, and its
        // settings.
        let r = config(&Config {
            role: Some(enum_val(ROLE, 0)),
            report: Some(enum_val(REPORT, 1)),
            node_id: Some(0),
            report_interval_us: Some(50),
            report_flow_gap_us: Some(1000),
            report_port_rate: Some(10_000),
            report_psns: Some(64),
            ..Default::default()
        });
        assert!(
            r.contains(
                "  role:               disabled\n  report:             on (a Path Reporter: reports its own drops of RoCEv2)\n"
            ),
            "{r}"
        );
        for row in [
            "  node-id:            0 (auto: the netns cookie's low 32 bits)\n",
            "  report-interval-us: 50\n",
            "  report-flow-gap-us: 1000\n",
            "  report-port-rate:   10000 reports/s (burst 64)\n",
            "  report-psns:        64\n",
        ] {
            assert!(r.contains(row), "{row:?} in\n{r}");
        }
        assert!(config(&Config {
            report: Some(enum_val(REPORT, 0)),
            node_id: Some(7),
            ..Default::default()
        })
        .contains("  report:             off\n  recovery:"));
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
        let line = config_line(&Config {
            role: Some(enum_val(ROLE, 0)),
            report: Some(enum_val(REPORT, 1)),
            node_id: Some(7),
            report_interval_us: Some(100),
            report_flow_gap_us: Some(0),
            report_port_rate: Some(500),
            report_psns: Some(16),
            ..Default::default()
        });
        assert_eq!(
            line,
            "role disabled report on node-id 7 report-interval-us 100 \
             report-flow-gap-us 0 report-port-rate 500 report-psns 16"
        );
    }

    #[test]
    fn flow_table() {
        assert_eq!(flows(&[], false, None), "flows: none\n");
        assert_eq!(flows(&[], true, Some(4)), "flows: none of 4 match\n");
        let f = Flow::from_attrs(&attr::decode(&FLOW_SET, &model::tests::flow_reply()).unwrap());
        let bare = Flow {
            id: Some(9),
            side: Some(enum_val(SIDE, 5)),
            state: Some(enum_val(FLOW_STATE, 0)),
            ..Default::default()
        };
        let t = flows(&[f.clone(), bare.clone()], false, None);
        eprintln!("{t}");
        assert_eq!(
            flows(std::slice::from_ref(&f), false, Some(2))
                .lines()
                .next(),
            Some("flows: 1 of 2 match")
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "flows: 2");
        assert_eq!(
            lines[1],
            "  ID  SIDE        KIND  SRC -> DST                DEST-QP   PEER          STATE        \
             SCHEME  K/M/T      SRTT    MIN-RTT  LOSS     CLASS         BREAKER  MEMORY  AGE"
        );
        assert_eq!(
            lines[2],
            "  7   crf         -     192.0.2.1 -> 203.0.113.1  0x000011  198.51.100.2  protected    \
             cauchy  32/2/1024  25.0ms  20.0ms   1200ppm  transmission  normal   1M      12.3s"
        );
        assert_eq!(
            lines[3],
            "  9   unknown(5)  -     - -> -                    -         -             negotiating  \
             -       -/-/-      -       -        -        -             -        -       -"
        );
        // -s: the table's lines, each flow's counters under it (the crf
        // flow's receiver counters; both sides' for a flow of unknown side,
        // and '-' for counters the module did not send).
        let s = flows(&[f, bare], true, None);
        eprintln!("{s}");
        let sl: Vec<&str> = s.lines().collect();
        assert_eq!(sl.len(), 8);
        assert_eq!((sl[1], sl[2], sl[5]), (lines[1], lines[2], lines[3]));
        assert_eq!(
            sl[3],
            "      received  repairs-received  restored  icrc-failures  requests-sent  \
             fallbacks  abandoned  msgs-in  msgs-out"
        );
        // Each value right-aligned under its name.
        assert_eq!(
            sl[4],
            [
                "      ",
                "      40",
                "                 -",
                "         2",
                "              -",
                "              -",
                "          -",
                "          -",
                "        -",
                "         -"
            ]
            .concat()
        );
        assert!(
            sl[6].starts_with("      sources  repairs-sent  coded-retx")
                && sl[6].ends_with(
                    "received  repairs-received  restored  icrc-failures  \
                     requests-sent  fallbacks  abandoned  msgs-in  msgs-out"
                ),
            "{}",
            sl[6]
        );
        assert_eq!(sl[7].split_whitespace().collect::<Vec<_>>(), ["-"; 16]);
    }

    #[test]
    fn flow_change_line() {
        let f = Flow {
            id: Some(7),
            side: Some(enum_val(SIDE, 1)),
            kind: Some(enum_val(FLOW_KIND, 1)),
            event: Some(enum_val(FLOW_EVENT, 2)),
            close_reason: Some(4),
            ..Default::default()
        };
        assert_eq!(
            flow_line(&f),
            "close-received (reason circuit-breaker) id 7 crf responses - -> - dest-qp - peer - state -"
        );
        // A reason the registry lacks, by number (YNL 6.12 cannot decode one).
        let g = Flow {
            close_reason: Some(300),
            ..f.clone()
        };
        assert!(flow_line(&g).starts_with("close-received (reason 300) "));
        let j = |f: &Flow| serde_json::to_value(f).unwrap()["close-reason"].clone();
        assert_eq!(j(&f), serde_json::json!("circuit-breaker"));
        assert_eq!(j(&g), serde_json::json!(300));
    }

    /// schemes (fec-scheme as flags) in JSON: the names in bit order, an
    /// unknown bit by its number, as YNL's cli.py decodes the attribute.
    #[test]
    fn schemes_json_as_flags() {
        let j = |bits| {
            let f = Flow {
                schemes: Some(bits),
                ..Default::default()
            };
            serde_json::to_value(&f).unwrap()["schemes"].clone()
        };
        assert_eq!(
            j(0b111),
            serde_json::json!(["source-copy", "cauchy", "xor"])
        );
        assert_eq!(j(0b1010), serde_json::json!(["cauchy", 3]));
        assert_eq!(j(0), serde_json::json!([]));
    }

    #[test]
    fn flow_detail_block() {
        let f = Flow::from_attrs(&attr::decode(&FLOW_SET, &model::tests::flow_reply()).unwrap());
        let d = flow_detail(&f);
        eprintln!("{d}");
        assert!(d.starts_with("flow 7:\n  side:       crf (receiver"), "{d}");
        for want in [
            "  src:        192.0.2.1\n",
            "  dest-qp:    0x000011 (17)\n",
            "  peer:       198.51.100.2\n",
            "  scheme:     cauchy (1)\n",
            "  srtt:       25.0ms (25000 us)\n",
            "  min-rtt:    20.0ms (20000 us)\n",
            "  loss:       1200 ppm (0.1200%)\n",
            "  memory:     1M (1048576 octets)\n",
            "  age:        12.3s (12345 ms)\n",
            "  counters:\n    receiver (CRF):\n      received:           40\n",
            "      restored:            2\n      injected:            2\n",
        ] {
            assert!(d.contains(want), "{want:?} in\n{d}");
        }
        // Only the flow's own side's counters.
        assert!(!d.contains("sender (CSF)"), "{d}");
        let mut csf = f.clone();
        csf.side = Some(enum_val(SIDE, 0));
        let d2 = flow_detail(&csf);
        // (the nest has receiver counters only: a csf flow shows none)
        assert!(!d2.contains("receiver (CRF)"), "{d2}");
        assert!(d.contains("  limits:     -\n"), "{d}");
        let lim = Flow {
            schemes: Some(0b111),
            max_k: Some(64),
            max_m: Some(16),
            max_symbol_len: Some(4200),
            max_open_blocks: Some(32),
            ..Default::default()
        };
        assert!(
            flow_detail(&lim).contains(
                "  limits:     k <= 64, m <= 16, symbol-len <= 4200, \
                 schemes source-copy,cauchy,xor, 32 open blocks\n"
            ),
            "{}",
            flow_detail(&lim)
        );
        let none = flow_detail(&Flow::default());
        assert!(none.starts_with("flow -:\n  side:       -\n"), "{none}");
        assert!(none.ends_with("  counters:   -\n"), "{none}");
    }

    #[test]
    fn stats_sections_and_rates() {
        let st =
            Stats::from_attrs(&attr::decode(&STATS_SET, &model::tests::stats_reply()).unwrap());
        let s = stats(&st);
        eprintln!("{s}");
        assert_eq!(
            s,
            "stats:\n\
             \x20 hooks (RoCEv2 packets):\n\
             \x20   roce-local-in:               5\n\
             \x20 flows and messages:\n\
             \x20   flows-created:               3\n\
             \x20 drops:\n\
             \x20   drop-msg-invalid:          256\n\
             \x20 now (gauges):\n\
             \x20   flows-active:                2\n\
             \x20   memory:                   4096\n\
             \x20 flow totals, receiver (CRF):\n\
             \x20   restored:                    9\n\
             \x20   inject-failures:             1\n"
        );
        // A second sample 2 s later: counters get a rate, gauges none, and
        // "totals" counters are matched within their own section (the
        // totals' msgs-in is not the netns's msgs-in).
        let mut later = st.clone();
        for (n, v) in later.counters.0.iter_mut() {
            *v += if *n == "memory" { 1000 } else { 10 };
        }
        for (_, v) in later.totals.as_mut().unwrap().counters.0.iter_mut() {
            *v += 4;
        }
        let r = stats_rates(&later, Some(&st), 2.0);
        eprintln!("{r}");
        assert!(
            r.contains("    roce-local-in:              15         5.0/s\n"),
            "{r}"
        );
        assert!(r.contains("    memory:                   5096\n"), "{r}");
        assert!(r.contains("    flows-active:               12\n"), "{r}");
        assert!(
            r.contains("    restored:                   13         2.0/s\n"),
            "{r}"
        );
        assert!(!stats_rates(&st, None, 1.0).contains("/s"));
    }

    #[test]
    fn by_type_tables() {
        let st = Stats::from_attrs(
            &attr::decode(&STATS_SET, &model::tests::stats_by_type_reply()).unwrap(),
        );
        let s = stats(&st);
        eprintln!("{s}");
        // After the sections: the socket's table (only nonzero types, in
        // spec order, numbers right-aligned), then the totals' (no out nest
        // sent: '-').
        assert!(
            s.ends_with(
                "\x20 messages by type (CREM socket):\n\
                 \x20   TYPE         IN  OUT\n\
                 \x20   repair       12    0\n\
                 \x20   hello         1    0\n\
                 \x20   hello-ack     0    1\n\
                 \x20   loss-report   0  256\n\
                 \x20   other         1    0\n\
                 \x20 flow totals, messages by type:\n\
                 \x20   TYPE    IN  OUT\n\
                 \x20   repair   5    -\n"
            ),
            "{s}"
        );
        assert!(s.starts_with("stats:\n  flows and messages:\n"), "{s}");
        // All zero: "none"; no nest at all (an older module): no table.
        let zero = ByType {
            msgs_in: Some(Counters(vec![("repair", 0), ("hello", 0)])),
            msgs_out: Some(Counters(vec![])),
        };
        assert_eq!(
            by_type_table("messages by type", &zero, None, 1.0, 4),
            "    messages by type: none\n"
        );
        assert_eq!(
            by_type_table("messages by type", &ByType::default(), None, 1.0, 4),
            ""
        );
        let old = stats(&Stats::from_attrs(
            &attr::decode(&STATS_SET, &model::tests::stats_reply()).unwrap(),
        ));
        assert!(!old.contains("by type"), "{old}");

        // --watch: rate columns from the second sample on (loss-report is
        // not in the in nest: 0 then and now).
        let mut later = st.clone();
        for (_, v) in later.by_type.msgs_in.as_mut().unwrap().0.iter_mut() {
            *v += 4;
        }
        let r = stats_rates(&later, Some(&st), 2.0);
        eprintln!("{r}");
        assert!(
            r.contains(
                "  messages by type (CREM socket):\n\
                 \x20   TYPE         IN  OUT  IN/S  OUT/S\n\
                 \x20   repair       16    0   2.0    0.0\n\
                 \x20   hello         5    0   2.0    0.0\n\
                 \x20   hello-ack     4    1   2.0    0.0\n\
                 \x20   loss-report   0  256   0.0    0.0\n\
                 \x20   other         5    0   2.0    0.0\n"
            ),
            "{r}"
        );
        assert!(r.contains("    repair   5    -   0.0      -\n"), "{r}");
        assert!(!stats_rates(&st, None, 1.0).contains("/S"));
    }

    #[test]
    fn flow_detail_by_type() {
        let mut f =
            Flow::from_attrs(&attr::decode(&FLOW_SET, &model::tests::flow_reply()).unwrap());
        let stats = f.stats.as_mut().unwrap();
        stats.by_type = ByType {
            msgs_in: Some(Counters(vec![("repair", 146), ("hello", 1), ("close", 0)])),
            msgs_out: Some(Counters(vec![("hello-ack", 1), ("repair-request", 35)])),
        };
        let d = flow_detail(&f);
        eprintln!("{d}");
        assert!(
            d.ends_with(
                "      injected:            2\n\
                 \x20   messages by type:\n\
                 \x20     TYPE             IN  OUT\n\
                 \x20     repair          146    0\n\
                 \x20     hello             1    0\n\
                 \x20     hello-ack         0    1\n\
                 \x20     repair-request    0   35\n"
            ),
            "{d}"
        );
        f.stats.as_mut().unwrap().by_type.msgs_out = Some(Counters(vec![]));
        f.stats.as_mut().unwrap().by_type.msgs_in = Some(Counters(vec![("close", 0)]));
        assert!(
            flow_detail(&f).ends_with("    messages by type: none\n"),
            "{}",
            flow_detail(&f)
        );
        // flow add's reply: no Flow ID yet.
        f.id = Some(0);
        assert!(flow_detail(&f)
            .starts_with("flow 0 (no Flow ID yet: the peer's HELLO_ACK assigns it):\n"));
    }

    #[test]
    fn every_counter_has_one_section() {
        let stats = stats_groups();
        let flow = flow_stats_groups();
        for (set, groups) in [(&STATS_SET, &stats), (&FLOW_STATS_SET, &flow)] {
            for a in set.attrs.iter().filter(|a| a.ty == AttrType::Uint) {
                let n = groups.iter().filter(|(_, g)| g.contains(&a.name)).count();
                assert_eq!(n, 1, "{}.{} is in {n} sections", set.name, a.name);
            }
            for (_, g) in groups {
                for name in g {
                    assert!(set.by_name(name).is_some(), "{name} not in {}", set.name);
                }
            }
        }
        for g in GAUGES.iter().chain(HOOK_COUNTERS) {
            assert!(STATS_SET.by_name(g).is_some(), "{g}");
        }
        // By name: a counter the spec adds needs no entry here.
        assert_eq!(stats_section("drop-anything-new"), "drops");
        assert_eq!(stats_section("skip-anything-new"), "drops");
        assert_eq!(stats_section("anything-new"), "flows and messages");
        assert_eq!(stats_section("report-anything-new"), "path reporter");
        assert_eq!(stats_section("reports-anything-new"), "path reporter");
        // The reporter's: every counter whose doc says so, and no other.
        for a in STATS_SET.attrs.iter().filter(|a| a.ty == AttrType::Uint) {
            assert_eq!(
                stats_section(a.name) == "path reporter",
                a.doc.starts_with("Reporter:"),
                "{}",
                a.name
            );
        }
        let titles: Vec<&str> = stats.iter().map(|(t, _)| *t).collect();
        assert_eq!(titles, STATS_TITLES);
        assert!(stats.iter().all(|(_, g)| !g.is_empty()));
        assert_eq!(flow_stats_section("CSF: anything new."), "sender (CSF)");
        assert_eq!(flow_stats_section("CRF: anything new."), "receiver (CRF)");
        assert_eq!(flow_stats_section("Anything new."), "messages and memory");
        assert!(flow.iter().all(|(_, g)| !g.is_empty()));
        // The sections of the counters named in the help's examples.
        let of = |n: &str| flow.iter().find(|(_, g)| g.contains(&n)).map(|(t, _)| *t);
        assert_eq!(of("restored"), Some("receiver (CRF)"));
        assert_eq!(of("coded-retx"), Some("sender (CSF)"));
        assert_eq!(of("store-full"), Some("messages and memory"));
        // A side's qualified counters ("CSF, selective repeat: ...") are
        // that side's.
        assert_eq!(of("tc-lost-psns"), Some("sender (CSF)"));
        assert_eq!(of("queued-behind"), Some("receiver (CRF)"));
        assert_eq!(of("acks-held"), Some("receiver (CRF)"));
    }

    #[test]
    fn sizes_ages_and_srtt() {
        assert_eq!(human_size(0), "0");
        assert_eq!(human_size(1000), "1000");
        assert_eq!(human_size(1 << 20), "1M");
        assert_eq!(human_size((1 << 20) + 1), "1.0M");
        assert_eq!(human_size(64 << 20), "64M");
        assert_eq!(human_size(1536), "1.5K");
        assert_eq!(human_size((3 << 30) + (1 << 29)), "3.5G");
        assert_eq!(format_age_ms(0), "0ms");
        assert_eq!(format_age_ms(999), "999ms");
        assert_eq!(format_age_ms(12_345), "12.3s");
        assert_eq!(format_age_ms(245_000), "4m05s");
        assert_eq!(format_age_ms(7_620_000), "2h07m");
        assert_eq!(format_age_ms(273_600_000), "3d04h");
        assert_eq!(format_age_ms(u64::MAX), "213503982334d14h");
        assert_eq!(format_srtt_us(850), "850us");
        assert_eq!(format_srtt_us(25_000), "25.0ms");
    }
}
