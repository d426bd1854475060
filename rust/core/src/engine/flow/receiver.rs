//! The receiver side of one protected flow: [`CrfNegotiation`] and [`Crf`]
//! with one owner of the Config-ID lifecycle (see the module docs of
//! [`super`]).

use super::super::super::gf::MulAcc;
use super::super::super::psn::Psn;
use super::super::super::wire::{CloseReason, Message, ParamStatus, ParamUpdate};
use super::super::crf::{self, Crf, CrfConfig, CrfHost, CrfStorage, SourceVerdict, Workspace};
use super::super::loss_window::LossWindow;
use super::super::negotiation::{
    CrfNegCounters, CrfNegotiation, CrfState, HelloOutcome, ParamOutcome,
};
use super::super::policy::PolicyConfig;
use super::super::rtt::RttEstimator;
use super::super::{FecConfig, Limits, Nanos};
use super::config_book::ConfigBook;
use super::FlowState;

/// The CRF's loss estimate (shown to operators, and one extra symbol per
/// request above 1 %) has the sender policy's default window.
const LOSS_WINDOW_SHIFT: u8 = PolicyConfig::DEFAULT.loss_window_shift;

/// Everything a [`ReceiverFlow`] is set up with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiverParams {
    /// CRF tunables (`flow_id` and `rdma_mtu` come from the HELLO). Its
    /// `srtt` is the hint the RTT estimate starts from (SRTT and minimum
    /// RTT until the first sample); what it derives follows its `rtt_rule`.
    pub crf: CrfConfig,
    /// This side's limits (HELLO_ACK), Max Open Blocks included.
    pub limits: Limits,
    /// Time to receive one block at the flow's rate: a configuration stays
    /// held for 2·SRTT + this after it was last needed (the CSF may still
    /// answer requests for its blocks).
    pub block_time: Nanos,
}

/// What a [`ReceiverFlow`] call changed that the caller may act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverEvent {
    /// HELLO accepted: register `flow_id` and bind the peer to the HELLO's
    /// source.
    Established {
        /// The assigned Flow ID.
        flow_id: u32,
    },
    /// The CSF restarted (new nonce): the old session was dropped;
    /// re-register under `flow_id` and re-bind the peer.
    Restarted {
        /// The previous Flow ID (unregister it).
        old_flow_id: u32,
        /// The new Flow ID.
        flow_id: u32,
    },
    /// A configuration was acknowledged and the engine holds it.
    ConfigAccepted(FecConfig),
    /// A PARAM_UPDATE was refused with status 3: every configuration slot
    /// is still needed.
    ConfigRefused {
        /// Its Config ID.
        config_id: u8,
    },
    /// CLOSE received: held packets were released, the session dropped.
    Closed(CloseReason),
}

/// Counters of the orchestration itself (the engine and the negotiation
/// keep their own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverCounters {
    /// Configurations acknowledged and taken by the engine.
    pub configs_accepted: u64,
    /// Configurations released to make room.
    pub configs_released: u64,
    /// PARAM_UPDATEs refused because no held configuration could go.
    pub configs_refused_room: u64,
    /// Acknowledged configurations the engine refused (should stay 0).
    pub engine_refused: u64,
    /// LOSS_REPORTs followed into the loss estimate.
    pub loss_reports: u64,
    /// Messages a CRF does not take (CSF-bound ones).
    pub unexpected: u64,
}

/// The receiver side of one protected flow, sans-I/O. `St` is the storage
/// of the [`Crf`]'s capacities ([`CrfStorage`]).
pub struct ReceiverFlow<St: CrfStorage> {
    pub(super) params: ReceiverParams,
    pub(super) neg: CrfNegotiation,
    pub(super) crf: Crf<St>,
    pub(super) book: ConfigBook,
    pub(super) loss: LossWindow,
    /// `crf.counters().loss_reports` already followed.
    pub(super) reports_seen: u64,
    pub(super) rtt: RttEstimator,
    pub(super) counters: ReceiverCounters,
}

