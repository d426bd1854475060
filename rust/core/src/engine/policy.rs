//! The CSF's redundancy policy (draft, "Redundancy Policy" and "Congestion
//! Control Considerations"): what (k, m) to ask for and whether coded
//! retransmission is allowed, from LOSS_REPORTs and PATH_REPORTs.
//!
//! Pieces (each in its own submodule):
//! * loss estimate: an EWMA over LOSS_REPORT intervals of the pre-restoration
//!   loss rate `(expected − received) / expected` — kept as two EWMAs, of lost
//!   and of expected packets, whose ratio is p, so that an interval with 3
//!   packets does not weigh as much as one with 3000;
//! * [`binomial`]: the smallest m with `P(more than m of k + m lost) < ε`, in
//!   integer arithmetic ([`prob::Prob`]), with the draft's m = 0 rule
//!   documented on [`binomial::choose_m`] (off by default: rxe and RoCE NICs
//!   do not wait the round trip it counts on; README, "The adaptive policy
//!   against fixed settings");
//! * a coded round within the peer's hold: when the caller says one
//!   completes before RDMA sees a gap ([`Policy::set_round_in_hold`]), m
//!   is the smallest whose blocks one coded round leaves unrecovered with
//!   probability below ε ([`binomial::choose_m_after_round`]);
//! * a prior: until the LOSS_REPORTs have counted one loss window of
//!   packets, decisions take at least `prior_loss_ppb` (1 %), so that a
//!   flow's first blocks are protected;
//! * [`classify`]: congestion vs transmission loss; congestion caps m at
//!   `m_cong`;
//! * CE or loss on REPAIR messages: m is halved at each decision while the
//!   condition is reported, and set to zero once it has persisted for more
//!   than a second (loss counted over about four reports and beyond what
//!   chance and the pairing of counts explain);
//! * [`breaker`]: the circuit breaker;
//! * hysteresis: at most one configuration change per 2 · SRTT — except that a
//!   tripped circuit breaker forces m = 0 at once (a safety stop; its own 1 s
//!   window already rules out flapping).
//!
//! The policy only decides. The caller turns an applied decision into a
//! PARAM_UPDATE (negotiation), stops coded retransmission when told, and sends
//! CLOSE reason 4 on [`BreakerEvent::Close`]. No floating point anywhere:
//! ratios are ppb (parts per 10^9) integers or [`prob::Prob`].

pub mod binomial;
pub mod breaker;
pub mod classify;
pub mod prob;

pub use self::binomial::{
    any_loss, binomial_tail, choose_m, choose_m_after_round, max_m_for_k, round_tail, MChoice,
};
pub use self::breaker::{Breaker, BreakerConfig, BreakerEvent, BreakerState};
pub use self::classify::{Classification, Classifier, ClassifierConfig, LossClass};
pub use self::prob::Prob;

use super::super::fec::Scheme;
use super::super::wire::{LossReport, PathReport};
use super::loss_window::{LossWindow, MAX_WINDOW_SHIFT};
use super::{Limits, Nanos, SEC};

/// Parts per billion: the unit of every ratio in the policy's configuration.
pub const PPB: u64 = 1_000_000_000;

