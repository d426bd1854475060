//! Wire codecs for the CREM messages (draft "Message Formats") and the T/C AETH
//! fragment of the windowless-ACK draft.
//!
//! Every message starts with the 8-octet common header:
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! |Version| Type  |     Flags     |            Length             |
//! |                            Flow ID                            |
//! ```
//!
//! Octet 0 is `version << 4 | type`; Version is 1. Length counts the whole
//! message including the header.
//!
//! # Decoding rules (strict)
//!
//! * fewer than 8 octets, or a Length larger than the buffer: [`Error::Truncated`];
//!   octets after Length in the buffer are ignored (they are not part of the
//!   message);
//! * Version ≠ 1: [`Error::BadVersion`]; a Type that is not one of the nine
//!   standard types or the private [`MessageType::TcAeth`] (12):
//!   [`Error::UnknownType`];
//! * Length must be exactly the size implied by the message's own contents
//!   (type, AF, k, flags, counts): otherwise [`Error::BadLength`];
//! * Flag bits not defined for the type: [`Error::BadField`]`("flags")`. Unknown
//!   flags are rejected rather than ignored because the registered flags change
//!   the message layout (RETX adds a bitmap, RANGES selects another body);
//! * Reserved fields are written as zero and ignored on receipt (so
//!   `encode(decode(x)) == x` holds for every `x` whose reserved fields are zero);
//! * field values the draft rules out are rejected with [`Error::BadField`]
//!   naming the field (k = 0, bitmap bits at positions ≥ k, AF ∉ {4, 6}, Entry
//!   Count > 16, reserved code points 0 of Flow Kind / Method, …); per-message
//!   rules are listed on each type.
//!
//! Registry-valued fields whose registries are open (FEC scheme, PARAM_ACK
//! status, CLOSE reason, loss cause, measurement method) decode unknown values
//! into an `Other(_)` variant instead of failing, so engines can apply the
//! draft's rule for them (e.g. "a non-zero Status keeps the configuration").
//!
//! # Encoding
//!
//! Encoders write into a caller buffer and return the number of octets
//! written, or [`Error::BufferTooSmall`] with the size needed; `encoded_len()`
//! gives the size up front. Encoders apply the same validation as decoders, so
//! anything that encodes successfully decodes back to an equal value.
//!
//! Nothing here panics or reads out of bounds on any input.

pub mod bitmap;
pub mod close;
pub mod hello;
pub mod loss;
pub mod param;
pub mod path;
pub mod repair;
pub mod request;
pub mod route;
pub mod tc_aeth;

pub use self::bitmap::Bitmap256;
pub use self::close::{Close, CloseReason};
pub use self::hello::{
    AddressFamily, FlowAddrs, FlowKind, Hello, HelloAck, FLOW_KIND_ROCEV2,
    FLOW_KIND_ROCEV2_RESPONSES,
};
pub use self::loss::LossReport;
pub use self::param::{ParamAck, ParamStatus, ParamUpdate};
pub use self::path::{
    DroppedPsns, DroppedPsnsIter, HopEntries, HopEntriesIter, HopEntry, LossCause, Method,
    PathReport, MAX_HOP_ENTRIES,
};
pub use self::repair::{cauchy_index_ok, repair_index_ok, FecScheme, Repair};
pub use self::request::{
    BlockRequest, LostRanges, LostRangesIter, RangeRequest, RepairRequest, RequestKind,
};
pub use self::route::{accepted_from, route, Route, Side};
pub use self::tc_aeth::{Segment, TcAeth, TcAethReport, TC_AETH_LEN};

use super::psn::{Psn, PsnRange};
use core::fmt;

/// The protocol version carried in every message.
pub const VERSION: u8 = 1;
/// Length of the common header.
pub const HEADER_LEN: usize = 8;
/// Largest possible message (the Length field is 16 bits).
pub const MAX_MESSAGE_LEN: usize = u16::MAX as usize;

