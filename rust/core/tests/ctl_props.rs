//! `crem_core::ctl` against a re-statement of the C it replaced
//! (`rust/glue/crem_nl.c`, removed in 9e2cff7):
//! the list semantics and the order of the rules as unit tests, then
//! properties: an [`Edit`] never panics whatever it is fed; config-set
//! (edit, finish, limits, MTU) accepts exactly what a re-statement of the C
//! accepts, refusing with the same reason at the same attribute, and
//! produces the same configuration; `clamp` is idempotent; `km` is the
//! flow ops' rule. The Path Reporter's attributes came after the C: the
//! re-statement has them as their rules say (`c_apply`, marked).

use crem_core::ctl::*;
use crem_core::nl;
use proptest::prelude::*;

const A: [u8; 4] = [198, 51, 100, 1];
const B: [u8; 4] = [198, 51, 100, 2];
const C: [u8; 4] = [198, 51, 100, 3];

fn with(
    base: &Config,
    f: impl FnOnce(&mut Edit<'_>) -> Result<(), Refusal>,
) -> Result<Config, Refusal> {
    let mut c = base.clone();
    let mut e = Edit::new(&mut c);
    f(&mut e)?;
    e.finish()?;
    Ok(c)
}

fn reporters(c: &Config) -> Vec<Addr> {
    c.reporters.to_vec()
}

fn peer(prefix: [u8; 4], len: u8, addr: [u8; 4]) -> Peer {
    Peer {
        prefix: Addr::V4(prefix),
        len,
        addr: Addr::V4(addr),
    }
}

fn base_with_lists() -> Config {
    let mut c = Config::DEFAULT;
    c.reporters.push(Addr::V4(A)).unwrap();
    c.reporters.push(Addr::V4(B)).unwrap();
    c.peers.push(peer([10, 0, 0, 0], 8, A)).unwrap();
    c
}

#[test]
fn a_list_given_replaces_the_old_one() {
    let base = base_with_lists();
    let c = with(&base, |e| e.reporter(&C)).unwrap();
    assert_eq!(reporters(&c), [Addr::V4(C)]);
    assert_eq!(c.peers, base.peers, "peers not given: kept");
    let c = with(&base, |e| e.peer(Some(&[10, 0, 0, 0]), Some(8), Some(&B))).unwrap();
    assert_eq!(
        &*c.peers,
        &[peer([10, 0, 0, 0], 8, B)],
        "the old entry's prefix is no duplicate"
    );
    assert_eq!(c.reporters, base.reporters);
}

#[test]
fn an_empty_entry_adds_nothing_and_alone_clears() {
    let base = base_with_lists();
    let c = with(&base, |e| e.reporter(&[])).unwrap();
    assert!(c.reporters.is_empty());
    let c = with(&base, |e| {
        e.reporter(&C)?;
        e.reporter(&[])?;
        e.reporter(&A)
    })
    .unwrap();
    assert_eq!(reporters(&c), [Addr::V4(C), Addr::V4(A)]);
    let c = with(&base, |e| {
        e.peer_empty();
        Ok(())
    })
    .unwrap();
    assert!(c.peers.is_empty());
    assert_eq!(c.reporters, base.reporters);
    // The refusal counts empty entries.
    let r = with(&base, |e| {
        e.reporter(&[])?;
        e.reporter(&[1, 2, 3])
    })
    .unwrap_err();
    assert_eq!(r.at, Some(Field::Reporter(1)));
    let r = with(&base, |e| {
        e.peer_empty();
        e.peer(Some(&A), Some(24), Some(&B))
    })
    .unwrap_err();
    assert_eq!(
        (r.at, r.why),
        (Some(Field::PeerAttr(1, nl::PEER_PREFIX)), Why::HostBits)
    );
}

#[test]
fn caps_are_checked_before_the_entry() {
    // The 17th reporter is refused for the cap even when it is no address.
    let r = with(&Config::DEFAULT, |e| {
        for i in 0..16 {
            e.reporter(&[10, 0, 0, i])?;
        }
        e.reporter(&[1])
    })
    .unwrap_err();
    assert_eq!(
        (r.at, r.why, r.errno),
        (Some(Field::Reporter(16)), Why::TooManyReporters, E2BIG)
    );
    // 16 and 32 fit; an empty entry at the cap is fine.
    let c = with(&Config::DEFAULT, |e| {
        for i in 0..16 {
            e.reporter(&[10, 0, 0, i])?;
        }
        e.reporter(&[])?;
        for i in 0..32 {
            e.peer(Some(&[10, i, 0, 0]), Some(16), Some(&A))?;
        }
        e.peer_empty();
        Ok(())
    })
    .unwrap();
    assert_eq!((c.reporters.len(), c.peers.len()), (16, 32));
    let r = with(&Config::DEFAULT, |e| {
        for i in 0..32 {
            e.peer(Some(&[10, i, 0, 0]), Some(16), Some(&A))?;
        }
        e.peer(None, None, None)
    })
    .unwrap_err();
    assert_eq!((r.at, r.why), (Some(Field::Peer(32)), Why::TooManyPeers));
}

#[test]
fn a_peer_is_checked_in_the_c_order() {
    let v6 = [0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    let one = |p: Option<&[u8]>, l: Option<u8>, a: Option<&[u8]>| {
        let r = with(&Config::DEFAULT, |e| e.peer(p, l, a)).unwrap_err();
        (r.at, r.why)
    };
    let attr = |id| Some(Field::PeerAttr(0, id));
    // Missing anything: the nest, before any length.
    assert_eq!(
        one(Some(&[1]), Some(99), None),
        (Some(Field::Peer(0)), Why::PeerIncomplete)
    );
    assert_eq!(
        one(None, Some(8), Some(&A)),
        (Some(Field::Peer(0)), Why::PeerIncomplete)
    );
    // The prefix's length, then the address's.
    assert_eq!(
        one(Some(&[1]), Some(99), Some(&[2])),
        (attr(nl::PEER_PREFIX), Why::AddrLen)
    );
    assert_eq!(
        one(Some(&A), Some(99), Some(&[2])),
        (attr(nl::PEER_ADDR), Why::AddrLen)
    );
    // prefix-len before host bits before the family.
    assert_eq!(
        one(Some(&A), Some(33), Some(&v6)),
        (attr(nl::PEER_PREFIX_LEN), Why::PrefixLenTooLong)
    );
    assert_eq!(
        one(Some(&A), Some(24), Some(&v6)),
        (attr(nl::PEER_PREFIX), Why::HostBits)
    );
    assert_eq!(
        one(Some(&[10, 0, 0, 0]), Some(8), Some(&v6)),
        (attr(nl::PEER_ADDR), Why::PeerFamily)
    );
    assert_eq!(
        one(Some(&v6), Some(129), Some(&v6)),
        (attr(nl::PEER_PREFIX_LEN), Why::PrefixLenTooLong)
    );
    // 128 on IPv6, 32 on IPv4, 0 on anything zero.
    assert!(with(&Config::DEFAULT, |e| e.peer(
        Some(&v6),
        Some(128),
        Some(&v6)
    ))
    .is_ok());
    assert!(with(&Config::DEFAULT, |e| e.peer(Some(&A), Some(32), Some(&A))).is_ok());
    assert!(with(&Config::DEFAULT, |e| e.peer(
        Some(&[0; 4]),
        Some(0),
        Some(&A)
    ))
    .is_ok());
    // Same prefix, other length: no duplicate; same both: one.
    let c = with(&Config::DEFAULT, |e| {
        e.peer(Some(&[10, 0, 0, 0]), Some(8), Some(&A))?;
        e.peer(Some(&[10, 0, 0, 0]), Some(16), Some(&B))
    })
    .unwrap();
    assert_eq!(c.peers.len(), 2);
    let r = with(&Config::DEFAULT, |e| {
        e.peer(Some(&[10, 0, 0, 0]), Some(8), Some(&A))?;
        e.peer(Some(&[10, 0, 0, 0]), Some(8), Some(&A))
    })
    .unwrap_err();
    assert_eq!(
        (r.at, r.why, r.errno),
        (Some(Field::Peer(1)), Why::DuplicatePrefix, EEXIST)
    );
}

#[test]
fn rules_across_attributes_in_the_c_order() {
    let d = Config::DEFAULT;
    let why = |r: Result<Config, Refusal>| r.unwrap_err().why;
    // role without port before k + m.
    let r = with(&d, |e| {
        e.role(Role::Gateway);
        e.k(255);
        e.m(16);
        Ok(())
    });
    assert_eq!(why(r), Why::RoleWithoutPort);
    // 4791 before k + m.
    let r = with(&d, |e| {
        e.port(4791);
        e.role(Role::Host);
        e.m(255);
        Ok(())
    });
    assert_eq!(why(r), Why::RocePort);
    // k + m before m.
    let r = with(&d, |e| {
        e.k(250);
        e.m(17);
        e.symbol_len(1);
        Ok(())
    });
    assert_eq!(why(r), Why::KPlusM);
    // m before symbol-len.
    let r = with(&d, |e| {
        e.m(17);
        e.symbol_len(1);
        Ok(())
    });
    assert_eq!(why(r), Why::MTooLarge);
    // Scalars given twice: the last counts.
    let c = with(&d, |e| {
        e.m(17);
        e.m(3);
        e.symbol_len(1);
        e.symbol_len(64);
        Ok(())
    })
    .unwrap();
    assert_eq!((c.m, c.symbol_len), (3, 64));
    // The edges that pass.
    let c = with(&d, |e| {
        e.port(4790);
        e.role(Role::Host);
        e.k(239);
        e.m(16);
        e.symbol_len(1104);
        Ok(())
    })
    .unwrap();
    assert_eq!(c.socket_port(), 4790);
}

#[test]
fn the_reporters_rules() {
    let d = Config::DEFAULT;
    let why = |r: Result<Config, Refusal>| r.unwrap_err().why;
    // A role's port rule first, then the reporter's, before 4791's.
    let r = with(&d, |e| {
        e.role(Role::Host);
        e.report(true);
        Ok(())
    });
    assert_eq!(why(r), Why::RoleWithoutPort);
    let r = with(&d, |e| {
        e.report(true);
        e.report_psns(0);
        Ok(())
    });
    assert_eq!(why(r), Why::ReportWithoutPort);
    // The C's rules before the ranges; the ranges in attribute order.
    let r = with(&d, |e| {
        e.m(17);
        e.report_interval_us(0);
        Ok(())
    });
    assert_eq!(why(r), Why::MTooLarge);
    let r = with(&d, |e| {
        e.report_psns(0);
        e.report_port_rate(0);
        e.report_flow_gap_us(u32::MAX);
        e.report_interval_us(0);
        Ok(())
    });
    assert_eq!(why(r), Why::ReportInterval);
    let r = with(&d, |e| {
        e.report_psns(0);
        e.report_port_rate(0);
        e.report_flow_gap_us(u32::MAX);
        Ok(())
    });
    assert_eq!(why(r), Why::ReportFlowGap);
    let r = with(&d, |e| {
        e.report_psns(65);
        e.report_port_rate(1_000_001);
        Ok(())
    });
    assert_eq!(why(r), Why::ReportPortRate);
    // The edges that pass; a reporter only binds its port; off unbinds it.
    let c = with(&d, |e| {
        e.port(7470);
        e.report(true);
        e.node_id(u32::MAX);
        e.report_interval_us(1);
        e.report_flow_gap_us(0);
        e.report_port_rate(1);
        e.report_psns(1);
        Ok(())
    })
    .unwrap();
    assert_eq!((c.role, c.socket_port()), (Role::Disabled, 7470));
    let c = with(&c, |e| {
        e.report_interval_us(REPORT_INTERVAL_US_MAX);
        e.report_flow_gap_us(REPORT_FLOW_GAP_US_MAX);
        e.report_port_rate(REPORT_PORT_RATE_MAX);
        e.report_psns(REPORT_PSNS_MAX);
        Ok(())
    })
    .unwrap();
    assert_eq!(c.socket_port(), 7470);
    let off = with(&c, |e| {
        e.report(false);
        Ok(())
    })
    .unwrap();
    assert_eq!(off.socket_port(), 0);
    // Port 0 under a reporter from before: the request is named.
    let r = with(&c, |e| {
        e.port(0);
        Ok(())
    })
    .unwrap_err();
    assert_eq!(
        (r.at, r.why),
        (Some(Field::Request), Why::ReportWithoutPort)
    );
    // A range: its attribute if given, else the request (never stored, but
    // as the other rules).
    let mut bad = Config::DEFAULT;
    bad.report_psns = 0;
    let r = with(&bad, |e| {
        e.k(1);
        Ok(())
    })
    .unwrap_err();
    assert_eq!(r.at, Some(Field::Request));
    let r = with(&d, |e| {
        e.report_psns(65);
        Ok(())
    })
    .unwrap_err();
    assert_eq!(
        (r.at, r.errno),
        (Some(Field::Config(nl::CONFIG_REPORT_PSNS)), EINVAL)
    );
}

#[test]
fn which_attribute_a_rule_names() {
    let at = |base: &Config, f: &dyn Fn(&mut Edit<'_>)| {
        with(base, |e| {
            f(e);
            Ok(())
        })
        .unwrap_err()
        .at
    };
    let cfg = |id| Some(Field::Config(id));
    let mut serving = Config::DEFAULT;
    serving.port = 50000;
    serving.role = Role::Host;
    // role from before, port given 0: the request.
    assert_eq!(at(&serving, &|e| e.port(0)), Some(Field::Request));
    assert_eq!(
        at(&Config::DEFAULT, &|e| e.role(Role::Host)),
        cfg(nl::CONFIG_ROLE)
    );
    // k + m: m if given, else k, else the request.
    let mut k250 = Config::DEFAULT;
    k250.k = 250;
    assert_eq!(at(&k250, &|e| e.m(10)), cfg(nl::CONFIG_M));
    assert_eq!(at(&Config::DEFAULT, &|e| e.k(254)), cfg(nl::CONFIG_K));
    let mut bad = Config::DEFAULT;
    bad.k = 250;
    bad.m = 10;
    assert_eq!(at(&bad, &|e| e.port(1)), Some(Field::Request));
    // m: m if given, else the request (k given does not count).
    let mut m17 = Config::DEFAULT;
    m17.m = 17;
    assert_eq!(at(&m17, &|e| e.k(1)), Some(Field::Request));
    // symbol-len: symbol-len if given, else nothing.
    let mut t10 = Config::DEFAULT;
    t10.symbol_len = 10;
    assert_eq!(at(&t10, &|e| e.k(1)), None);
    t10.symbol_len = 2000;
    assert_eq!(at(&t10, &|e| e.k(1)), None);
    assert_eq!(
        at(&t10, &|e| e.symbol_len(2000)),
        cfg(nl::CONFIG_SYMBOL_LEN)
    );
    // Port 4791 from before (never stored, but as C): the request.
    let mut roce = Config::DEFAULT;
    roce.port = 4791;
    assert_eq!(at(&roce, &|e| e.k(1)), Some(Field::Request));
}

fn edited(base: &Config, f: impl FnOnce(&mut Edit<'_>)) -> (Config, Given) {
    let mut c = base.clone();
    let mut e = Edit::new(&mut c);
    f(&mut e);
    let g = e.finish().unwrap();
    (c, g)
}

#[test]
fn mtu_is_checked_as_c_calls_it() {
    let mut base = Config::DEFAULT;
    base.symbol_len = 1000;
    base.peers
        .push(peer([10, 8, 0, 0], 16, [10, 9, 0, 2]))
        .unwrap();
    let small = |_: Addr| Some(1000);
    // Neither symbol-len nor a peer given: not checked (nothing looked up).
    let (c, g) = edited(&base, |e| e.k(8));
    assert_eq!(check_mtu(&c, g, |_| panic!("looked up")), Ok(()));
    // A peer given (the same list again): checked, naming the request.
    let (c, g) = edited(&base, |e| {
        e.peer(Some(&[10, 8, 0, 0]), Some(16), Some(&[10, 9, 0, 2]))
            .unwrap()
    });
    let r = check_mtu(&c, g, small).unwrap_err();
    assert_eq!((r.at, r.errno), (Some(Field::Request), EMSGSIZE));
    // An empty peer nest counts as given (C: tb[PEER]); the list is then empty.
    let (c, g) = edited(&base, |e| e.peer_empty());
    assert_eq!(check_mtu(&c, g, |_| panic!("no peer")), Ok(()));
    // symbol-len given: named; 0: never checked.
    let (c, g) = edited(&base, |e| e.symbol_len(1000));
    assert_eq!(
        check_mtu(&c, g, small).unwrap_err().at,
        Some(Field::Config(nl::CONFIG_SYMBOL_LEN))
    );
    let (c, g) = edited(&base, |e| e.symbol_len(0));
    assert_eq!(check_mtu(&c, g, |_| panic!("looked up")), Ok(()));
    // Exactly fitting: fine. No route: not judged.
    let (c, g) = edited(&base, |e| e.symbol_len(888));
    assert_eq!(check_mtu(&c, g, small), Ok(()));
    let (c, g) = edited(&base, |e| e.symbol_len(1000));
    assert_eq!(check_mtu(&c, g, |_| None), Ok(()));
    let v6 = [0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    let mut net6 = v6;
    net6[15] = 0;
    // An IPv6 peer: looked up by its own address, with its 40-octet
    // header: 1104 + 132 = 1236 fits 1236, not 1235 (IPv4 needs 1216).
    let (c, g) = edited(&Config::DEFAULT, |e| {
        e.symbol_len(1104);
        e.peer(Some(&net6), Some(64), Some(&v6)).unwrap();
    });
    let at = |mtu: u32| move |a: Addr| (a == Addr::V6(v6)).then_some(mtu);
    assert_eq!(check_mtu(&c, g, at(1236)), Ok(()));
    let r = check_mtu(&c, g, at(1235)).unwrap_err();
    assert_eq!(
        r.why,
        Why::Mtu {
            symbol_len: 1104,
            need: 1236,
            peer: Addr::V6(v6),
            mtu: 1235
        }
    );
    assert_eq!(r.errno, EMSGSIZE);
    // The first peer in list order that does not fit.
    let (c, g) = edited(&Config::DEFAULT, |e| {
        e.symbol_len(1104);
        e.peer(Some(&[10, 1, 0, 0]), Some(16), Some(&A)).unwrap();
        e.peer(Some(&[10, 2, 0, 0]), Some(16), Some(&B)).unwrap();
        e.peer(Some(&[10, 3, 0, 0]), Some(16), Some(&C)).unwrap();
    });
    let mtus = |d: Addr| match d {
        Addr::V4(A) => Some(1500),
        Addr::V4(B) => None,
        _ => Some(1200),
    };
    let r = check_mtu(&c, g, mtus).unwrap_err();
    assert_eq!(
        r.why,
        Why::Mtu {
            symbol_len: 1104,
            need: 1216,
            peer: Addr::V4(C),
            mtu: 1200
        }
    );
}

#[test]
fn limits_as_c() {
    let lim = Limits {
        max_flows: 8,
        max_memory: 32 << 20,
    };
    // Not given: clamped silently.
    let (mut c, g) = edited(&Config::DEFAULT, |e| e.k(8));
    assert_eq!(check_limits(&mut c, g, lim), Ok(()));
    assert_eq!(c.limits(), lim);
    // Given at the limit: fine; above: refused, max-flows first.
    let (mut c, g) = edited(&Config::DEFAULT, |e| {
        e.max_flows(8);
        e.max_memory(1);
    });
    assert_eq!(check_limits(&mut c, g, lim), Ok(()));
    assert_eq!((c.max_flows, c.max_memory), (8, 1));
    let (mut c, g) = edited(&Config::DEFAULT, |e| {
        e.max_flows(9);
        e.max_memory(u64::MAX);
    });
    let r = check_limits(&mut c, g, lim).unwrap_err();
    assert_eq!(
        r.why,
        Why::AboveInitFlows {
            max_flows: 9,
            limit: 8
        }
    );
    assert_eq!(r.errno, ERANGE);
    // clamp reports a change once.
    let mut c = Config::DEFAULT;
    assert!(clamp(&mut c, lim));
    assert!(!clamp(&mut c, lim));
    assert!(lim.below(&Config::DEFAULT.limits()));
    assert!(!Config::DEFAULT.limits().below(&lim));
    assert!(!lim.below(&lim));
}

#[test]
fn bind_results() {
    let (c, g) = edited(&Config::DEFAULT, |e| e.port(50001));
    assert_eq!(bind_result(&c, g, 50000, 0), Ok(()));
    let r = bind_result(&c, g, 50000, -98).unwrap_err();
    assert_eq!(
        (r.at, r.errno),
        (Some(Field::Config(nl::CONFIG_PORT)), EADDRINUSE)
    );
    let r = bind_result(&c, Given::NONE, 0, -12).unwrap_err();
    assert_eq!(
        (r.at, r.errno.get(), r.errno.to_kernel()),
        (Some(Field::Request), 12, -12)
    );
    // No errno: EINVAL (never from the socket).
    assert_eq!(bind_result(&c, g, 0, 5).unwrap_err().errno, EINVAL);
    assert_eq!(bind_result(&c, g, 0, -4096).unwrap_err().errno, EINVAL);
    assert_eq!(bind_result(&c, g, 0, i32::MIN).unwrap_err().errno, EINVAL);
    assert_eq!(Errno::from_kernel(-4095).map(Errno::get), Some(4095));
    assert_eq!(Errno::from_kernel(0), None);
}

// ---- The C, re-stated in its own terms ------------------------------------

/// `struct crem_addr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CAddr {
    len: u8,
    a: [u8; 16],
}

/// `struct crem_peer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CPeer {
    prefix: CAddr,
    prefix_len: u8,
    addr: CAddr,
}

/// `struct crem_cfg`, every field in the C's types.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CCfg {
    port: u16,
    role: u8,
    recovery: u8,
    adaptive: u8,
    k: u8,
    m: u8,
    m_cong: u8,
    symbol_len: u16,
    epsilon_ppb: u32,
    hold_us: u32,
    max_flows: u32,
    max_bdp: u32,
    max_memory: u64,
    // After the C: the reporter's.
    report: u8,
    node_id: u32,
    report_interval_us: u32,
    report_flow_gap_us: u32,
    report_port_rate: u32,
    report_psns: u8,
    n_reporters: u8,
    n_peers: u8,
    reporters: [CAddr; 16],
    peers: [CPeer; 32],
    // After the reporter's: the spare pool's.
    spare_flows: u32,
}

const CADDR0: CAddr = CAddr { len: 0, a: [0; 16] };

fn caddr(a: &Addr) -> CAddr {
    let o = a.octets();
    let mut c = CADDR0;
    c.len = o.len() as u8;
    c.a[..o.len()].copy_from_slice(o);
    c
}

fn to_c(c: &Config) -> CCfg {
    let mut r = CCfg {
        port: c.port,
        role: c.role.into(),
        recovery: c.recovery.into(),
        adaptive: c.adaptive.into(),
        k: c.k,
        m: c.m,
        m_cong: c.m_cong,
        symbol_len: c.symbol_len,
        epsilon_ppb: c.epsilon_ppb,
        hold_us: c.hold_us,
        max_flows: c.max_flows,
        max_bdp: c.max_bdp,
        max_memory: c.max_memory,
        report: c.report.into(),
        node_id: c.node_id,
        report_interval_us: c.report_interval_us,
        report_flow_gap_us: c.report_flow_gap_us,
        report_port_rate: c.report_port_rate,
        report_psns: c.report_psns,
        n_reporters: c.reporters.len() as u8,
        n_peers: c.peers.len() as u8,
        reporters: [CADDR0; 16],
        peers: [CPeer {
            prefix: CADDR0,
            prefix_len: 0,
            addr: CADDR0,
        }; 32],
        spare_flows: c.spare_flows,
    };
    for (i, a) in c.reporters.iter().enumerate() {
        r.reporters[i] = caddr(a);
    }
    for (i, p) in c.peers.iter().enumerate() {
        r.peers[i] = CPeer {
            prefix: caddr(&p.prefix),
            prefix_len: p.len,
            addr: caddr(&p.addr),
        };
    }
    r
}

/// What the C compares (the arrays' used entries; the rest is stale).
fn used(c: &CCfg) -> (CCfg, Vec<CAddr>, Vec<CPeer>) {
    let mut head = c.clone();
    head.reporters = [CADDR0; 16];
    head.peers = [CPeer {
        prefix: CADDR0,
        prefix_len: 0,
        addr: CADDR0,
    }; 32];
    (
        head,
        c.reporters[..c.n_reporters as usize].to_vec(),
        c.peers[..c.n_peers as usize].to_vec(),
    )
}

/// One attribute of config-set's request, as the handler meets it.
#[derive(Clone, Debug)]
enum Op {
    Port(u16),
    Role(u8),
    Recovery(u8),
    Adaptive(u8),
    K(u8),
    M(u8),
    SymbolLen(u16),
    Epsilon(u32),
    MCong(u8),
    HoldUs(u32),
    MaxBdp(u32),
    MaxFlows(u32),
    MaxMemory(u64),
    Report(u8),
    NodeId(u32),
    ReportInterval(u32),
    ReportFlowGap(u32),
    ReportPortRate(u32),
    ReportPsns(u8),
    SpareFlows(u32),
    Reporter(Vec<u8>),
    Peer(Option<Vec<u8>>, Option<u8>, Option<Vec<u8>>),
    PeerEmpty,
}

impl Op {
    /// The config attribute's id.
    fn id(&self) -> u16 {
        match self {
            Op::Port(_) => nl::CONFIG_PORT,
            Op::Role(_) => nl::CONFIG_ROLE,
            Op::Recovery(_) => nl::CONFIG_RECOVERY,
            Op::Adaptive(_) => nl::CONFIG_ADAPTIVE,
            Op::K(_) => nl::CONFIG_K,
            Op::M(_) => nl::CONFIG_M,
            Op::SymbolLen(_) => nl::CONFIG_SYMBOL_LEN,
            Op::Epsilon(_) => nl::CONFIG_EPSILON_PPB,
            Op::MCong(_) => nl::CONFIG_M_CONG,
            Op::HoldUs(_) => nl::CONFIG_HOLD_US,
            Op::MaxBdp(_) => nl::CONFIG_MAX_BDP,
            Op::MaxFlows(_) => nl::CONFIG_MAX_FLOWS,
            Op::MaxMemory(_) => nl::CONFIG_MAX_MEMORY,
            Op::Report(_) => nl::CONFIG_REPORT,
            Op::NodeId(_) => nl::CONFIG_NODE_ID,
            Op::ReportInterval(_) => nl::CONFIG_REPORT_INTERVAL_US,
            Op::ReportFlowGap(_) => nl::CONFIG_REPORT_FLOW_GAP_US,
            Op::ReportPortRate(_) => nl::CONFIG_REPORT_PORT_RATE,
            Op::ReportPsns(_) => nl::CONFIG_REPORT_PSNS,
            Op::SpareFlows(_) => nl::CONFIG_SPARE_FLOWS,
            Op::Reporter(_) => nl::CONFIG_REPORTER,
            Op::Peer(..) | Op::PeerEmpty => nl::CONFIG_PEER,
        }
    }
}

type CErr = (Option<Field>, i32, Why);

fn einval(at: Option<Field>, why: Why) -> CErr {
    (at, -22, why)
}

/// `crem_nl_validate_addr` + `crem_get_addr`.
fn c_get_addr(p: &[u8], at: Option<Field>) -> Result<CAddr, CErr> {
    if p.len() == 4 || p.len() == 16 {
        let mut a = CADDR0;
        a.len = p.len() as u8;
        a.a[..p.len()].copy_from_slice(p);
        Ok(a)
    } else {
        Err(einval(at, Why::AddrLen))
    }
}

/// `crem_host_bits`.
fn c_host_bits(a: &CAddr, len: u8) -> bool {
    let mut i = (len / 8) as i32;
    while i < a.len as i32 {
        let keep: u8 = if i == (len / 8) as i32 {
            (0xff00u32 >> (len % 8)) as u8
        } else {
            0
        };
        if a.a[i as usize] & !keep != 0 {
            return true;
        }
        i += 1;
    }
    false
}

/// `crem_apply_cfg` on `c` with the request `ops`; the peers' attribute
/// number `n` as Field counts peer attributes (empty ones too).
fn c_apply(c: &mut CCfg, ops: &[Op]) -> Result<(), CErr> {
    // tb[]: the last of each.
    let last = |id: u16| ops.iter().rev().find(|o| o.id() == id);
    let given = |id: u16| last(id).is_some();
    for o in [
        nl::CONFIG_PORT,
        nl::CONFIG_ROLE,
        nl::CONFIG_RECOVERY,
        nl::CONFIG_ADAPTIVE,
        nl::CONFIG_K,
        nl::CONFIG_M,
        nl::CONFIG_SYMBOL_LEN,
        nl::CONFIG_EPSILON_PPB,
        nl::CONFIG_M_CONG,
        nl::CONFIG_HOLD_US,
        nl::CONFIG_MAX_BDP,
        nl::CONFIG_MAX_FLOWS,
        nl::CONFIG_MAX_MEMORY,
        nl::CONFIG_REPORT,
        nl::CONFIG_NODE_ID,
        nl::CONFIG_REPORT_INTERVAL_US,
        nl::CONFIG_REPORT_FLOW_GAP_US,
        nl::CONFIG_REPORT_PORT_RATE,
        nl::CONFIG_REPORT_PSNS,
        nl::CONFIG_SPARE_FLOWS,
    ]
    .iter()
    .filter_map(|&id| last(id))
    {
        match *o {
            Op::Port(v) => c.port = v,
            Op::Role(v) => c.role = v,
            Op::Recovery(v) => c.recovery = v,
            Op::Adaptive(v) => c.adaptive = v,
            Op::K(v) => c.k = v,
            Op::M(v) => c.m = v,
            Op::SymbolLen(v) => c.symbol_len = v,
            Op::Epsilon(v) => c.epsilon_ppb = v,
            Op::MCong(v) => c.m_cong = v,
            Op::HoldUs(v) => c.hold_us = v,
            Op::MaxBdp(v) => c.max_bdp = v,
            Op::MaxFlows(v) => c.max_flows = v,
            Op::MaxMemory(v) => c.max_memory = v,
            Op::Report(v) => c.report = v,
            Op::NodeId(v) => c.node_id = v,
            Op::ReportInterval(v) => c.report_interval_us = v,
            Op::ReportFlowGap(v) => c.report_flow_gap_us = v,
            Op::ReportPortRate(v) => c.report_port_rate = v,
            Op::ReportPsns(v) => c.report_psns = v,
            Op::SpareFlows(v) => c.spare_flows = v,
            _ => unreachable!(),
        }
    }
    let (mut reporters, mut peers) = (false, false);
    let (mut nr, mut np) = (0u16, 0u16);
    for o in ops {
        match o {
            Op::Reporter(p) => {
                let at = Some(Field::Reporter(nr));
                nr += 1;
                if !reporters {
                    reporters = true;
                    c.n_reporters = 0;
                }
                if p.is_empty() {
                    continue;
                }
                if c.n_reporters == 16 {
                    return Err((at, -7, Why::TooManyReporters));
                }
                c.reporters[c.n_reporters as usize] = c_get_addr(p, at)?;
                c.n_reporters += 1;
            }
            Op::Peer(..) | Op::PeerEmpty => {
                let n = np;
                np += 1;
                if !peers {
                    peers = true;
                    c.n_peers = 0;
                }
                let Op::Peer(prefix, len, addr) = o else {
                    continue;
                };
                let nest = Some(Field::Peer(n));
                if c.n_peers == 32 {
                    return Err((nest, -7, Why::TooManyPeers));
                }
                // crem_parse_peer
                let (Some(prefix), Some(addr), Some(len)) = (prefix, addr, len) else {
                    return Err(einval(nest, Why::PeerIncomplete));
                };
                let attr = |id| Some(Field::PeerAttr(n, id));
                let p = CPeer {
                    prefix: c_get_addr(prefix, attr(nl::PEER_PREFIX))?,
                    addr: c_get_addr(addr, attr(nl::PEER_ADDR))?,
                    prefix_len: *len,
                };
                if p.prefix_len as u32 > p.prefix.len as u32 * 8 {
                    return Err(einval(attr(nl::PEER_PREFIX_LEN), Why::PrefixLenTooLong));
                }
                if c_host_bits(&p.prefix, p.prefix_len) {
                    return Err(einval(attr(nl::PEER_PREFIX), Why::HostBits));
                }
                if p.prefix.len != p.addr.len {
                    return Err(einval(attr(nl::PEER_ADDR), Why::PeerFamily));
                }
                // crem_peer_unique
                for q in &c.peers[..c.n_peers as usize] {
                    let l = p.prefix.len as usize;
                    if q.prefix_len == p.prefix_len
                        && q.prefix.len == p.prefix.len
                        && q.prefix.a[..l] == p.prefix.a[..l]
                    {
                        return Err((nest, -17, Why::DuplicatePrefix));
                    }
                }
                c.peers[c.n_peers as usize] = p;
                c.n_peers += 1;
            }
            _ => {}
        }
    }
    let tb = |id: u16| given(id).then_some(Field::Config(id));
    let nest = Some(Field::Request);
    if c.role != 0 && c.port == 0 {
        return Err(einval(tb(nl::CONFIG_ROLE).or(nest), Why::RoleWithoutPort));
    }
    // After the C: a reporter needs a port too.
    if c.report != 0 && c.port == 0 {
        return Err(einval(
            tb(nl::CONFIG_REPORT).or(nest),
            Why::ReportWithoutPort,
        ));
    }
    if c.port == 4791 {
        return Err(einval(tb(nl::CONFIG_PORT).or(nest), Why::RocePort));
    }
    if c.k as u32 + c.m as u32 > 255 {
        let at = tb(nl::CONFIG_M).or(tb(nl::CONFIG_K)).or(nest);
        return Err(einval(at, Why::KPlusM));
    }
    if c.m > 16 {
        return Err(einval(tb(nl::CONFIG_M).or(nest), Why::MTooLarge));
    }
    if c.symbol_len != 0 && c.symbol_len < 64 {
        return Err(einval(tb(nl::CONFIG_SYMBOL_LEN), Why::SymbolLenTooSmall));
    }
    if c.symbol_len > 1104 {
        return Err(einval(tb(nl::CONFIG_SYMBOL_LEN), Why::SymbolLenTooLarge));
    }
    // After the C: the reporter's ranges, in attribute order.
    let range = |id, why| Err(einval(tb(id).or(nest), why));
    if c.report_interval_us == 0 || c.report_interval_us > 1_000_000 {
        return range(nl::CONFIG_REPORT_INTERVAL_US, Why::ReportInterval);
    }
    if c.report_flow_gap_us > 10_000_000 {
        return range(nl::CONFIG_REPORT_FLOW_GAP_US, Why::ReportFlowGap);
    }
    if c.report_port_rate == 0 || c.report_port_rate > 1_000_000 {
        return range(nl::CONFIG_REPORT_PORT_RATE, Why::ReportPortRate);
    }
    if c.report_psns == 0 || c.report_psns > 64 {
        return range(nl::CONFIG_REPORT_PSNS, Why::ReportPsns);
    }
    Ok(())
}

/// `crem_check_limits` for a limited netns.
fn c_check_limits(c: &mut CCfg, ops: &[Op], flows: u32, mem: u64) -> Result<(), CErr> {
    let given = |id: u16| ops.iter().any(|o| o.id() == id);
    if given(nl::CONFIG_MAX_FLOWS) && c.max_flows > flows {
        let why = Why::AboveInitFlows {
            max_flows: c.max_flows,
            limit: flows,
        };
        return Err((Some(Field::Config(nl::CONFIG_MAX_FLOWS)), -34, why));
    }
    if given(nl::CONFIG_MAX_MEMORY) && c.max_memory > mem {
        let why = Why::AboveInitMemory {
            max_memory: c.max_memory,
            limit: mem,
        };
        return Err((Some(Field::Config(nl::CONFIG_MAX_MEMORY)), -34, why));
    }
    c.max_flows = c.max_flows.min(flows);
    c.max_memory = c.max_memory.min(mem);
    Ok(())
}

/// `crem_check_mtu`, called as `crem_nl_config_set_doit` calls it, and
/// extended as the Rust was when IPv6 flows came (the C skipped IPv6
/// peers): an IPv6 peer is checked with its 40-octet header.
fn c_check_mtu(c: &CCfg, ops: &[Op], route: &dyn Fn(Addr) -> Option<u32>) -> Result<(), CErr> {
    let given = |id: u16| ops.iter().any(|o| o.id() == id);
    if !(given(nl::CONFIG_SYMBOL_LEN) || given(nl::CONFIG_PEER)) {
        return Ok(());
    }
    if c.symbol_len == 0 {
        return Ok(());
    }
    for p in &c.peers[..c.n_peers as usize] {
        let (d, ip) = match p.addr.len {
            4 => (
                Addr::V4([p.addr.a[0], p.addr.a[1], p.addr.a[2], p.addr.a[3]]),
                20,
            ),
            _ => (Addr::V6(p.addr.a), 40),
        };
        let need = c.symbol_len as u32 + (20 + 2 * 4 * 255u32.div_ceil(32) + 8 + ip);
        let Some(mtu) = route(d) else { continue };
        if need > mtu {
            let at = if given(nl::CONFIG_SYMBOL_LEN) {
                Field::Config(nl::CONFIG_SYMBOL_LEN)
            } else {
                Field::Request
            };
            let why = Why::Mtu {
                symbol_len: c.symbol_len,
                need,
                peer: d,
                mtu,
            };
            return Err((Some(at), -90, why));
        }
    }
    Ok(())
}

/// The handler's calls into `Edit`, stopping at the first refusal.
fn rust_apply(c: &mut Config, ops: &[Op]) -> Result<Given, Refusal> {
    let mut e = Edit::new(c);
    for o in ops {
        feed(&mut e, o)?;
    }
    e.finish()
}

fn feed(e: &mut Edit<'_>, o: &Op) -> Result<(), Refusal> {
    match o {
        Op::Port(v) => e.port(*v),
        // The policy admits only the enums' values (op() makes no others).
        Op::Role(v) => e.role(Role::from_u8(*v).unwrap()),
        Op::Recovery(v) => e.recovery(Recovery::from_u8(*v).unwrap()),
        Op::Adaptive(v) => e.adaptive(*v != 0),
        Op::K(v) => e.k(*v),
        Op::M(v) => e.m(*v),
        Op::SymbolLen(v) => e.symbol_len(*v),
        Op::Epsilon(v) => e.epsilon_ppb(*v),
        Op::MCong(v) => e.m_cong(*v),
        Op::HoldUs(v) => e.hold_us(*v),
        Op::MaxBdp(v) => e.max_bdp(*v),
        Op::MaxFlows(v) => e.max_flows(*v),
        Op::MaxMemory(v) => e.max_memory(*v),
        // The policy admits 0 and 1 (op() makes no others).
        Op::Report(v) => e.report(*v != 0),
        Op::NodeId(v) => e.node_id(*v),
        Op::ReportInterval(v) => e.report_interval_us(*v),
        Op::ReportFlowGap(v) => e.report_flow_gap_us(*v),
        Op::ReportPortRate(v) => e.report_port_rate(*v),
        Op::ReportPsns(v) => e.report_psns(*v),
        Op::SpareFlows(v) => e.spare_flows(*v),
        Op::Reporter(p) => return e.reporter(p),
        Op::Peer(p, l, a) => return e.peer(p.as_deref(), *l, a.as_deref()),
        Op::PeerEmpty => e.peer_empty(),
    }
    Ok(())
}

fn refusal(r: Refusal) -> CErr {
    (r.at, r.errno.to_kernel(), r.why)
}

// ---- Strategies ------------------------------------------------------------

/// Addresses that meet: a few prefixes and hosts, both families.
fn addr_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::sample::select(vec![
            vec![10, 0, 0, 0],
            vec![10, 1, 0, 0],
            vec![10, 1, 2, 0],
            vec![10, 9, 0, 2],
            vec![198, 51, 100, 2],
            vec![0, 0, 0, 0],
            vec![255, 255, 255, 255],
        ]),
        2 => any::<[u8; 4]>().prop_map(|a| a.to_vec()),
        1 => prop::sample::select(vec![
            vec![0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            vec![0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
        ]),
        1 => any::<[u8; 16]>().prop_map(|a| a.to_vec()),
        1 => prop::collection::vec(any::<u8>(), 0..20),
    ]
}

fn prefix_len() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => prop::sample::select(vec![0u8, 8, 16, 24, 30, 32, 33, 64, 128, 129]),
        1 => any::<u8>(),
    ]
}

