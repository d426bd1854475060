//! Negotiation state machines (draft, "Capability Negotiation", "Parameter
//! Synchronization" and CLOSE): [`CsfNegotiation`] for the sender side
//! (HELLO, PARAM_UPDATE, CLOSE) and [`CrfNegotiation`] for the receiver side
//! (HELLO_ACK, PARAM_ACK, CLOSE), both sans-I/O.
//!
//! Addresses are the caller's business: the engines only say when to bind
//! them. The CSF binds the flow's peer to the source of the HELLO_ACK that
//! returned [`HelloAckOutcome::Established`]; the CRF binds it to the source of
//! the HELLO that returned [`HelloOutcome::Accepted`] or
//! [`HelloOutcome::Restarted`]. Randomness is an input too (there is no RNG in
//! `no_std`): the Sender Nonce is a parameter of [`CsfNegotiation::start`] and
//! the Flow ID comes from a caller closure (see [`choose_flow_id`]).
//!
//! Rulings where the draft is silent:
//! * Flow ID 0 is never assigned (HELLO and PATH_REPORT carry 0 = "no flow");
//!   a HELLO_ACK with Flow ID 0 is ignored.
//! * HELLO backoff: attempt n (1..=8) is sent at `1 + 2 + … + 2^(n-2)` ms after
//!   the first, i.e. 0, 1, 3, 7, … 127 ms; without an answer 128 ms after the
//!   eighth (255 ms after the first) the flow stays unprotected.
//! * PARAM_UPDATE: the 8 attempts count transmissions driven by the
//!   retransmission timeout. When the Effective PSN passes unacknowledged the
//!   CSF sends PARAM_UPDATE again (same Config ID, later Effective PSN) at
//!   once; that re-send is counted apart and neither consumes an attempt nor
//!   restarts the timer, so a short PSN lead cannot exhaust the attempts
//!   within one RTT. It happens at most once per block start.
//! * RTT samples (Karn): HELLO_ACK and PARAM_ACK name no copy of what they
//!   answer, so only an exchange sent once is timed
//!   ([`CsfNegotiation::rtt_probe`]). A PARAM_UPDATE answered only after a
//!   re-send leaves its backed-off timeout to the next PARAM_UPDATE, which
//!   starts there instead of at 2·SRTT (the draft's "initially 2 * SRTT"
//!   assumes an SRTT that could be measured): on a path slower than twice
//!   the estimate, some later exchange is then answered before its timeout
//!   and the SRTT catches up.
//! * Only one PARAM_UPDATE is outstanding at a time; a proposal while one is
//!   unacknowledged is refused ([`ProposeError::Busy`]); an acknowledged one
//!   not yet in effect may be superseded.

/// The methods both sides share, for `impl` blocks of [`CrfNegotiation`] and
/// [`CsfNegotiation`]: CLOSE in both directions and the accessors that depend
/// only on the state. `$state` is the side's state enum (with
/// `Established { flow_id }` and `Closed(reason)`); the side has `state`,
/// `effective` and `counters` fields and a `release` method, and the calling
/// module imports `Close`, `CloseReason`, `Limits`, `Message` and `Sink`. A macro rather than a trait so that the accessors stay `const fn`.
macro_rules! shared_negotiation_methods {
    ($state:ident) => {
        /// Closes the flow with `reason` (CLOSE is sent if a Flow ID is
        /// assigned) and releases its state.
        pub fn close<S: Sink + ?Sized>(&mut self, reason: CloseReason, sink: &mut S) {
            if let $state::Established { flow_id } = self.state {
                let c = &mut self.counters;
                let msg = Message::Close(Close { flow_id, reason });
                super::emit(&msg, sink, &mut c.close_sent, &mut c.encode_errors);
            }
            self.release();
            self.state = $state::Closed(reason);
        }

        /// Handles a CLOSE from the peer: returns its reason if it applied
        /// (state released; drop the flow and its blocks, stop protecting it).
        pub fn on_close(&mut self, msg: &Close) -> Option<CloseReason> {
            super::check_flow(self.flow_id(), msg.flow_id, &mut self.counters.ignored).ok()?;
            super::inc(&mut self.counters.close_received);
            self.release();
            self.state = $state::Closed(msg.reason);
            Some(msg.reason)
        }

        /// State.
        pub const fn state(&self) -> $state {
            self.state
        }

        /// Flow ID once established.
        pub const fn flow_id(&self) -> Option<u32> {
            match self.state {
                $state::Established { flow_id } => Some(flow_id),
                _ => None,
            }
        }

        /// Effective limits once established.
        pub const fn effective_limits(&self) -> Option<Limits> {
            match self.state {
                $state::Established { .. } => Some(self.effective),
                _ => None,
            }
        }
    };
}

