//! `SenderFlow` and `ReceiverFlow` driven against each other, and the
//! Config-ID lifecycle fixes (engine finding 3).

mod crf_util;
mod flow_util;

use std::alloc::{alloc, Layout};

use crem_core::engine::crf::{CrfConfig, SourceVerdict as CrfVerdict, MAX_CONFIGS};
use crem_core::engine::csf::{scratch_len, CsfIo, SourceVerdict};
use crem_core::engine::flow::{
    FlowState, ReceiverEvent, ReceiverParams, SenderEvent, SenderParams,
};
use crem_core::engine::negotiation::{CrfNegotiation, CsfNegotiation, ProposeError};
use crem_core::engine::{FecConfig, Nanos, MS};
use crem_core::fec::Scheme;
use crem_core::gf::RowPerCall;
use crem_core::psn::Psn;
use crem_core::roce::{self, Bth};
use crem_core::wire::FlowKind;
use crem_core::wire::{
    self, Bitmap256, FecScheme, Hello, Message, ParamStatus, ParamUpdate, Repair,
};
use crf_util::{send_packet, Host, Ws};
use flow_util::{csf_source, flow, limits, Out, Rcv, Snd, Store, T, US};

fn sender_params(k: u8, m: u8) -> SenderParams {
    flow_util::sender_params(k, m, MS)
}

fn receiver_params() -> ReceiverParams {
    let mut crf = CrfConfig::new(0);
    crf.hold_time = 0;
    crf.reorder_allowance = 100 * US;
    crf.srtt = MS;
    ReceiverParams {
        crf,
        limits: limits(16),
        block_time: 0,
    }
}

/// [`receiver_params`] with T/C AETH reports on (selective repeat): a
/// report a millisecond or four PSNs.
fn tc_receiver_params() -> ReceiverParams {
    let mut rp = receiver_params();
    rp.crf.tc = Some(crem_core::engine::crf::TcThresholds {
        t_thresh: MS,
        c_thresh: 4,
    });
    rp
}

/// An RDMA ACK through `psn` (the reverse direction).
fn ack_packet(psn: Psn) -> Vec<u8> {
    let b = Bth {
        opcode: roce::opcode::RC_ACKNOWLEDGE,
        se: false,
        mig_req: false,
        pad_count: 0,
        tver: 0,
        pkey: 0xffff,
        fecn: false,
        becn: false,
        resv6: 0,
        dest_qp: 0x11,
        ack_req: false,
        resv7: 0,
        psn,
    };
    let mut p = vec![0u8; 12];
    b.write(&mut p).unwrap();
    p.extend_from_slice(&(0x1f00_0001u32).to_be_bytes());
    p.extend_from_slice(&[0; 4]); // ICRC: the CSF does not check it
    p
}

/// Both ends, messages delivered instantly (in order), a record of
/// everything for comparisons.
struct Pair {
    snd: Box<Snd>,
    rcv: Box<Rcv>,
    store: Store,
    out: Out,
    scratch: Vec<u8>,
    host: Host,
    ws: Ws,
    now: Nanos,
    snd_events: Vec<SenderEvent>,
    rcv_events: Vec<ReceiverEvent>,
    /// Every message, in order (true = CSF to CRF).
    log: Vec<(bool, Vec<u8>)>,
    /// Config IDs of the REPAIRs the CSF sent.
    repair_ids: Vec<u8>,
    /// CRF-to-CSF messages held back (a long reverse path) while set.
    rev_paused: bool,
    rev_held: Vec<Vec<u8>>,
}

impl Pair {
    fn new(snd: Box<Snd>, rcv: Box<Rcv>) -> Pair {
        Pair {
            snd,
            rcv,
            store: Store::default(),
            out: Out::default(),
            scratch: vec![0; scratch_len(roce::MAX_SYMBOL_LEN)],
            host: Host::default(),
            ws: Ws::new(64 * T as usize),
            now: 0,
            snd_events: Vec::new(),
            rcv_events: Vec::new(),
            log: Vec::new(),
            repair_ids: Vec::new(),
            rev_paused: false,
            rev_held: Vec::new(),
        }
    }

    /// Holds back (true) or releases (false) the CRF's messages.
    fn pause_reverse(&mut self, paused: bool) {
        self.rev_paused = paused;
        if !paused {
            self.pump();
        }
    }

    fn start(&mut self) {
        self.snd.start(0, 0x1234_5678, &mut self.out);
        self.pump();
    }

    /// Runs every timer due up to `t`, then sets now = t.
    fn advance(&mut self, t: Nanos) {
        for _ in 0..10_000 {
            let d = [self.snd.next_deadline(), self.rcv.next_deadline()]
                .into_iter()
                .flatten()
                .min();
            match d {
                Some(d) if d <= t => {
                    self.now = self.now.max(d);
                    self.host.now = self.now;
                    let io = &mut CsfIo {
                        gf: &RowPerCall,
                        sink: &mut self.out,
                        store: &mut self.store,
                        scratch: &mut self.scratch[..],
                    };
                    if let Some(e) = self.snd.on_timer(self.now, io) {
                        self.snd_events.push(e);
                    }
                    let mut ws = self.ws.ws();
                    self.rcv.on_timer(self.now, &mut self.host, &mut ws);
                    self.pump();
                }
                _ => break,
            }
        }
        self.now = self.now.max(t);
        self.host.now = self.now;
    }

    /// Delivers messages both ways until none is left.
    fn pump(&mut self) {
        loop {
            let fwd = std::mem::take(&mut self.out.0);
            self.rev_held.extend(self.host.take_sent());
            let rev = if self.rev_paused {
                Vec::new()
            } else {
                std::mem::take(&mut self.rev_held)
            };
            if fwd.is_empty() && rev.is_empty() {
                return;
            }
            for m in fwd {
                let msg = wire::decode(&m).unwrap();
                if let Message::Repair(r) = &msg {
                    self.repair_ids.push(r.config_id);
                }
                let mut ws = self.ws.ws();
                let mut id = 0x00c0_ffee;
                let e = self.rcv.on_message(
                    self.now,
                    &msg,
                    false,
                    || {
                        id += 1;
                        Some(id)
                    },
                    &mut self.host,
                    &mut ws,
                );
                self.rcv_events.extend(e);
                self.log.push((true, m));
            }
            for m in rev {
                let msg = wire::decode(&m).unwrap();
                let io = &mut CsfIo {
                    gf: &RowPerCall,
                    sink: &mut self.out,
                    store: &mut self.store,
                    scratch: &mut self.scratch[..],
                };
                let e = self.snd.on_message(self.now, &msg, io);
                self.snd_events.extend(e);
                self.log.push((false, m));
            }
        }
    }

    /// The RDMA sender sends `psn`; the network drops it if `lost`.
    fn source(&mut self, psn: u32, lost: bool) {
        self.packet(psn, send_packet(Psn::new(psn), 1000), lost);
    }