impl<const B: usize, const W: usize, const HQ: usize, const R: usize>
    ReceiverFlow<crf::Inline<B, W, HQ, R>>
{
    /// A flow waiting for its HELLO (builds the CRF by value: hosts with a
    /// large stack; the kernel uses [`ReceiverFlow::init_at`]).
    pub fn new(params: ReceiverParams) -> Self {
        Self::with_crf(params, Crf::new(params.crf))
    }
}

impl<St: CrfStorage> ReceiverFlow<St> {
    /// A flow waiting for its HELLO whose CRF works in the storage given
    /// (refused as [`Crf::with_storage`] refuses it).
    pub fn with_storage(
        params: ReceiverParams,
        storage: crf::Storage<St>,
    ) -> Result<Self, crf::CapsError> {
        Ok(Self::with_crf(
            params,
            Crf::with_storage(params.crf, storage)?,
        ))
    }

    fn with_crf(params: ReceiverParams, crf: Crf<St>) -> Self {
        let mut f = ReceiverFlow {
            params,
            neg: Self::new_negotiation(&params),
            crf,
            book: ConfigBook::new(),
            loss: LossWindow::new(),
            reports_seen: 0,
            rtt: RttEstimator::new(params.crf.srtt),
            counters: ReceiverCounters::default(),
        };
        f.follow_rtt();
        f
    }

    /// The negotiation never holds more configurations than the engine.
    pub(super) fn new_negotiation(params: &ReceiverParams) -> CrfNegotiation {
        let mut n = CrfNegotiation::new(params.limits);
        n.set_config_capacity(crf::MAX_CONFIGS);
        n
    }

    /// A source packet of the flow arrived (`ce`: CE-marked). On
    /// [`SourceVerdict::Deliver`] pass it on, then run
    /// [`ReceiverFlow::on_timer`] if [`ReceiverFlow::next_deadline`] is due:
    /// releases behind it are left for that call (the CRF's ordering
    /// contract).
    pub fn on_source<H: CrfHost + ?Sized>(
        &mut self,
        now: Nanos,
        psn: Psn,
        udp_payload: &[u8],
        ce: bool,
        host: &mut H,
    ) -> SourceVerdict {
        self.crf.on_source(now, psn, udp_payload, ce, host)
    }

    /// A CREM message from the peer CSF (`ce`: CE-marked). `new_flow_id` is
    /// called only when a HELLO needs a Flow ID (see
    /// [`super::super::negotiation::choose_flow_id`]). Messages a CRF does
    /// not take are counted in [`ReceiverCounters::unexpected`].
    pub fn on_message<H, G>(
        &mut self,
        now: Nanos,
        msg: &Message<'_>,
        ce: bool,
        new_flow_id: impl FnOnce() -> Option<u32>,
        host: &mut H,
        ws: &mut Workspace<'_, G>,
    ) -> Option<ReceiverEvent>
    where
        H: CrfHost + ?Sized,
        G: MulAcc + ?Sized,
    {
        let ev = match msg {
            Message::Hello(h) => match self.neg.on_hello(h, new_flow_id, host) {
                HelloOutcome::Accepted { flow_id } => {
                    self.crf.set_flow_id(flow_id);
                    self.crf.set_rdma_mtu(u32::from(h.rdma_mtu));
                    Some(ReceiverEvent::Established { flow_id })
                }
                HelloOutcome::Restarted {
                    old_flow_id,
                    flow_id,
                } => {
                    self.new_session(flow_id, u32::from(h.rdma_mtu), host);
                    Some(ReceiverEvent::Restarted {
                        old_flow_id,
                        flow_id,
                    })
                }
                _ => None,
            },
            Message::ParamUpdate(p) => self.on_param_update(now, p, host),
            Message::Repair(r) => {
                self.book.seen(r.config_id, now);
                self.crf.on_repair(now, r, ce, host, ws);
                if let Some(rtt) = self.crf.take_rtt_sample() {
                    self.rtt.sample(rtt);
                    self.follow_rtt();
                }
                None
            }
            Message::Close(c) => self.neg.on_close(c).map(|reason| {
                let (id, mtu) = (self.crf.config().flow_id, self.crf.config().rdma_mtu);
                self.new_session(id, mtu, host);
                ReceiverEvent::Closed(reason)
            }),
            _ => {
                self.counters.unexpected = self.counters.unexpected.saturating_add(1);
                None
            }
        };
        self.follow_reports();
        ev
    }

