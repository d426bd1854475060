// SPDX-License-Identifier: GPL-2.0
//! A CREM datagram from the socket, to the flow it is for: checked against
//! the configured peers and Path Reporters, decoded once, routed by
//! crem-core (`wire::route`: which side, which key) and handed to the flow
//! the netns's table finds; a HELLO for a receiver flow there is none of
//! asks for one (`create.rs`), which answers it. The socket
//! (`socket.rs`) hands each datagram to [`receive`].

use crate::addr::NetAddr;
use crate::create;
use crate::crem_core::nl::stat;
use crate::crem_core::wire::{self, FlowAddrs, FlowKind, Route, Side};
use crate::ffi;
use crate::flow::{self, Flow};
use crate::host;
use crate::kernel_ext::bh;
use crate::netns;
use crate::socket::Dest;
use crate::table::{kind_code, FlowKey, FlowTable, SIDE_CRF, SIDE_CSF};

/// What became of a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Handed to its flow.
    Fed,
    /// A PATH_REPORT handed to its sender flow.
    ReportFed,
    /// A HELLO for a receiver flow there is none of: asked for.
    NewFlow,
    /// From an address that may not send it.
    NotPeer,
    /// Not a valid message, or a HELLO of a flow this node cannot protect.
    Invalid,
    /// For no flow here.
    NoFlow,
}

fn side_code(s: Side) -> u8 {
    match s {
        Side::Sender => SIDE_CSF,
        Side::Receiver => SIDE_CRF,
    }
}

/// A message's flow addresses as the table's, either family (`None`: an
/// IPv6 pair with an IPv4-mapped address, which names no flow).
fn addrs_of(a: FlowAddrs) -> Option<(NetAddr, NetAddr)> {
    NetAddr::of_flow(a)
}

/// The TTL of a receiver flow's restored packets until its first packet
/// shows the path's.
const HELLO_FLOW_TTL: u8 = 64;

/// The datagram `msg` from `src` to the flow it is for, in the netns whose
/// state is `st`. `src.tos`: of its IP header (CE-marked on the REPAIR
/// path: congestion; the DSCP a HELLO's answer leaves with); `src.port`:
/// where the flow that a HELLO or HELLO_ACK is for sends from now on (the
/// draft: to the address and port it came from).
fn dispatch(st: &netns::NetState, src: Dest, msg: &[u8]) -> Verdict {
    // A netns whose role is disabled serves the port for its reports only
    // (a Path Reporter): it has no flow, and a HELLO makes none.
    if st.role() == ffi::crem_role_CREM_ROLE_DISABLED as u8 {
        return Verdict::NoFlow;
    }
    let (from, tos) = (src.addr, src.tos);
    let ce = flow::ce(tos);
    // BH is off for the whole dispatch (the flow's lock needs it, and it
    // is an RCU read-side section for the configuration and the table).
    let bh = bh::disable();
    let cfg = st.peers.get(&*bh);
    let (peer, reporter) = (cfg.is_peer(&from), cfg.is_reporter(&from));
    // Nothing is decoded from anyone else.
    if !peer && !reporter {
        return Verdict::NotPeer;
    }
    let Ok(m) = wire::decode(msg) else {
        return Verdict::Invalid;
    };
    // The message alone, without what the datagram carries past its
    // Length (which decoding ignores): what the flow and a queued
    // creation request keep.
    let msg = wire::Header::decode(msg).map_or(msg, |(_, m)| m);
    let route = wire::route(&m);
    if !wire::accepted_from(&route, peer, reporter) {
        return Verdict::NotPeer;
    }
    let t: &FlowTable<Flow> = &st.flows;
    let (flow, fed) = match route {
        Route::PathReport { addrs, dest_qp } => {
            (report_flow(st, addrs, dest_qp, &bh), Verdict::ReportFed)
        }
        Route::Hello {
            addrs,
            dest_qp,
            kind,
        } => {
            let (Some((saddr, daddr)), Some(kind)) = (addrs_of(addrs), kind) else {
                return Verdict::Invalid;
            };
            // The peer that protects the flow's source prefix sends its
            // HELLOs, no other.
            if cfg.peer_for(&saddr) != Some(from) {
                return Verdict::NotPeer;
            }
            let k = FlowKey {
                saddr,
                daddr,
                dqp: dest_qp,
                side: SIDE_CRF,
                kind: kind_code(kind),
            };
            let f = t.lookup(&k, &*bh);
            if f.is_none() {
                // Its answer leaves with the HELLO's DSCP (the protected
                // flow's); TTL as a fresh packet's.
                let mut rq = create::request_for(k, from, tos, HELLO_FLOW_TTL);
                rq.peer_port = src.port;
                st.creation.request(st, &rq, msg, &bh);
                return Verdict::NewFlow;
            }
            f.inspect(|f| f.set_peer_port(src.port));
            (f, Verdict::Fed)
        }
        // The sender learns its Flow ID here, by its HELLO's nonce (which
        // only its peer's answer can know), and where the peer answers.
        Route::Nonce(n) => {
            let f = t.lookup_nonce(&from, n, &*bh);
            f.inspect(|f| f.set_peer_port(src.port));
            (f, Verdict::Fed)
        }
        Route::Id {
            flow_id,
            side,
            or_receiver,
        } => {
            let f = t
                .lookup_id(&from, flow_id, side_code(side), &*bh)
                .or_else(|| {
                    or_receiver
                        .then(|| t.lookup_id(&from, flow_id, SIDE_CRF, &*bh))
                        .flatten()
                });
            (f, Verdict::Fed)
        }
    };
    match flow {
        Some(f) => {
            f.msg(&bh, msg, ce);
            fed
        }
        None => Verdict::NoFlow,
    }
}

