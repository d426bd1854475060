//! `crem-ctl decode`: every CREM message field by field, under the field
//! names of the draft ("Message Formats"; the private TC_AETH message under
//! those of the windowless-ACK draft's T/C AETH fragment).
//!
//! One list of fields per message feeds three renderings, so the text and
//! the JSON cannot disagree:
//! * [`Decoded::text`]: the header line, then one field per line
//!   (`decode HEX`, `decode -r -v`);
//! * [`Decoded::line`]: everything on one line (a packet of a capture);
//! * [`Decoded::json`]: an object whose keys are the draft's names in
//!   kebab-case.
//!
//! Notation is the rest of crem-ctl's: PSNs in decimal (as `roce`), QPs as
//! 0x%06x (as `flow`), schemes by the names `set scheme` takes, registry
//! values by name (or their number when unassigned, in JSON too, as the
//! netlink JSON does), addresses as text, bitmaps as position lists.

use crate::hex;
use crate::model::scheme_name;
use crem_core::psn::{Psn, PsnRange};
use crem_core::wire::{
    self, bitmap::words_for, Bitmap256, CloseReason, FecScheme, FlowAddrs, LossCause, Message,
    MessageType, Method, ParamStatus, RequestKind,
};
use serde_json::{Map, Value};
use std::fmt::Write;
use std::net::IpAddr;

/// The draft's name of a message type.
pub fn type_name(t: MessageType) -> &'static str {
    use MessageType::*;
    match t {
        Repair => "REPAIR",
        Hello => "HELLO",
        HelloAck => "HELLO_ACK",
        ParamUpdate => "PARAM_UPDATE",
        ParamAck => "PARAM_ACK",
        RepairRequest => "REPAIR_REQUEST",
        LossReport => "LOSS_REPORT",
        PathReport => "PATH_REPORT",
        Close => "CLOSE",
        TcAeth => "TC_AETH",
    }
}

/// Names of the flags set in `flags` ("CREM Message Flags" registry).
fn flag_names(t: MessageType, flags: u8) -> Vec<&'static str> {
    use wire::{path, repair, request};
    use MessageType as T;
    let table: &[(u8, &str)] = match t {
        T::Repair => &[
            (repair::FLAG_RETX, "RETX"),
            (repair::FLAG_LAST, "LAST"),
            (repair::FLAG_INFO, "INFO"),
        ],
        T::RepairRequest => &[
            (request::FLAG_FALLBACK, "FALLBACK"),
            (request::FLAG_RANGES, "RANGES"),
        ],
        T::PathReport => &[(path::FLAG_TRUNCATED, "TRUNCATED")],
        _ => &[],
    };
    table
        .iter()
        .filter(|(b, _)| flags & b != 0)
        .map(|x| x.1)
        .collect()
}

/// JSON keys of a list of PSN ranges: REPAIR_REQUEST's entries are
/// (Start PSN, Count), T/C AETH segments (Left, Right).
#[derive(Clone, Copy)]
enum RangeKeys {
    StartCount,
    LeftRight,
}

/// A field's value; each variant knows its three renderings.
enum Val {
    Num(u64),
    /// Microseconds (signed: Queue Delay Change).
    Us(i64),
    Psn(Psn),
    /// A Flow Label; `Some(qp)` when the flow kind puts the destination QP
    /// in its low 24 bits (RoCEv2), which JSON also gives as "dest-qp".
    FlowLabel(u32, Option<u32>),
    /// An opaque 64-bit value: hex, and a hex string in JSON, where numbers
    /// beyond 2^53 lose precision in most readers.
    Hex64(u64),
    /// A registry value: its name, or `None` when unassigned.
    Named(Option<String>, u64),
    /// A bitmap over the k positions of a block.
    Bitmap(Bitmap256, u8),
    /// HELLO's Supported Schemes (bit s = scheme s).
    Schemes(u16),
    Addr(IpAddr),
    Ranges(Vec<PsnRange>, RangeKeys),
    Psns(Vec<Psn>),
    /// Octets: a hex dump in text (left out of the one-line form, which has
    /// their length in another field), a hex string in JSON.
    Bytes(Vec<u8>),
    /// Nested records (PATH_REPORT's hop entries), each titled `name N`.
    Items(&'static str, Vec<Vec<Field>>),
}

struct Field {
    /// The draft's name, for text.
    label: &'static str,
    /// The JSON key.
    key: &'static str,
    val: Val,
}

fn f(label: &'static str, key: &'static str, val: Val) -> Field {
    Field { label, key, val }
}

/// "0-3,5,7-9": a sorted list of integers with runs collapsed. `next`
/// says which value follows another (PSNs wrap at 2^24).
fn runs(xs: &[u64], next: impl Fn(u64) -> u64) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(&first) = xs.get(i) {
        let mut last = first;
        let mut j = i + 1;
        while xs.get(j) == Some(&next(last)) {
            last = next(last);
            j += 1;
        }
        parts.push(if j - i == 1 {
            first.to_string()
        } else {
            format!("{first}-{last}")
        });
        i = j;
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(",")
    }
}

