//! Measured RTT (issue 13): `SenderFlow` and `ReceiverFlow` over a link with
//! a one-way delay, checking which exchanges give samples (Karn's rule
//! included) and that the per-SRTT rules follow the estimate.

mod crf_util;
mod flow_util;

use crem_core::engine::crf::{self, CrfConfig, RttRule, SourceVerdict as CrfVerdict, TcThresholds};
use crem_core::engine::csf::{scratch_len, CsfIo};
use crem_core::engine::flow::{ReceiverParams, SenderParams};
use crem_core::engine::{Nanos, MS};
use crem_core::fec::Scheme;
use crem_core::gf::RowPerCall;
use crem_core::psn::Psn;
use crem_core::wire::{self, Message, MessageType};
use crf_util::{send_packet, Host, Ws};
use flow_util::{csf_source, limits, sender_params, Out, Rcv, Snd, Store, T, US};

fn receiver_params(hint: Nanos, rule: RttRule, hold: Nanos) -> ReceiverParams {
    ReceiverParams {
        crf: CrfConfig {
            hold_time: hold,
            srtt: hint,
            rtt_rule: rule,
            ..CrfConfig::new(0)
        },
        limits: limits(16),
        block_time: 0,
    }
}

/// What travels the link.
enum Item {
    /// CREM message, CSF to CRF.
    Fwd(Vec<u8>),
    /// CREM message, CRF to CSF.
    Rev(Vec<u8>),
    /// A source packet toward the CRF.
    Src(u32, Vec<u8>),
}

/// Both ends over a link of one-way delay `owd` each way; `drop_rev`
/// decides which CRF-to-CSF messages are lost.
struct Net {
    snd: Box<Snd>,
    rcv: Box<Rcv>,
    store: Store,
    out: Out,
    scratch: Vec<u8>,
    host: Host,
    ws: Ws,
    now: Nanos,
    owd: Nanos,
    /// (arrival, order, item), unsorted.
    q: Vec<(Nanos, u64, Item)>,
    seq: u64,
    drop_rev: fn(&Message<'_>) -> bool,
    /// Send times of the CRF's messages by type.
    rev_sent: Vec<(Nanos, MessageType)>,
}

impl Net {
    fn new(snd: SenderParams, rcv: ReceiverParams, owd: Nanos) -> Net {
        Net {
            snd: Box::new(Snd::new(snd)),
            rcv: Box::new(Rcv::new(rcv)),
            store: Store::default(),
            out: Out::default(),
            scratch: vec![0; scratch_len(T)],
            host: Host::default(),
            ws: Ws::new(64 * T as usize),
            now: 0,
            owd,
            q: Vec::new(),
            seq: 0,
            drop_rev: |_| false,
            rev_sent: Vec::new(),
        }
    }

    fn push(&mut self, item: Item) {
        self.seq += 1;
        self.q.push((self.now + self.owd, self.seq, item));
    }

    /// Puts what both ends sent on the link.
    fn collect(&mut self) {
        for m in std::mem::take(&mut self.out.0) {
            self.push(Item::Fwd(m));
        }
        for m in self.host.take_sent() {
            let msg = wire::decode(&m).unwrap();
            self.rev_sent.push((self.now, msg.msg_type()));
            if !(self.drop_rev)(&msg) {
                self.push(Item::Rev(m));
            }
        }
    }

    fn start(&mut self) {
        self.snd.start(0, 0x1234_5678, &mut self.out);
        self.collect();
    }

