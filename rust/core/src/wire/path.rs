//! PATH_REPORT (type 8).
//!
//! After the common header (whose Flow ID is zero — a Path Reporter does not
//! know it):
//!
//! ```text
//! | Method        | Entry Count   | AF            | Reserved      |
//! | Flow source and destination address (4 or 16 octets each)     |
//! | Flow Label                                                    |
//! | Hop Entry 1 … Hop Entry <Entry Count>                         |
//! ```
//!
//! Hop Entry:
//!
//! ```text
//! | Node ID                                                       |
//! | Marking Period Number                                         |
//! | Lost Count                                                    |
//! | Queue Delay Change (signed, µs)                               |
//! | Cause         | PSN Count     | Reserved                      |
//! | Reserved      | Dropped PSN (24 bits)                         |  × PSN Count
//! ```
//!
//! **Packing of the dropped-PSN list (decision).** The figure's last row,
//! "Reserved (8) | Dropped PSN (24 bits), repeated PSN Count", is read as one
//! 32-bit word per dropped PSN: a reserved octet (sent as zero, ignored on
//! receipt) followed by the 24-bit PSN, repeated PSN Count times, directly
//! after the `Cause | PSN Count | Reserved` word. A hop entry is therefore
//! `20 + 4 × PSN Count` octets and every field stays 32-bit aligned. With
//! PSN Count = 0 the entry is 20 octets. The alternative reading (one
//! reserved octet, then densely packed 3-octet PSNs) would break the 32-bit
//! alignment the rest of the format keeps and was rejected.
//!
//! Validation: Method ≠ 0 (reserved); Entry Count ≤ 16; AF 4 or 6; header
//! Flow ID 0; Length exactly covers the entries. Flag 0x80 Truncated.

use super::hello::parse_af;
use super::{open, start, Error, FlowAddrs, MessageType, Psn, Result, HEADER_LEN};
use core::fmt;

/// Flag 0x80 Truncated: the reporter truncated dropped-PSN lists.
pub const FLAG_TRUNCATED: u8 = 0x80;
/// Largest Entry Count.
pub const MAX_HOP_ENTRIES: usize = 16;
/// Fixed octets of a hop entry before its dropped PSNs.
const HOP_FIXED: usize = 20;

/// Measurement methods ("CREM Measurement Methods" registry; 0 reserved).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// 1: Alternate Marking.
    AlternateMarking,
    /// 2: Clustered Alternate Marking.
    ClusteredAlternateMarking,
    /// 3: node-local drop accounting.
    NodeLocalDrop,
    /// Any other non-zero value.
    Other(u8),
}

impl Method {
    /// Maps the wire value; `None` for the reserved value 0.
    pub const fn from_u8(v: u8) -> Option<Method> {
        match v {
            0 => None,
            1 => Some(Method::AlternateMarking),
            2 => Some(Method::ClusteredAlternateMarking),
            3 => Some(Method::NodeLocalDrop),
            o => Some(Method::Other(o)),
        }
    }

    /// The wire value.
    pub const fn to_u8(self) -> u8 {
        match self {
            Method::AlternateMarking => 1,
            Method::ClusteredAlternateMarking => 2,
            Method::NodeLocalDrop => 3,
            Method::Other(o) => o,
        }
    }
}

/// Loss causes ("CREM Loss Causes" registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LossCause {
    /// 0: unknown.
    Unknown,
    /// 1: queue overflow (congestion).
    QueueOverflow,
    /// 2: transmission error.
    TransmissionError,
    /// Any other value (never 0..=2 when produced by [`LossCause::from_u8`]).
    Other(u8),
}

impl LossCause {
    /// Maps the wire value.
    pub const fn from_u8(v: u8) -> LossCause {
        match v {
            0 => LossCause::Unknown,
            1 => LossCause::QueueOverflow,
            2 => LossCause::TransmissionError,
            o => LossCause::Other(o),
        }
    }

    /// The wire value.
    pub const fn to_u8(self) -> u8 {
        match self {
            LossCause::Unknown => 0,
            LossCause::QueueOverflow => 1,
            LossCause::TransmissionError => 2,
            LossCause::Other(o) => o,
        }
    }
}

