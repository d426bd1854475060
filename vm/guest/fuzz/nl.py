#!/usr/bin/env python3
"""nl.py: fuzz the "crem" generic netlink family on a raw socket
(vm/guest/fuzz-kernel.sh).

  nl.py --spec crem.yaml --seconds N --seed S --label NAME
        --target NETNS[:OP,OP] ... [--userns]

Requests are built from the YNL spec: for each operation the attributes
its do request lists (its attribute-set's, at the message's top level, as
the op's policy takes them), each present or not, with valid values (the
checks' ranges, enums, 4- or 16-octet addresses, Flow IDs of the live flows
from a dump every few seconds); now and then an attribute of the op's set
that the op does not list (its policy refuses it: "Unsupported attribute",
or "Unknown attribute type" past its largest) or one of another set; then
mutated: wrong types and lengths, unknown and extra attributes, attributes
missing, nests flattened or nested too deep, repeated multi-attrs, huge
values, bad genetlink headers and commands, no NLM_F_ACK or NLM_F_REQUEST.
One process fuzzes several targets, each a socket in a netns with its
own operations (--target NAME[:SKIPPED,OPS], NAME a /run/netns name or
"self"); --userns first opens the sockets of the targets given (as the
caller: nobody, say), then becomes root of a new user and network
namespace (unshare -U -n -r) and adds the target "userns" there.
Dumps run to their end on a small receive buffer (many continuations), or
are left half read with the socket closed (the kernel's ->done path), or
have requests interleaved on another socket. Deterministic for a seed and a
flow table. Prints execs (messages sent) and the answers by errno."""
import argparse
import ctypes
import errno
import os
import random
import socket
import struct
import sys
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genl  # noqa: E402
from genl import nla, NLA_F_NESTED, NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP  # noqa: E402

INTERESTING = [0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 65536, 65537, 1000000,
               1000001, 0x7fffffff, 0x80000000, 0xffffffff, 1 << 32, 68719476736,
               68719476737, (1 << 64) - 1]
WIDTH = {'u8': 1, 'u16': 2, 'u32': 4, 'u64': 8, 'pad': 0}
# A uint (the counters) is 4 octets, or 8: each width at random.
UINT_WIDTHS = (4, 8)


class Spec:
    def __init__(self, path):
        # libyaml's loader: the pure-python one takes tens of seconds under TCG.
        y = yaml.load(open(path), Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))
        self.enums = {d['name']: d for d in y.get('definitions', [])}
        self.sets = {}
        for s in y['attribute-sets']:
            self.sets[s['name']] = [dict(a, value=i + 1) for i, a in enumerate(s['attributes'])]
        ops = y['operations']['list']
        set_of = {o['name']: o.get('attribute-set') for o in ops}
        self.ops = []
        for i, o in enumerate(ops):
            # Each op's messages carry its set's attributes at the top level
            # (a notification's: those of the op it notifies as).
            aset = o.get('attribute-set') or set_of.get(o.get('notify'))
            if 'notify' in o or 'event' in o:
                self.ops.append({'name': o['name'], 'value': i + 1, 'req': [], 'notify': True,
                                 'set': aset})
                continue
            req = ((o.get('do') or {}).get('request') or {}).get('attributes', [])
            self.ops.append({'name': o['name'], 'value': i + 1, 'req': req,
                             'do': 'do' in o, 'dump': 'dump' in o, 'set': aset})

    def op_value(self, name):
        return next(o['value'] for o in self.ops if o['name'] == name)

    def attr_value(self, set_name, name):
        return next(a['value'] for a in self.sets[set_name] if a['name'] == name)


