//! PARAM_UPDATE (type 4) and PARAM_ACK (type 5).
//!
//! PARAM_UPDATE after the common header (Length 20):
//!
//! ```text
//! | Config ID     | Scheme        | k             | m             |
//! | T                             | Reserved                      |
//! | Effective PSN (24)                            | Reserved      |
//! ```
//!
//! PARAM_ACK after the common header (Length 12):
//!
//! ```text
//! | Config ID     | Status        | Reserved                      |
//! ```
//!
//! Validation: k in 1..=255 (the draft's range for k). Whether (scheme, k, m,
//! T) is within the negotiated limits is the engine's decision — a CRF answers
//! an unacceptable configuration with a PARAM_ACK status rather than dropping
//! it — so the codec does not check it; [`ParamUpdate::indices_ok`] offers the
//! scheme rule on Repair Indices.

use super::repair::cauchy_index_ok;
use super::{check_k, open, start, FecScheme, MessageType, Psn, Result, HEADER_LEN};

/// A PARAM_UPDATE message (CSF → CRF).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParamUpdate {
    /// Flow ID.
    pub flow_id: u32,
    /// New Config ID.
    pub config_id: u8,
    /// FEC scheme.
    pub scheme: FecScheme,
    /// Block size k (1..=255).
    pub k: u8,
    /// Repair symbols per block m.
    pub m: u8,
    /// Symbol length T.
    pub t: u16,
    /// First PSN at which blocks may use the configuration.
    pub effective_psn: Psn,
}

impl ParamUpdate {
    /// Encoded length (20).
    pub const LEN: usize = HEADER_LEN + 12;

    /// Encoded length.
    pub const fn encoded_len(&self) -> usize {
        Self::LEN
    }

    /// The m Repair Indices 0..m of an ordinary round are allowed by the
    /// scheme: Cauchy RS needs `(m - 1) + k <= 255`, XOR parity `m <= 1`;
    /// Source Copy and other schemes are not restricted here.
    pub const fn indices_ok(&self) -> bool {
        match self.scheme {
            FecScheme::CauchyRs => self.m == 0 || cauchy_index_ok(self.k, self.m - 1),
            FecScheme::XorParity => self.m <= 1,
            _ => true,
        }
    }

    /// Decodes a PARAM_UPDATE.
    pub fn decode(buf: &[u8]) -> Result<ParamUpdate> {
        let (h, mut r) = open(buf, MessageType::ParamUpdate)?;
        let config_id = r.u8()?;
        let scheme = FecScheme::from_u8(r.u8()?);
        let k = r.u8()?;
        let m = r.u8()?;
        let t = r.u16()?;
        let _reserved = r.u16()?;
        let (effective_psn, _reserved) = r.psn_u8()?;
        r.finish()?;
        check_k(k)?;
        Ok(ParamUpdate {
            flow_id: h.flow_id,
            config_id,
            scheme,
            k,
            m,
            t,
            effective_psn,
        })
    }

    /// Encodes into `buf`.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        check_k(self.k)?;
        let mut w = start(buf, Self::LEN, MessageType::ParamUpdate, 0, self.flow_id)?;
        w.u8(self.config_id)?;
        w.u8(self.scheme.to_u8())?;
        w.u8(self.k)?;
        w.u8(self.m)?;
        w.u16(self.t)?;
        w.u16(0)?;
        w.psn_u8(self.effective_psn, 0)?;
        Ok(Self::LEN)
    }
}

/// PARAM_ACK status codes ("CREM PARAM_ACK Status Codes" registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamStatus {
    /// 0: accepted.
    Accepted,
    /// 1: unsupported scheme.
    UnsupportedScheme,
    /// 2: limits exceeded.
    LimitsExceeded,
    /// 3: resources exhausted.
    ResourcesExhausted,
    /// Any other value (treated as a refusal: "a CSF that receives a non-zero
    /// Status keeps its current configuration"). Never 0..=3 when produced by
    /// [`ParamStatus::from_u8`].
    Other(u8),
}

