//! The circuit breaker (draft, "Congestion Control Considerations"): a path
//! loss rate before restoration above 10 % or a CE fraction above 50 % over one
//! second sets m to zero and stops coded retransmission; redundancy resumes
//! only after the condition has been absent for at least 10 s; if it persists
//! for more than a minute the CSF sends CLOSE with reason 4.
//!
//! **Windows.** LOSS_REPORT counts are summed into consecutive windows of at
//! least [`BreakerConfig::window`] (1 s) of the caller's clock; the first window
//! starts at the first report's arrival minus its Interval (at most one
//! window), later windows start where the previous one ended. A window is
//! *bad* if the loss fraction (expected − received) / expected or the CE
//! fraction CE / received exceeds its threshold, *good* otherwise, and
//! *inconclusive* when it expected fewer than
//! [`BreakerConfig::min_expected`] packets (a handful of packets cannot
//! establish a rate; an idle flow neither trips, clears nor persists).
//!
//! **Timing.** The breaker trips at the end of the first bad window. The
//! condition *persists* from the start of the first of a run of consecutive
//! bad windows; a good or inconclusive window ends the run. CLOSE is requested
//! at the end of a bad window that ends more than [`BreakerConfig::close_after`]
//! after the run started. A tripped breaker clears at the end of a good window
//! ending at least [`BreakerConfig::resume_after`] after the end of the last
//! bad window.

use super::super::super::wire::LossReport;
use super::super::{Nanos, SEC};
use super::PPB;

/// Tunables of the breaker (draft values in [`BreakerConfig::DEFAULT`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakerConfig {
    /// Loss fraction above which a window is bad, ppb (10 %).
    pub loss_ppb: u32,
    /// CE fraction above which a window is bad, ppb (50 %).
    pub ce_ppb: u32,
    /// Measurement window (1 s).
    pub window: Nanos,
    /// Condition-free time before redundancy resumes (10 s).
    pub resume_after: Nanos,
    /// Persistence that requests CLOSE reason 4 (60 s).
    pub close_after: Nanos,
    /// Fewest expected packets for a conclusive window.
    pub min_expected: u32,
}

impl BreakerConfig {
    /// The draft's values; `min_expected` 32.
    pub const DEFAULT: BreakerConfig = BreakerConfig {
        loss_ppb: 100_000_000,
        ce_ppb: 500_000_000,
        window: SEC,
        resume_after: 10 * SEC,
        close_after: 60 * SEC,
        min_expected: 32,
    };
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Breaker state, for operators and for the decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BreakerState {
    /// Redundancy and coded retransmission allowed.
    Normal,
    /// m = 0 and no coded retransmission since `since`.
    Tripped {
        /// When it tripped.
        since: Nanos,
    },
    /// The condition persisted past the close time; CLOSE reason 4 was
    /// requested at `at`. Terminal until [`Breaker::reset`].
    CloseRequested {
        /// When CLOSE was requested.
        at: Nanos,
    },
}

impl BreakerState {
    /// Whether redundancy and coded retransmission are suspended.
    pub const fn is_open(&self) -> bool {
        !matches!(self, BreakerState::Normal)
    }
}

/// A breaker transition, reported once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BreakerEvent {
    /// Tripped: set m = 0 and stop coded retransmission.
    Tripped,
    /// Cleared: redundancy may resume.
    Cleared,
    /// Persisted: send CLOSE with reason 4 (circuit breaker).
    Close,
}

/// Outcome of one closed window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Window {
    Bad,
    Good,
    Inconclusive,
}

/// The breaker of one flow.
#[derive(Clone, Copy, Debug)]
pub struct Breaker {
    cfg: BreakerConfig,
    state: BreakerState,
    win_start: Option<Nanos>,
    win_expected: u64,
    win_received: u64,
    win_ce: u64,
    run_start: Option<Nanos>,
    last_bad: Nanos,
    windows: u64,
    bad_windows: u64,
}