/// Tunables (defaults in [`PolicyConfig::DEFAULT`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyConfig {
    /// Block size k asked for (bounded by the effective Max k).
    pub k: u8,
    /// Target ε, ppb (1e-4 = 100 000).
    pub epsilon_ppb: u32,
    /// Largest m for congestion-related loss (draft RECOMMENDED 1).
    pub m_cong: u8,
    /// Window of the loss estimate, 2^shift source packets (at most 2^20):
    /// each LOSS_REPORT interval weighs by its packets, so the estimate
    /// covers about as many packets whatever the report rate.
    pub loss_window_shift: u8,
    /// m = 0 when one coded-retransmission round meets ε (see
    /// [`binomial::choose_m`]); false for flows without one-RTT recovery.
    pub retx_rule: bool,
    /// The loss a flow starts from, ppb: until its LOSS_REPORTs have
    /// counted one loss window of packets, decisions take at least this
    /// rate (0: none, a flow starts at m = 0).
    pub prior_loss_ppb: u32,
    /// REPAIR loss counts as a signal when the repair loss fraction exceeds the
    /// source loss fraction of the same report by this much (ppb): repairs
    /// share the path's transmission loss, only excess loss is congestion.
    pub repair_loss_margin_ppb: u32,
    /// ... and at least this many repairs were lost in the report.
    pub repair_loss_min: u32,
    /// CE/loss on REPAIRs persisting longer than this sets m to zero (1 s).
    pub repair_zero_after: Nanos,
    /// Classifier tunables.
    pub classifier: ClassifierConfig,
    /// Circuit-breaker tunables.
    pub breaker: BreakerConfig,
}

impl PolicyConfig {
    /// k 32, ε 1e-4, m_cong 1, loss window 1024 packets, m = 0 rule off,
    /// prior 1 %, repair-loss
    /// margin 2 % and at least 2 lost, 1 s, draft breaker values.
    pub const DEFAULT: PolicyConfig = PolicyConfig {
        k: 32,
        epsilon_ppb: 100_000,
        m_cong: 1,
        loss_window_shift: 10,
        retx_rule: false,
        prior_loss_ppb: 10_000_000,
        repair_loss_margin_ppb: 20_000_000,
        repair_loss_min: 2,
        repair_zero_after: SEC,
        classifier: ClassifierConfig::DEFAULT,
        breaker: BreakerConfig::DEFAULT,
    };
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Which rule set the decided m.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Why {
    /// No loss measured: m = 0.
    NoLoss,
    /// One coded-retransmission round meets ε: m = 0.
    RetxSuffices,
    /// Smallest m meeting ε.
    Tail,
    /// Smallest m meeting ε after one coded-retransmission round, which
    /// the peer's hold covers ([`Policy::set_round_in_hold`]).
    AfterRound,
    /// ε not reachable within the limits: the largest allowed m.
    Capped,
    /// Congestion-related loss: m capped at m_cong.
    CongestionCap,
    /// CE/loss on REPAIR messages: m halved.
    RepairPathReduced,
    /// CE/loss on REPAIR messages for more than 1 s: m = 0.
    RepairPathZero,
    /// Circuit breaker open: m = 0, no coded retransmission.
    Breaker,
}

/// What the caller should do with a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Change {
    /// The desired (k, m) is the current one.
    None,
    /// Apply the desired (k, m) now (send PARAM_UPDATE).
    Apply,
    /// A change is desired but hysteresis forbids it until 2 · SRTT after the
    /// last change; keep the current configuration.
    Suppressed,
}

/// Output of [`Policy::decide`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    /// Scheme to use: Cauchy RS when the effective limits allow it, else XOR
    /// parity (then m <= 1 and the m = 0 rule does not apply, since XOR has no
    /// coded retransmission).
    pub scheme: Scheme,
    /// Desired block size.
    pub k: u8,
    /// Desired repair symbols per block.
    pub m: u8,
    /// Whether coded retransmission (and Source Copy fallback answers) may be
    /// sent; false while the circuit breaker is open.
    pub coded_retx: bool,
    /// Loss classification behind the decision.
    pub classification: Classification,
    /// The binding rule.
    pub why: Why,
    /// Apply, keep, or suppressed by hysteresis.
    pub change: Change,
}

