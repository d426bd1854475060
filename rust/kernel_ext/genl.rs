// SPDX-License-Identifier: GPL-2.0
//! Generic netlink for the module's handlers: the request a `doit` gets
//! ([`Info`], its attributes [`Attr`] and its extended ACK [`ExtAck`]), the
//! messages it builds ([`Msg`], written through a [`Writer`]), a dump's
//! part ([`Dump`]) and the family's multicast ([`Family`]).
//!
//! 6.12's `kernel` crate has no genetlink; later kernels' `kernel::net::netlink`
//! has multicast only (`NetlinkSkBuff`, `GenlMsg`, `Family`), whose names
//! these mirror. The op table and the policies are C, generated from
//! `netlink/crem.yaml` (`netlink/crem-nl-gen.c`); the family that holds them
//! is defined here ([`Registration`], from the module's [`FamilySpec`]),
//! as genetlink-legacy leaves it to the module; the handlers the table
//! names are Rust (`crate::netlink`). Static inlines and macros are
//! one-line wrappers in `helpers/helpers.c`.

use crate::ffi;
use core::ffi::{c_int, c_void, CStr};
use core::fmt::{self, Write};
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use kernel::bindings;
use kernel::error::{code::*, to_result, Error, Result};

/// EMSGSIZE (the `kernel` crate has no constant for it): the message is
/// full.
pub(crate) fn emsgsize() -> Error {
    Error::from_errno(-(bindings::EMSGSIZE as c_int))
}

/// The header length of an attribute (`NLA_HDRLEN`).
const NLA_HDRLEN: usize = 4;

/// The payload size of an attribute of `payload` octets with its header
/// and alignment (`nla_total_size`).
pub(crate) const fn total_size(payload: usize) -> usize {
    (NLA_HDRLEN + payload + 3) & !3
}

/// As [`total_size`] for a 64-bit attribute, with room for the pad
/// attribute that may precede it (`nla_total_size_64bit` where unaligned
/// access is not efficient: counted always, an estimate may be larger).
pub(crate) const fn total_size_64bit(payload: usize) -> usize {
    total_size(payload) + total_size(0)
}

/// One attribute of a request, validated by the op's policy, valid while
/// the request is (`'r`).
#[derive(Clone, Copy)]
pub(crate) struct Attr<'r> {
    a: NonNull<bindings::nlattr>,
    _r: PhantomData<&'r bindings::nlattr>,
}

impl<'r> Attr<'r> {
    /// # Safety
    ///
    /// `a` is null or an attribute `nla_parse` accepted (header and payload
    /// within the request, 4-aligned as netlink aligns attributes), which
    /// lives for `'r`.
    pub(crate) unsafe fn from_raw(a: *const bindings::nlattr) -> Option<Self> {
        NonNull::new(a.cast_mut()).map(|a| Attr { a, _r: PhantomData })
    }

    fn as_ptr(self) -> *const bindings::nlattr {
        self.a.as_ptr()
    }

    /// Its payload (`nla_data`, `nla_len`).
    pub(crate) fn payload(self) -> &'r [u8] {
        // SAFETY: a parsed attribute (`from_raw`): its header is readable
        // and its `nla_len` octets lie within the request, alive for 'r.
        unsafe {
            let len = usize::from((*self.a.as_ptr()).nla_len).saturating_sub(NLA_HDRLEN);
            core::slice::from_raw_parts(self.a.as_ptr().cast::<u8>().add(NLA_HDRLEN), len)
        }
    }

    fn array<const N: usize>(self) -> Option<[u8; N]> {
        self.payload().get(..N)?.try_into().ok()
    }

    pub(crate) fn u8(self) -> Option<u8> {
        self.payload().first().copied()
    }

    pub(crate) fn u32(self) -> Option<u32> {
        self.array().map(u32::from_ne_bytes)
    }

    pub(crate) fn u64(self) -> Option<u64> {
        self.array().map(u64::from_ne_bytes)
    }

    /// A `uint` (`nla_get_uint`): 4 octets, or 8. (The module receives
    /// none; KUnit reads back what it wrote.)
    #[cfg(crem_kunit)]
    pub(crate) fn uint(self) -> Option<u64> {
        match self.payload().len() {
            4 => self.u32().map(u64::from),
            8 => self.u64(),
            _ => None,
        }
    }

    pub(crate) fn u16(self) -> Option<u16> {
        self.array().map(u16::from_ne_bytes)
    }

    /// Its type (`nla_type`: without the nested and byte-order flags).
    pub(crate) fn ty(self) -> u16 {
        // SAFETY: a parsed attribute (`from_raw`): its header is readable.
        unsafe { (*self.a.as_ptr()).nla_type & 0x3fff }
    }

    /// The attributes of a nest, in their order (`nla_for_each_nested`):
    /// those of a nest its policy validated (`nla_parse_nested` of the
    /// nest that holds it, or of itself). (The module reads its requests
    /// through their ops' policies; KUnit reads nests back.)
    #[cfg(crem_kunit)]
    pub(crate) fn nested(self) -> Nested<'r> {
        Nested {
            rest: self.payload(),
        }
    }
}

