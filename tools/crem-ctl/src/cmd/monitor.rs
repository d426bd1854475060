//! `crem-ctl monitor`: the family's notifications (the "events" multicast
//! group) as they arrive, one line each.

use crate::help::{self, JSON_NOTE};
use crate::model::{Config, Flow};
use crate::nl::{self, Conn, CremMsg};
use crate::stdio::{json, out, Format};
use crate::uapi::*;
use crate::{output, Res};

/// Print configuration and flow notifications as they happen
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Subscribes to the family's \"events\" multicast group and prints every
notification of this namespace as it arrives, one line each:

    config-changed   the configuration changed (config-set): the new one
    flow-up          a flow was set up: ID, side, addresses, destination
                     QP, peer and state
    flow-down        a flow was removed (flow del, port change, role
                     disabled), with its last state; no notification is
                     sent for the flows of a namespace being deleted
    flow-change      a flow event: its circuit breaker tripped or cleared
                     (CSF), or the peer sent CLOSE (with the reason: 0
                     normal, 1 flow ended, 2 parameter synchronization
                     failed, 3 resources exhausted, 4 circuit breaker)

With -j, one JSON object per line (even with --pretty):
{\"event\": \"config-changed\", \"config\": {...}} or
{\"event\": \"flow-up\" | \"flow-down\" | \"flow-change\", \"flow\": FLOW}, FLOW as in
'crem-ctl flow --help'. Output is flushed after each event, so it can be
piped. A notification the kernel could not send (out of memory) is counted
in the drop-notify counter of 'crem-ctl stats'. The socket asks for an
8 MiB receive buffer (past net.core.rmem_max with CAP_NET_ADMIN); if a
burst still overflows it, the kernel drops notifications for this
listener: crem-ctl says so on standard error, prints {\"event\": \"lost\"}
with -j (what the reader knows may be stale: read 'crem-ctl -j flow'),
and goes on listening. Joining the group needs
CAP_NET_ADMIN over the namespace (the flow notifications carry Flow IDs).",
    after_long_help = help::after(&[], &[JSON_NOTE])
)]
pub struct Args {
    /// Exit after N notifications (of any kind)
    #[arg(long, value_name = "N")]
    count: Option<u64>,
}

pub fn run(a: Args, fmt: Format) -> Res {
    let (count, j) = (a.count, fmt.json);
    let mut c = Conn::open()?;
    c.subscribe(MCGRP_EVENTS)?;
    let mut n = 0u64;
    while count.is_none_or(|c| n < c) {
        let msgs = match c.recv_notifications()? {
            nl::Notifications::Msgs(m) => m,
            nl::Notifications::Lost => {
                eprintln!(
                    "crem-ctl: notifications lost: the socket's receive buffer \
                     overflowed; 'crem-ctl flow' shows the current state"
                );
                if j {
                    out(&json(&serde_json::json!({ "event": "lost" }), false));
                }
                continue;
            }
        };
        for m in msgs {
            let Some(line) = event_line(&m, j) else {
                continue;
            };
            out(&line);
            n += 1;
            if count.is_some_and(|c| n >= c) {
                break;
            }
        }
    }
    Ok(())
}

/// The line a notification prints (one JSON object per line, even with
/// --pretty, so that the stream can be read a line at a time); `None` for
/// a message that is no notification this crem-ctl knows.
fn event_line(m: &CremMsg, j: bool) -> Option<String> {
    let event = op_name(m.cmd)?;
    Some(match m.cmd {
        CMD_CONFIG_CHANGED => {
            let cfg = m
                .nest(CMD_A_CONFIG)
                .map(|a| Config::from_attrs(a, true))
                .unwrap_or_default();
            if j {
                json(&serde_json::json!({ "event": event, "config": cfg }), false)
            } else {
                format!("{event}: {}\n", output::config_line(&cfg))
            }
        }
        CMD_FLOW_UP | CMD_FLOW_DOWN | CMD_FLOW_CHANGE => {
            let f = m.nest(CMD_A_FLOW).map(Flow::from_attrs).unwrap_or_default();
            if j {
                json(&serde_json::json!({ "event": event, "flow": f }), false)
            } else {
                format!("{event}: {}\n", output::flow_line(&f))
            }
        }
        _ => return None,
    })
}
