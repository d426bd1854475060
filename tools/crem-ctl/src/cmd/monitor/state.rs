//! What `monitor` knows of the namespace: the configuration and the flows,
//! from a dump when it starts, kept current by the notifications. When the
//! kernel drops notifications for the socket (ENOBUFS), a new dump is
//! compared with it, and the differences are printed as the events that
//! would have said so. No socket here: the monitor loop feeds it.

use crate::model::{Config, Flow};
use crate::nl::CremMsg;
use crate::uapi::*;
use std::collections::BTreeMap;

/// A notification, or a change a resync found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    ConfigChanged(Config),
    FlowUp(Flow),
    FlowDown(Flow),
    FlowChange(Flow),
}

impl Event {
    /// The event a notification carries; `None` for a message that is no
    /// notification this crem-ctl knows.
    pub fn from_msg(m: &CremMsg) -> Option<Event> {
        // Its attributes are at its top level: the config set's
        // (config-change), else the flow set's.
        let flow = || Flow::from_attrs(&m.attrs);
        Some(match m.cmd {
            CMD_CONFIG_CHANGE_NTF => Event::ConfigChanged(Config::from_attrs(&m.attrs, true)),
            CMD_FLOW_UP_NTF => Event::FlowUp(flow()),
            CMD_FLOW_DOWN_NTF => Event::FlowDown(flow()),
            CMD_FLOW_CHANGE_NTF => Event::FlowChange(flow()),
            _ => return None,
        })
    }

    /// The notification's operation name without the spec's "-ntf"
    /// ("flow-up", ..., "config-change").
    pub fn name(&self) -> &'static str {
        let cmd = match self {
            Event::ConfigChanged(_) => CMD_CONFIG_CHANGE_NTF,
            Event::FlowUp(_) => CMD_FLOW_UP_NTF,
            Event::FlowDown(_) => CMD_FLOW_DOWN_NTF,
            Event::FlowChange(_) => CMD_FLOW_CHANGE_NTF,
        };
        let op = op_name(cmd).expect("a known notification");
        op.strip_suffix("-ntf").unwrap_or(op)
    }
}

/// Which flow a flow is, across notifications and dumps: a receiver flow
/// by its peer and the Flow ID it assigned (a sender that starts over gets
/// a new ID, for the same connection); a sender flow by its connection,
/// direction and kind (its ID is 0 until the peer's HELLO_ACK).
fn key(f: &Flow) -> String {
    let o = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let side = f.side.and_then(|s| s.name());
    let conn = format!(
        "{} {} {} {}",
        o(f.src.as_ref().map(|a| a.to_string())),
        o(f.dst.as_ref().map(|a| a.to_string())),
        o(f.dest_qp.map(|q| q.to_string())),
        o(f.kind.map(|k| k.to_string()))
    );
    let peer = o(f.peer.as_ref().map(|a| a.to_string()));
    match side {
        Some("crf") => format!("crf {peer} {}", o(f.id.map(|i| i.to_string()))),
        Some("csf") => format!("csf {peer} {conn}"),
        _ => format!(
            "{} {peer} {} {conn}",
            o(f.side.map(|s| s.to_string())),
            o(f.id.map(|i| i.to_string()))
        ),
    }
}

#[derive(Clone, Debug, Default)]
pub struct State {
    config: Option<Config>,
    flows: BTreeMap<String, Flow>,
}

impl State {
    pub fn new(config: Config, flows: Vec<Flow>) -> State {
        State {
            config: Some(config),
            flows: flows.into_iter().map(|f| (key(&f), f)).collect(),
        }
    }

    /// The number of flows known.
    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    /// Applies a notification; false if it tells nothing new: a flow-up of
    /// a flow known to be up, or a flow-down of one not known (a dump taken
    /// after the kernel sent it already showed it), which is not printed
    /// again.
    pub fn apply(&mut self, ev: &Event) -> bool {
        match ev {
            Event::ConfigChanged(c) => {
                self.config = Some(c.clone());
                true
            }
            Event::FlowUp(f) => self.flows.insert(key(f), f.clone()).is_none(),
            Event::FlowDown(f) => self.flows.remove(&key(f)).is_some(),
            Event::FlowChange(f) => {
                self.flows.insert(key(f), f.clone());
                true
            }
        }
    }

