//! A synchronous generic netlink client for the "crem" family, on
//! netlink-sys (socket), netlink-packet-generic (genetlink header, nlctrl
//! family resolution) and netlink-packet-core (messages, NLAs, errors).
//!
//! Errors carry the kernel's extended ACK: the message (NLMSGERR_ATTR_MSG),
//! shown verbatim, and the offending attribute, which the offset
//! (NLMSGERR_ATTR_OFFS) is mapped back to by walking the request.

use crate::attr::{self, Attr};
use crate::uapi::{self, AttrSet};
use netlink_packet_core::{
    DecodeError, Emitable, NetlinkHeader, NetlinkMessage, NetlinkPayload, NlaBuffer, NlasIterator,
    ParseableParametrized, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_generic::{
    ctrl::{
        nlas::{GenlCtrlAttrs, McastGrpAttrs, OpAttrs},
        GenlCtrl, GenlCtrlCmd,
    },
    GenlFamily, GenlHeader, GenlMessage,
};
use netlink_sys::{protocols::NETLINK_GENERIC, Socket, SocketAddr};
use std::fmt;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// NLM_F_CAPPED: the error message carries only the request's header.
const NLM_F_CAPPED: u16 = 0x100;
/// NLM_F_ACK_TLVS: extended ACK attributes follow.
const NLM_F_ACK_TLVS: u16 = 0x200;
/// NLM_F_DUMP_INTR: the dumped table changed while the dump ran.
const NLM_F_DUMP_INTR: u16 = 0x10;
/// GENL_CMD_CAP_DO: the operation has a `do`.
const GENL_CMD_CAP_DO: u32 = 0x2;
/// How many times a dump is tried before an inconsistent one is an error.
pub const DUMP_TRIES: u32 = 10;
const NLMSGERR_ATTR_MSG: u16 = 1;
const NLMSGERR_ATTR_OFFS: u16 = 2;
const NLMSGERR_ATTR_MISS_TYPE: u16 = 5;
const NLMSGERR_ATTR_MISS_NEST: u16 = 6;
const NLMSG_HDRLEN: usize = 16;
const GENL_HDRLEN: usize = 4;

/// A message of the "crem" family: its command and its attributes, those
/// of the command's attribute set ([`uapi::op_set`]: "config", "stats" or
/// "flow"), which every message carries at the top level. A command this
/// crem-ctl does not know has none read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CremMsg {
    pub cmd: u8,
    pub attrs: Vec<Attr>,
}

impl GenlFamily for CremMsg {
    fn family_name() -> &'static str {
        uapi::FAMILY_NAME
    }
    fn command(&self) -> u8 {
        self.cmd
    }
    fn version(&self) -> u8 {
        uapi::FAMILY_VERSION
    }
}

impl Emitable for CremMsg {
    fn buffer_len(&self) -> usize {
        self.attrs.as_slice().buffer_len()
    }
    fn emit(&self, buffer: &mut [u8]) {
        self.attrs.as_slice().emit(buffer)
    }
}

impl ParseableParametrized<[u8], GenlHeader> for CremMsg {
    fn parse_with_param(buf: &[u8], header: GenlHeader) -> Result<Self, DecodeError> {
        Ok(CremMsg {
            cmd: header.cmd,
            attrs: match uapi::op_set(header.cmd) {
                Some(set) => attr::decode(set, buf)?,
                None => Vec::new(),
            },
        })
    }
}

/// The extended ACK of an NLMSG_ERROR or NLMSG_DONE.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extack {
    pub msg: Option<String>,
    /// Offset of the offending attribute from the start of the request's
    /// netlink header.
    pub offset: Option<u32>,
    pub miss_type: Option<u32>,
    pub miss_nest: Option<u32>,
}

/// Parses the extended ACK from the payload of an NLMSG_ERROR after its
/// error code (`payload`: the echoed request header, the request's body
/// unless NLM_F_CAPPED, then the TLVs if NLM_F_ACK_TLVS).
pub fn parse_extack(flags: u16, payload: &[u8]) -> Extack {
    if flags & NLM_F_ACK_TLVS == 0 || payload.len() < NLMSG_HDRLEN {
        return Extack::default();
    }
    let skip = if flags & NLM_F_CAPPED != 0 {
        NLMSG_HDRLEN
    } else {
        let len = u32::from_ne_bytes([payload[0], payload[1], payload[2], payload[3]]) as usize;
        (len + 3) & !3
    };
    parse_extack_tlvs(payload.get(skip..).unwrap_or(&[]))
}

