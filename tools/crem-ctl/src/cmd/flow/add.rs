//! `crem-ctl flow add SRC DST qp N [kind requests|responses] [k N m N]`: a
//! sender flow set up ahead of its traffic (flow-new), printed as `flow
//! show` prints it.

use super::FLOW_JSON;
use crate::attr::Attr;
use crate::help;
use crate::model::Addr;
use crate::nl::Conn;
use crate::parse::FlowNew;
use crate::stdio::Format;
use crate::uapi::*;
use crate::{output, Fail, Res};

/// Set up a sender flow ahead of its traffic and print it (flow-new)
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Sets up one sender (csf) flow ahead of its traffic (flow-new, needs
CAP_NET_ADMIN): the direction SRC -> DST of an RDMA connection, toward
destination queue pair N. It prints the new flow as 'crem-ctl flow show'
does (with -j: {\"flow\": [FLOW]}).

    crem-ctl flow add SRC DST qp N [kind requests|responses] [k N m N]

    SRC, DST           the connection's addresses, both IPv4 or both IPv6
    qp N               destination queue pair, 0..0xffffff, decimal or 0x
                       hex (required; 'dest-qp N' is the same key)
    kind KIND          requests (the default: the requester's packets, CREM
                       Flow Kind 1) or responses (READ responses and ATOMIC
                       ACKs, Flow Kind 192)
    k N m N            a fixed configuration for this flow, both or neither:
                       k 1..255, m 0..255, k + m <= 255. The flow then keeps
                       it (no adaptive policy).

DST needs a configured peer ('crem-ctl set peer PREFIX/LEN=ADDR'). The HELLO
leaves at once, so the flow is protected from its first packet. Its Flow ID
is 0 until the peer's HELLO_ACK assigns one: 'crem-ctl flow' lists it then.
Like any flow it is removed when idle (the module's flow_idle_s, 30 s).

The addresses, qp, kind, k and m are checked before anything is sent (exit
2); the kernel's reason for a refusal (e.g. no peer for DST) is printed
verbatim (exit 1).",
    after_long_help = help::after(
        &[
            "crem-ctl flow add 192.0.2.1 203.0.113.1 qp 17",
            "crem-ctl flow add 192.0.2.1 203.0.113.1 qp 0x11 kind responses k 16 m 2",
            "crem-ctl -j flow add 192.0.2.1 203.0.113.1 qp 17 | jq '.flow[0].state'",
        ],
        &[FLOW_JSON, &help::flow_stats_keys()],
    )
)]
pub struct Args {
    /// Source IPv4 address of the RDMA connection
    src: String,
    /// Destination IPv4 address of the RDMA connection
    dst: String,
    /// qp N (required); kind requests|responses; k N m N
    // No allow_hyphen_values: a trailing -j/-p stays a global flag.
    #[arg(value_name = "KEY VALUE", num_args = 0..)]
    args: Vec<String>,
}

pub fn run(a: Args, fmt: Format) -> Res {
    let new = FlowNew::parse(&a.src, &a.dst, &a.args).map_err(Fail::Usage)?;
    let mut c = Conn::open()?;
    let r = c.request(CMD_FLOW_NEW, request(&new), false)?;
    let f = crate::request::flows(&r)
        .into_iter()
        .next()
        .ok_or_else(|| {
            Fail::Failed(
                "flow-new: the kernel accepted the flow but replied without it \
                 (see 'crem-ctl flow')"
                    .into(),
            )
        })?;
    fmt.print(&serde_json::json!({ "flow": [f] }), || {
        output::flow_detail(&f)
    });
    Ok(())
}

/// flow-new's request: flow attributes at the top level (all in its
/// policy), in attribute order (src, dst, dest-qp, k, m, kind); no kind
/// leaves the kernel's default (requests). No side: a new flow is a csf.
fn request(f: &FlowNew) -> Vec<Attr> {
    let mut v = vec![
        Attr::bytes(FLOW_SRC, Addr::from(f.src).0),
        Attr::bytes(FLOW_DST, Addr::from(f.dst).0),
        Attr::u32(FLOW_DEST_QP, f.dest_qp),
    ];
    if let Some((k, m)) = f.k_m {
        v.push(Attr::u8(FLOW_K, k));
        v.push(Attr::u8(FLOW_M, m));
    }
    if let Some(kind) = f.kind {
        v.push(Attr::u8(FLOW_KIND_ATTR, kind));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::super::tests::action;
    use super::super::Action;
    use super::*;
    use crate::attr;
    use crate::help::tests::{long_help, names_every_key};
    use crate::Cli;
    use clap::Parser;

    fn req(src: &str, dst: &str, args: &[&str]) -> Vec<Attr> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        request(&FlowNew::parse(src, dst, &args).unwrap())
    }

    #[test]
    fn parses_flow_add() {
        let argv = [
            "-j",
            "flow",
            "add",
            "192.0.2.1",
            "203.0.113.1",
            "qp",
            "0x11",
            "kind",
            "responses",
            "k",
            "8",
            "m",
            "2",
        ];
        assert!(
            Cli::try_parse_from(std::iter::once("crem-ctl").chain(argv))
                .unwrap()
                .json
        );
        match action(&argv) {
            Action::Add(a) => {
                assert_eq!(
                    (a.src.as_str(), a.dst.as_str()),
                    ("192.0.2.1", "203.0.113.1")
                );
                assert_eq!(
                    a.args,
                    ["qp", "0x11", "kind", "responses", "k", "8", "m", "2"]
                );
            }
            other => panic!("{other:?}"),
        }
        // -j also after the key/value pairs.
        let late = ["flow", "add", "10.0.0.1", "10.0.0.2", "qp", "1", "-j"];
        assert!(
            Cli::try_parse_from(std::iter::once("crem-ctl").chain(late))
                .unwrap()
                .json
        );
        match action(&late) {
            Action::Add(a) => assert_eq!(a.args, ["qp", "1"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flow_new_requests() {
        // Everything: the attributes at the top level in attribute order
        // (src, dst, dest-qp, k, m, kind), octet by octet as the kernel's
        // policy reads it.
        let r = req(
            "192.0.2.1",
            "203.0.113.1",
            &["kind", "responses", "m", "2", "qp", "0x11", "k", "16"],
        );
        assert_eq!(
            r,
            vec![
                Attr::bytes(FLOW_SRC, vec![192, 0, 2, 1]),
                Attr::bytes(FLOW_DST, vec![203, 0, 113, 1]),
                Attr::u32(FLOW_DEST_QP, 17),
                Attr::u8(FLOW_K, 16),
                Attr::u8(FLOW_M, 2),
                Attr::u8(FLOW_KIND_ATTR, 1),
            ]
        );
        let want: Vec<u8> = vec![
            8, 0, 3, 0, 192, 0, 2, 1, // src
            8, 0, 4, 0, 203, 0, 113, 1, // dst
            8, 0, 5, 0, 0x11, 0, 0, 0, // dest-qp 17
            5, 0, 9, 0, 16, 0, 0, 0, // k 16
            5, 0, 10, 0, 2, 0, 0, 0, // m 2
            5, 0, 21, 0, 1, 0, 0, 0, // kind responses
        ];
        assert_eq!(attr::encode(&r), want);
        assert_eq!(attr::decode(&FLOW_SET, &want).unwrap(), r);
        crate::uapi::tests::assert_in_request(CMD_FLOW_NEW, &r);

        // The minimum: no kind (the kernel's default, requests), no k/m.
        assert_eq!(
            attr::encode(&req("10.0.0.1", "10.0.0.2", &["dest-qp", "16777215"])),
            vec![
                8, 0, 3, 0, 10, 0, 0, 1, // src
                8, 0, 4, 0, 10, 0, 0, 2, // dst
                8, 0, 5, 0, 0xff, 0xff, 0xff, 0, // dest-qp 0xffffff
            ]
        );
        // k + m = 255 and m 0 are fine; kind requests is sent as 0.
        let r = req(
            "10.0.0.1",
            "10.0.0.2",
            &["qp", "1", "k", "255", "m", "0", "kind", "requests"],
        );
        assert_eq!(
            r[3..].to_vec(),
            [
                Attr::u8(FLOW_K, 255),
                Attr::u8(FLOW_M, 0),
                Attr::u8(FLOW_KIND_ATTR, 0),
            ]
        );
    }

    /// `flow add -j` prints what `flow -j` does: its help names every key.
    #[test]
    fn help_lists_every_json_key() {
        names_every_key(
            &long_help(&["flow", "add"]),
            &[&FLOW_SET, &FLOW_STATS_SET, &MSG_TYPES_SET],
        );
    }
}
