//! The "crem" generic netlink family as crem-ctl knows it: the numeric
//! values of `include/uapi/linux/crem.h` and, per attribute set, a table of
//! (id, YAML name, type, multi-attr, checks) that drives encoding, decoding,
//! local range checks and the JSON field names.
//!
//! Everything here is transcribed from `netlink/crem.yaml`; the unit test
//! `tests::matches_yaml_spec` parses that YAML and fails on any difference,
//! so a spec change that is not mirrored here breaks `cargo test`.

/// Generic netlink family name (`CREM_FAMILY_NAME`).
pub const FAMILY_NAME: &str = "crem";
/// Family version (`CREM_FAMILY_VERSION`).
pub const FAMILY_VERSION: u8 = 1;
/// Multicast group of the notifications (config-changed, flow-up, flow-down).
pub const MCGRP_EVENTS: &str = "events";

// Commands (`enum { CREM_CMD_* }`).
pub const CMD_CONFIG_GET: u8 = 1;
pub const CMD_CONFIG_SET: u8 = 2;
pub const CMD_STATS_GET: u8 = 3;
pub const CMD_STATS_RESET: u8 = 4;
pub const CMD_FLOW_GET: u8 = 5;
pub const CMD_CONFIG_CHANGED: u8 = 6;
pub const CMD_FLOW_DEL: u8 = 7;
pub const CMD_FLOW_UP: u8 = 8;
pub const CMD_FLOW_DOWN: u8 = 9;
pub const CMD_FLOW_CHANGE: u8 = 10;
pub const CMD_FLOW_SET: u8 = 11;
pub const CMD_FLOW_NEW: u8 = 12;
pub const CMD_FLOW_RESET: u8 = 13;

/// All operations of the spec, by YAML name (for messages and the test).
pub const OPS: &[(&str, u8)] = &[
    ("config-get", CMD_CONFIG_GET),
    ("config-set", CMD_CONFIG_SET),
    ("stats-get", CMD_STATS_GET),
    ("stats-reset", CMD_STATS_RESET),
    ("flow-get", CMD_FLOW_GET),
    ("config-changed", CMD_CONFIG_CHANGED),
    ("flow-del", CMD_FLOW_DEL),
    ("flow-up", CMD_FLOW_UP),
    ("flow-down", CMD_FLOW_DOWN),
    ("flow-change", CMD_FLOW_CHANGE),
    ("flow-set", CMD_FLOW_SET),
    ("flow-new", CMD_FLOW_NEW),
    ("flow-reset", CMD_FLOW_RESET),
];

// enum crem_role / crem_recovery / crem_flow_state / crem_loss_class /
// crem_breaker / crem_side: entry names in value order (value = index).
pub const ROLE: &[&str] = &["disabled", "host", "gateway"];
pub const RECOVERY: &[&str] = &["coded", "selective-repeat", "both"];
pub const FLOW_STATES: &[&str] = &["negotiating", "protected", "unprotected", "closing"];
pub const LOSS_CLASS: &[&str] = &["none", "transmission", "congestion"];
pub const BREAKER: &[&str] = &["normal", "tripped"];
pub const SIDE: &[&str] = &["csf", "crf"];
pub const FLOW_KIND: &[&str] = &["requests", "responses"];
pub const FLOW_EVENT: &[&str] = &["breaker-tripped", "breaker-cleared", "close-received"];
/// The CREM FEC Schemes registry, as `model::scheme_name` names them too.
pub const FEC_SCHEME: &[&str] = &["source-copy", "cauchy", "xor"];
pub const ADAPTIVE: &[&str] = &["off", "on"];

/// The enums of the spec's `definitions`, by YAML name (for the YAML test).
#[cfg_attr(not(test), allow(dead_code))]
pub const ENUMS: &[(&str, &[&str])] = &[
    ("role", ROLE),
    ("recovery", RECOVERY),
    ("flow-state", FLOW_STATES),
    ("loss-class", LOSS_CLASS),
    ("breaker", BREAKER),
    ("side", SIDE),
    ("flow-kind", FLOW_KIND),
    ("flow-event", FLOW_EVENT),
    ("fec-scheme", FEC_SCHEME),
    ("adaptive", ADAPTIVE),
];

// Attribute set "peer" (CREM_A_PEER_*).
pub const PEER_PREFIX: u16 = 1;
pub const PEER_PREFIX_LEN: u16 = 2;
pub const PEER_ADDR: u16 = 3;

