//! CSF side: HELLO with backoff, PARAM_UPDATE with its retransmission timer and
//! Effective PSN, configuration lifetimes, CLOSE.

use super::super::super::fec::{Scheme, LENGTH_PREFIX};
use super::super::super::psn::Psn;
use super::super::super::wire::{
    Close, CloseReason, FlowAddrs, FlowKind, Hello, HelloAck, Message, ParamAck, ParamStatus,
    ParamUpdate,
};
use super::super::{FecConfig, Limits, Nanos, Sink};
use super::{
    check_flow, emit, inc, wire_scheme, Ignored, HELLO_RTO, MAX_ATTEMPTS, MAX_CONFIGS,
    MAX_PSN_LEAD, NO_CONFIG, PARAM_MIN_RTO,
};

/// What the HELLO describes: the protected flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowDescriptor {
    /// Source and destination addresses of the RDMA flow (AF follows).
    pub addrs: FlowAddrs,
    /// Destination queue pair (low 24 bits used as the Flow Label).
    pub dest_qp: u32,
    /// RDMA path MTU, payload octets per packet (the CRF derives READ
    /// response PSN counts from it).
    pub rdma_mtu: u16,
    /// Requests or responses of the queue pair (the HELLO's Flow Kind).
    pub kind: FlowKind,
}

/// Negotiation state of the CSF.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CsfState {
    /// Not started.
    Idle,
    /// HELLO sent `attempts` times, waiting for HELLO_ACK.
    Hello {
        /// Transmissions so far (1..=8).
        attempts: u8,
    },
    /// HELLO_ACK received; the Flow ID is assigned.
    Established {
        /// Flow ID assigned by the CRF.
        flow_id: u32,
    },
    /// No usable answer to HELLO: the flow is not protected (until a new
    /// [`CsfNegotiation::start`]).
    Unprotected,
    /// CLOSE sent or received with this reason; state released.
    Closed(CloseReason),
}

/// A configuration without its Config ID (assigned by the negotiation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConfigParams {
    /// FEC scheme.
    pub scheme: Scheme,
    /// Block size.
    pub k: u8,
    /// Repair symbols per block.
    pub m: u8,
    /// Symbol length.
    pub t: u16,
}

/// Result of [`CsfNegotiation::on_hello_ack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelloAckOutcome {
    /// Negotiated: bind the flow's peer to the source address and port of this
    /// HELLO_ACK; `limits` are the effective limits.
    Established {
        /// Flow ID for all later messages.
        flow_id: u32,
        /// Effective limits (minimum of both sides).
        limits: Limits,
    },
    /// The effective limits leave nothing usable (no scheme 1 or 2, Max k,
    /// Max T or Max Open Blocks too small): CLOSE (reason 0) was sent to
    /// release the CRF's state — route it to this HELLO_ACK's source — and the
    /// flow stays unprotected.
    Incompatible {
        /// The Flow ID the CRF had assigned.
        flow_id: u32,
    },
    /// Ignored (counted).
    Ignored(Ignored),
}

/// Result of [`CsfNegotiation::on_param_ack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamAckOutcome {
    /// The CRF accepted the pending configuration; it takes effect with the
    /// first block starting at or after its Effective PSN.
    Accepted {
        /// Its Config ID.
        config_id: u8,
    },
    /// The CRF refused it; the current configuration stays.
    Rejected {
        /// Its Config ID.
        config_id: u8,
        /// The CRF's reason.
        status: ParamStatus,
    },
    /// Ignored (counted).
    Ignored(Ignored),
}

/// Something the timer did that the caller must act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NegEvent {
    /// Eight HELLOs went unanswered: the flow stays unprotected.
    HelloGaveUp,
    /// Eight PARAM_UPDATEs went unanswered: CLOSE reason 2 was sent and the
    /// flow's state released; stop protecting the flow.
    ParamSyncFailed {
        /// The Config ID that was never acknowledged.
        config_id: u8,
    },
}

