// SPDX-License-Identifier: GPL-2.0
//! The netfilter hook (`crate::hook_points` registers it, last in the IPv4
//! and IPv6 chains at the hook points the netns's role and `report` need):
//! every packet comes here. At a hook point the role does not protect at
//! (a reporter's FORWARD while its role is disabled or host, a hook a role
//! change is about to remove) packets pass untouched: not parsed, not
//! counted, but for a reporter's downstream PATH_REPORTs, which it merges
//! into its own (`crate::intercept`). Otherwise UDP to the RoCEv2 port is
//! counted by hook and class; what the netns's role protects goes to its
//! flow:
//!   - toward a peer's prefix (gateway: FORWARD; host: LOCAL_OUT), the
//!     sender flow of its key codes it (made at its first packet);
//!   - from a peer's prefix (gateway: FORWARD; host: LOCAL_IN), the
//!     receiver flow may hold it for in-order release (stolen), and an RDMA
//!     ACK releases what the reverse direction's sender flows retain.
//!
//! Each packet's headers are read once here and its RoCEv2 headers parsed
//! once, for the hook and the flow's engine (crem-core's
//! `on_parsed_source`, `on_parsed_reverse`); every lock the path takes
//! wants BH off, which [`roce`] guarantees.

use crate::addr::NetAddr;
use crate::config::Peers;
use crate::create;
use crate::crem_core::nl::stat;
use crate::crem_core::roce::{
    Bth, PsnRole, RocePacket, IPV6_HDR_LEN, ROCEV2_UDP_PORT, UDP_HDR_LEN,
};
use crate::crem_core::wire::FlowKind;
use crate::engine::CrfTake;
use crate::ffi;
use crate::flow::{self, Flow};
use crate::hook_points;
use crate::inject::{self, Template};
use crate::intercept;
use crate::kernel_ext::bh::{self, Bh};
use crate::kernel_ext::rcu;
use crate::kernel_ext::skb::{sk_buff, DropReason, Lent, Skb};
use crate::netns::NetState;
use crate::socket::Outbox;
use crate::table::{
    kind_code, FlowKey, InTable, KIND_REQUESTS, KIND_RESPONSES, SIDE_CRF, SIDE_CSF,
};
use core::ffi::c_void;
use kernel::bindings;

/// netfilter verdicts.
const NF_ACCEPT: u32 = ffi::NF_ACCEPT;
const NF_STOLEN: u32 = 2;
/// Ours, never netfilter's: the packet is to be consumed and stolen
/// ([`roce`] does it, once nothing borrows it).
const CONSUME: u32 = 0x100;

const IPPROTO_UDP: u8 = 17;
const ETH_P_IP: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86dd;
/// IPv4 fragment bits of `frag_off` (host order): more fragments, offset.
const IP_MF_OFFSET: u16 = 0x3fff;
const IPV4_MIN: usize = 20;
/// What the counters read of a packet: IPv6 and UDP headers, the BTH and
/// then some (the longest header before a BTH).
const PEEK: usize = 40 + 8 + 12 + 16;

/// The hook's state argument (`struct nf_hook_state`, which 6.12's
/// bindings lack): where a packet goes on (its okfn).
#[derive(Clone, Copy)]
struct NfState(*const c_void);

impl NfState {
    fn pf(self) -> u8 {
        // SAFETY: netfilter's state for this call, live for it.
        unsafe { ffi::crem_h_nf_pf(self.0) }
    }

    /// Sends `skb` on its way (the rest of the hook's chain is empty: our
    /// hooks are last), which takes the caller's reference.
    ///
    /// # Safety
    ///
    /// `skb` is the hook's packet, whose reference the caller gives up
    /// (it then returns `NF_STOLEN` for it), or a packet of ours.
    unsafe fn okfn(self, skb: *mut sk_buff) {
        // SAFETY: per the function contract; the state is live for the call.
        unsafe { ffi::crem_h_nf_okfn(self.0, skb) };
    }
}