// Attribute set "config" (CREM_A_CONFIG_*).
pub const CONFIG_PORT: u16 = 1;
pub const CONFIG_ROLE: u16 = 2;
pub const CONFIG_RECOVERY: u16 = 3;
pub const CONFIG_ADAPTIVE: u16 = 4;
pub const CONFIG_K: u16 = 5;
pub const CONFIG_M: u16 = 6;
pub const CONFIG_SYMBOL_LEN: u16 = 7;
pub const CONFIG_EPSILON_PPB: u16 = 8;
pub const CONFIG_M_CONG: u16 = 9;
pub const CONFIG_HOLD_US: u16 = 10;
pub const CONFIG_MAX_FLOWS: u16 = 11;
pub const CONFIG_MAX_MEMORY: u16 = 12;
pub const CONFIG_REPORTER: u16 = 13;
pub const CONFIG_PEER: u16 = 14;
pub const CONFIG_PAD: u16 = 15;
pub const CONFIG_MAX_BDP: u16 = 16;

// Attribute set "stats" (CREM_A_STATS_*).
pub const STATS_PAD: u16 = 1;
pub const STATS_ROCE_LOCAL_IN: u16 = 2;
pub const STATS_ROCE_FORWARD: u16 = 3;
pub const STATS_ROCE_LOCAL_OUT: u16 = 4;
pub const STATS_SOURCES: u16 = 5;
pub const STATS_NON_SOURCES: u16 = 6;
pub const STATS_MALFORMED: u16 = 7;
pub const STATS_FLOWS_CREATED: u16 = 8;
pub const STATS_DROP_FLOW_LIMIT: u16 = 9;
pub const STATS_DROP_FLOW_ALLOC: u16 = 10;
pub const STATS_DROP_MEMORY: u16 = 11;
pub const STATS_DROP_LINEARIZE: u16 = 12;
pub const STATS_MSGS_IN: u16 = 13;
pub const STATS_MSGS_OUT: u16 = 14;
pub const STATS_DROP_MSG_INVALID: u16 = 15;
pub const STATS_DROP_MSG_PEER: u16 = 16;
pub const STATS_DROP_MSG_NO_FLOW: u16 = 17;
pub const STATS_DROP_SEND: u16 = 18;
pub const STATS_FLOWS_ACTIVE: u16 = 19;
pub const STATS_MEMORY: u16 = 20;
pub const STATS_TOTALS: u16 = 21;
pub const STATS_FLOWS_REMOVED: u16 = 22;
pub const STATS_DROP_NOTIFY: u16 = 23;
pub const STATS_FLOWS_EXPIRED: u16 = 24;
pub const STATS_PATH_REPORTS: u16 = 25;
pub const STATS_MSGS_IN_BY_TYPE: u16 = 26;
pub const STATS_MSGS_OUT_BY_TYPE: u16 = 27;
pub const STATS_GSO_SEGMENTED: u16 = 28;
pub const STATS_DROP_GSO: u16 = 29;
pub const STATS_SKIP_BRIDGED: u16 = 30;
pub const STATS_DROP_DEV_GONE: u16 = 31;

// Attribute set "msg-types" (CREM_A_MSG_TYPES_*): CREM messages by type.
pub const MSG_TYPES_PAD: u16 = 1;
pub const MSG_TYPES_REPAIR: u16 = 2;
pub const MSG_TYPES_HELLO: u16 = 3;
pub const MSG_TYPES_HELLO_ACK: u16 = 4;
pub const MSG_TYPES_PARAM_UPDATE: u16 = 5;
pub const MSG_TYPES_PARAM_ACK: u16 = 6;
pub const MSG_TYPES_REPAIR_REQUEST: u16 = 7;
pub const MSG_TYPES_LOSS_REPORT: u16 = 8;
pub const MSG_TYPES_PATH_REPORT: u16 = 9;
pub const MSG_TYPES_CLOSE: u16 = 10;
pub const MSG_TYPES_TC_AETH: u16 = 11;
pub const MSG_TYPES_OTHER: u16 = 12;

