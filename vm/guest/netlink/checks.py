#!/usr/bin/env python3
"""checks.py CASE [ARG...]: netlink checks of vm/guest/netlink.sh that need
several requests in a row, run in one process with the YNL library (each
cli.py run costs seconds under TCG). Prints TAP lines ("ok - ...",
"not ok - ..." with the evidence indented) that netlink.sh counts.

Cases:
  port-in-use   config-set to a port another socket holds is refused with
                the reason; the old port keeps its configuration and serves
  race N        two config-set callers at once lose no update (N port flips)
  refusals      values the module cannot serve are refused, not clamped
  request-attrs each op takes only its own attributes, at the top level:
                others refused by its policy; missing ones named at the top
  mtu           symbol-len against the MTU of the route to a peer (netns mtu)
  caps          the policy's caps on max-flows, max-memory, max-bdp and spare-flows
  userns        in a netns of another user namespace: the initial netns's
                limits bound max-flows and max-memory, flow-new stops there
  set-limits F M        config-set max-flows F, max-memory M
  expect-limits NAME F M  check NAME: config-get shows max-flows F, max-memory M
  subscribe refused|allowed NAME  check NAME: joining the events group is that
  reporter      (in a fresh netns) the Path Reporter's attributes: defaults,
                report needs a port, role disabled report on port 7470 taken
                and serving (a datagram makes no flow), every attribute
                round-trips at both ends of its range, each range refused
                with its text at its attribute, a disabled role removes the
                flows though the reporter's socket stays; ends reporting on
                port 7470, role disabled
  udp-ports     print the UDP ports bound in this netns (IPv4 and IPv6)
"""
import errno
import socket
import sys
import threading
import time
sys.path.insert(0, '/tmp/ynl')
from lib import YnlFamily, NlError  # noqa: E402

SPEC = '/tmp/ynl/crem.yaml'


def family():
    return YnlFamily(SPEC, '')  # the spec is validated elsewhere (netlink/gen.sh)


ynl = family()
failed = 0


def report(good, name, evidence=''):
    global failed
    if good:
        print(f'ok - {name}')
    else:
        failed += 1
        print(f'not ok - {name}')
        for line in str(evidence).splitlines():
            print(f'    # {line}')


def extack(e):
    x = e.nl_msg.extack or {}
    return x.get('msg', str(e))


def refused(name, op, req, want):
    """op with req must fail with an extack containing want."""
    try:
        ynl.do(op, req)
        report(False, name, f'{op} {req}: accepted')
    except NlError as e:
        report(want in extack(e), name, f'{op} {req}: {extack(e)}')


def config():
    return ynl.do('config-get', {})


def stats():
    return ynl.do('stats-get', {})


def port_in_use():
    blocker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    blocker.bind(('0.0.0.0', 50001))
    refused('a port in use is refused, saying so and that the old port still serves',
            'config-set', {'port': 50001},
            'port 50001 is in use by another socket; port 50000 still serves CREM')
    blocker.close()
    c = config()
    report(c['port'] == 50000, '...the configuration keeps the old port', c)
    before = stats()['msgs-in']
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'\x12', ('127.0.0.1', 50000))
    time.sleep(0.2)
    after = stats()['msgs-in']
    report(after == before + 1, '...and the old port still receives (msgs-in +1)',
           f'msgs-in {before} -> {after}')


def race(n):
    """One caller flips the port n times (each flip binds a new socket); the
    other sets hold-us to 1, 2, ... meanwhile and reads it back after each
    set. Nobody else sets hold-us: a read-back that differs is a lost update,
    another caller's commit of a stale snapshot."""
    done = threading.Event()

    def flip():
        y = family()
        for i in range(n):
            y.do('config-set', {'port': 50010 + i % 2})
        done.set()

    t = threading.Thread(target=flip)
    lost = sets = 0
    t.start()
    while not done.is_set():
        sets += 1
        ynl.do('config-set', {'hold-us': sets})
        if config()['hold-us'] != sets:
            lost += 1
    t.join()
    report(lost == 0 and sets > 1,
           'concurrent config-sets: none undoes another (a port flipper, a hold-us setter)',
           f'lost {lost} of {sets} hold-us updates')
    ynl.do('config-set', {'port': 50000, 'hold-us': 0})
    with open('/proc/net/udp') as f:
        ports = [int(line.split()[1].split(':')[1], 16) for line in f.readlines()[1:]]
    ports = [p for p in ports if p != 4791]  # rdma_rxe's
    report(config()['port'] == 50000 and ports == [50000],
           '...and the port configured is the one bound (the only UDP socket but rxe\'s)',
           f'bound {ports}, configured {config()["port"]}')


