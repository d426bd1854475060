//! REPAIR (type 1).
//!
//! ```text
//! | Config ID     | Scheme        | k             | Repair Index  |
//! | Block Start PSN (24)                          | Reserved      |
//! | Repair Session ID             | Symbol Length T               |
//! | Present Bitmap (ceil(k/32) 32-bit words)                      |
//! | Lost Source Bitmap (ceil(k/32) words, RETX flag only)         |
//! | Repair Symbol (T octets)                                      |
//! ```
//!
//! Length = 20 + 4·ceil(k/32)·(1 + RETX) + T.
//!
//! Validation (decode and encode):
//! * k in 1..=255; no Present bit at a position ≥ k; at least one Present bit;
//! * RETX (Lost Source Bitmap present): the set is non-empty, below k and a
//!   subset of the Present set (L names lost *sources*);
//! * INFO: Symbol Length is 0 and RETX is not set; without INFO, T ≥ 1;
//! * scheme 1 (Cauchy RS): `i + k <= 255` ([`cauchy_index_ok`]);
//!   scheme 0 (Source Copy): `i < k` and position i present;
//!   scheme 2 (XOR parity): `i == 0` and no RETX (no coded retransmission);
//!   other schemes: no index rule. The index rules are not applied to INFO
//!   messages, which carry no symbol.

use super::bitmap::words_for;
use super::{check_k, open, start, Bitmap256, Error, MessageType, Psn, Result, HEADER_LEN};

/// Flag 0x80 RETX: coded retransmission; the Lost Source Bitmap is present.
pub const FLAG_RETX: u8 = 0x80;
/// Flag 0x40 LAST: last repair symbol the CSF intends to send for this block in
/// this round.
pub const FLAG_LAST: u8 = 0x40;
/// Flag 0x20 INFO: block information only; T = 0 and no symbol follows.
pub const FLAG_INFO: u8 = 0x20;

/// Octets of the REPAIR fixed part after the common header.
const FIXED: usize = 12;

/// FEC scheme identifiers (8 bits, "CREM FEC Schemes" registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FecScheme {
    /// 0: Source Copy (per-packet retransmission).
    SourceCopy,
    /// 1: Cauchy Reed-Solomon over GF(2^8) (mandatory).
    CauchyRs,
    /// 2: XOR parity (m = 1).
    XorParity,
    /// Any other value (unassigned or private use). Never holds 0, 1 or 2 when
    /// produced by [`FecScheme::from_u8`].
    Other(u8),
}

impl FecScheme {
    /// Maps a wire value to the scheme.
    pub const fn from_u8(v: u8) -> FecScheme {
        match v {
            0 => FecScheme::SourceCopy,
            1 => FecScheme::CauchyRs,
            2 => FecScheme::XorParity,
            o => FecScheme::Other(o),
        }
    }

    /// The wire value.
    pub const fn to_u8(self) -> u8 {
        match self {
            FecScheme::SourceCopy => 0,
            FecScheme::CauchyRs => 1,
            FecScheme::XorParity => 2,
            FecScheme::Other(o) => o,
        }
    }

    /// Bit of this scheme in the HELLO Supported Schemes bitmap (bit s from
    /// the least significant bit), or 0 for schemes ≥ 16.
    pub const fn support_bit(self) -> u16 {
        let s = self.to_u8();
        if s < 16 {
            1 << s
        } else {
            0
        }
    }
}

/// Scheme 1 rule: a Repair Index `i` may be used in a block of `k` positions
/// only if `i + k <= 255` (so that every coefficient `1 / (x_i + y_j)` exists).
#[inline]
pub const fn cauchy_index_ok(k: u8, i: u8) -> bool {
    (i as u16) + (k as u16) <= 255
}

/// Scheme-specific Repair Index rule used by the REPAIR codec (see the module
/// docs). `present` is the block's Present Bitmap; `retx` whether the message
/// is a coded retransmission.
pub fn repair_index_ok(scheme: FecScheme, k: u8, i: u8, present: &Bitmap256, retx: bool) -> bool {
    match scheme {
        FecScheme::CauchyRs => cauchy_index_ok(k, i),
        FecScheme::SourceCopy => i < k && present.get(i as usize),
        FecScheme::XorParity => i == 0 && !retx,
        FecScheme::Other(_) => true,
    }
}

/// A REPAIR message. The symbol is borrowed from the decoded buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repair<'a> {
    /// Flow ID from the header.
    pub flow_id: u32,
    /// LAST flag.
    pub last: bool,
    /// INFO flag (block information only; `symbol` is empty).
    pub info: bool,
    /// Configuration the block uses.
    pub config_id: u8,
    /// FEC scheme of the symbol.
    pub scheme: FecScheme,
    /// Block size k (1..=255).
    pub k: u8,
    /// Repair Index i.
    pub repair_index: u8,
    /// PSN of position 0 of the block.
    pub block_start: Psn,
    /// Repair Session ID (Request ID of the triggering request; 0 for ordinary
    /// repair symbols).
    pub session_id: u16,
    /// Present Bitmap: positions that carry a source packet.
    pub present: Bitmap256,
    /// Lost Source Bitmap (the set L); `Some` exactly when the RETX flag is set.
    pub lost: Option<Bitmap256>,
    /// The repair symbol, T octets (empty for INFO).
    pub symbol: &'a [u8],
}

