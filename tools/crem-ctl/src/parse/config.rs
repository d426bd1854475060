//! The configuration keys of `crem-ctl set` (and of the [CREM] section of a
//! configuration file): their spellings, the attribute each sets, and the
//! checks a value passes before anything is sent.

use super::value::{
    format_duration_us, in_range, parse_addr_list, parse_bool, parse_duration_us,
    parse_epsilon_ppb, parse_peer_list, parse_size, parse_uint,
};
use super::Words;
use crate::model::{enum_val, Config, EnumVal};
use crate::uapi::{self, role, AttrSpec, CONFIG_SET};

/// The keys of `crem-ctl set`, in display order: (key, attribute name,
/// config-file key, value syntax).
pub const KEYS: &[(&str, &str, &str, &str)] = &[
    (
        "port",
        "port",
        "Port",
        "0..65535 but 4791 (0 disables CREM)",
    ),
    (
        "role",
        "role",
        "Role",
        "disabled|host|gateway, or reporter (= role disabled report on)",
    ),
    (
        "recovery",
        "recovery",
        "Recovery",
        "coded|selective-repeat|both",
    ),
    ("adaptive", "adaptive", "Adaptive", "on|off"),
    ("k", "k", "K", "1..255"),
    ("m", "m", "M", "0..16"),
    (
        "symbol-len",
        "symbol-len",
        "SymbolLen",
        "0 (derived) or 64..1104 octets, e.g. 1100",
    ),
    (
        "epsilon",
        "epsilon-ppb",
        "Epsilon",
        "probability (1e-4, 0.0001) or 100000ppb",
    ),
    ("m-cong", "m-cong", "MCong", "0..255"),
    (
        "hold",
        "hold-us",
        "Hold",
        "time up to 1s: 500us, 2ms, 0 (bare numbers are µs)",
    ),
    ("max-flows", "max-flows", "MaxFlows", "count, up to 65536"),
    (
        "max-bdp",
        "max-bdp",
        "MaxBdp",
        "packets in flight a new flow is sized for, 64..524288 (default 256)",
    ),
    (
        "max-memory",
        "max-memory",
        "MaxMemory",
        "octets with K/M/G/T suffix (1024-based), up to 64G: 64M",
    ),
    (
        "report",
        "report",
        "Report",
        "on|off (a Path Reporter; needs a port)",
    ),
    (
        "node-id",
        "node-id",
        "NodeId",
        "0..4294967295; 0 or auto: the netns cookie's low 32 bits",
    ),
    (
        "report-interval-us",
        "report-interval-us",
        "ReportIntervalUs",
        "aggregation interval, 1..1000000 microseconds (default 50)",
    ),
    (
        "report-flow-gap-us",
        "report-flow-gap-us",
        "ReportFlowGapUs",
        "least time between two reports of a flow, 0..10000000 microseconds (default 1000)",
    ),
    (
        "report-port-rate",
        "report-port-rate",
        "ReportPortRate",
        "reports per second per egress interface, 1..1000000 (default 10000; burst 64)",
    ),
    (
        "report-psns",
        "report-psns",
        "ReportPsns",
        "own dropped PSNs a report lists, 1..64 (default 64)",
    ),
    (
        "spare-flows",
        "spare-flows",
        "SpareFlows",
        "flows made ahead per side, the burst of new queue pairs protected from their first packet, 0..64 (default 8)",
    ),
    (
        "reporter",
        "reporter",
        "Reporter",
        "ADDR[,ADDR...] (IPv4/IPv6), or none",
    ),
    (
        "peer",
        "peer",
        "Peer",
        "PREFIX/LEN=ADDR[,PREFIX/LEN=ADDR...], or none",
    ),
];

