//! Path Reporter (draft "On-Path Path Reports", Method 3: node-local drop
//! accounting): what an on-path node needs to turn the RoCEv2 packets it
//! drops itself into rate-limited PATH_REPORTs, and to merge the reports of
//! reporters further downstream into its own.
//!
//! Sans-I/O like the engines: the caller (the kernel's drop probe and timer)
//! passes the time in, lends the storage and sends what [`Aggregator::poll`]
//! hands it.
//!
//! - [`parse_drop`]: the flow, PSN and opcode role of a dropped IP packet.
//! - [`Aggregator`]: per-flow slots collecting drops for one aggregation
//!   interval, merging downstream entries, emitting PATH_REPORTs that fit
//!   the path MTU, at most one per flow per `flow_gap`.
//! - [`TokenBucket`]: the per-port limit ("Reporters MUST rate-limit
//!   PATH_REPORT per flow and per port").
//!
//! Rulings where the draft is silent (each repeated where it is applied):
//! - Only CREM source packets (`roce::PsnRole::is_source`) are reported: a
//!   dropped ACK, READ response or CNP is nothing a CSF can repair.
//! - Lost Count is every drop of the period and cause, never truncated, so
//!   classification sees the full count; the PSN list may be shorter.
//! - Truncated (0x80) means "the PSN lists are incomplete": set when any
//!   dropped PSN known to this reporter is not in the report, whether cut
//!   for the MTU, omitted because a slot's list was full, or left out of a
//!   merged entry, and whenever a merged downstream report was Truncated.
//! - A flow with drops of two causes gets one entry per cause from the same
//!   Node ID, own entries first in cause order 0, 1, 2, then the merged
//!   downstream entries in arrival order.
//! - Marking Period Number: the slot's first drop time divided by the
//!   interval (u32, wrapping); Queue Delay Change: 0 (not measured).
//! - Merging: Method 3 reports only, into a pending own report of the same
//!   flow that is due within one aggregation interval; anything else is
//!   forwarded unchanged at once, so merging never delays a report by more
//!   than the interval the draft allows.

mod aggregate;
mod bucket;
mod encode;
mod parse;

pub use self::aggregate::{
    Aggregator, Budget, Counters, Emit, Merge, Params, Slot, HELD_PSNS, SLOT_PSNS,
};
pub use self::bucket::TokenBucket;
pub use self::parse::{parse_drop, Dropped};