/// Why [`CsfNegotiation::propose`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProposeError {
    /// No flow (HELLO not answered, or closed).
    NotEstablished,
    /// A PARAM_UPDATE is still unacknowledged.
    Busy,
    /// Already the configuration in use (or acknowledged and pending).
    Unchanged,
    /// Outside the effective limits or the scheme's Repair Index rule.
    OutsideLimits,
    /// All configuration slots hold configurations still used by open blocks.
    NoConfigSlot,
}

/// CSF negotiation counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsfNegCounters {
    /// HELLO transmissions (first and retransmissions).
    pub hello_sent: u64,
    /// HELLO retransmissions.
    pub hello_retransmits: u64,
    /// Negotiations given up after eight HELLOs.
    pub hello_gave_up: u64,
    /// HELLO_ACKs received.
    pub hello_ack_received: u64,
    /// HELLO_ACKs with a nonce that is not ours.
    pub hello_ack_bad_nonce: u64,
    /// HELLO_ACKs with wrong echoed fields or Flow ID 0.
    pub hello_ack_mismatch: u64,
    /// HELLO_ACKs in a state that does not expect one.
    pub hello_ack_unexpected: u64,
    /// HELLO_ACKs of this session that arrived after the CSF gave up on
    /// HELLO (taken: the flow is established, or closed if incompatible).
    pub hello_ack_late: u64,
    /// Repeated HELLO_ACKs after establishment.
    pub hello_ack_duplicate: u64,
    /// HELLO_ACKs whose limits leave nothing usable.
    pub hello_ack_incompatible: u64,
    /// PARAM_UPDATE transmissions of all kinds.
    pub param_update_sent: u64,
    /// PARAM_UPDATE retransmissions on timeout.
    pub param_update_retransmits: u64,
    /// PARAM_UPDATE re-sends with a later Effective PSN.
    pub param_update_psn_resends: u64,
    /// PARAM_ACKs received.
    pub param_ack_received: u64,
    /// PARAM_ACKs accepting the pending configuration.
    pub param_ack_accepted: u64,
    /// Repeated PARAM_ACKs.
    pub param_ack_duplicate: u64,
    /// PARAM_ACKs for no pending Config ID.
    pub param_ack_unknown: u64,
    /// Refusals with status 1.
    pub param_rejected_unsupported_scheme: u64,
    /// Refusals with status 2.
    pub param_rejected_limits: u64,
    /// Refusals with status 3.
    pub param_rejected_resources: u64,
    /// Refusals with another status.
    pub param_rejected_other: u64,
    /// CLOSE reason 2 after eight unanswered PARAM_UPDATEs.
    pub param_sync_failures: u64,
    /// Proposals refused because one was outstanding.
    pub propose_busy: u64,
    /// Proposals refused for limits or slots.
    pub propose_refused: u64,
    /// Switches to a newly acknowledged configuration.
    pub config_switches: u64,
    /// Older configurations released after their last block.
    pub configs_released: u64,
    /// `blocks_closed` for a Config ID not held.
    pub block_closed_unknown: u64,
    /// `blocks_closed` for more blocks than were open.
    pub block_accounting_errors: u64,
    /// CLOSE messages sent.
    pub close_sent: u64,
    /// CLOSE messages received and applied.
    pub close_received: u64,
    /// Messages for another Flow ID or in the wrong state (PARAM_ACK, CLOSE).
    pub ignored: u64,
    /// Messages that failed to encode (not expected to happen).
    pub encode_errors: u64,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    cfg: FecConfig,
    used: bool,
    open_blocks: u32,
    /// A newer configuration is in effect; free after the last block.
    retiring: bool,
}

const FREE: Slot = Slot {
    cfg: NO_CONFIG,
    used: false,
    open_blocks: 0,
    retiring: false,
};

