//! `crem-ctl show` (and crem-ctl without a command, as wg shows every
//! interface): the configuration, the counters and the flows, one of them,
//! or one flow as `flow show` prints it.

use super::flow;
use crate::help::{self, JSON_NOTE};
use crate::nl::Conn;
use crate::parse::FlowSel;
use crate::request::{get_config, get_flows, get_stats};
use crate::stdio::Format;
use crate::{output, Fail, Res};
use clap::ValueEnum;

/// Show configuration, counters and flows of this network namespace
#[derive(clap::Args, Debug, Default)]
#[command(
    long_about = "\
Shows the CREM configuration (config-get), the counters (stats-get) and the
protected flows (flow-get dump) of the current network namespace, or only one
of them: config, stats or flows. 'show ID [side csf|crf] [peer ADDR]' shows
one flow, as 'flow show' does. Reading needs no privilege, but Flow IDs are
kept from other users: without CAP_NET_ADMIN over the namespace the flows
come without IDs and 'show ID' is refused (exit 4).",
    after_long_help = help::after(
        &[
            "crem-ctl show",
            "crem-ctl show flows",
            "crem-ctl show 7 side crf",
            "crem-ctl -j show config",
        ],
        &[JSON_NOTE],
    )
)]
pub struct Args {
    /// Show only this part: config, stats, flows, or the flow with this ID
    #[arg(value_name = "config|stats|flows|ID")]
    what: Option<String>,
    /// With a flow ID: side csf|crf, peer ADDR (which flow, if several have it)
    #[arg(value_name = "KEY VALUE", num_args = 0..)]
    sel: Vec<String>,
}

// A ValueEnum for its case-insensitive names and the alias; the argument
// itself is a string, as it may be a flow ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Part {
    /// The configuration (config-get)
    Config,
    /// The counters (stats-get)
    Stats,
    /// The protected flows (flow-get dump)
    #[value(alias = "flow")]
    Flows,
}

/// What 'show' was asked for: a part, or one flow.
#[derive(Debug, PartialEq, Eq)]
enum Show {
    Part(Part),
    Flow(FlowSel),
}

/// 'show [config|stats|flows]' or 'show ID [side csf|crf] [peer ADDR]'.
fn parse_show(what: &str, sel: &[String]) -> Res<Show> {
    if let Ok(p) = Part::from_str(what, true) {
        if !sel.is_empty() {
            return Err(Fail::Usage(format!(
                "'show {what}' takes nothing more (got '{}')",
                sel.join(" ")
            )));
        }
        return Ok(Show::Part(p));
    }
    if what.starts_with(|c: char| c.is_ascii_digit()) {
        return FlowSel::parse(what, sel)
            .map(Show::Flow)
            .map_err(Fail::Usage);
    }
    Err(Fail::Usage(format!(
        "show: '{what}' is not config, stats, flows or a flow ID"
    )))
}

pub fn run(a: Args, fmt: Format) -> Res {
    let part = match a
        .what
        .as_deref()
        .map(|w| parse_show(w, &a.sel))
        .transpose()?
    {
        Some(Show::Flow(sel)) => return flow::show::run(&sel, fmt),
        Some(Show::Part(p)) => Some(p),
        None => None,
    };
    let shows = |p: Part| part.is_none() || part == Some(p);
    let mut c = Conn::open()?;
    let mut obj = serde_json::Map::new();
    let mut text = String::new();
    // Each part's text ends in a newline: one more puts a blank line between.
    let mut add = |key: &str, part: String, value: serde_json::Value| {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&part);
        obj.insert(key.into(), value);
    };
    if shows(Part::Config) {
        let cfg = get_config(&mut c)?;
        add("config", output::config(&cfg), json_value(&cfg));
    }
    if shows(Part::Stats) {
        let st = get_stats(&mut c)?;
        add("stats", output::stats(&st), json_value(&st));
    }
    if shows(Part::Flows) {
        let fl = get_flows(&mut c)?;
        add("flow", output::flows(&fl, fmt.stats, None), json_value(&fl));
    }
    fmt.print(&obj, || text);
    Ok(())
}

fn json_value<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cli, Cmd};
    use clap::Parser;

    fn show(argv: &[&str]) -> Option<Res<Show>> {
        let c = Cli::try_parse_from(std::iter::once("crem-ctl").chain(argv.iter().copied()));
        match c.unwrap().cmd {
            Some(Cmd::Show(a)) => a.what.map(|w| parse_show(&w, &a.sel)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parses_show() {
        assert!(matches!(
            show(&["-j", "show", "config"]),
            Some(Ok(Show::Part(Part::Config)))
        ));
        assert!(matches!(
            show(&["show", "flow"]),
            Some(Ok(Show::Part(Part::Flows)))
        ));
        let c = Cli::try_parse_from(["crem-ctl", "show", "7", "side", "crf", "-j"]).unwrap();
        assert!(c.json);
        assert!(matches!(
            show(&["show", "7", "side", "crf", "-j"]),
            Some(Ok(Show::Flow(FlowSel {
                id: 7,
                side: Some(1),
                peer: None
            })))
        ));
        for bad in [
            &["show", "colour"][..],
            &["show", "stats", "side", "crf"],
            &["show", "0"],
        ] {
            assert!(matches!(show(bad), Some(Err(Fail::Usage(_)))), "{bad:?}");
        }
        assert!(show(&["show"]).is_none());
    }
}
