// SPDX-License-Identifier: GPL-2.0
//! Restored and held packets go on toward the RDMA receiver.
//!
//! A held packet is an original stopped at our hook, the last of its chain:
//! in gateway mode it has passed PREROUTING, its input route and the FORWARD
//! rules, so it leaves by the route it has (`dst_output`); in host mode it
//! enters this host's receive path on the device the flow arrives on.
//!
//! A restored packet never crossed this node, so it takes the path its
//! original would have: in host mode the receive path of the device the
//! flow's packets arrive on (it passes LOCAL_IN again, where the CRF sees a
//! PSN it has already delivered: a duplicate, counted as such, let through);
//! in gateway mode the router's own path from that device on
//! ([`forward_restored`]): PREROUTING, the input route (iif, tos and mark
//! rules), `ip_forward` (TTL, MTU, xfrm policy, the FORWARD chain) and the
//! output's POSTROUTING, so the operator's policy holds for it as for the
//! original.
//!
//! A restored packet is rebuilt around its RoCEv2 UDP payload from the
//! flow's template (addresses, source port, DSCP, TTL or hop limit, IPv6
//! flow label and mark of its last packet), and no ECN marking (the draft:
//! "Restored packets carry no ECN marking"; a CE of the lost original is not
//! ours to repeat, and the template's is another packet's). IPv4: UDP
//! checksum 0 as RoCEv2 allows; its Identification, which the ICRC covers
//! and the source symbol lacks, is solved from the ICRC: that is also the
//! restored packet's ICRC check. IPv6 has no such field: the rebuilt packet
//! must verify its ICRC as it is, all 32 bits (the ICRC masks the flow
//! label, traffic class, hop limit and UDP checksum, so none of the
//! template's guesses there can fail it).
//!
//! IPv6's UDP checksum (ruling, plan §5.5): as the flow's last packet had
//! it. 0 if its sender sent 0, as rxe does: the restored packet is then
//! the octets the sender sent, and a receiver that takes the originals
//! takes it (rxe's IPv6 socket has `no_check6_rx`). Computed if its sender
//! checksums: its receiver may enforce RFC 8200 §8.1 (a plain IPv6 UDP
//! socket does, line-datapath6's) and would drop a 0. Always computing it
//! (the plan's proposal) would cost a sum per packet and make rxe's
//! restored packets differ from rxe's own for nothing: the ICRC masks the
//! checksum either way.

use crate::addr::{Family, NetAddr};
use crate::crem_core::engine::crf::Restored;
use crate::crem_core::roce;
use crate::ffi;
use crate::kernel_ext::bh::Bh;
use crate::kernel_ext::global::{Global, Published};
use crate::kernel_ext::netdev::NetDevice;
use crate::kernel_ext::percpu::PerCpuWord;
use crate::kernel_ext::rcu;
use crate::kernel_ext::skb::{sk_buff, DropReason, Skb};
use core::ffi::c_int;
use kernel::bindings;
use kernel::prelude::*;

const ROCEV2_UDP_PORT: u16 = 4791;
const IPV4_HLEN: usize = 20;
const IPV6_HLEN: usize = roce::IPV6_HDR_LEN;
const UDP_HLEN: usize = 8;
const ETH_HLEN: usize = bindings::ETH_HLEN as usize;
const ETH_ALEN: usize = bindings::ETH_ALEN as usize;
const ETH_P_IP: u16 = bindings::ETH_P_IP as u16;
const ETH_P_IPV6: u16 = bindings::ETH_P_IPV6 as u16;
const PACKET_HOST: u8 = bindings::PACKET_HOST as u8;
const IPPROTO_UDP: u8 = 17;
/// The ECN bits of the IPv4 TOS octet (`INET_ECN_MASK`).
const ECN_MASK: u8 = 0x03;
/// Headroom of a restored packet: its IP (IPv6 the longer) and UDP
/// headers, and the most any link layer of this kernel needs in front of
/// them.
const HEADROOM: u32 = ffi::LL_MAX_HEADER + (IPV6_HLEN + UDP_HLEN) as u32;
const RTN_UNICAST: u32 = ffi::RTN_UNICAST as u32;
const NET_RX_SUCCESS: c_int = ffi::NET_RX_SUCCESS as c_int;