/// A PATH_REPORT message (Path Reporter → CSF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathReport<'a> {
    /// Truncated flag.
    pub truncated: bool,
    /// Measurement method.
    pub method: Method,
    /// Addresses of the protected flow (AF follows from the variant).
    pub addrs: FlowAddrs,
    /// Flow Label (RoCEv2: destination QP in the low 24 bits).
    pub flow_label: u32,
    /// Hop entries (at most 16).
    pub hops: HopEntries<'a>,
}

/// One hop entry of a PATH_REPORT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopEntry<'a> {
    /// Node identifier.
    pub node_id: u32,
    /// Marking period number.
    pub period: u32,
    /// Packets lost in the period.
    pub lost_count: u32,
    /// Change of queueing delay in microseconds (signed).
    pub queue_delay_change_us: i32,
    /// Cause code.
    pub cause: LossCause,
    /// PSNs the node dropped itself (at most 255).
    pub dropped: DroppedPsns<'a>,
}

impl HopEntry<'_> {
    /// Encoded size of this entry.
    pub fn wire_len(&self) -> usize {
        self.dropped
            .len()
            .saturating_mul(4)
            .saturating_add(HOP_FIXED)
    }
}

/// Parses one hop entry from the front of `b`.
fn parse_hop(b: &[u8]) -> Option<(HopEntry<'_>, &[u8])> {
    let (f, rest) = b.split_first_chunk::<HOP_FIXED>()?;
    let be32 = |i: usize| -> u32 {
        match f.get(i..i + 4) {
            Some(&[a, b, c, d]) => u32::from_be_bytes([a, b, c, d]),
            _ => 0,
        }
    };
    let node_id = be32(0);
    let period = be32(4);
    let lost_count = be32(8);
    let queue_delay_change_us = be32(12) as i32;
    let cause = LossCause::from_u8(f[16]);
    let n = f[17] as usize;
    let (list, rest) = rest.split_at_checked(n * 4)?;
    Some((
        HopEntry {
            node_id,
            period,
            lost_count,
            queue_delay_change_us,
            cause,
            dropped: DroppedPsns(PsnsInner::Wire(list)),
        },
        rest,
    ))
}

impl<'a> PathReport<'a> {
    /// Encoded length.
    pub fn encoded_len(&self) -> usize {
        // Saturating, so absurd caller-built inputs cannot overflow; such a
        // message is then rejected by the encoder.
        let fixed = HEADER_LEN + 4 + self.addrs.wire_len() + 4;
        self.hops
            .iter()
            .fold(fixed, |acc, h| acc.saturating_add(h.wire_len()))
    }

    /// The flags octet this message encodes to.
    pub const fn flags(&self) -> u8 {
        if self.truncated {
            FLAG_TRUNCATED
        } else {
            0
        }
    }

    /// Decodes a PATH_REPORT.
    pub fn decode(buf: &'a [u8]) -> Result<PathReport<'a>> {
        let (h, mut r) = open(buf, MessageType::PathReport)?;
        let method = r.u8()?;
        let count = r.u8()? as usize;
        let af = parse_af(r.u8()?)?;
        let _reserved = r.u8()?;
        let addrs = FlowAddrs::read(af, &mut r)?;
        let flow_label = r.u32()?;
        let hops_bytes = r.take(r.remaining())?;
        if h.flow_id != 0 {
            return Err(Error::BadField("flow_id"));
        }
        let method = Method::from_u8(method).ok_or(Error::BadField("method"))?;
        if count > MAX_HOP_ENTRIES {
            return Err(Error::BadField("entry_count"));
        }
        let mut b = hops_bytes;
        for _ in 0..count {
            let (_, rest) = parse_hop(b).ok_or(Error::BadLength)?;
            b = rest;
        }
        if !b.is_empty() {
            return Err(Error::BadLength);
        }
        Ok(PathReport {
            truncated: h.flags & FLAG_TRUNCATED != 0,
            method,
            addrs,
            flow_label,
            hops: HopEntries(HopsInner::Wire {
                bytes: hops_bytes,
                count: count as u8,
            }),
        })
    }

    /// Encodes into `buf` (header Flow ID 0).
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        if self.method.to_u8() == 0 {
            return Err(Error::BadField("method"));
        }
        if self.hops.len() > MAX_HOP_ENTRIES {
            return Err(Error::BadField("entry_count"));
        }
        if self.hops.iter().any(|h| h.dropped.len() > u8::MAX as usize) {
            return Err(Error::BadField("psn_count"));
        }
        let len = self.encoded_len();
        let mut w = start(buf, len, MessageType::PathReport, self.flags(), 0)?;
        w.u8(self.method.to_u8())?;
        w.u8(self.hops.len() as u8)?;
        w.u8(self.addrs.af().to_u8())?;
        w.u8(0)?;
        self.addrs.write(&mut w)?;
        w.u32(self.flow_label)?;
        for hop in self.hops.iter() {
            w.u32(hop.node_id)?;
            w.u32(hop.period)?;
            w.u32(hop.lost_count)?;
            w.u32(hop.queue_delay_change_us as u32)?;
            w.u8(hop.cause.to_u8())?;
            w.u8(hop.dropped.len() as u8)?;
            w.u16(0)?;
            for p in hop.dropped.iter() {
                w.u32(p.value())?;
            }
        }
        Ok(len)
    }
}

