//! Loss classification: congestion-related or transmission loss (draft,
//! "Redundancy Policy": rising ECN CE marks, growth of queueing delay reported
//! for a hop, and drops reported as queue overflow indicate congestion; losses
//! without these signals are transmission losses).
//!
//! Each kind of evidence is remembered with the time it was last seen and
//! counts for [`ClassifierConfig::evidence_hold`] afterwards, so a signal in
//! one report keeps m capped for a while instead of flapping with every report.

use super::super::super::wire::{LossCause, LossReport, PathReport};
use super::super::Nanos;
use super::PPB;

/// Tunables of the classifier (defaults in [`ClassifierConfig::DEFAULT`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassifierConfig {
    /// CE fraction of a report counts as *rising* when it exceeds the slow
    /// baseline by this much (ppb of received source packets).
    pub ce_rise_margin_ppb: u32,
    /// CE fraction at or above this level counts as congestion even when it is
    /// steady: a queue that marks persistently is a standing congestion, and
    /// "rising" alone would stop seeing it once the baseline caught up.
    pub ce_level_ppb: u32,
    /// Slow CE baseline EWMA gain, 1 / 2^shift per report.
    pub ce_baseline_shift: u8,
    /// A hop's Queue Delay Change at or above this (µs) is queue growth.
    pub queue_growth_us: i32,
    /// How long a piece of evidence keeps classifying losses as congestion.
    pub evidence_hold: Nanos,
}

impl ClassifierConfig {
    /// Defaults: margin 0.1 %, level 1 %, baseline gain 1/16, queue growth
    /// 100 µs, hold 1 s.
    pub const DEFAULT: ClassifierConfig = ClassifierConfig {
        ce_rise_margin_ppb: 1_000_000,
        ce_level_ppb: 10_000_000,
        ce_baseline_shift: 4,
        queue_growth_us: 100,
        evidence_hold: super::super::SEC,
    };
}

impl Default for ClassifierConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The classification of recent losses, with its reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Classification {
    /// Whether any loss has been measured (p > 0).
    pub loss: bool,
    /// Rising (or persistently high) ECN CE fraction on source packets.
    pub ce_rising: bool,
    /// A Path Reporter saw queueing delay grow at a hop.
    pub queue_growth: bool,
    /// A Path Reporter dropped packets with cause queue overflow.
    pub queue_overflow: bool,
}

/// The class alone, for counters and displays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LossClass {
    /// No loss measured.
    None,
    /// Losses without congestion signals.
    Transmission,
    /// Losses with at least one congestion signal.
    Congestion,
}

impl Classification {
    /// Any congestion signal present.
    pub const fn congestion(&self) -> bool {
        self.ce_rising || self.queue_growth || self.queue_overflow
    }

    /// The class: congestion signals win even before loss is measured (they
    /// predict it); otherwise transmission if there is loss.
    pub const fn class(&self) -> LossClass {
        if self.congestion() {
            LossClass::Congestion
        } else if self.loss {
            LossClass::Transmission
        } else {
            LossClass::None
        }
    }
}

/// Evidence store of the classifier.
#[derive(Clone, Copy, Debug)]
pub struct Classifier {
    cfg: ClassifierConfig,
    /// Slow EWMA of the CE fraction, ppb.
    ce_base_ppb: u64,
    /// Whether the baseline has a first sample.
    ce_base_init: bool,
    /// Last CE fraction seen, ppb.
    ce_last_ppb: u64,
    ce_seen: Option<Nanos>,
    growth_seen: Option<Nanos>,
    overflow_seen: Option<Nanos>,
}

fn fresh(seen: Option<Nanos>, now: Nanos, hold: Nanos) -> bool {
    match seen {
        Some(t) => now.saturating_sub(t) <= hold,
        None => false,
    }
}

impl Classifier {
    /// A classifier with no evidence.
    pub const fn new(cfg: ClassifierConfig) -> Classifier {
        Classifier {
            cfg,
            ce_base_ppb: 0,
            ce_base_init: false,
            ce_last_ppb: 0,
            ce_seen: None,
            growth_seen: None,
            overflow_seen: None,
        }
    }

    /// Takes the CE counts of a LOSS_REPORT into account.
    pub fn on_loss_report(&mut self, now: Nanos, r: &LossReport) {
        if r.received == 0 {
            return;
        }
        let ce = (r.ce_marked.min(r.received) as u64)
            .saturating_mul(PPB)
            .checked_div(r.received as u64)
            .unwrap_or(0);
        self.ce_last_ppb = ce;
        let rising = self.ce_base_init
            && ce
                > self
                    .ce_base_ppb
                    .saturating_add(self.cfg.ce_rise_margin_ppb as u64);
        if rising || (ce > 0 && ce >= self.cfg.ce_level_ppb as u64) {
            self.ce_seen = Some(now);
        }
        if self.ce_base_init {
            let shift = u32::from(self.cfg.ce_baseline_shift.min(32));
            let dec = self.ce_base_ppb.checked_shr(shift).unwrap_or(0);
            let inc = ce.checked_shr(shift).unwrap_or(0);
            self.ce_base_ppb = self.ce_base_ppb.saturating_sub(dec).saturating_add(inc);
        } else {
            self.ce_base_ppb = ce;
            self.ce_base_init = true;
        }
    }

    /// Takes the hop entries of a PATH_REPORT (from an allow-listed reporter)
    /// into account.
    pub fn on_path_report(&mut self, now: Nanos, r: &PathReport<'_>) {
        for hop in r.hops.iter() {
            if hop.queue_delay_change_us >= self.cfg.queue_growth_us
                && hop.queue_delay_change_us > 0
            {
                self.growth_seen = Some(now);
            }
            if hop.cause == LossCause::QueueOverflow
                && (hop.lost_count > 0 || !hop.dropped.is_empty())
            {
                self.overflow_seen = Some(now);
            }
        }
    }

    /// The classification at `now` (`loss`: whether the estimator has seen
    /// loss).
    pub fn classify(&self, now: Nanos, loss: bool) -> Classification {
        let hold = self.cfg.evidence_hold;
        Classification {
            loss,
            ce_rising: fresh(self.ce_seen, now, hold),
            queue_growth: fresh(self.growth_seen, now, hold),
            queue_overflow: fresh(self.overflow_seen, now, hold),
        }
    }

    /// Slow CE baseline, ppb of received source packets.
    pub const fn ce_baseline_ppb(&self) -> u64 {
        self.ce_base_ppb
    }

    /// CE fraction of the last report with received packets, ppb.
    pub const fn ce_last_ppb(&self) -> u64 {
        self.ce_last_ppb
    }
}
