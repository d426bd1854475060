//! RoCEv2: Base Transport Header parsing, opcode classification, RETH/AETH,
//! READ PSN accounting and the invariant CRC (ICRC).
//!
//! A RoCEv2 packet is an IPv4 or IPv6 packet carrying a UDP datagram to port
//! 4791 whose payload is `BTH | extension headers | payload | pad | ICRC`.
//!
//! # What counts as a CREM source
//!
//! CREM protects one direction of an RDMA connection and codes only packets
//! that carry a *new* PSN ([`PsnRole::is_source`]):
//!
//! * requester packets of RC and UC — SEND and RDMA WRITE first/middle/last/
//!   only (with immediate / invalidate), and for RC also RDMA READ requests,
//!   Compare&Swap, Fetch&Add, FLUSH and ATOMIC WRITE; UD SEND only;
//! * an RDMA READ request occupies its own PSN and the following
//!   `ceil(DMA Length / MTU) - 1` PSNs ([`read_psn_span`]): those are absent
//!   positions in the request direction (its responses use them in the other
//!   direction);
//! * responder packets are **not** sources: ACKNOWLEDGE (ACK, NAK, RNR NAK)
//!   repeats PSNs; READ responses and ATOMIC ACKNOWLEDGE reuse the requester's
//!   PSNs in the reverse direction ([`PsnRole::Response`]; an engine that wants
//!   to protect READ responses in the responder direction can opt in on that
//!   role explicitly);
//! * CNP (0x81) carries no sequence information; RD, XRC and manufacturer
//!   opcodes are [`PsnRole::Unknown`] and never sources.
//!
//! For UD the PSN space belongs to the *sending* QP, so a UD flow is only
//! well-defined per (source address, source QP in the DETH, destination QP).
//!
//! # Retention release
//!
//! The PSN an acknowledgment releases is the BTH PSN of the acknowledging
//! packet ([`RocePacket::acked_through`]): an ACK or ATOMIC ACKNOWLEDGE or a
//! READ response acknowledges through its own PSN; a NAK or RNR NAK through
//! the PSN before it.
//!
//! # ICRC
//!
//! Computed exactly like Linux's `drivers/infiniband/sw/rxe/rxe_icrc.c`: the
//! CRC-32 of IEEE 802.3 (reflected polynomial 0xEDB88320, initial value
//! 0xFFFFFFFF, final complement) over
//!
//! 1. 8 octets of 0xFF (the masked LRH; rxe starts from the equivalent seed
//!    0xDEBB20E3),
//! 2. the IP header with, for IPv4, TOS (DSCP+ECN), TTL and the header
//!    checksum set to all ones, and for IPv6 the traffic class, flow label and
//!    hop limit set to all ones,
//! 3. the UDP header with its checksum set to 0xFFFF,
//! 4. the BTH with its fifth octet (FECN, BECN, resv6 — "resv8a") set to 0xFF,
//! 5. the rest of the UDP payload up to, not including, the 4-octet ICRC;
//!
//! The ICRC is stored **little-endian** (the CRC register value as rxe writes
//! it on x86) in the last four octets of the UDP payload.
//!
//! rxe assumes a 20-octet IPv4 header and a 40-octet IPv6 header directly
//! followed by UDP; IPv4 options and IPv6 extension headers are reported as
//! [`Error::Unsupported`].

use super::psn::{Psn, PsnRange};

/// UDP destination port of RoCEv2.
pub const ROCEV2_UDP_PORT: u16 = 4791;
/// Base Transport Header size.
pub const BTH_LEN: usize = 12;
/// RDMA Extended Transport Header size.
pub const RETH_LEN: usize = 16;
/// ACK Extended Transport Header size.
pub const AETH_LEN: usize = 4;
/// Datagram Extended Transport Header size.
pub const DETH_LEN: usize = 8;
/// Atomic Extended Transport Header size.
pub const ATOMIC_ETH_LEN: usize = 28;
/// Atomic ACK Extended Transport Header size.
pub const ATOMIC_ACK_ETH_LEN: usize = 8;
/// Immediate data size.
pub const IMMDT_LEN: usize = 4;
/// Invalidate Extended Transport Header size.
pub const IETH_LEN: usize = 4;
/// FLUSH Extended Transport Header size.
pub const FETH_LEN: usize = 4;
/// Reserved octets following the BTH of a CNP.
pub const CNP_PAD_LEN: usize = 16;
/// Invariant CRC size.
pub const ICRC_LEN: usize = 4;
/// Minimal IPv4 header (the only size supported).
pub const IPV4_HDR_LEN: usize = 20;
/// IPv6 fixed header.
pub const IPV6_HDR_LEN: usize = 40;
/// UDP header.
pub const UDP_HDR_LEN: usize = 8;

/// Errors of the RoCEv2 parsers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Error {
    /// The input ends before a required header or field.
    Truncated,
    /// A field has an inconsistent value (the field's name).
    BadField(&'static str),
    /// Valid but not supported here (IPv4 options, IPv6 extension headers,
    /// non-UDP, unknown opcode where headers must be known, …).
    Unsupported(&'static str),
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::Truncated => f.write_str("packet truncated"),
            Error::BadField(n) => write!(f, "invalid field: {n}"),
            Error::Unsupported(n) => write!(f, "unsupported: {n}"),
        }
    }
}

/// Result of the RoCEv2 parsers.
pub type Result<T> = core::result::Result<T, Error>;

#[inline]
fn be16(b: &[u8], off: usize) -> Result<u16> {
    match b.get(off..off + 2) {
        Some(&[x, y]) => Ok(u16::from_be_bytes([x, y])),
        _ => Err(Error::Truncated),
    }
}

#[inline]
fn be32(b: &[u8], off: usize) -> Result<u32> {
    match b.get(off..off + 4) {
        Some(&[x, y, z, w]) => Ok(u32::from_be_bytes([x, y, z, w])),
        _ => Err(Error::Truncated),
    }
}

#[inline]
fn be64(b: &[u8], off: usize) -> Result<u64> {
    Ok(((be32(b, off)? as u64) << 32) | be32(b, off + 4)? as u64)
}

#[inline]
fn byte(b: &[u8], off: usize) -> Result<u8> {
    b.get(off).copied().ok_or(Error::Truncated)
}

// ---------------------------------------------------------------------------
// BTH

/// The Base Transport Header (12 octets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bth {
    /// OpCode.
    pub opcode: u8,
    /// Solicited Event.
    pub se: bool,
    /// MigReq.
    pub mig_req: bool,
    /// Pad Count (0..=3 octets of padding before the ICRC).
    pub pad_count: u8,
    /// Transport header version (4 bits).
    pub tver: u8,
    /// Partition key.
    pub pkey: u16,
    /// FECN.
    pub fecn: bool,
    /// BECN.
    pub becn: bool,
    /// The six reserved bits after FECN/BECN.
    pub resv6: u8,
    /// Destination QP (24 bits).
    pub dest_qp: u32,
    /// AckReq.
    pub ack_req: bool,
    /// The seven reserved bits after AckReq.
    pub resv7: u8,
    /// Packet sequence number.
    pub psn: Psn,
}

