#!/usr/bin/env python3
"""wire.py: fuzz the CREM port of a gateway with generated and mutated CREM
datagrams (vm/guest/fuzz-kernel.sh).

  wire.py --seconds N --seed S --target-ns n1 --target 10.0.0.1:7470
          --from-ns n2 --peer A --reporter B --stranger C --corpus DIR
          [--last FILE]

Every message type of crem-draft (and the Private Use TC_AETH, type 12) is
built field by field; the fields that the module checks before a handler
sees the message (Flow ID, the flow's addresses and QP for HELLO and
PATH_REPORT, config id, scheme, k, T) are taken from the target's live flows
most of the time, learnt over genetlink from the target netns every second,
and a HELLO_ACK echoes the nonce of a HELLO the target sent (read off the
wire in the peer's netns, as an on-path attacker could), so mutations get
past the first checks into the engines. Then some are
mutated (truncation, extension, bit flips, interesting values, a wrong
Length, splices of the corpus), and some datagrams are blind random bytes.
They leave from the configured peer, an allow-listed reporter and a
stranger. The peer's own CREM runs too, so to show what the fuzzer alone
reaches, for the last --window fraction of the run the peer's genuine
messages (from its CREM port) are dropped before the target (nft in the
target netns): the target's handlers count only the fuzzer's then, and
their counts by type over that window are printed ("window reach"); in
the window, half the typed messages go to types no handler has taken yet,
and while one is left at the end the window runs on (--extend).
Deterministic for a seed, a flow table, the nonces seen and the handlers' counts: the seed is
printed, and the flow tables learnt go to the console. The last messages sent are
kept in --last (hex, one a line) so a crash leaves its inputs behind."""
import argparse
import os
import random
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genl  # noqa: E402

TYPES = {1: 'repair', 2: 'hello', 3: 'hello-ack', 4: 'param-update', 5: 'param-ack',
         6: 'repair-request', 7: 'loss-report', 8: 'path-report', 9: 'close', 12: 'tc-aeth'}
# Who handles a type at the target: its CRF flows or its CSF flows.
TO_CRF = {1, 2, 4, 9}
TO_CSF = {3, 5, 6, 7, 8, 9, 12}
INTERESTING32 = [0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000,
                 0xffffff, 0x1000000, 0x7fffffff, 0x80000000, 0xffffffff]


