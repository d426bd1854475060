//! HELLO (type 2) and HELLO_ACK (type 3).
//!
//! HELLO after the common header:
//!
//! ```text
//! | Flow Kind     | AF            | Supported Schemes             |
//! | Max k         | Max m         | Max T                         |
//! | RDMA MTU                      | Reserved                      |
//! | Sender Nonce (64 bits)                                        |
//! | Source Address (4 or 16 octets, per AF)                       |
//! | Destination Address (4 or 16 octets, per AF)                  |
//! | Flow Label                                                    |
//! ```
//!
//! Length 40 (AF 4) or 64 (AF 6). The header's Flow ID must be zero.
//!
//! HELLO_ACK carries the same first twelve octets (the CRF's Supported
//! Schemes, Max k, Max m, Max T; RDMA MTU echoed; AF and Flow Kind echoed),
//! then the echoed Sender Nonce, Max Open Blocks (16) and 16 reserved bits:
//! always 32 octets, never larger than a HELLO (40 or 64).
//!
//! Validation: AF is 4 or 6; Flow Kind is not 0 (reserved). Other values of
//! Flow Kind (unassigned / private) and the limits are passed to the engine.

use super::{open, start, Error, MessageType, Result, HEADER_LEN};

/// Flow Kind 1: RoCEv2 (the requester direction of a queue pair).
pub const FLOW_KIND_ROCEV2: u8 = 1;

/// Flow Kind 192 (Private Use, our extension): the responder direction of a
/// RoCEv2 queue pair. Sources are READ responses and ATOMIC ACKNOWLEDGE
/// packets; their PSN positions are the requester's PSNs (those its READ
/// requests left absent in the request direction); the Flow Label holds the
/// destination (requester) QP as for kind 1. Nothing acknowledges these
/// packets, so the CSF retains them for its give-up time only.
pub const FLOW_KIND_ROCEV2_RESPONSES: u8 = 192;

/// Which packets of one direction of a RoCEv2 queue pair a CREM flow
/// protects: the two kinds number their PSNs in different spaces, so one
/// direction may carry two flows with the same addresses and QP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FlowKind {
    /// Requests (Flow Kind 1).
    #[default]
    Requests,
    /// READ responses and ATOMIC ACKNOWLEDGE (Flow Kind 192).
    Responses,
}

impl FlowKind {
    /// The Flow Kind octet.
    pub const fn to_u8(self) -> u8 {
        match self {
            FlowKind::Requests => FLOW_KIND_ROCEV2,
            FlowKind::Responses => FLOW_KIND_ROCEV2_RESPONSES,
        }
    }

    /// Parses a Flow Kind octet this implementation supports.
    pub const fn from_u8(v: u8) -> Option<FlowKind> {
        match v {
            FLOW_KIND_ROCEV2 => Some(FlowKind::Requests),
            FLOW_KIND_ROCEV2_RESPONSES => Some(FlowKind::Responses),
            _ => None,
        }
    }
}

/// Address family of a flow descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressFamily {
    /// AF = 4.
    V4,
    /// AF = 6.
    V6,
}

impl AddressFamily {
    /// Parses the AF octet (4 or 6).
    pub const fn from_u8(v: u8) -> Option<AddressFamily> {
        match v {
            4 => Some(AddressFamily::V4),
            6 => Some(AddressFamily::V6),
            _ => None,
        }
    }

    /// The AF octet.
    pub const fn to_u8(self) -> u8 {
        match self {
            AddressFamily::V4 => 4,
            AddressFamily::V6 => 6,
        }
    }

    /// Octets of one address.
    pub const fn addr_len(self) -> usize {
        match self {
            AddressFamily::V4 => 4,
            AddressFamily::V6 => 16,
        }
    }
}

/// Source and destination addresses of a protected flow (network byte order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowAddrs {
    /// IPv4 addresses.
    V4 {
        /// Source address.
        src: [u8; 4],
        /// Destination address.
        dst: [u8; 4],
    },
    /// IPv6 addresses.
    V6 {
        /// Source address.
        src: [u8; 16],
        /// Destination address.
        dst: [u8; 16],
    },
}

impl FlowAddrs {
    /// The address family.
    pub const fn af(&self) -> AddressFamily {
        match self {
            FlowAddrs::V4 { .. } => AddressFamily::V4,
            FlowAddrs::V6 { .. } => AddressFamily::V6,
        }
    }

    /// Octets of both addresses on the wire.
    pub const fn wire_len(&self) -> usize {
        2 * self.af().addr_len()
    }