/// The IP header fields the path reads (addresses as the table keeps
/// them), read once by the filter, of either family.
#[derive(Clone, Copy)]
struct IpHdr {
    saddr: NetAddr,
    daddr: NetAddr,
    /// IPv4's TOS; IPv6's traffic class (the same DSCP and ECN bits).
    tos: u8,
    /// IPv4's TTL; IPv6's hop limit.
    ttl: u8,
    /// IPv4: raw (network order), as the template keeps it; IPv6: 0.
    frag_off: u16,
    /// IPv6's flow label (20 bits, host order); IPv4: 0.
    flow_label: u32,
}

impl IpHdr {
    fn parse4(h: &[u8]) -> Option<Self> {
        let b = |i: usize| h.get(i).copied();
        let w = |i: usize| Some(NetAddr::from_v4([b(i)?, b(i + 1)?, b(i + 2)?, b(i + 3)?]));
        Some(IpHdr {
            tos: b(1)?,
            frag_off: u16::from_ne_bytes([b(6)?, b(7)?]),
            ttl: b(8)?,
            saddr: w(12)?,
            daddr: w(16)?,
            flow_label: 0,
        })
    }

    /// The fixed IPv6 header `h`; None if an address is IPv4-mapped (no
    /// such address is on the wire, and keyed it would alias the IPv4
    /// address's flows: `crate::addr`).
    fn parse6(h: &[u8; IPV6_HDR_LEN]) -> Option<Self> {
        let (fixed, addrs) = h.split_first_chunk::<8>()?;
        let (src, dst) = addrs.split_first_chunk::<16>()?;
        let dst: &[u8; 16] = dst.try_into().ok()?;
        let [b0, b1, b2, b3, _, _, _, hop] = *fixed;
        Some(IpHdr {
            tos: (b0 & 0x0f) << 4 | b1 >> 4,
            ttl: hop,
            frag_off: 0,
            flow_label: u32::from_be_bytes([0, b1 & 0x0f, b2, b3]),
            saddr: NetAddr::from_v6(*src)?,
            daddr: NetAddr::from_v6(*dst)?,
        })
    }
}

fn be16(h: &[u8], at: usize) -> Option<u16> {
    ne16(h, at).map(u16::from_be)
}

/// Two octets as they are (network order kept).
fn ne16(h: &[u8], at: usize) -> Option<u16> {
    let p = h.get(at..at.checked_add(2)?)?;
    Some(u16::from_ne_bytes([*p.first()?, *p.get(1)?]))
}

/// What the filter made of a packet.
enum Filtered {
    /// An unfragmented UDP packet to the RoCEv2 port: where its UDP
    /// header is (from its data), and its IP header.
    Roce(i32, IpHdr),
    /// IPv6 RoCEv2 that passes unprotected (see [`rocev2_udp`]).
    SkipV6,
}

/// Whether the UDP header at `l4off` of `pkt` goes to the RoCEv2 port.
fn to_rocev2(pkt: &Lent<'_>, l4off: i32) -> Option<bool> {
    let mut u = [0u8; UDP_HDR_LEN];
    let uh = pkt.header(l4off, &mut u)?;
    Some(be16(uh, 2)? == ROCEV2_UDP_PORT)
}

/// An IPv6 packet whose fixed header `h` (at `noff`) is not followed by
/// UDP: `SkipV6` if extension headers lead to a UDP header to the RoCEv2
/// port (a first fragment's included; later fragments carry none).
fn rocev2_behind_ext(pkt: &Lent<'_>, noff: i32, h: &[u8; IPV6_HDR_LEN]) -> Option<Filtered> {
    // The usual upper layers end the walk at once: most IPv6 traffic at
    // our hooks without UDP next is neighbour discovery (ICMPv6) or TCP.
    const TCP: u8 = 6;
    const ICMPV6: u8 = 58;
    /// The offset bits of a fragment header's field (host order): 0 in a
    /// first fragment, which alone carries the UDP header (its M flag may
    /// be set).
    const IP6_OFFSET: u16 = 0xfff8;
    if matches!(h[6], TCP | ICMPV6) {
        return None;
    }
    let (l4off, next, frag) = pkt.ipv6_skip_exthdr(noff.checked_add(IPV6_HDR_LEN as i32)?, h[6])?;
    let first = u16::from_be(frag) & IP6_OFFSET == 0;
    (next == IPPROTO_UDP && first && to_rocev2(pkt, l4off)?).then_some(Filtered::SkipV6)
}

