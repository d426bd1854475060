// SPDX-License-Identifier: GPL-2.0
//! The engine of one flow: crem-core's `SenderFlow` (CSF side) or
//! `ReceiverFlow` (CRF side) with the flow's packet stores, written in place
//! in memory of its own, driven under the flow's lock (`crate::flow`) with
//! the kernel's clock. Everything here only translates: the protocol is
//! crem-core's.

use crate::addr::NetAddr;
use crate::crem_core::engine::crf::{self, CrfConfig, TcThresholds, Workspace};
use crate::crem_core::engine::csf::{self, CsfIo, CsfParams, SourceVerdict};
use crate::crem_core::engine::flow::{
    FlowState, PinError, ReceiverEvent, ReceiverFlow, ReceiverParams, SenderEvent, SenderFlow,
    SenderParams,
};
use crate::crem_core::engine::negotiation::{choose_flow_id, FlowDescriptor, ProposeError};
use crate::crem_core::engine::policy::{BreakerState, LossClass, PolicyConfig};
// The capacities: one sizing rule (crem-sim uses the same).
use crate::crem_core::engine::module_caps::{FlowCaps, MAX_M, MESSAGE};
use crate::crem_core::engine::{FecConfig, Limits, Nanos, MS};
use crate::crem_core::fec::Scheme;
use crate::crem_core::nl::{
    breaker, flow_event, flow_stat as fs, flow_state, loss_class, recovery, side,
};
use crate::crem_core::psn::Psn;
use crate::crem_core::roce::{self, RocePacket};
use crate::crem_core::wire::{self, FlowKind, Message};
use crate::ffi;
use crate::flow_info::FlowInfo;
use crate::gf::Coder;
use crate::host::{self, CrfIo, Host};
use crate::kernel_ext::bh::Bh;
use crate::kernel_ext::mem::{FlowAlloc, FlowArray};
use crate::kernel_ext::skb::{sk_buff, Skb};
use crate::store::{Current, Owner, Stores};
use crate::table::kind_of;
use core::convert::Infallible;
use core::mem::{size_of, MaybeUninit};
use core::ptr::NonNull;
use kernel::alloc::Box;
use kernel::init::{init_from_closure, InPlaceWrite, Init};
use kernel::prelude::*;

const RECOVERY_CODED: u8 = recovery::CODED;
const RECOVERY_SELECTIVE: u8 = recovery::SELECTIVE_REPEAT;

/// What the engine of a new flow is made from: the netns configuration's
/// fields (`config::Defaults`) and the flow's own (set up fills them).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EngineParams {
    /// `nl::side` and `nl::flow_kind`.
    pub(crate) side: u8,
    pub(crate) kind: u8,
    /// `nl::recovery`; adaptive: 0 or 1.
    pub(crate) recovery: u8,
    pub(crate) adaptive: u8,
    pub(crate) k: u8,
    pub(crate) m: u8,
    pub(crate) m_cong: u8,
    /// The operator's T, 0: T follows the RDMA MTU.
    pub(crate) symbol_len: u16,
    /// Of the first packet's device, 0 if none.
    pub(crate) link_mtu: u32,
    /// The operator's hold time, 0: the draft's rule.
    pub(crate) hold_us: u32,
    pub(crate) epsilon_ppb: u32,
    pub(crate) dqp: u32,
    /// The flow's addresses.
    pub(crate) saddr: NetAddr,
    pub(crate) daddr: NetAddr,
    pub(crate) retention_budget: u64,
    pub(crate) rtt_hint_ns: u64,
}

impl EngineParams {
    /// All zero (a configuration's defaults before its fields are set).
    pub(crate) const ZERO: Self = EngineParams {
        side: 0,
        kind: 0,
        recovery: 0,
        adaptive: 0,
        k: 0,
        m: 0,
        m_cong: 0,
        symbol_len: 0,
        link_mtu: 0,
        hold_us: 0,
        epsilon_ppb: 0,
        dqp: 0,
        saddr: NetAddr::NONE,
        daddr: NetAddr::NONE,
        retention_budget: 0,
        rtt_hint_ns: 0,
    };
}

/// The engines' storage: arrays of the flow's own, sized when it is made
/// ([`FlowCaps`], from the netns's `max-bdp`).
#[derive(Debug)]
pub(crate) struct KStorage;

impl csf::CsfStorage for KStorage {
    type Ring = FlowArray<csf::Block>;
    type Acc = FlowArray<u8>;
}

impl crf::CrfStorage for KStorage {
    type Blocks = FlowArray<crf::Block>;
    type Flags = FlowArray<u16>;
    type Due = FlowArray<u32>;
    type Hold = FlowArray<crf::HoldEntry>;
    type Repairs = FlowArray<crf::RepairMeta>;
}

type KSender = SenderFlow<KStorage>;
type KReceiver = ReceiverFlow<KStorage>;

/// A sender's storage, until its engine is written.
struct CsfArrays {
    ring: FlowArray<csf::Block>,
    acc: [FlowArray<u8>; 2],
}