impl Bth {
    /// Parses the BTH from the first 12 octets of `buf` (a UDP payload).
    pub fn parse(buf: &[u8]) -> Result<Bth> {
        let Some((b, _)) = buf.split_first_chunk::<BTH_LEN>() else {
            return Err(Error::Truncated);
        };
        Ok(Bth {
            opcode: b[0],
            se: b[1] & 0x80 != 0,
            mig_req: b[1] & 0x40 != 0,
            pad_count: (b[1] >> 4) & 0x03,
            tver: b[1] & 0x0f,
            pkey: u16::from_be_bytes([b[2], b[3]]),
            fecn: b[4] & 0x80 != 0,
            becn: b[4] & 0x40 != 0,
            resv6: b[4] & 0x3f,
            dest_qp: u32::from_be_bytes([0, b[5], b[6], b[7]]),
            ack_req: b[8] & 0x80 != 0,
            resv7: b[8] & 0x7f,
            psn: Psn::from_be_bytes([b[9], b[10], b[11]]),
        })
    }

    /// Serializes the BTH into the first 12 octets of `out`.
    pub fn write(&self, out: &mut [u8]) -> Result<()> {
        let Some((b, _)) = out.split_first_chunk_mut::<BTH_LEN>() else {
            return Err(Error::Truncated);
        };
        let q = (self.dest_qp & 0x00ff_ffff).to_be_bytes();
        let p = self.psn.to_be_bytes();
        *b = [
            self.opcode,
            (u8::from(self.se) << 7)
                | (u8::from(self.mig_req) << 6)
                | ((self.pad_count & 3) << 4)
                | (self.tver & 0x0f),
            (self.pkey >> 8) as u8,
            self.pkey as u8,
            (u8::from(self.fecn) << 7) | (u8::from(self.becn) << 6) | (self.resv6 & 0x3f),
            q[1],
            q[2],
            q[3],
            (u8::from(self.ack_req) << 7) | (self.resv7 & 0x7f),
            p[0],
            p[1],
            p[2],
        ];
        Ok(())
    }

    /// Classification of the opcode.
    pub const fn info(&self) -> OpcodeInfo {
        opcode_info(self.opcode)
    }
}

// ---------------------------------------------------------------------------
// Opcodes

/// Transport service of an opcode (its top three bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Reliable Connection (0x00..=0x1f).
    Rc,
    /// Unreliable Connection (0x20..=0x3f).
    Uc,
    /// Reliable Datagram (0x40..=0x5f), not supported by CREM.
    Rd,
    /// Unreliable Datagram (0x60..=0x7f).
    Ud,
    /// Congestion notification (0x80..=0x9f; 0x81 is CNP).
    Cnp,
    /// Extended Reliable Connection (0xa0..=0xbf), not supported by CREM.
    Xrc,
    /// Reserved (0xc0..=0xdf) and manufacturer-specific (0xe0..=0xff).
    Other,
}

/// How an opcode relates to the PSN sequence of its direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PsnRole {
    /// Requester packet that consumes exactly one new PSN (SEND, WRITE,
    /// atomics, FLUSH, ATOMIC WRITE). A CREM source.
    Request,
    /// RDMA READ request: its own PSN plus `ceil(len/MTU) - 1` further PSNs
    /// that never appear in this direction. A CREM source.
    ReadRequest,
    /// READ response or ATOMIC ACKNOWLEDGE: responder direction, reusing the
    /// requester's PSNs. Not a source by default.
    Response,
    /// ACKNOWLEDGE (ACK / NAK / RNR NAK): PSN not new. Never a source.
    Ack,
    /// Congestion Notification Packet. Never a source.
    Cnp,
    /// Reserved, unsupported transport (RD, XRC) or vendor opcode.
    Unknown,
}

impl PsnRole {
    /// Packets of this role are CREM source packets (carry a new PSN).
    pub const fn is_source(self) -> bool {
        matches!(self, PsnRole::Request | PsnRole::ReadRequest)
    }
}

/// Header layout and classification of one opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OpcodeInfo {
    /// Transport service.
    pub transport: Transport,
    /// PSN role.
    pub role: PsnRole,
    /// DETH present (UD).
    pub deth: bool,
    /// FETH present (FLUSH).
    pub feth: bool,
    /// RETH present.
    pub reth: bool,
    /// AtomicETH present.
    pub atomic_eth: bool,
    /// AETH present.
    pub aeth: bool,
    /// AtomicAckETH present.
    pub atomic_ack_eth: bool,
    /// Immediate data present.
    pub immdt: bool,
    /// IETH present.
    pub ieth: bool,
    /// The 16 reserved octets of a CNP.
    pub cnp_pad: bool,
    /// The opcode may carry payload.
    pub payload: bool,
    /// First packet of a message (or only).
    pub first: bool,
    /// Last packet of a message (or only).
    pub last: bool,
}

impl OpcodeInfo {
    const UNKNOWN: OpcodeInfo = OpcodeInfo {
        transport: Transport::Other,
        role: PsnRole::Unknown,
        deth: false,
        feth: false,
        reth: false,
        atomic_eth: false,
        aeth: false,
        atomic_ack_eth: false,
        immdt: false,
        ieth: false,
        cnp_pad: false,
        payload: false,
        first: false,
        last: false,
    };

    /// The opcode is known (role is not [`PsnRole::Unknown`]).
    pub const fn is_known(&self) -> bool {
        !matches!(self.role, PsnRole::Unknown)
    }

    /// Octets of extension headers between the BTH and the payload.
    pub const fn ext_len(&self) -> usize {
        (if self.deth { DETH_LEN } else { 0 })
            + (if self.feth { FETH_LEN } else { 0 })
            + (if self.reth { RETH_LEN } else { 0 })
            + (if self.atomic_eth { ATOMIC_ETH_LEN } else { 0 })
            + (if self.aeth { AETH_LEN } else { 0 })
            + (if self.atomic_ack_eth {
                ATOMIC_ACK_ETH_LEN
            } else {
                0
            })
            + (if self.immdt { IMMDT_LEN } else { 0 })
            + (if self.ieth { IETH_LEN } else { 0 })
            + (if self.cnp_pad { CNP_PAD_LEN } else { 0 })
    }

    /// Offset of the RETH from the start of the BTH, if present.
    pub const fn reth_offset(&self) -> Option<usize> {
        if self.reth {
            Some(
                BTH_LEN
                    + if self.deth { DETH_LEN } else { 0 }
                    + if self.feth { FETH_LEN } else { 0 },
            )
        } else {
            None
        }
    }

    /// Offset of the AETH from the start of the BTH, if present.
    pub const fn aeth_offset(&self) -> Option<usize> {
        if self.aeth {
            Some(BTH_LEN)
        } else {
            None
        }
    }
}