/// What `pkt` is to the datapath (None: not RoCEv2, or not a packet it
/// reads).
///
/// An IPv6 packet qualifies only with UDP right after its fixed header:
/// RoCEv2 senders put no extension header there, and one (a fragment
/// header included) would move the UDP header where neither the ICRC's
/// nor the restored packet's layout expects it. Such packets, and those
/// with an IPv4-mapped address in their IPv6 header (never keyed as the
/// IPv4 address they map), pass unprotected, counted (`SkipV6`).
fn rocev2_udp(pf: u8, pkt: &Lent<'_>) -> Option<Filtered> {
    let noff = pkt.network_offset();
    let mut buf = [0u8; IPV6_HDR_LEN];
    let (l4off, ip) = match pf {
        ffi::NFPROTO_IPV4 => {
            let h = pkt.header(noff, &mut buf[..IPV4_MIN])?;
            let ihl = usize::from(h.first()? & 0x0f) * 4;
            let frag = be16(h, 6)?;
            if *h.get(9)? != IPPROTO_UDP || frag & IP_MF_OFFSET != 0 || ihl < IPV4_MIN {
                return None;
            }
            (noff.checked_add(ihl as i32)?, IpHdr::parse4(h)?)
        }
        ffi::NFPROTO_IPV6 => {
            let h: &[u8; IPV6_HDR_LEN] = pkt.header(noff, &mut buf)?.try_into().ok()?;
            if h[0] >> 4 != 6 {
                return None;
            }
            if h[6] != IPPROTO_UDP {
                return rocev2_behind_ext(pkt, noff, h);
            }
            let l4off = noff.checked_add(IPV6_HDR_LEN as i32)?;
            match IpHdr::parse6(h) {
                Some(ip) => (l4off, ip),
                None => return to_rocev2(pkt, l4off)?.then_some(Filtered::SkipV6),
            }
        }
        _ => return None,
    };
    to_rocev2(pkt, l4off)?.then_some(Filtered::Roce(l4off, ip))
}

/// One hook call: the netns, the sides its role has at the hook
/// ([`directions`]), netfilter's state, and what the filter read of the
/// packet (kept for the segments of a GSO packet, which share its
/// headers).
#[derive(Clone, Copy)]
struct Call<'a> {
    st: &'a NetState,
    /// (toward a peer, from a peer).
    sides: (bool, bool),
    nf: NfState,
    l4off: i32,
    ip: IpHdr,
}

/// How the netns's role protects a packet at this hook.
enum Way {
    /// Toward this peer: the sender flow codes it.
    Toward(NetAddr),
    /// From a peer: the receiver flow may hold it; an RDMA ACK releases
    /// the reverse flows' retention.
    From,
}

impl Call<'_> {
    /// How the packet is protected, if it is: an IP packet toward or from
    /// a configured peer (of its family: `Peers` matches only those), in a
    /// direction the role protects at this hook.
    fn way(&self, pkt: &Lent<'_>, peers: &Peers) -> Option<Way> {
        let (out, inward) = self.sides;
        let ip = &self.ip;
        let proto = match self.nf.pf() {
            ffi::NFPROTO_IPV4 => ETH_P_IP,
            _ => ETH_P_IPV6,
        };
        if !(out || inward) || pkt.protocol() != proto {
            return None;
        }
        let peer = if out { peers.peer_for(&ip.daddr) } else { None };
        if let Some(peer) = peer {
            Some(Way::Toward(peer))
        } else if inward && peers.peer_for(&ip.saddr).is_some() {
            Some(Way::From)
        } else {
            None
        }
    }
}