/// Operator counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PolicyCounters {
    /// LOSS_REPORTs taken into account.
    pub loss_reports: u64,
    /// LOSS_REPORTs with Expected = 0 (no effect on p).
    pub loss_reports_empty: u64,
    /// PATH_REPORTs taken into account.
    pub path_reports: u64,
    /// LOSS_REPORTs showing CE or excess loss on REPAIR messages.
    pub repair_path_signals: u64,
    /// Decisions made.
    pub decisions: u64,
    /// Decisions that asked for a change (Apply).
    pub changes: u64,
    /// Changes held back by hysteresis.
    pub suppressed: u64,
    /// Decisions where the m_cong cap applied.
    pub congestion_capped: u64,
    /// Decisions that counted a coded round within the peer's hold
    /// ([`Policy::set_round_in_hold`]).
    pub after_round: u64,
    /// Decisions where REPAIR-path signals reduced m.
    pub repair_reduced: u64,
    /// Breaker trips.
    pub breaker_trips: u64,
    /// Breaker clears.
    pub breaker_clears: u64,
    /// CLOSE reason 4 requests.
    pub breaker_closes: u64,
}

/// The redundancy policy of one flow (CSF-local state).
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    cfg: PolicyConfig,
    /// The loss estimate p.
    loss: LossWindow,
    /// Source packets the LOSS_REPORTs counted (up to a window: the prior
    /// holds until then).
    counted: u32,
    /// REPAIRs sent for the reports' intervals, and received: sums that
    /// keep 3/4 at each report (about the last four), in 1/256 of a REPAIR
    /// (see `on_loss_report`).
    rep_sent: u64,
    rep_recv: u64,
    classifier: Classifier,
    breaker: Breaker,
    repair_onset: Option<Nanos>,
    repair_last: Nanos,
    last_change: Option<Nanos>,
    /// A coded round completes within the peer's hold (the caller's
    /// judgement, [`Policy::set_round_in_hold`]).
    round_in_hold: bool,
    counters: PolicyCounters,
}

impl Policy {
    /// A policy with no measurements (p = 0, breaker normal).
    pub const fn new(cfg: PolicyConfig) -> Policy {
        Policy {
            cfg,
            loss: LossWindow::new(),
            counted: 0,
            rep_sent: 0,
            rep_recv: 0,
            classifier: Classifier::new(cfg.classifier),
            breaker: Breaker::new(cfg.breaker),
            repair_onset: None,
            repair_last: 0,
            last_change: None,
            round_in_hold: false,
            counters: PolicyCounters {
                loss_reports: 0,
                loss_reports_empty: 0,
                path_reports: 0,
                repair_path_signals: 0,
                decisions: 0,
                changes: 0,
                suppressed: 0,
                congestion_capped: 0,
                after_round: 0,
                repair_reduced: 0,
                breaker_trips: 0,
                breaker_clears: 0,
                breaker_closes: 0,
            },
        }
    }

    /// Forgets all measurements and state (new session); keeps counters.
    pub fn reset(&mut self) {
        let counters = self.counters;
        let round_in_hold = self.round_in_hold;
        *self = Policy::new(self.cfg);
        self.counters = counters;
        self.round_in_hold = round_in_hold;
        self.breaker.reset();
    }

    /// Whether one coded-retransmission round completes before the RDMA
    /// receiver sees a loss: the peer CRF holds the packets after a gap for
    /// a hold time that covers its reordering allowance, a block and a
    /// round trip. Then m need only meet ε after that round
    /// ([`binomial::choose_m_after_round`]); else, as by default, the tail
    /// of the ordinary repairs alone (a loss they miss costs RDMA a
    /// go-back-N). The caller re-judges it as the SRTT and the block time
    /// change; kept across [`Policy::reset`] like the configuration.
    pub fn set_round_in_hold(&mut self, fits: bool) {
        self.round_in_hold = fits;
    }

    /// Measures a LOSS_REPORT without acting on it: the loss estimate and
    /// the classification, nothing that changes m or the breaker. A flow
    /// with a fixed configuration is measured this way, so that operators
    /// read its loss and class as for an adaptive one.
    pub fn observe(&mut self, now: Nanos, r: &LossReport) {
        self.counters.loss_reports = self.counters.loss_reports.saturating_add(1);
        if r.expected == 0 {
            self.counters.loss_reports_empty = self.counters.loss_reports_empty.saturating_add(1);
        }
        self.loss
            .update(r.expected, r.received, self.cfg.loss_window_shift);
        self.counted = self.counted.saturating_add(r.expected);
        self.classifier.on_loss_report(now, r);
    }

