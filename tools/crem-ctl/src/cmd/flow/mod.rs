//! `crem-ctl flow`: the protected flows. `flow` and `flow list` print a
//! table of them; `show`, `del`, `reset` and `set` act on the one flow
//! that ID [side csf|crf] [peer ADDR] names; `add` sets up a sender flow.

mod add;
mod list;
mod reset;
mod set;
pub mod show;

use crate::attr::Attr;
use crate::help;
use crate::nl::Conn;
use crate::parse::FlowSel;
use crate::stdio::Format;
use crate::uapi::*;
use crate::{Fail, Res};

/// The JSON of the flows (flow, flow show, flow add).
const FLOW_JSON: &str = "\
JSON (-j):
    {\"flow\": [FLOW, ...]}: one object per flow in dump order, [] when there
    are none; 'flow show ID' prints the same shape with the one flow (or,
    without a side, every flow with that ID), and 'flow add' the same shape
    with the new flow. The keys of FLOW are the \"flow\" set's attribute
    names, in spec order:
      id               u32, the Flow ID assigned by the CRF
      src, dst         strings: the RDMA connection's IPv4/IPv6 addresses
      dest-qp          u32, destination queue pair
      state            \"negotiating\", \"protected\", \"unprotected\", \"closing\"
      config-id        u8, the flow's current configuration
      scheme           FEC scheme: \"cauchy\" (Cauchy RS, 1), \"xor\" (2),
                       \"source-copy\" (0)
      k, m             u8, source block size and ordinary repairs per block
      symbol-len       u16, symbol length T in octets
      srtt-us          u32, smoothed RTT in microseconds, measured by this
                       side (the module's 10 ms hint until the first sample)
      loss-ppm         u32, smoothed pre-restoration loss rate, ppm
      loss-class       \"none\", \"transmission\", \"congestion\"
      breaker          \"normal\", \"tripped\"
      memory           u64, octets held for the flow
      side             \"csf\" (sender side) or \"crf\" (receiver side)
      peer             string, the peer CREM function's address
      age-ms           u64, milliseconds since the flow was set up
      stats            an object: the flow's flow-stats counters and its
                       messages by type (below)
      kind             \"requests\" (requester packets, CREM Flow Kind 1) or
                       \"responses\" (READ responses and ATOMIC ACKs, Flow
                       Kind 192): one direction of a queue pair may carry one
                       flow of each kind, in different PSN spaces
      event            flow-change notifications only (crem-ctl monitor):
                       \"breaker-tripped\", \"breaker-cleared\",
                       \"close-received\"
      close-reason     u16, with close-received: the peer's CLOSE reason
      pinned           u8, sender flows: 1 while 'flow set' pins k and m
      schemes, max-k, max-m, max-symbol-len, max-open-blocks
                       the negotiated limits (the smaller of both sides'; a
                       sender flow has them from HELLO_ACK on): u8 bit set of
                       FEC schemes (bit s: scheme s), u8, u8, u16 octets,
                       u16 blocks the receiver holds open at once
      min-rtt-us       u32, the smallest RTT this side measured, in
                       microseconds (as srtt-us)
      last-msg-ms      u64, milliseconds since a message from the peer
                       last reached the flow (absent: none yet, e.g. a
                       sender flow whose HELLO is unanswered)
      rdma-mtu         u32, the RDMA connection's MTU in octets of payload:
                       a sender flow learns it from its packets (a FIRST
                       or MIDDLE packet carries exactly one MTU; until one
                       is seen, the largest its link allows) and sizes T
                       to it unless symbol-len is configured; a receiver
                       flow has its HELLO's, then what its FIRST or MIDDLE
                       packets show
      rdma-mtu-exact   u8, sender flows: 1 once rdma-mtu was seen in a
                       FIRST or MIDDLE packet, 0 while it is an estimate
    An attribute the module did not send is an absent key; an enum value
    this crem-ctl does not know is printed as its number.";

/// The text after the options of flow, flow list, flow show and flow del.
fn help() -> String {
    help::after(
        &[
            "crem-ctl flow",
            "crem-ctl flow side crf state protected min-loss 1000",
            "crem-ctl -s flow peer 198.51.100.2",
            "crem-ctl flow show 7",
            "crem-ctl -j flow",
            "crem-ctl flow add 192.0.2.1 203.0.113.1 qp 17",
            "crem-ctl flow reset 7",
        ],
        &[FLOW_JSON, &help::flow_stats_keys()],
    )
}

/// List protected flows, show one with its counters
#[derive(clap::Args, Debug)]
#[command(
    long_about = "\
Lists this namespace's protected flows (flow-get dump): one direction of one
RDMA connection each, on the CSF (sender) or CRF (receiver) side. Without a
subcommand, 'flow' is 'flow list': a table with one line per flow

    ID           Flow ID (assigned by the CRF)
    SIDE         csf or crf
    KIND         requests or responses (READ responses, ATOMIC ACKs)
    SRC -> DST   the RDMA connection's addresses
    DEST-QP      destination queue pair
    PEER         the peer CREM function's address
    STATE        negotiating, protected, unprotected, closing
    SCHEME       FEC scheme (cauchy, xor, source-copy)
    K/M/T        source block size, ordinary repairs per block, symbol length
    SRTT         smoothed round-trip time, as this side measures it
    MIN-RTT      the smallest round-trip time this side measured
    LOSS, CLASS  smoothed pre-restoration loss rate (ppm) and its class
                 (none, transmission, congestion)
    BREAKER      normal or tripped
    MEMORY       octets held for the flow
    AGE          time since the flow was set up

and '-' for an attribute the module did not send (the ID, to a caller without
CAP_NET_ADMIN over the namespace: Flow IDs guard against blind injection,
so 'flow show ID' needs it too).

'flow [list] FILTER...' lists only the flows that match every condition
given (crem-ctl filters the dump; the title then says 'N of M match'):

    peer ADDR               the peer CREM function is ADDR
    side csf|crf            the sender or the receiver side
    state S                 negotiating, protected, unprotected, closing
    kind requests|responses the flow kind
    min-loss PPM            loss-ppm at least PPM (1200, 1200ppm, 0.12%)

A flow without the attribute a condition names (an older module) does not
match it. -j prints the flows that match, in the same shape.

With -s (--stats, as 'ip -s link'), each flow's counters follow its line:
for a csf flow sources, repairs-sent, coded-retx, source-copies,
requests-received, blocks-given-up, unprotected; for a crf flow received,
repairs-received, restored, icrc-failures, requests-sent, fallbacks,
abandoned; for both msgs-in and msgs-out ('flow show ID' has them all). -j
always has every counter (each flow's \"stats\"), -s or not.

A dump the kernel flags as
interrupted (the table changed while it ran, NLM_F_DUMP_INTR) is repeated, up
to 10 times, so every flow is listed once; if the table never holds still,
crem-ctl fails (exit 1) rather than print a torn list.

'flow show ID [side csf|crf] [peer ADDR]' prints one flow with every
attribute and every counter, and a table of its CREM messages by type (TYPE,
IN, OUT: the types counted at least once, or 'none'). Flow IDs are assigned
by each CRF, so the same ID may name a CSF and a CRF flow (or flows of two
peers): side and peer then choose one; without them every flow with that ID
is shown. (A module without
flow-get's do is asked for the whole dump, filtered here.)

'flow del ID [side csf|crf] [peer ADDR]' removes one flow (needs
CAP_NET_ADMIN): its engine closes, sending CLOSE (reason normal) to the peer
if the flow was established, and releasing what it held. New packets of the
connection set the flow up again.

'flow add SRC DST qp N [kind requests|responses] [k N m N]' sets up a sender
(csf) flow ahead of its traffic (flow-new, needs CAP_NET_ADMIN) and prints it
as 'flow show' does; see 'crem-ctl flow add --help'.

'flow reset ID [side csf|crf] [peer ADDR]' zeroes one flow's counters
(flow-reset, needs CAP_NET_ADMIN); the stats totals keep what it counted.

An enum value this crem-ctl does not know is shown as unknown(N) (in JSON: N).",
    after_long_help = help()
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    /// 'flow FILTER...' is 'flow list FILTER...'
    #[command(flatten)]
    filter: list::Filter,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// List the protected flows, one line each, or those FILTER keeps
    /// (flow-get dump)
    #[command(after_long_help = help())]
    List(list::Filter),
    /// Show one flow with all its attributes and counters (flow-get)
    #[command(after_long_help = help())]
    Show(Which),
    /// Remove a protected flow, closing it toward the peer (flow-del)
    #[command(after_long_help = help())]
    Del(Which),
    Add(add::Args),
    Reset(reset::Args),
    Set(set::Args),
}

// The flow that show, del and reset act on. No doc comment: clap would
// take it for the command's about.
#[derive(clap::Args, Debug)]
#[group(skip)]
struct Which {
    /// Flow ID
    id: String,
    /// side csf|crf, peer ADDR: which flow, if several have the ID
    #[arg(value_name = "KEY VALUE", num_args = 0..)]
    sel: Vec<String>,
}

impl Which {
    fn parse(&self) -> Res<FlowSel> {
        FlowSel::parse(&self.id, &self.sel).map_err(Fail::Usage)
    }
}

pub fn run(a: Args, fmt: Format) -> Res {
    match a.action.unwrap_or(Action::List(a.filter)) {
        Action::List(f) => list::run(&f, fmt),
        Action::Show(w) => show::run(&w.parse()?, fmt),
        Action::Del(w) => send(CMD_FLOW_DEL, &w.parse()?),
        Action::Add(a) => add::run(a, fmt),
        Action::Reset(a) => reset::run(a),
        Action::Set(a) => set::run(a),
    }
}

/// Sends `cmd` for the flow `sel` names (flow-del, flow-reset): the kernel's
/// answer is all there is to say, so nothing is printed.
fn send(cmd: u8, sel: &FlowSel) -> Res {
    let mut c = Conn::open()?;
    c.request(cmd, request(sel), false)?;
    Ok(())
}

/// The attributes that name the flow `sel` selects (id, side, peer), at
/// the top level of a flow request.
fn selector(sel: &FlowSel) -> Vec<Attr> {
    let mut v = vec![Attr::u32(FLOW_ID, sel.id)];
    if let Some(s) = sel.side {
        v.push(Attr::u8(FLOW_SIDE, s));
    }
    if let Some(a) = sel.peer {
        v.push(Attr::bytes(FLOW_PEER, crate::model::Addr::from(a).0));
    }
    v
}

/// A request for the flow `sel` selects and nothing more (flow-get, -del,
/// -reset).
fn request(sel: &FlowSel) -> Vec<Attr> {
    selector(sel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::help::tests::{has_word, long_help, names_every_key};
    use crate::{Cli, Cmd};
    use clap::Parser;

    /// The flow subcommand `argv` parses to.
    pub(super) fn action(argv: &[&str]) -> Action {
        let c = Cli::try_parse_from(std::iter::once("crem-ctl").chain(argv.iter().copied()));
        match c.unwrap().cmd {
            Some(Cmd::Flow(Args {
                action: Some(a), ..
            })) => a,
            other => panic!("{argv:?}: {other:?}"),
        }
    }

    #[test]
    fn parses_flow_commands() {
        let c = Cli::try_parse_from(["crem-ctl", "-j", "flow"]).unwrap();
        assert!(c.json);
        assert!(matches!(c.cmd, Some(Cmd::Flow(Args { action: None, .. }))));
        match action(&["flow", "show", "7"]) {
            Action::Show(w) => {
                assert_eq!(w.id, "7");
                assert!(w.sel.is_empty());
            }
            other => panic!("{other:?}"),
        }
        match action(&["flow", "del", "9", "side", "crf"]) {
            Action::Del(w) => assert_eq!(
                w.parse().ok(),
                Some(FlowSel {
                    id: 9,
                    side: Some(1),
                    peer: None
                })
            ),
            other => panic!("{other:?}"),
        }
        // Filter words, after 'flow' or 'flow list'; -s anywhere.
        let c = Cli::try_parse_from(["crem-ctl", "flow", "peer", "10.0.0.2", "side", "crf", "-s"])
            .unwrap();
        assert!(c.stats);
        match c.cmd {
            Some(Cmd::Flow(Args {
                action: None,
                filter,
            })) => assert_eq!(filter.words, ["peer", "10.0.0.2", "side", "crf"]),
            other => panic!("{other:?}"),
        }
        match action(&["-s", "flow", "list", "min-loss", "1%"]) {
            Action::List(f) => assert_eq!(f.words, ["min-loss", "1%"]),
            other => panic!("{other:?}"),
        }
        for bad in [
            &["flow", "reset"][..],
            &["flow", "add"][..],
            &["flow", "add", "192.0.2.1"][..],
            &["flow", "del"][..],
            &["flow", "show"][..],
        ] {
            let argv = std::iter::once("crem-ctl").chain(bad.iter().copied());
            assert!(Cli::try_parse_from(argv).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn selector_request() {
        let kv: Vec<String> = ["peer", "10.0.0.2", "side", "csf"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let s = FlowSel::parse("7", &kv).unwrap();
        // The request: id 7, side 0, peer 10.0.0.2 at the top level (all
        // flow-get's, -del's and -reset's policies have).
        let r = request(&s);
        assert_eq!(
            r,
            vec![
                Attr::u32(FLOW_ID, 7),
                Attr::u8(FLOW_SIDE, 0),
                Attr::bytes(FLOW_PEER, vec![10, 0, 0, 2]),
            ]
        );
        assert_eq!(
            crate::attr::encode(&r),
            [
                8, 0, 2, 0, 7, 0, 0, 0, // id 7
                5, 0, 17, 0, 0, 0, 0, 0, // side csf
                8, 0, 18, 0, 10, 0, 0, 2, // peer 10.0.0.2
            ]
        );
        // All in the policies of the three ops (the kernel refuses others).
        for cmd in [CMD_FLOW_GET, CMD_FLOW_DEL, CMD_FLOW_RESET] {
            crate::uapi::tests::assert_in_request(cmd, &r);
        }
        // Only the id: nothing else.
        let r = request(&FlowSel::parse("9", &[]).unwrap());
        assert_eq!(crate::attr::encode(&r), [8, 0, 2, 0, 9, 0, 0, 0]);
    }

    /// The JSON section of `flow --help` names every key that `-j flow` can
    /// print (the attribute names), and every enum value.
    #[test]
    fn help_lists_every_json_key() {
        let flow = long_help(&["flow"]);
        names_every_key(&flow, &[&FLOW_SET, &FLOW_STATS_SET, &MSG_TYPES_SET]);
        for e in FLOW_STATE
            .iter()
            .chain(LOSS_CLASS)
            .chain(BREAKER)
            .chain(SIDE)
            .chain(FEC_SCHEME)
        {
            assert!(has_word(&flow, e), "{e}");
        }
    }
}