/// How a flow's restored and held packets go on: the header template of
/// restored packets, from the flow's last packet, and where they enter.
/// Until one is seen (`noted` false: a receiver flow set up by its HELLO)
/// the UDP source port is unknown and nothing can be restored.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Template {
    /// Addresses (their family is the restored packets').
    pub(crate) saddr: NetAddr,
    pub(crate) daddr: NetAddr,
    /// UDP source port and IPv4 fragment field (network order).
    pub(crate) sport: u16,
    pub(crate) frag_off: u16,
    /// IPv4's TOS or IPv6's traffic class; TTL or hop limit.
    pub(crate) tos: u8,
    pub(crate) ttl: u8,
    /// IPv6's flow label (20 bits; the ICRC masks it, and keeping the
    /// sender's keeps a restored packet on its flow's ECMP path).
    pub(crate) flow_label: u32,
    /// The last packet carried a UDP checksum (IPv6 restores one then).
    pub(crate) udp_csum: bool,
    pub(crate) noted: bool,
    /// Host mode: restored and held packets are delivered locally.
    pub(crate) host: bool,
    /// Of the last packet (restored packets route by it).
    pub(crate) mark: u32,
    /// Where the flow's packets arrive (restored ones enter there; 0:
    /// unknown).
    pub(crate) ifindex: c_int,
    /// Host mode: their link source (restored packets'; zero: unknown).
    pub(crate) h_source: [u8; ETH_ALEN],
}

/// A restored packet's payload `p` and UDP header (checksum 0) for
/// `tpl`'s flow, its transport header set: the skb and the UDP length.
fn build_udp(tpl: &Template, p: &[u8]) -> Option<(Skb, u16)> {
    let udp_len = u16::try_from(p.len().checked_add(UDP_HLEN)?).ok()?;
    let mut skb = Skb::alloc_atomic(HEADROOM, u32::from(udp_len).saturating_sub(UDP_HLEN as u32))?;
    if !skb.put_data(p) {
        return None;
    }
    let uh = skb.push::<UDP_HLEN>()?;
    // Template fields in network order are stored as C's `__be16`/`__be32`:
    // their in-memory bytes are the wire's.
    uh[0..2].copy_from_slice(&tpl.sport.to_ne_bytes());
    uh[2..4].copy_from_slice(&ROCEV2_UDP_PORT.to_be_bytes());
    uh[4..6].copy_from_slice(&udp_len.to_be_bytes());
    uh[6..8].fill(0);
    skb.reset_transport_header();
    Some((skb, udp_len))
}

/// The TTL or hop limit of a restored packet: the template's is read at
/// our hook, in gateway mode (FORWARD) after this hop's decrement, which
/// forwarding the restored packet applies again; in host mode (LOCAL_IN)
/// as delivered.
fn restored_ttl(tpl: &Template) -> u8 {
    if tpl.host {
        tpl.ttl
    } else {
        tpl.ttl.saturating_add(1)
    }
}

/// A restored IPv4 packet of `tpl`'s flow around RoCEv2 UDP payload `p`,
/// its Identification still 0 and its header checksum not yet computed.
fn build_restored(tpl: &Template, p: &[u8]) -> Option<Skb> {
    let (saddr, daddr) = (tpl.saddr.v4()?, tpl.daddr.v4()?);
    let (mut skb, udp_len) = build_udp(tpl, p)?;
    let tot_len = udp_len.checked_add(IPV4_HLEN as u16)?;
    let ih = skb.push::<IPV4_HLEN>()?;
    ih[0] = 0x45; // version 4, 5 words
    ih[1] = tpl.tos & !ECN_MASK;
    ih[2..4].copy_from_slice(&tot_len.to_be_bytes());
    ih[4..6].fill(0); // Identification: solved from the ICRC
    ih[6..8].copy_from_slice(&tpl.frag_off.to_ne_bytes());
    ih[8] = restored_ttl(tpl);
    ih[9] = IPPROTO_UDP;
    ih[10..12].fill(0);
    ih[12..16].copy_from_slice(&saddr);
    ih[16..20].copy_from_slice(&daddr);
    skb.reset_network_header();
    skb.set_protocol(ETH_P_IP);
    skb.set_csum_none();
    skb.set_mark(tpl.mark);
    Some(skb)
}

