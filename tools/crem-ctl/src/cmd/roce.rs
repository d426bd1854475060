//! `crem-ctl roce`: RoCEv2 packets parsed and their ICRC checked
//! (inspect.rs), one given as hex or those of a capture (capture.rs).

use crate::capture::{Mode, Opts};
use crate::input::Input;
use crate::stdio::Format;
use crate::{inspect, Fail, Res};

const ABOUT: &str = "\
Parses RoCEv2 packets: IP and UDP, the BTH and its extension headers,
whether CREM treats the packet as a source (it carries a new PSN), and the
ICRC, computed as rxe does.

INPUT is one packet starting at its IPv4 or IPv6 header (no link-layer
header), as hex, - or @FILE as for 'decode'; tcpdump -x or -xx text there
is read as a capture.

-r FILE reads a pcap or pcapng capture (- for standard input; link types
and IP versions as for 'decode -r') and parses every UDP datagram to port
4791, one line per packet: its NUMBER and TIME, then what one packet prints,
its lines joined with ' | '. At the end a summary goes to standard error:
packets read, decoded, ICRC mismatches, invalid, and skipped by reason.";

const HELP: &str = "\
JSON (-j):
    {\"ip-version\", \"src\", \"dst\", \"src-port\", \"dst-port\", \"tos\",
    \"ecn\", \"opcode\", \"opcode-name\", \"psn\", \"dest-qp\", \"pkey\",
    \"ack-req\", \"se\", \"fecn\", \"becn\", \"pad-count\", \"source\",
    \"reth\": {\"va\", \"rkey\", \"dma-len\"}, \"aeth\", \"src-qp\",
    \"immediate\" (these four when present), \"payload-len\", \"icrc\",
    \"icrc-computed\", \"icrc-ok\"}. A capture prints one such object per
    line, \"packet\" and \"time\" first (\"error\" in place of the report
    for a datagram that does not parse), and the summary {\"summary\":
    {\"packets\", \"decoded\", \"invalid\", \"icrc-mismatch\", \"skipped\"}}
    on standard error.

EXAMPLES:
    crem-ctl roce @rust/core/tests/fixtures/rxe-v4-op04.hex
    tcpdump -i eth0 -w rdma.pcap udp port 4791
    crem-ctl roce -r rdma.pcap
    crem-ctl -j roce -r rdma.pcap | jq -c 'select(.\"icrc-ok\" | not)'

EXIT STATUS:
    0  the packet parsed and its ICRC matches; a capture was read to its
       end, and every datagram to port 4791 parsed with a matching ICRC
    1  an ICRC mismatch, a packet that does not parse, or a malformed or
       truncated capture (the error names the byte offset)
    2  usage error: unreadable input, not hex, malformed tcpdump text";

/// Parse RoCEv2 packets and check their ICRC: hex, tcpdump -x text, or -r
#[derive(clap::Args, Debug)]
#[command(long_about = ABOUT, after_long_help = HELP)]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// Capture: a header line, then the one-packet output
    #[arg(short = 'v', long)]
    verbose: bool,
}

pub fn run(a: Args, fmt: Format) -> Res {
    let opts = Opts {
        mode: Mode::Roce,
        json: fmt.json,
        verbose: a.verbose,
    };
    if let Some(b) = a.input.octets(opts)? {
        let r = inspect::roce_report(&b).map_err(Fail::Failed)?;
        fmt.print(&r, || inspect::roce_text(&r));
        if !r.icrc_ok {
            return Err(Fail::Failed("ICRC mismatch".into()));
        }
    }
    Ok(())
}
