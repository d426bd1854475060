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
//! to T octets (crem-core's construction). A present zero-length payload is
//! `0x` on an encode line and `S J` (no HEX) on a decode line.
//!
//! # Errors
//!
//! Everything about the arguments and the input lines is checked before any
//! coding, and reported naming the argument or line and the allowed range:
//! these are usage errors (exit 2). Only [`decode`] fails afterwards, when
//! the symbols do not suffice or do not agree (exit 1).

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

/// The name `--scheme` takes for `scheme`.
fn scheme_name(scheme: Scheme) -> &'static str {
    match scheme {
        Scheme::CauchyRs => "cauchy",
        Scheme::Xor => "xor",
        Scheme::SourceCopy => "source-copy",
    }
}

/// The code of a block of k positions and symbol length T. clap keeps
/// --k and --symbol-len in range, and encode's k is its line count
/// (checked), so this only fails on a bug; it names both values anyway.
fn code(scheme: Scheme, k: usize, t: usize) -> Result<Code, String> {
    u8::try_from(k)
        .ok()
        .and_then(|k8| Code::new(scheme, k8, t).ok())
        .ok_or_else(|| format!("k {k} (1..=255) / --symbol-len {t} (2..=65535): not a code"))
}

/// Checks that position `j` is in a block of `k`; `what` names where it
/// was given (e.g. "--absent: position").
fn check_position(what: &str, j: u8, k: usize) -> Result<(), String> {
    if (j as usize) < k {
        Ok(())
    } else {
        Err(format!(
            "{what} {j} is outside the block (0..={} for k = {k})",
            k - 1
        ))
    }
}

/// Positions as given on the command line or in over= → a set; duplicates
/// and positions outside 0..k-1 are errors.
fn position_set(what: &str, js: &[u8], k: usize) -> Result<Bitmap, String> {
    let mut b = Bitmap::EMPTY;
    for &j in js {
        check_position(&format!("{what} position"), j, k)?;
        if !b.insert(j) {
            return Err(format!("{what} position {j} given twice"));
        }
    }
    Ok(b)
}

/// Checks that the set `l` (over a present subset) names no absent
/// position; `absent` says how positions become absent.
fn check_present(what: &str, l: &Bitmap, present: &Bitmap, absent: &str) -> Result<(), String> {
    match l.difference(present).iter().next() {
        Some(j) => Err(format!("{what} position {j} is absent ({absent})")),
        None => Ok(()),
    }
}

/// Checks Repair Index `i` against the scheme and k.
fn check_repair_index(what: &str, code: &Code, i: u8) -> Result<(), String> {
    code.check_repair_index(i).map_err(|_| {
        format!(
            "{what} {i} is not valid for {} with k = {} (0..={})",
            scheme_name(code.scheme()),
            code.k(),
            code.index_count() - 1
        )
    })
}

/// The T-octet source symbol of payload `p`; `what` names where it was
/// given.
fn source_symbol(what: &str, p: &[u8], t: usize) -> Result<Vec<u8>, String> {
    let mut s = vec![0u8; t];
    build_source_symbol(p, t, &mut s).map_err(|_| {
        format!(
            "{what}: {} octets; --symbol-len {t} holds 0..={}",
            p.len(),
            t - fec::LENGTH_PREFIX
        )
    })?;
    Ok(s)
}

/// The `fec encode` input: one hex payload per line, an empty line is an
/// absent position, k = the number of lines (1..=255). Returns the source
/// symbols (T octets) by position, `None` where absent.
pub fn parse_sources(text: &str, t: usize) -> Result<Vec<Option<Vec<u8>>>, String> {
    let k = text.lines().count();
    if k == 0 {
        return Err(
            "standard input: no source lines (one hex payload per position, 1..=255 lines)".into(),
        );
    }
    if k > 255 {
        return Err(format!(
            "standard input: {k} source lines; a block has 1..=255"
        ));
    }
    text.lines()
        .enumerate()
        .map(|(n, l)| {
            let l = l.trim();
            if l.is_empty() {
                return Ok(None);
            }
            let at = format!("line {} (position {n})", n + 1);
            let p = hex::decode(l).map_err(|e| format!("{at}: {e}"))?;
            source_symbol(&at, &p, t).map(Some)
        })
        .collect()
}

