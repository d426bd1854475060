//! The CREM Receiver Function (CRF) of one protected flow, sans-I/O.
//!
//! The CRF observes the flow's source packets as they arrive
//! ([`Crf::on_source`]), receives REPAIR messages from the CSF
//! ([`Crf::on_repair`]) and is woken at [`Crf::next_deadline`]
//! ([`Crf::on_timer`]). It
//!
//! * keeps what decoding needs through the caller's [`SymbolStore`]: a
//!   reference to every source packet of the recent PSN window (the kernel
//!   keeps skb clones, tests keep arrays) and the repair symbols of open
//!   blocks;
//! * learns blocks (start, k, Present Bitmap) from REPAIR messages, up to
//!   `BLOCKS` at once (the oldest is evicted and counted), and decodes a
//!   block as soon as the symbols it holds reach its present positions;
//!   restored packets go to the caller ([`Delivery::restored`]), which
//!   checks the ICRC; a failure is answered with a FALLBACK request for
//!   that position;
//! * holds packets that follow a gap for at most the hold time H so that
//!   restored packets reach RDMA in order, releasing in PSN order
//!   ([`Delivery::release`]) when the gap fills or H runs out — CREM never
//!   delays the RDMA transport's own recovery by more than H (H = 0: never
//!   hold);
//! * declares a block incomplete once a later packet or the LAST repair
//!   was seen, plus the reordering allowance, and sends REPAIR_REQUEST
//!   (block form, or PSN-range form for gaps with no known block), two
//!   coded rounds, then FALLBACK (Source Copy) or release to RDMA;
//! * sends LOSS_REPORT at least once per SRTT while active, and, in the
//!   windowless selective-repeat mode, T/C AETH reports;
//! * measures the RTT from its requests and reports to the CSF's answers
//!   (`crf/probe.rs`): [`Crf::take_rtt_sample`] hands each sample to the
//!   caller's estimator, which gives the SRTT and minimum RTT back with
//!   [`Crf::set_rtt`]; the LOSS_REPORT period, the round timeout and,
//!   per [`RttRule`], the reordering allowance and H follow them.
//!
//! # Ordering contract for the caller
//!
//! [`Crf::on_source`] never releases a packet with a higher PSN than the
//! one it is asked about: when that packet fills a gap behind held
//! packets, the releases are left for [`Crf::on_timer`] and
//! [`Crf::next_deadline`] returns the time of the call. A caller that
//! delivers the current packet (verdict [`SourceVerdict::Deliver`]) and then
//! runs the timer gets the packets in order. `on_repair` and `on_timer`
//! deliver restored packets and release held ones directly, in order.
//!
//! # Memory
//!
//! Every capacity is a const generic; the engine allocates nothing and
//! counts whatever it must refuse. `WINDOW` PSNs of state (a u16 and a u32
//! each), `BLOCKS` blocks (~100 octets), `HELD` hold-queue entries (16),
//! `REPAIRS` repair descriptors (~48): 72 608 octets for
//! `Crf<64, 4096, 1024, 512>`. [`Crf::new`] builds it by value, for hosts
//! with a large stack. The kernel writes it in place instead with
//! [`Crf::init_at`], or allocates zeroed memory and calls [`Crf::init`]: every field is an integer, a bool, a `Psn`/bitmap, an
//! `Option` of such, or a fieldless `#[repr(u8)]` enum with a zero variant,
//! so all-zero bytes are a valid (meaningless) value for `init` to reset.
//!
//! # Decisions where the draft is open
//!
//! * Blocks are known only from REPAIR messages; until then state is per
//!   PSN. A gap with no known block is noticed when the highest PSN is k
//!   positions past it (the block must have closed; its ordinary repairs
//!   are due), or 1 position with m = 0, plus the reordering allowance; it
//!   is then requested in the PSN-range form, together with every other
//!   missing PSN of no known block, not yet requested, less than k
//!   positions after it (the rest of its burst, which would otherwise fall
//!   due one packet interval later each and meet the CSF's
//!   one-request-per-block-per-SRTT limit).
//! * Repairs Held r counts the repairs whose set L contains every source
//!   the decoder lacks (only those can be combined); the request's L is that
//!   set (it can exceed the missing packets when the store refused a copy).
//!   M_s = X − r + δ, at least 1 and at most X.
//! * A coded round ends after SRTT + allowance, or earlier, one allowance
//!   after the answer's LAST symbol arrived. Two coded rounds, then FALLBACK
//!   (if enabled) for one more round, then release to RDMA. An ICRC failure
//!   skips straight to FALLBACK for the failed positions.
//! * Hold deadlines are per packet (arrival + H); when one expires, every
//!   held packet up to it is released in PSN order, skipping the gaps, and
//!   anything contiguous after it follows.
//! * A restored packet with a BTH whose PSN is not its position is
//!   discarded like an ICRC failure (cheap check before the caller's ICRC).
//! * LOSS_REPORT "incomplete blocks" counts blocks the first time they are
//!   found incomplete; "expected" counts PSN positions the highest PSN
//!   moved over, minus known absent ones; an idle flow sends nothing.

mod blocks;
mod decode;
mod delivery;
mod gaps;
mod hold;
mod index;
mod init;
mod probe;
mod replay;
mod report;
mod store;
mod tc;
mod window;

pub use self::store::SliceStore;
pub use self::tc::{SegmentList, TcThresholds, MAX_TC_FRAGMENTS, MAX_TC_SEGMENTS, TC_SEGMENTS};

pub use self::blocks::{Block, RepairMeta};
pub use self::hold::HoldEntry;
use self::hold::HoldQueue;
use self::probe::{Answer, Asked, Probes};
pub use self::replay::REPLAY_REACH;
use self::replay::{Arrival, ReplayState};
use self::report::ReportState;
use self::tc::TcState;
use self::window::Window;
use super::super::fec::{Code, DecodeScratch};
use super::super::gf::MulAcc;
use super::super::psn::{Psn, PsnRange};
use super::super::wire::{FecScheme, Repair};
use super::storage::Slots;
use super::{FecConfig, Nanos, Sink, MS};

/// "No deadline".
const NEVER: Nanos = Nanos::MAX;

/// Configurations the CRF can have acknowledged at once (the current one,
/// the one being replaced and two in flight).
pub const MAX_CONFIGS: usize = 4;

/// PSNs the window keeps free beyond the highest PSN seen, so a block
/// whose REPAIR overtakes its sources still fits.
pub const AHEAD: usize = 256;

/// READ request spans remembered for positions not yet in the window.
const READ_SPANS: usize = 4;

/// Ranges per PSN-range REPAIR_REQUEST message.
pub const RANGES_PER_REQUEST: usize = 32;

/// Shortest SRTT used for timeouts (an unset SRTT must not spin timers).
pub const MIN_SRTT: Nanos = 100_000;

/// Coded request rounds before the fallback (draft: "two coded
/// retransmission rounds").
pub const CODED_ROUNDS: u8 = 2;