fn psn_runs(ps: &[Psn]) -> String {
    let v: Vec<u64> = ps.iter().map(|p| p.value().into()).collect();
    runs(&v, |x| Psn::new(x as u32).next().value().into())
}

fn bitmap_runs(b: &Bitmap256) -> String {
    let v: Vec<u64> = b.iter().map(|j| j as u64).collect();
    runs(&v, |x| x + 1)
}

fn range_text(r: &PsnRange) -> String {
    match r.last() {
        Some(l) if r.count > 1 => format!("{}-{l}", r.start),
        _ => r.start.to_string(),
    }
}

fn scheme_names(bits: u16) -> Vec<String> {
    (0..16u8)
        .filter(|s| bits & (1 << s) != 0)
        .map(scheme_name)
        .collect()
}

impl Val {
    /// The value in `decode HEX`'s field-per-line text.
    fn text(&self) -> String {
        match self {
            Val::Num(n) => n.to_string(),
            Val::Us(n) => format!("{n} us"),
            Val::Psn(p) => p.to_string(),
            Val::FlowLabel(l, Some(qp)) => format!("0x{l:08x} (dest QP 0x{qp:06x})"),
            Val::FlowLabel(l, None) => format!("0x{l:08x}"),
            Val::Hex64(n) => format!("0x{n:016x}"),
            Val::Named(Some(name), n) => format!("{name} ({n})"),
            Val::Named(None, n) => format!("{n} (unassigned)"),
            Val::Bitmap(b, k) => {
                let words: Vec<String> = b
                    .words()
                    .iter()
                    .take(words_for((*k).into()))
                    .map(|w| format!("{w:08x}"))
                    .collect();
                format!(
                    "{} ({} of {k} positions; 0x{})",
                    bitmap_runs(b),
                    b.count(),
                    words.join(" ")
                )
            }
            Val::Schemes(bits) => {
                format!("0x{bits:04x} ({})", scheme_names(*bits).join(", "))
            }
            Val::Addr(a) => a.to_string(),
            Val::Ranges(rs, _) => rs
                .iter()
                .map(|r| format!("{} ({})", range_text(r), r.count))
                .collect::<Vec<_>>()
                .join(", "),
            Val::Psns(ps) => format!("{} ({} PSNs)", psn_runs(ps), ps.len()),
            Val::Bytes(b) => format!("{} octets", b.len()),
            Val::Items(_, items) => items.len().to_string(),
        }
    }

    /// The value in the one-line form; `None` leaves the field out.
    fn line(&self) -> Option<String> {
        Some(match self {
            Val::Named(Some(name), _) => name.clone(),
            Val::Named(None, n) => n.to_string(),
            Val::Bitmap(b, _) => bitmap_runs(b),
            Val::Schemes(bits) => scheme_names(*bits).join(","),
            Val::Ranges(rs, _) => rs.iter().map(range_text).collect::<Vec<_>>().join(","),
            Val::Psns(ps) => psn_runs(ps),
            Val::Bytes(_) => return None,
            Val::Items(_, items) => items
                .iter()
                .map(|it| format!("[{}]", line_fields(it)))
                .collect::<Vec<_>>()
                .join(" "),
            other => other.text(),
        })
    }

    /// Adds the value to a JSON object under `key`.
    fn json_into(&self, key: &str, m: &mut Map<String, Value>) {
        let v = match self {
            Val::Num(n) => (*n).into(),
            Val::Us(n) => (*n).into(),
            Val::Psn(p) => p.value().into(),
            Val::FlowLabel(l, qp) => {
                m.insert(key.into(), (*l).into());
                if let Some(qp) = qp {
                    m.insert("dest-qp".into(), (*qp).into());
                }
                return;
            }
            Val::Hex64(n) => format!("0x{n:016x}").into(),
            Val::Named(Some(name), _) => name.clone().into(),
            Val::Named(None, n) => (*n).into(),
            Val::Bitmap(b, _) => b.iter().collect::<Vec<_>>().into(),
            Val::Schemes(bits) => scheme_names(*bits).into(),
            Val::Addr(a) => a.to_string().into(),
            Val::Ranges(rs, keys) => rs
                .iter()
                .map(|r| match keys {
                    RangeKeys::StartCount => {
                        serde_json::json!({"start-psn": r.start.value(), "count": r.count})
                    }
                    RangeKeys::LeftRight => serde_json::json!({
                        "left": r.start.value(),
                        "right": r.last().unwrap_or(r.start).value()
                    }),
                })
                .collect::<Vec<_>>()
                .into(),
            Val::Psns(ps) => ps.iter().map(|p| p.value()).collect::<Vec<_>>().into(),
            Val::Bytes(b) => hex::encode(b).into(),
            Val::Items(_, items) => items
                .iter()
                .map(|it| Value::Object(json_fields(it)))
                .collect::<Vec<_>>()
                .into(),
        };
        m.insert(key.into(), v);
    }
}

