// SPDX-License-Identifier: GPL-2.0
//! PATH_REPORTs on their way through this node (the draft: "A CSF in a
//! gateway on the path toward the source intercepts reports addressed to
//! the sources it serves"): at FORWARD, a UDP datagram to the CREM port
//! whose first octet is PATH_REPORT's (version 1, type 8) is handed to the
//! sender flow it is about, as the socket would hand it (the same
//! allow-list of reporters), and consumed; a report about a flow this node
//! does not protect, or from a stranger, goes on untouched toward its
//! destination (a CSF further on, or the source host), unless this node
//! reports too and merges it into its own report of the flow
//! (`crate::report`: a Path Reporter that forwards a downstream reporter's
//! reports).
//!
//! Cost: for each forwarded packet that is not RoCEv2, in a netns with a
//! CREM socket whose role protects flows or which reports, one read of its
//! IP and UDP headers.

use crate::addr::NetAddr;
use crate::dispatch;
use crate::ffi;
use crate::kernel_ext::bh::Bh;
use crate::kernel_ext::skb::{Lent, Skb};
use crate::netns::NetState;

const IPPROTO_UDP: u8 = 17;
/// A PATH_REPORT's first octet: version 1, type 8.
const PATH_REPORT: u8 = 0x18;
const UDP_HLEN: usize = 8;

/// Where a datagram's UDP header is (from the packet's data) and its
/// source address; None unless it is an unfragmented UDP datagram.
fn udp(pf: u8, pkt: &Lent<'_>) -> Option<(i32, NetAddr)> {
    let noff = pkt.network_offset();
    let mut buf = [0u8; 40];
    match pf {
        ffi::NFPROTO_IPV4 => {
            let h: &[u8; 20] = pkt.header(noff, buf.get_mut(..20)?)?.try_into().ok()?;
            let ihl = i32::from(h[0] & 0x0f) << 2;
            let frag = u16::from_be_bytes([h[6], h[7]]) & 0x3fff;
            let ok = h[0] >> 4 == 4 && h[9] == IPPROTO_UDP && frag == 0 && ihl >= 20;
            ok.then_some((
                noff.checked_add(ihl)?,
                NetAddr::from_v4([h[12], h[13], h[14], h[15]]),
            ))
        }
        ffi::NFPROTO_IPV6 => {
            let h: &[u8; 40] = pkt.header(noff, &mut buf)?.try_into().ok()?;
            let (src, _) = h.get(8..)?.split_first_chunk::<16>()?;
            let ok = h[0] >> 4 == 6 && h[6] == IPPROTO_UDP;
            ok.then_some(())?;
            Some((noff.checked_add(40)?, NetAddr::from_v6(*src)?))
        }
        _ => None,
    }
}

/// A forwarded packet of family `pf` (not RoCEv2) in the netns of `st`:
/// `true` if it was a PATH_REPORT this node took (the packet is consumed:
/// the hook returns NF_STOLEN), `false` if it goes on. Taken by the sender
/// flow it is about, if `serving` (this node's role protects flows) and the
/// flow is here; else merged into this node's own report of the flow, if it
/// reports (`Reporter::downstream`).
pub(crate) fn path_report(st: &NetState, pf: u8, pkt: &mut Lent<'_>, serving: bool) -> bool {
    // An aggregate may carry several datagrams (UDP GRO): it goes on.
    let Some(port) = st.socket.port().filter(|_| !pkt.is_gso()) else {
        return false;
    };
    let Some((l4off, from)) = udp(pf, pkt) else {
        return false;
    };
    let mut u = [0u8; UDP_HLEN + 1];
    let Some(uh) = pkt
        .header(l4off, &mut u)
        .and_then(|h| <&[u8; UDP_HLEN + 1]>::try_from(h).ok())
    else {
        return false;
    };
    let (dport, len) = (
        u16::from_be_bytes([uh[2], uh[3]]),
        usize::from(u16::from_be_bytes([uh[4], uh[5]])),
    );
    if dport != port || uh[UDP_HLEN] != PATH_REPORT || !pkt.linearize() {
        return false;
    }
    let Ok(start) = usize::try_from(l4off) else {
        return false;
    };
    let end = start.saturating_add(len);
    let Some(msg) = pkt.linear().get(start.saturating_add(UDP_HLEN)..end) else {
        return false;
    };
    // SAFETY: FORWARD runs with BH off (in softirq, or under
    // `local_bh_disable` when a restored packet is forwarded). The
    // reporter is looked up only for a PATH_REPORT: a gateway's other
    // forwarded packets pay nothing for it.
    let bh = unsafe { Bh::assume() };
    let taken = (serving && dispatch::intercept(st, from, msg))
        || st
            .reporting
            .live(&bh)
            .is_some_and(|r| r.downstream(&bh, &from, msg));
    if !taken {
        return false;
    }
    // Delivered to its flow, as if to the socket, or carried on in this
    // node's own report: consumed, not dropped.
    // SAFETY: the hook's packet, whose reference we give up (the caller
    // returns NF_STOLEN and never touches it again).
    drop(unsafe { Skb::from_raw(pkt.as_ptr()) });
    true
}