/// Counts a RoCEv2 packet by hook and class (roce-* counters), from a peek
/// at its headers (no linearising).
fn count(st: &NetState, hook: u32, pkt: &Lent<'_>, l4off: i32) {
    st.count(match hook {
        hook_points::LOCAL_IN => stat::ROCE_LOCAL_IN,
        hook_points::FORWARD => stat::ROCE_FORWARD,
        hook_points::LOCAL_OUT => stat::ROCE_LOCAL_OUT,
        _ => return,
    });
    let mut buf = [0u8; PEEK];
    let bth_at = l4off.saturating_add(UDP_HDR_LEN as i32);
    let avail = i64::from(pkt.len()) - i64::from(bth_at);
    let n = usize::try_from(avail).unwrap_or(0).min(PEEK);
    let bth = buf
        .get_mut(..n)
        .and_then(|b| pkt.header(bth_at, b))
        .and_then(|b| Bth::parse(b).ok());
    match bth {
        Some(b) if b.info().role.is_source() => st.count(stat::SOURCES),
        Some(_) => st.count(stat::NON_SOURCES),
        None => st.count(stat::MALFORMED),
    }
}

/// Which sides of the datapath `hook` is in the netns's role: (toward a
/// peer, from a peer).
fn directions(role: u8, hook: u32) -> (bool, bool) {
    match u32::from(role) {
        ffi::crem_role_CREM_ROLE_GATEWAY => {
            let fwd = hook == hook_points::FORWARD;
            (fwd, fwd)
        }
        ffi::crem_role_CREM_ROLE_HOST => (
            hook == hook_points::LOCAL_OUT,
            hook == hook_points::LOCAL_IN,
        ),
        _ => (false, false),
    }
}

/// What the hook classified a RoCEv2 source packet as.
struct Source<'p> {
    pkt: &'p Lent<'p>,
    ip: IpHdr,
    /// Its UDP source port (network order).
    sport: u16,
    /// It carries a UDP checksum (not 0).
    udp_csum: bool,
    /// Where its UDP payload is in its data, and how long it is.
    at: (u32, u32),
    /// That payload, parsed (once: the flow's engine takes it so).
    rp: RocePacket<'p>,
    /// The flow kind it is a source of.
    kind: u8,
}

/// The flow kind `rp` is a source of, if any.
fn source_kind(rp: &RocePacket<'_>) -> Option<FlowKind> {
    if rp.is_source() {
        Some(FlowKind::Requests)
    } else {
        (rp.info.role == PsnRole::Response).then_some(FlowKind::Responses)
    }
}

impl Source<'_> {
    fn key(&self, side: u8) -> FlowKey {
        FlowKey {
            saddr: self.ip.saddr,
            daddr: self.ip.daddr,
            dqp: self.rp.bth.dest_qp,
            side,
            kind: self.kind,
        }
    }

    /// What it shows of its flow's path: its restored packets' template
    /// fields.
    fn seen(&self) -> Template {
        // ifindex 0 and a zero h_source: unknown.
        let mut t = Template::default();
        if let Some((ifindex, _)) = self.pkt.dev() {
            t.ifindex = ifindex;
        }
        if let Some(src) = self.pkt.eth_source() {
            t.h_source = src;
        }
        t.mark = self.pkt.mark();
        (t.tos, t.ttl, t.frag_off, t.sport) =
            (self.ip.tos, self.ip.ttl, self.ip.frag_off, self.sport);
        (t.flow_label, t.udp_csum) = (self.ip.flow_label, self.udp_csum);
        t
    }
}

/// The packet travels toward `peer`: the sender flow of its key codes it
/// (made now if it has none).
fn toward_peer(
    st: &NetState,
    s: &Source<'_>,
    peer: NetAddr,
    defer: *mut bindings::sk_buff_head,
    bh: &Bh,
) {
    let k = s.key(SIDE_CSF);
    let f = st.flows.lookup(&k, bh).or_else(|| {
        let mut rq = create::request_for(k, peer, s.ip.tos, s.ip.ttl);
        rq.sport = s.sport;
        rq.link_mtu = s.pkt.dev().map_or(0, |(_, mtu)| mtu);
        st.creation.request(st, &rq, &[], bh)
    });
    if let Some(f) = f {
        f.csf_source(bh, s.pkt, s.at, &s.rp, &s.seen(), defer);
    }
}