/// A restored IPv6 packet of `tpl`'s flow around RoCEv2 UDP payload `p`:
/// version 6, the template's traffic class without ECN and flow label,
/// payload length the UDP length, UDP next (no extension header: RoCEv2
/// senders put none), hop limit as IPv4's TTL; UDP checksum 0, filled by
/// [`restore`] if the template says so.
fn build_restored6(tpl: &Template, p: &[u8]) -> Option<Skb> {
    let (mut skb, udp_len) = build_udp(tpl, p)?;
    let ih = skb.push::<IPV6_HLEN>()?;
    let tc = tpl.tos & !ECN_MASK;
    let [_, l1, l2, l3] = (tpl.flow_label & 0x000f_ffff).to_be_bytes();
    ih[0..4].copy_from_slice(&[0x60 | tc >> 4, tc << 4 | l1, l2, l3]);
    ih[4..6].copy_from_slice(&udp_len.to_be_bytes());
    ih[6] = IPPROTO_UDP;
    ih[7] = restored_ttl(tpl);
    ih[8..24].copy_from_slice(tpl.saddr.octets());
    ih[24..40].copy_from_slice(tpl.daddr.octets());
    skb.reset_network_header();
    skb.set_protocol(ETH_P_IPV6);
    skb.set_csum_none();
    skb.set_mark(tpl.mark);
    Some(skb)
}

/// The UDP checksum of the IPv6 packet `pkt` (fixed header, then UDP, as
/// [`build_restored6`] makes it), filled in (RFC 8200 §8.1: over the
/// pseudo-header and the datagram, 0 sent as 0xffff); false if it is not
/// such a packet.
fn set_udp6_checksum(pkt: &mut [u8]) -> bool {
    // A datagram of at most 64 KiB sums to less than 2^32, far from
    // wrapping a u64: wrapping adds only spare the overflow checks.
    fn sum(acc: u64, data: &[u8]) -> u64 {
        let mut it = data.chunks_exact(2);
        let acc = it.by_ref().fold(acc, |a, w| match *w {
            [h, l] => a.wrapping_add(u64::from(u16::from_be_bytes([h, l]))),
            _ => a,
        });
        match *it.remainder() {
            [h] => acc.wrapping_add(u64::from(h) << 8),
            _ => acc,
        }
    }
    let Some((ih, udp)) = pkt.split_at_mut_checked(IPV6_HLEN) else {
        return false;
    };
    let (Ok(len), Some(addrs)) = (u32::try_from(udp.len()), ih.get(8..40)) else {
        return false;
    };
    let Some(c) = udp.get_mut(6..8) else {
        return false;
    };
    c.fill(0);
    let mut acc = sum(0, addrs);
    acc = sum(acc, &len.to_be_bytes());
    acc = acc.wrapping_add(u64::from(IPPROTO_UDP));
    acc = sum(acc, udp);
    while acc >> 16 != 0 {
        acc = (acc & 0xffff).wrapping_add(acc >> 16);
    }
    let csum = match !(acc as u16) {
        0 => 0xffff,
        c => c,
    };
    match udp.get_mut(6..8) {
        Some(c) => c.copy_from_slice(&csum.to_be_bytes()),
        None => return false,
    }
    true
}

