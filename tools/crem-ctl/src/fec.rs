//! `crem-ctl fec encode|decode`: CREM's FEC (crem-core's Cauchy and XOR
//! codes) over hex UDP payloads on standard input, for interop work.
//!
//! # I/O contract
//!
//! `fec encode --symbol-len T --repair I[,I...] [--over J[,J...]]
//! [--scheme cauchy|xor]` reads the block's source packets as hex UDP
//! payloads, one per line: position j is line j, an empty line is an absent
//! position, k is the number of lines. It prints one line `I HEX` per repair
//! symbol (HEX: the T-octet repair symbol, lower case). `--over` restricts
//! the sum to the set L (a coded retransmission); by default L is every
//! present position.
//!
//! `fec decode --k K --symbol-len T [--absent J[,J...]] [--scheme
//! cauchy|xor]` reads lines `S J HEX` (a received source payload) and
//! `R I HEX [over=J,J,...]` (a repair symbol, over every present position
//! unless `over=` is given) and prints `J HEX` (the payload, unpadded) for
//! every source it recovers, sorted by J.
//!
//! The source symbol of payload P is `uint16(len(P)) || P || zero padding`
//! to T octets (crem-core's construction).

use crate::hex;
use crem_core::fec::{
    self, build_source_symbol, parse_source_symbol, Bitmap, Code, DecodeScratch, Scheme,
    SliceSymbols,
};
use crem_core::gf::RowPerCall;
use std::fmt::Write;

/// `cauchy` (scheme 1) or `xor` (scheme 2).
pub fn scheme_from_name(s: &str) -> Result<Scheme, String> {
    match s.to_ascii_lowercase().as_str() {
        "cauchy" | "cauchy-rs" | "1" => Ok(Scheme::CauchyRs),
        "xor" | "2" => Ok(Scheme::Xor),
        _ => Err(format!("unknown scheme '{s}' (cauchy or xor)")),
    }
}

/// Positions as given on the command line → a set; duplicates and
/// positions outside 0..k-1 are errors.
fn position_set(what: &str, js: &[u8], k: usize) -> Result<Bitmap, String> {
    let mut b = Bitmap::EMPTY;
    for &j in js {
        if j as usize >= k {
            return Err(format!(
                "{what}: position {j} is outside the block (k = {k})"
            ));
        }
        if !b.insert(j) {
            return Err(format!("{what}: position {j} given twice"));
        }
    }
    Ok(b)
}

fn code(scheme: Scheme, k: usize, t: usize) -> Result<Code, String> {
    let k8 = u8::try_from(k)
        .ok()
        .filter(|k| *k > 0)
        .ok_or_else(|| format!("k = {k}: a block has 1..255 positions"))?;
    Code::new(scheme, k8, t).map_err(|e| format!("k {k} / symbol-len {t}: {e}"))
}

fn source_symbol(j: u8, p: &[u8], t: usize) -> Result<Vec<u8>, String> {
    let mut s = vec![0u8; t];
    build_source_symbol(p, t, &mut s).map_err(|e| {
        format!(
            "source {j} ({} octets): {e} (symbol-len {t} holds at most {} octets)",
            p.len(),
            t.saturating_sub(fec::LENGTH_PREFIX)
        )
    })?;
    Ok(s)
}

/// The `fec encode` input: one hex payload per line, an empty line is an
/// absent position. k = the number of lines.
pub fn parse_sources(text: &str) -> Result<Vec<Option<Vec<u8>>>, String> {
    text.lines()
        .enumerate()
        .map(|(n, l)| {
            let l = l.trim();
            if l.is_empty() {
                Ok(None)
            } else {
                hex::decode(l)
                    .map(Some)
                    .map_err(|e| format!("line {} (position {n}): {e}", n + 1))
            }
        })
        .collect()
}

