//! A netns's configuration and config-set's rules (they replaced C's
//! `struct crem_cfg` and `rust/glue/crem_nl.c`, whose functions are named
//! in parentheses): [`Edit`] applies the attributes and checks the
//! rules across them (`crem_apply_cfg`); [`check_limits`], [`clamp`] and
//! [`Limits`] keep a netns of another user namespace within the initial
//! netns's limits (`crem_check_limits`, `crem_cfg_clamp`,
//! `crem_limits_lower`); [`check_mtu`] fits symbol-len to the routes to the
//! peers (`crem_check_mtu`); [`bind_result`] explains a socket that could
//! not be bound.
//!
//! config-set in the order the C runs it (the handler's part in brackets):
//! [snapshot the netns's configuration; note its `socket_port()`] →
//! [`Edit::new`] on the copy, one call per attribute → [`Edit::finish`] →
//! [for a limited netns: the initial netns's limits] [`check_limits`] →
//! [`check_mtu`] [with a route lookup] → [rebind the socket to the new
//! `socket_port()`] [`bind_result`] → [for a limited netns, the initial
//! netns's limits again] [`clamp`] → [commit if it differs; if it is the
//! initial netns's and [`Limits::below`] the old ones, [`clamp`] every
//! limited netns to them].

use super::super::engine::module_caps::{MAX_BDP_DEFAULT, MAX_M};
use super::super::nl;
use super::super::report::{Params, SLOT_PSNS};
use super::super::roce::ROCEV2_UDP_PORT;
use super::{Addr, Field, List, Peer, Refusal, Why, EADDRINUSE};

/// Reporters a configuration holds at most (`CREM_MAX_REPORTERS`).
pub const MAX_REPORTERS: usize = 16;
/// Peers a configuration holds at most (`CREM_MAX_PEERS`).
pub const MAX_PEERS: usize = 32;
/// Smallest symbol length but 0 (`CREM_CFG_MIN_T`).
pub const SYMBOL_LEN_MIN: u16 = 64;
/// Largest symbol length (`CREM_CFG_MAX_T`): the CSF's repair accumulator
/// and the per-CPU decode output are sized for it (`module_caps`).
pub const SYMBOL_LEN_MAX: u16 = 1104;
/// What a REPAIR adds to its symbol (`CREM_REPAIR_OVERHEAD`, the draft's
/// Operational Considerations: T plus these must fit the path MTU): its
/// header, 20 octets plus both bitmaps of ceil(k / 32) words each at the
/// largest k, 255; UDP; IPv4. 112.
pub const REPAIR_OVERHEAD: u32 = 20 + 2 * 4 * 255u32.div_ceil(32) + 8 + 20;
/// The same to an IPv6 peer: its header is 40 octets, not 20. 132.
pub const REPAIR_OVERHEAD_V6: u32 = REPAIR_OVERHEAD - 20 + 40;
/// Largest report-interval-us (1 s; the least is 1).
pub const REPORT_INTERVAL_US_MAX: u32 = 1_000_000;
/// Largest report-flow-gap-us (10 s; 0 is no gap).
pub const REPORT_FLOW_GAP_US_MAX: u32 = 10_000_000;
/// Largest report-port-rate, reports per second (the least is 1).
pub const REPORT_PORT_RATE_MAX: u32 = 1_000_000;
/// The burst of a reporter's per-port bucket, reports: fixed (no attribute
/// sets it), the bucket's size beside report-port-rate.
pub const REPORT_PORT_BURST: u32 = 64;
/// Largest report-psns (the least is 1): the own PSNs a reporter's slot
/// lists ([`SLOT_PSNS`]).
pub const REPORT_PSNS_MAX: u8 = 64;

const _: () = assert!(REPORT_PSNS_MAX as usize == SLOT_PSNS);

/// Largest spare-flows (the netlink policy's; the kernel's pool holds
/// this many per side at most).
pub const SPARE_FLOWS_MAX: u32 = 64;
/// Default spare-flows: a burst of eight new queue pairs (an 8-QP
/// connection, or eight NVMe-oF queues) is protected from its first packet.
pub const SPARE_FLOWS_DEFAULT: u32 = 8;

const _: () = assert!(REPAIR_OVERHEAD == 112 && REPAIR_OVERHEAD_V6 == 132);