/// Attributes in order: a request's ([`Info::list`]) or a nest's
/// ([`Attr::nested`]). Each is checked to lie within the octets given
/// (`nla_ok`); one that does not ends the iteration.
pub(crate) struct Nested<'r> {
    /// What follows the attributes met so far.
    rest: &'r [u8],
}

impl<'r> Nested<'r> {
    /// The attributes in `rest`, a message's (after its headers) or a
    /// nest's payload that the module wrote (KUnit).
    #[cfg(crem_kunit)]
    pub(crate) fn of_bytes(rest: &'r [u8]) -> Self {
        Nested { rest }
    }
}

impl<'r> Iterator for Nested<'r> {
    type Item = Attr<'r>;

    fn next(&mut self) -> Option<Attr<'r>> {
        // `nla_ok`: a header and the length it gives fit what is left.
        let len = match self.rest {
            [a, b, _, _, ..] => usize::from(u16::from_ne_bytes([*a, *b])),
            _ => return None,
        };
        let a = self.rest.as_ptr().cast::<bindings::nlattr>();
        if len < NLA_HDRLEN || len > self.rest.len() || a.align_offset(4) != 0 {
            self.rest = &[];
            return None;
        }
        // `nla_next`: the next one is 4-aligned (`len` is a u16's).
        self.rest = self.rest.get((len + 3) & !3..).unwrap_or(&[]);
        // SAFETY: `a` is an attribute, 4-aligned, whose header and payload
        // lie in the octets given (checked above), which live for 'r.
        unsafe { Attr::from_raw(a) }
    }
}

/// Attributes by type (`N` = their set's largest type + 1): a request's as
/// genetlink parsed them with its op's policy ([`Info::attrs`]), or a
/// nest's, `nla_parse_nested` with a generated policy ([`Attrs::parse`]).
pub(crate) struct Attrs<'r, const N: usize> {
    tb: [*mut bindings::nlattr; N],
    _r: PhantomData<&'r bindings::nlattr>,
}

impl<'r, const N: usize> Attrs<'r, N> {
    /// Parses `nest` with `policy` (a generated policy: of its set, or an
    /// op's; at most `N` entries); the kernel's refusal is in `ext`.
    pub(crate) fn parse(
        nest: Attr<'r>,
        policy: &'static [bindings::nla_policy],
        ext: &ExtAck<'r>,
    ) -> Result<Self> {
        let mut tb = [ptr::null_mut(); N];
        if policy.is_empty() || policy.len() > N {
            return Err(EINVAL);
        }
        let max = c_int::try_from(policy.len() - 1).map_err(|_| EINVAL)?;
        // SAFETY: `policy` has `max + 1` entries and `tb` at least as many;
        // `nest` a parsed attribute of the request; the extack is the
        // request's or null.
        let rc = unsafe {
            ffi::crem_h_nla_parse_nested(
                tb.as_mut_ptr(),
                max,
                nest.as_ptr(),
                policy.as_ptr(),
                ext.raw(),
            )
        };
        if rc < 0 {
            return Err(Error::from_errno(rc));
        }
        Ok(Attrs {
            tb,
            _r: PhantomData,
        })
    }