impl ParamStatus {
    /// Maps the wire value.
    pub const fn from_u8(v: u8) -> ParamStatus {
        match v {
            0 => ParamStatus::Accepted,
            1 => ParamStatus::UnsupportedScheme,
            2 => ParamStatus::LimitsExceeded,
            3 => ParamStatus::ResourcesExhausted,
            o => ParamStatus::Other(o),
        }
    }

    /// The wire value.
    pub const fn to_u8(self) -> u8 {
        match self {
            ParamStatus::Accepted => 0,
            ParamStatus::UnsupportedScheme => 1,
            ParamStatus::LimitsExceeded => 2,
            ParamStatus::ResourcesExhausted => 3,
            ParamStatus::Other(o) => o,
        }
    }

    /// Status 0.
    pub const fn is_accepted(self) -> bool {
        self.to_u8() == 0
    }
}

/// A PARAM_ACK message (CRF → CSF).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParamAck {
    /// Flow ID.
    pub flow_id: u32,
    /// The Config ID acknowledged.
    pub config_id: u8,
    /// Status.
    pub status: ParamStatus,
}

impl ParamAck {
    /// Encoded length (12).
    pub const LEN: usize = HEADER_LEN + 4;

    /// Encoded length.
    pub const fn encoded_len(&self) -> usize {
        Self::LEN
    }

    /// Decodes a PARAM_ACK.
    pub fn decode(buf: &[u8]) -> Result<ParamAck> {
        let (h, mut r) = open(buf, MessageType::ParamAck)?;
        let config_id = r.u8()?;
        let status = ParamStatus::from_u8(r.u8()?);
        let _reserved = r.u16()?;
        r.finish()?;
        Ok(ParamAck {
            flow_id: h.flow_id,
            config_id,
            status,
        })
    }

    /// Encodes into `buf`.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        let mut w = start(buf, Self::LEN, MessageType::ParamAck, 0, self.flow_id)?;
        w.u8(self.config_id)?;
        w.u8(self.status.to_u8())?;
        w.u16(0)?;
        Ok(Self::LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Error;
    use super::*;

    #[test]
    fn param_update_layout() {
        let p = ParamUpdate {
            flow_id: 9,
            config_id: 2,
            scheme: FecScheme::CauchyRs,
            k: 32,
            m: 3,
            t: 1100,
            effective_psn: Psn::new(0xabcdef),
        };
        let mut buf = [0u8; 20];
        assert_eq!(p.encode(&mut buf), Ok(20));
        assert_eq!(
            buf,
            [0x14, 0, 0, 20, 0, 0, 0, 9, 2, 1, 32, 3, 0x04, 0x4c, 0, 0, 0xab, 0xcd, 0xef, 0]
        );
        assert_eq!(ParamUpdate::decode(&buf), Ok(p));
        assert!(p.indices_ok());
        let big = ParamUpdate { k: 250, m: 7, ..p };
        assert!(!big.indices_ok());
        let zero_k = ParamUpdate { k: 0, ..p };
        assert_eq!(zero_k.encode(&mut buf), Err(Error::BadField("k")));
    }

    #[test]
    fn param_ack_layout() {
        let a = ParamAck {
            flow_id: 1,
            config_id: 7,
            status: ParamStatus::LimitsExceeded,
        };
        let mut buf = [0u8; 12];
        assert_eq!(a.encode(&mut buf), Ok(12));
        assert_eq!(buf, [0x15, 0, 0, 12, 0, 0, 0, 1, 7, 2, 0, 0]);
        assert_eq!(ParamAck::decode(&buf), Ok(a));
        buf[9] = 200;
        assert_eq!(
            ParamAck::decode(&buf).unwrap().status,
            ParamStatus::Other(200)
        );
        assert!(!ParamStatus::Other(200).is_accepted());
    }
}
