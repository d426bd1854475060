//! Every refusal text of config-set (and the k/m texts of the flow ops)
//! byte for byte, with its errno and the attribute it names, each produced
//! through `crem_core::ctl` as the kernel handler (`rust/netlink/config.rs`)
//! produces it. Each row keeps the C format string of the handler these
//! texts came from (`rust/glue/crem_nl.c`, checked against it until it was
//! removed in 9e2cff7) as the record of where they came from; the
//! fragments the VM tests assert are checked to be in the texts.

use crem_core::ctl::{self, *};
use crem_core::nl;

const PREFIX: &[u8] = &[203, 0, 113, 0];
const ADDR: &[u8] = &[198, 51, 100, 2];

/// One row: the C's format string (as in crem_nl.c, `__stringify`
/// expanded), the refusal as produced, and the text, errno and attribute
/// expected.
struct Row {
    c_format: &'static str,
    got: Refusal,
    text: &'static str,
    errno: ctl::Errno,
    at: Option<Field>,
}

fn refused(r: Result<impl std::fmt::Debug, Refusal>) -> Refusal {
    match r {
        Err(r) => r,
        Ok(v) => panic!("accepted: {v:?}"),
    }
}

/// config-set on the defaults: `f` makes the calls, then finish.
fn set(f: impl FnOnce(&mut Edit<'_>) -> Result<(), Refusal>) -> Refusal {
    let mut c = Config::DEFAULT;
    let mut e = Edit::new(&mut c);
    refused(f(&mut e).and_then(|()| e.finish().map(|_| ())))
}

fn cfg(id: u16) -> Option<Field> {
    Some(Field::Config(id))
}

fn rows() -> Vec<Row> {
    let mut v = vec![
        Row {
            c_format: "address must be 4 (IPv4) or 16 (IPv6) octets",
            // netlink.sh:60: a 5-octet reporter.
            got: set(|e| e.reporter(&[1, 2, 3, 4, 5])),
            text: "address must be 4 (IPv4) or 16 (IPv6) octets",
            errno: EINVAL,
            at: Some(Field::Reporter(0)),
        },
        Row {
            c_format: "duplicate peer prefix",
            got: set(|e| {
                e.peer(Some(PREFIX), Some(24), Some(ADDR))?;
                e.peer(Some(PREFIX), Some(24), Some(&[198, 51, 100, 3]))
            }),
            text: "duplicate peer prefix",
            errno: EEXIST,
            at: Some(Field::Peer(1)),
        },
        Row {
            c_format: "a peer needs prefix, prefix-len and addr",
            got: set(|e| e.peer(Some(PREFIX), None, Some(ADDR))),
            text: "a peer needs prefix, prefix-len and addr",
            errno: EINVAL,
            at: Some(Field::Peer(0)),
        },
        Row {
            c_format: "prefix-len is longer than the prefix's address",
            got: set(|e| e.peer(Some(PREFIX), Some(33), Some(ADDR))),
            text: "prefix-len is longer than the prefix's address",
            errno: EINVAL,
            at: Some(Field::PeerAttr(0, nl::PEER_PREFIX_LEN)),
        },
        Row {
            c_format: "prefix has host bits set beyond prefix-len",
            // netlink.sh:66: 203.0.113.7/24.
            got: set(|e| e.peer(Some(&[203, 0, 113, 7]), Some(24), Some(ADDR))),
            text: "prefix has host bits set beyond prefix-len",
            errno: EINVAL,
            at: Some(Field::PeerAttr(0, nl::PEER_PREFIX)),
        },
        Row {
            c_format: "peer address family differs from its prefix's",
            // crem-ctl.sh:113: 203.0.113.0/24=2001:db8::2.
            got: set(|e| {
                let v6: std::net::Ipv6Addr = "2001:db8::2".parse().unwrap();
                e.peer(Some(PREFIX), Some(24), Some(&v6.octets()))
            }),
            text: "peer address family differs from its prefix's",
            errno: EINVAL,
            at: Some(Field::PeerAttr(0, nl::PEER_ADDR)),
        },
        Row {
            c_format: "at most %d reporters",
            got: set(|e| {
                for i in 0..=MAX_REPORTERS as u8 {
                    e.reporter(&[10, 0, 0, i])?;
                }
                Ok(())
            }),
            text: "at most 16 reporters",
            errno: E2BIG,
            at: Some(Field::Reporter(16)),
        },
        Row {
            c_format: "at most %d peers",
            got: set(|e| {
                for i in 0..=MAX_PEERS as u8 {
                    e.peer(Some(&[10, i, 0, 0]), Some(16), Some(ADDR))?;
                }
                Ok(())
            }),
            text: "at most 32 peers",
            errno: E2BIG,
            at: Some(Field::Peer(32)),
        },
        Row {
            c_format: "set a CREM port before enabling a role (there is no default port)",
            // netlink.sh:43, crem-ctl.sh:109: role 1 alone.
            got: set(|e| {
                e.role(Role::Host);
                Ok(())
            }),
            text: "set a CREM port before enabling a role (there is no default port)",
            errno: EINVAL,
            at: cfg(nl::CONFIG_ROLE),
        },
        Row {
            c_format: "4791 is RoCEv2's own port: the CREM port must be another one",
            // checks.py:122.
            got: set(|e| {
                e.port(4791);
                Ok(())
            }),
            text: "4791 is RoCEv2's own port: the CREM port must be another one",
            errno: EINVAL,
            at: cfg(nl::CONFIG_PORT),
        },
        Row {
            c_format: "k + m must not exceed 255 (Repair Indices need i + k <= 255)",
            // netlink.sh:57, crem-ctl.sh:110-111 ("attribute config.m").
            got: set(|e| {
                e.k(200);
                e.m(100);
                Ok(())
            }),
            text: "k + m must not exceed 255 (Repair Indices need i + k <= 255)",
            errno: EINVAL,
            at: cfg(nl::CONFIG_M),
        },
        Row {
            c_format: "m must not exceed 16 (the largest m of this module: its repair accumulator's)",
            // checks.py:126.
            got: set(|e| {
                e.m(17);
                Ok(())
            }),
            text: "m must not exceed 16 (the largest m of this module: its repair accumulator's)",
            errno: EINVAL,
            at: cfg(nl::CONFIG_M),
        },
        Row {
            c_format: "symbol-len must be 0 (derived) or at least 64",
            // crem-ctl.sh:112.
            got: set(|e| {
                e.symbol_len(10);
                Ok(())
            }),
            text: "symbol-len must be 0 (derived) or at least 64",
            errno: EINVAL,
            at: cfg(nl::CONFIG_SYMBOL_LEN),
        },
        Row {
            c_format: "symbol-len must not exceed 1104 (the decode buffer's and the repair accumulator's symbols)",
            // checks.py:128.
            got: set(|e| {
                e.symbol_len(1105);
                Ok(())
            }),
            text: "symbol-len must not exceed 1104 (the decode buffer's and the repair accumulator's symbols)",
            errno: EINVAL,
            at: cfg(nl::CONFIG_SYMBOL_LEN),
        },
    ];
    // checks.py:148: symbol-len 1000, peer 10.8.0.0/16=10.9.0.2, a route of MTU 1000.
    let mut c = Config::DEFAULT;
    let mut e = Edit::new(&mut c);
    e.symbol_len(1000);
    e.peer(Some(&[10, 8, 0, 0]), Some(16), Some(&[10, 9, 0, 2]))
        .unwrap();
    let g = e.finish().unwrap();
    v.push(Row {
        c_format: "symbol-len %u: REPAIRs need MTU %u, the route to %pI4 has %u",
        got: refused(check_mtu(&c, g, |d| {
            (d == Addr::V4([10, 9, 0, 2])).then_some(1000)
        })),
        text: "symbol-len 1000: REPAIRs need MTU 1112, the route to 10.9.0.2 has 1000",
        errno: EMSGSIZE,
        at: cfg(nl::CONFIG_SYMBOL_LEN),
    });
    // checks.py:179-182: the initial netns has max-flows 8, max-memory 32 MiB.
    let lim = Limits {
        max_flows: 8,
        max_memory: 32 << 20,
    };
    let limited = |f: &dyn Fn(&mut Edit<'_>)| {
        let mut c = Config::DEFAULT;
        let mut e = Edit::new(&mut c);
        f(&mut e);
        let g = e.finish().unwrap();
        refused(check_limits(&mut c, g, lim))
    };
    v.push(Row {
        c_format: "max-flows %u is above the initial netns's max-flows (%u)",
        got: limited(&|e| e.max_flows(100)),
        text: "max-flows 100 is above the initial netns's max-flows (8)",
        errno: ERANGE,
        at: cfg(nl::CONFIG_MAX_FLOWS),
    });
    v.push(Row {
        c_format: "max-memory %llu is above the initial netns's (%llu)",
        got: limited(&|e| e.max_memory(64 << 20)),
        text: "max-memory 67108864 is above the initial netns's (33554432)",
        errno: ERANGE,
        at: cfg(nl::CONFIG_MAX_MEMORY),
    });
    // checks.py:76: port 50001 taken while 50000 serves.
    let mut c = Config::DEFAULT;
    let mut e = Edit::new(&mut c);
    e.port(50001);
    let g = e.finish().unwrap();
    v.push(Row {
        c_format: "port %u is in use by another socket; port %u still serves CREM",
        got: refused(bind_result(&c, g, 50000, EADDRINUSE.to_kernel())),
        text: "port 50001 is in use by another socket; port 50000 still serves CREM",
        errno: EADDRINUSE,
        at: cfg(nl::CONFIG_PORT),
    });
    v.push(Row {
        c_format: "port %u is in use by another socket; CREM stays off",
        got: refused(bind_result(&c, g, 0, EADDRINUSE.to_kernel())),
        text: "port 50001 is in use by another socket; CREM stays off",
        errno: EADDRINUSE,
        at: cfg(nl::CONFIG_PORT),
    });
    v.push(Row {
        c_format: "cannot bind the CREM port %u: error %d (nothing changed)",
        // EACCES, 13.
        got: refused(bind_result(&c, Given::NONE, 0, -13)),
        text: "cannot bind the CREM port 50001: error -13 (nothing changed)",
        errno: ctl::Errno::from_kernel(-13).unwrap(),
        at: Some(Field::Request),
    });
    v
}

/// The Path Reporter's texts, which came after the C (no format string of
/// its: `c_format` is empty), and the C's bind text for a reporter.
fn reporter_rows() -> Vec<Row> {
    let row = |got, text, at| Row {
        c_format: "",
        got,
        text,
        errno: EINVAL,
        at: cfg(at),
    };
    let mut v = vec![row(
        // netlink.sh: report 1 alone.
        set(|e| {
            e.report(true);
            Ok(())
        }),
        "set a CREM port before turning report on (reports are sent from it)",
        nl::CONFIG_REPORT,
    )];
    // netlink.sh: each range's ends.
    let interval = "report-interval-us must be 1 to 1000000 (1 s)";
    let gap = "report-flow-gap-us must not exceed 10000000 (10 s)";
    let rate = "report-port-rate must be 1 to 1000000 reports per second";
    let psns = "report-psns must be 1 to 64 (the PSNs a report lists at most)";
    for (f, text, at) in [
        (
            &(|e: &mut Edit<'_>| e.report_interval_us(0)) as &dyn Fn(&mut Edit<'_>),
            interval,
            nl::CONFIG_REPORT_INTERVAL_US,
        ),
        (
            &|e| e.report_interval_us(1_000_001),
            interval,
            nl::CONFIG_REPORT_INTERVAL_US,
        ),
        (
            &|e| e.report_flow_gap_us(10_000_001),
            gap,
            nl::CONFIG_REPORT_FLOW_GAP_US,
        ),
        (
            &|e| e.report_port_rate(0),
            rate,
            nl::CONFIG_REPORT_PORT_RATE,
        ),
        (
            &|e| e.report_port_rate(1_000_001),
            rate,
            nl::CONFIG_REPORT_PORT_RATE,
        ),
        (&|e| e.report_psns(0), psns, nl::CONFIG_REPORT_PSNS),
        (&|e| e.report_psns(65), psns, nl::CONFIG_REPORT_PSNS),
    ] {
        let got = set(|e| {
            f(e);
            Ok(())
        });
        v.push(row(got, text, at));
    }
    // A reporter only (role disabled) serving 7470 moves to a port in use:
    // 7470 still serves, as a role's port would.
    let mut c = Config::DEFAULT;
    (c.port, c.report) = (7470, true);
    let serving = c.socket_port();
    let mut e = Edit::new(&mut c);
    e.port(7471);
    let g = e.finish().unwrap();
    v.push(Row {
        c_format: "port %u is in use by another socket; port %u still serves CREM",
        got: refused(bind_result(&c, g, serving, EADDRINUSE.to_kernel())),
        text: "port 7471 is in use by another socket; port 7470 still serves CREM",
        errno: EADDRINUSE,
        at: cfg(nl::CONFIG_PORT),
    });
    v
}

/// The k/m texts of flow-set and flow-new (`rust/netlink/flow.rs`'s `km`).
fn flow_rows() -> Vec<Row> {
    let (fk, fm) = (Some(Field::Flow(nl::FLOW_K)), Some(Field::Flow(nl::FLOW_M)));
    vec![
        Row {
            c_format: "k and m are pinned together: give both",
            got: refused(km(Some(8), None)),
            text: "k and m are pinned together: give both",
            errno: EINVAL,
            at: fk,
        },
        Row {
            c_format: "k must be at least 1",
            // e2e.sh:161.
            got: refused(km(Some(0), Some(2))),
            text: "k must be at least 1",
            errno: EINVAL,
            at: fk,
        },
        Row {
            c_format: "k + m must not exceed 255 (Repair Indices need i + k <= 255)",
            got: refused(km(Some(200), Some(100))),
            text: "k + m must not exceed 255 (Repair Indices need i + k <= 255)",
            errno: EINVAL,
            at: fm,
        },
        Row {
            c_format:
                "m must not exceed 16 (the largest m of this module: its repair accumulator's)",
            // checks.py:134 (flow-new, k 8, m 17).
            got: refused(km(Some(8), Some(17))),
            text: "m must not exceed 16 (the largest m of this module: its repair accumulator's)",
            errno: EINVAL,
            at: fm,
        },
    ]
}

#[test]
fn every_text_byte_for_byte() {
    for r in rows().iter().chain(&flow_rows()).chain(&reporter_rows()) {
        let text = r.got.why.to_string();
        assert_eq!(text, r.text, "{:?}", r.got);
        assert_eq!(r.got.errno, r.errno, "{}", r.text);
        assert_eq!(r.got.errno, r.got.why.errno(), "{}", r.text);
        assert_eq!(r.got.at, r.at, "{}", r.text);
        match r.got.why.fixed() {
            // A fixed text is the C string the extack points at.
            Some(s) => {
                assert_eq!(s.to_bytes(), r.text.as_bytes());
                assert!(!r.c_format.contains("%u") && !r.c_format.contains("%llu"));
            }
            // A formatted one has values in it.
            None => assert!(r.c_format.contains('%'), "{}", r.text),
        }
    }
}

/// The two formatted in C whose values are constants.
#[test]
fn caps_as_c_formats_them() {
    assert_eq!(
        Why::TooManyReporters.to_string(),
        format!("at most {} reporters", MAX_REPORTERS)
    );
    assert_eq!(
        Why::TooManyPeers.to_string(),
        format!("at most {} peers", MAX_PEERS)
    );
}

/// Formatted texts at their longest fit the extack's 80-octet buffer (79
/// and the NUL; the kernel truncates longer ones as C's NL_SET_ERR_MSG_FMT
/// does). The MTU text's longest: symbol-len at most 1104 once finish has
/// passed, so need at most 1216 and a refusing MTU below it.
#[test]
fn formatted_lengths() {
    let mtu = Why::Mtu {
        symbol_len: 1104,
        need: 1216,
        peer: Addr::V4([255, 255, 255, 255]),
        mtu: 1215,
    }
    .to_string();
    assert_eq!(mtu.len(), 77, "{mtu}");
    // IPv6's longest address text is 39 octets (no run of zeros to elide).
    let mtu6 = Why::Mtu {
        symbol_len: 1104,
        need: 1236,
        peer: Addr::V6([0xff; 16]),
        mtu: 1235,
    }
    .to_string();
    assert_eq!(
        mtu6,
        "MTU 1235 to ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff < 1236 for symbol-len 1104"
    );
    assert!(mtu6.len() <= 79, "{} octets: {mtu6}", mtu6.len());
    let mem = Why::AboveInitMemory {
        max_memory: 64 << 30,
        limit: (64 << 30) - 1,
    }
    .to_string();
    assert!(mem.len() <= 79, "{mem}");
    let port = Why::PortInUse {
        port: 65535,
        serving: 65535,
    }
    .to_string();
    assert!(port.len() <= 79, "{port}");
}

/// The fragments the VM tests look for (vm/guest/netlink.sh,
/// netlink/checks.py, crem-ctl.sh, e2e.sh) are in the texts.
#[test]
fn vm_tests_fragments() {
    let texts: Vec<String> = rows()
        .iter()
        .chain(&flow_rows())
        .chain(&reporter_rows())
        .map(|r| r.got.why.to_string())
        .collect();
    for frag in [
        "address must be 4 (IPv4) or 16 (IPv6) octets",
        "prefix has host bits set beyond prefix-len",
        "peer address family differs from its prefix's",
        "set a CREM port before enabling a role (there is no default port)",
        "4791 is RoCEv2's own port",
        "k + m must not exceed 255 (Repair Indices need i + k <= 255)",
        "m must not exceed 16",
        "symbol-len must be 0 (derived) or at least 64",
        "symbol-len must not exceed 1104",
        "symbol-len 1000: REPAIRs need MTU 1112, the route to 10.9.0.2 has 1000",
        "max-flows 100 is above the initial netns's max-flows (8)",
        "max-memory 67108864 is above the initial netns's (33554432)",
        "port 50001 is in use by another socket; port 50000 still serves CREM",
        "k must be at least 1",
        "set a CREM port before turning report on",
        "report-interval-us must be 1 to 1000000",
        "report-port-rate must be 1 to 1000000",
        "report-psns must be 1 to 64",
    ] {
        assert!(texts.iter().any(|t| t.contains(frag)), "{frag}");
    }
}