    /// The packet `bytes` with `psn` crosses; the network drops it if `lost`.
    fn packet(&mut self, psn: u32, bytes: Vec<u8>, lost: bool) {
        let now = self.now;
        self.advance(now);
        csf_source(
            &mut self.snd,
            self.now,
            psn,
            &bytes,
            &mut self.out,
            &mut self.store,
            &mut self.scratch[..],
        );
        if !lost {
            let p = Psn::new(psn);
            match self
                .rcv
                .on_source(self.now, p, &bytes, false, &mut self.host)
            {
                CrfVerdict::Deliver => self.host.delivered.push(crf_util::Delivered {
                    psn,
                    bytes,
                    restored: false,
                    at: self.now,
                    held_for: 0,
                }),
                CrfVerdict::Hold => {
                    self.host.held.insert(psn, (bytes, false, self.now));
                }
                // The CRF delivered its copy.
                CrfVerdict::Replaced => {}
            }
            self.advance(self.now);
        }
        self.pump();
    }

    fn rdma_ack(&mut self, through: u32) {
        let a = ack_packet(Psn::new(through));
        self.snd.on_reverse(self.now, &a, &mut self.store);
    }

    fn delivered(&self) -> Vec<u32> {
        let mut v = self.host.delivered_psns();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// 200 packets, one lost in every 8, k = 16, m = 2.
fn scenario(p: &mut Pair) {
    p.start();
    for i in 0..200u32 {
        p.now = 100 * US * (i as u64 + 1);
        p.source(i, i % 8 == 3);
        if i % 32 == 31 {
            p.rdma_ack(i - 16);
        }
    }
    p.advance(p.now + 50 * MS);
}

#[test]
fn pair_negotiates_and_restores() {
    let mut p = Pair::new(
        Box::new(Snd::new(sender_params(16, 2))),
        Box::new(Rcv::new(receiver_params())),
    );
    scenario(&mut p);
    assert_eq!(p.snd.state(), FlowState::Established);
    assert_eq!(p.rcv.state(), FlowState::Established);
    assert_eq!(p.snd.flow_id(), p.rcv.flow_id());
    assert!(matches!(
        p.snd_events[..2],
        [
            SenderEvent::Established { .. },
            SenderEvent::ConfigChanged(FecConfig { k: 16, m: 2, .. })
        ]
    ));
    assert!(matches!(
        p.rcv_events[..2],
        [
            ReceiverEvent::Established { .. },
            ReceiverEvent::ConfigAccepted(FecConfig { k: 16, m: 2, .. })
        ]
    ));
    assert_eq!(p.delivered(), (0..200).collect::<Vec<_>>());
    assert!(p.rcv.crf_counters().restored >= 20);
    assert!(p.rcv.crf_counters().loss_reports > 0);
    assert_eq!(
        p.rcv.counters().loss_reports,
        p.rcv.crf_counters().loss_reports
    );
    assert!(p.rcv.loss_ppm() > 0, "the CRF follows its own reports");
    assert_eq!(
        p.snd.counters().loss_reports,
        p.rcv.crf_counters().loss_reports
    );
    assert_eq!(p.snd.counters().unexpected, 0);
    assert_eq!(p.rcv.counters().unexpected, 0);
    assert_eq!(p.snd.counters().config_mismatch, 0);
    assert_eq!(p.rcv.crf_counters().drop_unknown_config, 0);
}

/// Allocates an `X` over garbage and writes it with `init`.
fn boxed_in_place<X>(init: impl FnOnce(*mut X)) -> Box<X> {
    let layout = Layout::new::<X>();
    // SAFETY: `X` has a non-zero size; the memory is filled with garbage,
    // initialised by `init` (the `init_at` under test) and handed to a Box
    // with the same layout.
    unsafe {
        let p = alloc(layout).cast::<X>();
        assert!(!p.is_null());
        p.cast::<u8>().write_bytes(0xa5, layout.size());
        init(p);
        Box::from_raw(p)
    }
}

#[test]
fn init_at_behaves_like_new() {
    let sp = sender_params(16, 2);
    let rp = receiver_params();
    let mut a = Pair::new(Box::new(Snd::new(sp)), Box::new(Rcv::new(rp)));
    // SAFETY (inside the closures): the pointers come from `boxed_in_place`,
    // valid and aligned for the type.
    let mut b = Pair::new(
        boxed_in_place(|s| unsafe { Snd::init_at(s, sp) }),
        boxed_in_place(|s| unsafe { Rcv::init_at(s, rp) }),
    );
    scenario(&mut a);
    scenario(&mut b);
    assert_eq!(a.log, b.log);
    assert_eq!(a.snd_events, b.snd_events);
    assert_eq!(a.rcv_events, b.rcv_events);
    assert_eq!(a.host.delivered, b.host.delivered);
    assert_eq!(a.snd.csf_counters(), b.snd.csf_counters());
    assert_eq!(a.rcv.crf_counters(), b.rcv.crf_counters());
    assert_eq!(a.snd.counters(), b.snd.counters());
    assert_eq!(a.rcv.counters(), b.rcv.counters());
}

/// Sender side of finding 3: the negotiation lets a proposal supersede an
/// acknowledged configuration before its Effective PSN; the CSF used to
/// switch to it all the same (blocks under a Config ID the negotiation no
/// longer held, counted against the active one), and the CRF kept holding
/// it. The sender flow lets every acknowledged configuration take effect
/// first, so blocks, negotiation and CRF agree and old ones are released.
#[test]
fn acknowledged_config_takes_effect_before_the_next_and_old_ones_are_released() {
    let mut p = Pair::new(
        Box::new(Snd::new(sender_params(8, 1))),
        Box::new(Rcv::new(receiver_params())),
    );
    p.start();
    let a = p.snd.config().unwrap();
    for i in 0..40u32 {
        p.now = 100 * US * (i as u64 + 1);
        p.source(i, false);
    }
    p.snd
        .propose(p.now, 8, 2, Scheme::CauchyRs, &mut p.out)
        .unwrap();
    p.pump();
    let (b, eff) = p.snd.csf().next_config().unwrap();
    assert_eq!((b.k, b.m), (8, 2));
    // Not superseded while it waits for its Effective PSN.
    let r = p.snd.propose(p.now, 8, 3, Scheme::CauchyRs, &mut p.out);
    assert_eq!(r, Err(ProposeError::Busy));
    assert_eq!(p.snd.csf().next_config(), Some((b, eff)));
    let mut c_id = None;
    for i in 40..240u32 {
        p.now = 100 * US * (i as u64 + 1);
        p.source(i, false);
        if i % 16 == 15 {
            p.rdma_ack(i);
        }
        if c_id.is_none() && p.snd.config() == Some(b) {
            c_id = Some(
                p.snd
                    .propose(p.now, 8, 3, Scheme::CauchyRs, &mut p.out)
                    .unwrap(),
            );
            p.pump();
        }
    }
    p.advance(p.now + 10 * MS);
    p.rdma_ack(239);
    let c_id = c_id.unwrap();
    for id in [a.id, b.id, c_id] {
        assert!(p.repair_ids.contains(&id), "blocks of {id}");
    }
    assert_eq!(p.snd.config().map(|c| c.id), Some(c_id));
    let n = p.snd.negotiation_counters();
    assert_eq!(n.block_accounting_errors, 0);
    assert_eq!(n.block_closed_unknown, 0);
    assert_eq!(n.configs_released, 2, "A and B released: {n:?}");
    assert!(p.snd.negotiation().config(a.id).is_none());
    assert!(p.snd.negotiation().config(b.id).is_none());
    assert_eq!(p.snd.counters().config_mismatch, 0);
    assert_eq!(p.rcv.crf_counters().drop_unknown_config, 0);
}

// ---------------------------------------------------------------------
// Receiver side of finding 3, driven message by message.

fn hello() -> Hello {
    let mut n = CsfNegotiation::new(limits(u16::MAX), flow());
    n.start(0, 42, &mut Out::default());
    n.hello()
}

struct Rx {
    rcv: Box<Rcv>,
    host: Host,
    ws: Ws,
    flow_id: u32,
}

impl Rx {
    fn new() -> Rx {
        let mut r = Rx {
            rcv: Box::new(Rcv::new(receiver_params())),
            host: Host::default(),
            ws: Ws::new(64 * T as usize),
            flow_id: 0,
        };
        let ev = r.msg(0, &Message::Hello(hello()));
        let Some(ReceiverEvent::Established { flow_id }) = ev else {
            panic!("{ev:?}")
        };
        r.flow_id = flow_id;
        r
    }

    fn msg(&mut self, now: Nanos, m: &Message<'_>) -> Option<ReceiverEvent> {
        let mut ws = self.ws.ws();
        self.rcv
            .on_message(now, m, false, || Some(77), &mut self.host, &mut ws)
    }

    fn update(&mut self, now: Nanos, id: u8, m: u8) -> (Option<ReceiverEvent>, ParamStatus) {
        let pu = ParamUpdate {
            flow_id: self.flow_id,
            config_id: id,
            scheme: FecScheme::CauchyRs,
            k: 8,
            m,
            t: T,
            effective_psn: Psn::ZERO,
        };
        self.host.take_sent();
        let ev = self.msg(now, &Message::ParamUpdate(pu));
        let acks: Vec<ParamStatus> = self
            .host
            .take_sent()
            .iter()
            .filter_map(|b| match wire::decode(b) {
                Ok(Message::ParamAck(a)) => Some(a.status),
                _ => None,
            })
            .collect();
        assert_eq!(acks.len(), 1, "exactly one PARAM_ACK");
        (ev, acks[0])
    }

    fn repair(&mut self, now: Nanos, id: u8, start: u32) {
        let sym = vec![0u8; T as usize];
        let r = Repair {
            flow_id: self.flow_id,
            last: true,
            info: false,
            config_id: id,
            scheme: FecScheme::CauchyRs,
            k: 8,
            repair_index: 0,
            block_start: Psn::new(start),
            session_id: 0,
            present: Bitmap256::first_n(8),
            lost: None,
            symbol: &sym,
        };
        self.msg(now, &Message::Repair(r));
    }
}

/// The plain pieces disagree: the negotiation holds 8 configurations, the
/// engine 4, and the negotiation acknowledges first.
#[test]
fn plain_negotiation_acknowledges_more_than_the_engine_holds() {
    let mut neg = CrfNegotiation::new(limits(16));
    let mut out = Out::default();
    neg.on_hello(&hello(), || Some(5), &mut out);
    let mut accepted = 0;
    for id in 1..=(MAX_CONFIGS as u8 + 1) {
        let pu = ParamUpdate {
            flow_id: 5,
            config_id: id,
            scheme: FecScheme::CauchyRs,
            k: 8,
            m: 1,
            t: T,
            effective_psn: Psn::ZERO,
        };
        if matches!(
            neg.on_param_update(&pu, &mut out),
            crem_core::engine::negotiation::ParamOutcome::Accepted { .. }
        ) {
            accepted += 1;
        }
    }
    assert_eq!(accepted, MAX_CONFIGS + 1, "the old failure: 5 acknowledged");
    // Held to the engine's capacity, it refuses the fifth itself.
    let mut neg = CrfNegotiation::new(limits(16));
    neg.set_config_capacity(MAX_CONFIGS);
    neg.on_hello(&hello(), || Some(5), &mut out);
    let mut refused = 0;
    for id in 1..=(MAX_CONFIGS as u8 + 1) {
        let pu = ParamUpdate {
            flow_id: 5,
            config_id: id,
            scheme: FecScheme::CauchyRs,
            k: 8,
            m: 1,
            t: T,
            effective_psn: Psn::ZERO,
        };
        if neg.on_param_update(&pu, &mut out)
            == crem_core::engine::negotiation::ParamOutcome::Rejected(
                ParamStatus::ResourcesExhausted,
            )
        {
            refused += 1;
        }
    }
    assert_eq!(refused, 1);
}

#[test]
fn receiver_never_acknowledges_what_the_engine_cannot_take() {
    let mut r = Rx::new();
    for id in 1..=MAX_CONFIGS as u8 {
        let (ev, st) = r.update(10 * US * id as u64, id, 1);
        assert_eq!(st, ParamStatus::Accepted);
        assert!(matches!(ev, Some(ReceiverEvent::ConfigAccepted(c)) if c.id == id));
    }
    // All four needed within 2·SRTT: the fifth is refused, not acknowledged
    // and then dropped by the engine.
    let (ev, st) = r.update(100 * US, 9, 1);
    assert_eq!(st, ParamStatus::ResourcesExhausted);
    assert_eq!(ev, Some(ReceiverEvent::ConfigRefused { config_id: 9 }));
    assert_eq!(r.rcv.crf_counters().configs_refused, 0);
    assert_eq!(r.rcv.configs_held(), MAX_CONFIGS);
    // A retransmitted PARAM_UPDATE of a held one is acknowledged again.
    let (ev, st) = r.update(200 * US, 4, 1);
    assert_eq!((ev, st), (None, ParamStatus::Accepted));
    // Later, the oldest idle one makes room.
    let (ev, st) = r.update(10 * MS, 9, 1);
    assert_eq!(st, ParamStatus::Accepted);
    assert!(matches!(ev, Some(ReceiverEvent::ConfigAccepted(c)) if c.id == 9));
    assert!(r.rcv.crf().accepted_config(1).is_none());
    assert_eq!(r.rcv.counters().engine_refused, 0);
    assert_eq!(r.rcv.crf_counters().configs_refused, 0);
}

/// The old rule (the simulation's) released every configuration older than
/// the first idle one, including one whose REPAIRs were still arriving for
/// PSN-range recovery (no live block: the CRF never learned it), whose
/// answers were then dropped as `drop_unknown_config`.
#[test]
fn receiver_keeps_a_configuration_still_in_use() {
    let mut r = Rx::new();
    for id in 1..=MAX_CONFIGS as u8 {
        r.update(0, id, 1);
    }
    // Config 1 carries REPAIRs (answers to range requests, say) right now;
    // 2 never carried any (superseded before its Effective PSN).
    r.repair(5 * MS, 1, 1000);
    for id in 3..=4 {
        r.repair(5 * MS, id, 1100 + 8 * id as u32);
    }
    let (ev, st) = r.update(5 * MS + 10 * US, 5, 1);
    assert_eq!(st, ParamStatus::Accepted);
    assert!(matches!(ev, Some(ReceiverEvent::ConfigAccepted(c)) if c.id == 5));
    assert!(r.rcv.crf().accepted_config(2).is_none(), "2 made room");
    assert!(r.rcv.crf().accepted_config(1).is_some(), "1 is kept");
    r.repair(5 * MS + 20 * US, 1, 1008);
    assert_eq!(r.rcv.crf_counters().drop_unknown_config, 0);
    assert_eq!(r.rcv.counters().configs_released, 1);
    // A configuration with a live block is never released, however old.
    assert!((1..=4).all(|id| id == 2 || r.rcv.crf().config_in_use(id)));
    let (ev, st) = r.update(500 * MS, 6, 1);
    assert_eq!(st, ParamStatus::ResourcesExhausted);
    assert_eq!(ev, Some(ReceiverEvent::ConfigRefused { config_id: 6 }));
    // Once the blocks are resolved (timeouts, fallback), the oldest goes.
    let mut t = 500 * MS;
    while let Some(d) = r.rcv.next_deadline().filter(|&d| d < 2_000 * MS) {
        t = t.max(d);
        let mut ws = r.ws.ws();
        r.rcv.on_timer(t, &mut r.host, &mut ws);
    }
    assert!(!r.rcv.crf().config_in_use(1));
    let (_, st) = r.update(2_000 * MS, 6, 1);
    assert_eq!(st, ParamStatus::Accepted);
    assert!(r.rcv.crf().accepted_config(1).is_none());
    assert!(r.rcv.crf().accepted_config(3).is_some());
}

/// A READ response packet (`op`) of 1000 octets at `psn`.
fn response(op: u8, psn: u32) -> Vec<u8> {
    let mut p = crf_util::bth(op, Psn::new(psn)).to_vec();
    p.extend((0..1000u32).map(|i| (i ^ psn) as u8));
    crf_util::finish(p)
}

/// A responder-direction flow (Flow Kind 192): READ responses in runs of 8
/// with 3 PSNs between runs (the requester's other requests), one response
/// in 9 lost. The HELLO names the kind, the CSF codes only responses, the
/// CRF guesses the gaps between runs and restores every loss.
#[test]
fn responder_flow_protects_read_responses() {
    use roce::opcode::*;
    let mut sp = sender_params(16, 2);
    sp.flow.kind = FlowKind::Responses;
    sp.csf.fill_gaps = true;
    let mut rp = receiver_params();
    rp.crf.responses = true;
    let mut p = Pair::new(Box::new(Snd::new(sp)), Box::new(Rcv::new(rp)));
    p.start();
    let hello = p.log.iter().find(|(fwd, _)| *fwd).unwrap();
    assert!(matches!(wire::decode(&hello.1).unwrap(),
        Message::Hello(h) if h.flow_kind == wire::FLOW_KIND_ROCEV2_RESPONSES));
    let mut sent = Vec::new();
    let mut n = 0u32;
    for run in 0..20u32 {
        let first = run * 11;
        for i in 0..8u32 {
            let op = match i {
                0 => RC_READ_RESPONSE_FIRST,
                7 => RC_READ_RESPONSE_LAST,
                _ => RC_READ_RESPONSE_MIDDLE,
            };
            n += 1;
            p.now = 100 * US * u64::from(n);
            p.packet(first + i, response(op, first + i), n % 9 == 4);
            sent.push(first + i);
        }
    }
    // Requests are not sources of a response flow.
    let io = &mut CsfIo {
        gf: &RowPerCall,
        sink: &mut p.out,
        store: &mut p.store,
        scratch: &mut p.scratch[..],
    };
    let send = send_packet(Psn::new(300), 100);
    assert_eq!(p.snd.on_source(p.now, &send, io), SourceVerdict::NotSource);
    p.advance(p.now + 50 * MS);
    assert_eq!(p.snd.state(), FlowState::Established);
    assert_eq!(p.delivered(), sent);
    let c = p.rcv.crf_counters();
    assert!(c.restored >= 15, "{c:?}");
    // Gaps after a run whose LAST was lost are left to the blocks.
    assert!(c.read_absent >= 15 * 3, "{c:?}");
}

/// An operator pins (k, m) on an established flow: proposed at once, in
/// effect from its Effective PSN; a fixed-mode flow has no policy to hand
/// back to; proposing before the flow is established is refused.
#[test]
fn pinned_configuration_takes_effect() {
    use crem_core::engine::flow::PinError;
    let mut p = Pair::new(
        Box::new(Snd::new(sender_params(16, 2))),
        Box::new(Rcv::new(receiver_params())),
    );
    assert_eq!(
        p.snd.pin(0, Some((8, 1)), &mut p.out),
        Err(PinError::Propose(ProposeError::NotEstablished))
    );
    p.start();
    for i in 0..40u32 {
        p.now = 100 * US * (i as u64 + 1);
        p.source(i, false);
    }
    assert_eq!(p.snd.config().map(|c| (c.k, c.m)), Some((16, 2)));
    let now = p.now;
    assert_eq!(p.snd.pin(now, Some((8, 1)), &mut p.out), Ok(()));
    assert!(p.snd.pinned());
    p.pump();
    for i in 40..400u32 {
        p.now = 100 * US * (i as u64 + 1);
        p.source(i, i % 50 == 7);
    }
    p.advance(p.now + 50 * MS);
    assert_eq!(p.snd.config().map(|c| (c.k, c.m)), Some((8, 1)));
    assert_eq!(p.delivered(), (0..400).collect::<Vec<_>>());
    // Already in effect: fine. Adaptive: this flow has no policy.
    let now = p.now;
    assert_eq!(p.snd.pin(now, Some((8, 1)), &mut p.out), Ok(()));
    assert_eq!(p.snd.pin(now, None, &mut p.out), Err(PinError::NoPolicy));
}

/// A PATH_REPORT (from an allow-listed reporter: the caller's check) names
/// PSNs dropped on the path: the CSF answers them at once with a coded
/// retransmission over them, which the CRF takes unasked and with which it
/// restores a block that lost more than m, without a request.
#[test]
fn path_report_drops_get_proactive_repairs() {
    use crem_core::wire::LossCause;
    let mut p = Pair::new(
        Box::new(Snd::new(sender_params(4, 1))),
        Box::new(Rcv::new(receiver_params())),
    );
    p.start();
    // PSNs 10 and 11 of the block 8..=11 are lost: R0 alone cannot
    // restore them.
    for i in 0..12u32 {
        p.now = 100 * US * (i as u64 + 1);
        p.source(i, i == 10 || i == 11);
    }
    let before = p.rcv.crf_counters().restored;
    let requests = p.rcv.crf_counters().requests_ranges;
    path_report(
        &mut p,
        LossCause::TransmissionError,
        &[Psn::new(10), Psn::new(11)],
    );
    p.pump();
    assert_eq!(p.snd.counters().path_reports, 1);
    // Two symbols over {10, 11}, from the retransmission budget; the m/k
    // bucket of the ordinary repairs is not touched.
    assert_eq!(p.snd.csf_counters().repairs_proactive, 2);
    assert_eq!(p.snd.csf_counters().repairs_retx, 0);
    assert_eq!(p.snd.csf_counters().drops.repair_rate_limited, 0);
    assert_eq!(p.rcv.crf_counters().restored, before + 2);
    assert_eq!(
        p.rcv.crf_counters().requests_ranges,
        requests,
        "no request needed"
    );
    for i in 12..16u32 {
        p.now = 100 * US * (i as u64 + 1);
        p.source(i, false);
    }
    assert_eq!(p.delivered(), (0..16).collect::<Vec<_>>());
}

/// A PATH_REPORT about the pair's flow with one hop entry, handed to the
/// sender (an allow-listed reporter: the caller's check).
fn path_report(p: &mut Pair, cause: crem_core::wire::LossCause, dropped: &[Psn]) {
    use crem_core::wire::{DroppedPsns, HopEntries, HopEntry, Method, PathReport};
    let hops = [HopEntry {
        node_id: 9,
        period: 1,
        lost_count: 1,
        queue_delay_change_us: 0,
        cause,
        dropped: DroppedPsns::from_slice(dropped),
    }];
    let r = PathReport {
        truncated: false,
        method: Method::NodeLocalDrop,
        addrs: flow().addrs,
        flow_label: flow().dest_qp,
        hops: HopEntries::from_slice(&hops),
    };
    let io = &mut CsfIo {
        gf: &RowPerCall,
        sink: &mut p.out,
        store: &mut p.store,
        scratch: &mut p.scratch[..],
    };
    assert_eq!(p.snd.on_message(p.now, &Message::PathReport(r), io), None);
}

/// Sender params with coding from the first packet.
fn early_params(k: u8, m: u8) -> SenderParams {
    SenderParams {
        early: true,
        ..sender_params(k, m)
    }
}

/// The REPAIRs and PARAM_UPDATEs the CSF sent, in order.
fn csf_messages(p: &Pair) -> Vec<Message<'_>> {
    p.log
        .iter()
        .filter(|(fwd, _)| *fwd)
        .map(|(_, m)| wire::decode(m).unwrap())
        .filter(|m| matches!(m, Message::Repair(_) | Message::ParamUpdate(_)))
        .collect()
}

/// A pair whose CSF (`sp`) has sent sources 0..`n` (`lost(i)` dropped on
/// the way) 100 µs apart while no answer comes back (HELLO pending).
fn unanswered_with_sources(
    sp: SenderParams,
    rp: ReceiverParams,
    n: u32,
    lost: impl Fn(u32) -> bool,
) -> Pair {
    let mut p = Pair::new(Box::new(Snd::new(sp)), Box::new(Rcv::new(rp)));
    p.pause_reverse(true);
    p.start();
    for i in 0..n {
        p.now = 100 * US * (i as u64 + 1);
        p.source(i, lost(i));
    }
    p
}

/// The packets sent while HELLO_ACK and PARAM_ACK are on their way (an
/// RDMA connection's first burst) are coded under the configuration the
/// CSF is about to propose: nothing is sent for them before the CRF
/// acknowledges it, then their ordinary repairs restore the losses. The
/// PARAM_UPDATE is effective at the first block's start, so every REPAIR
/// describes a block at or after its Effective PSN.
#[test]
fn early_blocks_are_protected_once_acknowledged() {
    let mut p = unanswered_with_sources(early_params(16, 2), receiver_params(), 40, |i| {
        i == 5 || i == 20
    });
    assert_eq!(p.snd.state(), FlowState::Negotiating);
    assert!(p.repair_ids.is_empty(), "REPAIR sent before PARAM_ACK");
    assert_eq!(p.snd.csf().counters().unprotected_sources, 0);
    assert!(!p.delivered().contains(&5) && !p.delivered().contains(&20));
    // The answers arrive now, while the block 32.. is still open.
    p.pause_reverse(false);
    assert_eq!(p.snd.state(), FlowState::Established);
    let msgs = csf_messages(&p);
    let Some(Message::ParamUpdate(pu)) = msgs.first() else {
        panic!("first message not PARAM_UPDATE: {msgs:?}");
    };
    assert_eq!((pu.k, pu.m, pu.effective_psn), (16, 2, Psn::new(0)));
    for m in &msgs {
        if let Message::Repair(r) = m {
            assert_eq!(r.config_id, pu.config_id);
            assert!(r.block_start.is_after_or_eq(pu.effective_psn));
        }
    }
    let ordinary = p.snd.csf().counters().repairs_ordinary;
    assert!(ordinary >= 4, "two closed blocks, m = 2: {ordinary}");
    assert!(p
        .snd
        .csf()
        .open_block()
        .is_some_and(|b| b.0 == Psn::new(32)));
    // The block open at PARAM_ACK (32..47) was provisional too: its
    // repairs go out when its last source closes it (45 is lost).
    for i in 40..100u32 {
        p.now += 100 * US;
        p.source(i, i == 45 || i == 70);
    }
    p.advance(p.now + 50 * MS);
    assert_eq!(p.delivered(), (0..100).collect::<Vec<_>>());
    assert!(p.rcv.crf_counters().restored >= 4);
    assert_eq!(p.snd.csf().counters().drops.source_missing, 0);
    assert_eq!(p.snd.counters().early_dropped, 0);
    assert_eq!(p.snd.counters().config_mismatch, 0);
}

/// The CRF's limits do not allow the provisional configuration (k = 32
/// over its max k of 16): its blocks are dropped unsent, and the flow goes
/// on with what the limits allow, proposed the ordinary way.
#[test]
fn early_blocks_dropped_when_the_crf_limits_differ() {
    let mut rp = receiver_params();
    rp.limits.max_k = 16;
    let mut p = unanswered_with_sources(early_params(32, 2), rp, 40, |_| false);
    p.pause_reverse(false);
    p.advance(p.now + 5 * MS);
    // HELLO_ACK makes the flow established; its limits make the sender
    // give up the provisional k = 32 and propose nothing it cannot use.
    assert_eq!(p.snd.counters().early_dropped, 1);
    // Every source it had coded went unprotected.
    let k = p.snd.csf().counters();
    assert_eq!((k.sources, k.provisional_released), (40, 40));
    assert!(p.repair_ids.is_empty());
    assert_eq!(p.snd.retention_octets(), 0);
    assert!(p.snd.config().is_none());
}

/// A CLOSE ends the session, not the history: both ends keep counting what
/// they coded and restored (the kernel reports the totals at flow-down).
#[test]
fn counters_survive_close() {
    use crem_core::wire::CloseReason;
    let mut p = Pair::new(
        Box::new(Snd::new(sender_params(16, 2))),
        Box::new(Rcv::new(receiver_params())),
    );
    scenario(&mut p);
    let restored = p.rcv.crf_counters().restored;
    let repairs = p.snd.csf().counters().repairs_ordinary;
    assert!(restored > 0 && repairs > 0);
    let io = &mut CsfIo {
        gf: &RowPerCall,
        sink: &mut p.out,
        store: &mut p.store,
        scratch: &mut p.scratch[..],
    };
    p.snd.close(CloseReason::Normal, io);
    p.pump();
    assert!(matches!(
        p.rcv_events.last(),
        Some(ReceiverEvent::Closed(_))
    ));
    assert_eq!(p.rcv.crf_counters().restored, restored);
    assert_eq!(p.snd.csf().counters().repairs_ordinary, repairs);
}

/// The loss classification an operator reads (`crem-ctl flow`'s
/// loss-class): none before any loss, transmission once LOSS_REPORTs
/// carry losses, congestion while a Path Reporter's queue-overflow drop is
/// fresh (1 s of evidence), transmission again after.
#[test]
fn loss_class_follows_reports() {
    use crem_core::engine::policy::{LossClass, PolicyConfig};
    use crem_core::engine::SEC;
    use crem_core::wire::LossCause;
    let mut params = sender_params(8, 1);
    params.policy = Some(PolicyConfig {
        k: 8,
        ..PolicyConfig::DEFAULT
    });
    let mut p = Pair::new(
        Box::new(Snd::new(params)),
        Box::new(Rcv::new(receiver_params())),
    );
    p.start();
    assert_eq!(p.snd.loss_class(p.now), LossClass::None);
    let mut psn = 0u32;
    let mut run = |p: &mut Pair, until: Nanos, lossy: bool| {
        while p.now < until {
            p.now += 100 * US;
            p.source(psn, lossy && psn % 20 == 9);
            p.rdma_ack(psn);
            psn += 1;
        }
    };
    // A clean stretch: reports come, the class stays none.
    run(&mut p, 300 * MS, false);
    assert!(p.snd.counters().loss_reports > 0);
    assert_eq!(p.snd.loss_class(p.now), LossClass::None);
    // 5 % loss: transmission.
    run(&mut p, 600 * MS, true);
    assert!(p.snd.loss_ppb() > 0);
    assert_eq!(p.snd.loss_class(p.now), LossClass::Transmission);
    // A reporter saw a queue overflow: congestion, while it is fresh.
    path_report(&mut p, LossCause::QueueOverflow, &[]);
    assert_eq!(p.snd.loss_class(p.now), LossClass::Congestion);
    assert_eq!(p.snd.loss_class(p.now + SEC / 2), LossClass::Congestion);
    assert_eq!(p.snd.loss_class(p.now + 2 * SEC), LossClass::Transmission);
}

/// A fixed-configuration flow is measured like an adaptive one (loss
/// estimate, class) but nothing acts on it: k and m stay the operator's.
/// Before, its LOSS_REPORTs never reached the policy: loss 0, class none.
#[test]
fn fixed_flow_is_measured_not_adapted() {
    use crem_core::engine::policy::LossClass;
    let mut p = Pair::new(
        Box::new(Snd::new(sender_params(8, 1))),
        Box::new(Rcv::new(receiver_params())),
    );
    p.start();
    let mut psn = 0u32;
    while p.now < 600 * MS {
        p.now += 100 * US;
        // 5 % loss.
        p.source(psn, psn % 20 == 9);
        p.rdma_ack(psn);
        psn += 1;
    }
    assert!(p.snd.counters().loss_reports > 0);
    let ppb = p.snd.loss_ppb();
    assert!(
        (25_000_000..=100_000_000).contains(&ppb),
        "loss estimate {ppb} ppb for 5 % loss"
    );
    assert_eq!(p.snd.loss_class(p.now), LossClass::Transmission);
    assert_eq!(p.snd.config().map(|c| (c.k, c.m)), Some((8, 1)));
    assert_eq!(p.snd.policy_counters().breaker_trips, 0);
}

/// An RDMA connection's first round trip can carry many blocks: their
/// ordinary repairs, held until PARAM_ACK, are m/k of sources already sent
/// and all go out then (the blocks bank their share of the m/k bucket past
/// its two-block cap). Without the bank, only the cap's two blocks' worth
/// would leave at PARAM_ACK.
#[test]
fn first_round_trip_blocks_get_all_their_repairs() {
    let mut p = Pair::new(
        Box::new(Snd::new(early_params(8, 2))),
        Box::new(Rcv::new(receiver_params())),
    );
    p.pause_reverse(true);
    p.start();
    for i in 0..80u32 {
        p.now = 100 * US * (i as u64 + 1);
        p.source(i, i % 8 == 3);
    }
    assert!(p.repair_ids.is_empty(), "REPAIR sent before PARAM_ACK");
    p.pause_reverse(false);
    let c = p.snd.csf().counters();
    assert_eq!(c.repairs_ordinary, 20, "10 closed blocks, m = 2: {c:?}");
    assert_eq!(c.drops.repair_rate_limited, 0);
    // The CRF kept the sources that came before the configuration and
    // waited for these repairs instead of asking the muted CSF: every loss
    // restored by them, no request dropped, no coded retransmission. Before
    // (issue 13 #3): restored 0, 25 range requests refused by the muted
    // CSF, 7 fallbacks.
    p.advance(p.now + 50 * MS);
    let c = p.snd.csf().counters();
    assert_eq!((c.requests_disabled, c.repairs_retx), (0, 0), "{c:?}");
    assert_eq!(p.rcv.crf_counters().restored, 10);
    assert_eq!(p.delivered(), (0..80).collect::<Vec<_>>());
}

/// The same first round trip with selective repeat on as well (T/C AETH
/// reports): the reports wait like the requests, so the gaps the ordinary
/// repairs restore draw no Source Copy beside them.
#[test]
fn first_round_trip_waits_for_its_repairs_with_selective_repeat() {
    let rp = tc_receiver_params();
    let mut sp = early_params(8, 2);
    sp.csf.selective_repeat = true;
    let mut p = Pair::new(Box::new(Snd::new(sp)), Box::new(Rcv::new(rp)));
    p.pause_reverse(true);
    p.start();
    for i in 0..80u32 {
        p.now = 100 * US * (i as u64 + 1);
        p.source(i, i % 8 == 3);
    }
    p.pause_reverse(false);
    // More traffic after PARAM_ACK keeps the T/C reports coming.
    for i in 80..120u32 {
        p.now += 100 * US;
        p.source(i, false);
    }
    p.advance(p.now + 50 * MS);
    let c = p.snd.csf().counters();
    assert!(c.tc_reports > 0, "{c:?}");
    assert_eq!(c.repairs_source_copy, 0, "{c:?}");
    assert_eq!(p.rcv.crf_counters().restored, 10);
    assert_eq!(p.delivered(), (0..120).collect::<Vec<_>>());
}

/// One packet of a SEND of several packets: `op` with `len` octets.
fn send_part(op: u8, psn: u32, len: usize) -> Vec<u8> {
    let mut b = crf_util::bth(op, Psn::new(psn)).to_vec();
    b.extend((0..len).map(|i| (i as u32).wrapping_mul(7).wrapping_add(psn) as u8));
    crf_util::finish(b)
}

/// A flow created with the link's MTU as its estimate (4096, T 4134)
/// learns the RDMA MTU its connection uses (1024) from the first FIRST
/// packet and proposes its configuration again with T 1062: REPAIRs carry
/// T 1062 from then on, and losses on both sides of the change are
/// restored.
#[test]
fn t_follows_the_rdma_mtu_the_packets_show() {
    use roce::opcode::{RC_SEND_FIRST, RC_SEND_LAST, RC_SEND_MIDDLE};
    let max_t = roce::MAX_SYMBOL_LEN;
    let mut sp = early_params(16, 2);
    sp.flow.rdma_mtu = 4096;
    sp.t = max_t;
    sp.t_follows_mtu = true;
    sp.limits.max_t = max_t;
    let mut rp = receiver_params();
    rp.limits.max_t = max_t;
    let mut p = Pair::new(Box::new(Snd::new(sp)), Box::new(Rcv::new(rp)));
    p.start();
    let mut sent = Vec::new();
    // Small messages first: 1 ms of single-packet SENDs tell nothing.
    for i in 0..40u32 {
        p.now = 100 * US * u64::from(i + 1);
        p.packet(i, send_part(roce::opcode::RC_SEND_ONLY, i, 200), i == 20);
        sent.push(i);
    }
    assert_eq!((p.snd.mtu().mtu(), p.snd.mtu().exact()), (4096, false));
    assert_eq!(p.snd.config().map(|c| c.t), Some(max_t));
    // Then four-packet SENDs of 1024-octet packets.
    for i in 40..400u32 {
        p.now = 100 * US * u64::from(i + 1);
        let op = match i % 4 {
            0 => RC_SEND_FIRST,
            3 => RC_SEND_LAST,
            _ => RC_SEND_MIDDLE,
        };
        p.packet(i, send_part(op, i, 1024), i % 9 == 5);
        sent.push(i);
        if i % 32 == 31 {
            p.rdma_ack(i - 16);
        }
    }
    p.advance(p.now + 50 * MS);
    assert_eq!((p.snd.mtu().mtu(), p.snd.mtu().exact()), (1024, true));
    assert_eq!(p.snd.counters().t_changes, 1);
    assert_eq!(p.snd.config().map(|c| c.t), Some(1062));
    let ts: Vec<u16> = csf_messages(&p)
        .iter()
        .filter_map(|m| match m {
            Message::Repair(r) if !r.info => Some(r.symbol.len() as u16),
            _ => None,
        })
        .collect();
    let first_small = ts
        .iter()
        .position(|&t| t == 1062)
        .expect("a REPAIR of T 1062");
    assert!(
        first_small > 0 && ts[..first_small].iter().all(|&t| t == max_t),
        "{ts:?}"
    );
    assert!(ts[first_small..].iter().all(|&t| t == 1062), "{ts:?}");
    assert_eq!(p.delivered(), sent);
    assert!(
        p.rcv.crf_counters().restored >= 40,
        "{:?}",
        p.rcv.crf_counters()
    );
    // The HELLO carried the estimate; the CRF took the MTU from the FIRST
    // and MIDDLE packets it received (its READ spans are counted with it).
    assert_eq!(p.rcv.negotiation().rdma_mtu(), Some(4096));
    assert_eq!(p.rcv.crf().config().rdma_mtu, 1024);
}

/// A flow that only sends READ requests never shows its MTU in its own
/// direction: the READ responses the CSF sees coming back (FIRST, MIDDLE)
/// carry it; a LAST one does not.
#[test]
fn a_read_only_flow_learns_its_mtu_from_the_responses() {
    use roce::opcode::{RC_READ_RESPONSE_LAST, RC_READ_RESPONSE_MIDDLE};
    let mut sp = sender_params(16, 2);
    sp.flow.rdma_mtu = 4096;
    sp.t_follows_mtu = true;
    let mut snd = Snd::new(sp);
    let mut store = Store::default();
    let resp = |op: u8, psn: u32, len: usize| {
        let mut b = crf_util::bth(op, Psn::new(psn)).to_vec();
        b.extend(std::iter::repeat_n(7u8, len));
        crf_util::finish(b)
    };
    snd.on_reverse(MS, &resp(RC_READ_RESPONSE_LAST, 3, 100), &mut store);
    assert_eq!((snd.mtu().mtu(), snd.mtu().exact()), (4096, false));
    snd.on_reverse(MS, &resp(RC_READ_RESPONSE_MIDDLE, 4, 2048), &mut store);
    assert_eq!((snd.mtu().mtu(), snd.mtu().exact()), (2048, true));
    assert_eq!(snd.mtu().t(), roce::symbol_len_for_mtu(2048));
}

/// The CRF announces Max Open Blocks 16 (its HELLO_ACK): the CSF, whose
/// ring holds 64, retains no more than 16 blocks (older ones are given up
/// as under ring pressure), where before it kept all 40 sent.
#[test]
fn the_csf_retains_no_more_blocks_than_the_crf_holds_open() {
    let mut p = Pair::new(
        Box::new(Snd::new(sender_params(16, 2))),
        Box::new(Rcv::new(receiver_params())),
    );
    p.start();
    // 40 full blocks, no RDMA ACK.
    for i in 0..640u32 {
        p.now = 100 * US * u64::from(i + 1);
        p.source(i, false);
    }
    assert_eq!(p.snd.limits().map(|l| l.max_open_blocks), Some(16));
    assert_eq!(p.snd.csf().blocks_held(), 16);
    assert_eq!(p.snd.csf_counters().given_up_ring, 40 - 16);
}

/// A SEND only whose BTH asks for an acknowledgment (AckReq) every
/// `every`th PSN.
fn send_asking(psn: u32, every: u32) -> Vec<u8> {
    let mut b = crf_util::bth(roce::opcode::RC_SEND_ONLY, Psn::new(psn)).to_vec();
    if psn % every == every - 1 {
        b[8] |= 0x80;
    }
    b.extend((0..200u32).map(|i| i.wrapping_add(psn) as u8));
    crf_util::finish(b)
}

/// A request flow takes RTT samples from the RDMA acknowledgments it sees:
/// one PSN that asks for an acknowledgment timed at a time, until the ACK
/// that names it. The pair's messages cross in no time (HELLO and
/// PARAM_UPDATE measure 10 µs, the floor), while the responder acknowledges
/// every 8th packet (those that ask), 2 ms after it: the SRTT follows the
/// ACKs. A PSN sent again while timed gives no sample.
#[test]
fn rdma_acks_time_the_srtt() {
    let mut p = Pair::new(
        Box::new(Snd::new(flow_util::sender_params(16, 2, 10 * MS))),
        Box::new(Rcv::new(receiver_params())),
    );
    p.start();
    for i in 0..1000u32 {
        p.now = 100 * US * u64::from(i + 1);
        p.packet(i, send_asking(i, 8), false);
        if i >= 20 && (i - 20) % 8 == 7 {
            p.rdma_ack(i - 20);
        }
    }
    // One sample per round trip and ACK spacing: 2 ms plus up to 0.8 ms.
    let n = p.snd.counters().ack_rtt_samples;
    assert!((30..=50).contains(&n), "{n} samples");
    let srtt = p.snd.srtt();
    assert!((1_900 * US..=2_100 * US).contains(&srtt), "srtt {srtt}");
    // Go-back-N from PSN 990 while 995 is timed: its ACK is no sample.
    let timed = p.snd.ack_probe_timed();
    p.now += 100 * US;
    let before = p.snd.counters().ack_rtt_samples;
    if let Some((psn, _)) = timed {
        let again = psn.value().wrapping_sub(3);
        p.packet(again, send_asking(again, 8), false);
        p.now += 5 * MS;
        p.rdma_ack(psn.value());
        assert_eq!(p.snd.counters().ack_rtt_samples, before);
    } else {
        panic!("no PSN timed");
    }
}

/// The CRF is made only after the CSF's eighth HELLO (its creation waited
/// in the peer's queue) and its one HELLO_ACK arrives after the CSF gave
/// up (255 ms): the nonce still proves it answers this session, so the
/// flow is protected rather than left unprotected until a new flow.
#[test]
fn hello_ack_after_give_up_protects_the_flow() {
    let mut p = Pair::new(
        Box::new(Snd::new(sender_params(16, 2))),
        Box::new(Rcv::new(receiver_params())),
    );
    p.pause_reverse(true);
    p.start();
    p.advance(300 * MS);
    assert!(p
        .snd_events
        .iter()
        .any(|e| matches!(e, SenderEvent::GaveUp)));
    assert_eq!(p.snd.flow_id(), None);
    p.pause_reverse(false);
    assert!(p
        .snd_events
        .iter()
        .any(|e| matches!(e, SenderEvent::Established { .. })));
    assert_eq!(p.snd.state(), FlowState::Established);
    assert!(p.snd.flow_id().is_some());
}

/// Sources coded provisionally while eight HELLOs go unanswered are
/// released unprotected at the give-up (255 ms): counted so, although
/// they were coded (`sources`), so that what a flow left unprotected adds
/// up. Those after it pass unprotected until the late HELLO_ACK's
/// configuration is in effect.
#[test]
fn sources_coded_before_a_hello_give_up_are_counted_released() {
    let mut p = unanswered_with_sources(early_params(16, 2), receiver_params(), 40, |_| false);
    assert_eq!(p.snd.csf().counters().provisional_released, 0);
    p.advance(300 * MS);
    assert!(p
        .snd_events
        .iter()
        .any(|e| matches!(e, SenderEvent::GaveUp)));
    for i in 40..50u32 {
        p.now += 100 * US;
        p.source(i, false);
    }
    let k = p.snd.csf().counters();
    assert_eq!(
        (k.sources, k.provisional_released, k.unprotected_sources),
        (40, 40, 10)
    );
    assert_eq!(p.snd.counters().early_dropped, 1);
}

/// A sparse flow (one-packet messages 20 ms apart, as rping's or NVMe's
/// commands are) whose m/k bucket is dry or whose m is 0: a lost message
/// is the last packet of its burst, no packet follows it and no ordinary
/// repair tells where its block ends. The tail notice (INFO with LAST at
/// the end of the burst) lets the CRF request it: it is restored before
/// the next message leaves. Without the notice (`tail_info: false`, the
/// behaviour before stop 52) it waits for the next message (with m 0,
/// every one): in a ping-pong, where the next message waits for this one,
/// the RDMA transport's timer is then the only recovery.
#[test]
fn lost_tails_of_sparse_bursts_are_restored() {
    for (m, tail) in [(0u8, true), (2, true), (0, false), (2, false)] {
        let mut sp = sender_params(16, m);
        sp.csf.tail_info = tail;
        let (late, p) = sparse_losses(sp, receiver_params());
        let c = p.snd.csf_counters();
        let restored = p.rcv.crf_counters().restored;
        if tail {
            assert!(late.is_empty(), "m {m}: not restored in 20 ms: {late:?}");
            assert_eq!(restored, 10, "m {m}");
            // Only the lost messages' blocks end idle (the others are
            // acknowledged first, here at once). Each is told by its
            // ordinary round's LAST or by one notice: with m = 0 all ten,
            // with m = 2 those the bucket had no repair for.
            assert_eq!(c.blocks_closed_idle, 10, "m {m}");
            if m == 0 {
                assert_eq!(c.tail_infos, 10);
            } else {
                assert!((1..10).contains(&c.tail_infos), "m {m}: {c:?}");
                assert!(c.drops.repair_rate_limited > 0, "m {m}: {c:?}");
            }
            // Each notice drew one coded symbol for its one lost source;
            // no Source Copy (no fallback).
            assert_eq!(
                (c.repairs_retx, c.retx_lost, c.repairs_source_copy),
                (c.tail_infos, c.tail_infos, 0),
                "m {m}"
            );
        } else {
            assert_eq!(c.tail_infos, 0);
            // Only ordinary repairs (while the bucket lasts) restore any.
            // A lost message waits for the next one (here 20 ms; in a
            // ping-pong the next waits for it: the RDMA timer), unless an
            // ordinary repair of the bucket's covered it (m = 2: 4 of 10
            // wait at stop 52).
            if m == 0 {
                assert_eq!(late.len(), 10, "{late:?}");
            } else {
                assert!(!late.is_empty());
            }
        }
    }
}

/// `recovery both` (T/C AETH reports as well as requests): the lost last
/// packet of a message is behind the reports' in-flight guard and no later
/// packet shows it, so without the notice (stop 52 sent none with
/// selective repeat on) it waits for the next message; with it, none does.
#[test]
fn lost_tails_with_both_recoveries_are_restored() {
    for tail in [true, false] {
        let rp = tc_receiver_params();
        let mut sp = sender_params(16, 0);
        sp.csf.selective_repeat = true;
        sp.csf.tail_info = tail;
        let (late, p) = sparse_losses(sp, rp);
        let c = p.snd.csf_counters();
        if tail {
            assert!(late.is_empty(), "not restored in 20 ms: {late:?}");
            assert_eq!(c.tail_infos, 10, "{c:?}");
            assert_eq!(p.rcv.crf_counters().restored, 10);
        } else {
            assert_eq!(late.len(), 10, "{late:?} {c:?}");
        }
    }
}

/// 40 one-packet messages 20 ms apart, every fourth lost, each acknowledged
/// by the RDMA receiver when it has everything before it: returns the lost
/// messages not delivered by the time the next one leaves, and the pair.
fn sparse_losses(sp: SenderParams, rp: ReceiverParams) -> (Vec<u32>, Pair) {
    let mut p = Pair::new(Box::new(Snd::new(sp)), Box::new(Rcv::new(rp)));
    p.start();
    let (mut lost, mut late): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    for i in 0..40u32 {
        p.advance(20 * MS * (i as u64 + 1));
        // Whatever was lost before must be there by now.
        let have = p.delivered();
        late.extend(lost.iter().filter(|l| !have.contains(l)));
        lost.clear();
        let drop = i % 4 == 3;
        p.source(i, drop);
        if drop {
            lost.push(i);
        } else if p.delivered().len() == i as usize + 1 {
            // The RDMA receiver acknowledges what it has in order.
            p.rdma_ack(i);
        }
    }
    p.advance(p.now + 20 * MS);
    let have = p.delivered();
    late.extend(lost.iter().filter(|l| !have.contains(l)));
    (late, p)
}
