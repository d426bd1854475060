//! The CREM Sender Function (CSF) of one protected flow, sans-I/O.
//!
//! # What it does
//!
//! * **Source blocks** (draft "Source Blocks"): every source packet seen on
//!   the protected direction takes the position `PSN − Block Start PSN` of
//!   the open block; an RDMA READ request also covers the PSNs its responses
//!   will use (absent positions). A block closes when k positions are
//!   covered, at the end of a burst (no source for `idle_timeout`), when a
//!   new PSN does not fit it, or early when a request or report names one
//!   of its PSNs (so the peer always learns the final k). A closed block's
//!   k on the wire is the number of positions it covered. A source whose
//!   PSN was seen before (the RDMA transport retransmitting) keeps its
//!   position and is only counted.
//! * **Ordinary repairs**: indices 0..m−1 are accumulated with the streaming
//!   [`BlockEncoder`] as each source passes (its bytes are never read again
//!   for them) and sent when the block closes, back to back or spread over
//!   the following sources, within m/k of the source rate (token bucket,
//!   `csf/pace.rs`).
//! * **Retention**: the caller keeps the source packets (in the kernel, skb
//!   references); the engine keeps per-block metadata in a ring of `BLOCKS`
//!   entries and counts the retained payload octets against a budget that
//!   is never exceeded. It asks for bytes through [`SourceStore::source`]
//!   and says what may go through [`SourceStore::release`]: when the RDMA
//!   acknowledgment covers a whole block, or when it gives a block up (ring
//!   full, budget, age, shutdown).
//! * **Coded retransmission** (REPAIR_REQUEST, both forms), **proactive
//!   answers** for PSNs a Path Reporter dropped, and **selective repeat**
//!   answering T/C AETH reports with Source Copy (`csf/respond.rs`,
//!   `csf/tc.rs`).
//!
//! # Rulings where the draft leaves room (see also DESIGN §3)
//!
//! * The m/k rate bound counts repair *symbols* against source *packets*
//!   (the draft's ratio m/k is one of symbol counts); octets are counted
//!   separately. The bucket holds at most `repair_burst_blocks` blocks'
//!   worth and starts full, so short bursts closed by the idle timeout are
//!   protected while any long run stays within m/k plus that burst; a
//!   repair without tokens is dropped and counted, never deferred.
//!   The repairs of blocks coded before PARAM_ACK are charged to it too;
//!   their sources bank their share past the cap while the CSF is muted.
//!   Coded and Source Copy answers, proactive ones included, are not.
//! * Coded and Source Copy answers (requests and selective repeat) never
//!   exceed the lost sources a request names, and all of them together are
//!   paid from a second budget, `retx_rate_percent` of the source octets
//!   seen plus a depth of `retx_burst_blocks` whole answers or a quarter
//!   of that share of the retained octets, whichever is more
//!   (`csf/budget.rs`): the
//!   requests that choose the blocks may be forged, the flow rate cannot.
//!   What it cannot pay is cut short (Source Copy) or left unanswered
//!   (coded) and counted, never queued.
//! * A REPAIR_REQUEST answer uses `M = clamp(M_s, X − r, X)`, at least 1
//!   (a request with r ≥ X would otherwise get nothing and stall).
//! * PSNs a Path Reporter dropped are answered at once with a coded
//!   retransmission over exactly those positions (RETX, their Lost Source
//!   Bitmap, session 0; Source Copy where coded cannot be sent), paid from
//!   the retransmission budget: the draft's "additional ordinary repair
//!   symbols" would have to fit in the m/k of the flow's rate that the m
//!   ordinary repairs per block already spend (stop 48 measured 0 to 35
//!   sent a boot against thousands owed), while its other bound, "the
//!   volume of coded retransmissions MUST NOT exceed the volume of source
//!   packets reported lost", is exactly what a report is. A reported
//!   position is answered proactively at most once within an SRTT of the
//!   block's last answer (reported again later, it was dropped again: its
//!   resend); a REPAIR_REQUEST within that SRTT that names no more than
//!   the positions so answered is not answered again (counted
//!   `proactive_covered`), one naming more is. Reports of either
//!   cause get it: the answer is the volume the CRF's request would have
//!   drawn one reorder allowance later, not more (the congestion response
//!   is the policy's m-cong cap).
//! * Source Copy answers set RETX with the Lost Source Bitmap naming the
//!   positions copied, and the Repair Session ID of the request (the T/C
//!   AETH Report Sequence for selective repeat).
//! * INFO replies and coded / Source Copy answers each go out at most once
//!   per block per SRTT; selective repeat re-sends a PSN at most once per
//!   SRTT.
//! * The circuit breaker ([`Csf::set_coded_retx`]) stops every CREM
//!   retransmission (coded, Source Copy and selective repeat): recovery is
//!   then the RDMA transport's alone, proactive answers included.
//!   [`Csf::set_ordinary_repairs`] stops ordinary repairs at once, before
//!   the m = 0 configuration is negotiated.
//! * A T/C AETH fragment with all three segment pairs used (SegmentNum 4)
//!   is partial: the PSNs after its highest segment are unknown, not lost;
//!   only a final fragment (SegmentNum ≤ 3) has its tail counted lost,
//!   behind the in-flight guard (`csf/tc.rs`, `crf/tc.rs`).
//! * Tail notice: at the end of a burst, the newest block whose ordinary
//!   round sent no LAST (m = 0, or the m/k bucket empty: a sparse flow's
//!   usual case) gets an INFO with LAST and Repair Session ID 0, so that
//!   the CRF can find its lost tail incomplete and request it; without
//!   it, no packet follows and only the RDMA timer recovers
//!   (`Csf::tail_due`; [`CsfParams::tail_info`]). Not with selective
//!   repeat alone (its CRF sends no requests: `tail_info` off), nor while
//!   the circuit breaker stops retransmission; with both recoveries on it
//!   is sent, as the T/C AETH guarded tail left rping's lost tails to the
//!   RDMA timer (stop 52's `make demo`: 10-11 timeouts against 1-2).
//! * T/C AETH ACK timeout: when no report arrives for `tc_ack_timeout`
//!   while blocks are outstanding, the CSF does not guess (the windowless
//!   draft re-sends the newest PSNs); it counts the event and leaves
//!   recovery to the RDMA transport's own timeout, which CREM never
//!   disables.
//!
//! # Memory and stack
//!
//! `Csf<BLOCKS, ACC>` holds `BLOCKS` block records (176 octets each)
//! and two repair accumulators of `ACC` octets (one for the open block, one
//! for the repairs of the last closed block still being sent); ACC must be
//! at least m·T or m is capped (counted). The caller allocates it (heap in
//! the kernel) and passes a message scratch of [`scratch_len`]`(T)` octets
//! with every call, so no call puts a symbol on the stack.

mod budget;
mod emit;
mod init;
mod pace;
mod respond;
mod ring;
mod tc;

use super::super::fec::{BlockEncoder, Code, Scheme};
use super::super::gf::MulAcc;
use super::super::psn::{Psn, PsnRange};
use super::super::roce::RocePacket;
use super::crf::TcThresholds;
use super::{FecConfig, Nanos, Sink, MS};
pub use respond::{MAX_PATH_PSNS, MAX_RANGE_ENTRIES};

use super::storage::Slots;
use budget::RetxBudget;
use pace::{Bucket, SendLog};
pub use ring::Block;
use ring::Ring;

/// Largest REPAIR header: common header, fixed part and two 8-word bitmaps.
pub const REPAIR_HEADER_MAX: usize = 8 + 12 + 32 + 32;