/// The restored IPv6 packet `pkt` verifies its ICRC as built (all 32
/// bits: nothing in an IPv6 header is covered and unknown), then gets its
/// UDP checksum if `csum`.
fn finish6(pkt: &mut [u8], csum: bool) -> bool {
    roce::verify_ip_packet(pkt) == Ok(true) && (!csum || set_udp6_checksum(pkt))
}

/// Fills in the IPv4 Identification that makes the rebuilt packet's ICRC
/// verify (see [`roce::solve_ipv4_ident`]), then the header checksum; false
/// if no Identification fits.
fn restore_ident(pkt: &mut [u8]) -> bool {
    let Ok(Some(id)) = roce::solve_ipv4_ident(pkt) else {
        return false;
    };
    let Some(f) = pkt.get_mut(4..6) else {
        return false;
    };
    f.copy_from_slice(&id.to_be_bytes());
    roce::set_ipv4_header_checksum(pkt)
}

/// A verified restored packet of `tpl`'s flow around RoCEv2 UDP payload
/// `payload`, or why none was made.
pub(crate) fn restore(tpl: &Template, payload: &[u8]) -> Result<Skb, Restored> {
    if !tpl.noted {
        return Err(Restored::NoHeader);
    }
    let v6 = tpl.daddr.family() == Family::V6;
    let built = if v6 {
        build_restored6(tpl, payload)
    } else {
        build_restored(tpl, payload)
    };
    let Some(mut skb) = built else {
        return Err(Restored::Dropped);
    };
    let verified = skb.linear_mut().is_some_and(|p| {
        if v6 {
            finish6(p, tpl.udp_csum)
        } else {
            restore_ident(p)
        }
    });
    if !verified {
        // The engine counts it as an ICRC failure: a checksum drop.
        skb.drop_reason(DropReason::SkbCsum);
        return Err(Restored::IcrcFailed);
    }
    Ok(skb)
}

/// The restored packet each CPU is forwarding ([`forward_restored`]), which
/// our own FORWARD hook lets through untouched ([`own`]): the
/// CRF that restored it has delivered it already, and the flow's lock is
/// held meanwhile. Set and cleared around one synchronous pass with BH
/// disabled, so no other packet runs our hook on this CPU in between; a
/// packet that a hook queues (NFQUEUE) comes back later without the mark,
/// and the CRF sees a PSN it has delivered: a duplicate, let through.
static FORWARDING: Global<PerCpuWord> = Global::new();

/// Publishes the per-CPU words of [`FORWARDING`] (held by the module: made
/// before the hooks are registered, dropped after they are gone).
pub(crate) fn forward_marks() -> Result<Published<PerCpuWord>> {
    FORWARDING.publish(PerCpuWord::new()?)
}

/// Runs `f` with this CPU's mark on `skb` (our hook lets it by meanwhile).
pub(crate) fn with_forward_mark<R>(bh: &Bh, skb: *const sk_buff, f: impl FnOnce() -> R) -> R {
    let words = FORWARDING.get();
    if let Some(w) = words {
        w.set(bh, skb as usize);
    }
    let r = f();
    if let Some(w) = words {
        w.set(bh, 0);
    }
    r
}

/// `skb` is the restored packet this CPU is forwarding (the FORWARD hook
/// lets it by).
pub(crate) fn own(skb: *const sk_buff, bh: &Bh) -> bool {
    !skb.is_null() && FORWARDING.get().is_some_and(|w| w.get(bh) == skb as usize)
}