/// Opcode constants (IBA vol. 1 table 38; `include/rdma/ib_pack.h`).
pub mod opcode {
    /// RC SEND First.
    pub const RC_SEND_FIRST: u8 = 0x00;
    /// RC SEND Middle.
    pub const RC_SEND_MIDDLE: u8 = 0x01;
    /// RC SEND Last.
    pub const RC_SEND_LAST: u8 = 0x02;
    /// RC SEND Last with Immediate.
    pub const RC_SEND_LAST_IMM: u8 = 0x03;
    /// RC SEND Only.
    pub const RC_SEND_ONLY: u8 = 0x04;
    /// RC SEND Only with Immediate.
    pub const RC_SEND_ONLY_IMM: u8 = 0x05;
    /// RC RDMA WRITE First.
    pub const RC_WRITE_FIRST: u8 = 0x06;
    /// RC RDMA WRITE Middle.
    pub const RC_WRITE_MIDDLE: u8 = 0x07;
    /// RC RDMA WRITE Last.
    pub const RC_WRITE_LAST: u8 = 0x08;
    /// RC RDMA WRITE Last with Immediate.
    pub const RC_WRITE_LAST_IMM: u8 = 0x09;
    /// RC RDMA WRITE Only.
    pub const RC_WRITE_ONLY: u8 = 0x0a;
    /// RC RDMA WRITE Only with Immediate.
    pub const RC_WRITE_ONLY_IMM: u8 = 0x0b;
    /// RC RDMA READ Request.
    pub const RC_READ_REQUEST: u8 = 0x0c;
    /// RC RDMA READ Response First.
    pub const RC_READ_RESPONSE_FIRST: u8 = 0x0d;
    /// RC RDMA READ Response Middle.
    pub const RC_READ_RESPONSE_MIDDLE: u8 = 0x0e;
    /// RC RDMA READ Response Last.
    pub const RC_READ_RESPONSE_LAST: u8 = 0x0f;
    /// RC RDMA READ Response Only.
    pub const RC_READ_RESPONSE_ONLY: u8 = 0x10;
    /// RC Acknowledge.
    pub const RC_ACKNOWLEDGE: u8 = 0x11;
    /// RC ATOMIC Acknowledge.
    pub const RC_ATOMIC_ACKNOWLEDGE: u8 = 0x12;
    /// RC CmpSwap.
    pub const RC_COMPARE_SWAP: u8 = 0x13;
    /// RC FetchAdd.
    pub const RC_FETCH_ADD: u8 = 0x14;
    /// RC SEND Last with Invalidate.
    pub const RC_SEND_LAST_INV: u8 = 0x16;
    /// RC SEND Only with Invalidate.
    pub const RC_SEND_ONLY_INV: u8 = 0x17;
    /// RC FLUSH.
    pub const RC_FLUSH: u8 = 0x1c;
    /// RC ATOMIC WRITE.
    pub const RC_ATOMIC_WRITE: u8 = 0x1d;
    /// UC SEND First.
    pub const UC_SEND_FIRST: u8 = 0x20;
    /// UC SEND Only.
    pub const UC_SEND_ONLY: u8 = 0x24;
    /// UC RDMA WRITE Only.
    pub const UC_WRITE_ONLY: u8 = 0x2a;
    /// UD SEND Only.
    pub const UD_SEND_ONLY: u8 = 0x64;
    /// UD SEND Only with Immediate.
    pub const UD_SEND_ONLY_IMM: u8 = 0x65;
    /// Congestion Notification Packet.
    pub const CNP: u8 = 0x81;
}

/// Classifies an opcode and gives its header layout. Unknown, reserved, RD,
/// XRC and vendor opcodes return an info with [`PsnRole::Unknown`] and no
/// extension headers.
pub const fn opcode_info(op: u8) -> OpcodeInfo {
    let u = OpcodeInfo::UNKNOWN;
    let transport = match op >> 5 {
        0 => Transport::Rc,
        1 => Transport::Uc,
        2 => Transport::Rd,
        3 => Transport::Ud,
        4 => Transport::Cnp,
        5 => Transport::Xrc,
        _ => Transport::Other,
    };
    let low = op & 0x1f;
    let base = OpcodeInfo { transport, ..u };
    match transport {
        Transport::Rc | Transport::Uc => {
            let rc = matches!(transport, Transport::Rc);
            let req = OpcodeInfo {
                role: PsnRole::Request,
                payload: true,
                ..base
            };
            match low {
                // SEND first / middle / last / last imm / only / only imm
                0x00 => OpcodeInfo { first: true, ..req },
                0x01 => req,
                0x02 => OpcodeInfo { last: true, ..req },
                0x03 => OpcodeInfo {
                    last: true,
                    immdt: true,
                    ..req
                },
                0x04 => OpcodeInfo {
                    first: true,
                    last: true,
                    ..req
                },
                0x05 => OpcodeInfo {
                    first: true,
                    last: true,
                    immdt: true,
                    ..req
                },
                // RDMA WRITE
                0x06 => OpcodeInfo {
                    first: true,
                    reth: true,
                    ..req
                },
                0x07 => req,
                0x08 => OpcodeInfo { last: true, ..req },
                0x09 => OpcodeInfo {
                    last: true,
                    immdt: true,
                    ..req
                },
                0x0a => OpcodeInfo {
                    first: true,
                    last: true,
                    reth: true,
                    ..req
                },
                0x0b => OpcodeInfo {
                    first: true,
                    last: true,
                    reth: true,
                    immdt: true,
                    ..req
                },
                _ if !rc => base,
                0x0c => OpcodeInfo {
                    role: PsnRole::ReadRequest,
                    reth: true,
                    first: true,
                    last: true,
                    ..base
                },
                0x0d => OpcodeInfo {
                    role: PsnRole::Response,
                    aeth: true,
                    payload: true,
                    first: true,
                    ..base
                },
                0x0e => OpcodeInfo {
                    role: PsnRole::Response,
                    payload: true,
                    ..base
                },
                0x0f => OpcodeInfo {
                    role: PsnRole::Response,
                    aeth: true,
                    payload: true,
                    last: true,
                    ..base
                },
                0x10 => OpcodeInfo {
                    role: PsnRole::Response,
                    aeth: true,
                    payload: true,
                    first: true,
                    last: true,
                    ..base
                },
                0x11 => OpcodeInfo {
                    role: PsnRole::Ack,
                    aeth: true,
                    first: true,
                    last: true,
                    ..base
                },
                0x12 => OpcodeInfo {
                    role: PsnRole::Response,
                    aeth: true,
                    atomic_ack_eth: true,
                    first: true,
                    last: true,
                    ..base
                },
                0x13 | 0x14 => OpcodeInfo {
                    role: PsnRole::Request,
                    atomic_eth: true,
                    first: true,
                    last: true,
                    ..base
                },
                0x16 => OpcodeInfo {
                    last: true,
                    ieth: true,
                    ..req
                },
                0x17 => OpcodeInfo {
                    first: true,
                    last: true,
                    ieth: true,
                    ..req
                },
                0x1c => OpcodeInfo {
                    role: PsnRole::Request,
                    feth: true,
                    reth: true,
                    first: true,
                    last: true,
                    ..base
                },
                0x1d => OpcodeInfo {
                    role: PsnRole::Request,
                    reth: true,
                    payload: true,
                    first: true,
                    last: true,
                    ..base
                },
                _ => base,
            }
        }
        Transport::Ud => match low {
            0x04 => OpcodeInfo {
                role: PsnRole::Request,
                deth: true,
                payload: true,
                first: true,
                last: true,
                ..base
            },
            0x05 => OpcodeInfo {
                role: PsnRole::Request,
                deth: true,
                immdt: true,
                payload: true,
                first: true,
                last: true,
                ..base
            },
            _ => base,
        },
        Transport::Cnp => {
            if op == opcode::CNP {
                OpcodeInfo {
                    role: PsnRole::Cnp,
                    cnp_pad: true,
                    first: true,
                    last: true,
                    ..base
                }
            } else {
                base
            }
        }
        _ => base,
    }
}