/// Peers that pass, from a small pool (so duplicates occur): IPv4 ones
/// whose addresses the route table knows, and one IPv6.
fn good_peer() -> impl Strategy<Value = Op> {
    let v6 = vec![0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut v6a = v6.clone();
    v6a[15] = 2;
    prop::sample::select(vec![
        (vec![10, 0, 0, 0], 8, vec![10, 9, 0, 2]),
        (vec![10, 1, 0, 0], 16, vec![10, 9, 0, 3]),
        (vec![10, 1, 2, 0], 24, vec![198, 51, 100, 2]),
        (vec![10, 1, 0, 0], 24, vec![198, 51, 100, 7]),
        (vec![0, 0, 0, 0], 0, vec![10, 9, 0, 2]),
        (vec![198, 51, 100, 2], 32, vec![10, 200, 0, 1]),
        (v6, 32, v6a),
    ])
    .prop_map(|(p, l, a)| Op::Peer(Some(p), Some(l), Some(a)))
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => prop_oneof![Just(0u16), Just(4791), Just(50000), any::<u16>()].prop_map(Op::Port),
        // The policy admits the enums' values only (NLA_POLICY_MAX).
        2 => (0u8..3).prop_map(Op::Role),
        1 => (0u8..3).prop_map(Op::Recovery),
        1 => (0u8..2).prop_map(Op::Adaptive),
        2 => prop_oneof![Just(0u8), Just(1), Just(32), Just(239), Just(240), any::<u8>()].prop_map(Op::K),
        2 => prop_oneof![Just(0u8), Just(2), Just(16), Just(17), any::<u8>()].prop_map(Op::M),
        3 => prop_oneof![
            prop::sample::select(vec![0u16, 1, 63, 64, 888, 1000, 1104, 1105]),
            any::<u16>()
        ]
        .prop_map(Op::SymbolLen),
        1 => any::<u32>().prop_map(Op::Epsilon),
        1 => any::<u8>().prop_map(Op::MCong),
        1 => any::<u32>().prop_map(Op::HoldUs),
        1 => any::<u32>().prop_map(Op::MaxBdp),
        2 => prop_oneof![Just(8u32), Just(9), any::<u32>()].prop_map(Op::MaxFlows),
        2 => prop_oneof![Just(32u64 << 20), Just((32 << 20) + 1), any::<u64>()].prop_map(Op::MaxMemory),
        2 => (0u8..2).prop_map(Op::Report),
        1 => any::<u32>().prop_map(Op::NodeId),
        1 => prop_oneof![Just(0u32), Just(1), Just(1_000_000), Just(1_000_001), any::<u32>()]
            .prop_map(Op::ReportInterval),
        1 => prop_oneof![Just(0u32), Just(10_000_000), Just(10_000_001), any::<u32>()]
            .prop_map(Op::ReportFlowGap),
        1 => prop_oneof![Just(0u32), Just(1), Just(1_000_000), Just(1_000_001), any::<u32>()]
            .prop_map(Op::ReportPortRate),
        1 => prop_oneof![Just(0u8), Just(1), Just(64), Just(65), any::<u8>()].prop_map(Op::ReportPsns),
        1 => prop_oneof![Just(0u32), Just(8), Just(64), Just(65), any::<u32>()].prop_map(Op::SpareFlows),
        3 => prop_oneof![
            6 => addr_bytes(),
            1 => Just(Vec::new()),
        ]
        .prop_map(Op::Reporter),
        8 => good_peer(),
        2 => (
            prop::option::weighted(0.9, addr_bytes()),
            prop::option::weighted(0.9, prefix_len()),
            prop::option::weighted(0.9, addr_bytes()),
        )
            .prop_map(|(p, l, a)| Op::Peer(p, l, a)),
        1 => Just(Op::PeerEmpty),
    ]
}

