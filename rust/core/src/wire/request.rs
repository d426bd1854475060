//! REPAIR_REQUEST (type 6), block form and PSN-range form.
//!
//! Block form (flag RANGES clear), after the common header:
//!
//! ```text
//! | Config ID     | Scheme        | k             | Repairs Held r|
//! | Block Start PSN (24)                          | Suggested M   |
//! | Request ID                    | Reserved                      |
//! | Lost Source Bitmap (ceil(k/32) words)                         |
//! ```
//!
//! PSN-range form (flag 0x10 RANGES):
//!
//! ```text
//! | Request ID                    | Range Count                   |
//! | Start PSN (24)                                | Count         |  × Range Count
//! ```
//!
//! Flag 0x20 FALLBACK (either form) requests Source Copy symbols.
//!
//! Validation: block form — k in 1..=255, the Lost Source Bitmap is non-empty
//! and has no bit at a position ≥ k, and Suggested M ≤ X = |L| (the draft's
//! "M_s MUST NOT exceed X"); range form — Range Count ≥ 1 and each Count ≥ 1.

use super::bitmap::words_for;
use super::PsnRange;
use super::{
    check_k, open, start, Bitmap256, Error, FecScheme, MessageType, Psn, Result, HEADER_LEN,
};
use core::fmt;

/// Flag 0x20 FALLBACK: request Source Copy symbols for the lost sources.
pub const FLAG_FALLBACK: u8 = 0x20;
/// Flag 0x10 RANGES: PSN-range form.
pub const FLAG_RANGES: u8 = 0x10;

/// Largest Count of one range entry.
pub const MAX_RANGE_COUNT: u32 = 255;

/// A REPAIR_REQUEST message (CRF → CSF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RepairRequest<'a> {
    /// Flow ID.
    pub flow_id: u32,
    /// FALLBACK flag.
    pub fallback: bool,
    /// Block or range form.
    pub kind: RequestKind<'a>,
}

/// The two forms of a REPAIR_REQUEST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind<'a> {
    /// Block form: the CRF knows the block.
    Block(BlockRequest),
    /// PSN-range form (flag RANGES).
    Ranges(RangeRequest<'a>),
}

/// Block form of a REPAIR_REQUEST.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockRequest {
    /// Config ID of the block.
    pub config_id: u8,
    /// Scheme of the block.
    pub scheme: FecScheme,
    /// Block size k (1..=255).
    pub k: u8,
    /// Repairs Held r: repair symbols the CRF holds for the block.
    pub repairs_held: u8,
    /// Block Start PSN.
    pub block_start: Psn,
    /// Suggested M (M_s ≤ |lost|).
    pub suggested_m: u8,
    /// Request ID (echoed as Repair Session ID in the answer).
    pub request_id: u16,
    /// Lost Source Bitmap: the set L.
    pub lost: Bitmap256,
}

/// PSN-range form of a REPAIR_REQUEST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeRequest<'a> {
    /// Request ID.
    pub request_id: u16,
    /// The lost ranges (each 1..=255 PSNs).
    pub ranges: LostRanges<'a>,
}

impl BlockRequest {
    /// X = |L|, the number of lost sources.
    pub const fn lost_count(&self) -> u32 {
        self.lost.count()
    }

    fn validate(&self) -> Result<()> {
        check_k(self.k)?;
        if self.lost.is_empty() || !self.lost.fits(self.k as usize) {
            return Err(Error::BadField("lost_bitmap"));
        }
        if self.suggested_m as u32 > self.lost.count() {
            return Err(Error::BadField("suggested_m"));
        }
        Ok(())
    }
}

