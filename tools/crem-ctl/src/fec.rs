//! `crem-ctl fec encode|decode`: CREM's FEC (crem-core's Cauchy / XOR /
//! Source Copy codes) on files, for interop work.
//!
//! # The block file
//!
//! One source block as text, one item per line, `#` comments:
//!
//! ```text
//! # CREM FEC block
//! scheme cauchy            # cauchy (1) | xor (2) | source-copy (0)
//! k 4                      # block size: positions 0..k-1
//! symbol-len 64            # T, octets of every symbol
//! present 0-3              # positions that carry a source (default: 0..k-1)
//! source 0 48656c6c6f      # position, payload P in hex (not the padded symbol)
//! repair 0 0012ab...       # Repair Index i, the T-octet repair symbol in hex
//! repair 5 over=1,3 9a...  # a coded retransmission: set L given explicitly
//! ```
//!
//! A repair without `over=` is an ordinary repair, whose set L is the
//! present set. `fec encode` writes such a file (with the sources unless
//! `--repairs-only`); delete some `source` lines to model losses and `fec
//! decode` recovers them, as long as enough repairs are held.

use crate::hex;
use crem_core::fec::{
    self, build_source_symbol, parse_source_symbol, Bitmap, BlockEncoder, Code, DecodeScratch,
    Scheme, SliceSymbols,
};
use crem_core::gf::RowPerCall;
use std::fmt::Write;

/// A parsed block file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub scheme: Scheme,
    pub k: u8,
    pub t: usize,
    pub present: Bitmap,
    /// (position, payload)
    pub sources: Vec<(u8, Vec<u8>)>,
    pub repairs: Vec<BlockRepair>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockRepair {
    pub index: u8,
    /// `Some(L)` for a coded retransmission.
    pub over: Option<Bitmap>,
    pub symbol: Vec<u8>,
}

pub fn scheme_from_name(s: &str) -> Result<Scheme, String> {
    match s.to_ascii_lowercase().as_str() {
        "cauchy" | "cauchy-rs" | "1" => Ok(Scheme::CauchyRs),
        "xor" | "2" => Ok(Scheme::Xor),
        "source-copy" | "copy" | "0" => Ok(Scheme::SourceCopy),
        _ => Err(format!("unknown scheme '{s}' (cauchy, xor or source-copy)")),
    }
}

pub fn scheme_to_name(s: Scheme) -> &'static str {
    match s {
        Scheme::CauchyRs => "cauchy",
        Scheme::Xor => "xor",
        Scheme::SourceCopy => "source-copy",
    }
}

/// `0-3,5` → {0,1,2,3,5}.
pub fn parse_set(s: &str) -> Result<Bitmap, String> {
    let mut b = Bitmap::EMPTY;
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, z)) => (a.trim(), z.trim()),
            None => (part, part),
        };
        let lo: u8 = lo
            .parse()
            .map_err(|_| format!("'{part}' is not a position (0..255)"))?;
        let hi: u8 = hi
            .parse()
            .map_err(|_| format!("'{part}' is not a position (0..255)"))?;
        if lo > hi {
            return Err(format!("'{part}' is an empty range"));
        }
        for j in lo..=hi {
            b.insert(j);
        }
    }
    Ok(b)
}

