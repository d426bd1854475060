//! Netlink attributes of the "crem" family as a small typed tree, encoded
//! and decoded with netlink-packet-core's NLA machinery and checked against
//! the attribute tables of [`crate::uapi`].

use crate::uapi::{AttrSet, AttrType};
use netlink_packet_core::{
    emit_u16, emit_u32, emit_u64, parse_u16, parse_u32, parse_u64, parse_u8, DecodeError, Emitable,
    Nla, NlaBuffer, NlasIterator, NLA_F_NESTED,
};

/// A decoded or to-be-encoded attribute value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    Bytes(Vec<u8>),
    Nest(Vec<Attr>),
}

/// One attribute: its id within its set and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attr {
    pub id: u16,
    pub value: Value,
}

impl Attr {
    pub fn u8(id: u16, v: u8) -> Self {
        Attr {
            id,
            value: Value::U8(v),
        }
    }
    pub fn u16(id: u16, v: u16) -> Self {
        Attr {
            id,
            value: Value::U16(v),
        }
    }
    pub fn u32(id: u16, v: u32) -> Self {
        Attr {
            id,
            value: Value::U32(v),
        }
    }
    pub fn u64(id: u16, v: u64) -> Self {
        Attr {
            id,
            value: Value::U64(v),
        }
    }
    pub fn bytes(id: u16, v: Vec<u8>) -> Self {
        Attr {
            id,
            value: Value::Bytes(v),
        }
    }
    pub fn nest(id: u16, v: Vec<Attr>) -> Self {
        Attr {
            id,
            value: Value::Nest(v),
        }
    }

