// SPDX-License-Identifier: GPL-2.0
//! config-get's reply and config-set's reading of its request
//! (`rust/netlink/config.rs`): a configuration with every attribute and
//! full lists, written as config-get writes it, passes config-set's own
//! generated policy (its address callbacks included) and reads back
//! through config-set's edit as the same configuration; and each kind of
//! refusal names the attribute the C named (or none, for the request as a
//! whole), with crem-core's text and errno. The test wraps the request's
//! attributes in a nest (type 1), parsed as genetlink parses a request.

use super::{run, Checks};
use crate::crem_core::ctl::{self, Addr, Config, Peer, Recovery, Role};
use crate::ffi::*;
use crate::kernel_ext::genl::{Attr, ExtAck, Msg, Nested, Writer};
use crate::netlink::{edit, put_config, request_policy, ConfigAttrs};
use core::ffi::{c_char, c_int, CStr};
use kernel::bindings;
use kernel::error::Result;
use kernel::prelude::*;

/// `NLMSG_HDRLEN` + `GENL_HDRLEN`: where a message's attributes start.
const ATTRS_AT: usize = 16 + 4;

/// A configuration unlike the default in every field, its lists full:
/// IPv4 and IPv6 entries alternating.
fn full() -> Config {
    let mut c = Config {
        port: 7000,
        role: Role::Gateway,
        recovery: Recovery::Both,
        adaptive: false,
        k: 40,
        m: 7,
        m_cong: 3,
        symbol_len: 1000,
        epsilon_ppb: 12_345,
        hold_us: 500,
        max_flows: 77,
        max_bdp: 2048,
        max_memory: 1 << 35, // the policy allows 64 GiB
        report: true,
        node_id: 0xdead_beef,
        report_interval_us: 1_000_000,
        report_flow_gap_us: 0,
        report_port_rate: 1,
        report_psns: 1,
        reporters: Config::NO_REPORTERS,
        peers: Config::NO_PEERS,
        spare_flows: 33,
    };
    for i in 0..ctl::MAX_REPORTERS as u8 {
        let a = if i % 2 == 0 {
            Addr::V4([198, 51, 100, i])
        } else {
            Addr::V6([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, i])
        };
        let _ = c.reporters.push(a);
    }
    for i in 0..ctl::MAX_PEERS as u8 {
        let p = if i % 2 == 0 {
            Peer {
                prefix: Addr::V4([10, i, 0, 0]),
                len: 16,
                addr: Addr::V4([192, 0, 2, i]),
            }
        } else {
            Peer {
                prefix: Addr::V6([0x20, 0x01, 0x0d, 0xb8, i, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
                len: 40,
                addr: Addr::V6([0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, i]),
            }
        };
        let _ = c.peers.push(p);
    }
    c
}

/// The extack's message, as bytes.
fn text(e: &bindings::netlink_ext_ack) -> &[u8] {
    if e._msg.is_null() {
        return b"";
    }
    // SAFETY: `_msg` is a NUL-terminated string: a static one, or the
    // extack's own buffer (which `e` borrows).
    unsafe { CStr::from_ptr(e._msg.cast()) }.to_bytes()
}

/// What reading config-set's attributes gave: its errno (0: accepted), the extack's
/// text, and the attribute the extack names as the offset of its header in
/// the message (None: none).
struct Outcome {
    errno: i32,
    text: [u8; 128],
    text_len: usize,
    bad_at: Option<usize>,
    /// Offsets of the request's attributes (the wrapping nest's), in
    /// order, with their types.
    attrs: [(u16, usize); 80],
    n_attrs: usize,
}

impl Outcome {
    fn text(&self) -> &[u8] {
        self.text.get(..self.text_len).unwrap_or(&[])
    }

    /// The offset of the `nth` attribute of type `ty` in the request.
    fn attr(&self, ty: u32, nth: usize) -> Option<usize> {
        let list = self.attrs.get(..self.n_attrs)?;
        let mut of_ty = list.iter().filter(|(t, _)| u32::from(*t) == ty);
        of_ty.nth(nth).map(|(_, at)| *at)
    }
}

/// Writes config-set's attributes with `body`, reads them as config-set
/// does (its op's policy, then edit onto `into`), and says how that went.
/// They are in a nest here (type 1), which the policy parses as
/// genetlink parses a request's top level. (Boxed, and
/// not inlined: eleven cases' outcomes in one frame overflow the stack.)
#[inline(never)]
fn read(into: &mut Config, body: impl FnOnce(&mut Writer<'_>) -> Result) -> Option<KBox<Outcome>> {
    let mut msg = Msg::new(Msg::goodsize(), bindings::GFP_KERNEL)?;
    {
        let mut w = msg.notification(CREM_CMD_CONFIG_SET as u8).ok()?;
        w.nest(1, body).ok()?;
        w.end();
    }
    let data = msg.data();
    let base = data.as_ptr() as usize;
    // SAFETY: the nest written above, the message's first attribute, whole
    // within `data` (ended), alive while `msg` is.
    let nest = unsafe { Attr::from_raw(data.get(ATTRS_AT..)?.as_ptr().cast()) }?;
    let mut ob = KBox::new(
        Outcome {
            errno: 0,
            text: [0; 128],
            text_len: 0,
            bad_at: None,
            attrs: [(0, 0); 80],
            n_attrs: 0,
        },
        GFP_KERNEL,
    )
    .ok()?;
    let o = &mut *ob;
    for (slot, a) in o.attrs.iter_mut().zip(nest.nested()) {
        *slot = (
            a.ty(),
            (a.payload().as_ptr() as usize).wrapping_sub(base + 4),
        );
        o.n_attrs += 1;
    }
    // SAFETY: a zeroed extack is an empty one.
    let mut e: bindings::netlink_ext_ack = unsafe { core::mem::zeroed() };
    {
        let ext = ExtAck::of(&mut e);
        let policy = request_policy(CREM_CMD_CONFIG_SET)?;
        let r = ConfigAttrs::parse(nest, policy, &ext)
            .and_then(|tb| edit(into, &tb, nest.nested(), &ext));
        if let Err(err) = r {
            o.errno = err.to_errno();
        }
    }
    let t = text(&e);
    let n = t.len().min(o.text.len());
    o.text[..n].copy_from_slice(&t[..n]);
    o.text_len = n;
    o.bad_at = (!e.bad_attr.is_null()).then(|| (e.bad_attr as usize).wrapping_sub(base));
    Some(ob)
}

fn roundtrip(c: &mut Checks<'_>) {
    let (Ok(want), Ok(mut got)) = (
        KBox::new(full(), GFP_KERNEL),
        KBox::new(Config::DEFAULT, GFP_KERNEL),
    ) else {
        c.check(false, "memory");
        return;
    };
    let Some(o) = read(&mut got, |w| put_config_body(w, &want)) else {
        c.check(false, "a message with the full configuration");
        return;
    };
    if o.errno != 0 {
        let t = core::str::from_utf8(o.text()).unwrap_or("?");
        let _ = write!(c.w, "errno {} ({t}); ", o.errno);
    }
    c.check(o.errno == 0, "the full configuration is accepted");
    c.check(*got == *want, "and reads back as written");
    c.check(
        o.attr(CREM_A_CONFIG_PEER, ctl::MAX_PEERS - 1).is_some()
            && o.attr(CREM_A_CONFIG_REPORTER, ctl::MAX_REPORTERS - 1)
                .is_some(),
        "every list entry in the nest",
    );
}

/// `put_config`'s attributes (config-get's reply) as config-set's.
fn put_config_body(w: &mut Writer<'_>, c: &Config) -> Result {
    // put_config writes a message's attributes: into a scratch message,
    // whose attributes are copied into ours (but pad, which config-set
    // does not take).
    let mut m = Msg::new(Msg::goodsize(), bindings::GFP_KERNEL).ok_or(ENOMEM)?;
    {
        let mut s = m.notification(CREM_CMD_CONFIG_CHANGE_NTF as u8)?;
        put_config(&mut s, c)?;
        s.end();
    }
    let data = m.data();
    for a in Nested::of_bytes(data.get(ATTRS_AT..).ok_or(EINVAL)?) {
        if u32::from(a.ty()) == CREM_A_CONFIG_PEER {
            w.nest(CREM_A_CONFIG_PEER, |w| {
                for p in a.nested() {
                    w.bytes(p.ty().into(), p.payload())?;
                }
                Ok(())
            })?;
        } else if u32::from(a.ty()) != CREM_A_CONFIG_PAD {
            w.bytes(a.ty().into(), a.payload())?;
        }
    }
    Ok(())
}

fn peer(w: &mut Writer<'_>, prefix: &[u8], len: u8, addr: &[u8]) -> Result {
    w.nest(CREM_A_CONFIG_PEER, |w| {
        w.bytes(CREM_A_PEER_PREFIX, prefix)?;
        w.u8(CREM_A_PEER_PREFIX_LEN, len)?;
        w.bytes(CREM_A_PEER_ADDR, addr)
    })
}

/// One refusal: its errno, text and the attribute it names (the offset of
/// `at`'s header, from the outcome's attribute list, which must have it).
fn refused(
    c: &mut Checks<'_>,
    what: &str,
    o: Option<KBox<Outcome>>,
    errno: ctl::Errno,
    want: &[u8],
    at: impl FnOnce(&Outcome) -> Option<usize>,
) {
    let Some(o) = o else {
        c.check(false, what);
        return;
    };
    let Some(at) = at(&o) else {
        c.check(false, "the attribute to name is in the request");
        return;
    };
    refusal(c, what, &o, errno, want, Some(at));
}

/// As [`refused`], for a refusal of the request as a whole: it names no
/// attribute.
fn refused_whole(
    c: &mut Checks<'_>,
    what: &str,
    o: Option<KBox<Outcome>>,
    errno: ctl::Errno,
    want: &[u8],
) {
    match o {
        Some(o) => refusal(c, what, &o, errno, want, None),
        None => c.check(false, what),
    }
}

fn refusal(
    c: &mut Checks<'_>,
    what: &str,
    o: &Outcome,
    errno: ctl::Errno,
    want: &[u8],
    at: Option<usize>,
) {
    let ok = o.errno == errno.to_kernel() && o.text() == want && o.bad_at == at;
    if !ok {
        let t = core::str::from_utf8(o.text()).unwrap_or("?");
        let _ = write!(
            c.w,
            "{what}: errno {} text \"{t}\" at {:?} (want {:?}); ",
            o.errno, o.bad_at, at
        );
    }
    c.check(ok, "a refusal as the C gave it");
}

fn refusals(c: &mut Checks<'_>) {
    let Ok(mut cfg) = KBox::new(Config::DEFAULT, GFP_KERNEL) else {
        c.check(false, "memory");
        return;
    };
    // Each case edits a host's configuration on port 7000.
    let mut fresh = |f: &mut dyn FnMut(&mut Writer<'_>) -> Result| {
        cfg.clone_from(&Config::DEFAULT);
        (cfg.role, cfg.port) = (Role::Host, 7000);
        read(&mut cfg, |w| f(w))
    };
    // A reporter of 5 octets: the policy's callback refuses it.
    let o = fresh(&mut |w| {
        w.bytes(CREM_A_CONFIG_REPORTER, &[192, 0, 2, 1])?;
        w.bytes(CREM_A_CONFIG_REPORTER, &[192, 0, 2, 1, 9])
    });
    refused(
        c,
        "reporter length",
        o,
        ctl::EINVAL,
        b"address must be 4 (IPv4) or 16 (IPv6) octets",
        |o| o.attr(CREM_A_CONFIG_REPORTER, 1),
    );
    // 17 reporters: the 17th is named.
    let o = fresh(&mut |w| {
        for i in 0..17u8 {
            w.bytes(CREM_A_CONFIG_REPORTER, &[198, 51, 100, i])?;
        }
        Ok(())
    });
    refused(
        c,
        "reporters",
        o,
        ctl::E2BIG,
        b"at most 16 reporters",
        |o| o.attr(CREM_A_CONFIG_REPORTER, 16),
    );
    // The second peer's prefix has host bits: its prefix is named.
    let o = fresh(&mut |w| {
        peer(w, &[10, 0, 0, 0], 24, &[192, 0, 2, 1])?;
        peer(w, &[10, 0, 1, 1], 24, &[192, 0, 2, 2])
    });
    refused(
        c,
        "host bits",
        o,
        ctl::EINVAL,
        b"prefix has host bits set beyond prefix-len",
        |o| o.attr(CREM_A_CONFIG_PEER, 1).map(|p| p + 4),
    );
    // The same prefix twice: the second peer nest is named.
    let o = fresh(&mut |w| {
        peer(w, &[10, 0, 0, 0], 24, &[192, 0, 2, 1])?;
        peer(w, &[10, 0, 0, 0], 24, &[192, 0, 2, 2])
    });
    refused(
        c,
        "duplicate",
        o,
        ctl::EEXIST,
        b"duplicate peer prefix",
        |o| o.attr(CREM_A_CONFIG_PEER, 1),
    );
    // k + m above 255: m is named.
    let o = fresh(&mut |w| {
        w.u8(CREM_A_CONFIG_K, 200)?;
        w.u8(CREM_A_CONFIG_M, 100)
    });
    refused(
        c,
        "k + m",
        o,
        ctl::EINVAL,
        b"k + m must not exceed 255 (Repair Indices need i + k <= 255)",
        |o| o.attr(CREM_A_CONFIG_M, 0),
    );
    // A role without a port: the role is named if given...
    let o = fresh(&mut |w| {
        w.u16(CREM_A_CONFIG_PORT, 0)?;
        w.u8(CREM_A_CONFIG_ROLE, Role::Gateway.into())
    });
    let role_text = b"set a CREM port before enabling a role (there is no default port)";
    refused(c, "role", o, ctl::EINVAL, role_text, |o| {
        o.attr(CREM_A_CONFIG_ROLE, 0)
    });
    // ...else no attribute: the request (the host's role is the old one).
    let o = fresh(&mut |w| w.u16(CREM_A_CONFIG_PORT, 0));
    refused_whole(c, "role kept", o, ctl::EINVAL, role_text);
    // A peer without its address: the peer nest is named.
    let o = fresh(&mut |w| {
        w.nest(CREM_A_CONFIG_PEER, |w| {
            w.bytes(CREM_A_PEER_PREFIX, &[10, 0, 0, 0])?;
            w.u8(CREM_A_PEER_PREFIX_LEN, 8)
        })
    });
    let text = b"a peer needs prefix, prefix-len and addr";
    refused(c, "incomplete peer", o, ctl::EINVAL, text, |o| {
        o.attr(CREM_A_CONFIG_PEER, 0)
    });
    // An IPv4 prefix 33 bits long: its prefix-len (the peer's second
    // attribute, after the 8 octets of the prefix's) is named.
    let o = fresh(&mut |w| peer(w, &[10, 0, 0, 0], 33, &[192, 0, 2, 1]));
    let text = b"prefix-len is longer than the prefix's address";
    refused(c, "prefix-len", o, ctl::EINVAL, text, |o| {
        o.attr(CREM_A_CONFIG_PEER, 0).map(|p| p + 4 + 8)
    });
    // The reporter's ranges: report-psns 65 is named.
    let o = fresh(&mut |w| w.u8(CREM_A_CONFIG_REPORT_PSNS, 65));
    let text = b"report-psns must be 1 to 64 (the PSNs a report lists at most)";
    refused(c, "report-psns", o, ctl::EINVAL, text, |o| {
        o.attr(CREM_A_CONFIG_REPORT_PSNS, 0)
    });
    // report on without a port: report is named.
    let o = fresh(&mut |w| {
        w.u16(CREM_A_CONFIG_PORT, 0)?;
        w.u8(CREM_A_CONFIG_ROLE, Role::Disabled.into())?;
        w.u8(CREM_A_CONFIG_REPORT, 1)
    });
    let text = b"set a CREM port before turning report on (reports are sent from it)";
    refused(c, "report without port", o, ctl::EINVAL, text, |o| {
        o.attr(CREM_A_CONFIG_REPORT, 0)
    });
    // An IPv6 CREM function for an IPv4 prefix: its addr (the third
    // attribute, after the prefix-len's 8 octets) is named.
    let v6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let o = fresh(&mut |w| peer(w, &[10, 0, 0, 0], 8, &v6));
    let text = b"peer address family differs from its prefix's";
    refused(c, "family", o, ctl::EINVAL, text, |o| {
        o.attr(CREM_A_CONFIG_PEER, 0).map(|p| p + 4 + 8 + 8)
    });
}

#[no_mangle]
extern "C" fn crem_kunit_genl_config_roundtrip(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut c = Checks::new(w);
        roundtrip(&mut c);
        c.ok
    })
}

#[no_mangle]
extern "C" fn crem_kunit_genl_config_refusals(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut c = Checks::new(w);
        refusals(&mut c);
        c.ok
    })
}
