//! Reads pcap and pcapng captures (what `tcpdump -w` and Wireshark write),
//! one packet record at a time from any `Read`, so a capture of any size,
//! or `tcpdump -w -` on a pipe, is read in constant memory.
//!
//! Hand-written rather than a crate: the formats are small, and what this
//! tool needs is a reader that never trusts a length — every field is
//! bounds-checked, no allocation is sized by the file before the octets
//! have been read, and every error names the byte offset of the record
//! that caused it, so a truncated or hostile file is reported, never a
//! panic or an out-of-memory abort.
//!
//! Formats: pcap (draft-ietf-opsawg-pcap) in both byte orders with
//! microsecond or nanosecond timestamps; pcapng (draft-ietf-opsawg-pcapng)
//! with its sections (each in its own byte order), interfaces (link type,
//! snap length, `if_tsresol`, `if_tsoffset`) and the Enhanced, Simple and
//! obsolete Packet Blocks; other blocks are skipped.

use std::fmt;
use std::io::{self, Read};

/// Largest record or block accepted: more than any link's packets (64 KiB
/// GSO/GRO frames included), small enough that a hostile length cannot
/// exhaust memory.
pub const MAX_RECORD: u32 = 16 << 20;

/// A capture timestamp, printed as seconds since the epoch with as many
/// decimals as the capture's resolution has (6 for microseconds, 9 for
/// nanoseconds), as `tcpdump -tt` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timestamp {
    /// Nanoseconds since the epoch (negative only with a negative offset).
    pub nanos: i128,
    /// Decimals to print (0..=9).
    pub digits: u8,
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.nanos < 0 { "-" } else { "" };
        let a = self.nanos.unsigned_abs();
        let (secs, frac) = (a / 1_000_000_000, a % 1_000_000_000);
        let d = u32::from(self.digits.min(9));
        if d == 0 {
            return write!(f, "{sign}{secs}");
        }
        let frac = frac / 10u128.pow(9 - d);
        write!(f, "{sign}{secs}.{frac:0w$}", w = d as usize)
    }
}

/// One packet record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// 1-based position among the packet records (Wireshark's frame number).
    pub number: u64,
    /// Byte offset of the record (pcap) or block (pcapng) in the file.
    pub offset: u64,
    /// `None` for pcapng Simple Packet Blocks, which carry none.
    pub time: Option<Timestamp>,
    /// LINKTYPE_* of the packet's interface.
    pub linktype: u16,
    /// The captured octets.
    pub data: Vec<u8>,
    /// The packet's length on the wire (more than `data.len()` when the
    /// capture's snap length cut it).
    pub orig_len: u32,
}

/// A malformed or unreadable capture: what and where.
#[derive(Debug, PartialEq, Eq)]
pub struct Error {
    /// Byte offset of the offending header, record or block.
    pub offset: u64,
    pub msg: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset {}: {}", self.offset, self.msg)
    }
}

fn err<T>(offset: u64, msg: impl Into<String>) -> Result<T, Error> {
    Err(Error {
        offset,
        msg: msg.into(),
    })
}

/// Byte order of a pcap file or a pcapng section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    Le,
    Be,
}

impl Order {
    fn u16(self, b: &[u8], at: usize) -> Option<u16> {
        let a: [u8; 2] = b.get(at..at.checked_add(2)?)?.try_into().ok()?;
        Some(match self {
            Order::Le => u16::from_le_bytes(a),
            Order::Be => u16::from_be_bytes(a),
        })
    }

    fn u32(self, b: &[u8], at: usize) -> Option<u32> {
        let a: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(match self {
            Order::Le => u32::from_le_bytes(a),
            Order::Be => u32::from_be_bytes(a),
        })
    }

    fn u64(self, b: &[u8], at: usize) -> Option<u64> {
        let a: [u8; 8] = b.get(at..at.checked_add(8)?)?.try_into().ok()?;
        Some(match self {
            Order::Le => u64::from_le_bytes(a),
            Order::Be => u64::from_be_bytes(a),
        })
    }
}