/// The packet arrives from a peer: its receiver flow may hold it
/// (`NF_STOLEN`) or have sent a copy of it on (`CONSUME`).
fn from_peer(st: &NetState, s: &Source<'_>, bh: &Bh) -> u32 {
    let Some(f) = st.flows.lookup(&s.key(SIDE_CRF), bh) else {
        return NF_ACCEPT;
    };
    let ce = flow::ce(s.ip.tos);
    match f.crf_source(bh, s.pkt, s.at, s.rp.bth.psn.value(), &s.seen(), ce) {
        CrfTake::Pass | CrfTake::Back => NF_ACCEPT,
        CrfTake::Held => NF_STOLEN,
        CrfTake::Replaced => CONSUME,
    }
}

/// An RDMA ACK or NAK from a peer: it must not overtake the READ
/// responses of its QP that the responses flow holds before its PSN
/// (`crate::acks`), so that flow may keep it back (`NF_STOLEN`). The
/// reverse sender flows learn from it at once, but not again when, in host
/// mode, it comes back from the backlog.
fn ack_from_peer(st: &NetState, s: &Source<'_>, bh: &Bh) -> u32 {
    let k = FlowKey {
        kind: KIND_RESPONSES,
        ..s.key(SIDE_CRF)
    };
    // What the reverse flows read of it: its headers, copied out of the
    // packet, which the flow may take (and another CPU free) before they
    // read them.
    let headers = RocePacket {
        payload: &[],
        ..s.rp
    };
    let take = match st.flows.lookup(&k, bh) {
        Some(f) => f.crf_ack(bh, s.pkt, s.rp.bth.psn.value()),
        None => CrfTake::Pass,
    };
    if take != CrfTake::Back && headers.acked_through().is_some() {
        acknowledges(st, &s.ip.saddr, &s.ip.daddr, &headers, bh);
    }
    match take {
        CrfTake::Held => NF_STOLEN,
        // Never for an ACK (no replay).
        CrfTake::Replaced | CrfTake::Pass | CrfTake::Back => NF_ACCEPT,
    }
}

/// An RDMA packet from `saddr` to `daddr` (parsed: `rp`) that
/// acknowledges: the BTH names only the destination QP (the ACK of A's
/// flow to B carries A's QP), so every request sender flow of the reverse
/// address pair checks the PSN against what it keeps (crem-core ignores
/// acknowledgements outside it).
fn acknowledges(st: &NetState, saddr: &NetAddr, daddr: &NetAddr, rp: &RocePacket<'_>, bh: &Bh) {
    st.flows.for_each_pair(daddr, saddr, bh, |f: &Flow| {
        let k = f.links().key();
        if k.side == SIDE_CSF && k.kind == KIND_REQUESTS {
            f.csf_reverse(bh, rp);
        }
    });
}