/// Many reporters or peers at once: the caps.
fn many() -> impl Strategy<Value = Vec<Op>> {
    (0usize..40, 0u8..2).prop_map(|(n, what)| {
        (0..n)
            .map(|i| {
                let i = i as u8;
                if what == 0 {
                    Op::Reporter(vec![10, 0, 0, i])
                } else {
                    Op::Peer(Some(vec![10, i, 0, 0]), Some(16), Some(vec![10, 9, 0, 2]))
                }
            })
            .collect()
    })
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop_oneof![
        4 => prop::collection::vec(op(), 0..12),
        1 => (many(), prop::collection::vec(op(), 0..4)).prop_map(|(mut a, b)| {
            a.extend(b);
            a
        }),
    ]
}

/// A configuration: mostly one the rules accept (as the stored one, an
/// edit's base, always is), else any.
fn config() -> impl Strategy<Value = Config> {
    prop_oneof![
        3 => any_config().prop_map(|mut c| {
            if c.port == 4791 {
                c.port = 4790;
            }
            if c.port == 0 {
                c.role = Role::Disabled;
                c.report = false;
            }
            c.report_interval_us = c.report_interval_us.clamp(1, REPORT_INTERVAL_US_MAX);
            c.report_flow_gap_us = c.report_flow_gap_us.min(REPORT_FLOW_GAP_US_MAX);
            c.report_port_rate = c.report_port_rate.clamp(1, REPORT_PORT_RATE_MAX);
            c.report_psns = c.report_psns.clamp(1, REPORT_PSNS_MAX);
            c.m %= 17;
            c.k = c.k.clamp(1, 255 - c.m);
            if c.symbol_len != 0 {
                c.symbol_len = c.symbol_len.clamp(SYMBOL_LEN_MIN, SYMBOL_LEN_MAX);
            }
            c
        }),
        1 => any_config(),
    ]
}

