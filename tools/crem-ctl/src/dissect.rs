//! From a captured frame to its UDP datagram: the link-layer header of
//! the capture's link type, then IPv4 or IPv6, then UDP. Everything that
//! is not a whole, unfragmented UDP datagram is classified (a [`Skip`]),
//! so a capture's summary can say why packets were left out.
//!
//! crem-core's `roce::split_ip_udp` is the strict parser of a RoCEv2
//! packet (no IPv4 options or IPv6 extension headers, as rxe sends them);
//! this one reads whatever a capture holds and only locates the datagram.

use std::net::IpAddr;

pub const LINKTYPE_ETHERNET: u16 = 1;
/// DLT_RAW as some systems write it into pcap files.
pub const LINKTYPE_RAW_OLD: u16 = 12;
pub const LINKTYPE_RAW: u16 = 101;
pub const LINKTYPE_LINUX_SLL: u16 = 113;
pub const LINKTYPE_IPV4: u16 = 228;
pub const LINKTYPE_IPV6: u16 = 229;
pub const LINKTYPE_LINUX_SLL2: u16 = 276;

const ETH_P_IP: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86dd;
const IPPROTO_UDP: u8 = 17;

/// Why a frame holds no UDP datagram to look at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    /// A link type this reader does not know.
    LinkType(u16),
    /// Not IPv4 or IPv6 (ARP, LLDP, ...).
    NotIp,
    /// IP, but not UDP (or behind an IPv6 header this reader does not
    /// walk, e.g. ESP).
    NotUdp,
    /// A fragment of an IP datagram.
    Fragment,
    /// The capture's snap length cut the IP datagram.
    Snaplen,
    /// Headers inconsistent with themselves or the frame.
    Malformed,
}

impl Skip {
    /// The summary's words for it (a count precedes them).
    pub fn text(self) -> String {
        match self {
            Skip::LinkType(t) => format!("of link type {t} (not supported)"),
            Skip::NotIp => "not IP".into(),
            Skip::NotUdp => "not UDP".into(),
            Skip::Fragment => "IP fragment".into(),
            Skip::Snaplen => "cut by the snap length".into(),
            Skip::Malformed => "with malformed IP/UDP headers".into(),
        }
    }

    /// The summary's JSON key.
    pub fn key(self) -> String {
        match self {
            Skip::LinkType(t) => format!("link-type-{t}"),
            Skip::NotIp => "not-ip".into(),
            Skip::NotUdp => "not-udp".into(),
            Skip::Fragment => "ip-fragment".into(),
            Skip::Snaplen => "snaplen".into(),
            Skip::Malformed => "malformed".into(),
        }
    }
}

/// A UDP datagram located in a frame.
#[derive(Debug, PartialEq, Eq)]
pub struct Udp<'a> {
    pub ip_version: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    /// The IP packet, bounded by its own length (no link padding or FCS).
    pub ip: &'a [u8],
    /// The UDP payload.
    pub payload: &'a [u8],
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// The network-layer packet of a frame of `linktype`.
pub fn network(linktype: u16, frame: &[u8]) -> Result<&[u8], Skip> {
    let (ethertype, rest) = match linktype {
        LINKTYPE_ETHERNET => ethernet(frame)?,
        LINKTYPE_LINUX_SLL => (be16(frame, 14).ok_or(Skip::Malformed)?, frame.get(16..)),
        LINKTYPE_LINUX_SLL2 => (be16(frame, 0).ok_or(Skip::Malformed)?, frame.get(20..)),
        LINKTYPE_RAW | LINKTYPE_RAW_OLD | LINKTYPE_IPV4 | LINKTYPE_IPV6 => {
            return match frame.first().map(|b| b >> 4) {
                Some(4 | 6) => Ok(frame),
                _ => Err(Skip::NotIp),
            }
        }
        t => return Err(Skip::LinkType(t)),
    };
    let rest = rest.ok_or(Skip::Malformed)?;
    match ethertype {
        ETH_P_IP | ETH_P_IPV6 => Ok(rest),
        _ => Err(Skip::NotIp),
    }
}

/// EtherType and payload of an Ethernet frame, past any 802.1Q / 802.1ad
/// VLAN tags.
fn ethernet(frame: &[u8]) -> Result<(u16, Option<&[u8]>), Skip> {
    let mut at = 12;
    // At most a few tags: the loop is bounded by the frame anyway.
    loop {
        let t = be16(frame, at).ok_or(Skip::Malformed)?;
        match t {
            0x8100 | 0x88a8 | 0x9100 => at += 4,
            _ => return Ok((t, frame.get(at + 2..))),
        }
    }
}

