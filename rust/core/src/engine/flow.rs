//! Per-flow orchestration: the engines of one protected flow glued together
//! the same way for every caller (the kernel module, the simulation, tests).
//!
//! * [`SenderFlow`]: HELLO and PARAM_UPDATE ([`CsfNegotiation`]), the
//!   [`Csf`] and the redundancy [`Policy`]. It applies acknowledged
//!   configurations at their Effective PSN, tells the negotiation where
//!   blocks start and when no retained block uses a configuration any more,
//!   turns LOSS_REPORTs into policy decisions and PARAM_UPDATEs, and
//!   switches repairs and retransmissions with the circuit breaker.
//! * [`ReceiverFlow`]: HELLO_ACK and PARAM_ACK ([`CrfNegotiation`]) and the
//!   [`Crf`], with one owner of the Config-ID lifecycle: the negotiation is
//!   held to the engine's [`crf::MAX_CONFIGS`], room is made by releasing
//!   the oldest configuration nothing needs — no live block, every PSN it
//!   may cover delivered or given up (up to a newer configuration's
//!   Effective PSN + k: PSN-range recovery of blocks the CRF never learned,
//!   or m = 0 blocks, leave no other trace), no REPAIR within 2·SRTT + one
//!   block time — and when none can go the PARAM_UPDATE is refused with
//!   status 3, never acknowledged and then dropped. The CRF's own
//!   LOSS_REPORTs feed its loss estimate (fixed point).
//!
//! The sender never supersedes an acknowledged configuration before it
//! takes effect (a proposal meanwhile is `Busy`), so the CSF uses every
//! configuration the CRF acknowledged, in order, from its Effective PSN:
//! the receiver's rule above relies on it.
//!
//! Sans-I/O like the engines: time, packets and messages come in as calls,
//! messages go out through the caller's [`super::Sink`], and the caller
//! runs `on_timer` at `next_deadline`. Both flows are large (the engines'
//! arrays); the kernel writes them in place with `init_at` (see
//! `flow/init.rs`) rather than building them on its stack.
//!
//! [`CsfNegotiation`]: super::negotiation::CsfNegotiation
//! [`CrfNegotiation`]: super::negotiation::CrfNegotiation
//! [`Csf`]: super::csf::Csf
//! [`Crf`]: super::crf::Crf
//! [`Policy`]: super::policy::Policy
//! [`crf::MAX_CONFIGS`]: super::crf::MAX_CONFIGS

mod ack_probe;
mod config_book;
mod init;
mod mtu;
mod receiver;
mod repair_log;
mod sender;

pub use self::ack_probe::AckProbe;
pub use self::mtu::FlowMtu;
pub use self::receiver::{ReceiverCounters, ReceiverEvent, ReceiverFlow, ReceiverParams};
pub use self::sender::{PinError, SenderCounters, SenderEvent, SenderFlow, SenderParams};

use super::super::wire::CloseReason;

/// Where a flow stands, for operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowState {
    /// HELLO sent (sender) or not yet received (receiver).
    Negotiating,
    /// Protected (sender: a HELLO_ACK accepted and not closed).
    Established,
    /// The sender gave up (no HELLO_ACK, incompatible limits): RDMA runs
    /// unprotected.
    Unprotected,
    /// CLOSE sent or received.
    Closed(CloseReason),
}
