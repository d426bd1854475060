//! The flow and PSN of a dropped RoCEv2 packet.
//!
//! Unlike `roce::split_ip_udp`, this reads headers only: the kernel copies
//! the IP, UDP and BTH headers out of the dropped skb (which may be
//! non-linear), so the packet's payload and ICRC need not be present.

use super::super::psn::Psn;
use super::super::roce::{is_source_opcode, BTH_LEN, IPV6_HDR_LEN, ROCEV2_UDP_PORT, UDP_HDR_LEN};
use super::super::wire::FlowAddrs;

const IPPROTO_UDP: u8 = 17;

/// A dropped RoCEv2 packet as a reporter sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dropped {
    /// The flow's source and destination addresses.
    pub addrs: FlowAddrs,
    /// The BTH's destination QP (24 bits): PATH_REPORT's Flow Label.
    pub dest_qp: u32,
    /// The BTH's PSN.
    pub psn: Psn,
    /// The BTH's opcode.
    pub opcode: u8,
    /// A CREM source packet (a CSF codes it, so it can be repaired).
    pub is_source: bool,
}

fn arr<const N: usize>(b: &[u8], off: usize) -> Option<[u8; N]> {
    b.get(off..off.checked_add(N)?)?.try_into().ok()
}

fn be16(b: &[u8], off: usize) -> Option<u16> {
    arr::<2>(b, off).map(u16::from_be_bytes)
}

/// The addresses and the transport header's offset.
///
/// Rulings: IPv4 options are skipped (reading past them costs nothing,
/// although rxe never sends them); a non-first IPv4 fragment has no UDP
/// header and is ignored, a first one is taken; IPv6 extension headers are
/// not walked (rxe sends none), so only Next Header 17 is taken.
fn ip(pkt: &[u8]) -> Option<(FlowAddrs, usize)> {
    let min_l4 = UDP_HDR_LEN + BTH_LEN;
    match pkt.first()? >> 4 {
        4 => {
            let ihl = usize::from(pkt.first()? & 0x0f) << 2;
            let total = usize::from(be16(pkt, 2)?);
            let frag_off = be16(pkt, 6)? & 0x1fff;
            let ok = ihl >= 20
                && total >= ihl.saturating_add(min_l4)
                && frag_off == 0
                && *pkt.get(9)? == IPPROTO_UDP;
            ok.then_some(())?;
            let addrs = FlowAddrs::V4 {
                src: arr(pkt, 12)?,
                dst: arr(pkt, 16)?,
            };
            Some((addrs, ihl))
        }
        6 => {
            let ok = usize::from(be16(pkt, 4)?) >= min_l4 && *pkt.get(6)? == IPPROTO_UDP;
            ok.then_some(())?;
            let addrs = FlowAddrs::V6 {
                src: arr(pkt, 8)?,
                dst: arr(pkt, 24)?,
            };
            Some((addrs, IPV6_HDR_LEN))
        }
        _ => None,
    }
}

/// Parses a dropped packet starting at its IPv4 or IPv6 header (the skb's
/// network header). `None` unless it is UDP to port 4791 with a whole BTH
/// in `pkt`; octets after the BTH are not needed.
pub fn parse_drop(pkt: &[u8]) -> Option<Dropped> {
    let (addrs, l4) = ip(pkt)?;
    let udp = pkt.get(l4..)?;
    let udp_len = usize::from(be16(udp, 4)?);
    if be16(udp, 2)? != ROCEV2_UDP_PORT || udp_len < UDP_HDR_LEN + BTH_LEN {
        return None;
    }
    let bth: [u8; BTH_LEN] = arr(udp, UDP_HDR_LEN)?;
    let [opcode, _, _, _, _, q0, q1, q2, _, p0, p1, p2] = bth;
    Some(Dropped {
        addrs,
        dest_qp: u32::from_be_bytes([0, q0, q1, q2]),
        psn: Psn::from_be_bytes([p0, p1, p2]),
        opcode,
        is_source: is_source_opcode(opcode),
    })
}
