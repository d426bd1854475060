//! The sender side of one protected flow: [`CsfNegotiation`], [`Csf`] and
//! [`Policy`] glued together (see the module docs of [`super`]).

use super::super::super::fec::Scheme;
use super::super::super::gf::MulAcc;
use super::super::super::psn::Psn;
use super::super::super::roce::{PsnRole, RocePacket};
use super::super::super::wire::{CloseReason, FlowKind, LossReport, Message, PathReport};
use super::super::crf;
use super::super::csf::{
    Csf, CsfCounters, CsfIo, CsfParams, CsfStorage, Inline, SourceStore, SourceVerdict,
};
use super::super::negotiation::{
    ConfigParams, CsfNegCounters, CsfNegotiation, CsfState, FlowDescriptor, HelloAckOutcome,
    NegEvent, ParamAckOutcome, ProposeError,
};
use super::super::policy::{BreakerEvent, BreakerState, Change, LossClass, Policy, PolicyConfig};
use super::super::rtt::RttEstimator;
use super::super::{FecConfig, Limits, Nanos, Sink, MS};
use super::ack_probe::AckProbe;
use super::mtu::FlowMtu;
use super::repair_log::RepairLog;
use super::FlowState;

/// Config IDs (the per-ID block counts are indexed by them).
pub(super) const CONFIG_IDS: usize = 256;

/// Everything a [`SenderFlow`] is set up with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderParams {
    /// CSF tunables (its `flow_id` is replaced by the one HELLO_ACK assigns).
    pub csf: CsfParams,
    /// Adaptive redundancy; `None` = the fixed configuration below.
    pub policy: Option<PolicyConfig>,
    /// Block size with the policy off.
    pub fixed_k: u8,
    /// Ordinary repairs per block with the policy off.
    pub fixed_m: u8,
    /// FEC scheme with the policy off.
    pub scheme: Scheme,
    /// Symbol length T (the first configuration's; see `t_follows_mtu`).
    pub t: u16,
    /// T follows the RDMA MTU the flow's packets show, which starts as
    /// `flow.rdma_mtu` (see [`FlowMtu`]); false: T stays (the operator's).
    pub t_follows_mtu: bool,
    /// Code from the flow's first packet with the configuration it will
    /// propose (see [`Csf::set_provisional`]); off = sources pass
    /// unprotected until the first configuration is acknowledged.
    pub early: bool,
    /// SRTT and minimum RTT until the first RTT sample (see
    /// [`SenderFlow::srtt`]); 0 = [`DEFAULT_RTT`](super::super::rtt::DEFAULT_RTT).
    pub rtt_hint: Nanos,
    /// Time to send one block, until measured (0 = unknown): the policy
    /// changes the configuration at most once per 2·max(SRTT, block time).
    pub block_time_hint: Nanos,
    /// Effective PSN lead of a PARAM_UPDATE (about one RTT of packets).
    pub psn_lead: u32,
    /// The peer CRF's hold time H, when this side knows it; 0: unknown, or
    /// the RECOMMENDED one (at most a quarter RTT). When it covers a coded
    /// round ([`crf::round_within_hold`]) the policy counts on that round
    /// ([`Policy::set_round_in_hold`]). The wire does not carry H; 0 too
    /// for flows whose CRF sends no requests (selective repeat alone).
    /// crem.ko passes 0 for now: the VMs showed no gain (README, "A coded
    /// round within the hold").
    pub peer_hold: Nanos,
    /// This side's limits (HELLO).
    pub limits: Limits,
    /// The flow (HELLO).
    pub flow: FlowDescriptor,
    /// PSN the flow is expected to start at (the first packet seen, when
    /// the flow is created at it): Effective PSNs count from here until a
    /// source has been seen.
    pub initial_psn: Psn,
}

/// What a [`SenderFlow`] call changed that the caller may act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderEvent {
    /// HELLO_ACK accepted: bind the peer to its source; the initial
    /// configuration is proposed.
    Established {
        /// Flow ID assigned by the CRF.
        flow_id: u32,
    },
    /// A configuration was acknowledged; blocks use it from its Effective
    /// PSN on.
    ConfigChanged(FecConfig),
    /// Circuit breaker tripped: ordinary repairs and CREM retransmissions
    /// stopped.
    BreakerTripped,
    /// Circuit breaker cleared: they resume.
    BreakerCleared,
    /// The flow is closed and unprotected (retention released).
    Closed {
        /// Why.
        reason: CloseReason,
        /// The peer sent CLOSE (else this side did).
        by_peer: bool,
    },
    /// HELLO went unanswered or the peer's limits are incompatible: the
    /// flow stays unprotected.
    GaveUp,
}

