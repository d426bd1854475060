//! crem-ctl: the operator's tool for CREM (crem.ko) — configuration,
//! counters, flows and notifications over the "crem" generic netlink family,
//! plus offline FEC / message / RoCEv2 tools built on crem-core.
//!
//! Laid out as WireGuard's wg: this file is the command line's top (the
//! global flags, the list of commands) and the exit status; `cmd/` has one
//! module per command with its arguments, its help and what it does;
//! `parse/` reads every KEY VALUE the operator types.

mod attr;
mod capture;
mod cmd;
mod conffile;
mod dissect;
mod fec;
mod help;
mod hex;
mod input;
mod inspect;
mod man;
mod model;
mod netns;
mod nl;
mod output;
mod parse;
mod pcap;
mod pretty;
mod request;
mod rmw;
mod stdio;
mod tcpdump;
mod uapi;
mod words;

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;
use stdio::Format;

#[derive(Parser, Debug)]
#[command(
    name = "crem-ctl",
    version,
    infer_subcommands = true,
    about = "Configure and inspect CREM (RoCEv2 protection over lossy long paths)",
    long_about = "\
crem-ctl configures and inspects CREM, the kernel module (crem.ko) that protects
RoCEv2 RDMA traffic over lossy long paths with adaptive FEC and coded
retransmission. It talks to the module over the generic netlink family \"crem\";
all state is per network namespace: crem-ctl acts on the namespace it runs in,
or on the one -n names (as 'ip -n NAME' does; 'ip netns exec NAME crem-ctl'
works too).

Without a command, crem-ctl runs 'show'. The offline commands (fec, decode,
roce, completions) need no module.

Commands may be abbreviated at every level to any prefix that names one of
them only ('crem-ctl fl sh 7' is 'crem-ctl flow show 7'; 'crem-ctl s' is
refused, exit 2, naming show, set, stats, setconf, syncconf and showconf).
'help' works before or after any command: 'crem-ctl help flow show',
'crem-ctl flow show help' and 'crem-ctl flow show --help' print the same.",
    after_long_help = "\
EXAMPLES:
    crem-ctl                                   # configuration, counters, flows
    crem-ctl set port 50000 role gateway k 32 m 2
    crem-ctl set peer 203.0.113.0/24=198.51.100.2 reporter 198.51.100.1
    crem-ctl -j show config | jq .config.port
    crem-ctl showconf > crem.conf; crem-ctl setconf crem.conf
    crem-ctl peer add 198.18.0.0/15=198.51.100.9   # one entry, the rest kept
    crem-ctl reporter del 198.51.100.1
    crem-ctl monitor -j
    crem-ctl stats --watch 1
    crem-ctl flow                              # one line per flow
    crem-ctl flow show 7                       # one flow, every counter
    crem-ctl flow add 192.0.2.1 203.0.113.1 qp 17   # a sender flow, now
    crem-ctl peer                              # each peer with its flows' totals
    crem-ctl -j flow | jq '.flow[] | {id, side, restored: .stats.restored}'

EXIT STATUS:
    0 success; 1 operation failed (kernel refusal, I/O, ICRC mismatch);
    2 usage error (nothing sent); 3 module not loaded / operation not supported;
    4 permission denied (needs CAP_NET_ADMIN)."
)]
struct Cli {
    /// Print JSON instead of text (see "JSON" in a command's --help)
    #[arg(short = 'j', long, global = true)]
    json: bool,

    /// Pretty-print JSON (with -j)
    #[arg(short = 'p', long, global = true)]
    pretty: bool,

    /// Show each flow's counters under its line in the flow tables (flow,
    /// show), as 'ip -s link' does; JSON always has them
    #[arg(short = 's', long, global = true)]
    stats: bool,

    /// Act on network namespace NAME (/run/netns/NAME, as 'ip netns add'
    /// makes it) or on the namespace file at PATH
    #[arg(short = 'n', long, global = true, value_name = "NAME|PATH")]
    netns: Option<String>,

    #[command(subcommand)]
    cmd: Option<Cmd>,
}