/// {0,1,2,3,5} → `0-3,5`; the empty set → `none`.
pub fn format_set(b: &Bitmap) -> String {
    let v: Vec<u8> = b.iter().collect();
    if v.is_empty() {
        return "none".into();
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

impl Block {
    pub fn parse(text: &str) -> Result<Block, String> {
        let (mut scheme, mut k, mut t, mut present) = (Scheme::CauchyRs, None, None, None);
        let mut sources: Vec<(u8, Vec<u8>)> = Vec::new();
        let mut repairs = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let err = |m: String| format!("line {n}: {m}");
            let num = |w: Option<&&str>, what: &str| -> Result<u64, String> {
                w.ok_or_else(|| err(format!("{what} missing")))?
                    .parse::<u64>()
                    .map_err(|_| err(format!("{what} is not a number")))
            };
            match words[0] {
                "scheme" => {
                    scheme = scheme_from_name(words.get(1).copied().unwrap_or("")).map_err(err)?
                }
                "k" => {
                    let v = num(words.get(1), "k")?;
                    k = Some(
                        u8::try_from(v)
                            .ok()
                            .filter(|k| *k > 0)
                            .ok_or_else(|| err("k must be 1..255".into()))?,
                    );
                }
                "symbol-len" | "t" => t = Some(num(words.get(1), "symbol-len")? as usize),
                "present" => {
                    present = Some(parse_set(words.get(1).copied().unwrap_or("")).map_err(err)?)
                }
                "source" => {
                    let j = num(words.get(1), "position")?;
                    let j = u8::try_from(j).map_err(|_| err("position must be 0..254".into()))?;
                    let data = hex::decode(&words[2..].concat()).map_err(&err)?;
                    if sources.iter().any(|(p, _)| *p == j) {
                        return Err(err(format!("source {j} given twice")));
                    }
                    sources.push((j, data));
                }
                "repair" => {
                    let idx = num(words.get(1), "repair index")?;
                    let index =
                        u8::try_from(idx).map_err(|_| err("repair index must be 0..255".into()))?;
                    let mut rest = &words[2..];
                    let mut over = None;
                    if let Some(o) = rest.first().and_then(|w| w.strip_prefix("over=")) {
                        over = Some(parse_set(o).map_err(err)?);
                        rest = &rest[1..];
                    }
                    let symbol = hex::decode(&rest.concat()).map_err(&err)?;
                    repairs.push(BlockRepair {
                        index,
                        over,
                        symbol,
                    });
                }
                w => {
                    return Err(err(format!(
                        "unknown item '{w}' (scheme, k, symbol-len, present, source, repair)"
                    )))
                }
            }
        }
        let k = k.ok_or("the block file has no 'k' line")?;
        let t = t.ok_or("the block file has no 'symbol-len' line")?;
        let present = present.unwrap_or_else(|| Bitmap::first(k as usize));
        for (j, _) in &sources {
            if !present.contains(*j) {
                return Err(format!(
                    "source {j} is not in the present set {}",
                    format_set(&present)
                ));
            }
        }
        sources.sort_by_key(|s| s.0);
        Ok(Block {
            scheme,
            k,
            t,
            present,
            sources,
            repairs,
        })
    }

    /// The block file text; `recovered` marks sources with a comment.
    pub fn format(&self, recovered: &Bitmap) -> String {
        let mut s = String::from("# CREM FEC block (crem-ctl fec)\n");
        let _ = writeln!(s, "scheme {}", scheme_to_name(self.scheme));
        let _ = writeln!(s, "k {}", self.k);
        let _ = writeln!(s, "symbol-len {}", self.t);
        let _ = writeln!(s, "present {}", format_set(&self.present));
        for (j, p) in &self.sources {
            let mark = if recovered.contains(*j) {
                "  # recovered"
            } else {
                ""
            };
            let sep = if p.is_empty() { "" } else { " " };
            let _ = writeln!(s, "source {j}{sep}{}{mark}", hex::encode(p));
        }
        for r in &self.repairs {
            let over = r
                .over
                .as_ref()
                .map(|o| format!(" over={}", format_set(o)))
                .unwrap_or_default();
            let _ = writeln!(s, "repair {}{over} {}", r.index, hex::encode(&r.symbol));
        }
        s
    }

    fn code(&self) -> Result<Code, String> {
        Code::new(self.scheme, self.k, self.t)
            .map_err(|e| format!("k {} / symbol-len {}: {e}", self.k, self.t))
    }
}

/// Encodes `payloads` (positions 0..n-1 of a block of k) into m repairs
/// with indices first..first+m-1.
pub fn encode(
    scheme: Scheme,
    k: u8,
    m: u8,
    t: usize,
    first: u8,
    payloads: &[Vec<u8>],
) -> Result<Block, String> {
    if payloads.len() > k as usize {
        return Err(format!(
            "{} source files for a block of k = {k}",
            payloads.len()
        ));
    }
    let code = Code::new(scheme, k, t).map_err(|e| format!("k {k} / symbol-len {t}: {e}"))?;
    let mut enc = BlockEncoder::new(code, first, m)
        .map_err(|e| format!("repair indices {first}..{}: {e}", first as u16 + m as u16))?;
    let mut buf = vec![0u8; enc.buffer_len()];
    fec::zero_repairs(&mut buf);
    let gf = RowPerCall;
    for (j, p) in payloads.iter().enumerate() {
        enc.add_payload(&gf, j as u8, p, &mut buf).map_err(|e| {
            format!(
                "source {j} ({} octets): {e} (symbol-len {t} holds at most {} octets)",
                p.len(),
                t.saturating_sub(2)
            )
        })?;
    }
    let repairs = (0..m)
        .zip(buf.chunks_exact(t.max(1)))
        .map(|(n, sym)| BlockRepair {
            index: enc.repair_index(n).unwrap_or(0),
            over: None,
            symbol: sym.to_vec(),
        })
        .collect();
    Ok(Block {
        scheme,
        k,
        t,
        present: enc.fed(),
        sources: payloads
            .iter()
            .enumerate()
            .map(|(j, p)| (j as u8, p.clone()))
            .collect(),
        repairs,
    })
}

/// Recovers the missing present sources; returns the completed block and
/// the set of recovered positions.
pub fn decode(b: &Block) -> Result<(Block, Bitmap), String> {
    let code = b.code()?;
    let t = b.t;
    let mut symbols: Vec<Option<Vec<u8>>> = vec![None; b.k as usize];
    for (j, p) in &b.sources {
        if *j >= b.k {
            return Err(format!("source {j} is outside the block (k = {})", b.k));
        }
        let mut s = vec![0u8; t];
        build_source_symbol(p, t, &mut s)
            .map_err(|e| format!("source {j} ({} octets): {e}", p.len()))?;
        symbols[*j as usize] = Some(s);
    }
    let src_refs: Vec<Option<&[u8]>> = symbols.iter().map(|s| s.as_deref()).collect();
    let reps: Vec<fec::Repair> = b
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
    let missing = b.present.len() - b.sources.len();
    let mut out = vec![0u8; missing * t];
    let recovered = fec::decode(
        &RowPerCall,
        &code,
        &b.present,
        &view,
        &mut scratch,
        &mut out,
    )
    .map_err(|e| format!("cannot decode: {e}"))?;
    let mut done = b.clone();
    for (j, sym) in recovered.iter().zip(out.chunks_exact(t.max(1))) {
        let p = parse_source_symbol(sym).map_err(|e| {
            format!(
                "recovered source {j} is not a valid source symbol ({e}): a repair symbol is wrong"
            )
        })?;
        done.sources.push((j, p.to_vec()));
    }
    done.sources.sort_by_key(|s| s.0);
    Ok((done, recovered))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payloads() -> Vec<Vec<u8>> {
        vec![
            b"hello, CREM".to_vec(),
            vec![],
            (0u8..=60).collect(),
            b"the fourth payload".to_vec(),
        ]
    }

    #[test]
    fn sets() {
        let b = parse_set("0-3, 5,7-8").unwrap();
        assert_eq!(format_set(&b), "0-3,5,7-8");
        assert_eq!(format_set(&Bitmap::EMPTY), "none");
        assert!(parse_set("3-1").is_err());
        assert!(parse_set("x").is_err());
    }

    #[test]
    fn encode_drop_decode_round_trip() {
        for (scheme, m, drop) in [
            (Scheme::CauchyRs, 2u8, vec![0u8, 2]),
            (Scheme::CauchyRs, 3, vec![1, 2, 3]),
            (Scheme::Xor, 1, vec![3]),
        ] {
            let full = encode(scheme, 4, m, 64, 0, &payloads()).unwrap();
            // Through the text format, as a user would.
            let text = full.format(&Bitmap::EMPTY);
            assert_eq!(Block::parse(&text).unwrap(), full);
            let kept: String = text
                .lines()
                .filter(|l| {
                    !drop
                        .iter()
                        .any(|d| l.split_whitespace().take(2).eq(["source", &d.to_string()]))
                })
                .map(|l| format!("{l}\n"))
                .collect();
            let lossy = Block::parse(&kept).unwrap();
            assert_eq!(lossy.sources.len(), 4 - drop.len());
            let (done, rec) = decode(&lossy).unwrap();
            assert_eq!(rec.iter().collect::<Vec<_>>(), drop);
            assert_eq!(done.sources, full.sources, "{scheme:?}");
            assert!(done.format(&rec).contains("  # recovered"));
        }
    }

    #[test]
    fn too_many_losses_and_bad_input() {
        let full = encode(Scheme::CauchyRs, 4, 1, 64, 0, &payloads()).unwrap();
        let mut lossy = full.clone();
        lossy.sources.retain(|s| s.0 >= 2);
        assert_eq!(
            decode(&lossy).unwrap_err(),
            "cannot decode: insufficient repairs: 1 for 2 unknown sources"
        );
        assert!(encode(Scheme::CauchyRs, 4, 1, 8, 0, &payloads())
            .unwrap_err()
            .contains("source 0"));
        assert!(encode(Scheme::CauchyRs, 2, 1, 64, 0, &payloads())
            .unwrap_err()
            .contains("k = 2"));
        assert!(encode(Scheme::Xor, 4, 2, 64, 0, &payloads()).is_err());
        assert!(encode(Scheme::CauchyRs, 200, 60, 64, 0, &[]).is_err());
        // A corrupted repair is detected, not silently decoded.
        let mut bad = full.clone();
        bad.sources.retain(|s| s.0 != 1);
        bad.repairs[0].symbol[10] ^= 0x55;
        assert!(decode(&bad).unwrap_err().contains("repair symbol is wrong"));
    }

    #[test]
    fn retransmission_over_an_explicit_set() {
        // A coded retransmission over L = {1,2} with index 7 recovers one of them.
        let full = encode(Scheme::CauchyRs, 4, 0, 64, 0, &payloads()).unwrap();
        let code = Code::new(Scheme::CauchyRs, 4, 64).unwrap();
        let syms: Vec<Vec<u8>> = full
            .sources
            .iter()
            .map(|(_, p)| {
                let mut s = vec![0u8; 64];
                build_source_symbol(p, 64, &mut s).unwrap();
                s
            })
            .collect();
        let mut out = vec![0u8; 64];
        let l = fec::encode_over(
            &RowPerCall,
            &code,
            7,
            [(1u8, &syms[1][..]), (2, &syms[2][..])],
            &mut out,
        )
        .unwrap();
        let text = format!(
            "k 4\nsymbol-len 64\nsource 0 {}\nsource 1 {}\nsource 3 {}\nrepair 7 over={} {}\n",
            hex::encode(&full.sources[0].1),
            hex::encode(&full.sources[1].1),
            hex::encode(&full.sources[3].1),
            format_set(&l),
            hex::encode(&out)
        );
        let (done, rec) = decode(&Block::parse(&text).unwrap()).unwrap();
        assert_eq!(format_set(&rec), "2");
        assert_eq!(done.sources, full.sources);
    }

    #[test]
    fn block_file_errors() {
        assert!(Block::parse("symbol-len 8\n")
            .unwrap_err()
            .contains("no 'k'"));
        assert!(Block::parse("k 2\n")
            .unwrap_err()
            .contains("no 'symbol-len'"));
        assert!(Block::parse("k 2\nt 8\nsource 5 00\n")
            .unwrap_err()
            .contains("not in the present set"));
        assert!(Block::parse("k 2\nt 8\nbogus\n")
            .unwrap_err()
            .contains("line 3: unknown item"));
        assert!(Block::parse("k 2\nt 8\nsource 0 0g\n")
            .unwrap_err()
            .contains("line 3"));
    }
}