impl CsfArrays {
    fn new(c: &FlowCaps) -> Result<Self> {
        Ok(CsfArrays {
            ring: FlowArray::new(c.csf_blocks, || csf::Block::EMPTY)?,
            acc: [
                FlowArray::new(c.csf_acc, || 0)?,
                FlowArray::new(c.csf_acc, || 0)?,
            ],
        })
    }
}

fn crf_arrays(c: &FlowCaps) -> Result<crf::Storage<KStorage>> {
    let r = &c.crf;
    Ok((
        FlowArray::new(r.blocks, || crf::Block::EMPTY)?,
        FlowArray::new(r.window, || 0)?,
        FlowArray::new(r.window, || 0)?,
        FlowArray::new(r.held, || crf::HoldEntry::EMPTY)?,
        FlowArray::new(r.repairs, || crf::RepairMeta::EMPTY)?,
    ))
}

/// Octets of one flow's engine with these capacities (`csf`: the sender
/// side), its arrays included, its stores aside.
pub(crate) fn engine_octets(csf: bool, c: &FlowCaps) -> usize {
    if csf {
        size_of::<KSender>()
            .saturating_add(c.csf_blocks.saturating_mul(size_of::<csf::Block>()))
            .saturating_add(c.csf_acc.saturating_mul(2))
    } else {
        let r = &c.crf;
        size_of::<KReceiver>()
            .saturating_add(r.blocks.saturating_mul(size_of::<crf::Block>()))
            .saturating_add(r.window.saturating_mul(size_of::<u16>() + size_of::<u32>()))
            .saturating_add(r.held.saturating_mul(size_of::<crf::HoldEntry>()))
            .saturating_add(r.repairs.saturating_mul(size_of::<crf::RepairMeta>()))
    }
}

/// A flow's crem-core engine, in memory of its own, its arrays sized by
/// its [`FlowCaps`]: reserved when the flow is made (process context, the
/// flow's memory cgroup), written when it is set up (possibly in softirq,
/// on a spare made earlier), by pin-init from crem-core's `init_at_with`,
/// which moves the arrays in.
enum Proto {
    SenderSpace(Box<MaybeUninit<KSender>, FlowAlloc>, CsfArrays),
    ReceiverSpace(
        Box<MaybeUninit<KReceiver>, FlowAlloc>,
        crf::Storage<KStorage>,
    ),
    Sender(Box<KSender, FlowAlloc>),
    Receiver(Box<KReceiver, FlowAlloc>),
}

/// A set-up engine's parts an engine call uses.
struct Parts<'a, F> {
    flow: &'a mut F,
    stores: &'a mut Stores,
    heard: &'a mut Option<Nanos>,
}

/// crem-core's `init_at_with` as an initialiser, for `Box::write_init`.
///
/// # Safety
///
/// `init_at`, given a slot valid for writes and aligned for `T` (which
/// `write_init` provides), writes a whole valid `T` there and returns
/// `Ok`, or returns an error having written nothing that needs dropping.
unsafe fn in_place<T, E>(
    init_at: impl FnOnce(*mut T) -> core::result::Result<(), E>,
) -> impl Init<T, E> {
    // SAFETY: `init_at` keeps `init_from_closure`'s contract (ours).
    unsafe { init_from_closure(init_at) }
}

/// The flow's first RDMA MTU estimate: the largest its link allows (the
/// RDMA device's active MTU, which rdma_cm and perftest use unless told
/// otherwise), the largest there is if the link is unknown (a flow the
/// operator added, or a CRF, which takes the HELLO's). The sender learns
/// the real one from its packets (crem-core's `FlowMtu`).
fn mtu_estimate(p: &EngineParams) -> u32 {
    match p.link_mtu {
        0 => 4096,
        l => roce::ib_mtu_for_link(l),
    }
}

/// The operator's T, or none (T follows the RDMA MTU).
fn configured_t(p: &EngineParams) -> Option<u16> {
    (p.symbol_len != 0).then_some(p.symbol_len)
}

