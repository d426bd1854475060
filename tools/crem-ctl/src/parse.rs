//! Parsing of what the operator types: `set KEY VALUE` pairs, numbers with
//! units, probabilities, addresses and peers. Everything is checked before
//! anything is sent; the messages say what was expected.

use crate::model::{enum_val, Addr, Config, Peer};
use crate::uapi::{self, AttrSpec, CONFIG_SET};
use std::net::IpAddr;

/// The keys of `crem-ctl set`, in display order: (key, attribute name,
/// config-file key, value syntax).
pub const KEYS: &[(&str, &str, &str, &str)] = &[
    (
        "port",
        "port",
        "Port",
        "0..65535 but 4791 (0 disables CREM)",
    ),
    ("role", "role", "Role", "disabled|host|gateway"),
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
        "max-memory",
        "max-memory",
        "MaxMemory",
        "octets with K/M/G/T suffix (1024-based), up to 64G: 64M",
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

fn spec(name: &str) -> &'static AttrSpec {
    CONFIG_SET.by_name(name).expect("attribute in the spec")
}

/// An unsigned integer in decimal or 0x-hex, with `_` allowed as separator.
pub fn parse_uint(s: &str) -> Result<u64, String> {
    let t: String = s.trim().chars().filter(|c| *c != '_').collect();
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        t.parse::<u64>()
    };
    r.map_err(|_| format!("'{s}' is not a number"))
}

/// An integer for attribute `attr`, within its type and the spec's checks.
fn parse_int_for(key: &str, attr: &str, s: &str) -> Result<u64, String> {
    let v = parse_uint(s).map_err(|e| format!("{key}: {e}"))?;
    check_range(key, attr, v)
}

/// Checks `v` against the attribute's type and the spec's `checks`.
pub fn check_range(key: &str, attr: &str, v: u64) -> Result<u64, String> {
    let sp = spec(attr);
    let lo = sp.min.unwrap_or(0);
    let hi = sp
        .max
        .unwrap_or(u64::MAX)
        .min(sp.ty.max_value().unwrap_or(u64::MAX));
    if v < lo || v > hi {
        return Err(format!("{key}: {v} is out of range ({lo}..={hi})"));
    }
    Ok(v)
}

/// on/off (also yes/no, true/false, 1/0).
pub fn parse_bool(key: &str, s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "yes" | "true" | "1" => Ok(true),
        "off" | "no" | "false" | "0" => Ok(false),
        _ => Err(format!("{key}: expected on or off, got '{s}'")),
    }
}

/// A time as microseconds: `500us`, `500µs`, `2ms`, `1s`, `1.5ms`; a bare
/// number is microseconds.
pub fn parse_duration_us(key: &str, s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult_exp) = if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 0)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 6)
    } else {
        (t, 0)
    };
    let (m, e) = parse_decimal(num.trim())
        .ok_or_else(|| format!("{key}: '{s}' is not a time (e.g. 500us, 2ms, 1s)"))?;
    scale(m, e + mult_exp)
        .ok_or_else(|| format!("{key}: '{s}' is not a whole number of microseconds"))
}

/// A size in octets: `65536`, `64K`, `64M`, `1G`, `1.5G`, also `KiB`/`MiB`/…
/// (all suffixes are powers of 1024).
pub fn parse_size(key: &str, s: &str) -> Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let stripped = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, shift) = match stripped.chars().last() {
        Some('k') => (&stripped[..stripped.len() - 1], 10),
        Some('m') => (&stripped[..stripped.len() - 1], 20),
        Some('g') => (&stripped[..stripped.len() - 1], 30),
        Some('t') => (&stripped[..stripped.len() - 1], 40),
        _ => (stripped, 0),
    };
    let bad = || format!("{key}: '{s}' is not a size (e.g. 65536, 64K, 64M, 1G)");
    let (m, e) = parse_decimal(num.trim()).ok_or_else(bad)?;
    // m * 10^e * 2^shift must be a whole number of octets.
    let m2 = m.checked_shl(shift).ok_or_else(bad)?;
    let v = scale(m2, e).ok_or_else(|| format!("{key}: '{s}' is not a whole number of octets"))?;
    Ok(v)
}