/// A pcapng interface (Interface Description Block).
#[derive(Clone, Copy, Debug)]
struct Iface {
    linktype: u16,
    snaplen: u32,
    /// Timestamp units per second: 10^n or 2^n.
    units: u128,
    digits: u8,
    /// if_tsoffset, seconds.
    offset_s: i64,
}

enum Kind {
    Pcap {
        order: Order,
        /// Nanosecond (not microsecond) timestamps.
        nano: bool,
        linktype: u16,
    },
    Pcapng {
        order: Order,
        ifaces: Vec<Iface>,
    },
}

/// Reads packet records from a pcap or pcapng stream.
pub struct Reader<R> {
    r: R,
    /// Octets consumed so far.
    pos: u64,
    kind: Kind,
    number: u64,
}

const PCAPNG_SHB: u32 = 0x0A0D_0D0A;
const PCAPNG_BOM: u32 = 0x1A2B_3C4D;

/// Reads up to `buf.len()` octets; fewer only at the end of the stream.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl<R: Read> Reader<R> {
    /// Reads the file header (pcap) or first Section Header Block (pcapng).
    pub fn new(mut r: R) -> Result<Reader<R>, Error> {
        let mut m = [0u8; 4];
        let n = fill(&mut r, &mut m).map_err(|e| Error {
            offset: 0,
            msg: e.to_string(),
        })?;
        if n < 4 {
            return err(0, format!("file too short for a capture ({n} octets)"));
        }
        let mut rd = Reader {
            r,
            pos: 4,
            kind: Kind::Pcapng {
                order: Order::Le,
                ifaces: vec![],
            },
            number: 0,
        };
        let (order, nano) = match m {
            [0xd4, 0xc3, 0xb2, 0xa1] => (Order::Le, false),
            [0xa1, 0xb2, 0xc3, 0xd4] => (Order::Be, false),
            [0x4d, 0x3c, 0xb2, 0xa1] => (Order::Le, true),
            [0xa1, 0xb2, 0x3c, 0x4d] => (Order::Be, true),
            [0x0a, 0x0d, 0x0d, 0x0a] => {
                let l = rd.take(0, 4, "section header block")?;
                rd.section(0, [l[0], l[1], l[2], l[3]])?;
                return Ok(rd);
            }
            _ => return err(0, bad_magic(m)),
        };
        let h = rd.take(0, 20, "pcap file header")?;
        let major = order.u16(&h, 0).unwrap_or(0);
        if major != 2 {
            return err(0, format!("pcap version {major} (only 2 is defined)"));
        }
        // The link type is the low 16 bits; the high ones may carry FCS
        // information, which the IP lengths make irrelevant here.
        let linktype = order.u32(&h, 16).unwrap_or(0) as u16;
        rd.kind = Kind::Pcap {
            order,
            nano,
            linktype,
        };
        Ok(rd)
    }

    /// Reads exactly `n` octets of the structure `what` starting at
    /// `start`, or says how much the file lacks.
    fn take(&mut self, start: u64, n: u32, what: &str) -> Result<Vec<u8>, Error> {
        let mut v = Vec::new();
        // Grows with the octets actually read: a length in a hostile file
        // allocates nothing it does not back with data.
        let got = (&mut self.r)
            .take(n.into())
            .read_to_end(&mut v)
            .map_err(|e| Error {
                offset: start,
                msg: e.to_string(),
            })?;
        self.pos += got as u64;
        if got < n as usize {
            return err(
                start,
                format!("{what} truncated: the file ends {got} octets into it, {n} expected"),
            );
        }
        Ok(v)
    }

    /// The next packet record, `None` at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<Record>, Error> {
        match self.kind {
            Kind::Pcap {
                order,
                nano,
                linktype,
            } => self.pcap_record(order, nano, linktype),
            Kind::Pcapng { .. } => self.pcapng_packet(),
        }
    }

    /// At a record boundary: `None` at a clean end of file, else the
    /// first `N` octets of the next structure.
    fn start<const N: usize>(&mut self, what: &str) -> Result<Option<[u8; N]>, Error> {
        let at = self.pos;
        let mut h = [0u8; N];
        let n = fill(&mut self.r, &mut h).map_err(|e| Error {
            offset: at,
            msg: e.to_string(),
        })?;
        self.pos += n as u64;
        match n {
            0 => Ok(None),
            n if n < N => err(
                at,
                format!("{what} truncated: the file ends {n} octets into it, {N} expected"),
            ),
            _ => Ok(Some(h)),
        }
    }

    fn pcap_record(
        &mut self,
        order: Order,
        nano: bool,
        linktype: u16,
    ) -> Result<Option<Record>, Error> {
        let at = self.pos;
        let Some(h) = self.start::<16>("packet record header")? else {
            return Ok(None);
        };
        let field = |i: usize| order.u32(&h, 4 * i).unwrap_or(0);
        let (secs, frac, caplen, orig_len) = (field(0), field(1), field(2), field(3));
        if caplen > MAX_RECORD {
            return err(
                at,
                format!("packet record of {caplen} octets (more than {MAX_RECORD})"),
            );
        }
        let data = self.take(at, caplen, "packet record")?;
        let sub = if nano { 1 } else { 1_000 };
        self.number += 1;
        Ok(Some(Record {
            number: self.number,
            offset: at,
            time: Some(Timestamp {
                nanos: i128::from(secs) * 1_000_000_000 + i128::from(frac) * sub,
                digits: if nano { 9 } else { 6 },
            }),
            linktype,
            data,
            orig_len,
        }))
    }

    /// Reads a Section Header Block whose type and length `len` (in the
    /// byte order it is about to declare) were read at `at`: its byte
    /// order applies to the section, whose interfaces start afresh.
    fn section(&mut self, at: u64, len: [u8; 4]) -> Result<(), Error> {
        let h = self.take(at, 4, "section header block")?;
        let order = match [h[0], h[1], h[2], h[3]] {
            [0x1a, 0x2b, 0x3c, 0x4d] => Order::Be,
            [0x4d, 0x3c, 0x2b, 0x1a] => Order::Le,
            b => {
                return err(
                    at,
                    format!(
                        "section header block: byte-order magic {} is not 0x{PCAPNG_BOM:08x}",
                        hex(&b)
                    ),
                )
            }
        };
        let len = order.u32(&len, 0).unwrap_or(0);
        let body = self.block_body(at, len, 12, order, "section header block")?;
        let major = order.u16(&body, 0).unwrap_or(0);
        if major != 1 {
            return err(at, format!("pcapng version {major} (only 1 is defined)"));
        }
        self.kind = Kind::Pcapng {
            order,
            ifaces: vec![],
        };
        Ok(())
    }

    /// Checks a block's total length `len`, of which `read` octets (from
    /// its start) are consumed, and returns the rest of its body, the
    /// trailing copy of the length checked.
    fn block_body(
        &mut self,
        at: u64,
        len: u32,
        read: u32,
        order: Order,
        what: &str,
    ) -> Result<Vec<u8>, Error> {
        if len % 4 != 0 || len < read + 4 {
            return err(
                at,
                format!(
                    "{what}: block length {len} (a multiple of 4, at least {})",
                    read + 4
                ),
            );
        }
        if len > MAX_RECORD {
            return err(
                at,
                format!("{what}: block of {len} octets (more than {MAX_RECORD})"),
            );
        }
        let mut body = self.take(at, len - read, what)?;
        let tail_at = body.len() - 4;
        let tail = order.u32(&body, tail_at).unwrap_or(0);
        if tail != len {
            return err(
                at,
                format!("{what}: trailing block length {tail} differs from the leading {len}"),
            );
        }
        body.truncate(tail_at);
        Ok(body)
    }

    fn pcapng_packet(&mut self) -> Result<Option<Record>, Error> {
        loop {
            let at = self.pos;
            let Some(h) = self.start::<8>("block header")? else {
                return Ok(None);
            };
            let (t, l) = ([h[0], h[1], h[2], h[3]], [h[4], h[5], h[6], h[7]]);
            // The Section Header Block's type reads the same in both orders.
            if u32::from_le_bytes(t) == PCAPNG_SHB {
                self.section(at, l)?;
                continue;
            }
            let Kind::Pcapng { order, .. } = self.kind else {
                return err(at, "pcapng block in a pcap file");
            };
            let ty = order.u32(&t, 0).unwrap_or(0);
            let len = order.u32(&l, 0).unwrap_or(0);
            let body = self.block_body(at, len, 8, order, &block_name(ty))?;
            if let Some(r) = self.pcapng_block(at, ty, order, &body)? {
                return Ok(Some(r));
            }
        }
    }

    /// Interprets one block body: an interface is recorded, a packet
    /// returned, anything else skipped.
    fn pcapng_block(
        &mut self,
        at: u64,
        ty: u32,
        order: Order,
        body: &[u8],
    ) -> Result<Option<Record>, Error> {
        let Kind::Pcapng { ifaces, .. } = &mut self.kind else {
            return Ok(None);
        };
        let what = block_name(ty);
        let short = || {
            err(
                at,
                format!("{what}: body of {} octets too short", body.len()),
            )
        };
        let u32_at = |i: usize| order.u32(body, i);
        let (iface, ts, caplen, orig_len, data_at) = match ty {
            1 => {
                let (Some(linktype), Some(snaplen)) = (order.u16(body, 0), u32_at(4)) else {
                    return short();
                };
                let mut i = Iface {
                    linktype,
                    snaplen,
                    units: 1_000_000,
                    digits: 6,
                    offset_s: 0,
                };
                if_options(body.get(8..).unwrap_or(&[]), order, &mut i).map_err(|m| Error {
                    offset: at,
                    msg: format!("{what}: {m}"),
                })?;
                ifaces.push(i);
                return Ok(None);
            }
            // Enhanced Packet Block.
            6 => {
                let (Some(id), Some(hi), Some(lo), Some(cap), Some(orig)) =
                    (u32_at(0), u32_at(4), u32_at(8), u32_at(12), u32_at(16))
                else {
                    return short();
                };
                (
                    id,
                    Some((u64::from(hi) << 32) | u64::from(lo)),
                    cap,
                    orig,
                    20,
                )
            }
            // Obsolete Packet Block: a 16-bit interface and a drop count.
            2 => {
                let (Some(id), Some(hi), Some(lo), Some(cap), Some(orig)) = (
                    order.u16(body, 0),
                    u32_at(4),
                    u32_at(8),
                    u32_at(12),
                    u32_at(16),
                ) else {
                    return short();
                };
                (
                    id.into(),
                    Some((u64::from(hi) << 32) | u64::from(lo)),
                    cap,
                    orig,
                    20,
                )
            }
            // Simple Packet Block: interface 0, no timestamp, the
            // captured length implied by the block and the snap length.
            3 => {
                let Some(orig) = u32_at(0) else {
                    return short();
                };
                let room = (body.len() - 4) as u32;
                let snap = ifaces.first().map_or(0, |i| i.snaplen);
                let cap = if snap == 0 { room } else { room.min(snap) };
                (0, None, orig.min(cap), orig, 4)
            }
            _ => return Ok(None),
        };
        let Some(i) = ifaces.get(iface as usize).copied() else {
            return err(
                at,
                format!(
                    "{what}: interface {iface}, but the section describes {}",
                    ifaces.len()
                ),
            );
        };
        let Some(data) = body.get(data_at..data_at + caplen as usize) else {
            return err(
                at,
                format!(
                    "{what}: captured length {caplen} overruns the block ({} octets of data)",
                    body.len().saturating_sub(data_at)
                ),
            );
        };
        self.number += 1;
        Ok(Some(Record {
            number: self.number,
            offset: at,
            time: ts.map(|t| i.time(t)),
            linktype: i.linktype,
            data: data.to_vec(),
            orig_len,
        }))
    }
}