/// The hop entries of a PATH_REPORT: a zero-copy view of decoded entries or a
/// caller slice for encoding. Equality compares the entries.
#[derive(Clone, Copy)]
pub struct HopEntries<'a>(HopsInner<'a>);

#[derive(Clone, Copy)]
enum HopsInner<'a> {
    Wire { bytes: &'a [u8], count: u8 },
    Slice(&'a [HopEntry<'a>]),
}

impl<'a> HopEntries<'a> {
    /// Entries to encode (at most 16, checked by the encoder).
    pub const fn from_slice(entries: &'a [HopEntry<'a>]) -> HopEntries<'a> {
        HopEntries(HopsInner::Slice(entries))
    }

    /// Number of entries.
    pub const fn len(&self) -> usize {
        match self.0 {
            HopsInner::Wire { count, .. } => count as usize,
            HopsInner::Slice(s) => s.len(),
        }
    }

    /// No entries.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over the entries.
    pub fn iter(&self) -> HopEntriesIter<'a> {
        HopEntriesIter(match self.0 {
            HopsInner::Wire { bytes, count } => HopsIterInner::Wire { bytes, left: count },
            HopsInner::Slice(s) => HopsIterInner::Slice(s.iter()),
        })
    }
}

impl PartialEq for HopEntries<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for HopEntries<'_> {}

impl fmt::Debug for HopEntries<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &HopEntries<'a> {
    type Item = HopEntry<'a>;
    type IntoIter = HopEntriesIter<'a>;
    fn into_iter(self) -> HopEntriesIter<'a> {
        self.iter()
    }
}

/// Iterator over [`HopEntries`].
#[derive(Clone, Debug)]
pub struct HopEntriesIter<'a>(HopsIterInner<'a>);

#[derive(Clone, Debug)]
enum HopsIterInner<'a> {
    Wire { bytes: &'a [u8], left: u8 },
    Slice(core::slice::Iter<'a, HopEntry<'a>>),
}

impl<'a> Iterator for HopEntriesIter<'a> {
    type Item = HopEntry<'a>;

    fn next(&mut self) -> Option<HopEntry<'a>> {
        match &mut self.0 {
            HopsIterInner::Wire { bytes, left } => {
                if *left == 0 {
                    return None;
                }
                let (hop, rest) = parse_hop(bytes)?;
                *bytes = rest;
                *left -= 1;
                Some(hop)
            }
            HopsIterInner::Slice(it) => it.next().copied(),
        }
    }
}

/// The dropped PSNs of a hop entry: a zero-copy view (one 32-bit word per PSN,
/// high octet reserved) or a caller slice. Equality compares the PSNs.
#[derive(Clone, Copy)]
pub struct DroppedPsns<'a>(PsnsInner<'a>);

