//! crem-ctl: the operator's tool for CREM (crem.ko) — configuration,
//! counters, flows and notifications over the "crem" generic netlink family,
//! plus offline FEC / message / RoCEv2 tools built on crem-core.

mod attr;
mod capture;
mod completions;
mod conffile;
mod dissect;
mod fec;
mod hex;
mod inspect;
mod model;
mod nl;
mod output;
mod parse;
mod pcap;
mod pretty;
mod tcpdump;
mod uapi;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use model::{Config, Flow, Stats};
use nl::Conn;
use parse::{FlowNew, FlowSel, FlowSet, Pin};
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use uapi::*;

const EXIT_STATUS: &str = "\
EXIT STATUS:
    0  success
    1  the operation failed: the kernel refused the request (its reason is
       printed verbatim), a netlink or I/O error, an ICRC mismatch, or data
       that cannot be decoded
    2  usage error: bad command line, key, value or file; nothing was sent
    3  CREM is not available: the crem module is not loaded, or it does not
       support the operation (no such command)
    4  permission denied: changing CREM needs CAP_NET_ADMIN over the network
       namespace";

const JSON_NOTE: &str = "\
JSON (-j):
    One JSON object whose keys are the attribute names of the \"crem\" family's
    YAML spec (netlink/crem.yaml): \"config\", \"stats\", \"flow\" at the top,
    then e.g. \"port\", \"symbol-len\", \"epsilon-ppb\", \"hold-us\",
    \"reporter\", \"peer\" (with \"prefix\", \"prefix-len\", \"addr\"). Numbers
    are JSON numbers in the kernel's units (ppb, us, octets); enum values
    (role, recovery, flow state, loss class, breaker, side) are their YAML
    names, or their number if this crem-ctl does not know the value;
    addresses are strings. The shape matches the kernel's YNL client
    (tools/net/ynl/cli.py --output-json) except that addresses are text.
    'crem-ctl stats --help' and 'crem-ctl flow --help' list every key of
    \"stats\" and \"flow\".";

/// The keys of a "flow-stats" nest (stats totals, a flow's stats).
const FLOW_STATS_KEYS: &str = "    \
    \"flow-stats\" keys (the \"totals\" of stats, the \"stats\" of a flow), in
    spec order, each a u64 counter but the two by-type objects:
      sender (CSF)     sources, source-octets, unprotected, repairs-sent,
                       coded-retx, source-copies, repair-octets,
                       requests-received, fallback-requests-received,
                       blocks-given-up
      receiver (CRF)   received, repairs-received, restored, icrc-failures,
                       requests-sent, fallbacks, abandoned,
                       blocks-incomplete, held-dropped, injected,
                       inject-failures
      both sides       msgs-in, msgs-out, send-failures, store-full,
                       alloc-failures
      sender (CSF)     coded-retx-lost (appended: lost packets named by the
                       requests answered with coded symbols)
      by type          msgs-in-by-type, msgs-out-by-type (appended): objects,
                       not numbers: msgs-in and msgs-out by CREM message
                       type, a \"msg-types\" object each (below)
      appended         repairs-ce (CRF: REPAIRs that arrived CE-marked),
                       repair-path-signals (CSF: LOSS_REPORTs showing CE on
                       or excess loss of REPAIRs: the adaptive policy
                       lowers m while they last), retx-budget-limited and
                       retx-budget-symbols (CSF: answers to requests cut
                       short by the retransmission budget, and the
                       symbols they left out), restore-no-header (CRF:
                       decoded packets not restored because no packet of
                       the flow had arrived yet to take the IP/UDP header
                       from; not ICRC failures)
    \"msg-types\" keys (msgs-in-by-type, msgs-out-by-type of a flow, of the
    totals and of \"stats\"), in spec order, each a u64 count of one CREM
    message type: repair, hello, hello-ack, param-update, param-ack,
    repair-request, loss-report, path-report, close, tc-aeth (type 12, a T/C
    AETH fragment for selective repeat), other (a type this module does not
    know, another version, or too short for a header)";

const STATS_JSON: &str = "\
JSON (-j):
    {\"stats\": {...}}: one object, or with --watch one per sample and line
    (even with --pretty). Its keys are the attribute names of the \"stats\"
    set of netlink/crem.yaml, in spec order; every value is a u64 but for
    the objects totals, msgs-in-by-type and msgs-out-by-type:
      hooks            roce-local-in, roce-forward, roce-local-out, sources,
                       non-sources, malformed
      flows, messages  flows-created, flows-removed (flow-del, port change,
                       role disabled), flows-expired (removed when idle 30 s,
                       or unprotected/closed 5 s), msgs-in, msgs-out,
                       path-reports (PATH_REPORTs from allow-listed
                       reporters taken by a sender flow)
      drops            drop-flow-limit, drop-flow-alloc, drop-memory,
                       drop-linearize, drop-msg-invalid, drop-msg-peer,
                       drop-msg-no-flow, drop-send, drop-notify (flow-up or
                       flow-down notifications not sent)
      gauges           flows-active (flows in the table now), memory
                       (octets held by all flows now)
      totals           an object, not a number: the flow-stats counters
                       below, summed over all flows since the last reset,
                       flows gone since included
      by type          msgs-in-by-type, msgs-out-by-type: objects, not
                       numbers: msgs-in (every datagram that reached the
                       CREM socket, before any check) and msgs-out by CREM
                       message type (the msg-types keys below)
      appended         gso-segmented (GSO/GRO aggregates split so each packet
                       is protected), drop-gso (aggregates left unprotected:
                       segmentation failed), skip-bridged (bridged packets
                       seen through br_netfilter, left unprotected),
                       drop-dev-gone (held packets dropped: their input
                       device was unregistered)
    A counter the module did not send is absent (an older module sends the
    hook counters only); attributes unknown to this crem-ctl are left out.
";

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
      scheme           u8, FEC scheme (1 Cauchy RS, 2 XOR, 0 Source Copy)
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
    An attribute the module did not send is an absent key; an enum value
    this crem-ctl does not know is printed as its number.
";

#[derive(Parser, Debug)]
#[command(
    name = "crem-ctl",
    version,
    about = "Configure and inspect CREM (RoCEv2 protection over lossy long paths)",
    long_about = "\
crem-ctl configures and inspects CREM, the kernel module (crem.ko) that protects
RoCEv2 RDMA traffic over lossy long paths with adaptive FEC and coded
retransmission. It talks to the module over the generic netlink family \"crem\";
all state is per network namespace: crem-ctl acts on the namespace it runs in
(use 'ip netns exec NAME crem-ctl ...' for another one).

Without a command, crem-ctl runs 'show'. The offline commands (fec, decode,
roce, completions) need no module.",
    after_long_help = "\
EXAMPLES:
    crem-ctl                                   # configuration, counters, flows
    crem-ctl set port 50000 role gateway k 32 m 2
    crem-ctl set peer 203.0.113.0/24=198.51.100.2 reporter 198.51.100.1
    crem-ctl -j show config | jq .config.port
    crem-ctl showconf > crem.conf; crem-ctl setconf crem.conf
    crem-ctl monitor -j
    crem-ctl stats --watch 1
    crem-ctl flow                              # one line per flow
    crem-ctl flow show 7                       # one flow, every counter
    crem-ctl flow add 192.0.2.1 203.0.113.1 qp 17   # a sender flow, now
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

    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ShowWhat {
    /// The configuration (config-get)
    Config,
    /// The counters (stats-get)
    Stats,
    /// The protected flows (flow-get dump)
    #[value(alias = "flow")]
    Flows,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Show configuration, counters and flows of this network namespace
    #[command(
        long_about = "\
Shows the CREM configuration (config-get), the counters (stats-get) and the
protected flows (flow-get dump) of the current network namespace, or only one
of them: config, stats or flows. 'show ID [side csf|crf] [peer ADDR]' shows
one flow, as 'flow show' does. Reading needs no privilege, but Flow IDs are
kept from other users: without CAP_NET_ADMIN over the namespace the flows
come without IDs and 'show ID' is refused (exit 4).",
        after_long_help = const_format_show()
    )]
    Show {
        /// Show only this part: config, stats, flows, or the flow with this ID
        #[arg(value_name = "config|stats|flows|ID")]
        what: Option<String>,
        /// With a flow ID: side csf|crf, peer ADDR (which flow, if several have it)
        #[arg(value_name = "KEY VALUE", num_args = 0..)]
        sel: Vec<String>,
    },

    /// Change configuration keys (KEY VALUE [KEY VALUE...])
    #[command(
        long_about = "\
Changes the given keys of this namespace's configuration in one atomic
config-set; keys not given keep their values. Values are checked before
anything is sent; rules that involve several keys (k + m <= 255, a port
before a role, ...) are the kernel's, and its reason for a refusal is printed
verbatim.

