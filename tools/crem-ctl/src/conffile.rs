//! The configuration file of `crem-ctl setconf` / `showconf`, in the spirit
//! of `wg setconf`:
//!
//! ```text
//! [CREM]
//! Port = 50000
//! Role = gateway
//! K = 32
//! Reporter = 198.51.100.1, 2001:db8::1
//!
//! [Peer]
//! Prefix = 203.0.113.0/24
//! Address = 198.51.100.2
//! ```
//!
//! One `[CREM]` section with the keys of `crem-ctl set` (in CamelCase or as
//! typed on the command line), then any number of `[Peer]` sections with
//! `Prefix` and `Address`. Keys are case-insensitive; `#` and `;` start
//! comments. `Reporter` may repeat and takes comma-separated lists.
//!
//! The file is a change, as `crem-ctl set` is: what it names is set, the
//! rest is left alone. A list (reporters, peers) is replaced when the file
//! has it and kept when it does not; `Reporter = none` / `Peer = none` (in
//! `[CREM]`) empty it. Unlike `wg setconf`, a file without peers therefore
//! never removes them: removing every peer ends all protection, so it must be
//! written out. [`format`] writes every key and `none` for an empty list, so
//! `showconf` output restores the whole configuration, as in wg.

use crate::model::{Config, Peer};
use crate::output::on_off;
use crate::parse::{self, format_duration_us, format_epsilon, format_size, KEYS, NONE};
use std::fmt::Write;

/// Parses a configuration file into the config-set it stands for.
pub fn parse(text: &str) -> Result<Config, String> {
    enum Section {
        None,
        Crem,
        Peer,
    }
    let mut c = Config::default();
    let mut sec = Section::None;
    let mut seen_crem = false;
    // The peer being read: (line of its header, prefix, address).
    let mut peer: Option<(usize, Option<String>, Option<String>)> = None;
    let mut peers: Vec<Peer> = Vec::new();

    let finish_peer = |p: Option<(usize, Option<String>, Option<String>)>,
                       peers: &mut Vec<Peer>|
     -> Result<(), String> {
        if let Some((line, prefix, addr)) = p {
            let prefix = prefix.ok_or_else(|| format!("line {line}: [Peer] without Prefix"))?;
            let addr = addr.ok_or_else(|| format!("line {line}: [Peer] without Address"))?;
            let p = parse::parse_peer("Peer", &format!("{prefix}={addr}"))
                .map_err(|e| format!("line {line}: {e}"))?;
            peers.push(p);
        }
        Ok(())
    };

    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.split(['#', ';']).next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            finish_peer(peer.take(), &mut peers)?;
            match name.trim().to_ascii_lowercase().as_str() {
                "crem" => {
                    if seen_crem {
                        return Err(format!("line {n}: a second [CREM] section"));
                    }
                    seen_crem = true;
                    sec = Section::Crem;
                }
                "peer" => {
                    sec = Section::Peer;
                    peer = Some((n, None, None));
                }
                other => {
                    return Err(format!(
                        "line {n}: unknown section [{other}] (expected [CREM] or [Peer])"
                    ))
                }
            }
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .ok_or_else(|| format!("line {n}: expected 'Key = Value', got '{line}'"))?;
        match sec {
            Section::None => {
                return Err(format!(
                    "line {n}: '{key}' outside a section (start with [CREM])"
                ))
            }
            Section::Crem => {
                let Some(canon) = parse::canonical_key(key) else {
                    let keys: Vec<&str> =
                        KEYS.iter().filter(|k| k.0 != "peer").map(|k| k.2).collect();
                    return Err(format!(
                        "line {n}: unknown key '{key}' in [CREM] (keys: {})",
                        keys.join(", ")
                    ));
                };
                if canon == "peer" && !parse::is_none_list(value) {
                    return Err(format!(
                        "line {n}: peers go in [Peer] sections (Prefix = ..., Address = ...); \
                         'Peer = none' removes them all"
                    ));
                }
                parse::apply_kv(&mut c, key, value).map_err(|e| format!("line {n}: {e}"))?;
            }
            Section::Peer => {
                let p = peer.as_mut().expect("in a [Peer] section");
                match parse::norm_key(key).as_str() {
                    "prefix" => {
                        if p.1.replace(value.to_string()).is_some() {
                            return Err(format!("line {n}: Prefix given twice in one [Peer]"));
                        }
                    }
                    "address" | "addr" => {
                        if p.2.replace(value.to_string()).is_some() {
                            return Err(format!("line {n}: Address given twice in one [Peer]"));
                        }
                    }
                    _ => {
                        return Err(format!(
                            "line {n}: unknown key '{key}' in [Peer] (expected Prefix, Address)"
                        ))
                    }
                }
            }
        }
    }
    finish_peer(peer.take(), &mut peers)?;
    if c.is_empty() && peers.is_empty() {
        return Err("the file sets nothing (expected a [CREM] section with keys)".into());
    }
    // Lists the file does not have stay None: no attribute is sent and the
    // kernel keeps them (see the module comment).
    if !peers.is_empty() {
        if c.peer.is_some() {
            return Err("'Peer = none' and [Peer] sections contradict each other".into());
        }
        c.peer = Some(peers);
    }
    Ok(c)
}