/// Errors of the codecs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Error {
    /// The input is shorter than the common header, than its Length field, or
    /// (for fragments) than the fixed fragment size.
    Truncated,
    /// Version is not 1 (the value found).
    BadVersion(u8),
    /// Type is not a known message type (the value found).
    UnknownType(u8),
    /// A type-specific decoder was given a message of another type.
    UnexpectedType(MessageType),
    /// Length is not the exact size implied by the contents (or, when
    /// encoding, the message would not fit in the 16-bit Length).
    BadLength,
    /// A field has a value the draft rules out (the field's name).
    BadField(&'static str),
    /// The output buffer is too small; `needed` octets are required.
    BufferTooSmall {
        /// Octets the encoding needs.
        needed: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated => f.write_str("message truncated"),
            Error::BadVersion(v) => write!(f, "unsupported version {v}"),
            Error::UnknownType(t) => write!(f, "unknown message type {t}"),
            Error::UnexpectedType(t) => write!(f, "unexpected message type {t:?}"),
            Error::BadLength => f.write_str("length field inconsistent with contents"),
            Error::BadField(name) => write!(f, "invalid field: {name}"),
            Error::BufferTooSmall { needed } => {
                write!(f, "buffer too small, {needed} octets needed")
            }
        }
    }
}

/// Result of the codecs.
pub type Result<T> = core::result::Result<T, Error>;

/// CREM message types (4 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MessageType {
    /// 1: repair symbol (or block information).
    Repair = 1,
    /// 2: capability negotiation, CSF → CRF.
    Hello = 2,
    /// 3: answer to HELLO, assigns the Flow ID.
    HelloAck = 3,
    /// 4: configuration change.
    ParamUpdate = 4,
    /// 5: answer to PARAM_UPDATE.
    ParamAck = 5,
    /// 6: request for coded retransmission / fallback.
    RepairRequest = 6,
    /// 7: receiver statistics.
    LossReport = 7,
    /// 8: on-path node report.
    PathReport = 8,
    /// 9: release of flow state.
    Close = 9,
    /// 12 (Private Use, the upper quarter of the type space): one T/C AETH
    /// fragment from the CRF to the CSF for selective-repeat recovery
    /// (DESIGN §3). Also known as SACK.
    TcAeth = 12,
}

impl MessageType {
    /// Alias of [`MessageType::TcAeth`].
    pub const SACK: MessageType = MessageType::TcAeth;
    /// The wire value 12 used for [`MessageType::TcAeth`].
    pub const TC_AETH_VALUE: u8 = 12;

    /// Parses the 4-bit type; `None` for unknown values.
    pub const fn from_u8(v: u8) -> Option<MessageType> {
        Some(match v {
            1 => MessageType::Repair,
            2 => MessageType::Hello,
            3 => MessageType::HelloAck,
            4 => MessageType::ParamUpdate,
            5 => MessageType::ParamAck,
            6 => MessageType::RepairRequest,
            7 => MessageType::LossReport,
            8 => MessageType::PathReport,
            9 => MessageType::Close,
            12 => MessageType::TcAeth,
            _ => return None,
        })
    }

    /// The wire value.
    #[inline]
    pub const fn to_u8(self) -> u8 {
        self as u8
    }

    /// Flag bits defined for this type.
    pub const fn defined_flags(self) -> u8 {
        match self {
            MessageType::Repair => repair::FLAG_RETX | repair::FLAG_LAST | repair::FLAG_INFO,
            MessageType::RepairRequest => request::FLAG_FALLBACK | request::FLAG_RANGES,
            MessageType::PathReport => path::FLAG_TRUNCATED,
            _ => 0,
        }
    }
}

/// The decoded common header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    /// Message type.
    pub msg_type: MessageType,
    /// Flags octet (only bits defined for the type are accepted).
    pub flags: u8,
    /// Total message length including the header.
    pub length: u16,
    /// Flow ID (zero in HELLO and PATH_REPORT).
    pub flow_id: u32,
}