/// Where the CRF keeps the symbols it may need for decoding.
///
/// Sources are keyed by the window slot the engine assigns (0..WINDOW),
/// repair symbols by their descriptor slot (0..REPAIRS); the engine always
/// drops a key before reusing it. In the kernel, `keep_source` takes a
/// reference to the packet being processed (an skb clone: no copy), and the
/// payload argument serves array-based stores; `keep_repair` keeps the
/// REPAIR message's symbol, which the engine later modifies in place
/// (subtracting known sources before solving), so it must be writable.
pub trait SymbolStore {
    /// Keeps source packet `psn` (its UDP payload) under `slot`; `false`
    /// if there is no room (counted; the packet then cannot help decode).
    fn keep_source(&mut self, slot: usize, psn: Psn, payload: &[u8]) -> bool;
    /// The UDP payload kept under `slot`.
    fn source(&self, slot: usize) -> Option<&[u8]>;
    /// Forgets source `slot`.
    fn drop_source(&mut self, slot: usize);
    /// Keeps a repair symbol (T octets) under `slot`; `false` if no room.
    fn keep_repair(&mut self, slot: usize, symbol: &[u8]) -> bool;
    /// The repair symbol kept under `slot`.
    fn repair(&self, slot: usize) -> Option<&[u8]>;
    /// A kept source and a kept repair at once: decoding reads the first
    /// while it updates the second.
    fn source_and_repair_mut(
        &mut self,
        source: usize,
        repair: usize,
    ) -> (Option<&[u8]>, Option<&mut [u8]>);
    /// Forgets repair `slot`.
    fn drop_repair(&mut self, slot: usize);
}

/// Hands packets to the RDMA receiver.
pub trait Delivery {
    /// A restored source packet (its RoCEv2 UDP payload, valid during the
    /// call). The caller rebuilds the IP/UDP packet of the flow around it and
    /// checks the ICRC; if it verifies, it injects the packet now
    /// (`hold == false`) or keeps it until [`Delivery::release`] for `psn`
    /// (`hold == true`; a caller that cannot keep it may inject it at
    /// once). Returns what became of it.
    fn restored(&mut self, psn: Psn, payload: &[u8], hold: bool) -> Restored;
    /// Whether [`Delivery::restored`] could build a packet of the flow now,
    /// i.e. would not answer [`Restored::NoHeader`]. The CRF asks for no
    /// repair of a flow it cannot rebuild a packet of: a receiver flow made
    /// after its first packets passed (its first HELLO lost) learns their
    /// blocks from the REPAIRs, finds every position empty, and would
    /// otherwise spend both coded rounds and a fallback on packets that were
    /// delivered. Default: always.
    fn can_restore(&self) -> bool {
        true
    }
    /// Injects the packet held for `psn` (a source for which
    /// [`SourceVerdict::Hold`] was returned, or a restored packet given with
    /// `hold`). A PSN the caller does not hold is ignored.
    fn release(&mut self, psn: Psn);
    /// Passes on, now, a packet rebuilt from the source copy the store
    /// keeps in `slot` (of `psn`), as [`Delivery::restored`] does with a
    /// decoded one: an RDMA resend pass lost it (`crf/replay.rs`).
    fn replay(&mut self, slot: usize, psn: Psn) -> Restored;
}

/// What became of a packet given to [`Delivery::restored`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restored {
    /// Its ICRC verified: injected, or held as asked.
    Verified,
    /// Its ICRC did not verify: the decoded symbol is not the packet (a
    /// Source Copy fallback may still bring it).
    IcrcFailed,
    /// Not built: the caller has seen no packet of the flow, so it has no
    /// IP/UDP header (the UDP source port above all) to rebuild it with.
    /// A packet the CRF has never seen a sibling of most often passed
    /// before the flow was set up, and was not lost; if it was, the RDMA
    /// transport recovers it. No fallback is asked for.
    NoHeader,
    /// Built but not delivered (memory, no route): the caller counts it.
    Dropped,
}

/// Everything the CRF calls back into, as one bound.
pub trait CrfHost: SymbolStore + Delivery + Sink {}
impl<T: SymbolStore + Delivery + Sink + ?Sized> CrfHost for T {}

/// Decoding resources, caller-provided so the engine stays small and the
/// kernel can share them per CPU.
pub struct Workspace<'a, G: MulAcc + ?Sized> {
    /// GF(2^8) multiply-accumulate backend.
    pub gf: &'a G,
    /// Decoder scratch (2.25 KiB).
    pub scratch: &'a mut DecodeScratch,
    /// Output of one decode: u·T octets for u lost sources. A block whose
    /// losses do not fit is not decoded (counted) and falls back.
    pub out: &'a mut [u8],
}

/// What the caller does with a source packet it reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceVerdict {
    /// Pass it to RDMA now.
    Deliver,
    /// Keep it until [`Delivery::release`] for its PSN (at most H later,
    /// given timely [`Crf::on_timer`] calls).
    Hold,
    /// Copies of packets a resend pass lost went on before it, and a copy
    /// of it after them ([`Delivery::replay`], [`Delivery::restored`]):
    /// the caller frees it (consumed, not dropped), so that the receiver
    /// gets them in order.
    Replaced,
}

/// Tunables of one CRF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrfConfig {
    /// Flow ID of the flow (from HELLO_ACK), put in every message sent and
    /// required on every REPAIR received.
    pub flow_id: u32,
    /// Hold time H (0 = never hold). See [`hold_time_for`]; with
    /// [`RttRule::Recommended`] it follows the minimum RTT.
    pub hold_time: Nanos,
    /// Reordering allowance before a block or gap counts as incomplete
    /// (draft RECOMMENDED: H); unless [`RttRule::Fixed`] it follows the
    /// SRTT ([`reorder_allowance_for`]).
    pub reorder_allowance: Nanos,
    /// Smoothed RTT: LOSS_REPORT period and request round timeouts
    /// (updated by [`Crf::set_rtt`]).
    pub srtt: Nanos,
    /// Which of the timings above [`Crf::set_rtt`] recomputes.
    pub rtt_rule: RttRule,
    /// RDMA MTU from HELLO (octets of payload per packet), for READ spans;
    /// 0 = unknown (READ spans then look like losses and are resolved by
    /// the CSF's INFO answers).
    pub rdma_mtu: u32,
    /// Send REPAIR_REQUESTs at all. Off = recovery by ordinary repairs
    /// and selective repeat (T/C AETH) only.
    pub coded_retx: bool,
    /// After the coded rounds, ask for Source Copy (FALLBACK request)
    /// rather than release the block to RDMA at once.
    pub fallback_source_copy: bool,
    /// Path loss estimate p in parts per million; above 1% the request
    /// asks for one extra symbol (delta).
    pub loss_ppm: u32,
    /// Windowless T/C AETH reporting, with its thresholds; `None` = off.
    pub tc: Option<TcThresholds>,
    /// The T/C thresholds follow the SRTT and the sender's packet rate the
    /// LOSS_REPORT intervals measure ([`Crf::rate_pps`]); false: they stay.
    pub tc_follows: bool,
    /// The flow protects a responder direction (Flow Kind 192): the PSNs
    /// between two runs of READ responses are guessed absent.
    pub responses: bool,
    /// Keep the copies of the last quarter window's sources after decoding
    /// needs them no more, and replay them into RDMA resend passes that
    /// lose them (`crf/replay.rs`).
    pub replay: bool,
}