/// Computes the repair symbols with indices `repairs` over the present
/// sources, or over `over` (set L) when given. Returns (I, symbol) pairs in
/// the order of `repairs`.
pub fn encode(
    scheme: Scheme,
    t: usize,
    sources: &[Option<Vec<u8>>],
    repairs: &[u8],
    over: Option<&[u8]>,
) -> Result<Vec<(u8, Vec<u8>)>, String> {
    let k = sources.len();
    if k == 0 {
        return Err("no source lines on standard input (k = 0)".into());
    }
    let code = code(scheme, k, t)?;
    let present: Bitmap = {
        let mut b = Bitmap::EMPTY;
        for (j, s) in sources.iter().enumerate() {
            if s.is_some() {
                b.insert(j as u8);
            }
        }
        b
    };
    let l = match over {
        Some(o) => {
            let l = position_set("--over", o, k)?;
            if let Some(j) = l.difference(&present).iter().next() {
                return Err(format!("--over: position {j} is absent (an empty line)"));
            }
            l
        }
        None => present,
    };
    let syms = l
        .iter()
        .map(|j| {
            let p = sources[j as usize].as_deref().unwrap_or(&[]);
            Ok((j, source_symbol(j, p, t)?))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut seen = Bitmap::EMPTY;
    let mut out = Vec::with_capacity(repairs.len());
    for &i in repairs {
        if !seen.insert(i) {
            return Err(format!("--repair: index {i} given twice"));
        }
        let mut sym = vec![0u8; t];
        fec::encode_over(
            &RowPerCall,
            &code,
            i,
            syms.iter().map(|(j, s)| (*j, &s[..])),
            &mut sym,
        )
        .map_err(|e| format!("repair {i}: {e}"))?;
        out.push((i, sym));
    }
    Ok(out)
}

/// `I HEX` (or `J HEX`) lines.
pub fn format_lines(items: &[(u8, Vec<u8>)]) -> String {
    let mut s = String::new();
    for (n, b) in items {
        let _ = writeln!(s, "{n} {}", hex::encode(b));
    }
    s
}

/// One `R` line of the `fec decode` input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairLine {
    pub index: u8,
    /// `Some(L)` for a coded retransmission (`over=`).
    pub over: Option<Bitmap>,
    pub symbol: Vec<u8>,
}

/// The `fec decode` input: `S J HEX` and `R I HEX [over=J,J,...]` lines
/// (blank lines are skipped). Returns the sources (J, payload) and repairs.
#[allow(clippy::type_complexity)]
pub fn parse_symbols(text: &str) -> Result<(Vec<(u8, Vec<u8>)>, Vec<RepairLine>), String> {
    let mut sources = Vec::new();
    let mut repairs = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let err = |m: String| format!("line {}: {m}", n + 1);
        let words: Vec<&str> = raw.split_whitespace().collect();
        let Some(&kind) = words.first() else {
            continue;
        };
        let num = |what: &str| -> Result<u8, String> {
            words
                .get(1)
                .ok_or_else(|| err(format!("{what} missing")))?
                .parse::<u8>()
                .map_err(|_| err(format!("{what} '{}' is not 0..255", words[1])))
        };
        match kind {
            "S" => {
                let j = num("position J")?;
                let [_, _, h] = words[..] else {
                    return Err(err("expected 'S J HEX'".into()));
                };
                sources.push((j, hex::decode(h).map_err(&err)?));
            }
            "R" => {
                let index = num("repair index I")?;
                let (h, over) = match words[..] {
                    [_, _, h] => (h, None),
                    [_, _, h, o] => {
                        let o = o
                            .strip_prefix("over=")
                            .ok_or_else(|| err(format!("'{o}': expected over=J,J,...")))?;
                        let mut l = Bitmap::EMPTY;
                        for w in o.split(',') {
                            let j = w
                                .parse::<u8>()
                                .map_err(|_| err(format!("over=: '{w}' is not a position")))?;
                            if !l.insert(j) {
                                return Err(err(format!("over=: position {j} given twice")));
                            }
                        }
                        (h, Some(l))
                    }
                    _ => return Err(err("expected 'R I HEX [over=J,J,...]'".into())),
                };
                repairs.push(RepairLine {
                    index,
                    over,
                    symbol: hex::decode(h).map_err(&err)?,
                });
            }
            w => return Err(err(format!("unknown line type '{w}' (S or R)"))),
        }
    }
    Ok((sources, repairs))
}