def refusals():
    refused("port 4791 (RoCEv2's) is refused as the CREM port", 'config-set',
            {'port': 4791}, "4791 is RoCEv2's own port")
    refused("m above 16 is refused, naming the module's largest m", 'config-set',
            {'m': 17}, 'm must not exceed 16')
    refused("symbol-len above the decode buffer's 1104 is refused", 'config-set',
            {'symbol-len': 1105}, 'symbol-len must not exceed 1104')
    c = config()
    report((c['port'], c['m'], c['symbol-len']) == (50000, 4, 0),
           '...and nothing of them was taken', c)
    refused('flow-new with m above 16 is refused (was clamped)', 'flow-new',
            {'src': 'c0000201', 'dst': 'cb007101', 'dest-qp': 1, 'k': 8, 'm': 17},
            'm must not exceed 16')
    # Each op's policy has only the attributes it takes (flow-get: id, side,
    # peer); a src there is refused whatever its length (request_attrs).
    refused("address attributes: the policy refuses a 3-octet flow peer before flow-get's handler runs",
            'flow-get', {'id': 1, 'peer': 'c00002'},
            'address must be 4 (IPv4) or 16 (IPv6) octets')
    refused('...and a 3-octet peer prefix', 'config-set',
            {'peer': [{'prefix': 'cb0071', 'prefix-len': 8, 'addr': 'c6336402'}]},
            'address must be 4 (IPv4) or 16 (IPv6) octets')


def refused_as(name, op, req, err, msg, bad=None, miss=None):
    """op with req must fail with errno err and an extack of exactly: the
    text msg, the attribute path bad (YNL's '.name'; None: the extack
    points at no attribute) and the missing attribute miss (its name; None:
    none), never a missing nest (the op's attributes are at the top level)."""
    try:
        ynl.do(op, req)
        report(False, name, f'{op} {req}: accepted')
        return
    except NlError as e:
        x = e.nl_msg.extack or {}
        got = (e.error, x.get('msg'), x.get('bad-attr', x.get('bad-attr-offs')),
               x.get('miss-type'), x.get('miss-nest'))
    want = (err, msg, bad, miss, None)
    report(got == want, name, f'{op} {req}: (errno, msg, bad-attr, miss-type, miss-nest) '
           f'{got}, want {want}')


