//! Hex text: the input format of `decode`, `roce` and the `fec` payloads.
//! Whitespace, `:` and `-` separators and an optional `0x` prefix are
//! ignored; `#` starts a comment that runs to the end of the line (the
//! format of crem-core's captured fixtures).

/// Lower-case hex of `b`, no separators.
pub fn encode(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

/// Parses hex text (see the module doc).
pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let mut digits = String::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        for word in line.split_whitespace() {
            let w = word
                .strip_prefix("0x")
                .or_else(|| word.strip_prefix("0X"))
                .unwrap_or(word);
            digits.extend(w.chars().filter(|c| *c != ':' && *c != '-'));
        }
    }
    if let Some(c) = digits.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Err(format!("'{c}' is not a hex digit"));
    }
    if digits.len() % 2 != 0 {
        return Err(format!("odd number of hex digits ({})", digits.len()));
    }
    Ok((0..digits.len() / 2)
        .map(|i| u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).expect("hex digits"))
        .collect())
}

/// A classic hex dump (offset, 16 octets, ASCII), indented.
pub fn dump(b: &[u8], indent: &str) -> String {
    let mut s = String::new();
    for (i, chunk) in b.chunks(16).enumerate() {
        let hex: Vec<String> = chunk.iter().map(|x| format!("{x:02x}")).collect();
        let ascii: String = chunk
            .iter()
            .map(|&c| {
                if (0x20..0x7f).contains(&c) {
                    c as char
                } else {
                    '.'
                }
            })
            .collect();
        s.push_str(&format!(
            "{indent}{:04x}  {:<47}  {ascii}\n",
            i * 16,
            hex.join(" ")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_syntax() {
        assert_eq!(encode(&[0, 0xab, 0x10]), "00ab10");
        assert_eq!(decode("00ab10").unwrap(), vec![0, 0xab, 0x10]);
        assert_eq!(
            decode("# header\n0x45 00\n 00:1c # comment\n").unwrap(),
            vec![0x45, 0, 0, 0x1c]
        );
        assert!(decode("abc").unwrap_err().contains("odd"));
        assert!(decode("zz").unwrap_err().contains("not a hex digit"));
        assert_eq!(decode("").unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn dump_layout() {
        let d = dump(b"CREM\x00\x01", "  ");
        assert_eq!(d, format!("  0000  {:<47}  CREM..\n", "43 52 45 4d 00 01"));
    }
}