// Attribute set "flow-stats" (CREM_A_FLOW_STATS_*).
pub const FLOW_STATS_PAD: u16 = 1;
pub const FLOW_STATS_SOURCES: u16 = 2;
pub const FLOW_STATS_SOURCE_OCTETS: u16 = 3;
pub const FLOW_STATS_UNPROTECTED: u16 = 4;
pub const FLOW_STATS_REPAIRS_SENT: u16 = 5;
pub const FLOW_STATS_CODED_RETX: u16 = 6;
pub const FLOW_STATS_SOURCE_COPIES: u16 = 7;
pub const FLOW_STATS_REPAIR_OCTETS: u16 = 8;
pub const FLOW_STATS_REQUESTS_RECEIVED: u16 = 9;
pub const FLOW_STATS_FALLBACK_REQUESTS_RECEIVED: u16 = 10;
pub const FLOW_STATS_BLOCKS_GIVEN_UP: u16 = 11;
pub const FLOW_STATS_RECEIVED: u16 = 12;
pub const FLOW_STATS_REPAIRS_RECEIVED: u16 = 13;
pub const FLOW_STATS_RESTORED: u16 = 14;
pub const FLOW_STATS_ICRC_FAILURES: u16 = 15;
pub const FLOW_STATS_REQUESTS_SENT: u16 = 16;
pub const FLOW_STATS_FALLBACKS: u16 = 17;
pub const FLOW_STATS_ABANDONED: u16 = 18;
pub const FLOW_STATS_BLOCKS_INCOMPLETE: u16 = 19;
pub const FLOW_STATS_MSGS_IN: u16 = 20;
pub const FLOW_STATS_MSGS_OUT: u16 = 21;
pub const FLOW_STATS_SEND_FAILURES: u16 = 22;
pub const FLOW_STATS_STORE_FULL: u16 = 23;
pub const FLOW_STATS_ALLOC_FAILURES: u16 = 24;
pub const FLOW_STATS_HELD_DROPPED: u16 = 25;
pub const FLOW_STATS_INJECTED: u16 = 26;
pub const FLOW_STATS_INJECT_FAILURES: u16 = 27;
pub const FLOW_STATS_CODED_RETX_LOST: u16 = 28;
pub const FLOW_STATS_MSGS_IN_BY_TYPE: u16 = 29;
pub const FLOW_STATS_MSGS_OUT_BY_TYPE: u16 = 30;
pub const FLOW_STATS_REPAIRS_CE: u16 = 31;
pub const FLOW_STATS_REPAIR_PATH_SIGNALS: u16 = 32;
pub const FLOW_STATS_RETX_BUDGET_LIMITED: u16 = 33;
pub const FLOW_STATS_RETX_BUDGET_SYMBOLS: u16 = 34;
pub const FLOW_STATS_RESTORE_NO_HEADER: u16 = 35;
pub const FLOW_STATS_REPAIR_RATE_LIMITED: u16 = 36;
pub const FLOW_STATS_STORE_OVERWRITTEN: u16 = 37;
pub const FLOW_STATS_HELD_OVERWRITTEN: u16 = 38;

// Attribute set "flow" (CREM_A_FLOW_*).
pub const FLOW_PAD: u16 = 1;
pub const FLOW_ID: u16 = 2;
pub const FLOW_SRC: u16 = 3;
pub const FLOW_DST: u16 = 4;
pub const FLOW_DEST_QP: u16 = 5;
pub const FLOW_STATE: u16 = 6;
pub const FLOW_CONFIG_ID: u16 = 7;
pub const FLOW_SCHEME: u16 = 8;
pub const FLOW_K: u16 = 9;
pub const FLOW_M: u16 = 10;
pub const FLOW_SYMBOL_LEN: u16 = 11;
pub const FLOW_SRTT_US: u16 = 12;
pub const FLOW_LOSS_PPM: u16 = 13;
pub const FLOW_LOSS_CLASS: u16 = 14;
pub const FLOW_BREAKER: u16 = 15;
pub const FLOW_MEMORY: u16 = 16;
pub const FLOW_SIDE: u16 = 17;
pub const FLOW_PEER: u16 = 18;
pub const FLOW_AGE_MS: u16 = 19;
pub const FLOW_STATS: u16 = 20;
pub const FLOW_KIND_ATTR: u16 = 21;
pub const FLOW_EVENT_ATTR: u16 = 22;
pub const FLOW_CLOSE_REASON: u16 = 23;
pub const FLOW_PINNED: u16 = 24;
pub const FLOW_SCHEMES: u16 = 25;
pub const FLOW_MAX_K: u16 = 26;
pub const FLOW_MAX_M: u16 = 27;
pub const FLOW_MAX_SYMBOL_LEN: u16 = 28;
pub const FLOW_MAX_OPEN_BLOCKS: u16 = 29;
pub const FLOW_MIN_RTT_US: u16 = 30;
pub const FLOW_LAST_MSG_MS: u16 = 31;
pub const FLOW_RDMA_MTU: u16 = 32;
pub const FLOW_RDMA_MTU_EXACT: u16 = 33;

// Attribute set "cmd" (CREM_A_CMD_*).
pub const CMD_A_CONFIG: u16 = 1;
pub const CMD_A_STATS: u16 = 2;
pub const CMD_A_FLOW: u16 = 3;

/// Wire type of an attribute (the YAML `type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrType {
    Pad,
    U8,
    U16,
    U32,
    U64,
    Binary,
    Nest(&'static AttrSet),
}

impl AttrType {
    /// The YAML spelling (for the YAML test).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn yaml_name(self) -> &'static str {
        match self {
            AttrType::Pad => "pad",
            AttrType::U8 => "u8",
            AttrType::U16 => "u16",
            AttrType::U32 => "u32",
            AttrType::U64 => "u64",
            AttrType::Binary => "binary",
            AttrType::Nest(_) => "nest",
        }
    }

    /// Largest value of an unsigned integer type.
    pub fn max_value(self) -> Option<u64> {
        match self {
            AttrType::U8 => Some(u8::MAX as u64),
            AttrType::U16 => Some(u16::MAX as u64),
            AttrType::U32 => Some(u32::MAX as u64),
            AttrType::U64 => Some(u64::MAX),
            _ => None,
        }
    }
}

