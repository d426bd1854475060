//! The simulated world: an RDMA sender, the CSF beside it, a forward and a
//! reverse [`Link`], the CRF and the RDMA receiver, driven by one event
//! queue in simulated nanoseconds.
//!
//! ```text
//!  Traffic ─▶ CSF.on_roce ─┬─ source ─────────▶ fwd link ─▶ CRF.on_source ─▶ Receiver
//!  (RDMA tx)   retain/store └─ REPAIR/HELLO/… ─▶ fwd link ─▶ CRF.on_repair / negotiation
//!      ▲                                                          │ restored / released
//!      └── ACK / NAK (real RoCE bytes) + REQUEST/LOSS_REPORT/… ◀── rev link
//! ```
//!
//! * Each end is crem-core's per-flow orchestration, as the kernel runs
//!   it: [`SenderFlow`] (negotiation, CSF, redundancy policy) and
//!   [`ReceiverFlow`] (negotiation, CRF, configuration lifecycle). HELLO /
//!   HELLO_ACK and PARAM_UPDATE / PARAM_ACK travel the links (and can be
//!   lost). With the policy on, LOSS_REPORTs drive the policy and its
//!   decisions are negotiated; with it off, one fixed (k, m) is negotiated
//!   at the start. The simulation only moves packets and messages, and
//!   watches: traces come from the flows' events and counters.
//! * SRTT is given to the flows as the configured RTT (the kernel would
//!   measure it from the negotiation exchanges).
//! * Every engine timer is honoured at its deadline; a CRF deadline at the
//!   current time (pending releases after `on_source`) runs right after the
//!   delivery, as the CRF's ordering contract asks.
//!
//! Integration choices the engines leave to their caller (the kernel glue
//! will face the same ones):
//!
//! * A source leaves on the link before the REPAIRs the CSF sends because
//!   of it. (Sending the block's repairs first, as a netfilter hook that
//!   transmits from inside the hook would, makes the CRF restore the
//!   block's last source from the repairs and then get the original too.)
//! * A CRF deadline at the current time after `on_source` is run before
//!   anything else (the CRF's ordering contract).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use crem_core::engine::crf::{self, CrfConfig, TcThresholds, Workspace};
use crem_core::engine::csf::{self, CsfIo, CsfParams, SourceVerdict};
use crem_core::engine::flow::{
    ReceiverEvent, ReceiverFlow, ReceiverParams, SenderEvent, SenderFlow, SenderParams,
};
use crem_core::engine::negotiation::{choose_flow_id, FlowDescriptor};
use crem_core::engine::policy::PolicyConfig;
use crem_core::engine::{Limits, Nanos, MS, SEC};
use crem_core::fec::{DecodeScratch, Scheme};
use crem_core::gf::MulTable;
use crem_core::psn::Psn;
use crem_core::wire::{self, CloseReason, FecScheme, FlowAddrs, Message};

use crate::caps::{Caps, Fixed, ModuleInVecs};
use crate::channel::{Class, Link, LossModel};
use crate::hosts::{CrfHost, CsfStore, Delivered, Outbox, Via};
use crate::report::{Report, Trace};
use crate::rng::Rng;
use crate::rx::{Receiver, ACK_DELAY};
use crate::traffic::{ack_packet, Packet, Traffic, TrafficModel, IP_UDP};

/// Retention ring of the simulated CSF (blocks).
pub const CSF_BLOCKS: usize = 1024;
/// Ordinary-repair accumulator octets (16 symbols of a 4096-MTU flow).
pub const CSF_ACC: usize = 16 * 4160;
/// CRF Max Open Blocks.
pub const CRF_BLOCKS: usize = 512;
/// CRF PSN window.
pub const CRF_WINDOW: usize = 16384;
/// CRF hold queue.
pub const CRF_HELD: usize = 4096;
/// CRF repair descriptors.
pub const CRF_REPAIRS: usize = 4096;
/// Largest m the simulated ends announce.
pub const MAX_M: u8 = 16;
/// CSF retention budget, the default of [`SimConfig::retention_budget`].
pub const RETENTION_BUDGET: u64 = 64 << 20;

/// Whose capacities the simulated flow has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// The simulation's own, large enough for the rates and RTTs it runs
    /// (the constants above).
    Sim,
    /// crem.ko's (`crem_core::engine::module_caps`): what the module can
    /// hold at a given rate and RTT.
    Module,
    /// crem.ko's for `max_bdp` packets in flight (`module_caps::caps_for`),
    /// in vectors allocated at run time as the module allocates each
    /// flow's; at the default `max_bdp` and k 32, reports identical to
    /// `Module`'s.
    #[serde(rename = "module-runtime")]
    ModuleRuntime,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sim => "sim",
            Engine::Module => "module",
            Engine::ModuleRuntime => "module-runtime",
        }
    }
}

/// How losses beyond the ordinary repairs are recovered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Recovery {
    /// Coded retransmission (REPAIR_REQUEST), then Source Copy fallback.
    Coded,
    /// Selective repeat: T/C AETH reports answered with Source Copy.
    Selective,
    /// Both at once.
    Both,
    /// No CREM at all: the RDMA fallback alone (baseline).
    Off,
}