/// Counters of the orchestration itself (the engines keep their own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderCounters {
    /// PARAM_UPDATEs proposed.
    pub proposals: u64,
    /// Proposals refused: one still unacknowledged.
    pub propose_busy: u64,
    /// … the configuration asked for is the current one.
    pub propose_unchanged: u64,
    /// … outside the effective limits.
    pub propose_outside_limits: u64,
    /// … no configuration slot free.
    pub propose_no_slot: u64,
    /// … not established.
    pub propose_not_established: u64,
    /// Acknowledged configurations the CSF refused (should stay 0).
    pub csf_refused_config: u64,
    /// Blocks opened with another configuration than the negotiation's
    /// active one (should stay 0).
    pub config_mismatch: u64,
    /// LOSS_REPORTs received.
    pub loss_reports: u64,
    /// PATH_REPORTs taken (proactive repairs, loss classification).
    pub path_reports: u64,
    /// Messages a CSF does not take (CRF-bound, …).
    pub unexpected: u64,
    /// Provisional configurations given up (the CRF's limits or the policy
    /// wanted another one, the CRF refused it, or HELLO went unanswered or
    /// was incompatible): the blocks coded with it are released unsent.
    pub early_dropped: u64,
    /// Configurations proposed again for a new T (the flow's RDMA MTU
    /// changed, see [`FlowMtu`]).
    pub t_changes: u64,
    /// RTT samples taken from RDMA acknowledgments ([`AckProbe`]).
    pub ack_rtt_samples: u64,
}

/// The sender side of one protected flow, sans-I/O. `St` is the storage
/// of the [`Csf`]'s retention ring and accumulators ([`CsfStorage`]).
pub struct SenderFlow<St: CsfStorage> {
    pub(super) params: SenderParams,
    pub(super) neg: CsfNegotiation,
    pub(super) csf: Csf<St>,
    pub(super) policy: Policy,
    pub(super) limits: Option<Limits>,
    pub(super) protected: bool,
    pub(super) rtt: RttEstimator,
    /// Blocks opened per Config ID and not yet reported closed to the
    /// negotiation.
    pub(super) blocks: [u32; CONFIG_IDS],
    pub(super) repair_log: RepairLog,
    /// REPAIR messages counted into the log so far.
    pub(super) repairs_logged: u64,
    /// Measured time of one full block (0 = none yet).
    pub(super) block_time: Nanos,
    /// Open time of the newest block and `blocks_closed_k` then.
    pub(super) last_open: Option<(Nanos, u64)>,
    /// An operator pinned (k, m): the policy stops choosing (see
    /// [`SenderFlow::pin`]).
    pub(super) pinned: bool,
    /// The RDMA MTU (READ spans) and the T configurations use.
    pub(super) mtu: FlowMtu,
    /// A request PSN timed until the RDMA ACK that names it (RTT samples).
    pub(super) ack_probe: AckProbe,
    pub(super) counters: SenderCounters,
}

/// Why [`SenderFlow::pin`] could not do what was asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinError {
    /// The proposal was refused (see [`ProposeError`]).
    Propose(ProposeError),
    /// Back to adaptive, but the flow has no policy (fixed mode).
    NoPolicy,
}

impl<const BLOCKS: usize, const ACC: usize> SenderFlow<Inline<BLOCKS, ACC>> {
    /// A flow not yet started (builds the CSF by value: hosts with a large
    /// stack; the kernel uses [`SenderFlow::init_at`]).
    pub fn new(params: SenderParams) -> Self {
        Self::with_csf(params, Csf::new(params.csf))
    }
}

impl<St: CsfStorage> SenderFlow<St> {
    /// A flow not yet started whose CSF works in the storage given.
    pub fn with_storage(params: SenderParams, ring: St::Ring, acc: [St::Acc; 2]) -> Self {
        Self::with_csf(params, Csf::with_storage(params.csf, ring, acc))
    }

    fn with_csf(params: SenderParams, csf: Csf<St>) -> Self {
        SenderFlow {
            params,
            neg: Self::new_negotiation(&params),
            csf,
            policy: Policy::new(Self::policy_config(&params)),
            limits: None,
            protected: false,
            rtt: RttEstimator::new(params.rtt_hint),
            blocks: [0; CONFIG_IDS],
            repair_log: RepairLog::new(),
            repairs_logged: 0,
            block_time: 0,
            last_open: None,
            pinned: false,
            mtu: Self::flow_mtu(&params),
            ack_probe: AckProbe::new(),
            counters: SenderCounters::default(),
        }
    }

    pub(super) fn flow_mtu(params: &SenderParams) -> FlowMtu {
        FlowMtu::new(
            u32::from(params.flow.rdma_mtu),
            params.t,
            params.t_follows_mtu,
        )
    }