def request_attrs():
    """Each op takes its own attributes at the top level of its request
    (the spec's do request list, the op's policy): genetlink refuses any
    other before the handler runs, as strict validation does: an attribute
    of the op's set that the op does not list is NLA_UNSPEC in its policy
    ("Unsupported attribute"), one past the largest it lists is beyond its
    maxattr ("Unknown attribute type"); both EINVAL, pointing at it."""
    src, dst = 'c0000201', 'cb007101'
    refused_as('flow-del with k (not a flow-del attribute): "Unsupported attribute", at k',
               'flow-del', {'id': 1, 'k': 4}, errno.EINVAL, 'Unsupported attribute', '.k')
    refused_as('flow-get with src: "Unsupported attribute", at src',
               'flow-get', {'id': 1, 'src': src}, errno.EINVAL, 'Unsupported attribute', '.src')
    refused_as('flow-set with dst: "Unsupported attribute", at dst',
               'flow-set', {'id': 1, 'dst': dst}, errno.EINVAL, 'Unsupported attribute', '.dst')
    refused_as('flow-new with id: "Unsupported attribute", at id',
               'flow-new', {'src': src, 'dst': dst, 'dest-qp': 1, 'id': 5},
               errno.EINVAL, 'Unsupported attribute', '.id')
    refused_as("flow-new with pinned (past flow-new's largest, kind): "
               '"Unknown attribute type", at pinned',
               'flow-new', {'src': src, 'dst': dst, 'dest-qp': 1, 'pinned': 1},
               errno.EINVAL, 'Unknown attribute type', '.pinned')
    refused_as("flow-reset with pinned (past flow-reset's largest, peer): "
               '"Unknown attribute type", at pinned',
               'flow-reset', {'id': 1, 'pinned': 0}, errno.EINVAL, 'Unknown attribute type',
               '.pinned')
    # A missing attribute: the extack names its type at the top level (no
    # missing nest) and points at no attribute.
    for op in ('flow-get', 'flow-del', 'flow-set', 'flow-reset'):
        refused_as(f'{op} without id: the id named missing, no nest, no attribute pointed at',
                   op, {'side': 1}, errno.EINVAL, "the flow's id is required", None, 'id')
    refused_as('flow-get with no attribute at all: the same',
               'flow-get', {}, errno.EINVAL, "the flow's id is required", None, 'id')
    refused_as('flow-new without src: src named missing',
               'flow-new', {'dst': dst, 'dest-qp': 1}, errno.EINVAL, 'a new flow needs src',
               None, 'src')
    refused_as('flow-new without dst: dst named missing',
               'flow-new', {'src': src, 'dest-qp': 1}, errno.EINVAL, 'a new flow needs dst',
               None, 'dst')
    refused_as('flow-new without dest-qp: dest-qp named missing',
               'flow-new', {'src': src, 'dst': dst}, errno.EINVAL, 'a new flow needs dest-qp',
               None, 'dest-qp')
    refused_as('flow-new with no attribute at all: src named missing first',
               'flow-new', {}, errno.EINVAL, 'a new flow needs src', None, 'src')
    # A config-set rule whose attribute was not given names the request as
    # a whole: no attribute pointed at (it was the config nest). Here port
    # 50000 and role host are set: port 0 alone leaves the role without one.
    refused_as('config-set port 0 under a role: refused, pointing at no attribute (role not given)',
               'config-set', {'port': 0}, errno.EINVAL,
               'set a CREM port before enabling a role (there is no default port)')
    # An empty config-set is a request that sets nothing: taken, the
    # configuration unchanged.
    before = config()
    name = 'config-set with no attribute: taken (nothing set), the configuration unchanged'
    try:
        r = ynl.do('config-set', {})
        report(r is None and config() == before, name,
               f'reply {r}; before {before}; after {config()}')
    except NlError as e:
        report(False, name, f'refused: errno {e.error}, extack {e.nl_msg.extack}')


def mtu():
    peer = [{'prefix': '0a080000', 'prefix-len': 16, 'addr': '0a090002'}]
    refused('symbol-len whose REPAIRs exceed the MTU toward a peer is refused', 'config-set',
            {'symbol-len': 1000, 'peer': peer},
            'symbol-len 1000: REPAIRs need MTU 1112, the route to 10.9.0.2 has 1000')
    ynl.do('config-set', {'symbol-len': 888, 'peer': peer})
    report(config()['symbol-len'] == 888, '...one that fits is taken', config())
    # An IPv6 peer: its route's MTU (locked at 1200), with a 40-octet IP
    # header: 1104 + 132 = 1236 does not fit, 1068 + 132 = 1200 does.
    peer6 = [{'prefix': '20010db8000900000000000000000000', 'prefix-len': 64,
              'addr': '20010db8000900000000000000000002'}]
    refused('an IPv6 peer: symbol-len 1104 (REPAIRs of 1236) over a route of 1200 is refused',
            'config-set', {'symbol-len': 1104, 'peer': peer6},
            'MTU 1200 to 2001:db8:9::2 < 1236 for symbol-len 1104')
    ynl.do('config-set', {'symbol-len': 1068, 'peer': peer6})
    report(config()['symbol-len'] == 1068, '...1068 (1200 with IPv6) is taken', config())


