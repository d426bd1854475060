//! `crem-ctl flow reset ID [side csf|crf] [peer ADDR]`: zeroes one flow's
//! counters (flow-reset).

use super::Which;
use crate::help;
use crate::uapi::CMD_FLOW_RESET;
use crate::Res;

/// Zero one flow's counters (flow-reset)
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Zeroes the counters of one flow (flow-reset, needs CAP_NET_ADMIN): its
\"stats\" nest, the flow-stats counters and messages by type that 'crem-ctl
flow show ID' prints. The flow is chosen as for 'flow show' and 'flow del':

    crem-ctl flow reset ID [side csf|crf] [peer ADDR]

Flow IDs are assigned by each CRF, so the same ID may name a CSF and a CRF
flow (or flows of two peers): side and peer then choose one. The namespace's
flow totals ('crem-ctl stats') keep what the flow had counted; 'crem-ctl
stats reset' zeroes those. Prints nothing on success; the kernel's reason for
a refusal (e.g. no such flow) is printed verbatim (exit 1).",
    after_long_help = help::after(
        &[
            "crem-ctl flow reset 7",
            "crem-ctl flow reset 7 side crf peer 198.51.100.2",
        ],
        &[],
    )
)]
pub struct Args {
    #[command(flatten)]
    which: Which,
}

pub fn run(a: Args) -> Res {
    super::send(CMD_FLOW_RESET, &a.which.parse()?)
}

#[cfg(test)]
mod tests {
    use super::super::tests::action;
    use super::super::Action;
    use crate::parse::FlowSel;

    #[test]
    fn parses_flow_reset() {
        let a = match action(&["flow", "reset", "9", "side", "csf", "peer", "10.0.0.2"]) {
            Action::Reset(a) => a,
            other => panic!("{other:?}"),
        };
        let s = a.which.parse().ok().unwrap();
        assert_eq!(
            s,
            FlowSel {
                id: 9,
                side: Some(0),
                peer: Some("10.0.0.2".parse().unwrap())
            }
        );
    }
}