/// One attribute of a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrSpec {
    pub id: u16,
    /// YAML name: also the JSON field name.
    pub name: &'static str,
    pub ty: AttrType,
    pub multi: bool,
    /// Name of the enum in `definitions`, if any.
    pub enum_name: Option<&'static str>,
    /// `checks: min` / `checks: max` (the kernel policy's range).
    pub min: Option<u64>,
    pub max: Option<u64>,
}

/// An attribute set.
#[derive(Debug, PartialEq, Eq)]
pub struct AttrSet {
    pub name: &'static str,
    pub attrs: &'static [AttrSpec],
}

impl AttrSet {
    pub fn by_id(&self, id: u16) -> Option<&'static AttrSpec> {
        self.attrs.iter().find(|a| a.id == id)
    }
    pub fn by_name(&self, name: &str) -> Option<&'static AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }
}

const fn a(id: u16, name: &'static str, ty: AttrType) -> AttrSpec {
    AttrSpec {
        id,
        name,
        ty,
        multi: false,
        enum_name: None,
        min: None,
        max: None,
    }
}

const fn range(mut s: AttrSpec, min: Option<u64>, max: Option<u64>) -> AttrSpec {
    s.min = min;
    s.max = max;
    s
}

const fn en(mut s: AttrSpec, e: &'static str) -> AttrSpec {
    s.enum_name = Some(e);
    s
}

const fn multi(mut s: AttrSpec) -> AttrSpec {
    s.multi = true;
    s
}

use AttrType::*;

pub static PEER_SET: AttrSet = AttrSet {
    name: "peer",
    attrs: &[
        a(PEER_PREFIX, "prefix", Binary),
        range(a(PEER_PREFIX_LEN, "prefix-len", U8), None, Some(128)),
        a(PEER_ADDR, "addr", Binary),
    ],
};

pub static CONFIG_SET: AttrSet = AttrSet {
    name: "config",
    attrs: &[
        a(CONFIG_PORT, "port", U16),
        range(en(a(CONFIG_ROLE, "role", U8), "role"), None, Some(2)),
        range(
            en(a(CONFIG_RECOVERY, "recovery", U8), "recovery"),
            None,
            Some(2),
        ),
        range(
            en(a(CONFIG_ADAPTIVE, "adaptive", U8), "adaptive"),
            None,
            Some(1),
        ),
        range(a(CONFIG_K, "k", U8), Some(1), None),
        a(CONFIG_M, "m", U8),
        a(CONFIG_SYMBOL_LEN, "symbol-len", U16),
        range(
            a(CONFIG_EPSILON_PPB, "epsilon-ppb", U32),
            Some(1),
            Some(1_000_000_000),
        ),
        a(CONFIG_M_CONG, "m-cong", U8),
        range(a(CONFIG_HOLD_US, "hold-us", U32), None, Some(1_000_000)),
        range(a(CONFIG_MAX_FLOWS, "max-flows", U32), None, Some(65_536)),
        range(
            a(CONFIG_MAX_MEMORY, "max-memory", U64),
            None,
            Some(64 << 30),
        ),
        multi(a(CONFIG_REPORTER, "reporter", Binary)),
        multi(a(CONFIG_PEER, "peer", Nest(&PEER_SET))),
        a(CONFIG_PAD, "pad", Pad),
        range(a(CONFIG_MAX_BDP, "max-bdp", U32), Some(64), Some(1 << 19)),
    ],
};

