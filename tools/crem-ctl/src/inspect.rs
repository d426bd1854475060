//! `crem-ctl roce`: a RoCEv2 IP packet and its ICRC, via crem_core::roce.
//! (`decode`'s CREM messages are in pretty.rs.)

use crem_core::roce::{self, IpVersion, RocePacket, Transport};
use serde::Serialize;
use std::fmt::Write;
use std::net::IpAddr;

/// "IPv4 192.0.2.1 -> 203.0.113.1, UDP 59821 -> 4791": the addressing of
/// a datagram, as `roce` and every packet line of a capture print it.
pub fn ip_udp_text(version: u8, src: IpAddr, dst: IpAddr, sport: u16, dport: u16) -> String {
    format!("IPv{version} {src} -> {dst}, UDP {sport} -> {dport}")
}

/// Name of a BTH opcode, e.g. `RC SEND_ONLY`.
pub fn opcode_name(op: u8) -> String {
    let info = roce::opcode_info(op);
    let t = match info.transport {
        Transport::Rc => "RC",
        Transport::Uc => "UC",
        Transport::Rd => "RD",
        Transport::Ud => "UD",
        Transport::Cnp => "CNP",
        Transport::Xrc => "XRC",
        Transport::Other => "other",
    };
    if op == roce::opcode::CNP {
        return "CNP".into();
    }
    let name = match op & 0x1f {
        0x00 => "SEND_FIRST",
        0x01 => "SEND_MIDDLE",
        0x02 => "SEND_LAST",
        0x03 => "SEND_LAST_WITH_IMMEDIATE",
        0x04 => "SEND_ONLY",
        0x05 => "SEND_ONLY_WITH_IMMEDIATE",
        0x06 => "RDMA_WRITE_FIRST",
        0x07 => "RDMA_WRITE_MIDDLE",
        0x08 => "RDMA_WRITE_LAST",
        0x09 => "RDMA_WRITE_LAST_WITH_IMMEDIATE",
        0x0a => "RDMA_WRITE_ONLY",
        0x0b => "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        0x0c => "RDMA_READ_REQUEST",
        0x0d => "RDMA_READ_RESPONSE_FIRST",
        0x0e => "RDMA_READ_RESPONSE_MIDDLE",
        0x0f => "RDMA_READ_RESPONSE_LAST",
        0x10 => "RDMA_READ_RESPONSE_ONLY",
        0x11 => "ACKNOWLEDGE",
        0x12 => "ATOMIC_ACKNOWLEDGE",
        0x13 => "COMPARE_SWAP",
        0x14 => "FETCH_ADD",
        0x16 => "SEND_LAST_WITH_INVALIDATE",
        0x17 => "SEND_ONLY_WITH_INVALIDATE",
        0x1c => "FLUSH",
        0x1d => "ATOMIC_WRITE",
        _ => "",
    };
    if !info.is_known() || name.is_empty() {
        return format!("{t} opcode 0x{op:02x}");
    }
    format!("{t} {name}")
}

/// What `crem-ctl roce` reports (also its JSON).
#[derive(Debug, Serialize)]
pub struct RoceReport {
    #[serde(rename = "ip-version")]
    pub ip_version: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    #[serde(rename = "src-port")]
    pub src_port: u16,
    #[serde(rename = "dst-port")]
    pub dst_port: u16,
    pub tos: u8,
    pub ecn: u8,
    pub opcode: u8,
    #[serde(rename = "opcode-name")]
    pub opcode_name: String,
    pub psn: u32,
    #[serde(rename = "dest-qp")]
    pub dest_qp: u32,
    pub pkey: u16,
    #[serde(rename = "ack-req")]
    pub ack_req: bool,
    pub se: bool,
    pub fecn: bool,
    pub becn: bool,
    #[serde(rename = "pad-count")]
    pub pad_count: u8,
    /// A CREM source: carries a new PSN.
    pub source: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reth: Option<RethReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aeth: Option<String>,
    #[serde(rename = "src-qp", skip_serializing_if = "Option::is_none")]
    pub src_qp: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immediate: Option<u32>,
    #[serde(rename = "payload-len")]
    pub payload_len: usize,
    pub icrc: u32,
    #[serde(rename = "icrc-computed")]
    pub icrc_computed: u32,
    #[serde(rename = "icrc-ok")]
    pub icrc_ok: bool,
}

