//! `crem-ctl set KEY VALUE...`: changes configuration keys in one
//! config-set. The keys and their values are parse/config.rs's.

use crate::help;
use crate::nl::Conn;
use crate::parse::parse_set_args;
use crate::request::set_config;
use crate::{Fail, Res};

/// Change configuration keys (KEY VALUE [KEY VALUE...])
#[derive(clap::Args, Debug)]
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
    role ROLE          disabled | host (soft-RoCE shim) | gateway (forwarding),
                       or reporter: a Path Reporter only, the same as
                       'role disabled report on' (show prints both)
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
    report on|off      on: a Path Reporter, whatever the role: reports the
                       RoCEv2 packets this namespace drops itself to their
                       senders' CREM functions (PATH_REPORT), sent from the
                       CREM port, which it needs (bound even with role
                       disabled)
    node-id N|auto     the reporter's Node ID in its reports, 0..4294967295;
                       0 or auto: the namespace cookie's low 32 bits
    report-interval-us N
                       aggregation interval: a flow's drops are reported
                       together N us after its first, 1..1000000 (50)
    report-flow-gap-us N
                       least time between two reports about one flow, us,
                       0..10000000 (1000)
    report-port-rate N reports per second at most on each egress interface,
                       1..1000000 (10000), bursts of 64
    report-psns N      own dropped PSNs a report lists, 1..64 (64); more are
                       counted only, and the report is marked Truncated
    spare-flows N      flows kept made ahead on each side, 0..64 (8): a burst
                       of up to N new queue pairs is protected from its
                       first packet; beyond it, a flow is made by a work
                       item while its first packets pass unprotected. Each
                       spare is sized by max-bdp and charged to max-memory;
                       spares stop at half of max-memory, and a namespace
                       whose role is disabled keeps none
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
    Ranges the kernel checks (m, the report-* keys) are refused by it,
    with its reason.
    A set without reporter/peer leaves those lists alone; 'none' cannot be
    combined with other values of the same key.",
    after_long_help = help::after(
        &[
            "crem-ctl set port 50000 role host",
            "crem-ctl set k 16 m 4 epsilon 1e-5 hold 2ms",
            "crem-ctl set reporter 198.51.100.1,2001:db8::1",
            "crem-ctl set port 7470 role reporter node-id 1",
            "crem-ctl set report on report-interval-us 100 report-psns 32",
            "crem-ctl set peer 203.0.113.0/24=198.51.100.2 peer 2001:db8:1::/48=2001:db8::2",
        ],
        &[],
    )
)]
pub struct Args {
    /// KEY VALUE pairs
    #[arg(value_name = "KEY VALUE", num_args = 1.., allow_hyphen_values = true, required = true)]
    args: Vec<String>,
}

pub fn run(a: Args) -> Res {
    let cfg = parse_set_args(&a.args).map_err(Fail::Usage)?;
    let mut c = Conn::open()?;
    set_config(&mut c, &cfg)
}

#[cfg(test)]
mod tests {
    use crate::{Cli, Cmd};
    use clap::Parser;

    #[test]
    fn values_may_start_with_a_hyphen() {
        let c = Cli::try_parse_from(["crem-ctl", "set", "epsilon", "1e-4", "k", "-1"]).unwrap();
        match c.cmd {
            Some(Cmd::Set(a)) => assert_eq!(a.args, ["epsilon", "1e-4", "k", "-1"]),
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["crem-ctl", "set"]).is_err());
    }
}