    /// Drops the session's blocks, held packets and configurations.
    fn new_session<H: CrfHost + ?Sized>(&mut self, flow_id: u32, rdma_mtu: u32, host: &mut H) {
        self.crf.close(host);
        self.crf.restart(CrfConfig {
            flow_id,
            rdma_mtu,
            ..self.params.crf
        });
        self.book.clear();
        self.loss = LossWindow::new();
        self.reports_seen = 0;
        // The path stays: a new session starts from what was measured.
        self.follow_rtt();
    }

    /// Hands the RTT estimate (from the start: the hint, clamped) to the
    /// CRF, whose per-SRTT rules (LOSS_REPORT
    /// period, request rounds, reordering allowance, and H unless the
    /// operator set it: see [`crf::RttRule`]) follow it; the configuration
    /// grace of [`ReceiverFlow::on_message`]'s PARAM_UPDATE handling reads
    /// it there. Samples: the CSF's answers to this side's REPAIR_REQUESTs
    /// and T/C AETH reports (`crf/probe.rs`).
    pub(super) fn follow_rtt(&mut self) {
        self.crf.set_rtt(self.rtt.srtt(), self.rtt.min_rtt());
    }

    /// PARAM_UPDATE: the one place where configurations enter and leave.
    /// Room is made first (the oldest configuration no live block uses and
    /// no REPAIR or PARAM_UPDATE needed within 2·SRTT + one block time),
    /// so that the negotiation, held to the engine's capacity, refuses with
    /// status 3 rather than acknowledge what the engine cannot take.
    fn on_param_update<H: CrfHost + ?Sized>(
        &mut self,
        now: Nanos,
        p: &ParamUpdate,
        host: &mut H,
    ) -> Option<ReceiverEvent> {
        let id = p.config_id;
        if self.crf.accepted_config(id).is_none() {
            self.make_room(now);
        } else {
            self.book.seen(id, now);
        }
        match self.neg.on_param_update(p, host) {
            ParamOutcome::Accepted { config } => {
                if self.crf.accepted_config(id).is_some_and(|c| c != config) {
                    // The CSF reuses an ID only after releasing it.
                    self.crf.release_config(id);
                    self.book.remove(id);
                }
                if self.crf.accept_config_at(now, config) {
                    self.book.accepted(id, now);
                    self.counters.configs_accepted =
                        self.counters.configs_accepted.saturating_add(1);
                    Some(ReceiverEvent::ConfigAccepted(config))
                } else {
                    // Not reachable with the checks above; stay consistent.
                    self.neg.release_config(id);
                    self.counters.engine_refused = self.counters.engine_refused.saturating_add(1);
                    None
                }
            }
            ParamOutcome::Rejected(ParamStatus::ResourcesExhausted) => {
                self.counters.configs_refused_room =
                    self.counters.configs_refused_room.saturating_add(1);
                Some(ReceiverEvent::ConfigRefused { config_id: id })
            }
            _ => None,
        }
    }

    fn make_room(&mut self, now: Nanos) {
        let grace = self
            .crf
            .config()
            .srtt
            .saturating_mul(2)
            .saturating_add(self.params.block_time);
        while self.book.held() >= crf::MAX_CONFIGS {
            let Some(old) = self.book.releasable(now, grace, |id| self.may_need(id)) else {
                return;
            };
            self.crf.release_config(old);
            self.neg.release_config(old);
            self.book.remove(old);
            self.counters.configs_released = self.counters.configs_released.saturating_add(1);
        }
    }