impl CrfConfig {
    /// Defaults: H = allowance = 1 ms (fixed), SRTT 10 ms, MTU 1024, coded
    /// retransmission and Source Copy fallback on, p = 0, T/C off.
    pub const fn new(flow_id: u32) -> CrfConfig {
        CrfConfig {
            flow_id,
            hold_time: MS,
            reorder_allowance: MS,
            srtt: 10 * MS,
            rtt_rule: RttRule::Fixed,
            rdma_mtu: 1024,
            coded_retx: true,
            fallback_source_copy: true,
            loss_ppm: 0,
            tc: None,
            tc_follows: false,
            responses: false,
            replay: true,
        }
    }

    /// This configuration with `srtt` and what `rtt_rule` derives from it
    /// and from `min_rtt` (the smallest RTT seen), as [`Crf::set_rtt`]
    /// applies it; callers use it for the initial configuration too, so
    /// that the rules live here alone.
    pub fn with_rtt(mut self, srtt: Nanos, min_rtt: Nanos) -> CrfConfig {
        self.srtt = srtt;
        match self.rtt_rule {
            RttRule::Fixed => {}
            RttRule::KeepHold => {
                self.reorder_allowance = reorder_allowance_for(srtt, self.hold_time);
            }
            RttRule::Recommended { block_time } => {
                self.hold_time = block_time.min(min_rtt / 4);
                self.reorder_allowance = reorder_allowance_for(srtt, self.hold_time);
            }
        }
        self
    }
}

/// Which RTT-derived timings follow each new RTT estimate
/// ([`CrfConfig::with_rtt`]). The SRTT itself, hence the LOSS_REPORT period
/// and the request round timeout, always does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttRule {
    /// H and the allowance stay as configured (tests, simulations that set
    /// them).
    Fixed,
    /// H stays (an operator's choice); the allowance follows the SRTT.
    KeepHold,
    /// H is the draft's RECOMMENDED value, the time to receive one block
    /// (`block_time`, see [`block_time_for`]) but at most a quarter of the
    /// minimum RTT, and follows the minimum RTT; the allowance follows both.
    Recommended {
        /// Time to receive one block at the flow's rate.
        block_time: Nanos,
    },
}

/// Time to receive a block of `k` packets at `rate_pps` (never, for a rate
/// of 0).
pub fn block_time_for(k: u8, rate_pps: u64) -> Nanos {
    (k as u64)
        .saturating_mul(super::SEC)
        .checked_div(rate_pps)
        .unwrap_or(NEVER)
}

/// The draft's RECOMMENDED hold time: the time to receive one block of `k`
/// packets at `rate_pps`, at most a quarter of the minimum RTT.
pub fn hold_time_for(k: u8, rate_pps: u64, min_rtt: Nanos) -> Nanos {
    CrfConfig {
        rtt_rule: RttRule::Recommended {
            block_time: block_time_for(k, rate_pps),
        },
        ..CrfConfig::new(0)
    }
    .with_rtt(min_rtt, min_rtt)
    .hold_time
}

/// Shortest reordering allowance [`reorder_allowance_for`] gives.
pub const MIN_ALLOWANCE: Nanos = MS;

/// The reordering allowance for `srtt` and hold time `hold`: SRTT/4, at
/// least [`MIN_ALLOWANCE`], at most H (or [`MIN_ALLOWANCE`] if H is
/// shorter).
///
/// Our ruling (README, "Reordering allowance"): the draft's RECOMMENDED
/// allowance is H, for an H of at most a quarter RTT. With a longer H (an
/// operator's choice, made to cover a coded retransmission), waiting H
/// first would send every request after the held packets had gone: a
/// quarter RTT, within H, leaves the answer time to arrive.
pub fn reorder_allowance_for(srtt: Nanos, hold: Nanos) -> Nanos {
    (srtt / 4).max(MIN_ALLOWANCE).min(hold.max(MIN_ALLOWANCE))
}

/// Whether a CRF holding packets for `hold` finishes one coded round
/// before it releases them: after a loss it waits up to a block time
/// (`block_time`) to see the block end, then its reordering allowance
/// ([`reorder_allowance_for`]), then a round trip for the answer, with a
/// quarter SRTT to spare for the RTT's variation. With the RECOMMENDED H (a
/// quarter RTT at most) this is never true; an operator's longer H (set to
/// cover a coded round, as `make demo` sets 30 ms on its 10 ms path) makes
/// it true, and the sender's policy then counts on that round
/// ([`super::policy::Policy::set_round_in_hold`]). 0: no hold.
pub fn round_within_hold(hold: Nanos, srtt: Nanos, block_time: Nanos) -> bool {
    hold != 0
        && block_time
            .saturating_add(reorder_allowance_for(srtt, hold))
            .saturating_add(srtt)
            .saturating_add(srtt / 4)
            <= hold
}

