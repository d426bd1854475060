//! LOSS_REPORT bookkeeping: the per-interval counts and the report timer.

use super::super::super::wire::LossReport;
use super::super::{Nanos, Sink, SEC};
use super::TcThresholds;
use super::{inc, Crf, CrfStorage, NEVER};

/// Shortest report period, whatever the SRTT (keeps a zero SRTT from
/// spinning the timer).
pub(super) const MIN_REPORT_PERIOD: Nanos = 100_000;

/// Counts of the current LOSS_REPORT interval (saturating u32, as on the
/// wire).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Interval {
    pub(super) expected: u32,
    pub(super) received: u32,
    pub(super) restored: u32,
    pub(super) incomplete: u32,
    pub(super) ce: u32,
    pub(super) repairs: u32,
    pub(super) repairs_ce: u32,
}

impl Interval {
    fn is_zero(&self) -> bool {
        *self == Interval::default()
    }
}

/// Interval counts and timer.
#[derive(Clone, Copy, Debug)]
pub(super) struct ReportState {
    pub(super) iv: Interval,
    /// Start of the interval (NEVER while idle).
    pub(super) start: Nanos,
    /// When the next report is due (NEVER while idle).
    pub(super) next: Nanos,
    /// Counts of the last report sent (see [`Crf::last_loss_report`]).
    pub(super) last: Interval,
    /// The sender's packet rate as the report intervals measured it,
    /// peak-biased (0 before the first): see [`Crf::rate_pps`].
    pub(super) rate_pps: u64,
}

impl ReportState {
    pub(super) const fn new() -> Self {
        ReportState {
            iv: Interval {
                expected: 0,
                received: 0,
                restored: 0,
                incomplete: 0,
                ce: 0,
                repairs: 0,
                repairs_ce: 0,
            },
            start: NEVER,
            next: NEVER,
            rate_pps: 0,
            last: Interval {
                expected: 0,
                received: 0,
                restored: 0,
                incomplete: 0,
                ce: 0,
                repairs: 0,
                repairs_ce: 0,
            },
        }
    }
}

/// `x += n`, saturating.
pub(super) fn add32(x: &mut u32, n: u32) {
    *x = x.saturating_add(n);
}

impl<St: CrfStorage> Crf<St> {
    /// Expected and received counts of the last LOSS_REPORT sent (zeros
    /// before the first, or after [`Crf::close`]): lets the caller follow
    /// the loss rate without decoding its own messages. A new report was
    /// sent when `counters().loss_reports` moved.
    pub fn last_loss_report(&self) -> (u32, u32) {
        (self.report.last.expected, self.report.last.received)
    }

    fn report_period(&self) -> Nanos {
        self.cfg.srtt.max(MIN_REPORT_PERIOD)
    }

    /// The SRTT changed: a report scheduled further out than one new period
    /// after its interval began is due then ("at least once per smoothed
    /// round-trip time" with the SRTT as measured now).
    pub(super) fn report_rescheduled(&mut self) {
        if self.report.next != NEVER {
            let due = self.report.start.saturating_add(self.report_period());
            self.report.next = self.report.next.min(due);
        }
    }

    /// Something happened on the flow: make sure a report is scheduled.
    pub(super) fn report_activity(&mut self, now: Nanos) {
        if self.report.next == NEVER {
            self.report.start = now;
            self.report.next = now.saturating_add(self.report_period());
        }
    }

    /// Sends the LOSS_REPORT if due. An interval in which nothing at all
    /// was counted sends nothing and lets the flow go idle (no timer).
    pub(super) fn maybe_report<S: Sink + ?Sized>(&mut self, now: Nanos, sink: &mut S) {
        if self.report.next == NEVER || now < self.report.next {
            return;
        }
        if self.report.iv.is_zero() {
            self.report.start = NEVER;
            self.report.next = NEVER;
            return;
        }
        let iv = self.report.iv;
        let us = now.saturating_sub(self.report.start) / 1000;
        let msg = LossReport {
            flow_id: self.cfg.flow_id,
            interval_us: us.min(u32::MAX as u64) as u32,
            expected: iv.expected,
            received: iv.received,
            restored: iv.restored,
            incomplete_blocks: iv.incomplete,
            ce_marked: iv.ce,
            repairs_received: iv.repairs,
            repairs_ce_marked: iv.repairs_ce,
        };
        let mut buf = [0u8; LossReport::LEN];
        if let Ok(n) = msg.encode(&mut buf) {
            sink.send(buf.get(..n).unwrap_or(&[]));
            inc(&mut self.counters.loss_reports);
        }
        self.measure_rate(iv.expected, now.saturating_sub(self.report.start));
        self.report.last = iv;
        self.report.iv = Interval::default();
        self.report.start = now;
        self.report.next = now.saturating_add(self.report_period());
        self.follow_tc();
    }

    /// The sender's packet rate (PSNs expected per second) from the report
    /// intervals: a faster interval is taken at once, a slower one pulls
    /// the estimate down by an eighth of the difference, so that a burst's
    /// rate (what the T/C count threshold must bound) outlives the idle
    /// time between bursts. 0 before the first interval.
    pub fn rate_pps(&self) -> u64 {
        self.report.rate_pps
    }

    fn measure_rate(&mut self, expected: u32, ns: Nanos) {
        let Some(sample) = u64::from(expected).saturating_mul(SEC).checked_div(ns) else {
            return;
        };
        let r = &mut self.report.rate_pps;
        *r = if sample >= *r {
            sample
        } else {
            r.saturating_sub(r.saturating_sub(sample) / 8)
        };
    }

    /// With `tc_follows`, the T/C AETH thresholds follow the SRTT and the
    /// measured rate ([`TcThresholds::from_rate`]; the configured
    /// thresholds' rate until one is measured).
    pub(super) fn follow_tc(&mut self) {
        let Some(cur) = self.cfg.tc.filter(|_| self.cfg.tc_follows) else {
            return;
        };
        let rate = match self.report.rate_pps {
            0 => cur.rate_pps(),
            r => r,
        };
        self.set_tc(Some(TcThresholds::from_rate(rate, self.cfg.srtt)));
    }
}