    /// Whether configuration `id` may still be needed: a live block uses
    /// it, or the CRF has not yet delivered (or given up) every PSN it may
    /// cover. The CSF uses each acknowledged configuration from its
    /// Effective PSN until the next one's (the sender flow never supersedes
    /// one that is acknowledged), so `id` may cover PSNs up to a newer
    /// configuration's Effective PSN plus k − 1; a block of it may have
    /// left no trace here (m = 0: no REPAIR until an answer).
    fn may_need(&self, id: u8) -> bool {
        if self.crf.config_in_use(id) {
            return true;
        }
        // Not held, or nothing received yet: nothing to recover with it.
        let (Some((c, _)), Some(done)) = (self.neg.config(id), self.crf.deliver_next()) else {
            return false;
        };
        !self.book.newer_than(id).any(|n| {
            self.neg
                .config(n)
                .is_some_and(|(_, eff)| eff.wrapping_add(u32::from(c.k)).is_before_or_eq(done))
        })
    }

    /// Feeds a LOSS_REPORT the engine just sent into the loss estimate.
    fn follow_reports(&mut self) {
        let n = self.crf.counters().loss_reports;
        if n != self.reports_seen {
            self.reports_seen = n;
            let (expected, received) = self.crf.last_loss_report();
            if expected > 0 {
                self.loss.update(expected, received, LOSS_WINDOW_SHIFT);
                self.crf.set_loss_ppm(self.loss.ppm());
            }
            self.counters.loss_reports = self.counters.loss_reports.saturating_add(1);
        }
    }

    /// Runs what is due at `now` (releases, decoding, requests, reports).
    pub fn on_timer<H, G>(&mut self, now: Nanos, host: &mut H, ws: &mut Workspace<'_, G>)
    where
        H: CrfHost + ?Sized,
        G: MulAcc + ?Sized,
    {
        self.crf.on_timer(now, host, ws);
        self.follow_reports();
    }

    /// When [`ReceiverFlow::on_timer`] should run next.
    pub fn next_deadline(&self) -> Option<Nanos> {
        self.crf.next_deadline()
    }

    /// Ends the flow: sends CLOSE with `reason` (if established), releases
    /// every held packet in PSN order and drops all kept symbols.
    pub fn close<H: CrfHost + ?Sized>(&mut self, reason: CloseReason, host: &mut H) {
        self.neg.close(reason, host);
        self.crf.close(host);
        self.book.clear();
    }

    // -----------------------------------------------------------------
    // Accessors (stats).

    /// Negotiating (no HELLO yet), established or closed.
    pub fn state(&self) -> FlowState {
        match self.neg.state() {
            CrfState::Idle => FlowState::Negotiating,
            CrfState::Established { .. } => FlowState::Established,
            CrfState::Closed(r) => FlowState::Closed(r),
        }
    }

    /// Flow ID once established.
    pub fn flow_id(&self) -> Option<u32> {
        self.neg.flow_id()
    }

    /// The newest configuration the engine holds.
    pub fn current_config(&self) -> Option<FecConfig> {
        self.crf.current_config()
    }

    /// Configurations held.
    pub fn configs_held(&self) -> usize {
        self.book.held()
    }

    /// Path loss estimate (pre-restoration), ppm.
    pub fn loss_ppm(&self) -> u32 {
        self.loss.ppm()
    }

    /// Smoothed RTT in use: measured from the CSF's answers to this side's
    /// REPAIR_REQUESTs and T/C AETH reports, the hint until the first.
    pub fn srtt(&self) -> Nanos {
        self.rtt.srtt()
    }

    /// Smallest RTT measured (the hint until the first sample).
    pub fn min_rtt(&self) -> Nanos {
        self.rtt.min_rtt()
    }

    /// The RTT estimator (samples, RTTVAR).
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// CRF counters.
    pub fn crf_counters(&self) -> &crf::Counters {
        self.crf.counters()
    }

    /// Negotiation counters.
    pub fn negotiation_counters(&self) -> &CrfNegCounters {
        self.neg.counters()
    }

    /// Orchestration counters.
    pub fn counters(&self) -> &ReceiverCounters {
        &self.counters
    }

    /// The CRF engine (read-only).
    pub fn crf(&self) -> &Crf<St> {
        &self.crf
    }

    /// The negotiation (read-only).
    pub fn negotiation(&self) -> &CrfNegotiation {
        &self.neg
    }
}