/// Everything the CRF counts (cumulative, saturating).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Source packets reported by the caller.
    pub sources: u64,
    /// ... of which duplicates of a PSN already had (delivered anyway).
    pub sources_duplicate: u64,
    /// ... of which before the window (delivered, not tracked).
    pub sources_stale: u64,
    /// ... of which CE-marked.
    pub sources_ce: u64,
    /// ... of which arrived after CREM gave up on them (RDMA recovery).
    pub sources_after_giveup: u64,
    /// Copies replayed into RDMA resend passes that lost them.
    pub sources_replayed: u64,
    /// ... that the caller could not pass on.
    pub replay_failed: u64,
    /// Source copies the store refused.
    pub store_refused: u64,
    /// PSNs marked absent from READ request spans.
    pub read_absent: u64,
    /// PSNs marked absent from Present Bitmaps.
    pub bitmap_absent: u64,

    /// REPAIR messages received.
    pub repairs: u64,
    /// ... ordinary repair symbols.
    pub repairs_ordinary: u64,
    /// ... coded retransmissions (RETX).
    pub repairs_retx: u64,
    /// ... Source Copy symbols.
    pub repairs_source_copy: u64,
    /// ... INFO messages.
    pub repairs_info: u64,
    /// ... CE-marked.
    pub repairs_ce: u64,
    /// Dropped: wrong Flow ID.
    pub drop_wrong_flow: u64,
    /// Dropped: Config ID not acknowledged or already released.
    pub drop_unknown_config: u64,
    /// Dropped: scheme, k or T not those of the configuration.
    pub drop_mismatch: u64,
    /// Dropped: block before the window.
    pub drop_stale: u64,
    /// Dropped: block beyond the window.
    pub drop_out_of_window: u64,
    /// Dropped: block overlaps another or contradicts the known block.
    pub drop_inconsistent: u64,
    /// Dropped: Repair Index already held or invalid.
    pub drop_duplicate: u64,
    /// Not needed: the block is already complete.
    pub drop_unneeded: u64,
    /// Dropped: no free repair descriptor.
    pub drop_repair_capacity: u64,
    /// Dropped: the store refused the symbol.
    pub drop_store_full: u64,

    /// Packets restored (verified and handed over).
    pub restored: u64,
    /// ... of which after their successors were released.
    pub restored_late: u64,
    /// Restored packets whose ICRC failed.
    pub icrc_failures: u64,
    /// Decoded packets not restored because no packet of the flow had
    /// been seen yet to take the IP/UDP header from ([`Restored::NoHeader`]).
    pub restore_no_header: u64,
    /// Decoded symbols that are no valid source symbol of that PSN.
    pub restore_malformed: u64,
    /// Decodes run.
    pub decodes: u64,
    /// Decode failed: output buffer too small.
    pub decode_fail_buffer: u64,
    /// Decode failed: a kept source was no longer available or unusable.
    pub decode_fail_source: u64,
    /// Decode failed: codec error (should not happen).
    pub decode_fail_codec: u64,

    /// Blocks learned from REPAIR messages.
    pub blocks_learned: u64,
    /// Blocks completed (all present positions had).
    pub blocks_completed: u64,
    /// Blocks found incomplete (first time each).
    pub blocks_incomplete: u64,
    /// Blocks evicted for capacity.
    pub blocks_evicted: u64,
    /// Blocks dropped as the window moved past them.
    pub blocks_evicted_window: u64,
    /// Blocks that went to the Source Copy fallback.
    pub blocks_fell_back: u64,
    /// Blocks given up unrequested: the host could rebuild no packet of the
    /// flow ([`Delivery::can_restore`]).
    pub blocks_unrestorable: u64,
    /// Blocks released to RDMA's own recovery.
    pub blocks_released: u64,
    /// PSNs CREM gave up on (left to RDMA).
    pub psns_abandoned: u64,
    /// Unresolved PSNs that left the window.
    pub psns_lost_window: u64,

    /// Block-form REPAIR_REQUESTs sent (coded).
    pub requests_block: u64,
    /// PSN-range REPAIR_REQUESTs sent (coded).
    pub requests_ranges: u64,
    /// FALLBACK requests sent (either form).
    pub requests_fallback: u64,
    /// ... of which for restored packets that failed the ICRC.
    pub requests_fallback_icrc: u64,
    /// Range entries sent.
    pub request_range_entries: u64,

    /// Packets held.
    pub held: u64,
    /// Held packets released in order (gap filled).
    pub released_in_order: u64,
    /// Held packets released because H ran out.
    pub released_by_h: u64,
    /// Held packets released because the window moved or the flow closed.
    pub released_forced: u64,
    /// Packets not held for lack of hold-queue room.
    pub hold_full: u64,

    /// LOSS_REPORTs sent.
    pub loss_reports: u64,
    /// T/C AETH messages sent.
    pub tc_reports: u64,
    /// T/C AETH segments not reported (more than a report carries, left
    /// for later reports) plus gaps given up for list capacity.
    pub tc_segments_omitted: u64,
    /// Configurations refused by `accept_config`.
    pub configs_refused: u64,
}

#[inline]
fn inc(c: &mut u64) {
    *c = c.saturating_add(1);
}

#[inline]
fn add(c: &mut u64, n: u64) {
    *c = c.saturating_add(n);
}

/// Why a REPAIR was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reject {
    Mismatch,
    Stale,
    OutOfWindow,
    Inconsistent,
    Complete,
}

/// Where a [`Crf`]'s capacities come from: the storage of its open blocks
/// (their number is its Max Open Blocks), of its window (flags and due
/// times, one per PSN tracked: at least 2·[`AHEAD`]), of its hold queue
/// (packets held at once) and of its repair descriptors (repair symbols
/// held at once). Fixed arrays ([`Inline`]) or the caller's allocations,
/// checked by [`Crf::with_storage`].
pub trait CrfStorage {
    /// Open blocks.
    type Blocks: Slots<Block> + core::fmt::Debug;
    /// The window's per-PSN flags.
    type Flags: Slots<u16> + core::fmt::Debug;
    /// The window's per-PSN due times (as many as flags).
    type Due: Slots<u32> + core::fmt::Debug;
    /// The hold queue.
    type Hold: Slots<HoldEntry> + core::fmt::Debug;
    /// Repair descriptors.
    type Repairs: Slots<RepairMeta> + core::fmt::Debug;
}

/// A [`Crf`] with fixed capacities, in the engine itself: `BLOCKS` open
/// blocks, a `WINDOW`-PSN window, `HELD` held packets, `REPAIRS` repairs.
#[derive(Debug)]
pub struct Inline<const BLOCKS: usize, const WINDOW: usize, const HELD: usize, const REPAIRS: usize>;

impl<const B: usize, const W: usize, const HQ: usize, const R: usize> CrfStorage
    for Inline<B, W, HQ, R>
{
    type Blocks = [Block; B];
    type Flags = [u16; W];
    type Due = [u32; W];
    type Hold = [HoldEntry; HQ];
    type Repairs = [RepairMeta; R];
}

/// A [`Crf`]'s capacities ([`Crf::caps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrfCaps {
    /// Open blocks at once (its Max Open Blocks).
    pub blocks: usize,
    /// PSNs tracked.
    pub window: usize,
    /// Packets held at once.
    pub held: usize,
    /// Repair symbols held at once.
    pub repairs: usize,
}

/// Storage a [`Crf`] cannot work in ([`Crf::with_storage`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapsError {
    /// The window tracks fewer than 2·[`AHEAD`] PSNs or 2^22 or more, or its
    /// flags and due times differ in length.
    Window,
    /// No open block, or more than 65535 (Max Open Blocks is 16 bits).
    Blocks,
    /// No hold queue entry.
    Hold,
    /// No repair descriptor, or more than 65535.
    Repairs,
}