/// What a REPAIR to `peer` adds to its symbol (its IP header by family).
pub const fn repair_overhead(peer: Addr) -> u32 {
    match peer {
        Addr::V4(_) => REPAIR_OVERHEAD,
        Addr::V6(_) => REPAIR_OVERHEAD_V6,
    }
}
const _: () =
    assert!(super::super::engine::module_caps::CSF_ACC == MAX_M as usize * SYMBOL_LEN_MAX as usize);
const _: () = assert!(super::super::engine::module_caps::DECODE_OUT % SYMBOL_LEN_MAX as usize == 0);
// Given keeps one bit per config attribute.
const _: () = assert!(
    nl::CONFIG_MAX_BDP < 32
        && nl::CONFIG_PEER < 32
        && nl::CONFIG_PAD < 32
        && nl::CONFIG_REPORT_PSNS < 32
        && nl::CONFIG_SPARE_FLOWS < 32
);

/// The netns's role (enum `role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Role {
    /// CREM does nothing.
    Disabled = nl::role::DISABLED,
    /// RDMA endpoints of this host.
    Host = nl::role::HOST,
    /// Traffic forwarded through this host.
    Gateway = nl::role::GATEWAY,
}

impl Role {
    /// The role of value `v`; `None` above [`Role::Gateway`] (the policy
    /// refuses those).
    pub const fn from_u8(v: u8) -> Option<Role> {
        match v {
            nl::role::DISABLED => Some(Role::Disabled),
            nl::role::HOST => Some(Role::Host),
            nl::role::GATEWAY => Some(Role::Gateway),
            _ => None,
        }
    }
}

impl From<Role> for u8 {
    fn from(r: Role) -> u8 {
        r as u8
    }
}

/// How losses are recovered (enum `recovery`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Recovery {
    /// Coded repair.
    Coded = nl::recovery::CODED,
    /// Selective repeat.
    SelectiveRepeat = nl::recovery::SELECTIVE_REPEAT,
    /// Both.
    Both = nl::recovery::BOTH,
}

impl Recovery {
    /// The recovery of value `v`; `None` above [`Recovery::Both`] (the
    /// policy refuses those).
    pub const fn from_u8(v: u8) -> Option<Recovery> {
        match v {
            nl::recovery::CODED => Some(Recovery::Coded),
            nl::recovery::SELECTIVE_REPEAT => Some(Recovery::SelectiveRepeat),
            nl::recovery::BOTH => Some(Recovery::Both),
            _ => None,
        }
    }
}

impl From<Recovery> for u8 {
    fn from(r: Recovery) -> u8 {
        r as u8
    }
}

/// A netns's configuration (`struct crem_cfg`; the attributes of the
/// config set, `netlink/crem.yaml`, say what each means).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The CREM port; 0: none (there is no default port).
    pub port: u16,
    /// The role.
    pub role: Role,
    /// How losses are recovered.
    pub recovery: Recovery,
    /// Whether new flows follow the adaptive policy.
    pub adaptive: bool,
    /// Sources per block of a new flow.
    pub k: u8,
    /// Repair symbols per block of a new flow.
    pub m: u8,
    /// Largest m for congestion-related loss.
    pub m_cong: u8,
    /// Symbol length T, octets; 0: derived from the RDMA MTU.
    pub symbol_len: u16,
    /// Target residual loss, ppb.
    pub epsilon_ppb: u32,
    /// The CRF's hold time, µs (0: derived).
    pub hold_us: u32,
    /// Flows at most.
    pub max_flows: u32,
    /// Packets in flight a new flow is sized for.
    pub max_bdp: u32,
    /// Octets the flows may keep.
    pub max_memory: u64,
    /// Whether this netns is a Path Reporter (reports its own drops of
    /// RoCEv2 source packets); valid with any role.
    pub report: bool,
    /// The reporter's Node ID; 0: auto (the kernel uses the low 32 bits
    /// of the netns cookie: [`Config::report_params`]).
    pub node_id: u32,
    /// The reporter's aggregation interval, µs (1 to
    /// [`REPORT_INTERVAL_US_MAX`]).
    pub report_interval_us: u32,
    /// Least time between two reports about one flow, µs (at most
    /// [`REPORT_FLOW_GAP_US_MAX`]).
    pub report_flow_gap_us: u32,
    /// Reports per second on each egress interface (1 to
    /// [`REPORT_PORT_RATE_MAX`]; burst [`REPORT_PORT_BURST`]).
    pub report_port_rate: u32,
    /// Own PSNs a report lists (1 to [`REPORT_PSNS_MAX`]).
    pub report_psns: u8,
    /// The reporters.
    pub reporters: List<Addr, MAX_REPORTERS>,
    /// The peers, each prefix once.
    pub peers: List<Peer, MAX_PEERS>,
    /// Flows kept made ahead per side (at most [`SPARE_FLOWS_MAX`]).
    pub spare_flows: u32,
}

