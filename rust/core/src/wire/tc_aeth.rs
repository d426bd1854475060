//! The T/C AETH fragment (windowless-ACK draft §5) and the Private Use CREM
//! message that carries it (type 12, `TC_AETH`, a.k.a. SACK).
//!
//! # Fragment layout (30 octets, DESIGN §3)
//!
//! The draft lists nine 24-bit big-endian fields — SegmentNum, Last Finished
//! PSN, Seg1 Left, Seg1 Right, Seg2 Left, Seg2 Right, Seg3 Left, Seg3 Right,
//! Reserved — which make 27 octets, while it states a size of 30. Per the
//! project ruling the fields are encoded in the order shown, each 3 octets,
//! followed by 3 zero octets of padding:
//!
//! ```text
//! offset  0 SegmentNum (24)      3 Last Finished PSN (24)
//!         6 Seg1 Left            9 Seg1 Right
//!        12 Seg2 Left           15 Seg2 Right
//!        18 Seg3 Left           21 Seg3 Right
//!        24 Reserved (24)       27 Padding (24, zero)
//! ```
//!
//! SegmentNum (1..=4) counts the received segments *including* the leading
//! continuous one that ends at Last Finished PSN; the draft's example (one
//! continuous block and two further segments) reports 3. Seg X pairs with
//! X ≥ SegmentNum are unused: encoded as zero and ignored on receipt, as are
//! Reserved and the padding. SegmentNum 0 or > 4 ("reserved") is rejected.
//!
//! The decoder also requires each used segment to satisfy Left ≤ Right and to
//! start at least two PSNs after the end of the previous segment (there must
//! be a gap of at least one lost PSN between segments), all in serial (mod
//! 2^24) order.
//!
//! # TC_AETH message (type 12, Private Use)
//!
//! CREM never modifies RDMA packets, so the CRF sends the fragment to the CSF
//! in a CREM message of the Private Use type 12 on the CREM port (DESIGN §3):
//!
//! ```text
//! | common header (type 12, flags 0, Length 40, Flow ID)          |
//! | T/C AETH fragment (30 octets)                                 |
//! | Report Sequence (16)          |
//! ```
//!
//! The 16-bit Report Sequence (incremented by the CRF for every report of the
//! flow, wrapping) is an addition of this implementation: it lets the CSF
//! ignore reports that arrive reordered behind a newer one. No flags are
//! defined.

use super::{open, start, Error, MessageType, Psn, PsnRange, Result, HEADER_LEN};

/// Size of the T/C AETH fragment.
pub const TC_AETH_LEN: usize = 30;
/// Number of Seg X Left/Right pairs in the fragment.
pub const MAX_SEGMENTS: usize = 3;

/// A received segment `[left, right]` (inclusive, serial order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Segment {
    /// Smallest PSN of the segment.
    pub left: Psn,
    /// Largest PSN of the segment.
    pub right: Psn,
}

impl Segment {
    /// The PSNs of the segment as a range.
    pub const fn range(&self) -> PsnRange {
        PsnRange::from_inclusive(self.left, self.right)
    }
}

/// A validated T/C AETH fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TcAeth {
    last_finished: Psn,
    /// Number of used entries of `segs` (0..=3) = SegmentNum - 1.
    used: u8,
    /// Unused entries are zero.
    segs: [Segment; MAX_SEGMENTS],
}

impl TcAeth {
    /// Builds a fragment: the leading continuous segment ends at
    /// `last_finished`, followed by up to three further received `segments` in
    /// increasing order, separated by gaps.
    pub fn new(last_finished: Psn, segments: &[Segment]) -> Result<TcAeth> {
        if segments.len() > MAX_SEGMENTS {
            return Err(Error::BadField("segment_num"));
        }
        let mut segs = [Segment::default(); MAX_SEGMENTS];
        let mut prev_end = last_finished;
        for (dst, s) in segs.iter_mut().zip(segments) {
            if !s.left.is_before_or_eq(s.right) {
                return Err(Error::BadField("segment"));
            }
            // At least one lost PSN between prev_end and left.
            if !prev_end.next().is_before(s.left) {
                return Err(Error::BadField("segment"));
            }
            *dst = *s;
            prev_end = s.right;
        }
        Ok(TcAeth {
            last_finished,
            used: segments.len() as u8,
            segs,
        })
    }

