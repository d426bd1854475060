//! CRF side: HELLO → HELLO_ACK (idempotent for a repeated HELLO), PARAM_UPDATE
//! → PARAM_ACK with validation, acknowledged configurations and their release,
//! CLOSE.
//!
//! **Release rule.** An acknowledged configuration stays usable until it is
//! released. The draft releases it "when a newer configuration has been
//! acknowledged and every block that uses the older one has been closed or has
//! fallen back". Taken literally, a configuration would be released in a
//! moment between two of its blocks while the CSF still uses it up to the
//! newer one's Effective PSN, and later REPAIRs would be refused. So "newer
//! acknowledged" is read as "in use": a configuration is *superseded* once a
//! block of a configuration acknowledged after it has opened (the CSF switches
//! in PSN order and never goes back), and it is released when superseded with
//! no open block.

use super::super::super::fec::LENGTH_PREFIX;
use super::super::super::psn::Psn;
use super::super::super::wire::{
    Close, CloseReason, FecScheme, FlowKind, Hello, HelloAck, Message, ParamAck, ParamStatus,
    ParamUpdate,
};
use super::super::{FecConfig, Limits, Sink};
use super::{check_flow, emit, inc, scheme_of, Ignored, MAX_CONFIGS, NO_CONFIG};

/// Negotiation state of the CRF.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CrfState {
    /// No HELLO accepted yet.
    Idle,
    /// HELLO answered; `flow_id` assigned.
    Established {
        /// The Flow ID this side assigned.
        flow_id: u32,
    },
    /// CLOSE sent or received; state released.
    Closed(CloseReason),
}

/// Result of [`CrfNegotiation::on_hello`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HelloOutcome {
    /// New flow: HELLO_ACK sent. Register `flow_id` for this state and bind the
    /// peer to the HELLO's source address and port.
    Accepted {
        /// The assigned Flow ID.
        flow_id: u32,
    },
    /// The same HELLO again (same nonce): the same HELLO_ACK was sent again.
    Duplicate,
    /// A HELLO with a new nonce for an established flow: the CSF restarted.
    /// Everything of the old session (configurations, and the CRF engine's
    /// blocks) is dropped; re-register under `flow_id` and re-bind the peer.
    Restarted {
        /// The previous Flow ID (unregister it).
        old_flow_id: u32,
        /// The new Flow ID.
        flow_id: u32,
    },
    /// Not answered (counted).
    Ignored(Ignored),
}

/// Result of [`CrfNegotiation::on_param_update`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamOutcome {
    /// Accepted and acknowledged: reserve decoding resources for `config`.
    Accepted {
        /// The configuration.
        config: FecConfig,
    },
    /// A repeat of an acknowledged configuration: acknowledged again.
    Duplicate,
    /// Refused with this status (PARAM_ACK sent).
    Rejected(ParamStatus),
    /// Ignored (counted).
    Ignored(Ignored),
}

/// CRF negotiation counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrfNegCounters {
    /// HELLOs received.
    pub hello_received: u64,
    /// Repeated HELLOs answered again.
    pub hello_duplicate: u64,
    /// HELLOs with a new nonce for an established flow.
    pub hello_restart: u64,
    /// HELLOs of an unsupported Flow Kind.
    pub hello_unsupported: u64,
    /// HELLOs unanswered for lack of a Flow ID.
    pub hello_no_flow_id: u64,
    /// HELLO_ACKs sent.
    pub hello_ack_sent: u64,
    /// PARAM_UPDATEs received.
    pub param_update_received: u64,
    /// Repeated PARAM_UPDATEs acknowledged again.
    pub param_update_duplicate: u64,
    /// PARAM_UPDATEs reusing a held Config ID with other parameters (the CSF
    /// had released it; the old one is replaced).
    pub config_replaced: u64,
    /// PARAM_ACKs sent.
    pub param_ack_sent: u64,
    /// Configurations accepted.
    pub param_accepted: u64,
    /// Refused with status 1.
    pub param_rejected_scheme: u64,
    /// Refused with status 2.
    pub param_rejected_limits: u64,
    /// Refused with status 3.
    pub param_rejected_resources: u64,
    /// Configurations released.
    pub configs_released: u64,
    /// `block_opened` for a Config ID not held (REPAIR to be dropped).
    pub unknown_config: u64,
    /// `block_closed` for more blocks than were open.
    pub block_accounting_errors: u64,
    /// CLOSE messages sent.
    pub close_sent: u64,
    /// CLOSE messages received and applied.
    pub close_received: u64,
    /// Messages for another Flow ID or in the wrong state.
    pub ignored: u64,
    /// Messages that failed to encode (not expected to happen).
    pub encode_errors: u64,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    cfg: FecConfig,
    used: bool,
    effective: Psn,
    /// Order of acknowledgment (larger = newer).
    seq: u32,
    open_blocks: u32,
    superseded: bool,
}

