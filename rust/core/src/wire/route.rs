//! Which flow of a CREM node a received message is for, and who may send it
//! (the draft's "Message Processing": the CSF and the CRF of a flow talk to
//! each other, an allow-listed Path Reporter sends PATH_REPORT about a flow
//! it carries). The node looks the flow up by what [`route`] returns; it
//! holds no state, so one decode of a datagram serves the checks and the
//! lookup.

use super::{FlowAddrs, FlowKind, Message};

/// A node's half of a flow: the sender (CSF) or the receiver (CRF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The CREM Sender Function, which codes the flow.
    Sender,
    /// The CREM Receiver Function, which restores it.
    Receiver,
}

/// Where a received message goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// HELLO: the receiver flow it describes (its addresses, its Flow
    /// Label's destination QP and its kind; `None`: a Flow Kind this node
    /// does not protect), made for it if there is none.
    Hello {
        /// The protected flow's addresses.
        addrs: FlowAddrs,
        /// Its destination QP (the Flow Label's low 24 bits).
        dest_qp: u32,
        /// Its kind, if supported.
        kind: Option<FlowKind>,
    },
    /// PATH_REPORT: the sender flow of requests it reports on (the Flow
    /// Label is the destination QP).
    PathReport {
        /// The reported flow's addresses.
        addrs: FlowAddrs,
        /// Its destination QP.
        dest_qp: u32,
    },
    /// HELLO_ACK: the sender flow whose HELLO carried this nonce (its Flow
    /// ID is not known to it yet).
    Nonce(u64),
    /// Any other message: the flow of `side` the peer knows by `flow_id`;
    /// CLOSE travels both ways, so if the sender has none the receiver's.
    Id {
        /// The Flow ID of the header.
        flow_id: u32,
        /// The side it is for.
        side: Side,
        /// CLOSE: try the receiver side if the sender side has no such flow.
        or_receiver: bool,
    },
}

/// Where `m` goes (see [`Route`]). REPAIR, HELLO and PARAM_UPDATE travel
/// from the CSF to the CRF; everything else a peer sends is for the CSF
/// (HELLO_ACK, PARAM_ACK, REPAIR_REQUEST, LOSS_REPORT, T/C AETH), except
/// CLOSE, which either side sends.
pub fn route(m: &Message<'_>) -> Route {
    let id = |side, or_receiver| Route::Id {
        flow_id: m.flow_id(),
        side,
        or_receiver,
    };
    match m {
        Message::Hello(h) => Route::Hello {
            addrs: h.addrs,
            dest_qp: h.flow_label & 0xff_ffff,
            kind: FlowKind::from_u8(h.flow_kind),
        },
        Message::PathReport(r) => Route::PathReport {
            addrs: r.addrs,
            dest_qp: r.flow_label & 0xff_ffff,
        },
        Message::HelloAck(a) => Route::Nonce(a.nonce),
        Message::Repair(_) | Message::ParamUpdate(_) => id(Side::Receiver, false),
        Message::Close(_) => id(Side::Sender, true),
        Message::ParamAck(_)
        | Message::RepairRequest(_)
        | Message::LossReport(_)
        | Message::TcAeth(_) => id(Side::Sender, false),
    }
}

/// Whether a message of `route` is taken from a sender that is a
/// configured `peer` and/or an allow-listed `reporter`: PATH_REPORT from
/// reporters only, everything else from peers only.
pub const fn accepted_from(route: &Route, peer: bool, reporter: bool) -> bool {
    match route {
        Route::PathReport { .. } => reporter,
        _ => peer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::psn::Psn;
    use crate::wire::{
        AddressFamily, Close, CloseReason, FecScheme, Hello, HelloAck, LossReport, ParamAck,
        ParamStatus, ParamUpdate,
    };

    fn v4() -> FlowAddrs {
        FlowAddrs::V4 {
            src: [10, 0, 0, 1],
            dst: [10, 0, 1, 1],
        }
    }

    fn hello(flow_kind: u8) -> Hello {
        Hello {
            flow_kind,
            supported_schemes: 1 << 1,
            max_k: 64,
            max_m: 8,
            max_t: 1100,
            rdma_mtu: 1024,
            nonce: 1,
            addrs: v4(),
            flow_label: 0xab12_3456,
        }
    }

    #[test]
    fn hello_names_the_receiver_flow_by_addresses_and_qp() {
        let h = hello(FlowKind::Responses.to_u8());
        assert_eq!(
            route(&Message::Hello(h)),
            Route::Hello {
                addrs: v4(),
                dest_qp: 0x12_3456,
                kind: Some(FlowKind::Responses),
            }
        );
        assert!(matches!(
            route(&Message::Hello(hello(7))),
            Route::Hello { kind: None, .. }
        ));
    }

    #[test]
    fn each_type_goes_to_its_side() {
        let ack = HelloAck {
            flow_id: 9,
            flow_kind: FlowKind::Requests.to_u8(),
            af: AddressFamily::V4,
            supported_schemes: 1 << 1,
            max_k: 64,
            max_m: 8,
            max_t: 1100,
            rdma_mtu: 1024,
            nonce: 0x1122_3344_5566_7788,
            max_open_blocks: 32,
        };
        assert_eq!(
            route(&Message::HelloAck(ack)),
            Route::Nonce(0x1122_3344_5566_7788)
        );
        let to = |m: Message<'_>| match route(&m) {
            Route::Id {
                flow_id,
                side,
                or_receiver,
            } => Some((flow_id, side, or_receiver)),
            _ => None,
        };
        let upd = ParamUpdate {
            flow_id: 5,
            config_id: 1,
            scheme: FecScheme::CauchyRs,
            k: 8,
            m: 2,
            t: 1024,
            effective_psn: Psn::new(0),
        };
        assert_eq!(
            to(Message::ParamUpdate(upd)),
            Some((5, Side::Receiver, false))
        );
        let pa = ParamAck {
            flow_id: 6,
            config_id: 1,
            status: ParamStatus::Accepted,
        };
        assert_eq!(to(Message::ParamAck(pa)), Some((6, Side::Sender, false)));
        let lr = LossReport {
            flow_id: 7,
            ..LossReport::default()
        };
        assert_eq!(to(Message::LossReport(lr)), Some((7, Side::Sender, false)));
        let c = Close {
            flow_id: 8,
            reason: CloseReason::Normal,
        };
        assert_eq!(to(Message::Close(c)), Some((8, Side::Sender, true)));
    }

    #[test]
    fn path_reports_from_reporters_only_the_rest_from_peers_only() {
        let pr = Route::PathReport {
            addrs: v4(),
            dest_qp: 1,
        };
        let other = Route::Nonce(1);
        assert!(accepted_from(&pr, false, true));
        assert!(!accepted_from(&pr, true, false));
        assert!(accepted_from(&other, true, false));
        assert!(!accepted_from(&other, false, true));
        assert!(!accepted_from(&other, false, false));
    }
}