    /// SegmentNum as on the wire (1..=4).
    pub const fn segment_num(&self) -> u8 {
        self.used.wrapping_add(1)
    }

    /// Last Finished PSN: the end of the leading continuous segment.
    pub const fn last_finished(&self) -> Psn {
        self.last_finished
    }

    /// The further segments (SegmentNum - 1 of them).
    pub fn segments(&self) -> &[Segment] {
        self.segs.get(..self.used as usize).unwrap_or(&[])
    }

    /// The highest PSN reported as received.
    pub fn highest(&self) -> Psn {
        self.segments()
            .last()
            .map_or(self.last_finished, |s| s.right)
    }

    /// The lost ranges implied by the fragment: the gaps between Last Finished
    /// PSN and Seg1, and between consecutive segments. (PSNs after the last
    /// segment are not included; see DESIGN §3 about in-flight packets.)
    pub fn lost_ranges(&self) -> Gaps<'_> {
        Gaps {
            prev_end: self.last_finished,
            segs: self.segments().iter(),
        }
    }

    /// Decodes the fragment from the first 30 octets of `buf` (octets after
    /// them are not examined).
    pub fn decode(buf: &[u8]) -> Result<TcAeth> {
        let Some((f, _)) = buf.split_first_chunk::<TC_AETH_LEN>() else {
            return Err(Error::Truncated);
        };
        let field = |i: usize| -> Psn {
            match f.get(3 * i..3 * i + 3) {
                Some(&[a, b, c]) => Psn::from_be_bytes([a, b, c]),
                _ => Psn::ZERO,
            }
        };
        let n = field(0).value();
        if !(1..=4).contains(&n) {
            return Err(Error::BadField("segment_num"));
        }
        let mut segs = [Segment::default(); MAX_SEGMENTS];
        let used = (n - 1) as usize;
        for (i, s) in segs.iter_mut().enumerate().take(used) {
            *s = Segment {
                left: field(2 + 2 * i),
                right: field(3 + 2 * i),
            };
        }
        TcAeth::new(field(1), segs.get(..used).unwrap_or(&[]))
    }

    /// Writes the 30-octet fragment into `buf`, returning 30.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        let Some((f, _)) = buf.split_first_chunk_mut::<TC_AETH_LEN>() else {
            return Err(Error::BufferTooSmall {
                needed: TC_AETH_LEN,
            });
        };
        *f = [0; TC_AETH_LEN];
        let mut fields = [Psn::ZERO; 8];
        fields[0] = Psn::new(self.segment_num() as u32);
        fields[1] = self.last_finished;
        for (i, s) in self.segments().iter().enumerate() {
            if let Some(pair) = fields.get_mut(2 + 2 * i..4 + 2 * i) {
                pair.copy_from_slice(&[s.left, s.right]);
            }
        }
        for (chunk, p) in f.chunks_exact_mut(3).zip(fields.iter()) {
            chunk.copy_from_slice(&p.to_be_bytes());
        }
        Ok(TC_AETH_LEN)
    }
}

/// Iterator over the lost ranges of a [`TcAeth`].
#[derive(Clone, Debug)]
pub struct Gaps<'a> {
    prev_end: Psn,
    segs: core::slice::Iter<'a, Segment>,
}

impl Iterator for Gaps<'_> {
    type Item = PsnRange;

    fn next(&mut self) -> Option<PsnRange> {
        let s = self.segs.next()?;
        let start = self.prev_end.next();
        let r = PsnRange::new(start, start.forward_distance(s.left));
        self.prev_end = s.right;
        Some(r)
    }
}

/// The Private Use TC_AETH message (type 12): one T/C AETH fragment from the
/// CRF to the CSF, plus a 16-bit Report Sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TcAethReport {
    /// Flow ID.
    pub flow_id: u32,
    /// Report Sequence (wrapping per-flow counter).
    pub seq: u16,
    /// The fragment.
    pub fragment: TcAeth,
}

impl TcAethReport {
    /// Encoded length (40).
    pub const LEN: usize = HEADER_LEN + TC_AETH_LEN + 2;

    /// Encoded length.
    pub const fn encoded_len(&self) -> usize {
        Self::LEN
    }