/// Scratch octets a call needs to build a REPAIR message with symbols of T
/// octets.
pub const fn scratch_len(t: u16) -> usize {
    REPAIR_HEADER_MAX + t as usize
}

/// Largest READ span honoured (half the PSN space; anything longer is not a
/// real READ and would make serial comparisons meaningless).
const MAX_SPAN: u32 = Psn::HALF - 1;

/// Where the retained source packets live (the caller's storage).
pub trait SourceStore {
    /// The UDP payload (BTH through ICRC) of the retained source packet
    /// with this PSN, or `None` if it is not held.
    fn source(&self, psn: Psn) -> Option<&[u8]>;
    /// The engine no longer needs any packet in `range`. The range may name
    /// PSNs that were never retained (absent positions, sources released
    /// earlier, retransmissions): ignore those.
    fn release(&mut self, range: PsnRange);
}

/// Everything a call may use to act: the GF backend, the message sink, the
/// retained sources and a message scratch of at least [`scratch_len`]`(T)`
/// octets (its contents are meaningless between calls).
pub struct CsfIo<'a, G: ?Sized, K: ?Sized, S: ?Sized> {
    /// Multiply-accumulate backend for encoding.
    pub gf: &'a G,
    /// Where REPAIR messages go (to the CRF).
    pub sink: &'a mut K,
    /// The retained source packets.
    pub store: &'a mut S,
    /// Message buffer.
    pub scratch: &'a mut [u8],
}

/// Tunables of one CSF (defaults in [`CsfParams::DEFAULT`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsfParams {
    /// Flow ID for REPAIR messages until [`Csf::set_flow_id`].
    pub flow_id: u32,
    /// End of a burst: an open block with no new source for this long is
    /// closed and its repairs sent.
    pub idle_timeout: Nanos,
    /// Spread ordinary repairs over the next sources (one per source)
    /// instead of sending them back to back at close.
    pub spread: bool,
    /// Spread repairs still unsent this long after their block closed are
    /// sent back to back.
    pub spread_deadline: Nanos,
    /// Token bucket depth in blocks' worth of repairs (m per block).
    pub repair_burst_blocks: u8,
    /// Retained source octets never exceed this.
    pub retention_budget: u64,
    /// Retained PSNs never lie this far (or farther) ahead of the oldest
    /// retained block's start; 0: no limit. A caller whose store keeps
    /// sources by PSN modulo its size sets that size, so that no kept
    /// source is lost to another's slot: older blocks are given up first
    /// (counted as the ring being full).
    pub retention_span: u32,
    /// Give a closed block up this long after it closed (0: only on ack,
    /// ring or budget pressure). With `rtt_derived`, any nonzero value
    /// means "by age", and the age follows the SRTT.
    pub give_up_after: Nanos,
    /// SRTT until [`Csf::set_srtt`].
    pub initial_srtt: Nanos,
    /// Answer T/C AETH reports with Source Copy (selective repeat).
    pub selective_repeat: bool,
    /// The CRF's batching time T_thresh, part of the in-flight guard.
    pub tc_batch_time: Nanos,
    /// No T/C AETH report for this long while blocks are outstanding: count
    /// an ACK timeout and leave recovery to the RDMA transport.
    pub tc_ack_timeout: Nanos,
    /// Most Source Copy symbols sent for one report.
    pub tc_max_per_report: u16,
    /// Coded retransmission and Source Copy (answers to requests and to
    /// T/C AETH reports) may use this percentage of the source octets the
    /// CSF sees, plus the burst below (`csf/budget.rs`).
    pub retx_rate_percent: u8,
    /// Depth of that budget in whole answers: k symbols of the largest
    /// message for T, per block (at least 1).
    pub retx_burst_blocks: u8,
    /// Start a block at the end of the previous one when the source follows
    /// it within k/2 positions (see `Csf::block_start_for`): for flows whose
    /// skipped PSNs the CRF cannot derive (responses).
    pub fill_gaps: bool,
    /// `tc_batch_time`, `tc_ack_timeout` and a nonzero `give_up_after`
    /// follow every SRTT ([`CsfParams::with_rtt`]); false: they stay.
    pub rtt_derived: bool,
    /// At the end of a burst, tell the CRF where the newest block ends
    /// when no ordinary repair did (m = 0, or the m/k bucket empty): an
    /// INFO with LAST (`Csf::tail_due`). Without it a lost tail is seen by
    /// no one but the RDMA transport's timer. Off when the CRF sends no
    /// requests (selective repeat alone): nothing would answer it.
    pub tail_info: bool,
}

impl CsfParams {
    /// Defaults for a multi-millisecond path.
    pub const DEFAULT: CsfParams = CsfParams {
        flow_id: 0,
        idle_timeout: 100_000,
        spread: false,
        spread_deadline: MS,
        repair_burst_blocks: 2,
        retention_budget: 16 << 20,
        retention_span: 0,
        give_up_after: 0,
        initial_srtt: MS,
        selective_repeat: false,
        tc_batch_time: 100_000,
        tc_ack_timeout: 100 * MS,
        tc_max_per_report: 256,
        retx_rate_percent: 25,
        retx_burst_blocks: 4,
        fill_gaps: false,
        rtt_derived: false,
        tail_info: true,
    };

    /// Shortest T/C AETH ACK timeout and response give-up age.
    pub const MIN_RTT_TIMEOUT: Nanos = 100 * MS;

    /// These parameters with the timings that depend on the path set from
    /// `srtt` (when `rtt_derived`; [`Csf::set_srtt`] applies it to every
    /// new estimate): the CRF's T/C batching time as it derives it
    /// ([`TcThresholds::t_thresh_for`]: SRTT/4, clamped), an ACK timeout of
    /// four SRTTs and, for a flow that gives blocks up by age, eight SRTTs
    /// (both at least [`Self::MIN_RTT_TIMEOUT`]).
    pub fn with_rtt(mut self, srtt: Nanos) -> CsfParams {
        if self.rtt_derived {
            self.tc_batch_time = TcThresholds::t_thresh_for(srtt);
            self.tc_ack_timeout = srtt.saturating_mul(4).max(Self::MIN_RTT_TIMEOUT);
            if self.give_up_after != 0 {
                self.give_up_after = srtt.saturating_mul(8).max(Self::MIN_RTT_TIMEOUT);
            }
        }
        self
    }
}

impl Default for CsfParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What the caller should do with a source packet it just showed the
/// engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceVerdict {
    /// A new source, coded and counted: keep the packet until released.
    Retain,
    /// A new source, coded, but the retention budget is exhausted: do not
    /// keep it (it cannot be retransmitted by CREM).
    NotRetained,
    /// A PSN seen before (RDMA retransmission): the original keeps its
    /// position; do not keep this copy.
    Retransmission,
    /// Not protected (no configuration yet, payload longer than T − 2, a
    /// PSN at a position already closed as absent): do not keep it.
    Unprotected,
    /// Not a source packet (ACK, response, unparsable): nothing to do.
    NotSource,
}

impl SourceVerdict {
    /// Whether the caller keeps the packet.
    pub const fn retain(self) -> bool {
        matches!(self, SourceVerdict::Retain)
    }
}

/// A configuration the CSF cannot use (k = 0, T < 2, too many repair
/// indices for k, m > 1 for XOR, m > 0 for Source Copy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidConfig;