impl Breaker {
    /// A closed (normal) breaker.
    pub const fn new(cfg: BreakerConfig) -> Breaker {
        Breaker {
            cfg,
            state: BreakerState::Normal,
            win_start: None,
            win_expected: 0,
            win_received: 0,
            win_ce: 0,
            run_start: None,
            last_bad: 0,
            windows: 0,
            bad_windows: 0,
        }
    }

    /// Back to normal with no history (e.g. a new session after CLOSE).
    pub fn reset(&mut self) {
        *self = Breaker::new(self.cfg);
    }

    /// Current state.
    pub const fn state(&self) -> BreakerState {
        self.state
    }

    /// Windows evaluated and bad windows seen.
    pub const fn windows(&self) -> (u64, u64) {
        (self.windows, self.bad_windows)
    }

    /// Adds a LOSS_REPORT and, when a window completes, evaluates it.
    pub fn on_loss_report(&mut self, now: Nanos, r: &LossReport) -> Option<BreakerEvent> {
        if matches!(self.state, BreakerState::CloseRequested { .. }) {
            return None;
        }
        let window = self.cfg.window.max(1);
        let start = match self.win_start {
            Some(s) => s,
            None => {
                let iv = (r.interval_us as u64).saturating_mul(1000).min(window);
                let s = now.saturating_sub(iv);
                self.win_start = Some(s);
                s
            }
        };
        self.win_expected = self.win_expected.saturating_add(r.expected as u64);
        self.win_received = self
            .win_received
            .saturating_add(r.received.min(r.expected) as u64);
        self.win_ce = self
            .win_ce
            .saturating_add(r.ce_marked.min(r.received) as u64);
        if now.saturating_sub(start) < window {
            return None;
        }
        let w = self.close_window();
        self.win_start = Some(now);
        self.windows = self.windows.saturating_add(1);
        match w {
            Window::Bad => {
                self.bad_windows = self.bad_windows.saturating_add(1);
                let run = *self.run_start.get_or_insert(start);
                self.last_bad = now;
                match self.state {
                    BreakerState::Normal => {
                        self.state = BreakerState::Tripped { since: now };
                        Some(BreakerEvent::Tripped)
                    }
                    BreakerState::Tripped { .. }
                        if now.saturating_sub(run) > self.cfg.close_after =>
                    {
                        self.state = BreakerState::CloseRequested { at: now };
                        Some(BreakerEvent::Close)
                    }
                    _ => None,
                }
            }
            Window::Inconclusive => {
                self.run_start = None;
                None
            }
            Window::Good => {
                self.run_start = None;
                match self.state {
                    BreakerState::Tripped { .. }
                        if now.saturating_sub(self.last_bad) >= self.cfg.resume_after =>
                    {
                        self.state = BreakerState::Normal;
                        Some(BreakerEvent::Cleared)
                    }
                    _ => None,
                }
            }
        }
    }

    /// Classifies and empties the current window.
    fn close_window(&mut self) -> Window {
        let (e, rcv, ce) = (self.win_expected, self.win_received, self.win_ce);
        self.win_expected = 0;
        self.win_received = 0;
        self.win_ce = 0;
        if e < self.cfg.min_expected.max(1) as u64 {
            return Window::Inconclusive;
        }
        // Compare lost/e > loss_ppb/1e9 as lost*1e9 > loss_ppb*e (u128: no
        // overflow for any u64 counts).
        let lost = e.saturating_sub(rcv) as u128;
        // Products of a u64 and a value < 2^32: below 2^96, never wrap.
        let loss_bad =
            lost.wrapping_mul(PPB as u128) > (self.cfg.loss_ppb as u128).wrapping_mul(e as u128);
        let ce_bad = rcv > 0
            && (ce as u128).wrapping_mul(PPB as u128)
                > (self.cfg.ce_ppb as u128).wrapping_mul(rcv as u128);
        if loss_bad || ce_bad {
            Window::Bad
        } else {
            Window::Good
        }
    }
}