pub static STATS_SET: AttrSet = AttrSet {
    name: "stats",
    attrs: &[
        a(STATS_PAD, "pad", Pad),
        a(STATS_ROCE_LOCAL_IN, "roce-local-in", U64),
        a(STATS_ROCE_FORWARD, "roce-forward", U64),
        a(STATS_ROCE_LOCAL_OUT, "roce-local-out", U64),
        a(STATS_SOURCES, "sources", U64),
        a(STATS_NON_SOURCES, "non-sources", U64),
        a(STATS_MALFORMED, "malformed", U64),
        a(STATS_FLOWS_CREATED, "flows-created", U64),
        a(STATS_DROP_FLOW_LIMIT, "drop-flow-limit", U64),
        a(STATS_DROP_FLOW_ALLOC, "drop-flow-alloc", U64),
        a(STATS_DROP_MEMORY, "drop-memory", U64),
        a(STATS_DROP_LINEARIZE, "drop-linearize", U64),
        a(STATS_MSGS_IN, "msgs-in", U64),
        a(STATS_MSGS_OUT, "msgs-out", U64),
        a(STATS_DROP_MSG_INVALID, "drop-msg-invalid", U64),
        a(STATS_DROP_MSG_PEER, "drop-msg-peer", U64),
        a(STATS_DROP_MSG_NO_FLOW, "drop-msg-no-flow", U64),
        a(STATS_DROP_SEND, "drop-send", U64),
        a(STATS_FLOWS_ACTIVE, "flows-active", U64),
        a(STATS_MEMORY, "memory", U64),
        a(STATS_TOTALS, "totals", Nest(&FLOW_STATS_SET)),
        a(STATS_FLOWS_REMOVED, "flows-removed", U64),
        a(STATS_DROP_NOTIFY, "drop-notify", U64),
        a(STATS_FLOWS_EXPIRED, "flows-expired", U64),
        a(STATS_PATH_REPORTS, "path-reports", U64),
        a(
            STATS_MSGS_IN_BY_TYPE,
            "msgs-in-by-type",
            Nest(&MSG_TYPES_SET),
        ),
        a(
            STATS_MSGS_OUT_BY_TYPE,
            "msgs-out-by-type",
            Nest(&MSG_TYPES_SET),
        ),
        a(STATS_GSO_SEGMENTED, "gso-segmented", U64),
        a(STATS_DROP_GSO, "drop-gso", U64),
        a(STATS_SKIP_BRIDGED, "skip-bridged", U64),
        a(STATS_DROP_DEV_GONE, "drop-dev-gone", U64),
    ],
};

pub static MSG_TYPES_SET: AttrSet = AttrSet {
    name: "msg-types",
    attrs: &[
        a(MSG_TYPES_PAD, "pad", Pad),
        a(MSG_TYPES_REPAIR, "repair", U64),
        a(MSG_TYPES_HELLO, "hello", U64),
        a(MSG_TYPES_HELLO_ACK, "hello-ack", U64),
        a(MSG_TYPES_PARAM_UPDATE, "param-update", U64),
        a(MSG_TYPES_PARAM_ACK, "param-ack", U64),
        a(MSG_TYPES_REPAIR_REQUEST, "repair-request", U64),
        a(MSG_TYPES_LOSS_REPORT, "loss-report", U64),
        a(MSG_TYPES_PATH_REPORT, "path-report", U64),
        a(MSG_TYPES_CLOSE, "close", U64),
        a(MSG_TYPES_TC_AETH, "tc-aeth", U64),
        a(MSG_TYPES_OTHER, "other", U64),
    ],
};

pub static FLOW_STATS_SET: AttrSet = AttrSet {
    name: "flow-stats",
    attrs: &[
        a(FLOW_STATS_PAD, "pad", Pad),
        a(FLOW_STATS_SOURCES, "sources", U64),
        a(FLOW_STATS_SOURCE_OCTETS, "source-octets", U64),
        a(FLOW_STATS_UNPROTECTED, "unprotected", U64),
        a(FLOW_STATS_REPAIRS_SENT, "repairs-sent", U64),
        a(FLOW_STATS_CODED_RETX, "coded-retx", U64),
        a(FLOW_STATS_SOURCE_COPIES, "source-copies", U64),
        a(FLOW_STATS_REPAIR_OCTETS, "repair-octets", U64),
        a(FLOW_STATS_REQUESTS_RECEIVED, "requests-received", U64),
        a(
            FLOW_STATS_FALLBACK_REQUESTS_RECEIVED,
            "fallback-requests-received",
            U64,
        ),
        a(FLOW_STATS_BLOCKS_GIVEN_UP, "blocks-given-up", U64),
        a(FLOW_STATS_RECEIVED, "received", U64),
        a(FLOW_STATS_REPAIRS_RECEIVED, "repairs-received", U64),
        a(FLOW_STATS_RESTORED, "restored", U64),
        a(FLOW_STATS_ICRC_FAILURES, "icrc-failures", U64),
        a(FLOW_STATS_REQUESTS_SENT, "requests-sent", U64),
        a(FLOW_STATS_FALLBACKS, "fallbacks", U64),
        a(FLOW_STATS_ABANDONED, "abandoned", U64),
        a(FLOW_STATS_BLOCKS_INCOMPLETE, "blocks-incomplete", U64),
        a(FLOW_STATS_MSGS_IN, "msgs-in", U64),
        a(FLOW_STATS_MSGS_OUT, "msgs-out", U64),
        a(FLOW_STATS_SEND_FAILURES, "send-failures", U64),
        a(FLOW_STATS_STORE_FULL, "store-full", U64),
        a(FLOW_STATS_ALLOC_FAILURES, "alloc-failures", U64),
        a(FLOW_STATS_HELD_DROPPED, "held-dropped", U64),
        a(FLOW_STATS_INJECTED, "injected", U64),
        a(FLOW_STATS_INJECT_FAILURES, "inject-failures", U64),
        a(FLOW_STATS_CODED_RETX_LOST, "coded-retx-lost", U64),
        a(
            FLOW_STATS_MSGS_IN_BY_TYPE,
            "msgs-in-by-type",
            Nest(&MSG_TYPES_SET),
        ),
        a(
            FLOW_STATS_MSGS_OUT_BY_TYPE,
            "msgs-out-by-type",
            Nest(&MSG_TYPES_SET),
        ),
        a(FLOW_STATS_REPAIRS_CE, "repairs-ce", U64),
        a(FLOW_STATS_REPAIR_PATH_SIGNALS, "repair-path-signals", U64),
        a(FLOW_STATS_RETX_BUDGET_LIMITED, "retx-budget-limited", U64),
        a(FLOW_STATS_RETX_BUDGET_SYMBOLS, "retx-budget-symbols", U64),
        a(FLOW_STATS_RESTORE_NO_HEADER, "restore-no-header", U64),
        a(FLOW_STATS_REPAIR_RATE_LIMITED, "repair-rate-limited", U64),
        a(FLOW_STATS_STORE_OVERWRITTEN, "store-overwritten", U64),
        a(FLOW_STATS_HELD_OVERWRITTEN, "held-overwritten", U64),
    ],
};