/// The CRF of one flow, its capacities from `St`.
pub struct Crf<St: CrfStorage> {
    cfg: CrfConfig,
    configs: [Option<FecConfig>; MAX_CONFIGS],
    /// Accept order of `configs` (higher = newer).
    config_age: [u32; MAX_CONFIGS],
    config_clock: u32,
    /// Largest k ever accepted: sources within k−1 of an unresolved PSN may
    /// still be needed by some block.
    kmax: u8,
    win: Window<St::Flags, St::Due>,
    read_spans: [PsnRange; READ_SPANS],
    read_span_next: usize,
    /// Responder flows: PSN of the last READ response run's end seen.
    resp_end: Option<Psn>,
    hold: HoldQueue<St::Hold>,
    blocks: St::Blocks,
    repairs: St::Repairs,
    /// The ring of open blocks in start order (`crf/index.rs`): its first
    /// entry's element, and its length (the open blocks).
    ring_head: usize,
    ring_len: usize,
    /// Free block slots (the heap's length).
    free_blocks: usize,
    /// Free repair slots (the heap's length).
    free_repairs: usize,
    /// Earliest deadline of the open blocks, unless `deadline_stale`.
    deadline_min: Nanos,
    deadline_stale: bool,
    block_clock: u32,
    /// Blocks not yet triggered by a later packet.
    untriggered: usize,
    request_id: u16,
    gap_due_min: Nanos,
    /// No PSN-range request before this (None: no configuration accepted
    /// yet, so no CSF could answer one); see [`Crf::accept_config`].
    requests_from: Option<Nanos>,
    release_pending: bool,
    decode_pending: bool,
    last_now: Nanos,
    report: ReportState,
    tc: TcState,
    probes: Probes,
    /// RTT measured by the last answer, not yet taken.
    rtt_sample: Option<Nanos>,
    replay: ReplayState,
    counters: Counters,
}

/// Whether storage of these lengths is one a [`Crf`] works in.
pub const fn check_caps(
    blocks: usize,
    window: usize,
    due: usize,
    held: usize,
    repairs: usize,
) -> Result<(), CapsError> {
    if window < 2 * AHEAD || window >= (1 << 22) || window != due {
        Err(CapsError::Window)
    } else if blocks == 0 || blocks > u16::MAX as usize {
        Err(CapsError::Blocks)
    } else if held == 0 {
        Err(CapsError::Hold)
    } else if repairs == 0 || repairs > u16::MAX as usize {
        Err(CapsError::Repairs)
    } else {
        Ok(())
    }
}

impl<const B: usize, const W: usize, const HQ: usize, const R: usize> Crf<Inline<B, W, HQ, R>> {
    /// Compile-time check of the capacities.
    pub(super) const CAPACITIES_OK: () = assert!(
        check_caps(B, W, W, HQ, R).is_ok(),
        "CRF capacities: WINDOW >= 512 (and < 2^22), BLOCKS, HELD, REPAIRS >= 1"
    );

    /// A fresh engine. Large: prefer [`Crf::init_at`] on caller memory in
    /// the kernel.
    pub fn new(cfg: CrfConfig) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::CAPACITIES_OK;
        let storage = (
            [Block::EMPTY; B],
            [0; W],
            [0; W],
            [HoldEntry::EMPTY; HQ],
            [RepairMeta::EMPTY; R],
        );
        // Checked at compile time (CAPACITIES_OK).
        Self::build(cfg, storage)
    }
}

/// A [`Crf`]'s storage, as [`Crf::with_storage`] takes it: blocks, window
/// flags, window due times, hold queue, repair descriptors.
pub type Storage<St> = (
    <St as CrfStorage>::Blocks,
    <St as CrfStorage>::Flags,
    <St as CrfStorage>::Due,
    <St as CrfStorage>::Hold,
    <St as CrfStorage>::Repairs,
);

impl<St: CrfStorage> Crf<St> {
    /// A fresh engine in the storage given (checked: [`check_caps`];
    /// whatever it holds is overwritten).
    pub fn with_storage(cfg: CrfConfig, storage: Storage<St>) -> Result<Self, CapsError> {
        let (blocks, flags, due, hold, repairs) = &storage;
        check_caps(
            blocks.as_ref().len(),
            flags.as_ref().len(),
            due.as_ref().len(),
            hold.as_ref().len(),
            repairs.as_ref().len(),
        )?;
        Ok(Self::build(cfg, storage))
    }

    /// [`Crf::with_storage`] of storage already checked.
    fn build(cfg: CrfConfig, storage: Storage<St>) -> Self {
        let (mut blocks, flags, due, hold, mut repairs) = storage;
        blocks.as_mut().fill(Block::EMPTY);
        repairs.as_mut().fill(RepairMeta::EMPTY);
        let mut c = Crf {
            cfg,
            configs: [None; MAX_CONFIGS],
            config_age: [0; MAX_CONFIGS],
            config_clock: 0,
            kmax: 1,
            win: Window::with(flags, due),
            read_spans: [PsnRange::new(Psn::ZERO, 0); READ_SPANS],
            read_span_next: 0,
            resp_end: None,
            hold: HoldQueue::with(hold),
            blocks,
            repairs,
            ring_head: 0,
            ring_len: 0,
            free_blocks: 0,
            free_repairs: 0,
            deadline_min: NEVER,
            deadline_stale: false,
            block_clock: 0,
            untriggered: 0,
            request_id: 0,
            gap_due_min: NEVER,
            requests_from: None,
            release_pending: false,
            decode_pending: false,
            last_now: 0,
            report: ReportState::new(),
            tc: TcState::new(),
            probes: Probes::new(),
            rtt_sample: None,
            replay: ReplayState::new(),
            counters: Counters::default(),
        };
        c.tc.reset(cfg.tc);
        c.reset_index();
        c
    }

    /// Resets the engine in place (all state, counters and configurations)
    /// without building it on the stack. Nothing is released or dropped
    /// through a host: call [`Crf::close`] first if the flow had state.
    pub fn init(&mut self, cfg: CrfConfig) {
        self.cfg = cfg;
        self.configs = [None; MAX_CONFIGS];
        self.config_age = [0; MAX_CONFIGS];
        self.config_clock = 0;
        self.kmax = 1;
        self.win.reset();
        self.read_spans = [PsnRange::new(Psn::ZERO, 0); READ_SPANS];
        self.read_span_next = 0;
        self.resp_end = None;
        self.hold.clear();
        self.blocks.as_mut().fill(Block::EMPTY);
        self.repairs.as_mut().fill(RepairMeta::EMPTY);
        self.reset_index();
        self.block_clock = 0;
        self.untriggered = 0;
        self.request_id = 0;
        self.gap_due_min = NEVER;
        self.requests_from = None;
        self.release_pending = false;
        self.decode_pending = false;
        self.last_now = 0;
        self.report = ReportState::new();
        self.tc.reset(cfg.tc);
        self.probes.clear();
        self.rtt_sample = None;
        self.replay = ReplayState::new();
        self.counters = Counters::default();
    }

    /// Starts a new session of the same flow (after a CLOSE): like
    /// [`Crf::init`], but the counters go on counting, so that the flow's
    /// totals (and the netns totals built from them) keep what the earlier
    /// sessions restored.
    pub fn restart(&mut self, cfg: CrfConfig) {
        let kept = self.counters;
        self.init(cfg);
        self.counters = kept;
    }

    /// The configuration.
    pub fn config(&self) -> &CrfConfig {
        &self.cfg
    }

    /// The counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// A new RTT estimate: the SRTT and the smallest RTT seen. The
    /// LOSS_REPORT period, the round timeout and, per the configuration's
    /// [`RttRule`], the reordering allowance and H follow from the next
    /// decision on (packets already held keep their deadline; a report due
    /// later than one new period after its interval began is due then).
    pub fn set_rtt(&mut self, srtt: Nanos, min_rtt: Nanos) {
        self.cfg = self.cfg.with_rtt(srtt, min_rtt);
        self.report_rescheduled();
        self.follow_tc();
    }