/// Computes the repair symbols with indices `repairs` over the present
/// sources, or over `over` (set L) when given. Returns (I, symbol) pairs in
/// the order of `repairs`. Every error is about the arguments: crem-core's
/// own checks cannot fail after them.
pub fn encode(
    scheme: Scheme,
    t: usize,
    sources: &[Option<Vec<u8>>],
    repairs: &[u8],
    over: Option<&[u8]>,
) -> Result<Vec<(u8, Vec<u8>)>, String> {
    let k = sources.len();
    let code = code(scheme, k, t)?;
    let mut present = Bitmap::EMPTY;
    for (j, s) in sources.iter().enumerate() {
        if s.is_some() {
            present.insert(j as u8);
        }
    }
    let l = match over {
        Some(o) => {
            let l = position_set("--over:", o, k)?;
            check_present("--over:", &l, &present, "an empty line")?;
            l
        }
        None => present,
    };
    let mut seen = Bitmap::EMPTY;
    for &i in repairs {
        check_repair_index("--repair: index", &code, i)?;
        if !seen.insert(i) {
            return Err(format!("--repair: index {i} given twice"));
        }
    }
    // Every position of L is present (checked above).
    let syms: Vec<(u8, &[u8])> = l
        .iter()
        .filter_map(|j| Some((j, sources[j as usize].as_deref()?)))
        .collect();
    repairs
        .iter()
        .map(|&i| {
            let mut sym = vec![0u8; t];
            fec::encode_over(&RowPerCall, &code, i, syms.iter().copied(), &mut sym)
                .map_err(|e| format!("repair {i}: {e}"))?;
            Ok((i, sym))
        })
        .collect()
}

/// `I HEX` (or `J HEX`) lines.
pub fn format_lines(items: &[(u8, Vec<u8>)]) -> String {
    let mut s = String::new();
    for (n, b) in items {
        let _ = writeln!(s, "{n} {}", hex::encode(b));
    }
    s
}

/// The -j form of [`format_lines`]: `{LIST: [{NUM: n, DATA: HEX}, ...]}`
/// for `keys` = [LIST, NUM, DATA].
pub fn json_items(keys: [&str; 3], items: &[(u8, Vec<u8>)]) -> serde_json::Value {
    let [list, num, data] = keys;
    let v: Vec<serde_json::Value> = items
        .iter()
        .map(|(n, b)| {
            let mut o = serde_json::Map::new();
            o.insert(num.into(), (*n).into());
            o.insert(data.into(), hex::encode(b).into());
            o.into()
        })
        .collect();
    serde_json::json!({ list: v })
}

/// The block `fec decode` works on: --scheme, --k, --symbol-len and the
/// positions left after --absent.
pub struct Block {
    code: Code,
    present: Bitmap,
}

impl Block {
    pub fn new(scheme: Scheme, k: u8, t: usize, absent: &[u8]) -> Result<Block, String> {
        let code = code(scheme, k.into(), t)?;
        let absent = position_set("--absent:", absent, k.into())?;
        Ok(Block {
            code,
            present: Bitmap::first(k.into()).difference(&absent),
        })
    }

    fn k(&self) -> usize {
        self.code.k().into()
    }
}

/// One `R` line of the `fec decode` input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairLine {
    pub index: u8,
    /// `Some(L)` for a coded retransmission (`over=`).
    pub over: Option<Bitmap>,
    pub symbol: Vec<u8>,
}

/// The `fec decode` input, checked against its block.
pub struct Received {
    /// The source symbols (T octets) by position, `None` if not received.
    sources: Vec<Option<Vec<u8>>>,
    repairs: Vec<RepairLine>,
}