    /// Runs arrivals and timers in time order up to `t`.
    fn run(&mut self, t: Nanos) {
        loop {
            let arrival = self.q.iter().map(|x| (x.0, x.1)).min();
            let timer = [self.snd.next_deadline(), self.rcv.next_deadline()]
                .into_iter()
                .flatten()
                .min();
            let next = match (arrival, timer) {
                (Some((a, _)), Some(d)) => a.min(d),
                (Some((a, _)), None) => a,
                (None, Some(d)) => d,
                (None, None) => break,
            };
            if next > t {
                break;
            }
            self.now = self.now.max(next);
            self.host.now = self.now;
            if arrival.is_some_and(|(a, _)| a <= next) {
                let (_, order) = arrival.unwrap();
                let i = self.q.iter().position(|x| x.1 == order).unwrap();
                let (_, _, item) = self.q.swap_remove(i);
                self.deliver(item);
            } else {
                let io = &mut CsfIo {
                    gf: &RowPerCall,
                    sink: &mut self.out,
                    store: &mut self.store,
                    scratch: &mut self.scratch[..],
                };
                self.snd.on_timer(self.now, io);
                let mut ws = self.ws.ws();
                self.rcv.on_timer(self.now, &mut self.host, &mut ws);
            }
            self.collect();
        }
        self.now = self.now.max(t);
        self.host.now = self.now;
    }

    fn deliver(&mut self, item: Item) {
        match item {
            Item::Fwd(m) => {
                let msg = wire::decode(&m).unwrap();
                let mut ws = self.ws.ws();
                self.rcv.on_message(
                    self.now,
                    &msg,
                    false,
                    || Some(0x00c0_ffee),
                    &mut self.host,
                    &mut ws,
                );
            }
            Item::Rev(m) => {
                let msg = wire::decode(&m).unwrap();
                let io = &mut CsfIo {
                    gf: &RowPerCall,
                    sink: &mut self.out,
                    store: &mut self.store,
                    scratch: &mut self.scratch[..],
                };
                self.snd.on_message(self.now, &msg, io);
            }
            Item::Src(psn, bytes) => {
                let p = Psn::new(psn);
                if self
                    .rcv
                    .on_source(self.now, p, &bytes, false, &mut self.host)
                    == CrfVerdict::Hold
                {
                    self.host.held.insert(psn, (bytes, false, self.now));
                }
                let mut ws = self.ws.ws();
                self.rcv.on_timer(self.now, &mut self.host, &mut ws);
            }
        }
    }

    /// The RDMA sender sends `psn` at `at`; the network drops it if `lost`.
    fn source(&mut self, at: Nanos, psn: u32, lost: bool) {
        self.run(at);
        let bytes = send_packet(Psn::new(psn), 1000);
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
            self.push(Item::Src(psn, bytes));
        }
        self.collect();
    }

    /// `n` packets from PSN `first`, one every `gap` from `at`, those with
    /// `lost(i)` dropped; returns the time after the last.
    fn burst(&mut self, at: Nanos, first: u32, n: u32, gap: Nanos, lost: fn(u32) -> bool) -> Nanos {
        for i in 0..n {
            self.source(at + gap * i as u64, first + i, lost(first + i));
        }
        at + gap * n as u64
    }
}

#[test]
fn csf_measures_param_update_not_a_resent_hello() {
    // RTT 4 ms, hint 10 ms: HELLO (1 ms timeout) is always re-sent before
    // its answer, so only PARAM_UPDATE (timeout 20 ms) gives a sample.
    let mut n = Net::new(
        sender_params(16, 2, 10 * MS),
        receiver_params(10 * MS, RttRule::Fixed, MS),
        2 * MS,
    );
    n.start();
    n.run(30 * MS);
    assert!(n.snd.negotiation().counters().hello_retransmits > 0);
    assert_eq!(n.snd.rtt().samples(), 1);
    assert_eq!((n.snd.srtt(), n.snd.min_rtt()), (4 * MS, 4 * MS));
    // The CSF's own copy (answers per block per SRTT, T/C guard) follows.
    assert_eq!(n.snd.csf().srtt(), 4 * MS);
    // The next PARAM_UPDATE times out after 2·SRTT measured, not 2·hint
    // (once the first configuration is in effect).
    let t = n.burst(n.now, 0, 40, 100 * US, |_| false);
    n.run(t);
    n.snd
        .propose(t, 16, 4, Scheme::CauchyRs, &mut n.out)
        .unwrap();
    assert_eq!(n.snd.negotiation().next_deadline(), Some(t + 8 * MS));
    n.collect();
    n.run(t + 6 * MS);
    assert_eq!(n.snd.rtt().samples(), 2);
    assert_eq!(n.snd.srtt(), 4 * MS);
}

