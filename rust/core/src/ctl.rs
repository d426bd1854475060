//! The control plane's configuration rules, as pure functions: what
//! config-set accepts, and why it refuses (the texts the kernel puts in the
//! extack, byte for byte those of the C handler these replaced,
//! `rust/glue/crem_nl.c`, removed in 9e2cff7: its names in parentheses
//! below are the record of where each rule came from), the limits a netns owned by another user namespace gets, the
//! symbol length against the route MTU, and the k/m rule of flow-set and
//! flow-new.
//!
//! * [`addr`]: [`Addr`] (IPv4 or IPv6), [`Peer`] (a prefix and the CREM
//!   function that serves it) and [`List`], a list of fixed capacity.
//! * [`config`]: [`Config`] (`struct crem_cfg`, [`Config::DEFAULT`] as
//!   `crem_cfg_defaults`), [`Edit`] (`crem_apply_cfg`: one call per
//!   attribute, then [`Edit::finish`] checks the rules across attributes in
//!   the C's order), [`check_limits`], [`clamp`], [`check_mtu`],
//!   [`bind_result`].
//! * [`flow`]: [`km`], the k and m of flow-set and flow-new.
//!
//! A refusal is a [`Refusal`]: the attribute it points at ([`Field`], as the
//! C's `NL_SET_ERR_MSG_ATTR` chose it), the errno, and the reason ([`Why`]),
//! whose text is a `'static` C string when it is fixed ([`Why::fixed`]) and
//! otherwise written by [`core::fmt::Display`] (the kernel formats it into
//! the extack's 80-octet buffer, truncating at 79 as C's
//! `NL_SET_ERR_MSG_FMT` does).
//!
//! Like all of crem-core: no `std`, no allocation, no floating point, no
//! `unsafe`, no panics on any input. Nothing here reads the kernel: routes
//! and the initial netns's limits are the caller's to look up and pass in.

pub mod addr;
pub mod config;
pub mod flow;

pub use self::addr::{Addr, List, Peer};
pub use self::config::{
    bind_result, check_limits, check_mtu, clamp, hooks_result, repair_overhead, Config, Edit,
    Given, Limits, Recovery, Role, MAX_PEERS, MAX_REPORTERS, REPAIR_OVERHEAD, REPAIR_OVERHEAD_V6,
    REPORT_FLOW_GAP_US_MAX, REPORT_INTERVAL_US_MAX, REPORT_PORT_BURST, REPORT_PORT_RATE_MAX,
    REPORT_PSNS_MAX, SPARE_FLOWS_DEFAULT, SPARE_FLOWS_MAX, SYMBOL_LEN_MAX, SYMBOL_LEN_MIN,
};
pub use self::flow::km;

use super::engine::module_caps::MAX_M;
use core::ffi::CStr;
use core::fmt;

/// A Linux errno, positive (the kernel returns it negated). The values are
/// asm-generic's (`include/uapi/asm-generic/errno-base.h`, `errno.h`), those
/// of every architecture Rust-for-Linux builds for (x86, arm64, riscv,
/// loongarch, um); alpha, mips, parisc and sparc number some differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno(u16);

/// Argument list too long (`E2BIG`, 7): a list above its capacity.
pub const E2BIG: Errno = Errno(7);
/// File exists (`EEXIST`, 17): a peer prefix given twice.
pub const EEXIST: Errno = Errno(17);
/// Invalid argument (`EINVAL`, 22).
pub const EINVAL: Errno = Errno(22);
/// Math result not representable (`ERANGE`, 34): above the initial netns's
/// limits.
pub const ERANGE: Errno = Errno(34);
/// Message too long (`EMSGSIZE`, 90): a REPAIR would not fit a route's MTU.
pub const EMSGSIZE: Errno = Errno(90);
/// Address already in use (`EADDRINUSE`, 98): the CREM port is another
/// socket's.
pub const EADDRINUSE: Errno = Errno(98);

/// The largest errno the kernel returns (`MAX_ERRNO`, `linux/err.h`).
const MAX_ERRNO: i32 = 4095;