impl<'a> RepairRequest<'a> {
    /// Encoded length.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN.saturating_add(match &self.kind {
            RequestKind::Block(b) => 12 + 4 * words_for(b.k as usize),
            RequestKind::Ranges(r) => r.ranges.len().saturating_mul(4).saturating_add(4),
        })
    }

    /// The flags octet this message encodes to.
    pub const fn flags(&self) -> u8 {
        (if self.fallback { FLAG_FALLBACK } else { 0 })
            | match self.kind {
                RequestKind::Block(_) => 0,
                RequestKind::Ranges(_) => FLAG_RANGES,
            }
    }

    /// The Request ID of either form.
    pub const fn request_id(&self) -> u16 {
        match &self.kind {
            RequestKind::Block(b) => b.request_id,
            RequestKind::Ranges(r) => r.request_id,
        }
    }

    /// Decodes a REPAIR_REQUEST.
    pub fn decode(buf: &'a [u8]) -> Result<RepairRequest<'a>> {
        let (h, mut r) = open(buf, MessageType::RepairRequest)?;
        let kind = if h.flags & FLAG_RANGES != 0 {
            let request_id = r.u16()?;
            let count = r.u16()? as usize;
            if count == 0 {
                return Err(Error::BadField("range_count"));
            }
            if r.remaining() != count * 4 {
                return Err(Error::BadLength);
            }
            let bytes = r.take(count * 4)?;
            r.finish()?;
            let ranges = LostRanges(Inner::Wire(bytes));
            if ranges.iter().any(|x| x.count == 0) {
                return Err(Error::BadField("range.count"));
            }
            RequestKind::Ranges(RangeRequest { request_id, ranges })
        } else {
            let config_id = r.u8()?;
            let scheme = FecScheme::from_u8(r.u8()?);
            let k = r.u8()?;
            let repairs_held = r.u8()?;
            let (block_start, suggested_m) = r.psn_u8()?;
            let request_id = r.u16()?;
            let _reserved = r.u16()?;
            check_k(k)?;
            let lost = r.bitmap(words_for(k as usize))?;
            r.finish()?;
            let b = BlockRequest {
                config_id,
                scheme,
                k,
                repairs_held,
                block_start,
                suggested_m,
                request_id,
                lost,
            };
            b.validate()?;
            RequestKind::Block(b)
        };
        Ok(RepairRequest {
            flow_id: h.flow_id,
            fallback: h.flags & FLAG_FALLBACK != 0,
            kind,
        })
    }

    /// Encodes into `buf`.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        match &self.kind {
            RequestKind::Block(b) => b.validate()?,
            RequestKind::Ranges(r) => {
                let n = r.ranges.len();
                if n == 0 || n > u16::MAX as usize {
                    return Err(Error::BadField("range_count"));
                }
                if r.ranges
                    .iter()
                    .any(|x| x.count == 0 || x.count > MAX_RANGE_COUNT)
                {
                    return Err(Error::BadField("range.count"));
                }
            }
        }
        let len = self.encoded_len();
        let mut w = start(
            buf,
            len,
            MessageType::RepairRequest,
            self.flags(),
            self.flow_id,
        )?;
        match &self.kind {
            RequestKind::Block(b) => {
                w.u8(b.config_id)?;
                w.u8(b.scheme.to_u8())?;
                w.u8(b.k)?;
                w.u8(b.repairs_held)?;
                w.psn_u8(b.block_start, b.suggested_m)?;
                w.u16(b.request_id)?;
                w.u16(0)?;
                w.bitmap(&b.lost, words_for(b.k as usize))?;
            }
            RequestKind::Ranges(r) => {
                w.u16(r.request_id)?;
                w.u16(r.ranges.len() as u16)?;
                for x in r.ranges.iter() {
                    w.psn_u8(x.start, x.count as u8)?;
                }
            }
        }
        Ok(len)
    }
}

/// The range list of a PSN-range request: a zero-copy view of the decoded
/// entries, or a caller slice for encoding. Equality compares the ranges.
#[derive(Clone, Copy)]
pub struct LostRanges<'a>(Inner<'a>);

#[derive(Clone, Copy)]
enum Inner<'a> {
    /// Validated wire entries, 4 octets each.
    Wire(&'a [u8]),
    /// Caller-provided ranges.
    Slice(&'a [PsnRange]),
}

impl<'a> LostRanges<'a> {
    /// Ranges to encode. Each count must be 1..=255 (checked by the encoder).
    pub const fn from_slice(ranges: &'a [PsnRange]) -> LostRanges<'a> {
        LostRanges(Inner::Slice(ranges))
    }

    /// Number of entries.
    pub const fn len(&self) -> usize {
        match self.0 {
            Inner::Wire(b) => b.len() / 4,
            Inner::Slice(s) => s.len(),
        }
    }

    /// No entries.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over the ranges.
    pub fn iter(&self) -> LostRangesIter<'a> {
        LostRangesIter(match self.0 {
            Inner::Wire(b) => IterInner::Wire(b),
            Inner::Slice(s) => IterInner::Slice(s.iter()),
        })
    }

    /// Total number of PSNs named.
    pub fn total_psns(&self) -> u64 {
        self.iter()
            .fold(0u64, |n, r| n.saturating_add(r.count as u64))
    }
}

impl PartialEq for LostRanges<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for LostRanges<'_> {}

impl fmt::Debug for LostRanges<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &LostRanges<'a> {
    type Item = PsnRange;
    type IntoIter = LostRangesIter<'a>;
    fn into_iter(self) -> LostRangesIter<'a> {
        self.iter()
    }
}