/// Normalizes a key for lookup: lower case, `_` and `-` dropped, so that
/// `symbol-len`, `symbol_len` and `SymbolLen` are the same key.
pub fn norm_key(k: &str) -> String {
    k.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The canonical `set` key for a typed key (also accepts the attribute
/// names, e.g. `hold-us`, `epsilon-ppb`).
pub fn canonical_key(k: &str) -> Option<&'static str> {
    let n = norm_key(k);
    KEYS.iter()
        .find(|(key, attr, file, _)| {
            norm_key(key) == n || norm_key(attr) == n || norm_key(file) == n
        })
        .map(|x| x.0)
}

/// The value of `role` that is no role: a Path Reporter only, `role
/// disabled report on`.
const ROLE_REPORTER: &str = "reporter";
/// `report` given twice, once maybe as `role reporter`.
const REPORT_TWICE: &str =
    "report given more than once ('role reporter' is role disabled report on)";

fn spec(name: &str) -> &'static AttrSpec {
    CONFIG_SET.by_name(name).expect("attribute in the spec")
}

/// An integer for attribute `attr`, within its type and the spec's checks.
fn parse_int_for(key: &str, attr: &str, s: &str) -> Result<u64, String> {
    let v = parse_uint(s).map_err(|e| format!("{key}: {e}"))?;
    check_range(key, attr, v)
}

/// Checks `v` against the attribute's type and the spec's `checks`.
pub fn check_range(key: &str, attr: &str, v: u64) -> Result<u64, String> {
    let sp = spec(attr);
    let hi = sp
        .max
        .unwrap_or(u64::MAX)
        .min(sp.ty.max_value().unwrap_or(u64::MAX));
    in_range(key, v, sp.min.unwrap_or(0), hi)
}

/// Applies one `KEY VALUE` to `c`. List keys (reporter, peer) accumulate;
/// any other key may be given once.
pub fn apply_kv(c: &mut Config, key: &str, value: &str) -> Result<(), String> {
    let k = canonical_key(key).ok_or_else(|| {
        let names: Vec<&str> = KEYS.iter().map(|x| x.0).collect();
        format!("unknown key '{key}' (keys: {})", names.join(", "))
    })?;
    // The integer keys are named as their attributes.
    let int = || parse_int_for(k, k, value);
    match k {
        "port" => once(&mut c.port, k, || Ok(int()? as u16)),
        "role" if value.eq_ignore_ascii_case(ROLE_REPORTER) => {
            once(&mut c.role, k, || {
                Ok(enum_val(uapi::ROLE, role::DISABLED.into()))
            })?;
            once(&mut c.report, "report", || Ok(enum_val(uapi::REPORT, 1)))
                .map_err(|_| REPORT_TWICE.to_string())
        }
        "role" => once(&mut c.role, k, || {
            parse_enum(k, uapi::ROLE, value).map_err(|e| format!("{e} (or {ROLE_REPORTER})"))
        }),
        "recovery" => once(&mut c.recovery, k, || parse_enum(k, uapi::RECOVERY, value)),
        "adaptive" => once(&mut c.adaptive, k, || {
            Ok(enum_val(uapi::ADAPTIVE, parse_bool(k, value)?.into()))
        }),
        "k" => once(&mut c.k, k, || Ok(int()? as u8)),
        "m" => once(&mut c.m, k, || Ok(int()? as u8)),
        "symbol-len" => once(&mut c.symbol_len, k, || {
            if matches!(value.to_ascii_lowercase().as_str(), "auto" | "derived") {
                Ok(0)
            } else {
                Ok(int()? as u16)
            }
        }),
        "epsilon" => once(&mut c.epsilon_ppb, k, || {
            Ok(parse_epsilon_ppb(k, value)? as u32)
        }),
        "m-cong" => once(&mut c.m_cong, k, || Ok(int()? as u8)),
        "hold" => once(&mut c.hold_us, k, || {
            let us = parse_duration_us(k, value)?;
            let max = spec("hold-us").max.unwrap_or(u64::MAX);
            if us > max {
                return Err(format!(
                    "hold: '{value}' is longer than the kernel's maximum of {}",
                    format_duration_us(max as u32)
                ));
            }
            Ok(us as u32)
        }),
        "max-flows" => once(&mut c.max_flows, k, || Ok(int()? as u32)),
        "max-bdp" => once(&mut c.max_bdp, k, || Ok(int()? as u32)),
        "max-memory" => once(&mut c.max_memory, k, || {
            check_range(k, "max-memory", parse_size(k, value)?)
        }),
        "report" if c.report.is_some() => Err(REPORT_TWICE.into()),
        "report" => once(&mut c.report, k, || {
            Ok(enum_val(uapi::REPORT, parse_bool(k, value)?.into()))
        }),
        "node-id" => once(&mut c.node_id, k, || {
            if value.eq_ignore_ascii_case("auto") {
                Ok(0)
            } else {
                Ok(int()? as u32)
            }
        }),
        // The kernel refuses values outside their ranges, naming them.
        "report-interval-us" => once(&mut c.report_interval_us, k, || Ok(int()? as u32)),
        "report-flow-gap-us" => once(&mut c.report_flow_gap_us, k, || Ok(int()? as u32)),
        "report-port-rate" => once(&mut c.report_port_rate, k, || Ok(int()? as u32)),
        "report-psns" => once(&mut c.report_psns, k, || Ok(int()? as u8)),
        "spare-flows" => once(&mut c.spare_flows, k, || Ok(int()? as u32)),
        "reporter" => extend_list(&mut c.reporter, k, parse_addr_list(k, value)?),
        "peer" => extend_list(&mut c.peer, k, parse_peer_list(k, value)?),
        _ => unreachable!("every key of KEYS is handled"),
    }
}