impl Errno {
    /// The positive value.
    pub const fn get(self) -> u16 {
        self.0
    }

    /// The value a kernel function returns: negative.
    pub const fn to_kernel(self) -> i32 {
        -(self.0 as i32)
    }

    /// The errno of a kernel return value `-4095..=-1`; `None` for anything
    /// else (0 is success).
    pub const fn from_kernel(err: i32) -> Option<Errno> {
        if err < 0 && err >= -MAX_ERRNO {
            Some(Errno((-err) as u16))
        } else {
            None
        }
    }
}

/// The attribute a refusal points at (the extack's `bad_attr`). Attribute
/// ids are those of [`super::nl`] (`CONFIG_*`, `PEER_*`, `FLOW_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The request as a whole (no attribute: the extack names none).
    Request,
    /// Attribute `id` of config-set's request (`tb[id]`), a scalar.
    Config(u16),
    /// The reporter attribute of config-set given `n`-th (from 0,
    /// empty ones counted).
    Reporter(u16),
    /// The peer nest given `n`-th (from 0, empty ones counted).
    Peer(u16),
    /// Attribute `id` (`PEER_*`) within the peer nest given `n`-th:
    /// `PeerAttr(n, id)`.
    PeerAttr(u16, u16),
    /// Attribute `id` (`FLOW_*`) of a flow request.
    Flow(u16),
}

/// A refusal: what the kernel puts in the extack and returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The attribute it names; `None`: none (the C's `NULL`).
    pub at: Option<Field>,
    /// The errno returned.
    pub errno: Errno,
    /// The reason, which gives the text.
    pub why: Why,
}

impl Refusal {
    /// A refusal for `why` pointing at `at`, with `why`'s errno.
    pub const fn new(at: Option<Field>, why: Why) -> Refusal {
        Refusal {
            at,
            errno: why.errno(),
            why,
        }
    }
}

/// Why a configuration or a flow op's k and m is refused. Each gives one
/// text of `crem_nl.c` (config-set) or of the flow ops, or (the `Report*`
/// ones, which came after the C) of the Path Reporter's attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// An address of neither 4 nor 16 octets (the policy's validator,
    /// `crem_nl_validate_addr`).
    AddrLen,
    /// A peer nest without one of prefix, prefix-len and addr.
    PeerIncomplete,
    /// prefix-len above the prefix's bits (32 or 128).
    PrefixLenTooLong,
    /// The prefix has bits set past prefix-len.
    HostBits,
    /// A peer's addr is not of its prefix's family.
    PeerFamily,
    /// A peer prefix (and length) given twice in one list.
    DuplicatePrefix,
    /// More than [`MAX_REPORTERS`] reporters.
    TooManyReporters,
    /// More than [`MAX_PEERS`] peers.
    TooManyPeers,
    /// A role without a port.
    RoleWithoutPort,
    /// The CREM port is RoCEv2's.
    RocePort,
    /// k + m above 255 (config-set, flow-set, flow-new).
    KPlusM,
    /// m above [`MAX_M`] (config-set, flow-set, flow-new).
    MTooLarge,
    /// symbol-len neither 0 nor at least [`SYMBOL_LEN_MIN`].
    SymbolLenTooSmall,
    /// symbol-len above [`SYMBOL_LEN_MAX`].
    SymbolLenTooLarge,
    /// report on without a port.
    ReportWithoutPort,
    /// report-interval-us outside 1 to [`REPORT_INTERVAL_US_MAX`].
    ReportInterval,
    /// report-flow-gap-us above [`REPORT_FLOW_GAP_US_MAX`].
    ReportFlowGap,
    /// report-port-rate outside 1 to [`REPORT_PORT_RATE_MAX`].
    ReportPortRate,
    /// report-psns outside 1 to [`REPORT_PSNS_MAX`].
    ReportPsns,
    /// A REPAIR of `symbol_len` (needing MTU `need`) does not fit the MTU
    /// `mtu` of the route to the peer `peer`.
    Mtu {
        /// The configured symbol length.
        symbol_len: u16,
        /// symbol-len plus [`repair_overhead`] (by the peer's family).
        need: u32,
        /// The peer's address.
        peer: Addr,
        /// The route's MTU.
        mtu: u32,
    },
    /// A limited netns asked for more flows than the initial netns's.
    AboveInitFlows {
        /// Asked.
        max_flows: u32,
        /// The initial netns's.
        limit: u32,
    },
    /// A limited netns asked for more memory than the initial netns's.
    AboveInitMemory {
        /// Asked.
        max_memory: u64,
        /// The initial netns's.
        limit: u64,
    },
    /// The new port is another socket's; the old one still serves.
    PortInUse {
        /// The port asked for.
        port: u16,
        /// The port CREM still serves.
        serving: u16,
    },
    /// The new port is another socket's, and CREM served none.
    PortInUseOff {
        /// The port asked for.
        port: u16,
    },
    /// Binding the port failed otherwise.
    Bind {
        /// The port asked for.
        port: u16,
        /// The kernel's error, negative as it returned it (the text shows
        /// it so).
        err: i32,
    },
    /// The netfilter hooks the new role needs could not be registered
    /// (the socket is put back as it was).
    Hooks {
        /// The kernel's error, negative as it returned it.
        err: i32,
    },
    /// flow-set/flow-new: one of k and m without the other.
    KmTogether,
    /// flow-set/flow-new: k = 0.
    KZero,
}