    /// Integer value of any width.
    pub fn as_uint(&self) -> Option<u64> {
        match self.value {
            Value::U8(v) => Some(v.into()),
            Value::U16(v) => Some(v.into()),
            Value::U32(v) => Some(v.into()),
            Value::U64(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match &self.value {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_nest(&self) -> Option<&[Attr]> {
        match &self.value {
            Value::Nest(v) => Some(v),
            _ => None,
        }
    }
}

impl Nla for Attr {
    fn value_len(&self) -> usize {
        match &self.value {
            Value::U8(_) => 1,
            Value::U16(_) => 2,
            Value::U32(_) => 4,
            Value::U64(_) => 8,
            Value::Bytes(b) => b.len(),
            Value::Nest(v) => v.as_slice().buffer_len(),
        }
    }

    fn kind(&self) -> u16 {
        match self.value {
            // Strict validation (the genetlink default) wants the flag.
            Value::Nest(_) => self.id | NLA_F_NESTED,
            _ => self.id,
        }
    }

    fn emit_value(&self, buf: &mut [u8]) {
        // `buf` is exactly value_len() octets (NlaBuffer sizes it).
        match &self.value {
            Value::U8(v) => buf[0] = *v,
            Value::U16(v) => emit_u16(buf, *v).expect("2 octets"),
            Value::U32(v) => emit_u32(buf, *v).expect("4 octets"),
            Value::U64(v) => emit_u64(buf, *v).expect("8 octets"),
            Value::Bytes(b) => buf.copy_from_slice(b),
            Value::Nest(v) => v.as_slice().emit(buf),
        }
    }
}

/// Encodes a list of attributes into their wire octets.
#[cfg(test)]
pub fn encode(attrs: &[Attr]) -> Vec<u8> {
    let mut buf = vec![0u8; attrs.buffer_len()];
    attrs.emit(&mut buf);
    buf
}

/// Decodes the attributes of `set` from `buf`. Attributes the table does
/// not know (a newer kernel) are skipped, as are pads; known ones must have
/// the exact size of their type.
pub fn decode(set: &'static AttrSet, buf: &[u8]) -> Result<Vec<Attr>, DecodeError> {
    let mut out = Vec::new();
    for nla in NlasIterator::new(buf) {
        let nla: NlaBuffer<&[u8]> = nla?;
        let id = nla.kind();
        let Some(spec) = set.by_id(id) else {
            continue;
        };
        let v = nla.value();
        let what = || format!("{}.{}", set.name, spec.name);
        let exact = |n: usize| -> Result<(), DecodeError> {
            if v.len() == n {
                Ok(())
            } else {
                Err(DecodeError::from(format!(
                    "attribute {} has {} octets, expected {n}",
                    what(),
                    v.len()
                )))
            }
        };
        let value = match spec.ty {
            AttrType::Pad => continue,
            AttrType::U8 => {
                exact(1)?;
                Value::U8(parse_u8(v)?)
            }
            AttrType::U16 => {
                exact(2)?;
                Value::U16(parse_u16(v)?)
            }
            AttrType::U32 => {
                exact(4)?;
                Value::U32(parse_u32(v)?)
            }
            AttrType::U64 => {
                exact(8)?;
                Value::U64(parse_u64(v)?)
            }
            // 4 octets, or 8 once the value needs them (nla_put_uint).
            AttrType::Uint => match v.len() {
                4 => Value::U64(parse_u32(v)?.into()),
                8 => Value::U64(parse_u64(v)?),
                n => {
                    return Err(DecodeError::from(format!(
                        "attribute {} has {n} octets, expected 4 or 8",
                        what()
                    )))
                }
            },
            AttrType::Binary => Value::Bytes(v.to_vec()),
            AttrType::Nest(inner) => Value::Nest(decode(inner, v)?),
        };
        out.push(Attr { id, value });
    }
    Ok(out)
}

/// The dotted attribute path (e.g. `config.peer.addr`) of the attribute that
/// starts at byte `offset` of `buf`, an encoding of `set`'s attributes; for
/// the kernel's extack offsets.
pub fn path_at(set: &'static AttrSet, buf: &[u8], offset: usize) -> Option<String> {
    let mut pos = 0usize;
    for nla in NlasIterator::new(buf) {
        let nla: NlaBuffer<&[u8]> = nla.ok()?;
        let len = nla.length() as usize;
        let id = nla.kind();
        let name = set
            .by_id(id)
            .map(|s| s.name.to_string())
            .unwrap_or_else(|| format!("{id}"));
        let full = format!("{}.{name}", set.name);
        if offset == pos {
            return Some(full);
        }
        if offset > pos && offset < pos + len {
            if let Some(AttrType::Nest(inner)) = set.by_id(id).map(|s| s.ty) {
                let inner_path = path_at(inner, nla.value(), offset - pos - 4)?;
                // inner_path starts with the inner set's name: replace it.
                let rest = inner_path.split_once('.').map(|x| x.1).unwrap_or("");
                return Some(format!("{full}.{rest}"));
            }
            return Some(full);
        }
        pos += (len + 3) & !3;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uapi::*;

    #[test]
    fn encodes_like_the_kernel() {
        // A config-set request (the config set's attributes at the top
        // level): port 50000, k 16, one reporter, one peer — octet by octet.
        let attrs = vec![
            Attr::u16(CONFIG_PORT, 50000),
            Attr::u8(CONFIG_K, 16),
            Attr::bytes(CONFIG_REPORTER, vec![198, 51, 100, 1]),
            Attr::nest(
                CONFIG_PEER,
                vec![
                    Attr::bytes(PEER_PREFIX, vec![203, 0, 113, 0]),
                    Attr::u8(PEER_PREFIX_LEN, 24),
                    Attr::bytes(PEER_ADDR, vec![198, 51, 100, 2]),
                ],
            ),
        ];
        let want: Vec<u8> = vec![
            6, 0, 1, 0, 0x50, 0xc3, 0, 0, // port 50000 (host order), padded
            5, 0, 5, 0, 16, 0, 0, 0, // k 16, padded
            8, 0, 13, 0, 198, 51, 100, 1, // reporter
            28, 0, 14, 0x80, // peer | NLA_F_NESTED, 4 + 24
            8, 0, 1, 0, 203, 0, 113, 0, // prefix
            5, 0, 2, 0, 24, 0, 0, 0, // prefix-len
            8, 0, 3, 0, 198, 51, 100, 2, // addr
        ];
        assert_eq!(encode(&attrs), want);
        assert_eq!(decode(&CONFIG_SET, &want).unwrap(), attrs);
    }

    #[test]
    fn decodes_uint_of_4_or_8_octets_u64_with_pad_and_skips_unknown() {
        let buf: Vec<u8> = vec![
            8, 0, 6, 0, 42, 0, 0, 0, // malformed = 42 (a uint in 4 octets)
            12, 0, 7, 0, 0, 0, 0, 0, 1, 0, 0, 0, // flows-created = 2^32
            8, 0, 99, 0, 1, 2, 3, 4, // unknown id 99: skipped
        ];
        let got = decode(&STATS_SET, &buf).unwrap();
        assert_eq!(
            got,
            vec![
                Attr::u64(STATS_MALFORMED, 42),
                Attr::u64(STATS_FLOWS_CREATED, 1 << 32)
            ]
        );
        // A uint of another width is refused, named.
        let e = decode(&STATS_SET, &[6, 0, 6, 0, 1, 0, 0, 0]).unwrap_err();
        assert!(e.to_string().contains("stats.malformed"), "{e}");
        // A u64 of the config set, after its pad (skipped).
        let buf: Vec<u8> = vec![
            4, 0, 15, 0, // pad
            12, 0, 12, 0, 0, 0, 0, 4, 0, 0, 0, 0, // max-memory 64 MiB
        ];
        let got = decode(&CONFIG_SET, &buf).unwrap();
        assert_eq!(got, vec![Attr::u64(CONFIG_MAX_MEMORY, 64 << 20)]);
    }

    #[test]
    fn rejects_wrong_sizes_and_truncation() {
        let bad_width: Vec<u8> = vec![6, 0, 5, 0, 1, 2, 0, 0]; // k as 2 octets
        let e = decode(&CONFIG_SET, &bad_width).unwrap_err();
        assert!(e.to_string().contains("config.k"), "{e}");
        let truncated: Vec<u8> = vec![8, 0, 1, 0, 1];
        assert!(decode(&CONFIG_SET, &truncated).is_err());
    }

    #[test]
    fn offsets_map_to_attribute_paths() {
        // A config-set request: its attributes at the top level.
        let attrs = vec![
            Attr::u16(CONFIG_PORT, 1),
            Attr::bytes(CONFIG_REPORTER, vec![1, 2, 3, 4, 5]),
            Attr::nest(
                CONFIG_PEER,
                vec![
                    Attr::bytes(PEER_PREFIX, vec![10, 0, 0, 0]),
                    Attr::bytes(PEER_ADDR, vec![0; 16]),
                ],
            ),
            Attr::u8(99, 1),
        ];
        let buf = encode(&attrs);
        let at = |o| path_at(&CONFIG_SET, &buf, o);
        // port at 0 (8 octets padded), reporter at 8 (9, padded to 12), the
        // peer nest at 20, its prefix at 20+4 = 24 and its addr at 24+8 =
        // 32; the nest is 4+8+20 = 32 octets, so id 99 is at 52.
        assert_eq!(at(0).as_deref(), Some("config.port"));
        assert_eq!(at(8).as_deref(), Some("config.reporter"));
        // Within an attribute's value: that attribute.
        assert_eq!(at(12).as_deref(), Some("config.reporter"));
        assert_eq!(at(20).as_deref(), Some("config.peer"));
        assert_eq!(at(24).as_deref(), Some("config.peer.prefix"));
        assert_eq!(at(32).as_deref(), Some("config.peer.addr"));
        // One the set lacks (the kernel's "Unsupported attribute"): its id.
        assert_eq!(at(52).as_deref(), Some("config.99"));
        assert_eq!(at(1000), None);
    }
}
