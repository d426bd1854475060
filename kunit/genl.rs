// SPDX-License-Identifier: GPL-2.0
//! The carried genetlink abstraction (`rust/kernel_ext/genl.rs`) and a
//! flow's attributes (`rust/netlink/flow.rs`): a flow with every
//! conditional attribute fits the size its notifications are allocated
//! with, and reads back from the message's top level, each attribute once
//! and whole (a reply has no policy), with the values written; extack
//! texts are set as the kernel's macros set them, a formatted one truncated
//! at 79 octets as `NL_SET_ERR_MSG_FMT` truncates.

use super::{run, Checks};
use crate::addr::NetAddr;
use crate::crem_core::engine::Limits;
use crate::crem_core::nl::{
    flow_stat, msg_type, side, CounterKind, FLOW_STATS_MSGS_IN_BY_TYPE, FLOW_STATS_MSGS_OUT_BY_TYPE,
};
use crate::ffi::*;
use crate::flow_info::FlowInfo;
use crate::kernel_ext::genl::{Attr, Attrs, ExtAck, Msg, Nested};
use crate::netlink::{put_info, FLOW_MSG_SIZE};
use core::ffi::{c_char, c_int, CStr};
use kernel::bindings;

/// `NLMSG_HDRLEN` + `GENL_HDRLEN`: where a message's attributes start.
const ATTRS_AT: usize = 16 + 4;

/// A flow's state with every attribute a reply may hold, each value
/// distinct (the counters too: half past u32, half small).
fn full_info() -> FlowInfo {
    let mut fi = FlowInfo::default();
    fi.key.saddr = NetAddr::from_v4([10, 0, 0, 1]);
    fi.key.daddr = NetAddr::from_v4([10, 0, 1, 1]);
    fi.key.dqp = 0xab_cdef;
    fi.key.side = side::CSF;
    fi.peer = NetAddr::from_v4([192, 0, 2, 1]);
    fi.flow_id = 0xdead_beef;
    fi.state = 1;
    fi.k = 32;
    fi.m = 4;
    fi.symbol_len = 1104;
    fi.srtt_us = 20_000;
    fi.rdma_mtu = 4096;
    fi.rdma_mtu_exact = true;
    fi.pinned = true;
    fi.last_msg_ms = Some(77);
    fi.limits = Some(Limits {
        schemes: 0b111,
        max_k: 255,
        max_m: 16,
        max_t: 4096,
        max_open_blocks: 1024,
    });
    fi.mem = u64::MAX - 1;
    fi.age_ms = 123_456_789;
    let c = &mut fi.counters;
    let all = c
        .flat
        .iter_mut()
        .chain(c.msgs_in.iter_mut())
        .chain(c.msgs_out.iter_mut());
    // Both widths of a uint: 8 octets past u32, else 4.
    for (i, c) in (0u64..).zip(all) {
        *c = if i % 2 == 0 {
            (i + 1) * 1_000_003 + (1 << 40)
        } else {
            i + 1
        };
    }
    fi
}