impl Recovery {
    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Recovery::Coded => "coded",
            Recovery::Selective => "sr",
            Recovery::Both => "both",
            Recovery::Off => "off",
        }
    }
}

/// The RDMA transport's own recovery (see [`crate::rx`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RdmaModel {
    /// NAK this long after a gap becomes visible (0 = rxe: at once).
    pub nak_delay: Nanos,
    /// Re-NAK a position still missing / sender retransmission timeout.
    pub rto: Nanos,
}

impl RdmaModel {
    /// An RDMA transport slower than CREM: it NAKs a visible gap only after
    /// `4 · RTT + 20 ms`, so CREM's rounds are seen on their own.
    pub fn slow(rtt: Nanos) -> RdmaModel {
        RdmaModel {
            nak_delay: 4 * rtt + 20 * MS,
            rto: 4 * rtt + 20 * MS,
        }
    }

    /// rxe-like: NAK on the first out-of-sequence packet.
    pub fn prompt(rtt: Nanos) -> RdmaModel {
        RdmaModel {
            nak_delay: 0,
            rto: 2 * rtt + 10 * MS,
        }
    }
}

/// Everything one run depends on.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SimConfig {
    /// Seed of every random stream.
    pub seed: u64,
    /// Source packets the RDMA sender sends (first transmissions).
    pub packets: u32,
    /// Source packet rate (packets per second while not paused).
    pub pps: u64,
    /// Bottleneck rate of each direction, bits per second.
    pub link_bps: u64,
    /// Round-trip propagation time.
    pub rtt: Nanos,
    /// Forward path (data, REPAIR, CSF control).
    pub fwd: LossModel,
    /// Reverse path (ACK/NAK, CRF messages).
    pub rev: LossModel,
    /// Extra independent loss of CREM messages, both directions.
    pub crem_loss: f64,
    /// Indices (in emission order) of packets whose first transmission is
    /// dropped, besides the loss model.
    pub drop_script: Vec<u32>,
    /// Block size (fixed, or the policy's k).
    pub k: u8,
    /// Ordinary repairs per block with the policy off.
    pub m: u8,
    /// Adaptive redundancy policy on.
    pub policy: bool,
    /// Recovery mode.
    pub recovery: Recovery,
    /// RDMA transport model.
    pub rdma: RdmaModel,
    /// Traffic shape.
    pub traffic: TrafficModel,
    /// First PSN.
    pub start_psn: u32,
    /// Time traffic starts (negotiation runs before).
    pub start_at: Nanos,
    /// CSF spreads ordinary repairs over the following sources instead of
    /// sending them back to back when a block closes.
    pub spread: bool,
    /// Engine capacities: the simulation's or the module's.
    pub engine: Engine,
    /// Packets in flight the module's flows are sized for (its netns's
    /// `max-bdp`), with [`Engine::ModuleRuntime`].
    pub max_bdp: u32,
    /// Octets the CSF may retain ([`CsfParams::retention_budget`]: beyond,
    /// it gives its oldest blocks up, counted); a run retaining more than
    /// this is reported as reaching a capacity.
    pub retention_budget: u64,
    /// The CRF's hold time H, and its reordering allowance with it; `None`:
    /// the RECOMMENDED value for k, the rate and the RTT
    /// ([`crf::hold_time_for`]).
    pub hold: Option<Nanos>,
}

impl SimConfig {
    /// A 20 000 packet/s flow over a 1 Gbit/s path, k = 32, m = 4, coded
    /// recovery, policy off, slow RDMA fallback.
    pub fn new(seed: u64, rtt: Nanos) -> SimConfig {
        SimConfig {
            seed,
            packets: 5000,
            pps: 20_000,
            link_bps: 1_000_000_000,
            rtt,
            fwd: LossModel::CLEAN,
            rev: LossModel::CLEAN,
            crem_loss: 0.0,
            drop_script: Vec::new(),
            k: 32,
            m: 4,
            policy: false,
            recovery: Recovery::Coded,
            rdma: RdmaModel::slow(rtt),
            traffic: TrafficModel::DEFAULT,
            start_psn: 0x00_1000,
            start_at: 2 * rtt + 5 * MS,
            spread: false,
            engine: Engine::Sim,
            max_bdp: crem_core::engine::module_caps::MAX_BDP_DEFAULT,
            retention_budget: RETENTION_BUDGET,
            hold: None,
        }
    }

    /// Symbol length T for the flow's MTU: BTH + RETH + MTU + ICRC + 2.
    pub fn symbol_len(&self) -> u16 {
        (12 + 16 + self.traffic.mtu + 4 + 2).min(u16::MAX as u32) as u16
    }
}