/// The sender flow a PATH_REPORT about `addrs`, `dest_qp` is for: the one
/// of this netns that sends the flow's requests.
fn report_flow<'a>(
    st: &'a netns::NetState,
    addrs: FlowAddrs,
    dest_qp: u32,
    bh: &'a bh::Bh,
) -> Option<&'a Flow> {
    let (saddr, daddr) = addrs_of(addrs)?;
    let k = FlowKey {
        saddr,
        daddr,
        dqp: dest_qp,
        side: SIDE_CSF,
        kind: kind_code(FlowKind::Requests),
    };
    st.flows.lookup(&k, bh)
}

/// Whether this netns protects the flow a PATH_REPORT about `addrs`,
/// `dest_qp` is for (a sender flow of it here).
pub(crate) fn serves(st: &netns::NetState, addrs: FlowAddrs, dest_qp: u32, bh: &bh::Bh) -> bool {
    report_flow(st, addrs, dest_qp, bh).is_some()
}

/// This netns's own Path Reporter's PATH_REPORT `msg` (`crate::report`),
/// to its sender flow here, if there is one: no socket, no allow-list
/// (the reporter is this node). BH off.
pub(crate) fn feed_own_report(st: &netns::NetState, msg: &[u8], bh: &bh::Bh) -> bool {
    let Ok(wire::Message::PathReport(r)) = wire::decode(msg) else {
        return false;
    };
    let Some(f) = report_flow(st, r.addrs, r.flow_label & 0xff_ffff, bh) else {
        return false;
    };
    f.msg(bh, msg, false);
    true
}

/// A PATH_REPORT `msg` from `from` on its way through this node (FORWARD,
/// `crate::intercept`): taken, as the socket would take it, if `from` may
/// send it and it is about a flow this node's CSF protects; otherwise it
/// goes on (a gateway is not the CSF a report about another flow, or from
/// a stranger, is meant for). Counted as taken at the socket would be.
pub(crate) fn intercept(st: &netns::NetState, from: NetAddr, msg: &[u8]) -> bool {
    let src = Dest {
        addr: from,
        port: 0,
        tos: 0,
    };
    if dispatch(st, src, msg) != Verdict::ReportFed {
        return false;
    }
    st.count_msg_in(host::msg_slot(msg));
    st.count(stat::PATH_REPORTS);
    st.count(stat::PATH_REPORTS_INTERCEPTED);
    true
}

/// The CREM socket's datagram `msg` from `src` (its source address and
/// port, network order, and IP TOS), in the netns whose state is `st`
/// (softirq): see [`dispatch`]; counted by type, valid or not, from anyone,
/// and by what became of it.
pub(crate) fn receive(st: &netns::NetState, src: Dest, msg: &[u8]) {
    st.count_msg_in(host::msg_slot(msg));
    let drop = match dispatch(st, src, msg) {
        Verdict::Fed | Verdict::NewFlow => return,
        Verdict::ReportFed => {
            st.count(stat::PATH_REPORTS);
            return;
        }
        Verdict::NotPeer => stat::DROP_MSG_PEER,
        Verdict::NoFlow => stat::DROP_MSG_NO_FLOW,
        Verdict::Invalid => stat::DROP_MSG_INVALID,
    };
    st.count(drop);
}