    /// A `doit`'s request, parsed by genetlink with the op's policy
    /// (`tb`: `maxattr + 1` entries, or null for an op without one): the
    /// types past either bound are absent.
    ///
    /// # Safety
    ///
    /// `tb` is null or a `genl_info`'s attrs for an op whose `maxattr` is
    /// `maxattr`, each entry null or an attribute of a request alive for
    /// `'r`.
    unsafe fn of_request(tb: *mut *mut bindings::nlattr, maxattr: u32) -> Self {
        let mut out = [ptr::null_mut(); N];
        if !tb.is_null() {
            let n = usize::try_from(maxattr).map_or(N, |m| m.saturating_add(1).min(N));
            for (i, slot) in out.iter_mut().take(n).enumerate() {
                // SAFETY: `i <= maxattr`: within the table (the contract).
                *slot = unsafe { *tb.add(i) };
            }
        }
        Attrs {
            tb: out,
            _r: PhantomData,
        }
    }

    /// The attribute of type `ty`, if given.
    pub(crate) fn get(&self, ty: u32) -> Option<Attr<'r>> {
        let a = *self.tb.get(usize::try_from(ty).ok()?)?;
        // SAFETY: every constructor fills `tb` with null or attributes that
        // lie within octets alive for 'r (a request's, or a message KUnit
        // reads back).
        unsafe { Attr::from_raw(a) }
    }

    pub(crate) fn has(&self, ty: u32) -> bool {
        self.get(ty).is_some()
    }

    /// The attributes of `list` by type, without a policy (a reply has
    /// none: KUnit reads back what the module wrote); `None` if one's type
    /// is `N` or more, one but `pad` (the set's pad type, which
    /// `nla_put_64bit` may write before each 64-bit value) is given twice,
    /// or the octets do not end with a whole attribute.
    #[cfg(crem_kunit)]
    pub(crate) fn of_list(list: Nested<'r>, pad: Option<u32>) -> Option<Self> {
        let mut tb: [*mut bindings::nlattr; N] = [ptr::null_mut(); N];
        let (total, mut seen) = (list.rest.len(), 0usize);
        for a in list {
            seen += (NLA_HDRLEN + a.payload().len() + 3) & !3;
            if pad == Some(u32::from(a.ty())) {
                continue;
            }
            let slot = tb.get_mut(usize::from(a.ty()))?;
            if !slot.is_null() {
                return None;
            }
            *slot = a.as_ptr().cast_mut();
        }
        (seen == total).then_some(Attrs {
            tb,
            _r: PhantomData,
        })
    }
}

/// A request's extended ACK: where the handler says why it refused (null
/// for callers without one).
#[derive(Clone, Copy)]
pub(crate) struct ExtAck<'r> {
    e: *mut bindings::netlink_ext_ack,
    _r: PhantomData<&'r bindings::nlattr>,
}

/// Formatted texts are built here, then copied into the extack's
/// `_msg_buf` as `NL_SET_ERR_MSG_FMT` copies them (truncated at
/// `NETLINK_MAX_FMTMSG_LEN - 1` = 79, with the kernel's warning): larger
/// than that buffer so the truncation is the kernel's.
const FMT_BUF: usize = 128;

struct TextBuf {
    b: [u8; FMT_BUF],
    n: usize,
}

impl Write for TextBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // Keep one octet for the NUL; what does not fit is dropped (the
        // kernel truncates at 79 in any case).
        let room = (FMT_BUF - 1).saturating_sub(self.n);
        let take = s.len().min(room);
        let end = self.n.saturating_add(take);
        if let (Some(d), Some(s)) = (self.b.get_mut(self.n..end), s.as_bytes().get(..take)) {
            d.copy_from_slice(s);
            self.n = end;
        }
        Ok(())
    }
}

impl<'r> ExtAck<'r> {
    /// An extack of the caller's (KUnit: to read what was set).
    #[cfg(crem_kunit)]
    pub(crate) fn of(e: &'r mut bindings::netlink_ext_ack) -> Self {
        ExtAck { e, _r: PhantomData }
    }

    /// # Safety
    ///
    /// `e` is null or an extack alive for `'r` (a policy callback's).
    pub(crate) unsafe fn from_raw(e: *mut bindings::netlink_ext_ack) -> Self {
        ExtAck { e, _r: PhantomData }
    }

    fn raw(&self) -> *mut bindings::netlink_ext_ack {
        self.e
    }