fn flow_reply_fits_and_reads_back(c: &mut Checks<'_>) {
    let fi = full_info();
    let Some(mut msg) = Msg::new(FLOW_MSG_SIZE, bindings::GFP_KERNEL) else {
        c.check(false, "a message (out of memory)");
        return;
    };
    const CLOSE: u8 = crem_flow_event_CREM_FLOW_EVENT_CLOSE_RECEIVED as u8;
    let built = msg
        .notification(CREM_CMD_FLOW_CHANGE_NTF as u8)
        .and_then(|mut w| {
            put_info(&mut w, &fi, Some((CLOSE, 4)), true)?;
            w.end();
            Ok(())
        });
    c.check(built.is_ok(), "every attribute fits FLOW_MSG_SIZE");
    let data = msg.data();
    let used = data.len().saturating_sub(ATTRS_AT);
    if used > FLOW_MSG_SIZE {
        let _ = write!(c.w, "payload {used} > estimate {FLOW_MSG_SIZE}; ");
        c.check(false, "the estimate");
    }
    let Some(attrs) = data.get(ATTRS_AT..) else {
        c.check(false, "a message with attributes");
        return;
    };
    // The flow's attributes at the top level, each once.
    let list = Nested::of_bytes(attrs);
    let Some(tb) = Attrs::<{ CREM_A_FLOW_MAX as usize + 1 }>::of_list(list, Some(CREM_A_FLOW_PAD))
    else {
        c.check(false, "flow attributes, each once");
        return;
    };
    let u32_of = |t| tb.get(t).and_then(Attr::u32);
    let u8_of = |t| tb.get(t).and_then(Attr::u8);
    c.check(u32_of(CREM_A_FLOW_ID) == Some(fi.flow_id), "id");
    c.check(
        tb.get(CREM_A_FLOW_SRC).map(Attr::payload) == Some(fi.key.saddr.wire()),
        "src",
    );
    c.check(
        tb.get(CREM_A_FLOW_PEER).map(Attr::payload) == Some(fi.peer.wire()),
        "peer",
    );
    c.check(u32_of(CREM_A_FLOW_DEST_QP) == Some(fi.key.dqp), "dest-qp");
    c.check(u8_of(CREM_A_FLOW_EVENT) == Some(CLOSE), "event");
    c.check(
        tb.get(CREM_A_FLOW_CLOSE_REASON).and_then(Attr::u16) == Some(4),
        "close-reason",
    );
    c.check(u8_of(CREM_A_FLOW_PINNED) == Some(1), "pinned");
    c.check(
        tb.get(CREM_A_FLOW_MEMORY).and_then(Attr::u64) == Some(fi.mem),
        "memory",
    );
    c.check(
        tb.get(CREM_A_FLOW_MAX_OPEN_BLOCKS).and_then(Attr::u16) == Some(1024),
        "max-open-blocks",
    );
    let Some(stats) = tb.get(CREM_A_FLOW_STATS) else {
        c.check(false, "a stats nest");
        return;
    };
    let Some(st) = Attrs::<{ CREM_A_FLOW_STATS_MAX as usize + 1 }>::of_list(stats.nested(), None)
    else {
        c.check(false, "flow-stats counters, each once");
        return;
    };
    // Every counter at its attribute (the spec's tables), the by-type
    // nests' too.
    let mut wrong = 0u32;
    for a in flow_stat::COUNTERS {
        let ok = match (a.kind, a.id) {
            (CounterKind::Value(i), _) => {
                st.get(a.id.into()).and_then(Attr::uint) == Some(fi.counters.get(i))
            }
            (_, FLOW_STATS_MSGS_IN_BY_TYPE) => {
                msg_types_read_back(st.get(a.id.into()), &fi.counters.msgs_in)
            }
            (_, FLOW_STATS_MSGS_OUT_BY_TYPE) => {
                msg_types_read_back(st.get(a.id.into()), &fi.counters.msgs_out)
            }
            _ => true,
        };
        if !ok {
            wrong += 1;
        }
    }
    if wrong != 0 {
        let _ = write!(c.w, "{wrong} counters; ");
    }
    c.check(wrong == 0, "every counter and by-type nest read back");
}

/// Whether msg-types nest `nest` holds `want`, slot by slot.
/// An IPv6 flow's reply: its addresses as 16 octets (IPv4's stay 4: the
/// case above), within FLOW_MSG_SIZE.
fn flow_reply_v6(c: &mut Checks<'_>) {
    let mut fi = full_info();
    let v6 = |last: u8| {
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        a[15] = last;
        a
    };
    let n6 = |last: u8| NetAddr::from_v6(v6(last)).unwrap_or(NetAddr::NONE);
    (fi.key.saddr, fi.key.daddr, fi.peer) = (n6(1), n6(2), n6(3));
    let Some(mut msg) = Msg::new(FLOW_MSG_SIZE, bindings::GFP_KERNEL) else {
        c.check(false, "a message (out of memory)");
        return;
    };
    let built = msg
        .notification(CREM_CMD_FLOW_CHANGE_NTF as u8)
        .and_then(|mut w| {
            put_info(&mut w, &fi, Some((0, 4)), true)?;
            w.end();
            Ok(())
        });
    c.check(built.is_ok(), "an IPv6 flow's attributes fit FLOW_MSG_SIZE");
    let data = msg.data();
    let Some(tb) = data.get(ATTRS_AT..).and_then(|a| {
        Attrs::<{ CREM_A_FLOW_MAX as usize + 1 }>::of_list(
            Nested::of_bytes(a),
            Some(CREM_A_FLOW_PAD),
        )
    }) else {
        c.check(false, "IPv6 flow attributes, each once");
        return;
    };
    let octets = |t| tb.get(t).map(Attr::payload);
    c.check(
        octets(CREM_A_FLOW_SRC) == Some(&v6(1)[..]),
        "v6 src: 16 octets",
    );
    c.check(
        octets(CREM_A_FLOW_DST) == Some(&v6(2)[..]),
        "v6 dst: 16 octets",
    );
    c.check(
        octets(CREM_A_FLOW_PEER) == Some(&v6(3)[..]),
        "v6 peer: 16 octets",
    );
}