/// Is `op` a CREM source opcode? See the module documentation.
pub const fn is_source_opcode(op: u8) -> bool {
    opcode_info(op).role.is_source()
}

// ---------------------------------------------------------------------------
// Extension headers

/// RDMA Extended Transport Header (16 octets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reth {
    /// Virtual address.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// DMA length in octets.
    pub dma_len: u32,
}

impl Reth {
    /// Parses a RETH from the first 16 octets of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Reth> {
        Ok(Reth {
            va: be64(buf, 0)?,
            rkey: be32(buf, 8)?,
            dma_len: be32(buf, 12)?,
        })
    }
}

/// Number of PSNs an RDMA READ request of `dma_len` octets consumes with
/// RDMA MTU `mtu`: `ceil(dma_len / mtu)`, at least 1 (a zero-length READ
/// still has one response packet). This matches rxe's `update_wqe_psn`.
pub const fn read_psn_count(dma_len: u32, mtu: u32) -> Result<u32> {
    if mtu == 0 {
        return Err(Error::BadField("mtu"));
    }
    // Cannot overflow (q + 1 only when the remainder is non-zero, i.e. mtu > 1),
    // but saturating keeps any panic path out of the kernel build.
    let q = dma_len / mtu;
    let n = q.saturating_add((dma_len % mtu != 0) as u32);
    Ok(if n == 0 { 1 } else { n })
}

/// The PSNs an RDMA READ request with BTH PSN `psn` consumes: its own and the
/// following `read_psn_count - 1`. Only `psn` appears in the request
/// direction; the rest are absent positions.
pub const fn read_psn_span(psn: Psn, dma_len: u32, mtu: u32) -> Result<PsnRange> {
    match read_psn_count(dma_len, mtu) {
        Ok(n) => Ok(PsnRange::new(psn, n)),
        Err(e) => Err(e),
    }
}

/// The RDMA MTUs (IBTA's path MTU values), octets of payload per packet.
pub const IB_MTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// Octets a link MTU must leave to RoCEv2 headers for one RDMA MTU of
/// payload: Linux's `iboe_get_mtu` (GRH 40, UDP 8, BTH 12, XRC 4,
/// AtomicETH 28, ICRC 4), which rdma_cm and the RoCE drivers use.
pub const ROCE_LINK_OVERHEAD: u32 = 96;

/// The largest RDMA MTU an RDMA device on a link of `link_mtu` octets can
/// use (the port's active MTU), at least 256.
pub const fn ib_mtu_for_link(link_mtu: u32) -> u32 {
    let room = link_mtu.saturating_sub(ROCE_LINK_OVERHEAD);
    let mut i = IB_MTUS.len();
    while i > 1 {
        i -= 1;
        if IB_MTUS[i] <= room {
            return IB_MTUS[i];
        }
    }
    IB_MTUS[0]
}

/// The smallest RDMA MTU a packet with `payload` octets of payload fits,
/// `None` above 4096.
pub const fn ib_mtu_covering(payload: u32) -> Option<u32> {
    let mut i = 0;
    while i < IB_MTUS.len() {
        if payload <= IB_MTUS[i] {
            return Some(IB_MTUS[i]);
        }
        i += 1;
    }
    None
}

/// The symbol length T that fits every source packet of a flow with RDMA
/// MTU `mtu`: the draft's "largest UDP payload of the flow plus 2", the
/// largest being a full packet with the most extension headers a source
/// carries with payload (BTH 12, RETH 16 and ImmDt 4 of a WRITE only with
/// immediate; pad is 0 at a full MTU, a multiple of 4) and the ICRC 4.
pub const fn symbol_len_for_mtu(mtu: u32) -> u16 {
    let t = mtu.saturating_add(BTH_LEN as u32 + 16 + 4 + ICRC_LEN as u32 + 2);
    if t > u16::MAX as u32 {
        u16::MAX
    } else {
        t as u16
    }
}

/// The largest symbol length a RoCEv2 flow needs (RDMA MTU 4096).
pub const MAX_SYMBOL_LEN: u16 = symbol_len_for_mtu(4096);

/// NAK codes of an AETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NakCode {
    /// 0: PSN sequence error.
    PsnSequenceError,
    /// 1: invalid request.
    InvalidRequest,
    /// 2: remote access error.
    RemoteAccessError,
    /// 3: remote operational error.
    RemoteOperationalError,
    /// 4: invalid RD request.
    InvalidRdRequest,
    /// 5..=31: reserved.
    Reserved(u8),
}

/// Meaning of an AETH syndrome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AethKind {
    /// ACK with a 5-bit credit count code (31 = invalid / no flow control).
    Ack {
        /// Credit count code.
        credit_code: u8,
    },
    /// RNR NAK with a 5-bit timer code.
    RnrNak {
        /// RNR timer code.
        timer: u8,
    },
    /// NAK.
    Nak(NakCode),
    /// Reserved syndrome (type 0b10 or the top bit set).
    Reserved,
}

/// ACK Extended Transport Header (4 octets): Syndrome (8) + MSN (24).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Aeth {
    /// Syndrome octet.
    pub syndrome: u8,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

/// Credits for the AETH credit codes 0..=30 (IBA 9.7.5.1; rdmavt's
/// `credit_table`).
const CREDIT_TABLE: [u16; 31] = [
    0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
    2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
];

impl Aeth {
    /// Parses an AETH from the first 4 octets of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Aeth> {
        let v = be32(buf, 0)?;
        Ok(Aeth {
            syndrome: (v >> 24) as u8,
            msn: v & 0x00ff_ffff,
        })
    }

    /// Decodes the syndrome (type = bits 7..5 as rxe's `AETH_TYPE_MASK`).
    pub const fn kind(&self) -> AethKind {
        let v = self.syndrome & 0x1f;
        match self.syndrome & 0xe0 {
            0x00 => AethKind::Ack { credit_code: v },
            0x20 => AethKind::RnrNak { timer: v },
            0x60 => AethKind::Nak(match v {
                0 => NakCode::PsnSequenceError,
                1 => NakCode::InvalidRequest,
                2 => NakCode::RemoteAccessError,
                3 => NakCode::RemoteOperationalError,
                4 => NakCode::InvalidRdRequest,
                o => NakCode::Reserved(o),
            }),
            _ => AethKind::Reserved,
        }
    }

    /// Credits announced by an ACK: `None` for NAKs and for code 31
    /// (end-to-end flow control not in use).
    pub fn credits(&self) -> Option<u32> {
        match self.kind() {
            AethKind::Ack { credit_code } => {
                CREDIT_TABLE.get(credit_code as usize).map(|&c| c as u32)
            }
            _ => None,
        }
    }
}

/// Datagram Extended Transport Header (8 octets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Deth {
    /// Queue key.
    pub qkey: u32,
    /// Source QP (24 bits).
    pub src_qp: u32,
}

// ---------------------------------------------------------------------------
// Whole RoCEv2 UDP payload