/// What fills a list's unused places.
const NO_ADDR: Addr = Addr::V4([0; 4]);
const NO_PEER: Peer = Peer {
    prefix: NO_ADDR,
    len: 0,
    addr: NO_ADDR,
};

impl Config {
    /// A new netns's configuration (`crem_cfg_defaults`).
    pub const DEFAULT: Config = Config {
        port: 0,
        role: Role::Disabled,
        recovery: Recovery::Coded,
        adaptive: true,
        k: 32, // the draft's default for multi-millisecond paths
        m: 2,
        m_cong: 1,
        symbol_len: 0,
        epsilon_ppb: 100_000, // 1e-4
        hold_us: 0,
        max_flows: 1024,
        max_bdp: MAX_BDP_DEFAULT,
        max_memory: 64 << 20,
        report: false,
        node_id: 0,
        report_interval_us: 50, // the draft's RECOMMENDED
        report_flow_gap_us: 1000,
        report_port_rate: 10_000,
        report_psns: REPORT_PSNS_MAX,
        reporters: List::new(NO_ADDR),
        peers: List::new(NO_PEER),
        spare_flows: SPARE_FLOWS_DEFAULT,
    };

    /// An empty reporter list (to fill with `push`).
    pub const NO_REPORTERS: List<Addr, MAX_REPORTERS> = List::new(NO_ADDR);
    /// An empty peer list (to fill with `push`).
    pub const NO_PEERS: List<Peer, MAX_PEERS> = List::new(NO_PEER);

    /// The port the CREM socket serves: the port while a role is enabled
    /// or the netns reports (a reporter sends from it, whatever its role),
    /// else 0 (none). config-set binds the socket to it (the C's `old_port`
    /// is the old configuration's).
    pub const fn socket_port(&self) -> u16 {
        match (self.role, self.report) {
            (Role::Disabled, false) => 0,
            _ => self.port,
        }
    }

    /// The reporter's settings: node-id (0: `auto_node_id`, which the
    /// kernel takes from the netns cookie's low 32 bits), the interval and
    /// the flow gap in ns, report-psns.
    pub const fn report_params(&self, auto_node_id: u32) -> Params {
        let us = 1000;
        Params {
            node_id: if self.node_id == 0 {
                auto_node_id
            } else {
                self.node_id
            },
            interval: (self.report_interval_us as u64).saturating_mul(us),
            flow_gap: (self.report_flow_gap_us as u64).saturating_mul(us),
            psn_limit: self.report_psns as usize,
        }
    }

    /// Its max-flows and max-memory.
    pub const fn limits(&self) -> Limits {
        Limits {
            max_flows: self.max_flows,
            max_memory: self.max_memory,
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::DEFAULT
    }
}

/// The attributes of config-set an [`Edit`] was given (the C's non-NULL
/// `tb[]` entries): some rules apply, and some refusals point at an
/// attribute, only when it was given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Given(u32);

impl Given {
    /// None given.
    pub const NONE: Given = Given(0);

    /// Whether config attribute `id` (`nl::CONFIG_*`) was given.
    pub const fn has(self, id: u16) -> bool {
        id < 32 && self.0 & (1 << id) != 0
    }

    /// These and attribute `id` (ids of 32 or more are not config
    /// attributes: ignored).
    pub const fn with(self, id: u16) -> Given {
        if id < 32 {
            Given(self.0 | 1 << id)
        } else {
            self
        }
    }

    /// The attribute `id` if given, else none (`tb[id]`).
    const fn attr(self, id: u16) -> Option<Field> {
        if self.has(id) {
            Some(Field::Config(id))
        } else {
            None
        }
    }