class Gen:
    def __init__(self, rng, corpus, fixtures):
        self.r = rng
        # Types no flow handler has taken yet in the window: half the typed
        # messages go to them, unmutated (a short run on the debug kernel
        # sends a few hundred datagrams there; by chance alone a type could
        # miss: stop 25's 2-minute run left repair-request out).
        self.prefer = set()
        self.corpus = corpus
        self.fixtures = fixtures  # RoCE UDP payloads (BTH..ICRC) for symbols
        self.flows = []
        # Nonces of the target's recent HELLOs, seen on the wire: a HELLO_ACK
        # reaches a CSF only with its HELLO's nonce (the draft's defence
        # against blind injection), so the fuzzer plays the on-path attacker.
        self.nonces = []

    # -- field choices ------------------------------------------------------
    def pick(self, side):
        fl = [f for f in self.flows if f.get('side') == side]
        return self.r.choice(fl) if fl and self.r.random() < 0.85 else None

    def u(self, bits, live=None):
        """A value of @bits: the live one (if given) most of the time, else an
        interesting or random one."""
        r = self.r.random()
        if live is not None and r < 0.7:
            return live
        if r < 0.85:
            return self.r.choice(INTERESTING32) & ((1 << bits) - 1)
        return self.r.getrandbits(bits)

    def small(self, live, lo, hi):
        return live if live is not None and self.r.random() < 0.7 else self.r.randint(lo, hi)

    def header(self, typ, flags, fid, body, version=1):
        return struct.pack('!BBHI', (version << 4) | typ, flags, (8 + len(body)) & 0xffff, fid) + body

    def bitmap(self, k):
        """ceil(k/32) words; the bits beyond k clear most of the time (the
        decoder refuses them)."""
        words = (k + 31) // 32
        c = self.r.random()
        if c < 0.35:
            v = (1 << (32 * words)) - 1
        elif c < 0.4:
            v = 0
        else:
            v = self.r.getrandbits(32 * words) if words else 0
        if self.r.random() < 0.85:
            v &= ((1 << k) - 1) << (32 * words - k)
        return v.to_bytes(4 * words, 'big')

    def symbol(self, t):
        """T octets: uint16 length || a RoCE payload || zeros, or random."""
        if t and self.fixtures and self.r.random() < 0.5:
            p = self.r.choice(self.fixtures)
            s = struct.pack('!H', len(p)) + p
            return (s + b'\0' * t)[:t]
        return self.r.randbytes(min(t, 2048))

    def addrs(self, f, af):
        if f and af == 4 and self.r.random() < 0.9:
            return f['src'] + f['dst'], f['dest-qp']
        n = 4 if af == 4 else 16
        if af == 4 and self.r.random() < 0.7:
            # The target's peer prefix, so a HELLO passes its peer check.
            return (bytes([192, 0, 2, self.r.randint(0, 255)]) +
                    bytes([203, 0, 113, self.r.randint(0, 255)]), self.r.randint(0, 64))
        return self.r.randbytes(2 * n), self.u(24)

    # -- one builder per type ------------------------------------------------
    def repair(self):
        f = self.pick(1)
        flags = self.r.choice([0, 0x40, 0x80, 0xc0, 0x20, 0x60, 0xe0, 0x40, 0xc0, self.r.getrandbits(8)])
        k = self.small(f and f.get('k'), 0, 255)
        t = self.small(f and f.get('symbol-len'), 0, 1500)
        if flags & 0x20 and self.r.random() < 0.7:
            t = 0
        body = struct.pack('!BBBB', self.u(8, f and f.get('config-id')),
                           self.small(f and f.get('scheme'), 0, 3), k, self.r.randint(0, 255))
        body += struct.pack('!I', self.u(24) << 8)
        body += struct.pack('!HH', self.u(16, 0), t)
        body += self.bitmap(k)
        if flags & 0x80:
            body += self.bitmap(k)
        if not flags & 0x20 or self.r.random() < 0.2:
            body += self.symbol(t)
        return self.header(1, flags, self.u(32, f and f.get('id')), body)

    def hello(self, ack=False):
        f = self.pick(0 if ack else 1)
        af = self.r.choice([4, 4, 4, 6, self.r.getrandbits(8)])
        kind = self.r.choice([1, 1, 192, self.r.getrandbits(8)])
        body = struct.pack('!BBHBBHHHQ', kind, af, self.u(16, 0b111), self.u(8, 255),
                           self.u(8, 16), self.u(16, 4200), self.u(16, 1024), 0, self.u(64, 1))
        if ack:
            nonce = self.r.choice(self.nonces) if self.nonces else None
            body = body[:12] + struct.pack('!QHH', self.u(64, nonce), self.u(16, 64), 0)
            return self.header(3, 0, self.u(32, 0 if self.r.random() < 0.5 else None), body)
        a, label = self.addrs(f, af)
        body += a + struct.pack('!I', label)
        return self.header(2, 0, self.u(32, 0), body)

    def param_update(self):
        f = self.pick(1)
        body = struct.pack('!BBBBHHI', self.u(8, f and (f.get('config-id', 0) + 1) & 0xff),
                           self.small(f and f.get('scheme'), 0, 3), self.u(8, 8), self.u(8, 2),
                           self.u(16, f and f.get('symbol-len')), 0, self.u(24) << 8)
        return self.header(4, 0, self.u(32, f and f.get('id')), body)

    def param_ack(self):
        f = self.pick(0)
        body = struct.pack('!BBH', self.u(8, f and f.get('config-id')), self.r.choice([0, 0, 1, 2, 3, 255]), 0)
        return self.header(5, 0, self.u(32, f and f.get('id')), body)

    def repair_request(self):
        f = self.pick(0)
        flags = self.r.choice([0, 0, 0x10, 0x10, 0x20, 0x30, 0x20, self.r.getrandbits(8)])
        if flags & 0x10:
            n = self.r.choice([0, 1, 2, 5, 64, 300, 0xffff])
            body = struct.pack('!HH', self.u(16), n)
            for _ in range(min(n, self.r.choice([n, n, n, 0, 1, 400]), 2000)):
                body += struct.pack('!I', (self.u(24) << 8) | self.small(self.r.randint(1, 16), 0, 255))
        else:
            k = self.small(f and f.get('k'), 0, 255)
            body = struct.pack('!BBBBIHH', self.u(8, f and f.get('config-id')),
                               self.small(f and f.get('scheme'), 0, 3), k, self.r.randint(0, 20),
                               (self.u(24) << 8) | self.small(self.r.randint(1, 8), 0, 255), self.u(16), 0)
            body += self.bitmap(k)
        return self.header(6, flags, self.u(32, f and f.get('id')), body)

    def loss_report(self):
        f = self.pick(0)
        body = b''.join(struct.pack('!I', self.u(32)) for _ in range(8))
        return self.header(7, 0, self.u(32, f and f.get('id')), body)

    def path_report(self):
        f = self.pick(0)
        ok = self.r.random() < 0.8   # counts that agree with the entries
        n = self.r.choice([0, 1, 2, 3, 16]) if ok else self.r.choice([17, 255, 5])
        af = self.r.choice([4, 4, 4, 6, self.r.getrandbits(8)]) if not ok else 4
        a, label = self.addrs(f, af)
        body = struct.pack('!BBBB', self.r.choice([1, 2, 3]) if ok else self.r.choice([0, 4, 255]),
                           n, af, 0) + a
        body += struct.pack('!I', label)
        for _ in range(n if ok else min(n, self.r.choice([0, 1, 20]))):
            pc = self.r.choice([0, 1, 2, 8]) if ok else self.r.choice([0, 1, 2, 8, 255])
            body += struct.pack('!IIIiBBH', self.u(32), self.u(32), self.u(32),
                                self.r.randint(-2**31, 2**31 - 1), self.r.randint(0, 3), pc, 0)
            for _ in range(pc if ok else min(pc, self.r.choice([pc, 0, 3]))):
                body += struct.pack('!I', self.u(24))
        flags = self.r.choice([0, 0x80]) if ok else self.r.getrandbits(8)
        return self.header(8, flags, 0 if ok else self.u(32), body)

    def close(self):
        f = self.pick(self.r.choice([0, 1]))
        return self.header(9, 0, self.u(32, f and f.get('id')), struct.pack('!HH', self.u(16), 0))

    def tc_aeth(self):
        f = self.pick(0)
        if self.r.random() < 0.7:
            # A decodable fragment: SegmentNum 1..4, segments after the
            # Last Finished PSN with a gap before each (wire/tc_aeth.rs).
            segn = self.r.randint(1, 4)
            psn = self.u(24)
            seg = [segn, psn]
            for _ in range(segn - 1):
                left = (psn + self.r.randint(2, 40)) & 0xffffff
                psn = (left + self.r.randint(0, 40)) & 0xffffff
                seg += [left, psn]
            seg += [0] * (9 - len(seg))
        else:
            seg = [self.r.randint(0, 5)] + [self.u(24) for _ in range(8)]
        body = b''.join(v.to_bytes(3, 'big') for v in seg) + b'\0\0\0'
        body += struct.pack('!H', self.u(16))
        return self.header(12, 0, self.u(32, f and f.get('id')), body)

    def other(self):
        body = self.r.randbytes(self.r.randint(0, 64))
        typ = self.r.choice([0, 10, 11, 13, 14, 15])
        return self.header(typ, 0, self.u(32), body, version=self.r.choice([1, 1, 0, 2, 15]))

    BUILD = {1: 'repair', 2: 'hello', 3: 'hello_ack', 4: 'param_update', 5: 'param_ack',
             6: 'repair_request', 7: 'loss_report', 8: 'path_report', 9: 'close', 12: 'tc_aeth'}

    def build(self, typ):
        if typ == 3:
            return self.hello(ack=True)
        return getattr(self, self.BUILD[typ])()

    # -- mutation ------------------------------------------------------------
    def mutate(self, m):
        m = bytearray(m)
        for _ in range(self.r.randint(1, 4)):
            c = self.r.randrange(8)
            if c == 0 and m:
                del m[self.r.randrange(len(m)):]           # truncate
            elif c == 1:
                m += self.r.randbytes(self.r.choice([1, 4, 32, 700]))
            elif c == 2 and m:
                i = self.r.randrange(len(m))
                m[i] ^= 1 << self.r.randrange(8)           # bit flip
            elif c == 3 and m:
                i = self.r.randrange(len(m))
                m[i] = self.r.choice([0, 1, 0x7f, 0x80, 0xff])
            elif c == 4 and len(m) >= 4:
                m[2:4] = struct.pack('!H', self.r.choice([0, 1, 7, 8, len(m) - 1, len(m) + 1, 0xffff,
                                                           self.r.getrandbits(16)]))
            elif c == 5 and self.corpus:
                s = self.r.choice(self.corpus)
                i = self.r.randrange(len(m) + 1)
                m[i:] = s[self.r.randrange(len(s) + 1):]   # splice
            elif c == 6 and len(m) >= 8:
                i = self.r.randrange(8, len(m) + 1)
                m[i:i] = m[8:i]                            # duplicate a run
            elif c == 7 and len(m) >= 12:
                i = self.r.randrange(8, len(m) - 3)
                m[i:i + 4] = struct.pack('!I', self.r.choice(INTERESTING32))
        return bytes(m[:65000])

    def fix_length(self, m):
        """A correct Length field (the decoder's first check), most of the time."""
        if len(m) >= 4 and self.r.random() < 0.6:
            return m[:2] + struct.pack('!H', len(m) & 0xffff) + m[4:]
        return m

    def next(self):
        """(type label, datagram)."""
        c = self.r.random()
        if c < 0.05:
            return 'random', self.r.randbytes(self.r.choice([0, 1, 7, 8, 12, 40, 300, 1400]))
        if c < 0.15 and self.corpus:
            s = self.r.choice(self.corpus)
            f = self.pick(self.r.choice([0, 1]))
            if f and len(s) >= 8:
                s = s[:4] + struct.pack('!I', f['id']) + s[8:]  # a live Flow ID
            return 'corpus', self.fix_length(self.mutate(s))
        if c < 0.18:
            return 'other', self.other()
        if self.prefer and self.r.random() < 0.5:
            typ = self.r.choice(sorted(self.prefer))
            return TYPES[typ], self.build(typ)
        # CLOSE ends the flows the others need: rarer.
        typ = self.r.choices(list(TYPES), [0.3 if t == 9 else 1 for t in TYPES])[0]
        m = self.build(typ)
        if self.r.random() < 0.4:
            m = self.fix_length(self.mutate(m))
        return TYPES[typ], m