    /// The RTT the CSF's last answer measured, if not yet taken: a
    /// REPAIR_REQUEST or T/C AETH report answered (`crf/probe.rs`). Feed it
    /// to the flow's estimator, then [`Crf::set_rtt`].
    pub fn take_rtt_sample(&mut self) -> Option<Nanos> {
        self.rtt_sample.take()
    }

    /// Remembers that `kind` with IDs `id .. id + span` leaves now (every
    /// entry point has set `last_now` to its time).
    fn probe_sent(&mut self, kind: Asked, id: u16, span: u16) {
        self.probes.sent(kind, id, span, self.last_now);
    }

    /// Updates the loss estimate p (ppm) that selects delta.
    pub fn set_loss_ppm(&mut self, ppm: u32) {
        self.cfg.loss_ppm = ppm;
    }

    /// Sets the RDMA MTU announced in HELLO.
    pub fn set_rdma_mtu(&mut self, mtu: u32) {
        self.cfg.rdma_mtu = mtu;
    }

    /// Sets the Flow ID assigned in HELLO_ACK.
    pub fn set_flow_id(&mut self, flow_id: u32) {
        self.cfg.flow_id = flow_id;
    }

    /// Changes the hold time H (0 = never hold). Packets already held keep
    /// their deadline.
    pub fn set_hold_time(&mut self, h: Nanos) {
        self.cfg.hold_time = h;
    }

    /// Switches T/C AETH reporting (new thresholds, or off).
    pub fn set_tc(&mut self, tc: Option<TcThresholds>) {
        self.cfg.tc = tc;
        self.tc.thr = tc;
    }

    /// Reserves decoding for a configuration the negotiation acknowledges:
    /// REPAIRs naming its Config ID are accepted from now on. Returns
    /// `false` (and counts) if the configuration is invalid or
    /// [`MAX_CONFIGS`] others are held; the negotiation should then answer
    /// "resources exhausted". Re-accepting an identical configuration is a
    /// no-op success.
    ///
    /// The first one also starts the PSN-range requests. If sources came
    /// before it, the CSF coded them under it before it was acknowledged
    /// and sends their ordinary repairs when the PARAM_ACK reaches it, so
    /// requests wait one round timeout (SRTT plus the allowance) for those
    /// (our ruling, README "First round trip"). Before, the CRF asked at
    /// once, the still muted CSF dropped the requests, both coded rounds
    /// were spent and the gaps went to the RDMA transport.
    pub fn accept_config(&mut self, fc: FecConfig) -> bool {
        self.accept_config_at(self.last_now, fc)
    }

    /// [`Crf::accept_config`] at `now` (the PARAM_UPDATE's arrival): the
    /// request delay counts from then, not from the last packet, which may
    /// be an RTT older.
    pub fn accept_config_at(&mut self, now: Nanos, fc: FecConfig) -> bool {
        self.touch(now);
        if Code::new(fc.scheme, fc.k, fc.t as usize).is_err() {
            inc(&mut self.counters.configs_refused);
            return false;
        }
        self.config_clock = self.config_clock.wrapping_add(1);
        let age = self.config_clock;
        if let Some(i) = self
            .configs
            .iter()
            .position(|c| c.is_some_and(|c| c.id == fc.id))
        {
            if self.configs.get(i).copied().flatten() == Some(fc) {
                if let Some(a) = self.config_age.get_mut(i) {
                    *a = age;
                }
                return true;
            }
            inc(&mut self.counters.configs_refused);
            return false;
        }
        let Some(i) = self.configs.iter().position(|c| c.is_none()) else {
            inc(&mut self.counters.configs_refused);
            return false;
        };
        if let (Some(c), Some(a)) = (self.configs.get_mut(i), self.config_age.get_mut(i)) {
            *c = Some(fc);
            *a = age;
        }
        self.kmax = self.kmax.max(fc.k);
        if self.requests_from.is_none() {
            let from = if self.win.started {
                self.last_now.saturating_add(self.round_timeout())
            } else {
                0
            };
            self.requests_from = Some(from);
            self.gap_due_min = self.gap_due_min.min(from);
        }
        true
    }

    /// Releases a configuration: REPAIRs naming it are dropped from now on.
    /// The negotiation calls this once [`Crf::config_in_use`] is false.
    /// Returns whether it was held.
    pub fn release_config(&mut self, id: u8) -> bool {
        let mut found = false;
        for c in self.configs.iter_mut() {
            if c.is_some_and(|c| c.id == id) {
                *c = None;
                found = true;
            }
        }
        found
    }

    /// Whether an open block uses configuration `id`.
    pub fn config_in_use(&self, id: u8) -> bool {
        self.open_iter().any(|b| b.cfg_id == id)
    }

    /// Open blocks using configuration `id` (to keep the negotiation's
    /// per-configuration block accounting in step).
    pub fn blocks_using(&self, id: u8) -> usize {
        self.open_iter().filter(|b| b.cfg_id == id).count()
    }

    /// The acknowledged configuration with Config ID `id`.
    pub fn accepted_config(&self, id: u8) -> Option<FecConfig> {
        self.configs.iter().flatten().find(|c| c.id == id).copied()
    }

    /// The most recently accepted configuration still held.
    pub fn current_config(&self) -> Option<FecConfig> {
        let mut best: Option<(u32, FecConfig)> = None;
        for (c, a) in self.configs.iter().zip(self.config_age.iter()) {
            if let Some(c) = c {
                let newer = best.is_none_or(|(ba, _)| a.wrapping_sub(ba) as i32 > 0);
                if newer {
                    best = Some((*a, *c));
                }
            }
        }
        best.map(|(_, c)| c)
    }

    /// Packets currently held by the caller on the engine's behalf.
    pub fn held(&self) -> usize {
        let mut n = 0usize;
        for f in self.win.flags.as_ref().iter() {
            if f & window::HELD != 0 {
                n = n.wrapping_add(1);
            }
        }
        n
    }

    /// The capacities its storage gives it.
    pub fn caps(&self) -> CrfCaps {
        CrfCaps {
            blocks: self.blocks.as_ref().len(),
            window: self.win.cap(),
            held: self.hold.cap(),
            repairs: self.repairs.as_ref().len(),
        }
    }

    /// Blocks currently open.
    pub fn open_blocks(&self) -> usize {
        self.ring_len
    }

    /// Repair symbols currently held.
    pub fn repairs_held(&self) -> usize {
        self.repairs
            .as_ref()
            .len()
            .saturating_sub(self.free_repairs)
    }

    /// Diagnostic: the engine's internal state bits for `psn` (None outside
    /// the window). Unstable; for debugging and tests.
    #[doc(hidden)]
    pub fn debug_psn_state(&self, psn: Psn) -> Option<u16> {
        self.win.slot(psn).map(|s| self.win.at(s))
    }