KEYS:
    port PORT          CREM UDP port, 0..65535; 0 turns CREM off. There is no
                       default port: set one before a role.
    role ROLE          disabled | host (soft-RoCE shim) | gateway (forwarding)
    recovery MODE      coded | selective-repeat | both
    adaptive on|off    on: the redundancy policy chooses m; off: k and m fixed
    k N                source block size in PSN positions, 1..255
    m N                ordinary repair symbols per block, 0..255
                       (0 = coded retransmission only)
    symbol-len T       symbol length in octets; 0 or 'auto' derives it from
                       the RDMA MTU (else at least 64)
    epsilon P          target block-failure probability: 1e-4, 0.0001, or
                       with a unit: 100000ppb, 100ppm, 0.01% (resolution 1e-9)
    m-cong N           cap on m while losses look like congestion, 0..255
    hold TIME          in-order release hold time at the receiver, up to 1s:
                       500us, 2ms, 1s (a bare number is microseconds)
    max-flows N        flows protected at once, on each side (sender flows
                       and receiver flows have N each: a peer's HELLOs
                       cannot use up this host's own protection)
    max-memory SIZE    retention and decode memory: 65536, 64K, 64M, 1G
                       (suffixes are powers of 1024)
    reporter ADDR[,ADDR...] | none
                       allow-listed Path Reporter addresses (IPv4/IPv6);
                       replaces the list. Repeat the key to add more;
                       'none' empties the list.
    peer PREFIX/LEN=ADDR[,PREFIX/LEN=ADDR...] | none
                       peer CREM function per destination prefix; replaces
                       the list. Repeat the key to add more; 'none' empties
                       the list (no flow is protected then).

    Keys may also be written as the YAML attribute names (hold-us,
    epsilon-ppb) or the config-file names (SymbolLen, MaxMemory).
    A set without reporter/peer leaves those lists alone; 'none' cannot be
    combined with other values of the same key.",
        after_long_help = const_format_set()
    )]
    Set {
        /// KEY VALUE pairs
        #[arg(value_name = "KEY VALUE", num_args = 1.., allow_hyphen_values = true, required = true)]
        args: Vec<String>,
    },

    /// Show the counters, watch them, or reset them
    #[command(
        long_about = "\
Shows this namespace's counters (stats-get), in sections:

    hooks (RoCEv2 packets)   RoCEv2 packets seen at LOCAL_IN, FORWARD and
                             LOCAL_OUT; of those, sources (a new PSN),
                             non-sources (ACK/NAK, READ responses, CNP) and
                             malformed ones (UDP 4791, BTH did not parse)
    flows and messages       flows set up; CREM datagrams received on the
                             CREM port and CREM messages sent
    drops                    flows left unprotected (max-flows or creation
                             queue full, out of memory); packets or symbols
                             not kept (max-memory); packets left unprotected
                             (could not be linearised); CREM datagrams
                             dropped (undecodable, not from the flow's peer,
                             no such flow); CREM messages not sent
    now (gauges)             flows in the table and octets they hold now
    flow totals, ...         the counters of all flows since the last reset,
                             flows gone since included, by side: sender
                             (CSF), receiver (CRF), messages and memory
    messages by type         a table TYPE, IN, OUT of the CREM socket's
                             messages by CREM message type (repair, hello,
                             ..., other), then one of the flow totals';
                             only types counted at least once are listed
                             ('none' if no type is); absent with a module
                             that does not count by type

With --watch, samples them every SECS seconds and prints the rate of each
counter since the previous sample (gauges get none; the by-type tables get
IN/S and OUT/S columns; with -j: one JSON object per sample and line).
'stats reset' zeroes them (stats-reset, needs CAP_NET_ADMIN); the gauges
reflect the flows that exist and stay.",
        after_long_help = stats_help()
    )]
    Stats {
        /// Sample every SECS seconds until interrupted
        #[arg(long, value_name = "SECS")]
        watch: Option<f64>,
        /// With --watch: stop after N samples
        #[arg(long, value_name = "N", requires = "watch")]
        count: Option<u64>,
        #[command(subcommand)]
        action: Option<StatsAction>,
    },

    /// Print configuration and flow notifications as they happen
    #[command(
        long_about = "\
Subscribes to the family's \"events\" multicast group and prints every
notification of this namespace as it arrives, one line each:

    config-changed   the configuration changed (config-set): the new one
    flow-up          a flow was set up: ID, side, addresses, destination
                     QP, peer and state
    flow-down        a flow was removed (flow del, port change, role
                     disabled), with its last state; no notification is
                     sent for the flows of a namespace being deleted
    flow-change      a flow event: its circuit breaker tripped or cleared
                     (CSF), or the peer sent CLOSE (with the reason: 0
                     normal, 1 flow ended, 2 parameter synchronization
                     failed, 3 resources exhausted, 4 circuit breaker)

With -j, one JSON object per line (even with --pretty):
{\"event\": \"config-changed\", \"config\": {...}} or
{\"event\": \"flow-up\" | \"flow-down\" | \"flow-change\", \"flow\": FLOW}, FLOW as in
'crem-ctl flow --help'. Output is flushed after each event, so it can be
piped. A notification the kernel could not send (out of memory) is counted
in the drop-notify counter of 'crem-ctl stats'. The socket asks for an
8 MiB receive buffer (past net.core.rmem_max with CAP_NET_ADMIN); if a
burst still overflows it, the kernel drops notifications for this
listener: crem-ctl says so on standard error, prints {\"event\": \"lost\"}
with -j (what the reader knows may be stale: read 'crem-ctl -j flow'),
and goes on listening. Joining the group needs
CAP_NET_ADMIN over the namespace (the flow notifications carry Flow IDs).",
        after_long_help = const_format_read()
    )]
    Monitor {
        /// Exit after N notifications (of any kind)
        #[arg(long, value_name = "N")]
        count: Option<u64>,
    },

    /// List protected flows, show one with its counters
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
so 'flow show ID' needs it too). A dump the kernel flags as
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
        after_long_help = flow_help()
    )]
    Flow {
        #[command(subcommand)]
        action: Option<FlowAction>,
    },

    /// Apply a configuration file ([CREM] and [Peer] sections)
    #[command(
        long_about = "\
Applies a configuration file in one atomic config-set, in the spirit of
'wg setconf'. FILE may be - or /dev/stdin.

    # comments start with # or ;
    [CREM]
    Port = 50000
    Role = gateway
    Recovery = coded
    Adaptive = on
    K = 32
    M = 2
    SymbolLen = 0
    Epsilon = 1e-4
    MCong = 1
    Hold = 0
    MaxFlows = 1024
    MaxMemory = 64M
    Reporter = 198.51.100.1, 2001:db8::1

    [Peer]
    Prefix = 203.0.113.0/24
    Address = 198.51.100.2

The [CREM] keys are those of 'crem-ctl set' (case-insensitive; SymbolLen,
symbol-len and symbol_len are the same key) with the same value syntax.