/// One source packet as sent, with its fate.
pub(crate) struct Pkt {
    pub(crate) p: Packet,
    /// Position (PSN offset from the first PSN).
    pub(crate) pos: u32,
    /// When the first transmission reached (or would have reached) the CRF.
    pub(crate) nominal: Nanos,
    pub(crate) orig_dropped: bool,
    pub(crate) orig_reordered: bool,
    pub(crate) rdma_retx: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Tm {
    Csf = 0,
    Crf = 1,
    Ack = 2,
    Nak = 3,
    Rto = 4,
}
const TIMERS: usize = 5;

enum Ev {
    Emit,
    /// A source packet (index into `pkts`) reaches the CRF.
    Src(u32, Via),
    /// A CSF message reaches the CRF side.
    ToCrf(Vec<u8>),
    /// An RDMA ACK/NAK reaches the sender side (NAK: positions to resend).
    Ack(Vec<u8>, Vec<u32>),
    /// A CRF message reaches the CSF side.
    ToCsf(Vec<u8>),
    Timer(Tm),
}

struct Item {
    t: Nanos,
    seq: u64,
    ev: Ev,
}
impl PartialEq for Item {
    fn eq(&self, o: &Self) -> bool {
        (self.t, self.seq) == (o.t, o.seq)
    }
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}

/// Mutable simulation state.
/// One run; `K` gives the engines and their capacities ([`Engine`]).
pub(crate) struct World<'c, K: Caps> {
    pub(crate) cfg: &'c SimConfig,
    pub(crate) now: Nanos,
    seq: u64,
    queue: BinaryHeap<Item>,
    armed: [Option<Nanos>; TIMERS],
    spin: (Nanos, u32),
    fwd: Link,
    rev: Link,
    rng: Rng,
    // RDMA sender.
    traffic: Traffic,
    pub(crate) first: Psn,
    pub(crate) pkts: Vec<Pkt>,
    /// Position → packet index (u32::MAX = absent).
    pub(crate) pos_pkt: Vec<u32>,
    next_pos: u32,
    emitted: u32,
    drop_script: Vec<bool>,
    snd_acked: u32,
    snd_progress: Nanos,
    pub(crate) emit_done_at: Option<Nanos>,
    // CSF side.
    pub(crate) snd: Box<SenderFlow<K::Csf>>,
    csf_store: CsfStore,
    csf_out: Outbox,
    scratch: Vec<u8>,
    gf: Box<MulTable>,
    // CRF side.
    pub(crate) rcv: Box<ReceiverFlow<K::Crf>>,
    pub(crate) host: CrfHost,
    ws_scratch: Box<DecodeScratch>,
    ws_out: Vec<u8>,
    held_checks: u64,
    // RDMA receiver.
    pub(crate) rx: Receiver,
    // Measurements.
    pub(crate) tr: Trace,
}

fn local_limits(t: u16, open_blocks: u16) -> Limits {
    Limits {
        schemes: 0b111,
        max_k: 255,
        max_m: MAX_M,
        max_t: t,
        max_open_blocks: open_blocks,
    }
}

