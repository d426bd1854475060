//! The family's messages as Rust values: configuration (with peers), counters
//! and flows, converted to and from attribute trees ([`crate::attr`]) and
//! serialized to JSON with the YAML attribute names as field names.

use crate::attr::Attr;
use crate::uapi::{self, *};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An address attribute: 4 or 16 octets. Anything else (which the kernel
/// should never send) is kept and shown as hex.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Addr(pub Vec<u8>);

impl Addr {
    pub fn ip(&self) -> Option<IpAddr> {
        match self.0.len() {
            4 => Some(IpAddr::V4(Ipv4Addr::new(
                self.0[0], self.0[1], self.0[2], self.0[3],
            ))),
            16 => {
                let mut o = [0u8; 16];
                o.copy_from_slice(&self.0);
                Some(IpAddr::V6(Ipv6Addr::from(o)))
            }
            _ => None,
        }
    }
}

impl From<IpAddr> for Addr {
    fn from(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(a) => Addr(a.octets().to_vec()),
            IpAddr::V6(a) => Addr(a.octets().to_vec()),
        }
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ip() {
            Some(ip) => write!(f, "{ip}"),
            // No address (e.g. a flow whose peer is not known): as YNL's
            // empty hex string.
            None if self.0.is_empty() => Ok(()),
            None => write!(f, "0x{}", crate::hex::encode(&self.0)),
        }
    }
}

impl Serialize for Addr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// An enum-valued attribute: shown by name, or by number if this crem-ctl
/// does not know the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnumVal {
    pub names: &'static [&'static str],
    pub value: u8,
}

impl EnumVal {
    pub fn name(&self) -> Option<&'static str> {
        uapi::enum_name(self.names, self.value.into())
    }
}

impl fmt::Display for EnumVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "unknown({})", self.value),
        }
    }
}

impl Serialize for EnumVal {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.name() {
            Some(n) => s.serialize_str(n),
            None => s.serialize_u8(self.value),
        }
    }
}

/// A peer entry: flows toward `prefix/prefix_len` are protected with the
/// CREM function at `addr`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Peer {
    pub prefix: Addr,
    #[serde(rename = "prefix-len")]
    pub prefix_len: u8,
    pub addr: Addr,
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}={}", self.prefix, self.prefix_len, self.addr)
    }
}

/// The configuration of a netns, or (for config-set) the subset to change.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Config {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<EnumVal>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<EnumVal>,
    /// "on"/"off" in JSON, as the text and the config file say it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<EnumVal>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub m: Option<u8>,
    #[serde(rename = "symbol-len", skip_serializing_if = "Option::is_none")]
    pub symbol_len: Option<u16>,
    #[serde(rename = "epsilon-ppb", skip_serializing_if = "Option::is_none")]
    pub epsilon_ppb: Option<u32>,
    #[serde(rename = "m-cong", skip_serializing_if = "Option::is_none")]
    pub m_cong: Option<u8>,
    #[serde(rename = "hold-us", skip_serializing_if = "Option::is_none")]
    pub hold_us: Option<u32>,
    #[serde(rename = "max-flows", skip_serializing_if = "Option::is_none")]
    pub max_flows: Option<u32>,
    #[serde(rename = "max-memory", skip_serializing_if = "Option::is_none")]
    pub max_memory: Option<u64>,
    #[serde(rename = "max-bdp", skip_serializing_if = "Option::is_none")]
    pub max_bdp: Option<u32>,
    /// "on"/"off" in JSON, as adaptive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<EnumVal>,
    #[serde(rename = "node-id", skip_serializing_if = "Option::is_none")]
    pub node_id: Option<u32>,
    #[serde(rename = "report-interval-us", skip_serializing_if = "Option::is_none")]
    pub report_interval_us: Option<u32>,
    #[serde(rename = "report-flow-gap-us", skip_serializing_if = "Option::is_none")]
    pub report_flow_gap_us: Option<u32>,
    #[serde(rename = "report-port-rate", skip_serializing_if = "Option::is_none")]
    pub report_port_rate: Option<u32>,
    #[serde(rename = "report-psns", skip_serializing_if = "Option::is_none")]
    pub report_psns: Option<u8>,
    #[serde(rename = "spare-flows", skip_serializing_if = "Option::is_none")]
    pub spare_flows: Option<u32>,
    /// `None`: not given (set) / the kernel sent none (get: empty list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reporter: Option<Vec<Addr>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<Vec<Peer>>,
}