#[test]
fn csf_takes_a_hello_answered_before_its_resend() {
    let mut n = Net::new(
        sender_params(16, 2, 10 * MS),
        receiver_params(10 * MS, RttRule::Fixed, MS),
        200 * US,
    );
    n.start();
    n.run(5 * MS);
    assert_eq!(n.snd.negotiation().counters().hello_retransmits, 0);
    // HELLO and PARAM_UPDATE: two samples of 400 µs.
    assert_eq!(n.snd.rtt().samples(), 2);
    assert_eq!((n.snd.srtt(), n.snd.min_rtt()), (400 * US, 400 * US));
}

#[test]
fn csf_seeds_from_a_resent_hello_then_measures_its_param_update() {
    // RTT 30 ms, hint 10 ms: HELLO is re-sent (1, 2, 4, 8 ms backoff) and
    // answered 30 ms after its first copy: no sample (Karn), but an upper
    // bound that replaces the hint. The PARAM_UPDATE then times out after
    // 2 x 30 ms, not 2 x 10, so it is sent once and measured. Without the
    // seed it was re-sent at 20 ms, answered at 30: no sample at all, and
    // the hint stayed.
    let mut n = Net::new(
        sender_params(16, 2, 10 * MS),
        receiver_params(10 * MS, RttRule::Fixed, MS),
        15 * MS,
    );
    n.start();
    n.run(200 * MS);
    let c = n.snd.negotiation().counters();
    assert!(c.hello_retransmits >= 1, "{c:?}");
    assert_eq!(c.param_update_retransmits, 0, "{c:?}");
    assert_eq!(c.param_ack_accepted, 1);
    assert_eq!(n.snd.rtt().samples(), 1);
    assert_eq!((n.snd.srtt(), n.snd.min_rtt()), (30 * MS, 30 * MS));
}

/// Every 8th PSN lost, m = 0: each block is recovered by a coded
/// retransmission only, so every block asks the CSF.
fn lossy(i: u32) -> bool {
    i % 8 == 3
}

#[test]
fn crf_measures_request_answers_and_its_timings_follow() {
    // RTT 6 ms, hint 10 ms, H the draft's RECOMMENDED one for a 4 ms
    // block: min(4, 10/4) = 2.5 ms from the hint, min(4, 6/4) = 1.5 ms
    // measured; the allowance SRTT/4 within [1 ms, H].
    let rule = RttRule::Recommended { block_time: 4 * MS };
    let mut n = Net::new(
        sender_params(16, 0, 10 * MS),
        receiver_params(10 * MS, rule, 0),
        3 * MS,
    );
    let c = n.rcv.crf().config();
    assert_eq!((c.srtt, c.hold_time), (10 * MS, 2500 * US));
    assert_eq!(c.reorder_allowance, 2500 * US);
    n.start();
    n.run(20 * MS);
    let end = n.burst(20 * MS, 0, 160, 100 * US, lossy);
    n.run(end + 100 * MS);
    let k = n.rcv.crf_counters();
    assert!(k.requests_block + k.requests_ranges > 0, "{k:?}");
    assert!(k.restored > 0, "{k:?}");
    assert!(n.rcv.rtt().samples() > 0);
    // Answered on receipt: every sample is the RTT.
    assert_eq!((n.rcv.srtt(), n.rcv.min_rtt()), (6 * MS, 6 * MS));
    let c = n.rcv.crf().config();
    assert_eq!(c.srtt, 6 * MS);
    assert_eq!(c.hold_time, 1500 * US);
    assert_eq!(
        c.reorder_allowance,
        crf::reorder_allowance_for(6 * MS, 1500 * US)
    );
    assert_eq!(c.reorder_allowance, 1500 * US);
    // LOSS_REPORTs of the second burst come once per measured SRTT.
    let from = n.now;
    let end = n.burst(from, 160, 200, 100 * US, |_| false);
    n.run(end + n.owd + MS);
    let reports: Vec<Nanos> = n
        .rev_sent
        .iter()
        .filter(|(t, m)| *t >= from && *m == MessageType::LossReport)
        .map(|(t, _)| *t)
        .collect();
    assert!(reports.len() >= 3, "{reports:?}");
    for w in reports.windows(2) {
        assert!(w[1] - w[0] <= 6 * MS + 100 * US, "{reports:?}");
    }
}