    /// Takes a LOSS_REPORT into account. `repairs_sent` is the number of REPAIR
    /// messages the CSF sent for the interval the report covers (the caller's
    /// best alignment), used to detect loss on REPAIR messages. Returns a
    /// circuit-breaker transition, if one happened.
    pub fn on_loss_report(
        &mut self,
        now: Nanos,
        r: &LossReport,
        repairs_sent: u32,
    ) -> Option<BreakerEvent> {
        self.observe(now, r);
        let lost = r.expected.saturating_sub(r.received);

        // CE or excess loss on REPAIR messages. The REPAIRs sent for an
        // interval are the caller's estimate (whole buckets of its log at
        // each end: up to a quarter of an interval off either way), and an
        // interval carries a few dozen: judged one report at a time, chance
        // and that misalignment tripped the signal (crem-sim at 1 %, k 16:
        // 12 to 20 times a second, each halving m; issue 13 #8). So the
        // counts are summed over about the last four reports, where one
        // interval's surplus is the next one's deficit, and the excess, less
        // an eighth of this interval's REPAIRs (one bucket of misalignment
        // at the newest end), must be beyond chance at the sources' loss
        // rate. Our ruling: with a few dozen REPAIRs a report, an excess of
        // some 10 % is what can be told from chance within a few reports.
        let ewma = |s: u64, x: u32| (s - s / 4).saturating_add(u64::from(x) << 8);
        self.rep_sent = ewma(self.rep_sent, repairs_sent);
        self.rep_recv = ewma(self.rep_recv, r.repairs_received);
        let whole = |v: u64| (v >> 8).min(u64::from(u32::MAX)) as u32;
        let sent_w = whole(self.rep_sent);
        let lost_w = whole(self.rep_sent.saturating_sub(self.rep_recv));
        let rep_lost_now = repairs_sent.saturating_sub(r.repairs_received);
        let src_loss_ppb = self
            .loss_ppb()
            .max(ratio_ppb(lost as u64, r.expected as u64));
        let rep_loss_ppb = ratio_ppb(u64::from(lost_w), u64::from(sent_w));
        let rep_loss = rep_lost_now > 0
            && lost_w >= self.cfg.repair_loss_min
            && rep_loss_ppb > src_loss_ppb.saturating_add(self.cfg.repair_loss_margin_ppb as u64)
            && beyond_chance(
                lost_w.saturating_sub(repairs_sent / 8),
                sent_w,
                src_loss_ppb,
            );
        if r.repairs_ce_marked > 0 || rep_loss {
            self.counters.repair_path_signals = self.counters.repair_path_signals.saturating_add(1);
            if self.repair_onset.is_none() {
                self.repair_onset = Some(now);
            }
            self.repair_last = now;
        } else if r.repairs_received > 0 {
            // A report without REPAIRs (m = 0 sends no ordinary ones) is
            // no evidence that the REPAIR path got better: the signal holds
            // until REPAIRs arrive clean (a coded retransmission answering a
            // loss is one, and so is a tail notice since stop 52: it crossed
            // the same path unmarked). Before, m came back as soon as it
            // reached 0, and under constant CE the flows' m swung between 0
            // and the loss's m (line-edges `ce` failed 2 of 5 runs at stop
            // 25).
            self.repair_onset = None;
        }

        let ev = self.breaker.on_loss_report(now, r);
        let c = &mut self.counters;
        match ev {
            Some(BreakerEvent::Tripped) => c.breaker_trips = c.breaker_trips.saturating_add(1),
            Some(BreakerEvent::Cleared) => c.breaker_clears = c.breaker_clears.saturating_add(1),
            Some(BreakerEvent::Close) => c.breaker_closes = c.breaker_closes.saturating_add(1),
            None => {}
        }
        ev
    }