    /// The attribute `id` if given, else the request as a whole.
    const fn attr_or_request(self, id: u16) -> Option<Field> {
        match self.attr(id) {
            Some(f) => Some(f),
            None => Some(Field::Request),
        }
    }
}

/// One config-set applied to a configuration (`crem_apply_cfg`): one call
/// per attribute of config-set, in the request's order, then
/// [`Edit::finish`].
///
/// A scalar given twice keeps the later value (as `nla_parse`'s `tb[]`
/// does). The first reporter (peer) attribute empties the reporter (peer)
/// list, so a list given replaces the old one whole, and one not given is
/// kept; an empty one adds nothing (a list given only as one empty entry is
/// thus cleared). Scalars never fail, and no list rule depends on a scalar:
/// scalars and list entries may come in any order between them.
///
/// It edits the configuration in place, as the C edits its copy (a
/// `Config` is about 1.4 KB: the kernel keeps its copy off the stack). On a
/// refusal the configuration holds a partial edit: discard it.
#[derive(Debug)]
pub struct Edit<'c> {
    c: &'c mut Config,
    given: Given,
    /// Reporter attributes met so far.
    reporters: u16,
    /// Peer attributes met so far.
    peers: u16,
}

impl<'c> Edit<'c> {
    /// An edit of `c`, a copy of the netns's configuration.
    pub fn new(c: &'c mut Config) -> Edit<'c> {
        Edit {
            c,
            given: Given::NONE,
            reporters: 0,
            peers: 0,
        }
    }

    /// What it was given so far.
    pub fn given(&self) -> Given {
        self.given
    }

    /// The configuration as edited so far.
    pub fn config(&self) -> &Config {
        self.c
    }

    fn mark(&mut self, id: u16) {
        self.given = self.given.with(id);
    }

    /// `port`.
    pub fn port(&mut self, v: u16) {
        self.c.port = v;
        self.mark(nl::CONFIG_PORT);
    }

    /// `role` (the policy admits only the enum's values: [`Role::from_u8`]).
    pub fn role(&mut self, v: Role) {
        self.c.role = v;
        self.mark(nl::CONFIG_ROLE);
    }

    /// `recovery` ([`Recovery::from_u8`]).
    pub fn recovery(&mut self, v: Recovery) {
        self.c.recovery = v;
        self.mark(nl::CONFIG_RECOVERY);
    }

    /// `adaptive` (the policy admits 0 and 1).
    pub fn adaptive(&mut self, v: bool) {
        self.c.adaptive = v;
        self.mark(nl::CONFIG_ADAPTIVE);
    }

    /// `k`.
    pub fn k(&mut self, v: u8) {
        self.c.k = v;
        self.mark(nl::CONFIG_K);
    }

    /// `m`.
    pub fn m(&mut self, v: u8) {
        self.c.m = v;
        self.mark(nl::CONFIG_M);
    }

    /// `symbol-len`.
    pub fn symbol_len(&mut self, v: u16) {
        self.c.symbol_len = v;
        self.mark(nl::CONFIG_SYMBOL_LEN);
    }

    /// `epsilon-ppb`.
    pub fn epsilon_ppb(&mut self, v: u32) {
        self.c.epsilon_ppb = v;
        self.mark(nl::CONFIG_EPSILON_PPB);
    }

    /// `m-cong`.
    pub fn m_cong(&mut self, v: u8) {
        self.c.m_cong = v;
        self.mark(nl::CONFIG_M_CONG);
    }

    /// `hold-us`.
    pub fn hold_us(&mut self, v: u32) {
        self.c.hold_us = v;
        self.mark(nl::CONFIG_HOLD_US);
    }

    /// `max-bdp`.
    pub fn max_bdp(&mut self, v: u32) {
        self.c.max_bdp = v;
        self.mark(nl::CONFIG_MAX_BDP);
    }

    /// `spare-flows` (the policy admits 0 to [`SPARE_FLOWS_MAX`]).
    pub fn spare_flows(&mut self, v: u32) {
        self.c.spare_flows = v;
        self.mark(nl::CONFIG_SPARE_FLOWS);
    }

    /// `max-flows`.
    pub fn max_flows(&mut self, v: u32) {
        self.c.max_flows = v;
        self.mark(nl::CONFIG_MAX_FLOWS);
    }

    /// `max-memory`.
    pub fn max_memory(&mut self, v: u64) {
        self.c.max_memory = v;
        self.mark(nl::CONFIG_MAX_MEMORY);
    }

    /// `report` (the policy admits 0 and 1).
    pub fn report(&mut self, v: bool) {
        self.c.report = v;
        self.mark(nl::CONFIG_REPORT);
    }

    /// `node-id`.
    pub fn node_id(&mut self, v: u32) {
        self.c.node_id = v;
        self.mark(nl::CONFIG_NODE_ID);
    }

    /// `report-interval-us`.
    pub fn report_interval_us(&mut self, v: u32) {
        self.c.report_interval_us = v;
        self.mark(nl::CONFIG_REPORT_INTERVAL_US);
    }

    /// `report-flow-gap-us`.
    pub fn report_flow_gap_us(&mut self, v: u32) {
        self.c.report_flow_gap_us = v;
        self.mark(nl::CONFIG_REPORT_FLOW_GAP_US);
    }

    /// `report-port-rate`.
    pub fn report_port_rate(&mut self, v: u32) {
        self.c.report_port_rate = v;
        self.mark(nl::CONFIG_REPORT_PORT_RATE);
    }

    /// `report-psns`.
    pub fn report_psns(&mut self, v: u8) {
        self.c.report_psns = v;
        self.mark(nl::CONFIG_REPORT_PSNS);
    }

    /// A `reporter` attribute's payload: an address, or empty (adds
    /// nothing). Refused: the list is full ([`Why::TooManyReporters`],
    /// checked first), or the payload is no address ([`Why::AddrLen`]);
    /// both name this attribute.
    pub fn reporter(&mut self, payload: &[u8]) -> Result<(), Refusal> {
        let n = self.reporters;
        self.reporters = n.saturating_add(1);
        if !self.given.has(nl::CONFIG_REPORTER) {
            self.mark(nl::CONFIG_REPORTER);
            self.c.reporters.clear();
        }
        if payload.is_empty() {
            return Ok(());
        }
        let at = Some(Field::Reporter(n));
        if self.c.reporters.is_full() {
            return Err(Refusal::new(at, Why::TooManyReporters));
        }
        let a = Addr::from_bytes(payload).map_err(|w| Refusal::new(at, w))?;
        self.c
            .reporters
            .push(a)
            .map_err(|_| Refusal::new(at, Why::TooManyReporters))
    }

    /// The number the next peer attribute gets; the first empties the list.
    fn next_peer(&mut self) -> u16 {
        let n = self.peers;
        self.peers = n.saturating_add(1);
        if !self.given.has(nl::CONFIG_PEER) {
            self.mark(nl::CONFIG_PEER);
            self.c.peers.clear();
        }
        n
    }

    /// An empty `peer` nest (payload of length 0): adds nothing.
    pub fn peer_empty(&mut self) {
        self.next_peer();
    }

    /// A non-empty `peer` nest, its `prefix`, `prefix-len` and `addr`
    /// (`None`: absent; of a nest with one given twice, the last). Refused:
    /// the list is full ([`Why::TooManyPeers`], checked first, naming the
    /// nest), the peer is not one ([`Peer::parse`]), or its prefix is
    /// already in the list ([`Why::DuplicatePrefix`], naming the nest).
    pub fn peer(
        &mut self,
        prefix: Option<&[u8]>,
        prefix_len: Option<u8>,
        addr: Option<&[u8]>,
    ) -> Result<(), Refusal> {
        let n = self.next_peer();
        let at = Some(Field::Peer(n));
        if self.c.peers.is_full() {
            return Err(Refusal::new(at, Why::TooManyPeers));
        }
        let p = Peer::parse(n, prefix, prefix_len, addr)?;
        if self.c.peers.iter().any(|q| q.same_prefix(&p)) {
            return Err(Refusal::new(at, Why::DuplicatePrefix));
        }
        self.c
            .peers
            .push(p)
            .map_err(|_| Refusal::new(at, Why::TooManyPeers))
    }

    /// The rules across attributes, on the edited configuration, in the
    /// C's order (`crem_apply_cfg`'s end): a role needs a port; the port is
    /// not RoCEv2's; k + m ≤ 255; m ≤ [`MAX_M`]; symbol-len 0 or at least
    /// [`SYMBOL_LEN_MIN`]; symbol-len at most [`SYMBOL_LEN_MAX`]. The
    /// reporter's rules, which the C never had, come with the role's (report
    /// needs a port) and after the C's (the report-* ranges, in attribute
    /// order). Returns what was given (for [`check_limits`], [`check_mtu`]
    /// and [`bind_result`]), or the first rule broken.
    pub fn finish(self) -> Result<Given, Refusal> {
        let (c, g) = (&*self.c, self.given);
        let refuse = |at, why| Err(Refusal::new(at, why));
        if c.role != Role::Disabled && c.port == 0 {
            return refuse(g.attr_or_request(nl::CONFIG_ROLE), Why::RoleWithoutPort);
        }
        if c.report && c.port == 0 {
            return refuse(g.attr_or_request(nl::CONFIG_REPORT), Why::ReportWithoutPort);
        }
        if c.port == ROCEV2_UDP_PORT {
            return refuse(g.attr_or_request(nl::CONFIG_PORT), Why::RocePort);
        }
        if u16::from(c.k) + u16::from(c.m) > 255 {
            let at = match g.attr(nl::CONFIG_M) {
                Some(m) => Some(m),
                None => g.attr_or_request(nl::CONFIG_K),
            };
            return refuse(at, Why::KPlusM);
        }
        if c.m > MAX_M {
            return refuse(g.attr_or_request(nl::CONFIG_M), Why::MTooLarge);
        }
        if c.symbol_len != 0 && c.symbol_len < SYMBOL_LEN_MIN {
            return refuse(g.attr(nl::CONFIG_SYMBOL_LEN), Why::SymbolLenTooSmall);
        }
        if c.symbol_len > SYMBOL_LEN_MAX {
            return refuse(g.attr(nl::CONFIG_SYMBOL_LEN), Why::SymbolLenTooLarge);
        }
        self.report_ranges()
    }

    /// The report-* attributes within their ranges (each refusal names the
    /// attribute if given, else the request).
    fn report_ranges(self) -> Result<Given, Refusal> {
        let (c, g) = (&*self.c, self.given);
        let out = |v: u32, lo: u32, hi: u32| v < lo || v > hi;
        let why = if out(c.report_interval_us, 1, REPORT_INTERVAL_US_MAX) {
            (nl::CONFIG_REPORT_INTERVAL_US, Why::ReportInterval)
        } else if c.report_flow_gap_us > REPORT_FLOW_GAP_US_MAX {
            (nl::CONFIG_REPORT_FLOW_GAP_US, Why::ReportFlowGap)
        } else if out(c.report_port_rate, 1, REPORT_PORT_RATE_MAX) {
            (nl::CONFIG_REPORT_PORT_RATE, Why::ReportPortRate)
        } else if out(c.report_psns.into(), 1, REPORT_PSNS_MAX.into()) {
            (nl::CONFIG_REPORT_PSNS, Why::ReportPsns)
        } else {
            return Ok(g);
        };
        Err(Refusal::new(g.attr_or_request(why.0), why.1))
    }
}

/// The limits a netns of another user namespace than the initial one gets:
/// the initial netns's max-flows and max-memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Flows at most.
    pub max_flows: u32,
    /// Octets at most.
    pub max_memory: u64,
}