The file is applied as a change, like 'crem-ctl set': keys not in the file
keep their values, and so do the lists. Reporter lines replace the reporter
list and [Peer] sections the peer list only when the file has them; a file
with only 'K = 16' changes k and nothing else. To empty a list, say so in
[CREM]: 'Reporter = none', 'Peer = none' (no flow is protected without
peers). This differs from 'wg setconf', which replaces the peer list
whatever the file holds: a partial file here never drops protection by
accident. 'crem-ctl showconf' writes every key, and 'none' for an empty
list, so applying its output restores the whole configuration:
'crem-ctl showconf | crem-ctl setconf /dev/stdin' changes nothing.",
        after_long_help = EXIT_STATUS
    )]
    Setconf {
        /// The configuration file (- for standard input)
        file: PathBuf,
    },

    /// Print the configuration as a file for setconf
    #[command(
        long_about = "\
Prints the current configuration in the format of 'crem-ctl setconf' (see its
--help), every key included; an empty list as 'Reporter = none' or
'Peer = none', so that setconf of the output empties it again. With -j,
prints what '-j show config' prints.",
        after_long_help = EXIT_STATUS
    )]
    Showconf,

    /// Offline FEC: repair symbols from hex payloads, recover lost sources
    #[command(after_long_help = FEC_HELP)]
    Fec {
        #[command(subcommand)]
        action: FecAction,
    },

    /// Pretty-print CREM messages: hex, tcpdump -x text, or a capture (-r)
    #[command(
        long_about = capture::DECODE_ABOUT,
        after_long_help = capture::DECODE_HELP
    )]
    Decode {
        /// Hex (several words are joined), - (stdin) or @FILE
        #[arg(
            value_name = "INPUT",
            required_unless_present = "read",
            conflicts_with = "read"
        )]
        input: Vec<String>,
        /// Read a pcap or pcapng capture (- for standard input)
        #[arg(short = 'r', long = "read", value_name = "FILE")]
        read: Option<PathBuf>,
        /// Capture: decode the datagrams from or to this UDP port
        #[arg(long, value_name = "N")]
        port: Option<u16>,
        /// Capture: a header line, then the fields one per line
        #[arg(short = 'v', long)]
        verbose: bool,
    },

    /// Parse RoCEv2 packets and check their ICRC: hex, tcpdump -x text, or -r
    #[command(
        long_about = capture::ROCE_ABOUT,
        after_long_help = capture::ROCE_HELP
    )]
    Roce {
        /// Hex (several words are joined), - (stdin) or @FILE
        #[arg(
            value_name = "INPUT",
            required_unless_present = "read",
            conflicts_with = "read"
        )]
        input: Vec<String>,
        /// Read a pcap or pcapng capture (- for standard input)
        #[arg(short = 'r', long = "read", value_name = "FILE")]
        read: Option<PathBuf>,
        /// Capture: a header line, then the one-packet output
        #[arg(short = 'v', long)]
        verbose: bool,
    },

    /// Print a shell completion script
    #[command(long_about = "\
Prints a completion script for SHELL on standard output, e.g.
    crem-ctl completions bash > /etc/bash_completion.d/crem-ctl
    crem-ctl completions zsh > \"${fpath[1]}/_crem-ctl\"
    crem-ctl completions fish > ~/.config/fish/completions/crem-ctl.fish")]
    Completions {
        #[arg(value_enum)]
        shell: CompletionShell,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Subcommand, Debug)]
enum StatsAction {
    /// Reset the counters to zero (needs CAP_NET_ADMIN)
    Reset,
}

#[derive(Subcommand, Debug)]
enum FlowAction {
    /// List the protected flows, one line each (flow-get dump)
    #[command(after_long_help = flow_help())]
    List,
    /// Show one flow with all its attributes and counters (flow-get)
    #[command(after_long_help = flow_help())]
    Show {
        /// Flow ID
        id: String,
        /// side csf|crf, peer ADDR: which flow, if several have the ID
        #[arg(value_name = "KEY VALUE", num_args = 0..)]
        sel: Vec<String>,
    },
    /// Remove a protected flow, closing it toward the peer (flow-del)
    #[command(after_long_help = flow_help())]
    Del {
        /// Flow ID
        id: String,
        /// side csf|crf, peer ADDR: which flow, if several have the ID
        #[arg(value_name = "KEY VALUE", num_args = 0..)]
        sel: Vec<String>,
    },
    /// Set up a sender flow ahead of its traffic and print it (flow-new)
    #[command(
        long_about = "\
Sets up one sender (csf) flow ahead of its traffic (flow-new, needs
CAP_NET_ADMIN): the direction SRC -> DST of an RDMA connection, toward
destination queue pair N. It prints the new flow as 'crem-ctl flow show'
does (with -j: {\"flow\": [FLOW]}).

    crem-ctl flow add SRC DST qp N [kind requests|responses] [k N m N]

    SRC, DST           the connection's IPv4 addresses (flows are IPv4 only
                       in this version)
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
        after_long_help = flow_add_help()
    )]
    Add {
        /// Source IPv4 address of the RDMA connection
        src: String,
        /// Destination IPv4 address of the RDMA connection
        dst: String,
        /// qp N (required); kind requests|responses; k N m N
        // No allow_hyphen_values: a trailing -j/-p stays a global flag.
        #[arg(value_name = "KEY VALUE", num_args = 0..)]
        args: Vec<String>,
    },
    /// Zero one flow's counters (flow-reset)
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
        after_long_help = flow_reset_help()
    )]
    Reset {
        /// Flow ID
        id: String,
        /// side csf|crf, peer ADDR: which flow, if several have the ID
        #[arg(value_name = "KEY VALUE", num_args = 0..)]
        sel: Vec<String>,
    },
    /// Pin a sender flow's k and m, or hand it back to the policy (flow-set)
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
        after_long_help = flow_set_help()
    )]
    Set {
        /// Flow ID
        id: String,
        /// side csf, peer ADDR (which flow); k N m N, or adaptive
        // No allow_hyphen_values: a trailing -j/-p stays a global flag.
        #[arg(value_name = "KEY VALUE", num_args = 0..)]
        args: Vec<String>,
    },
}

const FEC_HELP: &str = "\
I/O FORMAT:
    encode reads the block's source packets on standard input as hex UDP
    payloads, one per line: position j = line j, an empty line is an absent
    position ('0x' is a present zero-length payload), k = the number of
    lines (1..=255). It prints one line 'I HEX' per repair symbol (HEX = the
    T-octet repair symbol, lower case).
    decode reads lines
        S J [HEX]                a received source payload at position J
                                 (no HEX: a zero-length payload)
        R I HEX [over=J,J,...]   a repair symbol with Repair Index I, over
                                 every present position unless over= is given
    and prints 'J HEX' (the payload, unpadded) for every source it recovers,
    sorted by J. The source symbol of payload P is uint16(len(P)) || P ||
    zero padding to T octets, so payloads hold at most T-2 octets.

