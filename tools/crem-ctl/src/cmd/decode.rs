//! `crem-ctl decode`: CREM messages pretty-printed (pretty.rs), one given
//! as hex or the datagrams of a capture (capture.rs).

use crate::capture::{Mode, Opts};
use crate::input::Input;
use crate::stdio::Format;
use crate::{pretty, Fail, Res};

const ABOUT: &str = "\
Decodes CREM messages with crem-core's strict codecs and prints every field
under the draft's name.

INPUT is one message, the UDP payload on the CREM port, as hex text (several
words are joined; whitespace, ':' separators and '#' comments are ignored),
- to read it from standard input, or @FILE to read it from a file. It prints
a header line (type, flags, length, Flow ID), then one field per line.

tcpdump -x, -xx, -X or -XX text (lines '0x0000:  4500 ...' under each
packet's summary line) on standard input or in @FILE is read as a capture:
-x dumps start at the IP header, -xx dumps at the Ethernet or Linux cooked
header, recognised by its protocol field.

-r FILE reads a pcap or pcapng capture (tcpdump -w, Wireshark, dumpcap; -
for standard input) of Ethernet (VLAN tags too), Linux cooked (SLL, SLL2:
tcpdump -i any) or raw IP frames, IPv4 or IPv6. Which UDP datagrams it
decodes: with --port N those from or to port N, reporting any that does not
decode; without --port every datagram that decodes as a CREM message (the
capture does not say which port is the CREM port), except on RoCEv2's port
4791. A capture prints one line per message,
    NUMBER TIME IPvV SRC -> DST, UDP SPORT -> DPORT | HEADER | FIELDS
TIME is seconds since the epoch to the capture's resolution ('-' when the
packet has none; the summary line's first word for tcpdump text). At the
end a summary goes to standard error: packets read, decoded, invalid, and
skipped by reason (not IP, not UDP, IP fragments, cut by the snap length,
other ports, not CREM, unsupported link type, malformed headers).";

const HELP: &str = "\
NOTATION:
    Field names are the draft's (\"Message Formats\"); those of TC_AETH, the
    private type 12, are the T/C AETH fields of the windowless-ACK draft.
    PSNs are decimal and QPs 0x%06x (as in 'roce' and 'flow'); the Sender
    Nonce is hex; schemes (as 'set scheme' names them), PARAM_ACK statuses,
    CLOSE reasons, methods and loss causes by name with their value in
    parentheses, '7 (unassigned)' when the registry has no name; bitmaps as
    positions, '0-2,4' for 0, 1, 2 and 4, with their count and wire words.

JSON (-j):
    One message: {\"type\", \"type-value\", \"flags\", \"flag-names\",
    \"length\", \"flow-id\", then the fields under the draft's names in
    kebab-case, e.g. \"block-start-psn\": 256, \"present-bitmap\": [0, 1, 2]}.
    Registry values are names, or numbers when unassigned; \"sender-nonce\"
    is a hex string (it exceeds the integers JSON readers keep exact);
    \"flow-label\" comes with \"dest-qp\" for RoCEv2 flows; -p indents
    one message (a capture's objects stay one per line).
    A capture prints one object per line, {\"packet\", \"time\" (a string,
    or null), \"ip-version\", \"src\", \"dst\", \"src-port\", \"dst-port\",
    \"crem\": {the message}}, with \"error\" in place of \"crem\" for a
    datagram that does not decode, and the summary as one object
    {\"summary\": {\"packets\", \"decoded\", \"invalid\", \"skipped\":
    {REASON: N}}} on standard error.

EXAMPLES:
    crem-ctl decode 1900000c0000000700010000
    crem-ctl -j decode @repair.hex | jq '.\"present-bitmap\"'
    tcpdump -i any -w crem.pcap udp port 7470
    crem-ctl decode -r crem.pcap --port 7470
    crem-ctl decode -r crem.pcap -v | less
    tcpdump -i eth0 -w - udp | crem-ctl -j decode -r - |
        jq -c 'select(.crem.type == \"REPAIR_REQUEST\")'
    tcpdump -nn -x -r crem.pcap -c 1 | crem-ctl decode -

EXIT STATUS:
    0  the message decoded; a capture was read to its end and every
       datagram it selected decoded
    1  the message does not decode; a capture is malformed or truncated
       (the error names the byte offset; the packets before it are
       printed), or a datagram on --port does not decode
    2  usage error: unreadable input, not hex, malformed tcpdump text, --port
       without a capture";

/// Pretty-print CREM messages: hex, tcpdump -x text, or a capture (-r)
#[derive(clap::Args, Debug)]
#[command(long_about = ABOUT, after_long_help = HELP)]
pub struct Args {
    #[command(flatten)]
    input: Input,
    /// Capture: decode the datagrams from or to this UDP port
    #[arg(long, value_name = "N")]
    port: Option<u16>,
    /// Capture: a header line, then the fields one per line
    #[arg(short = 'v', long)]
    verbose: bool,
}

pub fn run(a: Args, fmt: Format) -> Res {
    let opts = Opts {
        mode: Mode::Crem { port: a.port },
        json: fmt.json,
        verbose: a.verbose,
    };
    if let Some(b) = a.input.octets(opts)? {
        let d = pretty::decode(&b).map_err(Fail::Failed)?;
        fmt.print(&d.json(), || d.text());
    }
    Ok(())
}