impl Why {
    /// The errno the C returns with this refusal.
    pub const fn errno(&self) -> Errno {
        match self {
            Why::DuplicatePrefix => EEXIST,
            Why::TooManyReporters | Why::TooManyPeers => E2BIG,
            Why::Mtu { .. } => EMSGSIZE,
            Why::AboveInitFlows { .. } | Why::AboveInitMemory { .. } => ERANGE,
            Why::PortInUse { .. } | Why::PortInUseOff { .. } => EADDRINUSE,
            Why::Bind { err, .. } | Why::Hooks { err } => match Errno::from_kernel(*err) {
                Some(e) => e,
                None => EINVAL,
            },
            Why::AddrLen
            | Why::PeerIncomplete
            | Why::PrefixLenTooLong
            | Why::HostBits
            | Why::PeerFamily
            | Why::RoleWithoutPort
            | Why::RocePort
            | Why::KPlusM
            | Why::MTooLarge
            | Why::SymbolLenTooSmall
            | Why::SymbolLenTooLarge
            | Why::ReportWithoutPort
            | Why::ReportInterval
            | Why::ReportFlowGap
            | Why::ReportPortRate
            | Why::ReportPsns
            | Why::KmTogether
            | Why::KZero => EINVAL,
        }
    }

    /// The text, when it is fixed (the extack's `_msg` then points at it:
    /// some are longer than the 79 octets a formatted text keeps); `None`
    /// for a text with values in it (see the `Display` impl).
    pub const fn fixed(&self) -> Option<&'static CStr> {
        Some(match self {
            Why::AddrLen => c"address must be 4 (IPv4) or 16 (IPv6) octets",
            Why::PeerIncomplete => c"a peer needs prefix, prefix-len and addr",
            Why::PrefixLenTooLong => c"prefix-len is longer than the prefix's address",
            Why::HostBits => c"prefix has host bits set beyond prefix-len",
            Why::PeerFamily => c"peer address family differs from its prefix's",
            Why::DuplicatePrefix => c"duplicate peer prefix",
            // Formatted in C ("at most %d reporters", CREM_MAX_REPORTERS):
            // the same octets (tests/ctl_texts.rs formats them).
            Why::TooManyReporters => c"at most 16 reporters",
            Why::TooManyPeers => c"at most 32 peers",
            Why::RoleWithoutPort => {
                c"set a CREM port before enabling a role (there is no default port)"
            }
            Why::RocePort => c"4791 is RoCEv2's own port: the CREM port must be another one",
            Why::KPlusM => c"k + m must not exceed 255 (Repair Indices need i + k <= 255)",
            Why::MTooLarge => {
                c"m must not exceed 16 (the largest m of this module: its repair accumulator's)"
            }
            Why::SymbolLenTooSmall => c"symbol-len must be 0 (derived) or at least 64",
            Why::SymbolLenTooLarge => {
                c"symbol-len must not exceed 1104 (the decode buffer's and the repair accumulator's symbols)"
            }
            Why::ReportWithoutPort => {
                c"set a CREM port before turning report on (reports are sent from it)"
            }
            Why::ReportInterval => c"report-interval-us must be 1 to 1000000 (1 s)",
            Why::ReportFlowGap => c"report-flow-gap-us must not exceed 10000000 (10 s)",
            Why::ReportPortRate => c"report-port-rate must be 1 to 1000000 reports per second",
            Why::ReportPsns => c"report-psns must be 1 to 64 (the PSNs a report lists at most)",
            Why::KmTogether => c"k and m are pinned together: give both",
            Why::KZero => c"k must be at least 1",
            Why::Mtu { .. }
            | Why::AboveInitFlows { .. }
            | Why::AboveInitMemory { .. }
            | Why::PortInUse { .. }
            | Why::PortInUseOff { .. }
            | Why::Bind { .. }
            | Why::Hooks { .. } => return None,
        })
    }
}