fn sender_params(p: &EngineParams, caps: &FlowCaps) -> SenderParams {
    let mtu = mtu_estimate(p);
    let t = configured_t(p).unwrap_or(roce::symbol_len_for_mtu(mtu));
    let rtt = p.rtt_hint_ns.max(MS);
    let selective = p.recovery != RECOVERY_CODED;
    let policy = (p.adaptive != 0).then_some(PolicyConfig {
        k: p.k.max(1),
        epsilon_ppb: p.epsilon_ppb,
        m_cong: p.m_cong,
        ..PolicyConfig::DEFAULT
    });
    SenderParams {
        csf: CsfParams {
            // A burst ends after 2 ms without packets (TCG-era rates).
            idle_timeout: 2 * MS,
            retention_budget: p.retention_budget,
            // The store keeps sources by PSN modulo its slots (`store.rs`).
            retention_span: u32::try_from(caps.csf_store).unwrap_or(u32::MAX),
            initial_srtt: rtt,
            selective_repeat: selective,
            // No RDMA ACK ever releases responses: retain them as long as a
            // coded retransmission can still help (a few RTTs: with_rtt
            // raises it, and sets the T/C timings, from each SRTT).
            give_up_after: match kind_of(p.kind) {
                FlowKind::Requests => 0,
                FlowKind::Responses => CsfParams::MIN_RTT_TIMEOUT,
            },
            fill_gaps: kind_of(p.kind) == FlowKind::Responses,
            rtt_derived: true,
            // The tail notice draws a request: none comes from a CRF in
            // selective-repeat mode alone.
            tail_info: p.recovery != RECOVERY_SELECTIVE,
            ..CsfParams::DEFAULT
        }
        .with_rtt(rtt),
        policy,
        fixed_k: p.k.max(1),
        fixed_m: p.m.min(MAX_M),
        scheme: Scheme::CauchyRs,
        t,
        t_follows_mtu: configured_t(p).is_none(),
        // Protect an RDMA connection's first burst too: HELLO and the
        // first PARAM_UPDATE take two RTTs.
        early: true,
        rtt_hint: rtt,
        block_time_hint: 2 * MS,
        psn_lead: 64,
        // No round counted yet (README, "A coded round within the hold"):
        // the peer's H is not on the wire, and in the VMs, with our hold-us
        // standing for it, the rule fitted almost none of the bulk flows'
        // decisions (their SRTT under load, 21-35 ms, leaves a 30 ms hold
        // no room for a round), so no gain was shown there.
        peer_hold: 0,
        limits: Limits {
            schemes: 0b111,
            max_k: 255,
            max_m: MAX_M,
            max_t: configured_t(p).unwrap_or(roce::MAX_SYMBOL_LEN),
            max_open_blocks: u16::MAX,
        },
        flow: FlowDescriptor {
            // AF 4 or 6 by the addresses' family (a flow's are of one).
            addrs: NetAddr::flow(p.saddr, p.daddr),
            dest_qp: p.dqp,
            rdma_mtu: mtu as u16,
            kind: kind_of(p.kind),
        },
        initial_psn: Psn::ZERO,
    }
}

fn receiver_params(p: &EngineParams, caps: &FlowCaps) -> ReceiverParams {
    let rtt = p.rtt_hint_ns.max(MS);
    // The operator's H stays; else the draft's RECOMMENDED one (a block at
    // 10 000 packets/s, at most a quarter of the minimum RTT). Either way
    // the engine recomputes what follows from each RTT sample (the
    // allowance, H unless set), from the hint until the first.
    let (hold_time, rtt_rule) = if p.hold_us != 0 {
        (Nanos::from(p.hold_us) * 1000, crf::RttRule::KeepHold)
    } else {
        let block_time = crf::block_time_for(p.k.max(1), 10_000);
        (0, crf::RttRule::Recommended { block_time })
    };
    ReceiverParams {
        crf: CrfConfig {
            hold_time,
            rtt_rule,
            srtt: rtt,
            coded_retx: p.recovery != RECOVERY_SELECTIVE,
            fallback_source_copy: true,
            // From a 10 000 packets/s hint until the first LOSS_REPORT
            // interval measures the rate; they follow each SRTT too.
            tc: (p.recovery != RECOVERY_CODED).then(|| TcThresholds::from_rate(10_000, rtt)),
            tc_follows: true,
            responses: kind_of(p.kind) == FlowKind::Responses,
            ..CrfConfig::new(0)
        },
        limits: Limits {
            schemes: 0b111,
            max_k: 255,
            max_m: MAX_M,
            // T comes with the CSF's configurations, sized to the MTU it sees.
            max_t: configured_t(p).unwrap_or(roce::MAX_SYMBOL_LEN),
            max_open_blocks: u16::try_from(caps.crf.blocks).unwrap_or(u16::MAX),
        },
        block_time: 2 * MS,
    }
}

/// What the CRF made of the hook's source packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CrfTake {
    /// It goes on.
    Pass,
    /// Host mode: one the flow queued to the backlog, back at the hook
    /// (`crate::backlog`): it goes on, unexamined.
    Back,
    /// The flow holds it (the hook returns `NF_STOLEN`).
    Held,
    /// A copy of it went on after packets replayed before it: the hook
    /// consumes it and returns `NF_STOLEN`.
    Replaced,
}

/// Takes the hook's packet `skb` into the stores with `take` (a packet
/// kept keeps its route, which must outlive the RCU section it was found
/// in): false, the packet left with the hook, if it has no route or
/// `take` gives it back.
///
/// # Safety
///
/// `skb` is the hook's live packet, whose reference the hook gives up when
/// this returns true (it returns `NF_STOLEN`).
unsafe fn take_from_hook(
    skb: *mut sk_buff,
    take: impl FnOnce(Skb) -> core::result::Result<(), Skb>,
) -> bool {
    // SAFETY: the hook's live packet (the contract).
    let routed = unsafe {
        ffi::crem_h_skb_dst_force(skb);
        ffi::crem_h_skb_has_dst(skb)
    };
    // SAFETY: the hook owns the packet's reference and gives it to us if
    // we keep it; a refusal hands it back (`into_raw`).
    match routed.then(|| unsafe { Skb::from_raw(skb) }).flatten() {
        Some(skb) => take(skb).map_err(Skb::into_raw).is_ok(),
        None => false,
    }
}

