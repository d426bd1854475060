//! The "crem" generic netlink family as crem-ctl knows it: crem-core's
//! `nl` module, the numeric values of `include/uapi/linux/crem.h` and, per
//! attribute set, a table of (id, YAML name, type, multi-attr, enum,
//! checks, doc) that drives encoding, decoding, local range checks and the
//! JSON field names.
//!
//! `crem_core::nl` is generated from `netlink/crem.yaml` by
//! `netlink/gen_rust.py` (`make netlink-gen`). The tests below check it
//! independently of the generator: `tests::matches_yaml_spec` parses the
//! YAML and `tests::matches_uapi_header` reads the header ynl-gen-c.py
//! wrote, and both fail on any difference.

pub use crem_core::nl::*;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_yaml::Value;

    fn spec() -> Value {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../netlink/crem.yaml");
        let text = std::fs::read_to_string(path).expect("netlink/crem.yaml");
        serde_yaml::from_str(&text).expect("valid YAML")
    }

    fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
        v.get(k).and_then(Value::as_str)
    }

    fn n(v: &Value, k: &str) -> Option<u64> {
        v.get(k).and_then(Value::as_u64)
    }

    /// (name, value) of an enum's entries, as ynl numbers them.
    fn enum_entries(def: &Value) -> Vec<(String, u64)> {
        let mut next = n(def, "value-start").unwrap_or(0);
        let mut out = Vec::new();
        for e in def["entries"].as_sequence().expect("entries") {
            let (name, value) = match e {
                Value::String(name) => (name.clone(), None),
                m => (s(m, "name").expect("entry name").to_string(), n(m, "value")),
            };
            let v = value.unwrap_or(next);
            out.push((name, v));
            next = v + 1;
        }
        out
    }

    #[test]
    fn matches_yaml_spec() {
        let y = spec();
        assert_eq!(s(&y, "name"), Some(FAMILY_NAME));
        assert_eq!(s(&y, "protocol"), Some("genetlink-legacy"));
        // ynl-gen-c uses version 1 when the spec has none.
        assert_eq!(n(&y, "version").unwrap_or(1), FAMILY_VERSION as u64);

        // Enums.
        let defs = y["definitions"].as_sequence().expect("definitions");
        let yaml_enums: Vec<&Value> = defs
            .iter()
            .filter(|d| s(d, "type") == Some("enum"))
            .collect();
        assert_eq!(yaml_enums.len(), ENUMS.len(), "number of enums");
        for d in yaml_enums {
            let name = s(d, "name").unwrap();
            let ours = ENUMS
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("enum {name} missing in crem_core::nl"))
                .1;
            let entries = enum_entries(d);
            assert_eq!(entries.len(), ours.len(), "enum {name}: entry count");
            for (ename, v) in entries {
                assert_eq!(
                    enum_value(ours, &ename).map(u64::from),
                    Some(v),
                    "enum {name}: {ename}"
                );
            }
        }

        // Attribute sets.
        let sets = y["attribute-sets"].as_sequence().expect("attribute-sets");
        assert_eq!(sets.len(), SETS.len(), "number of attribute sets");
        for set in sets {
            let sname = s(set, "name").unwrap();
            let ours = SETS
                .iter()
                .find(|x| x.name == sname)
                .unwrap_or_else(|| panic!("attribute set {sname} missing in crem_core::nl"));
            let attrs = set["attributes"].as_sequence().unwrap();
            assert_eq!(
                attrs.len(),
                ours.attrs.len(),
                "set {sname}: attribute count"
            );
            let mut next = 1u64;
            for at in attrs {
                let aname = s(at, "name").unwrap();
                let id = n(at, "value").unwrap_or(next);
                next = id + 1;
                let o = ours
                    .by_name(aname)
                    .unwrap_or_else(|| panic!("{sname}.{aname} missing in crem_core::nl"));
                assert_eq!(o.id as u64, id, "{sname}.{aname}: id");
                assert_eq!(
                    o.ty.yaml_name(),
                    s(at, "type").unwrap(),
                    "{sname}.{aname}: type"
                );
                if let AttrType::Nest(inner) = o.ty {
                    assert_eq!(
                        Some(inner.name),
                        s(at, "nested-attributes"),
                        "{sname}.{aname}"
                    );
                }
                let yaml_multi = at
                    .get("multi-attr")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                assert_eq!(o.multi, yaml_multi, "{sname}.{aname}: multi-attr");
                assert_eq!(o.enum_name, s(at, "enum"), "{sname}.{aname}: enum");
                // The generator makes a paragraph one line (the YAML's line
                // breaks are wrapping).
                let doc = s(at, "doc").map_or_else(String::new, |d| {
                    d.trim()
                        .split("\n\n")
                        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
                        .collect::<Vec<_>>()
                        .join("\n\n")
                });
                assert_eq!(o.doc, doc, "{sname}.{aname}: doc");
                let checks = at.get("checks");
                assert_eq!(
                    o.min,
                    checks.and_then(|c| n(c, "min")),
                    "{sname}.{aname}: min"
                );
                // An enum's bound is derived, as ynl-gen-c's policy has it:
                // its last value, or an enum-as-flags one's mask.
                let derived = s(at, "enum").map(|e| {
                    let d = defs.iter().find(|d| s(d, "name") == Some(e)).unwrap();
                    let count = enum_entries(d).len() as u64;
                    match at.get("enum-as-flags").and_then(Value::as_bool) {
                        Some(true) => (1 << count) - 1,
                        _ => count - 1,
                    }
                });
                assert_eq!(
                    o.max,
                    checks.and_then(|c| n(c, "max")).or(derived),
                    "{sname}.{aname}: max"
                );
            }
        }

        // Operations: unified message ids, starting at 1.
        let ops = y["operations"]["list"].as_sequence().unwrap();
        assert_eq!(ops.len(), OPS.len(), "number of operations");
        let mut next = 1u64;
        for op in ops {
            let name = s(op, "name").unwrap();
            let id = n(op, "value").unwrap_or(next);
            next = id + 1;
            let ours = OPS
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("op {name} missing in crem_core::nl"));
            assert_eq!(ours.1 as u64, id, "op {name}: value");
            assert_eq!(op_name(ours.1), Some(name));
            // The set its messages carry at the top level: its own, or for
            // a notification that of the op it notifies as.
            let set = s(op, "attribute-set").or_else(|| {
                let of = s(op, "notify")?;
                let o = ops.iter().find(|o| s(o, "name") == Some(of))?;
                s(o, "attribute-set")
            });
            assert_eq!(op_set(ours.1).map(|x| x.name), set, "op {name}: set");
        }
        let find_op = |name: &str| -> Option<u8> {
            ops.iter()
                .position(|o| s(o, "name") == Some(name))
                .map(|_| {
                    OPS.iter()
                        .find(|(n, _)| *n == name)
                        .map(|x| x.1)
                        .unwrap_or(0)
                })
        };
        assert_eq!(Some(CMD_FLOW_DEL), find_op("flow-del"), "flow-del");
        assert_eq!(Some(CMD_FLOW_SET), find_op("flow-set"), "flow-set");
        assert_eq!(Some(CMD_FLOW_NEW), find_op("flow-new"), "flow-new");
        assert_eq!(Some(CMD_FLOW_RESET), find_op("flow-reset"), "flow-reset");

        // Multicast groups.
        let groups: Vec<&str> = y["mcast-groups"]["list"]
            .as_sequence()
            .unwrap()
            .iter()
            .filter_map(|g| s(g, "name"))
            .collect();
        assert_eq!(groups, vec![MCGRP_EVENTS]);
    }

    /// The attributes the spec lists for operation `op`'s do request (its
    /// policy: the kernel refuses any other).
    pub(crate) fn request_attrs(op: &str) -> Vec<String> {
        let y = spec();
        let o = y["operations"]["list"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|o| s(o, "name") == Some(op))
            .unwrap_or_else(|| panic!("op {op}"))
            .clone();
        o["do"]["request"]["attributes"]
            .as_sequence()
            .map(|v| v.iter().map(|a| a.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    }

    /// Asserts that the request `attrs` (the top level of a `cmd` request)
    /// has only attributes of its operation's request, named in its set.
    pub(crate) fn assert_in_request(cmd: u8, attrs: &[crate::attr::Attr]) {
        let op = op_name(cmd).unwrap();
        let set = op_set(cmd).unwrap();
        let allowed = request_attrs(op);
        for a in attrs {
            let name = set.by_id(a.id).map(|x| x.name).unwrap_or("?");
            assert!(
                allowed.iter().any(|n| n == name),
                "{op} sends {}.{name} (id {}), not in its request {allowed:?}",
                set.name,
                a.id
            );
        }
    }

    #[test]
    fn request_lists() {
        assert_eq!(request_attrs("flow-del"), ["id", "side", "peer"]);
        assert!(request_attrs("config-get").is_empty());
        let set = request_attrs("config-set");
        for a in CONFIG_SET.attrs.iter().filter(|a| a.ty != AttrType::Pad) {
            assert!(set.iter().any(|n| n == a.name), "config-set: {}", a.name);
        }
    }

    /// Every `NAME [= VALUE],` entry of every enum in the generated uapi
    /// header, with its value (C numbering: implicit = previous + 1).
    fn header_enums() -> std::collections::HashMap<String, i64> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../include/uapi/linux/crem.h"
        );
        let text = std::fs::read_to_string(path).expect("include/uapi/linux/crem.h");
        let mut out = std::collections::HashMap::new();
        let mut next: Option<i64> = None;
        for line in text.lines().map(str::trim) {
            if line.starts_with("enum") && line.ends_with('{') {
                next = Some(0);
                continue;
            }
            if line.starts_with('}') {
                next = None;
                continue;
            }
            let Some(n) = next else { continue };
            let Some(entry) = line.strip_suffix(',') else {
                continue;
            };
            let (name, v) = match entry.split_once('=') {
                Some((name, v)) => (name.trim(), v.trim().parse::<i64>().ok()),
                None => (entry, Some(n)),
            };
            // `X_MAX = (__X_MAX - 1)` is not a literal: skip it.
            if let Some(v) = v {
                out.insert(name.to_string(), v);
                next = Some(v + 1);
            }
        }
        out
    }

    fn c_name(s: &str) -> String {
        s.to_uppercase().replace('-', "_")
    }

    #[test]
    fn matches_uapi_header() {
        let h = header_enums();
        for set in SETS {
            for a in set.attrs {
                let name = format!("CREM_A_{}_{}", c_name(set.name), c_name(a.name));
                assert_eq!(h.get(&name), Some(&i64::from(a.id)), "{name}");
            }
            let max = set.attrs.iter().map(|a| a.id).max().unwrap();
            let name = format!("__CREM_A_{}_MAX", c_name(set.name));
            assert_eq!(h.get(&name), Some(&(i64::from(max) + 1)), "{name}");
        }
        for (e, names) in ENUMS {
            for (i, n) in names.iter().enumerate() {
                let name = format!("CREM_{}_{}", c_name(e), c_name(n));
                assert_eq!(h.get(&name), Some(&(i as i64)), "{name}");
            }
        }
        for (op, cmd) in OPS {
            let name = format!("CREM_CMD_{}", c_name(op));
            assert_eq!(h.get(&name), Some(&i64::from(*cmd)), "{name}");
        }
    }

    #[test]
    fn nested_sets_are_known() {
        for set in SETS {
            let mut ids: Vec<u16> = set.attrs.iter().map(|a| a.id).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(
                ids.len(),
                set.attrs.len(),
                "set {}: duplicate ids",
                set.name
            );
            for a in set.attrs {
                if let AttrType::Nest(inner) = a.ty {
                    assert!(
                        SETS.contains(&inner),
                        "{}.{} nests {}, which is not in SETS",
                        set.name,
                        a.name,
                        inner.name
                    );
                }
            }
        }
        // The nests the datapath added.
        assert_eq!(
            STATS_SET.by_name("totals").unwrap().ty,
            AttrType::Nest(&FLOW_STATS_SET)
        );
        assert_eq!(
            FLOW_SET.by_name("stats").unwrap().ty,
            AttrType::Nest(&FLOW_STATS_SET)
        );
        assert_eq!(FLOW_SET.by_name("side").unwrap().enum_name, Some("side"));
        // The by-type nests, in the netns stats and in every flow-stats.
        for set in [&STATS_SET, &FLOW_STATS_SET] {
            for n in ["msgs-in-by-type", "msgs-out-by-type"] {
                assert_eq!(
                    set.by_name(n).unwrap().ty,
                    AttrType::Nest(&MSG_TYPES_SET),
                    "{}.{n}",
                    set.name
                );
            }
        }
    }

    #[test]
    fn enum_helpers() {
        assert_eq!(enum_name(ROLE, 2), Some("gateway"));
        assert_eq!(enum_name(ROLE, 3), None);
        assert_eq!(enum_value(RECOVERY, "selective-repeat"), Some(1));
        assert_eq!(enum_value(RECOVERY, "nope"), None);
        assert_eq!(op_name(CMD_FLOW_GET), Some("flow-get"));
        // The value constants: a sample (the name tables are checked above).
        for (names, name, v) in [
            (ROLE, "gateway", role::GATEWAY),
            (FLOW_STATE, "closing", flow_state::CLOSING),
            (SIDE, "crf", side::CRF),
            (FLOW_KIND, "responses", flow_kind::RESPONSES),
            (FLOW_EVENT, "close-received", flow_event::CLOSE_RECEIVED),
            (FEC_SCHEME, "xor", fec_scheme::XOR),
            (ADAPTIVE, "on", adaptive::ON),
        ] {
            assert_eq!(enum_value(names, name), Some(v), "{name}");
        }
    }
}