impl Header {
    /// Parses and checks the common header of `buf`, returning it together with
    /// the message's octets (exactly `Length` octets, header included).
    ///
    /// Checks version, type, defined flags, `8 <= Length <= buf.len()`. It does
    /// not check the type-specific body; this is the cheap peek the datapath
    /// uses for flow lookup before a full [`decode`].
    pub fn decode(buf: &[u8]) -> Result<(Header, &[u8])> {
        let Some((h, _)) = buf.split_first_chunk::<HEADER_LEN>() else {
            return Err(Error::Truncated);
        };
        let version = h[0] >> 4;
        if version != VERSION {
            return Err(Error::BadVersion(version));
        }
        let tv = h[0] & 0x0f;
        let msg_type = MessageType::from_u8(tv).ok_or(Error::UnknownType(tv))?;
        let flags = h[1];
        let length = u16::from_be_bytes([h[2], h[3]]);
        let flow_id = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
        if (length as usize) < HEADER_LEN {
            return Err(Error::BadLength);
        }
        let msg = buf.get(..length as usize).ok_or(Error::Truncated)?;
        if flags & !msg_type.defined_flags() != 0 {
            return Err(Error::BadField("flags"));
        }
        Ok((
            Header {
                msg_type,
                flags,
                length,
                flow_id,
            },
            msg,
        ))
    }

    /// Writes the header into the first 8 octets of `buf`.
    pub fn write(&self, buf: &mut [u8]) -> Result<()> {
        let Some((h, _)) = buf.split_first_chunk_mut::<HEADER_LEN>() else {
            return Err(Error::BufferTooSmall { needed: HEADER_LEN });
        };
        h[0] = (VERSION << 4) | self.msg_type.to_u8();
        h[1] = self.flags;
        h[2..4].copy_from_slice(&self.length.to_be_bytes());
        h[4..8].copy_from_slice(&self.flow_id.to_be_bytes());
        Ok(())
    }
}