    /// A fixed text (`NL_SET_ERR_MSG`; with `at`, `NL_SET_ERR_MSG_ATTR`).
    pub(crate) fn msg(&self, text: &'static CStr, at: Option<Attr<'r>>) {
        let bad = at.map_or(ptr::null(), Attr::as_ptr);
        // SAFETY: the extack is the request's (or null, which the helper
        // checks); the text is static; `bad` an attribute of this request.
        unsafe { ffi::crem_h_extack_msg(self.e, text.as_ptr(), bad) };
    }

    /// A formatted text (`NL_SET_ERR_MSG_FMT`; with `at`,
    /// `NL_SET_ERR_MSG_ATTR_FMT`), truncated as the kernel truncates.
    pub(crate) fn fmt(&self, args: fmt::Arguments<'_>, at: Option<Attr<'r>>) {
        let mut t = TextBuf {
            b: [0; FMT_BUF],
            n: 0,
        };
        let _ = t.write_fmt(args);
        // `write_str` kept the last octet; a NUL in the text only ends it
        // early.
        if let Some(z) = t.b.get_mut(t.n) {
            *z = 0;
        }
        let bad = at.map_or(ptr::null(), Attr::as_ptr);
        // SAFETY: as in `msg`; the text is NUL-terminated and copied before
        // the call returns.
        unsafe { ffi::crem_h_extack_fmt(self.e, t.b.as_ptr().cast(), bad) };
    }

    /// The attribute of type `ty` is missing from `nest` (null: the
    /// request's top level), `NL_SET_ERR_ATTR_MISS`.
    pub(crate) fn missing(&self, nest: Option<Attr<'r>>, ty: u32) {
        let nest = nest.map_or(ptr::null(), Attr::as_ptr);
        // SAFETY: as in `msg`.
        unsafe { ffi::crem_h_extack_miss(self.e, nest, ty) };
    }
}

/// The `maxattr` of `cmd`'s do in the split op table `ops` (the entry
/// genetlink sizes a doit's attrs by; a dump of the command is another
/// entry): 0 if none.
pub(crate) fn op_maxattr(ops: &[ffi::genl_split_ops], cmd: u32) -> u32 {
    let cap_do = ffi::GENL_CMD_CAP_DO as u8;
    ops.iter()
        .find(|o| u32::from(o.cmd) == cmd && o.flags & cap_do != 0)
        .map_or(0, |o| o.maxattr)
}

/// A `doit`'s request: the genl_info and the skb it came in, for the call.
/// Its attributes are at the top level, parsed by genetlink with the op's
/// own policy (the generated op table's, from the op's `request` list in
/// the spec): an attribute the op does not take was refused before the
/// `doit` ran.
pub(crate) struct Info<'r> {
    skb: *mut bindings::sk_buff,
    info: *mut ffi::genl_info,
    /// The op's `maxattr` (its attrs table has `maxattr + 1` entries, or
    /// none for 0).
    maxattr: u32,
    _r: PhantomData<&'r bindings::nlattr>,
}

impl<'r> Info<'r> {
    /// # Safety
    ///
    /// `skb` and `info` are a `doit`'s arguments, valid for `'r` (the call),
    /// and `maxattr` is that op's (the op table's: [`op_maxattr`]).
    pub(crate) unsafe fn from_raw(
        skb: *mut bindings::sk_buff,
        info: *mut ffi::genl_info,
        maxattr: u32,
    ) -> Self {
        Info {
            skb,
            info,
            maxattr,
            _r: PhantomData,
        }
    }

    /// The netns the request was made in.
    pub(crate) fn net(&self) -> *mut bindings::net {
        // SAFETY: a live genl_info (`from_raw`).
        unsafe { ffi::crem_h_genl_info_net(self.info) }
    }