JSON (-j):
    encode prints {\"repair\": [{\"index\": I, \"symbol\": HEX}, ...]}, decode
    {\"source\": [{\"position\": J, \"payload\": HEX}, ...]}; -p indents.

EXAMPLE:
    printf '%s\\n' 52444d412d504b542d30 52444d412d504b542d31 \\
        52444d412d504b542d32 52444d412d504b542d33 |
        crem-ctl fec encode --symbol-len 16 --repair 0,1
    # 0 001ef6ccd7c377f0ddfc774c00000000
    # 1 001ef6ccd7c377f0ddfc774f00000000
    printf 'S 3 52444d412d504b542d33\\nR 0 001e...\\nR 1 001e...\\n' |
        crem-ctl fec decode --k 4 --symbol-len 16 --absent 2

EXIT STATUS:
    0 success; 1 cannot decode (too few symbols, inconsistent symbols);
    2 usage error: an argument or input line is wrong (out of range, given
    twice, an absent position, too long for T, no input), named with the
    allowed range; nothing is computed.";

#[derive(Subcommand, Debug)]
enum FecAction {
    /// Compute repair symbols from hex source payloads on standard input
    #[command(
        long_about = "\
Reads the block's source packets on standard input, one hex UDP payload per
line (line j = position j, an empty line = an absent position, k = the
number of lines), and prints 'I HEX' for every Repair Index I of --repair:
the T-octet repair symbol, the sum over every present position, or over the
set L of --over (a coded retransmission). crem-ctl's source symbol is
uint16(len(P)) || P || zero padding to T (crem-core's encoder).",
        after_long_help = FEC_HELP
    )]
    Encode {
        /// Symbol length T in octets, 2..=65535 (payloads may be up to T-2 octets)
        #[arg(long = "symbol-len", value_name = "T", value_parser = symbol_len_parser())]
        symbol_len: u16,
        /// Repair Indices to compute
        #[arg(long, value_name = "I[,I...]", value_delimiter = ',', required = true)]
        repair: Vec<u8>,
        /// Sum over these positions only (coded retransmission set L)
        #[arg(long, value_name = "J[,J...]", value_delimiter = ',')]
        over: Option<Vec<u8>>,
        /// FEC scheme: cauchy (scheme 1) or xor (scheme 2)
        #[arg(long, default_value = "cauchy", value_parser = ["cauchy", "xor"])]
        scheme: String,
    },
    /// Recover lost source payloads from 'S'/'R' lines on standard input
    #[command(
        long_about = "\
Reads 'S J [HEX]' (a received source payload) and 'R I HEX [over=J,J,...]' (a
repair symbol, over every present position unless over= is given) lines on
standard input and prints 'J HEX' (the payload, unpadded) for every present
source it recovers, sorted by J (crem-core's decoder). Exits 1 when the
symbols do not suffice or are inconsistent (e.g. a recovered length prefix
larger than T-2).",
        after_long_help = FEC_HELP
    )]
    Decode {
        /// Block size k, 1..=255
        #[arg(long, value_parser = clap::value_parser!(u8).range(1..))]
        k: u8,
        /// Symbol length T in octets, 2..=65535
        #[arg(long = "symbol-len", value_name = "T", value_parser = symbol_len_parser())]
        symbol_len: u16,
        /// Absent positions (no source packet there)
        #[arg(long, value_name = "J[,J...]", value_delimiter = ',')]
        absent: Vec<u8>,
        /// FEC scheme: cauchy (scheme 1) or xor (scheme 2)
        #[arg(long, default_value = "cauchy", value_parser = ["cauchy", "xor"])]
        scheme: String,
    },
}

/// --symbol-len: a source symbol holds its 2-octet length prefix, and T is
/// a u16 on the wire.
fn symbol_len_parser() -> clap::builder::RangedI64ValueParser<u16> {
    clap::value_parser!(u16).range(crem_core::fec::LENGTH_PREFIX as i64..)
}

// clap's attributes need &'static str: build the combined help texts once.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}
fn const_format_read() -> &'static str {
    leak(format!("{JSON_NOTE}\n\n{EXIT_STATUS}"))
}
fn stats_help() -> &'static str {
    leak(format!(
        "EXAMPLES:\n    crem-ctl stats\n    crem-ctl stats --watch 1 --count 10\n    \
         crem-ctl -j stats | jq .stats.totals.restored\n\n\
         {STATS_JSON}\n{FLOW_STATS_KEYS}\n\n{EXIT_STATUS}"
    ))
}
fn flow_help() -> &'static str {
    leak(format!(
        "EXAMPLES:\n    crem-ctl flow\n    crem-ctl flow show 7\n    crem-ctl -j flow\n    \
         crem-ctl flow add 192.0.2.1 203.0.113.1 qp 17\n    crem-ctl flow reset 7\n\n\
         {FLOW_JSON}\n{FLOW_STATS_KEYS}\n\n{EXIT_STATUS}"
    ))
}
fn flow_add_help() -> &'static str {
    leak(format!(
        "EXAMPLES:\n    crem-ctl flow add 192.0.2.1 203.0.113.1 qp 17\n    \
         crem-ctl flow add 192.0.2.1 203.0.113.1 qp 0x11 kind responses k 16 m 2\n    \
         crem-ctl -j flow add 192.0.2.1 203.0.113.1 qp 17 | jq '.flow[0].state'\n\n\
         {FLOW_JSON}\n{FLOW_STATS_KEYS}\n\n{EXIT_STATUS}"
    ))
}
fn flow_set_help() -> &'static str {
    leak(format!(
        "EXAMPLES:\n    crem-ctl flow set 7 k 32 m 4\n    \
         crem-ctl flow set 7 side csf peer 198.51.100.2 adaptive\n\n{EXIT_STATUS}"
    ))
}
fn flow_reset_help() -> &'static str {
    leak(format!(
        "EXAMPLES:\n    crem-ctl flow reset 7\n    \
         crem-ctl flow reset 7 side crf peer 198.51.100.2\n\n{EXIT_STATUS}"
    ))
}
fn const_format_show() -> &'static str {
    leak(format!(
        "EXAMPLES:\n    crem-ctl show\n    crem-ctl show flows\n    crem-ctl show 7 side crf\n    crem-ctl -j show config\n\n{JSON_NOTE}\n\n{EXIT_STATUS}"
    ))
}
fn const_format_set() -> &'static str {
    leak(format!(
        "EXAMPLES:\n    crem-ctl set port 50000 role host\n    crem-ctl set k 16 m 4 epsilon 1e-5 hold 2ms\n    \
         crem-ctl set reporter 198.51.100.1,2001:db8::1\n    \
         crem-ctl set peer 203.0.113.0/24=198.51.100.2 peer 2001:db8:1::/48=2001:db8::2\n\n{EXIT_STATUS}"
    ))
}

/// A failure, with its exit status.
enum Fail {
    Usage(String),
    Failed(String),
    Nl(nl::Error),
}

impl From<nl::Error> for Fail {
    fn from(e: nl::Error) -> Self {
        Fail::Nl(e)
    }
}

type Res<T = ()> = Result<T, Fail>;

/// Writes to standard output; a closed pipe ends the program quietly.
fn out(s: &str) {
    let mut o = io::stdout().lock();
    if let Err(e) = o.write_all(s.as_bytes()).and_then(|_| o.flush()) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("crem-ctl: stdout: {e}");
        std::process::exit(1);
    }
}

fn json<T: serde::Serialize>(v: &T, pretty: bool) -> String {
    let mut s = if pretty {
        serde_json::to_string_pretty(v)
    } else {
        serde_json::to_string(v)
    }
    .expect("serializable");
    s.push('\n');
    s
}

fn get_config(c: &mut Conn) -> Res<Config> {
    let r = c.request(CMD_CONFIG_GET, vec![], false)?;
    let nest = r
        .iter()
        .find_map(|m| m.nest(CMD_A_CONFIG))
        .ok_or_else(|| Fail::Failed("config-get reply without a config attribute".into()))?;
    Ok(Config::from_attrs(nest, true))
}

fn get_stats(c: &mut Conn) -> Res<Stats> {
    let r = c.request(CMD_STATS_GET, vec![], false)?;
    let nest = r
        .iter()
        .find_map(|m| m.nest(CMD_A_STATS))
        .ok_or_else(|| Fail::Failed("stats-get reply without a stats attribute".into()))?;
    Ok(Stats::from_attrs(nest))
}

fn get_flows(c: &mut Conn) -> Res<Vec<Flow>> {
    let r = c.dump_consistent(CMD_FLOW_GET, vec![])?;
    Ok(r.iter()
        .filter_map(|m| m.nest(CMD_A_FLOW))
        .map(Flow::from_attrs)
        .collect())
}

/// The "flow" nest of a request that names one flow (flow-get, -del,
/// -reset, -set).
fn sel_attrs(sel: &FlowSel) -> Vec<attr::Attr> {
    let mut v = vec![attr::Attr::u32(FLOW_ID, sel.id)];
    if let Some(s) = sel.side {
        v.push(attr::Attr::u8(FLOW_SIDE, s));
    }
    if let Some(std::net::IpAddr::V4(a)) = sel.peer {
        v.push(attr::Attr::bytes(FLOW_PEER, a.octets().to_vec()));
    }
    v
}

fn sel_request(sel: &FlowSel) -> Vec<attr::Attr> {
    vec![attr::Attr::nest(CMD_A_FLOW, sel_attrs(sel))]
}