#[derive(Debug, Serialize)]
pub struct RethReport {
    pub va: u64,
    pub rkey: u32,
    #[serde(rename = "dma-len")]
    pub dma_len: u32,
}

fn ip_of(v: IpVersion, hdr: &[u8], off: usize) -> IpAddr {
    match v {
        IpVersion::V4 => {
            let mut o = [0u8; 4];
            o.copy_from_slice(&hdr[off..off + 4]);
            IpAddr::from(o)
        }
        IpVersion::V6 => {
            let mut o = [0u8; 16];
            o.copy_from_slice(&hdr[off..off + 16]);
            IpAddr::from(o)
        }
    }
}

/// An AETH in IBA's words, e.g. "ACK, credit code 31 (no end-to-end flow
/// control), MSN 1".
fn aeth_text(a: &roce::Aeth) -> String {
    use roce::{AethKind, NakCode};
    let kind = match a.kind() {
        AethKind::Ack { credit_code } => match a.credits() {
            Some(c) => format!("ACK, credit code {credit_code} ({c} credits)"),
            None => format!("ACK, credit code {credit_code} (no end-to-end flow control)"),
        },
        AethKind::RnrNak { timer } => format!("RNR NAK, timer code {timer}"),
        AethKind::Nak(c) => match c {
            NakCode::PsnSequenceError => "NAK, PSN sequence error".into(),
            NakCode::InvalidRequest => "NAK, invalid request".into(),
            NakCode::RemoteAccessError => "NAK, remote access error".into(),
            NakCode::RemoteOperationalError => "NAK, remote operational error".into(),
            NakCode::InvalidRdRequest => "NAK, invalid RD request".into(),
            NakCode::Reserved(v) => format!("NAK, reserved code {v}"),
        },
        AethKind::Reserved => format!("reserved syndrome 0x{:02x}", a.syndrome),
    };
    format!("{kind}, MSN {}", a.msn)
}

/// Parses a RoCEv2 IP packet (starting at the IP header) and checks its ICRC.
pub fn roce_report(pkt: &[u8]) -> Result<RoceReport, String> {
    let p = roce::split_ip_udp(pkt).map_err(|e| format!("not a UDP/IP packet: {e}"))?;
    let (src, dst) = match p.version {
        IpVersion::V4 => (
            ip_of(p.version, p.ip_hdr, 12),
            ip_of(p.version, p.ip_hdr, 16),
        ),
        IpVersion::V6 => (
            ip_of(p.version, p.ip_hdr, 8),
            ip_of(p.version, p.ip_hdr, 24),
        ),
    };
    let r = RocePacket::parse(p.payload()).map_err(|e| format!("not a RoCEv2 packet: {e}"))?;
    let computed = roce::icrc_from_ip_packet(pkt).map_err(|e| format!("ICRC: {e}"))?;
    let aeth = r.aeth.as_ref().map(aeth_text);
    Ok(RoceReport {
        ip_version: if p.version == IpVersion::V4 { 4 } else { 6 },
        src,
        dst,
        src_port: p.src_port,
        dst_port: p.dst_port,
        tos: p.tos,
        ecn: p.ecn(),
        opcode: r.bth.opcode,
        opcode_name: opcode_name(r.bth.opcode),
        psn: r.bth.psn.value(),
        dest_qp: r.bth.dest_qp,
        pkey: r.bth.pkey,
        ack_req: r.bth.ack_req,
        se: r.bth.se,
        fecn: r.bth.fecn,
        becn: r.bth.becn,
        pad_count: r.bth.pad_count,
        source: r.is_source(),
        reth: r.reth.map(|x| RethReport {
            va: x.va,
            rkey: x.rkey,
            dma_len: x.dma_len,
        }),
        aeth,
        src_qp: r.deth.map(|d| d.src_qp),
        immediate: r.immdt,
        payload_len: r.payload.len(),
        icrc: r.icrc,
        icrc_computed: computed,
        icrc_ok: r.icrc == computed,
    })
}