/// Drops and refusals, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsfDrops {
    /// Ordinary repairs not sent: the m/k token bucket was empty.
    pub repair_rate_limited: u64,
    /// Ordinary repairs not sent: their block was acknowledged first.
    pub repair_cancelled_acked: u64,
    /// Sources coded but not retained (retention budget).
    pub not_retained: u64,
    /// Provisional blocks left without repairs: a source of theirs was not
    /// retained (their repairs are computed from the store).
    pub deferred_unretained: u64,
    /// Sources with a payload longer than T − 2 (left absent).
    pub oversize_payload: u64,
    /// New PSNs at positions already passed as absent.
    pub late_source: u64,
    /// Blocks whose m was capped by the accumulator size ACC.
    pub m_capped: u64,
    /// Messages not built: the scratch was shorter than the message.
    pub scratch_too_small: u64,
    /// Messages or symbols the codecs refused (inconsistent state).
    pub encode_error: u64,
    /// Answers cut short because the store lacked a source.
    pub source_missing: u64,
    /// Reported dropped positions not answered proactively: coded
    /// retransmission off (circuit breaker), the block answered within the
    /// SRTT, the retransmission budget (those symbols are also in
    /// `retx_budget_symbols`), or the block left while still open (RDMA
    /// ACK, give-up).
    pub proactive_limited: u64,
    /// Unparsable RoCEv2 packets given to [`Csf::on_roce`].
    pub unparsable: u64,
    /// Answers (coded, Source Copy, selective repeat) cut short or not sent
    /// because the retransmission budget was spent.
    pub retx_budget_limited: u64,
    /// Symbols those answers left out.
    pub retx_budget_symbols: u64,
}

/// Counters of one CSF (monotonic, except the `retention_*` gauges).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsfCounters {
    /// New source packets coded.
    pub sources: u64,
    /// Octets of their UDP payloads.
    pub source_octets: u64,
    /// Sources with a PSN seen before (RDMA retransmissions).
    pub retransmitted_sources: u64,
    /// Sources passed unprotected (no configuration, oversize, late).
    pub unprotected_sources: u64,
    /// Sources coded under the provisional configuration whose blocks were
    /// released unsent when it was refused or never acknowledged
    /// ([`Csf::drop_provisional`]): counted in `sources` too, yet never
    /// protected.
    pub provisional_released: u64,
    /// Blocks opened.
    pub blocks_opened: u64,
    /// Blocks closed with k positions covered.
    pub blocks_closed_k: u64,
    /// Blocks closed at the end of a burst.
    pub blocks_closed_idle: u64,
    /// Blocks closed early (a PSN beyond them, a request or report).
    pub blocks_closed_early: u64,
    /// Open blocks closed because the RDMA ACK covered them (no repairs).
    pub blocks_closed_acked: u64,
    /// Blocks released by the RDMA acknowledgment.
    pub blocks_acked: u64,
    /// Blocks given up (sum of the three reasons below).
    pub blocks_given_up: u64,
    /// … because the ring was full, or the source being retained lay
    /// `retention_span` or more PSNs ahead of them.
    pub given_up_ring: u64,
    /// … because the retention budget was reached.
    pub given_up_budget: u64,
    /// … because they were older than `give_up_after`.
    pub given_up_age: u64,
    /// Blocks whose sources were released under the retention budget
    /// before their RDMA ACK because no request had come for them within
    /// 1.25 SRTT of their close (`Csf::release_quiet`; not counted in
    /// `blocks_given_up` then, since the block stays in the ring; it is if
    /// it later leaves by age, ring or budget).
    pub released_quiet: u64,
    /// Requests and T/C reports naming a block released so (one per block
    /// named), and PSNs of path reports in one (one per PSN); not
    /// answered.
    pub requests_released: u64,
    /// Blocks released by [`Csf::shutdown`].
    pub blocks_released_shutdown: u64,
    /// Ordinary repairs sent.
    pub repairs_ordinary: u64,
    /// Coded retransmission symbols sent (RETX, scheme 1).
    pub repairs_retx: u64,
    /// Lost sources named by the requests answered with coded symbols (X
    /// summed over those answers; `repairs_retx` below it is what coded
    /// retransmission saves over resending every lost packet).
    pub retx_lost: u64,
    /// Source Copy symbols sent (requests and selective repeat).
    pub repairs_source_copy: u64,
    /// INFO messages sent (answers to range requests, and tail notices).
    pub repairs_info: u64,
    /// … of them tail notices: INFO with LAST for the newest block at the
    /// end of a burst, its ordinary round having sent no LAST.
    pub tail_infos: u64,
    /// Proactive answer symbols sent (coded or Source Copy, for reported
    /// drops; not in `repairs_retx` or `repairs_source_copy`).
    pub repairs_proactive: u64,
    /// Requests not answered because a proactive answer within the SRTT
    /// had covered every position they named.
    pub proactive_covered: u64,
    /// Octets of all REPAIR messages sent.
    pub repair_octets: u64,
    /// Block-form requests received.
    pub requests_block: u64,
    /// PSN-range requests received.
    pub requests_ranges: u64,
    /// Requests with the FALLBACK flag.
    pub requests_fallback: u64,
    /// Block answers refused: already answered within one SRTT.
    pub requests_rate_limited: u64,
    /// Block requests naming no retained block.
    pub requests_unknown_block: u64,
    /// Requests inconsistent with the block (k, Config ID, scheme, L).
    pub requests_bad: u64,
    /// Requests ignored: retransmission disabled by the circuit breaker, or
    /// the configuration still provisional.
    pub requests_disabled: u64,
    /// Answers sent as Source Copy because fresh indices ran out.
    pub retx_indices_exhausted: u64,
    /// PSNs named by range requests outside every retained block.
    pub range_psns_unknown: u64,
    /// Range entries beyond the per-request limit, ignored.
    pub range_entries_truncated: u64,
    /// RDMA acknowledgments processed.
    pub rdma_acks: u64,
    /// T/C AETH reports received.
    pub tc_reports: u64,
    /// … ignored as older than or equal to one already processed.
    pub tc_reports_duplicate: u64,
    /// … ignored because selective repeat is off or disabled.
    pub tc_reports_ignored: u64,
    /// PSNs the reports showed lost (gaps and guarded tail).
    pub tc_lost_psns: u64,
    /// Tail PSNs not counted lost: sent too recently (in-flight guard).
    pub tc_guarded_psns: u64,
    /// Partial (full, SegmentNum = 4) fragments: their tail is unknown,
    /// not lost.
    pub tc_partial_fragments: u64,
    /// Lost PSNs already re-sent within the current SRTT.
    pub tc_deduped_psns: u64,
    /// Lost PSNs outside every retained block.
    pub tc_unknown_psns: u64,
    /// Lost PSNs not re-sent because the per-report limit was reached.
    pub tc_over_budget: u64,
    /// Times no report arrived within `tc_ack_timeout`.
    pub tc_ack_timeouts: u64,
    /// Dropped PSNs received from Path Reporters.
    pub path_dropped_psns: u64,
    /// … outside every retained block.
    pub path_unknown_psns: u64,
    /// Configurations accepted by [`Csf::set_config`].
    pub config_changes: u64,
    /// Configurations refused by [`Csf::set_config`].
    pub config_rejected: u64,
    /// Retained source octets now.
    pub retention_octets: u64,
    /// Highest value of `retention_octets`.
    pub retention_octets_max: u64,
    /// Drops by reason.
    pub drops: CsfDrops,
}

/// Ordinary repairs of a closed block waiting to be sent.
#[derive(Clone, Copy, Debug)]
struct Pending {
    /// Accumulator slot holding the m symbols.
    slot: usize,
    /// Next repair to send.
    next: u8,
    /// Repairs accumulated.
    m: u8,
    /// Send the rest back to back at this time.
    deadline: Nanos,
    /// The block as it closed.
    block: Block,
}