    /// The lowest PSN not yet passed to RDMA in order (None before the
    /// first packet).
    pub fn deliver_next(&self) -> Option<Psn> {
        self.win.started.then_some(self.win.deliver_next)
    }

    /// When [`Crf::on_timer`] must run next (a time at or before the last
    /// input's when work is pending), or `None` if nothing is scheduled.
    pub fn next_deadline(&self) -> Option<Nanos> {
        let mut d = NEVER;
        if self.release_pending || self.decode_pending {
            d = self.last_now;
        }
        if let Some((_, t)) = self.hold.front() {
            d = d.min(t);
        }
        // The open blocks' deadlines. (A block waiting for a decode also
        // has `decode_pending` set, which already made it `last_now`.)
        d = d.min(if self.deadline_stale {
            self.deadline_scan()
        } else {
            self.deadline_min
        });
        d = d.min(self.gap_due_min);
        d = d.min(self.report.next);
        d = d.min(self.tc.deadline().max(self.asks_from()));
        (d != NEVER).then_some(d)
    }

    fn touch(&mut self, now: Nanos) {
        self.last_now = self.last_now.max(now);
    }

    /// When T/C AETH reports may first be sent: a round timeout after a
    /// first configuration that came after sources (see
    /// [`Crf::accept_config`]); at once without one (selective repeat
    /// needs none; PSN-range requests do, `scan_gaps`).
    fn asks_from(&self) -> Nanos {
        self.requests_from.unwrap_or(0)
    }

    fn allowance(&self) -> Nanos {
        self.cfg.reorder_allowance
    }

    fn round_timeout(&self) -> Nanos {
        self.cfg.srtt.max(MIN_SRTT).saturating_add(self.allowance())
    }

    fn next_request_id(&mut self) -> u16 {
        // Zero is the Repair Session ID of ordinary repairs: never use it.
        self.request_id = self.request_id.wrapping_add(1);
        if self.request_id == 0 {
            self.request_id = 1;
        }
        self.request_id
    }

    /// Distance past a gap at which the gap is noticed when no block is
    /// known: the block containing it has surely closed after k more PSNs
    /// (if ordinary repairs are sent, wait for them); with m = 0 there is
    /// nothing to wait for.
    fn detect_distance(&self) -> u32 {
        match self.current_config() {
            Some(c) if c.m > 0 => c.k as u32,
            _ => 1,
        }
    }

    /// A source packet of the flow arrived (`payload`: its UDP payload,
    /// BTH to ICRC; `ce`: the IP ECN field was CE). Call it for packets
    /// that carry a new PSN only ([`super::super::roce::RocePacket::is_source`]).
    pub fn on_source<H: CrfHost + ?Sized>(
        &mut self,
        now: Nanos,
        psn: Psn,
        payload: &[u8],
        ce: bool,
        host: &mut H,
    ) -> SourceVerdict {
        let v = self.source_in(now, psn, payload, ce, host);
        self.refresh_deadline();
        v
    }

    fn source_in<H: CrfHost + ?Sized>(
        &mut self,
        now: Nanos,
        psn: Psn,
        payload: &[u8],
        ce: bool,
        host: &mut H,
    ) -> SourceVerdict {
        self.touch(now);
        inc(&mut self.counters.sources);
        self.report_activity(now);
        if ce {
            inc(&mut self.counters.sources_ce);
            report::add32(&mut self.report.iv.ce, 1);
        }
        if !self.win.started {
            self.start_window(psn);
        }
        if !psn.is_after_or_eq(self.win.base) {
            inc(&mut self.counters.sources_stale);
            report::add32(&mut self.report.iv.received, 1);
            return SourceVerdict::Deliver;
        }
        let limit = (self.win.cap().saturating_sub(AHEAD)) as u32;
        if self.win.base.forward_distance(psn) >= limit {
            self.slide_to(psn, now, host);
        }
        let Some(s) = self.win.slot(psn) else {
            return SourceVerdict::Deliver;
        };
        let f = self.win.at(s);
        let highest = self.win.highest;
        if f & window::HAVE != 0 {
            inc(&mut self.counters.sources_duplicate);
            // A late original of a restored packet is no resend: it tells
            // nothing of a pass.
            if f & window::RECEIVED != 0
                && self.replay_before(now, psn, Arrival::Duplicate, highest, host)
            {
                return self.replace(psn, payload, host);
            }
            return SourceVerdict::Deliver;
        }
        let how = if psn.is_after(highest) {
            Arrival::New
        } else {
            Arrival::Fill
        };
        let replayed = self.replay_before(now, psn, how, highest, host);
        report::add32(&mut self.report.iv.received, 1);
        if f & window::ABANDONED != 0 {
            inc(&mut self.counters.sources_after_giveup);
        }
        if psn.is_after(self.win.highest) {
            self.advance_highest(psn, now);
        } else if psn.is_before(self.win.origin) {
            self.extend_origin(psn, now);
        }
        self.win.clear(psn, window::ABANDONED | window::ABSENT);
        self.win.set(psn, window::RECEIVED);
        // Kept from the flow's first packet, configuration or not: the
        // repairs of blocks coded before PARAM_ACK need them (and a request
        // must never name a received packet as lost).
        if host.keep_source(s, psn, payload) {
            self.win.set(psn, window::KEPT);
            if f & window::IN_BLOCK == 0 {
                self.win.kept_outside_block(psn);
            }
        } else {
            inc(&mut self.counters.store_refused);
        }
        if self.cfg.responses {
            self.note_response(psn, payload, now, host);
            // Guessed gaps below this packet no longer hold it (or what
            // waits before it).
            self.advance_delivery(true, host);
        } else {
            self.note_read(psn, payload, now, host);
        }
        self.tc_observe(PsnRange::new(psn, 1), 1, now, host);
        if f & window::IN_BLOCK != 0 {
            self.mark_block_pending(psn);
        }
        let place = self.decide(psn);
        self.apply_place(psn, place, now, false, host);
        self.advance_resolve(host);
        self.replay_sweep(host);
        if matches!(place, delivery::Place::Hold) {
            SourceVerdict::Hold
        } else if replayed {
            self.replace(psn, payload, host)
        } else {
            SourceVerdict::Deliver
        }
    }

    /// The packet at `psn` follows copies replayed before it: a copy of it
    /// goes after them, if it can be built (else it goes on as it is).
    fn replace<H: CrfHost + ?Sized>(
        &mut self,
        psn: Psn,
        payload: &[u8],
        host: &mut H,
    ) -> SourceVerdict {
        if host.restored(psn, payload, false) == Restored::Verified {
            self.note_injected(psn);
            SourceVerdict::Replaced
        } else {
            inc(&mut self.counters.replay_failed);
            SourceVerdict::Deliver
        }
    }