impl<'c, K: Caps> World<'c, K> {
    fn new(cfg: &'c SimConfig) -> Result<Self, String> {
        let caps = K::crf_caps(cfg);
        let t = cfg.symbol_len();
        let first = Psn::new(cfg.start_psn);
        let interval = SEC / cfg.pps.max(1);
        let owd = cfg.rtt / 2;
        let th = TcThresholds::from_rate(cfg.pps, cfg.rtt);
        let (selective, coded) = match cfg.recovery {
            Recovery::Coded => (false, true),
            Recovery::Selective => (true, false),
            Recovery::Both => (true, true),
            Recovery::Off => (false, false),
        };
        let csf_params = CsfParams {
            idle_timeout: (4 * interval).max(100_000),
            retention_budget: cfg.retention_budget,
            // The module's store is a ring by PSN (its `retention_span`).
            retention_span: module_ring(cfg),
            initial_srtt: cfg.rtt,
            selective_repeat: selective,
            tail_info: coded,
            tc_batch_time: th.t_thresh,
            tc_ack_timeout: (4 * cfg.rtt).max(100 * MS),
            spread: cfg.spread,
            spread_deadline: (cfg.k as u64 * interval).max(MS),
            ..CsfParams::DEFAULT
        };
        // An H set for the scenario is an operator's: the allowance is
        // then the module's (a quarter RTT within H, `RttRule::KeepHold`).
        let (hold, allowance) = match cfg.hold {
            Some(h) => (h, crf::reorder_allowance_for(cfg.rtt, h)),
            None => {
                let h = crf::hold_time_for(cfg.k, cfg.pps, cfg.rtt);
                (h, h.max(100_000))
            }
        };
        let crf_cfg = CrfConfig {
            flow_id: 0,
            hold_time: hold,
            reorder_allowance: allowance,
            srtt: cfg.rtt,
            // H and the allowance as the scenario sets them; the SRTT is
            // measured.
            rtt_rule: crf::RttRule::Fixed,
            rdma_mtu: cfg.traffic.mtu,
            coded_retx: coded,
            fallback_source_copy: true,
            loss_ppm: 0,
            tc: selective.then_some(th),
            // The scenario's rate is known.
            tc_follows: false,
            responses: false,
            // The RDMA model resends the NAKed PSNs only: no go-back-N
            // pass for the CRF to replay losses into.
            replay: false,
        };
        let flow = FlowDescriptor {
            addrs: FlowAddrs::V4 {
                src: [192, 0, 2, 1],
                dst: [192, 0, 2, 2],
            },
            dest_qp: crate::traffic::DEST_QP,
            rdma_mtu: cfg.traffic.mtu.min(u16::MAX as u32) as u16,
            kind: crem_core::wire::FlowKind::Requests,
        };
        let block_time = cfg.k as u64 * interval;
        let snd = SenderParams {
            csf: csf_params,
            policy: cfg.policy.then_some(PolicyConfig {
                k: cfg.k,
                ..PolicyConfig::DEFAULT
            }),
            fixed_k: cfg.k,
            fixed_m: cfg.m,
            scheme: Scheme::CauchyRs,
            t,
            // The simulated traffic's MTU is known: T stays.
            t_follows_mtu: false,
            // Code from the first packet, as the module does.
            early: true,
            rtt_hint: cfg.rtt,
            block_time_hint: block_time,
            // About one RTT of packets plus margin, so that PARAM_ACK
            // normally comes first; kept below the policy's hysteresis so
            // that a proposal usually takes effect before the next one
            // supersedes it.
            psn_lead: (cfg.pps * cfg.rtt / SEC * 5 / 4 + 16) as u32,
            // A CRF without coded retransmission sends no requests: no
            // round to count on.
            peer_hold: if coded { cfg.hold.unwrap_or(0) } else { 0 },
            limits: local_limits(t, u16::MAX),
            flow,
            initial_psn: first,
        };
        let rcv = ReceiverParams {
            crf: crf_cfg,
            limits: local_limits(t, caps.blocks.min(u16::MAX as usize) as u16),
            block_time,
        };
        let mut gf: Box<MulTable> = Box::new(MulTable {
            rows: [[0; 256]; 256],
        });
        gf.init();
        let mut drop_script = vec![false; cfg.packets as usize];
        for &i in &cfg.drop_script {
            if let Some(d) = drop_script.get_mut(i as usize) {
                *d = true;
            }
        }
        let rcv = K::receiver(cfg, rcv).map_err(|e| format!("CRF storage refused: {e:?}"))?;
        Ok(World {
            cfg,
            now: 0,
            seq: 0,
            queue: BinaryHeap::new(),
            armed: [None; TIMERS],
            spin: (0, 0),
            fwd: Link::new(
                cfg.seed,
                1,
                cfg.link_bps,
                owd,
                cfg.fwd,
                cfg.crem_loss,
                cfg.pps,
            ),
            rev: Link::new(
                cfg.seed,
                2,
                cfg.link_bps,
                owd,
                cfg.rev,
                cfg.crem_loss,
                cfg.pps,
            ),
            rng: Rng::new(cfg.seed, 7),
            traffic: Traffic::new(cfg.traffic, cfg.seed, first),
            first,
            pkts: Vec::with_capacity(cfg.packets as usize),
            pos_pkt: Vec::new(),
            next_pos: 0,
            emitted: 0,
            drop_script,
            snd_acked: 0,
            snd_progress: 0,
            emit_done_at: None,
            snd: K::sender(cfg, snd),
            csf_store: CsfStore {
                ring_slots: module_ring(cfg),
                ..CsfStore::default()
            },
            csf_out: Outbox::default(),
            scratch: vec![0; csf::scratch_len(t)],
            gf,
            rcv,
            host: CrfHost::new(caps.window, caps.repairs),
            ws_scratch: Box::new(DecodeScratch::new()),
            ws_out: vec![0; 255 * t as usize],
            held_checks: 0,
            rx: Receiver::new(),
            tr: Trace::default(),
        })
    }

    fn push(&mut self, t: Nanos, ev: Ev) {
        self.seq += 1;
        self.queue.push(Item {
            t,
            seq: self.seq,
            ev,
        });
    }

    fn violation(&mut self, what: String) {
        if self.tr.violations.len() < 50 {
            self.tr.violations.push(what);
        } else {
            self.tr.violations_more += 1;
        }
    }

    fn arm(&mut self, tm: Tm, d: Option<Nanos>) {
        let Some(d) = d else {
            return;
        };
        let d = d.max(self.now);
        let i = tm as usize;
        if self.armed[i].is_none_or(|a| d < a) {
            self.armed[i] = Some(d);
            self.push(d, Ev::Timer(tm));
        }
    }

    fn rearm(&mut self) {
        if self.cfg.recovery != Recovery::Off {
            self.arm(Tm::Csf, self.snd.next_deadline());
            self.arm(Tm::Crf, self.rcv.next_deadline());
        }
        self.arm(Tm::Nak, self.rx.nak_deadline());
        if self.snd_acked < self.next_pos {
            self.arm(Tm::Rto, Some(self.snd_progress + self.cfg.rdma.rto));
        }
    }

    // ------------------------------------------------------------------
    // Main loop.