/// Sets a key that may be given once. A second one is refused before its
/// value is read: the repetition is the mistake to report.
fn once<T>(
    slot: &mut Option<T>,
    key: &str,
    value: impl FnOnce() -> Result<T, String>,
) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("{key} given more than once"));
    }
    *slot = Some(value()?);
    Ok(())
}

/// The value of an enum key (role, recovery) by its name, in any case.
fn parse_enum(key: &str, names: &'static [&'static str], value: &str) -> Result<EnumVal, String> {
    let v = uapi::enum_value(names, &value.to_ascii_lowercase())
        .ok_or_else(|| format!("{key}: expected one of {}, got '{value}'", names.join("|")))?;
    Ok(enum_val(names, v.into()))
}

/// Adds `items` to a list key's value (`Some(empty)` is `none`, clearing the
/// list). `none` beside items is refused rather than resolved by order: one
/// of the two is a mistake, and guessing wrong drops or keeps protection.
fn extend_list<T>(list: &mut Option<Vec<T>>, key: &str, items: Vec<T>) -> Result<(), String> {
    if list
        .as_ref()
        .is_some_and(|l| l.is_empty() || items.is_empty())
    {
        return Err(format!(
            "{key}: 'none' empties the list and cannot be combined with another {key} value"
        ));
    }
    list.get_or_insert_with(Vec::new).extend(items);
    Ok(())
}