/// Any configuration, also one the rules would refuse.
fn any_config() -> impl Strategy<Value = Config> {
    let addr = prop_oneof![
        any::<[u8; 4]>().prop_map(Addr::V4),
        any::<[u8; 16]>().prop_map(Addr::V6),
    ];
    let peer = (addr.clone(), any::<u8>(), addr.clone()).prop_map(|(prefix, len, addr)| Peer {
        prefix,
        len,
        addr,
    });
    (
        (
            prop_oneof![Just(0u16), Just(4791), any::<u16>()],
            0u8..3,
            0u8..3,
            any::<bool>(),
            any::<u8>(),
            prop_oneof![Just(2u8), any::<u8>()],
            any::<u8>(),
        ),
        (
            prop_oneof![Just(0u16), any::<u16>()],
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
        ),
        (
            any::<bool>(),
            any::<u32>(),
            prop_oneof![Just(50u32), any::<u32>()],
            prop_oneof![Just(1000u32), any::<u32>()],
            prop_oneof![Just(10_000u32), any::<u32>()],
            prop_oneof![Just(64u8), any::<u8>()],
        ),
        prop::collection::vec(addr, 0..=16),
        prop::collection::vec(peer, 0..=32),
    )
        .prop_map(
            |(
                (port, role, recovery, adaptive, k, m, m_cong),
                (t, eps, hold, flows, bdp, mem),
                (report, node_id, interval, gap, rate, psns),
                r,
                p,
            )| {
                let mut c = Config::DEFAULT;
                c.port = port;
                c.role = Role::from_u8(role).unwrap();
                c.recovery = Recovery::from_u8(recovery).unwrap();
                c.adaptive = adaptive;
                (c.k, c.m, c.m_cong, c.symbol_len) = (k, m, m_cong, t);
                (
                    c.epsilon_ppb,
                    c.hold_us,
                    c.max_flows,
                    c.max_bdp,
                    c.max_memory,
                ) = (eps, hold, flows, bdp, mem);
                (c.report, c.node_id, c.report_interval_us) = (report, node_id, interval);
                (c.report_flow_gap_us, c.report_port_rate, c.report_psns) = (gap, rate, psns);
                for a in r {
                    c.reporters.push(a).unwrap();
                }
                for q in p {
                    c.peers.push(q).unwrap();
                }
                c
            },
        )
}