/// Sends on the ACKs kept back that no held packet is before any more, or
/// whose time is up (`crate::acks`), oldest first, after a receiver engine
/// call at `now`; with `before`, only those before it (a packet about to
/// go on).
fn settle_acks(flow: &KReceiver, stores: &mut Stores, now: Nanos, before: Option<Psn>) {
    while let Some((a, until)) = stores.ack_front() {
        if before.is_some_and(|b| !a.is_before(b)) {
            return;
        }
        if now < until && flow.crf().holds_before(a) {
            return;
        }
        stores.release_ack();
    }
}

/// A flow's engine and its packet stores: crem-core's sender or receiver
/// flow by the flow's side ([`Proto`]). Until the flow is set up
/// ([`Engine::init`]) only the stores exist and every engine call does
/// nothing.
///
/// It lives under its flow's lock (`crate::flow`), so every method runs
/// with BH off and never concurrently with another.
pub(crate) struct Engine {
    /// `None` only inside `init`.
    proto: Option<Proto>,
    stores: Stores,
    /// When a message from the peer last reached the flow (`None`: never).
    heard: Option<Nanos>,
}

/// Runs `f` with this CPU's workspace (`None`: there is none to lend, and
/// the call does nothing).
fn with_workspace<R>(f: impl FnOnce(&mut crate::workspace::Workspace) -> R) -> Option<R> {
    // SAFETY: engines are used only under their flow's lock, which is
    // taken with BH off (`BhLock`), and not beyond it.
    let bh = unsafe { Bh::assume() };
    crate::workspace::with(&bh, f)
}

fn note_sender_event(h: &mut Host<'_>, ev: Option<SenderEvent>) {
    match ev {
        Some(SenderEvent::Established { flow_id }) => h.set_flow_id(flow_id),
        Some(SenderEvent::ConfigChanged(cfg)) => h.config_changed(&cfg),
        Some(SenderEvent::BreakerTripped) => h.flow_event(flow_event::BREAKER_TRIPPED, 0),
        Some(SenderEvent::BreakerCleared) => h.flow_event(flow_event::BREAKER_CLEARED, 0),
        Some(SenderEvent::Closed {
            reason,
            by_peer: true,
        }) => h.flow_event(flow_event::CLOSE_RECEIVED, reason.to_u16()),
        _ => {}
    }
}

/// Why flow-set did not pin or unpin a flow (netlink says which, in
/// its extack).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PinRefused {
    /// The flow is gone, or its engine is not set up.
    Failed,
    /// A configuration change is in flight.
    Busy,
    /// (k, m) is outside the negotiated limits.
    OutsideLimits,
    /// No Config ID is free.
    NoSlot,
    /// The flow has no peer configuration yet.
    NotEstablished,
    /// Unpinning a flow that has no adaptive policy (fixed k and m).
    NoPolicy,
    /// A receiver flow: nothing to pin.
    NotSender,
}

/// The outcome of `Engine::pin` for netlink.
fn pin_result(r: core::result::Result<(), PinError>) -> core::result::Result<(), PinRefused> {
    match r {
        Ok(()) => Ok(()),
        Err(PinError::NoPolicy) => Err(PinRefused::NoPolicy),
        Err(PinError::Propose(p)) => match p {
            ProposeError::Unchanged => Ok(()),
            ProposeError::Busy => Err(PinRefused::Busy),
            ProposeError::OutsideLimits => Err(PinRefused::OutsideLimits),
            ProposeError::NoConfigSlot => Err(PinRefused::NoSlot),
            ProposeError::NotEstablished => Err(PinRefused::NotEstablished),
        },
    }
}

impl Engine {
    /// A flow's engine memory with its (empty) stores, the engine proper
    /// not yet written (None if out of memory). Process context; the memory
    /// is charged to the memory cgroup the caller made active, and may fail
    /// there.
    pub(crate) fn new(owner: Owner, csf: bool, caps: &FlowCaps) -> Option<Self> {
        let stores = Stores::new(owner, csf, caps, engine_octets(csf, caps)).ok()?;
        let proto = if csf {
            let arrays = CsfArrays::new(caps).ok()?;
            Proto::SenderSpace(Box::new_uninit(GFP_KERNEL).ok()?, arrays)
        } else {
            let arrays = crf_arrays(caps).ok()?;
            Proto::ReceiverSpace(Box::new_uninit(GFP_KERNEL).ok()?, arrays)
        };
        Some(Engine {
            proto: Some(proto),
            stores,
            heard: None,
        })
    }

    /// Writes the engine proper from `p` (once; any context: no allocation).
    pub(crate) fn init(&mut self, p: &EngineParams) -> Result {
        let csf = p.side == side::CSF;
        let (proto, r) = match self.proto.take() {
            Some(Proto::SenderSpace(b, a)) if csf => {
                let params = sender_params(p, self.stores.caps());
                // SAFETY: crem-core's `init_at_with` writes a whole flow.
                let init = unsafe {
                    in_place(|slot| {
                        // SAFETY: `write_init` gives a slot valid for
                        // writes and aligned for the flow, holding none.
                        KSender::init_at_with(slot, params, a.ring, a.acc);
                        Ok::<(), Infallible>(())
                    })
                };
                let Ok(b) = b.write_init(init);
                (Proto::Sender(b), Ok(()))
            }
            Some(Proto::ReceiverSpace(b, a)) if !csf => {
                let params = receiver_params(p, self.stores.caps());
                // SAFETY: crem-core's `init_at_with` writes a whole flow, or
                // nothing when it refuses the storage (handed back, dropped
                // here).
                let init = unsafe {
                    in_place(|slot| {
                        // SAFETY: as above.
                        KReceiver::init_at_with(slot, params, a).map_err(|(e, _)| e)
                    })
                };
                match b.write_init(init) {
                    Ok(b) => (Proto::Receiver(b), Ok(())),
                    // Never: the arrays are sized by `caps_for`, whose
                    // sizes the engine accepts (crem-core's proptest). The
                    // flow then stays without an engine.
                    Err(_) => return Err(EINVAL),
                }
            }
            // Set up already, or of the other side: left as it was.
            Some(other) => (other, Err(EINVAL)),
            None => return Err(EINVAL),
        };
        self.proto = Some(proto);
        self.heard = None;
        r
    }