/// Why an open block closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CloseWhy {
    K,
    Idle,
    Early,
}

/// Why a block is given up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GiveUp {
    Ring,
    Budget,
    Age,
}

/// T/C AETH state.
#[derive(Clone, Copy, Debug, Default)]
struct TcState {
    /// Report Sequence of the newest report processed.
    last_seq: Option<u16>,
    /// Highest PSN any report showed received.
    highest: Option<Psn>,
    /// Blocks are outstanding and no report has come since this time.
    wait_since: Option<Nanos>,
    /// The ACK timeout fired and no report has come since.
    timed_out: bool,
}

/// Where a [`Csf`]'s capacities come from: the storage of its retention
/// ring (its length is the most blocks retained) and of its two
/// ordinary-repair accumulators (each at least m·T octets, or m is capped).
/// Fixed arrays ([`Inline`]) or the caller's allocations.
pub trait CsfStorage {
    /// The retention ring's slots.
    type Ring: Slots<Block> + core::fmt::Debug;
    /// One accumulator.
    type Acc: Slots<u8> + core::fmt::Debug;
}

/// A [`Csf`] with fixed capacities: `BLOCKS` ring slots, `ACC` octets per
/// accumulator, in the engine itself.
#[derive(Debug)]
pub struct Inline<const BLOCKS: usize, const ACC: usize>;

impl<const BLOCKS: usize, const ACC: usize> CsfStorage for Inline<BLOCKS, ACC> {
    type Ring = [Block; BLOCKS];
    type Acc = [u8; ACC];
}

/// The CSF of one protected flow, its capacities from `St`.
#[derive(Debug)]
pub struct Csf<St: CsfStorage> {
    params: CsfParams,
    flow_id: u32,
    cfg: Option<FecConfig>,
    next_cfg: Option<(FecConfig, Psn)>,
    coded_retx: bool,
    ordinary: bool,
    /// The configuration is provisional: blocks are coded, nothing is sent.
    muted: bool,
    srtt: Nanos,
    /// Most blocks retained: BLOCKS, or fewer if the CRF holds fewer open
    /// ([`Csf::set_max_open_blocks`]).
    max_blocks: usize,
    ring: Ring<St::Ring>,
    /// Encoder of the open block (None when it accumulates no repairs).
    enc: Option<BlockEncoder>,
    acc: [St::Acc; 2],
    /// Accumulator of the open block.
    cur_slot: usize,
    pending: Option<Pending>,
    /// The PSN after the newest one seen (None before the first source).
    next_psn: Option<Psn>,
    last_source: Nanos,
    bucket: Bucket,
    retx_budget: RetxBudget,
    log: SendLog,
    tc: TcState,
    /// Blocks starting before this PSN were looked at by `release_quiet`
    /// (None: from the oldest).
    quiet_from: Option<Psn>,
    counters: CsfCounters,
}

impl<const BLOCKS: usize, const ACC: usize> Csf<Inline<BLOCKS, ACC>> {
    /// A CSF without configuration: sources pass unprotected until
    /// [`Csf::set_config`].
    pub fn new(params: CsfParams) -> Self {
        Self::with_storage(params, [Block::EMPTY; BLOCKS], [[0; ACC]; 2])
    }
}

impl<St: CsfStorage> Csf<St> {
    /// A CSF without configuration in the storage given (whatever it
    /// holds is never read before it is written): sources pass unprotected
    /// until [`Csf::set_config`].
    pub fn with_storage(params: CsfParams, ring: St::Ring, acc: [St::Acc; 2]) -> Self {
        let ring = Ring::new(ring);
        Csf {
            params,
            flow_id: params.flow_id,
            cfg: None,
            next_cfg: None,
            coded_retx: true,
            ordinary: true,
            muted: false,
            srtt: params.initial_srtt,
            max_blocks: ring.capacity(),
            ring,
            enc: None,
            acc,
            cur_slot: 0,
            pending: None,
            next_psn: None,
            last_source: 0,
            bucket: Bucket::new(),
            retx_budget: RetxBudget::new(),
            log: SendLog::new(),
            tc: TcState::default(),
            quiet_from: None,
            counters: CsfCounters::default(),
        }
    }

    /// Re-initialises in place (no large temporary on the stack). Blocks
    /// still held are forgotten without release: call [`Csf::shutdown`]
    /// first.
    pub fn reset(&mut self, params: CsfParams) {
        self.params = params;
        self.flow_id = params.flow_id;
        self.cfg = None;
        self.next_cfg = None;
        self.coded_retx = true;
        self.ordinary = true;
        self.muted = false;
        self.srtt = params.initial_srtt;
        self.max_blocks = self.ring.capacity();
        self.ring.clear();
        self.enc = None;
        self.cur_slot = 0;
        self.pending = None;
        self.next_psn = None;
        self.last_source = 0;
        self.bucket = Bucket::new();
        self.retx_budget = RetxBudget::new();
        self.log.clear();
        self.tc = TcState::default();
        self.quiet_from = None;
        self.counters = CsfCounters::default();
    }

    /// [`Csf::reset`] for a new session of the same flow: the counters go
    /// on counting (the flow's and the netns totals keep earlier sessions).
    pub fn restart(&mut self, params: CsfParams) {
        let kept = self.counters;
        self.reset(params);
        self.counters = kept;
    }

    // -----------------------------------------------------------------
    // Settings from negotiation, policy and the circuit breaker.

    /// Uses `cfg` for blocks starting at or after `effective` (immediately
    /// when there is no configuration yet). A later call before the
    /// effective PSN replaces the pending one.
    pub fn set_config(&mut self, cfg: FecConfig, effective: Psn) -> Result<(), InvalidConfig> {
        if !config_ok(&cfg) {
            self.counters.config_rejected = self.counters.config_rejected.wrapping_add(1);
            return Err(InvalidConfig);
        }
        self.counters.config_changes = self.counters.config_changes.wrapping_add(1);
        if self.cfg.is_none() {
            self.cfg = Some(cfg);
            self.next_cfg = None;
        } else {
            self.next_cfg = Some((cfg, effective));
        }
        Ok(())
    }

    /// Codes with `cfg` from now on, before it is acknowledged: blocks are
    /// opened, sources retained and nothing is sent (no REPAIR, no answer
    /// to a request) until [`Csf::confirm`]. The sender flow does this from
    /// a flow's first packet, so that the packets sent while HELLO and
    /// PARAM_UPDATE are on their way (an RDMA connection's first burst) are
    /// protected too. Refused (with nothing changed) once a configuration
    /// is set.
    pub fn set_provisional(&mut self, cfg: FecConfig) -> Result<(), InvalidConfig> {
        if self.cfg.is_some() || !config_ok(&cfg) {
            self.counters.config_rejected = self.counters.config_rejected.wrapping_add(1);
            return Err(InvalidConfig);
        }
        self.cfg = Some(cfg);
        self.next_cfg = None;
        self.muted = true;
        Ok(())
    }