impl Config {
    /// True if nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == Config::default()
    }

    /// The scalar attributes, in attribute order, by attribute ID.
    fn fields(&mut self) -> [(u16, Field<'_>); 20] {
        [
            (CONFIG_PORT, Field::U16(&mut self.port)),
            (CONFIG_ROLE, Field::Enum(&mut self.role, ROLE)),
            (CONFIG_RECOVERY, Field::Enum(&mut self.recovery, RECOVERY)),
            (CONFIG_ADAPTIVE, Field::Enum(&mut self.adaptive, ADAPTIVE)),
            (CONFIG_K, Field::U8(&mut self.k)),
            (CONFIG_M, Field::U8(&mut self.m)),
            (CONFIG_SYMBOL_LEN, Field::U16(&mut self.symbol_len)),
            (CONFIG_EPSILON_PPB, Field::U32(&mut self.epsilon_ppb)),
            (CONFIG_M_CONG, Field::U8(&mut self.m_cong)),
            (CONFIG_HOLD_US, Field::U32(&mut self.hold_us)),
            (CONFIG_MAX_FLOWS, Field::U32(&mut self.max_flows)),
            (CONFIG_MAX_MEMORY, Field::U64(&mut self.max_memory)),
            (CONFIG_MAX_BDP, Field::U32(&mut self.max_bdp)),
            (CONFIG_REPORT, Field::Enum(&mut self.report, REPORT)),
            (CONFIG_NODE_ID, Field::U32(&mut self.node_id)),
            (
                CONFIG_REPORT_INTERVAL_US,
                Field::U32(&mut self.report_interval_us),
            ),
            (
                CONFIG_REPORT_FLOW_GAP_US,
                Field::U32(&mut self.report_flow_gap_us),
            ),
            (
                CONFIG_REPORT_PORT_RATE,
                Field::U32(&mut self.report_port_rate),
            ),
            (CONFIG_REPORT_PSNS, Field::U8(&mut self.report_psns)),
            (CONFIG_SPARE_FLOWS, Field::U32(&mut self.spare_flows)),
        ]
    }

    /// This configuration with `change` applied as config-set applies it:
    /// every scalar and list `change` has replaces this one's.
    pub fn overlay(&self, change: &Config) -> Config {
        let mut out = self.clone();
        let mut ch = change.clone();
        for ((_, o), (_, c)) in out.fields().into_iter().zip(ch.fields()) {
            o.take_from(c);
        }
        if change.reporter.is_some() {
            out.reporter = change.reporter.clone();
        }
        if change.peer.is_some() {
            out.peer = change.peer.clone();
        }
        out
    }

    /// The attributes of the "config" set this gives: config-set's
    /// request, at the top level.
    pub fn to_attrs(&self) -> Vec<Attr> {
        // The scalars, from a copy: the field table borrows mutably.
        let mut v: Vec<Attr> = self
            .clone()
            .fields()
            .into_iter()
            .filter_map(|(id, f)| f.to_attr(id))
            .collect();
        // An empty list is sent as one empty attribute: the kernel clears it.
        if self.reporter.as_ref().is_some_and(|r| r.is_empty()) {
            v.push(Attr::bytes(CONFIG_REPORTER, Vec::new()));
        }
        if self.peer.as_ref().is_some_and(|p| p.is_empty()) {
            v.push(Attr::nest(CONFIG_PEER, Vec::new()));
        }
        for r in self.reporter.iter().flatten() {
            v.push(Attr::bytes(CONFIG_REPORTER, r.0.clone()));
        }
        for p in self.peer.iter().flatten() {
            v.push(Attr::nest(
                CONFIG_PEER,
                vec![
                    Attr::bytes(PEER_PREFIX, p.prefix.0.clone()),
                    Attr::u8(PEER_PREFIX_LEN, p.prefix_len),
                    Attr::bytes(PEER_ADDR, p.addr.0.clone()),
                ],
            ));
        }
        v
    }

    /// From the attributes of a config-get reply or config-change-ntf (as
    /// [`crate::attr::decode`] returns them for the "config" set). A reply always carries the lists,
    /// possibly empty; `complete` makes absent lists empty rather than None.
    pub fn from_attrs(attrs: &[Attr], complete: bool) -> Config {
        let mut c = Config::default();
        if complete {
            c.reporter = Some(Vec::new());
            c.peer = Some(Vec::new());
        }
        for a in attrs {
            if set_field(c.fields(), a) {
                continue;
            }
            match a.id {
                CONFIG_REPORTER => {
                    if let Some(b) = a.as_bytes() {
                        c.reporter
                            .get_or_insert_with(Vec::new)
                            .push(Addr(b.to_vec()));
                    }
                }
                CONFIG_PEER => {
                    let mut p = Peer {
                        prefix: Addr(Vec::new()),
                        prefix_len: 0,
                        addr: Addr(Vec::new()),
                    };
                    for pa in a.as_nest().unwrap_or(&[]) {
                        match pa.id {
                            PEER_PREFIX => p.prefix = Addr(pa.as_bytes().unwrap_or(&[]).to_vec()),
                            PEER_PREFIX_LEN => p.prefix_len = pa.as_uint().unwrap_or(0) as u8,
                            PEER_ADDR => p.addr = Addr(pa.as_bytes().unwrap_or(&[]).to_vec()),
                            _ => {}
                        }
                    }
                    c.peer.get_or_insert_with(Vec::new).push(p);
                }
                _ => {}
            }
        }
        c
    }
}

