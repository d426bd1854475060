//! RTT samples from the protected connection itself: a request flow's
//! source PSN timed until the RDMA acknowledgment that names it.
//!
//! The CSF's own exchanges (HELLO, PARAM_UPDATE) give it a sample or two
//! per flow, and a flow with a fixed configuration has nothing more to
//! learn from; but the RDMA transport acknowledges its requests all the
//! time, and those acknowledgments pass the CSF (they release retention).
//!
//! One PSN is timed at a time, as TCP timed one segment per round trip
//! before timestamps: a new PSN whose packet asks for an acknowledgment
//! (the BTH's AckReq bit, which the responder answers at once), and only
//! an acknowledgment that names that PSN (an ACK, NAK or READ response
//! with its PSN) gives the sample. Not the first PSN an acknowledgment
//! covers: a responder acknowledges only some packets, so a later PSN's ACK
//! would add the coalescing delay; and an ACK names the requester's QP,
//! which a request does not carry, so every request flow of the address
//! pair sees every ACK, and only the exact PSN is the flow's own (QPs'
//! PSN spaces start at random). A probe no acknowledgment named within its
//! expiry (the ACK was lost, or coalesced after all) is replaced by the
//! next one. Karn's rule: if the PSN (or one before it) is sent again
//! meanwhile, an ACK may answer either copy and the probe is dropped. A
//! sample of a packet CREM restored includes the recovery time; the
//! smoothing of [`super::super::rtt::RttEstimator`] takes it. Response
//! flows are acknowledged by nothing and take no samples.

use super::super::super::psn::Psn;
use super::super::Nanos;

/// The one timed PSN of a request flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckProbe {
    timed: Option<(Psn, Nanos)>,
}

impl AckProbe {
    /// Nothing timed.
    pub const fn new() -> Self {
        AckProbe { timed: None }
    }

    /// A source with first PSN `psn` passed at `now`; `fresh`: a PSN not
    /// seen before (else the RDMA transport sent it again); `ack_req`: it
    /// asks for an acknowledgment. A probe older than `expiry` gives way.
    pub fn on_source(&mut self, now: Nanos, psn: Psn, fresh: bool, ack_req: bool, expiry: Nanos) {
        match self.timed {
            Some((p, _)) if !fresh && !psn.is_after(p) => self.timed = None,
            Some((_, sent)) if now.saturating_sub(sent) < expiry => {}
            _ if fresh && ack_req => self.timed = Some((psn, now)),
            _ => {}
        }
    }

    /// An acknowledgment of every PSN through `acked` arrived at `now`: the
    /// RTT sample if it names the timed PSN.
    pub fn on_ack(&mut self, now: Nanos, acked: Psn) -> Option<Nanos> {
        let (p, sent) = self.timed?;
        if p != acked {
            return None;
        }
        self.timed = None;
        now.checked_sub(sent)
    }

    /// The PSN being timed and when it was sent.
    pub const fn timed(&self) -> Option<(Psn, Nanos)> {
        self.timed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXP: Nanos = 1_000_000;

    #[test]
    fn a_psn_that_asks_for_an_ack_is_timed_until_an_ack_names_it() {
        let mut a = AckProbe::new();
        a.on_source(90, Psn::new(9), true, false, EXP);
        assert_eq!(a.timed(), None);
        a.on_source(100, Psn::new(10), true, true, EXP);
        a.on_source(150, Psn::new(11), true, true, EXP);
        assert_eq!(a.timed(), Some((Psn::new(10), 100)));
        // Acknowledgments of other PSNs (before it, or another QP's after
        // it) are no sample and leave it timed.
        assert_eq!(a.on_ack(200, Psn::new(9)), None);
        assert_eq!(a.on_ack(300, Psn::new(5_000)), None);
        assert_eq!(a.on_ack(1_100, Psn::new(10)), Some(1_000));
        assert_eq!(a.timed(), None);
        a.on_source(1_200, Psn::new(12), true, true, EXP);
        assert_eq!(a.timed(), Some((Psn::new(12), 1_200)));
    }

    #[test]
    fn an_unanswered_probe_expires() {
        let mut a = AckProbe::new();
        a.on_source(0, Psn::new(1), true, true, EXP);
        a.on_source(EXP - 1, Psn::new(2), true, true, EXP);
        assert_eq!(a.timed(), Some((Psn::new(1), 0)));
        a.on_source(EXP, Psn::new(3), true, true, EXP);
        assert_eq!(a.timed(), Some((Psn::new(3), EXP)));
        assert_eq!(a.on_ack(EXP + 10, Psn::new(1)), None);
    }

    #[test]
    fn a_psn_sent_again_gives_no_sample() {
        let mut a = AckProbe::new();
        a.on_source(100, Psn::new(10), true, true, EXP);
        // A retransmission after the timed PSN leaves it timed.
        a.on_source(120, Psn::new(11), false, true, EXP);
        assert!(a.timed().is_some());
        // Go-back-N from 8: 10 goes again.
        a.on_source(130, Psn::new(8), false, true, EXP);
        assert_eq!(a.on_ack(500, Psn::new(10)), None);
        // Across the 24-bit wrap.
        a.on_source(600, Psn::new(0xff_fffe), true, true, EXP);
        assert_eq!(a.on_ack(700, Psn::new(0xff_fffe)), Some(100));
    }
}