pub static FLOW_SET: AttrSet = AttrSet {
    name: "flow",
    attrs: &[
        a(FLOW_PAD, "pad", Pad),
        a(FLOW_ID, "id", U32),
        a(FLOW_SRC, "src", Binary),
        a(FLOW_DST, "dst", Binary),
        a(FLOW_DEST_QP, "dest-qp", U32),
        en(a(FLOW_STATE, "state", U8), "flow-state"),
        a(FLOW_CONFIG_ID, "config-id", U8),
        en(a(FLOW_SCHEME, "scheme", U8), "fec-scheme"),
        a(FLOW_K, "k", U8),
        a(FLOW_M, "m", U8),
        a(FLOW_SYMBOL_LEN, "symbol-len", U16),
        a(FLOW_SRTT_US, "srtt-us", U32),
        a(FLOW_LOSS_PPM, "loss-ppm", U32),
        en(a(FLOW_LOSS_CLASS, "loss-class", U8), "loss-class"),
        en(a(FLOW_BREAKER, "breaker", U8), "breaker"),
        a(FLOW_MEMORY, "memory", U64),
        en(a(FLOW_SIDE, "side", U8), "side"),
        a(FLOW_PEER, "peer", Binary),
        a(FLOW_AGE_MS, "age-ms", U64),
        a(FLOW_STATS, "stats", Nest(&FLOW_STATS_SET)),
        en(a(FLOW_KIND_ATTR, "kind", U8), "flow-kind"),
        en(a(FLOW_EVENT_ATTR, "event", U8), "flow-event"),
        a(FLOW_CLOSE_REASON, "close-reason", U16),
        a(FLOW_PINNED, "pinned", U8),
        a(FLOW_SCHEMES, "schemes", U8),
        a(FLOW_MAX_K, "max-k", U8),
        a(FLOW_MAX_M, "max-m", U8),
        a(FLOW_MAX_SYMBOL_LEN, "max-symbol-len", U16),
        a(FLOW_MAX_OPEN_BLOCKS, "max-open-blocks", U16),
        a(FLOW_MIN_RTT_US, "min-rtt-us", U32),
        a(FLOW_LAST_MSG_MS, "last-msg-ms", U64),
        a(FLOW_RDMA_MTU, "rdma-mtu", U32),
        a(FLOW_RDMA_MTU_EXACT, "rdma-mtu-exact", U8),
    ],
};

pub static CMD_SET: AttrSet = AttrSet {
    name: "cmd",
    attrs: &[
        a(CMD_A_CONFIG, "config", Nest(&CONFIG_SET)),
        a(CMD_A_STATS, "stats", Nest(&STATS_SET)),
        a(CMD_A_FLOW, "flow", Nest(&FLOW_SET)),
    ],
};

/// Every attribute set of the spec (for the YAML test).
#[cfg_attr(not(test), allow(dead_code))]
pub static SETS: &[&AttrSet] = &[
    &PEER_SET,
    &CONFIG_SET,
    &STATS_SET,
    &MSG_TYPES_SET,
    &FLOW_STATS_SET,
    &FLOW_SET,
    &CMD_SET,
];