    pub(super) fn read(af: AddressFamily, r: &mut super::Reader<'_>) -> Result<FlowAddrs> {
        Ok(match af {
            AddressFamily::V4 => FlowAddrs::V4 {
                src: r.array::<4>()?,
                dst: r.array::<4>()?,
            },
            AddressFamily::V6 => FlowAddrs::V6 {
                src: r.array::<16>()?,
                dst: r.array::<16>()?,
            },
        })
    }

    pub(super) fn write(&self, w: &mut super::Writer<'_>) -> Result<()> {
        match self {
            FlowAddrs::V4 { src, dst } => {
                w.bytes(src)?;
                w.bytes(dst)
            }
            FlowAddrs::V6 { src, dst } => {
                w.bytes(src)?;
                w.bytes(dst)
            }
        }
    }
}

/// Parses the AF octet or fails with `BadField("af")`.
pub(super) fn parse_af(v: u8) -> Result<AddressFamily> {
    AddressFamily::from_u8(v).ok_or(Error::BadField("af"))
}

/// A HELLO message (CSF → CRF). The Flow ID of its header is zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hello {
    /// Flow Kind (1 = RoCEv2; 0 is rejected).
    pub flow_kind: u8,
    /// Supported Schemes bitmap (bit s from the LSB set if scheme s is supported).
    pub supported_schemes: u16,
    /// CSF's largest k.
    pub max_k: u8,
    /// CSF's largest m.
    pub max_m: u8,
    /// CSF's largest symbol length T.
    pub max_t: u16,
    /// RDMA path MTU (payload octets per packet).
    pub rdma_mtu: u16,
    /// Random Sender Nonce.
    pub nonce: u64,
    /// Flow source and destination addresses (AF follows from the variant).
    pub addrs: FlowAddrs,
    /// Flow Label (RoCEv2: destination QP number in the low 24 bits).
    pub flow_label: u32,
}

/// Octets after the header common to HELLO and HELLO_ACK before the nonce.
const FIRST12: usize = 12;

impl Hello {
    /// Encoded length: 40 for IPv4, 64 for IPv6.
    pub const fn encoded_len(&self) -> usize {
        HEADER_LEN + FIRST12 + 8 + self.addrs.wire_len() + 4
    }

    /// Decodes a HELLO.
    pub fn decode(buf: &[u8]) -> Result<Hello> {
        let (h, mut r) = open(buf, MessageType::Hello)?;
        let flow_kind = r.u8()?;
        let af = parse_af(r.u8()?)?;
        let supported_schemes = r.u16()?;
        let max_k = r.u8()?;
        let max_m = r.u8()?;
        let max_t = r.u16()?;
        let rdma_mtu = r.u16()?;
        let _reserved = r.u16()?;
        let nonce = r.u64()?;
        let addrs = FlowAddrs::read(af, &mut r)?;
        let flow_label = r.u32()?;
        r.finish()?;
        if h.flow_id != 0 {
            return Err(Error::BadField("flow_id"));
        }
        let m = Hello {
            flow_kind,
            supported_schemes,
            max_k,
            max_m,
            max_t,
            rdma_mtu,
            nonce,
            addrs,
            flow_label,
        };
        m.validate()?;
        Ok(m)
    }

    fn validate(&self) -> Result<()> {
        if self.flow_kind == 0 {
            return Err(Error::BadField("flow_kind"));
        }
        Ok(())
    }

    /// Encodes into `buf` (header Flow ID 0).
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        self.validate()?;
        let len = self.encoded_len();
        let mut w = start(buf, len, MessageType::Hello, 0, 0)?;
        w.u8(self.flow_kind)?;
        w.u8(self.addrs.af().to_u8())?;
        w.u16(self.supported_schemes)?;
        w.u8(self.max_k)?;
        w.u8(self.max_m)?;
        w.u16(self.max_t)?;
        w.u16(self.rdma_mtu)?;
        w.u16(0)?;
        w.u64(self.nonce)?;
        self.addrs.write(&mut w)?;
        w.u32(self.flow_label)?;
        Ok(len)
    }
}

/// A HELLO_ACK message (CRF → CSF).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HelloAck {
    /// The Flow ID assigned by the CRF (in the header).
    pub flow_id: u32,
    /// Flow Kind (echoed).
    pub flow_kind: u8,
    /// AF (echoed).
    pub af: AddressFamily,
    /// CRF's Supported Schemes.
    pub supported_schemes: u16,
    /// CRF's largest k.
    pub max_k: u8,
    /// CRF's largest m.
    pub max_m: u8,
    /// CRF's largest T.
    pub max_t: u16,
    /// RDMA MTU (echoed).
    pub rdma_mtu: u16,
    /// Sender Nonce (echoed).
    pub nonce: u64,
    /// Number of blocks the CRF can hold concurrently.
    pub max_open_blocks: u16,
}