#[test]
fn crf_keeps_an_operator_hold() {
    let mut n = Net::new(
        sender_params(16, 0, 10 * MS),
        receiver_params(10 * MS, RttRule::KeepHold, 30 * MS),
        3 * MS,
    );
    n.start();
    n.run(20 * MS);
    let end = n.burst(20 * MS, 0, 160, 100 * US, lossy);
    n.run(end + 100 * MS);
    assert_eq!(n.rcv.srtt(), 6 * MS);
    let c = n.rcv.crf().config();
    assert_eq!(c.hold_time, 30 * MS);
    // SRTT/4 = 1.5 ms (from 2.5 ms with the hint).
    assert_eq!(c.reorder_allowance, 1500 * US);
}

#[test]
fn crf_in_selective_repeat_measures_its_tc_reports() {
    // No REPAIR_REQUEST at all: the T/C AETH reports' Source Copy answers
    // are the only samples.
    let th = TcThresholds::from_rate(10_000, 10 * MS);
    let mut sp = sender_params(16, 0, 10 * MS);
    sp.csf.selective_repeat = true;
    sp.csf.tc_batch_time = th.t_thresh;
    let mut rp = receiver_params(10 * MS, RttRule::KeepHold, 0);
    rp.crf.coded_retx = false;
    rp.crf.tc = Some(th);
    let mut n = Net::new(sp, rp, 3 * MS);
    n.start();
    n.run(20 * MS);
    let end = n.burst(20 * MS, 0, 160, 100 * US, lossy);
    n.run(end + 100 * MS);
    let k = n.rcv.crf_counters();
    assert_eq!(k.requests_block + k.requests_ranges, 0, "{k:?}");
    assert!(k.tc_reports > 0 && k.repairs_source_copy > 0, "{k:?}");
    assert!(n.rcv.rtt().samples() > 0);
    assert_eq!((n.rcv.srtt(), n.rcv.min_rtt()), (6 * MS, 6 * MS));
}

#[test]
fn crf_without_answers_keeps_the_hint() {
    // The CSF never hears the CRF (every CRF message lost): no answer, no
    // sample.
    let mut n = Net::new(
        sender_params(16, 0, 10 * MS),
        receiver_params(10 * MS, RttRule::Fixed, MS),
        3 * MS,
    );
    n.drop_rev = |m| !matches!(m, Message::HelloAck(_) | Message::ParamAck(_));
    n.start();
    n.run(20 * MS);
    let end = n.burst(20 * MS, 0, 160, 100 * US, lossy);
    n.run(end + 100 * MS);
    assert!(n.rcv.crf_counters().requests_block + n.rcv.crf_counters().requests_ranges > 0);
    assert_eq!(n.rcv.rtt().samples(), 0);
    assert_eq!(n.rcv.srtt(), 10 * MS);
}

/// When a coded round fits in the peer's hold (the sender's policy then
/// counts on it): a block, the CRF's reordering allowance and a round trip
/// with a quarter to spare. The RECOMMENDED H (at most a quarter RTT)
/// never covers one; `make demo`'s 30 ms on its 10 ms path does.
#[test]
fn a_coded_round_fits_a_hold_that_covers_a_block_and_a_round_trip() {
    // 16 packets at 1250 packets/s: 12.8 ms; allowance 2.5 ms; 12.5 ms.
    let block = crf::block_time_for(16, 1250);
    assert!(crf::round_within_hold(30 * MS, 10 * MS, block));
    assert!(!crf::round_within_hold(27 * MS, 10 * MS, block));
    assert!(crf::round_within_hold(27800 * US, 10 * MS, block));
    assert!(!crf::round_within_hold(30 * MS, 20 * MS, block));
    assert!(!crf::round_within_hold(0, 0, 0));
    for rtt in [MS, 10 * MS, 100 * MS] {
        let h = crf::hold_time_for(16, 1250, rtt);
        assert!(!crf::round_within_hold(h, rtt, 0), "{rtt}");
    }
}
