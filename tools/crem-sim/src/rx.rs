//! The RDMA receiver model and its fallback path.
//!
//! It records every copy of every PSN it is given (the original, a packet
//! restored by the CRF, or an RDMA retransmission), keeps the expected PSN
//! (the first position not yet had; a READ request also covers its
//! response PSNs) and sends cumulative ACKs, coalesced every [`ACK_EVERY`]
//! positions or [`ACK_DELAY`] after the last advance, and at once on a
//! duplicate (as RC responders do).
//!
//! **Fallback (simplified RDMA recovery).** A missing position becomes
//! *visible* when a later one is delivered (with CREM, that happens only when
//! the CRF stopped holding for it: hold time H expired or it gave the gap
//! up). `nak_delay` after that, the receiver sends a NAK (PSN sequence error,
//! naming the expected PSN); the sender retransmits every position the NAK
//! lists (a SACK-like selective retransmission, carried as simulation
//! metadata beside the real NAK bytes), and a position still missing is
//! NAKed again after `rto`. What a go-back-N sender would have resent (all
//! positions from the expected PSN to the highest sent) is counted apart,
//! as the cost a real RoCE NIC or rxe would pay. `nak_delay = 0` is rxe's
//! behaviour (NAK on the first out-of-sequence packet).

use std::collections::BTreeSet;

use crem_core::engine::Nanos;

use crate::hosts::Via;

/// Positions per coalesced ACK.
pub const ACK_EVERY: u32 = 16;
/// Longest an advance waits for its ACK.
pub const ACK_DELAY: Nanos = 100_000;

const NEVER: Nanos = Nanos::MAX;

/// What the receiver wants done after a delivery.
#[derive(Debug, Default)]
pub struct RxOut {
    /// Send a cumulative ACK now.
    pub ack_now: bool,
    /// Arm the ACK timer at this time (if not armed).
    pub ack_at: Option<Nanos>,
}

/// The RDMA receiver.
pub struct Receiver {
    /// Position had (received, or absent behind a received READ request).
    pub done: Vec<bool>,
    /// Every copy of every position, with its arrival time.
    pub copies: Vec<Vec<(Nanos, Via)>>,
    /// First position not had.
    pub epos: u32,
    /// Highest position delivered.
    pub highest: Option<u32>,
    /// Positions below this were checked for visibility.
    scan: u32,
    nak_due: BTreeSet<(Nanos, u32)>,
    last_nak: Vec<Nanos>,
    /// `epos` announced by the last ACK.
    pub acked_epos: u32,
    /// NAK messages sent.
    pub naks: u64,
    /// Positions listed in NAKs.
    pub nak_positions: u64,
}

impl Receiver {
    /// An empty receiver.
    pub fn new() -> Receiver {
        Receiver {
            done: Vec::new(),
            copies: Vec::new(),
            epos: 0,
            highest: None,
            scan: 0,
            nak_due: BTreeSet::new(),
            last_nak: Vec::new(),
            acked_epos: 0,
            naks: 0,
            nak_positions: 0,
        }
    }

    fn ensure(&mut self, n: usize) {
        if self.done.len() < n {
            self.done.resize(n, false);
            self.copies.resize_with(n, Vec::new);
            self.last_nak.resize(n, NEVER);
        }
    }

    /// A copy of position `pos` (covering `span` positions) arrived.
    pub fn deliver(
        &mut self,
        now: Nanos,
        pos: u32,
        span: u32,
        via: Via,
        nak_delay: Nanos,
    ) -> RxOut {
        let end = pos + span.max(1);
        self.ensure(end as usize);
        let dup = self.done[pos as usize];
        self.copies[pos as usize].push((now, via));
        for p in pos..end {
            self.done[p as usize] = true;
        }
        if self.highest.is_none_or(|h| pos > h) {
            self.highest = Some(pos);
        }
        // Missing positions below this one are now visible.
        if pos > self.scan {
            for x in self.scan..pos {
                if !self.done[x as usize] {
                    self.nak_due.insert((now.saturating_add(nak_delay), x));
                }
            }
        }
        self.scan = self.scan.max(end);
        let before = self.epos;
        while (self.epos as usize) < self.done.len() && self.done[self.epos as usize] {
            self.epos += 1;
        }
        let mut out = RxOut::default();
        if dup || self.epos >= self.acked_epos + ACK_EVERY {
            out.ack_now = true;
        } else if self.epos > before {
            out.ack_at = Some(now + ACK_DELAY);
        }
        out
    }

    /// An ACK is being sent: the `epos` it announces.
    pub fn ack_sent(&mut self) -> u32 {
        self.acked_epos = self.epos;
        self.epos
    }

    /// When the next NAK check is due.
    pub fn nak_deadline(&self) -> Option<Nanos> {
        self.nak_due.iter().next().map(|&(t, _)| t)
    }

    /// Positions to NAK now (sorted; empty = send nothing).
    pub fn nak_check(&mut self, now: Nanos, rto: Nanos) -> Vec<u32> {
        let mut list = Vec::new();
        while let Some(&(t, x)) = self.nak_due.iter().next() {
            if t > now {
                break;
            }
            self.nak_due.remove(&(t, x));
            if self.done[x as usize] {
                continue;
            }
            let last = self.last_nak[x as usize];
            if last != NEVER && last.saturating_add(rto) > now {
                self.nak_due.insert((last + rto, x));
                continue;
            }
            self.last_nak[x as usize] = now;
            self.nak_due.insert((now + rto, x));
            list.push(x);
        }
        list.sort_unstable();
        if !list.is_empty() {
            self.naks += 1;
            self.nak_positions += list.len() as u64;
        }
        list
    }
}

impl Default for Receiver {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ack_and_nak() {
        let mut r = Receiver::new();
        for p in 0..5 {
            r.deliver(p as u64, p, 1, Via::Original, 10);
        }
        assert_eq!(r.epos, 5);
        // 5 and 6 lost; 7 arrives: both visible, NAK due at 110.
        r.deliver(100, 7, 1, Via::Original, 10);
        assert_eq!(r.nak_deadline(), Some(110));
        assert!(r.nak_check(105, 1000).is_empty());
        assert_eq!(r.nak_check(110, 1000), vec![5, 6]);
        // Re-NAK only after the RTO.
        assert_eq!(r.nak_deadline(), Some(1110));
        r.deliver(500, 5, 1, Via::RdmaRetx, 10);
        assert_eq!(r.nak_check(1110, 1000), vec![6]);
        let o = r.deliver(1200, 6, 1, Via::RdmaRetx, 10);
        assert_eq!(r.epos, 8);
        assert!(o.ack_at.is_some() || o.ack_now);
        assert!(r.deliver(1300, 6, 1, Via::RdmaRetx, 10).ack_now);
        // A READ covering 8..11.
        r.deliver(1400, 8, 4, Via::Original, 10);
        assert_eq!(r.epos, 12);
    }
}