    /// Whether this is a sender (CSF) flow's engine.
    pub(crate) fn is_csf(&self) -> bool {
        matches!(
            self.proto,
            Some(Proto::Sender(_)) | Some(Proto::SenderSpace(..))
        )
    }

    /// The flow's stores (set up or not).
    pub(crate) fn stores(&mut self) -> &mut Stores {
        &mut self.stores
    }

    fn sender(&mut self) -> Option<Parts<'_, KSender>> {
        match self.proto.as_mut()? {
            Proto::Sender(flow) => Some(Parts {
                flow,
                stores: &mut self.stores,
                heard: &mut self.heard,
            }),
            _ => None,
        }
    }

    fn receiver(&mut self) -> Option<Parts<'_, KReceiver>> {
        match self.proto.as_mut()? {
            Proto::Receiver(flow) => Some(Parts {
                flow,
                stores: &mut self.stores,
                heard: &mut self.heard,
            }),
            _ => None,
        }
    }

    /// Runs `f` with the sender, its I/O (messages to `h`, its stores) and
    /// this CPU's workspace; None if this is no set-up sender or there is
    /// no workspace to lend.
    fn with_sender<'h, R>(
        &mut self,
        h: &mut Host<'h>,
        f: impl FnOnce(&mut KSender, &mut CsfIo<'_, Coder, Host<'h>, Stores>) -> R,
    ) -> Option<R> {
        let e = self.sender()?;
        with_workspace(|ws| {
            let io = &mut CsfIo {
                gf: &Coder::chosen(),
                sink: h,
                store: &mut *e.stores,
                scratch: &mut ws.msg[..],
            };
            f(e.flow, io)
        })
    }

    /// A sender flow starts: its HELLO (with `nonce`) leaves.
    pub(crate) fn csf_start(&mut self, h: &mut Host<'_>, now: Nanos, nonce: u64) {
        if let Some(e) = self.sender() {
            e.flow.start(now, nonce, h);
        }
    }

    /// A source packet of a sender flow: `payload`, its RoCEv2 UDP payload
    /// in `cur`, the packet being processed, is coded and retained.
    pub(crate) fn csf_source(
        &mut self,
        h: &mut Host<'_>,
        now: Nanos,
        pkt: &RocePacket<'_>,
        cur: Current,
        payload: &[u8],
    ) {
        self.with_sender(h, |flow, io| {
            io.store.current = Some(cur);
            // The hook parsed the packet: the engine does not again.
            if flow.on_parsed_source(now, pkt, payload, io) == SourceVerdict::Retain {
                io.store.csf_keep(pkt.bth.psn, payload);
            }
            io.store.current = None;
        });
    }

    /// flow-set: pins (k, m), or with `None` goes back to the adaptive
    /// policy.
    pub(crate) fn csf_pin(
        &mut self,
        h: &mut Host<'_>,
        now: Nanos,
        km: Option<(u8, u8)>,
    ) -> core::result::Result<(), PinRefused> {
        self.with_sender(h, |flow, io| pin_result(flow.pin(now, km, io.sink)))
            .unwrap_or(Err(PinRefused::Failed))
    }

    /// An RDMA packet of the reverse direction: its ACKs release retention.
    pub(crate) fn csf_reverse(&mut self, now: Nanos, pkt: &RocePacket<'_>) {
        if let Some(e) = self.sender() {
            e.flow.on_parsed_reverse(now, pkt, e.stores);
        }
    }

    /// A source packet reached the CRF: what becomes of `skb` (the hook's
    /// packet, whose payload `cur` points at): it goes on, the flow holds
    /// it for in-order release (the hook steals it), or a copy of it went
    /// on after replayed packets (the hook consumes it). A packet the
    /// engine would hold but that has no route to be released by, or that
    /// cannot be charged, goes on at once, counted as `held-dropped`.
    pub(crate) fn crf_source(
        &mut self,
        h: &mut Host<'_>,
        now: Nanos,
        psn: u32,
        cur: Current,
        payload: &[u8],
        ce: bool,
    ) -> CrfTake {
        let Some(e) = self.receiver() else {
            return CrfTake::Pass;
        };
        if e.stores.back_from_backlog(cur.skb.as_ptr(), psn, now) {
            // One of ours: seen already.
            return CrfTake::Back;
        }
        e.stores.current = Some(cur);
        let io = &mut CrfIo {
            sink: h,
            stores: &mut *e.stores,
        };
        let verdict = e.flow.on_source(now, Psn::new(psn), payload, ce, io);
        e.stores.current = None;
        // A packet that goes on does so after this call: ACKs after it wait
        // (for the release its arrival makes due, or the next event).
        let before = (verdict == crf::SourceVerdict::Deliver).then_some(Psn::new(psn));
        settle_acks(e.flow, e.stores, now, before);
        // What goes on may have to wait behind what the flow passed on.
        let go_on = |stores: &mut Stores| {
            // SAFETY: the hook's live packet, which it gives up if the
            // stores take it (it returns NF_STOLEN); the engine's borrows of
            // its payload ended with its call.
            if unsafe { stores.queue_behind(now, psn, cur.skb.as_ptr()) } {
                CrfTake::Held
            } else {
                CrfTake::Pass
            }
        };
        match verdict {
            crf::SourceVerdict::Deliver => return go_on(e.stores),
            crf::SourceVerdict::Hold => {}
            // Its copy went on after the replayed ones (`crf/replay.rs`):
            // the hook ends this one, once nothing borrows it any more.
            crf::SourceVerdict::Replaced => return CrfTake::Replaced,
        }
        // SAFETY: the hook's live packet, which it gives up if the stores
        // take it (it returns NF_STOLEN).
        let taken = unsafe { take_from_hook(cur.skb.as_ptr(), |skb| e.stores.hold(psn, skb)) };
        if !taken {
            e.stores.count_held_dropped();
            return go_on(e.stores);
        }
        CrfTake::Held
    }

    /// An RDMA ACK or NAK at `psn` for this responses flow's QP reached the
    /// CRF (`skb`, the hook's packet): it waits while the flow holds a
    /// packet before `psn`, or behind ACKs that wait (`crate::acks`);
    /// in host mode, one the flow passed on comes back (`Back`), and one
    /// that would go on may have to queue behind what the flow passed on.
    pub(crate) fn crf_ack(&mut self, now: Nanos, psn: u32, skb: NonNull<sk_buff>) -> CrfTake {
        let Some(e) = self.receiver() else {
            return CrfTake::Pass;
        };
        let skb = skb.as_ptr();
        if e.stores.back_from_backlog(skb, psn, now) {
            return CrfTake::Back;
        }
        let p = Psn::new(psn);
        if e.stores.acks_waiting() || e.flow.crf().holds_before(p) {
            let until = now.saturating_add(e.flow.crf().config().hold_time);
            // SAFETY: the hook's live packet, which it gives up if the
            // stores take it (it returns NF_STOLEN).
            if unsafe { take_from_hook(skb, |skb| e.stores.hold_ack(p, until, skb)) } {
                return CrfTake::Held;
            }
            // It goes on now: those waiting go first, in their order.
            e.stores.count_ack_passed();
            while e.stores.ack_front().is_some() {
                e.stores.release_ack();
            }
        }
        // SAFETY: the hook's live packet, which it gives up if the stores
        // take it; nothing borrows it.
        if unsafe { e.stores.queue_behind(now, psn, skb) } {
            CrfTake::Held
        } else {
            CrfTake::Pass
        }
    }

    /// A CREM message for this flow (`ce`: its datagram arrived CE-marked).
    pub(crate) fn msg(&mut self, h: &mut Host<'_>, now: Nanos, bytes: &[u8], ce: bool) {
        let Ok(msg) = wire::decode(bytes) else {
            return;
        };
        // The peer's messages; a PATH_REPORT comes from a Path Reporter.
        let heard = (!matches!(msg, Message::PathReport(_))).then_some(now);
        if self.is_csf() {
            if let Some(e) = self.sender() {
                *e.heard = heard.or(*e.heard);
            }
            let ev = self.with_sender(h, |flow, io| flow.on_message(now, &msg, io));
            note_sender_event(h, ev.flatten());
            return;
        }
        let Some(e) = self.receiver() else {
            return;
        };
        *e.heard = heard.or(*e.heard);
        let ids = h.ids();
        let new_id = || choose_flow_id(host::random_u32, |id| ids.in_use(id));
        let ev = with_workspace(|ws| {
            let mut w = Workspace {
                gf: &Coder::chosen(),
                scratch: &mut ws.scratch,
                out: &mut ws.out,
            };
            let io = &mut CrfIo {
                sink: &mut *h,
                stores: &mut *e.stores,
            };
            e.flow.on_message(now, &msg, ce, new_id, io, &mut w)
        });
        settle_acks(e.flow, e.stores, now, None);
        match ev.flatten() {
            Some(ReceiverEvent::Established { flow_id })
            | Some(ReceiverEvent::Restarted { flow_id, .. }) => h.set_flow_id(flow_id),
            Some(ReceiverEvent::Closed(reason)) => {
                h.flow_event(flow_event::CLOSE_RECEIVED, reason.to_u16())
            }
            Some(ReceiverEvent::ConfigAccepted(cfg)) => h.config_changed(&cfg),
            _ => {}
        }
    }

    /// The engine's deadline has passed.
    pub(crate) fn timer(&mut self, h: &mut Host<'_>, now: Nanos) {
        if self.is_csf() {
            let ev = self.with_sender(h, |flow, io| flow.on_timer(now, io));
            note_sender_event(h, ev.flatten());
            return;
        }
        let Some(e) = self.receiver() else {
            return;
        };
        with_workspace(|ws| {
            let mut w = Workspace {
                gf: &Coder::chosen(),
                scratch: &mut ws.scratch,
                out: &mut ws.out,
            };
            let io = &mut CrfIo {
                sink: h,
                stores: &mut *e.stores,
            };
            e.flow.on_timer(now, io, &mut w);
        });
        settle_acks(e.flow, e.stores, now, None);
    }

    /// When the engine wants `timer` next (None: it waits for packets).
    pub(crate) fn deadline(&mut self) -> Option<Nanos> {
        if let Some(e) = self.sender() {
            return e.flow.next_deadline();
        }
        let e = self.receiver()?;
        let d = e.flow.next_deadline();
        match e.stores.ack_front() {
            // One that only waited for the packet `crf_source` passed on
            // goes on from the timer, at once.
            Some((a, _)) if !e.flow.crf().holds_before(a) => Some(0),
            Some((_, until)) => Some(d.map_or(until, |d| d.min(until))),
            None => d,
        }
    }

    /// Ends the engine (once, when its flow is removed). `close`: either
    /// side closes with that reason, which sends CLOSE if the flow is
    /// established, so the peer drops its half at once. Without one (netns
    /// or port teardown, the socket already gone) the CSF only releases
    /// its retention; the CRF always closes, since that releases its held
    /// packets in PSN order.
    pub(crate) fn fini(&mut self, h: &mut Host<'_>, close: Option<wire::CloseReason>) {
        if self.is_csf() {
            if let Some(reason) = close {
                self.with_sender(h, |flow, io| flow.close(reason, io));
            }
            // Whatever close left (nothing, or all of it without a workspace).
            if let Some(e) = self.sender() {
                e.flow.shutdown(e.stores);
            }
            return;
        }
        if let Some(e) = self.receiver() {
            let io = &mut CrfIo {
                sink: h,
                stores: &mut *e.stores,
            };
            e.flow.close(close.unwrap_or(wire::CloseReason::Normal), io);
            // Nothing is held any more: the ACKs that waited go on.
            while e.stores.ack_front().is_some() {
                e.stores.release_ack();
            }
        }
    }

    /// `dev` is being unregistered: no stored packet keeps a pointer to it.
    /// Returns how many held packets were dropped with it.
    pub(crate) fn dev_gone(&mut self, dev: *const kernel::bindings::net_device) -> u32 {
        self.stores().dev_gone(dev)
    }
}