/// A scalar field of [`Config`] or [`Flow`] and its width on the wire, for
/// table-driven conversion to and from attributes.
enum Field<'a> {
    U8(&'a mut Option<u8>),
    U16(&'a mut Option<u16>),
    U32(&'a mut Option<u32>),
    U64(&'a mut Option<u64>),
    /// A u8 on the wire, named by `names`.
    Enum(&'a mut Option<EnumVal>, &'static [&'static str]),
}

impl Field<'_> {
    /// Sets the field from an attribute's unsigned value (truncated to the
    /// field's width; `None` clears it).
    fn set(self, u: Option<u64>) {
        match self {
            Field::U8(f) => *f = u.map(|x| x as u8),
            Field::U16(f) => *f = u.map(|x| x as u16),
            Field::U32(f) => *f = u.map(|x| x as u32),
            Field::U64(f) => *f = u,
            Field::Enum(f, names) => *f = u.map(|x| enum_val(names, x)),
        }
    }

    /// Sets this field to `other`'s value if that is set (the same field of
    /// another value of the same type).
    fn take_from(self, other: Field<'_>) {
        fn take<T: Copy>(o: &mut Option<T>, c: &Option<T>) {
            if c.is_some() {
                *o = *c;
            }
        }
        match (self, other) {
            (Field::U8(o), Field::U8(c)) => take(o, c),
            (Field::U16(o), Field::U16(c)) => take(o, c),
            (Field::U32(o), Field::U32(c)) => take(o, c),
            (Field::U64(o), Field::U64(c)) => take(o, c),
            (Field::Enum(o, _), Field::Enum(c, _)) => take(o, c),
            _ => unreachable!("fields of one type, in one order"),
        }
    }

    /// The attribute `id` carrying the field's value, if it is set.
    fn to_attr(&self, id: u16) -> Option<Attr> {
        match self {
            Field::U8(f) => f.map(|x| Attr::u8(id, x)),
            Field::U16(f) => f.map(|x| Attr::u16(id, x)),
            Field::U32(f) => f.map(|x| Attr::u32(id, x)),
            Field::U64(f) => f.map(|x| Attr::u64(id, x)),
            Field::Enum(f, _) => f.map(|x| Attr::u8(id, x.value)),
        }
    }
}

/// Sets the field of `fields` that attribute `a` is for; false if none is.
fn set_field<const N: usize>(fields: [(u16, Field<'_>); N], a: &Attr) -> bool {
    match fields.into_iter().find(|(id, _)| *id == a.id) {
        Some((_, f)) => {
            f.set(a.as_uint());
            true
        }
        None => false,
    }
}

pub fn enum_val(names: &'static [&'static str], v: u64) -> EnumVal {
    EnumVal {
        names,
        value: v as u8,
    }
}

/// The 64-bit counters of one attribute set ("stats", "flow-stats" or
/// "msg-types"), in spec order, by YAML name; only those the kernel sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters(pub Vec<(&'static str, u64)>);

impl Counters {
    /// The counters (uint attributes) of `set` found in `attrs` (nests are
    /// not counters and are left out).
    pub fn from_attrs(set: &'static AttrSet, attrs: &[Attr]) -> Counters {
        let mut v = Vec::new();
        for spec in set.attrs.iter().filter(|s| s.ty == AttrType::Uint) {
            if let Some(x) = attrs
                .iter()
                .find(|a| a.id == spec.id)
                .and_then(Attr::as_uint)
            {
                v.push((spec.name, x));
            }
        }
        Counters(v)
    }

    #[cfg(test)]
    pub fn get(&self, name: &str) -> Option<u64> {
        self.0.iter().find(|(n, _)| *n == name).map(|x| x.1)
    }
}

impl Serialize for Counters {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// CREM messages counted by message type, received and sent: the two
/// "msg-types" nests (`msgs-in-by-type`, `msgs-out-by-type`) of "stats" and
/// of "flow-stats". `None`: the module did not send that nest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ByType {
    pub msgs_in: Option<Counters>,
    pub msgs_out: Option<Counters>,
}

impl ByType {
    /// The nests `in_id` and `out_id` of `attrs` (a "stats" or "flow-stats"
    /// attribute list).
    fn from_attrs(attrs: &[Attr], in_id: u16, out_id: u16) -> ByType {
        let nest = |id: u16| {
            attrs
                .iter()
                .find(|a| a.id == id)
                .and_then(Attr::as_nest)
                .map(|n| Counters::from_attrs(&MSG_TYPES_SET, n))
        };
        ByType {
            msgs_in: nest(in_id),
            msgs_out: nest(out_id),
        }
    }

    /// True if the module sent neither nest (an older module).
    pub fn is_absent(&self) -> bool {
        self.msgs_in.is_none() && self.msgs_out.is_none()
    }

    /// (in, out) of message type `name` (a "msg-types" attribute name): 0
    /// for a type a nest lacks, `None` for a nest the module did not send.
    pub fn count(&self, name: &str) -> (Option<u64>, Option<u64>) {
        let get = |c: &Option<Counters>| {
            c.as_ref()
                .map(|c| c.0.iter().find(|(k, _)| *k == name).map_or(0, |x| x.1))
        };
        (get(&self.msgs_in), get(&self.msgs_out))
    }

    /// (type, in, out) for every message type, in spec order, that either
    /// direction counted at least once (see [`ByType::count`]).
    pub fn nonzero_rows(&self) -> Vec<(&'static str, Option<u64>, Option<u64>)> {
        MSG_TYPES_SET
            .attrs
            .iter()
            .filter(|a| a.ty == AttrType::Uint)
            .map(|a| {
                let (i, o) = self.count(a.name);
                (a.name, i, o)
            })
            .filter(|(_, i, o)| i.unwrap_or(0) != 0 || o.unwrap_or(0) != 0)
            .collect()
    }
}

/// A value of a "stats" or "flow-stats" JSON object.
enum Entry<'a> {
    U64(u64),
    Counters(&'a Counters),
    FlowStats(&'a FlowStats),
}

impl Serialize for Entry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Entry::U64(v) => s.serialize_u64(*v),
            Entry::Counters(c) => c.serialize(s),
            Entry::FlowStats(f) => f.serialize(s),
        }
    }
}

/// Serializes the counters and nests of `set` as one JSON object, in spec
/// order (by attribute id).
fn serialize_in_spec_order<'a, S: Serializer>(
    s: S,
    set: &'static AttrSet,
    counters: &'a Counters,
    nests: impl IntoIterator<Item = (u16, Option<Entry<'a>>)>,
) -> Result<S::Ok, S::Error> {
    let mut entries: Vec<(u16, &str, Entry<'a>)> = counters
        .0
        .iter()
        .map(|&(k, v)| (set.by_name(k).map_or(0, |a| a.id), k, Entry::U64(v)))
        .collect();
    for (id, e) in nests {
        if let (Some(spec), Some(e)) = (set.by_id(id), e) {
            entries.push((id, spec.name, e));
        }
    }
    // Stable: counters already in spec order stay as they are.
    entries.sort_by_key(|e| e.0);
    let mut m = s.serialize_map(Some(entries.len()))?;
    for (_, k, v) in &entries {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

/// A "flow-stats" nest (the stats `totals`, or one flow's `stats`): its
/// 64-bit counters and its messages by type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    pub counters: Counters,
    pub by_type: ByType,
}

impl FlowStats {
    pub fn from_attrs(attrs: &[Attr]) -> FlowStats {
        FlowStats {
            counters: Counters::from_attrs(&FLOW_STATS_SET, attrs),
            by_type: ByType::from_attrs(
                attrs,
                FLOW_STATS_MSGS_IN_BY_TYPE,
                FLOW_STATS_MSGS_OUT_BY_TYPE,
            ),
        }
    }
}

impl Serialize for FlowStats {
    /// `{"sources": N, ..., "coded-retx-lost": N, "msgs-in-by-type":
    /// {"repair": N, ...}, "msgs-out-by-type": {...}}`, in spec order.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_in_spec_order(
            s,
            &FLOW_STATS_SET,
            &self.counters,
            [
                (
                    FLOW_STATS_MSGS_IN_BY_TYPE,
                    self.by_type.msgs_in.as_ref().map(Entry::Counters),
                ),
                (
                    FLOW_STATS_MSGS_OUT_BY_TYPE,
                    self.by_type.msgs_out.as_ref().map(Entry::Counters),
                ),
            ],
        )
    }
}

/// The reply of stats-get: the netns's counters and gauges ("stats" set),
/// the sum of all flows' counters (`totals`, a "flow-stats" nest) and the
/// CREM socket's messages by type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub counters: Counters,
    pub totals: Option<FlowStats>,
    pub by_type: ByType,
}

impl Stats {
    pub fn from_attrs(attrs: &[Attr]) -> Stats {
        Stats {
            counters: Counters::from_attrs(&STATS_SET, attrs),
            totals: attrs
                .iter()
                .find(|a| a.id == STATS_TOTALS)
                .and_then(Attr::as_nest)
                .map(FlowStats::from_attrs),
            by_type: ByType::from_attrs(attrs, STATS_MSGS_IN_BY_TYPE, STATS_MSGS_OUT_BY_TYPE),
        }
    }
}

impl Serialize for Stats {
    /// `{"roce-local-in": N, ..., "memory": N, "totals": {"sources": N, ...},
    /// ..., "msgs-in-by-type": {...}, "msgs-out-by-type": {...}}`: the
    /// attributes in spec order, each nest in its place.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_in_spec_order(
            s,
            &STATS_SET,
            &self.counters,
            [
                (STATS_TOTALS, self.totals.as_ref().map(Entry::FlowStats)),
                (
                    STATS_MSGS_IN_BY_TYPE,
                    self.by_type.msgs_in.as_ref().map(Entry::Counters),
                ),
                (
                    STATS_MSGS_OUT_BY_TYPE,
                    self.by_type.msgs_out.as_ref().map(Entry::Counters),
                ),
            ],
        )
    }
}