mod receiver;
mod sender;

pub use self::receiver::{CrfNegCounters, CrfNegotiation, CrfState, HelloOutcome, ParamOutcome};
pub use self::sender::{
    ConfigParams, CsfNegCounters, CsfNegotiation, CsfState, FlowDescriptor, HelloAckOutcome,
    NegEvent, ParamAckOutcome, ProposeError,
};

use super::super::fec::Scheme;
use super::super::wire::{FecScheme, Message};
use super::{FecConfig, Nanos, Sink, MS};

/// Attempts for HELLO and for each PARAM_UPDATE before giving up.
pub const MAX_ATTEMPTS: u8 = 8;
/// First HELLO retransmission timeout (doubling).
pub const HELLO_RTO: Nanos = MS;
/// Smallest PARAM_UPDATE retransmission timeout.
pub const PARAM_MIN_RTO: Nanos = MS;
/// Configurations a side tracks at once (current, pending, and older ones
/// still used by open blocks). More are refused and counted.
pub const MAX_CONFIGS: usize = 8;
/// Largest Effective PSN lead accepted, so that serial PSN comparisons stay
/// unambiguous (a quarter of the PSN space).
pub const MAX_PSN_LEAD: u32 = 1 << 22;
/// Largest encoded negotiation message (HELLO with IPv6 addresses).
const MAX_MSG: usize = 64;
/// Draws [`choose_flow_id`] makes before giving up.
const FLOW_ID_DRAWS: u32 = 16;

/// The placeholder configuration of a free slot (either side).
const NO_CONFIG: FecConfig = FecConfig {
    id: 0,
    scheme: Scheme::CauchyRs,
    k: 1,
    m: 0,
    t: 0,
};

/// Why a message was ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ignored {
    /// Not expected in the current state.
    WrongState,
    /// HELLO_ACK whose nonce is not ours.
    BadNonce,
    /// HELLO_ACK whose echoed fields (Flow Kind, AF, RDMA MTU) or Flow ID are
    /// not acceptable.
    Mismatch,
    /// Flow ID of another flow.
    WrongFlow,
    /// PARAM_ACK for a Config ID that is not pending.
    UnknownConfig,
    /// A repeat of something already handled.
    Duplicate,
    /// HELLO of an unsupported Flow Kind.
    UnsupportedFlowKind,
    /// No unused Flow ID could be found.
    NoFlowId,
}

/// Picks a random non-zero Flow ID not in use: up to 16 draws of `rand`,
/// skipping 0 and values for which `in_use` is true. `None` when every draw
/// collided (the table is nearly full; the HELLO goes unanswered).
pub fn choose_flow_id(mut rand: impl FnMut() -> u32, in_use: impl Fn(u32) -> bool) -> Option<u32> {
    (0..FLOW_ID_DRAWS)
        .map(|_| rand())
        .find(|&id| id != 0 && !in_use(id))
}

/// The fec-layer scheme of a wire scheme (None for unknown values).
fn scheme_of(s: FecScheme) -> Option<Scheme> {
    Scheme::try_from(s.to_u8()).ok()
}

/// The wire scheme of a fec-layer scheme.
fn wire_scheme(s: Scheme) -> FecScheme {
    FecScheme::from_u8(u8::from(s))
}

/// Encodes `msg` and hands it to `sink`, counting it in `sent` — or in
/// `errors` if it does not encode, which engine-built messages always do.
fn emit<S: Sink + ?Sized>(msg: &Message<'_>, sink: &mut S, sent: &mut u64, errors: &mut u64) {
    let mut buf = [0u8; MAX_MSG];
    match msg.encode(&mut buf).ok().and_then(|n| buf.get(..n)) {
        Some(b) => {
            sink.send(b);
            inc(sent);
        }
        None => inc(errors),
    }
}

/// The Flow ID of an established side (`established`) that a message for
/// `flow_id` matches; otherwise why the message is ignored, counted in
/// `ignored`.
fn check_flow(established: Option<u32>, flow_id: u32, ignored: &mut u64) -> Result<u32, Ignored> {
    match established {
        Some(id) if id == flow_id => Ok(id),
        Some(_) => {
            inc(ignored);
            Err(Ignored::WrongFlow)
        }
        None => {
            inc(ignored);
            Err(Ignored::WrongState)
        }
    }
}

/// `a + 1`, saturating (counter helper).
fn inc(a: &mut u64) {
    *a = a.saturating_add(1);
}