fn line_fields(fields: &[Field]) -> String {
    fields
        .iter()
        .filter_map(|x| x.val.line().map(|v| format!("{} {v}", x.label)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn json_fields(fields: &[Field]) -> Map<String, Value> {
    let mut m = Map::new();
    for x in fields {
        x.val.json_into(x.key, &mut m);
    }
    m
}

/// Field-per-line text at `indent` spaces, labels aligned.
fn text_fields(fields: &[Field], indent: usize, s: &mut String) {
    let w = fields.iter().map(|x| x.label.len()).max().unwrap_or(0) + 2;
    let pad = " ".repeat(indent);
    for x in fields {
        let label = format!("{}:", x.label);
        let _ = writeln!(s, "{pad}{label:<w$}{}", x.val.text());
        match &x.val {
            Val::Bytes(b) => s.push_str(&hex::dump(b, &format!("{pad}  "))),
            Val::Items(name, items) => {
                for (i, it) in items.iter().enumerate() {
                    let _ = writeln!(s, "{pad}  {name} {}:", i + 1);
                    text_fields(it, indent + 4, s);
                }
            }
            _ => {}
        }
    }
}

fn scheme(s: FecScheme) -> Val {
    let name = match s {
        FecScheme::Other(_) => None,
        known => Some(scheme_name(known.to_u8())),
    };
    Val::Named(name, s.to_u8().into())
}

fn named(name: Option<&str>, v: impl Into<u64>) -> Val {
    Val::Named(name.map(str::to_string), v.into())
}

fn close_reason(r: CloseReason) -> Val {
    let name = match r {
        CloseReason::Normal => Some("normal"),
        CloseReason::FlowEnded => Some("flow-ended"),
        CloseReason::ParamSyncFailed => Some("param-sync-failed"),
        CloseReason::ResourcesExhausted => Some("resources-exhausted"),
        CloseReason::CircuitBreaker => Some("circuit-breaker"),
        CloseReason::Other(_) => None,
    };
    named(name, r.to_u16())
}

fn param_status(s: ParamStatus) -> Val {
    let name = match s {
        ParamStatus::Accepted => Some("accepted"),
        ParamStatus::UnsupportedScheme => Some("unsupported-scheme"),
        ParamStatus::LimitsExceeded => Some("limits-exceeded"),
        ParamStatus::ResourcesExhausted => Some("resources-exhausted"),
        ParamStatus::Other(_) => None,
    };
    named(name, s.to_u8())
}

fn method(m: Method) -> Val {
    let name = match m {
        Method::AlternateMarking => Some("alternate-marking"),
        Method::ClusteredAlternateMarking => Some("clustered-alternate-marking"),
        Method::NodeLocalDrop => Some("node-local-drop"),
        Method::Other(_) => None,
    };
    named(name, m.to_u8())
}

fn loss_cause(c: LossCause) -> Val {
    let name = match c {
        LossCause::Unknown => Some("unknown"),
        LossCause::QueueOverflow => Some("queue-overflow"),
        LossCause::TransmissionError => Some("transmission-error"),
        LossCause::Other(_) => None,
    };
    named(name, c.to_u8())
}

/// Flow Kind by the names of the netlink "flow-kind" enum (`flow`'s KIND);
/// whether its Flow Label carries a destination QP.
fn flow_kind(k: u8) -> (Val, bool) {
    let name = match wire::FlowKind::from_u8(k) {
        Some(wire::FlowKind::Requests) => Some("requests"),
        Some(wire::FlowKind::Responses) => Some("responses"),
        None => None,
    };
    (named(name, k), name.is_some())
}

fn af(a: wire::AddressFamily) -> Val {
    Val::Num(a.to_u8().into())
}

/// Source and Destination Address fields.
fn addrs(a: &FlowAddrs) -> [Field; 2] {
    let (s, d): (IpAddr, IpAddr) = match *a {
        FlowAddrs::V4 { src, dst } => (src.into(), dst.into()),
        FlowAddrs::V6 { src, dst } => (src.into(), dst.into()),
    };
    [
        f("Source Address", "source-address", Val::Addr(s)),
        f("Destination Address", "destination-address", Val::Addr(d)),
    ]
}

fn flow_label(l: u32, roce: bool) -> Field {
    f(
        "Flow Label",
        "flow-label",
        Val::FlowLabel(l, roce.then_some(l & 0x00ff_ffff)),
    )
}

/// The fields after the common header, in wire order.
fn fields(m: &Message<'_>) -> Vec<Field> {
    use Val::*;
    let n = |x: u64| Num(x);
    match m {
        Message::Repair(r) => {
            let mut v = vec![
                f("Config ID", "config-id", n(r.config_id.into())),
                f("Scheme", "scheme", scheme(r.scheme)),
                f("k", "k", n(r.k.into())),
                f("Repair Index", "repair-index", n(r.repair_index.into())),
                f("Block Start PSN", "block-start-psn", Psn(r.block_start)),
                f(
                    "Repair Session ID",
                    "repair-session-id",
                    n(r.session_id.into()),
                ),
                f("Symbol Length T", "symbol-length", n(r.symbol.len() as u64)),
                f("Present Bitmap", "present-bitmap", Bitmap(r.present, r.k)),
            ];
            if let Some(l) = r.lost {
                v.push(f(
                    "Lost Source Bitmap",
                    "lost-source-bitmap",
                    Bitmap(l, r.k),
                ));
            }
            if !r.info {
                v.push(f(
                    "Repair Symbol",
                    "repair-symbol",
                    Bytes(r.symbol.to_vec()),
                ));
            }
            v
        }
        Message::Hello(h) => {
            let (kind, roce) = flow_kind(h.flow_kind);
            let mut v = vec![
                f("Flow Kind", "flow-kind", kind),
                f("AF", "af", af(h.addrs.af())),
                f(
                    "Supported Schemes",
                    "supported-schemes",
                    Schemes(h.supported_schemes),
                ),
                f("Max k", "max-k", n(h.max_k.into())),
                f("Max m", "max-m", n(h.max_m.into())),
                f("Max T", "max-t", n(h.max_t.into())),
                f("RDMA MTU", "rdma-mtu", n(h.rdma_mtu.into())),
                f("Sender Nonce", "sender-nonce", Hex64(h.nonce)),
            ];
            v.extend(addrs(&h.addrs));
            v.push(flow_label(h.flow_label, roce));
            v
        }
        Message::HelloAck(a) => vec![
            f("Flow Kind", "flow-kind", flow_kind(a.flow_kind).0),
            f("AF", "af", af(a.af)),
            f(
                "Supported Schemes",
                "supported-schemes",
                Schemes(a.supported_schemes),
            ),
            f("Max k", "max-k", n(a.max_k.into())),
            f("Max m", "max-m", n(a.max_m.into())),
            f("Max T", "max-t", n(a.max_t.into())),
            f("RDMA MTU", "rdma-mtu", n(a.rdma_mtu.into())),
            f("Sender Nonce", "sender-nonce", Hex64(a.nonce)),
            f(
                "Max Open Blocks",
                "max-open-blocks",
                n(a.max_open_blocks.into()),
            ),
        ],
        Message::ParamUpdate(p) => vec![
            f("Config ID", "config-id", n(p.config_id.into())),
            f("Scheme", "scheme", scheme(p.scheme)),
            f("k", "k", n(p.k.into())),
            f("m", "m", n(p.m.into())),
            f("T", "t", n(p.t.into())),
            f("Effective PSN", "effective-psn", Psn(p.effective_psn)),
        ],
        Message::ParamAck(a) => vec![
            f("Config ID", "config-id", n(a.config_id.into())),
            f("Status", "status", param_status(a.status)),
        ],
        Message::RepairRequest(r) => match &r.kind {
            RequestKind::Block(b) => vec![
                f("Config ID", "config-id", n(b.config_id.into())),
                f("Scheme", "scheme", scheme(b.scheme)),
                f("k", "k", n(b.k.into())),
                f("Repairs Held r", "repairs-held", n(b.repairs_held.into())),
                f("Block Start PSN", "block-start-psn", Psn(b.block_start)),
                f("Suggested M", "suggested-m", n(b.suggested_m.into())),
                f("Request ID", "request-id", n(b.request_id.into())),
                f(
                    "Lost Source Bitmap",
                    "lost-source-bitmap",
                    Bitmap(b.lost, b.k),
                ),
            ],
            RequestKind::Ranges(q) => vec![
                f("Request ID", "request-id", n(q.request_id.into())),
                f("Range Count", "range-count", n(q.ranges.len() as u64)),
                f(
                    "Ranges",
                    "ranges",
                    Ranges(q.ranges.iter().collect(), RangeKeys::StartCount),
                ),
            ],
        },
        Message::LossReport(l) => vec![
            f("Interval", "interval-us", Us(l.interval_us.into())),
            f("Expected", "expected", n(l.expected.into())),
            f("Received", "received", n(l.received.into())),
            f("Restored", "restored", n(l.restored.into())),
            f(
                "Incomplete Blocks",
                "incomplete-blocks",
                n(l.incomplete_blocks.into()),
            ),
            f("CE Marked", "ce-marked", n(l.ce_marked.into())),
            f(
                "Repairs Received",
                "repairs-received",
                n(l.repairs_received.into()),
            ),
            f(
                "Repairs CE Marked",
                "repairs-ce-marked",
                n(l.repairs_ce_marked.into()),
            ),
        ],
        Message::PathReport(p) => {
            let mut v = vec![
                f("Method", "method", method(p.method)),
                f("Entry Count", "entry-count", n(p.hops.len() as u64)),
                f("AF", "af", af(p.addrs.af())),
            ];
            v.extend(addrs(&p.addrs));
            // RoCEv2 is the only flow kind a Path Reporter sees.
            v.push(flow_label(p.flow_label, true));
            let hops = p
                .hops
                .iter()
                .map(|h| {
                    vec![
                        f("Node ID", "node-id", n(h.node_id.into())),
                        f(
                            "Marking Period Number",
                            "marking-period-number",
                            n(h.period.into()),
                        ),
                        f("Lost Count", "lost-count", n(h.lost_count.into())),
                        f(
                            "Queue Delay Change",
                            "queue-delay-change-us",
                            Us(h.queue_delay_change_us.into()),
                        ),
                        f("Cause", "cause", loss_cause(h.cause)),
                        f("PSN Count", "psn-count", n(h.dropped.len() as u64)),
                        f(
                            "Dropped PSNs",
                            "dropped-psns",
                            Psns(h.dropped.iter().collect()),
                        ),
                    ]
                })
                .collect();
            v.push(f("Hop Entries", "hop-entries", Items("Hop Entry", hops)));
            v
        }
        Message::Close(c) => vec![f("Reason", "reason", close_reason(c.reason))],
        Message::TcAeth(t) => {
            let fr = &t.fragment;
            vec![
                f("SegmentNum", "segment-num", n(fr.segment_num().into())),
                f(
                    "Last Finished PSN",
                    "last-finished-psn",
                    Psn(fr.last_finished()),
                ),
                f(
                    "Segments",
                    "segments",
                    Ranges(
                        fr.segments().iter().map(|s| s.range()).collect(),
                        RangeKeys::LeftRight,
                    ),
                ),
                f(
                    "Lost (implied)",
                    "lost-ranges",
                    Ranges(fr.lost_ranges().collect(), RangeKeys::StartCount),
                ),
                f("Report Sequence", "report-sequence", n(t.seq.into())),
            ]
        }
    }
}

/// A decoded CREM message, ready to render.
pub struct Decoded {
    header: wire::Header,
    fields: Vec<Field>,
    /// Octets after the message's Length.
    trailing: usize,
}

/// Decodes one CREM message (a UDP payload on the CREM port) with
/// crem-core's strict codecs; octets after its Length are reported.
pub fn decode(buf: &[u8]) -> Result<Decoded, String> {
    let (header, msg) =
        wire::Header::decode(buf).map_err(|e| format!("not a CREM message: {e}"))?;
    let m =
        wire::decode(buf).map_err(|e| format!("invalid {}: {e}", type_name(header.msg_type)))?;
    Ok(Decoded {
        header,
        fields: fields(&m),
        trailing: buf.len() - msg.len(),
    })
}

impl Decoded {
    /// "CREM REPAIR (type 1), flags 0x40 [LAST], length 56, flow ID 7".
    fn head(&self) -> String {
        let h = &self.header;
        let names = flag_names(h.msg_type, h.flags);
        format!(
            "CREM {} (type {}), flags 0x{:02x}{}, length {}, flow ID {}",
            type_name(h.msg_type),
            h.msg_type.to_u8(),
            h.flags,
            if names.is_empty() {
                String::new()
            } else {
                format!(" [{}]", names.join(" "))
            },
            h.length,
            h.flow_id
        )
    }

    fn trailing_note(&self) -> String {
        format!(
            "{} octets after the message's Length were ignored",
            self.trailing
        )
    }

    /// The header line, then one field per line.
    pub fn text(&self) -> String {
        let mut s = self.head();
        s.push('\n');
        text_fields(&self.fields, 2, &mut s);
        if self.trailing > 0 {
            let _ = writeln!(s, "({})", self.trailing_note());
        }
        s
    }

    /// Everything on one line (no newline): the header, then the fields.
    pub fn line(&self) -> String {
        let mut s = format!("{} | {}", self.head(), line_fields(&self.fields));
        if self.trailing > 0 {
            let _ = write!(s, " ({})", self.trailing_note());
        }
        s
    }

    /// The header's fields, then the message's ("trailing-octets" only
    /// when there are some).
    pub fn json(&self) -> Map<String, Value> {
        let h = &self.header;
        let mut m = Map::new();
        m.insert("type".into(), type_name(h.msg_type).into());
        m.insert("type-value".into(), h.msg_type.to_u8().into());
        m.insert("flags".into(), h.flags.into());
        m.insert("flag-names".into(), flag_names(h.msg_type, h.flags).into());
        m.insert("length".into(), h.length.into());
        m.insert("flow-id".into(), h.flow_id.into());
        m.extend(json_fields(&self.fields));
        if self.trailing > 0 {
            m.insert("trailing-octets".into(), self.trailing.into());
        }
        m
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crem_core::wire::*;

    fn enc(m: Message<'_>) -> Vec<u8> {
        let mut b = vec![0u8; m.encoded_len()];
        let n = m.encode(&mut b).expect("encodes");
        b.truncate(n);
        b
    }

    const V6A: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const V6B: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

    /// One message of every type (and both REPAIR_REQUEST forms), encoded
    /// by crem-core, with its type name.
    pub fn every_message() -> Vec<(&'static str, Vec<u8>)> {
        let sym = [0xabu8; 16];
        let ranges = [
            PsnRange::new(Psn::new(4096), 3),
            PsnRange::new(Psn::new(0xff_ffff), 2),
        ];
        let dropped = [Psn::new(700), Psn::new(701), Psn::new(705)];
        let hops = [
            HopEntry {
                node_id: 10,
                period: 3,
                lost_count: 3,
                queue_delay_change_us: -25,
                cause: LossCause::QueueOverflow,
                dropped: DroppedPsns::from_slice(&dropped),
            },
            HopEntry {
                node_id: 11,
                period: 3,
                lost_count: 0,
                queue_delay_change_us: 4,
                cause: LossCause::Other(9),
                dropped: DroppedPsns::EMPTY,
            },
        ];
        let seg = |l: u32, r: u32| Segment {
            left: Psn::new(l),
            right: Psn::new(r),
        };
        vec![
            (
                "REPAIR",
                enc(Message::Repair(Repair {
                    flow_id: 0xbeef,
                    last: false,
                    info: false,
                    config_id: 1,
                    scheme: FecScheme::CauchyRs,
                    k: 40,
                    repair_index: 2,
                    block_start: Psn::new(0x1000),
                    session_id: 7,
                    present: (0..40).filter(|j| *j != 5).collect(),
                    lost: Some([0, 1, 2, 39].into_iter().collect()),
                    symbol: &sym,
                })),
            ),
            (
                "HELLO",
                enc(Message::Hello(Hello {
                    flow_kind: FLOW_KIND_ROCEV2,
                    supported_schemes: 0b111,
                    max_k: 64,
                    max_m: 8,
                    max_t: 1104,
                    rdma_mtu: 1024,
                    nonce: 0x0123_4567_89ab_cdef,
                    addrs: FlowAddrs::V4 {
                        src: [192, 0, 2, 1],
                        dst: [203, 0, 113, 1],
                    },
                    flow_label: 0x11,
                })),
            ),
            (
                "HELLO_ACK",
                enc(Message::HelloAck(HelloAck {
                    flow_id: 7,
                    flow_kind: FLOW_KIND_ROCEV2_RESPONSES,
                    af: AddressFamily::V6,
                    supported_schemes: 0b10_0010,
                    max_k: 32,
                    max_m: 4,
                    max_t: 1100,
                    rdma_mtu: 4096,
                    nonce: 42,
                    max_open_blocks: 512,
                })),
            ),
            (
                "PARAM_UPDATE",
                enc(Message::ParamUpdate(ParamUpdate {
                    flow_id: 7,
                    config_id: 2,
                    scheme: FecScheme::XorParity,
                    k: 16,
                    m: 1,
                    t: 1100,
                    effective_psn: Psn::new(123_456),
                })),
            ),
            (
                "PARAM_ACK",
                enc(Message::ParamAck(ParamAck {
                    flow_id: 7,
                    config_id: 2,
                    status: ParamStatus::LimitsExceeded,
                })),
            ),
            (
                "REPAIR_REQUEST",
                enc(Message::RepairRequest(RepairRequest {
                    flow_id: 7,
                    fallback: false,
                    kind: RequestKind::Block(BlockRequest {
                        config_id: 1,
                        scheme: FecScheme::CauchyRs,
                        k: 4,
                        repairs_held: 2,
                        block_start: Psn::new(4096),
                        suggested_m: 1,
                        request_id: 9,
                        lost: [0, 1, 2].into_iter().collect(),
                    }),
                })),
            ),
            (
                "REPAIR_REQUEST",
                enc(Message::RepairRequest(RepairRequest {
                    flow_id: 7,
                    fallback: true,
                    kind: RequestKind::Ranges(RangeRequest {
                        request_id: 10,
                        ranges: LostRanges::from_slice(&ranges),
                    }),
                })),
            ),
            (
                "LOSS_REPORT",
                enc(Message::LossReport(LossReport {
                    flow_id: 7,
                    interval_us: 100_000,
                    expected: 1000,
                    received: 990,
                    restored: 9,
                    incomplete_blocks: 1,
                    ce_marked: 4,
                    repairs_received: 120,
                    repairs_ce_marked: 0,
                })),
            ),
            (
                "PATH_REPORT",
                enc(Message::PathReport(PathReport {
                    truncated: true,
                    method: Method::NodeLocalDrop,
                    addrs: FlowAddrs::V6 { src: V6A, dst: V6B },
                    flow_label: 0x0100_0011,
                    hops: HopEntries::from_slice(&hops),
                })),
            ),
            (
                "CLOSE",
                enc(Message::Close(Close {
                    flow_id: 7,
                    reason: CloseReason::CircuitBreaker,
                })),
            ),
            (
                "TC_AETH",
                enc(Message::TcAeth(TcAethReport {
                    flow_id: 7,
                    seq: 3,
                    fragment: TcAeth::new(Psn::new(100), &[seg(110, 120), seg(125, 125)]).unwrap(),
                })),
            ),
        ]
    }

    /// Every type decodes, under its own name, and its renderings agree
    /// on the field list: one line per field, one key per field.
    #[test]
    fn every_type_renders() {
        for (name, b) in every_message() {
            let d = super::decode(&b).unwrap();
            let text = d.text();
            assert!(text.starts_with(&format!("CREM {name} (type ")), "{text}");
            assert!(!text.contains("{") && !text.contains("Some("), "{text}");
            let line = d.line();
            assert!(!line.contains('\n'), "{line}");
            let j = d.json();
            assert_eq!(j["type"], name);
            for f in &d.fields {
                assert!(j.contains_key(f.key), "{name}: {}", f.key);
                assert!(
                    text.contains(&format!("  {}:", f.label)),
                    "{name}: {}",
                    f.label
                );
            }
        }
    }

    #[test]
    fn repair_text_and_json() {
        let b = &every_message()[0].1;
        let d = super::decode(b).unwrap();
        assert_eq!(
            d.text(),
            "\
CREM REPAIR (type 1), flags 0x80 [RETX], length 52, flow ID 48879
  Config ID:          1
  Scheme:             cauchy (1)
  k:                  40
  Repair Index:       2
  Block Start PSN:    4096
  Repair Session ID:  7
  Symbol Length T:    16
  Present Bitmap:     0-4,6-39 (39 of 40 positions; 0xfbffffff ff000000)
  Lost Source Bitmap: 0-2,39 (4 of 40 positions; 0xe0000000 01000000)
  Repair Symbol:      16 octets
    0000  ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab  ................
"
        );
        assert_eq!(
            d.line(),
            "CREM REPAIR (type 1), flags 0x80 [RETX], length 52, flow ID 48879 | \
             Config ID 1, Scheme cauchy, k 40, Repair Index 2, Block Start PSN 4096, \
             Repair Session ID 7, Symbol Length T 16, Present Bitmap 0-4,6-39, \
             Lost Source Bitmap 0-2,39"
        );
        let j = Value::Object(d.json());
        assert_eq!(j["flag-names"], serde_json::json!(["RETX"]));
        assert_eq!(j["lost-source-bitmap"], serde_json::json!([0, 1, 2, 39]));
        assert_eq!(j["repair-symbol"], "ab".repeat(16));
    }

    #[test]
    fn path_report_text_and_json() {
        let b = &every_message()[8].1;
        let d = super::decode(b).unwrap();
        assert_eq!(
            d.text(),
            "\
CREM PATH_REPORT (type 8), flags 0x80 [TRUNCATED], length 100, flow ID 0
  Method:              node-local-drop (3)
  Entry Count:         2
  AF:                  6
  Source Address:      2001:db8::1
  Destination Address: 2001:db8::2
  Flow Label:          0x01000011 (dest QP 0x000011)
  Hop Entries:         2
    Hop Entry 1:
      Node ID:               10
      Marking Period Number: 3
      Lost Count:            3
      Queue Delay Change:    -25 us
      Cause:                 queue-overflow (1)
      PSN Count:             3
      Dropped PSNs:          700-701,705 (3 PSNs)
    Hop Entry 2:
      Node ID:               11
      Marking Period Number: 3
      Lost Count:            0
      Queue Delay Change:    4 us
      Cause:                 9 (unassigned)
      PSN Count:             0
      Dropped PSNs:          none (0 PSNs)
"
        );
        assert_eq!(
            Value::Object(d.json()).to_string(),
            r#"{"type":"PATH_REPORT","type-value":8,"flags":128,"flag-names":["TRUNCATED"],"length":100,"flow-id":0,"method":"node-local-drop","entry-count":2,"af":6,"source-address":"2001:db8::1","destination-address":"2001:db8::2","flow-label":16777233,"dest-qp":17,"hop-entries":[{"node-id":10,"marking-period-number":3,"lost-count":3,"queue-delay-change-us":-25,"cause":"queue-overflow","psn-count":3,"dropped-psns":[700,701,705]},{"node-id":11,"marking-period-number":3,"lost-count":0,"queue-delay-change-us":4,"cause":9,"psn-count":0,"dropped-psns":[]}]}"#
        );
    }

    #[test]
    fn hello_ranges_and_tc_aeth() {
        let all = every_message();
        let j = |i: usize| Value::Object(super::decode(&all[i].1).unwrap().json()).to_string();
        assert_eq!(
            j(1),
            r#"{"type":"HELLO","type-value":2,"flags":0,"flag-names":[],"length":40,"flow-id":0,"flow-kind":"requests","af":4,"supported-schemes":["source-copy","cauchy","xor"],"max-k":64,"max-m":8,"max-t":1104,"rdma-mtu":1024,"sender-nonce":"0x0123456789abcdef","source-address":"192.0.2.1","destination-address":"203.0.113.1","flow-label":17,"dest-qp":17}"#
        );
        let d = super::decode(&all[6].1).unwrap();
        assert_eq!(
            d.line(),
            "CREM REPAIR_REQUEST (type 6), flags 0x30 [FALLBACK RANGES], length 20, flow ID 7 | \
             Request ID 10, Range Count 2, Ranges 4096-4098,16777215-0"
        );
        assert!(j(6).contains(
            r#""ranges":[{"start-psn":4096,"count":3},{"start-psn":16777215,"count":2}]"#
        ));
        let d = super::decode(&all[10].1).unwrap();
        assert_eq!(
            d.text(),
            "\
CREM TC_AETH (type 12), flags 0x00, length 40, flow ID 7
  SegmentNum:        3
  Last Finished PSN: 100
  Segments:          110-120 (11), 125 (1)
  Lost (implied):    101-109 (9), 121-124 (4)
  Report Sequence:   3
"
        );
        assert!(j(10).contains(r#""segments":[{"left":110,"right":120},{"left":125,"right":125}]"#));
    }

    #[test]
    fn errors_and_trailing_octets() {
        let close = Close {
            flow_id: 7,
            reason: CloseReason::Other(300),
        };
        let mut buf = [0u8; 14];
        let n = close.encode(&mut buf).unwrap();
        let s = super::decode(&buf[..n]).unwrap().text();
        assert_eq!(
            s,
            "CREM CLOSE (type 9), flags 0x00, length 12, flow ID 7\n  Reason: 300 (unassigned)\n"
        );
        let d = super::decode(&buf).unwrap();
        assert!(d
            .text()
            .ends_with("(2 octets after the message's Length were ignored)\n"));
        assert_eq!(d.json()["trailing-octets"], 2);
        assert_eq!(d.json()["reason"], 300);
        assert!(d
            .line()
            .ends_with(" (2 octets after the message's Length were ignored)"));
        let e = |b: &[u8]| super::decode(b).err().unwrap();
        assert_eq!(
            e(&[0x21, 0, 0, 8, 0, 0, 0, 0]),
            "not a CREM message: unsupported version 2"
        );
        assert_eq!(
            e(&[0x19, 0, 0, 8, 0, 0, 0, 1]),
            "invalid CLOSE: length field inconsistent with contents"
        );
        // Every prefix and every one-octet corruption of every message
        // decodes or fails cleanly.
        for (_, b) in every_message() {
            for n in 0..b.len() {
                let _ = super::decode(&b[..n]).map(|d| (d.text(), d.line(), d.json()));
            }
            for i in 0..b.len() {
                for v in [0u8, 1, 0x7f, 0x80, 0xff] {
                    let mut c = b.clone();
                    c[i] = v;
                    let _ = super::decode(&c).map(|d| (d.text(), d.line(), d.json()));
                }
            }
        }
    }
}