/// Whether dumped flow `f` is the one `sel` names.
fn sel_matches(sel: &FlowSel, f: &Flow) -> bool {
    f.id == Some(sel.id)
        && sel
            .side
            .is_none_or(|s| f.side.is_some_and(|x| x.value == s))
        && sel.peer.is_none_or(|p| {
            f.peer
                .as_ref()
                .is_some_and(|x| x.0 == model::Addr::from(p).0)
        })
}

/// flow-set's request: the selection, then k N m N (pin) or adaptive.
fn flow_set_request(id: &str, args: &[String]) -> Res<Vec<attr::Attr>> {
    let set = FlowSet::parse(id, args).map_err(Fail::Usage)?;
    let mut nest = sel_attrs(&set.sel);
    match set.pin {
        Pin::Fixed { k, m } => {
            nest.push(attr::Attr::u8(FLOW_K, k));
            nest.push(attr::Attr::u8(FLOW_M, m));
        }
        Pin::Adaptive => nest.push(attr::Attr::u8(FLOW_PINNED, 0)),
    }
    Ok(vec![attr::Attr::nest(CMD_A_FLOW, nest)])
}

/// flow-new's request: SRC DST, then qp N [kind requests|responses]
/// [k N m N], checked here so that nothing is sent on a usage error.
fn flow_new_request(src: &str, dst: &str, args: &[String]) -> Res<Vec<attr::Attr>> {
    let f = FlowNew::parse(src, dst, args).map_err(Fail::Usage)?;
    let mut nest = vec![
        attr::Attr::bytes(FLOW_SRC, f.src.octets().to_vec()),
        attr::Attr::bytes(FLOW_DST, f.dst.octets().to_vec()),
        attr::Attr::u32(FLOW_DEST_QP, f.dest_qp),
    ];
    if let Some((k, m)) = f.k_m {
        nest.push(attr::Attr::u8(FLOW_K, k));
        nest.push(attr::Attr::u8(FLOW_M, m));
    }
    if let Some(kind) = f.kind {
        nest.push(attr::Attr::u8(FLOW_KIND_ATTR, kind));
    }
    Ok(vec![attr::Attr::nest(CMD_A_FLOW, nest)])
}

/// What 'show' was asked for: a part, or one flow.
#[derive(Debug, PartialEq, Eq)]
enum Show {
    Part(ShowWhat),
    Flow(FlowSel),
}

/// 'show [config|stats|flows]' or 'show ID [side csf|crf] [peer ADDR]'.
fn parse_show(what: &str, sel: &[String]) -> Res<Show> {
    if let Ok(p) = ShowWhat::from_str(what, true) {
        if !sel.is_empty() {
            return Err(Fail::Usage(format!(
                "'show {what}' takes nothing more (got '{}')",
                sel.join(" ")
            )));
        }
        return Ok(Show::Part(p));
    }
    if what.starts_with(|c: char| c.is_ascii_digit()) {
        return FlowSel::parse(what, sel)
            .map(Show::Flow)
            .map_err(Fail::Usage);
    }
    Err(Fail::Usage(format!(
        "show: '{what}' is not config, stats, flows or a flow ID"
    )))
}

/// 'flow show ID ...' and 'show ID ...': one flow, every attribute.
fn show_one_flow(sel: &FlowSel, j: bool, pretty: bool) -> Res {
    let mut c = Conn::open()?;
    let fl = show_flows(&mut c, sel)?;
    out(&if j {
        json(&serde_json::json!({ "flow": fl }), pretty)
    } else {
        let t: Vec<String> = fl.iter().map(output::flow_detail).collect();
        t.join("\n")
    });
    Ok(())
}

/// The flows 'flow show' prints: flow-get's do, or the dump filtered here
/// when the module has no do or several flows have the ID.
fn show_flows(c: &mut Conn, sel: &FlowSel) -> Res<Vec<Flow>> {
    if c.family.has_do(CMD_FLOW_GET) {
        match c.request(CMD_FLOW_GET, sel_request(sel), false) {
            Ok(r) => {
                return Ok(r
                    .iter()
                    .filter_map(|m| m.nest(CMD_A_FLOW))
                    .map(Flow::from_attrs)
                    .collect())
            }
            // ENOTUNIQ: several flows have the ID; EOPNOTSUPP: no do.
            Err(nl::Error::Kernel { errno, .. }) if errno == 76 || errno == 95 => {}
            Err(e) => return Err(e.into()),
        }
    }
    let fl: Vec<Flow> = get_flows(c)?
        .into_iter()
        .filter(|f| sel_matches(sel, f))
        .collect();
    if fl.is_empty() {
        return Err(Fail::Failed(format!("no flow with id {}", sel.id)));
    }
    Ok(fl)
}

fn set_config(c: &mut Conn, cfg: &Config) -> Res {
    c.request(
        CMD_CONFIG_SET,
        vec![attr::Attr::nest(CMD_A_CONFIG, cfg.to_attrs())],
        false,
    )?;
    Ok(())
}

/// Reads a file, or standard input for "-".
fn read_input(path: &std::path::Path) -> Res<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut v = Vec::new();
        io::stdin()
            .read_to_end(&mut v)
            .map_err(|e| Fail::Usage(format!("standard input: {e}")))?;
        Ok(v)
    } else {
        std::fs::read(path).map_err(|e| Fail::Usage(format!("{}: {e}", path.display())))
    }
}

/// One sample of 'stats --watch SECS': the counters with their rates since
/// `prev` (the previous sample and the seconds since it), or with -j the
/// sample as one JSON object on one line, even with --pretty, as monitor
/// prints events: a stream is read a line at a time (jq, a log).
fn watch_sample(st: &Stats, prev: Option<(&Stats, f64)>, secs: f64, j: bool) -> String {
    if j {
        return json(&serde_json::json!({ "stats": st }), false);
    }
    let (prev, dt) = match prev {
        Some((p, dt)) => (Some(p), dt),
        None => (None, secs),
    };
    format!(
        "stats (every {secs}s; counter, rate):\n{}\n",
        output::stats_rates(st, prev, dt)
    )
}

/// Prints fec's (number, octets) items as lines, or with -j as JSON named
/// by `keys` (see [`fec::json_items`]).
fn print_fec(items: &[(u8, Vec<u8>)], keys: [&str; 3], j: bool, pretty: bool) {
    out(&if j {
        json(&fec::json_items(keys, items), pretty)
    } else {
        fec::format_lines(items)
    });
}

/// Standard input as text.
fn stdin_text() -> Res<String> {
    String::from_utf8(read_input(std::path::Path::new("-"))?)
        .map_err(|_| Fail::Usage("standard input: not UTF-8 text".into()))
}

/// HEX [HEX...], - (hex on stdin) or @FILE (hex in a file) → its text.
fn input_text(args: &[String]) -> Res<String> {
    let arg = args.join(" ");
    Ok(if arg == "-" {
        String::from_utf8_lossy(&read_input(std::path::Path::new("-"))?).into_owned()
    } else if let Some(f) = arg.strip_prefix('@') {
        String::from_utf8_lossy(&read_input(std::path::Path::new(f))?).into_owned()
    } else {
        arg
    })
}

/// The octets of `input_text`'s text (nonempty).
fn hex_bytes(text: &str) -> Res<Vec<u8>> {
    let b = hex::decode(text).map_err(|e| Fail::Usage(format!("input is not hex: {e}")))?;
    if b.is_empty() {
        return Err(Fail::Usage("empty input".into()));
    }
    Ok(b)
}