    /// The provisional configuration was acknowledged: the ordinary repairs
    /// of every block closed meanwhile are sent now (computed from the
    /// retained sources; blocks the RDMA ACK released need none), the open
    /// block's when it closes.
    pub fn confirm<G, K, S>(&mut self, io: &mut CsfIo<'_, G, K, S>)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        if !self.muted {
            return;
        }
        self.muted = false;
        for n in 0..self.ring.len() {
            if self.ring.get(n).is_some_and(|b| !b.open) {
                self.send_deferred(n, None, io);
            }
        }
    }

    /// The provisional configuration was refused or never acknowledged:
    /// its blocks are released unsent and sources pass unprotected again.
    pub fn drop_provisional<S: SourceStore + ?Sized>(&mut self, store: &mut S) {
        if !self.muted {
            return;
        }
        // Every block is provisional while muted.
        let coded = (0..self.ring.len())
            .filter_map(|n| self.ring.get(n))
            .fold(0u64, |n, b| n.saturating_add(b.present.len() as u64));
        self.counters.provisional_released = self.counters.provisional_released.wrapping_add(coded);
        self.shutdown(store);
        self.cfg = None;
        self.next_cfg = None;
        self.muted = false;
    }

    /// Whether the configuration is provisional (see [`Csf::set_provisional`]).
    pub fn is_provisional(&self) -> bool {
        self.muted
    }

    /// The configuration new blocks use now.
    pub fn config(&self) -> Option<FecConfig> {
        self.cfg
    }

    /// The configuration scheduled by [`Csf::set_config`] and its Effective
    /// PSN, not yet in use.
    pub fn next_config(&self) -> Option<(FecConfig, Psn)> {
        self.next_cfg
    }

    /// The PSN after the newest source seen (`None` before the first): where
    /// an Effective PSN is counted from.
    pub fn next_psn(&self) -> Option<Psn> {
        self.next_psn
    }

    /// Whether a retained block uses Config ID `id` (a configuration may
    /// be released only when none does).
    pub fn uses_config(&self, id: u8) -> bool {
        (0..self.ring.len()).any(|n| self.ring.get(n).is_some_and(|b| b.cfg.id == id))
    }

    /// The Flow ID assigned by HELLO_ACK.
    pub fn set_flow_id(&mut self, id: u32) {
        self.flow_id = id;
    }

    /// Smoothed RTT: paces answers (one per block per SRTT) and the T/C
    /// AETH in-flight guard.
    pub fn set_srtt(&mut self, srtt: Nanos) {
        self.srtt = srtt;
        self.params = self.params.with_rtt(srtt);
    }

    /// The CRF holds at most `n` blocks open (its HELLO_ACK's Max Open
    /// Blocks): a block it has let go of is never asked for again, so the
    /// CSF retains no more than that (fewer than its ring, if so); older
    /// blocks are given up as when the ring is full (`given_up_ring`).
    pub fn set_max_open_blocks(&mut self, n: u16) {
        self.max_blocks = usize::from(n).clamp(1, self.ring.capacity().max(1));
    }

    /// Most blocks the ring can retain (its storage's length).
    pub fn ring_capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// Octets of the smaller accumulator: m·T beyond it is capped.
    fn acc_len(&self) -> usize {
        let [a, b] = &self.acc;
        a.as_ref().len().min(b.as_ref().len())
    }

    /// The SRTT in use (see [`Csf::set_srtt`]).
    pub fn srtt(&self) -> Nanos {
        self.srtt
    }

    /// The parameters in use (with `rtt_derived`, their timings follow the
    /// SRTT).
    pub fn params(&self) -> &CsfParams {
        &self.params
    }

    /// Circuit breaker: `false` stops every CREM retransmission (coded,
    /// Source Copy, selective repeat).
    pub fn set_coded_retx(&mut self, on: bool) {
        self.coded_retx = on;
    }

    /// `false` stops ordinary repairs at once (blocks opened meanwhile
    /// accumulate none).
    pub fn set_ordinary_repairs(&mut self, on: bool) {
        self.ordinary = on;
    }

    /// Turns selective repeat (answers to T/C AETH reports) on or off.
    pub fn set_selective_repeat(&mut self, on: bool) {
        self.params.selective_repeat = on;
    }

    /// Counters and gauges.
    pub fn counters(&self) -> &CsfCounters {
        &self.counters
    }

    /// Retained source octets now.
    pub fn retention_octets(&self) -> u64 {
        self.counters.retention_octets
    }

    /// Blocks held (open one included).
    pub fn blocks_held(&self) -> usize {
        self.ring.len()
    }

    /// Start PSN and covered positions of the oldest block held, if any.
    pub fn oldest_block(&self) -> Option<(Psn, u8)> {
        self.ring.oldest().map(|b| (b.start, b.covered))
    }

    /// Start PSN and covered positions of the open block, if any.
    pub fn open_block(&self) -> Option<(Psn, u8)> {
        self.ring
            .newest()
            .filter(|b| b.open)
            .map(|b| (b.start, b.covered))
    }

    /// Whether the T/C AETH ACK timeout fired and no report came since.
    pub fn tc_timed_out(&self) -> bool {
        self.tc.timed_out
    }

    // -----------------------------------------------------------------
    // Sources.

    /// A RoCEv2 packet of the protected direction (the UDP payload, BTH
    /// through ICRC): parses it and goes on as [`Csf::on_roce_packet`].
    pub fn on_roce<G, K, S>(
        &mut self,
        now: Nanos,
        udp_payload: &[u8],
        rdma_mtu: u32,
        io: &mut CsfIo<'_, G, K, S>,
    ) -> SourceVerdict
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        match RocePacket::parse(udp_payload) {
            Ok(pkt) => self.on_roce_packet(now, &pkt, udp_payload, rdma_mtu, io),
            Err(_) => {
                self.counters.drops.unparsable = self.counters.drops.unparsable.wrapping_add(1);
                SourceVerdict::NotSource
            }
        }
    }

    /// An already parsed RoCEv2 packet of the protected direction and its
    /// UDP payload. Sources go to [`Csf::on_source`] with their PSN span (a
    /// READ request covers `ceil(DMA Length / rdma_mtu)` PSNs, its own and
    /// the absent positions of its responses); other packets return
    /// [`SourceVerdict::NotSource`].
    pub fn on_roce_packet<G, K, S>(
        &mut self,
        now: Nanos,
        pkt: &RocePacket<'_>,
        udp_payload: &[u8],
        rdma_mtu: u32,
        io: &mut CsfIo<'_, G, K, S>,
    ) -> SourceVerdict
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        if !pkt.is_source() {
            return SourceVerdict::NotSource;
        }
        let span = match pkt.read_span(rdma_mtu) {
            Some(Ok(r)) => r.count,
            _ => 1,
        };
        self.on_source(now, pkt.bth.psn, span, udp_payload, io)
    }

    /// A RoCEv2 packet of the reverse direction: acknowledgments release
    /// retained blocks (see [`Csf::on_rdma_ack`]).
    pub fn on_roce_reverse<S: SourceStore + ?Sized>(
        &mut self,
        now: Nanos,
        udp_payload: &[u8],
        store: &mut S,
    ) {
        if let Some(p) = RocePacket::parse(udp_payload)
            .ok()
            .and_then(|p| p.acked_through())
        {
            self.on_rdma_ack(now, p, store);
        }
    }

    /// A source packet with `psn` passed, consuming `span` PSNs (1, or the
    /// READ request's response count: the others are absent positions);
    /// `payload` is its UDP payload. May close a block and send repairs.
    pub fn on_source<G, K, S>(
        &mut self,
        now: Nanos,
        psn: Psn,
        span: u32,
        payload: &[u8],
        io: &mut CsfIo<'_, G, K, S>,
    ) -> SourceVerdict
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.expire(now, io);
        let span = span.clamp(1, MAX_SPAN);
        if let Some(np) = self.next_psn {
            if psn.is_before(np) {
                return self.old_source(psn);
            }
        }
        if let Some(b) = self.ring.newest().filter(|b| b.open) {
            if b.start.forward_distance(psn) >= b.cfg.k as u32 {
                self.close_open(now, CloseWhy::Early, io);
            }
        }
        self.next_psn = Some(psn.wrapping_add(span));
        self.last_source = now;
        if !self.is_open() && !self.open_new(now, self.block_start_for(psn), io.store) {
            self.count_unprotected();
            return SourceVerdict::Unprotected;
        }
        let gran = self
            .srtt
            .saturating_add(self.params.tc_batch_time)
            .checked_div(8)
            .unwrap_or(0)
            .max(1_000);
        self.log.record(now, psn.wrapping_add(span), gran);

        let Some(b) = self.ring.newest_mut() else {
            return SourceVerdict::Unprotected;
        };
        let j = b.start.forward_distance(psn) as u8;
        let cfg = b.cfg;
        let m_eff = b.m_eff;
        let deferred = b.deferred;
        b.covered = b
            .covered
            .max((j as u32).saturating_add(span).min(cfg.k as u32) as u8);
        let t = cfg.t as usize;
        let verdict = if payload.len().saturating_add(2) > t {
            self.counters.drops.oversize_payload =
                self.counters.drops.oversize_payload.wrapping_add(1);
            self.count_unprotected();
            SourceVerdict::Unprotected
        } else {
            b.present.insert(j);
            if let Some(enc) = self.enc.as_mut() {
                let len = (m_eff as usize).saturating_mul(t);
                let ok = self
                    .acc
                    .get_mut(self.cur_slot)
                    .and_then(|a| a.as_mut().get_mut(..len))
                    .is_some_and(|acc| enc.add_payload(io.gf, j, payload, acc).is_ok());
                if !ok {
                    self.counters.drops.encode_error =
                        self.counters.drops.encode_error.wrapping_add(1);
                }
            }
            let burst = self.params.repair_burst_blocks;
            // While muted, or in a block still owed its repairs: banked. A
            // block can lose its deferred flag (a source not retained);
            // capping then would throw away the earlier blocks' share.
            if deferred || self.muted {
                self.bucket.earn_banked(m_eff, cfg.k, burst);
            } else {
                self.bucket.earn(m_eff, cfg.k, burst);
            }
            let p = &self.params;
            self.retx_budget.earn(
                payload.len(),
                p.retx_rate_percent,
                p.retx_burst_blocks,
                cfg.k,
                cfg.t,
                self.counters
                    .retention_octets
                    .saturating_add(payload.len() as u64),
            );
            self.counters.sources = self.counters.sources.wrapping_add(1);
            self.counters.source_octets = self
                .counters
                .source_octets
                .wrapping_add(payload.len() as u64);
            self.retain(now, psn, payload.len() as u64, io.store)
        };
        if verdict != SourceVerdict::Retain {
            // A provisional block computes its repairs from the store
            // later: without this source it can have none.
            if let Some(b) = self.ring.newest_mut().filter(|b| b.deferred) {
                b.deferred = false;
                self.counters.drops.deferred_unretained =
                    self.counters.drops.deferred_unretained.wrapping_add(1);
            }
        }
        if self
            .ring
            .newest()
            .is_some_and(|b| b.open && b.covered >= b.cfg.k)
        {
            // This source is stored only after the call: a provisional
            // block's repairs, computed now, take it from here.
            let this = (verdict == SourceVerdict::Retain).then_some((psn, payload));
            self.close_open_with(now, CloseWhy::K, this, io);
        }
        if self.params.spread {
            self.send_pending_one(io);
        }
        verdict
    }

    /// The RDMA acknowledgment seen in the reverse direction covers every
    /// PSN up to `acked_through` ([`RocePacket::acked_through`]): release
    /// the blocks it covers entirely (an open one closes without repairs).
    pub fn on_rdma_ack<S: SourceStore + ?Sized>(
        &mut self,
        _now: Nanos,
        acked_through: Psn,
        store: &mut S,
    ) {
        self.counters.rdma_acks = self.counters.rdma_acks.wrapping_add(1);
        while let Some(b) = self.ring.oldest() {
            let Some(last) = b.range().last() else {
                break;
            };
            if !last.is_before_or_eq(acked_through) {
                break;
            }
            if b.open {
                self.enc = None;
                self.counters.blocks_closed_acked =
                    self.counters.blocks_closed_acked.wrapping_add(1);
            }
            if let Some(p) = self.pending {
                if p.block.start == b.start {
                    self.counters.drops.repair_cancelled_acked = self
                        .counters
                        .drops
                        .repair_cancelled_acked
                        .wrapping_add(p.m.saturating_sub(p.next) as u64);
                    self.pending = None;
                }
            }
            self.counters.blocks_acked = self.counters.blocks_acked.wrapping_add(1);
            self.drop_oldest(store);
        }
        if self.ring.is_empty() {
            self.tc.wait_since = None;
            self.quiet_from = None;
        }
        // A cursor the oldest block has passed says nothing any more; left,
        // it would fall 2^23 PSNs behind in a long flow and its serial
        // comparison would flip (every block "before" it: nothing quiet).
        if let (Some(q), Some(b)) = (self.quiet_from, self.ring.oldest()) {
            if !b.start.is_before(q) {
                self.quiet_from = None;
            }
        }
    }

    /// Releases every retained block (flow closed).
    pub fn shutdown<S: SourceStore + ?Sized>(&mut self, store: &mut S) {
        while !self.ring.is_empty() {
            self.counters.blocks_released_shutdown =
                self.counters.blocks_released_shutdown.wrapping_add(1);
            self.drop_oldest(store);
        }
        self.enc = None;
        self.pending = None;
        self.tc.wait_since = None;
    }

    // -----------------------------------------------------------------
    // Time.

    /// When [`Csf::on_timer`] should run next: idle close, spread deadline,
    /// block age, T/C AETH ACK timeout.
    pub fn next_deadline(&self) -> Option<Nanos> {
        let idle = self
            .ring
            .newest()
            .filter(|b| b.open)
            .map(|_| self.last_source.saturating_add(self.params.idle_timeout));
        let spread = self.pending.map(|p| p.deadline);
        let age = self.age_deadline();
        let tc = self.tc_deadline();
        let tail = self.tail_due();
        [idle, spread, age, tc, tail].into_iter().flatten().min()
    }

    /// When the tail notice of the newest block is due, if one is: the
    /// block is closed, holds a source, is neither acknowledged (then gone
    /// from the ring) nor released, its ordinary round did not send LAST
    /// and none of it is still queued, and the CSF is not muted (a
    /// provisional block's repairs wait for PARAM_ACK, and its LAST with
    /// them).
    ///
    /// Draft ("Receiver Operation"): the CRF finds a block incomplete
    /// after it has seen a packet beyond it "or all of its repair
    /// symbols". At the end of a burst no packet follows, and a block
    /// that sent no repair gives nothing to see: its lost tail would wait
    /// for the RDMA transport's retransmission timer. An INFO with LAST
    /// says "this block, these positions, no more symbols" (our ruling,
    /// README "Tail notice"): the CRF then requests what it lacks, and a coded
    /// answer (one symbol per lost source at most) restores it within
    /// about one RTT. It carries no symbol, so the m/k bound on ordinary
    /// repair symbols does not apply; one per burst at most.
    fn tail_due(&self) -> Option<Nanos> {
        // With coded retransmission off (circuit breaker) no request the
        // notice draws would be answered; a CRF that sends no requests
        // (selective repeat alone) is told by `tail_info` off.
        if !self.params.tail_info || !self.coded_retx || self.muted {
            return None;
        }
        // An open block's idle close comes first (and may send its round).
        let b = self.ring.newest().filter(|b| !b.open)?;
        let queued = self.pending.is_some_and(|p| p.block.start == b.start);
        if b.present.is_empty() || b.released || queued || b.told {
            return None;
        }
        Some(self.last_source.saturating_add(self.params.idle_timeout))
    }

    /// Sends the tail notice of the newest block (see [`Csf::tail_due`]).
    fn send_tail<G, K, S>(&mut self, io: &mut CsfIo<'_, G, K, S>)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let n = self.ring.len().saturating_sub(1);
        let Some(b) = self.ring.get_mut(n) else {
            return;
        };
        // Told even if the send fails: one attempt a block (no retry storm).
        b.told = true;
        if self.send_info_last(n, io) {
            self.counters.tail_infos = self.counters.tail_infos.wrapping_add(1);
        }
    }

    /// Runs what is due at `now`.
    pub fn on_timer<G, K, S>(&mut self, now: Nanos, io: &mut CsfIo<'_, G, K, S>)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.expire(now, io);
    }

    fn age_deadline(&self) -> Option<Nanos> {
        if self.params.give_up_after == 0 {
            return None;
        }
        self.ring
            .oldest()
            .filter(|b| !b.open)
            .map(|b| b.closed_at.saturating_add(self.params.give_up_after))
    }

    fn tc_deadline(&self) -> Option<Nanos> {
        if !self.params.selective_repeat || self.tc.timed_out {
            return None;
        }
        self.tc
            .wait_since
            .map(|t| t.saturating_add(self.params.tc_ack_timeout))
    }

    fn expire<G, K, S>(&mut self, now: Nanos, io: &mut CsfIo<'_, G, K, S>)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        if self.is_open() && now >= self.last_source.saturating_add(self.params.idle_timeout) {
            self.close_open(now, CloseWhy::Idle, io);
        }
        if self.pending.is_some_and(|p| now >= p.deadline) {
            self.flush_pending(io);
        }
        if self.tail_due().is_some_and(|d| now >= d) {
            self.send_tail(io);
        }
        while self.age_deadline().is_some_and(|d| now >= d) {
            self.give_up_oldest(GiveUp::Age, io.store);
        }
        if self.tc_deadline().is_some_and(|d| now >= d) {
            self.tc.timed_out = true;
            self.counters.tc_ack_timeouts = self.counters.tc_ack_timeouts.wrapping_add(1);
        }
    }

    // -----------------------------------------------------------------
    // Block life cycle.

    fn is_open(&self) -> bool {
        self.ring.newest().is_some_and(|b| b.open)
    }

    fn count_unprotected(&mut self) {
        self.counters.unprotected_sources = self.counters.unprotected_sources.wrapping_add(1);
    }

    /// A PSN before the newest one seen.
    fn old_source(&mut self, psn: Psn) -> SourceVerdict {
        let present = self
            .ring
            .find(psn)
            .and_then(|n| self.ring.get(n))
            .and_then(|b| b.position(psn).map(|j| b.present.contains(j)));
        if present == Some(false) {
            self.counters.drops.late_source = self.counters.drops.late_source.wrapping_add(1);
            self.count_unprotected();
            return SourceVerdict::Unprotected;
        }
        self.counters.retransmitted_sources = self.counters.retransmitted_sources.wrapping_add(1);
        SourceVerdict::Retransmission
    }

    /// Opens a block at `start`; `false` if the flow is not protected.
    /// Where a new block for a source at `psn` starts: with `fill_gaps`, at
    /// the end of the previous block when `psn` follows it within k/2
    /// positions, else at `psn`. The PSNs skipped never passed this CSF
    /// (RDMA sends in order), so they become absent positions that the CRF
    /// learns from the Present Bitmap. Started at `psn`, they would lie
    /// between blocks, where no REPAIR describes them and the CRF could only
    /// hold what follows and ask: a responder direction skips the PSNs of
    /// every request that is not a READ. (A request flow's CRF derives its
    /// skipped PSNs, READ response spans, by itself.)
    fn block_start_for(&self, psn: Psn) -> Psn {
        let (true, Some(prev), Some(cfg)) = (self.params.fill_gaps, self.ring.newest(), self.cfg)
        else {
            return psn;
        };
        // The block may open with the next configuration (`open_new`): the
        // source must lie within the smaller k of the two.
        let k = self.next_cfg.map_or(cfg.k, |(c, _)| c.k.min(cfg.k));
        let end = prev.start.wrapping_add(prev.covered as u32);
        if psn.is_after(end) && end.forward_distance(psn) <= k as u32 / 2 {
            end
        } else {
            psn
        }
    }

    fn open_new<S: SourceStore + ?Sized>(&mut self, now: Nanos, start: Psn, store: &mut S) -> bool {
        if let Some((c, eff)) = self.next_cfg {
            if start.is_after_or_eq(eff) {
                self.cfg = Some(c);
                self.next_cfg = None;
            }
        }
        let Some(cfg) = self.cfg else {
            return false;
        };
        if self.ring.capacity() == 0 {
            return false;
        }
        if self.ring.is_full() || self.ring.len() >= self.max_blocks {
            self.give_up_oldest(GiveUp::Ring, store);
        }
        let t = (cfg.t as usize).max(2);
        let wanted = match cfg.scheme {
            Scheme::CauchyRs => cfg.m,
            Scheme::Xor => cfg.m.min(1),
            Scheme::SourceCopy => 0,
        };
        let wanted = if self.ordinary { wanted } else { 0 };
        let fit = self.acc_len().checked_div(t).unwrap_or(0).min(255) as u8;
        if wanted > fit {
            self.counters.drops.m_capped = self.counters.drops.m_capped.wrapping_add(1);
        }
        let mut m_eff = wanted.min(fit);
        self.enc = None;
        // Provisional: no accumulator; the repairs come from the store.
        if m_eff > 0 && !self.muted {
            match Code::new(cfg.scheme, cfg.k, t).and_then(|c| BlockEncoder::new(c, 0, m_eff)) {
                Ok(e) => {
                    let len = (m_eff as usize).saturating_mul(t);
                    if let Some(a) = self
                        .acc
                        .get_mut(self.cur_slot)
                        .and_then(|a| a.as_mut().get_mut(..len))
                    {
                        a.fill(0);
                    }
                    self.enc = Some(e);
                }
                Err(_) => {
                    self.counters.drops.encode_error =
                        self.counters.drops.encode_error.wrapping_add(1);
                    m_eff = 0;
                }
            }
        }
        let mut blk = Block::open(start, cfg, m_eff);
        blk.deferred = self.muted && m_eff > 0;
        if !self.ring.push(blk) {
            self.enc = None;
            return false;
        }
        self.counters.blocks_opened = self.counters.blocks_opened.wrapping_add(1);
        if self.tc.wait_since.is_none() {
            self.tc.wait_since = Some(now);
        }
        true
    }

    /// Accounts `len` retained octets of source `psn` to the open block,
    /// giving older blocks up as needed (for the budget, and for
    /// `retention_span`); `NotRetained` if it cannot fit at all.
    fn retain<S: SourceStore + ?Sized>(
        &mut self,
        now: Nanos,
        psn: Psn,
        len: u64,
        store: &mut S,
    ) -> SourceVerdict {
        let span = self.params.retention_span;
        if span != 0 {
            let too_far = |b: &Block| b.start.forward_distance(psn) >= span;
            while self.ring.oldest().is_some_and(|b| !b.open && too_far(b)) {
                self.give_up_oldest(GiveUp::Ring, store);
            }
            // Only the open block is left, and it is wider than the span.
            if self.ring.oldest().is_some_and(too_far) {
                self.counters.drops.not_retained = self.counters.drops.not_retained.wrapping_add(1);
                return SourceVerdict::NotRetained;
            }
        }
        let budget = self.params.retention_budget;
        while self.counters.retention_octets.saturating_add(len) > budget
            && self.ring.oldest().is_some_and(|b| !b.open)
        {
            if !self.release_quiet(now, store) {
                self.give_up_oldest(GiveUp::Budget, store);
            }
        }
        if self.counters.retention_octets.saturating_add(len) > budget {
            self.counters.drops.not_retained = self.counters.drops.not_retained.wrapping_add(1);
            return SourceVerdict::NotRetained;
        }
        let Some(b) = self.ring.newest_mut() else {
            return SourceVerdict::NotRetained;
        };
        b.retained = b.retained.saturating_add(len);
        let c = &mut self.counters;
        c.retention_octets = c.retention_octets.saturating_add(len);
        c.retention_octets_max = c.retention_octets_max.max(c.retention_octets);
        SourceVerdict::Retain
    }

    /// Over the retention budget: releases the sources of the oldest
    /// closed block that no request, T/C report or path report has named
    /// and that closed at least 1.25 SRTT ago. The draft lets a CSF give a
    /// block up before its RDMA ACK; this picks the block least likely to
    /// need a retransmission, where giving up the oldest block would pick
    /// the one most likely to (its hole is what holds the cumulative RDMA
    /// ACK back, so the retention grows to a round trip plus the slowest
    /// recovery in progress). The CRF asks for a block about an SRTT after
    /// its close (its repairs' one-way delay, the allowance, the request's
    /// way back); a request that comes later, or again after a lost one,
    /// finds the block released and the RDMA transport recovers. False
    /// if no block qualifies.
    fn release_quiet<S: SourceStore + ?Sized>(&mut self, now: Nanos, store: &mut S) -> bool {
        let quiet_for = self.srtt.saturating_add(self.srtt / 4);
        let from = self.quiet_from.map_or(0, |p| self.ring.count_before(p));
        for n in from..self.ring.len() {
            let Some(b) = self.ring.get_mut(n) else {
                break;
            };
            if b.open || now < b.closed_at.saturating_add(quiet_for) {
                // Blocks close in PSN order: the rest are younger.
                return false;
            }
            self.quiet_from = Some(b.start.wrapping_add(1));
            // A provisional block still owes its ordinary repairs, made
            // from its sources once the configuration is confirmed.
            let named = b.released
                || b.deferred
                || b.last_response.is_some()
                || b.last_info.is_some()
                || !b.tc_sent.is_empty()
                || !b.dropped.is_empty();
            if named || b.retained == 0 {
                continue;
            }
            b.released = true;
            let (range, retained) = (b.range(), b.retained);
            b.retained = 0;
            let c = &mut self.counters;
            c.retention_octets = c.retention_octets.saturating_sub(retained);
            c.released_quiet = c.released_quiet.wrapping_add(1);
            store.release(range);
            return true;
        }
        false
    }

    /// Pops the oldest block and releases its PSNs.
    fn drop_oldest<S: SourceStore + ?Sized>(&mut self, store: &mut S) {
        if let Some(b) = self.ring.pop_oldest() {
            if b.open {
                self.enc = None;
                // Its reported drops waited for its close: gone first.
                let d = &mut self.counters.drops;
                d.proactive_limited = d.proactive_limited.wrapping_add(b.dropped.len() as u64);
            }
            self.counters.retention_octets =
                self.counters.retention_octets.saturating_sub(b.retained);
            if b.covered > 0 && !b.released {
                store.release(b.range());
            }
        }
        if self.ring.is_empty() {
            self.tc.wait_since = None;
            self.quiet_from = None;
        }
        // A cursor the oldest block has passed says nothing any more; left,
        // it would fall 2^23 PSNs behind in a long flow and its serial
        // comparison would flip (every block "before" it: nothing quiet).
        if let (Some(q), Some(b)) = (self.quiet_from, self.ring.oldest()) {
            if !b.start.is_before(q) {
                self.quiet_from = None;
            }
        }
    }

    fn give_up_oldest<S: SourceStore + ?Sized>(&mut self, why: GiveUp, store: &mut S) {
        if self.ring.is_empty() {
            return;
        }
        let c = &mut self.counters;
        c.blocks_given_up = c.blocks_given_up.wrapping_add(1);
        match why {
            GiveUp::Ring => c.given_up_ring = c.given_up_ring.wrapping_add(1),
            GiveUp::Budget => c.given_up_budget = c.given_up_budget.wrapping_add(1),
            GiveUp::Age => c.given_up_age = c.given_up_age.wrapping_add(1),
        }
        self.drop_oldest(store);
    }

    /// Closes the open block: queues (and, unless spreading, sends) its
    /// ordinary repairs, then any proactive answer owed.
    fn close_open<G, K, S>(&mut self, now: Nanos, why: CloseWhy, io: &mut CsfIo<'_, G, K, S>)
    where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        self.close_open_with(now, why, None, io);
    }

    /// [`Csf::close_open`] while `this` (PSN, payload), the source being
    /// added, is not in the store yet.
    fn close_open_with<G, K, S>(
        &mut self,
        now: Nanos,
        why: CloseWhy,
        this: Option<(Psn, &[u8])>,
        io: &mut CsfIo<'_, G, K, S>,
    ) where
        G: MulAcc + ?Sized,
        K: Sink + ?Sized,
        S: SourceStore + ?Sized,
    {
        let Some(b) = self.ring.newest_mut().filter(|b| b.open) else {
            return;
        };
        b.open = false;
        b.closed_at = now;
        let blk = *b;
        let c = &mut self.counters;
        match why {
            CloseWhy::K => c.blocks_closed_k = c.blocks_closed_k.wrapping_add(1),
            CloseWhy::Idle => c.blocks_closed_idle = c.blocks_closed_idle.wrapping_add(1),
            CloseWhy::Early => c.blocks_closed_early = c.blocks_closed_early.wrapping_add(1),
        }
        if self.enc.take().is_some() && blk.m_eff > 0 && !blk.present.is_empty() {
            self.flush_pending(io);
            self.pending = Some(Pending {
                slot: self.cur_slot,
                next: 0,
                m: blk.m_eff,
                deadline: now.saturating_add(self.params.spread_deadline),
                block: blk,
            });
            self.cur_slot ^= 1;
            if !self.params.spread {
                self.flush_pending(io);
            }
        }
        let n = self.ring.len().saturating_sub(1);
        if blk.deferred && !self.muted {
            self.send_deferred(n, this, io);
        }
        // An open block is never answered: all it dropped is owed.
        if !blk.dropped.is_empty() {
            self.answer_proactive(now, n, &blk.dropped, io);
        }
    }
}

/// Whether the CSF can code with `cfg`.
fn config_ok(cfg: &FecConfig) -> bool {
    if Code::new(cfg.scheme, cfg.k, cfg.t as usize).is_err() {
        return false;
    }
    match cfg.scheme {
        Scheme::CauchyRs => cfg.m as u16 + cfg.k as u16 <= 256,
        Scheme::Xor => cfg.m <= 1,
        Scheme::SourceCopy => cfg.m == 0,
    }
}