/// Recovers the present sources that were not received; returns
/// (J, payload) sorted by J.
pub fn decode(
    scheme: Scheme,
    k: u8,
    t: usize,
    absent: &[u8],
    sources: &[(u8, Vec<u8>)],
    repairs: &[RepairLine],
) -> Result<Vec<(u8, Vec<u8>)>, String> {
    let code = code(scheme, k as usize, t)?;
    let present =
        Bitmap::first(k as usize).difference(&position_set("--absent", absent, k as usize)?);
    let mut symbols: Vec<Option<Vec<u8>>> = vec![None; k as usize];
    for (j, p) in sources {
        if *j >= k {
            return Err(format!("source {j} is outside the block (k = {k})"));
        }
        if !present.contains(*j) {
            return Err(format!("source {j} is at an absent position"));
        }
        if symbols[*j as usize].is_some() {
            return Err(format!("source {j} given twice"));
        }
        symbols[*j as usize] = Some(source_symbol(*j, p, t)?);
    }
    for r in repairs {
        if r.symbol.len() != t {
            return Err(format!(
                "repair {}: {} octets, not symbol-len {t}",
                r.index,
                r.symbol.len()
            ));
        }
        if let Some(l) = &r.over {
            if let Some(j) = l.difference(&present).iter().next() {
                return Err(format!(
                    "repair {}: over= position {j} is absent or outside the block (k = {k})",
                    r.index
                ));
            }
        }
    }
    let src_refs: Vec<Option<&[u8]>> = symbols.iter().map(|s| s.as_deref()).collect();
    let reps: Vec<fec::Repair> = repairs
        .iter()
        .map(|r| fec::Repair {
            index: r.index,
            lost: r.over.as_ref(),
            data: &r.symbol,
        })
        .collect();
    let view = SliceSymbols {
        sources: &src_refs,
        repairs: &reps,
    };
    let mut scratch = Box::new(DecodeScratch::new());
    let missing = present.len() - sources.len();
    let mut out = vec![0u8; missing * t];
    let recovered = fec::decode(&RowPerCall, &code, &present, &view, &mut scratch, &mut out)
        .map_err(|e| format!("cannot decode: {e}"))?;
    let mut done = Vec::new();
    for (j, sym) in recovered.iter().zip(out.chunks_exact(t.max(1))) {
        let p = parse_source_symbol(sym).map_err(|e| {
            format!(
                "recovered source {j} is not a valid source symbol ({e}): \
                 the symbols are inconsistent"
            )
        })?;
        done.push((j, p.to_vec()));
    }
    done.sort_by_key(|s| s.0);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "RDMA-PKT-0".."RDMA-PKT-3", one hex payload per line.
    fn example_input() -> String {
        (0..4)
            .map(|j| format!("{}\n", hex::encode(format!("RDMA-PKT-{j}").as_bytes())))
            .collect()
    }

    fn enc(input: &str, scheme: Scheme, repairs: &[u8], over: Option<&[u8]>) -> String {
        let s = parse_sources(input).unwrap();
        format_lines(&encode(scheme, 16, &s, repairs, over).unwrap())
    }

    fn dec(input: &str, scheme: Scheme, k: u8, absent: &[u8]) -> Result<String, String> {
        let (s, r) = parse_symbols(input)?;
        decode(scheme, k, 16, absent, &s, &r).map(|v| format_lines(&v))
    }

    #[test]
    fn coding_example_encode() {
        let input = example_input();
        assert_eq!(
            enc(&input, Scheme::CauchyRs, &[0, 1], None),
            "0 001ef6ccd7c377f0ddfc774c00000000\n1 001ef6ccd7c377f0ddfc774f00000000\n"
        );
        assert_eq!(
            enc(&input, Scheme::CauchyRs, &[2], Some(&[0, 1, 2])),
            "2 00354fdf6d4b40b57e5c400000000000\n"
        );
    }

    #[test]
    fn coding_example_decode() {
        let input = "\
S 3 52444d412d504b542d33
R 0 001ef6ccd7c377f0ddfc774c00000000
R 1 001ef6ccd7c377f0ddfc774f00000000
R 2 00354fdf6d4b40b57e5c400000000000 over=0,1,2
";
        assert_eq!(
            dec(input, Scheme::CauchyRs, 4, &[]).unwrap(),
            "0 52444d412d504b542d30\n1 52444d412d504b542d31\n2 52444d412d504b542d32\n"
        );
        // Without the retransmission, two repairs cannot recover three sources.
        let short: String = input.lines().take(3).map(|l| format!("{l}\n")).collect();
        let e = dec(&short, Scheme::CauchyRs, 4, &[]).unwrap_err();
        assert!(e.starts_with("cannot decode: insufficient"), "{e}");
        // Nothing lost: nothing printed.
        let all: String = (0..4)
            .map(|j| {
                format!(
                    "S {j} {}\n",
                    hex::encode(format!("RDMA-PKT-{j}").as_bytes())
                )
            })
            .collect();
        assert_eq!(dec(&all, Scheme::CauchyRs, 4, &[]).unwrap(), "");
    }

    #[test]
    fn absent_positions() {
        // Position 1 is absent (an empty line): the repairs sum over {0,2,3}.
        let mut lines: Vec<String> = example_input().lines().map(String::from).collect();
        lines[1].clear();
        let input = lines.join("\n") + "\n";
        let sources = parse_sources(&input).unwrap();
        assert_eq!(sources.len(), 4);
        assert!(sources[1].is_none());
        let reps = enc(&input, Scheme::CauchyRs, &[0, 1], None);
        let text = format!(
            "S 3 {}\n{}",
            lines[3],
            reps.lines().map(|l| format!("R {l}\n")).collect::<String>()
        );
        assert_eq!(
            dec(&text, Scheme::CauchyRs, 4, &[1]).unwrap(),
            format!("0 {}\n2 {}\n", lines[0], lines[2])
        );
        // The decoder must be told: with 1 present the sums do not add up.
        assert!(dec(&text, Scheme::CauchyRs, 4, &[]).is_err());
        // --over may not name an absent position; S may not carry one.
        let s = parse_sources(&input).unwrap();
        assert!(encode(Scheme::CauchyRs, 16, &s, &[0], Some(&[1]))
            .unwrap_err()
            .contains("absent"));
        let bad = format!("S 1 {}\n", lines[0]);
        assert!(dec(&bad, Scheme::CauchyRs, 4, &[1])
            .unwrap_err()
            .contains("absent"));
    }

    #[test]
    fn xor_scheme() {
        let input = example_input();
        let reps = enc(&input, Scheme::Xor, &[0], None);
        let lines: Vec<&str> = input.lines().collect();
        let text = format!(
            "S 0 {}\nS 1 {}\nS 3 {}\nR {reps}",
            lines[0], lines[1], lines[3]
        );
        assert_eq!(
            dec(&text, Scheme::Xor, 4, &[]).unwrap(),
            format!("2 {}\n", lines[2])
        );
        // XOR has a single repair index.
        let s = parse_sources(&input).unwrap();
        assert!(encode(Scheme::Xor, 16, &s, &[1], None).is_err());
        assert_eq!(scheme_from_name("xor").unwrap(), Scheme::Xor);
        assert!(scheme_from_name("source-copy").is_err());
    }

    #[test]
    fn inconsistent_and_bad_input() {
        // A recovered length prefix larger than T - 2.
        let text = "S 1 00\nS 2 00\nS 3 00\nR 0 00ff0000000000000000000000000000 over=0\n";
        let e = dec(text, Scheme::CauchyRs, 4, &[]).unwrap_err();
        assert!(e.contains("recovered source 0"), "{e}");
        assert!(e.contains("inconsistent"), "{e}");
        // Payload too long for T.
        let s = parse_sources(&format!("{}\n", "00".repeat(15))).unwrap();
        assert!(encode(Scheme::CauchyRs, 16, &s, &[0], None)
            .unwrap_err()
            .contains("at most 14"));
        assert!(parse_sources("zz\n").unwrap_err().contains("line 1"));
        assert!(encode(Scheme::CauchyRs, 16, &[], &[0], None).is_err());
        assert!(parse_symbols("X 1 00\n").unwrap_err().contains("line 1"));
        assert!(parse_symbols("S 1\n").is_err());
        assert!(parse_symbols("R 0 00 under=1\n").is_err());
        assert!(parse_symbols("R 0 00 over=1,1\n").is_err());
        assert!(dec("R 0 00\n", Scheme::CauchyRs, 4, &[])
            .unwrap_err()
            .contains("not symbol-len 16"));
        assert!(dec("S 4 00\n", Scheme::CauchyRs, 4, &[])
            .unwrap_err()
            .contains("outside"));
        assert!(dec("", Scheme::CauchyRs, 4, &[9]).is_err());
    }
}