/// A parsed RoCEv2 UDP payload (zero-copy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RocePacket<'a> {
    /// Base Transport Header.
    pub bth: Bth,
    /// Opcode classification / layout.
    pub info: OpcodeInfo,
    /// DETH (UD).
    pub deth: Option<Deth>,
    /// RETH (WRITE first/only, READ request, FLUSH, ATOMIC WRITE).
    pub reth: Option<Reth>,
    /// AETH (ACK, READ response first/last/only, ATOMIC ACK).
    pub aeth: Option<Aeth>,
    /// Immediate data.
    pub immdt: Option<u32>,
    /// Invalidated R_Key.
    pub ieth: Option<u32>,
    /// Payload after the extension headers, without pad and ICRC.
    pub payload: &'a [u8],
    /// ICRC as stored (little-endian value of the last four octets).
    pub icrc: u32,
}

impl<'a> RocePacket<'a> {
    /// Parses a RoCEv2 UDP payload (`BTH … ICRC`). Fails on unknown opcodes
    /// (their header layout is not known), on truncation, and when Pad Count
    /// exceeds the payload.
    pub fn parse(udp_payload: &'a [u8]) -> Result<RocePacket<'a>> {
        let bth = Bth::parse(udp_payload)?;
        let info = opcode_info(bth.opcode);
        if !info.is_known() {
            return Err(Error::Unsupported("opcode"));
        }
        let hdr_end = BTH_LEN + info.ext_len();
        let body_end = udp_payload
            .len()
            .checked_sub(ICRC_LEN)
            .ok_or(Error::Truncated)?;
        if body_end < hdr_end {
            return Err(Error::Truncated);
        }
        let mut off = BTH_LEN;
        let mut take = |present: bool, len: usize| -> Option<usize> {
            if present {
                let o = off;
                off += len;
                Some(o)
            } else {
                None
            }
        };
        let deth_o = take(info.deth, DETH_LEN);
        let _feth_o = take(info.feth, FETH_LEN);
        let reth_o = take(info.reth, RETH_LEN);
        let _atomic_o = take(info.atomic_eth, ATOMIC_ETH_LEN);
        let aeth_o = take(info.aeth, AETH_LEN);
        let _atomic_ack_o = take(info.atomic_ack_eth, ATOMIC_ACK_ETH_LEN);
        let imm_o = take(info.immdt, IMMDT_LEN);
        let ieth_o = take(info.ieth, IETH_LEN);
        let deth = match deth_o {
            Some(o) => Some(Deth {
                qkey: be32(udp_payload, o)?,
                src_qp: be32(udp_payload, o + 4)? & 0x00ff_ffff,
            }),
            None => None,
        };
        let reth = match reth_o {
            Some(o) => Some(Reth::parse(udp_payload.get(o..).ok_or(Error::Truncated)?)?),
            None => None,
        };
        let aeth = match aeth_o {
            Some(o) => Some(Aeth::parse(udp_payload.get(o..).ok_or(Error::Truncated)?)?),
            None => None,
        };
        let immdt = match imm_o {
            Some(o) => Some(be32(udp_payload, o)?),
            None => None,
        };
        let ieth = match ieth_o {
            Some(o) => Some(be32(udp_payload, o)?),
            None => None,
        };
        let pad = bth.pad_count as usize;
        let payload_end = body_end
            .checked_sub(pad)
            .ok_or(Error::BadField("pad_count"))?;
        if payload_end < hdr_end {
            return Err(Error::BadField("pad_count"));
        }
        let payload = udp_payload
            .get(hdr_end..payload_end)
            .ok_or(Error::Truncated)?;
        let icrc = stored_icrc(udp_payload)?;
        Ok(RocePacket {
            bth,
            info,
            deth,
            reth,
            aeth,
            immdt,
            ieth,
            payload,
            icrc,
        })
    }

    /// The packet is a CREM source (carries a new PSN).
    pub const fn is_source(&self) -> bool {
        self.info.role.is_source()
    }

    /// The RDMA MTU this packet shows, exactly: a FIRST or MIDDLE packet of
    /// a multi-packet message carries one MTU of payload (the IBTA fills
    /// every packet but the last). `None` for any other packet, or a length
    /// that is no RDMA MTU (not a well-formed first or middle packet).
    pub fn path_mtu(&self) -> Option<u32> {
        if !self.info.payload || self.info.last {
            return None;
        }
        let n = u32::try_from(self.payload.len()).ok()?;
        IB_MTUS.contains(&n).then_some(n)
    }

    /// For a READ request: the PSNs it consumes given the RDMA MTU.
    pub fn read_span(&self, mtu: u32) -> Option<Result<PsnRange>> {
        match (self.info.role, self.reth) {
            (PsnRole::ReadRequest, Some(r)) => Some(read_psn_span(self.bth.psn, r.dma_len, mtu)),
            _ => None,
        }
    }

    /// PSNs this packet allows the requester side to stop retaining: the
    /// returned PSN and everything before it. ACK (syndrome ACK), ATOMIC
    /// ACKNOWLEDGE and READ responses acknowledge through their BTH PSN; NAK
    /// and RNR NAK through the PSN before it. `None` for other packets.
    pub fn acked_through(&self) -> Option<Psn> {
        match self.info.role {
            PsnRole::Response => Some(self.bth.psn),
            PsnRole::Ack => match self.aeth.map(|a| a.kind()) {
                Some(AethKind::Ack { .. }) => Some(self.bth.psn),
                Some(AethKind::Nak(_)) | Some(AethKind::RnrNak { .. }) => Some(self.bth.psn.prev()),
                _ => None,
            },
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------
// CRC-32 and ICRC

/// Reflected CRC-32 polynomial (IEEE 802.3).
pub const CRC32_POLY: u32 = 0xEDB8_8320;

/// CRC register after processing 8 octets of 0xFF from 0xFFFFFFFF (rxe's
/// masked-LRH seed).
pub const ICRC_SEED: u32 = 0xDEBB_20E3;

const fn make_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ CRC32_POLY
            } else {
                c >> 1
            };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut s = 1;
        while s < 8 {
            let prev = t[s - 1][i];
            t[s][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            s += 1;
        }
        i += 1;
    }
    t
}

/// Slicing-by-8 tables; `CRC_TABLES[0]` is the classic 256-entry table.
static CRC_TABLES: [[u32; 256]; 8] = make_tables();

/// Advances a raw CRC-32 register over `data` (no initial or final
/// complement), like the kernel's `crc32_le`.
pub fn crc32_update(mut crc: u32, data: &[u8]) -> u32 {
    let [t0, t1, t2, t3, t4, t5, t6, t7] = &CRC_TABLES;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        if let &[b0, b1, b2, b3, b4, b5, b6, b7] = c {
            let lo = crc ^ u32::from_le_bytes([b0, b1, b2, b3]);
            crc = t7[(lo & 0xff) as usize]
                ^ t6[((lo >> 8) & 0xff) as usize]
                ^ t5[((lo >> 16) & 0xff) as usize]
                ^ t4[(lo >> 24) as usize]
                ^ t3[b4 as usize]
                ^ t2[b5 as usize]
                ^ t1[b6 as usize]
                ^ t0[b7 as usize];
        }
    }
    for &b in chunks.remainder() {
        crc = (crc >> 8) ^ t0[((crc ^ b as u32) & 0xff) as usize];
    }
    crc
}

/// The standard CRC-32 (zlib / Ethernet) of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    !crc32_update(0xFFFF_FFFF, data)
}