def load_corpus(d):
    out = []
    for root, _, files in os.walk(d):
        for n in sorted(files):
            with open(os.path.join(root, n), 'rb') as f:
                out.append(f.read())
    return out


def load_fixtures(d):
    """UDP payloads of the RoCE fixtures (hex IPv4 packets)."""
    out = []
    for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if n.endswith('.hex'):
            p = bytes.fromhex(open(os.path.join(d, n)).read().split()[0])
            ihl = (p[0] & 15) * 4
            out.append(p[ihl + 8:])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seconds', type=float, default=60)
    ap.add_argument('--seed', type=int, default=None)
    ap.add_argument('--target-ns', required=True)
    ap.add_argument('--target', required=True)
    ap.add_argument('--from-ns', required=True)
    ap.add_argument('--peer', required=True)
    ap.add_argument('--reporter', required=True)
    ap.add_argument('--stranger', required=True)
    ap.add_argument('--corpus', default='')
    ap.add_argument('--fixtures', default='')
    ap.add_argument('--last', default='')
    ap.add_argument('--batch', type=int, default=32)
    ap.add_argument('--pps', type=float, default=1500, help='about this many datagrams a second at most')
    ap.add_argument('--window', type=float, default=0.3)
    ap.add_argument('--extend', type=float, default=1.0,
                    help='while types are unreached in the window, run on for up to this '
                         'fraction of the window')
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), 'big')
    print(f'wire: seed {seed} (replay: FUZZ_SEED={seed})', flush=True)
    rng = random.Random(seed)
    gen = Gen(rng, load_corpus(a.corpus) if a.corpus else [], load_fixtures(a.fixtures) if a.fixtures else [])
    print(f'wire: {len(gen.corpus)} corpus seeds, {len(gen.fixtures)} RoCE fixtures', flush=True)

    genl.setns(f'/run/netns/{a.target_ns}')
    nl = genl.Genl()
    fid, _ = nl.family('crem')
    genl.setns(f'/run/netns/{a.from_ns}')
    host, port = a.target.split(':')
    dst = (host, int(port))
    socks = {}
    for who, addr in (('peer', a.peer), ('reporter', a.reporter), ('stranger', a.stranger)):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((addr, 0))
        s.setblocking(False)
        socks[who] = s
    # The target's HELLOs to the peer, for their nonces (see Gen.nonces).
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    sniff.setblocking(False)
    target_ip = socket.inet_aton(host)
    hellos = 0

    def sniff_nonces():
        nonlocal hellos
        for _ in range(256):
            try:
                p = sniff.recv(2048)
            except BlockingIOError:
                return
            ihl = (p[0] & 0xf) * 4 if p else 0
            if len(p) < ihl + 8 + 28 or p[9] != 17 or p[12:16] != target_ip:
                continue
            if struct.unpack('!H', p[ihl + 2:ihl + 4])[0] != int(port):
                continue
            m = p[ihl + 8:]
            if m[0] & 0xf == 2:  # HELLO: its nonce follows a 12-octet prefix of the body
                hellos += 1
                gen.nonces = (gen.nonces + [struct.unpack('!Q', m[20:28])[0]])[-16:]

    # PATH_REPORT is the reporters' message; the others are the peer's.
    def source(label):
        c = rng.random()
        if c < 0.1:
            return 'stranger'
        if label == 'path-report':
            return 'reporter' if c < 0.8 else 'peer'
        return 'reporter' if c < 0.15 else 'peer'

    sent = {}
    by_src = {k: 0 for k in socks}
    last = []
    t0 = time.time()
    end = t0 + a.seconds
    learnt = 0
    shown = None
    n = errs = 0
    window_at = end - a.window * a.seconds
    before = None
    nft = ['ip', 'netns', 'exec', a.target_ns, 'nft']
    # The window runs on (to end + extra) while some type is unreached: on the
    # debug kernel under TCG a 120-s run sends a few hundred datagrams, and at
    # stop 27 the window's 18 s left HELLO_ACK and CLOSE out.
    extra = a.extend * a.window * a.seconds
    while time.time() < end or (before and gen.prefer and time.time() < end + extra):
        if before is None and a.window and time.time() >= window_at:
            try:
                before = genl.handled_by_type(nl, fid)
                subprocess.run(nft + ['-f', '-'], check=True, input=(
                    'table ip window {\n chain pre {\n  type filter hook prerouting priority -400;\n'
                    f'  ip saddr {a.peer} udp sport {port} udp dport {port} drop\n }}\n}}\n').encode())
                print(f'wire: window: {a.peer}:{port} (the peer\'s CREM) silenced for the last '
                      f'{end - time.time():.0f} s', flush=True)
            except (OSError, subprocess.CalledProcessError) as e:
                print(f'wire: window not set up: {e}', flush=True)
                before = {}
        if time.time() - learnt > 2:
            try:
                gen.flows = genl.flows(nl, fid)
            except OSError as e:
                print(f'wire: flow dump failed: {e}', flush=True)
            learnt = time.time()
            if before:
                try:
                    h = genl.handled_by_type(nl, fid)
                    gen.prefer = {t for t, name in TYPES.items() if h[name] == before[name]}
                except OSError as e:
                    print(f'wire: stats failed: {e}', flush=True)
            sig = sorted((f.get('side'), f.get('id'), f.get('dest-qp')) for f in gen.flows)
            if sig != shown:
                print(f'wire: {len(gen.flows)} flows at the target: ' +
                      ' '.join(f"{'csf' if s == 0 else 'crf'}:{i:#x}/qp{q}" for s, i, q in sig[:12]), flush=True)
                shown = sig
            if a.last:
                with open(a.last + '.tmp', 'w') as f:
                    f.write('\n'.join(last[-256:]) + '\n')
                os.replace(a.last + '.tmp', a.last)
                last = last[-256:]
        sniff_nonces()
        for _ in range(a.batch):
            label, m = gen.next()
            who = source(label)
            s = socks[who]
            if rng.random() < 0.05:
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, rng.choice([0, 1, 2, 3]))  # CE = 3
            try:
                s.sendto(m, dst)
            except OSError:
                errs += 1
                continue
            n += 1
            sent[label] = sent.get(label, 0) + 1
            by_src[who] += 1
            if a.last:
                last.append(f'{who} {m.hex()}')
        # Pace: leave the CPU to the traffic and the softirqs that handle these.
        pause = t0 + n / a.pps - time.time()
        if pause > 0:
            time.sleep(pause)
    if before:
        after = genl.handled_by_type(nl, fid)
        subprocess.run(nft + ['delete', 'table', 'ip', 'window'], check=True)
        if time.time() > end:
            print(f'wire: window ran {time.time() - end:.0f} s past the end for unreached types',
                  flush=True)
        print('wire: window reach (handled, the peer silent): ' +
              ' '.join(f'{k}={after[k] - before[k]}' for k in genl.MSG_TYPES), flush=True)
    dt = time.time() - t0
    print(f'wire: sent {n} datagrams in {dt:.0f} s ({n / dt:.0f}/s), {errs} send errors; '
          f'{hellos} HELLOs of the target seen', flush=True)
    print('wire: by type ' + ' '.join(f'{k}={v}' for k, v in sorted(sent.items())), flush=True)
    print('wire: by source ' + ' '.join(f'{k}={v}' for k, v in by_src.items()), flush=True)
    print(f'wire-execs={n}', flush=True)


if __name__ == '__main__':
    main()