/// Any decoded CREM message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message<'a> {
    /// Type 1.
    Repair(Repair<'a>),
    /// Type 2.
    Hello(Hello),
    /// Type 3.
    HelloAck(HelloAck),
    /// Type 4.
    ParamUpdate(ParamUpdate),
    /// Type 5.
    ParamAck(ParamAck),
    /// Type 6.
    RepairRequest(RepairRequest<'a>),
    /// Type 7.
    LossReport(LossReport),
    /// Type 8.
    PathReport(PathReport<'a>),
    /// Type 9.
    Close(Close),
    /// Type 12 (Private Use): T/C AETH report.
    TcAeth(TcAethReport),
}

/// Decodes one CREM message from the start of `buf` (octets after its Length
/// are ignored). Never panics.
pub fn decode(buf: &[u8]) -> Result<Message<'_>> {
    Message::decode(buf)
}

impl<'a> Message<'a> {
    /// Decodes one CREM message; see [`decode`].
    pub fn decode(buf: &'a [u8]) -> Result<Message<'a>> {
        let (h, _) = Header::decode(buf)?;
        Ok(match h.msg_type {
            MessageType::Repair => Message::Repair(Repair::decode(buf)?),
            MessageType::Hello => Message::Hello(Hello::decode(buf)?),
            MessageType::HelloAck => Message::HelloAck(HelloAck::decode(buf)?),
            MessageType::ParamUpdate => Message::ParamUpdate(ParamUpdate::decode(buf)?),
            MessageType::ParamAck => Message::ParamAck(ParamAck::decode(buf)?),
            MessageType::RepairRequest => Message::RepairRequest(RepairRequest::decode(buf)?),
            MessageType::LossReport => Message::LossReport(LossReport::decode(buf)?),
            MessageType::PathReport => Message::PathReport(PathReport::decode(buf)?),
            MessageType::Close => Message::Close(Close::decode(buf)?),
            MessageType::TcAeth => Message::TcAeth(TcAethReport::decode(buf)?),
        })
    }

    /// The message's type.
    pub const fn msg_type(&self) -> MessageType {
        match self {
            Message::Repair(_) => MessageType::Repair,
            Message::Hello(_) => MessageType::Hello,
            Message::HelloAck(_) => MessageType::HelloAck,
            Message::ParamUpdate(_) => MessageType::ParamUpdate,
            Message::ParamAck(_) => MessageType::ParamAck,
            Message::RepairRequest(_) => MessageType::RepairRequest,
            Message::LossReport(_) => MessageType::LossReport,
            Message::PathReport(_) => MessageType::PathReport,
            Message::Close(_) => MessageType::Close,
            Message::TcAeth(_) => MessageType::TcAeth,
        }
    }

    /// The Flow ID of the header (zero for HELLO and PATH_REPORT).
    pub const fn flow_id(&self) -> u32 {
        match self {
            Message::Repair(m) => m.flow_id,
            Message::Hello(_) | Message::PathReport(_) => 0,
            Message::HelloAck(m) => m.flow_id,
            Message::ParamUpdate(m) => m.flow_id,
            Message::ParamAck(m) => m.flow_id,
            Message::RepairRequest(m) => m.flow_id,
            Message::LossReport(m) => m.flow_id,
            Message::Close(m) => m.flow_id,
            Message::TcAeth(m) => m.flow_id,
        }
    }

    /// Octets [`Message::encode`] writes (for valid messages).
    pub fn encoded_len(&self) -> usize {
        match self {
            Message::Repair(m) => m.encoded_len(),
            Message::Hello(m) => m.encoded_len(),
            Message::HelloAck(m) => m.encoded_len(),
            Message::ParamUpdate(m) => m.encoded_len(),
            Message::ParamAck(m) => m.encoded_len(),
            Message::RepairRequest(m) => m.encoded_len(),
            Message::LossReport(m) => m.encoded_len(),
            Message::PathReport(m) => m.encoded_len(),
            Message::Close(m) => m.encoded_len(),
            Message::TcAeth(m) => m.encoded_len(),
        }
    }

    /// Encodes into `buf`, returning the octets written.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize> {
        match self {
            Message::Repair(m) => m.encode(buf),
            Message::Hello(m) => m.encode(buf),
            Message::HelloAck(m) => m.encode(buf),
            Message::ParamUpdate(m) => m.encode(buf),
            Message::ParamAck(m) => m.encode(buf),
            Message::RepairRequest(m) => m.encode(buf),
            Message::LossReport(m) => m.encode(buf),
            Message::PathReport(m) => m.encode(buf),
            Message::Close(m) => m.encode(buf),
            Message::TcAeth(m) => m.encode(buf),
        }
    }
}

// ---------------------------------------------------------------------------
// Shared helpers for the per-message codecs.

/// Parses the header of `buf`, checks the type, and returns the header and a
/// reader positioned after the header, limited to the message's Length.
fn open(buf: &[u8], expected: MessageType) -> Result<(Header, Reader<'_>)> {
    let (h, msg) = Header::decode(buf)?;
    if h.msg_type != expected {
        return Err(Error::UnexpectedType(h.msg_type));
    }
    let body = msg.get(HEADER_LEN..).ok_or(Error::BadLength)?;
    Ok((h, Reader { buf: body }))
}

/// Checks `len` against the 16-bit Length and `buf`, and writes the header.
/// Returns a writer positioned after the header and limited to `len` octets.
fn start<'b>(
    buf: &'b mut [u8],
    len: usize,
    msg_type: MessageType,
    flags: u8,
    flow_id: u32,
) -> Result<Writer<'b>> {
    if len > MAX_MESSAGE_LEN {
        return Err(Error::BadLength);
    }
    let Some(out) = buf.get_mut(..len) else {
        return Err(Error::BufferTooSmall { needed: len });
    };
    Header {
        msg_type,
        flags,
        length: len as u16,
        flow_id,
    }
    .write(out)?;
    let (_, rest) = out
        .split_at_mut_checked(HEADER_LEN)
        .ok_or(Error::BufferTooSmall { needed: len })?;
    Ok(Writer {
        buf: rest,
        needed: len,
    })
}

/// Bounds-checked big-endian reader over a message body.
struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    #[inline]
    fn remaining(&self) -> usize {
        self.buf.len()
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let (a, rest) = self.buf.split_first_chunk::<N>().ok_or(Error::BadLength)?;
        self.buf = rest;
        Ok(*a)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let (a, rest) = self.buf.split_at_checked(n).ok_or(Error::BadLength)?;
        self.buf = rest;
        Ok(a)
    }

    #[inline]
    fn u8(&mut self) -> Result<u8> {
        let [a] = self.array::<1>()?;
        Ok(a)
    }

    #[inline]
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array::<2>()?))
    }

    #[inline]
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array::<4>()?))
    }

    #[inline]
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array::<8>()?))
    }

    /// A 24-bit PSN followed by an 8-bit field: returns both.
    #[inline]
    fn psn_u8(&mut self) -> Result<(Psn, u8)> {
        let [a, b, c, d] = self.array::<4>()?;
        Ok((Psn::from_be_bytes([a, b, c]), d))
    }

    /// `words` 32-bit words of bitmap.
    fn bitmap(&mut self, words: usize) -> Result<Bitmap256> {
        let bytes = self.take(words.checked_mul(4).ok_or(Error::BadLength)?)?;
        Bitmap256::from_be_bytes(bytes).ok_or(Error::BadLength)
    }

    /// The reader must be exhausted: the Length matched the contents.
    #[inline]
    fn finish(&self) -> Result<()> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(Error::BadLength)
        }
    }
}