fn limits() -> impl Strategy<Value = Limits> {
    (
        prop_oneof![Just(8u32), Just(1024), any::<u32>()],
        prop_oneof![Just(32u64 << 20), any::<u64>()],
    )
        .prop_map(|(max_flows, max_memory)| Limits {
            max_flows,
            max_memory,
        })
}

/// A route table: an MTU (or none) per address, from one seed.
fn route(seed: u32) -> impl Fn(Addr) -> Option<u32> {
    move |d: Addr| {
        let h = d
            .octets()
            .iter()
            .fold(0u32, |h, &o| h.rotate_left(5) ^ u32::from(o))
            .wrapping_mul(0x9e37_79b9)
            ^ seed;
        match h % 4 {
            0 => None,
            1 => Some(1500),
            2 => Some(1000 + h % 300),
            _ => Some(h % 70_000),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Whatever it is fed, and in whatever order (also after a refusal):
    /// no panic, and the lists stay within their caps.
    #[test]
    fn edit_never_panics(base in config(), ops in ops(), lim in limits(), seed in any::<u32>(),
                         err in any::<i32>(), serving in any::<u16>()) {
        let mut c = base.clone();
        let mut e = Edit::new(&mut c);
        for o in &ops {
            let _ = feed(&mut e, o);
        }
        let _ = e.given();
        let g = e.finish().unwrap_or(Given::NONE);
        prop_assert!(c.reporters.len() <= MAX_REPORTERS && c.peers.len() <= MAX_PEERS);
        let _ = check_limits(&mut c, g, lim);
        let _ = check_mtu(&c, g, route(seed));
        if let Err(r) = bind_result(&c, g, serving, err) {
            let _ = r.why.to_string();
            prop_assert!(r.errno.get() > 0);
        }
    }

    /// config-set through Edit, finish, the limits (for a limited netns)
    /// and the MTU, against the C re-stated: the same acceptance, the same
    /// refusal (reason, errno, attribute), the same configuration.
    #[test]
    fn config_set_is_the_c(base in config(), ops in ops(), limited in any::<bool>(),
                           lim in limits(), seed in any::<u32>()) {
        let r = route(seed);
        // Rust, as the handler will call it.
        let mut ours = base.clone();
        let rust = rust_apply(&mut ours, &ops).and_then(|g| {
            if limited {
                check_limits(&mut ours, g, lim)?;
            }
            check_mtu(&ours, g, &r)
        });
        // The C.
        let mut theirs = to_c(&base);
        let c = c_apply(&mut theirs, &ops).and_then(|()| {
            if limited {
                c_check_limits(&mut theirs, &ops, lim.max_flows, lim.max_memory)?;
            }
            c_check_mtu(&theirs, &ops, &r)
        });
        prop_assert_eq!(rust.map_err(refusal), c);
        if c.is_ok() {
            prop_assert_eq!(used(&to_c(&ours)), used(&theirs));
        }
    }

    /// The base's lists survive an edit that gives none.
    #[test]
    fn lists_not_given_are_kept(base in config(), ops in prop::collection::vec(op(), 0..10)) {
        let ops: Vec<Op> = ops
            .into_iter()
            .filter(|o| !matches!(o, Op::Reporter(_) | Op::Peer(..) | Op::PeerEmpty))
            .collect();
        let mut c = base.clone();
        let _ = rust_apply(&mut c, &ops);
        prop_assert_eq!(&c.reporters, &base.reporters);
        prop_assert_eq!(&c.peers, &base.peers);
    }

    /// clamp: idempotent, within the limits after, nothing else touched,
    /// and it says whether it changed something.
    #[test]
    fn clamp_is_idempotent(base in config(), lim in limits()) {
        let mut once = base.clone();
        let changed = clamp(&mut once, lim);
        prop_assert_eq!(changed, once != base);
        let mut twice = once.clone();
        prop_assert!(!clamp(&mut twice, lim));
        prop_assert_eq!(&twice, &once);
        prop_assert!(once.max_flows <= lim.max_flows && once.max_memory <= lim.max_memory);
        let mut rest = base.clone();
        rest.max_flows = once.max_flows;
        rest.max_memory = once.max_memory;
        prop_assert_eq!(rest, once);
    }

    /// km is the flow ops' rule (rust/netlink/flow.rs `km`, re-stated).
    #[test]
    fn km_is_the_flow_ops(k in prop::option::of(any::<u8>()), m in prop::option::of(any::<u8>())) {
        let (fk, fm) = (Field::Flow(nl::FLOW_K), Field::Flow(nl::FLOW_M));
        let want = match (k, m) {
            (Some(k), Some(m)) => {
                if k == 0 {
                    Err((Some(fk), Why::KZero))
                } else if u16::from(k) + u16::from(m) > 255 {
                    Err((Some(fm), Why::KPlusM))
                } else if m > 16 {
                    Err((Some(fm), Why::MTooLarge))
                } else {
                    Ok((k, m))
                }
            }
            // ka.or(ma)
            _ => Err((k.map(|_| fk).or(m.map(|_| fm)), Why::KmTogether)),
        };
        prop_assert_eq!(km(k, m).map_err(|r| (r.at, r.why)), want);
    }
}