    /// Decodes a TC_AETH message.
    pub fn decode(buf: &[u8]) -> Result<TcAethReport> {
        let (h, mut r) = open(buf, MessageType::TcAeth)?;
        let frag = r.take(TC_AETH_LEN)?;
        let seq = r.u16()?;
        r.finish()?;
        Ok(TcAethReport {
            flow_id: h.flow_id,
            seq,
            fragment: TcAeth::decode(frag)?,
        })
    }

    /// Encodes into `buf`.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        let mut w = start(buf, Self::LEN, MessageType::TcAeth, 0, self.flow_id)?;
        let mut frag = [0u8; TC_AETH_LEN];
        self.fragment.encode(&mut frag)?;
        w.bytes(&frag)?;
        w.u16(self.seq)?;
        Ok(Self::LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(l: u32, r: u32) -> Segment {
        Segment {
            left: Psn::new(l),
            right: Psn::new(r),
        }
    }

    #[test]
    fn draft_example() {
        // 100..=199 received, 200..=299 lost, 300..=399 received, 400..=499
        // lost, 500..=599 received: SegmentNum 3.
        let t = TcAeth::new(Psn::new(199), &[seg(300, 399), seg(500, 599)]).unwrap();
        assert_eq!(t.segment_num(), 3);
        let mut buf = [0xAAu8; 30];
        assert_eq!(t.encode(&mut buf), Ok(30));
        assert_eq!(
            buf,
            [
                0, 0, 3, 0, 0, 199, 0, 0x01, 0x2c, 0, 0x01, 0x8f, 0, 0x01, 0xf4, 0, 0x02, 0x57, 0,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
            ]
        );
        assert_eq!(TcAeth::decode(&buf), Ok(t));
        let mut gaps = t.lost_ranges();
        assert_eq!(gaps.next(), Some(PsnRange::new(Psn::new(200), 100)));
        assert_eq!(gaps.next(), Some(PsnRange::new(Psn::new(400), 100)));
        assert_eq!(gaps.next(), None);
        assert_eq!(t.highest(), Psn::new(599));
    }

    #[test]
    fn validation() {
        assert!(TcAeth::new(Psn::new(10), &[seg(11, 20)]).is_err()); // no gap
        assert!(TcAeth::new(Psn::new(10), &[seg(12, 11)]).is_err()); // left > right
        assert!(TcAeth::new(Psn::new(10), &[seg(12, 12)]).is_ok());
        assert!(TcAeth::new(
            Psn::new(10),
            &[seg(12, 12), seg(14, 20), seg(30, 31), seg(40, 41)]
        )
        .is_err());
        // wrap
        let t = TcAeth::new(Psn::new(0xFF_FFFE), &[seg(1, 5)]).unwrap();
        assert_eq!(t.lost_ranges().next(), Some(PsnRange::new(Psn::MAX, 2)));
        let mut buf = [0u8; 30];
        t.encode(&mut buf).unwrap();
        buf[2] = 0;
        assert_eq!(TcAeth::decode(&buf), Err(Error::BadField("segment_num")));
        buf[2] = 5;
        assert_eq!(TcAeth::decode(&buf), Err(Error::BadField("segment_num")));
        buf[2] = 1; // SegmentNum 1: the Seg1 pair is ignored
        let one = TcAeth::decode(&buf).unwrap();
        assert_eq!(one.segments(), &[]);
        assert_eq!(TcAeth::decode(&buf[..29]), Err(Error::Truncated));
    }

    #[test]
    fn message() {
        let m = TcAethReport {
            flow_id: 0x1234_5678,
            seq: 0xfffe,
            fragment: TcAeth::new(Psn::new(5), &[seg(7, 9)]).unwrap(),
        };
        let mut buf = [0u8; 48];
        assert_eq!(m.encode(&mut buf), Ok(40));
        assert_eq!(&buf[..8], &[0x1c, 0, 0, 40, 0x12, 0x34, 0x56, 0x78]);
        assert_eq!(&buf[38..40], &[0xff, 0xfe]);
        assert_eq!(TcAethReport::decode(&buf[..40]), Ok(m));
        assert_eq!(
            super::super::decode(&buf).unwrap(),
            super::super::Message::TcAeth(m)
        );
    }
}
