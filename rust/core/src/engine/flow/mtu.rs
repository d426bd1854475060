//! A sender flow's RDMA MTU, learned from its packets, and the symbol
//! length T that follows it.
//!
//! Nothing on the wire names a connection's RDMA MTU (rdma_cm negotiates it
//! between the two hosts), yet it sizes two things: the PSNs a READ request
//! consumes (`ceil(DMA Length / MTU)`), and T, "at least the largest UDP
//! payload of the flow plus 2". A flow starts from an estimate (the largest
//! MTU its link allows, which is the RDMA device's active MTU and what
//! perftest and rdma_cm use unless told otherwise) and corrects it from
//! what it sees:
//!
//! * a FIRST or MIDDLE packet carries exactly one MTU of payload
//!   ([`RocePacket::path_mtu`]): the MTU is then known, for good;
//! * until then, a payload larger than the estimate raises it to the
//!   smallest RDMA MTU that covers it (that packet passed unprotected:
//!   oversize for the T in use).
//!
//! When the MTU changes, so does T (unless the operator set it): the flow
//! proposes its configuration again with the new T.

use super::super::super::roce::{ib_mtu_covering, symbol_len_for_mtu, RocePacket};

/// The RDMA MTU estimate of one sender flow and the T it calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowMtu {
    mtu: u32,
    exact: bool,
    t: u16,
    /// T follows the MTU (false: the operator set it).
    follow: bool,
    changes: u64,
}

impl FlowMtu {
    /// Starts from the estimate `mtu` with symbol length `t`; `follow`: T
    /// is resized with the MTU.
    pub const fn new(mtu: u32, t: u16, follow: bool) -> Self {
        FlowMtu {
            mtu,
            exact: false,
            t,
            follow,
            changes: 0,
        }
    }

    /// A packet of the flow: true if it changed T.
    pub fn observe(&mut self, pkt: &RocePacket<'_>) -> bool {
        let seen = match pkt.path_mtu() {
            Some(m) => {
                let changed = !self.exact || m != self.mtu;
                self.exact = true;
                if !changed {
                    return false;
                }
                m
            }
            None if !self.exact => {
                let len = u32::try_from(pkt.payload.len()).unwrap_or(u32::MAX);
                match ib_mtu_covering(len) {
                    Some(m) if m > self.mtu => m,
                    _ => return false,
                }
            }
            None => return false,
        };
        if seen != self.mtu {
            self.mtu = seen;
            self.changes = self.changes.wrapping_add(1);
        }
        let t = symbol_len_for_mtu(seen);
        if self.follow && t != self.t {
            self.t = t;
            return true;
        }
        false
    }

    /// The RDMA MTU, octets.
    pub const fn mtu(&self) -> u32 {
        self.mtu
    }

    /// The MTU was seen in a FIRST or MIDDLE packet (not an estimate).
    pub const fn exact(&self) -> bool {
        self.exact
    }

    /// The symbol length new configurations use.
    pub const fn t(&self) -> u16 {
        self.t
    }

    /// Times the MTU estimate changed.
    pub const fn changes(&self) -> u64 {
        self.changes
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::super::roce::opcode;
    use super::*;

    /// A RoCEv2 UDP payload: BTH with `op`, `ext` octets of extension
    /// headers, `len` of payload, ICRC.
    fn packet(op: u8, ext: usize, len: usize) -> [u8; 4096 + 64] {
        let mut b = [0u8; 4096 + 64];
        b[0] = op;
        b[12 + ext + len..12 + ext + len + 4].copy_from_slice(&[0; 4]);
        b
    }

    fn observe(m: &mut FlowMtu, op: u8, ext: usize, len: usize) -> bool {
        let b = packet(op, ext, len);
        let p = RocePacket::parse(&b[..12 + ext + len + 4]).expect("packet");
        m.observe(&p)
    }

    #[test]
    fn a_first_or_middle_packet_sets_the_mtu_both_ways() {
        let mut m = FlowMtu::new(4096, symbol_len_for_mtu(4096), true);
        // A SEND only of 200 octets tells nothing below the estimate.
        assert!(!observe(&mut m, opcode::RC_SEND_ONLY, 0, 200));
        assert_eq!((m.mtu(), m.exact()), (4096, false));
        // WRITE first (RETH) of 1024: the MTU is 1024, T shrinks.
        assert!(observe(&mut m, opcode::RC_WRITE_FIRST, 16, 1024));
        assert_eq!((m.mtu(), m.exact(), m.t()), (1024, true, 1062));
        // Known now: a middle of the same size changes nothing.
        assert!(!observe(&mut m, opcode::RC_WRITE_MIDDLE, 0, 1024));
        // A last packet never counts; a middle of 2048 (a new connection
        // on the same QP number) does.
        assert!(!observe(&mut m, opcode::RC_SEND_LAST, 0, 4000));
        assert!(observe(&mut m, opcode::RC_SEND_MIDDLE, 0, 2048));
        assert_eq!((m.mtu(), m.t(), m.changes()), (2048, 2086, 2));
    }

    #[test]
    fn an_oversize_packet_raises_an_estimate_until_the_mtu_is_known() {
        let mut m = FlowMtu::new(1024, symbol_len_for_mtu(1024), true);
        assert!(observe(&mut m, opcode::RC_SEND_ONLY, 0, 1500));
        assert_eq!((m.mtu(), m.exact(), m.t()), (2048, false, 2086));
        // A first packet of a length that is no RDMA MTU is not one.
        assert!(!observe(&mut m, opcode::RC_SEND_FIRST, 0, 1000));
        assert!(!m.exact());
        assert!(observe(&mut m, opcode::RC_SEND_FIRST, 0, 4096));
        assert!(m.exact());
        // Known: a smaller only packet lowers nothing.
        assert!(!observe(&mut m, opcode::RC_SEND_ONLY, 0, 8));
        assert_eq!(m.mtu(), 4096);
    }

    #[test]
    fn an_operator_t_stays() {
        let mut m = FlowMtu::new(4096, 1100, false);
        assert!(!observe(&mut m, opcode::RC_SEND_FIRST, 0, 1024));
        assert_eq!((m.mtu(), m.t()), (1024, 1100));
    }
}