def caps():
    refused('policy cap: max-flows above 65536 is refused', 'config-set',
            {'max-flows': 65537}, 'out of range')
    refused('policy cap: max-memory above 64 GiB is refused', 'config-set',
            {'max-memory': (64 << 30) + 1}, 'out of range')
    ynl.do('config-set', {'max-flows': 65536, 'max-memory': 64 << 30})
    c = config()
    report((c['max-flows'], c['max-memory']) == (65536, 64 << 30), '...the caps themselves are taken', c)
    report(c.get('max-bdp') == 256, 'max-bdp: flows are sized for 256 packets in flight by default', c)
    for bad in (63, (1 << 19) + 1):
        refused(f'policy cap: max-bdp {bad} (outside 64..524288) is refused', 'config-set',
                {'max-bdp': bad}, 'out of range')
    ynl.do('config-set', {'max-bdp': 6104})
    report(config().get('max-bdp') == 6104, '...6104 (10 Gbit/s x 20 ms at 4 KiB) is taken', config())
    ynl.do('config-set', {'max-bdp': 256})
    report(config().get('spare-flows') == 8, 'spare-flows: eight flows made ahead per side by default', config())
    refused('policy cap: spare-flows 65 (above 64) is refused', 'config-set',
            {'spare-flows': 65}, 'out of range')
    for n in (64, 0, 8):
        ynl.do('config-set', {'spare-flows': n})
        report(config().get('spare-flows') == n, f'...spare-flows {n} is taken', config())


def userns():
    """Run as root of a new user namespace with its own netns, while the
    initial netns has max-flows 8 and max-memory 32 MiB."""
    refused("user namespace's netns: max-flows above the initial netns's is refused",
            'config-set', {'max-flows': 100},
            "max-flows 100 is above the initial netns's max-flows (8)")
    refused('...so is max-memory', 'config-set', {'max-memory': 64 << 20},
            "max-memory 67108864 is above the initial netns's (33554432)")
    c = config()
    report((c['max-flows'], c['max-memory']) == (8, 32 << 20),
           '...its defaults are shown within them', c)
    # No route to the peer here (lo only): the flows stay negotiating.
    ynl.do('config-set', {'port': 7000, 'role': 2, 'peer': [
        {'prefix': '0a000000', 'prefix-len': 8, 'addr': 'c6336402'}]})
    added, why = 0, 'none'
    for q in range(1, 13):
        try:
            ynl.do('flow-new', {'src': 'c0000201', 'dst': '0a000001', 'dest-qp': q})
            added += 1
        except NlError as e:
            why = extack(e)
            break
    report(added == 8 and 'max-flows (8) sender flows are set up already' in why,
           '...a loop of flow-new stops at the cap, the extack naming it',
           f'added {added}; refused: {why}')


def set_limits(f, m):
    ynl.do('config-set', {'max-flows': int(f), 'max-memory': int(m)})


def expect_limits(name, f, m):
    c = config()
    report((c['max-flows'], c['max-memory']) == (int(f), int(m)), name, c)


def subscribe(want, name):
    try:
        ynl.ntf_subscribe('events')
        got, why = 'allowed', 'joined'
    except PermissionError as e:
        got, why = 'refused', e
    report(got == want, name, why)


REPORTER_DEFAULTS = {'report': 'off', 'node-id': 0, 'report-interval-us': 50,
                     'report-flow-gap-us': 1000, 'report-port-rate': 10000, 'report-psns': 64}


def udp_ports():
    """The UDP ports bound in this netns, IPv4 and IPv6."""
    ports = set()
    for f in ('/proc/net/udp', '/proc/net/udp6'):
        try:
            with open(f) as fh:
                ports |= {int(line.split()[1].rsplit(':', 1)[1], 16) for line in fh.readlines()[1:]}
        except FileNotFoundError:
            pass
    return ports