impl<'a> Repair<'a> {
    /// A tail notice (our ruling, README "Tail notice"): INFO with LAST and
    /// Repair Session ID 0, which no request uses. It ends a block's
    /// ordinary round and answers nothing.
    #[inline]
    pub const fn is_tail_notice(&self) -> bool {
        self.info && self.last && self.session_id == 0
    }

    /// Number of 32-bit words of each bitmap, `ceil(k/32)`.
    #[inline]
    pub const fn bitmap_words(&self) -> usize {
        words_for(self.k as usize)
    }

    /// Length of everything before the symbol (header, fixed part, bitmaps).
    #[inline]
    pub const fn header_len(&self) -> usize {
        let w = self.bitmap_words() * 4;
        HEADER_LEN + FIXED + if self.lost.is_some() { 2 * w } else { w }
    }

    /// Total encoded length.
    #[inline]
    pub const fn encoded_len(&self) -> usize {
        self.header_len().saturating_add(self.symbol.len())
    }

    /// The flags octet this message encodes to.
    pub const fn flags(&self) -> u8 {
        (if self.lost.is_some() { FLAG_RETX } else { 0 })
            | (if self.last { FLAG_LAST } else { 0 })
            | (if self.info { FLAG_INFO } else { 0 })
    }

    /// Applies the validation rules with a symbol of `symbol_len` octets.
    fn validate(&self, symbol_len: usize) -> Result<()> {
        check_k(self.k)?;
        let k = self.k as usize;
        if self.present.is_empty() || !self.present.fits(k) {
            return Err(Error::BadField("present_bitmap"));
        }
        if let Some(lost) = &self.lost {
            if lost.is_empty() || !lost.is_subset_of(&self.present) {
                return Err(Error::BadField("lost_bitmap"));
            }
        }
        if self.info {
            if symbol_len != 0 {
                return Err(Error::BadField("symbol_length"));
            }
            if self.lost.is_some() {
                return Err(Error::BadField("flags"));
            }
        } else {
            if symbol_len == 0 || symbol_len > u16::MAX as usize {
                return Err(Error::BadField("symbol_length"));
            }
            if !repair_index_ok(
                self.scheme,
                self.k,
                self.repair_index,
                &self.present,
                self.lost.is_some(),
            ) {
                return Err(Error::BadField("repair_index"));
            }
        }
        Ok(())
    }

    /// Decodes a REPAIR message (header included).
    pub fn decode(buf: &'a [u8]) -> Result<Repair<'a>> {
        let (h, mut r) = open(buf, MessageType::Repair)?;
        let config_id = r.u8()?;
        let scheme = FecScheme::from_u8(r.u8()?);
        let k = r.u8()?;
        let repair_index = r.u8()?;
        let (block_start, _reserved) = r.psn_u8()?;
        let session_id = r.u16()?;
        let t = r.u16()? as usize;
        check_k(k)?;
        let words = words_for(k as usize);
        let present = r.bitmap(words)?;
        let lost = if h.flags & FLAG_RETX != 0 {
            Some(r.bitmap(words)?)
        } else {
            None
        };
        if r.remaining() != t {
            return Err(Error::BadLength);
        }
        let symbol = r.take(t)?;
        r.finish()?;
        let m = Repair {
            flow_id: h.flow_id,
            last: h.flags & FLAG_LAST != 0,
            info: h.flags & FLAG_INFO != 0,
            config_id,
            scheme,
            k,
            repair_index,
            block_start,
            session_id,
            present,
            lost,
            symbol,
        };
        m.validate(t)?;
        Ok(m)
    }

    /// Encodes the message (header, bitmaps and `self.symbol`) into `buf`.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        let hl = self.encode_header(self.symbol.len(), buf)?;
        let end = hl.saturating_add(self.symbol.len());
        let dst = buf
            .get_mut(hl..end)
            .ok_or(Error::BufferTooSmall { needed: end })?;
        // Same length by construction; zip keeps a panic path out.
        for (d, s) in dst.iter_mut().zip(self.symbol) {
            *d = *s;
        }
        Ok(end)
    }