impl HelloAck {
    /// Encoded length of every HELLO_ACK (32 octets).
    pub const LEN: usize = HEADER_LEN + FIRST12 + 8 + 4;

    /// Encoded length (always [`HelloAck::LEN`]).
    pub const fn encoded_len(&self) -> usize {
        Self::LEN
    }

    /// Decodes a HELLO_ACK.
    pub fn decode(buf: &[u8]) -> Result<HelloAck> {
        let (h, mut r) = open(buf, MessageType::HelloAck)?;
        let flow_kind = r.u8()?;
        let af = parse_af(r.u8()?)?;
        let supported_schemes = r.u16()?;
        let max_k = r.u8()?;
        let max_m = r.u8()?;
        let max_t = r.u16()?;
        let rdma_mtu = r.u16()?;
        let _reserved = r.u16()?;
        let nonce = r.u64()?;
        let max_open_blocks = r.u16()?;
        let _reserved = r.u16()?;
        r.finish()?;
        if flow_kind == 0 {
            return Err(Error::BadField("flow_kind"));
        }
        Ok(HelloAck {
            flow_id: h.flow_id,
            flow_kind,
            af,
            supported_schemes,
            max_k,
            max_m,
            max_t,
            rdma_mtu,
            nonce,
            max_open_blocks,
        })
    }

    /// Encodes into `buf`.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        if self.flow_kind == 0 {
            return Err(Error::BadField("flow_kind"));
        }
        let len = Self::LEN;
        let mut w = start(buf, len, MessageType::HelloAck, 0, self.flow_id)?;
        w.u8(self.flow_kind)?;
        w.u8(self.af.to_u8())?;
        w.u16(self.supported_schemes)?;
        w.u8(self.max_k)?;
        w.u8(self.max_m)?;
        w.u16(self.max_t)?;
        w.u16(self.rdma_mtu)?;
        w.u16(0)?;
        w.u64(self.nonce)?;
        w.u16(self.max_open_blocks)?;
        w.u16(0)?;
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(addrs: FlowAddrs) -> Hello {
        Hello {
            flow_kind: FLOW_KIND_ROCEV2,
            supported_schemes: 0b111,
            max_k: 64,
            max_m: 8,
            max_t: 4200,
            rdma_mtu: 4096,
            nonce: 0x0123_4567_89ab_cdef,
            addrs,
            flow_label: 0x0000_1234,
        }
    }

    #[test]
    fn hello_v4_v6_and_ack_not_larger() {
        let v4 = hello(FlowAddrs::V4 {
            src: [192, 0, 2, 1],
            dst: [198, 51, 100, 2],
        });
        let mut v6a = [0u8; 16];
        v6a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        let v6 = hello(FlowAddrs::V6 { src: v6a, dst: v6a });
        let mut buf = [0u8; 80];
        for m in [v4, v6] {
            let n = m.encode(&mut buf).unwrap();
            assert_eq!(n, m.encoded_len());
            assert_eq!(&buf[4..8], &[0, 0, 0, 0]);
            assert_eq!(Hello::decode(&buf[..n]).unwrap(), m);
            assert!(HelloAck::LEN <= n);
        }
        assert_eq!(v4.encoded_len(), 40);
        assert_eq!(v6.encoded_len(), 64);
        // Flow ID must be zero in HELLO.
        let n = v4.encode(&mut buf).unwrap();
        buf[7] = 1;
        assert_eq!(Hello::decode(&buf[..n]), Err(Error::BadField("flow_id")));
        buf[7] = 0;
        buf[9] = 5;
        assert_eq!(Hello::decode(&buf[..n]), Err(Error::BadField("af")));
        buf[9] = 6; // AF 6 with IPv4 length
        assert_eq!(Hello::decode(&buf[..n]), Err(Error::BadLength));
    }

    #[test]
    fn hello_ack() {
        let a = HelloAck {
            flow_id: 0xdead_beef,
            flow_kind: 1,
            af: AddressFamily::V6,
            supported_schemes: 0b11,
            max_k: 32,
            max_m: 4,
            max_t: 1100,
            rdma_mtu: 1024,
            nonce: 42,
            max_open_blocks: 512,
        };
        let mut buf = [0u8; 32];
        assert_eq!(a.encode(&mut buf), Ok(32));
        assert_eq!(buf[0], 0x13);
        assert_eq!(HelloAck::decode(&buf).unwrap(), a);
        assert_eq!(
            a.encode(&mut buf[..31]),
            Err(Error::BufferTooSmall { needed: 32 })
        );
    }
}