/// The `fec decode` input: `S J [HEX]` and `R I HEX [over=J,J,...]` lines
/// (blank lines are skipped), each checked against `block`.
pub fn parse_symbols(text: &str, block: &Block) -> Result<Received, String> {
    let mut rx = Received {
        sources: vec![None; block.k()],
        repairs: Vec::new(),
    };
    let mut seen_repairs = Bitmap::EMPTY;
    let mut lines = 0;
    for (n, raw) in text.lines().enumerate() {
        let err = |m: String| format!("line {}: {m}", n + 1);
        let words: Vec<&str> = raw.split_whitespace().collect();
        let Some(&kind) = words.first() else {
            continue;
        };
        lines += 1;
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
                // No HEX is a zero-length payload, a valid source.
                let p = match words[..] {
                    [_, _] => Vec::new(),
                    [_, _, h] => hex::decode(h).map_err(&err)?,
                    _ => return Err(err("expected 'S J [HEX]'".into())),
                };
                rx.add_source(block, j, &p).map_err(err)?;
            }
            "R" => {
                let index = num("repair index I")?;
                let (h, over) = match words[..] {
                    [_, _, h] => (h, None),
                    [_, _, h, o] => (h, Some(parse_over(o, block).map_err(&err)?)),
                    _ => return Err(err("expected 'R I HEX [over=J,J,...]'".into())),
                };
                check_repair_index("R: repair index", &block.code, index).map_err(&err)?;
                if !seen_repairs.insert(index) {
                    return Err(err(format!("R: repair index {index} given twice")));
                }
                let symbol = hex::decode(h).map_err(&err)?;
                if symbol.len() != block.code.t() {
                    return Err(err(format!(
                        "R {index}: {} octets; a repair symbol has --symbol-len {}",
                        symbol.len(),
                        block.code.t()
                    )));
                }
                rx.repairs.push(RepairLine {
                    index,
                    over,
                    symbol,
                });
            }
            w => return Err(err(format!("unknown line type '{w}' (S or R)"))),
        }
    }
    if lines == 0 {
        return Err("standard input: no 'S J HEX' or 'R I HEX' lines".into());
    }
    Ok(rx)
}

/// The set L of an `over=J,J,...` word: present positions of the block.
fn parse_over(word: &str, block: &Block) -> Result<Bitmap, String> {
    let list = word
        .strip_prefix("over=")
        .ok_or_else(|| format!("'{word}': expected over=J,J,..."))?;
    let js = list
        .split(',')
        .map(|w| {
            w.parse::<u8>()
                .map_err(|_| format!("R: over= '{w}' is not a position (0..={})", block.k() - 1))
        })
        .collect::<Result<Vec<u8>, String>>()?;
    let l = position_set("R: over=", &js, block.k())?;
    check_present("R: over=", &l, &block.present, "--absent")?;
    Ok(l)
}

impl Received {
    /// Takes the payload of an `S J` line.
    fn add_source(&mut self, block: &Block, j: u8, p: &[u8]) -> Result<(), String> {
        check_position("S: position", j, block.k())?;
        check_present("S:", &Bitmap::from_iter([j]), &block.present, "--absent")?;
        let slot = &mut self.sources[j as usize];
        if slot.is_some() {
            return Err(format!("S: position {j} given twice"));
        }
        *slot = Some(source_symbol(&format!("S {j}"), p, block.code.t())?);
        Ok(())
    }
}