#[derive(Clone, Copy, Debug)]
struct Pending {
    slot: usize,
    effective: Psn,
    acked: bool,
    attempts: u8,
    rto: Nanos,
    deadline: Nanos,
    /// First transmission at.
    sent_at: Nanos,
    /// Sent more than once (timeout or Effective PSN re-send): a PARAM_ACK
    /// cannot tell which copy it answers (Karn).
    resent: bool,
    /// Proposed by [`CsfNegotiation::propose_early`]: the CSF codes with it
    /// already, so its Effective PSN never moves.
    early: bool,
}

/// The CSF's negotiation state for one flow.
#[derive(Clone, Debug)]
pub struct CsfNegotiation {
    local: Limits,
    flow: FlowDescriptor,
    state: CsfState,
    nonce: u64,
    /// Unprotected because eight HELLOs went unanswered (not for
    /// incompatible limits): a HELLO_ACK of this session's nonce that
    /// arrives later (the CRF was made late) still establishes the flow.
    late_ack_ok: bool,
    hello_rto: Nanos,
    hello_deadline: Nanos,
    /// First HELLO of the session sent at.
    hello_sent: Nanos,
    /// Karn's backed-off timeout: the RTO a PARAM_UPDATE had reached when
    /// an answer came only after re-sends; the next PARAM_UPDATE starts
    /// from it (0: none), so that a path slower than 2·SRTT still yields
    /// an unambiguous sample and the SRTT can catch up.
    rto_carry: Nanos,
    effective: Limits,
    slots: [Slot; MAX_CONFIGS],
    active: Option<usize>,
    pending: Option<Pending>,
    last_id: u8,
    psn_lead: u32,
    counters: CsfNegCounters,
}

impl CsfNegotiation {
    /// Default Effective PSN lead (PSNs), see [`CsfNegotiation::set_psn_lead`].
    pub const DEFAULT_PSN_LEAD: u32 = 512;

    /// Negotiation for `flow` with the CSF's own `local` limits (its
    /// `max_open_blocks` is ignored; use `u16::MAX`).
    pub fn new(local: Limits, flow: FlowDescriptor) -> CsfNegotiation {
        CsfNegotiation {
            local,
            flow,
            state: CsfState::Idle,
            nonce: 0,
            late_ack_ok: false,
            hello_rto: HELLO_RTO,
            hello_deadline: 0,
            hello_sent: 0,
            rto_carry: 0,
            effective: local,
            slots: [FREE; MAX_CONFIGS],
            active: None,
            pending: None,
            last_id: 0,
            psn_lead: Self::DEFAULT_PSN_LEAD,
            counters: CsfNegCounters::default(),
        }
    }

    /// Sends the first HELLO with the caller's random `nonce` (any earlier
    /// session is forgotten without CLOSE; the CRF recognizes the new nonce).
    pub fn start<S: Sink + ?Sized>(&mut self, now: Nanos, nonce: u64, sink: &mut S) {
        self.release();
        self.nonce = nonce;
        self.late_ack_ok = false;
        self.state = CsfState::Hello { attempts: 1 };
        self.hello_rto = HELLO_RTO;
        self.hello_deadline = now.saturating_add(HELLO_RTO);
        self.hello_sent = now;
        self.rto_carry = 0;
        self.send_hello(sink);
    }

    /// When the exchange now awaiting its answer (HELLO, or the pending
    /// PARAM_UPDATE) was sent, if it was sent only once: an answer arriving
    /// now then gives an RTT sample. `None` once it has been sent again
    /// (Karn's rule: HELLO_ACK and PARAM_ACK do not say which copy they
    /// answer) or when nothing awaits an answer. Ask before handing the
    /// answer to [`CsfNegotiation::on_hello_ack`] or
    /// [`CsfNegotiation::on_param_ack`].
    pub fn rtt_probe(&self) -> Option<Nanos> {
        match self.state {
            CsfState::Hello { attempts: 1 } => Some(self.hello_sent),
            CsfState::Established { .. } => self
                .pending
                .filter(|p| !p.acked && !p.resent)
                .map(|p| p.sent_at),
            _ => None,
        }
    }