/// A single (not GSO) RoCEv2 packet of the netns, BH off: protected as its
/// role says. Its sender flow's messages wait on `defer`.
fn protect(c: &Call<'_>, pkt: &mut Lent<'_>, defer: *mut bindings::sk_buff_head, bh: &Bh) -> u32 {
    let st = c.st;
    // The way first, so that traffic we do not protect is never
    // linearised.
    let ip = c.ip;
    let Some(way) = c.way(pkt, st.peers.get(bh)) else {
        return NF_ACCEPT;
    };
    // br_netfilter hands bridged IPv4 to FORWARD with a fake rtable (no
    // output function): a held packet could never be released, a restored
    // one has no route. CREM protects routed traffic; bridged packets pass
    // unprotected, counted.
    if pkt.bridged() {
        st.count(stat::SKIP_BRIDGED);
        return NF_ACCEPT;
    }
    // The engines read the packet as one buffer.
    if !pkt.linearize() {
        st.count(stat::DROP_LINEARIZE);
        return NF_ACCEPT;
    }
    let pkt: &Lent<'_> = pkt;
    let data = pkt.linear();
    let Ok(l4) = usize::try_from(c.l4off) else {
        return NF_ACCEPT;
    };
    let (Some(sport), Some(ulen), Some(csum)) = (
        ne16(data, l4),
        be16(data, l4.saturating_add(4)),
        ne16(data, l4.saturating_add(6)),
    ) else {
        return NF_ACCEPT;
    };
    let off = l4.saturating_add(UDP_HDR_LEN);
    let Some(payload) = usize::from(ulen)
        .checked_sub(UDP_HDR_LEN)
        .and_then(|len| data.get(off..off.checked_add(len)?))
    else {
        return NF_ACCEPT;
    };
    let Ok(rp) = RocePacket::parse(payload) else {
        return NF_ACCEPT;
    };
    let kind = source_kind(&rp);
    let acks = rp.acked_through().is_some();
    let s = Source {
        pkt,
        ip,
        sport,
        udp_csum: csum != 0,
        at: (off as u32, payload.len() as u32),
        rp,
        kind: kind.map_or(0, kind_code),
    };
    match way {
        Way::Toward(peer) => {
            if kind.is_some() {
                toward_peer(st, &s, peer, defer, bh);
            }
            NF_ACCEPT
        }
        Way::From => {
            if s.rp.info.role == PsnRole::Ack {
                return ack_from_peer(st, &s, bh);
            }
            if acks {
                acknowledges(st, &ip.saddr, &ip.daddr, &s.rp, bh);
            }
            if kind.is_some() {
                from_peer(st, &s, bh)
            } else {
                NF_ACCEPT
            }
        }
    }
}

/// A RoCEv2 packet of the netns (any context: LOCAL_OUT runs in process
/// context for what the host sends, the other hooks in softirq; the path
/// runs with BH off everywhere, which its BH-safe locks need).
///
/// The source that closes a block must leave before the block's repairs:
/// sent first, a repair would make the block decodable at the receiver one
/// packet early, which restores the source spuriously and then delivers it
/// twice. So the sender flow's messages wait until the packet has gone on
/// its way (our hooks are the last of their chain, so okfn skips no other
/// hook).
fn roce(c: &Call<'_>, pkt: &mut Lent<'_>) -> u32 {
    if pkt.is_gso() {
        return roce_gso(c, pkt);
    }
    // No socket, no protection (nothing could be sent).
    if !c.st.socket.bound() {
        return NF_ACCEPT;
    }
    // SAFETY: initialised at once, and not moved after (a local).
    let mut out = unsafe { Outbox::uninit() };
    out.init();
    let mut verdict = {
        let bh = bh::disable();
        protect(c, pkt, out.as_ptr(), &bh)
    };
    if verdict == CONSUME {
        // A copy of it went on (a replay, `crf/replay.rs`): consumed, not
        // a drop.
        // SAFETY: the hook's packet, which nothing borrows any more (the
        // engine's borrows of its payload ended with `protect`); its
        // reference is ours to give up, and we return NF_STOLEN.
        drop(unsafe { Skb::from_raw(pkt.as_ptr()) });
        verdict = NF_STOLEN;
    }
    if out.is_empty() {
        return verdict;
    }
    let verdict = if verdict == NF_ACCEPT {
        // SAFETY: the hook's packet, whose reference goes on with it: we
        // return NF_STOLEN and never touch it again.
        unsafe { c.nf.okfn(pkt.as_ptr()) };
        NF_STOLEN
    } else {
        verdict
    };
    let bh = bh::disable();
    c.st.socket.flush(c.st, &bh, &mut out);
    verdict
}