    fn run(&mut self) {
        if self.cfg.recovery != Recovery::Off {
            let nonce = self.rng.next_u64();
            self.snd.start(0, nonce, &mut self.csf_out);
            self.flush_csf();
        }
        self.push(self.cfg.start_at, Ev::Emit);
        let mut stop_at = Nanos::MAX;
        let hard = self.cfg.start_at
            + (self.cfg.packets as u64 + 1) * SEC / self.cfg.pps.max(1)
            + 200 * self.cfg.rtt
            + 60 * SEC;
        while let Some(it) = self.queue.pop() {
            if it.t > stop_at || it.t > hard {
                break;
            }
            self.now = it.t;
            match it.ev {
                Ev::Emit => self.emit(),
                Ev::Src(i, via) => self.src_arrives(i, via),
                Ev::ToCrf(m) => self.crf_msg(&m),
                Ev::Ack(b, nak) => self.ack_arrives(&b, &nak),
                Ev::ToCsf(m) => self.csf_msg(&m),
                Ev::Timer(tm) => self.timer(tm, it.t),
            }
            self.rearm();
            if stop_at == Nanos::MAX && self.finished() {
                stop_at = self.now + 2 * self.cfg.rtt + 20 * MS;
            }
        }
        self.tr.end = self.now;
        if stop_at == Nanos::MAX {
            self.violation(format!(
                "did not finish by {} ms: {} of {} positions had",
                self.now / MS,
                self.rx.epos,
                self.next_pos
            ));
        }
        self.finish();
    }

    fn finished(&self) -> bool {
        self.emit_done_at.is_some()
            && self.rx.epos >= self.next_pos
            && self.snd_acked >= self.next_pos
    }

    fn timer(&mut self, tm: Tm, t: Nanos) {
        let i = tm as usize;
        if self.armed[i] != Some(t) {
            return;
        }
        self.armed[i] = None;
        if self.spin.0 == t {
            self.spin.1 += 1;
            if self.spin.1 == 10_000 {
                self.violation(format!("timer {tm:?} spins at {t} ns"));
            }
            if self.spin.1 >= 10_000 {
                return;
            }
        } else {
            self.spin = (t, 0);
        }
        match tm {
            Tm::Csf => {
                let io = &mut CsfIo {
                    gf: &*self.gf,
                    sink: &mut self.csf_out,
                    store: &mut self.csf_store,
                    scratch: &mut self.scratch[..],
                };
                let ev = self.snd.on_timer(self.now, io);
                self.sender_event(ev);
                self.after_csf();
            }
            Tm::Crf => {
                self.crf_timer();
                self.after_crf();
            }
            Tm::Ack => self.send_ack(false, Vec::new()),
            Tm::Nak => {
                let list = self.rx.nak_check(self.now, self.cfg.rdma.rto);
                if !list.is_empty() {
                    let e = self.rx.epos;
                    let highest = self.next_pos.saturating_sub(1);
                    self.tr.gbn_counterfactual += u64::from(highest.saturating_sub(e) + 1);
                    self.send_ack(true, list);
                }
            }
            Tm::Rto => {
                if self.snd_acked < self.next_pos
                    && self.now >= self.snd_progress + self.cfg.rdma.rto
                {
                    // Retransmission timeout: resend the first unacked
                    // present position (tail losses have no later packet to
                    // make them visible).
                    let mut p = self.snd_acked;
                    while p < self.next_pos && self.pos_pkt[p as usize] == u32::MAX {
                        p += 1;
                    }
                    if p < self.next_pos {
                        self.tr.rto_fired += 1;
                        let i = self.pos_pkt[p as usize];
                        self.rdma_retransmit(i);
                    }
                    self.snd_progress = self.now;
                }
            }
        }
    }

    // ------------------------------------------------------------------
    // RDMA sender and the CSF.

    fn emit(&mut self) {
        let (p, gap) = self.traffic.next_packet();
        let idx = self.pkts.len() as u32;
        let pos = self.first.forward_distance(p.psn);
        debug_assert_eq!(pos, self.next_pos);
        self.pos_pkt.resize((pos + p.span) as usize, u32::MAX);
        self.pos_pkt[pos as usize] = idx;
        self.next_pos = pos + p.span;
        if self.snd_acked >= pos {
            self.snd_progress = self.now;
        }
        // The source leaves first; what the CSF sends because of it (the
        // block's repairs when it closes the block) follows it on the link.
        let force = self.drop_script[idx as usize];
        let f = self
            .fwd
            .send(self.now, p.bytes.len() + IP_UDP, Class::Original, force);
        let (bytes, psn) = (p.bytes.clone(), p.psn);
        self.pkts.push(Pkt {
            p,
            pos,
            nominal: f.nominal,
            orig_dropped: f.dropped,
            orig_reordered: f.reordered,
            rdma_retx: 0,
        });
        if !f.dropped {
            self.push(f.arrive, Ev::Src(idx, Via::Original));
        }
        self.csf_sees(&bytes, psn, false);
        self.emitted += 1;
        if self.emitted < self.cfg.packets {
            let interval = SEC / self.cfg.pps.max(1);
            self.push(self.now + interval + gap, Ev::Emit);
        } else {
            self.emit_done_at = Some(self.now);
        }
    }