impl Iface {
    fn time(&self, t: u64) -> Timestamp {
        let t = u128::from(t);
        let (secs, rem) = (t / self.units, t % self.units);
        let nanos = rem * 1_000_000_000 / self.units;
        // Both parts are far below i128's range: secs < 2^64, nanos < 10^9.
        Timestamp {
            nanos: (secs as i128 + i128::from(self.offset_s)) * 1_000_000_000 + nanos as i128,
            digits: self.digits,
        }
    }
}

/// Applies the options of an Interface Description Block that matter for
/// timestamps: if_tsresol (9) and if_tsoffset (14).
fn if_options(mut b: &[u8], order: Order, i: &mut Iface) -> Result<(), String> {
    while b.len() >= 4 {
        let code = order.u16(b, 0).unwrap_or(0);
        let len = order.u16(b, 2).unwrap_or(0) as usize;
        if code == 0 {
            break;
        }
        let padded = len.div_ceil(4) * 4;
        let Some(v) = b.get(4..4 + len) else {
            return Err(format!("option {code} of {len} octets overruns the block"));
        };
        match (code, v) {
            (9, &[r]) => {
                let (units, digits) = if r & 0x80 == 0 {
                    if r > 19 {
                        return Err(format!("if_tsresol 10^-{r} is finer than supported"));
                    }
                    (10u128.pow(r.into()), r.min(9))
                } else {
                    let p = r & 0x7f;
                    if p > 63 {
                        return Err(format!("if_tsresol 2^-{p} is finer than supported"));
                    }
                    (1u128 << p, 9)
                };
                i.units = units;
                i.digits = digits;
            }
            (14, v) if v.len() == 8 => i.offset_s = order.u64(v, 0).unwrap_or(0) as i64,
            _ => {}
        }
        b = b.get(4 + padded..).unwrap_or(&[]);
    }
    Ok(())
}