/// A target failure probability as parts per billion: `1e-4`, `0.0001`,
/// `1` (probability 1) or with a unit: `100000ppb`, `100ppm`, `0.01%`.
pub fn parse_epsilon_ppb(key: &str, s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, exp_to_ppb, unit) = if let Some(n) = t.strip_suffix("ppb") {
        (n, 0, true)
    } else if let Some(n) = t.strip_suffix("ppm") {
        (n, 3, true)
    } else if let Some(n) = t.strip_suffix('%') {
        (n, 7, true)
    } else {
        (t.as_str(), 9, false)
    };
    let (m, e) = parse_decimal(num.trim()).ok_or_else(|| {
        format!("{key}: '{s}' is not a probability (e.g. 1e-4, 0.0001 or 100000ppb)")
    })?;
    let v = scale(m, e + exp_to_ppb).ok_or_else(|| {
        format!("{key}: '{s}' is finer than the kernel's resolution of 1 ppb (1e-9)")
    })?;
    if !unit && v > 1_000_000_000 {
        return Err(format!(
            "{key}: '{s}' is not a probability (at most 1); for parts per billion write {s}ppb"
        ));
    }
    check_range(key, "epsilon-ppb", v)
}

/// Formats ppb as the shortest exact probability: 100000 → `1e-4`,
/// 250000 → `2.5e-4`, 1000000000 → `1`.
pub fn format_epsilon(ppb: u32) -> String {
    if ppb == 0 {
        return "0".into();
    }
    let mut m = ppb as u64;
    let mut e: i32 = -9;
    while m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    let digits = m.to_string();
    let exp = e + digits.len() as i32 - 1;
    let mant = if digits.len() > 1 {
        format!("{}.{}", &digits[..1], &digits[1..])
    } else {
        digits
    };
    if exp == 0 {
        mant
    } else {
        format!("{mant}e{exp}")
    }
}