    /// A REPAIR message of this flow arrived (`ce`: its IP ECN field was
    /// CE). Decodes, delivers and releases as far as it allows.
    pub fn on_repair<H: CrfHost + ?Sized, G: MulAcc + ?Sized>(
        &mut self,
        now: Nanos,
        msg: &Repair<'_>,
        ce: bool,
        host: &mut H,
        ws: &mut Workspace<'_, G>,
    ) {
        self.repair_in(now, msg, ce, host, ws);
        self.refresh_deadline();
    }

    fn repair_in<H: CrfHost + ?Sized, G: MulAcc + ?Sized>(
        &mut self,
        now: Nanos,
        msg: &Repair<'_>,
        ce: bool,
        host: &mut H,
        ws: &mut Workspace<'_, G>,
    ) {
        self.touch(now);
        self.advance_delivery(true, host);
        inc(&mut self.counters.repairs);
        self.report_activity(now);
        report::add32(&mut self.report.iv.repairs, 1);
        if ce {
            inc(&mut self.counters.repairs_ce);
            report::add32(&mut self.report.iv.repairs_ce, 1);
        }
        if msg.info {
            inc(&mut self.counters.repairs_info);
        } else if msg.scheme == FecScheme::SourceCopy {
            inc(&mut self.counters.repairs_source_copy);
        } else if msg.lost.is_some() {
            inc(&mut self.counters.repairs_retx);
        } else {
            inc(&mut self.counters.repairs_ordinary);
        }
        if msg.flow_id != self.cfg.flow_id {
            inc(&mut self.counters.drop_wrong_flow);
            return;
        }
        // Whatever becomes of it, an answer dates its request.
        let answer = if msg.scheme == FecScheme::SourceCopy && !msg.info {
            Some(Answer::SourceCopy)
        } else if msg.lost.is_some() || (msg.info && !msg.is_tail_notice()) {
            Some(Answer::Request)
        } else {
            None
        };
        if let Some(a) = answer {
            if let Some(rtt) = self.probes.answered(a, msg.session_id, now) {
                self.rtt_sample = Some(rtt);
            }
        }
        let Some(fc) = self.accepted_config(msg.config_id) else {
            inc(&mut self.counters.drop_unknown_config);
            return;
        };
        let b = match self.learn_block(msg, &fc, now, host) {
            Ok(b) => b,
            Err(e) => {
                let c = &mut self.counters;
                inc(match e {
                    Reject::Mismatch => &mut c.drop_mismatch,
                    Reject::Stale => &mut c.drop_stale,
                    Reject::OutOfWindow => &mut c.drop_out_of_window,
                    Reject::Inconsistent => &mut c.drop_inconsistent,
                    Reject::Complete => &mut c.drop_unneeded,
                });
                self.advance_resolve(host);
                self.advance_delivery(true, host);
                return;
            }
        };
        if !msg.info {
            if msg.scheme == FecScheme::SourceCopy {
                self.source_copy(b, msg, now, host);
            } else {
                self.add_repair(b, msg, host);
            }
        }
        self.note_last(b, msg, now);
        self.check_block(b, now, host, ws);
        self.advance_resolve(host);
        self.advance_delivery(true, host);
    }

    /// Time-driven work: releases, hold expiry, decoding left by
    /// `on_source`, block and gap timeouts with their requests, the
    /// LOSS_REPORT and the T/C AETH time trigger. Call it at (or after)
    /// [`Crf::next_deadline`]; extra calls are harmless.
    pub fn on_timer<H: CrfHost + ?Sized, G: MulAcc + ?Sized>(
        &mut self,
        now: Nanos,
        host: &mut H,
        ws: &mut Workspace<'_, G>,
    ) {
        self.touch(now);
        self.advance_delivery(true, host);
        self.expire_holds(now, host);
        self.decode_pending = false;
        // (No block opens in here: with none open, nothing to visit.)
        let slots = if self.ring_len == 0 {
            0
        } else {
            self.blocks.as_ref().len()
        };
        for b in 0..slots {
            let Some(blk) = self.blocks.as_ref().get(b).copied() else {
                continue;
            };
            if !blk.live {
                continue;
            }
            if blk.deadline <= now {
                self.evaluate_block(b, now, host, ws);
            } else if blk.decode_pending {
                if let Some(x) = self.blocks.as_mut().get_mut(b) {
                    x.decode_pending = false;
                }
                self.check_block(b, now, host, ws);
            }
        }
        self.scan_gaps(now, host);
        self.maybe_report(now, host);
        if self.tc.time_due(now) {
            self.tc_emit(host);
        }
        self.advance_resolve(host);
        self.advance_delivery(true, host);
        self.refresh_deadline();
    }

    /// Ends the flow: releases every held packet in PSN order and drops all
    /// kept symbols, then resets the per-flow state (configurations and
    /// counters stay).
    pub fn close<H: CrfHost + ?Sized>(&mut self, host: &mut H) {
        if self.win.started {
            let mut p = self.win.base;
            for _ in 0..self.win.cap() {
                if let Some(s) = self.win.slot(p) {
                    let f = self.win.at(s);
                    if f & window::HELD != 0 {
                        host.release(p);
                        inc(&mut self.counters.released_forced);
                    }
                    if f & (window::KEPT | window::REPLAYABLE) != 0 {
                        host.drop_source(s);
                    }
                }
                p = p.next();
            }
        }
        for (i, r) in self.repairs.as_mut().iter_mut().enumerate() {
            if r.live {
                host.drop_repair(i);
            }
            *r = RepairMeta::EMPTY;
        }
        self.blocks.as_mut().fill(Block::EMPTY);
        self.reset_index();
        self.win.reset();
        self.hold.clear();
        self.read_spans = [PsnRange::new(Psn::ZERO, 0); READ_SPANS];
        self.untriggered = 0;
        self.gap_due_min = NEVER;
        self.release_pending = false;
        self.decode_pending = false;
        self.report = ReportState::new();
        self.tc.reset(self.cfg.tc);
    }

    /// Records PSNs RDMA now has (or known absent) for T/C AETH and sends a
    /// report when the count trigger fires.
    fn tc_observe<S: Sink + ?Sized>(&mut self, r: PsnRange, count: u32, now: Nanos, sink: &mut S) {
        if self.tc.observe(r, count, now) {
            self.tc_emit(sink);
        }
    }

    fn tc_emit<S: Sink + ?Sized>(&mut self, sink: &mut S) {
        // Like PSN-range requests, no report while the repairs of the
        // blocks coded before PARAM_ACK may still come: the batch waits
        // (next_deadline wakes at asks_from). Reported, those gaps drew
        // Source Copies beside the repairs.
        if self.asks_from() > self.last_now {
            return;
        }
        let first = self.tc.seq;
        let e = self.tc.emit(self.cfg.flow_id, sink);
        let span = u16::try_from(e.fragments).unwrap_or(u16::MAX);
        self.probe_sent(Asked::Report, first, span);
        add(&mut self.counters.tc_reports, e.fragments as u64);
        add(&mut self.counters.tc_segments_omitted, e.omitted as u64);
    }
}