/// Nanoseconds as whole microseconds for netlink (saturating).
fn us(ns: Nanos) -> u32 {
    (ns / 1000).min(u64::from(u32::MAX)) as u32
}

/// `nl::loss_class` of a classification.
fn loss_class_code(c: LossClass) -> u8 {
    match c {
        LossClass::None => loss_class::NONE,
        LossClass::Transmission => loss_class::TRANSMISSION,
        LossClass::Congestion => loss_class::CONGESTION,
    }
}

/// `nl::flow_state` of an engine's state.
fn state_code(s: FlowState) -> u8 {
    match s {
        FlowState::Negotiating => flow_state::NEGOTIATING,
        FlowState::Established => flow_state::PROTECTED,
        FlowState::Unprotected => flow_state::UNPROTECTED,
        FlowState::Closed(_) => flow_state::CLOSING,
    }
}

fn put_config(fi: &mut FlowInfo, c: Option<FecConfig>) {
    if let Some(c) = c {
        fi.config_id = c.id;
        fi.scheme = u8::from(c.scheme);
        fi.k = c.k;
        fi.m = c.m;
        fi.symbol_len = c.t;
    }
}

impl Engine {
    /// The flow's state (`nl::flow_state`), `None` for an engine not set
    /// up.
    pub(crate) fn state_code(&mut self) -> Option<u8> {
        if let Some(e) = self.sender() {
            Some(state_code(e.flow.state()))
        } else {
            self.receiver().map(|e| state_code(e.flow.state()))
        }
    }