const FREE: Slot = Slot {
    cfg: NO_CONFIG,
    used: false,
    effective: Psn::ZERO,
    seq: 0,
    open_blocks: 0,
    superseded: false,
};

/// The CRF's negotiation state for one flow (one HELLO's worth).
#[derive(Clone, Debug)]
pub struct CrfNegotiation {
    local: Limits,
    state: CrfState,
    hello: Option<Hello>,
    ack: Option<HelloAck>,
    effective: Limits,
    slots: [Slot; MAX_CONFIGS],
    /// Configurations held at most (≤ MAX_CONFIGS): the decoder's capacity.
    capacity: usize,
    seq: u32,
    counters: CrfNegCounters,
}

impl CrfNegotiation {
    /// State for a flow not yet seen, with the CRF's own `local` limits
    /// (including Max Open Blocks).
    pub fn new(local: Limits) -> CrfNegotiation {
        CrfNegotiation {
            local,
            state: CrfState::Idle,
            hello: None,
            ack: None,
            effective: local,
            slots: [FREE; MAX_CONFIGS],
            capacity: MAX_CONFIGS,
            seq: 0,
            counters: CrfNegCounters::default(),
        }
    }

    /// Holds at most `n` configurations (1..=[`MAX_CONFIGS`]): a PARAM_UPDATE
    /// beyond them is refused with status 3, so that nothing is acknowledged
    /// that the CRF engine (which holds [`super::super::crf::MAX_CONFIGS`])
    /// cannot take.
    pub fn set_config_capacity(&mut self, n: usize) {
        self.capacity = n.clamp(1, MAX_CONFIGS);
    }

    /// Releases configuration `config_id` now, whatever its block
    /// accounting (for a caller that tracks use itself); `false` if it was
    /// not held.
    pub fn release_config(&mut self, config_id: u8) -> bool {
        match self
            .slots
            .iter_mut()
            .find(|s| s.used && s.cfg.id == config_id)
        {
            Some(s) => {
                *s = FREE;
                inc(&mut self.counters.configs_released);
                true
            }
            None => false,
        }
    }