/// Iterator over [`LostRanges`].
#[derive(Clone, Debug)]
pub struct LostRangesIter<'a>(IterInner<'a>);

#[derive(Clone, Debug)]
enum IterInner<'a> {
    /// Remaining wire entries (4 octets each).
    Wire(&'a [u8]),
    Slice(core::slice::Iter<'a, PsnRange>),
}

impl Iterator for LostRangesIter<'_> {
    type Item = PsnRange;

    fn next(&mut self) -> Option<PsnRange> {
        match &mut self.0 {
            IterInner::Wire(b) => {
                let (&[x, y, z, n], rest) = b.split_first_chunk::<4>()?;
                *b = rest;
                Some(PsnRange::new(Psn::from_be_bytes([x, y, z]), n as u32))
            }
            IterInner::Slice(it) => it.next().copied(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            IterInner::Wire(b) => b.len() / 4,
            IterInner::Slice(it) => it.len(),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for LostRangesIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_form() {
        let mut lost = Bitmap256::new();
        lost.set(0);
        lost.set(1);
        lost.set(2);
        let m = RepairRequest {
            flow_id: 0xbeef,
            fallback: false,
            kind: RequestKind::Block(BlockRequest {
                config_id: 1,
                scheme: FecScheme::CauchyRs,
                k: 4,
                repairs_held: 2,
                block_start: Psn::new(0x1000),
                suggested_m: 1,
                request_id: 7,
                lost,
            }),
        };
        let mut buf = [0u8; 32];
        assert_eq!(m.encode(&mut buf), Ok(24));
        assert_eq!(
            &buf[..24],
            &[
                0x16, 0, 0, 24, 0, 0, 0xbe, 0xef, 1, 1, 4, 2, 0, 0x10, 0, 1, 0, 7, 0, 0, 0xe0, 0,
                0, 0
            ]
        );
        assert_eq!(RepairRequest::decode(&buf[..24]), Ok(m));
        // Suggested M above X.
        buf[15] = 4;
        assert_eq!(
            RepairRequest::decode(&buf[..24]),
            Err(Error::BadField("suggested_m"))
        );
        buf[15] = 1;
        // Lost bit beyond k.
        buf[20] = 0xe8;
        assert_eq!(
            RepairRequest::decode(&buf[..24]),
            Err(Error::BadField("lost_bitmap"))
        );
    }

    #[test]
    fn ranges_form() {
        let ranges = [
            PsnRange::new(Psn::new(0xFF_FFFE), 3),
            PsnRange::new(Psn::new(0x10), 255),
        ];
        let m = RepairRequest {
            flow_id: 5,
            fallback: true,
            kind: RequestKind::Ranges(RangeRequest {
                request_id: 0x1234,
                ranges: LostRanges::from_slice(&ranges),
            }),
        };
        let mut buf = [0u8; 32];
        let n = m.encode(&mut buf).unwrap();
        assert_eq!(n, 20);
        assert_eq!(
            &buf[..n],
            &[
                0x16, 0x30, 0, 20, 0, 0, 0, 5, 0x12, 0x34, 0, 2, 0xff, 0xff, 0xfe, 3, 0, 0, 0x10,
                255
            ]
        );
        let d = RepairRequest::decode(&buf[..n]).unwrap();
        assert_eq!(d, m);
        match d.kind {
            RequestKind::Ranges(r) => assert_eq!(r.ranges.total_psns(), 258),
            RequestKind::Block(_) => panic!(),
        }
        let too_big = [PsnRange::new(Psn::ZERO, 256)];
        let bad = RepairRequest {
            kind: RequestKind::Ranges(RangeRequest {
                request_id: 1,
                ranges: LostRanges::from_slice(&too_big),
            }),
            ..m
        };
        assert_eq!(bad.encode(&mut buf), Err(Error::BadField("range.count")));
        // Range Count not matching Length.
        let n = m.encode(&mut buf).unwrap();
        buf[11] = 3;
        assert_eq!(RepairRequest::decode(&buf[..n]), Err(Error::BadLength));
        buf[11] = 0;
        assert_eq!(
            RepairRequest::decode(&buf[..n]),
            Err(Error::BadField("range_count"))
        );
    }
}