/// The commands, in the order --help lists them; each one's help is in its
/// module.
#[derive(Subcommand, Debug)]
enum Cmd {
    Show(cmd::show::Args),
    Set(cmd::set::Args),
    Stats(cmd::stats::Args),
    Monitor(cmd::monitor::Args),
    Flow(cmd::flow::Args),
    Peer(cmd::peer::Args),
    Reporter(cmd::reporter::Args),
    Setconf(cmd::setconf::Args),
    Addconf(cmd::addconf::Args),
    Syncconf(cmd::syncconf::Args),
    Showconf(cmd::showconf::Args),
    Fec(cmd::fec::Args),
    Decode(cmd::decode::Args),
    Roce(cmd::roce::Args),
    Completions(cmd::completions::Args),
}

/// A failure, with its exit status.
enum Fail {
    /// 2: the command line, a key, a value or a file is wrong; nothing was sent.
    Usage(String),
    /// 1: the operation failed.
    Failed(String),
    /// 4: not allowed (e.g. entering another network namespace without
    /// CAP_SYS_ADMIN).
    Denied(String),
    /// The kernel's or the socket's error: 1, 3 or 4 (see [`nl::Error::exit_code`]).
    Nl(nl::Error),
}

impl From<nl::Error> for Fail {
    fn from(e: nl::Error) -> Self {
        Fail::Nl(e)
    }
}

type Res<T = ()> = Result<T, Fail>;

fn run(cli: Cli) -> Res {
    if let Some(ns) = &cli.netns {
        netns::enter(ns)?;
    }
    let fmt = Format {
        json: cli.json,
        pretty: cli.pretty,
        stats: cli.stats,
    };
    match cli
        .cmd
        .unwrap_or_else(|| Cmd::Show(cmd::show::Args::default()))
    {
        Cmd::Show(a) => cmd::show::run(a, fmt),
        Cmd::Set(a) => cmd::set::run(a),
        Cmd::Stats(a) => cmd::stats::run(a, fmt),
        Cmd::Monitor(a) => cmd::monitor::run(a, fmt),
        Cmd::Flow(a) => cmd::flow::run(a, fmt),
        Cmd::Peer(a) => cmd::peer::run(a, fmt),
        Cmd::Reporter(a) => cmd::reporter::run(a, fmt),
        Cmd::Addconf(a) => cmd::addconf::run(a),
        Cmd::Syncconf(a) => cmd::syncconf::run(a),
        Cmd::Setconf(a) => cmd::setconf::run(a),
        Cmd::Showconf(a) => cmd::showconf::run(a, fmt),
        Cmd::Fec(a) => cmd::fec::run(a, fmt),
        Cmd::Decode(a) => cmd::decode::run(a, fmt),
        Cmd::Roce(a) => cmd::roce::run(a, fmt),
        Cmd::Completions(a) => cmd::completions::run(a),
    }
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `crem-ctl generate-man DIR` (make install) is not one of the commands:
    // see man.rs.
    let res = if args.get(1).is_some_and(|a| a == man::COMMAND) {
        man::run(&args[1..])
    } else {
        words::expand(&Cli::command(), args)
            .map_err(Fail::Usage)
            .and_then(|args| run(Cli::parse_from(args)))
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            let (msg, code) = match f {
                Fail::Usage(m) => (m, 2),
                Fail::Failed(m) => (m, 1),
                Fail::Denied(m) => (m, 4),
                Fail::Nl(e) => {
                    let c = e.exit_code();
                    (e.to_string(), c)
                }
            };
            eprintln!("crem-ctl: {msg}");
            ExitCode::from(code as u8)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn no_command_is_show() {
        let c = Cli::try_parse_from(["crem-ctl"]).unwrap();
        assert!(c.cmd.is_none());
        let c = Cli::try_parse_from(["crem-ctl", "-j", "show", "config"]).unwrap();
        assert!(c.json && !c.pretty);
        assert!(Cli::try_parse_from(["crem-ctl", "bogus"]).is_err());
        let c = Cli::try_parse_from(["crem-ctl", "flow", "-n", "gw1"]).unwrap();
        assert_eq!(c.netns.as_deref(), Some("gw1"));
    }
}
