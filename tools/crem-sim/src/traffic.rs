//! The RDMA sender's packets: real RoCEv2 UDP payloads (BTH, RETH where the
//! opcode has one, payload, pad, ICRC computed with crem-core's `roce`), and
//! the RDMA receiver's ACK / NAK packets.
//!
//! Traffic is a sequence of messages: RDMA WRITEs of 1..=`msg_max` packets
//! (FIRST/MIDDLE/LAST or ONLY), small SENDs, and READ requests whose DMA
//! length makes them consume several PSNs (the absent positions of the
//! request direction). Between messages the sender may pause (end of a
//! burst: the CSF closes its block on the idle timeout).

use crem_core::engine::Nanos;
use crem_core::psn::Psn;
use crem_core::roce::{self, opcode, Bth};

use crate::rng::Rng;

/// Destination QP of the simulated connection.
pub const DEST_QP: u32 = 0x000123;
/// IPv4 header + UDP header octets around every packet on the wire.
pub const IP_UDP: usize = 28;

/// IPv4 header of the protected flow (192.0.2.1 → 192.0.2.2, documentation
/// prefix), as the kernel glue rebuilds it around a restored packet.
pub fn ip_header(udp_len: usize) -> [u8; 20] {
    let t = ((20 + udp_len) as u16).to_be_bytes();
    [
        0x45, 0x02, t[0], t[1], 0, 0, 0x40, 0, 64, 17, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2,
    ]
}

fn udp_datagram(payload: &[u8]) -> Vec<u8> {
    let len = ((8 + payload.len()) as u16).to_be_bytes();
    let mut u = Vec::with_capacity(payload.len() + 8);
    u.extend_from_slice(&[0xc0, 0x01, 0x12, 0xb7, len[0], len[1], 0, 0]);
    u.extend_from_slice(payload);
    u
}

/// Checks the ICRC of a RoCEv2 UDP payload of the flow.
pub fn icrc_ok(payload: &[u8]) -> bool {
    let udp = udp_datagram(payload);
    roce::verify_v4(&ip_header(udp.len()), &udp).unwrap_or(false)
}

/// Appends the ICRC to `p` (BTH … pad).
fn finish(mut p: Vec<u8>) -> Vec<u8> {
    p.extend_from_slice(&[0; 4]);
    let udp = udp_datagram(&p);
    let c = roce::icrc_v4(&ip_header(udp.len()), &udp).unwrap_or(0);
    let n = p.len();
    p[n - 4..].copy_from_slice(&c.to_le_bytes());
    p
}

fn bth(op: u8, psn: Psn, pad: u8, ack_req: bool) -> [u8; 12] {
    let b = Bth {
        opcode: op,
        se: false,
        mig_req: false,
        pad_count: pad,
        tver: 0,
        pkey: 0xffff,
        fecn: false,
        becn: false,
        resv6: 0,
        dest_qp: DEST_QP,
        ack_req,
        resv7: 0,
        psn,
    };
    let mut out = [0u8; 12];
    let _ = b.write(&mut out);
    out
}

/// A request packet: `reth` = (virtual address, rkey, DMA length).
fn request(op: u8, psn: Psn, reth: Option<(u64, u32, u32)>, data: &[u8]) -> Vec<u8> {
    let pad = ((4 - data.len() % 4) % 4) as u8;
    let mut p = bth(op, psn, pad, true).to_vec();
    if let Some((va, rkey, len)) = reth {
        p.extend_from_slice(&va.to_be_bytes());
        p.extend_from_slice(&rkey.to_be_bytes());
        p.extend_from_slice(&len.to_be_bytes());
    }
    p.extend_from_slice(data);
    p.extend(std::iter::repeat_n(0u8, pad as usize));
    finish(p)
}

/// An RC ACKNOWLEDGE through `psn` (ACK) or a NAK (PSN sequence error)
/// naming `psn` as the expected PSN.
pub fn ack_packet(psn: Psn, nak: bool, msn: u32) -> Vec<u8> {
    let mut p = bth(opcode::RC_ACKNOWLEDGE, psn, 0, false).to_vec();
    let syndrome: u8 = if nak { 0x60 } else { 0x1f };
    let a = (u32::from(syndrome) << 24) | (msn & 0x00ff_ffff);
    p.extend_from_slice(&a.to_be_bytes());
    finish(p)
}

/// One source packet of the flow.
#[derive(Clone, Debug)]
pub struct Packet {
    /// Its PSN.
    pub psn: Psn,
    /// PSN positions it consumes (1, or a READ request's response count).
    pub span: u32,
    /// UDP payload, BTH through ICRC.
    pub bytes: Vec<u8>,
    /// A READ request.
    pub read: bool,
}

/// Traffic shape.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TrafficModel {
    /// RDMA MTU (payload octets per packet).
    pub mtu: u32,
    /// Longest WRITE message in packets.
    pub msg_max: u32,
    /// Share of messages that are READ requests.
    pub read_frac: f64,
    /// Share of messages that are small SENDs.
    pub send_frac: f64,
    /// Largest READ in MTUs (its span).
    pub read_max_mtus: u32,
    /// Probability of a pause after a message.
    pub idle_frac: f64,
    /// Pause length range.
    pub idle_min: Nanos,
    /// Pause length range.
    pub idle_max: Nanos,
}

