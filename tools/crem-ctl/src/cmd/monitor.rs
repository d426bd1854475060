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

    /// Stamp each line with the time it was read, UTC to the microsecond
    /// ("[2026-12-02T11:50:01.123456Z] flow-up: ..."; with -j a "time"
    /// member)
    #[arg(short = 't', long)]
    timestamp: bool,
}

pub fn run(a: Args, fmt: Format) -> Res {
    let (count, j, stamp) = (a.count, fmt.json, a.timestamp);
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
                    let mut v = serde_json::json!({ "event": "lost" });
                    if stamp {
                        v["time"] = rfc3339_now().into();
                    }
                    out(&json(&v, false));
                }
                continue;
            }
        };
        let now = stamp.then(rfc3339_now);
        for m in msgs {
            let Some(line) = event_line(&m, j, now.as_deref()) else {
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
/// --pretty, so that the stream can be read a line at a time), stamped
/// with @time if given; `None` for a message that is no notification this
/// crem-ctl knows.
fn event_line(m: &CremMsg, j: bool, time: Option<&str>) -> Option<String> {
    let event = op_name(m.cmd)?;
    let (key, obj, text) = match m.cmd {
        CMD_CONFIG_CHANGED => {
            let cfg = m
                .nest(CMD_A_CONFIG)
                .map(|a| Config::from_attrs(a, true))
                .unwrap_or_default();
            let text = output::config_line(&cfg);
            ("config", serde_json::json!(cfg), text)
        }
        CMD_FLOW_UP | CMD_FLOW_DOWN | CMD_FLOW_CHANGE => {
            let f = m.nest(CMD_A_FLOW).map(Flow::from_attrs).unwrap_or_default();
            let text = output::flow_line(&f);
            ("flow", serde_json::json!(f), text)
        }
        _ => return None,
    };
    Some(if j {
        let mut v = serde_json::json!({ "event": event, (key): obj });
        if let Some(t) = time {
            v["time"] = t.into();
        }
        json(&v, false)
    } else {
        match time {
            Some(t) => format!("[{t}] {event}: {text}\n"),
            None => format!("{event}: {text}\n"),
        }
    })
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
    use super::rfc3339;

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