/// The ICRC stored in the last four octets of a RoCEv2 UDP payload
/// (little-endian).
pub fn stored_icrc(udp_payload: &[u8]) -> Result<u32> {
    let n = udp_payload.len();
    let s = n.checked_sub(ICRC_LEN).ok_or(Error::Truncated)?;
    match udp_payload.get(s..) {
        Some(&[a, b, c, d]) => Ok(u32::from_le_bytes([a, b, c, d])),
        _ => Err(Error::Truncated),
    }
}

/// CRC over the masked UDP header, masked BTH and the rest of the payload
/// before the ICRC, continuing from `crc`.
fn icrc_udp_part(mut crc: u32, udp: &[u8]) -> Result<u32> {
    let Some((uh, payload)) = udp.split_first_chunk::<UDP_HDR_LEN>() else {
        return Err(Error::Truncated);
    };
    if payload.len() < BTH_LEN + ICRC_LEN {
        return Err(Error::Truncated);
    }
    let mut u = *uh;
    u[6] = 0xff;
    u[7] = 0xff;
    crc = crc32_update(crc, &u);
    let Some((bth, rest)) = payload.split_first_chunk::<BTH_LEN>() else {
        return Err(Error::Truncated);
    };
    let mut b = *bth;
    b[4] = 0xff;
    crc = crc32_update(crc, &b);
    let body_len = rest.len().checked_sub(ICRC_LEN).ok_or(Error::Truncated)?;
    let body = rest.get(..body_len).ok_or(Error::Truncated)?;
    Ok(crc32_update(crc, body))
}

/// ICRC of a RoCEv2-over-IPv4 packet. `ip_hdr` is the 20-octet IPv4 header
/// (version 4, IHL 5); `udp` is the whole UDP datagram — 8-octet header, then
/// the payload ending with the 4-octet ICRC field, which is not covered.
pub fn icrc_v4(ip_hdr: &[u8], udp: &[u8]) -> Result<u32> {
    let Some((h, _)) = ip_hdr.split_first_chunk::<IPV4_HDR_LEN>() else {
        return Err(Error::Truncated);
    };
    if h[0] >> 4 != 4 {
        return Err(Error::BadField("ip_version"));
    }
    if h[0] & 0x0f != 5 || ip_hdr.len() != IPV4_HDR_LEN {
        return Err(Error::Unsupported("ipv4 options"));
    }
    let mut m = *h;
    m[1] = 0xff; // TOS: DSCP + ECN
    m[8] = 0xff; // TTL
    m[10] = 0xff; // header checksum
    m[11] = 0xff;
    let crc = crc32_update(ICRC_SEED, &m);
    Ok(!icrc_udp_part(crc, udp)?)
}

/// ICRC of a RoCEv2-over-IPv6 packet. `ip_hdr` is the 40-octet IPv6 header
/// (next header UDP, no extension headers); `udp` as for [`icrc_v4`].
pub fn icrc_v6(ip_hdr: &[u8], udp: &[u8]) -> Result<u32> {
    let Some((h, _)) = ip_hdr.split_first_chunk::<IPV6_HDR_LEN>() else {
        return Err(Error::Truncated);
    };
    if h[0] >> 4 != 6 {
        return Err(Error::BadField("ip_version"));
    }
    if ip_hdr.len() != IPV6_HDR_LEN {
        return Err(Error::Unsupported("ipv6 extension headers"));
    }
    let mut m = *h;
    // Version stays; traffic class (8 bits) and flow label (20 bits) all ones.
    m[0] |= 0x0f;
    m[1] = 0xff;
    m[2] = 0xff;
    m[3] = 0xff;
    m[7] = 0xff; // hop limit
    let crc = crc32_update(ICRC_SEED, &m);
    Ok(!icrc_udp_part(crc, udp)?)
}

/// Checks the ICRC of a RoCEv2-over-IPv4 packet (see [`icrc_v4`]).
pub fn verify_v4(ip_hdr: &[u8], udp: &[u8]) -> Result<bool> {
    Ok(icrc_v4(ip_hdr, udp)? == stored_icrc(udp)?)
}

/// Checks the ICRC of a RoCEv2-over-IPv6 packet (see [`icrc_v6`]).
pub fn verify_v6(ip_hdr: &[u8], udp: &[u8]) -> Result<bool> {
    Ok(icrc_v6(ip_hdr, udp)? == stored_icrc(udp)?)
}

/// IP version of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IpVersion {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

/// A UDP-in-IP packet split into its parts (zero-copy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpUdp<'a> {
    /// IP version.
    pub version: IpVersion,
    /// The IP header (20 or 40 octets).
    pub ip_hdr: &'a [u8],
    /// The UDP datagram (header and payload), bounded by the UDP length.
    pub udp: &'a [u8],
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// IPv4 TOS or IPv6 traffic class (DSCP << 2 | ECN).
    pub tos: u8,
}

impl<'a> IpUdp<'a> {
    /// The UDP payload.
    pub fn payload(&self) -> &'a [u8] {
        self.udp.get(UDP_HDR_LEN..).unwrap_or(&[])
    }

    /// ECN codepoint (2 bits; 3 = CE).
    pub const fn ecn(&self) -> u8 {
        self.tos & 0x03
    }
}

/// Splits a raw IP packet (starting at the IP header) into IP header and UDP
/// datagram, checking versions, lengths and that the protocol is UDP. Octets
/// beyond the IP total length (link padding) are ignored.
pub fn split_ip_udp(pkt: &[u8]) -> Result<IpUdp<'_>> {
    let v = byte(pkt, 0)? >> 4;
    let (version, hdr_len, total, proto, tos) = match v {
        4 => {
            let ihl = (byte(pkt, 0)? & 0x0f) as usize * 4;
            if ihl < IPV4_HDR_LEN {
                return Err(Error::BadField("ihl"));
            }
            if ihl != IPV4_HDR_LEN {
                return Err(Error::Unsupported("ipv4 options"));
            }
            let total = be16(pkt, 2)? as usize;
            let frag = be16(pkt, 6)?;
            if frag & 0x3fff != 0 {
                return Err(Error::Unsupported("ipv4 fragment"));
            }
            (IpVersion::V4, ihl, total, byte(pkt, 9)?, byte(pkt, 1)?)
        }
        6 => {
            let plen = be16(pkt, 4)? as usize;
            let tc = ((be16(pkt, 0)? >> 4) & 0xff) as u8;
            (
                IpVersion::V6,
                IPV6_HDR_LEN,
                IPV6_HDR_LEN + plen,
                byte(pkt, 6)?,
                tc,
            )
        }
        _ => return Err(Error::BadField("ip_version")),
    };
    if proto != 17 {
        return Err(Error::Unsupported("not udp"));
    }
    if total < hdr_len + UDP_HDR_LEN {
        return Err(Error::BadField("ip_length"));
    }
    let pkt = pkt.get(..total).ok_or(Error::Truncated)?;
    let (ip_hdr, rest) = pkt.split_at_checked(hdr_len).ok_or(Error::Truncated)?;
    let udp_len = be16(rest, 4)? as usize;
    if udp_len < UDP_HDR_LEN || udp_len > rest.len() {
        return Err(Error::BadField("udp_length"));
    }
    let udp = rest.get(..udp_len).ok_or(Error::Truncated)?;
    Ok(IpUdp {
        version,
        ip_hdr,
        udp,
        src_port: be16(udp, 0)?,
        dst_port: be16(udp, 2)?,
        tos,
    })
}

