//! `crem-ctl decode` (any CREM message, via crem_core::wire) and
//! `crem-ctl roce` (a RoCEv2 IP packet and its ICRC, via crem_core::roce).

use crate::hex;
use crem_core::roce::{self, IpVersion, RocePacket, Transport};
use crem_core::wire::{self, Message};
use serde::Serialize;
use std::fmt::Write;
use std::net::IpAddr;

fn type_name(t: wire::MessageType) -> &'static str {
    use wire::MessageType::*;
    match t {
        Repair => "REPAIR",
        Hello => "HELLO",
        HelloAck => "HELLO_ACK",
        ParamUpdate => "PARAM_UPDATE",
        ParamAck => "PARAM_ACK",
        RepairRequest => "REPAIR_REQUEST",
        LossReport => "LOSS_REPORT",
        PathReport => "PATH_REPORT",
        Close => "CLOSE",
        TcAeth => "TC_AETH",
    }
}

fn flag_names(t: wire::MessageType, flags: u8) -> Vec<&'static str> {
    use wire::MessageType as T;
    let table: &[(u8, &str)] = match t {
        T::Repair => &[(0x80, "RETX"), (0x40, "LAST"), (0x20, "INFO")],
        T::RepairRequest => &[(0x20, "FALLBACK"), (0x10, "RANGES")],
        T::PathReport => &[(0x80, "TRUNCATED")],
        _ => &[],
    };
    table
        .iter()
        .filter(|(b, _)| flags & b != 0)
        .map(|x| x.1)
        .collect()
}

/// Pretty-prints one CREM message (octets after its Length are reported).
pub fn decode_message(buf: &[u8]) -> Result<String, String> {
    let (h, msg_octets) =
        wire::Header::decode(buf).map_err(|e| format!("not a CREM message: {e}"))?;
    let m = wire::decode(buf).map_err(|e| format!("invalid {}: {e}", type_name(h.msg_type)))?;
    let mut s = String::new();
    let flags = flag_names(h.msg_type, h.flags);
    let _ = writeln!(
        s,
        "CREM {} (type {}), flags 0x{:02x}{}, length {}, flow ID {}",
        type_name(h.msg_type),
        h.msg_type.to_u8(),
        h.flags,
        if flags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", flags.join(" "))
        },
        h.length,
        h.flow_id
    );
    match m {
        Message::Repair(r) => {
            let _ = writeln!(s, "  config-id:    {}", r.config_id);
            let _ = writeln!(s, "  scheme:       {:?}", r.scheme);
            let _ = writeln!(s, "  k:            {}", r.k);
            let _ = writeln!(s, "  repair-index: {}", r.repair_index);
            let _ = writeln!(s, "  block-start:  {}", r.block_start);
            let _ = writeln!(s, "  session-id:   {}", r.session_id);
            let _ = writeln!(s, "  last:         {}", r.last);
            let _ = writeln!(s, "  info:         {}", r.info);
            let _ = writeln!(s, "  present:      {:?}", r.present);
            if let Some(l) = r.lost {
                let _ = writeln!(s, "  lost (L):     {l:?}");
            }
            let _ = writeln!(s, "  symbol:       {} octets", r.symbol.len());
            s.push_str(&hex::dump(r.symbol, "    "));
        }
        other => {
            let body = match other {
                Message::Hello(x) => format!("{x:#?}"),
                Message::HelloAck(x) => format!("{x:#?}"),
                Message::ParamUpdate(x) => format!("{x:#?}"),
                Message::ParamAck(x) => format!("{x:#?}"),
                Message::RepairRequest(x) => format!("{x:#?}"),
                Message::LossReport(x) => format!("{x:#?}"),
                Message::PathReport(x) => format!("{x:#?}"),
                Message::Close(x) => format!("{x:#?}"),
                Message::TcAeth(x) => format!("{x:#?}"),
                Message::Repair(x) => format!("{x:#?}"),
            };
            for line in body.lines() {
                let _ = writeln!(s, "  {line}");
            }
        }
    }
    if buf.len() > msg_octets.len() {
        let _ = writeln!(
            s,
            "({} octets after the message's Length were ignored)",
            buf.len() - msg_octets.len()
        );
    }
    Ok(s)
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
    pub src: String,
    pub dst: String,
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

fn ip_of(v: IpVersion, hdr: &[u8], off: usize) -> String {
    match v {
        IpVersion::V4 => {
            let mut o = [0u8; 4];
            o.copy_from_slice(&hdr[off..off + 4]);
            IpAddr::from(o).to_string()
        }
        IpVersion::V6 => {
            let mut o = [0u8; 16];
            o.copy_from_slice(&hdr[off..off + 16]);
            IpAddr::from(o).to_string()
        }
    }
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
    let aeth = r.aeth.map(|a| {
        let credits = a
            .credits()
            .map(|c| format!(", {c} credits"))
            .unwrap_or_default();
        format!("{:?}, MSN {}{credits}", a.kind(), a.msn)
    });
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
        "IPv{} {} -> {}, UDP {} -> {}{}, TOS 0x{:02x} (ECN {})",
        r.ip_version,
        r.src,
        r.dst,
        r.src_port,
        r.dst_port,
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
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
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
            (r.src.as_str(), r.dst.as_str()),
            ("192.0.2.1", "203.0.113.1")
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
        assert!(r.aeth.is_some());
        let r = roce_report(&fixture("rxe-v4-op0c.hex")).unwrap();
        assert!(r.reth.is_some() && r.source);
        assert_eq!(opcode_name(0x81), "CNP");
        assert_eq!(opcode_name(0x64), "UD SEND_ONLY");
        assert_eq!(opcode_name(0xff), "other opcode 0xff");
    }

    #[test]
    fn decodes_messages() {
        let close = wire::Close {
            flow_id: 7,
            reason: wire::CloseReason::FlowEnded,
        };
        let mut buf = [0u8; 64];
        let n = close.encode(&mut buf).unwrap();
        let s = decode_message(&buf[..n]).unwrap();
        assert!(
            s.starts_with("CREM CLOSE (type 9), flags 0x00, length 12, flow ID 7\n"),
            "{s}"
        );
        assert!(s.contains("FlowEnded"), "{s}");
        // Trailing octets are reported, not an error.
        let s = decode_message(&buf[..n + 2]).unwrap();
        assert!(s.contains("2 octets after"), "{s}");
        assert!(decode_message(&[0x21, 0, 0, 8, 0, 0, 0, 0])
            .unwrap_err()
            .contains("unsupported version 2"));
        assert!(decode_message(&[0x19, 0, 0, 8, 0, 0, 0, 1])
            .unwrap_err()
            .starts_with("invalid CLOSE"));
    }
}