fn block_name(ty: u32) -> String {
    match ty {
        1 => "interface description block".into(),
        2 => "packet block".into(),
        3 => "simple packet block".into(),
        6 => "enhanced packet block".into(),
        t => format!("block of type 0x{t:08x}"),
    }
}

fn hex(b: &[u8]) -> String {
    format!("0x{}", crate::hex::encode(b))
}

/// Says what a file with the first four octets `m` is, if we can tell.
fn bad_magic(m: [u8; 4]) -> String {
    let what = if m[..2] == [0x1f, 0x8b] {
        "gzip data: decompress it first"
    } else if m
        .iter()
        .all(|c| c.is_ascii_graphic() || c.is_ascii_whitespace())
    {
        "text: tcpdump -x/-xx text is read as hex input ('-' or @FILE), not with -r"
    } else {
        "not a pcap or pcapng file"
    };
    format!("magic number {} unknown ({what})", hex(&m))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A pcap file: the header and one record per packet, in `be` order
    /// with microsecond timestamps (or nanosecond with `nano`). Records
    /// are (seconds, fraction, captured octets, original length).
    pub fn pcap(be: bool, nano: bool, linktype: u32, recs: &[(u32, u32, &[u8], u32)]) -> Vec<u8> {
        let w32 = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let w16 = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut f = Vec::new();
        f.extend(w32(if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }));
        f.extend(w16(2));
        f.extend(w16(4));
        f.extend(w32(0));
        f.extend(w32(0));
        f.extend(w32(65535));
        f.extend(w32(linktype));
        for (s, us, data, orig) in recs {
            f.extend(w32(*s));
            f.extend(w32(*us));
            f.extend(w32(data.len() as u32));
            f.extend(w32(*orig));
            f.extend(*data);
        }
        f
    }

    /// A pcapng block of type `ty` with `body` (padded) in `be` order.
    pub fn block(be: bool, ty: u32, body: &[u8]) -> Vec<u8> {
        let w32 = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut b = body.to_vec();
        b.resize(body.len().div_ceil(4) * 4, 0);
        let len = b.len() as u32 + 12;
        let mut v = Vec::new();
        v.extend(w32(ty));
        v.extend(w32(len));
        v.extend(b);
        v.extend(w32(len));
        v
    }

    /// A pcapng section: SHB, one IDB per (linktype, options), then EPBs of
    /// (interface, timestamp, octets, original length).
    pub fn pcapng(be: bool, ifaces: &[(u16, &[u8])], pkts: &[(u32, u64, &[u8], u32)]) -> Vec<u8> {
        let w32 = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let w16 = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut shb = Vec::new();
        shb.extend(w32(PCAPNG_BOM));
        shb.extend(w16(1));
        shb.extend(w16(0));
        shb.extend([0xff; 8]);
        let mut f = block(be, PCAPNG_SHB, &shb);
        for (lt, opts) in ifaces {
            let mut b = Vec::new();
            b.extend(w16(*lt));
            b.extend(w16(0));
            b.extend(w32(0));
            b.extend(*opts);
            f.extend(block(be, 1, &b));
        }
        for (id, ts, data, orig) in pkts {
            let mut b = Vec::new();
            b.extend(w32(*id));
            b.extend(w32((ts >> 32) as u32));
            b.extend(w32(*ts as u32));
            b.extend(w32(data.len() as u32));
            b.extend(w32(*orig));
            b.extend(*data);
            f.extend(block(be, 6, &b));
        }
        f
    }

    pub fn read_all(file: &[u8]) -> Result<Vec<Record>, Error> {
        let mut r = Reader::new(file)?;
        let mut v = vec![];
        while let Some(x) = r.next_record()? {
            v.push(x);
        }
        Ok(v)
    }

    #[test]
    fn pcap_both_orders_and_resolutions() {
        for be in [false, true] {
            for nano in [false, true] {
                let f = pcap(be, nano, 1, &[(10, 5, b"abc", 3), (11, 0, b"", 60)]);
                let r = read_all(&f).unwrap();
                assert_eq!(r.len(), 2);
                assert_eq!((r[0].number, r[0].offset, r[0].linktype), (1, 24, 1));
                assert_eq!(r[0].data, b"abc");
                let t = r[0].time.unwrap().to_string();
                assert_eq!(t, if nano { "10.000000005" } else { "10.000005" });
                assert_eq!((r[1].number, r[1].offset, r[1].orig_len), (2, 43, 60));
            }
        }
    }

    #[test]
    fn pcapng_sections_resolutions_and_blocks() {
        // Interface 0: default microseconds; 1: nanoseconds (if_tsresol 9)
        // and if_tsoffset 100 s.
        let mut opts1 = vec![9, 0, 1, 0, 9, 0, 0, 0, 14, 0, 8, 0];
        opts1.extend(100u64.to_le_bytes());
        opts1.extend([0, 0, 0, 0]);
        let f = pcapng(
            false,
            &[(1, &[]), (113, &opts1)],
            &[(0, 1_500_000, b"ab", 2), (1, 2_000_000_001, b"xyz", 9)],
        );
        let r = read_all(&f).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].time.unwrap().to_string(), "1.500000");
        assert_eq!(r[1].time.unwrap().to_string(), "102.000000001");
        assert_eq!((r[1].linktype, r[1].orig_len), (113, 9));
        assert_eq!(r[1].data, b"xyz");
        // A big-endian section after a little-endian one, with an unknown
        // block and a Simple Packet Block.
        let mut g = f.clone();
        let mut s2 = pcapng(true, &[(101, &[])], &[]);
        s2.extend(block(true, 0x0bad, b"skip me"));
        let mut spb = 5u32.to_be_bytes().to_vec();
        spb.extend(b"hello");
        s2.extend(block(true, 3, &spb));
        g.extend(&s2);
        let r = read_all(&g).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!((r[2].linktype, r[2].time), (101, None));
        assert_eq!(r[2].data, b"hello");
        assert_eq!(r[2].offset as usize, f.len() + s2.len() - 24);
    }

    #[test]
    fn errors_name_the_offset() {
        let e = |f: &[u8]| read_all(f).unwrap_err().to_string();
        assert_eq!(
            e(b"\x00\x01\x02\x03rest"),
            "offset 0: magic number 0x00010203 unknown (not a pcap or pcapng file)"
        );
        assert!(e(b"\x1f\x8b\x08\x00").contains("gzip"));
        assert!(e(b"12:34:56.789 IP").contains("tcpdump -x"));
        assert_eq!(
            e(b"\xd4\xc3"),
            "offset 0: file too short for a capture (2 octets)"
        );
        let f = pcap(false, false, 1, &[(1, 0, &[7; 40], 40)]);
        assert_eq!(
            e(&f[..20]),
            "offset 0: pcap file header truncated: the file ends 16 octets into it, 20 expected"
        );
        assert_eq!(
            e(&f[..30]),
            "offset 24: packet record header truncated: the file ends 6 octets into it, 16 expected"
        );
        assert_eq!(
            e(&f[..50]),
            "offset 24: packet record truncated: the file ends 10 octets into it, 40 expected"
        );
        let mut huge = f.clone();
        huge[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(e(&huge).starts_with("offset 24: packet record of 4294967295 octets"));
        let mut v3 = f.clone();
        v3[4] = 3;
        assert_eq!(e(&v3), "offset 0: pcap version 3 (only 2 is defined)");

        let g = pcapng(false, &[(1, &[])], &[(0, 0, b"abcd", 4)]);
        let epb = g.len() - 36; // 12 + 20 + 4 octets of data
        assert!(e(&g[..g.len() - 1])
            .starts_with(&format!("offset {epb}: enhanced packet block truncated")));
        let mut bad = g.clone();
        let n = bad.len();
        bad[n - 4] ^= 1;
        assert!(e(&bad).contains("trailing block length"), "{}", e(&bad));
        let mut bad = g.clone();
        bad[epb + 8] = 1; // interface 1 of 1
        assert_eq!(
            e(&bad),
            format!(
                "offset {epb}: enhanced packet block: interface 1, but the section describes 1"
            )
        );
        let mut bad = g.clone();
        bad[epb + 20] = 200; // captured length past the block
        assert!(
            e(&bad).contains("captured length 200 overruns"),
            "{}",
            e(&bad)
        );
        let mut bad = g.clone();
        bad[epb + 4] = 13; // block length not a multiple of 4
        assert!(e(&bad).contains("block length 13"), "{}", e(&bad));
        let mut bad = g.clone();
        bad[8] = 0; // byte-order magic
        assert!(e(&bad).contains("byte-order magic"), "{}", e(&bad));
    }

    /// Any prefix of a valid capture, and any corruption of it, gives
    /// records or an error: never a panic.
    #[test]
    fn truncations_and_random_bytes_never_panic() {
        let pkt: Vec<u8> = (0..64).collect();
        let files = [
            pcap(false, false, 1, &[(1, 2, &pkt, 64), (3, 4, &pkt[..10], 64)]),
            pcap(true, true, 113, &[(1, 2, &pkt, 64)]),
            pcapng(
                true,
                &[(1, &[9, 0, 1, 0, 0x83, 0, 0, 0])],
                &[(0, 9, &pkt, 64)],
            ),
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for f in &files {
            for n in 0..f.len() {
                let _ = read_all(&f[..n]);
            }
            for _ in 0..2000 {
                let mut g = f.clone();
                for _ in 0..1 + rnd() % 4 {
                    let i = (rnd() as usize) % g.len();
                    g[i] = rnd() as u8;
                }
                let _ = read_all(&g);
            }
        }
        for _ in 0..2000 {
            let n = (rnd() % 200) as usize;
            let mut g: Vec<u8> = (0..n).map(|_| rnd() as u8).collect();
            if g.len() >= 4 && rnd() % 2 == 0 {
                g[..4].copy_from_slice(&[0x0a, 0x0d, 0x0d, 0x0a]);
            }
            let _ = read_all(&g);
        }
    }
}
