//! The "crem" generic netlink family (`netlink/crem.yaml`) as Rust data, for
//! the kernel module and crem-ctl alike: the family name and version, the
//! command ids, the enums of `definitions`, every attribute set as a table
//! of [`AttrSpec`] (id, YAML name, type, multi-attr, enum, checks, doc), and
//! the counter sets (stats, flow-stats, msg-types) as tables a writer can
//! iterate, with an index per counter.
//!
//! The constants and tables are in `nl/generated.rs`, written by
//! `netlink/gen_rust.py` from the spec (`make netlink-gen`; `make check`'s
//! netlink-spec step fails when it is stale) and re-exported here; its head
//! comment gives the naming rules. This file holds the types of those tables
//! and the lookups on them. Like all of crem-core: no `std`, no allocation,
//! no floating point, no panics.

mod generated;
pub use self::generated::*;

/// Wire type of an attribute (the YAML `type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrType {
    /// `pad`: alignment padding for 64-bit attributes, never a value.
    Pad,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64` (aligned with the set's pad attribute).
    U64,
    /// `uint`: a `u64` value in 4 octets, or 8 once it needs them (no pad).
    Uint,
    /// `binary`: octets.
    Binary,
    /// `nest`: the attributes of another set (`nested-attributes`).
    Nest(&'static AttrSet),
}

impl AttrType {
    /// The YAML spelling.
    pub const fn yaml_name(self) -> &'static str {
        match self {
            AttrType::Pad => "pad",
            AttrType::U8 => "u8",
            AttrType::U16 => "u16",
            AttrType::U32 => "u32",
            AttrType::U64 => "u64",
            AttrType::Uint => "uint",
            AttrType::Binary => "binary",
            AttrType::Nest(_) => "nest",
        }
    }

    /// Largest value of an unsigned integer type.
    pub const fn max_value(self) -> Option<u64> {
        match self {
            AttrType::U8 => Some(u8::MAX as u64),
            AttrType::U16 => Some(u16::MAX as u64),
            AttrType::U32 => Some(u32::MAX as u64),
            AttrType::U64 | AttrType::Uint => Some(u64::MAX),
            _ => None,
        }
    }
}

/// One attribute of a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrSpec {
    /// Attribute type number within its set.
    pub id: u16,
    /// YAML name: also crem-ctl's JSON field name.
    pub name: &'static str,
    /// Wire type.
    pub ty: AttrType,
    /// `multi-attr`: the attribute may repeat.
    pub multi: bool,
    /// Name of the enum in `definitions` its value is, if any.
    pub enum_name: Option<&'static str>,
    /// `checks: min` (the kernel policy's range).
    pub min: Option<u64>,
    /// `checks: max` (the kernel policy's range).
    pub max: Option<u64>,
    /// The spec's `doc`, empty if it has none.
    pub doc: &'static str,
}

/// An attribute set.
#[derive(Debug, PartialEq, Eq)]
pub struct AttrSet {
    /// YAML name.
    pub name: &'static str,
    /// Its attributes in spec order.
    pub attrs: &'static [AttrSpec],
}

impl AttrSet {
    /// The attribute with type number `id`.
    pub fn by_id(&self, id: u16) -> Option<&'static AttrSpec> {
        self.attrs.iter().find(|a| a.id == id)
    }

    /// The attribute called `name` (its YAML name).
    pub fn by_name(&self, name: &str) -> Option<&'static AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }
}

/// One reported attribute of a counter set (stats, flow-stats, msg-types),
/// an entry of its `COUNTERS` table (every attribute, in spec order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    /// Attribute type number.
    pub id: u16,
    /// YAML name.
    pub name: &'static str,
    /// A value or a nest.
    pub kind: CounterKind,
}

/// What a counter set's attribute holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterKind {
    /// A counter (a `uint` attribute): its index among the set's counters
    /// (0 to the set module's `N`, in spec order; the module names each
    /// index).
    Value(usize),
    /// A nest of another counter set (e.g. msg-types in flow-stats).
    Nest(&'static AttrSet),
}

/// Name of value `v` of enum `e` (one of the generated name tables), if it
/// has one.
pub fn enum_name(e: &[&'static str], v: u64) -> Option<&'static str> {
    usize::try_from(v).ok().and_then(|i| e.get(i).copied())
}

/// Value of the entry called `name` in enum `e`.
pub fn enum_value(e: &[&str], name: &str) -> Option<u8> {
    e.iter()
        .position(|n| *n == name)
        .and_then(|i| u8::try_from(i).ok())
}

/// Name of an operation by command number.
pub fn op_name(cmd: u8) -> Option<&'static str> {
    OPS.iter().find(|(_, c)| *c == cmd).map(|(n, _)| *n)
}

/// The attribute set of command `cmd`'s messages (their top level).
pub fn op_set(cmd: u8) -> Option<&'static AttrSet> {
    OP_SETS.iter().find(|(c, _)| *c == cmd).map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        assert_eq!(enum_name(ROLE, 2), Some("gateway"));
        assert_eq!(enum_name(ROLE, 3), None);
        assert_eq!(enum_name(ROLE, u64::MAX), None);
        assert_eq!(enum_value(RECOVERY, "selective-repeat"), Some(1));
        assert_eq!(enum_value(RECOVERY, "nope"), None);
        assert_eq!(op_name(CMD_FLOW_GET), Some("flow-get"));
        assert_eq!(op_set(CMD_FLOW_GET).map(|s| s.name), Some("flow"));
        assert_eq!(op_set(CMD_FLOW_CHANGE_NTF).map(|s| s.name), Some("flow"));
        assert_eq!(
            op_set(CMD_CONFIG_CHANGE_NTF).map(|s| s.name),
            Some("config")
        );
        assert_eq!(op_set(CMD_STATS_RESET).map(|s| s.name), Some("stats"));
        assert_eq!(op_set(0), None);
        assert_eq!(op_name(0), None);
        assert_eq!(CONFIG_SET.by_id(CONFIG_PORT).map(|a| a.name), Some("port"));
        assert_eq!(CONFIG_SET.by_name("port").map(|a| a.id), Some(CONFIG_PORT));
        assert_eq!(CONFIG_SET.by_id(0), None);
        assert_eq!(AttrType::U16.max_value(), Some(65535));
        assert_eq!(AttrType::Nest(&PEER_SET).yaml_name(), "nest");
    }

    /// Each counter set's table: every attribute, in spec order; the
    /// counters numbered 0..N in that order, as the index constants say.
    #[test]
    fn counter_tables_follow_their_sets() {
        for (set, counters, n) in [
            (&STATS_SET, stat::COUNTERS, stat::N),
            (&FLOW_STATS_SET, flow_stat::COUNTERS, flow_stat::N),
            (&MSG_TYPES_SET, msg_type::COUNTERS, msg_type::N),
        ] {
            let mut attrs = set.attrs.iter();
            let mut next = 0;
            for c in counters {
                let a = attrs.next().unwrap();
                assert_eq!((c.id, c.name), (a.id, a.name), "{}", set.name);
                match (c.kind, a.ty) {
                    (CounterKind::Value(i), AttrType::Uint) => {
                        assert_eq!(i, next, "{}.{}", set.name, a.name);
                        next += 1;
                    }
                    (CounterKind::Nest(s), AttrType::Nest(t)) => assert_eq!(s, t),
                    _ => panic!("{}.{}: {:?} for {:?}", set.name, a.name, c.kind, a.ty),
                }
            }
            assert!(attrs.next().is_none(), "{}", set.name);
            assert_eq!(next, n, "{}", set.name);
        }
        assert_eq!(flow_stat::SOURCES, 0);
        assert_eq!(flow_stat::COUNTERS[0].id, FLOW_STATS_SOURCES);
        assert_eq!(msg_type::REPAIR, 0);
        assert_eq!(msg_type::OTHER, msg_type::N - 1);
    }
}