    /// When the first HELLO of the session was sent, while HELLO awaits
    /// its answer (re-sent or not): the start of an upper bound on the RTT
    /// ([`crate::engine::rtt::RttEstimator::seed`]).
    pub fn hello_first_sent(&self) -> Option<Nanos> {
        matches!(self.state, CsfState::Hello { .. }).then_some(self.hello_sent)
    }

    /// The HELLO this side sends.
    pub fn hello(&self) -> Hello {
        Hello {
            flow_kind: self.flow.kind.to_u8(),
            supported_schemes: u16::from(self.local.schemes),
            max_k: self.local.max_k,
            max_m: self.local.max_m,
            max_t: self.local.max_t,
            rdma_mtu: self.flow.rdma_mtu,
            nonce: self.nonce,
            addrs: self.flow.addrs,
            flow_label: self.flow.dest_qp & 0x00ff_ffff,
        }
    }

    fn send_hello<S: Sink + ?Sized>(&mut self, sink: &mut S) {
        let msg = Message::Hello(self.hello());
        let c = &mut self.counters;
        emit(&msg, sink, &mut c.hello_sent, &mut c.encode_errors);
    }

    /// Sets how far ahead of the next PSN an Effective PSN is placed (on a
    /// proposal and on re-sends). It should cover about one RTT of packets so
    /// that PARAM_ACK normally arrives first. Clamped to `1..=2^22`.
    pub fn set_psn_lead(&mut self, lead: u32) {
        self.psn_lead = lead.clamp(1, MAX_PSN_LEAD);
    }

    /// Handles a HELLO_ACK.
    pub fn on_hello_ack<S: Sink + ?Sized>(
        &mut self,
        ack: &HelloAck,
        sink: &mut S,
    ) -> HelloAckOutcome {
        inc(&mut self.counters.hello_ack_received);
        match self.state {
            CsfState::Hello { .. } => {}
            // The CRF answered after the CSF gave up: late, not wrong
            // (counted below once it proves to be this session's answer).
            CsfState::Unprotected if self.late_ack_ok => {}
            CsfState::Established { flow_id } if ack.nonce == self.nonce => {
                if ack.flow_id == flow_id {
                    inc(&mut self.counters.hello_ack_duplicate);
                    return HelloAckOutcome::Ignored(Ignored::Duplicate);
                }
                inc(&mut self.counters.hello_ack_mismatch);
                return HelloAckOutcome::Ignored(Ignored::Mismatch);
            }
            _ => {
                inc(&mut self.counters.hello_ack_unexpected);
                return HelloAckOutcome::Ignored(Ignored::WrongState);
            }
        }
        if ack.nonce != self.nonce {
            inc(&mut self.counters.hello_ack_bad_nonce);
            return HelloAckOutcome::Ignored(Ignored::BadNonce);
        }
        if ack.flow_id == 0
            || ack.flow_kind != self.flow.kind.to_u8()
            || ack.af != self.flow.addrs.af()
            || ack.rdma_mtu != self.flow.rdma_mtu
        {
            inc(&mut self.counters.hello_ack_mismatch);
            return HelloAckOutcome::Ignored(Ignored::Mismatch);
        }
        let peer = Limits {
            schemes: (ack.supported_schemes & 0xff) as u8,
            max_k: ack.max_k,
            max_m: ack.max_m,
            max_t: ack.max_t,
            max_open_blocks: ack.max_open_blocks,
        };
        let eff = self.local.min(&peer);
        let flow_id = ack.flow_id;
        // Answered: one answer only, whatever it leads to.
        if self.late_ack_ok {
            inc(&mut self.counters.hello_ack_late);
        }
        self.late_ack_ok = false;
        let fec_bits = (1u8 << u8::from(Scheme::CauchyRs)) | (1u8 << u8::from(Scheme::Xor));
        if eff.schemes & fec_bits == 0
            || eff.max_k == 0
            || (eff.max_t as usize) <= LENGTH_PREFIX
            || eff.max_open_blocks == 0
        {
            inc(&mut self.counters.hello_ack_incompatible);
            self.state = CsfState::Established { flow_id };
            self.close(CloseReason::Normal, sink);
            self.state = CsfState::Unprotected;
            return HelloAckOutcome::Incompatible { flow_id };
        }
        self.effective = eff;
        self.state = CsfState::Established { flow_id };
        HelloAckOutcome::Established {
            flow_id,
            limits: eff,
        }
    }