/// Formats microseconds with the largest exact unit: 0 → `0`, 500 → `500us`,
/// 2000 → `2ms`, 1000000 → `1s`.
pub fn format_duration_us(us: u32) -> String {
    if us == 0 {
        "0".into()
    } else if us % 1_000_000 == 0 {
        format!("{}s", us / 1_000_000)
    } else if us % 1000 == 0 {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// Formats octets with the largest exact 1024-based suffix: 67108864 → `64M`.
pub fn format_size(v: u64) -> String {
    for (shift, suf) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if v != 0 && v % (1u64 << shift) == 0 {
            return format!("{}{suf}", v >> shift);
        }
    }
    v.to_string()
}

/// Parses `123`, `1.25`, `1e-4`, `2.5E3` into (mantissa, decimal exponent).
fn parse_decimal(s: &str) -> Option<(u64, i32)> {
    if s.is_empty() {
        return None;
    }
    let (base, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (int, frac) = match base.split_once('.') {
        Some((i, f)) => (i, f),
        None => (base, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let m = if digits.is_empty() {
        0
    } else {
        digits.parse::<u64>().ok()?
    };
    Some((m, exp.checked_sub(frac.len() as i32)?))
}

/// m * 10^e if that is a whole number that fits u64.
fn scale(mut m: u64, mut e: i32) -> Option<u64> {
    if m == 0 {
        return Some(0);
    }
    while e < 0 {
        if m % 10 != 0 {
            return None;
        }
        m /= 10;
        e += 1;
    }
    while e > 0 {
        m = m.checked_mul(10)?;
        e -= 1;
    }
    Some(m)
}

/// An IPv4 or IPv6 address.
pub fn parse_addr(key: &str, s: &str) -> Result<IpAddr, String> {
    let t = s.trim();
    let t = t
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(t);
    t.parse::<IpAddr>()
        .map_err(|_| format!("{key}: '{s}' is not an IPv4 or IPv6 address"))
}

/// A comma-separated list of addresses.
pub fn parse_addr_list(key: &str, s: &str) -> Result<Vec<Addr>, String> {
    parse_list(key, s, "address", |x| parse_addr(key, x).map(Addr::from))
}

/// The non-empty, trimmed items of a comma-separated list.
fn list_items(s: &str) -> Vec<&str> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .collect()
}

/// The value of a list key (reporter, peer) that empties the list. Absence
/// of a list key leaves the kernel's list alone, so emptying it must be
/// spelled out.
pub const NONE: &str = "none";

/// Whether a list value is the single item [`NONE`]: the empty list.
pub fn is_none_list(s: &str) -> bool {
    list_items(s) == [NONE]
}

/// A comma-separated list of `what`s, each parsed by `item`: empty items are
/// skipped, the single item `none` is the empty list (it clears the list), and
/// no item at all is an error.
fn parse_list<T>(
    key: &str,
    s: &str,
    what: &str,
    item: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    if is_none_list(s) {
        return Ok(Vec::new()); // clears the list
    }
    let items = list_items(s);
    if items.is_empty() {
        return Err(format!(
            "{key}: no {what} given (use 'none' to clear the list; a set without \
             {key} leaves it as it is)"
        ));
    }
    items.into_iter().map(item).collect()
}

/// `PREFIX/LEN`, with the host bits zero.
pub fn parse_prefix(key: &str, s: &str) -> Result<(IpAddr, u8), String> {
    let (a, l) = s
        .trim()
        .split_once('/')
        .ok_or_else(|| format!("{key}: '{s}' is not a prefix (expected e.g. 203.0.113.0/24)"))?;
    let ip = parse_addr(key, a)?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let len: u8 = l
        .trim()
        .parse()
        .ok()
        .filter(|l| *l <= max)
        .ok_or_else(|| format!("{key}: '{l}' is not a prefix length (0..={max}) in '{s}'"))?;
    let masked = mask(ip, len);
    if masked != ip {
        return Err(format!(
            "{key}: '{s}' has host bits set (did you mean {masked}/{len}?)"
        ));
    }
    Ok((ip, len))
}

fn mask(ip: IpAddr, len: u8) -> IpAddr {
    match ip {
        IpAddr::V4(a) => {
            let m = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            IpAddr::V4((u32::from(a) & m).into())
        }
        IpAddr::V6(a) => {
            let m = if len == 0 {
                0
            } else {
                u128::MAX << (128 - len)
            };
            IpAddr::V6((u128::from(a) & m).into())
        }
    }
}

/// One peer `PREFIX/LEN=ADDR`. Mixed families are left to the kernel,
/// which owns cross-field rules (it explains the refusal).
pub fn parse_peer(key: &str, s: &str) -> Result<Peer, String> {
    let (p, a) = s.split_once('=').ok_or_else(|| {
        format!("{key}: '{s}' is not PREFIX/LEN=ADDR (e.g. 203.0.113.0/24=198.51.100.2)")
    })?;
    let (prefix, len) = parse_prefix(key, p)?;
    let addr = parse_addr(key, a)?;
    Ok(Peer {
        prefix: prefix.into(),
        prefix_len: len,
        addr: addr.into(),
    })
}

pub fn parse_peer_list(key: &str, s: &str) -> Result<Vec<Peer>, String> {
    parse_list(key, s, "peer", |x| parse_peer(key, x))
}

/// Applies one `KEY VALUE` to `c`. List keys (reporter, peer) accumulate;
/// any other key may be given once.
pub fn apply_kv(c: &mut Config, key: &str, value: &str) -> Result<(), String> {
    let k = canonical_key(key).ok_or_else(|| {
        let names: Vec<&str> = KEYS.iter().map(|x| x.0).collect();
        format!("unknown key '{key}' (keys: {})", names.join(", "))
    })?;
    let dup = |set: bool| -> Result<(), String> {
        if set {
            Err(format!("{k} given more than once"))
        } else {
            Ok(())
        }
    };
    match k {
        "port" => {
            dup(c.port.is_some())?;
            c.port = Some(parse_int_for(k, "port", value)? as u16);
        }
        "role" => {
            dup(c.role.is_some())?;
            let v = uapi::enum_value(uapi::ROLE, &value.to_ascii_lowercase()).ok_or_else(|| {
                format!(
                    "role: expected one of {}, got '{value}'",
                    uapi::ROLE.join("|")
                )
            })?;
            c.role = Some(enum_val(uapi::ROLE, v.into()));
        }
        "recovery" => {
            dup(c.recovery.is_some())?;
            let v =
                uapi::enum_value(uapi::RECOVERY, &value.to_ascii_lowercase()).ok_or_else(|| {
                    format!(
                        "recovery: expected one of {}, got '{value}'",
                        uapi::RECOVERY.join("|")
                    )
                })?;
            c.recovery = Some(enum_val(uapi::RECOVERY, v.into()));
        }
        "adaptive" => {
            dup(c.adaptive.is_some())?;
            c.adaptive = Some(parse_bool(k, value)? as u8);
        }
        "k" => {
            dup(c.k.is_some())?;
            c.k = Some(parse_int_for(k, "k", value)? as u8);
        }
        "m" => {
            dup(c.m.is_some())?;
            c.m = Some(parse_int_for(k, "m", value)? as u8);
        }
        "symbol-len" => {
            dup(c.symbol_len.is_some())?;
            let v = if matches!(value.to_ascii_lowercase().as_str(), "auto" | "derived") {
                0
            } else {
                parse_int_for(k, "symbol-len", value)?
            };
            c.symbol_len = Some(v as u16);
        }
        "epsilon" => {
            dup(c.epsilon_ppb.is_some())?;
            c.epsilon_ppb = Some(parse_epsilon_ppb(k, value)? as u32);
        }
        "m-cong" => {
            dup(c.m_cong.is_some())?;
            c.m_cong = Some(parse_int_for(k, "m-cong", value)? as u8);
        }
        "hold" => {
            dup(c.hold_us.is_some())?;
            let us = parse_duration_us(k, value)?;
            let max = spec("hold-us").max.unwrap_or(u64::MAX);
            if us > max {
                return Err(format!(
                    "hold: '{value}' is longer than the kernel's maximum of {}",
                    format_duration_us(max as u32)
                ));
            }
            c.hold_us = Some(us as u32);
        }
        "max-flows" => {
            dup(c.max_flows.is_some())?;
            c.max_flows = Some(parse_int_for(k, "max-flows", value)? as u32);
        }
        "max-memory" => {
            dup(c.max_memory.is_some())?;
            c.max_memory = Some(check_range(k, "max-memory", parse_size(k, value)?)?);
        }
        "reporter" => extend_list(&mut c.reporter, k, parse_addr_list(k, value)?)?,
        "peer" => extend_list(&mut c.peer, k, parse_peer_list(k, value)?)?,
        _ => unreachable!("every key of KEYS is handled"),
    }
    Ok(())
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
    for kv in args.chunks(2) {
        apply_kv(&mut c, &kv[0], &kv[1])?;
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
        assert_eq!(c.adaptive, Some(0));
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

    #[test]
    fn units() {
        assert_eq!(parse_duration_us("h", "0"), Ok(0));
        assert_eq!(parse_duration_us("h", "500us"), Ok(500));
        assert_eq!(parse_duration_us("h", "500µs"), Ok(500));
        assert_eq!(parse_duration_us("h", "1.5ms"), Ok(1500));
        assert_eq!(parse_duration_us("h", "1s"), Ok(1_000_000));
        assert!(parse_duration_us("h", "ms").is_err());
        assert_eq!(parse_size("m", "65536"), Ok(65536));
        assert_eq!(parse_size("m", "64K"), Ok(65536));
        assert_eq!(parse_size("m", "64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("m", "1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("m", "2T"), Ok(2 << 40));
        assert!(parse_size("m", "1.5").is_err());
        assert!(parse_size("m", "lots").is_err());
        assert_eq!(parse_epsilon_ppb("e", "1e-4"), Ok(100_000));
        assert_eq!(parse_epsilon_ppb("e", "0.0001"), Ok(100_000));
        assert_eq!(parse_epsilon_ppb("e", "1E-9"), Ok(1));
        assert_eq!(parse_epsilon_ppb("e", "1"), Ok(1_000_000_000));
        assert_eq!(parse_epsilon_ppb("e", "100ppm"), Ok(100_000));
        assert_eq!(parse_epsilon_ppb("e", "0.01%"), Ok(100_000));
        assert_eq!(parse_uint("0x10"), Ok(16));
        assert_eq!(parse_uint("1_000"), Ok(1000));
    }

    #[test]
    fn formatting_round_trips() {
        for ppb in [1u32, 5, 100_000, 250_000, 123_456_789, 1_000_000_000] {
            let s = format_epsilon(ppb);
            assert_eq!(parse_epsilon_ppb("e", &s), Ok(ppb as u64), "{s}");
        }
        assert_eq!(format_epsilon(100_000), "1e-4");
        assert_eq!(format_epsilon(250_000), "2.5e-4");
        assert_eq!(format_epsilon(1_000_000_000), "1");
        for us in [0u32, 1, 500, 2000, 1_000_000, 1500] {
            assert_eq!(
                parse_duration_us("h", &format_duration_us(us)),
                Ok(us as u64)
            );
        }
        for v in [0u64, 1, 1000, 65536, 64 << 20, 3 << 29, u64::MAX] {
            assert_eq!(parse_size("m", &format_size(v)), Ok(v));
        }
        assert_eq!(format_size(64 << 20), "64M");
    }
}
