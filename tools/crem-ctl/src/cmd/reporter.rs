//! `crem-ctl reporter`: the allow-listed Path Reporters (`show`, the
//! default), and `add`/`del` of single addresses (read-modify-write,
//! rmw.rs).

use crate::help;
use crate::model::Config;
use crate::nl::Conn;
use crate::parse::addresses;
use crate::request::get_config;
use crate::rmw::{self, RACE};
use crate::stdio::Format;
use crate::{Fail, Res};

fn edit_help() -> String {
    help::after(
        &[
            "crem-ctl reporter add 198.51.100.1",
            "crem-ctl reporter add 198.51.100.7,2001:db8::1",
            "crem-ctl reporter del 198.51.100.1",
        ],
        &[RACE],
    )
}

/// Show the Path Reporter allow-list, add or remove addresses
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Without a subcommand, or with 'show': the allow-listed Path Reporter
addresses (the 'reporter' list of 'crem-ctl set'), one a line, or
'reporters: none'; with -j {\"reporter\": [ADDR, ...]}. 'reporter add' and
'reporter del' change single addresses, leaving the others as they are;
'crem-ctl set reporter ...' replaces the list.",
    after_long_help = help::after(&["crem-ctl reporter", "crem-ctl -j reporter"], &[])
)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// The reporter list (config-get)
    Show,
    /// Add addresses to the reporter list (config-get, config-set)
    #[command(
        long_about = "\
Adds the addresses (IPv4 or IPv6; each ADDR may be a comma-separated list)
to the reporter list, keeping those there; an address already there stays
as it is. All are added in one config-set.",
        after_long_help = edit_help()
    )]
    Add(Addrs),
    /// Remove addresses from the reporter list (config-get, config-set)
    #[command(
        long_about = "\
Removes the addresses from the reporter list, keeping the others. An
address that is not in the list is refused (exit 1, nothing changed). All
are removed in one config-set.",
        after_long_help = edit_help()
    )]
    Del(Addrs),
}

// No doc comment: clap would take it for the command's about.
#[derive(clap::Args, Debug)]
#[group(skip)]
struct Addrs {
    /// IPv4 or IPv6 addresses; comma-separated lists too
    #[arg(value_name = "ADDR", required = true, num_args = 1..)]
    addrs: Vec<String>,
}

pub fn run(a: Args, fmt: Format) -> Res {
    match a.action.unwrap_or(Action::Show) {
        Action::Show => {
            let mut c = Conn::open()?;
            let r = get_config(&mut c)?.reporter.unwrap_or_default();
            fmt.print(&serde_json::json!({ "reporter": r }), || {
                if r.is_empty() {
                    "reporters: none\n".into()
                } else {
                    r.iter().map(|a| format!("{a}\n")).collect()
                }
            });
            Ok(())
        }
        Action::Add(x) => {
            let new = addresses("reporter add", &x.addrs).map_err(Fail::Usage)?;
            rmw::modify(|cur| {
                Ok(Config {
                    reporter: Some(rmw::add_reporters(
                        cur.reporter.as_deref().unwrap_or(&[]),
                        &new,
                    )),
                    ..Default::default()
                })
            })
        }
        Action::Del(x) => {
            let gone = addresses("reporter del", &x.addrs).map_err(Fail::Usage)?;
            rmw::modify(|cur| {
                Ok(Config {
                    reporter: Some(rmw::del_reporters(
                        cur.reporter.as_deref().unwrap_or(&[]),
                        &gone,
                    )?),
                    ..Default::default()
                })
            })
        }
    }
}
