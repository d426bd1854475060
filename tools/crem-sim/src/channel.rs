//! One direction of the path: a FIFO bottleneck of a given rate, a fixed
//! one-way delay, and a loss process (independent or Gilbert-Elliott bursts),
//! with optional reordering (a packet held back by a random extra delay).
//!
//! The Gilbert-Elliott state is a function of *time* (exponentially
//! distributed good and bad periods drawn from their own stream), and every
//! packet class draws its own loss and reordering decisions from its own
//! stream. So the original source packets of two runs with the same seed and
//! traffic see exactly the same losses, whatever the CREM configuration sends
//! besides: cells of a grid differ only in what CREM does.

use crem_core::engine::{Nanos, SEC};

use crate::rng::Rng;

/// Loss and reordering of one direction.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct LossModel {
    /// Long-run packet loss rate, 0..1.
    pub loss: f64,
    /// Mean burst length in packets at `ref_pps`; ≤ 1 means independent
    /// (Bernoulli) losses. Above 1, a Gilbert-Elliott channel that loses
    /// every packet in the bad state, with mean bad period `burst / ref_pps`
    /// and a good period such that the bad fraction of time is `loss`.
    pub burst: f64,
    /// Probability that a packet is held back (reordered).
    pub reorder: f64,
    /// Largest extra delay of a held-back packet (uniform in 1..=this).
    pub reorder_delay: Nanos,
}

impl LossModel {
    /// No loss, no reordering.
    pub const CLEAN: LossModel = LossModel {
        loss: 0.0,
        burst: 1.0,
        reorder: 0.0,
        reorder_delay: 0,
    };
}

/// Which stream a packet's random decisions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// First transmission of an RDMA packet (or an RDMA ACK on the reverse
    /// path).
    Original = 0,
    /// RDMA retransmission.
    Retx = 1,
    /// Any CREM message.
    Crem = 2,
}

/// The fate of one packet put on the link.
#[derive(Clone, Copy, Debug)]
pub struct Fate {
    /// Arrival time at the far end (meaningful even if dropped: when it
    /// would have arrived).
    pub nominal: Nanos,
    /// Arrival time including any reordering delay.
    pub arrive: Nanos,
    /// Lost on the way.
    pub dropped: bool,
    /// Held back by the reordering process.
    pub reordered: bool,
}

/// One direction of the path.
#[derive(Clone, Debug)]
pub struct Link {
    /// Bottleneck rate, bits per second.
    rate_bps: u64,
    /// Propagation delay.
    owd: Nanos,
    model: LossModel,
    /// Extra independent loss of CREM messages.
    crem_loss: f64,
    /// Bottleneck busy until.
    free_at: Nanos,
    /// Gilbert-Elliott: in the bad state, until `ge_until`.
    ge_bad: bool,
    ge_until: Nanos,
    mean_bad_ns: f64,
    mean_good_ns: f64,
    ge_rng: Rng,
    class_rng: [Rng; 3],
    /// Packets and octets put on the link, per class.
    pub sent: [u64; 3],
    /// Octets put on the link, per class.
    pub octets: [u64; 3],
    /// Packets dropped, per class.
    pub dropped: [u64; 3],
}

impl Link {
    /// A link; `ref_pps` converts the burst length from packets to time;
    /// `stream` separates the random streams of the two directions.
    pub fn new(
        seed: u64,
        stream: u64,
        rate_bps: u64,
        owd: Nanos,
        model: LossModel,
        crem_loss: f64,
        ref_pps: u64,
    ) -> Link {
        let ge = model.burst > 1.0 && model.loss > 0.0;
        let mean_bad_ns = if ge {
            model.burst / ref_pps.max(1) as f64 * SEC as f64
        } else {
            0.0
        };
        let loss = model.loss.clamp(0.0, 0.999);
        let mean_good_ns = if ge {
            mean_bad_ns * (1.0 - loss) / loss
        } else {
            0.0
        };
        let mut ge_rng = Rng::new(seed, stream * 16 + 3);
        let ge_until = if ge {
            ge_rng.exp(mean_good_ns) as Nanos
        } else {
            Nanos::MAX
        };
        Link {
            rate_bps: rate_bps.max(1),
            owd,
            model,
            crem_loss,
            free_at: 0,
            ge_bad: false,
            ge_until,
            mean_bad_ns,
            mean_good_ns,
            ge_rng,
            class_rng: [
                Rng::new(seed, stream * 16),
                Rng::new(seed, stream * 16 + 1),
                Rng::new(seed, stream * 16 + 2),
            ],
            sent: [0; 3],
            octets: [0; 3],
            dropped: [0; 3],
        }
    }