    pub(crate) fn extack(&self) -> ExtAck<'r> {
        ExtAck {
            // SAFETY: a live genl_info.
            e: unsafe { ffi::crem_h_genl_info_extack(self.info) },
            _r: PhantomData,
        }
    }

    /// The request's attributes by type (`N`: the op's set's largest type
    /// + 1).
    pub(crate) fn attrs<const N: usize>(&self) -> Attrs<'r, N> {
        // SAFETY: a live genl_info; its attrs has the op's `maxattr + 1`
        // entries (or is null), each null or an attribute of the request,
        // which lives for the call.
        unsafe {
            let tb = ffi::crem_h_genl_info_attrs(self.info);
            Attrs::of_request(tb, self.maxattr)
        }
    }

    /// The request's attributes in their order (a multi-attr's entries
    /// among them), which the op's policy validated; none for an op
    /// without a policy (genetlink parses nothing for it: what it carries
    /// is ignored).
    pub(crate) fn list(&self) -> Nested<'r> {
        if self.maxattr == 0 {
            return Nested { rest: &[] };
        }
        let mut len: c_int = 0;
        // SAFETY: a live genl_info: its message holds `len` octets of
        // attributes from the returned address, alive for the call.
        let rest = unsafe {
            let at = ffi::crem_h_genl_info_payload(self.info, &mut len);
            match usize::try_from(len) {
                Ok(n) if n > 0 && !at.is_null() => core::slice::from_raw_parts(at.cast::<u8>(), n),
                _ => &[],
            }
        };
        Nested { rest }
    }

    /// Whether the sender has CAP_NET_ADMIN over the request's netns's
    /// user namespace (`netlink_ns_capable`).
    pub(crate) fn net_admin(&self) -> bool {
        // SAFETY: the request's skb and netns, live for the call.
        unsafe {
            ffi::crem_h_netlink_net_capable(self.skb, self.net(), ffi::CAP_NET_ADMIN as c_int)
        }
    }
}

/// A netlink message of ours: an skb from `genlmsg_new`, freed unless sent.
pub(crate) struct Msg(NonNull<bindings::sk_buff>);

// SAFETY: an skb we own alone may be sent or freed from any thread.
unsafe impl Send for Msg {}

impl Msg {
    /// A message with room for `payload` octets of attributes (`gfp`:
    /// GFP_ATOMIC where the caller may not sleep). None if out of memory.
    pub(crate) fn new(payload: usize, gfp: bindings::gfp_t) -> Option<Msg> {
        // SAFETY: allocates (may sleep only if `gfp` allows it, the
        // caller's choice).
        NonNull::new(unsafe { ffi::crem_h_genlmsg_new(payload, gfp) }).map(Msg)
    }

    /// `NLMSG_GOODSIZE`: a page's worth, for replies of unknown size.
    pub(crate) fn goodsize() -> usize {
        // SAFETY: a constant.
        unsafe { ffi::crem_h_nlmsg_goodsize() }
    }

    /// The reply's header to `info`'s request (`genlmsg_iput`).
    pub(crate) fn reply_to<'m>(&'m mut self, info: &Info<'_>) -> Result<Writer<'m>> {
        // SAFETY: our skb; a live genl_info.
        let hdr = unsafe { ffi::crem_h_genlmsg_iput(self.0.as_ptr(), info.info) };
        Writer::start(self.0, hdr)
    }

    /// A notification's header (no port, no sequence), command `cmd`.
    pub(crate) fn notification<'m>(&'m mut self, cmd: u8) -> Result<Writer<'m>> {
        // SAFETY: our skb; the family is registered while handlers and the
        // datapath run (the module's registration order).
        let hdr = unsafe { ffi::genlmsg_put(self.0.as_ptr(), 0, 0, family(), 0, cmd) };
        Writer::start(self.0, hdr)
    }

    /// Sends the message as the reply to `info`'s request.
    pub(crate) fn reply(self, info: &Info<'_>) -> Result {
        let skb = self.into_raw();
        // SAFETY: `genlmsg_reply` takes the skb in every case (sent, or
        // freed on error); a live genl_info.
        to_result(unsafe { ffi::crem_h_genlmsg_reply(skb, info.info) })
    }

    /// Frees a message never sent (allocated ahead, not needed): a normal
    /// end, not a drop (`consume_skb`).
    pub(crate) fn unused(self) {
        let skb = self.into_raw();
        // SAFETY: our skb, not sent.
        unsafe { bindings::consume_skb(skb) };
    }

    /// The message as written so far (KUnit: to read it back).
    #[cfg(crem_kunit)]
    pub(crate) fn data(&self) -> &[u8] {
        // SAFETY: our skb; its linear data (a netlink message is linear)
        // of `len` octets, not changed while borrowed.
        unsafe {
            let p = ffi::crem_h_skb_data(self.0.as_ptr());
            let n = ffi::crem_h_skb_len(self.0.as_ptr());
            core::slice::from_raw_parts(p, n as usize)
        }
    }

    fn into_raw(self) -> *mut bindings::sk_buff {
        let p = self.0.as_ptr();
        core::mem::forget(self);
        p
    }
}