/// Computes the ICRC of a raw RoCEv2 IP packet (IPv4 or IPv6, starting at the
/// IP header). The destination port is not checked.
pub fn icrc_from_ip_packet(pkt: &[u8]) -> Result<u32> {
    let p = split_ip_udp(pkt)?;
    match p.version {
        IpVersion::V4 => icrc_v4(p.ip_hdr, p.udp),
        IpVersion::V6 => icrc_v6(p.ip_hdr, p.udp),
    }
}

/// Checks the ICRC of a raw RoCEv2 IP packet (e.g. one restored by the CRF).
pub fn verify_ip_packet(pkt: &[u8]) -> Result<bool> {
    let p = split_ip_udp(pkt)?;
    let c = match p.version {
        IpVersion::V4 => icrc_v4(p.ip_hdr, p.udp)?,
        IpVersion::V6 => icrc_v6(p.ip_hdr, p.udp)?,
    };
    Ok(c == stored_icrc(p.udp)?)
}

/// The IPv4 Identification that makes a rebuilt packet's ICRC verify.
///
/// The ICRC of RoCEv2 over IPv4 covers the Identification field (only TOS,
/// TTL and the header checksum are masked), but a CREM source symbol is the
/// UDP payload alone (draft, "Source Symbols"), so a CRF that rebuilds a lost
/// packet cannot know it. CRC-32 is affine in its input, so the 16 unknown
/// bits follow from the stored ICRC by solving 32 linear equations over
/// GF(2): ICRC(id) = ICRC(0) ⊕ Σ bit_b(id)·(ICRC(e_b) ⊕ ICRC(0)). Any 16-bit
/// burst changes a CRC-32, so the solution is unique when it exists; when it
/// does not, the payload cannot be the one the RDMA sender sent (`None`).
/// The price: of the ICRC's 32 bits, 16 still check the restored payload.
///
/// `pkt` is the rebuilt IPv4 packet (Identification ignored). Costs 17 ICRC
/// computations; run it only for restored packets.
pub fn solve_ipv4_ident(pkt: &[u8]) -> Result<Option<u16>> {
    let p = split_ip_udp(pkt)?;
    if p.version != IpVersion::V4 {
        return Err(Error::BadField("ip_version"));
    }
    let Some((h, _)) = p.ip_hdr.split_first_chunk::<IPV4_HDR_LEN>() else {
        return Err(Error::Truncated);
    };
    let mut hdr = *h;
    hdr[4] = 0;
    hdr[5] = 0;
    let base = icrc_v4(&hdr, p.udp)?;
    // Pivot rows of the reduced basis, by leading bit: (CRC difference,
    // Identification bits that produce it).
    let mut piv = [(0u32, 0u16); 32];
    for b in 0..16u32 {
        let id = 1u16 << b;
        let mut hb = hdr;
        hb[4..6].copy_from_slice(&id.to_be_bytes());
        let v = icrc_v4(&hb, p.udp)? ^ base;
        let _ = reduce(&mut piv, v, id, true);
    }
    let target = stored_icrc(p.udp)? ^ base;
    Ok(reduce(&mut piv, target, 0, false))
}

/// Gaussian elimination step over GF(2): reduces `v` (produced by the
/// Identification bits `m`) by the pivot rows. With `insert`, a non-zero
/// remainder becomes a new pivot row; without, a zero remainder yields the
/// bits that produce `v` (`None` if `v` is outside the span).
fn reduce(piv: &mut [(u32, u16); 32], mut v: u32, mut m: u16, insert: bool) -> Option<u16> {
    while v != 0 {
        let lead = 31 - v.leading_zeros() as usize;
        let row = piv.get_mut(lead)?;
        if row.0 == 0 {
            if insert {
                *row = (v, m);
            }
            return None;
        }
        v ^= row.0;
        m ^= row.1;
    }
    Some(m)
}

/// Writes the IPv4 header checksum (RFC 791) of the packet `pkt` starts
/// with: the ones' complement of the ones' complement sum of its header's
/// 16-bit words, the checksum field counted as 0. False, and `pkt`
/// unchanged, if it does not start with a whole IPv4 header.
pub fn set_ipv4_header_checksum(pkt: &mut [u8]) -> bool {
    let Some(&b0) = pkt.first() else {
        return false;
    };
    let len = usize::from(b0 & 0x0f) * 4;
    if b0 >> 4 != 4 || len < IPV4_HDR_LEN {
        return false;
    }
    let Some(h) = pkt.get_mut(..len) else {
        return false;
    };
    let Some((_, [c0, c1, ..])) = h.split_at_mut_checked(10) else {
        return false;
    };
    (*c0, *c1) = (0, 0);
    // At most 30 words of at most 0xffff: the sum never wraps.
    let mut sum = h.chunks_exact(2).fold(0u32, |s, w| {
        let (a, b) = (w.first().copied(), w.get(1).copied());
        s.wrapping_add(u32::from(u16::from_be_bytes([
            a.unwrap_or(0),
            b.unwrap_or(0),
        ])))
    });
    while sum > 0xffff {
        sum = (sum & 0xffff).wrapping_add(sum >> 16);
    }
    let [s0, s1] = (!(sum as u16)).to_be_bytes();
    if let Some((_, [c0, c1, ..])) = h.split_at_mut_checked(10) {
        (*c0, *c1) = (s0, s1);
    }
    true
}