    /// Asks for a new configuration, effective `psn_lead` PSNs after
    /// `next_psn` (the next PSN the flow will use). `srtt` sets the
    /// retransmission timeout: `max(2 * srtt, 1 ms)`, doubling — or the
    /// timeout the previous PARAM_UPDATE had backed off to, if it was
    /// answered only after a re-send (Karn; see [`CsfNegotiation::rtt_probe`]).
    /// Returns the new Config ID.
    pub fn propose<S: Sink + ?Sized>(
        &mut self,
        now: Nanos,
        srtt: Nanos,
        params: ConfigParams,
        next_psn: Psn,
        sink: &mut S,
    ) -> Result<u8, ProposeError> {
        let effective = next_psn.wrapping_add(self.psn_lead);
        self.propose_at(now, srtt, params, effective, false, sink)
    }

    /// The first configuration of a flow whose CSF has coded with it since
    /// the flow's first packet, unacknowledged (see
    /// `Csf::set_provisional`): effective at `first_block`, the start of
    /// its first block. The CRF sees nothing of those blocks before it
    /// acknowledges the configuration: their REPAIRs are sent after
    /// PARAM_ACK, and every block they describe starts at or after the
    /// Effective PSN, as the draft requires. Unlike [`CsfNegotiation::propose`]
    /// the Effective PSN is never moved on: blocks open with this
    /// configuration while it is unacknowledged, and the first one opened
    /// after PARAM_ACK puts it in effect. Its Config ID is
    /// [`CsfNegotiation::next_config_id`].
    pub fn propose_early<S: Sink + ?Sized>(
        &mut self,
        now: Nanos,
        srtt: Nanos,
        params: ConfigParams,
        first_block: Psn,
        sink: &mut S,
    ) -> Result<u8, ProposeError> {
        if self.active.is_some() || self.pending.is_some() {
            inc(&mut self.counters.propose_busy);
            return Err(ProposeError::Busy);
        }
        self.propose_at(now, srtt, params, first_block, true, sink)
    }

    /// The Config ID the next proposal gets: the next one unused, wrapping
    /// (at most MAX_CONFIGS are in use, so one is found within
    /// MAX_CONFIGS + 1 tries).
    pub fn next_config_id(&self) -> u8 {
        let mut id = self.last_id;
        for _ in 0..=MAX_CONFIGS {
            id = id.wrapping_add(1);
            if !self.slots.iter().any(|s| s.used && s.cfg.id == id) {
                break;
            }
        }
        id
    }