impl Drop for Msg {
    fn drop(&mut self) {
        // SAFETY: our skb, not sent.
        unsafe { ffi::crem_h_nlmsg_free(self.0.as_ptr()) };
    }
}

/// A multicast group of a family: its name and its `GENL_MCAST_*` flags.
pub(crate) struct GroupSpec {
    pub(crate) name: &'static str,
    pub(crate) flags: u8,
}

/// What a family is made of: genetlink-legacy leaves the `genl_family` to
/// the module (the generator emits its split ops and policies only).
pub(crate) struct FamilySpec<'a> {
    pub(crate) name: &'static str,
    pub(crate) version: u8,
    /// The generated split ops.
    pub(crate) ops: &'static [ffi::genl_split_ops],
    /// Its multicast groups, in the order of their generated ids (copied).
    pub(crate) groups: &'a [GroupSpec],
}

/// The most multicast groups a family here has.
const MAX_GROUPS: usize = 4;

/// The module's family: written once by [`Registration::register`] (module
/// init, before it is registered), then the kernel's until it is
/// unregistered (`genl_register_family` sets its private fields). Read-only
/// once the module's init returns, as the generated C family was
/// (`__ro_after_init`): nothing writes it after registration.
// SAFETY: all zeros is a valid `genl_family` (as a C static starts).
#[link_section = ".data..ro_after_init"]
static mut FAMILY: ffi::genl_family = unsafe { core::mem::zeroed() };
// SAFETY: as above, for the groups it points to.
#[link_section = ".data..ro_after_init"]
static mut GROUPS: [ffi::genl_multicast_group; MAX_GROUPS] = unsafe { core::mem::zeroed() };

/// Copies `s` into a C name field, NUL-terminated (EINVAL if it does not
/// fit, or holds a NUL).
fn c_name(dst: &mut [core::ffi::c_char], s: &str) -> Result {
    if s.len() >= dst.len() || s.as_bytes().contains(&0) {
        return Err(EINVAL);
    }
    for (d, b) in dst.iter_mut().zip(s.bytes().chain(core::iter::repeat(0))) {
        *d = b as core::ffi::c_char;
    }
    Ok(())
}

/// The family registered (`genl_register_family`: its ops callable, its
/// groups joinable), unregistered on drop.
pub(crate) struct Registration(());

impl Registration {
    /// Defines the module's family from `spec` and registers it (module
    /// init, once): netns-aware, its ops run in parallel (each handler
    /// takes the locks it needs).
    pub(crate) fn register(spec: &FamilySpec<'_>) -> Result<Self> {
        if spec.groups.len() > MAX_GROUPS {
            return Err(EINVAL);
        }
        let n_ops = u8::try_from(spec.ops.len()).map_err(|_| EINVAL)?;
        // SAFETY: module init runs once, before the family is registered:
        // nothing else reads or writes these statics until then.
        let (f, groups) = unsafe {
            (
                &mut *ptr::addr_of_mut!(FAMILY),
                &mut *ptr::addr_of_mut!(GROUPS),
            )
        };
        for (g, s) in groups.iter_mut().zip(spec.groups) {
            c_name(&mut g.name, s.name)?;
            g.flags = s.flags;
        }
        c_name(&mut f.name, spec.name)?;
        f.version = spec.version.into();
        f.set_netnsok(1);
        f.set_parallel_ops(1);
        f.module = crate::THIS_MODULE.as_ptr();
        f.split_ops = spec.ops.as_ptr();
        f.n_split_ops = n_ops;
        f.mcgrps = groups.as_ptr();
        f.n_mcgrps = spec.groups.len() as u8;
        // SAFETY: the family just defined, registered once and
        // unregistered by `Drop` before the module is freed; its ops and
        // groups are statics.
        to_result(unsafe { ffi::genl_register_family(ptr::addr_of_mut!(FAMILY)) })?;
        Ok(Registration(()))
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: registered by `register`; after this returns no op or
        // listener of the family is left running.
        unsafe { ffi::genl_unregister_family(family()) };
    }
}

fn family() -> *const ffi::genl_family {
    // Only the address of the family is taken.
    ptr::addr_of!(FAMILY)
}