    /// Whether the Gilbert-Elliott channel is in its bad state at `t`
    /// (queried with non-decreasing `t`).
    fn bad_at(&mut self, t: Nanos) -> bool {
        while t >= self.ge_until {
            self.ge_bad = !self.ge_bad;
            let mean = if self.ge_bad {
                self.mean_bad_ns
            } else {
                self.mean_good_ns
            };
            let d = (self.ge_rng.exp(mean) as Nanos).max(1);
            self.ge_until = self.ge_until.saturating_add(d);
        }
        self.ge_bad
    }

    /// Puts a packet of `len` octets (IP packet) on the link at `now`;
    /// `force_drop` drops it regardless of the loss process (scripted loss).
    pub fn send(&mut self, now: Nanos, len: usize, class: Class, force_drop: bool) -> Fate {
        let c = class as usize;
        let start = now.max(self.free_at);
        let ser = (len as u64 * 8).saturating_mul(SEC) / self.rate_bps;
        self.free_at = start + ser;
        let nominal = self.free_at + self.owd;
        let ge = self.model.burst > 1.0 && self.model.loss > 0.0;
        // The burst state is looked up at the time the packet is offered
        // (not when the queue lets it go), so queueing behind CREM traffic
        // does not change which original packets a burst hits.
        let bad = ge && self.bad_at(now);
        let rng = &mut self.class_rng[c];
        // Draw every decision unconditionally so streams stay aligned.
        let u_loss = rng.unit();
        let u_crem = rng.unit();
        let u_reorder = rng.unit();
        let u_extra = rng.next_u64();
        let mut dropped = force_drop || bad || (!ge && u_loss < self.model.loss);
        if class == Class::Crem && u_crem < self.crem_loss {
            dropped = true;
        }
        let reordered = !dropped && self.model.reorder_delay > 0 && u_reorder < self.model.reorder;
        let arrive = if reordered {
            nominal + 1 + u_extra % self.model.reorder_delay
        } else {
            nominal
        };
        self.sent[c] += 1;
        self.octets[c] += len as u64;
        if dropped {
            self.dropped[c] += 1;
        }
        Fate {
            nominal,
            arrive,
            dropped,
            reordered,
        }
    }

    /// One-way propagation delay.
    pub fn owd(&self) -> Nanos {
        self.owd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_loss_rate() {
        let m = LossModel {
            loss: 0.05,
            ..LossModel::CLEAN
        };
        let mut l = Link::new(1, 0, 1_000_000_000, 1000, m, 0.0, 10_000);
        let n = 100_000;
        let lost = (0..n)
            .filter(|i| l.send(i * 100_000, 1000, Class::Original, false).dropped)
            .count();
        assert!((4500..5500).contains(&lost), "{lost}");
    }

    #[test]
    fn ge_bursts() {
        let m = LossModel {
            loss: 0.02,
            burst: 10.0,
            ..LossModel::CLEAN
        };
        let mut l = Link::new(3, 0, 1_000_000_000, 1000, m, 0.0, 10_000);
        let n = 400_000u64;
        let mut lost = 0;
        let mut bursts = 0;
        let mut prev = false;
        for i in 0..n {
            let d = l.send(i * 100_000, 1000, Class::Original, false).dropped;
            lost += d as u64;
            bursts += (d && !prev) as u64;
            prev = d;
        }
        let rate = lost as f64 / n as f64;
        let mean_burst = lost as f64 / bursts as f64;
        assert!((0.015..0.025).contains(&rate), "{rate}");
        assert!((8.0..12.5).contains(&mean_burst), "{mean_burst}");
    }

    #[test]
    fn fifo_rate_and_delay() {
        let mut l = Link::new(1, 0, 8_000_000, 5_000, LossModel::CLEAN, 0.0, 1);
        // 1000 octets at 8 Mbit/s = 1 ms.
        let a = l.send(0, 1000, Class::Original, false);
        let b = l.send(0, 1000, Class::Crem, false);
        assert_eq!(a.arrive, 1_000_000 + 5_000);
        assert_eq!(b.arrive, 2_000_000 + 5_000);
        assert!(l.send(0, 10, Class::Original, true).dropped);
    }
}