    fn propose_at<S: Sink + ?Sized>(
        &mut self,
        now: Nanos,
        srtt: Nanos,
        params: ConfigParams,
        effective: Psn,
        early: bool,
        sink: &mut S,
    ) -> Result<u8, ProposeError> {
        let CsfState::Established { flow_id } = self.state else {
            return Err(ProposeError::NotEstablished);
        };
        if let Some(p) = self.pending {
            if !p.acked {
                inc(&mut self.counters.propose_busy);
                return Err(ProposeError::Busy);
            }
        }
        let mut cfg = FecConfig {
            id: 0,
            scheme: params.scheme,
            k: params.k,
            m: params.m,
            t: params.t,
        };
        let same = |slot: Option<usize>, slots: &[Slot; MAX_CONFIGS]| {
            slot.and_then(|i| slots.get(i)).is_some_and(|s| {
                let c = s.cfg;
                (c.scheme, c.k, c.m, c.t) == (cfg.scheme, cfg.k, cfg.m, cfg.t)
            })
        };
        let pending_slot = self.pending.map(|p| p.slot);
        if same(pending_slot, &self.slots)
            || (pending_slot.is_none() && same(self.active, &self.slots))
        {
            return Err(ProposeError::Unchanged);
        }
        if !self.effective.allows(&cfg) || !self.update_msg(flow_id, &cfg, Psn::ZERO).indices_ok() {
            inc(&mut self.counters.propose_refused);
            return Err(ProposeError::OutsideLimits);
        }
        // An acknowledged configuration not yet in effect is superseded: no
        // block uses it, so its slot is free at once.
        if let Some(p) = self.pending.take() {
            self.free_slot(p.slot);
        }
        let Some(slot) = self.slots.iter().position(|s| !s.used) else {
            inc(&mut self.counters.propose_refused);
            return Err(ProposeError::NoConfigSlot);
        };
        let id = self.next_config_id();
        self.last_id = id;
        cfg.id = id;
        if let Some(s) = self.slots.get_mut(slot) {
            *s = Slot {
                cfg,
                used: true,
                open_blocks: 0,
                retiring: false,
            };
        }
        let rto = srtt
            .saturating_mul(2)
            .max(PARAM_MIN_RTO)
            .max(self.rto_carry);
        self.pending = Some(Pending {
            slot,
            effective,
            acked: false,
            attempts: 1,
            rto,
            deadline: now.saturating_add(rto),
            sent_at: now,
            resent: false,
            early,
        });
        self.send_update(flow_id, &cfg, effective, sink);
        Ok(id)
    }

    fn update_msg(&self, flow_id: u32, cfg: &FecConfig, effective: Psn) -> ParamUpdate {
        ParamUpdate {
            flow_id,
            config_id: cfg.id,
            scheme: wire_scheme(cfg.scheme),
            k: cfg.k,
            m: cfg.m,
            t: cfg.t,
            effective_psn: effective,
        }
    }

    fn send_update<S: Sink + ?Sized>(
        &mut self,
        flow_id: u32,
        cfg: &FecConfig,
        effective: Psn,
        sink: &mut S,
    ) {
        let msg = self.update_msg(flow_id, cfg, effective);
        let c = &mut self.counters;
        emit(
            &Message::ParamUpdate(msg),
            sink,
            &mut c.param_update_sent,
            &mut c.encode_errors,
        );
    }

    /// The configuration for a block starting at `block_start`, counted as
    /// used by one more open block (report its end with
    /// [`CsfNegotiation::blocks_closed`]). `None`: leave the block unprotected
    /// (no flow, or no configuration acknowledged yet).
    ///
    /// This is where a pending configuration takes effect (acknowledged and
    /// `block_start` at or after its Effective PSN), and where an
    /// unacknowledged one whose Effective PSN has passed is sent again with
    /// the Effective PSN moved to `block_start + psn_lead`.
    pub fn config_for_block<S: Sink + ?Sized>(
        &mut self,
        block_start: Psn,
        sink: &mut S,
    ) -> Option<FecConfig> {
        let CsfState::Established { flow_id } = self.state else {
            return None;
        };
        if let Some(mut p) = self.pending {
            if block_start.is_after_or_eq(p.effective) {
                if p.acked {
                    if let Some(old) = self.active {
                        self.retire(old);
                    }
                    self.active = Some(p.slot);
                    self.pending = None;
                    inc(&mut self.counters.config_switches);
                } else if p.early {
                    // In use unacknowledged (provisional), see below.
                } else if let Some(cfg) = self.slots.get(p.slot).map(|s| s.cfg) {
                    p.effective = block_start.wrapping_add(self.psn_lead);
                    p.resent = true;
                    self.pending = Some(p);
                    inc(&mut self.counters.param_update_psn_resends);
                    self.send_update(flow_id, &cfg, p.effective, sink);
                }
            }
        }
        let slot = match self.pending {
            Some(p) if p.early => p.slot,
            _ => self.active?,
        };
        let s = self.slots.get_mut(slot)?;
        s.open_blocks = s.open_blocks.saturating_add(1);
        Some(s.cfg)
    }

