//! `tcpdump -x`/`-xx`/`-X`/`-XX` text as hex input: an operator often has
//! a pasted dump rather than a capture file. Each packet is a summary line
//! (whose first word, the time, is kept) followed by lines
//!
//! ```text
//! <TAB>0x0000:  4500 0054 1c46 4000 4011 ...   E..T.F@.@.
//! ```
//!
//! whose hex sits in the 41 columns after the offset's colon (tcpdump's
//! layout; `-X` puts the ASCII after them). The summary line's first word
//! is the packet's time when it starts with a digit (not with `-t`). `-x` starts at the IP header,
//! `-xx` at the link-layer header, whose type the text does not say: it is
//! recognised from its protocol field ([`crate::dissect::guess_linktype`]).

use crate::dissect;
use crate::pcap::Record;

/// A hex line: `0xOFFSET:` and the octets after it.
fn hex_line(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start();
    let rest = t.strip_prefix("0x")?;
    let (off, after) = rest.split_once(':')?;
    if off.len() < 4 || !off.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    // tcpdump puts two spaces after the colon; plain hex such as
    // "0x1900:000c" is not a dump line.
    if !after.starts_with(' ') {
        return None;
    }
    Some((usize::from_str_radix(off, 16).ok()?, after))
}

/// Whether `text` is a tcpdump hex dump rather than plain hex.
pub fn looks_like(text: &str) -> bool {
    text.lines().any(|l| hex_line(l).is_some())
}

/// The packets of a tcpdump hex dump, numbered from 1, each with its
/// link type guessed and its time if the dump shows one. Errors name the
/// line (1-based).
pub fn parse(text: &str) -> Result<Vec<(Record, Option<String>)>, String> {
    let mut out: Vec<(Record, Option<String>)> = Vec::new();
    let mut time: Option<String> = None;
    // The octets of the packet being read.
    let mut cur: Option<Vec<u8>> = None;
    let mut finish = |cur: &mut Option<Vec<u8>>, time: &Option<String>| {
        if let Some(data) = cur.take() {
            let number = out.len() as u64 + 1;
            out.push((
                Record {
                    number,
                    offset: 0,
                    time: None,
                    linktype: dissect::guess_linktype(&data),
                    orig_len: data.len() as u32,
                    data,
                },
                time.clone(),
            ));
        }
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let Some((off, after)) = hex_line(line) else {
            if !line.trim().is_empty() {
                finish(&mut cur, &time);
                time = line
                    .split_whitespace()
                    .next()
                    .filter(|w| w.starts_with(|c: char| c.is_ascii_digit()))
                    .map(str::to_string);
            }
            continue;
        };
        if off == 0 {
            finish(&mut cur, &time);
        }
        let data = cur.get_or_insert_with(Vec::new);
        if off != data.len() {
            return Err(format!(
                "line {n}: offset 0x{off:04x}, but the packet has {} octets so far",
                data.len()
            ));
        }
        // The hex columns; -X's ASCII follows them.
        let cols: String = after.chars().take(41).collect();
        for w in cols.split_whitespace() {
            if w.len() % 2 != 0 || w.len() > 4 || !w.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!("line {n}: '{w}' is not a tcpdump hex group"));
            }
            for k in (0..w.len()).step_by(2) {
                let b = u8::from_str_radix(&w[k..k + 2], 16)
                    .map_err(|e| format!("line {n}: '{w}': {e}"))?;
                data.push(b);
            }
        }
    }
    finish(&mut cur, &time);
    if out.is_empty() {
        return Err("no tcpdump hex lines".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tcpdump -nn -x` of one IPv4 UDP datagram (40000 -> 7470, "hi").
    const X: &str = "\
12:34:56.789012 IP 192.0.2.1.40000 > 198.51.100.2.7470: UDP, length 2
\t0x0000:  4500 001e 1234 4000 4011 0000 c000 0201
\t0x0010:  c633 6402 9c40 1d2e 000a 0000 6869
";

    #[test]
    fn x_and_xx_and_ascii() {
        assert!(looks_like(X));
        assert!(!looks_like("1900000c0000000700010000\n0x19 00"));
        let p = parse(X).unwrap();
        assert_eq!(p.len(), 1);
        let (r, time) = &p[0];
        assert_eq!(time.as_deref(), Some("12:34:56.789012"));
        assert_eq!(r.linktype, dissect::LINKTYPE_RAW);
        assert_eq!(r.data.len(), 30);
        // -XX: Ethernet header first, ASCII after the hex; two packets.
        let xx = "\
10.5 IP a > b
\t0x0000:  0200 0000 0001 0200 0000 0002 0800 4500  ..............E.
\t0x0010:  001e 1234 4000 4011 0000 c000 0201 c633  ...4@.@........3
\t0x0020:  6402 9c40 1d2e 000a 0000 6869            d..@......hi
IP a > b
\t0x0000:  0200 0000 0001 0200 0000 0002 0806 0001  ................
";
        let p = parse(xx).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].1.as_deref(), p[1].1.as_deref()), (Some("10.5"), None));
        assert_eq!(p[0].0.linktype, dissect::LINKTYPE_ETHERNET);
        assert_eq!(p[0].0.data.len(), 44);
        assert_eq!(p[0].0.data[42..], *b"hi");
        assert_eq!(p[1].0.number, 2);
    }

    #[test]
    fn errors_name_the_line() {
        let gap = "\t0x0000:  4500\n\t0x0010:  0000\n";
        assert_eq!(
            parse(gap).unwrap_err(),
            "line 2: offset 0x0010, but the packet has 2 octets so far"
        );
        assert_eq!(
            parse("\t0x0000:  45z0\n").unwrap_err(),
            "line 1: '45z0' is not a tcpdump hex group"
        );
    }
}
