//! `crem-ctl flow set ID [side csf] [peer ADDR] k N m N | adaptive`: pins a
//! sender flow's k and m, or hands it back to the adaptive policy
//! (flow-set).

use crate::attr::Attr;
use crate::help;
use crate::nl::Conn;
use crate::parse::{FlowSet, Pin};
use crate::uapi::*;
use crate::{Fail, Res};

/// Pin a sender flow's k and m, or hand it back to the policy (flow-set)
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Changes one sender (csf) flow (flow-set, needs CAP_NET_ADMIN):

    crem-ctl flow set ID [side csf] [peer ADDR] k N m N
        pins the flow's configuration: proposed to the peer at once
        (PARAM_UPDATE), in effect from its Effective PSN; the adaptive
        policy no longer changes it (its circuit breaker still watches)
    crem-ctl flow set ID [side csf] [peer ADDR] adaptive
        hands the flow back to the adaptive policy (only for flows set up
        with adaptive on)

The kernel refuses with a reason: the previous change not in effect yet
(retry after more packets), k/m outside the limits negotiated with the peer, a flow that is not
protected, a receiver (crf) flow. 'crem-ctl flow show ID' shows \"pinned\".",
    after_long_help = help::after(
        &[
            "crem-ctl flow set 7 k 32 m 4",
            "crem-ctl flow set 7 side csf peer 198.51.100.2 adaptive",
        ],
        &[],
    )
)]
pub struct Args {
    /// Flow ID
    id: String,
    /// side csf, peer ADDR (which flow); k N m N, or adaptive
    // No allow_hyphen_values: a trailing -j/-p stays a global flag.
    #[arg(value_name = "KEY VALUE", num_args = 0..)]
    args: Vec<String>,
}

pub fn run(a: Args) -> Res {
    let set = FlowSet::parse(&a.id, &a.args).map_err(Fail::Usage)?;
    let mut c = Conn::open()?;
    c.request(CMD_FLOW_SET, request(&set), false)?;
    Ok(())
}

/// flow-set's request, flow attributes at the top level: the selection
/// (id, side, peer), then k and m (pin) or pinned 0.
fn request(set: &FlowSet) -> Vec<Attr> {
    let mut v = super::selector(&set.sel);
    match set.pin {
        Pin::Fixed { k, m } => {
            v.push(Attr::u8(FLOW_K, k));
            v.push(Attr::u8(FLOW_M, m));
        }
        Pin::Adaptive => v.push(Attr::u8(FLOW_PINNED, 0)),
    }
    v
}

#[cfg(test)]
mod tests {
    use super::super::tests::action;
    use super::super::Action;
    use super::*;
    use crate::attr;
    use crate::Cli;
    use clap::Parser;

    #[test]
    fn flow_set_takes_a_trailing_json_flag() {
        let argv = ["flow", "set", "7", "k", "8", "m", "2", "-j"];
        assert!(
            Cli::try_parse_from(std::iter::once("crem-ctl").chain(argv))
                .unwrap()
                .json
        );
        match action(&argv) {
            Action::Set(a) => assert_eq!(a.args, ["k", "8", "m", "2"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flow_set_requests() {
        let req = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            request(&FlowSet::parse("7", &args).unwrap())
        };
        let r = req(&["side", "csf", "peer", "10.0.0.2", "k", "8", "m", "1"]);
        assert_eq!(
            r,
            vec![
                Attr::u32(FLOW_ID, 7),
                Attr::u8(FLOW_SIDE, 0),
                Attr::bytes(FLOW_PEER, vec![10, 0, 0, 2]),
                Attr::u8(FLOW_K, 8),
                Attr::u8(FLOW_M, 1),
            ]
        );
        crate::uapi::tests::assert_in_request(CMD_FLOW_SET, &r);
        // On the wire: the flow attributes at the top level, no nest.
        assert_eq!(
            attr::encode(&r),
            [
                8, 0, 2, 0, 7, 0, 0, 0, // id 7
                5, 0, 17, 0, 0, 0, 0, 0, // side csf
                8, 0, 18, 0, 10, 0, 0, 2, // peer 10.0.0.2
                5, 0, 9, 0, 8, 0, 0, 0, // k 8
                5, 0, 10, 0, 1, 0, 0, 0, // m 1
            ]
        );
        let r = req(&["adaptive"]);
        assert_eq!(r, [Attr::u32(FLOW_ID, 7), Attr::u8(FLOW_PINNED, 0)]);
        crate::uapi::tests::assert_in_request(CMD_FLOW_SET, &r);
        assert_eq!(
            attr::encode(&r),
            [
                8, 0, 2, 0, 7, 0, 0, 0, // id 7
                5, 0, 24, 0, 0, 0, 0, 0, // pinned 0
            ]
        );
    }
}