/// One protected flow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Flow {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src: Option<Addr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dst: Option<Addr>,
    #[serde(rename = "dest-qp", skip_serializing_if = "Option::is_none")]
    pub dest_qp: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<EnumVal>,
    #[serde(rename = "config-id", skip_serializing_if = "Option::is_none")]
    pub config_id: Option<u8>,
    /// By name in JSON ("cauchy"), as the text shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme: Option<EnumVal>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub m: Option<u8>,
    #[serde(rename = "symbol-len", skip_serializing_if = "Option::is_none")]
    pub symbol_len: Option<u16>,
    #[serde(rename = "srtt-us", skip_serializing_if = "Option::is_none")]
    pub srtt_us: Option<u32>,
    #[serde(rename = "loss-ppm", skip_serializing_if = "Option::is_none")]
    pub loss_ppm: Option<u32>,
    #[serde(rename = "loss-class", skip_serializing_if = "Option::is_none")]
    pub loss_class: Option<EnumVal>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaker: Option<EnumVal>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<EnumVal>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<Addr>,
    #[serde(rename = "age-ms", skip_serializing_if = "Option::is_none")]
    pub age_ms: Option<u64>,
    /// The flow's counters ("flow-stats" nest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<FlowStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<EnumVal>,
    /// flow-change notifications only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<EnumVal>,
    /// As the spec's close-reason enum names it (a number it lacks as
    /// the number).
    #[serde(
        rename = "close-reason",
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_close_reason"
    )]
    pub close_reason: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned: Option<u8>,
    /// Negotiated limits (the smaller of both sides'). A bit set of
    /// fec-scheme (enum-as-flags): JSON lists the names, in bit order.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_schemes"
    )]
    pub schemes: Option<u8>,
    #[serde(rename = "max-k", skip_serializing_if = "Option::is_none")]
    pub max_k: Option<u8>,
    #[serde(rename = "max-m", skip_serializing_if = "Option::is_none")]
    pub max_m: Option<u8>,
    #[serde(rename = "max-symbol-len", skip_serializing_if = "Option::is_none")]
    pub max_symbol_len: Option<u16>,
    #[serde(rename = "max-open-blocks", skip_serializing_if = "Option::is_none")]
    pub max_open_blocks: Option<u16>,
    /// Smallest RTT sample (last in the spec, so last here: JSON keys
    /// follow spec order).
    #[serde(rename = "min-rtt-us", skip_serializing_if = "Option::is_none")]
    pub min_rtt_us: Option<u32>,
    /// Milliseconds since a message from the peer last reached the flow
    /// (absent: none yet).
    #[serde(rename = "last-msg-ms", skip_serializing_if = "Option::is_none")]
    pub last_msg_ms: Option<u64>,
    /// The connection's RDMA MTU (CSF: learned from its packets; CRF: the
    /// HELLO's).
    #[serde(rename = "rdma-mtu", skip_serializing_if = "Option::is_none")]
    pub rdma_mtu: Option<u32>,
    /// CSF: 1 once rdma-mtu was seen in a FIRST or MIDDLE packet.
    #[serde(rename = "rdma-mtu-exact", skip_serializing_if = "Option::is_none")]
    pub rdma_mtu_exact: Option<u8>,
}

impl Flow {
    pub fn from_attrs(attrs: &[Attr]) -> Flow {
        let mut f = Flow::default();
        for a in attrs {
            let addr = || a.as_bytes().map(|b| Addr(b.to_vec()));
            match a.id {
                FLOW_SRC => f.src = addr(),
                FLOW_DST => f.dst = addr(),
                FLOW_PEER => f.peer = addr(),
                FLOW_STATS => f.stats = a.as_nest().map(FlowStats::from_attrs),
                _ => {
                    set_field(f.fields(), a);
                }
            }
        }
        f
    }

    /// The scalar attributes by attribute ID.
    fn fields(&mut self) -> [(u16, Field<'_>); 28] {
        [
            (FLOW_ID, Field::U32(&mut self.id)),
            (FLOW_DEST_QP, Field::U32(&mut self.dest_qp)),
            (FLOW_STATE_ATTR, Field::Enum(&mut self.state, FLOW_STATE)),
            (FLOW_CONFIG_ID, Field::U8(&mut self.config_id)),
            (FLOW_SCHEME, Field::Enum(&mut self.scheme, FEC_SCHEME)),
            (FLOW_K, Field::U8(&mut self.k)),
            (FLOW_M, Field::U8(&mut self.m)),
            (FLOW_SYMBOL_LEN, Field::U16(&mut self.symbol_len)),
            (FLOW_SRTT_US, Field::U32(&mut self.srtt_us)),
            (FLOW_LOSS_PPM, Field::U32(&mut self.loss_ppm)),
            (
                FLOW_LOSS_CLASS,
                Field::Enum(&mut self.loss_class, LOSS_CLASS),
            ),
            (FLOW_BREAKER, Field::Enum(&mut self.breaker, BREAKER)),
            (FLOW_MEMORY, Field::U64(&mut self.memory)),
            (FLOW_SIDE, Field::Enum(&mut self.side, SIDE)),
            (FLOW_AGE_MS, Field::U64(&mut self.age_ms)),
            (FLOW_KIND_ATTR, Field::Enum(&mut self.kind, FLOW_KIND)),
            (FLOW_EVENT_ATTR, Field::Enum(&mut self.event, FLOW_EVENT)),
            (FLOW_CLOSE_REASON, Field::U16(&mut self.close_reason)),
            (FLOW_PINNED, Field::U8(&mut self.pinned)),
            (FLOW_SCHEMES, Field::U8(&mut self.schemes)),
            (FLOW_MAX_K, Field::U8(&mut self.max_k)),
            (FLOW_MAX_M, Field::U8(&mut self.max_m)),
            (FLOW_MAX_SYMBOL_LEN, Field::U16(&mut self.max_symbol_len)),
            (FLOW_MAX_OPEN_BLOCKS, Field::U16(&mut self.max_open_blocks)),
            (FLOW_MIN_RTT_US, Field::U32(&mut self.min_rtt_us)),
            (FLOW_LAST_MSG_MS, Field::U64(&mut self.last_msg_ms)),
            (FLOW_RDMA_MTU, Field::U32(&mut self.rdma_mtu)),
            (FLOW_RDMA_MTU_EXACT, Field::U8(&mut self.rdma_mtu_exact)),
        ]
    }
}

/// Name of a CLOSE reason (the spec's close-reason enum), or its number.
pub fn close_reason_name(r: u16) -> String {
    uapi::enum_name(CLOSE_REASON, r.into()).map_or_else(|| r.to_string(), str::to_string)
}

/// close-reason in JSON: its name, or the number of a reason the registry
/// lacks (YNL 6.12's cli.py cannot decode such a value: its enum lookup
/// raises KeyError).
fn ser_close_reason<S: Serializer>(r: &Option<u16>, s: S) -> Result<S::Ok, S::Error> {
    match r.and_then(|r| uapi::enum_name(CLOSE_REASON, r.into())) {
        Some(n) => s.serialize_str(n),
        None => r.serialize(s),
    }
}

/// The schemes of bit set `bits` in bit order: by name, a bit the spec's
/// fec-scheme lacks by its number (as YNL decodes enum-as-flags).
fn ser_schemes<S: Serializer>(bits: &Option<u8>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let Some(bits) = *bits else {
        return s.serialize_none();
    };
    let set: Vec<u8> = (0..8u8).filter(|b| bits & (1 << b) != 0).collect();
    let mut seq = s.serialize_seq(Some(set.len()))?;
    for b in set {
        match uapi::enum_name(FEC_SCHEME, b.into()) {
            Some(n) => seq.serialize_element(n)?,
            None => seq.serialize_element(&b)?,
        }
    }
    seq.end()
}

/// The scheme names of a bit set (bit s: scheme s), comma-separated.
pub fn scheme_set_names(bits: u8) -> String {
    let names: Vec<String> = (0..8u8)
        .filter(|s| bits & (1 << s) != 0)
        .map(scheme_name)
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(",")
    }
}