/// The message being written: its genetlink header, attributes appended
/// at the skb's tail. Ended with [`Writer::end`]; dropped unended, the
/// message is cancelled (`genlmsg_cancel`). Every put fails with EMSGSIZE
/// when the skb is full (it never grows: what was written stays in place).
pub(crate) struct Writer<'m> {
    skb: NonNull<bindings::sk_buff>,
    hdr: NonNull<c_void>,
    _m: PhantomData<&'m mut Msg>,
}

impl<'m> Writer<'m> {
    fn start(skb: NonNull<bindings::sk_buff>, hdr: *mut c_void) -> Result<Self> {
        let hdr = NonNull::new(hdr).ok_or_else(emsgsize)?;
        Ok(Writer {
            skb,
            hdr,
            _m: PhantomData,
        })
    }

    /// An attribute of `ty` with payload `data` (`nla_put`).
    pub(crate) fn bytes(&mut self, ty: u32, data: &[u8]) -> Result {
        let ty = c_int::try_from(ty).map_err(|_| EINVAL)?;
        let len = c_int::try_from(data.len()).map_err(|_| emsgsize())?;
        // SAFETY: our skb (borrowed mutably through the message); `data`
        // is read for the call.
        to_result(unsafe { ffi::nla_put(self.skb.as_ptr(), ty, len, data.as_ptr().cast()) })
    }

    pub(crate) fn u8(&mut self, ty: u32, v: u8) -> Result {
        self.bytes(ty, &[v])
    }

    pub(crate) fn u16(&mut self, ty: u32, v: u16) -> Result {
        self.bytes(ty, &v.to_ne_bytes())
    }

    pub(crate) fn u32(&mut self, ty: u32, v: u32) -> Result {
        self.bytes(ty, &v.to_ne_bytes())
    }

    /// A `uint` attribute (`nla_put_uint`): 4 octets while the value fits
    /// them, else 8 (no pad: a `uint` reader takes either, unaligned).
    pub(crate) fn uint(&mut self, ty: u32, v: u64) -> Result {
        match u32::try_from(v) {
            Ok(v) => self.u32(ty, v),
            Err(_) => self.bytes(ty, &v.to_ne_bytes()),
        }
    }

    /// A 64-bit attribute, aligned by a `pad` attribute where needed
    /// (`nla_put_u64_64bit`).
    pub(crate) fn u64(&mut self, ty: u32, v: u64, pad: u32) -> Result {
        let ty = c_int::try_from(ty).map_err(|_| EINVAL)?;
        let pad = c_int::try_from(pad).map_err(|_| EINVAL)?;
        let b = v.to_ne_bytes();
        // SAFETY: as in `bytes`.
        to_result(unsafe { ffi::nla_put_64bit(self.skb.as_ptr(), ty, 8, b.as_ptr().cast(), pad) })
    }

    /// A nest of `ty` whose attributes `body` writes; cancelled (nothing of
    /// it left) if `body` fails.
    pub(crate) fn nest(&mut self, ty: u32, body: impl FnOnce(&mut Self) -> Result) -> Result {
        let ty = c_int::try_from(ty).map_err(|_| EINVAL)?;
        // SAFETY: our skb.
        let start = unsafe { ffi::crem_h_nla_nest_start(self.skb.as_ptr(), ty) };
        if start.is_null() {
            return Err(emsgsize());
        }
        match body(self) {
            // SAFETY: `start` is this skb's open nest (nothing of it was
            // trimmed: a nested nest is closed or cancelled by its own call).
            Ok(()) => unsafe { ffi::crem_h_nla_nest_end(self.skb.as_ptr(), start) },
            Err(e) => {
                // SAFETY: as above.
                unsafe { ffi::crem_h_nla_nest_cancel(self.skb.as_ptr(), start) };
                return Err(e);
            }
        };
        Ok(())
    }

    /// The message is complete (`genlmsg_end`).
    pub(crate) fn end(self) {
        // SAFETY: our skb and its header.
        unsafe { ffi::crem_h_genlmsg_end(self.skb.as_ptr(), self.hdr.as_ptr()) };
        core::mem::forget(self);
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        // SAFETY: our skb and its header: the message is trimmed back to
        // before it.
        unsafe { ffi::crem_h_genlmsg_cancel(self.skb.as_ptr(), self.hdr.as_ptr()) };
    }
}