pub fn roce_text(r: &RoceReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}{}, TOS 0x{:02x} (ECN {})",
        ip_udp_text(r.ip_version, r.src, r.dst, r.src_port, r.dst_port),
        if r.dst_port == roce::ROCEV2_UDP_PORT {
            ""
        } else {
            " (not the RoCEv2 port 4791)"
        },
        r.tos,
        r.ecn
    );
    let _ = writeln!(
        s,
        "BTH: {} (0x{:02x}), PSN {}, dest QP 0x{:06x}, P_Key 0x{:04x}, AckReq {}, SE {}, FECN {}, BECN {}, pad {}",
        r.opcode_name,
        r.opcode,
        r.psn,
        r.dest_qp,
        r.pkey,
        r.ack_req as u8,
        r.se as u8,
        r.fecn as u8,
        r.becn as u8,
        r.pad_count
    );
    if let Some(x) = &r.reth {
        let _ = writeln!(
            s,
            "RETH: VA 0x{:x}, R_Key 0x{:08x}, DMA length {}",
            x.va, x.rkey, x.dma_len
        );
    }
    if let Some(a) = &r.aeth {
        let _ = writeln!(s, "AETH: {a}");
    }
    if let Some(q) = r.src_qp {
        let _ = writeln!(s, "DETH: source QP 0x{q:06x}");
    }
    if let Some(i) = r.immediate {
        let _ = writeln!(s, "ImmDt: 0x{i:08x}");
    }
    let _ = writeln!(
        s,
        "CREM: {}",
        if r.source {
            "source (carries a new PSN)"
        } else {
            "not a source"
        }
    );
    let _ = writeln!(s, "payload: {} octets", r.payload_len);
    let _ = writeln!(
        s,
        "ICRC: stored 0x{:08x}, computed 0x{:08x}: {}",
        r.icrc,
        r.icrc_computed,
        if r.icrc_ok { "ok" } else { "MISMATCH" }
    );
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::hex;

    pub(crate) fn fixture(name: &str) -> Vec<u8> {
        let p = format!(
            "{}/../../rust/core/tests/fixtures/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        hex::decode(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    #[test]
    fn roce_fixture_verifies() {
        let pkt = fixture("rxe-v4-op04.hex");
        let r = roce_report(&pkt).unwrap();
        assert!(r.icrc_ok);
        assert_eq!(r.opcode_name, "RC SEND_ONLY");
        assert_eq!(
            (r.src.to_string(), r.dst.to_string()),
            ("192.0.2.1".into(), "203.0.113.1".into())
        );
        assert_eq!(r.dst_port, 4791);
        assert!(r.source);
        let text = roce_text(&r);
        assert!(
            text.contains("ICRC: stored") && text.ends_with(": ok\n"),
            "{text}"
        );
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["icrc-ok"], true);
        assert_eq!(j["opcode"], 4);
        // One flipped payload bit: the ICRC no longer matches.
        let mut bad = pkt.clone();
        let n = bad.len();
        bad[n - 6] ^= 1;
        assert!(!roce_report(&bad).unwrap().icrc_ok);
        // Truncated input.
        assert!(roce_report(&pkt[..30]).is_err());
    }

    #[test]
    fn ack_and_read_fixtures() {
        let r = roce_report(&fixture("rxe-v4-op11.hex")).unwrap();
        assert!(r.icrc_ok && !r.source);
        assert_eq!(
            r.aeth.as_deref(),
            Some("ACK, credit code 31 (no end-to-end flow control), MSN 1")
        );
        let a = |syndrome: u8| aeth_text(&roce::Aeth { syndrome, msn: 5 });
        assert_eq!(a(0x0a), "ACK, credit code 10 (32 credits), MSN 5");
        assert_eq!(a(0x23), "RNR NAK, timer code 3, MSN 5");
        assert_eq!(a(0x60), "NAK, PSN sequence error, MSN 5");
        assert_eq!(a(0x7f), "NAK, reserved code 31, MSN 5");
        assert_eq!(a(0x40), "reserved syndrome 0x40, MSN 5");
        let r = roce_report(&fixture("rxe-v4-op0c.hex")).unwrap();
        assert!(r.reth.is_some() && r.source);
        assert_eq!(opcode_name(0x81), "CNP");
        assert_eq!(opcode_name(0x64), "UD SEND_ONLY");
        assert_eq!(opcode_name(0xff), "other opcode 0xff");
    }
}
