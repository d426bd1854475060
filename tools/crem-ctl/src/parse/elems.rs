//! The elements 'peer add|del' and 'reporter add|del' name: each word one
//! element or a comma-separated list of them. 'none' is no element (it
//! empties a list in 'set'), and an element named twice is a mistake.

use super::value::{parse_addr, parse_addr_list, parse_peer, parse_prefix};
use crate::model::{Addr, Peer};

/// An entry 'peer del' names: a prefix, and the address it must have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerSel {
    pub prefix: Addr,
    pub prefix_len: u8,
    pub addr: Option<Addr>,
}

/// The items of `words`, each word split at commas; `none` refused.
fn items<'a>(cmd: &str, words: &'a [String]) -> Result<Vec<&'a str>, String> {
    let v: Vec<&str> = words
        .iter()
        .flat_map(|w| w.split(','))
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .collect();
    if v.is_empty() {
        return Err(format!("{cmd}: nothing given"));
    }
    if v.iter().any(|x| x.eq_ignore_ascii_case(super::NONE)) {
        return Err(format!(
            "{cmd}: 'none' names no element (to empty the list: crem-ctl set {} none)",
            cmd.split(' ').next().unwrap_or(cmd)
        ));
    }
    Ok(v)
}

/// Refuses an element given twice, named by `show`.
fn once<T: PartialEq>(cmd: &str, v: &[T], show: impl Fn(&T) -> String) -> Result<(), String> {
    for (i, x) in v.iter().enumerate() {
        if v[..i].contains(x) {
            return Err(format!("{cmd}: {} is given twice", show(x)));
        }
    }
    Ok(())
}

/// 'peer add PREFIX/LEN=ADDR...'.
pub fn peer_entries(words: &[String]) -> Result<Vec<Peer>, String> {
    let cmd = "peer add";
    let v = items(cmd, words)?
        .into_iter()
        .map(|s| parse_peer(cmd, s))
        .collect::<Result<Vec<_>, _>>()?;
    let prefixes: Vec<(Addr, u8)> = v.iter().map(|p| (p.prefix.clone(), p.prefix_len)).collect();
    once(cmd, &prefixes, |(p, l)| format!("{p}/{l}"))?;
    Ok(v)
}

/// 'peer del PREFIX/LEN[=ADDR]...'.
pub fn peer_selectors(words: &[String]) -> Result<Vec<PeerSel>, String> {
    let cmd = "peer del";
    let v = items(cmd, words)?
        .into_iter()
        .map(|s| {
            let (p, a) = match s.split_once('=') {
                Some((p, a)) => (p, Some(a)),
                None => (s, None),
            };
            let (prefix, len) = parse_prefix(cmd, p)?;
            Ok(PeerSel {
                prefix: prefix.into(),
                prefix_len: len,
                addr: a.map(|a| parse_addr(cmd, a).map(Addr::from)).transpose()?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let prefixes: Vec<(Addr, u8)> = v.iter().map(|p| (p.prefix.clone(), p.prefix_len)).collect();
    once(cmd, &prefixes, |(p, l)| format!("{p}/{l}"))?;
    Ok(v)
}

/// 'reporter add|del ADDR...' (`cmd` names which).
pub fn addresses(cmd: &str, words: &[String]) -> Result<Vec<Addr>, String> {
    let mut v = Vec::new();
    for s in items(cmd, words)? {
        v.extend(parse_addr_list(cmd, s)?);
    }
    once(cmd, &v, |a| a.to_string())?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn elements_and_their_errors() {
        let p = peer_entries(&w(&[
            "203.0.113.0/24=198.51.100.2,2001:db8:1::/48=2001:db8::2",
        ]))
        .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].to_string(), "2001:db8:1::/48=2001:db8::2");
        let s = peer_selectors(&w(&["203.0.113.0/24", "198.18.0.0/15=198.51.100.9"])).unwrap();
        assert_eq!((s[0].prefix_len, s[0].addr.clone()), (24, None));
        assert_eq!(
            s[1].addr.as_ref().map(|a| a.to_string()).as_deref(),
            Some("198.51.100.9")
        );
        let a = addresses(
            "reporter add",
            &w(&["198.51.100.1,2001:db8::1", "192.0.2.9"]),
        )
        .unwrap();
        assert_eq!(a.len(), 3);
        for (r, msg) in [
            (peer_entries(&w(&[])).map(|_| ()), "peer add: nothing given"),
            (
                peer_entries(&w(&["none"])).map(|_| ()),
                "peer add: 'none' names no element (to empty the list: crem-ctl set peer none)",
            ),
            (
                peer_entries(&w(&["203.0.113.0/24"])).map(|_| ()),
                "peer add: '203.0.113.0/24' is not PREFIX/LEN=ADDR (e.g. 203.0.113.0/24=198.51.100.2)",
            ),
            (
                peer_entries(&w(&["203.0.113.0/24=198.51.100.2", "203.0.113.0/24=198.51.100.3"]))
                    .map(|_| ()),
                "peer add: 203.0.113.0/24 is given twice",
            ),
            (
                peer_selectors(&w(&["203.0.113.7/24"])).map(|_| ()),
                "peer del: '203.0.113.7/24' has host bits set (did you mean 203.0.113.0/24?)",
            ),
            (
                addresses("reporter del", &w(&["198.51.100.1", "198.51.100.1"])).map(|_| ()),
                "reporter del: 198.51.100.1 is given twice",
            ),
            (
                addresses("reporter add", &w(&["none"])).map(|_| ()),
                "reporter add: 'none' names no element (to empty the list: crem-ctl set reporter none)",
            ),
        ] {
            assert_eq!(r.unwrap_err(), msg);
        }
    }
}