/// Name of a FEC scheme number (the CREM FEC Schemes registry, the spec's
/// fec-scheme enum), or scheme-N for one this crem-ctl does not know.
pub fn scheme_name(s: u8) -> String {
    uapi::enum_name(FEC_SCHEME, s.into()).map_or_else(|| format!("scheme-{s}"), str::to_string)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::attr;

    /// The config-get reply of the kernel's defaults (crem_cfg_defaults),
    /// its attributes (after the genetlink header) as put_config lays them
    /// out, by hand.
    pub(crate) fn default_reply() -> Vec<u8> {
        vec![
            6, 0, 1, 0, 0, 0, 0, 0, // port 0
            5, 0, 2, 0, 0, 0, 0, 0, // role disabled
            5, 0, 3, 0, 0, 0, 0, 0, // recovery coded
            5, 0, 4, 0, 1, 0, 0, 0, // adaptive 1
            5, 0, 5, 0, 32, 0, 0, 0, // k 32
            5, 0, 6, 0, 2, 0, 0, 0, // m 2
            6, 0, 7, 0, 0, 0, 0, 0, // symbol-len 0
            8, 0, 8, 0, 0xa0, 0x86, 0x01, 0, // epsilon-ppb 100000
            5, 0, 9, 0, 1, 0, 0, 0, // m-cong 1
            8, 0, 10, 0, 0, 0, 0, 0, // hold-us 0
            8, 0, 11, 0, 0, 4, 0, 0, // max-flows 1024
            12, 0, 12, 0, 0, 0, 0, 4, 0, 0, 0, 0, // max-memory 64 MiB
            8, 0, 16, 0, 0, 1, 0, 0, // max-bdp 256
            5, 0, 17, 0, 0, 0, 0, 0, // report off
            8, 0, 18, 0, 0, 0, 0, 0, // node-id 0 (auto)
            8, 0, 19, 0, 50, 0, 0, 0, // report-interval-us 50
            8, 0, 20, 0, 0xe8, 3, 0, 0, // report-flow-gap-us 1000
            8, 0, 21, 0, 0x10, 0x27, 0, 0, // report-port-rate 10000
            5, 0, 22, 0, 64, 0, 0, 0, // report-psns 64
            8, 0, 23, 0, 8, 0, 0, 0, // spare-flows 8
        ]
    }

    #[test]
    fn config_from_kernel_bytes() {
        let attrs = attr::decode(&CONFIG_SET, &default_reply()).unwrap();
        let c = Config::from_attrs(&attrs, true);
        assert_eq!(c.port, Some(0));
        assert_eq!(c.role.unwrap().to_string(), "disabled");
        assert_eq!(c.recovery.unwrap().to_string(), "coded");
        assert_eq!(c.adaptive.map(|a| a.to_string()).as_deref(), Some("on"));
        assert_eq!((c.k, c.m), (Some(32), Some(2)));
        assert_eq!(c.epsilon_ppb, Some(100_000));
        assert_eq!(c.max_flows, Some(1024));
        assert_eq!(c.max_memory, Some(64 << 20));
        assert_eq!(c.max_bdp, Some(256));
        assert_eq!(c.report.map(|a| a.to_string()).as_deref(), Some("off"));
        assert_eq!(
            (
                c.node_id,
                c.report_interval_us,
                c.report_flow_gap_us,
                c.report_port_rate,
                c.report_psns
            ),
            (Some(0), Some(50), Some(1000), Some(10_000), Some(64))
        );
        assert_eq!(c.spare_flows, Some(8));
        assert_eq!(c.reporter, Some(vec![]));
        assert_eq!(c.peer, Some(vec![]));
        // and back: the same octets, plus one empty reporter and one empty
        // peer nest, which tell the kernel to clear those (empty) lists
        let mut want = default_reply();
        want.extend_from_slice(&[4, 0, 13, 0, 4, 0, 14, 0x80]);
        assert_eq!(attr::encode(&c.to_attrs()), want);
    }

    #[test]
    fn config_round_trip_with_lists() {
        let c = Config {
            port: Some(4791),
            role: Some(enum_val(ROLE, 2)),
            reporter: Some(vec![
                Addr(vec![192, 0, 2, 1]),
                Addr("2001:db8::1".parse::<IpAddr>().map(Addr::from).unwrap().0),
            ]),
            peer: Some(vec![Peer {
                prefix: Addr(vec![203, 0, 113, 0]),
                prefix_len: 24,
                addr: Addr(vec![198, 51, 100, 2]),
            }]),
            ..Default::default()
        };
        // config-set's request: only attributes its policy lists.
        crate::uapi::tests::assert_in_request(CMD_CONFIG_SET, &c.to_attrs());
        let bytes = attr::encode(&c.to_attrs());
        let back = Config::from_attrs(&attr::decode(&CONFIG_SET, &bytes).unwrap(), false);
        assert_eq!(back, c);
    }

    #[test]
    fn json_shape_uses_yaml_names() {
        let attrs = attr::decode(&CONFIG_SET, &default_reply()).unwrap();
        let mut c = Config::from_attrs(&attrs, true);
        c.peer = Some(vec![Peer {
            prefix: Addr(vec![203, 0, 113, 0]),
            prefix_len: 24,
            addr: Addr(vec![198, 51, 100, 2]),
        }]);
        c.reporter = Some(vec![Addr(vec![198, 51, 100, 1])]);
        let j = serde_json::to_value(&c).unwrap();
        let want = serde_json::json!({
            "port": 0, "role": "disabled", "recovery": "coded", "adaptive": "on",
            "k": 32, "m": 2, "symbol-len": 0, "epsilon-ppb": 100000, "m-cong": 1,
            "hold-us": 0, "max-flows": 1024, "max-memory": 67108864, "max-bdp": 256,
            "report": "off", "node-id": 0, "report-interval-us": 50,
            "report-flow-gap-us": 1000, "report-port-rate": 10000, "report-psns": 64,
            "spare-flows": 8, "reporter": ["198.51.100.1"],
            "peer": [{"prefix": "203.0.113.0", "prefix-len": 24, "addr": "198.51.100.2"}]
        });
        assert_eq!(j, want);
        // Every JSON key is an attribute name of the spec.
        for k in j.as_object().unwrap().keys() {
            assert!(CONFIG_SET.by_name(k).is_some(), "{k}");
        }
    }

    /// scheme and adaptive are named in JSON as the text names them; a
    /// value this crem-ctl does not know stays a number.
    #[test]
    fn scheme_and_adaptive_by_name() {
        // The spec's fec-scheme enum is crem-core's registry, value by value.
        for (v, name) in FEC_SCHEME.iter().enumerate() {
            let s = crem_core::fec::Scheme::try_from(v as u8).expect("a known scheme");
            assert_eq!(s as u8, v as u8, "{name}");
        }
        assert!(crem_core::fec::Scheme::try_from(FEC_SCHEME.len() as u8).is_err());
        assert_eq!(scheme_name(2), "xor");
        assert_eq!(scheme_name(9), "scheme-9");
        let flow = |scheme: u8| {
            let f = Flow::from_attrs(&[Attr::u8(FLOW_SCHEME, scheme)]);
            serde_json::to_value(&f).unwrap()
        };
        assert_eq!(flow(0), serde_json::json!({"scheme": "source-copy"}));
        assert_eq!(flow(1), serde_json::json!({"scheme": "cauchy"}));
        assert_eq!(flow(2), serde_json::json!({"scheme": "xor"}));
        assert_eq!(flow(9), serde_json::json!({"scheme": 9}));
        let conf = |adaptive: u8| {
            let c = Config::from_attrs(&[Attr::u8(CONFIG_ADAPTIVE, adaptive)], false);
            serde_json::to_value(&c).unwrap()
        };
        assert_eq!(conf(0), serde_json::json!({"adaptive": "off"}));
        assert_eq!(conf(1), serde_json::json!({"adaptive": "on"}));
        assert_eq!(conf(7), serde_json::json!({"adaptive": 7}));
        // and back to the kernel as the number it was
        let c = Config::from_attrs(&[Attr::u8(CONFIG_ADAPTIVE, 1)], false);
        assert_eq!(c.to_attrs(), vec![Attr::u8(CONFIG_ADAPTIVE, 1)]);
        // report alike.
        let conf = |report: u8| {
            let c = Config::from_attrs(&[Attr::u8(CONFIG_REPORT, report)], false);
            assert_eq!(c.to_attrs(), vec![Attr::u8(CONFIG_REPORT, report)]);
            serde_json::to_value(&c).unwrap()
        };
        assert_eq!(conf(0), serde_json::json!({"report": "off"}));
        assert_eq!(conf(1), serde_json::json!({"report": "on"}));
        assert_eq!(conf(2), serde_json::json!({"report": 2}));
    }

    #[test]
    fn overlay_is_config_set() {
        let attrs = attr::decode(&CONFIG_SET, &default_reply()).unwrap();
        let cur = Config::from_attrs(&attrs, true);
        let change = Config {
            k: Some(16),
            adaptive: Some(enum_val(ADAPTIVE, 0)),
            max_memory: Some(1 << 30),
            peer: Some(vec![Peer {
                prefix: Addr(vec![203, 0, 113, 0]),
                prefix_len: 24,
                addr: Addr(vec![198, 51, 100, 2]),
            }]),
            ..Default::default()
        };
        let got = cur.overlay(&change);
        let want = Config {
            k: Some(16),
            adaptive: Some(enum_val(ADAPTIVE, 0)),
            max_memory: Some(1 << 30),
            peer: change.peer.clone(),
            ..cur.clone()
        };
        assert_eq!(got, want);
        assert_eq!(got.reporter, Some(vec![]), "a list the change lacks stays");
        assert_eq!(cur.overlay(&Config::default()), cur);
    }

    #[test]
    fn unknown_enum_values_are_numbers() {
        let e = enum_val(ROLE, 7);
        assert_eq!(e.to_string(), "unknown(7)");
        assert_eq!(serde_json::to_value(e).unwrap(), serde_json::json!(7));
    }

    /// A stats-get reply's attributes (the stats set's, at the top level)
    /// as the kernel lays them out (uints in host order, x86: 4 octets, or
    /// 8 as nla_put_uint writes a value past u32), with the totals nest.
    pub(crate) fn stats_reply() -> Vec<u8> {
        vec![
            8, 0, 1, 0, 5, 0, 0, 0, // roce-local-in 5 (4 octets)
            12, 0, 7, 0, 3, 0, 0, 0, 0, 0, 0, 0, // flows-created 3 (8 octets)
            8, 0, 14, 0, 0, 1, 0, 0, // drop-msg-invalid 256
            8, 0, 18, 0, 2, 0, 0, 0, // flows-active 2
            12, 0, 19, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, // memory 4096
            32, 0, 20, 0x80, // totals | NLA_F_NESTED
            8, 0, 13, 0, 9, 0, 0, 0, // restored 9
            8, 0, 99, 0, 1, 2, 3, 4, // unknown id 99: skipped
            12, 0, 26, 0, 1, 0, 0, 0, 0, 0, 0, 0, // inject-failures 1
        ]
    }

    #[test]
    fn stats_with_totals_from_kernel_bytes() {
        let attrs = attr::decode(&STATS_SET, &stats_reply()).unwrap();
        let s = Stats::from_attrs(&attrs);
        assert_eq!(s.counters.get("flows-created"), Some(3));
        assert_eq!(s.counters.get("memory"), Some(4096));
        assert_eq!(s.counters.get("totals"), None, "a nest is no counter");
        let t = s.totals.as_ref().expect("totals");
        assert_eq!(t.counters.0, vec![("restored", 9), ("inject-failures", 1)]);
        assert!(t.by_type.is_absent() && s.by_type.is_absent());
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"roce-local-in":5,"flows-created":3,"drop-msg-invalid":256,"flows-active":2,"memory":4096,"totals":{"restored":9,"inject-failures":1}}"#
        );
        // An older module: no totals key at all.
        let old = Stats::from_attrs(&[Attr::u64(STATS_MALFORMED, 1)]);
        assert_eq!(serde_json::to_string(&old).unwrap(), r#"{"malformed":1}"#);
    }

    /// Every counter of the "msg-types" set, value = base + id.
    fn all_by_type(base: u64) -> Vec<Attr> {
        MSG_TYPES_SET
            .attrs
            .iter()
            .filter(|a| a.ty == AttrType::Uint)
            .map(|a| Attr::u64(a.id, base + u64::from(a.id)))
            .collect()
    }

    #[test]
    fn every_counter_in_spec_order_with_yaml_names() {
        // All counters of all three sets, value = id (by type: 100 + id in,
        // 200 + id out), through the wire and back.
        let mut fs: Vec<Attr> = FLOW_STATS_SET
            .attrs
            .iter()
            .filter(|a| a.ty == AttrType::Uint)
            .map(|a| Attr::u64(a.id, a.id.into()))
            .collect();
        // The nests first: the order on the wire does not matter.
        fs.insert(0, Attr::nest(FLOW_STATS_MSGS_OUT_BY_TYPE, all_by_type(200)));
        fs.insert(0, Attr::nest(FLOW_STATS_MSGS_IN_BY_TYPE, all_by_type(100)));
        let mut top: Vec<Attr> = STATS_SET
            .attrs
            .iter()
            .filter(|a| a.ty == AttrType::Uint)
            .rev() // the order on the wire does not matter
            .map(|a| Attr::u64(a.id, a.id.into()))
            .collect();
        top.push(Attr::nest(STATS_MSGS_OUT_BY_TYPE, all_by_type(200)));
        top.push(Attr::nest(STATS_TOTALS, fs.clone()));
        top.push(Attr::nest(STATS_MSGS_IN_BY_TYPE, all_by_type(100)));
        let bytes = attr::encode(&top);
        let s = Stats::from_attrs(&attr::decode(&STATS_SET, &bytes).unwrap());
        let j = serde_json::to_value(&s).unwrap();
        let keys: Vec<&str> = j.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        // Every attribute in spec order (the nests in their places).
        let want: Vec<&str> = STATS_SET
            .attrs
            .iter()
            .filter(|a| a.ty != AttrType::Pad)
            .map(|a| a.name)
            .collect();
        assert_eq!(keys, want);
        // As crem_core::nl's counter table lists them: a nest is an object.
        assert_eq!(keys.len(), stat::COUNTERS.len());
        for (k, c) in keys.iter().zip(stat::COUNTERS) {
            assert_eq!(*k, c.name);
            let nest = matches!(c.kind, CounterKind::Nest(_));
            assert_eq!(j[k].is_object(), nest, "{k}");
        }
        for a in STATS_SET.attrs.iter().filter(|a| a.ty == AttrType::Uint) {
            assert_eq!(j[a.name], u64::from(a.id), "{}", a.name);
        }
        // A "msg-types" object: every type in spec order.
        let types: Vec<&str> = MSG_TYPES_SET.attrs.iter().map(|a| a.name).collect();
        assert_eq!(types.len(), msg_type::N);
        let check_by_type = |o: &serde_json::Value, base: u64| {
            let o = o.as_object().unwrap();
            assert_eq!(o.keys().map(|k| k.as_str()).collect::<Vec<_>>(), types);
            for a in MSG_TYPES_SET.attrs {
                assert_eq!(o[a.name], base + u64::from(a.id), "{}", a.name);
            }
        };
        check_by_type(&j["msgs-in-by-type"], 100);
        check_by_type(&j["msgs-out-by-type"], 200);
        assert_eq!(j["msgs-in-by-type"]["repair"], 101);
        assert_eq!(j["msgs-out-by-type"]["other"], 211);

        let t = j["totals"].as_object().unwrap();
        let want: Vec<&str> = FLOW_STATS_SET.attrs.iter().map(|a| a.name).collect();
        assert_eq!(t.keys().map(|k| k.as_str()).collect::<Vec<_>>(), want);
        assert_eq!(t.len(), flow_stat::COUNTERS.len());
        assert_eq!(
            t.keys().next_back().map(|k| k.as_str()),
            flow_stat::COUNTERS.last().map(|c| c.name)
        );
        for a in FLOW_STATS_SET
            .attrs
            .iter()
            .filter(|a| a.ty == AttrType::Uint)
        {
            assert_eq!(t[a.name], u64::from(a.id), "{}", a.name);
        }
        check_by_type(&t["msgs-in-by-type"], 100);
        check_by_type(&t["msgs-out-by-type"], 200);

        // A flow's stats nest decodes to the same object.
        let bytes = attr::encode(&[Attr::u32(FLOW_ID, 1), Attr::nest(FLOW_STATS, fs)]);
        let f = Flow::from_attrs(&attr::decode(&FLOW_SET, &bytes).unwrap());
        assert_eq!(serde_json::to_value(f.stats.unwrap()).unwrap(), j["totals"]);
    }

    /// A stats-get reply's attributes with the by-type nests, by hand: the
    /// CREM socket's in and out, and one in the totals.
    pub(crate) fn stats_by_type_reply() -> Vec<u8> {
        vec![
            8, 0, 12, 0, 14, 0, 0, 0, // msgs-in 14
            8, 0, 13, 0, 3, 0, 0, 0, // msgs-out 3
            24, 0, 20, 0x80, // totals | NLA_F_NESTED
            8, 0, 19, 0, 5, 0, 0, 0, // msgs-in 5
            12, 0, 28, 0x80, // msgs-in-by-type | NLA_F_NESTED
            8, 0, 1, 0, 5, 0, 0, 0, // repair 5
            48, 0, 25, 0x80, // msgs-in-by-type | NLA_F_NESTED
            12, 0, 1, 0, 12, 0, 0, 0, 0, 0, 0, 0, // repair 12 (8 octets)
            8, 0, 2, 0, 1, 0, 0, 0, // hello 1
            8, 0, 3, 0, 0, 0, 0, 0, // hello-ack 0
            8, 0, 99, 0, 1, 2, 3, 4, // unknown id 99: skipped
            8, 0, 11, 0, 1, 0, 0, 0, // other 1
            20, 0, 26, 0x80, // msgs-out-by-type | NLA_F_NESTED
            8, 0, 3, 0, 1, 0, 0, 0, // hello-ack 1
            8, 0, 7, 0, 0, 1, 0, 0, // loss-report 256
        ]
    }

    #[test]
    fn stats_with_by_type_from_kernel_bytes() {
        let s = Stats::from_attrs(&attr::decode(&STATS_SET, &stats_by_type_reply()).unwrap());
        assert_eq!(s.counters.get("msgs-in"), Some(14));
        assert_eq!(
            s.counters.get("msgs-in-by-type"),
            None,
            "a nest is no counter"
        );
        let bi = s.by_type.msgs_in.as_ref().expect("msgs-in-by-type");
        assert_eq!(
            bi.0,
            vec![("repair", 12), ("hello", 1), ("hello-ack", 0), ("other", 1)]
        );
        let bo = s.by_type.msgs_out.as_ref().expect("msgs-out-by-type");
        assert_eq!(bo.0, vec![("hello-ack", 1), ("loss-report", 256)]);
        assert_eq!(s.by_type.count("hello-ack"), (Some(0), Some(1)));
        assert_eq!(s.by_type.count("close"), (Some(0), Some(0)));
        assert_eq!(
            s.by_type.nonzero_rows(),
            vec![
                ("repair", Some(12), Some(0)),
                ("hello", Some(1), Some(0)),
                ("hello-ack", Some(0), Some(1)),
                ("loss-report", Some(0), Some(256)),
                ("other", Some(1), Some(0)),
            ]
        );
        let t = s.totals.as_ref().expect("totals");
        assert_eq!(t.counters.0, vec![("msgs-in", 5)]);
        assert_eq!(t.by_type.msgs_in.as_ref().unwrap().0, vec![("repair", 5)]);
        assert_eq!(t.by_type.msgs_out, None);
        assert_eq!(t.by_type.count("repair"), (Some(5), None));
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"msgs-in":14,"msgs-out":3,"totals":{"msgs-in":5,"msgs-in-by-type":{"repair":5}},"msgs-in-by-type":{"repair":12,"hello":1,"hello-ack":0,"other":1},"msgs-out-by-type":{"hello-ack":1,"loss-report":256}}"#
        );
        // Every JSON key of the by-type objects is a msg-types name.
        let j = serde_json::to_value(&s).unwrap();
        for k in j["msgs-out-by-type"].as_object().unwrap().keys() {
            assert!(MSG_TYPES_SET.by_name(k).is_some(), "{k}");
        }
        // A by-type counter of the wrong size (neither 4 nor 8) is
        // refused, named.
        let e = attr::decode(&STATS_SET, &[12, 0, 25, 0x80, 6, 0, 1, 0, 1, 0, 0, 0]).unwrap_err();
        assert!(e.to_string().contains("msg-types.repair"), "{e}");
    }

    /// One message of a flow-get dump, its flow attributes (at the top
    /// level), new attributes included, by hand.
    pub(crate) fn flow_reply() -> Vec<u8> {
        vec![
            8, 0, 2, 0, 7, 0, 0, 0, // id 7
            8, 0, 3, 0, 192, 0, 2, 1, // src
            8, 0, 4, 0, 203, 0, 113, 1, // dst
            8, 0, 5, 0, 0x11, 0, 0, 0, // dest-qp 17
            5, 0, 6, 0, 1, 0, 0, 0, // state protected
            5, 0, 7, 0, 3, 0, 0, 0, // config-id 3
            5, 0, 8, 0, 1, 0, 0, 0, // scheme 1
            5, 0, 9, 0, 32, 0, 0, 0, // k 32
            5, 0, 10, 0, 2, 0, 0, 0, // m 2
            6, 0, 11, 0, 0, 4, 0, 0, // symbol-len 1024
            8, 0, 12, 0, 0xa8, 0x61, 0, 0, // srtt-us 25000
            8, 0, 13, 0, 0xb0, 0x04, 0, 0, // loss-ppm 1200
            5, 0, 14, 0, 1, 0, 0, 0, // loss-class transmission
            5, 0, 15, 0, 0, 0, 0, 0, // breaker normal
            4, 0, 1, 0, // pad
            12, 0, 16, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, // memory 1 MiB
            5, 0, 17, 0, 1, 0, 0, 0, // side crf
            8, 0, 18, 0, 198, 51, 100, 2, // peer
            4, 0, 1, 0, // pad
            12, 0, 19, 0, 0x39, 0x30, 0, 0, 0, 0, 0, 0, // age-ms 12345
            28, 0, 20, 0x80, // stats | NLA_F_NESTED
            8, 0, 11, 0, 40, 0, 0, 0, // received 40
            8, 0, 13, 0, 2, 0, 0, 0, // restored 2
            8, 0, 25, 0, 2, 0, 0, 0, // injected 2
            8, 0, 30, 0, 0x20, 0x4e, 0, 0, // min-rtt-us 20000
        ]
    }

    #[test]
    fn flow_with_side_peer_age_and_stats() {
        let f = Flow::from_attrs(&attr::decode(&FLOW_SET, &flow_reply()).unwrap());
        assert_eq!(f.side.unwrap().to_string(), "crf");
        assert_eq!(f.peer.as_ref().unwrap().to_string(), "198.51.100.2");
        assert_eq!(f.age_ms, Some(12345));
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"id": 7, "src": "192.0.2.1", "dst": "203.0.113.1",
                "dest-qp": 17, "state": "protected", "config-id": 3, "scheme": "cauchy",
                "k": 32, "m": 2, "symbol-len": 1024, "srtt-us": 25000,
                "loss-ppm": 1200, "loss-class": "transmission", "breaker": "normal",
                "memory": 1048576, "side": "crf", "peer": "198.51.100.2",
                "age-ms": 12345,
                "stats": {"received": 40, "restored": 2, "injected": 2},
                "min-rtt-us": 20000})
        );
        // Keys in spec order.
        let j = serde_json::to_value(&f).unwrap();
        let keys: Vec<&str> = j.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let order: Vec<&str> = FLOW_SET.attrs.iter().map(|a| a.name).collect();
        let mut sorted = keys.clone();
        sorted.sort_by_key(|k| order.iter().position(|o| o == k).unwrap());
        assert_eq!(keys, sorted);
    }

    #[test]
    fn flow_unknown_enums_ipv6_peer_and_empty_peer() {
        let mut peer6 = vec![20, 0, 18, 0];
        peer6.extend_from_slice(&"2001:db8::2".parse::<Ipv6Addr>().unwrap().octets());
        let mut buf: Vec<u8> = vec![
            5, 0, 17, 0, 9, 0, 0, 0, // side 9: unknown
            5, 0, 6, 0, 200, 0, 0, 0, // state 200: unknown
            5, 0, 15, 0, 2, 0, 0, 0, // breaker 2: unknown
        ];
        buf.extend_from_slice(&peer6);
        let f = Flow::from_attrs(&attr::decode(&FLOW_SET, &buf).unwrap());
        assert_eq!(f.side.unwrap().to_string(), "unknown(9)");
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"state": 200, "breaker": 2, "side": 9, "peer": "2001:db8::2"})
        );
        // An empty peer (not known yet) is "" like YNL's empty hex.
        let f = Flow::from_attrs(&attr::decode(&FLOW_SET, &[4, 0, 18, 0]).unwrap());
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"peer": ""})
        );
    }

    #[test]
    fn flow_rejects_misfit_new_attributes() {
        // age-ms (a u64) as 4 octets, a stats counter (a uint) as 2.
        let e = attr::decode(&FLOW_SET, &[8, 0, 19, 0, 1, 0, 0, 0]).unwrap_err();
        assert!(e.to_string().contains("flow.age-ms"), "{e}");
        let e = attr::decode(&FLOW_SET, &[12, 0, 20, 0x80, 6, 0, 1, 0, 1, 0, 0, 0]).unwrap_err();
        assert!(e.to_string().contains("flow-stats.sources"), "{e}");
    }

    #[test]
    fn stats_and_flow_json() {
        let buf: Vec<u8> = vec![
            8, 0, 1, 0, 5, 0, 0, 0, // roce-local-in 5
            12, 0, 6, 0, 1, 0, 0, 0, 0, 0, 0, 0, // malformed 1
        ];
        let s = Stats::from_attrs(&attr::decode(&STATS_SET, &buf).unwrap());
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"roce-local-in":5,"malformed":1}"#
        );
        let flow: Vec<u8> = vec![
            8, 0, 2, 0, 7, 0, 0, 0, // id 7
            8, 0, 3, 0, 192, 0, 2, 1, // src
            8, 0, 4, 0, 203, 0, 113, 1, // dst
            8, 0, 5, 0, 0x11, 0, 0, 0, // dest-qp 17
            5, 0, 6, 0, 1, 0, 0, 0, // state protected
            5, 0, 8, 0, 1, 0, 0, 0, // scheme 1
            5, 0, 14, 0, 2, 0, 0, 0, // loss-class congestion
            5, 0, 15, 0, 1, 0, 0, 0, // breaker tripped
            4, 0, 1, 0, // pad
            12, 0, 16, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, // memory 4096
        ];
        let f = Flow::from_attrs(&attr::decode(&FLOW_SET, &flow).unwrap());
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"id": 7, "src": "192.0.2.1", "dst": "203.0.113.1",
                "dest-qp": 17, "state": "protected", "scheme": "cauchy",
                "loss-class": "congestion", "breaker": "tripped", "memory": 4096})
        );
    }
}