    /// The CSF sees a packet of the protected direction.
    fn csf_sees(&mut self, bytes: &[u8], psn: Psn, retx: bool) {
        if self.cfg.recovery == Recovery::Off {
            return;
        }
        let io = &mut CsfIo {
            gf: &*self.gf,
            sink: &mut self.csf_out,
            store: &mut self.csf_store,
            scratch: &mut self.scratch[..],
        };
        let v = self.snd.on_source(self.now, bytes, io);
        match v {
            SourceVerdict::Retain => {
                if !self.csf_store.keep(psn, bytes) {
                    self.violation(format!("CSF retained PSN {} twice", psn.value()));
                }
            }
            SourceVerdict::Retransmission => {
                if !retx {
                    self.violation(format!(
                        "CSF: new PSN {} seen as retransmission",
                        psn.value()
                    ));
                }
            }
            SourceVerdict::NotRetained => self.tr.csf_not_retained += 1,
            SourceVerdict::Unprotected => self.tr.unprotected += 1,
            SourceVerdict::NotSource => self.violation("CSF: source seen as NotSource".into()),
        }
        self.after_csf();
    }

    fn after_csf(&mut self) {
        if self.csf_store.octets != self.snd.retention_octets() {
            let (a, b) = (self.csf_store.octets, self.snd.retention_octets());
            self.violation(format!("CSF retention gauge {b} != retained octets {a}"));
            self.csf_store.octets = b;
        }
        self.flush_csf();
    }

    fn flush_csf(&mut self) {
        let msgs = std::mem::take(&mut self.csf_out.msgs);
        for m in msgs {
            self.tr.note_csf_msg(self.now, &m);
            let f = self
                .fwd
                .send(self.now, m.len() + IP_UDP, Class::Crem, false);
            if !f.dropped {
                self.push(f.arrive, Ev::ToCrf(m));
            }
        }
    }

    fn rdma_retransmit(&mut self, i: u32) {
        let (bytes, psn) = {
            let p = &mut self.pkts[i as usize];
            p.rdma_retx += 1;
            (p.p.bytes.clone(), p.p.psn)
        };
        self.tr.rdma_retx += 1;
        let f = self
            .fwd
            .send(self.now, bytes.len() + IP_UDP, Class::Retx, false);
        if !f.dropped {
            self.push(f.arrive, Ev::Src(i, Via::RdmaRetx));
        }
        self.csf_sees(&bytes, psn, true);
    }

    /// An RDMA ACK or NAK reaches the sender (and the CSF beside it).
    fn ack_arrives(&mut self, bytes: &[u8], nak: &[u32]) {
        if self.cfg.recovery != Recovery::Off {
            self.snd.on_reverse(self.now, bytes, &mut self.csf_store);
            self.after_csf();
        }
        if let Ok(pkt) = crem_core::roce::RocePacket::parse(bytes) {
            if let Some(a) = pkt.acked_through() {
                let upto = self.first.forward_distance(a.next());
                if upto <= self.next_pos && upto > self.snd_acked {
                    self.snd_acked = upto;
                    self.snd_progress = self.now;
                }
            }
        }
        for &pos in nak {
            if let Some(&i) = self.pos_pkt.get(pos as usize) {
                if i != u32::MAX {
                    self.rdma_retransmit(i);
                }
            }
        }
    }

    /// A message from the CRF reaches the CSF side.
    fn csf_msg(&mut self, m: &[u8]) {
        let Ok(msg) = wire::decode(m) else {
            self.violation("CSF side: undecodable message".into());
            return;
        };
        let before = (*self.snd.counters(), self.snd.param_rejected_hard());
        let io = &mut CsfIo {
            gf: &*self.gf,
            sink: &mut self.csf_out,
            store: &mut self.csf_store,
            scratch: &mut self.scratch[..],
        };
        let ev = self.snd.on_message(self.now, &msg, io);
        self.sender_event(ev);
        let c = *self.snd.counters();
        if c.unexpected != before.0.unexpected {
            self.violation(format!("CSF side got {:?}", msg.msg_type()));
        }
        if c.csf_refused_config != before.0.csf_refused_config {
            self.violation("CSF refused a negotiated config".into());
        }
        if self.snd.param_rejected_hard() != before.1 {
            self.violation(format!("PARAM_UPDATE rejected: {msg:?}"));
        }
        self.after_csf();
    }

    /// Traces what the sender flow reports.
    fn sender_event(&mut self, ev: Option<SenderEvent>) {
        match ev {
            Some(SenderEvent::Established { .. }) => self.tr.established_at = Some(self.now),
            Some(SenderEvent::ConfigChanged(c)) => self.tr.configs.push((self.now, c.k, c.m)),
            Some(SenderEvent::BreakerTripped) => self.tr.breaker_trips += 1,
            Some(SenderEvent::Closed { by_peer: true, .. }) => self.tr.closes_received += 1,
            Some(SenderEvent::Closed { reason, .. }) => match reason {
                CloseReason::CircuitBreaker => self.tr.breaker_closes += 1,
                CloseReason::ParamSyncFailed => self.tr.param_sync_failed += 1,
                r => self.violation(format!("sender closed: {r:?}")),
            },
            Some(SenderEvent::GaveUp) => self.tr.hello_gave_up = true,
            Some(SenderEvent::BreakerCleared) | None => {}
        }
    }

