//! `crem-ctl peer`: the configured peers with what their flows did
//! (`show`, the default); `add` and `del` change one entry of the list
//! (read-modify-write, rmw.rs).

mod summary;

use crate::help;
use crate::nl::Conn;
use crate::parse::{peer_entries, peer_selectors};
use crate::request::{get_config, get_flows};
use crate::rmw::{self, RACE};
use crate::stdio::Format;
use crate::{Fail, Res};

const PEER_JSON: &str = "\
JSON (-j):
    {\"peer\": [ROW, ...]}, a row per peer entry in configuration order, then
    one per peer address of flows that no entry names:
      prefix, prefix-len, addr
                       the entry, as in -j show config (a row of flows no
                       entry names has addr only)
      configured       true for an entry, false for such a row
      csf, crf         its sender and receiver flows
      sources, repairs-sent, received, repairs-received, restored
                       the sums of its flows' flow-stats counters of these
                       names (the counts of flows that still exist: a flow
                       removed takes its counts out of the sums)
      newest-age-ms    the age of its youngest flow (absent without flows)
      memory           octets held for its flows
      last-msg-ms      since the peer's last message reached any of its
                       flows (absent if none has heard from it)";

/// The text after the options of peer and peer show.
fn help() -> String {
    help::after(&["crem-ctl peer", "crem-ctl -j peer show"], &[PEER_JSON])
}

/// The text after the options of peer add and peer del.
fn edit_help() -> String {
    help::after(
        &[
            "crem-ctl peer add 203.0.113.0/24=198.51.100.2",
            "crem-ctl peer add 2001:db8:1::/48=2001:db8::2,198.18.0.0/15=198.51.100.9",
            "crem-ctl peer del 203.0.113.0/24",
            "crem-ctl peer del 198.18.0.0/15=198.51.100.9",
        ],
        &[RACE],
    )
}

/// Show the peers with their flows' totals
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Without a subcommand, or with 'show': a line per configured peer (the
'peer' list of 'crem-ctl set'), with what its flows did, summed here from
the flow dump as 'wg show' sums a peer's transfer:

    PREFIX           the destination prefix the entry protects
    PEER             the peer CREM function's address
    CSF, CRF         its sender and receiver flows now
    SOURCES          source packets its sender flows protected
    REPAIRS-SENT     REPAIRs its sender flows sent
    RECEIVED         packets its receiver flows received
    REPAIRS-RCVD     REPAIRs its receiver flows received
    RESTORED         packets its receiver flows restored
    MEMORY           octets held for its flows
    NEWEST           the age of its youngest flow ('-': none)
    HEARD            since the peer's last message reached any of its
                     flows ('-': none has heard from it), as 'wg show'
                     gives the latest handshake; a CREM function that
                     stopped answering shows here while its flows live

A flow counts under the entry whose address is the flow's peer and whose
prefix holds the flow's far host (a sender flow's destination, a receiver
flow's source), the longest if several do, else under the first entry with
its address; flows of a peer that no entry names get a row of their own,
'(not configured)' (the entry was removed while they live). The sums are
those of the flows that exist now: a flow removed takes its counts with it
('crem-ctl stats' keeps the namespace's totals).

'peer add' and 'peer del' change entries of the list, leaving the others as
they are (see their --help); 'crem-ctl set peer ...' replaces the list.",
    after_long_help = help()
)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// The peers with their flows' totals (config-get, flow-get dump)
    #[command(after_long_help = help())]
    Show,
    /// Add peer entries to the list (config-get, config-set)
    #[command(
        long_about = "\
Adds entries PREFIX/LEN=ADDR (flows toward PREFIX/LEN are protected with
the CREM function at ADDR) to the peer list, keeping the entries there.
An entry already there with the same address is left as it is; a prefix
configured with another address is refused (exit 1, nothing changed):
'peer del' it first, or replace the list with 'crem-ctl set peer'. Each
ENTRY may be a comma-separated list; all are added in one config-set.",
        after_long_help = edit_help()
    )]
    Add(Entries),
    /// Remove peer entries from the list (config-get, config-set)
    #[command(
        long_about = "\
Removes the entries of the given prefixes (PREFIX/LEN, or PREFIX/LEN=ADDR
to say which address it must have) from the peer list, keeping the others.
A prefix that is not configured (or has another address) is refused
(exit 1, nothing changed). Flows toward a removed prefix are no longer
protected. All are removed in one config-set.",
        after_long_help = edit_help()
    )]
    Del(Entries),
}

// The entries peer add and peer del name. No doc comment: clap would take
// it for the command's about.
#[derive(clap::Args, Debug)]
#[group(skip)]
struct Entries {
    /// PREFIX/LEN=ADDR (add), PREFIX/LEN[=ADDR] (del); comma-separated lists too
    #[arg(value_name = "ENTRY", required = true, num_args = 1..)]
    entries: Vec<String>,
}

pub fn run(a: Args, fmt: Format) -> Res {
    match a.action.unwrap_or(Action::Show) {
        Action::Show => show(fmt),
        Action::Add(e) => {
            let new = peer_entries(&e.entries).map_err(Fail::Usage)?;
            rmw::modify(|cur| {
                Ok(crate::model::Config {
                    peer: Some(rmw::add_peers(cur.peer.as_deref().unwrap_or(&[]), &new)?),
                    ..Default::default()
                })
            })
        }
        Action::Del(e) => {
            let gone = peer_selectors(&e.entries).map_err(Fail::Usage)?;
            rmw::modify(|cur| {
                Ok(crate::model::Config {
                    peer: Some(rmw::del_peers(cur.peer.as_deref().unwrap_or(&[]), &gone)?),
                    ..Default::default()
                })
            })
        }
    }
}

fn show(fmt: Format) -> Res {
    let mut c = Conn::open()?;
    let cfg = get_config(&mut c)?;
    let flows = get_flows(&mut c)?;
    let rows = summary::summarize(cfg.peer.as_deref().unwrap_or(&[]), &flows);
    fmt.print(&serde_json::json!({ "peer": rows }), || {
        summary::text(&rows)
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::help::tests::{has_word, long_help};

    /// The JSON section names every key a row can have.
    #[test]
    fn help_lists_every_json_key() {
        let h = long_help(&["peer"]);
        let row = super::summary::Row::default();
        let j = serde_json::to_value(super::summary::Row {
            prefix: Some(row.addr.clone()),
            prefix_len: Some(0),
            newest_age_ms: Some(0),
            ..row
        })
        .unwrap();
        for k in j.as_object().unwrap().keys() {
            assert!(has_word(&h, k), "{k}");
        }
    }
}