    /// Takes a PATH_REPORT into account. The caller has already checked that
    /// it comes from an allow-listed reporter and concerns this flow.
    pub fn on_path_report(&mut self, now: Nanos, r: &PathReport<'_>) {
        self.counters.path_reports = self.counters.path_reports.saturating_add(1);
        self.classifier.on_path_report(now, r);
    }

    /// Decides the desired (k, m). `current` is the configuration in use
    /// (None before the first), `limits` the effective limits, `srtt` the
    /// smoothed RTT for hysteresis. When the result says [`Change::Apply`] the
    /// policy counts it as the change of this 2 · SRTT period.
    pub fn decide(
        &mut self,
        now: Nanos,
        srtt: Nanos,
        current: Option<(u8, u8)>,
        limits: &Limits,
    ) -> Decision {
        self.counters.decisions = self.counters.decisions.saturating_add(1);
        let k = self.cfg.k.min(limits.max_k).max(1);
        let bit = |s: Scheme| limits.schemes & (1u8 << u8::from(s)) != 0;
        let (scheme, cap, retx_rule) = if bit(Scheme::CauchyRs) || !bit(Scheme::Xor) {
            let cap = limits.max_m.min(max_m_for_k(k));
            (Scheme::CauchyRs, cap, self.cfg.retx_rule)
        } else {
            (Scheme::Xor, limits.max_m.min(1), false)
        };
        let classification = self
            .classifier
            .classify(now, !self.loss_estimate().is_zero());
        let p = self.decision_estimate();
        let (m, why, coded_retx) = if self.breaker.state().is_open() {
            (0, Why::Breaker, false)
        } else {
            let eps = Prob::from_ppb(self.cfg.epsilon_ppb as u64);
            // XOR has no coded round (`retx_rule` is off for it too).
            let (mut m, c) = if self.round_in_hold && scheme == Scheme::CauchyRs {
                self.counters.after_round = self.counters.after_round.saturating_add(1);
                // The draft's m = 0 rule, when on, leaves the request out
                // and may allow m = 0 where the sum after a round does not:
                // a round the hold covers never asks for more than it.
                match choose_m(k, p, eps, cap, retx_rule) {
                    r @ (0, MChoice::RetxSuffices) => r,
                    _ => choose_m_after_round(k, p, eps, cap),
                }
            } else {
                choose_m(k, p, eps, cap, retx_rule)
            };
            let mut why = match c {
                MChoice::NoLoss => Why::NoLoss,
                MChoice::RetxSuffices => Why::RetxSuffices,
                MChoice::Tail => Why::Tail,
                MChoice::AfterRound => Why::AfterRound,
                MChoice::Capped => Why::Capped,
            };
            if classification.congestion() && m > self.cfg.m_cong {
                m = self.cfg.m_cong;
                why = Why::CongestionCap;
                self.counters.congestion_capped = self.counters.congestion_capped.saturating_add(1);
            }
            if let Some(onset) = self.repair_onset {
                let limit = if self.repair_last.saturating_sub(onset) > self.cfg.repair_zero_after {
                    why = Why::RepairPathZero;
                    0
                } else {
                    current.map_or(0, |(_, cm)| cm / 2)
                };
                if m > limit {
                    m = limit;
                    if why != Why::RepairPathZero {
                        why = Why::RepairPathReduced;
                    }
                    self.counters.repair_reduced = self.counters.repair_reduced.saturating_add(1);
                }
            }
            (m, why, true)
        };
        let change = if current == Some((k, m)) {
            Change::None
        } else {
            let allowed = why == Why::Breaker
                || current.is_none()
                || match self.last_change {
                    None => true,
                    Some(t) => now >= t.saturating_add(srtt.saturating_mul(2)),
                };
            if allowed {
                self.last_change = Some(now);
                self.counters.changes = self.counters.changes.saturating_add(1);
                Change::Apply
            } else {
                self.counters.suppressed = self.counters.suppressed.saturating_add(1);
                Change::Suppressed
            }
        };
        Decision {
            scheme,
            k,
            m,
            coded_retx,
            classification,
            why,
            change,
        }
    }

