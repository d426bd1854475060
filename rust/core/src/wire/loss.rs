//! LOSS_REPORT (type 7): eight 32-bit counters for one interval (Length 40).
//!
//! ```text
//! | Interval (µs) | Expected | Received | Restored | Incomplete Blocks |
//! | CE Marked | Repairs Received | Repairs CE Marked |      (32 bits each)
//! ```

use super::{open, start, MessageType, Result, HEADER_LEN};

/// A LOSS_REPORT message (CRF → CSF).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct LossReport {
    /// Flow ID.
    pub flow_id: u32,
    /// Interval duration in microseconds.
    pub interval_us: u32,
    /// Source packets expected in the interval.
    pub expected: u32,
    /// Source packets received (before restoration).
    pub received: u32,
    /// Source packets restored by decoding.
    pub restored: u32,
    /// Blocks incomplete after the first decoding attempt.
    pub incomplete_blocks: u32,
    /// ECN CE marks observed on source packets.
    pub ce_marked: u32,
    /// REPAIR messages received.
    pub repairs_received: u32,
    /// CE marks observed on REPAIR messages.
    pub repairs_ce_marked: u32,
}

impl LossReport {
    /// Encoded length (40).
    pub const LEN: usize = HEADER_LEN + 32;

    /// Encoded length.
    pub const fn encoded_len(&self) -> usize {
        Self::LEN
    }

    /// Decodes a LOSS_REPORT.
    pub fn decode(buf: &[u8]) -> Result<LossReport> {
        let (h, mut r) = open(buf, MessageType::LossReport)?;
        let m = LossReport {
            flow_id: h.flow_id,
            interval_us: r.u32()?,
            expected: r.u32()?,
            received: r.u32()?,
            restored: r.u32()?,
            incomplete_blocks: r.u32()?,
            ce_marked: r.u32()?,
            repairs_received: r.u32()?,
            repairs_ce_marked: r.u32()?,
        };
        r.finish()?;
        Ok(m)
    }

    /// Encodes into `buf`.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        let mut w = start(buf, Self::LEN, MessageType::LossReport, 0, self.flow_id)?;
        for v in [
            self.interval_us,
            self.expected,
            self.received,
            self.restored,
            self.incomplete_blocks,
            self.ce_marked,
            self.repairs_received,
            self.repairs_ce_marked,
        ] {
            w.u32(v)?;
        }
        Ok(Self::LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let m = LossReport {
            flow_id: 3,
            interval_us: 1,
            expected: 2,
            received: 3,
            restored: 4,
            incomplete_blocks: 5,
            ce_marked: 6,
            repairs_received: 7,
            repairs_ce_marked: 0x0102_0304,
        };
        let mut buf = [0u8; 40];
        assert_eq!(m.encode(&mut buf), Ok(40));
        assert_eq!(&buf[..12], &[0x17, 0, 0, 40, 0, 0, 0, 3, 0, 0, 0, 1]);
        assert_eq!(&buf[36..], &[1, 2, 3, 4]);
        assert_eq!(LossReport::decode(&buf), Ok(m));
    }
}