def check_genl_numbers(spec):
    """genl.py's numbers (wire.py learns the flows and the handlers' counts
    with them) must be the spec's: the mismatches, as text."""
    bad = []
    want = {'CMD_FLOW_GET': spec.op_value('flow-get'), 'CMD_STATS_GET': spec.op_value('stats-get'),
            'A_STATS_TOTALS': spec.attr_value('stats', 'totals'),
            'A_FLOW_STATS_MSGS_IN_BY_TYPE': spec.attr_value('flow-stats', 'msgs-in-by-type')}
    for k, v in want.items():
        if getattr(genl, k) != v:
            bad.append(f'genl.{k} is {getattr(genl, k)}, the spec has {v}')
    for v, name in genl.FLOW.items():
        if spec.attr_value('flow', name) != v:
            bad.append(f'genl.FLOW[{v}] is {name}, the spec has {spec.attr_value("flow", name)}')
    names = [a['name'] for a in spec.sets['msg-types']]
    if genl.MSG_TYPES != names:
        bad.append(f'genl.MSG_TYPES is {genl.MSG_TYPES}, the spec has {names}')
    return bad


class Fuzz:
    def __init__(self, rng, spec, fid, groups):
        self.r, self.spec, self.fid, self.groups = rng, spec, fid, groups
        self.flows = []

    # -- values ----------------------------------------------------------------
    def addr(self):
        c = self.r.random()
        if c < 0.4 and self.flows:
            f = self.r.choice(self.flows)
            return f.get(self.r.choice(['src', 'dst', 'peer']), b'\x0a\0\0\x02')
        if c < 0.7:
            # 10.8.0.0/16: nz's configured peer (fuzz-kernel.sh), so that
            # flow-new there finds one.
            return bytes([self.r.choice([10, 192, 203, 0, 255, 127]), self.r.choice([0, 8]),
                          self.r.randint(0, 2), self.r.randint(0, 255)])
        if c < 0.85:
            return bytes(self.r.getrandbits(8) for _ in range(16))
        return b''

    def scalar(self, a):
        t = a['type']
        w = self.r.choice(UINT_WIDTHS) if t == 'uint' else WIDTH[t]
        chk = a.get('checks', {})
        name = a['name']
        c = self.r.random()
        if name == 'id' and self.flows and c < 0.6:
            v = self.r.choice(self.flows).get('id', 0)
        elif name == 'port' and c < 0.5:
            v = self.r.choice([0, 7470, 7471, 4791, 50000, 65535])
        elif 'enum' in a and c < 0.8:
            v = self.r.randrange(len(self.spec.enums[a['enum']]['entries']))
        elif ('max' in chk or 'min' in chk) and c < 0.7:
            lo, hi = chk.get('min', 0), chk.get('max', (1 << (8 * w)) - 1)
            hi = hi if isinstance(hi, int) else (1 << (8 * w)) - 1
            v = self.r.choice([lo, hi, self.r.randint(lo, min(hi, lo + 300))])
        elif name in ('k', 'm', 'm-cong') and c < 0.8:
            v = self.r.choice([0, 1, 2, 4, 8, 16, 17, 32, 64, 200, 254, 255])
        elif name in ('symbol-len',) and c < 0.8:
            v = self.r.choice([0, 63, 64, 1000, 1104, 1105, 4000, 65535])
        elif name in ('max-flows',) and c < 0.8:
            v = self.r.choice([0, 1, 2, 8, 64])  # small: flow-new keeps creating
        else:
            v = self.r.choice(INTERESTING)
        return (v & ((1 << (8 * w)) - 1)).to_bytes(w, 'little')

    def attr(self, a, depth):
        """One attribute of the spec, usually valid."""
        t = a['type']
        if t == 'nest':
            return nla(a['value'] | (NLA_F_NESTED if self.r.random() < 0.9 else 0),
                       self.nest(a['nested-attributes'], depth + 1))
        if t == 'binary':
            return nla(a['value'], self.addr())
        if t == 'pad':
            return nla(a['value'], b'\0' * self.r.choice([0, 4, 8]))
        return nla(a['value'], self.scalar(a))

    def some(self, attrs, depth, p):
        """Each of @attrs with probability @p (a multi-attr repeated): the
        encoded attributes, one bytes each."""
        out = []
        for a in attrs:
            if self.r.random() >= p:
                continue
            reps = 1
            if a.get('multi-attr'):
                reps = self.r.choice([1, 1, 2, 3, 8, 64, 300])
            out += [self.attr(a, depth) for _ in range(reps)]
        return out

    def nest(self, set_name, depth=0):
        if depth > 3:
            return b''
        return b''.join(self.some(self.spec.sets[set_name], depth, 0.35))

    def mutate_attrs(self, body, attrs):
        """Attribute-level damage to a built body; @attrs: the op's set (its
        types are the message's top-level types)."""
        b = bytearray(body)
        n = max(len(attrs), 1)
        nests = [a for a in attrs if a['type'] == 'nest']
        for _ in range(self.r.randint(1, 3)):
            c = self.r.randrange(9)
            if c == 0:   # unknown attribute type, beyond the set
                b += nla(self.r.choice([0, n + 1, n + 2, 31, 0x3fff]),
                         self.r.randbytes(self.r.choice([0, 1, 4, 8, 17])))
            elif c == 1 and len(b) >= 4:   # wrong length of the first attribute
                b[0:2] = struct.pack('=H', self.r.choice([0, 1, 3, 4, 5, 7, len(b) + 4, 0xffff]))
            elif c == 2:   # an attribute of the set with the wrong width
                t = self.r.randint(1, n)
                b += nla(t, self.r.randbytes(self.r.choice([0, 1, 2, 3, 5, 7, 9, 16, 17])))
            elif c == 3:   # a nest of nests of nests
                inner = nla(1, b'\1')
                for _ in range(self.r.choice([2, 8, 30])):
                    t = self.r.choice(nests)['value'] if nests and self.r.random() < 0.5 \
                        else self.r.randint(1, n)
                    inner = nla(t | NLA_F_NESTED, inner)
                b += inner
            elif c == 4 and b:   # truncate
                del b[self.r.randrange(len(b)):]
            elif c == 5 and b:
                i = self.r.randrange(len(b))
                b[i] ^= 1 << self.r.randrange(8)
            elif c == 6 and attrs:   # a nest given flat, or a scalar given as a nest
                a = self.r.choice(nests if nests and self.r.random() < 0.5 else attrs)
                if a['type'] == 'nest':
                    b += nla(a['value'], self.r.randbytes(self.r.choice([1, 4, 8])))
                else:
                    b += nla(a['value'] | NLA_F_NESTED, nla(1, self.r.randbytes(4)))
            elif c == 7:   # duplicate it all
                b += bytes(b)
            elif c == 8:   # huge: many attributes
                b += nla(self.r.randint(1, n), b'\0' * 4) * self.r.choice([100, 1000])
        return bytes(b[:60000])

    def message(self):
        """(op name, cmd, flags, body, version, is dump)."""
        # Notifications are no requests: a few, for their EOPNOTSUPP.
        op = self.r.choices(self.ops, [0.15 if o.get('notify') else 1 for o in self.ops])[0]
        dump = op.get('dump', False) and self.r.random() < 0.6 or self.r.random() < 0.05
        # The op's own attributes, at the top level: each of those its do
        # request lists, present with a probability drawn per message (from
        # nearly empty requests to full ones; most are well-formed).
        attrs = self.spec.sets.get(op.get('set'), [])
        listed = [a for a in attrs if a['name'] in op['req']]
        parts = self.some(listed, 0, self.r.choice([0.3, 0.6, 0.9, 1.0]))
        unlisted = [a for a in attrs if a['name'] not in op['req']]
        if unlisted and self.r.random() < 0.1:
            # One of the op's set that it does not take: its policy refuses
            # it (an op without a policy, a get or the dump, ignores it).
            parts.insert(self.r.randint(0, len(parts)), self.attr(self.r.choice(unlisted), 0))
        if self.r.random() < 0.05:   # one of another set: the same types, other meanings
            other = self.spec.sets[self.r.choice(sorted(self.spec.sets))]
            parts.insert(self.r.randint(0, len(parts)), self.attr(self.r.choice(other), 0))
        if self.r.random() < 0.2:   # any order (the reporter and peer lists' too)
            self.r.shuffle(parts)
        body = b''.join(parts)
        if self.r.random() < 0.35:
            body = self.mutate_attrs(body, attrs)
        cmd, version = op['value'], 1
        flags = NLM_F_REQUEST | NLM_F_ACK | (NLM_F_DUMP if dump else 0)
        c = self.r.random()
        if c < 0.03:
            cmd = self.r.choice([0, 14, 15, 100, 255])
        elif c < 0.06:
            version = self.r.choice([0, 2, 255])
        elif c < 0.08:
            flags = self.r.getrandbits(16)
        elif c < 0.10:
            flags &= ~NLM_F_ACK
        return op['name'], cmd, flags, body, version, bool(flags & NLM_F_DUMP)