    // ------------------------------------------------------------------
    // The CRF and the RDMA receiver.

    fn src_arrives(&mut self, i: u32, via: Via) {
        let (psn, pos, span) = {
            let p = &self.pkts[i as usize];
            (p.p.psn, p.pos, p.p.span)
        };
        if self.cfg.recovery == Recovery::Off {
            let bytes = self.pkts[i as usize].p.bytes.clone();
            self.host.delivered.push(Delivered { psn, bytes, via });
            self.drain_deliveries();
            let _ = (pos, span);
            return;
        }
        let verdict = {
            let bytes = &self.pkts[i as usize].p.bytes;
            self.rcv
                .on_source(self.now, psn, bytes, false, &mut self.host)
        };
        match verdict {
            crf::SourceVerdict::Deliver => {
                let bytes = self.pkts[i as usize].p.bytes.clone();
                self.host.delivered.push(Delivered { psn, bytes, via });
            }
            crf::SourceVerdict::Hold => {
                let bytes = self.pkts[i as usize].p.bytes.clone();
                self.host.hold(psn, bytes, via);
            }
            // Its copy was delivered by the CRF.
            crf::SourceVerdict::Replaced => {}
        }
        self.drain_deliveries();
        // Releases left pending by on_source run right after the delivery.
        let mut n = 0;
        while self.rcv.next_deadline().is_some_and(|d| d <= self.now) {
            self.crf_timer();
            n += 1;
            if n > 100 {
                self.violation(format!("CRF deadline stays due at {} ns", self.now));
                break;
            }
        }
        self.after_crf();
    }

    fn crf_timer(&mut self) {
        let mut ws = Workspace {
            gf: &*self.gf,
            scratch: &mut self.ws_scratch,
            out: &mut self.ws_out[..],
        };
        self.rcv.on_timer(self.now, &mut self.host, &mut ws);
        self.drain_deliveries();
    }

    /// After a CRF call: pass deliveries on, send its messages.
    fn after_crf(&mut self) {
        self.drain_deliveries();
        let msgs = std::mem::take(&mut self.host.out.msgs);
        for m in msgs {
            self.tr.note_crf_msg(&m);
            self.send_rev_crem(m);
        }
        // `Crf::held` scans the whole window: check it now and then.
        self.held_checks = self.held_checks.wrapping_add(1);
        if self.held_checks % 64 == 0 {
            let (a, b) = (self.rcv.crf().held(), self.host.held.len());
            if a != b {
                self.violation(format!("CRF says {a} held, host holds {b}"));
            }
        }
    }

    fn send_rev_crem(&mut self, m: Vec<u8>) {
        let f = self
            .rev
            .send(self.now, m.len() + IP_UDP, Class::Crem, false);
        if !f.dropped {
            self.push(f.arrive, Ev::ToCsf(m));
        }
    }

    /// A CSF message reaches the CRF side.
    fn crf_msg(&mut self, m: &[u8]) {
        let Ok(msg) = wire::decode(m) else {
            self.violation("CRF side: undecodable message".into());
            return;
        };
        if let Message::Repair(r) = &msg {
            if r.scheme == FecScheme::SourceCopy {
                self.host.note_session(
                    r.block_start.wrapping_add(u32::from(r.repair_index)),
                    r.session_id,
                );
            } else if let Some(l) = r.lost {
                for j in l.iter() {
                    self.host
                        .note_session(r.block_start.wrapping_add(j as u32), r.session_id);
                }
            }
        }
        let before = *self.rcv.counters();
        let mut ws = Workspace {
            gf: &*self.gf,
            scratch: &mut self.ws_scratch,
            out: &mut self.ws_out[..],
        };
        let rng = &mut self.rng;
        let ev = self.rcv.on_message(
            self.now,
            &msg,
            false,
            || choose_flow_id(|| rng.next_u32(), |_| false),
            &mut self.host,
            &mut ws,
        );
        if let Some(ReceiverEvent::ConfigRefused { .. }) = ev {
            self.tr.param_refused_room += 1;
        }
        let c = *self.rcv.counters();
        if c.unexpected != before.unexpected {
            self.violation(format!("CRF side got {:?}", msg.msg_type()));
        }
        if c.engine_refused != before.engine_refused {
            self.violation("CRF engine refused an acknowledged config".into());
        }
        self.after_crf();
    }