/// Parses `KEY VALUE [KEY VALUE...]`.
pub fn parse_set_args(args: &[String]) -> Result<Config, String> {
    if args.is_empty() {
        return Err("nothing to set: give KEY VALUE pairs (see 'crem-ctl set --help')".into());
    }
    if args.len() % 2 != 0 {
        return Err(format!(
            "key '{}' has no value (arguments are KEY VALUE pairs)",
            args[args.len() - 1]
        ));
    }
    let mut c = Config::default();
    let mut words = Words::new(args);
    while let Some(key) = words.key() {
        // Never "needs a value": the count was checked above.
        apply_kv(&mut c, key, words.value(key)?)?;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(args: &[&str]) -> Result<Config, String> {
        parse_set_args(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn keys_and_values() {
        let c = set(&[
            "port",
            "50000",
            "role",
            "host",
            "recovery",
            "selective-repeat",
            "adaptive",
            "off",
            "k",
            "16",
            "m",
            "4",
            "symbol-len",
            "auto",
            "epsilon",
            "1e-4",
            "m-cong",
            "1",
            "hold",
            "2ms",
            "max-flows",
            "4096",
            "max-memory",
            "64M",
        ])
        .unwrap();
        assert_eq!(c.port, Some(50000));
        assert_eq!(c.role.unwrap().value, 1);
        assert_eq!(c.recovery.unwrap().value, 1);
        assert_eq!(c.adaptive.map(|a| a.value), Some(0));
        assert_eq!((c.k, c.m, c.symbol_len), (Some(16), Some(4), Some(0)));
        assert_eq!(c.epsilon_ppb, Some(100_000));
        assert_eq!(c.hold_us, Some(2000));
        assert_eq!(c.max_flows, Some(4096));
        assert_eq!(c.max_memory, Some(64 << 20));
        // attribute and config-file spellings work too
        let c = set(&["hold-us", "500", "SymbolLen", "1100", "epsilon_ppb", "5ppb"]).unwrap();
        assert_eq!(
            (c.hold_us, c.symbol_len, c.epsilon_ppb),
            (Some(500), Some(1100), Some(5))
        );
    }

    #[test]
    fn bad_input_is_explained() {
        let e = |a: &[&str]| set(a).unwrap_err();
        assert_eq!(e(&["k", "0"]), "k: 0 is out of range (1..=255)");
        assert_eq!(e(&["k", "256"]), "k: 256 is out of range (1..=255)");
        assert_eq!(e(&["port", "x"]), "port: 'x' is not a number");
        assert_eq!(
            e(&["port", "65536"]),
            "port: 65536 is out of range (0..=65535)"
        );
        assert!(e(&["role", "router"]).contains("disabled|host|gateway"));
        assert!(e(&["bogus", "1"]).starts_with("unknown key 'bogus'"));
        assert!(e(&["k"]).contains("has no value"));
        assert!(e(&["k", "1", "k", "2"]).contains("more than once"));
        assert!(e(&["reporter", "1.2.3"]).contains("not an IPv4 or IPv6 address"));
        assert!(e(&["reporter", ""]).contains("use 'none' to clear"));
        assert!(e(&["hold", "2s"]).contains("maximum of 1s"));
        assert!(e(&["hold", "1.5us"]).contains("whole number of microseconds"));
        assert!(e(&["epsilon", "2"]).contains("write 2ppb"));
        assert!(e(&["epsilon", "1e-10"]).contains("resolution"));
        assert!(e(&["epsilon", "0"]).contains("out of range"));
        // The kernel policy's caps, checked before anything is sent.
        assert_eq!(
            e(&["max-flows", "65537"]),
            "max-flows: 65537 is out of range (0..=65536)"
        );
        assert!(e(&["max-memory", "65G"]).contains("out of range (0..=68719476736)"));
        assert!(set(&["max-flows", "65536", "max-memory", "64G"]).is_ok());
        assert!(e(&["peer", "203.0.113.5/24=198.51.100.2"]).contains("did you mean 203.0.113.0/24"));
        assert!(e(&["peer", "203.0.113.0/33=198.51.100.2"]).contains("prefix length"));
        assert!(e(&["peer", "203.0.113.0/24"]).contains("PREFIX/LEN=ADDR"));
        assert!(e(&[]).contains("nothing to set"));
    }

    #[test]
    fn reporter_keys() {
        let c = set(&[
            "report",
            "on",
            "node-id",
            "4294967295",
            "report-interval-us",
            "100",
            "report-flow-gap-us",
            "0",
            "report-port-rate",
            "500",
            "report-psns",
            "16",
        ])
        .unwrap();
        assert_eq!(c.report.map(|r| r.to_string()).as_deref(), Some("on"));
        assert_eq!(
            (
                c.node_id,
                c.report_interval_us,
                c.report_flow_gap_us,
                c.report_port_rate,
                c.report_psns
            ),
            (Some(u32::MAX), Some(100), Some(0), Some(500), Some(16))
        );
        assert_eq!(c.role, None, "report leaves the role alone");
        // Config-file spellings; node-id auto is 0; off.
        let c = set(&["NodeId", "auto", "ReportPsns", "64", "Report", "off"]).unwrap();
        assert_eq!((c.node_id, c.report_psns), (Some(0), Some(64)));
        assert_eq!(c.report.map(|r| r.value), Some(0));
        // The kernel judges the ranges (and names them); the types are ours.
        assert!(set(&["report-psns", "65", "report-interval-us", "0"]).is_ok());
        let e = |a: &[&str]| set(a).unwrap_err();
        assert_eq!(
            e(&["report-psns", "256"]),
            "report-psns: 256 is out of range (0..=255)"
        );
        assert!(e(&["node-id", "4294967296"]).contains("out of range (0..=4294967295)"));
        assert_eq!(
            e(&["report", "maybe"]),
            "report: expected on or off, got 'maybe'"
        );
    }

    #[test]
    fn role_reporter_is_role_disabled_report_on() {
        let sugar = set(&["role", "reporter", "port", "7470"]).unwrap();
        let plain = set(&["role", "disabled", "report", "on", "port", "7470"]).unwrap();
        assert_eq!(sugar, plain);
        assert_eq!(
            sugar.role.map(|r| r.to_string()).as_deref(),
            Some("disabled")
        );
        assert_eq!(sugar.report.map(|r| r.value), Some(1));
        // Any case; what goes to the kernel is the two attributes.
        assert_eq!(set(&["Role", "Reporter"]).unwrap().to_attrs(), {
            let mut c = plain.clone();
            c.port = None;
            c.to_attrs()
        });
        // report given too, before or after: refused (one of them says it).
        let e = |a: &[&str]| set(a).unwrap_err();
        let twice = "report given more than once ('role reporter' is role disabled report on)";
        assert_eq!(e(&["role", "reporter", "report", "on"]), twice);
        assert_eq!(e(&["report", "off", "role", "reporter"]), twice);
        assert_eq!(
            e(&["role", "reporter", "role", "host"]),
            "role given more than once"
        );
        assert_eq!(
            e(&["role", "router"]),
            "role: expected one of disabled|host|gateway, got 'router' (or reporter)"
        );
    }

    #[test]
    fn lists_accumulate() {
        let c = set(&[
            "reporter",
            "198.51.100.1, 2001:db8::1",
            "reporter",
            "[2001:db8::2]",
            "peer",
            "203.0.113.0/24=198.51.100.2,2001:db8:1::/48=2001:db8::9",
        ])
        .unwrap();
        let r: Vec<String> = c.reporter.unwrap().iter().map(|a| a.to_string()).collect();
        assert_eq!(r, ["198.51.100.1", "2001:db8::1", "2001:db8::2"]);
        let p: Vec<String> = c.peer.unwrap().iter().map(|p| p.to_string()).collect();
        assert_eq!(
            p,
            ["203.0.113.0/24=198.51.100.2", "2001:db8:1::/48=2001:db8::9"]
        );
        // none empties a list, alone only.
        let c = set(&["reporter", "none", "peer", " none "]).unwrap();
        assert_eq!((c.reporter, c.peer), (Some(vec![]), Some(vec![])));
        for args in [
            &["reporter", "none", "reporter", "198.51.100.1"][..],
            &["reporter", "198.51.100.1", "reporter", "none"],
            &["peer", "none", "peer", "none"],
        ] {
            let e = set(args).unwrap_err();
            assert!(
                e.contains("'none' empties the list and cannot be combined"),
                "{e}"
            );
        }
        // A family mix parses: the kernel owns that rule.
        assert!(set(&["peer", "203.0.113.0/24=2001:db8::9"]).is_ok());
    }
}