impl Limits {
    /// Whether either limit is lower than `old`'s (config-set of the
    /// initial netns then lowers the limited netns above them).
    pub const fn below(&self, old: &Limits) -> bool {
        self.max_flows < old.max_flows || self.max_memory < old.max_memory
    }
}

/// Lowers `c`'s max-flows and max-memory to `lim`'s where above them
/// (`crem_cfg_clamp`); true if that changed something. `crem_limits_lower`
/// is this on every limited netns (each changed one is notified).
pub fn clamp(c: &mut Config, lim: Limits) -> bool {
    let mut changed = false;
    if c.max_flows > lim.max_flows {
        c.max_flows = lim.max_flows;
        changed = true;
    }
    if c.max_memory > lim.max_memory {
        c.max_memory = lim.max_memory;
        changed = true;
    }
    changed
}

/// A limited netns's configuration against the initial netns's limits
/// `lim` (`crem_check_limits`, for a limited netns only): a max-flows or
/// max-memory given above them is refused (max-flows first; naming it);
/// then what was not given is clamped to them.
pub fn check_limits(c: &mut Config, given: Given, lim: Limits) -> Result<(), Refusal> {
    if given.has(nl::CONFIG_MAX_FLOWS) && c.max_flows > lim.max_flows {
        return Err(Refusal::new(
            Some(Field::Config(nl::CONFIG_MAX_FLOWS)),
            Why::AboveInitFlows {
                max_flows: c.max_flows,
                limit: lim.max_flows,
            },
        ));
    }
    if given.has(nl::CONFIG_MAX_MEMORY) && c.max_memory > lim.max_memory {
        return Err(Refusal::new(
            Some(Field::Config(nl::CONFIG_MAX_MEMORY)),
            Why::AboveInitMemory {
                max_memory: c.max_memory,
                limit: lim.max_memory,
            },
        ));
    }
    clamp(c, lim);
    Ok(())
}