fn run(cli: Cli) -> Res {
    let (j, pretty) = (cli.json, cli.pretty);
    match cli.cmd.unwrap_or(Cmd::Show {
        what: None,
        sel: vec![],
    }) {
        Cmd::Show { what, sel } => {
            let what = match what.as_deref().map(|w| parse_show(w, &sel)).transpose()? {
                Some(Show::Flow(sel)) => return show_one_flow(&sel, j, pretty),
                Some(Show::Part(p)) => Some(p),
                None => None,
            };
            let mut c = Conn::open()?;
            let mut obj = serde_json::Map::new();
            let mut text = String::new();
            if what.is_none() || what == Some(ShowWhat::Config) {
                let cfg = get_config(&mut c)?;
                text.push_str(&output::config(&cfg));
                obj.insert("config".into(), serde_json::to_value(&cfg).expect("json"));
            }
            if what.is_none() || what == Some(ShowWhat::Stats) {
                let st = get_stats(&mut c)?;
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&output::stats(&st));
                obj.insert("stats".into(), serde_json::to_value(&st).expect("json"));
            }
            if what.is_none() || what == Some(ShowWhat::Flows) {
                let fl = get_flows(&mut c)?;
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&output::flows(&fl));
                obj.insert("flow".into(), serde_json::to_value(&fl).expect("json"));
            }
            out(&if j { json(&obj, pretty) } else { text });
        }
        Cmd::Set { args } => {
            let cfg = parse::parse_set_args(&args).map_err(Fail::Usage)?;
            let mut c = Conn::open()?;
            set_config(&mut c, &cfg)?;
        }
        Cmd::Stats {
            watch: None,
            action: Some(StatsAction::Reset),
            ..
        } => {
            let mut c = Conn::open()?;
            c.request(CMD_STATS_RESET, vec![], false)?;
        }
        Cmd::Stats {
            action: Some(_), ..
        } => {
            return Err(Fail::Usage("--watch does not go with 'stats reset'".into()));
        }
        Cmd::Stats {
            watch: None,
            action: None,
            ..
        } => {
            let mut c = Conn::open()?;
            let st = get_stats(&mut c)?;
            out(&if j {
                json(&serde_json::json!({ "stats": st }), pretty)
            } else {
                output::stats(&st)
            });
        }
        Cmd::Stats {
            watch: Some(secs),
            count,
            action: None,
        } => {
            if !(secs.is_finite() && secs > 0.0) {
                return Err(Fail::Usage(format!("--watch {secs}: expected seconds > 0")));
            }
            let mut c = Conn::open()?;
            let mut prev: Option<(Stats, Instant)> = None;
            let mut n = 0u64;
            loop {
                let st = get_stats(&mut c)?;
                let now = Instant::now();
                let since = prev
                    .as_ref()
                    .map(|p| (&p.0, now.duration_since(p.1).as_secs_f64()));
                out(&watch_sample(&st, since, secs, j));
                prev = Some((st, now));
                n += 1;
                if count.is_some_and(|c| n >= c) {
                    break;
                }
                std::thread::sleep(Duration::from_secs_f64(secs));
            }
        }
        Cmd::Monitor { count } => {
            let mut c = Conn::open()?;
            c.subscribe(MCGRP_EVENTS)?;
            let mut n = 0u64;
            while count.is_none_or(|c| n < c) {
                let msgs = match c.recv_notifications()? {
                    nl::Notifications::Msgs(m) => m,
                    nl::Notifications::Lost => {
                        eprintln!(
                            "crem-ctl: notifications lost: the socket's receive buffer \
                             overflowed; 'crem-ctl flow' shows the current state"
                        );
                        if j {
                            out(&json(&serde_json::json!({ "event": "lost" }), false));
                        }
                        continue;
                    }
                };
                for m in msgs {
                    let Some(event) = op_name(m.cmd) else {
                        continue;
                    };
                    // One object per line, even with --pretty.
                    let line = match m.cmd {
                        CMD_CONFIG_CHANGED => {
                            let cfg = m
                                .nest(CMD_A_CONFIG)
                                .map(|a| Config::from_attrs(a, true))
                                .unwrap_or_default();
                            if j {
                                json(&serde_json::json!({ "event": event, "config": cfg }), false)
                            } else {
                                format!("{event}: {}\n", output::config_line(&cfg))
                            }
                        }
                        CMD_FLOW_UP | CMD_FLOW_DOWN | CMD_FLOW_CHANGE => {
                            let f = m.nest(CMD_A_FLOW).map(Flow::from_attrs).unwrap_or_default();
                            if j {
                                json(&serde_json::json!({ "event": event, "flow": f }), false)
                            } else {
                                format!("{event}: {}\n", output::flow_line(&f))
                            }
                        }
                        _ => continue,
                    };
                    out(&line);
                    n += 1;
                    if count.is_some_and(|c| n >= c) {
                        break;
                    }
                }
            }
        }
        Cmd::Flow { action } => match action.unwrap_or(FlowAction::List) {
            FlowAction::List => {
                let mut c = Conn::open()?;
                let fl = get_flows(&mut c)?;
                out(&if j {
                    json(&serde_json::json!({ "flow": fl }), pretty)
                } else {
                    output::flows(&fl)
                });
            }
            FlowAction::Show { id, sel } => {
                show_one_flow(&FlowSel::parse(&id, &sel).map_err(Fail::Usage)?, j, pretty)?
            }
            FlowAction::Del { id, sel } => {
                let sel = FlowSel::parse(&id, &sel).map_err(Fail::Usage)?;
                let mut c = Conn::open()?;
                c.request(CMD_FLOW_DEL, sel_request(&sel), false)?;
            }
            FlowAction::Set { id, args } => {
                let req = flow_set_request(&id, &args)?;
                let mut c = Conn::open()?;
                c.request(CMD_FLOW_SET, req, false)?;
            }
            FlowAction::Add { src, dst, args } => {
                let req = flow_new_request(&src, &dst, &args)?;
                let mut c = Conn::open()?;
                let r = c.request(CMD_FLOW_NEW, req, false)?;
                let f = r
                    .iter()
                    .find_map(|m| m.nest(CMD_A_FLOW))
                    .map(Flow::from_attrs)
                    .ok_or_else(|| {
                        Fail::Failed(
                            "flow-new: the kernel accepted the flow but replied without it \
                             (see 'crem-ctl flow')"
                                .into(),
                        )
                    })?;
                out(&if j {
                    json(&serde_json::json!({ "flow": [f] }), pretty)
                } else {
                    output::flow_detail(&f)
                });
            }
            FlowAction::Reset { id, sel } => {
                let sel = FlowSel::parse(&id, &sel).map_err(Fail::Usage)?;
                let mut c = Conn::open()?;
                c.request(CMD_FLOW_RESET, sel_request(&sel), false)?;
            }
        },
        Cmd::Setconf { file } => {
            let text = read_input(&file)?;
            let text = String::from_utf8(text)
                .map_err(|_| Fail::Usage(format!("{}: not UTF-8 text", file.display())))?;
            let cfg = conffile::parse(&text)
                .map_err(|e| Fail::Usage(format!("{}: {e}", file.display())))?;
            let mut c = Conn::open()?;
            set_config(&mut c, &cfg)?;
        }
        Cmd::Showconf => {
            let mut c = Conn::open()?;
            let cfg = get_config(&mut c)?;
            out(&if j {
                // The same values as JSON: what -j show config prints.
                json(&serde_json::json!({ "config": cfg }), pretty)
            } else {
                conffile::format(&cfg)
            });
        }
        Cmd::Fec {
            action:
                FecAction::Encode {
                    symbol_len,
                    repair,
                    over,
                    scheme,
                },
        } => {
            let scheme = fec::scheme_from_name(&scheme).map_err(Fail::Usage)?;
            let t = symbol_len.into();
            let sources = fec::parse_sources(&stdin_text()?, t).map_err(Fail::Usage)?;
            let reps =
                fec::encode(scheme, t, &sources, &repair, over.as_deref()).map_err(Fail::Usage)?;
            print_fec(&reps, ["repair", "index", "symbol"], j, pretty);
        }
        Cmd::Fec {
            action:
                FecAction::Decode {
                    k,
                    symbol_len,
                    absent,
                    scheme,
                },
        } => {
            let scheme = fec::scheme_from_name(&scheme).map_err(Fail::Usage)?;
            // The arguments first: a mistake there needs no input typed.
            let block =
                fec::Block::new(scheme, k, symbol_len.into(), &absent).map_err(Fail::Usage)?;
            let rx = fec::parse_symbols(&stdin_text()?, &block).map_err(Fail::Usage)?;
            let rec = fec::decode(&block, &rx).map_err(Fail::Failed)?;
            print_fec(&rec, ["source", "position", "payload"], j, pretty);
        }
        Cmd::Decode {
            input,
            read,
            port,
            verbose,
        } => {
            let mode = capture::Mode::Crem { port };
            let opts = capture::Opts {
                mode,
                json: j,
                verbose,
            };
            if let Some(b) = capture::input(&input, read, opts)? {
                let d = pretty::decode(&b).map_err(Fail::Failed)?;
                out(&if j { json(&d.json(), pretty) } else { d.text() });
            }
        }
        Cmd::Roce {
            input,
            read,
            verbose,
        } => {
            let opts = capture::Opts {
                mode: capture::Mode::Roce,
                json: j,
                verbose,
            };
            if let Some(b) = capture::input(&input, read, opts)? {
                let r = inspect::roce_report(&b).map_err(Fail::Failed)?;
                out(&if j {
                    json(&r, pretty)
                } else {
                    inspect::roce_text(&r)
                });
                if !r.icrc_ok {
                    return Err(Fail::Failed("ICRC mismatch".into()));
                }
            }
        }
        Cmd::Completions { shell } => {
            let sh = match shell {
                CompletionShell::Bash => clap_complete::Shell::Bash,
                CompletionShell::Zsh => clap_complete::Shell::Zsh,
                CompletionShell::Fish => clap_complete::Shell::Fish,
            };
            out(&completions::script(sh, &mut Cli::command()));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            let (msg, code) = match f {
                Fail::Usage(m) => (m, 2),
                Fail::Failed(m) => (m, 1),
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
    fn parses_commands() {
        let c = Cli::try_parse_from(["crem-ctl", "-j", "show", "config"]).unwrap();
        assert!(c.json);
        let show = |c: Cli| match c.cmd {
            Some(Cmd::Show { what, sel }) => what.map(|w| parse_show(&w, &sel)),
            other => panic!("{other:?}"),
        };
        assert!(matches!(show(c), Some(Ok(Show::Part(ShowWhat::Config)))));
        let c = Cli::try_parse_from(["crem-ctl", "show", "7", "side", "crf", "-j"]).unwrap();
        assert!(c.json);
        assert!(matches!(
            show(c),
            Some(Ok(Show::Flow(FlowSel {
                id: 7,
                side: Some(1),
                peer: None
            })))
        ));
        for bad in [
            &["show", "colour"][..],
            &["show", "stats", "side", "crf"],
            &["show", "0"],
        ] {
            let c = Cli::try_parse_from(std::iter::once("crem-ctl").chain(bad.iter().copied()))
                .unwrap();
            assert!(matches!(show(c), Some(Err(Fail::Usage(_)))), "{bad:?}");
        }
        let c = Cli::try_parse_from(["crem-ctl", "set", "epsilon", "1e-4", "k", "-1"]).unwrap();
        match c.cmd {
            Some(Cmd::Set { args }) => assert_eq!(args, ["epsilon", "1e-4", "k", "-1"]),
            other => panic!("{other:?}"),
        }
        let c = Cli::try_parse_from(["crem-ctl", "stats", "reset"]).unwrap();
        assert!(matches!(
            c.cmd,
            Some(Cmd::Stats {
                action: Some(StatsAction::Reset),
                ..
            })
        ));
        let c = Cli::try_parse_from(["crem-ctl", "show", "flow"]).unwrap();
        assert!(matches!(show(c), Some(Ok(Show::Part(ShowWhat::Flows)))));
        assert!(Cli::try_parse_from(["crem-ctl", "set"]).is_err());
        assert!(Cli::try_parse_from(["crem-ctl", "completions", "tcsh"]).is_err());
        let c = Cli::try_parse_from(["crem-ctl"]).unwrap();
        assert!(c.cmd.is_none());
    }

    #[test]
    fn flow_commands() {
        let c = Cli::try_parse_from(["crem-ctl", "-j", "flow"]).unwrap();
        assert!(c.json);
        assert!(matches!(c.cmd, Some(Cmd::Flow { action: None })));
        let c = Cli::try_parse_from(["crem-ctl", "flow", "show", "7"]).unwrap();
        match c.cmd {
            Some(Cmd::Flow {
                action: Some(FlowAction::Show { id, sel }),
            }) => {
                assert_eq!(id, "7");
                assert!(sel.is_empty());
            }
            other => panic!("{other:?}"),
        }
        let c = Cli::try_parse_from(["crem-ctl", "flow", "del", "9", "side", "crf"]).unwrap();
        match c.cmd {
            Some(Cmd::Flow {
                action: Some(FlowAction::Del { id, sel }),
            }) => {
                let s = FlowSel::parse(&id, &sel).unwrap();
                assert_eq!(
                    s,
                    FlowSel {
                        id: 9,
                        side: Some(1),
                        peer: None
                    }
                );
            }
            other => panic!("{other:?}"),
        }
        let c = Cli::try_parse_from([
            "crem-ctl",
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
        ])
        .unwrap();
        assert!(c.json);
        // -j also after the key/value pairs.
        let late = Cli::try_parse_from([
            "crem-ctl", "flow", "add", "10.0.0.1", "10.0.0.2", "qp", "1", "-j",
        ])
        .unwrap();
        assert!(late.json);
        match late.cmd {
            Some(Cmd::Flow {
                action: Some(FlowAction::Add { args, .. }),
            }) => assert_eq!(args, ["qp", "1"]),
            other => panic!("{other:?}"),
        }
        match c.cmd {
            Some(Cmd::Flow {
                action: Some(FlowAction::Add { src, dst, args }),
            }) => {
                assert_eq!((src.as_str(), dst.as_str()), ("192.0.2.1", "203.0.113.1"));
                assert_eq!(
                    args,
                    ["qp", "0x11", "kind", "responses", "k", "8", "m", "2"]
                );
            }
            other => panic!("{other:?}"),
        }
        let c = Cli::try_parse_from([
            "crem-ctl", "flow", "reset", "9", "side", "csf", "peer", "10.0.0.2",
        ])
        .unwrap();
        match c.cmd {
            Some(Cmd::Flow {
                action: Some(FlowAction::Reset { id, sel }),
            }) => {
                let s = FlowSel::parse(&id, &sel).unwrap();
                assert_eq!(
                    s,
                    FlowSel {
                        id: 9,
                        side: Some(0),
                        peer: Some("10.0.0.2".parse().unwrap())
                    }
                );
                // flow-reset's request: the selector nest, as flow-del's.
                assert_eq!(
                    sel_request(&s),
                    vec![attr::Attr::nest(
                        CMD_A_FLOW,
                        vec![
                            attr::Attr::u32(FLOW_ID, 9),
                            attr::Attr::u8(FLOW_SIDE, 0),
                            attr::Attr::bytes(FLOW_PEER, vec![10, 0, 0, 2]),
                        ]
                    )]
                );
            }
            other => panic!("{other:?}"),
        }
        for bad in [
            &["flow", "reset"][..],
            &["flow", "add"][..],
            &["flow", "add", "192.0.2.1"][..],
        ] {
            let argv = std::iter::once("crem-ctl").chain(bad.iter().copied());
            assert!(Cli::try_parse_from(argv).is_err(), "{bad:?}");
        }
        assert!(Cli::try_parse_from(["crem-ctl", "flow", "del"]).is_err());
        assert!(Cli::try_parse_from(["crem-ctl", "flow", "show"]).is_err());
        let c = Cli::try_parse_from(["crem-ctl", "-j", "stats"]).unwrap();
        assert!(matches!(
            c.cmd,
            Some(Cmd::Stats {
                watch: None,
                action: None,
                ..
            })
        ));
    }

    #[test]
    fn flow_selector() {
        let kv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let s = FlowSel::parse("7", &kv(&["peer", "10.0.0.2", "side", "csf"])).unwrap();
        // The request: flow { id 7, side 0, peer 10.0.0.2 }.
        assert_eq!(
            sel_request(&s),
            vec![attr::Attr::nest(
                CMD_A_FLOW,
                vec![
                    attr::Attr::u32(FLOW_ID, 7),
                    attr::Attr::u8(FLOW_SIDE, 0),
                    attr::Attr::bytes(FLOW_PEER, vec![10, 0, 0, 2]),
                ]
            )]
        );
        // Dump filtering (a module without flow-get's do).
        let f = Flow {
            id: Some(7),
            side: Some(model::EnumVal {
                names: SIDE,
                value: 1,
            }),
            peer: Some(model::Addr(vec![10, 0, 0, 2])),
            ..Flow::default()
        };
        assert!(!sel_matches(&s, &f), "side differs");
        let crf = FlowSel::parse("7", &kv(&["side", "crf"])).unwrap();
        assert!(sel_matches(&crf, &f));
        assert!(sel_matches(&FlowSel::parse("7", &[]).unwrap(), &f));
        assert!(!sel_matches(&FlowSel::parse("8", &[]).unwrap(), &f));
    }

    /// The JSON sections of `stats --help` and `flow --help` name every
    /// key that `-j stats` / `-j flow` can print (the attribute names).
    #[test]
    fn help_lists_every_json_key() {
        let mut cmd = Cli::command();
        let word = |help: &str, w: &str| {
            help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .any(|x| x == w)
        };
        let stats = cmd
            .find_subcommand_mut("stats")
            .unwrap()
            .render_long_help()
            .to_string();
        let flow = cmd
            .find_subcommand_mut("flow")
            .unwrap()
            .render_long_help()
            .to_string();
        let add = cmd
            .find_subcommand_mut("flow")
            .unwrap()
            .find_subcommand_mut("add")
            .unwrap()
            .render_long_help()
            .to_string();
        for (help, sets) in [
            (&stats, [&STATS_SET, &FLOW_STATS_SET, &MSG_TYPES_SET]),
            (&flow, [&FLOW_SET, &FLOW_STATS_SET, &MSG_TYPES_SET]),
            (&add, [&FLOW_SET, &FLOW_STATS_SET, &MSG_TYPES_SET]),
        ] {
            assert!(help.contains("JSON (-j):"), "{help}");
            for set in sets {
                for a in set.attrs.iter().filter(|a| a.ty != AttrType::Pad) {
                    assert!(
                        word(help, a.name),
                        "{}.{} missing in\n{help}",
                        set.name,
                        a.name
                    );
                }
            }
        }
        for e in FLOW_STATES
            .iter()
            .chain(LOSS_CLASS)
            .chain(BREAKER)
            .chain(SIDE)
        {
            assert!(word(&flow, e), "{e}");
        }
    }

    #[test]
    fn every_netlink_command_documents_exit_status() {
        let mut cmd = Cli::command();
        for name in [
            "show", "set", "stats", "monitor", "flow", "setconf", "showconf", "decode", "roce",
        ] {
            let sub = cmd.find_subcommand_mut(name).unwrap();
            let help = sub.render_long_help().to_string();
            assert!(help.contains("EXIT STATUS"), "{name}");
        }
        let flow = cmd.find_subcommand_mut("flow").unwrap();
        for name in ["list", "show", "del", "add", "reset", "set"] {
            let help = flow
                .find_subcommand_mut(name)
                .unwrap()
                .render_long_help()
                .to_string();
            assert!(help.contains("EXIT STATUS"), "flow {name}");
        }
    }

    #[test]
    fn flow_set_takes_a_trailing_json_flag() {
        let c = Cli::try_parse_from(["crem-ctl", "flow", "set", "7", "k", "8", "m", "2", "-j"])
            .unwrap();
        assert!(c.json);
        match c.cmd {
            Some(Cmd::Flow {
                action: Some(FlowAction::Set { args, .. }),
            }) => assert_eq!(args, ["k", "8", "m", "2"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flow_new_requests() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Everything: the nest in attribute order (src, dst, dest-qp, k, m,
        // kind), octet by octet as the kernel's policy reads it.
        let req = flow_new_request(
            "192.0.2.1",
            "203.0.113.1",
            &a(&["kind", "responses", "m", "2", "qp", "0x11", "k", "16"]),
        )
        .ok()
        .unwrap();
        assert_eq!(
            req,
            vec![attr::Attr::nest(
                CMD_A_FLOW,
                vec![
                    attr::Attr::bytes(FLOW_SRC, vec![192, 0, 2, 1]),
                    attr::Attr::bytes(FLOW_DST, vec![203, 0, 113, 1]),
                    attr::Attr::u32(FLOW_DEST_QP, 17),
                    attr::Attr::u8(FLOW_K, 16),
                    attr::Attr::u8(FLOW_M, 2),
                    attr::Attr::u8(FLOW_KIND_ATTR, 1),
                ]
            )]
        );
        let want: Vec<u8> = vec![
            52, 0, 3, 0x80, // CMD_A_FLOW | NLA_F_NESTED, 4 + 48
            8, 0, 3, 0, 192, 0, 2, 1, // src
            8, 0, 4, 0, 203, 0, 113, 1, // dst
            8, 0, 5, 0, 0x11, 0, 0, 0, // dest-qp 17
            5, 0, 9, 0, 16, 0, 0, 0, // k 16
            5, 0, 10, 0, 2, 0, 0, 0, // m 2
            5, 0, 21, 0, 1, 0, 0, 0, // kind responses
        ];
        assert_eq!(attr::encode(&req), want);
        assert_eq!(attr::decode(&CMD_SET, &want).unwrap(), req);

        // The minimum: no kind (the kernel's default, requests), no k/m.
        let req = flow_new_request("10.0.0.1", "10.0.0.2", &a(&["dest-qp", "16777215"]))
            .ok()
            .unwrap();
        assert_eq!(
            attr::encode(&req),
            vec![
                28, 0, 3, 0x80, // flow nest
                8, 0, 3, 0, 10, 0, 0, 1, // src
                8, 0, 4, 0, 10, 0, 0, 2, // dst
                8, 0, 5, 0, 0xff, 0xff, 0xff, 0, // dest-qp 0xffffff
            ]
        );
        // k + m = 255 and m 0 are fine; kind requests is sent as 0.
        let req = flow_new_request(
            "10.0.0.1",
            "10.0.0.2",
            &a(&["qp", "1", "k", "255", "m", "0", "kind", "requests"]),
        )
        .ok()
        .unwrap();
        let nest = req[0].as_nest().unwrap();
        assert_eq!(
            nest[3..].to_vec(),
            [
                attr::Attr::u8(FLOW_K, 255),
                attr::Attr::u8(FLOW_M, 0),
                attr::Attr::u8(FLOW_KIND_ATTR, 0),
            ]
        );
    }

    #[test]
    fn stats_watch_json_is_one_line_per_sample() {
        let nest = crate::model::tests::stats_nest();
        let st = Stats::from_attrs(&attr::decode(&STATS_SET, &nest).unwrap());
        let line = watch_sample(&st, Some((&st, 1.0)), 1.0, true);
        assert!(
            line.starts_with("{\"stats\":{\"roce-local-in\":5,"),
            "{line}"
        );
        assert_eq!(line.matches('\n').count(), 1, "{line}");
        assert!(line.ends_with("}}\n"), "{line}");
        // The text form keeps its header and rates.
        let text = watch_sample(&st, None, 2.0, false);
        assert!(
            text.starts_with("stats (every 2s; counter, rate):\n"),
            "{text}"
        );
    }

    #[test]
    fn flow_set_requests() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let req = flow_set_request("7", &a(&["side", "csf", "k", "8", "m", "1"])).ok();
        assert_eq!(
            req,
            Some(vec![attr::Attr::nest(
                CMD_A_FLOW,
                vec![
                    attr::Attr::u32(FLOW_ID, 7),
                    attr::Attr::u8(FLOW_SIDE, 0),
                    attr::Attr::u8(FLOW_K, 8),
                    attr::Attr::u8(FLOW_M, 1),
                ]
            )])
        );
        let req = flow_set_request("7", &a(&["adaptive"])).ok();
        assert_eq!(
            req,
            Some(vec![attr::Attr::nest(
                CMD_A_FLOW,
                vec![attr::Attr::u32(FLOW_ID, 7), attr::Attr::u8(FLOW_PINNED, 0)]
            )])
        );
    }
}