    /// Handles a HELLO for this flow (the caller matched it by addresses and
    /// Flow Label, or creates this state for a new flow). `new_flow_id` is
    /// called only when a Flow ID must be assigned; it returns a random unused
    /// non-zero value (see [`super::choose_flow_id`]) or `None`.
    pub fn on_hello<S: Sink + ?Sized>(
        &mut self,
        hello: &Hello,
        new_flow_id: impl FnOnce() -> Option<u32>,
        sink: &mut S,
    ) -> HelloOutcome {
        inc(&mut self.counters.hello_received);
        if FlowKind::from_u8(hello.flow_kind).is_none() {
            inc(&mut self.counters.hello_unsupported);
            return HelloOutcome::Ignored(Ignored::UnsupportedFlowKind);
        }
        let old = match (self.state, self.ack) {
            (CrfState::Established { flow_id }, Some(ack)) => {
                if ack.nonce == hello.nonce {
                    inc(&mut self.counters.hello_duplicate);
                    self.send_ack(&ack, sink);
                    return HelloOutcome::Duplicate;
                }
                Some(flow_id)
            }
            _ => None,
        };
        let Some(flow_id) = new_flow_id().filter(|&id| id != 0) else {
            inc(&mut self.counters.hello_no_flow_id);
            return HelloOutcome::Ignored(Ignored::NoFlowId);
        };
        if old.is_some() {
            inc(&mut self.counters.hello_restart);
        }
        self.release();
        let csf = Limits {
            schemes: (hello.supported_schemes & 0xff) as u8,
            max_k: hello.max_k,
            max_m: hello.max_m,
            max_t: hello.max_t,
            max_open_blocks: u16::MAX,
        };
        self.effective = self.local.min(&csf);
        let ack = HelloAck {
            flow_id,
            flow_kind: hello.flow_kind,
            af: hello.addrs.af(),
            supported_schemes: u16::from(self.local.schemes),
            max_k: self.local.max_k,
            max_m: self.local.max_m,
            max_t: self.local.max_t,
            rdma_mtu: hello.rdma_mtu,
            nonce: hello.nonce,
            max_open_blocks: self.local.max_open_blocks,
        };
        self.hello = Some(*hello);
        self.ack = Some(ack);
        self.state = CrfState::Established { flow_id };
        self.send_ack(&ack, sink);
        match old {
            Some(old_flow_id) => HelloOutcome::Restarted {
                old_flow_id,
                flow_id,
            },
            None => HelloOutcome::Accepted { flow_id },
        }
    }

    fn send_ack<S: Sink + ?Sized>(&mut self, ack: &HelloAck, sink: &mut S) {
        let c = &mut self.counters;
        emit(
            &Message::HelloAck(*ack),
            sink,
            &mut c.hello_ack_sent,
            &mut c.encode_errors,
        );
    }

    /// Handles a PARAM_UPDATE: validates it against the effective limits and
    /// answers PARAM_ACK (status 1 unsupported scheme, 2 limits exceeded, 3 no
    /// free configuration slot).
    pub fn on_param_update<S: Sink + ?Sized>(
        &mut self,
        pu: &ParamUpdate,
        sink: &mut S,
    ) -> ParamOutcome {
        inc(&mut self.counters.param_update_received);
        let flow_id = match check_flow(self.flow_id(), pu.flow_id, &mut self.counters.ignored) {
            Ok(flow_id) => flow_id,
            Err(why) => return ParamOutcome::Ignored(why),
        };
        let (status, outcome) = self.admit(pu);
        let ack = ParamAck {
            flow_id,
            config_id: pu.config_id,
            status,
        };
        let c = &mut self.counters;
        emit(
            &Message::ParamAck(ack),
            sink,
            &mut c.param_ack_sent,
            &mut c.encode_errors,
        );
        outcome
    }

    fn admit(&mut self, pu: &ParamUpdate) -> (ParamStatus, ParamOutcome) {
        let c = &mut self.counters;
        let scheme = match pu.scheme {
            FecScheme::Other(_) => None,
            s => scheme_of(s),
        };
        let Some(scheme) = scheme.filter(|s| self.effective.schemes & (1u8 << u8::from(*s)) != 0)
        else {
            inc(&mut c.param_rejected_scheme);
            return reject(ParamStatus::UnsupportedScheme);
        };
        let cfg = FecConfig {
            id: pu.config_id,
            scheme,
            k: pu.k,
            m: pu.m,
            t: pu.t,
        };
        // T must hold the length prefix, or no decoder could take it.
        if !self.effective.allows(&cfg) || !pu.indices_ok() || (cfg.t as usize) < LENGTH_PREFIX {
            inc(&mut c.param_rejected_limits);
            return reject(ParamStatus::LimitsExceeded);
        }
        if let Some(s) = self
            .slots
            .iter_mut()
            .find(|s| s.used && s.cfg.id == pu.config_id)
        {
            if s.cfg == cfg {
                // A retransmission or a re-send with a later Effective PSN.
                s.effective = pu.effective_psn;
                inc(&mut c.param_update_duplicate);
                return (ParamStatus::Accepted, ParamOutcome::Duplicate);
            }
            inc(&mut c.config_replaced);
            *s = FREE;
        }
        let held = self.slots.iter().filter(|s| s.used).count();
        let free = self.slots.iter_mut().find(|s| !s.used);
        let Some(s) = free.filter(|_| held < self.capacity) else {
            inc(&mut c.param_rejected_resources);
            return reject(ParamStatus::ResourcesExhausted);
        };
        self.seq = self.seq.wrapping_add(1);
        *s = Slot {
            cfg,
            used: true,
            effective: pu.effective_psn,
            seq: self.seq,
            open_blocks: 0,
            superseded: false,
        };
        inc(&mut c.param_accepted);
        (
            ParamStatus::Accepted,
            ParamOutcome::Accepted { config: cfg },
        )
    }