// The numbers in the fixed texts are the limits the rules use.
const _: () = assert!(MAX_M == 16);
const _: () = assert!(MAX_REPORTERS == 16 && MAX_PEERS == 32);
const _: () = assert!(SYMBOL_LEN_MIN == 64 && SYMBOL_LEN_MAX == 1104);
const _: () = assert!(
    REPORT_INTERVAL_US_MAX == 1_000_000
        && REPORT_FLOW_GAP_US_MAX == 10_000_000
        && REPORT_PORT_RATE_MAX == 1_000_000
        && REPORT_PSNS_MAX == 64
);
const _: () = assert!(super::roce::ROCEV2_UDP_PORT == 4791);

impl fmt::Display for Why {
    /// The text, byte for byte the C's (`%pI4` as a dotted quad): the
    /// fixed one ([`Why::fixed`]), or the one with values in it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = self.fixed() {
            // ASCII: always UTF-8.
            return f.write_str(core::str::from_utf8(s.to_bytes()).map_err(|_| fmt::Error)?);
        }
        match *self {
            Why::Mtu {
                symbol_len,
                need,
                peer: Addr::V4([a, b, c, d]),
                mtu,
            } => write!(
                f,
                "symbol-len {symbol_len}: REPAIRs need MTU {need}, the route to {a}.{b}.{c}.{d} has {mtu}"
            ),
            // Shorter: an IPv6 address's text is up to 39 octets, and the
            // extack holds 79.
            Why::Mtu {
                symbol_len,
                need,
                peer: peer @ Addr::V6(_),
                mtu,
            } => write!(f, "MTU {mtu} to {peer} < {need} for symbol-len {symbol_len}"),
            Why::AboveInitFlows { max_flows, limit } => write!(
                f,
                "max-flows {max_flows} is above the initial netns's max-flows ({limit})"
            ),
            Why::AboveInitMemory { max_memory, limit } => write!(
                f,
                "max-memory {max_memory} is above the initial netns's ({limit})"
            ),
            Why::PortInUse { port, serving } => write!(
                f,
                "port {port} is in use by another socket; port {serving} still serves CREM"
            ),
            Why::PortInUseOff { port } => write!(
                f,
                "port {port} is in use by another socket; CREM stays off"
            ),
            Why::Hooks { err } => write!(
                f,
                "cannot register netfilter hooks (role, report): error {err} (nothing changed)"
            ),
            Why::Bind { port, err } => write!(
                f,
                "cannot bind the CREM port {port}: error {err} (nothing changed)"
            ),
            // Fixed texts, written above (`fixed` names every one).
            _ => Err(fmt::Error),
        }
    }
}