/// Recovers the present sources that were not received; returns
/// (J, payload) sorted by J. Fails only when the symbols do not suffice or
/// do not agree: the input was checked by [`parse_symbols`].
pub fn decode(block: &Block, rx: &Received) -> Result<Vec<(u8, Vec<u8>)>, String> {
    let t = block.code.t();
    let src_refs: Vec<Option<&[u8]>> = rx.sources.iter().map(|s| s.as_deref()).collect();
    let reps: Vec<fec::Repair> = rx
        .repairs
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
    let received = rx.sources.iter().filter(|s| s.is_some()).count();
    let mut out = vec![0u8; (block.present.len() - received) * t];
    let recovered = fec::decode(
        &RowPerCall,
        &block.code,
        &block.present,
        &view,
        &mut scratch,
        &mut out,
    )
    .map_err(|e| format!("cannot decode: {e}"))?;
    let mut done = Vec::new();
    for (j, sym) in recovered.iter().zip(out.chunks_exact(t)) {
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
        let s = parse_sources(input, 16).unwrap();
        format_lines(&encode(scheme, 16, &s, repairs, over).unwrap())
    }

    fn dec(input: &str, scheme: Scheme, k: u8, absent: &[u8]) -> Result<String, String> {
        let block = Block::new(scheme, k, 16, absent)?;
        let rx = parse_symbols(input, &block)?;
        decode(&block, &rx).map(|v| format_lines(&v))
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
        let sources = parse_sources(&input, 16).unwrap();
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
        let s = parse_sources(&input, 16).unwrap();
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
        let s = parse_sources(&input, 16).unwrap();
        assert!(encode(Scheme::Xor, 16, &s, &[1], None).is_err());
        assert_eq!(scheme_from_name("xor").unwrap(), Scheme::Xor);
        assert!(scheme_from_name("source-copy").is_err());
    }

    #[test]
    fn zero_length_payloads() {
        // `0x` encodes a present empty payload; `S J` without HEX is one.
        let s = parse_sources("0x\n78\n0x\n", 16).unwrap();
        assert_eq!(s[0].as_deref().map(|x| &x[..2]), Some(&[0u8, 0][..]));
        let reps = format_lines(&encode(Scheme::CauchyRs, 16, &s, &[0], None).unwrap());
        let text = format!("S 0\nS 1 78\nR {reps}");
        assert_eq!(dec(&text, Scheme::CauchyRs, 3, &[]).unwrap(), "2 \n");
    }

    #[test]
    fn inconsistent_and_bad_input() {
        // A recovered length prefix larger than T - 2.
        let text = "S 1 00\nS 2 00\nS 3 00\nR 0 00ff0000000000000000000000000000 over=0\n";
        let e = dec(text, Scheme::CauchyRs, 4, &[]).unwrap_err();
        assert!(e.contains("recovered source 0"), "{e}");
        assert!(e.contains("inconsistent"), "{e}");
        // Payload too long for T.
        let e = parse_sources(&format!("{}\n", "00".repeat(15)), 16).unwrap_err();
        assert_eq!(
            e,
            "line 1 (position 0): 15 octets; --symbol-len 16 holds 0..=14"
        );
        assert!(parse_sources("zz\n", 16).unwrap_err().contains("line 1"));
        assert!(parse_sources("", 16)
            .unwrap_err()
            .contains("no source lines"));
        assert!(encode(Scheme::CauchyRs, 16, &[], &[0], None).is_err());
        let e = |text: &str| dec(text, Scheme::CauchyRs, 4, &[]).unwrap_err();
        assert!(e("X 1 00\n").contains("line 1"));
        assert!(e("S 1 00 00\n").contains("expected 'S J [HEX]'"));
        assert!(e("R 0 00 under=1\n").contains("expected over="));
        assert!(e("R 0 00 over=1,1\n").contains("over= position 1 given twice"));
        assert!(e("R 0 00 over=x\n").contains("over= 'x' is not a position (0..=3)"));
        assert!(e("R 0 00\n").contains("a repair symbol has --symbol-len 16"));
        assert!(e("S 4 00\n").contains("outside"));
        assert!(e("\n").contains("no 'S J HEX' or 'R I HEX' lines"));
        let e = Block::new(Scheme::CauchyRs, 4, 16, &[9]).err().unwrap();
        assert_eq!(
            e,
            "--absent: position 9 is outside the block (0..=3 for k = 4)"
        );
    }
}
