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
//! flow's template (addresses, source port, DSCP, TTL and mark of its last
//! packet); UDP checksum 0 as RoCEv2 allows, and no ECN marking (the draft:
//! "Restored packets carry no ECN marking"; a CE of the lost original is not
//! ours to repeat, and the template's is another packet's). Its IPv4
//! Identification, which the ICRC covers and the source symbol lacks, is
//! solved from the ICRC: that is also the restored packet's ICRC check.

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
const UDP_HLEN: usize = 8;
const ETH_HLEN: usize = bindings::ETH_HLEN as usize;
const ETH_ALEN: usize = bindings::ETH_ALEN as usize;
const ETH_P_IP: u16 = bindings::ETH_P_IP as u16;
const PACKET_HOST: u8 = bindings::PACKET_HOST as u8;
const IPPROTO_UDP: u8 = 17;
/// The ECN bits of the IPv4 TOS octet (`INET_ECN_MASK`).
const ECN_MASK: u8 = 0x03;
/// Headroom of a restored packet: its IPv4 and UDP headers, and the most
/// any link layer of this kernel needs in front of them.
const HEADROOM: u32 = ffi::LL_MAX_HEADER + (IPV4_HLEN + UDP_HLEN) as u32;
const RTN_UNICAST: u32 = ffi::RTN_UNICAST as u32;
const NET_RX_SUCCESS: c_int = ffi::NET_RX_SUCCESS as c_int;

/// How a flow's restored and held packets go on: the header template of
/// restored packets, from the flow's last packet, and where they enter.
/// Until one is seen (`noted` false: a receiver flow set up by its HELLO)
/// the UDP source port is unknown and nothing can be restored.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Template {
    /// Addresses (`__be32` in memory order).
    pub(crate) saddr: u32,
    pub(crate) daddr: u32,
    /// UDP source port and IPv4 fragment field (network order).
    pub(crate) sport: u16,
    pub(crate) frag_off: u16,
    pub(crate) tos: u8,
    pub(crate) ttl: u8,
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

/// A restored packet of `tpl`'s flow around RoCEv2 UDP payload `p`, its IPv4
/// Identification still 0 and its header checksum not yet computed.
fn build_restored(tpl: &Template, p: &[u8]) -> Option<Skb> {
    let udp_len = u16::try_from(p.len().checked_add(UDP_HLEN)?).ok()?;
    let tot_len = udp_len.checked_add(IPV4_HLEN as u16)?;
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
    let ih = skb.push::<IPV4_HLEN>()?;
    ih[0] = 0x45; // version 4, 5 words
    ih[1] = tpl.tos & !ECN_MASK;
    ih[2..4].copy_from_slice(&tot_len.to_be_bytes());
    ih[4..6].fill(0); // Identification: solved from the ICRC
    ih[6..8].copy_from_slice(&tpl.frag_off.to_ne_bytes());
    // The template's TTL is read at our hook: in gateway mode (FORWARD)
    // after this hop's decrement, which forwarding the restored packet
    // applies again; in host mode (LOCAL_IN) as delivered.
    ih[8] = if tpl.host {
        tpl.ttl
    } else {
        tpl.ttl.saturating_add(1)
    };
    ih[9] = IPPROTO_UDP;
    ih[10..12].fill(0);
    ih[12..16].copy_from_slice(&tpl.saddr.to_ne_bytes());
    ih[16..20].copy_from_slice(&tpl.daddr.to_ne_bytes());
    skb.reset_network_header();
    skb.set_protocol(ETH_P_IP);
    skb.set_csum_none();
    skb.set_mark(tpl.mark);
    Some(skb)
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
    let Some(mut skb) = build_restored(tpl, payload) else {
        return Err(Restored::Dropped);
    };
    if !skb.linear_mut().is_some_and(restore_ident) {
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
/// IPv4).
fn set_link_header(tpl: &Template, skb: &mut Skb, dev: &NetDevice) {
    if skb.mac_header_before_data(ETH_HLEN as u32) {
        // As it arrived: only re-point data and type at it.
        skb.unpull(ETH_HLEN as u32);
        skb.eth_type_trans(dev);
        return;
    }
    if dev.is_ether() && skb.headroom() >= ETH_HLEN as u32 {
        let addr = dev.ether_addr();
        if let Some(eth) = skb.push::<ETH_HLEN>() {
            eth[0..6].copy_from_slice(&addr);
            eth[6..12].copy_from_slice(&tpl.h_source);
            eth[12..14].copy_from_slice(&ETH_P_IP.to_be_bytes());
            skb.eth_type_trans(dev);
            return;
        }
    }
    // No link header to make: an empty one (a tap sees the IP header).
    skb.reset_mac_header();
    skb.set_mac_len(0);
    skb.set_protocol(ETH_P_IP);
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
    skb.set_dev(dev);
    skb.set_iif(dev.ifindex());
    skb.set_pkt_type(PACKET_HOST);
    let skb = skb.into_raw();
    let err = with_forward_mark(bh, skb, || {
        // SAFETY: NF_HOOK takes over the skb's reference (to the okfn, or a
        // hook that steals or drops it); `dev` is live under `rcu`, and the
        // okfn is ours, with netfilter's signature.
        unsafe { ffi::crem_h_nf_hook_ipv4_prerouting(net, skb, dev.as_ptr(), Some(forward_route)) }
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