    /// An acknowledged, not released configuration (to validate a REPAIR's
    /// Config ID, scheme and k), with its latest Effective PSN.
    pub fn config(&self, config_id: u8) -> Option<(FecConfig, Psn)> {
        self.slots
            .iter()
            .find(|s| s.used && s.cfg.id == config_id)
            .map(|s| (s.cfg, s.effective))
    }

    /// The CRF engine opened a block with `config_id` (first REPAIR of the
    /// block). Returns the configuration, or `None` if it is not held (drop the
    /// REPAIR). Marks every configuration acknowledged before it superseded.
    pub fn block_opened(&mut self, config_id: u8) -> Option<FecConfig> {
        let Some(s) = self
            .slots
            .iter_mut()
            .find(|s| s.used && s.cfg.id == config_id)
        else {
            inc(&mut self.counters.unknown_config);
            return None;
        };
        s.open_blocks = s.open_blocks.saturating_add(1);
        let (cfg, seq) = (s.cfg, s.seq);
        for o in self.slots.iter_mut() {
            // Serial comparison of the acknowledgment order (wraps after 2^32).
            if o.used && (seq.wrapping_sub(o.seq) as i32) > 0 {
                o.superseded = true;
            }
        }
        self.sweep();
        Some(cfg)
    }

    /// The CRF engine closed (decoded, evicted or fell back) a block of
    /// `config_id`.
    pub fn block_closed(&mut self, config_id: u8) {
        match self
            .slots
            .iter_mut()
            .find(|s| s.used && s.cfg.id == config_id)
        {
            Some(s) => {
                if s.open_blocks == 0 {
                    inc(&mut self.counters.block_accounting_errors);
                }
                s.open_blocks = s.open_blocks.saturating_sub(1);
            }
            None => inc(&mut self.counters.unknown_config),
        }
        self.sweep();
    }

    /// Releases superseded configurations without open blocks.
    fn sweep(&mut self) {
        for s in self.slots.iter_mut() {
            if s.used && s.superseded && s.open_blocks == 0 {
                *s = FREE;
                inc(&mut self.counters.configs_released);
            }
        }
    }

    shared_negotiation_methods!(CrfState);

    fn release(&mut self) {
        self.slots = [FREE; MAX_CONFIGS];
        self.hello = None;
        self.ack = None;
        self.effective = self.local;
    }

    /// The accepted HELLO (flow descriptor, RDMA MTU, nonce).
    pub const fn hello(&self) -> Option<&Hello> {
        self.hello.as_ref()
    }

    /// RDMA MTU announced in HELLO (to derive READ response PSN counts).
    pub fn rdma_mtu(&self) -> Option<u16> {
        self.hello.map(|h| h.rdma_mtu)
    }

    /// Counters.
    pub const fn counters(&self) -> &CrfNegCounters {
        &self.counters
    }
}

fn reject(status: ParamStatus) -> (ParamStatus, ParamOutcome) {
    (status, ParamOutcome::Rejected(status))
}