    /// Passes what the CRF released to the RDMA receiver, checking bytes.
    fn drain_deliveries(&mut self) {
        let ds = std::mem::take(&mut self.host.delivered);
        for d in ds {
            let pos = self.first.forward_distance(d.psn);
            let idx = self.pos_pkt.get(pos as usize).copied().unwrap_or(u32::MAX);
            if idx == u32::MAX || pos >= self.next_pos {
                self.violation(format!("delivered PSN {} was never sent", d.psn.value()));
                continue;
            }
            let (span, exact) = {
                let p = &self.pkts[idx as usize].p;
                (p.span, p.bytes == d.bytes)
            };
            if !exact {
                self.violation(format!(
                    "PSN {} delivered ({:?}) differs from the sent packet",
                    d.psn.value(),
                    d.via
                ));
                continue;
            }
            if !crate::traffic::icrc_ok(&d.bytes) {
                self.violation(format!("PSN {} delivered with a bad ICRC", d.psn.value()));
            }
            let out = self
                .rx
                .deliver(self.now, pos, span, d.via, self.cfg.rdma.nak_delay);
            if out.ack_now {
                self.send_ack(false, Vec::new());
            } else if let Some(t) = out.ack_at {
                self.arm(Tm::Ack, Some(t));
            }
        }
    }

    /// The RDMA receiver sends a cumulative ACK, or a NAK listing positions.
    fn send_ack(&mut self, nak: bool, list: Vec<u32>) {
        let e = self.rx.ack_sent();
        if e == 0 && !nak {
            return;
        }
        let psn = if nak {
            self.first.wrapping_add(e)
        } else {
            self.first.wrapping_add(e - 1)
        };
        self.armed[Tm::Ack as usize] = None;
        let bytes = ack_packet(psn, nak, e);
        let f = self
            .rev
            .send(self.now, bytes.len() + IP_UDP, Class::Original, false);
        if nak {
            self.tr.naks_sent += 1;
        }
        if !f.dropped {
            self.push(f.arrive, Ev::Ack(bytes, list));
        }
        let _ = ACK_DELAY;
    }

    // ------------------------------------------------------------------
    // End of run.

    fn finish(&mut self) {
        if self.cfg.recovery != Recovery::Off {
            if !self.host.held.is_empty() {
                let n = self.host.held.len();
                self.violation(format!("{n} packets still held at the end"));
            }
            self.rcv.close(CloseReason::Normal, &mut self.host);
            self.drain_deliveries();
            self.snd.shutdown(&mut self.csf_store);
            if !self.csf_store.pkts.is_empty() || self.snd.retention_octets() != 0 {
                let n = self.csf_store.pkts.len();
                self.violation(format!("CSF store holds {n} packets after shutdown"));
            }
            if self.csf_store.ring_overwritten > 0 {
                self.violation(format!(
                    "CSF: {} retained PSNs would overwrite another in the module's {}-slot store",
                    self.csf_store.ring_overwritten, self.csf_store.ring_slots
                ));
            }
            if self.csf_store.bad_release > 0 {
                self.violation("CSF released an empty or over-long range".into());
            }
            if self.host.sources_kept() > 0 || self.host.repairs_kept() > 0 {
                self.violation(format!(
                    "CRF store holds {} sources, {} repairs after close",
                    self.host.sources_kept(),
                    self.host.repairs_kept()
                ));
            }
        }
    }
}

/// The slots of the module's CSF store (a ring by PSN) when its engine is
/// simulated; 0 (a map, no ring) otherwise.
pub(crate) fn module_ring(c: &SimConfig) -> u32 {
    use crem_core::engine::module_caps::{caps_for, CSF_STORE_SLOTS};
    match c.engine {
        Engine::Module => CSF_STORE_SLOTS as u32,
        Engine::ModuleRuntime => caps_for(c.max_bdp, c.k).csf_store as u32,
        Engine::Sim => 0,
    }
}

/// Runs one simulation (in a thread with a large stack: the engines are
/// built by value). A panic in an engine is reported as `Err`.
pub fn run(cfg: &SimConfig) -> Result<Report, String> {
    let c = cfg.clone();
    let h = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || match c.engine {
            Engine::Sim => simulate::<
                Fixed<CSF_BLOCKS, CSF_ACC, CRF_BLOCKS, CRF_WINDOW, CRF_HELD, CRF_REPAIRS>,
            >(&c),
            Engine::Module => {
                use crem_core::engine::module_caps as m;
                simulate::<
                    Fixed<
                        { m::CSF_BLOCKS },
                        { m::CSF_ACC },
                        { m::CRF_BLOCKS },
                        { m::CRF_WINDOW },
                        { m::CRF_HELD },
                        { m::CRF_REPAIRS },
                    >,
                >(&c)
            }
            Engine::ModuleRuntime => simulate::<ModuleInVecs>(&c),
        })
        .map_err(|e| e.to_string())?;
    h.join().map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    })?
}

fn simulate<K: Caps>(c: &SimConfig) -> Result<Report, String> {
    let mut w = World::<K>::new(c)?;
    w.run();
    Ok(w.analyse())
}

/// Per-block coded-retransmission bookkeeping (by Block Start PSN).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BlockRetx {
    pub(crate) k: u8,
    pub(crate) retx_symbols: u32,
    pub(crate) source_copies: u32,
    pub(crate) max_lost_named: u32,
}

pub(crate) type BlockMap = HashMap<u32, BlockRetx>;