/// Host mode: `skb` (network header at data) enters the receive path as if
/// `dev` had received it, so it needs a link-layer header like any received
/// frame: packet taps (tcpdump, dhclient's LPF socket) push back to
/// `skb_mac_header()` before their filter, tc ingress and generic XDP read
/// it. A held original still has the one it arrived with; a restored packet
/// gets the header of the flow's last packet (its source MAC, our address,
/// its family's ethertype).
fn set_link_header(tpl: &Template, skb: &mut Skb, dev: &NetDevice) {
    if skb.mac_header_before_data(ETH_HLEN as u32) {
        // As it arrived: only re-point data and type at it.
        skb.unpull(ETH_HLEN as u32);
        skb.eth_type_trans(dev);
        return;
    }
    let proto = match tpl.daddr.family() {
        Family::V4 => ETH_P_IP,
        Family::V6 => ETH_P_IPV6,
    };
    if dev.is_ether() && skb.headroom() >= ETH_HLEN as u32 {
        let addr = dev.ether_addr();
        if let Some(eth) = skb.push::<ETH_HLEN>() {
            eth[0..6].copy_from_slice(&addr);
            eth[6..12].copy_from_slice(&tpl.h_source);
            eth[12..14].copy_from_slice(&proto.to_be_bytes());
            skb.eth_type_trans(dev);
            return;
        }
    }
    // No link header to make: an empty one (a tap sees the IP header).
    skb.reset_mac_header();
    skb.set_mac_len(0);
    skb.set_protocol(proto);
    skb.set_pkt_type(PACKET_HOST);
}

/// Host mode: `skb` enters this host's receive path on the flow's device.
fn deliver_local(net: *mut bindings::net, tpl: &Template, mut skb: Skb) -> c_int {
    let rcu = rcu::read_lock();
    // SAFETY: `inject`'s caller passes its flow's netns, live while the
    // flow is (a flow goes before its netns).
    let Some(dev) = (unsafe { NetDevice::by_index(net, tpl.ifindex, &rcu) }) else {
        skb.drop_reason(DropReason::DevReady);
        return -(bindings::ENODEV as c_int);
    };
    skb.reset_route_and_ct();
    skb.reset_network_header();
    skb.set_dev(dev);
    set_link_header(tpl, &mut skb, dev);
    // eth_type_trans classed it by the MAC: it is ours either way.
    skb.set_pkt_type(PACKET_HOST);
    // SAFETY: `netif_rx` takes over the skb's reference, in any context.
    if unsafe { ffi::netif_rx(skb.into_raw()) } == NET_RX_SUCCESS {
        0
    } else {
        -(bindings::ENOBUFS as c_int)
    }
}

/// PREROUTING passed: the input route, then the forwarding path.
unsafe extern "C" fn forward_route(
    _net: *mut bindings::net,
    _sk: *mut bindings::sock,
    skb: *mut sk_buff,
) -> c_int {
    // SAFETY: netfilter hands its okfn the skb's reference.
    let Some(skb) = (unsafe { Skb::from_raw(skb) }) else {
        return -(bindings::EINVAL as c_int);
    };
    let Some(h) = skb.head().get(..IPV4_HLEN) else {
        skb.drop_reason(DropReason::IpInNoRoutes);
        return -(bindings::EINVAL as c_int);
    };
    // Addresses as C's `__be32` (the wire's bytes in memory).
    let tos = h[1];
    let saddr = u32::from_ne_bytes([h[12], h[13], h[14], h[15]]);
    let daddr = u32::from_ne_bytes([h[16], h[17], h[18], h[19]]);
    // SAFETY: the skb is live and ours; its device was set by
    // `forward_restored` and is kept alive by the RCU section around the
    // synchronous NF_HOOK that calls us.
    let err = unsafe { ffi::ip_route_input_noref(skb.as_ptr(), daddr, saddr, tos, skb.dev()) };
    if err != 0 {
        skb.drop_reason(if err == -(bindings::EXDEV as c_int) {
            DropReason::IpRpFilter
        } else {
            DropReason::IpInNoRoutes
        });
        return err;
    }
    // The original crossed this router: anything but a forwarding route
    // (the destination became local, broadcast) is not its path.
    if skb.rt_type() != RTN_UNICAST {
        skb.drop_reason(DropReason::IpInNoRoutes);
        return -(bindings::EHOSTUNREACH as c_int);
    }
    // SAFETY: the skb has the input route just found; `dst_input` (its
    // `ip_forward`) takes over the reference.
    unsafe { ffi::crem_h_dst_input(skb.into_raw()) }
}