/// Which link type a frame printed by `tcpdump -x` (from the IP header) or
/// `-xx` (from the link-layer header) has: Ethernet or a Linux cooked
/// header when its protocol field says IP and an IP header of that version
/// follows, else raw IP.
pub fn guess_linktype(frame: &[u8]) -> u16 {
    let ip_at = |proto_at: usize, ip_at: usize| -> bool {
        let v = frame.get(ip_at).map(|b| b >> 4);
        match be16(frame, proto_at) {
            Some(ETH_P_IP) => v == Some(4),
            Some(ETH_P_IPV6) => v == Some(6),
            _ => false,
        }
    };
    if ip_at(12, 14) {
        LINKTYPE_ETHERNET
    } else if ip_at(14, 16) {
        LINKTYPE_LINUX_SLL
    } else if ip_at(0, 20) {
        LINKTYPE_LINUX_SLL2
    } else {
        LINKTYPE_RAW
    }
}

/// Locates the UDP datagram of an IP packet. `cut` says the capture's
/// snap length shortened the frame, which turns "the packet is longer
/// than the frame" into [`Skip::Snaplen`] instead of [`Skip::Malformed`].
pub fn udp(pkt: &[u8], cut: bool) -> Result<Udp<'_>, Skip> {
    let short = if cut { Skip::Snaplen } else { Skip::Malformed };
    let version = pkt.first().ok_or(Skip::Malformed)? >> 4;
    let (src, dst, total, mut proto, mut at): (IpAddr, IpAddr, usize, u8, usize) = match version {
        4 => {
            let h = pkt.get(..20).ok_or(short)?;
            let ihl = usize::from(h[0] & 0x0f) * 4;
            let total = usize::from(be16(h, 2).ok_or(Skip::Malformed)?);
            if ihl < 20 || total < ihl {
                return Err(Skip::Malformed);
            }
            // More Fragments, or a fragment offset: not a whole datagram.
            if be16(h, 6).ok_or(Skip::Malformed)? & 0x3fff != 0 {
                return Err(Skip::Fragment);
            }
            let a = |i: usize| [h[i], h[i + 1], h[i + 2], h[i + 3]];
            (a(12).into(), a(16).into(), total, h[9], ihl)
        }
        6 => {
            let h = pkt.get(..40).ok_or(short)?;
            let a = |i: usize| -> [u8; 16] {
                let mut o = [0u8; 16];
                o.copy_from_slice(&h[i..i + 16]);
                o
            };
            let total = 40 + usize::from(be16(h, 4).ok_or(Skip::Malformed)?);
            (a(8).into(), a(24).into(), total, h[6], 40)
        }
        _ => return Err(Skip::NotIp),
    };
    if total > pkt.len() {
        return Err(short);
    }
    let pkt = &pkt[..total];
    if version == 6 {
        // Walk the extension headers a UDP datagram can sit behind.
        loop {
            match proto {
                // Hop-by-Hop, Routing, Destination Options: (len + 1) × 8.
                0 | 43 | 60 => {
                    let len = (usize::from(*pkt.get(at + 1).ok_or(Skip::Malformed)?) + 1) * 8;
                    proto = *pkt.get(at).ok_or(Skip::Malformed)?;
                    at += len;
                }
                // Authentication Header: (len + 2) × 4.
                51 => {
                    let len = (usize::from(*pkt.get(at + 1).ok_or(Skip::Malformed)?) + 2) * 4;
                    proto = *pkt.get(at).ok_or(Skip::Malformed)?;
                    at += len;
                }
                44 => return Err(Skip::Fragment),
                _ => break,
            }
        }
    }
    if proto != IPPROTO_UDP {
        return Err(Skip::NotUdp);
    }
    let rest = pkt.get(at..).ok_or(Skip::Malformed)?;
    let udp_len = usize::from(be16(rest, 4).ok_or(Skip::Malformed)?);
    if udp_len < 8 || udp_len > rest.len() {
        return Err(Skip::Malformed);
    }
    Ok(Udp {
        ip_version: version,
        src,
        dst,
        src_port: be16(rest, 0).ok_or(Skip::Malformed)?,
        dst_port: be16(rest, 2).ok_or(Skip::Malformed)?,
        ip: pkt,
        payload: &rest[8..udp_len],
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An IPv4 packet (no options, checksum 0: nothing here checks it)
    /// carrying `payload` in UDP from sport to dport.
    pub fn ipv4_udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
        let total = (28 + payload.len()) as u16;
        let mut p = vec![0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, IPPROTO_UDP, 0, 0];
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p.extend(src);
        p.extend(dst);
        p.extend(sport.to_be_bytes());
        p.extend(dport.to_be_bytes());
        p.extend((8 + payload.len() as u16).to_be_bytes());
        p.extend([0, 0]);
        p.extend(payload);
        p
    }

    /// The same over IPv6.
    pub fn ipv6_udp(
        src: [u8; 16],
        dst: [u8; 16],
        sport: u16,
        dport: u16,
        payload: &[u8],
    ) -> Vec<u8> {
        let plen = (8 + payload.len()) as u16;
        let mut p = vec![0x60, 0, 0, 0];
        p.extend(plen.to_be_bytes());
        p.extend([IPPROTO_UDP, 64]);
        p.extend(src);
        p.extend(dst);
        p.extend(sport.to_be_bytes());
        p.extend(dport.to_be_bytes());
        p.extend(plen.to_be_bytes());
        p.extend([0, 0]);
        p.extend(payload);
        p
    }

    /// The EtherType of an IP packet, by its version.
    fn ethertype(ip: &[u8]) -> u16 {
        if ip[0] >> 4 == 6 {
            ETH_P_IPV6
        } else {
            ETH_P_IP
        }
    }

    /// An Ethernet frame around an IP packet.
    pub fn ethernet(ip: &[u8]) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
        f.extend(ethertype(ip).to_be_bytes());
        f.extend(ip);
        f
    }

    /// A Linux cooked (SLL) frame around an IP packet.
    pub fn sll(ip: &[u8]) -> Vec<u8> {
        let mut f = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
        f.extend(ethertype(ip).to_be_bytes());
        f.extend(ip);
        f
    }

    /// A Linux cooked v2 (SLL2) frame around an IP packet.
    pub fn sll2(ip: &[u8]) -> Vec<u8> {
        let mut f = if ip[0] >> 4 == 6 {
            ETH_P_IPV6
        } else {
            ETH_P_IP
        }
        .to_be_bytes()
        .to_vec();
        f.extend([0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
        f.extend(ip);
        f
    }

    #[test]
    fn link_types_and_ip_versions() {
        let v4 = ipv4_udp([192, 0, 2, 1], [198, 51, 100, 2], 40000, 7470, b"hi");
        let mut a6 = [0u8; 16];
        a6[..2].copy_from_slice(&[0x20, 0x01]);
        let v6 = ipv6_udp(a6, a6, 1, 2, b"hey");
        for ip in [&v4, &v6] {
            let mut padded = ethernet(ip);
            padded.extend([0; 6]); // link padding and FCS are not payload
            for (lt, frame) in [
                (LINKTYPE_ETHERNET, padded),
                (LINKTYPE_LINUX_SLL, sll(ip)),
                (LINKTYPE_LINUX_SLL2, sll2(ip)),
                (LINKTYPE_RAW, ip.to_vec()),
            ] {
                assert_eq!(guess_linktype(&frame), lt);
                let n = network(lt, &frame).unwrap();
                let u = udp(n, false).unwrap();
                assert_eq!(u.ip, &ip[..]);
                assert_eq!(u.payload.len(), if ip[0] == 0x45 { 2 } else { 3 });
            }
        }
        let u = udp(&v4, false).unwrap();
        assert_eq!(
            (u.src.to_string(), u.dst.to_string(), u.src_port, u.dst_port),
            ("192.0.2.1".into(), "198.51.100.2".into(), 40000, 7470)
        );
        assert_eq!(udp(&v6, false).unwrap().src.to_string(), "2001::");
        // VLAN-tagged Ethernet.
        let mut tagged = ethernet(&v4);
        tagged.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
        assert_eq!(
            udp(network(1, &tagged).unwrap(), false).unwrap().payload,
            b"hi"
        );
    }

    #[test]
    fn skips_are_classified() {
        let v4 = ipv4_udp([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, &[0; 20]);
        assert_eq!(network(999, &v4), Err(Skip::LinkType(999)));
        let mut arp = ethernet(&v4);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(network(1, &arp), Err(Skip::NotIp));
        let mut tcp = v4.clone();
        tcp[9] = 6;
        assert_eq!(udp(&tcp, false), Err(Skip::NotUdp));
        let mut frag = v4.clone();
        frag[6] = 0x20; // More Fragments
        assert_eq!(udp(&frag, false), Err(Skip::Fragment));
        frag[6] = 0;
        frag[7] = 1; // offset 8
        assert_eq!(udp(&frag, false), Err(Skip::Fragment));
        assert_eq!(udp(&v4[..30], true), Err(Skip::Snaplen));
        assert_eq!(udp(&v4[..30], false), Err(Skip::Malformed));
        let mut bad = v4.clone();
        bad[25] = 200; // UDP length past the packet
        assert_eq!(udp(&bad, false), Err(Skip::Malformed));
        let mut v6 = ipv6_udp([1; 16], [2; 16], 1, 2, b"x");
        v6[6] = 44;
        assert_eq!(udp(&v6, false), Err(Skip::Fragment));
        // Behind a Destination Options header.
        let mut v6 = ipv6_udp([1; 16], [2; 16], 1, 2, b"x");
        v6[6] = 60;
        v6.splice(40..40, [IPPROTO_UDP, 0, 1, 4, 0, 0, 0, 0]);
        v6[5] += 8;
        assert_eq!(udp(&v6, false).unwrap().payload, b"x");
        for n in 0..v6.len() {
            let _ = udp(&v6[..n], n % 2 == 0);
        }
    }
}
