//! `crem-ctl peer`: the configured peers with what their flows did
//! (`show`, the default).

mod summary;

use crate::help;
use crate::nl::Conn;
use crate::request::{get_config, get_flows};
use crate::stdio::Format;
use crate::Res;

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
      memory           octets held for its flows";

/// The text after the options of peer and peer show.
fn help() -> String {
    help::after(&["crem-ctl peer", "crem-ctl -j peer show"], &[PEER_JSON])
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
    NEWEST           the age of its youngest flow ('-': none), the
                     nearest thing to 'latest handshake' the module reports

A flow counts under the entry whose address is the flow's peer and whose
prefix holds the flow's far host (a sender flow's destination, a receiver
flow's source), the longest if several do, else under the first entry with
its address; flows of a peer that no entry names get a row of their own,
'(not configured)' (the entry was removed while they live). The sums are
those of the flows that exist now: a flow removed takes its counts with it
('crem-ctl stats' keeps the namespace's totals).",
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
}

pub fn run(a: Args, fmt: Format) -> Res {
    match a.action.unwrap_or(Action::Show) {
        Action::Show => show(fmt),
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