/// Formats a configuration (as config-get returns it) as a file that
/// [`parse`] reads back to the same values.
pub fn format(c: &Config) -> String {
    let key = |k: &str| KEYS.iter().find(|x| x.0 == k).expect("known key").2;
    let mut s = String::from("[CREM]\n");
    let mut kv = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            let _ = writeln!(s, "{} = {v}", key(k));
        }
    };
    kv("port", c.port.map(|v| v.to_string()));
    kv("role", c.role.map(|v| v.to_string()));
    kv("recovery", c.recovery.map(|v| v.to_string()));
    kv("adaptive", c.adaptive.map(|v| on_off(v.value)));
    kv("k", c.k.map(|v| v.to_string()));
    kv("m", c.m.map(|v| v.to_string()));
    kv("symbol-len", c.symbol_len.map(|v| v.to_string()));
    kv("epsilon", c.epsilon_ppb.map(format_epsilon));
    kv("m-cong", c.m_cong.map(|v| v.to_string()));
    kv("hold", c.hold_us.map(format_duration_us));
    kv("max-flows", c.max_flows.map(|v| v.to_string()));
    kv("max-memory", c.max_memory.map(format_size));
    kv("max-bdp", c.max_bdp.map(|v| v.to_string()));
    kv("report", c.report.map(|v| on_off(v.value)));
    kv("node-id", c.node_id.map(|v| v.to_string()));
    kv(
        "report-interval-us",
        c.report_interval_us.map(|v| v.to_string()),
    );
    kv(
        "report-flow-gap-us",
        c.report_flow_gap_us.map(|v| v.to_string()),
    );
    kv(
        "report-port-rate",
        c.report_port_rate.map(|v| v.to_string()),
    );
    kv("report-psns", c.report_psns.map(|v| v.to_string()));
    kv("spare-flows", c.spare_flows.map(|v| v.to_string()));
    // An empty list is written as none, so that applying the file empties
    // it too: a file without the key would keep whatever is there then.
    kv(
        "reporter",
        c.reporter.as_ref().map(|r| {
            let v: Vec<String> = r.iter().map(|a| a.to_string()).collect();
            if v.is_empty() {
                NONE.into()
            } else {
                v.join(", ")
            }
        }),
    );
    // Peers have their own sections; only their absence needs a key.
    kv(
        "peer",
        c.peer
            .as_ref()
            .filter(|p| p.is_empty())
            .map(|_| NONE.into()),
    );
    for p in c.peer.iter().flatten() {
        let _ = write!(
            s,
            "\n[Peer]\nPrefix = {}/{}\nAddress = {}\n",
            p.prefix, p.prefix_len, p.addr
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr;
    use crate::uapi::CONFIG_SET;

    const SAMPLE: &str = "\
# gateway A
[CREM]
Port = 50000
Role = gateway        ; trailing comment
recovery = both
Adaptive = off
K = 16
M = 4
SymbolLen = 1100
Epsilon = 2.5e-4
MCong = 1
Hold = 2ms
MaxFlows = 4096
MaxMemory = 128M
Reporter = 198.51.100.1, 2001:db8::1
Reporter = 198.51.100.7

[Peer]
Prefix = 203.0.113.0/24
Address = 198.51.100.2

[peer]
address = 2001:db8::2
prefix = 2001:db8:1::/48
";

    #[test]
    fn parses_and_round_trips() {
        let c = parse(SAMPLE).unwrap();
        assert_eq!(c.port, Some(50000));
        assert_eq!(c.role.unwrap().to_string(), "gateway");
        assert_eq!(c.recovery.unwrap().to_string(), "both");
        assert_eq!(c.adaptive.map(|a| a.value), Some(0));
        assert_eq!(c.epsilon_ppb, Some(250_000));
        assert_eq!(c.hold_us, Some(2000));
        assert_eq!(c.max_memory, Some(128 << 20));
        assert_eq!(c.reporter.as_ref().unwrap().len(), 3);
        assert_eq!(c.peer.as_ref().unwrap().len(), 2);
        let text = format(&c);
        assert_eq!(parse(&text).unwrap(), c);
        assert_eq!(
            text,
            "[CREM]\nPort = 50000\nRole = gateway\nRecovery = both\nAdaptive = off\nK = 16\n\
             M = 4\nSymbolLen = 1100\nEpsilon = 2.5e-4\nMCong = 1\nHold = 2ms\nMaxFlows = 4096\n\
             MaxMemory = 128M\nReporter = 198.51.100.1, 2001:db8::1, 198.51.100.7\n\n[Peer]\n\
             Prefix = 203.0.113.0/24\nAddress = 198.51.100.2\n\n[Peer]\n\
             Prefix = 2001:db8:1::/48\nAddress = 2001:db8::2\n"
        );
    }

    /// dist/crem0.conf.sample, installed as /etc/crem/crem0.conf.sample,
    /// parses as it is and with its commented-out keys uncommented, and
    /// those show the module's defaults, as its comments say.
    #[test]
    fn the_installed_sample_parses_and_shows_the_defaults() {
        let text = include_str!("../../../dist/crem0.conf.sample");
        let c = parse(text).unwrap();
        assert_eq!(c.port, Some(50000));
        assert_eq!(c.role.as_ref().unwrap().to_string(), "gateway");
        assert_eq!(c.peer.as_ref().map(Vec::len), Some(1));
        // Not in the file: the kernel keeps what it has.
        assert_eq!((c.k, c.m, c.reporter.as_ref()), (None, None, None));

        let uncommented: Vec<&str> = text
            .lines()
            .map(|l| match l.strip_prefix('#') {
                Some(kv)
                    if kv.starts_with(|c: char| c.is_ascii_uppercase()) && kv.contains(" = ") =>
                {
                    kv
                }
                _ => l,
            })
            .collect();
        let u = parse(&uncommented.join("\n")).unwrap();
        assert_eq!(u.reporter.as_ref().map(Vec::len), Some(1));
        let attrs = attr::decode(&CONFIG_SET, &crate::model::tests::default_reply()).unwrap();
        let d = Config::from_attrs(&attrs, true);
        assert_eq!(
            (
                u.recovery,
                u.adaptive,
                u.k,
                u.m,
                u.symbol_len,
                u.epsilon_ppb
            ),
            (
                d.recovery,
                d.adaptive,
                d.k,
                d.m,
                d.symbol_len,
                d.epsilon_ppb
            )
        );
        assert_eq!(
            (u.m_cong, u.hold_us, u.max_flows, u.max_memory),
            (d.m_cong, d.hold_us, d.max_flows, d.max_memory)
        );
        assert_eq!(
            (u.report, u.node_id, u.report_interval_us),
            (d.report, d.node_id, d.report_interval_us)
        );
        assert_eq!(
            (u.report_flow_gap_us, u.report_port_rate, u.report_psns),
            (d.report_flow_gap_us, d.report_port_rate, d.report_psns)
        );
        assert_eq!(u.spare_flows, d.spare_flows);
    }

    #[test]
    fn reporter_keys_round_trip() {
        let text = "[CREM]\nPort = 7470\nRole = reporter\nNodeId = 1\nReportIntervalUs = 100\n\
                    ReportFlowGapUs = 0\nReportPortRate = 500\nReportPsns = 16\n";
        let c = parse(text).unwrap();
        assert_eq!(
            format(&c),
            "[CREM]\nPort = 7470\nRole = disabled\nReport = on\nNodeId = 1\n\
             ReportIntervalUs = 100\nReportFlowGapUs = 0\nReportPortRate = 500\nReportPsns = 16\n"
        );
        assert_eq!(parse(&format(&c)).unwrap(), c);
    }

    #[test]
    fn kernel_reply_round_trips_through_the_file() {
        // A config-get reply (defaults) → file → config-set attributes that
        // carry exactly the same values.
        let attrs = attr::decode(&CONFIG_SET, &crate::model::tests::default_reply()).unwrap();
        let got = Config::from_attrs(&attrs, true);
        let text = format(&got);
        let back = parse(&text).unwrap();
        assert_eq!(
            attr::encode(&back.to_attrs()),
            attr::encode(&got.to_attrs())
        );
    }

    /// The config-set request setconf sends for `text` (its attributes,
    /// after the genetlink header), on the wire.
    fn setconf_request(text: &str) -> Vec<u8> {
        attr::encode(&parse(text).unwrap().to_attrs())
    }

    #[test]
    fn a_partial_file_leaves_the_lists_alone() {
        // Only K: no reporter or peer attribute, so the kernel keeps both
        // lists (an empty one would clear them and end all protection).
        assert_eq!(
            setconf_request("[CREM]\nK = 16\n"),
            [5, 0, 5, 0, 16, 0, 0, 0] // k 16
        );
        // Peers only: the reporter list is not touched.
        assert_eq!(
            setconf_request("[Peer]\nPrefix = 203.0.113.0/24\nAddress = 198.51.100.2\n"),
            [
                28, 0, 14, 0x80, // peer | NLA_F_NESTED
                8, 0, 1, 0, 203, 0, 113, 0, // prefix
                5, 0, 2, 0, 24, 0, 0, 0, // prefix-len 24
                8, 0, 3, 0, 198, 51, 100, 2, // addr
            ]
        );
    }

    #[test]
    fn a_file_with_lists_replaces_them() {
        let text = "[CREM]\nReporter = 198.51.100.1\n\n\
                    [Peer]\nPrefix = 203.0.113.0/24\nAddress = 198.51.100.2\n";
        assert_eq!(
            setconf_request(text),
            [
                8, 0, 13, 0, 198, 51, 100, 1, // reporter
                28, 0, 14, 0x80, // peer | NLA_F_NESTED
                8, 0, 1, 0, 203, 0, 113, 0, // prefix
                5, 0, 2, 0, 24, 0, 0, 0, // prefix-len 24
                8, 0, 3, 0, 198, 51, 100, 2, // addr
            ]
        );
    }

    #[test]
    fn none_empties_a_list_explicitly() {
        // One empty attribute per list: the kernel's encoding of "clear".
        assert_eq!(
            setconf_request("[CREM]\nReporter = none\nPeer = none\n"),
            [
                4, 0, 13, 0, // reporter, empty
                4, 0, 14, 0x80, // peer, an empty nest
            ]
        );
        assert_eq!(
            setconf_request("[CREM]\nK = 16\nPeer = none\n"),
            [5, 0, 5, 0, 16, 0, 0, 0, 4, 0, 14, 0x80]
        );
        // showconf writes empty lists as none, so its file empties them
        // again when applied later.
        let empty = Config {
            k: Some(16),
            reporter: Some(vec![]),
            peer: Some(vec![]),
            ..Config::default()
        };
        let text = format(&empty);
        assert_eq!(text, "[CREM]\nK = 16\nReporter = none\nPeer = none\n");
        assert_eq!(parse(&text).unwrap(), empty);
    }

    #[test]
    fn errors_name_the_line() {
        let e = |t: &str| parse(t).unwrap_err();
        assert_eq!(
            e("Port = 1\n"),
            "line 1: 'Port' outside a section (start with [CREM])"
        );
        assert_eq!(e("[CREM]\nPort = x\n"), "line 2: port: 'x' is not a number");
        assert!(e("[CREM]\nColour = red\n").starts_with("line 2: unknown key 'Colour'"));
        assert!(e("[Interface]\n").contains("unknown section [interface]"));
        assert_eq!(
            e("[CREM]\n[Peer]\nPrefix = 10.0.0.0/8\n"),
            "line 2: [Peer] without Address"
        );
        assert!(e("[CREM]\n[Peer]\nPrefix = 10.0.0.0/8\nAddress = 1.2.3\n").contains("line 2:"));
        assert!(e("[CREM]\nK = 1\n[CREM]\n").contains("second [CREM]"));
        assert!(e("[CREM]\nK\n").contains("expected 'Key = Value'"));
        assert!(e("# nothing\n").contains("sets nothing"));
        assert!(e("[CREM]\nPeer = 10.0.0.0/8=1.1.1.1\n").contains("'Peer = none' removes them all"));
        assert_eq!(
            e("[CREM]\nPeer = none\n[Peer]\nPrefix = 10.0.0.0/8\nAddress = 1.1.1.1\n"),
            "'Peer = none' and [Peer] sections contradict each other"
        );
        assert!(e("[CREM]\nReporter = none\nReporter = 1.1.1.1\n")
            .starts_with("line 3: reporter: 'none' empties the list"));
    }
}
