//! The engine capacities crem.ko builds its flows with, here so that the
//! module and `crem-sim --engine module` size flows alike from one place.
//!
//! They bound what one flow can hold, whatever the path: a CSF retains
//! [`CSF_BLOCKS`] blocks for coded retransmission (2048 packets at k = 32:
//! about 1.8 ms of 10 Gbit/s at 1 KiB), a CRF holds [`CRF_BLOCKS`] blocks
//! open. [`CRF_WINDOW`] and [`CRF_REPAIRS`] are also the sizes of the
//! stores the module gives its CRF, and [`CSF_STORE_SLOTS`] that of its
//! CSF's (`rust/store.rs`).

use super::super::roce::MAX_SYMBOL_LEN;

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