/// A symbol length against the routes to the peers (`crem_check_mtu`),
/// checked when symbol-len or a peer was given (as the C calls it) and
/// symbol-len is not 0: for each peer in list order whose address
/// `route_mtu` finds a route to (`None`: no route; not judged), symbol-len
/// plus [`repair_overhead`] (by the peer's family) must fit that route's
/// MTU. The refusal names symbol-len if given, else the request.
pub fn check_mtu(
    c: &Config,
    given: Given,
    mut route_mtu: impl FnMut(Addr) -> Option<u32>,
) -> Result<(), Refusal> {
    if !(given.has(nl::CONFIG_SYMBOL_LEN) || given.has(nl::CONFIG_PEER)) || c.symbol_len == 0 {
        return Ok(());
    }
    for p in c.peers.iter() {
        let peer = p.addr;
        let need = u32::from(c.symbol_len) + repair_overhead(peer);
        let Some(mtu) = route_mtu(peer) else { continue };
        if need > mtu {
            return Err(Refusal::new(
                given.attr_or_request(nl::CONFIG_SYMBOL_LEN),
                Why::Mtu {
                    symbol_len: c.symbol_len,
                    need,
                    peer,
                    mtu,
                },
            ));
        }
    }
    Ok(())
}

/// Explains a failed rebinding of the CREM socket for `c` (the socket's
/// result `err`: 0 or a negative errno; `serving`: the port it served
/// before, the old configuration's [`Config::socket_port`]): the port in
/// use by another socket, while an old one still serves or not; any other
/// error as it is. The refusal names the port if given, else the request, and
/// returns `err` (an `err` above 0 or below -4095 is no errno: EINVAL).
pub fn bind_result(c: &Config, given: Given, serving: u16, err: i32) -> Result<(), Refusal> {
    let port = c.port;
    let why = if err == 0 {
        return Ok(());
    } else if err == EADDRINUSE.to_kernel() && serving != 0 {
        Why::PortInUse { port, serving }
    } else if err == EADDRINUSE.to_kernel() {
        Why::PortInUseOff { port }
    } else {
        Why::Bind { port, err }
    };
    Err(Refusal::new(given.attr_or_request(nl::CONFIG_PORT), why))
}