impl TrafficModel {
    /// Mostly multi-packet WRITEs, a few SENDs and READs, occasional pauses.
    pub const DEFAULT: TrafficModel = TrafficModel {
        mtu: 1024,
        msg_max: 16,
        read_frac: 0.03,
        send_frac: 0.1,
        read_max_mtus: 8,
        idle_frac: 0.01,
        idle_min: 300_000,
        idle_max: 2_000_000,
    };

    /// RDMA WRITEs only (requests: the sender's retention is released by
    /// the RDMA ACKs), back to back without pauses: a bulk transfer at the
    /// paced rate.
    pub const WRITES: TrafficModel = TrafficModel {
        read_frac: 0.0,
        send_frac: 0.0,
        idle_frac: 0.0,
        ..TrafficModel::DEFAULT
    };
}

/// Generates the packet stream.
pub struct Traffic {
    model: TrafficModel,
    rng: Rng,
    next_psn: Psn,
    /// Packets left in the current WRITE and its remaining length.
    left: u32,
    last_len: u32,
    first: bool,
}

impl Traffic {
    /// Starts at `start`.
    pub fn new(model: TrafficModel, seed: u64, start: Psn) -> Traffic {
        Traffic {
            model,
            rng: Rng::new(seed, 100),
            next_psn: start,
            left: 0,
            last_len: 0,
            first: true,
        }
    }

    /// The next packet and the pause to insert after it (0 = none).
    pub fn next_packet(&mut self) -> (Packet, Nanos) {
        let mtu = self.model.mtu.max(1);
        let psn = self.next_psn;
        let mut data = Vec::new();
        let (bytes, span, read) = if self.left > 0 {
            let last = self.left == 1;
            let len = if last { self.last_len } else { mtu };
            data.resize(len as usize, 0);
            self.rng.fill(&mut data);
            self.left -= 1;
            let op = if last {
                opcode::RC_WRITE_LAST
            } else {
                opcode::RC_WRITE_MIDDLE
            };
            (request(op, psn, None, &data), 1, false)
        } else {
            let u = self.rng.unit();
            if u < self.model.read_frac {
                let n = self.rng.range(1, self.model.read_max_mtus.max(1) as u64) as u32;
                let dma = (n - 1) * mtu + self.rng.range(1, mtu as u64) as u32;
                let va = self.rng.next_u64() & !0xfff;
                let span = roce::read_psn_count(dma, mtu).unwrap_or(1);
                (
                    request(opcode::RC_READ_REQUEST, psn, Some((va, 0x77, dma)), &[]),
                    span,
                    true,
                )
            } else if u < self.model.read_frac + self.model.send_frac {
                data.resize(self.rng.range(16, 256) as usize, 0);
                self.rng.fill(&mut data);
                (request(opcode::RC_SEND_ONLY, psn, None, &data), 1, false)
            } else {
                let n = self.rng.range(1, self.model.msg_max.max(1) as u64) as u32;
                let last_len = self.rng.range(1, mtu as u64) as u32;
                let total = (n - 1) * mtu + last_len;
                let va = self.rng.next_u64() & !0xfff;
                let len = if n == 1 { last_len } else { mtu };
                data.resize(len as usize, 0);
                self.rng.fill(&mut data);
                let op = if n == 1 {
                    opcode::RC_WRITE_ONLY
                } else {
                    self.left = n - 1;
                    self.last_len = last_len;
                    opcode::RC_WRITE_FIRST
                };
                (request(op, psn, Some((va, 0x55, total)), &data), 1, false)
            }
        };
        self.first = false;
        self.next_psn = psn.wrapping_add(span);
        let gap = if self.left == 0 && self.rng.chance(self.model.idle_frac) {
            self.rng.range(self.model.idle_min, self.model.idle_max)
        } else {
            0
        };
        (
            Packet {
                psn,
                span,
                bytes,
                read,
            },
            gap,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crem_core::roce::RocePacket;

    #[test]
    fn packets_parse_and_verify() {
        let mut t = Traffic::new(TrafficModel::DEFAULT, 5, Psn::new(0xFF_FFF0));
        let mut expect = Psn::new(0xFF_FFF0);
        let mut reads = 0;
        for _ in 0..2000 {
            let (p, _) = t.next_packet();
            assert_eq!(p.psn, expect);
            assert!(icrc_ok(&p.bytes));
            let r = RocePacket::parse(&p.bytes).unwrap();
            assert!(r.is_source());
            assert_eq!(r.bth.psn, p.psn);
            if p.read {
                reads += 1;
                assert_eq!(r.read_span(1024).unwrap().unwrap().count, p.span);
            }
            expect = expect.wrapping_add(p.span);
        }
        assert!(reads > 0);
        let a = ack_packet(Psn::new(5), false, 1);
        let r = RocePacket::parse(&a).unwrap();
        assert_eq!(r.acked_through(), Some(Psn::new(5)));
        let n = ack_packet(Psn::new(5), true, 1);
        assert_eq!(
            RocePacket::parse(&n).unwrap().acked_through(),
            Some(Psn::new(4))
        );
        assert!(icrc_ok(&n));
    }
}
