//! Sans-I/O protocol engines: the CSF and CRF of one protected flow, their
//! negotiation state machines and the redundancy policy.
//!
//! Every engine is driven by calls (a packet seen, a message received, the
//! time now, a timer fired) and answers with values or through the small
//! traits below; none reads a clock, allocates or does I/O. The kernel module
//! and the simulation tests drive the same code.

pub mod crf;
pub mod csf;
pub mod flow;
pub mod loss_window;
pub mod module_caps;
pub mod negotiation;
pub mod policy;
pub mod rtt;
pub mod storage;

use super::fec::Scheme;

/// Monotonic time in nanoseconds, supplied by the caller.
pub type Nanos = u64;

/// Nanoseconds per millisecond / second, for readable constants.
pub const MS: Nanos = 1_000_000;
/// Nanoseconds per second.
pub const SEC: Nanos = 1_000_000_000;

/// One FEC configuration (draft: "Each configuration (scheme, k, m, T) has a
/// Config ID").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FecConfig {
    /// Config ID carried in PARAM_UPDATE and every REPAIR.
    pub id: u8,
    /// FEC scheme.
    pub scheme: Scheme,
    /// Source block size in PSN positions, 1..=255.
    pub k: u8,
    /// Ordinary repair symbols per block (0 = coded retransmission only).
    pub m: u8,
    /// Symbol length T in octets.
    pub t: u16,
}

/// Limits exchanged in HELLO / HELLO_ACK; the effective limits are the
/// element-wise minimum of both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Supported schemes, bit s set if scheme s is supported.
    pub schemes: u8,
    /// Largest k.
    pub max_k: u8,
    /// Largest m.
    pub max_m: u8,
    /// Largest T.
    pub max_t: u16,
    /// Blocks the CRF can hold open at once (HELLO_ACK only; the CSF side
    /// uses u16::MAX).
    pub max_open_blocks: u16,
}

impl Limits {
    /// The effective limits of two sides.
    pub fn min(&self, other: &Limits) -> Limits {
        Limits {
            schemes: self.schemes & other.schemes,
            max_k: self.max_k.min(other.max_k),
            max_m: self.max_m.min(other.max_m),
            max_t: self.max_t.min(other.max_t),
            max_open_blocks: self.max_open_blocks.min(other.max_open_blocks),
        }
    }

    /// Whether `cfg` is within these limits.
    pub fn allows(&self, cfg: &FecConfig) -> bool {
        self.schemes & (1u8 << (u8::from(cfg.scheme) & 7)) != 0
            && cfg.k >= 1
            && cfg.k <= self.max_k
            && cfg.m <= self.max_m
            && cfg.t <= self.max_t
    }
}

/// Where an engine puts the CREM messages it wants sent (already encoded,
/// header included). The kernel copies them into an skb for the CREM socket.
pub trait Sink {
    /// Sends one encoded CREM message to the flow's peer.
    fn send(&mut self, msg: &[u8]);
}