    /// Counts `n` more open blocks of configuration `config_id` (the blocks
    /// a provisional configuration opened before the flow was established).
    pub fn count_blocks(&mut self, config_id: u8, n: u32) {
        if let Some(s) = self
            .slots
            .iter_mut()
            .find(|s| s.used && s.cfg.id == config_id)
        {
            s.open_blocks = s.open_blocks.saturating_add(n);
        }
    }

    /// Reports that `n` blocks using `config_id` have been closed (acknowledged
    /// by the RDMA transport) or have fallen back; an older configuration is
    /// released after its last block.
    pub fn blocks_closed(&mut self, config_id: u8, n: u32) {
        let Some(i) = self
            .slots
            .iter()
            .position(|s| s.used && s.cfg.id == config_id)
        else {
            inc(&mut self.counters.block_closed_unknown);
            return;
        };
        let mut free = false;
        if let Some(s) = self.slots.get_mut(i) {
            if n > s.open_blocks {
                self.counters.block_accounting_errors =
                    self.counters.block_accounting_errors.saturating_add(1);
            }
            s.open_blocks = s.open_blocks.saturating_sub(n);
            free = s.retiring && s.open_blocks == 0;
        }
        if free {
            self.free_slot(i);
            inc(&mut self.counters.configs_released);
        }
    }

    fn retire(&mut self, i: usize) {
        let mut free = false;
        if let Some(s) = self.slots.get_mut(i) {
            s.retiring = true;
            free = s.open_blocks == 0;
        }
        if free {
            self.free_slot(i);
            inc(&mut self.counters.configs_released);
        }
    }