    pub(super) fn new_negotiation(params: &SenderParams) -> CsfNegotiation {
        let mut n = CsfNegotiation::new(params.limits, params.flow);
        n.set_psn_lead(params.psn_lead);
        n
    }

    pub(super) fn policy_config(params: &SenderParams) -> PolicyConfig {
        params.policy.unwrap_or(PolicyConfig::DEFAULT)
    }

    /// Sends HELLO (again, as a new session, if called later).
    pub fn start<K: Sink + ?Sized>(&mut self, now: Nanos, nonce: u64, sink: &mut K) {
        self.neg.start(now, nonce, sink);
        if self.params.early {
            // Code from the first packet with what `established` will most
            // likely propose; sent only once the CRF acknowledges it.
            let limits = self.params.limits;
            let (k, m, scheme) = self.initial_choice(now, &limits);
            let cfg = FecConfig {
                id: self.neg.next_config_id(),
                scheme,
                k,
                m,
                t: self.mtu.t(),
            };
            if limits.allows(&cfg) {
                let _ = self.csf.set_provisional(cfg);
            }
        }
    }

    /// The provisional configuration will not be acknowledged (refused, HELLO
    /// unanswered or incompatible, or another one wanted): its blocks go
    /// unsent, counted in [`SenderCounters::early_dropped`].
    fn drop_early<S: SourceStore + ?Sized>(&mut self, store: &mut S) {
        if self.csf.is_provisional() {
            self.counters.early_dropped = self.counters.early_dropped.saturating_add(1);
            self.csf.drop_provisional(store);
        }
    }

    /// The first configuration: the policy's choice within `limits`, or the
    /// fixed one.
    fn initial_choice(&mut self, now: Nanos, limits: &Limits) -> (u8, u8, Scheme) {
        match self.params.policy {
            Some(_) => {
                let d = self.policy.decide(now, self.srtt(), None, limits);
                (d.k, d.m, d.scheme)
            }
            None => (self.params.fixed_k, self.params.fixed_m, self.params.scheme),
        }
    }

    // -----------------------------------------------------------------
    // Packets.