    /// The engine's state and counters into `fi` (the default before);
    /// nothing for an engine not set up. Each counter goes to its
    /// flow-stats index: one the engine adds is set here, and reported.
    pub(crate) fn info(&mut self, fi: &mut FlowInfo) {
        // On the datapath's clock (crem_now: ktime_get_ns).
        let now = u64::try_from(kernel::time::Ktime::ktime_get().to_ns()).unwrap_or(0);
        let since = |heard: Option<Nanos>| heard.map(|t| now.saturating_sub(t) / 1_000_000);
        let c = &mut fi.counters;
        if let Some(e) = self.sender() {
            let f = &e.flow;
            let k = f.csf_counters();
            for (i, v) in [
                (fs::SOURCES, k.sources),
                (fs::SOURCE_OCTETS, k.source_octets),
                (fs::UNPROTECTED, k.unprotected_sources),
                (fs::REPAIRS_SENT, k.repairs_ordinary),
                (fs::CODED_RETX, k.repairs_retx),
                (fs::SOURCE_COPIES, k.repairs_source_copy),
                (fs::REPAIR_OCTETS, k.repair_octets),
                (
                    fs::REQUESTS_RECEIVED,
                    k.requests_block.saturating_add(k.requests_ranges),
                ),
                (fs::FALLBACK_REQUESTS_RECEIVED, k.requests_fallback),
                (fs::BLOCKS_GIVEN_UP, k.blocks_given_up),
                (fs::BLOCKS_RELEASED_QUIET, k.released_quiet),
                (fs::REQUESTS_RELEASED, k.requests_released),
                (fs::CODED_RETX_LOST, k.retx_lost),
                (
                    fs::REPAIR_PATH_SIGNALS,
                    f.policy_counters().repair_path_signals,
                ),
                (fs::RETX_BUDGET_LIMITED, k.drops.retx_budget_limited),
                (fs::RETX_BUDGET_SYMBOLS, k.drops.retx_budget_symbols),
                (fs::REPAIR_RATE_LIMITED, k.drops.repair_rate_limited),
                (fs::PATH_REPORTS, f.counters().path_reports),
                (fs::PATH_DROPPED_PSNS, k.path_dropped_psns),
                (fs::PATH_UNKNOWN_PSNS, k.path_unknown_psns),
                (fs::REPAIRS_PROACTIVE, k.repairs_proactive),
                (fs::PROACTIVE_LIMITED, k.drops.proactive_limited),
                (fs::PROACTIVE_COVERED, k.proactive_covered),
                (fs::PROVISIONAL_RELEASED, k.provisional_released),
                (fs::TAIL_INFOS, k.tail_infos),
                (fs::BLOCKS_CLOSED_SHORT, k.blocks_closed_idle),
                (fs::RETRANSMITTED_SOURCES, k.retransmitted_sources),
                (fs::TC_LOST_PSNS, k.tc_lost_psns),
                (fs::TC_ACK_TIMEOUTS, k.tc_ack_timeouts),
                (fs::CONGESTION_CAPPED, f.policy_counters().congestion_capped),
            ] {
                c.set(i, v);
            }
            fi.state = state_code(f.state());
            fi.flow_id = f.flow_id().unwrap_or(0);
            fi.srtt_us = us(f.srtt());
            fi.min_rtt_us = us(f.min_rtt());
            fi.rdma_mtu = f.mtu().mtu();
            fi.rdma_mtu_exact = f.mtu().exact();
            fi.loss_ppm = (f.loss_ppb() / 1000).min(u64::from(u32::MAX)) as u32;
            fi.breaker = if f.breaker_state() != BreakerState::Normal {
                breaker::TRIPPED
            } else {
                breaker::NORMAL
            };
            // The classification ages (its evidence is held for a while), so it
            // is taken at the time of the dump.
            fi.loss_class = loss_class_code(f.loss_class(now));
            fi.last_msg_ms = since(*e.heard);
            fi.pinned = f.pinned();
            put_config(fi, f.config());
            fi.limits = f.limits();
        } else if let Some(e) = self.receiver() {
            let f = &e.flow;
            let k = f.crf_counters();
            for (i, v) in [
                (fs::RECEIVED, k.sources),
                (fs::REPAIRS_RECEIVED, k.repairs),
                (fs::RESTORED, k.restored),
                (fs::ICRC_FAILURES, k.icrc_failures),
                (
                    fs::REQUESTS_SENT,
                    k.requests_block.saturating_add(k.requests_ranges),
                ),
                (
                    fs::FALLBACKS,
                    k.requests_fallback.saturating_add(k.blocks_released),
                ),
                (fs::ABANDONED, k.psns_abandoned),
                (fs::BLOCKS_INCOMPLETE, k.blocks_incomplete),
                (fs::REPAIRS_CE, k.repairs_ce),
                (fs::RESTORE_NO_HEADER, k.restore_no_header),
                (fs::BLOCKS_UNRESTORABLE, k.blocks_unrestorable),
                (fs::RELEASED_BY_HOLD, k.released_by_h),
                (fs::RESTORED_LATE, k.restored_late),
                (fs::SOURCES_CE, k.sources_ce),
                (fs::REPLAYED, k.sources_replayed),
                (fs::REPLAY_FAILED, k.replay_failed),
            ] {
                c.set(i, v);
            }
            fi.last_msg_ms = since(*e.heard);
            fi.state = state_code(f.state());
            fi.flow_id = f.flow_id().unwrap_or(0);
            fi.loss_ppm = f.loss_ppm();
            fi.srtt_us = us(f.srtt());
            fi.min_rtt_us = us(f.min_rtt());
            fi.rdma_mtu = f.crf().config().rdma_mtu;
            put_config(fi, f.current_config());
            fi.limits = f.negotiation().effective_limits();
        }
    }
}

/// FlowAlloc's alignment (kvzalloc's 8 at least) is enough for the engines.
const _: () =
    assert!(core::mem::align_of::<KSender>() <= 8 && core::mem::align_of::<KReceiver>() <= 8);
/// The scratch REPAIR building needs fits the per-CPU message buffer.
const _: () = assert!(csf::scratch_len(roce::MAX_SYMBOL_LEN) <= MESSAGE);
