//! `crem-ctl stats`: the counters once, sampled with their rates
//! (--watch), or reset (stats reset).

use crate::help;
use crate::model::Stats;
use crate::nl::Conn;
use crate::request::get_stats;
use crate::stdio::{json, out, Format};
use crate::uapi::{CMD_STATS_RESET, STATS_SET};
use crate::{output, Fail, Res};
use std::time::{Duration, Instant};

/// The JSON section of `stats --help`: the shape, then every key of the
/// "stats" set with its doc, from the spec.
fn stats_json() -> String {
    format!(
        "\
JSON (-j):
    {{\"stats\": {{...}}}}: one object, or with --watch one per sample and
    line (even with --pretty). Its keys are the attribute names of the
    \"stats\" set of netlink/crem.yaml, in spec order; every value is a u64
    but for the objects totals (the flow-stats keys below, summed over all
    flows since the last reset, flows gone since included),
    msgs-in-by-type and msgs-out-by-type (the msg-types keys below). A
    counter the module did not send is absent (an older module sends the
    hook counters only); attributes unknown to this crem-ctl are left out.
    The keys, with the spec's words:
{}",
        help::spec_keys(&STATS_SET)
    )
}

/// Show the counters, watch them, or reset them
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Shows this namespace's counters (stats-get), in sections:

    hooks (RoCEv2 packets)   RoCEv2 packets seen at the hooks of the role
                             (a host's LOCAL_IN and LOCAL_OUT, a gateway's
                             FORWARD; none while disabled); of those,
                             sources (a new PSN),
                             non-sources (ACK/NAK, READ responses, CNP) and
                             malformed ones (UDP 4791, BTH did not parse)
    flows and messages       flows set up; CREM datagrams received on the
                             CREM port and CREM messages sent
    drops                    flows left unprotected (max-flows or creation
                             queue full, out of memory); packets or symbols
                             not kept (max-memory); packets left unprotected
                             (could not be linearised); CREM datagrams
                             dropped (undecodable, not from the flow's peer,
                             no such flow); CREM messages not sent
    now (gauges)             flows in the table and octets they hold now
    flow totals, ...         the counters of all flows since the last reset,
                             flows gone since included, by side: sender
                             (CSF), receiver (CRF), messages and memory
    messages by type         a table TYPE, IN, OUT of the CREM socket's
                             messages by CREM message type (repair, hello,
                             ..., other), then one of the flow totals';
                             only types counted at least once are listed
                             ('none' if no type is); absent with a module
                             that does not count by type

With --watch, samples them every SECS seconds and prints the rate of each
counter since the previous sample (gauges get none; the by-type tables get
IN/S and OUT/S columns; with -j: one JSON object per sample and line).
'stats reset' zeroes them (stats-reset, needs CAP_NET_ADMIN); the gauges
reflect the flows that exist and stay.",
    after_long_help = help::after(
        &[
            "crem-ctl stats",
            "crem-ctl stats --watch 1 --count 10",
            "crem-ctl -j stats | jq .stats.totals.restored",
        ],
        &[&stats_json(), &help::flow_stats_keys()],
    )
)]
pub struct Args {
    /// Sample every SECS seconds until interrupted
    #[arg(long, value_name = "SECS")]
    watch: Option<f64>,
    /// With --watch: stop after N samples
    #[arg(long, value_name = "N", requires = "watch")]
    count: Option<u64>,
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// Reset the counters to zero (needs CAP_NET_ADMIN)
    Reset,
}

pub fn run(a: Args, fmt: Format) -> Res {
    match (a.watch, a.action) {
        (None, Some(Action::Reset)) => {
            let mut c = Conn::open()?;
            c.request(CMD_STATS_RESET, vec![], false)?;
            Ok(())
        }
        (Some(_), Some(_)) => Err(Fail::Usage("--watch does not go with 'stats reset'".into())),
        (None, None) => {
            let mut c = Conn::open()?;
            let st = get_stats(&mut c)?;
            fmt.print(&serde_json::json!({ "stats": st }), || output::stats(&st));
            Ok(())
        }
        (Some(secs), None) => watch(secs, a.count, fmt.json),
    }
}

/// 'stats --watch SECS [--count N]': a sample every SECS seconds.
fn watch(secs: f64, count: Option<u64>, j: bool) -> Res {
    if !(secs.is_finite() && secs > 0.0) {
        return Err(Fail::Usage(format!("--watch {secs}: expected seconds > 0")));
    }
    let mut c = Conn::open()?;
    let mut prev: Option<(Stats, Instant)> = None;
    let mut n = 0u64;
    loop {
        let st = get_stats(&mut c)?;
        let now = Instant::now();
        let since = prev
            .as_ref()
            .map(|p| (&p.0, now.duration_since(p.1).as_secs_f64()));
        out(&watch_sample(&st, since, secs, j));
        prev = Some((st, now));
        n += 1;
        if count.is_some_and(|c| n >= c) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_secs_f64(secs));
    }
}

/// One sample of 'stats --watch SECS': the counters with their rates since
/// `prev` (the previous sample and the seconds since it), or with -j the
/// sample as one JSON object on one line, even with --pretty, as monitor
/// prints events: a stream is read a line at a time (jq, a log).
fn watch_sample(st: &Stats, prev: Option<(&Stats, f64)>, secs: f64, j: bool) -> String {
    if j {
        return json(&serde_json::json!({ "stats": st }), false);
    }
    let (prev, dt) = match prev {
        Some((p, dt)) => (Some(p), dt),
        None => (None, secs),
    };
    format!(
        "stats (every {secs}s; counter, rate):\n{}\n",
        output::stats_rates(st, prev, dt)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::help::tests::{long_help, names_every_key};
    use crate::uapi::{FLOW_STATS_SET, MSG_TYPES_SET, STATS_SET};
    use crate::{attr, Cli, Cmd};
    use clap::Parser;

    #[test]
    fn parses_stats() {
        let c = Cli::try_parse_from(["crem-ctl", "stats", "reset"]).unwrap();
        assert!(matches!(
            c.cmd,
            Some(Cmd::Stats(Args {
                action: Some(Action::Reset),
                ..
            }))
        ));
        let c = Cli::try_parse_from(["crem-ctl", "-j", "stats"]).unwrap();
        assert!(matches!(
            c.cmd,
            Some(Cmd::Stats(Args {
                watch: None,
                action: None,
                ..
            }))
        ));
        assert!(Cli::try_parse_from(["crem-ctl", "stats", "--count", "3"]).is_err());
    }

    /// The JSON section of `stats --help` names every key that `-j stats`
    /// can print (the attribute names).
    #[test]
    fn help_lists_every_json_key() {
        names_every_key(
            &long_help(&["stats"]),
            &[&STATS_SET, &FLOW_STATS_SET, &MSG_TYPES_SET],
        );
    }

    #[test]
    fn stats_watch_json_is_one_line_per_sample() {
        let nest = crate::model::tests::stats_reply();
        let st = Stats::from_attrs(&attr::decode(&STATS_SET, &nest).unwrap());
        let line = watch_sample(&st, Some((&st, 1.0)), 1.0, true);
        assert!(
            line.starts_with("{\"stats\":{\"roce-local-in\":5,"),
            "{line}"
        );
        assert_eq!(line.matches('\n').count(), 1, "{line}");
        assert!(line.ends_with("}}\n"), "{line}");
        // The text form keeps its header and rates.
        let text = watch_sample(&st, None, 2.0, false);
        assert!(
            text.starts_with("stats (every 2s; counter, rate):\n"),
            "{text}"
        );
    }
}
