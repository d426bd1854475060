//! CLOSE (type 9): Reason (16) and Reserved (16); Length 12.

use super::{open, start, MessageType, Result, HEADER_LEN};

/// CLOSE reasons ("CREM CLOSE Reasons" registry, 16 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CloseReason {
    /// 0: normal termination.
    Normal,
    /// 1: flow ended.
    FlowEnded,
    /// 2: parameter synchronization failed.
    ParamSyncFailed,
    /// 3: resources exhausted.
    ResourcesExhausted,
    /// 4: circuit breaker.
    CircuitBreaker,
    /// Any other value (never 0..=4 when produced by [`CloseReason::from_u16`]).
    Other(u16),
}

impl CloseReason {
    /// Maps the wire value.
    pub const fn from_u16(v: u16) -> CloseReason {
        match v {
            0 => CloseReason::Normal,
            1 => CloseReason::FlowEnded,
            2 => CloseReason::ParamSyncFailed,
            3 => CloseReason::ResourcesExhausted,
            4 => CloseReason::CircuitBreaker,
            o => CloseReason::Other(o),
        }
    }

    /// The wire value.
    pub const fn to_u16(self) -> u16 {
        match self {
            CloseReason::Normal => 0,
            CloseReason::FlowEnded => 1,
            CloseReason::ParamSyncFailed => 2,
            CloseReason::ResourcesExhausted => 3,
            CloseReason::CircuitBreaker => 4,
            CloseReason::Other(o) => o,
        }
    }
}

/// A CLOSE message (either direction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Close {
    /// Flow ID.
    pub flow_id: u32,
    /// Reason.
    pub reason: CloseReason,
}

impl Close {
    /// Encoded length (12).
    pub const LEN: usize = HEADER_LEN + 4;

    /// Encoded length.
    pub const fn encoded_len(&self) -> usize {
        Self::LEN
    }

    /// Decodes a CLOSE.
    pub fn decode(buf: &[u8]) -> Result<Close> {
        let (h, mut r) = open(buf, MessageType::Close)?;
        let reason = CloseReason::from_u16(r.u16()?);
        let _reserved = r.u16()?;
        r.finish()?;
        Ok(Close {
            flow_id: h.flow_id,
            reason,
        })
    }

    /// Encodes into `buf`.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        let mut w = start(buf, Self::LEN, MessageType::Close, 0, self.flow_id)?;
        w.u16(self.reason.to_u16())?;
        w.u16(0)?;
        Ok(Self::LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let c = Close {
            flow_id: 0x0a0b0c0d,
            reason: CloseReason::CircuitBreaker,
        };
        let mut buf = [0u8; 12];
        assert_eq!(c.encode(&mut buf), Ok(12));
        assert_eq!(buf, [0x19, 0, 0, 12, 0x0a, 0x0b, 0x0c, 0x0d, 0, 4, 0, 0]);
        assert_eq!(Close::decode(&buf), Ok(c));
        buf[8] = 1;
        assert_eq!(Close::decode(&buf).unwrap().reason, CloseReason::Other(260));
    }
}