/// A GSO packet (UDP GRO on a forwarding path: rx-udp-gro-forwarding, or a
/// local sender's UDP GSO) carries several RoCEv2 packets behind one
/// header: coded or held as one, its packets would be neither protected
/// nor released one by one. It is split as nf_queue does, each segment
/// takes the path of a single packet, and the aggregate is consumed.
/// Aggregates of paths we do not protect go on untouched.
fn roce_gso(c: &Call<'_>, pkt: &mut Lent<'_>) -> u32 {
    let st = c.st;
    // An RCU reader, not a BH-off section: re-enabling BH here (at
    // LOCAL_OUT, in process context) would run pending softirqs in the
    // middle of the packet (C's hook did neither).
    if c.way(pkt, st.peers.get(&rcu::read_lock())).is_none() {
        return NF_ACCEPT;
    }
    let Some(segs) = Skb::gso_segments(pkt) else {
        st.count(stat::DROP_GSO);
        return NF_ACCEPT;
    };
    st.count(stat::GSO_SEGMENTED);
    for mut seg in segs {
        match roce(c, &mut Lent::of(&mut seg)) {
            NF_ACCEPT => {
                // SAFETY: a packet of ours, handed on with its reference.
                unsafe { c.nf.okfn(seg.into_raw()) };
            }
            // Sent on or held by its flow, which has its reference.
            NF_STOLEN => {
                let _ = seg.into_raw();
            }
            _ => seg.drop_reason(DropReason::NetfilterDrop),
        }
    }
    // The aggregate, now carried by its segments: consumed (not a drop).
    // SAFETY: the hook's packet, whose reference we give up (NF_STOLEN).
    drop(unsafe { Skb::from_raw(pkt.as_ptr()) });
    NF_STOLEN
}

/// Every packet at our hooks in the netns of state `st` (see the module
/// docs; `hook`: a `hook_points` tag): an NF_* verdict. `nf`: netfilter's
/// `struct nf_hook_state`.
///
/// # Safety
///
/// `skb` and `nf` are a netfilter hook's packet and state, for the call.
pub(crate) unsafe fn run(st: &NetState, hook: u32, skb: *mut sk_buff, nf: *const c_void) -> u32 {
    // The role is read once per packet: what it protects here, if
    // anything (a reporter's FORWARD with its role disabled: nothing).
    let sides = directions(st.role(), hook);
    let serving = sides != (false, false);
    if !serving && hook != hook_points::FORWARD {
        return NF_ACCEPT;
    }
    // SAFETY: the hook's packet, ours for the call (the contract).
    let Some(mut pkt) = (unsafe { Lent::new(skb) }) else {
        return NF_ACCEPT;
    };
    let nf = NfState(nf);
    if !serving {
        // A reporter's FORWARD: downstream reports to merge; the rest
        // passes untouched.
        return match intercept::path_report(st, nf.pf(), &mut pkt, false) {
            true => NF_STOLEN,
            false => NF_ACCEPT,
        };
    }
    let (l4off, ip) = match rocev2_udp(nf.pf(), &pkt) {
        Some(Filtered::Roce(l4off, ip)) => (l4off, ip),
        Some(Filtered::SkipV6) => {
            st.count(stat::SKIP_IPV6_EXT);
            return NF_ACCEPT;
        }
        // A PATH_REPORT on its way to a source this node's CSF serves.
        None if hook == hook_points::FORWARD
            && intercept::path_report(st, nf.pf(), &mut pkt, true) =>
        {
            return NF_STOLEN
        }
        None => return NF_ACCEPT,
    };
    // A gateway's restored packet on its way through (rust/inject.rs).
    if hook == hook_points::FORWARD {
        // SAFETY: FORWARD runs with BH off (in softirq, or under
        // `local_bh_disable` when a restored packet is forwarded).
        let bh = unsafe { Bh::assume() };
        if inject::own(pkt.as_ptr(), &bh) {
            return NF_ACCEPT;
        }
    }
    count(st, hook, &pkt, l4off);
    let c = Call {
        st,
        sides,
        nf,
        l4off,
        ip,
    };
    roce(&c, &mut pkt)
}