/// Bounds-checked big-endian writer.
struct Writer<'b> {
    buf: &'b mut [u8],
    /// Total size reported if the buffer runs out (should not happen: callers
    /// size the buffer first).
    needed: usize,
}

impl Writer<'_> {
    #[inline]
    fn bytes(&mut self, src: &[u8]) -> Result<()> {
        let buf = core::mem::take(&mut self.buf);
        let (a, rest) = buf
            .split_at_mut_checked(src.len())
            .ok_or(Error::BufferTooSmall {
                needed: self.needed,
            })?;
        a.copy_from_slice(src);
        self.buf = rest;
        Ok(())
    }

    #[inline]
    fn u8(&mut self, v: u8) -> Result<()> {
        self.bytes(&[v])
    }

    #[inline]
    fn u16(&mut self, v: u16) -> Result<()> {
        self.bytes(&v.to_be_bytes())
    }

    #[inline]
    fn u32(&mut self, v: u32) -> Result<()> {
        self.bytes(&v.to_be_bytes())
    }

    #[inline]
    fn u64(&mut self, v: u64) -> Result<()> {
        self.bytes(&v.to_be_bytes())
    }

    #[inline]
    fn psn_u8(&mut self, p: Psn, v: u8) -> Result<()> {
        let [a, b, c] = p.to_be_bytes();
        self.bytes(&[a, b, c, v])
    }

    fn bitmap(&mut self, b: &Bitmap256, words: usize) -> Result<()> {
        let ws = b.words();
        for w in ws.iter().take(words) {
            self.u32(*w)?;
        }
        Ok(())
    }
}

/// Checks the block size k (1..=255).
#[inline]
fn check_k(k: u8) -> Result<()> {
    if k == 0 {
        Err(Error::BadField("k"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_rules() {
        assert_eq!(decode(&[]), Err(Error::Truncated));
        assert_eq!(decode(&[0x11, 0, 0, 8, 0, 0, 0]), Err(Error::Truncated));
        assert_eq!(
            decode(&[0x21, 0, 0, 8, 0, 0, 0, 0]),
            Err(Error::BadVersion(2))
        );
        assert_eq!(
            decode(&[0x10, 0, 0, 8, 0, 0, 0, 0]),
            Err(Error::UnknownType(0))
        );
        assert_eq!(
            decode(&[0x1a, 0, 0, 8, 0, 0, 0, 0]),
            Err(Error::UnknownType(10))
        );
        assert_eq!(
            decode(&[0x1d, 0, 0, 8, 0, 0, 0, 0]),
            Err(Error::UnknownType(13))
        );
        assert_eq!(decode(&[0x19, 0, 0, 7, 0, 0, 0, 0]), Err(Error::BadLength));
        assert_eq!(
            decode(&[0x19, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0]),
            Err(Error::Truncated)
        );
        // CLOSE with Length 8 (too short for its body)
        assert_eq!(decode(&[0x19, 0, 0, 8, 0, 0, 0, 1]), Err(Error::BadLength));
        // CLOSE with an undefined flag
        assert_eq!(
            decode(&[0x19, 0x01, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0]),
            Err(Error::BadField("flags"))
        );
        let ok = [0x19, 0, 0, 12, 0, 0, 0, 1, 0, 4, 0, 0, 0xde, 0xad];
        let m = decode(&ok).unwrap();
        assert_eq!(m.msg_type(), MessageType::Close);
        assert_eq!(m.flow_id(), 1);
        let (h, body) = Header::decode(&ok).unwrap();
        assert_eq!(h.length, 12);
        assert_eq!(body.len(), 12);
    }
}
