//! RTT samples from the protected connection itself: a request flow's
//! source PSN timed until the RDMA acknowledgment that covers it.
//!
//! The CSF's own exchanges (HELLO, PARAM_UPDATE) give it a sample or two
//! per flow, and a flow with a fixed configuration has nothing more to
//! learn from; but the RDMA transport acknowledges its requests all the
//! time, and those acknowledgments pass the CSF (they release retention).
//! One PSN is timed at a time, as TCP timed one segment per round trip
//! before timestamps: the first new PSN while none is timed. Only an
//! acknowledgment that names that PSN itself (an ACK, NAK or READ response
//! whose PSN it is) gives a sample: a responder acknowledges only some
//! packets (rxe those that ask, or every few), and one acknowledgment
//! covers every PSN before it, so an ACK of a later PSN would add the
//! coalescing delay to the sample; such an ACK drops the probe instead, and
//! the next new PSN is timed. It also keeps another QP's acknowledgments
//! out: an ACK names the requester's QP, which a request does not carry, so
//! every request flow of the address pair sees it, and only an exact PSN
//! matches. Karn's rule: if the PSN (or one before it) is sent again
//! meanwhile, the ACK may answer either copy and the probe is dropped. A
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
    /// seen before (else the RDMA transport sent it again).
    pub fn on_source(&mut self, now: Nanos, psn: Psn, fresh: bool) {
        match self.timed {
            None if fresh => self.timed = Some((psn, now)),
            Some((p, _)) if !fresh && !psn.is_after(p) => self.timed = None,
            _ => {}
        }
    }

    /// An acknowledgment of every PSN through `acked` arrived at `now`: the
    /// RTT sample if it names the timed PSN; one that covers it without
    /// naming it ends the probe without a sample.
    pub fn on_ack(&mut self, now: Nanos, acked: Psn) -> Option<Nanos> {
        let (p, sent) = self.timed?;
        if p.is_after(acked) {
            return None;
        }
        self.timed = None;
        if p != acked {
            return None;
        }
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

    #[test]
    fn one_psn_is_timed_until_an_ack_covers_it() {
        let mut a = AckProbe::new();
        a.on_source(100, Psn::new(10), true);
        a.on_source(150, Psn::new(11), true);
        assert_eq!(a.timed(), Some((Psn::new(10), 100)));
        // An ACK before it is no sample.
        assert_eq!(a.on_ack(200, Psn::new(9)), None);
        assert_eq!(a.on_ack(1_100, Psn::new(10)), Some(1_000));
        assert_eq!(a.timed(), None);
        a.on_source(1_200, Psn::new(12), true);
        assert_eq!(a.timed(), Some((Psn::new(12), 1_200)));
        // An ACK that covers it without naming it (coalesced, or another
        // QP's) ends the probe without a sample.
        assert_eq!(a.on_ack(5_000, Psn::new(14)), None);
        assert_eq!(a.timed(), None);
    }

    #[test]
    fn a_psn_sent_again_gives_no_sample() {
        let mut a = AckProbe::new();
        a.on_source(100, Psn::new(10), true);
        // A retransmission after the timed PSN leaves it timed.
        a.on_source(120, Psn::new(11), false);
        assert!(a.timed().is_some());
        // Go-back-N from 8: 10 goes again.
        a.on_source(130, Psn::new(8), false);
        assert_eq!(a.on_ack(500, Psn::new(12)), None);
        // Across the 24-bit wrap.
        a.on_source(600, Psn::new(0xff_fffe), true);
        assert_eq!(a.on_ack(650, Psn::new(0xff_fffd)), None);
        assert_eq!(a.on_ack(700, Psn::new(0xff_fffe)), Some(100));
    }
}