    /// The loss-rate estimate p (pre-restoration).
    pub fn loss_estimate(&self) -> Prob {
        let (lost, expected) = self.loss.counts();
        Prob::from_ratio(lost, expected)
    }

    /// The p decisions use: the estimate, and at least the prior until a
    /// window of packets was counted.
    fn decision_estimate(&self) -> Prob {
        let p = self.loss_estimate();
        let window = 1u32 << self.cfg.loss_window_shift.min(MAX_WINDOW_SHIFT);
        if self.counted >= window {
            return p;
        }
        let prior = Prob::from_ppb(u64::from(self.cfg.prior_loss_ppb).min(PPB));
        if prior > p {
            prior
        } else {
            p
        }
    }

    /// p in parts per billion, for operators.
    pub fn loss_ppb(&self) -> u64 {
        self.loss_estimate().to_ppb()
    }

    /// The current loss classification.
    pub fn classification(&self, now: Nanos) -> Classification {
        self.classifier
            .classify(now, !self.loss_estimate().is_zero())
    }

    /// Circuit-breaker state.
    pub const fn breaker_state(&self) -> BreakerState {
        self.breaker.state()
    }

    /// The circuit breaker (window statistics for operators).
    pub const fn breaker(&self) -> &Breaker {
        &self.breaker
    }

    /// Whether coded retransmission may be sent now (breaker not open).
    pub const fn coded_retx_allowed(&self) -> bool {
        !self.breaker.state().is_open()
    }

    /// Whether CE/loss on REPAIR messages is currently reported.
    pub const fn repair_path_signal(&self) -> bool {
        self.repair_onset.is_some()
    }

    /// CE fraction baseline and last value, ppb (for operators).
    pub const fn ce_ppb(&self) -> (u64, u64) {
        (
            self.classifier.ce_baseline_ppb(),
            self.classifier.ce_last_ppb(),
        )
    }

    /// Counters.
    pub const fn counters(&self) -> &PolicyCounters {
        &self.counters
    }

    /// Configuration.
    pub const fn config(&self) -> &PolicyConfig {
        &self.cfg
    }
}

/// Whether `lost` of `sent` REPAIRs is more than the path's loss rate
/// (`p_ppb`, the sources' estimate) explains: above the binomial mean by
/// four standard deviations and one (`mean + 4·√mean + 1`). A report
/// interval carries a few dozen REPAIRs, so a margin in percent alone let
/// chance trip it: at 1 % loss, k 16 and m 2, two of 25 REPAIRs lost in one
/// interval (2.6 % of the reports) halved m, 20 times a second in crem-sim,
/// and m swung (issue 13 #8).
fn beyond_chance(lost: u32, sent: u32, p_ppb: u64) -> bool {
    // Fixed point, 1/1024: mean = sent·p, p in ppm (sent·ppm·1024 < 2^62).
    let ppm = p_ppb.min(PPB) / 1000;
    let mean = u64::from(sent).saturating_mul(ppm).saturating_mul(1024) / 1_000_000;
    let sd = isqrt(mean.saturating_mul(1024));
    u64::from(lost).saturating_mul(1024)
        > mean
            .saturating_add(sd.saturating_mul(4))
            .saturating_add(1024)
}

/// ⌊√v⌋ (Newton's method on integers).
fn isqrt(v: u64) -> u64 {
    if v < 2 {
        return v;
    }
    let mut x = v;
    let mut y = v.div_ceil(2);
    while y < x {
        x = y;
        y = x.saturating_add(v.checked_div(x).unwrap_or(0)) / 2;
    }
    x
}

/// `num / den` in ppb, 0 when `den` is 0.
fn ratio_ppb(num: u64, den: u64) -> u64 {
    if den == 0 {
        return 0;
    }
    prob::div_u128_by_u64((num as u128).wrapping_mul(PPB as u128), den).min(u64::MAX as u128) as u64
}