/// Parses extended ACK TLVs (also the tail of an NLMSG_DONE).
pub fn parse_extack_tlvs(tlvs: &[u8]) -> Extack {
    let mut e = Extack::default();
    for nla in NlasIterator::new(tlvs) {
        let Ok(nla) = nla else { break };
        let nla: NlaBuffer<&[u8]> = nla;
        let v = nla.value();
        let u32v = || <[u8; 4]>::try_from(v).ok().map(u32::from_ne_bytes);
        match nla.kind() {
            NLMSGERR_ATTR_MSG => {
                let s = v.split(|b| *b == 0).next().unwrap_or(&[]);
                e.msg = Some(String::from_utf8_lossy(s).into_owned());
            }
            NLMSGERR_ATTR_OFFS => e.offset = u32v(),
            NLMSGERR_ATTR_MISS_TYPE => e.miss_type = u32v(),
            NLMSGERR_ATTR_MISS_NEST => e.miss_nest = u32v(),
            _ => {}
        }
    }
    e
}

/// Errors of the netlink layer.
#[derive(Debug)]
pub enum Error {
    /// The kernel refused the request.
    Kernel {
        op: &'static str,
        errno: i32,
        extack: Extack,
        /// The offending attribute (e.g. `config.k`), from the extack offset.
        attr: Option<String>,
        /// The missing attribute (e.g. `flow.id`), from the extack's
        /// missing type, named in the request's set when it is at the top
        /// level and the set has it.
        missing: Option<String>,
    },
    /// The "crem" family is not registered: the module is not loaded.
    NoFamily,
    /// The module's family has another version (another message layout)
    /// than this crem-ctl's.
    Version {
        module: u32,
    },
    /// The module does not implement this operation.
    Unsupported(&'static str),
    Io(&'static str, io::Error),
    /// No complete reply within [`REPLY_TIMEOUT`].
    Timeout(&'static str),
    /// Every one of [`DUMP_TRIES`] dumps was interrupted by changes.
    Inconsistent(&'static str),
    Decode(String),
}

/// How long a request waits for the kernel's answer.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(15);

impl Error {
    /// The process exit status for this error (see `crem-ctl --help`).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Kernel { errno, .. } if *errno == libc_eperm() || *errno == 13 => 4,
            Error::Kernel { errno, .. } if *errno == 95 => 3,
            Error::Io(_, e) if e.kind() == io::ErrorKind::PermissionDenied => 4,
            Error::NoFamily | Error::Unsupported(_) | Error::Version { .. } => 3,
            _ => 1,
        }
    }
}

const fn libc_eperm() -> i32 {
    1
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Kernel {
                op,
                errno,
                extack,
                attr,
                missing,
            } => {
                let mut detail = format!("{op}: {}", strerror(*errno));
                if let Some(a) = attr {
                    detail.push_str(&format!("; attribute {a}"));
                }
                match (missing, extack.miss_type) {
                    (Some(m), _) => detail.push_str(&format!("; missing attribute {m}")),
                    (None, Some(t)) => detail.push_str(&format!("; missing attribute type {t}")),
                    (None, None) => {}
                }
                if *errno == 1 || *errno == 13 {
                    detail.push_str(if *op == "flow-get" {
                        "; Flow IDs are shown only to CAP_NET_ADMIN over the network namespace"
                    } else {
                        "; changing CREM needs CAP_NET_ADMIN over the network namespace"
                    });
                }
                match &extack.msg {
                    // The kernel's reason, verbatim, first.
                    Some(m) => write!(f, "{m}\n  ({detail})"),
                    None => f.write_str(&detail),
                }
            }
            Error::NoFamily => f.write_str(
                "the crem kernel module is not loaded (no generic netlink family \"crem\"); \
                 load it with 'modprobe crem' or 'insmod crem.ko'",
            ),
            Error::Version { module } => write!(
                f,
                "the crem module speaks family version {module}, this crem-ctl version {} \
                 (their messages differ); use the crem-ctl built with the module",
                uapi::FAMILY_VERSION
            ),
            Error::Unsupported(op) => write!(
                f,
                "{op}: not supported by this kernel module (no such command)"
            ),
            Error::Io(what, e)
                if *what == "join multicast group"
                    && e.kind() == io::ErrorKind::PermissionDenied =>
            {
                write!(
                    f,
                    "netlink {what}: {e}; the events group (it carries Flow IDs) \
                 needs CAP_NET_ADMIN over the network namespace"
                )
            }
            Error::Io(what, e) => write!(f, "netlink {what}: {e}"),
            Error::Timeout(op) => write!(
                f,
                "{op}: no answer from the kernel within {}s",
                REPLY_TIMEOUT.as_secs()
            ),
            Error::Decode(e) => write!(f, "malformed reply from the kernel: {e}"),
            Error::Inconsistent(op) => write!(
                f,
                "{op}: the table changed during each of {DUMP_TRIES} dumps \
                 (NLM_F_DUMP_INTR); try again"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// The C library's text for an errno, without Rust's " (os error N)".
fn strerror(errno: i32) -> String {
    let s = io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// What nlctrl told us about the family.
#[derive(Clone, Debug, Default)]
pub struct Family {
    pub id: u16,
    pub version: u32,
    /// (command, GENL_CMD_CAP_* flags) of every operation.
    pub ops: Vec<(u32, u32)>,
    /// (name, id) of every multicast group.
    pub groups: Vec<(String, u32)>,
}

impl Family {
    pub fn has_op(&self, cmd: u8) -> bool {
        self.ops.iter().any(|(c, _)| *c == cmd as u32)
    }
    /// Whether `cmd` has a `do` (an older module has only flow-get's dump).
    pub fn has_do(&self, cmd: u8) -> bool {
        self.ops
            .iter()
            .any(|(c, f)| *c == cmd as u32 && f & GENL_CMD_CAP_DO != 0)
    }
    pub fn group(&self, name: &str) -> Option<u32> {
        self.groups.iter().find(|(n, _)| n == name).map(|x| x.1)
    }
}

/// The family must have this crem-ctl's version: a version changes when
/// messages change layout (attribute ids, nests), which would otherwise
/// be misread.
fn check_version(fam: &Family) -> Result<(), Error> {
    if fam.version == u32::from(uapi::FAMILY_VERSION) {
        Ok(())
    } else {
        Err(Error::Version {
            module: fam.version,
        })
    }
}

/// A connected generic netlink socket with the "crem" family resolved.
pub struct Conn {
    sock: Socket,
    seq: u32,
    pub family: Family,
}

impl Conn {
    /// Opens a socket and resolves the family (Error::NoFamily if absent).
    pub fn open() -> Result<Conn, Error> {
        let mut sock = Socket::new(NETLINK_GENERIC).map_err(|e| Error::Io("socket", e))?;
        sock.bind_auto().map_err(|e| Error::Io("bind", e))?;
        // Kernel reasons for refusals; errors echo only the request header.
        sock.set_ext_ack(true)
            .map_err(|e| Error::Io("NETLINK_EXT_ACK", e))?;
        sock.set_cap_ack(true)
            .map_err(|e| Error::Io("NETLINK_CAP_ACK", e))?;
        set_rcv_timeout(&sock, Some(REPLY_TIMEOUT)).map_err(|e| Error::Io("SO_RCVTIMEO", e))?;
        let mut c = Conn {
            sock,
            seq: std::process::id().wrapping_mul(1000),
            family: Family::default(),
        };
        c.family = c.resolve()?;
        Ok(c)
    }

    fn resolve(&mut self) -> Result<Family, Error> {
        let req = GenlMessage::from_payload(GenlCtrl {
            cmd: GenlCtrlCmd::GetFamily,
            nlas: vec![GenlCtrlAttrs::FamilyName(uapi::FAMILY_NAME.to_string())],
        });
        let replies = match self.transact(req, false, "CTRL_CMD_GETFAMILY", None) {
            Ok((r, _)) => r,
            Err(Error::Kernel { errno: 2, .. }) => return Err(Error::NoFamily),
            Err(e) => return Err(e),
        };
        let mut fam = Family::default();
        for r in replies {
            for nla in r.payload.nlas {
                match nla {
                    GenlCtrlAttrs::FamilyId(id) => fam.id = id,
                    GenlCtrlAttrs::Version(v) => fam.version = v,
                    GenlCtrlAttrs::Ops(ops) => {
                        for op in ops {
                            let (mut id, mut flags) = (0, 0);
                            for a in op {
                                match a {
                                    OpAttrs::Id(i) => id = i,
                                    OpAttrs::Flags(f) => flags = f,
                                }
                            }
                            fam.ops.push((id, flags));
                        }
                    }
                    GenlCtrlAttrs::McastGroups(groups) => {
                        for g in groups {
                            let (mut name, mut id) = (String::new(), 0);
                            for a in g {
                                match a {
                                    McastGrpAttrs::Name(n) => name = n,
                                    McastGrpAttrs::Id(i) => id = i,
                                }
                            }
                            fam.groups.push((name, id));
                        }
                    }
                    _ => {}
                }
            }
        }
        if fam.id == 0 {
            return Err(Error::NoFamily);
        }
        check_version(&fam)?;
        Ok(fam)
    }

    /// Sends one "crem" request (a `do`, or a `dump` if `dump`) and returns
    /// the replies. Fails with Error::Unsupported if the family lacks `cmd`.
    pub fn request(
        &mut self,
        cmd: u8,
        attrs: Vec<Attr>,
        dump: bool,
    ) -> Result<Vec<CremMsg>, Error> {
        let op = uapi::op_name(cmd).unwrap_or("request");
        if !self.family.ops.is_empty() && !self.family.has_op(cmd) {
            return Err(Error::Unsupported(op));
        }
        let mut req = GenlMessage::from_payload(CremMsg { cmd, attrs });
        req.set_resolved_family_id(self.family.id);
        let (r, _) = self.transact(req, dump, op, uapi::op_set(cmd))?;
        Ok(r.into_iter().map(|m| m.payload).collect())
    }

    /// A dump that saw no change while it ran: one the kernel did not flag
    /// NLM_F_DUMP_INTR, retried up to [`DUMP_TRIES`] times (then
    /// Error::Inconsistent). Within one consistent dump every object appears
    /// once.
    pub fn dump_consistent(&mut self, cmd: u8, attrs: Vec<Attr>) -> Result<Vec<CremMsg>, Error> {
        let op = uapi::op_name(cmd).unwrap_or("request");
        if !self.family.ops.is_empty() && !self.family.has_op(cmd) {
            return Err(Error::Unsupported(op));
        }
        for _ in 0..DUMP_TRIES {
            let mut req = GenlMessage::from_payload(CremMsg {
                cmd,
                attrs: attrs.clone(),
            });
            req.set_resolved_family_id(self.family.id);
            let (r, intr) = self.transact(req, true, op, uapi::op_set(cmd))?;
            if !intr {
                return Ok(r.into_iter().map(|m| m.payload).collect());
            }
        }
        Err(Error::Inconsistent(op))
    }

    /// Sends `msg` and collects its replies; `set` is the attribute set of
    /// its attributes (the request's op's), which names the one an extack
    /// points at.
    fn transact<F>(
        &mut self,
        msg: GenlMessage<F>,
        dump: bool,
        op: &'static str,
        set: Option<&'static AttrSet>,
    ) -> Result<(Vec<GenlMessage<F>>, bool), Error>
    where
        F: GenlFamily + Emitable + ParseableParametrized<[u8], GenlHeader> + fmt::Debug,
    {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | NLM_F_ACK | if dump { NLM_F_DUMP } else { 0 };
        header.sequence_number = seq;
        let mut nl = NetlinkMessage::new(header, NetlinkPayload::from(msg));
        nl.finalize();
        let mut buf = vec![0u8; nl.buffer_len()];
        nl.serialize(&mut buf);
        self.sock
            .send_to(&buf, &SocketAddr::new(0, 0), 0)
            .map_err(|e| Error::Io("send", e))?;
        let attrs = buf
            .get(NLMSG_HDRLEN + GENL_HDRLEN..)
            .unwrap_or(&[])
            .to_vec();

        let mut out = Vec::new();
        let mut intr = false;
        loop {
            let (data, _) = self.sock.recv_from_full().map_err(|e| {
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) {
                    Error::Timeout(op)
                } else {
                    Error::Io("recv", e)
                }
            })?;
            let mut off = 0usize;
            while off + NLMSG_HDRLEN <= data.len() {
                let len =
                    u32::from_ne_bytes([data[off], data[off + 1], data[off + 2], data[off + 3]])
                        as usize;
                if len < NLMSG_HDRLEN || off + len > data.len() {
                    return Err(Error::Decode(format!("bad netlink message length {len}")));
                }
                let chunk = &data[off..off + len];
                off += (len + 3) & !3;
                let m = NetlinkMessage::<GenlMessage<F>>::deserialize(chunk)
                    .map_err(|e| Error::Decode(e.to_string()))?;
                if m.header.sequence_number != seq {
                    continue; // not ours (e.g. a stale reply)
                }
                let flags = m.header.flags;
                intr |= dump && flags & NLM_F_DUMP_INTR != 0;
                match m.payload {
                    NetlinkPayload::InnerMessage(g) => out.push(g),
                    NetlinkPayload::Error(e) => {
                        let extack = parse_extack(flags, &e.header);
                        return match e.code {
                            None => {
                                if let Some(w) = extack.msg {
                                    eprintln!("crem-ctl: warning from the kernel: {w}");
                                }
                                Ok((out, intr))
                            }
                            Some(code) => Err(kernel_error(op, -code.get(), extack, set, &attrs)),
                        };
                    }
                    NetlinkPayload::Done(d) => {
                        // The end of a dump. No ACK follows it, NLM_F_ACK or
                        // not: the kernel acknowledges a dump with NLMSG_DONE.
                        let extack = parse_extack_tlvs(&d.extended_ack);
                        if d.code != 0 {
                            return Err(kernel_error(op, -d.code, extack, set, &attrs));
                        }
                        return Ok((out, intr));
                    }
                    _ => {}
                }
            }
        }
    }

    /// Joins a multicast group of the family by name, with a receive
    /// buffer of `rcvbuf` octets (normally [`NOTIFY_RCVBUF`]).
    pub fn subscribe(&mut self, group: &str, rcvbuf: i32) -> Result<(), Error> {
        let id = self
            .family
            .group(group)
            .ok_or(Error::Unsupported("multicast group \"events\""))?;
        self.sock
            .add_membership(id)
            .map_err(|e| Error::Io("join multicast group", e))?;
        // A burst (a role disabled with thousands of flows sends a
        // flow-down for each) must not overflow the default buffer (about
        // 200 KiB, some 100 notifications): ask for NOTIFY_RCVBUF, past
        // net.core.rmem_max when privileged. Best effort: an overflow is
        // still reported by recv_notifications.
        if set_int_opt(&self.sock, libc::SO_RCVBUFFORCE, rcvbuf).is_err() {
            let _ = set_int_opt(&self.sock, libc::SO_RCVBUF, rcvbuf);
        }
        set_rcv_timeout(&self.sock, None).map_err(|e| Error::Io("SO_RCVTIMEO", e))
    }

    /// Blocks for the next batch of notifications of the family.
    pub fn recv_notifications(&mut self) -> Result<Notifications, Error> {
        let data = match self.sock.recv_from_full() {
            Ok((data, _)) => data,
            // The kernel dropped notifications for this socket: its buffer
            // was full. The socket stays usable; the caller says so.
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => return Ok(Notifications::Lost),
            Err(e) => return Err(Error::Io("recv", e)),
        };
        let mut out = Vec::new();
        let mut off = 0usize;
        while off + NLMSG_HDRLEN <= data.len() {
            let len = u32::from_ne_bytes([data[off], data[off + 1], data[off + 2], data[off + 3]])
                as usize;
            if len < NLMSG_HDRLEN || off + len > data.len() {
                break;
            }
            let chunk = &data[off..off + len];
            off += (len + 3) & !3;
            let m = NetlinkMessage::<GenlMessage<CremMsg>>::deserialize(chunk)
                .map_err(|e| Error::Decode(e.to_string()))?;
            if m.header.message_type != self.family.id {
                continue;
            }
            if let NetlinkPayload::InnerMessage(g) = m.payload {
                out.push(g.payload);
            }
        }
        Ok(Notifications::Msgs(out))
    }
}

impl Conn {
    /// The notifications already queued on the socket, read without
    /// waiting (after ENOBUFS, before a resync dump: they are older than
    /// it), and whether more were dropped meanwhile. Stops after
    /// [`DRAIN_MAX`] messages, so that a namespace that never stops
    /// changing does not keep the reader here.
    pub fn drain_notifications(&mut self) -> Result<(Vec<CremMsg>, bool), Error> {
        self.set_non_blocking(true)?;
        let (mut msgs, mut lost) = (Vec::new(), false);
        let res = loop {
            if msgs.len() >= DRAIN_MAX {
                break Ok(());
            }
            match self.recv_notifications() {
                Ok(Notifications::Msgs(m)) => msgs.extend(m),
                Ok(Notifications::Lost) => lost = true,
                Err(Error::Io(_, e)) if e.kind() == io::ErrorKind::WouldBlock => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.set_non_blocking(false)?;
        res.map(|()| (msgs, lost))
    }

    fn set_non_blocking(&self, on: bool) -> Result<(), Error> {
        self.sock
            .set_non_blocking(on)
            .map_err(|e| Error::Io("O_NONBLOCK", e))
    }
}

/// The most notifications [`Conn::drain_notifications`] reads at once.
pub const DRAIN_MAX: usize = 1 << 16;

/// The receive buffer a subscriber asks for (see [`Conn::subscribe`]).
pub const NOTIFY_RCVBUF: i32 = 8 << 20;

/// What one read of the multicast socket gave.
pub enum Notifications {
    Msgs(Vec<CremMsg>),
    /// The kernel dropped notifications because the socket's buffer was
    /// full (ENOBUFS): what the reader knows of the flows may be stale.
    Lost,
}

/// setsockopt(SOL_SOCKET, opt, v) for an int option.
fn set_int_opt(sock: &Socket, opt: libc::c_int, v: libc::c_int) -> io::Result<()> {
    set_sol_socket(sock, opt, &v)
}

/// SO_RCVTIMEO (netlink-sys has no setter for it); `None` waits forever.
fn set_rcv_timeout(sock: &Socket, t: Option<Duration>) -> io::Result<()> {
    let t = t.unwrap_or(Duration::ZERO);
    let tv = libc::timeval {
        tv_sec: t.as_secs() as libc::time_t,
        tv_usec: t.subsec_micros() as libc::suseconds_t,
    };
    set_sol_socket(sock, libc::SO_RCVTIMEO, &tv)
}

/// setsockopt(SOL_SOCKET, opt, v): @v is the option's C type (an int, a
/// timeval), passed with its size.
fn set_sol_socket<T>(sock: &Socket, opt: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: a valid fd owned by `sock`, and a readable value of the size
    // given, which the kernel copies and does not keep.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            (v as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The error the kernel answered the request `op` with; `attrs`: the
/// request's attributes (after its genetlink header), of `set` (its op's
/// set), where the extack's offset names one (e.g. `config.m`).
fn kernel_error(
    op: &'static str,
    errno: i32,
    extack: Extack,
    set: Option<&'static AttrSet>,
    attrs: &[u8],
) -> Error {
    let attr = extack.offset.and_then(|o| {
        let o = (o as usize).checked_sub(NLMSG_HDRLEN + GENL_HDRLEN)?;
        attr::path_at(set?, attrs, o)
    });
    // A missing attribute of a nest (MISS_NEST) is named by number: the
    // nest's set would need the request walked to its offset.
    let missing = match (set, extack.miss_type, extack.miss_nest) {
        (Some(s), Some(t), None) => u16::try_from(t)
            .ok()
            .and_then(|t| s.by_id(t))
            .map(|a| format!("{}.{}", s.name, a.name)),
        _ => None,
    };
    Error::Kernel {
        op,
        errno,
        extack,
        attr,
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::encode;
    use crate::uapi::*;

    /// An NLMSG_ERROR payload after the code, as the kernel builds it with
    /// NETLINK_CAP_ACK: echoed header, then MSG and OFFS TLVs.
    fn capped_error(msg: &str, offs: u32) -> Vec<u8> {
        let mut p = vec![0u8; 16];
        p[0..4].copy_from_slice(&64u32.to_ne_bytes()); // original length
        let mut s = msg.as_bytes().to_vec();
        s.push(0);
        let l = 4 + s.len();
        p.extend_from_slice(&(l as u16).to_ne_bytes());
        p.extend_from_slice(&NLMSGERR_ATTR_MSG.to_ne_bytes());
        p.extend_from_slice(&s);
        p.resize(p.len() + ((l + 3) & !3) - l, 0);
        p.extend_from_slice(&8u16.to_ne_bytes());
        p.extend_from_slice(&NLMSGERR_ATTR_OFFS.to_ne_bytes());
        p.extend_from_slice(&offs.to_ne_bytes());
        p
    }

    #[test]
    fn extack_capped() {
        let p = capped_error(
            "k + m must not exceed 255 (Repair Indices need i + k <= 255)",
            36,
        );
        let e = parse_extack(NLM_F_CAPPED | NLM_F_ACK_TLVS, &p);
        assert_eq!(
            e.msg.as_deref(),
            Some("k + m must not exceed 255 (Repair Indices need i + k <= 255)")
        );
        assert_eq!(e.offset, Some(36));
        // Without ACK_TLVS there is nothing to read.
        assert_eq!(parse_extack(NLM_F_CAPPED, &p), Extack::default());
    }

    #[test]
    fn extack_uncapped_skips_the_echoed_request() {
        // Echoed request: 16-octet header + 6 octets of body (length 22,
        // padded to 24), then the TLVs.
        let mut p = vec![0u8; 24];
        p[0..4].copy_from_slice(&22u32.to_ne_bytes());
        p.extend_from_slice(
            &capped_error(
                "set a CREM port before enabling a role (there is no default port)",
                0,
            )[16..],
        );
        let e = parse_extack(NLM_F_ACK_TLVS, &p);
        assert_eq!(
            e.msg.as_deref(),
            Some("set a CREM port before enabling a role (there is no default port)")
        );
    }

    #[test]
    fn kernel_error_names_the_attribute() {
        // config-set's attributes at the top level: k at 20, m at 28 (from
        // the netlink header: 16 octets, then the genetlink header's 4).
        let req = encode(&[Attr::u8(CONFIG_K, 200), Attr::u8(CONFIG_M, 100)]);
        let set = op_set(CMD_CONFIG_SET);
        let e = kernel_error(
            "config-set",
            22,
            parse_extack(
                NLM_F_CAPPED | NLM_F_ACK_TLVS,
                &capped_error(
                    "k + m must not exceed 255 (Repair Indices need i + k <= 255)",
                    28,
                ),
            ),
            set,
            &req,
        );
        let text = e.to_string();
        assert!(
            text.starts_with("k + m must not exceed 255 (Repair Indices need i + k <= 255)\n"),
            "{text}"
        );
        assert!(
            text.ends_with("\n  (config-set: Invalid argument; attribute config.m)"),
            "{text}"
        );
        assert_eq!(e.exit_code(), 1);
        // The offset of the genetlink header (20 - 4) names no attribute.
        let at = |set, o| match kernel_error("x", 22, capped(o), set, &req) {
            Error::Kernel { attr, .. } => attr,
            e => panic!("{e:?}"),
        };
        assert_eq!(at(set, 16), None);
        assert_eq!(at(set, 20).as_deref(), Some("config.k"));
        // Nor does an offset without the request's set.
        assert_eq!(at(None, 20), None);
        let perm = kernel_error("config-set", 1, Extack::default(), set, &req);
        assert_eq!(perm.exit_code(), 4);
        assert!(perm.to_string().contains("CAP_NET_ADMIN"));
        // Reading Flow IDs and joining the events group need it too.
        let get = kernel_error("flow-get", 1, Extack::default(), set, &req);
        assert!(get
            .to_string()
            .contains("Flow IDs are shown only to CAP_NET_ADMIN"));
        let join = Error::Io(
            "join multicast group",
            io::Error::from(io::ErrorKind::PermissionDenied),
        );
        assert_eq!(join.exit_code(), 4);
        assert!(join.to_string().contains("events group"), "{join}");
    }

    fn capped(offs: u32) -> Extack {
        parse_extack(
            NLM_F_CAPPED | NLM_F_ACK_TLVS,
            &capped_error("Unsupported attribute", offs),
        )
    }

    /// A flow request's attributes are named in the flow set: the one a
    /// flow-del must not carry (its policy has id, side and peer only), the
    /// kernel's "Unsupported attribute", and a missing id (MISS_TYPE).
    #[test]
    fn kernel_error_names_a_flow_attribute() {
        // id at 20, k (no flow-del attribute) at 28.
        let req = encode(&[Attr::u32(FLOW_ID, 7), Attr::u8(FLOW_K, 2)]);
        let e = kernel_error("flow-del", 22, capped(28), op_set(CMD_FLOW_DEL), &req);
        assert_eq!(
            e.to_string(),
            "Unsupported attribute\n  (flow-del: Invalid argument; attribute flow.k)"
        );
        // The message, then MISS_TYPE in place of the offset (no attribute
        // to point at).
        let mut p = capped_error("the flow's id is required", 0);
        p.truncate(p.len() - 8);
        p.extend_from_slice(&8u16.to_ne_bytes());
        p.extend_from_slice(&NLMSGERR_ATTR_MISS_TYPE.to_ne_bytes());
        p.extend_from_slice(&u32::from(FLOW_ID).to_ne_bytes());
        let miss = parse_extack(NLM_F_CAPPED | NLM_F_ACK_TLVS, &p);
        assert_eq!(
            (miss.offset, miss.miss_type, miss.miss_nest),
            (None, Some(u32::from(FLOW_ID)), None)
        );
        let e = kernel_error("flow-reset", 22, miss.clone(), op_set(CMD_FLOW_RESET), &[]);
        assert_eq!(
            e.to_string(),
            "the flow's id is required\n  (flow-reset: Invalid argument; missing attribute flow.id)"
        );
        // Without the request's set, or of a type the set lacks: by number.
        let e = kernel_error("flow-reset", 22, miss.clone(), None, &[]);
        assert!(e.to_string().ends_with("; missing attribute type 2)"));
        let odd = Extack {
            miss_type: Some(999),
            ..miss
        };
        let e = kernel_error("flow-reset", 22, odd, op_set(CMD_FLOW_RESET), &[]);
        assert!(e.to_string().ends_with("; missing attribute type 999)"));
    }

    /// A module whose family has another version is refused before any
    /// request (exit 3, both versions named); the same version passes.
    #[test]
    fn family_version_must_match() {
        let fam = |version| Family {
            id: 30,
            version,
            ..Family::default()
        };
        assert!(check_version(&fam(u32::from(uapi::FAMILY_VERSION))).is_ok());
        let e = check_version(&fam(1)).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        let text = e.to_string();
        assert!(text.contains("family version 1"), "{text}");
        assert!(
            text.contains(&format!("this crem-ctl version {}", uapi::FAMILY_VERSION)),
            "{text}"
        );
    }

    #[test]
    fn done_tlvs() {
        let p = capped_error("dump failed", 0);
        let e = parse_extack_tlvs(&p[16..]);
        assert_eq!(e.msg.as_deref(), Some("dump failed"));
    }

    #[test]
    fn crem_msg_parses_genl_payload() {
        let parse = |cmd, body: &[u8]| {
            CremMsg::parse_with_param(
                body,
                GenlHeader {
                    cmd,
                    version: uapi::FAMILY_VERSION,
                },
            )
        };
        // stats-get's reply: the stats set's attributes at the top level.
        let body = encode(&[Attr::u64(STATS_SOURCES, 9)]);
        let m = parse(CMD_STATS_GET, &body).unwrap();
        assert_eq!(m.cmd, CMD_STATS_GET);
        assert_eq!(m.attrs, [Attr::u64(STATS_SOURCES, 9)]);
        // The command chooses the set: id 4 of the config set (adaptive) is
        // a u8, so these 8 octets are refused there, named.
        let e = parse(CMD_CONFIG_GET, &body).unwrap_err();
        assert!(e.to_string().contains("config.adaptive"), "{e}");
        // A notification's is the set of the op it notifies as.
        let body = encode(&[Attr::u32(FLOW_ID, 7), Attr::u8(FLOW_SIDE, 1)]);
        let m = parse(CMD_FLOW_UP_NTF, &body).unwrap();
        assert_eq!(m.attrs, [Attr::u32(FLOW_ID, 7), Attr::u8(FLOW_SIDE, 1)]);
        // A command this crem-ctl does not know: nothing read, no error.
        let m = parse(200, &body).unwrap();
        assert_eq!((m.cmd, m.attrs), (200, vec![]));
    }
}
