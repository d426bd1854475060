//! `crem-ctl monitor`: the family's notifications (the "events" multicast
//! group) as they arrive, one line each; after notifications were lost, a
//! resync from a dump (state.rs).

mod state;

use crate::help::{self, JSON_NOTE};
use crate::nl::{self, Conn};
use crate::request::{get_config, get_flows};
use crate::stdio::{json, out, Format};
use crate::uapi::*;
use crate::{output, Res};
use state::{Event, State};

/// Print configuration and flow notifications as they happen
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Subscribes to the family's \"events\" multicast group and prints every
notification of this namespace as it arrives, one line each, named as the
family's notification without its -ntf (config-change-ntf: config-change):

    config-change    the configuration changed (config-set): the new one
    flow-up          a flow was set up: ID, side, addresses, destination
                     QP, peer and state
    flow-down        a flow was removed (flow del, port change, role
                     disabled), with its last state; no notification is
                     sent for the flows of a namespace being deleted
    flow-change      a flow event: its circuit breaker tripped or cleared
                     (CSF), or the peer sent CLOSE (with the reason:
                     normal, flow-ended, sync-failed, resources-exhausted,
                     circuit-breaker, or a number the registry lacks)

With -j, one JSON object per line (even with --pretty):
{\"event\": \"config-change\", \"config\": {...}} or
{\"event\": \"flow-up\" | \"flow-down\" | \"flow-change\", \"flow\": FLOW}, FLOW as in
'crem-ctl flow --help'. Output is flushed after each event, so it can be
piped. A notification the kernel could not send (out of memory) is counted
in the drop-notify counter of 'crem-ctl stats'. Joining the group needs
CAP_NET_ADMIN over the namespace (the flow notifications carry Flow IDs).

LOST NOTIFICATIONS:
    The socket asks for an 8 MiB receive buffer (past net.core.rmem_max
    with CAP_NET_ADMIN); if a burst still overflows it, the kernel drops
    notifications for this listener (ENOBUFS). crem-ctl then prints

        lost: notifications dropped (receive buffer full), N times so far; resyncing
        {\"event\": \"lost\", \"count\": N}                        (-j)

    N counting the episodes since it started, reads what was queued before
    the loss, and compares a new dump of the configuration and the flows
    with what it knew (a dump taken when it started, kept current by the
    notifications). What changed is printed as the events that would have
    said so, marked:

        resync: flow-down: id 7 crf ...
        {\"event\": \"flow-down\", \"resync\": true, \"flow\": {...}} (-j)

    (a flow-down for each flow gone, a flow-up for each new one,
    config-change if the configuration differs), then a line that ends
    the resync:

        resync: config unchanged, 0 flows up, 40 down; 8 flows
        {\"event\": \"resync\", \"config-changed\": false, \"up\": 0,
         \"down\": 40, \"flows\": 8}                              (-j)

    and monitor goes on. A flow set up and removed while notifications
    were lost leaves no trace, nor does a change within a flow (breaker,
    state: see 'crem-ctl flow'). A notification that tells what was already
    printed (a flow-up of a flow known to be up, a flow-down of one not
    known: the dump already showed it) is not printed again. --count counts
    the events a resync prints, not the lost and resync lines. If the
    resync dump fails, crem-ctl says so on standard error and goes on with
    what it knew.",
    after_long_help = help::after(&[], &[JSON_NOTE])
)]
pub struct Args {
    /// Exit after N events (notifications, and the changes a resync
    /// finds after lost notifications)
    #[arg(long, value_name = "N")]
    count: Option<u64>,

    /// Stamp each line with the time it was read, UTC to the microsecond
    /// ("[2026-12-02T11:50:01.123456Z] flow-up: ..."; with -j a "time"
    /// member)
    #[arg(short = 't', long)]
    timestamp: bool,
}

/// The receive buffer to ask for: CREM_CTL_MONITOR_RCVBUF (octets) if set,
/// which the VM test makes small to see notifications lost and the resync
/// that follows against the kernel; else nl::NOTIFY_RCVBUF.
fn rcvbuf() -> i32 {
    std::env::var("CREM_CTL_MONITOR_RCVBUF")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(nl::NOTIFY_RCVBUF)
}

/// The configuration and the flows now, from a socket of their own (the
/// monitor's carries notifications).
fn snapshot() -> Res<(crate::model::Config, Vec<crate::model::Flow>)> {
    let mut c = Conn::open()?;
    Ok((get_config(&mut c)?, get_flows(&mut c)?))
}

/// Prints events and counts them for --count.
struct Printer {
    json: bool,
    stamp: bool,
    count: Option<u64>,
    printed: u64,
}

impl Printer {
    fn done(&self) -> bool {
        self.count.is_some_and(|c| self.printed >= c)
    }

    fn time(&self) -> Option<String> {
        self.stamp.then(rfc3339_now)
    }

    fn event(&mut self, ev: &Event, resync: bool) {
        if !self.done() {
            out(&event_line(ev, self.json, self.time().as_deref(), resync));
            self.printed += 1;
        }
    }

    /// A line that is no event (lost, the end of a resync).
    fn marker(&self, text: &str, mut obj: serde_json::Value) {
        out(&if self.json {
            if let Some(t) = self.time() {
                obj["time"] = t.into();
            }
            json(&obj, false)
        } else {
            stamped(self.time().as_deref(), text)
        });
    }
}

pub fn run(a: Args, fmt: Format) -> Res {
    let mut c = Conn::open()?;
    c.subscribe(MCGRP_EVENTS, rcvbuf())?;
    // After subscribing: a change between the two is in the snapshot, its
    // notification too, and the second tells nothing new (State::apply).
    let (cfg, flows) = snapshot()?;
    let mut state = State::new(cfg, flows);
    let mut p = Printer {
        json: fmt.json,
        stamp: a.timestamp,
        count: a.count,
        printed: 0,
    };
    let mut lost = 0u64;
    while !p.done() {
        let msgs = match c.recv_notifications()? {
            nl::Notifications::Msgs(m) => m,
            nl::Notifications::Lost => {
                lost += 1;
                p.marker(
                    &format!(
                        "lost: notifications dropped (receive buffer full), {lost} {} so far; resyncing",
                        if lost == 1 { "time" } else { "times" }
                    ),
                    serde_json::json!({ "event": "lost", "count": lost }),
                );
                resync(&mut c, &mut state, &mut p)?;
                continue;
            }
        };
        for ev in msgs.iter().filter_map(Event::from_msg) {
            if state.apply(&ev) {
                p.event(&ev, false);
            }
        }
    }
    Ok(())
}

/// After lost notifications: prints what was queued before the loss, then
/// what a new dump shows that the notifications did not.
fn resync(c: &mut Conn, state: &mut State, p: &mut Printer) -> Res {
    let (queued, _) = c.drain_notifications()?;
    for ev in queued.iter().filter_map(Event::from_msg) {
        if state.apply(&ev) {
            p.event(&ev, false);
        }
    }
    let (cfg, flows) = match snapshot() {
        Ok(s) => s,
        Err(crate::Fail::Nl(e)) => {
            eprintln!("crem-ctl: resync: {e}; going on with what was known");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let changes = state.resync(cfg, flows);
    let count = |name: &str| changes.iter().filter(|e| e.name() == name).count();
    let (up, down) = (count("flow-up"), count("flow-down"));
    let config_changed = count("config-change") > 0;
    for ev in &changes {
        p.event(ev, true);
    }
    p.marker(
        &format!(
            "resync: config {}, {up} flows up, {down} down; {} flows",
            if config_changed {
                "changed"
            } else {
                "unchanged"
            },
            state.flows()
        ),
        serde_json::json!({ "event": "resync", "config-changed": config_changed,
            "up": up, "down": down, "flows": state.flows() }),
    );
    Ok(())
}

/// `text` as a line, after `[time] ` if given.
fn stamped(time: Option<&str>, text: &str) -> String {
    match time {
        Some(t) => format!("[{t}] {text}\n"),
        None => format!("{text}\n"),
    }
}

/// The line an event prints (one JSON object per line, even with
/// --pretty, so that the stream can be read a line at a time), stamped
/// with @time if given, marked if a resync found it.
fn event_line(ev: &Event, j: bool, time: Option<&str>, resync: bool) -> String {
    let name = ev.name();
    let (key, obj, text) = match ev {
        Event::ConfigChanged(cfg) => ("config", serde_json::json!(cfg), output::config_line(cfg)),
        Event::FlowUp(f) | Event::FlowDown(f) | Event::FlowChange(f) => {
            ("flow", serde_json::json!(f), output::flow_line(f))
        }
    };
    if j {
        let mut v = serde_json::json!({ "event": name });
        if resync {
            v["resync"] = true.into();
        }
        v[key] = obj;
        if let Some(t) = time {
            v["time"] = t.into();
        }
        json(&v, false)
    } else {
        let mark = if resync { "resync: " } else { "" };
        stamped(time, &format!("{mark}{name}: {text}"))
    }
}

/// Now, UTC, as RFC 3339 with microseconds.
fn rfc3339_now() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(d.as_secs(), d.subsec_micros())
}

/// @secs since the epoch (UTC) as 2026-12-02T11:50:01.123456Z: the civil
/// date from the day count (Howard Hinnant's days_from_civil, inverted).
fn rfc3339(secs: u64, micros: u32) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rem / 3_600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::state::tests::{crf, csf};
    use super::*;

    #[test]
    fn event_lines() {
        let f = crf(7, 1);
        let t = Some("2026-12-02T11:50:01.123456Z");
        assert_eq!(
            event_line(&Event::FlowDown(f.clone()), false, None, true),
            "resync: flow-down: id 7 crf requests 192.0.2.1 -> 203.0.113.1 dest-qp 0x000001 \
             peer 10.0.0.2 state protected\n"
        );
        assert_eq!(
            event_line(&Event::FlowUp(csf(0, 1)), false, t, false),
            "[2026-12-02T11:50:01.123456Z] flow-up: id 0 csf requests 192.0.2.1 -> 203.0.113.1 \
             dest-qp 0x000001 peer 10.0.0.2 state protected\n"
        );
        // JSON: event first, the resync mark, the object, the time.
        let j = event_line(&Event::FlowDown(f), true, t, true);
        assert!(
            j.starts_with(r#"{"event":"flow-down","resync":true,"flow":{"id":7,"#),
            "{j}"
        );
        assert!(
            j.ends_with("\"time\":\"2026-12-02T11:50:01.123456Z\"}\n"),
            "{j}"
        );
        let c = event_line(
            &Event::ConfigChanged(crate::model::Config::default()),
            true,
            None,
            false,
        );
        assert_eq!(c, "{\"event\":\"config-change\",\"config\":{}}\n");
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000000Z");
        // `date -u -d @1796212201` = Wed Dec  2 11:50:01 UTC 2026.
        assert_eq!(
            rfc3339(1_796_212_201, 123_456),
            "2026-12-02T11:50:01.123456Z"
        );
        // A leap day and the last second of a century's year.
        assert_eq!(rfc3339(951_782_400, 7), "2000-02-29T00:00:00.000007Z");
        assert_eq!(
            rfc3339(4_102_444_799, 999_999),
            "2099-12-31T23:59:59.999999Z"
        );
    }
}