    /// What differs between the known state and a fresh dump, as events:
    /// a flow-down for each flow gone, a flow-up for each new one (each set
    /// in key order), config-change if the configuration differs (last,
    /// as the kernel sends it after the flow-downs of a role or port
    /// change). The
    /// dump becomes the state. What happened and was undone in between (a
    /// flow set up and removed) leaves no trace, nor do changes within a
    /// flow (its state, its breaker: 'crem-ctl flow' shows them).
    pub fn resync(&mut self, config: Config, flows: Vec<Flow>) -> Vec<Event> {
        let mut ev = Vec::new();
        let new: BTreeMap<String, Flow> = flows.into_iter().map(|f| (key(&f), f)).collect();
        for (k, f) in &self.flows {
            if !new.contains_key(k) {
                ev.push(Event::FlowDown(f.clone()));
            }
        }
        for (k, f) in &new {
            if !self.flows.contains_key(k) {
                ev.push(Event::FlowUp(f.clone()));
            }
        }
        if self.config.as_ref() != Some(&config) {
            ev.push(Event::ConfigChanged(config.clone()));
        }
        *self = State {
            config: Some(config),
            flows: new,
        };
        ev
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::{enum_val, Addr};

    pub fn crf(id: u32, qp: u32) -> Flow {
        Flow {
            id: Some(id),
            side: Some(enum_val(SIDE, 1)),
            src: Some(Addr(vec![192, 0, 2, 1])),
            dst: Some(Addr(vec![203, 0, 113, 1])),
            dest_qp: Some(qp),
            peer: Some(Addr(vec![10, 0, 0, 2])),
            kind: Some(enum_val(FLOW_KIND, 0)),
            state: Some(enum_val(FLOW_STATE, 1)),
            ..Default::default()
        }
    }

    pub fn csf(id: u32, qp: u32) -> Flow {
        Flow {
            side: Some(enum_val(SIDE, 0)),
            ..crf(id, qp)
        }
    }

    fn names(ev: &[Event]) -> Vec<(&'static str, Option<u32>)> {
        ev.iter()
            .map(|e| {
                let id = match e {
                    Event::ConfigChanged(_) => None,
                    Event::FlowUp(f) | Event::FlowDown(f) | Event::FlowChange(f) => f.id,
                };
                (e.name(), id)
            })
            .collect()
    }

    /// A notification's attributes are at the top level, of the set of
    /// the op it notifies as (config-change: config; the flow ones: flow),
    /// decoded from its octets.
    #[test]
    fn events_from_notifications() {
        use crate::attr::{encode, Attr};
        use netlink_packet_core::ParseableParametrized;
        use netlink_packet_generic::GenlHeader;
        let msg = |cmd, attrs: &[Attr]| {
            CremMsg::parse_with_param(
                &encode(attrs),
                GenlHeader {
                    cmd,
                    version: FAMILY_VERSION,
                },
            )
            .unwrap()
        };
        let ev = Event::from_msg(&msg(CMD_CONFIG_CHANGE_NTF, &[Attr::u8(CONFIG_K, 8)]));
        let want = Config {
            k: Some(8),
            reporter: Some(vec![]),
            peer: Some(vec![]),
            ..Config::default()
        };
        assert_eq!(ev, Some(Event::ConfigChanged(want)));
        let f = [
            Attr::u32(FLOW_ID, 7),
            Attr::u8(FLOW_SIDE, 1),
            Attr::u32(FLOW_DEST_QP, 9),
        ];
        let want = Flow {
            id: Some(7),
            side: Some(enum_val(SIDE, 1)),
            dest_qp: Some(9),
            ..Flow::default()
        };
        assert_eq!(
            Event::from_msg(&msg(CMD_FLOW_DOWN_NTF, &f)),
            Some(Event::FlowDown(want))
        );
        // A reply is no notification.
        assert_eq!(Event::from_msg(&msg(CMD_FLOW_GET, &f)), None);
    }

    #[test]
    fn notifications_keep_it_current() {
        let mut s = State::new(Config::default(), vec![crf(1, 1)]);
        assert!(s.apply(&Event::FlowUp(crf(2, 2))));
        // Told again (a dump already showed it): nothing new.
        assert!(!s.apply(&Event::FlowUp(crf(2, 2))));
        assert!(s.apply(&Event::FlowDown(crf(1, 1))));
        assert!(!s.apply(&Event::FlowDown(crf(1, 1))));
        // A receiver flow is its peer's and its ID: the same connection
        // with a new ID (the sender started over) is another flow...
        assert!(s.apply(&Event::FlowUp(crf(3, 2))));
        assert_eq!(s.flows(), 2);
        // ...a sender flow is its connection: its ID changes (0 until
        // HELLO_ACK) and it stays the one flow.
        assert!(s.apply(&Event::FlowUp(csf(0, 9))));
        assert!(!s.apply(&Event::FlowUp(csf(77, 9))));
        assert!(s.apply(&Event::FlowDown(csf(77, 9))));
        // A flow-change updates what is known; config-change always prints.
        assert!(s.apply(&Event::FlowChange(crf(3, 2))));
        assert!(s.apply(&Event::ConfigChanged(Config::default())));
        assert_eq!(s.flows(), 2);
    }

    #[test]
    fn resync_reports_what_the_lost_notifications_said() {
        let cfg = |k: u8| Config {
            k: Some(k),
            ..Default::default()
        };
        let mut s = State::new(cfg(16), vec![crf(1, 1), crf(2, 2), csf(0, 5)]);
        // Lost meanwhile: k set to 8, flow 1 removed, flows 4 and 5 set up,
        // the sender flow got its ID (not a change of flow).
        let ev = s.resync(cfg(8), vec![crf(5, 4), csf(41, 5), crf(2, 2), crf(4, 3)]);
        assert_eq!(
            names(&ev),
            [
                ("flow-down", Some(1)),
                ("flow-up", Some(4)),
                ("flow-up", Some(5)),
                ("config-change", None),
            ]
        );
        assert_eq!(ev[3], Event::ConfigChanged(cfg(8)));
        // The dump is the state now: the same dump again finds nothing,
        // and a notification the dump already showed prints nothing.
        assert_eq!(
            s.resync(cfg(8), vec![crf(4, 3), crf(2, 2), crf(5, 4), csf(41, 5)]),
            []
        );
        assert!(!s.apply(&Event::FlowUp(crf(4, 3))));
        assert!(!s.apply(&Event::FlowDown(crf(1, 1))));
        assert_eq!(s.flows(), 4);
        // Everything gone (role disabled): a flow-down for each, by key.
        let ev = s.resync(cfg(8), vec![]);
        assert_eq!(
            names(&ev),
            [
                ("flow-down", Some(2)),
                ("flow-down", Some(4)),
                ("flow-down", Some(5)),
                ("flow-down", Some(41)),
            ]
        );
        assert_eq!(s.flows(), 0);
    }
}