/// IPv6's PREROUTING passed: the input route, then the forwarding path
/// (`ip6_forward`, which needs `net.ipv6.conf.all.forwarding`, as the
/// original did). IPv6 has no reverse-path filter in its input route.
unsafe extern "C" fn forward_route6(
    _net: *mut bindings::net,
    _sk: *mut bindings::sock,
    skb: *mut sk_buff,
) -> c_int {
    // SAFETY: netfilter hands its okfn the skb's reference.
    let Some(skb) = (unsafe { Skb::from_raw(skb) }) else {
        return -(bindings::EINVAL as c_int);
    };
    // SAFETY: the skb is live and ours, its network header set and its
    // device set by `forward_restored`, kept alive (as the route, which
    // is not referenced) by the RCU section around the synchronous NF_HOOK
    // that calls us.
    let err = unsafe { ffi::crem_h_ipv6_route_input(skb.as_ptr()) };
    if err != 0 {
        skb.drop_reason(DropReason::IpInNoRoutes);
        return err;
    }
    // As IPv4's RTN_UNICAST check: a local, anycast or reject route is
    // not the path the original took through this router.
    if !skb.rt6_forwards() {
        skb.drop_reason(DropReason::IpInNoRoutes);
        return -(bindings::EHOSTUNREACH as c_int);
    }
    // SAFETY: the skb has the input route just found; `dst_input` (its
    // `ip6_forward`) takes over the reference.
    unsafe { ffi::crem_h_dst_input(skb.into_raw()) }
}

/// Gateway mode: a restored packet takes the router's path from the flow's
/// device on (see the top of this file).
fn forward_restored(net: *mut bindings::net, tpl: &Template, mut skb: Skb, bh: &Bh) -> c_int {
    let rcu = rcu::read_lock();
    // SAFETY: `inject`'s caller passes its flow's netns, live while the
    // flow is (a flow goes before its netns).
    let Some(dev) = (unsafe { NetDevice::by_index(net, tpl.ifindex, &rcu) }) else {
        skb.drop_reason(DropReason::DevReady);
        return -(bindings::ENODEV as c_int);
    };
    let v6 = tpl.daddr.family() == Family::V6;
    skb.set_dev(dev);
    if v6 {
        skb.set_iif6(dev.ifindex());
    } else {
        skb.set_iif(dev.ifindex());
    }
    skb.set_pkt_type(PACKET_HOST);
    let skb = skb.into_raw();
    let err = with_forward_mark(bh, skb, || {
        // SAFETY: NF_HOOK takes over the skb's reference (to the okfn, or a
        // hook that steals or drops it); `dev` is live under `rcu`, and the
        // okfn is ours, with netfilter's signature, for the skb's family.
        unsafe {
            if v6 {
                ffi::crem_h_nf_hook_ipv6_prerouting(net, skb, dev.as_ptr(), Some(forward_route6))
            } else {
                ffi::crem_h_nf_hook_ipv4_prerouting(net, skb, dev.as_ptr(), Some(forward_route))
            }
        }
    });
    drop(rcu);
    err
}

/// Sends a restored or held packet of `tpl`'s flow on toward its RDMA
/// receiver (0, or why it could not go). Called under the flow's lock,
/// with `net` its netns (its stores' `Owner::net`).
pub(crate) fn inject(net: *mut bindings::net, tpl: &Template, skb: Skb, bh: &Bh) -> c_int {
    if tpl.host {
        deliver_local(net, tpl, skb)
    } else if !skb.has_dst() {
        // A gateway's restored packets are the ones without a route: a held
        // original keeps the route it arrived with (the CRF holds only
        // those that have one).
        forward_restored(net, tpl, skb, bh)
    } else {
        // SAFETY: the skb has its route; `dst_output` takes over the
        // reference.
        unsafe { ffi::crem_h_dst_output(net, skb.into_raw()) }
    }
}