fn msg_types_read_back(nest: Option<Attr<'_>>, want: &[u64; msg_type::N]) -> bool {
    let Some(tb) = nest
        .and_then(|n| Attrs::<{ CREM_A_MSG_TYPES_MAX as usize + 1 }>::of_list(n.nested(), None))
    else {
        return false;
    };
    msg_type::COUNTERS.iter().all(|a| match a.kind {
        CounterKind::Value(i) => tb.get(a.id.into()).and_then(Attr::uint) == want.get(i).copied(),
        CounterKind::Nest(_) => true,
    })
}

/// The extack's message, as a C string.
fn msg_of(e: &bindings::netlink_ext_ack) -> Option<&CStr> {
    // SAFETY: `_msg` is null or a NUL-terminated string: a static one, or
    // the extack's own buffer (which `e` borrows).
    (!e._msg.is_null()).then(|| unsafe { CStr::from_ptr(e._msg.cast()) })
}

fn extack_texts(c: &mut Checks<'_>) {
    // An attribute to point at: header (length 8, type 3) and a u32.
    let mut buf = [8u8, 0, 3, 0, 1, 2, 3, 4];
    // SAFETY: a well-formed attribute in `buf`, alive for the case.
    let Some(at) = (unsafe { Attr::from_raw(buf.as_mut_ptr().cast()) }) else {
        return;
    };
    // SAFETY: a zeroed extack is an empty one.
    let mut e: bindings::netlink_ext_ack = unsafe { core::mem::zeroed() };
    {
        let ext = ExtAck::of(&mut e);
        ext.msg(c"a fixed text", Some(at));
    }
    let fixed: &'static CStr = c"a fixed text";
    c.check(
        e._msg == fixed.as_ptr().cast() && e.bad_attr == buf.as_ptr().cast(),
        "a fixed text is the static string, with its attribute",
    );
    // C's "no peer ... %pI4 (set peer PREFIX=ADDR)" is 80 octets with a
    // 15-character address: the kernel keeps 79.
    {
        let ext = ExtAck::of(&mut e);
        let [a, b, x, d] = [255u8; 4];
        ext.fmt(
            format_args!(
                "no peer is configured for the destination {a}.{b}.{x}.{d} (set peer PREFIX=ADDR)"
            ),
            None,
        );
    }
    let want: &[u8] =
        b"no peer is configured for the destination 255.255.255.255 (set peer PREFIX=ADDR";
    c.check(
        e._msg == e._msg_buf.as_ptr(),
        "a formatted text is in the extack's buffer",
    );
    c.check(
        msg_of(&e).map(CStr::to_bytes) == Some(want),
        "truncated at 79 octets, as NL_SET_ERR_MSG_FMT",
    );
    {
        let ext = ExtAck::of(&mut e);
        ext.fmt(format_args!("no flow with id {}", 7u32), None);
    }
    c.check(
        msg_of(&e).map(CStr::to_bytes) == Some(b"no flow with id 7".as_slice()),
        "a short formatted text whole",
    );
    {
        let ext = ExtAck::of(&mut e);
        ext.missing(Some(at), CREM_A_FLOW_DEST_QP);
    }
    c.check(
        e.miss_nest == buf.as_ptr().cast() && u32::from(e.miss_type) == CREM_A_FLOW_DEST_QP,
        "a missing attribute names its nest and type",
    );
}

#[no_mangle]
extern "C" fn crem_kunit_genl_flow_reply(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut c = Checks::new(w);
        flow_reply_fits_and_reads_back(&mut c);
        c.ok
    })
}

#[no_mangle]
extern "C" fn crem_kunit_genl_flow_reply_v6(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut c = Checks::new(w);
        flow_reply_v6(&mut c);
        c.ok
    })
}

#[no_mangle]
extern "C" fn crem_kunit_genl_extack(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let mut c = Checks::new(w);
        extack_texts(&mut c);
        c.ok
    })
}