/// Explains netfilter hooks that could not be registered for the new
/// role and report (`err`: 0 or a negative errno): the refusal names the
/// role if given, else report if given, else the request, and returns
/// `err` (no errno: EINVAL).
pub fn hooks_result(given: Given, err: i32) -> Result<(), Refusal> {
    if err == 0 {
        return Ok(());
    }
    let at = match given.attr(nl::CONFIG_ROLE) {
        Some(role) => Some(role),
        None => given.attr_or_request(nl::CONFIG_REPORT),
    };
    Err(Refusal::new(at, Why::Hooks { err }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_crem_cfg_defaults() {
        let c = Config::DEFAULT;
        assert_eq!(
            (c.port, c.role, c.recovery, c.adaptive, c.k, c.m, c.m_cong),
            (0, Role::Disabled, Recovery::Coded, true, 32, 2, 1)
        );
        assert_eq!((c.symbol_len, c.epsilon_ppb, c.hold_us), (0, 100_000, 0));
        assert_eq!(
            (c.max_flows, c.max_bdp, c.max_memory),
            (1024, 256, 64 << 20)
        );
        assert!(c.reporters.is_empty() && c.peers.is_empty());
        assert_eq!(c.spare_flows, SPARE_FLOWS_DEFAULT);
        assert_eq!(Config::default(), c);
        assert_eq!(c.socket_port(), 0);
    }

    #[test]
    fn spare_flows_max_is_the_policys() {
        // The kernel's pool holds SPARE_FLOWS_MAX a side: the policy may
        // not admit more.
        let a = nl::CONFIG_SET
            .attrs
            .iter()
            .find(|a| a.id == nl::CONFIG_SPARE_FLOWS)
            .unwrap();
        assert_eq!(a.max, Some(u64::from(SPARE_FLOWS_MAX)));
        assert_eq!((SPARE_FLOWS_DEFAULT, SPARE_FLOWS_MAX), (8, 64));
    }

    #[test]
    fn reporter_defaults() {
        let c = Config::DEFAULT;
        assert_eq!((c.report, c.node_id), (false, 0));
        assert_eq!(
            (
                c.report_interval_us,
                c.report_flow_gap_us,
                c.report_port_rate,
                c.report_psns
            ),
            (50, 1000, 10_000, 64)
        );
        // The aggregator's defaults, but for the Node ID (auto here).
        let p = c.report_params(0xc0ffee);
        assert_eq!(
            p,
            Params {
                node_id: 0xc0ffee,
                ..Params::default()
            }
        );
        let mut c = c;
        (c.node_id, c.report_interval_us, c.report_psns) = (7, REPORT_INTERVAL_US_MAX, 1);
        c.report_flow_gap_us = REPORT_FLOW_GAP_US_MAX;
        let p = c.report_params(0xc0ffee);
        assert_eq!(
            (p.node_id, p.interval, p.flow_gap, p.psn_limit),
            (7, 1_000_000_000, 10_000_000_000, 1)
        );
    }

    #[test]
    fn a_reporter_has_a_socket_whatever_its_role() {
        let mut c = Config::DEFAULT;
        c.port = 7470;
        assert_eq!(c.socket_port(), 0);
        c.report = true;
        assert_eq!(c.socket_port(), 7470);
        for role in [Role::Host, Role::Gateway] {
            c.role = role;
            assert_eq!(c.socket_port(), 7470);
            c.report = false;
            assert_eq!(c.socket_port(), 7470);
            c.report = true;
        }
    }

    #[test]
    fn enums_follow_the_spec() {
        for (i, name) in nl::ROLE.iter().enumerate() {
            let r = Role::from_u8(i as u8).unwrap();
            assert_eq!(u8::from(r) as usize, i, "{name}");
        }
        assert_eq!(Role::from_u8(nl::ROLE.len() as u8), None);
        for (i, name) in nl::RECOVERY.iter().enumerate() {
            let r = Recovery::from_u8(i as u8).unwrap();
            assert_eq!(u8::from(r) as usize, i, "{name}");
        }
        assert_eq!(Recovery::from_u8(nl::RECOVERY.len() as u8), None);
    }

    #[test]
    fn hooks_refusal() {
        assert_eq!(hooks_result(Given::NONE, 0), Ok(()));
        let r = hooks_result(Given::NONE.with(nl::CONFIG_ROLE), -12).unwrap_err();
        assert_eq!(r.at, Some(Field::Config(nl::CONFIG_ROLE)));
        assert_eq!(r.errno.to_kernel(), -12);
        assert_eq!(r.why.fixed(), None);
        assert_eq!(
            r.why.to_string(),
            "cannot register netfilter hooks (role, report): error -12 (nothing changed)"
        );
        let r = hooks_result(Given::NONE, 5).unwrap_err();
        assert_eq!((r.at, r.errno.get()), (Some(Field::Request), 22));
        // report if given and the role is not.
        let report = Given::NONE.with(nl::CONFIG_REPORT);
        let r = hooks_result(report, -12).unwrap_err();
        assert_eq!(r.at, Some(Field::Config(nl::CONFIG_REPORT)));
        let r = hooks_result(report.with(nl::CONFIG_ROLE), -12).unwrap_err();
        assert_eq!(r.at, Some(Field::Config(nl::CONFIG_ROLE)));
    }

    #[test]
    fn given() {
        let g = Given::NONE.with(nl::CONFIG_K).with(40);
        assert!(g.has(nl::CONFIG_K) && !g.has(nl::CONFIG_M) && !g.has(40));
        assert_eq!(g.attr_or_request(nl::CONFIG_M), Some(Field::Request));
        assert_eq!(g.attr(nl::CONFIG_M), None);
        assert_eq!(g.attr(nl::CONFIG_K), Some(Field::Config(nl::CONFIG_K)));
    }
}