/// Computes the ICRC of a raw RoCEv2 IP packet and stores it (little-endian)
/// in the last four octets of its UDP payload. Returns the value.
pub fn fill_icrc_ip_packet(pkt: &mut [u8]) -> Result<u32> {
    let (c, end) = {
        let p = split_ip_udp(pkt)?;
        let c = match p.version {
            IpVersion::V4 => icrc_v4(p.ip_hdr, p.udp)?,
            IpVersion::V6 => icrc_v6(p.ip_hdr, p.udp)?,
        };
        (c, p.ip_hdr.len().saturating_add(p.udp.len()))
    };
    let s = end.checked_sub(ICRC_LEN).ok_or(Error::Truncated)?;
    let dst = pkt.get_mut(s..end).ok_or(Error::Truncated)?;
    dst.copy_from_slice(&c.to_le_bytes());
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdma_mtu_from_link_payload_and_symbol_length() {
        // Linux's iboe_get_mtu: 96 octets of headers.
        let link = [
            (0, 256),
            (1119, 512),
            (1120, 1024),
            (1500, 1024),
            (2100, 1024),
        ];
        for (l, m) in link
            .into_iter()
            .chain([(4191, 2048), (4200, 4096), (9000, 4096)])
        {
            assert_eq!(ib_mtu_for_link(l), m, "link {l}");
        }
        let cover = [
            (0, Some(256)),
            (256, Some(256)),
            (1025, Some(2048)),
            (4096, Some(4096)),
        ];
        for (n, m) in cover.into_iter().chain([(4097, None), (u32::MAX, None)]) {
            assert_eq!(ib_mtu_covering(n), m, "payload {n}");
        }
        assert_eq!(symbol_len_for_mtu(1024), 1062);
        assert_eq!(MAX_SYMBOL_LEN, 4134);
        assert_eq!(symbol_len_for_mtu(u32::MAX), u16::MAX);
    }

    #[test]
    fn ipv4_header_checksum() {
        // A header captured with its checksum (0xb861), then zeroed.
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7, 0xde, 0xad,
        ];
        h[10] = 0x12; // any value there is overwritten
        assert!(set_ipv4_header_checksum(&mut h));
        assert_eq!(&h[10..12], &[0xb8, 0x61]);
        assert_eq!(&h[20..], &[0xde, 0xad]); // the payload is untouched
                                             // Verifying: the sum over a header with its checksum is all ones.
        let s: u32 = h[..20]
            .chunks_exact(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        assert_eq!((s & 0xffff) + (s >> 16), 0xffff);
        // Not an IPv4 header, or a cut one: nothing written.
        for bad in [
            &[0x65u8; 20][..],
            &[0x45u8; 19][..],
            &[0x44u8; 20][..],
            &[][..],
        ] {
            let mut b = bad.to_vec();
            assert!(!set_ipv4_header_checksum(&mut b));
            assert_eq!(b, bad);
        }
    }

    #[test]
    fn seed_is_masked_lrh() {
        assert_eq!(crc32_update(0xFFFF_FFFF, &[0xff; 8]), ICRC_SEED);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // slicing and byte-wise paths agree on every length
        let data: [u8; 37] = core::array::from_fn(|i| (i * 37 + 11) as u8);
        for n in 0..data.len() {
            let mut c = 0xFFFF_FFFFu32;
            for &b in &data[..n] {
                c = (c >> 8) ^ CRC_TABLES[0][((c ^ b as u32) & 0xff) as usize];
            }
            assert_eq!(crc32_update(0xFFFF_FFFF, &data[..n]), c);
        }
    }

    #[test]
    fn read_psns() {
        assert_eq!(read_psn_count(0, 1024), Ok(1));
        assert_eq!(read_psn_count(1, 1024), Ok(1));
        assert_eq!(read_psn_count(1024, 1024), Ok(1));
        assert_eq!(read_psn_count(1025, 1024), Ok(2));
        assert_eq!(read_psn_count(u32::MAX, 256), Ok(16_777_216));
        assert_eq!(read_psn_count(5, 0), Err(Error::BadField("mtu")));
        let r = read_psn_span(Psn::new(0xFF_FFFF), 4096 * 3, 4096).unwrap();
        assert_eq!(r.end(), Psn::new(2));
    }

    #[test]
    fn opcodes() {
        use opcode::*;
        for op in [
            RC_SEND_FIRST,
            RC_SEND_ONLY_IMM,
            RC_WRITE_MIDDLE,
            RC_WRITE_ONLY_IMM,
            RC_COMPARE_SWAP,
            RC_FETCH_ADD,
            RC_SEND_ONLY_INV,
            RC_FLUSH,
            RC_ATOMIC_WRITE,
            UC_SEND_FIRST,
            UC_WRITE_ONLY,
            UD_SEND_ONLY,
        ] {
            assert_eq!(opcode_info(op).role, PsnRole::Request, "{op:#x}");
            assert!(is_source_opcode(op));
        }
        assert_eq!(opcode_info(RC_READ_REQUEST).role, PsnRole::ReadRequest);
        assert!(is_source_opcode(RC_READ_REQUEST));
        for op in [
            RC_READ_RESPONSE_FIRST,
            RC_READ_RESPONSE_MIDDLE,
            RC_READ_RESPONSE_LAST,
            RC_READ_RESPONSE_ONLY,
            RC_ATOMIC_ACKNOWLEDGE,
        ] {
            assert_eq!(opcode_info(op).role, PsnRole::Response);
            assert!(!is_source_opcode(op));
        }
        assert_eq!(opcode_info(RC_ACKNOWLEDGE).role, PsnRole::Ack);
        assert_eq!(opcode_info(CNP).role, PsnRole::Cnp);
        for op in [0x15u8, 0x2c, 0x31, 0x40, 0x60, 0x66, 0x80, 0xa4, 0xe0, 0xff] {
            assert!(!opcode_info(op).is_known(), "{op:#x}");
        }
        assert_eq!(opcode_info(RC_WRITE_ONLY_IMM).ext_len(), 20);
        assert_eq!(opcode_info(RC_ATOMIC_ACKNOWLEDGE).ext_len(), 12);
        assert_eq!(opcode_info(RC_COMPARE_SWAP).ext_len(), 28);
        assert_eq!(opcode_info(UD_SEND_ONLY_IMM).ext_len(), 12);
        assert_eq!(opcode_info(RC_FLUSH).ext_len(), 20);
        assert_eq!(opcode_info(RC_FLUSH).reth_offset(), Some(16));
        assert_eq!(opcode_info(CNP).ext_len(), 16);
    }

    #[test]
    fn aeth_kinds() {
        let a = Aeth::parse(&[0x1f, 0, 0, 5]).unwrap();
        assert_eq!(a.kind(), AethKind::Ack { credit_code: 31 });
        assert_eq!(a.credits(), None);
        assert_eq!(a.msn, 5);
        assert_eq!(
            Aeth {
                syndrome: 0x0f,
                msn: 0
            }
            .credits(),
            Some(192)
        );
        assert_eq!(
            Aeth {
                syndrome: 0x60,
                msn: 0
            }
            .kind(),
            AethKind::Nak(NakCode::PsnSequenceError)
        );
        assert_eq!(
            Aeth {
                syndrome: 0x2e,
                msn: 0
            }
            .kind(),
            AethKind::RnrNak { timer: 14 }
        );
        assert_eq!(
            Aeth {
                syndrome: 0x40,
                msn: 0
            }
            .kind(),
            AethKind::Reserved
        );
        assert_eq!(
            Aeth {
                syndrome: 0x80,
                msn: 0
            }
            .kind(),
            AethKind::Reserved
        );
    }

    #[test]
    fn bth_roundtrip() {
        let raw = [
            0x0c, 0xe3, 0x12, 0x34, 0xc5, 0x00, 0x00, 0xd3, 0x80, 0xcf, 0x19, 0x10,
        ];
        let b = Bth::parse(&raw).unwrap();
        assert_eq!(b.opcode, 0x0c);
        assert!(b.se && b.mig_req);
        assert_eq!(b.pad_count, 2);
        assert_eq!(b.tver, 3);
        assert_eq!(b.pkey, 0x1234);
        assert!(b.fecn && b.becn);
        assert_eq!(b.resv6, 5);
        assert_eq!(b.dest_qp, 0xd3);
        assert!(b.ack_req);
        assert_eq!(b.psn, Psn::new(0xcf1910));
        let mut out = [0u8; 12];
        b.write(&mut out).unwrap();
        assert_eq!(out, raw);
        assert_eq!(Bth::parse(&raw[..11]), Err(Error::Truncated));
    }
}