#[derive(Clone, Copy)]
enum PsnsInner<'a> {
    Wire(&'a [u8]),
    Slice(&'a [Psn]),
}

impl<'a> DroppedPsns<'a> {
    /// No dropped PSNs.
    pub const EMPTY: DroppedPsns<'static> = DroppedPsns(PsnsInner::Slice(&[]));

    /// PSNs to encode (at most 255, checked by the encoder).
    pub const fn from_slice(psns: &'a [Psn]) -> DroppedPsns<'a> {
        DroppedPsns(PsnsInner::Slice(psns))
    }

    /// Number of PSNs.
    pub const fn len(&self) -> usize {
        match self.0 {
            PsnsInner::Wire(b) => b.len() / 4,
            PsnsInner::Slice(s) => s.len(),
        }
    }

    /// No PSNs.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over the PSNs.
    pub fn iter(&self) -> DroppedPsnsIter<'a> {
        DroppedPsnsIter(match self.0 {
            PsnsInner::Wire(b) => PsnsIterInner::Wire(b),
            PsnsInner::Slice(s) => PsnsIterInner::Slice(s.iter()),
        })
    }
}

impl PartialEq for DroppedPsns<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for DroppedPsns<'_> {}

impl fmt::Debug for DroppedPsns<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &DroppedPsns<'a> {
    type Item = Psn;
    type IntoIter = DroppedPsnsIter<'a>;
    fn into_iter(self) -> DroppedPsnsIter<'a> {
        self.iter()
    }
}

/// Iterator over [`DroppedPsns`].
#[derive(Clone, Debug)]
pub struct DroppedPsnsIter<'a>(PsnsIterInner<'a>);

#[derive(Clone, Debug)]
enum PsnsIterInner<'a> {
    /// Remaining wire words (4 octets each).
    Wire(&'a [u8]),
    Slice(core::slice::Iter<'a, Psn>),
}

impl Iterator for DroppedPsnsIter<'_> {
    type Item = Psn;

    fn next(&mut self) -> Option<Psn> {
        match &mut self.0 {
            PsnsIterInner::Wire(b) => {
                let (&[_reserved, x, y, z], rest) = b.split_first_chunk::<4>()?;
                *b = rest;
                Some(Psn::from_be_bytes([x, y, z]))
            }
            PsnsIterInner::Slice(it) => it.next().copied(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            PsnsIterInner::Wire(b) => b.len() / 4,
            PsnsIterInner::Slice(it) => it.len(),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for DroppedPsnsIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_roundtrip() {
        let d1 = [Psn::new(0x123456), Psn::new(0xFF_FFFF)];
        let hops = [
            HopEntry {
                node_id: 0x0a000001,
                period: 77,
                lost_count: 2,
                queue_delay_change_us: -150,
                cause: LossCause::QueueOverflow,
                dropped: DroppedPsns::from_slice(&d1),
            },
            HopEntry {
                node_id: 2,
                period: 78,
                lost_count: 0,
                queue_delay_change_us: 3,
                cause: LossCause::Unknown,
                dropped: DroppedPsns::EMPTY,
            },
        ];
        let m = PathReport {
            truncated: true,
            method: Method::NodeLocalDrop,
            addrs: FlowAddrs::V4 {
                src: [192, 0, 2, 1],
                dst: [203, 0, 113, 9],
            },
            flow_label: 0x11,
            hops: HopEntries::from_slice(&hops),
        };
        let mut buf = [0u8; 128];
        let n = m.encode(&mut buf).unwrap();
        assert_eq!(n, 8 + 16 + 28 + 20);
        assert_eq!(n, m.encoded_len());
        assert_eq!(
            &buf[..12],
            &[0x18, 0x80, 0, n as u8, 0, 0, 0, 0, 3, 2, 4, 0]
        );
        // first hop's Cause/PSN Count word and its PSN words
        assert_eq!(
            &buf[24 + 16..24 + 28],
            &[1, 2, 0, 0, 0, 0x12, 0x34, 0x56, 0, 0xff, 0xff, 0xff]
        );
        assert_eq!(&buf[24 + 12..24 + 16], &(-150i32).to_be_bytes());
        let d = PathReport::decode(&buf[..n]).unwrap();
        assert_eq!(d, m);
        let h0 = d.hops.iter().next().unwrap();
        assert_eq!(h0.queue_delay_change_us, -150);
        assert_eq!(h0.dropped.iter().count(), 2);
        // PSN Count claiming more than present
        buf[24 + 17] = 3;
        assert_eq!(PathReport::decode(&buf[..n]), Err(Error::BadLength));
        buf[24 + 17] = 2;
        buf[9] = 17;
        assert_eq!(
            PathReport::decode(&buf[..n]),
            Err(Error::BadField("entry_count"))
        );
        buf[9] = 2;
        buf[8] = 0;
        assert_eq!(
            PathReport::decode(&buf[..n]),
            Err(Error::BadField("method"))
        );
    }
}
