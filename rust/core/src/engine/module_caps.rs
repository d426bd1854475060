//! The engine capacities crem.ko builds its flows with, here so that the
//! module and `crem-sim --engine module` size flows alike from one place.
//!
//! [`caps_for`] sizes each flow from the packets in flight it is to
//! protect (the netns's `max-bdp`); the per-flow constants below are its
//! sizes at [`MAX_BDP_DEFAULT`] (checked at compile time): a CSF retains
//! [`CSF_BLOCKS`] blocks for coded retransmission (2048 packets at k = 32:
//! about 1.8 ms of 10 Gbit/s at 1 KiB), a CRF holds [`CRF_BLOCKS`] blocks
//! open, and the module's stores (`rust/store.rs`) follow the CRF's window
//! and the CSF's [`CSF_STORE_SLOTS`]. [`CSF_ACC`], [`MAX_M`],
//! [`DECODE_OUT`] and [`MESSAGE`] do not depend on `max-bdp`.

use super::super::roce::MAX_SYMBOL_LEN;
use super::crf::CrfCaps;

/// The module's CSF packet store: a ring of this many slots (a power of
/// two) indexed by PSN, so a PSN retained while another one equal to it
/// modulo this is still retained takes that one's place (counted).
pub const CSF_STORE_SLOTS: usize = 4096;
/// CSF retention ring, blocks.
pub const CSF_BLOCKS: usize = 64;
/// CSF ordinary-repair accumulator, octets (m = 16 repairs of T = 1104).
pub const CSF_ACC: usize = 16 * 1104;
/// CRF Max Open Blocks (announced in HELLO_ACK).
pub const CRF_BLOCKS: usize = 32;
/// CRF PSN window.
pub const CRF_WINDOW: usize = 1024;
/// CRF hold queue.
pub const CRF_HELD: usize = 256;
/// CRF repair descriptors.
pub const CRF_REPAIRS: usize = 256;
/// Largest m the module announces (bounded by the accumulator).
pub const MAX_M: u8 = 16;
/// Decode output of the per-CPU workspace, octets: up to 64 lost sources
/// of T <= 1104 at once (a block with more falls back, counted).
pub const DECODE_OUT: usize = 64 * 1104;
/// Message buffer of the per-CPU workspace, octets: one CREM message of
/// any type (the largest is a REPAIR of the largest T a RoCEv2 flow needs,
/// [`MAX_SYMBOL_LEN`] for RDMA MTU 4096).
pub const MESSAGE: usize = super::csf::scratch_len(MAX_SYMBOL_LEN);

/// Packets in flight a flow is sized for when nothing else is configured
/// (the module's per-netns `max-bdp`): the capacities above, those of
/// [`caps_for`]`(MAX_BDP_DEFAULT, 32)`.
pub const MAX_BDP_DEFAULT: u32 = 256;
/// Smallest `max-bdp` (packets): below, the capacities are those of the
/// smallest.
pub const MAX_BDP_MIN: u32 = 64;
/// Largest `max-bdp` (packets): above, a CRF window would reach 2^22 PSNs.
pub const MAX_BDP_MAX: u32 = 1 << 19;

/// The capacities of one flow, both sides ([`caps_for`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowCaps {
    /// CSF retention ring, blocks.
    pub csf_blocks: usize,
    /// CSF ordinary-repair accumulator, octets.
    pub csf_acc: usize,
    /// CSF packet store, slots by PSN (a power of two; the CSF's
    /// `retention_span`).
    pub csf_store: usize,
    /// The CRF's (its open blocks are its Max Open Blocks).
    pub crf: CrfCaps,
}

/// The capacities a flow needs to protect `max_bdp` packets in flight
/// (clamped to [`MAX_BDP_MIN`]..=[`MAX_BDP_MAX`]) in blocks of `k`
/// sources: the one sizing rule of the module and of `crem-sim`.
///
/// * The CRF's window spans four times the packets in flight, a power of
///   two of at least 1024 PSNs: a lost PSN stays unresolved while later
///   ones arrive for up to three round trips (detection, then two coded
///   rounds), and the sender's retention is released only by the RDMA ACK,
///   which cannot pass a hole before it is filled. (crem-sim, 300 kpps x
///   20 ms at 1 % loss: sized for twice the packets in flight, the sender
///   gave blocks up; for four, none.)
/// * Its open blocks cover that window in blocks of k (at least 32; at most
///   8191, so that their repair slots, eight each, stay within the 16 bits
///   of a repair count: above a window of 8191·k PSNs they no longer cover
///   it); the CSF retains twice as many
///   (it keeps blocks until the RDMA ACK, a round trip after the CRF let
///   them go).
/// * Eight repair symbols per open block, a quarter of the window held.
/// * The CSF's store spans what it retains (its blocks of k: two windows,
///   more for a large k), a power of two of 4096 slots at least.
///
/// `caps_for(MAX_BDP_DEFAULT, 32)` is the constants above.
pub const fn caps_for(max_bdp: u32, k: u8) -> FlowCaps {
    let p = if max_bdp < MAX_BDP_MIN {
        MAX_BDP_MIN
    } else if max_bdp > MAX_BDP_MAX {
        MAX_BDP_MAX
    } else {
        max_bdp
    } as usize;
    // Saturating arithmetic (nothing here comes near it: 4p <= 2^21, a
    // window of at most 2^21, blocks of at most 8191, k at most 255) so
    // that no overflow check is compiled in.
    let mut window = 1024usize;
    while window < p.saturating_mul(4) {
        window = window.saturating_mul(2);
    }
    let k = if k == 0 { 1 } else { k as usize };
    let mut blocks = window / k;
    if blocks < CRF_BLOCKS {
        blocks = CRF_BLOCKS;
    }
    if blocks > u16::MAX as usize / 8 {
        blocks = u16::MAX as usize / 8;
    }
    // What the CSF retains: its blocks of k (two windows, or more when
    // the blocks were raised to 32).
    let span = blocks.saturating_mul(2).saturating_mul(k);
    let mut store = CSF_STORE_SLOTS;
    while store < span || store < window.saturating_mul(2) {
        store = store.saturating_mul(2);
    }
    FlowCaps {
        csf_blocks: blocks.saturating_mul(2),
        csf_acc: CSF_ACC,
        csf_store: store,
        crf: CrfCaps {
            blocks,
            window,
            held: window / 4,
            repairs: blocks.saturating_mul(8),
        },
    }
}

const _: () = {
    let c = caps_for(MAX_BDP_DEFAULT, 32);
    assert!(
        c.csf_blocks == CSF_BLOCKS
            && c.csf_acc == CSF_ACC
            && c.csf_store == CSF_STORE_SLOTS
            && c.crf.blocks == CRF_BLOCKS
            && c.crf.window == CRF_WINDOW
            && c.crf.held == CRF_HELD
            && c.crf.repairs == CRF_REPAIRS
    );
};