def reporter():
    c = config()
    got = {k: c.get(k) for k in REPORTER_DEFAULTS}
    report(got == REPORTER_DEFAULTS, 'reporter defaults: report off, node-id 0 (auto), interval 50 us, '
           'flow gap 1000 us, port rate 10000/s, 64 PSNs', c)
    refused_as('report on without a port: refused, naming report', 'config-set', {'report': 1},
               errno.EINVAL, 'set a CREM port before turning report on (reports are sent from it)',
               '.report')
    ynl.do('config-set', {'port': 7470, 'role': 0, 'report': 1})
    c = config()
    report((c['role'], c['report'], c['port']) == ('disabled', 'on', 7470),
           'role disabled report on port 7470: taken (a reporter only)', c)
    report(7470 in udp_ports(), '...its port is bound, though the role is disabled', udp_ports())
    # The socket serves, but a netns whose role is disabled has no flow and
    # makes none: a datagram is counted, and dropped as for no flow.
    before = stats()
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'\x12', ('127.0.0.1', 7470))
    time.sleep(0.2)
    after = stats()
    d = {k: after[k] - before[k] for k in ('msgs-in', 'drop-msg-no-flow', 'flows-created')}
    report(d == {'msgs-in': 1, 'drop-msg-no-flow': 1, 'flows-created': 0},
           '...a datagram to it is received and dropped for no flow (none is made)', d)
    for ends in ({'node-id': 0xdeadbeef, 'report-interval-us': 1, 'report-flow-gap-us': 0,
                  'report-port-rate': 1, 'report-psns': 1},
                 {'node-id': 1, 'report-interval-us': 1000000, 'report-flow-gap-us': 10000000,
                  'report-port-rate': 1000000, 'report-psns': 64}):
        ynl.do('config-set', ends)
        c = config()
        report({k: c.get(k) for k in ends} == ends, f'config-get round-trips {ends}', c)
    before = config()
    for attr, bad, text in (
            ('report-psns', 0, 'report-psns must be 1 to 64 (the PSNs a report lists at most)'),
            ('report-psns', 65, 'report-psns must be 1 to 64 (the PSNs a report lists at most)'),
            ('report-interval-us', 0, 'report-interval-us must be 1 to 1000000 (1 s)'),
            ('report-interval-us', 1000001, 'report-interval-us must be 1 to 1000000 (1 s)'),
            ('report-flow-gap-us', 10000001, 'report-flow-gap-us must not exceed 10000000 (10 s)'),
            ('report-port-rate', 0, 'report-port-rate must be 1 to 1000000 reports per second'),
            ('report-port-rate', 1000001,
             'report-port-rate must be 1 to 1000000 reports per second')):
        refused_as(f'{attr} {bad}: refused with its text, at {attr}', 'config-set',
                   {attr: bad, 'k': 8}, errno.EINVAL, text, f'.{attr}')
    refused('report 2: refused by the policy (a flag)', 'config-set', {'report': 2},
            'out of range')
    report(config() == before, '...and nothing of them was taken', config())
    ynl.do('config-set', dict(REPORTER_DEFAULTS, report=1))
    # A reporting gateway's flows go when its role is disabled, though its
    # socket (the reporter's) stays: no flow in a netns with no role.
    ynl.do('config-set', {'role': 2, 'peer': [
        {'prefix': '0a000000', 'prefix-len': 8, 'addr': 'c6336402'}]})
    ynl.do('flow-new', {'src': 'c0000201', 'dst': '0a000001', 'dest-qp': 1})
    n = len(ynl.dump('flow-get', {}))
    ynl.do('config-set', {'role': 0})
    flows = ynl.dump('flow-get', {})
    report(n == 1 and flows == [] and 7470 in udp_ports(),
           'a reporting gateway whose role is disabled: its flow removed, its port still bound',
           f'flows {n} -> {flows}; udp {udp_ports()}')


CASES = {'port-in-use': port_in_use, 'race': lambda n: race(int(n)), 'refusals': refusals,
         'request-attrs': request_attrs,
         'mtu': mtu, 'caps': caps, 'userns': userns, 'set-limits': set_limits,
         'expect-limits': expect_limits, 'subscribe': subscribe, 'reporter': reporter,
         'udp-ports': lambda: print(' '.join(str(p) for p in sorted(udp_ports())))}
try:
    CASES[sys.argv[1]](*sys.argv[2:])
except NlError as e:
    report(False, f'{sys.argv[1]}: unexpected refusal', extack(e))
sys.exit(1 if failed else 0)