    /// Encodes everything but the symbol, for a symbol of `symbol_len` octets
    /// that the caller then writes (or computes in place) at
    /// `buf[returned..returned + symbol_len]`. `self.symbol` is ignored.
    /// `buf` must hold the whole message (`header_len() + symbol_len`).
    pub fn encode_header(&self, symbol_len: usize, buf: &mut [u8]) -> Result<usize> {
        self.validate(symbol_len)?;
        let hl = self.header_len();
        let len = hl.saturating_add(symbol_len);
        let mut w = start(buf, len, MessageType::Repair, self.flags(), self.flow_id)?;
        w.u8(self.config_id)?;
        w.u8(self.scheme.to_u8())?;
        w.u8(self.k)?;
        w.u8(self.repair_index)?;
        w.psn_u8(self.block_start, 0)?;
        w.u16(self.session_id)?;
        w.u16(symbol_len as u16)?;
        let words = self.bitmap_words();
        w.bitmap(&self.present, words)?;
        if let Some(lost) = &self.lost {
            w.bitmap(lost, words)?;
        }
        Ok(hl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R2L: [u8; 16] = [
        0x00, 0x35, 0x4f, 0xdf, 0x6d, 0x4b, 0x40, 0xb5, 0x7e, 0x5c, 0x40, 0x00, 0x00, 0x00, 0x00,
        0x00,
    ];
    const HDR: [u8; 28] = [
        0x11, 0x80, 0x00, 0x2c, 0x00, 0x00, 0xbe, 0xef, 0x01, 0x01, 0x04, 0x02, 0x00, 0x10, 0x00,
        0x00, 0x00, 0x07, 0x00, 0x10, 0xf0, 0x00, 0x00, 0x00, 0xe0, 0x00, 0x00, 0x00,
    ];

    fn example() -> Repair<'static> {
        Repair {
            flow_id: 0x0000_BEEF,
            last: false,
            info: false,
            config_id: 1,
            scheme: FecScheme::CauchyRs,
            k: 4,
            repair_index: 2,
            block_start: Psn::new(0x001000),
            session_id: 7,
            present: Bitmap256::first_n(4),
            lost: Some(Bitmap256::first_n(3)),
            symbol: &R2L,
        }
    }

    #[test]
    fn draft_example_byte_exact() {
        let m = example();
        assert_eq!(m.encoded_len(), 44);
        let mut buf = [0u8; 64];
        let n = m.encode(&mut buf).unwrap();
        assert_eq!(n, 44);
        assert_eq!(&buf[..28], &HDR[..]);
        assert_eq!(&buf[28..44], &R2L[..]);
        let d = Repair::decode(&buf[..n]).unwrap();
        assert_eq!(d, m);
        assert_eq!(d.present.words()[0], 0xF000_0000);
        assert_eq!(d.lost.unwrap().words()[0], 0xE000_0000);
    }

    #[test]
    fn buffer_too_small() {
        let m = example();
        let mut buf = [0u8; 43];
        assert_eq!(
            m.encode(&mut buf),
            Err(Error::BufferTooSmall { needed: 44 })
        );
        let mut buf = [0u8; 44];
        assert_eq!(m.encode_header(16, &mut buf), Ok(28));
    }

    #[test]
    fn index_rules() {
        assert!(cauchy_index_ok(4, 251));
        assert!(!cauchy_index_ok(4, 252));
        assert!(cauchy_index_ok(255, 0));
        let mut m = example();
        m.repair_index = 252;
        let mut buf = [0u8; 64];
        assert_eq!(m.encode(&mut buf), Err(Error::BadField("repair_index")));
        // Decoder rejects it too.
        let mut raw = [0u8; 44];
        raw[..28].copy_from_slice(&HDR);
        raw[28..].copy_from_slice(&R2L);
        raw[11] = 252;
        assert_eq!(Repair::decode(&raw), Err(Error::BadField("repair_index")));
        raw[11] = 251;
        assert!(Repair::decode(&raw).is_ok());
    }

    #[test]
    fn info_message() {
        let m = Repair {
            info: true,
            lost: None,
            symbol: &[],
            ..example()
        };
        let mut buf = [0u8; 64];
        let n = m.encode(&mut buf).unwrap();
        assert_eq!(n, 24);
        assert_eq!(buf[1], FLAG_INFO);
        assert_eq!(&buf[18..20], &[0, 0]);
        assert_eq!(Repair::decode(&buf[..n]).unwrap(), m);
        // INFO with a symbol is invalid.
        let bad = Repair { symbol: &R2L, ..m };
        assert_eq!(bad.encode(&mut buf), Err(Error::BadField("symbol_length")));
    }

    #[test]
    fn bitmap_rules() {
        let mut buf = [0u8; 64];
        let mut m = example();
        m.present.set(4);
        assert_eq!(m.encode(&mut buf), Err(Error::BadField("present_bitmap")));
        let mut m = example();
        m.present = Bitmap256::first_n(2);
        assert_eq!(m.encode(&mut buf), Err(Error::BadField("lost_bitmap")));
        let mut m = example();
        m.lost = Some(Bitmap256::EMPTY);
        assert_eq!(m.encode(&mut buf), Err(Error::BadField("lost_bitmap")));
        // Length off by one.
        let m = example();
        let n = m.encode(&mut buf).unwrap();
        buf[3] = 45;
        assert_eq!(Repair::decode(&buf[..n + 1]), Err(Error::BadLength));
        buf[3] = 43;
        assert_eq!(Repair::decode(&buf[..n]), Err(Error::BadLength));
    }
}