    /// A RoCEv2 packet of the protected direction (UDP payload, BTH through
    /// ICRC). Keep it while the verdict says [`SourceVerdict::Retain`];
    /// sources pass [`SourceVerdict::Unprotected`] until a configuration is
    /// acknowledged. Which packets are sources follows the flow's kind:
    /// requests, or READ responses and ATOMIC ACKNOWLEDGE (one PSN each).
    /// The packets also teach the flow its RDMA MTU ([`FlowMtu`]): a new T
    /// is proposed as soon as the negotiation allows.
    pub fn on_source<G, K, S>(
        &mut self,
        now: Nanos,
        udp_payload: &[u8],
        io: &mut CsfIo<'_, G, K, S>,
    ) -> SourceVerdict
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        match RocePacket::parse(udp_payload) {
            Ok(pkt) => self.on_parsed_source(now, &pkt, udp_payload, io),
            Err(_) => {
                let verdict = self.csf.on_roce(now, udp_payload, self.mtu.mtu(), io);
                self.after_packet(now, io.sink);
                verdict
            }
        }
    }

    /// [`SenderFlow::on_source`] for a packet its caller parsed already:
    /// `pkt` is `RocePacket::parse(udp_payload)` (a datapath that reads the
    /// BTH for its own routing parses each packet once).
    pub fn on_parsed_source<G, K, S>(
        &mut self,
        now: Nanos,
        pkt: &RocePacket<'_>,
        udp_payload: &[u8],
        io: &mut CsfIo<'_, G, K, S>,
    ) -> SourceVerdict
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let opened = self.csf.counters().blocks_opened;
        let mtu = self.mtu.mtu();
        let v = match self.params.flow.kind {
            FlowKind::Requests => {
                let fresh = self
                    .csf
                    .next_psn()
                    .is_none_or(|np| !pkt.bth.psn.is_before(np));
                if pkt.is_source() {
                    // Unanswered for 4 SRTTs (at least 10 ms): lost.
                    let expiry = self.srtt().saturating_mul(4).max(10 * MS);
                    let (psn, ask) = (pkt.bth.psn, pkt.bth.ack_req);
                    self.ack_probe.on_source(now, psn, fresh, ask, expiry);
                }
                self.csf.on_roce_packet(now, pkt, udp_payload, mtu, io)
            }
            FlowKind::Responses if pkt.info.role == PsnRole::Response => {
                self.csf.on_source(now, pkt.bth.psn, 1, udp_payload, io)
            }
            FlowKind::Responses => SourceVerdict::NotSource,
        };
        if v != SourceVerdict::NotSource {
            self.mtu.observe(pkt);
        }
        if self.csf.counters().blocks_opened != opened {
            // The source opened a block (at its PSN or before it).
            let start = self.csf.open_block().map_or(pkt.bth.psn, |b| b.0);
            self.block_opened(now, start, io.sink);
        }
        self.after_packet(now, io.sink);
        v
    }

    /// What follows every packet: a new T proposed if the MTU calls for
    /// one, the repair log kept.
    fn after_packet<K: Sink + ?Sized>(&mut self, now: Nanos, sink: &mut K) {
        self.follow_t(now, sink);
        self.log_repairs(now);
    }

    /// Proposes the configuration in use again with the T the flow's MTU
    /// calls for, once it differs, the flow is established, the limits
    /// allow it and no other proposal is on its way (else at a later
    /// packet).
    fn follow_t<K: Sink + ?Sized>(&mut self, now: Nanos, sink: &mut K) {
        let t = self.mtu.t();
        let Some(c) = self.csf.config() else {
            return;
        };
        if c.t == t || !self.protected || self.neg.pending_config().is_some() {
            return;
        }
        let allowed = self.limits.is_some_and(|l| l.allows(&FecConfig { t, ..c }));
        if allowed && self.propose(now, c.k, c.m, c.scheme, sink).is_ok() {
            self.counters.t_changes = self.counters.t_changes.saturating_add(1);
        }
    }

    /// A RoCEv2 packet of the reverse direction: RDMA acknowledgments
    /// release retained blocks, and configurations no block uses any more;
    /// READ responses show the connection's RDMA MTU too.
    /// Nothing acknowledges responses: a response flow's blocks are given up
    /// by age ([`CsfParams::give_up_after`]).
    pub fn on_reverse<S: SourceStore + ?Sized>(
        &mut self,
        now: Nanos,
        udp_payload: &[u8],
        store: &mut S,
    ) {
        match RocePacket::parse(udp_payload) {
            Ok(pkt) => self.on_parsed_reverse(now, &pkt, store),
            Err(_) => self.release_configs(),
        }
    }

    /// [`SenderFlow::on_reverse`] for a packet its caller parsed already.
    pub fn on_parsed_reverse<S: SourceStore + ?Sized>(
        &mut self,
        now: Nanos,
        pkt: &RocePacket<'_>,
        store: &mut S,
    ) {
        if self.params.flow.kind == FlowKind::Requests {
            // READ responses are of the same connection: a FIRST or
            // MIDDLE one shows its MTU (a READ-only flow has no other).
            if pkt.info.role == PsnRole::Response {
                self.mtu.observe(pkt);
            }
            if let Some(p) = pkt.acked_through() {
                self.csf.on_rdma_ack(now, p, store);
                if let Some(rtt) = self.ack_probe.on_ack(now, p) {
                    self.rtt.sample(rtt);
                    let n = &mut self.counters.ack_rtt_samples;
                    *n = n.saturating_add(1);
                    self.follow_rtt();
                }
            }
        }
        self.release_configs();
    }

    /// The negotiation learns each block start (it switches to an
    /// acknowledged configuration there, or re-sends one whose Effective
    /// PSN passed); blocks are counted per configuration until released.
    fn block_opened<K: Sink + ?Sized>(&mut self, now: Nanos, start: Psn, sink: &mut K) {
        let closed_k = self.csf.counters().blocks_closed_k;
        if let Some((at, k_then)) = self.last_open {
            // The previous block filled all k positions: one block's time.
            if closed_k == k_then.wrapping_add(1) {
                let sample = now.saturating_sub(at);
                self.block_time = if self.block_time == 0 {
                    sample
                } else {
                    self.block_time - self.block_time / 4 + sample / 4
                };
            }
        }
        self.last_open = Some((now, closed_k));
        let used = self.csf.config().map(|c| c.id);
        if let Some(c) = self.neg.config_for_block(start, sink) {
            if used != Some(c.id) {
                self.counters.config_mismatch = self.counters.config_mismatch.saturating_add(1);
            }
            if let Some(n) = self.blocks.get_mut(usize::from(c.id)) {
                *n = n.saturating_add(1);
            }
        }
    }

    /// Tells the negotiation about configurations no retained block uses
    /// any more (the current one stays), so that it can release them.
    fn release_configs(&mut self) {
        let cur = self.csf.config().map(|c| c.id);
        for (id, n) in self.blocks.iter_mut().enumerate() {
            let id = id as u8;
            if *n > 0 && Some(id) != cur && !self.csf.uses_config(id) {
                self.neg.blocks_closed(id, *n);
                *n = 0;
            }
        }
    }

    /// Counts the REPAIR messages the CSF sent since the last call as sent
    /// at `now`.
    fn log_repairs(&mut self, now: Nanos) {
        let c = self.csf.counters();
        let total = c
            .repairs_ordinary
            .wrapping_add(c.repairs_proactive)
            .wrapping_add(c.repairs_retx)
            .wrapping_add(c.repairs_source_copy)
            .wrapping_add(c.repairs_info);
        let n = total.wrapping_sub(self.repairs_logged);
        self.repairs_logged = total;
        self.repair_log
            .record(now, n.min(u64::from(u32::MAX)) as u32);
    }

    // -----------------------------------------------------------------
    // Messages from the CRF.

    /// A CREM message from the peer CRF. Messages a CSF does not take are
    /// counted in [`SenderCounters::unexpected`].
    pub fn on_message<G, K, S>(
        &mut self,
        now: Nanos,
        msg: &Message<'_>,
        io: &mut CsfIo<'_, G, K, S>,
    ) -> Option<SenderEvent>
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        // Sent once and answered now: an RTT sample (see `rtt_probe`).
        let probe = self.neg.rtt_probe();
        let hello_first = self.neg.hello_first_sent();
        let ev = match msg {
            Message::HelloAck(a) => match self.neg.on_hello_ack(a, io.sink) {
                HelloAckOutcome::Established { flow_id, limits } => {
                    if probe.is_some() {
                        self.rtt_sample(now, probe);
                    } else if let Some(t) = hello_first.filter(|&t| t <= now) {
                        // The draft's HELLO backoff starts at 1 ms, so on
                        // any longer path HELLO is sent again before its
                        // answer and Karn leaves no sample: without this
                        // seed a CSF whose PARAM_UPDATE also timed out
                        // against the hint (a fixed k/m sends just one)
                        // would keep the hint on a 50 ms path for good.
                        self.rtt.seed(now.wrapping_sub(t));
                        self.follow_rtt();
                    }
                    self.established(now, flow_id, limits, io.sink, io.store);
                    Some(SenderEvent::Established { flow_id })
                }
                HelloAckOutcome::Incompatible { .. } => {
                    self.drop_early(io.store);
                    Some(SenderEvent::GaveUp)
                }
                HelloAckOutcome::Ignored(_) => None,
            },
            Message::ParamAck(a) => match self.neg.on_param_ack(a) {
                ParamAckOutcome::Accepted { .. } => {
                    self.rtt_sample(now, probe);
                    self.apply_acked(io)
                }
                ParamAckOutcome::Rejected { .. } => {
                    // A refusal answers the PARAM_UPDATE as well.
                    self.rtt_sample(now, probe);
                    self.drop_early(io.store);
                    None
                }
                _ => None,
            },
            Message::RepairRequest(r) => {
                self.csf.on_repair_request(now, r, io);
                None
            }
            Message::TcAeth(r) => {
                self.csf.on_tc_aeth(now, r, io);
                None
            }
            Message::LossReport(r) => self.on_loss_report(now, r, io),
            Message::PathReport(r) => {
                self.on_path_report(now, r, io);
                None
            }
            Message::Close(c) => self.neg.on_close(c).map(|reason| {
                self.unprotect(io.store);
                SenderEvent::Closed {
                    reason,
                    by_peer: true,
                }
            }),
            _ => {
                self.counters.unexpected = self.counters.unexpected.saturating_add(1);
                None
            }
        };
        self.log_repairs(now);
        ev
    }

    fn established<K: Sink + ?Sized, S: SourceStore + ?Sized>(
        &mut self,
        now: Nanos,
        flow_id: u32,
        limits: Limits,
        sink: &mut K,
        store: &mut S,
    ) {
        self.csf.set_flow_id(flow_id);
        self.csf.set_max_open_blocks(limits.max_open_blocks);
        self.follow_rtt();
        self.limits = Some(limits);
        self.protected = true;
        let (k, m, scheme) = self.initial_choice(now, &limits);
        if let Some(c) = self.csf.config().filter(|_| self.csf.is_provisional()) {
            let first = self.csf.oldest_block().map(|b| b.0);
            if (c.k, c.m, c.scheme) == (k, m, scheme) && limits.allows(&c) {
                let p = ConfigParams {
                    scheme,
                    k,
                    m,
                    t: c.t,
                };
                let start = first
                    .or(self.csf.next_psn())
                    .unwrap_or(self.params.initial_psn);
                if self.neg.propose_early(now, self.srtt(), p, start, sink) == Ok(c.id) {
                    self.counters.proposals = self.counters.proposals.saturating_add(1);
                    let n = u32::try_from(self.csf.blocks_held()).unwrap_or(u32::MAX);
                    self.neg.count_blocks(c.id, n);
                    if let Some(b) = self.blocks.get_mut(usize::from(c.id)) {
                        *b = b.saturating_add(n);
                    }
                    return;
                }
            }
            // The CRF's limits (or the policy) want another configuration.
            self.drop_early(store);
        }
        let _ = self.propose(now, k, m, scheme, sink);
    }

    /// The pending configuration was acknowledged: the CSF uses it from its
    /// Effective PSN (a provisional one: sends what it coded so far).
    fn apply_acked<G, K, S>(&mut self, io: &mut CsfIo<'_, G, K, S>) -> Option<SenderEvent>
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let (c, eff, true) = self.neg.pending_config()? else {
            return None;
        };
        if self.csf.is_provisional() && self.csf.config() == Some(c) {
            self.csf.confirm(io);
            return Some(SenderEvent::ConfigChanged(c));
        }
        if self.csf.set_config(c, eff).is_err() {
            self.counters.csf_refused_config = self.counters.csf_refused_config.saturating_add(1);
            return None;
        }
        Some(SenderEvent::ConfigChanged(c))
    }

    /// Proposes (k, m, scheme) with the flow's T in a PARAM_UPDATE (the
    /// policy does this itself; an operator may too). Refused as
    /// [`ProposeError::Busy`] while the previous one is not in effect yet,
    /// acknowledged or not: superseding an acknowledged configuration would
    /// leave the CRF holding one the CSF never uses, while the one the CSF
    /// keeps using looks idle there (with m = 0 it carries no REPAIR).
    pub fn propose<K: Sink + ?Sized>(
        &mut self,
        now: Nanos,
        k: u8,
        m: u8,
        scheme: Scheme,
        sink: &mut K,
    ) -> Result<u8, ProposeError> {
        let next = self.csf.next_psn().unwrap_or(self.params.initial_psn);
        let p = ConfigParams {
            scheme,
            k,
            m,
            t: self.mtu.t(),
        };
        let r = if self.neg.pending_config().is_some() {
            Err(ProposeError::Busy)
        } else {
            self.neg.propose(now, self.srtt(), p, next, sink)
        };
        let c = &mut self.counters;
        match r {
            Ok(_) => c.proposals = c.proposals.saturating_add(1),
            Err(e) => {
                let n = match e {
                    ProposeError::Busy => &mut c.propose_busy,
                    ProposeError::Unchanged => &mut c.propose_unchanged,
                    ProposeError::OutsideLimits => &mut c.propose_outside_limits,
                    ProposeError::NoConfigSlot => &mut c.propose_no_slot,
                    ProposeError::NotEstablished => &mut c.propose_not_established,
                };
                *n = n.saturating_add(1);
            }
        }
        r
    }

    fn on_loss_report<G, K, S>(
        &mut self,
        now: Nanos,
        r: &LossReport,
        io: &mut CsfIo<'_, G, K, S>,
    ) -> Option<SenderEvent>
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.counters.loss_reports = self.counters.loss_reports.saturating_add(1);
        if !self.protected {
            return None;
        }
        if self.params.policy.is_none() {
            // Fixed k/m: measured (loss-ppm, loss-class), not acted on.
            self.policy.observe(now, r);
            return None;
        }
        // REPAIRs sent during the interval the report covers: it left the
        // CRF about half an RTT ago and covers `interval` before that, so
        // their sends lie one RTT earlier still.
        let to = now.saturating_sub(self.srtt());
        let from = to.saturating_sub(u64::from(r.interval_us).saturating_mul(1000));
        let sent = self.repair_log.sent_between(from, to);
        let ev = match self.policy.on_loss_report(now, r, sent) {
            Some(BreakerEvent::Tripped) => {
                self.csf.set_ordinary_repairs(false);
                self.csf.set_coded_retx(false);
                Some(SenderEvent::BreakerTripped)
            }
            Some(BreakerEvent::Cleared) => {
                self.csf.set_ordinary_repairs(true);
                self.csf.set_coded_retx(true);
                Some(SenderEvent::BreakerCleared)
            }
            Some(BreakerEvent::Close) => {
                let reason = CloseReason::CircuitBreaker;
                self.neg.close(reason, io.sink);
                self.unprotect(io.store);
                return Some(SenderEvent::Closed {
                    reason,
                    by_peer: false,
                });
            }
            None => None,
        };
        if self.pinned {
            return ev;
        }
        let limits = self.limits?;
        let current = match self.neg.pending_config() {
            Some((c, _, _)) => Some((c.k, c.m)),
            None => self.neg.active_config().map(|c| (c.k, c.m)),
        };
        // Hysteresis 2·max(SRTT, block time): the draft's 2·SRTT assumes a
        // change takes effect within an RTT; with blocks longer than the
        // RTT it takes a block, and faster changes only pile up
        // configurations that never carry a block.
        let (srtt, block) = (self.srtt(), self.block_time());
        let period = srtt.max(block);
        let fits = crf::round_within_hold(self.params.peer_hold, srtt, block);
        self.policy.set_round_in_hold(fits);
        let d = self.policy.decide(now, period, current, &limits);
        self.csf.set_coded_retx(d.coded_retx);
        if d.change == Change::Apply {
            let _ = self.propose(now, d.k, d.m, d.scheme, io.sink);
        }
        ev
    }

    /// An operator's choice for this flow: `Some((k, m))` proposes that
    /// configuration at once and pins it (the adaptive policy, if any,
    /// stops changing it; its circuit breaker still watches); `None` hands
    /// the flow back to the policy, which decides at the next LOSS_REPORT.
    /// Proposing what is already in effect is not an error.
    pub fn pin<K: Sink + ?Sized>(
        &mut self,
        now: Nanos,
        pin: Option<(u8, u8)>,
        sink: &mut K,
    ) -> Result<(), PinError> {
        let Some((k, m)) = pin else {
            if self.params.policy.is_none() {
                return Err(PinError::NoPolicy);
            }
            self.pinned = false;
            return Ok(());
        };
        match self.propose(now, k, m, self.params.scheme, sink) {
            Ok(_) | Err(ProposeError::Unchanged) => {
                self.pinned = true;
                Ok(())
            }
            Err(e) => Err(PinError::Propose(e)),
        }
    }

    /// Whether an operator pinned the configuration ([`SenderFlow::pin`]).
    pub fn pinned(&self) -> bool {
        self.pinned
    }

    /// A PATH_REPORT about this flow (the caller checked that an
    /// allow-listed Path Reporter sent it): the policy's loss classification
    /// learns the per-hop queue-delay growth and drop causes, and the PSNs
    /// dropped on the path get proactive ordinary repairs.
    fn on_path_report<G, K, S>(
        &mut self,
        now: Nanos,
        r: &PathReport<'_>,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.counters.path_reports = self.counters.path_reports.saturating_add(1);
        if !self.protected {
            return;
        }
        self.policy.on_path_report(now, r);
        let dropped = r.hops.iter().flat_map(|h| h.dropped.iter());
        self.csf.on_path_drops(now, dropped, io);
    }

    /// Stops protecting: releases retention and forgets the configuration.
    fn unprotect<S: SourceStore + ?Sized>(&mut self, store: &mut S) {
        self.protected = false;
        self.csf.shutdown(store);
        // The path stays: a new session starts from what was measured.
        let mut p = self.params.csf;
        p.initial_srtt = self.srtt();
        self.csf.restart(p);
        self.blocks.fill(0);
        self.last_open = None;
        self.repairs_logged = 0;
    }

    // -----------------------------------------------------------------
    // Time and teardown.

    /// Runs what is due at `now`: CSF timers (idle close, spread repairs,
    /// give-ups) and negotiation retransmissions or give-ups.
    pub fn on_timer<G, K, S>(
        &mut self,
        now: Nanos,
        io: &mut CsfIo<'_, G, K, S>,
    ) -> Option<SenderEvent>
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.csf.on_timer(now, io);
        self.release_configs();
        self.log_repairs(now);
        match self.neg.on_timer(now, io.sink)? {
            NegEvent::HelloGaveUp => {
                self.drop_early(io.store);
                Some(SenderEvent::GaveUp)
            }
            NegEvent::ParamSyncFailed { .. } => {
                // The negotiation sent CLOSE (reason 3).
                self.unprotect(io.store);
                Some(SenderEvent::Closed {
                    reason: CloseReason::ParamSyncFailed,
                    by_peer: false,
                })
            }
        }
    }

    /// When [`SenderFlow::on_timer`] should run next.
    pub fn next_deadline(&self) -> Option<Nanos> {
        match (self.csf.next_deadline(), self.neg.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Closes the flow: sends CLOSE with `reason` (if established) and
    /// releases every retained source.
    pub fn close<G, K, S>(&mut self, reason: CloseReason, io: &mut CsfIo<'_, G, K, S>)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.neg.close(reason, io.sink);
        self.unprotect(io.store);
    }

    /// Releases every retained source (teardown without a message).
    pub fn shutdown<S: SourceStore + ?Sized>(&mut self, store: &mut S) {
        self.csf.shutdown(store);
        self.blocks.fill(0);
    }

    /// An answer to an exchange sent once at `probe` arrived at `now`: one
    /// RTT sample, which every per-SRTT rule follows at once.
    ///
    /// The CSF side has two such exchanges (drafts: "Capability
    /// Negotiation", "Parameter Synchronization"): HELLO → HELLO_ACK and
    /// PARAM_UPDATE → PARAM_ACK (either status), both answered by the CRF
    /// as they arrive. Karn's rule: neither answer names the copy it
    /// answers (one nonce per session, one Config ID per configuration),
    /// so an exchange sent again gives no sample (`probe` is `None`). The
    /// CSF sees nothing else that answers its own messages: REPAIRs are
    /// answered by nothing, and LOSS_REPORT and T/C AETH reports leave on
    /// the CRF's schedule.
    fn rtt_sample(&mut self, now: Nanos, probe: Option<Nanos>) {
        if let Some(sent) = probe.filter(|&t| t <= now) {
            self.rtt.sample(now.wrapping_sub(sent));
            self.follow_rtt();
        }
    }

    /// Hands the SRTT to what keeps its own copy: the CSF (one answer per
    /// block per SRTT, T/C AETH rounds and in-flight guard) and the repair
    /// log (bucket width). Everything else reads [`SenderFlow::srtt`] when
    /// it decides: the PARAM_UPDATE timeout, the policy's hysteresis and
    /// the LOSS_REPORT interval's REPAIR count.
    fn follow_rtt(&mut self) {
        let srtt = self.rtt.srtt();
        self.csf.set_srtt(srtt);
        self.repair_log.set_srtt(srtt);
    }

    // -----------------------------------------------------------------
    // Accessors (stats).

    /// Negotiating, established, unprotected or closed.
    pub fn state(&self) -> FlowState {
        match self.neg.state() {
            CsfState::Idle | CsfState::Hello { .. } => FlowState::Negotiating,
            CsfState::Established { .. } if self.protected => FlowState::Established,
            CsfState::Established { .. } | CsfState::Unprotected => FlowState::Unprotected,
            CsfState::Closed(r) => FlowState::Closed(r),
        }
    }

    /// Flow ID once established.
    pub fn flow_id(&self) -> Option<u32> {
        self.neg.flow_id()
    }

    /// Configuration new blocks use now.
    pub fn config(&self) -> Option<FecConfig> {
        self.csf.config()
    }

    /// Effective limits once established.
    pub fn limits(&self) -> Option<Limits> {
        self.limits
    }

    /// Smoothed RTT in use: measured from HELLO → HELLO_ACK and
    /// PARAM_UPDATE → PARAM_ACK exchanges sent once (Karn), the hint until
    /// the first sample.
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

    /// The flow's RDMA MTU (learned or estimated) and the T it calls for.
    pub fn mtu(&self) -> &FlowMtu {
        &self.mtu
    }

    /// The request PSN timed for an RTT sample, and when it was sent.
    pub fn ack_probe_timed(&self) -> Option<(Psn, Nanos)> {
        self.ack_probe.timed()
    }

    /// Block time the policy's hysteresis uses (measured, else the hint).
    pub fn block_time(&self) -> Nanos {
        if self.block_time != 0 {
            self.block_time
        } else {
            self.params.block_time_hint
        }
    }

    /// Pre-restoration loss estimate, ppb.
    pub fn loss_ppb(&self) -> u64 {
        self.policy.loss_ppb()
    }

    /// Circuit-breaker state.
    pub fn breaker_state(&self) -> BreakerState {
        self.policy.breaker_state()
    }

    /// The loss classification at `now` (draft: transmission or congestion
    /// loss), for operators; fixed-mode flows are measured too.
    pub fn loss_class(&self, now: Nanos) -> LossClass {
        self.policy.classification(now).class()
    }

    /// Retained source octets.
    pub fn retention_octets(&self) -> u64 {
        self.csf.retention_octets()
    }

    /// CSF counters.
    pub fn csf_counters(&self) -> &CsfCounters {
        self.csf.counters()
    }

    /// Negotiation counters.
    pub fn negotiation_counters(&self) -> &CsfNegCounters {
        self.neg.counters()
    }

    /// Policy counters.
    pub fn policy_counters(&self) -> &super::super::policy::PolicyCounters {
        self.policy.counters()
    }

    /// Orchestration counters.
    pub fn counters(&self) -> &SenderCounters {
        &self.counters
    }

    /// The CSF engine (read-only).
    pub fn csf(&self) -> &Csf<St> {
        &self.csf
    }

    /// The negotiation (read-only).
    pub fn negotiation(&self) -> &CsfNegotiation {
        &self.neg
    }

    /// The policy (read-only).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// PARAM_ACK rejections other than "resources exhausted" received (a
    /// misconfiguration rather than load).
    pub fn param_rejected_hard(&self) -> u64 {
        let c = self.neg.counters();
        c.param_rejected_unsupported_scheme
            .saturating_add(c.param_rejected_limits)
            .saturating_add(c.param_rejected_other)
    }
}