    fn free_slot(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i) {
            *s = FREE;
        }
    }

    /// Handles a PARAM_ACK.
    pub fn on_param_ack(&mut self, ack: &ParamAck) -> ParamAckOutcome {
        inc(&mut self.counters.param_ack_received);
        if let Err(why) = check_flow(self.flow_id(), ack.flow_id, &mut self.counters.ignored) {
            return ParamAckOutcome::Ignored(why);
        }
        let id = ack.config_id;
        let slot_id = |i: usize| self.slots.get(i).filter(|s| s.used).map(|s| s.cfg.id);
        match self.pending {
            Some(mut p) if slot_id(p.slot) == Some(id) => {
                if p.acked {
                    inc(&mut self.counters.param_ack_duplicate);
                    return ParamAckOutcome::Ignored(Ignored::Duplicate);
                }
                // Answered: a clean exchange gave the caller a sample, a
                // re-sent one leaves its backed-off timeout to the next.
                self.rto_carry = if p.resent { p.rto } else { 0 };
                if ack.status.is_accepted() {
                    p.acked = true;
                    self.pending = Some(p);
                    inc(&mut self.counters.param_ack_accepted);
                    return ParamAckOutcome::Accepted { config_id: id };
                }
                let c = &mut self.counters;
                inc(match ack.status {
                    ParamStatus::UnsupportedScheme => &mut c.param_rejected_unsupported_scheme,
                    ParamStatus::LimitsExceeded => &mut c.param_rejected_limits,
                    ParamStatus::ResourcesExhausted => &mut c.param_rejected_resources,
                    _ => &mut c.param_rejected_other,
                });
                self.free_slot(p.slot);
                self.pending = None;
                ParamAckOutcome::Rejected {
                    config_id: id,
                    status: ack.status,
                }
            }
            _ if self.active.and_then(slot_id) == Some(id) => {
                inc(&mut self.counters.param_ack_duplicate);
                ParamAckOutcome::Ignored(Ignored::Duplicate)
            }
            _ => {
                inc(&mut self.counters.param_ack_unknown);
                ParamAckOutcome::Ignored(Ignored::UnknownConfig)
            }
        }
    }

    /// Retransmissions and give-ups due at `now`.
    pub fn on_timer<S: Sink + ?Sized>(&mut self, now: Nanos, sink: &mut S) -> Option<NegEvent> {
        match self.state {
            CsfState::Hello { attempts } if now >= self.hello_deadline => {
                if attempts >= MAX_ATTEMPTS {
                    self.state = CsfState::Unprotected;
                    self.late_ack_ok = true;
                    inc(&mut self.counters.hello_gave_up);
                    return Some(NegEvent::HelloGaveUp);
                }
                self.state = CsfState::Hello {
                    attempts: attempts.saturating_add(1),
                };
                self.hello_rto = self.hello_rto.saturating_mul(2);
                self.hello_deadline = now.saturating_add(self.hello_rto);
                inc(&mut self.counters.hello_retransmits);
                self.send_hello(sink);
                None
            }
            CsfState::Established { flow_id } => {
                let mut p = self.pending.filter(|p| !p.acked && now >= p.deadline)?;
                let cfg = self.slots.get(p.slot)?.cfg;
                if p.attempts >= MAX_ATTEMPTS {
                    inc(&mut self.counters.param_sync_failures);
                    self.close(CloseReason::ParamSyncFailed, sink);
                    return Some(NegEvent::ParamSyncFailed { config_id: cfg.id });
                }
                p.attempts = p.attempts.saturating_add(1);
                p.rto = p.rto.saturating_mul(2);
                p.deadline = now.saturating_add(p.rto);
                p.resent = true;
                self.pending = Some(p);
                inc(&mut self.counters.param_update_retransmits);
                self.send_update(flow_id, &cfg, p.effective, sink);
                None
            }
            _ => None,
        }
    }

    /// When [`CsfNegotiation::on_timer`] next has something to do.
    pub fn next_deadline(&self) -> Option<Nanos> {
        match self.state {
            CsfState::Hello { .. } => Some(self.hello_deadline),
            CsfState::Established { .. } => self.pending.filter(|p| !p.acked).map(|p| p.deadline),
            _ => None,
        }
    }

    shared_negotiation_methods!(CsfState);

    fn release(&mut self) {
        self.slots = [FREE; MAX_CONFIGS];
        self.active = None;
        self.pending = None;
        self.effective = self.local;
    }

    /// The configuration new blocks use.
    pub fn active_config(&self) -> Option<FecConfig> {
        self.slots.get(self.active?).map(|s| s.cfg)
    }

    /// The proposed configuration, its Effective PSN and whether it is
    /// acknowledged.
    pub fn pending_config(&self) -> Option<(FecConfig, Psn, bool)> {
        let p = self.pending?;
        self.slots
            .get(p.slot)
            .map(|s| (s.cfg, p.effective, p.acked))
    }

    /// A configuration still held (active, pending or retiring) by Config ID,
    /// with its number of open blocks.
    pub fn config(&self, config_id: u8) -> Option<(FecConfig, u32)> {
        self.slots
            .iter()
            .find(|s| s.used && s.cfg.id == config_id)
            .map(|s| (s.cfg, s.open_blocks))
    }

    /// The Sender Nonce of the current session.
    pub const fn nonce(&self) -> u64 {
        self.nonce
    }

    /// Counters.
    pub const fn counters(&self) -> &CsfNegCounters {
        &self.counters
    }
}