/// One call of a `dumpit`: the part's skb and the dump's state.
pub(crate) struct Dump<'c> {
    skb: NonNull<bindings::sk_buff>,
    cb: NonNull<bindings::netlink_callback>,
    _c: PhantomData<&'c mut bindings::netlink_callback>,
}

// The dump's cursor is a u64 in one of the callback's longs.
const _: () = assert!(core::mem::size_of::<isize>() >= core::mem::size_of::<u64>());

impl<'c> Dump<'c> {
    /// # Safety
    ///
    /// `skb` and `cb` are a `dumpit`'s arguments, valid for `'c` (the call).
    pub(crate) unsafe fn from_raw(
        skb: *mut bindings::sk_buff,
        cb: *mut bindings::netlink_callback,
    ) -> Option<Self> {
        Some(Dump {
            skb: NonNull::new(skb)?,
            cb: NonNull::new(cb)?,
            _c: PhantomData,
        })
    }

    /// The dump's state between parts (`cb->args`, zeroed before the first).
    pub(crate) fn args(&mut self) -> &mut [isize; 6] {
        // SAFETY: the callback is ours for the call (`&mut self`); `args`
        // is a plain array in its union.
        unsafe { &mut (*self.cb.as_ptr()).__bindgen_anon_1.args }
    }

    /// The dump's netns (the requesting socket's).
    pub(crate) fn net(&self) -> *mut bindings::net {
        // SAFETY: the part's skb belongs to the requester's socket.
        unsafe { ffi::crem_h_skb_sock_net(self.skb.as_ptr()) }
    }

    /// Whether the requester has CAP_NET_ADMIN over the dump's netns.
    pub(crate) fn net_admin(&self) -> bool {
        // SAFETY: the request's skb (`cb->skb`), live for the dump.
        unsafe {
            ffi::crem_h_netlink_net_capable(
                (*self.cb.as_ptr()).skb,
                self.net(),
                ffi::CAP_NET_ADMIN as c_int,
            )
        }
    }

    /// The state the dump's consistency is judged by (`cb->seq`, 0:
    /// unset): a part whose state differs from the previous part's is
    /// flagged NLM_F_DUMP_INTR.
    pub(crate) fn set_seq(&mut self, seq: u32) {
        // SAFETY: as in `args`.
        unsafe { (*self.cb.as_ptr()).seq = seq };
    }

    /// Octets in the part so far (the dumpit's return value).
    pub(crate) fn len(&self) -> c_int {
        // SAFETY: the part's skb, live for the call.
        c_int::try_from(unsafe { (*self.skb.as_ptr()).len }).unwrap_or(c_int::MAX)
    }

    /// The next message of the part (`NLM_F_MULTI`), command `cmd`, checked
    /// for consistency; EMSGSIZE when the part is full.
    pub(crate) fn message(&mut self, cmd: u8) -> Result<Writer<'_>> {
        // SAFETY: the part's skb and callback, live for the call; the
        // family is registered while its ops run.
        let hdr = unsafe {
            ffi::crem_h_genlmsg_put_dump(self.skb.as_ptr(), self.cb.as_ptr(), family(), cmd)
        };
        Writer::start(self.skb, hdr)
    }
}

/// The family's multicast groups (generated `CREM_NLGRP_*`).
#[derive(Clone, Copy)]
pub(crate) enum Group {
    Events = ffi::CREM_NLGRP_EVENTS as isize,
}

/// Whether anyone in `net` listens to `g`.
pub(crate) fn has_listeners(net: *mut bindings::net, g: Group) -> bool {
    // SAFETY: a live netns (the caller's); the family is registered while
    // the datapath runs; the group is the family's.
    unsafe { ffi::crem_h_genl_has_listeners(family(), net, g as u32) }
}

/// Sends `msg` to `g`'s listeners in `net` (`genlmsg_multicast_netns`);
/// ESRCH: none listens.
pub(crate) fn multicast(
    msg: Msg,
    net: *mut bindings::net,
    g: Group,
    gfp: bindings::gfp_t,
) -> Result {
    let skb = msg.into_raw();
    // SAFETY: as in `has_listeners`; the skb is taken in every case.
    to_result(unsafe { ffi::crem_h_genlmsg_multicast_netns(family(), net, skb, g as u32, gfp) })
}
