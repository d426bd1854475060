//! Values as the operator types them: numbers (with units), probabilities,
//! addresses, prefixes and peers, and lists of them; and the formatting back
//! into the same units, so that what crem-ctl prints can be typed again.

use super::config::check_range;
use crate::model::{Addr, Peer};
use std::net::IpAddr;

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

/// `v` if it lies in `lo..=hi`; the message names the key and the range.
pub fn in_range(key: &str, v: u64, lo: u64, hi: u64) -> Result<u64, String> {
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

/// A loss rate as parts per million: `1200` or `1200ppm`, `0.12%`; at
/// most 100%.
pub fn parse_loss_ppm(key: &str, s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, exp_to_ppm) = match (t.strip_suffix("ppm"), t.strip_suffix('%')) {
        (Some(n), _) => (n, 0),
        (None, Some(n)) => (n, 4),
        (None, None) => (t.as_str(), 0),
    };
    let (m, e) = parse_decimal(num.trim())
        .ok_or_else(|| format!("{key}: '{s}' is not a loss rate (e.g. 1200, 1200ppm, 0.12%)"))?;
    let v = scale(m, e + exp_to_ppm)
        .ok_or_else(|| format!("{key}: '{s}' is not a whole number of ppm"))?;
    in_range(key, v, 0, 1_000_000)
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

/// `PREFIX/LEN`, with the host bits zero (the kernel's rule, crem-core's
/// `ctl::Addr::host_bits`, checked here to suggest the prefix meant).
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
    if crem_core::ctl::Addr::from(ip).host_bits(len) {
        let masked = mask(ip, len);
        return Err(format!(
            "{key}: '{s}' has host bits set (did you mean {masked}/{len}?)"
        ));
    }
    Ok((ip, len))
}

/// True if `ip` lies in `prefix/len` (of the same family).
pub fn prefix_contains(prefix: IpAddr, len: u8, ip: IpAddr) -> bool {
    // A length the family cannot have (never from the kernel) is its all.
    let len = len.min(if prefix.is_ipv4() { 32 } else { 128 });
    prefix.is_ipv4() == ip.is_ipv4() && mask(ip, len) == mask(prefix, len)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's host-bits rule (crem-core) is what masking said.
    #[test]
    fn host_bits_as_masking() {
        for ip in [
            "0.0.0.0",
            "203.0.113.0",
            "203.0.113.7",
            "255.255.255.255",
            "128.0.0.1",
            "::",
            "2001:db8::",
            "2001:db8::1",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            let max = if ip.is_ipv4() { 32 } else { 128 };
            for len in 0..=max {
                assert_eq!(
                    crem_core::ctl::Addr::from(ip).host_bits(len),
                    mask(ip, len) != ip,
                    "{ip}/{len}"
                );
            }
        }
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