class Target:
    """A socket of the fuzzer in one netns, with the operations it may send."""
    def __init__(self, name, ops, fresh):
        """@fresh(**Genl args) opens another socket there (None: cannot)."""
        self.name, self.ops, self.fresh = name, ops, fresh
        self.flows, self.n = [], 0


def become_userns_root():
    """unshare -U -n -r: root of a new user namespace (mapped to the caller)
    with a new network namespace of its own."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(0x10000000 | 0x40000000) != 0:  # CLONE_NEWUSER | CLONE_NEWNET
        raise OSError(ctypes.get_errno(), 'unshare')
    with open('/proc/self/setgroups', 'w') as f:
        f.write('deny')
    with open('/proc/self/uid_map', 'w') as f:
        f.write(f'0 {uid} 1')
    with open('/proc/self/gid_map', 'w') as f:
        f.write(f'0 {gid} 1')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--spec', required=True)
    ap.add_argument('--seconds', type=float, default=60)
    ap.add_argument('--seed', type=int, default=None)
    ap.add_argument('--label', default='nl')
    ap.add_argument('--target', action='append', default=[])
    ap.add_argument('--userns', action='store_true')
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), 'big')
    print(f'{a.label}: seed {seed} (replay: FUZZ_SEED={seed}), uid {os.getuid()}', flush=True)
    rng = random.Random(seed)
    spec = Spec(a.spec)
    bad = check_genl_numbers(spec)
    if bad:
        print(f'{a.label}: genl.py does not match {a.spec}: ' + '; '.join(bad), flush=True)
        sys.exit(1)
    targets = []
    fid = groups = None

    def add(name, skip, fresh, sock=None):
        nonlocal fid, groups
        t = Target(name, [o for o in spec.ops if o['name'] not in skip], fresh)
        t.sock = sock or fresh()
        if fid is None:
            fid, groups = t.sock.family('crem')
        targets.append(t)

    for spec_t in a.target:
        name, _, skip = spec_t.partition(':')
        skip = set(filter(None, skip.split(',')))
        if name == 'self':
            add(name, skip, genl.Genl)
        elif a.userns:
            # The netns we were started in (ip netns exec NAME setpriv ...),
            # opened before the unshare: no new sockets there later.
            add(name, skip, None, genl.Genl())
        else:
            def fresh(path=f'/run/netns/{name}', **kw):
                genl.setns(path)
                return genl.Genl(**kw)
            add(name, skip, fresh)
    if a.userns:
        become_userns_root()
        add('userns', set(), genl.Genl)
    fz = Fuzz(rng, spec, fid, groups)
    print(f'{a.label}: family {fid}, groups {groups}, targets ' +
          ' '.join(f"{t.name}({len(t.ops)} ops)" for t in targets), flush=True)
    answers = {}
    by_op = {}
    n = 0
    t0 = time.time()
    end = t0 + a.seconds
    learnt = 0

    def note(err):
        k = 'ok' if not err else (errno.errorcode.get(err, str(err)) if err > 0 else str(err))
        answers[k] = answers.get(k, 0) + 1

    def count(t, name):
        nonlocal n
        n += 1
        t.n += 1
        by_op[name] = by_op.get(name, 0) + 1

    def ask(t, g, name, cmd, flags, body, version, dump, mode='full'):
        try:
            seq = g.send(fid, flags, cmd, body, version=version)
        except OSError as e:
            note(e.errno)
            return
        count(t, name)
        if not flags & NLM_F_REQUEST or (not flags & NLM_F_ACK and not dump):
            return   # possibly no answer at all: don't wait for one
        if mode == 'abandon':
            try:
                g.s.recv(300)   # the first part of the dump, then the socket goes
            except OSError:
                pass
            return
        try:
            err, _ = g.recv_all(seq, limit=rng.choice([512, 4096, 1 << 16]) if dump else 1 << 16)
            note(err)
        except OSError as e:
            note(e.errno or errno.ETIMEDOUT)

    while time.time() < end:
        if time.time() - learnt > 3:
            for t in targets:
                try:
                    t.flows = genl.flows(t.sock, fid)
                except OSError:
                    t.flows = []
            learnt = time.time()
        t = rng.choice(targets)
        fz.ops, fz.flows = t.ops, t.flows
        name, cmd, flags, body, version, dump = fz.message()
        c = rng.random()
        own = t.fresh is not None   # another socket there can be opened
        if dump and c < 0.15 and own:
            # A dump abandoned half read: the kernel ends it when the socket goes.
            g = t.fresh(rcvbuf=rng.choice([256, 1024]))
            ask(t, g, name, cmd, flags, body, version, dump, mode='abandon')
            g.close()
        elif dump and c < 0.3 and own:
            # A dump on a tiny receive buffer: one continuation per flow or so,
            # with requests on the main socket between its parts.
            g = t.fresh(rcvbuf=256)
            try:
                seq = g.send(fid, flags, cmd, body, version=version)
                count(t, name)
                for _ in range(rng.randint(1, 4)):
                    ask(t, t.sock, *fz.message())
                err, _ = g.recv_all(seq, limit=rng.choice([512, 1024]))
                note(err)
            except OSError as e:
                note(e.errno or errno.ETIMEDOUT)
            g.close()
        elif c < 0.02:
            # Join the events group (needs CAP_NET_ADMIN over the netns).
            try:
                t.sock.s.setsockopt(genl.SOL_NETLINK, genl.NETLINK_ADD_MEMBERSHIP, groups.get('events', 1))
                note(0)
                t.sock.s.setsockopt(genl.SOL_NETLINK, 2, groups.get('events', 1))  # DROP_MEMBERSHIP
            except OSError as e:
                note(e.errno)
            count(t, 'join-events')
        elif c < 0.04 and own:
            # Raw damage to the netlink and genetlink headers themselves.
            raw = bytearray(struct.pack('=IHHII', 0, fid, NLM_F_REQUEST | NLM_F_ACK, 1, 0) +
                            struct.pack('=BBH', cmd, version, 0) + body)
            raw[0:4] = struct.pack('=I', rng.choice([len(raw), 16, 17, 19, 20, len(raw) + 8, len(raw) - 1]))
            raw = bytes(raw[:rng.choice([len(raw), 16, 18, 19, 20, 24])])
            try:
                t.sock.send(fid, 0, 0, b'', raw=raw)
                count(t, 'raw')
            except OSError as e:
                note(e.errno)
            t.sock.close()   # whatever it left unread goes with the socket
            t.sock = t.fresh()
        else:
            ask(t, t.sock, name, cmd, flags, body, version, dump)
    dt = time.time() - t0
    print(f'{a.label}: {n} messages in {dt:.0f} s ({n / dt:.0f}/s): ' +
          ' '.join(f'{t.name}={t.n}' for t in targets), flush=True)
    print(f'{a.label}: by op ' + ' '.join(f'{k}={v}' for k, v in sorted(by_op.items())), flush=True)
    print(f'{a.label}: answers ' + ' '.join(f'{k}={v}' for k, v in sorted(answers.items())), flush=True)
    print(f'{a.label}-execs={n}', flush=True)


if __name__ == '__main__':
    main()