/// Name of value `v` of enum `e`, if it has one.
pub fn enum_name(e: &[&'static str], v: u64) -> Option<&'static str> {
    usize::try_from(v).ok().and_then(|i| e.get(i).copied())
}

/// Value of the entry called `name` in enum `e`.
pub fn enum_value(e: &[&str], name: &str) -> Option<u8> {
    e.iter().position(|n| *n == name).map(|i| i as u8)
}

/// Name of an operation by command number.
pub fn op_name(cmd: u8) -> Option<&'static str> {
    OPS.iter().find(|(_, c)| *c == cmd).map(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_yaml::Value;

    fn spec() -> Value {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../netlink/crem.yaml");
        let text = std::fs::read_to_string(path).expect("netlink/crem.yaml");
        serde_yaml::from_str(&text).expect("valid YAML")
    }

    fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
        v.get(k).and_then(Value::as_str)
    }

    fn n(v: &Value, k: &str) -> Option<u64> {
        v.get(k).and_then(Value::as_u64)
    }

    /// (name, value) of an enum's entries, as ynl numbers them.
    fn enum_entries(def: &Value) -> Vec<(String, u64)> {
        let mut next = n(def, "value-start").unwrap_or(0);
        let mut out = Vec::new();
        for e in def["entries"].as_sequence().expect("entries") {
            let (name, value) = match e {
                Value::String(name) => (name.clone(), None),
                m => (s(m, "name").expect("entry name").to_string(), n(m, "value")),
            };
            let v = value.unwrap_or(next);
            out.push((name, v));
            next = v + 1;
        }
        out
    }

    #[test]
    fn matches_yaml_spec() {
        let y = spec();
        assert_eq!(s(&y, "name"), Some(FAMILY_NAME));
        assert_eq!(s(&y, "protocol"), Some("genetlink"));
        // ynl-gen-c uses version 1 when the spec has none.
        assert_eq!(n(&y, "version").unwrap_or(1), FAMILY_VERSION as u64);

        // Enums.
        let defs = y["definitions"].as_sequence().expect("definitions");
        let yaml_enums: Vec<&Value> = defs
            .iter()
            .filter(|d| s(d, "type") == Some("enum"))
            .collect();
        assert_eq!(yaml_enums.len(), ENUMS.len(), "number of enums");
        for d in yaml_enums {
            let name = s(d, "name").unwrap();
            let ours = ENUMS
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("enum {name} missing in uapi.rs"))
                .1;
            let entries = enum_entries(d);
            assert_eq!(entries.len(), ours.len(), "enum {name}: entry count");
            for (ename, v) in entries {
                assert_eq!(
                    enum_value(ours, &ename).map(u64::from),
                    Some(v),
                    "enum {name}: {ename}"
                );
            }
        }

        // Attribute sets.
        let sets = y["attribute-sets"].as_sequence().expect("attribute-sets");
        assert_eq!(sets.len(), SETS.len(), "number of attribute sets");
        for set in sets {
            let sname = s(set, "name").unwrap();
            let ours = SETS
                .iter()
                .find(|x| x.name == sname)
                .unwrap_or_else(|| panic!("attribute set {sname} missing in uapi.rs"));
            let attrs = set["attributes"].as_sequence().unwrap();
            assert_eq!(
                attrs.len(),
                ours.attrs.len(),
                "set {sname}: attribute count"
            );
            let mut next = 1u64;
            for at in attrs {
                let aname = s(at, "name").unwrap();
                let id = n(at, "value").unwrap_or(next);
                next = id + 1;
                let o = ours
                    .by_name(aname)
                    .unwrap_or_else(|| panic!("{sname}.{aname} missing in uapi.rs"));
                assert_eq!(o.id as u64, id, "{sname}.{aname}: id");
                assert_eq!(
                    o.ty.yaml_name(),
                    s(at, "type").unwrap(),
                    "{sname}.{aname}: type"
                );
                if let AttrType::Nest(inner) = o.ty {
                    assert_eq!(
                        Some(inner.name),
                        s(at, "nested-attributes"),
                        "{sname}.{aname}"
                    );
                }
                let yaml_multi = at
                    .get("multi-attr")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                assert_eq!(o.multi, yaml_multi, "{sname}.{aname}: multi-attr");
                assert_eq!(o.enum_name, s(at, "enum"), "{sname}.{aname}: enum");
                let checks = at.get("checks");
                assert_eq!(
                    o.min,
                    checks.and_then(|c| n(c, "min")),
                    "{sname}.{aname}: min"
                );
                assert_eq!(
                    o.max,
                    checks.and_then(|c| n(c, "max")),
                    "{sname}.{aname}: max"
                );
            }
        }

        // Operations: unified message ids, starting at 1.
        let ops = y["operations"]["list"].as_sequence().unwrap();
        assert_eq!(ops.len(), OPS.len(), "number of operations");
        let mut next = 1u64;
        for op in ops {
            let name = s(op, "name").unwrap();
            let id = n(op, "value").unwrap_or(next);
            next = id + 1;
            let ours = OPS
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("op {name} missing in uapi.rs"));
            assert_eq!(ours.1 as u64, id, "op {name}: value");
            assert_eq!(op_name(ours.1), Some(name));
        }
        let find_op = |name: &str| -> Option<u8> {
            ops.iter()
                .position(|o| s(o, "name") == Some(name))
                .map(|_| {
                    OPS.iter()
                        .find(|(n, _)| *n == name)
                        .map(|x| x.1)
                        .unwrap_or(0)
                })
        };
        assert_eq!(Some(CMD_FLOW_DEL), find_op("flow-del"), "flow-del");
        assert_eq!(Some(CMD_FLOW_SET), find_op("flow-set"), "flow-set");
        assert_eq!(Some(CMD_FLOW_NEW), find_op("flow-new"), "flow-new");
        assert_eq!(Some(CMD_FLOW_RESET), find_op("flow-reset"), "flow-reset");

        // Multicast groups.
        let groups: Vec<&str> = y["mcast-groups"]["list"]
            .as_sequence()
            .unwrap()
            .iter()
            .filter_map(|g| s(g, "name"))
            .collect();
        assert_eq!(groups, vec![MCGRP_EVENTS]);
    }

    /// Every `NAME [= VALUE],` entry of every enum in the generated uapi
    /// header, with its value (C numbering: implicit = previous + 1).
    fn header_enums() -> std::collections::HashMap<String, i64> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../include/uapi/linux/crem.h"
        );
        let text = std::fs::read_to_string(path).expect("include/uapi/linux/crem.h");
        let mut out = std::collections::HashMap::new();
        let mut next: Option<i64> = None;
        for line in text.lines().map(str::trim) {
            if line.starts_with("enum") && line.ends_with('{') {
                next = Some(0);
                continue;
            }
            if line.starts_with('}') {
                next = None;
                continue;
            }
            let Some(n) = next else { continue };
            let Some(entry) = line.strip_suffix(',') else {
                continue;
            };
            let (name, v) = match entry.split_once('=') {
                Some((name, v)) => (name.trim(), v.trim().parse::<i64>().ok()),
                None => (entry, Some(n)),
            };
            // `X_MAX = (__X_MAX - 1)` is not a literal: skip it.
            if let Some(v) = v {
                out.insert(name.to_string(), v);
                next = Some(v + 1);
            }
        }
        out
    }

    fn c_name(s: &str) -> String {
        s.to_uppercase().replace('-', "_")
    }

    #[test]
    fn matches_uapi_header() {
        let h = header_enums();
        for set in SETS {
            for a in set.attrs {
                let name = format!("CREM_A_{}_{}", c_name(set.name), c_name(a.name));
                assert_eq!(h.get(&name), Some(&i64::from(a.id)), "{name}");
            }
            let max = set.attrs.iter().map(|a| a.id).max().unwrap();
            let name = format!("__CREM_A_{}_MAX", c_name(set.name));
            assert_eq!(h.get(&name), Some(&(i64::from(max) + 1)), "{name}");
        }
        for (e, names) in ENUMS {
            for (i, n) in names.iter().enumerate() {
                let name = format!("CREM_{}_{}", c_name(e), c_name(n));
                assert_eq!(h.get(&name), Some(&(i as i64)), "{name}");
            }
        }
        for (op, cmd) in OPS {
            let name = format!("CREM_CMD_{}", c_name(op));
            assert_eq!(h.get(&name), Some(&i64::from(*cmd)), "{name}");
        }
    }

    #[test]
    fn nested_sets_are_known() {
        for set in SETS {
            let mut ids: Vec<u16> = set.attrs.iter().map(|a| a.id).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(
                ids.len(),
                set.attrs.len(),
                "set {}: duplicate ids",
                set.name
            );
            for a in set.attrs {
                if let AttrType::Nest(inner) = a.ty {
                    assert!(
                        SETS.iter().any(|s| std::ptr::eq(*s, inner)),
                        "{}.{} nests {}, which is not in SETS",
                        set.name,
                        a.name,
                        inner.name
                    );
                }
            }
        }
        // The nests the datapath added.
        assert_eq!(
            STATS_SET.by_name("totals").unwrap().ty,
            AttrType::Nest(&FLOW_STATS_SET)
        );
        assert_eq!(
            FLOW_SET.by_name("stats").unwrap().ty,
            AttrType::Nest(&FLOW_STATS_SET)
        );
        assert_eq!(FLOW_SET.by_name("side").unwrap().enum_name, Some("side"));
        // The by-type nests, in the netns stats and in every flow-stats.
        for set in [&STATS_SET, &FLOW_STATS_SET] {
            for n in ["msgs-in-by-type", "msgs-out-by-type"] {
                assert_eq!(
                    set.by_name(n).unwrap().ty,
                    AttrType::Nest(&MSG_TYPES_SET),
                    "{}.{n}",
                    set.name
                );
            }
        }
    }

    #[test]
    fn enum_helpers() {
        assert_eq!(enum_name(ROLE, 2), Some("gateway"));
        assert_eq!(enum_name(ROLE, 3), None);
        assert_eq!(enum_value(RECOVERY, "selective-repeat"), Some(1));
        assert_eq!(enum_value(RECOVERY, "nope"), None);
        assert_eq!(op_name(CMD_FLOW_GET), Some("flow-get"));
    }
}
