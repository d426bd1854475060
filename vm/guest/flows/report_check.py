#!/usr/bin/env python3
"""report_check.py compare PREFIX CTL CSF | delta BEFORE AFTER KEY... | selftest CTL

The truth and the comparison for vm/guest/report.sh (the Path Reporter,
docs/reporter-plan.md step R3). The truth never comes from crem.ko: it is
what tcpdump saw enter and leave the reporting router r.

compare: PREFIX.in.pcap (r's ingress from n2) and PREFIX.out.pcap (r's
  egress toward n1), UDP 4791 cut to at least 54 octets of each frame (74
  over IPv6), give
  what r dropped: the (source, destination, dest QP, PSN) of every RoCEv2
  packet that entered and never left (a multiset: a PSN seen twice counts
  twice). The PATH_REPORTs in PREFIX.rep.pcap (every packet r originated)
  are decoded by `CTL -j decode -r ... --port 7470` (crem-core's codec, so
  no second decoder here) and compared with that truth. Prints one line of
  key=value words and writes the reports, one a line, to PREFIX.reports.txt:
    in out        source packets r received from n2, sent toward n1
    dropped       source packets r dropped: the truth; dropped-v6: of
                  them IPv6 packets
    dropped-other non-source RoCEv2 packets r dropped (ACKs, READ responses)
    unmatched     source packets seen leaving r but never entering (the
                  ingress capture lost them)
    datagrams     IP packets (IPv4 or IPv6) r originated; frags: of them
                  IP fragments (IPv6: a Fragment header); icmp: ICMP or
                  ICMPv6 (a router's errors, IPv6 neighbour discovery);
                  max-ip: the largest IP total length among them (IPv6: 40
                  and the payload length)
    reports       PATH_REPORTs sent to CSF:7470 (CSF an IPv4 or IPv6
                  address: a report to the other family's address is
                  stray); afs: the reports' distinct AFs; stray: other UDP datagrams
                  r originated (another destination or port, another type);
                  invalid: datagrams on 7470 that do not decode
    truncated     reports with the Truncated flag (0x80)
    cut           reports listing fewer PSNs than their Lost Counts add up to
    cut-unflagged flagged-uncut: the flag and the cut disagree
    over          reports listing more PSNs than their Lost Counts add up to
    entries listed unique: hop entries, PSN words, distinct (flow, PSN)
    false         distinct listed (flow, PSN) that r did not drop
    covered       distinct listed that r did drop; missing: dropped, unlisted
    lost          the Lost Counts added up; gap: Lost Count less listed PSNs
                  over the Truncated reports (what they admit leaving out)
    nodes causes methods afs  the distinct values, comma-separated, '-' if none
  Addresses are compared as addresses (IPv6 in any spelling).
delta: the counters of `crem-ctl -j stats` in AFTER less those in BEFORE
  (files), as KEY=N words; KEY a.b for a nested one; 'absent' when AFTER
  has no such key (a counter the module does not have), so that a
  still-zero counter is never mistaken for one that does not exist.
selftest: compare on synthetic captures (no VM needed), over IPv4 and
  over IPv6."""
import collections
import ipaddress
import json
import os
import struct
import subprocess
import sys
import tempfile

ROCE_PORT = 4791
CREM_PORT = 7470
# RC requester opcodes that carry a new PSN (crem_core::roce's
# PsnRole::is_source): SEND, RDMA WRITE, READ request, the atomics, SEND
# with invalidate, FLUSH, ATOMIC WRITE. The others (READ responses, ACK,
# ATOMIC ACKNOWLEDGE) are not sources; roce.py sends 0x04 and 0x11.
SOURCE_OPCODES = set(range(0x00, 0x0d)) | {0x13, 0x14, 0x16, 0x17, 0x1c, 0x1d}
FLAG_TRUNCATED = 0x80


def frames(path):
    """(link type, frame octets) of each packet of a pcap file; none if
    the file is missing or holds no packet."""
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError:
        return
    if len(data) < 24:
        return
    e = {b'\xd4\xc3\xb2\xa1': '<', b'\x4d\x3c\xb2\xa1': '<',
         b'\xa1\xb2\xc3\xd4': '>', b'\xa1\xb2\x3c\x4d': '>'}.get(data[:4])
    if e is None:
        sys.exit(f'{path}: not a pcap file')
    link = struct.unpack(e + 'I', data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(e + 'I', data[off + 8:off + 12])[0]
        yield link, data[off + 16:off + 16 + incl]
        off += 16 + incl


def ip_packet(link, frame):
    """(version, packet) of the IPv4 or IPv6 packet in a frame of Ethernet
    (1: ethertype 0x0800 or 0x86dd), Linux cooked (113, 276: tcpdump -i
    any) or raw IP (101, 228 IPv4, 229 IPv6), else None."""
    if link == 1:
        proto, l2 = frame[12:14], 14
    elif link == 113:
        proto, l2 = frame[14:16], 16
    elif link == 276:
        proto, l2 = frame[0:2], 20
    elif link in (101, 228, 229):
        proto, l2 = None, 0
    else:
        return None
    pkt = frame[l2:]
    v = pkt[0] >> 4 if pkt[:1] else 0
    if proto is None:
        proto = {4: b'\x08\x00', 6: b'\x86\xdd'}.get(v)
    if proto == b'\x08\x00' and v == 4 and len(pkt) >= 20:
        return 4, pkt
    if proto == b'\x86\xdd' and v == 6 and len(pkt) >= 40:
        return 6, pkt
    return None


def addr(b):
    """An address's octets (4 or 16) as text, as ipaddress spells it."""
    return str(ipaddress.ip_address(bytes(b)))


def same(a, b):
    """Whether two addresses in text are the same (IPv6 spelled either
    way); False if either is not an address."""
    try:
        return ipaddress.ip_address(a) == ipaddress.ip_address(b)
    except ValueError:
        return False


def norm(a):
    """An address in text as addr() spells it (as is if not one)."""
    try:
        return str(ipaddress.ip_address(a))
    except ValueError:
        return a


# IPv6 extension headers walked to the transport (hop-by-hop, routing,
# destination options); the Fragment header (44) is reported as such.
V6_EXT = {0, 43, 60}
V6_FRAG = 44


def l4(version, ip):
    """(protocol, transport octets, fragment?, IP total length, src, dst)
    of an IP packet: the protocol of a fragment is its own header's
    (IPv4's) or 44 (IPv6); addresses as text."""
    if version == 4:
        frag = bool(struct.unpack('!H', ip[6:8])[0] & 0x3fff)  # MF or an offset
        return (ip[9], ip[(ip[0] & 15) * 4:], frag, struct.unpack('!H', ip[2:4])[0],
                addr(ip[12:16]), addr(ip[16:20]))
    nh, off = ip[6], 40
    while nh in V6_EXT and len(ip) >= off + 2:
        nh, off = ip[off], off + (ip[off + 1] + 1) * 8
    return (nh, ip[off:], nh == V6_FRAG, 40 + struct.unpack('!H', ip[4:6])[0],
            addr(ip[8:24]), addr(ip[24:40]))


def roce_packets(path):
    """(source?, (src, dst, dest QP, PSN)) of each unfragmented RoCEv2
    packet (UDP to 4791, over IPv4 or IPv6) in a capture; BTH: opcode
    octet 0, dest QP octets 5-7, PSN octets 9-11."""
    for link, frame in frames(path):
        p = ip_packet(link, frame)
        if p is None:
            continue
        proto, udp, frag, _, src, dst = l4(*p)
        if proto != 17 or frag:
            continue
        if len(udp) < 20 or struct.unpack('!H', udp[2:4])[0] != ROCE_PORT:
            continue
        bth = udp[8:20]
        key = (src, dst, int.from_bytes(bth[5:8], 'big'), int.from_bytes(bth[9:12], 'big'))
        yield bth[0] in SOURCE_OPCODES, key


def truth(prefix):
    """What r dropped, from its two captures: the counts in and out, the
    multiset of dropped source keys, and the non-source drops."""
    seen = {}
    for side in ('in', 'out'):
        c = {True: collections.Counter(), False: collections.Counter()}
        for source, key in roce_packets(f'{prefix}.{side}.pcap'):
            c[source][key] += 1
        seen[side] = c
    dropped = seen['in'][True] - seen['out'][True]
    return {
        'in': sum(seen['in'][True].values()),
        'out': sum(seen['out'][True].values()),
        'dropped': dropped,
        'dropped-other': sum((seen['in'][False] - seen['out'][False]).values()),
        'unmatched': sum((seen['out'][True] - seen['in'][True]).values()),
    }


def originated(path, csf):
    """What r sent, from its capture of the packets it originated: every
    IPv4 or IPv6 packet, fragments, ICMP(v6), the largest, and the UDP
    datagrams to anything but CSF:7470."""
    n = {'datagrams': 0, 'frags': 0, 'icmp': 0, 'max-ip': 0, 'stray': 0}
    for link, frame in frames(path):
        p = ip_packet(link, frame)
        if p is None:
            continue
        proto, t, frag, length, _, dst = l4(*p)
        n['datagrams'] += 1
        n['max-ip'] = max(n['max-ip'], length)
        if frag:
            n['frags'] += 1
        elif proto in (1, 58):
            n['icmp'] += 1
        elif proto == 17:
            if not (same(dst, csf) and struct.unpack('!H', t[2:4])[0] == CREM_PORT):
                n['stray'] += 1
    return n


def decoded(ctl, path):
    """The capture's datagrams on the CREM port, decoded by crem-ctl: one
    object per datagram ({"crem": message} or {"error": ...})."""
    if not os.path.exists(path):
        return []
    p = subprocess.run([ctl, '-j', 'decode', '-r', path, '--port', str(CREM_PORT)],
                       capture_output=True, text=True, check=False)
    if p.returncode not in (0, 1):
        sys.exit(f'crem-ctl decode: {p.stderr.strip()}')
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def flow_psns(msg, hop):
    """The (src, dst, dest QP, PSN) keys a hop entry lists."""
    qp = msg.get('dest-qp', msg.get('flow-label', 0) & 0xffffff)
    return [(norm(msg.get('source-address')), norm(msg.get('destination-address')), qp, p)
            for p in hop.get('dropped-psns', [])]


def compare(prefix, ctl, csf):
    t = truth(prefix)
    r = dict(t, **originated(f'{prefix}.rep.pcap', csf))
    r['dropped'] = sum(t['dropped'].values())
    r['dropped-v6'] = sum(c for k, c in t['dropped'].items() if ':' in k[0])
    for k in ('reports', 'invalid', 'truncated', 'cut', 'cut-unflagged', 'flagged-uncut', 'over',
              'entries', 'listed', 'lost', 'gap'):
        r[k] = 0
    listed, values = set(), {'nodes': set(), 'causes': set(), 'methods': set(), 'afs': set()}
    lines = []
    for d in decoded(ctl, f'{prefix}.rep.pcap'):
        m = d.get('crem')
        if m is None:
            r['invalid'] += 1
            continue
        if not same(d.get('dst'), csf):
            continue  # counted stray by originated()
        if m.get('type') != 'PATH_REPORT':
            r['stray'] += 1
            continue
        hops = m.get('hop-entries', [])
        keys = [k for h in hops for k in flow_psns(m, h)]
        lost = sum(h.get('lost-count', 0) for h in hops)
        flagged = bool(m.get('flags', 0) & FLAG_TRUNCATED)
        cut = len(keys) < lost
        r['reports'] += 1
        r['truncated'] += flagged
        r['cut'] += cut
        r['cut-unflagged'] += cut and not flagged
        r['flagged-uncut'] += flagged and not cut
        r['over'] += len(keys) > lost
        r['entries'] += len(hops)
        r['listed'] += len(keys)
        r['lost'] += lost
        r['gap'] += (lost - len(keys)) if flagged else 0
        listed.update(keys)
        values['methods'].add(str(m.get('method')))
        values['afs'].add(str(m.get('af')))
        for h in hops:
            values['nodes'].add(str(h.get('node-id')))
            values['causes'].add(str(h.get('cause')))
        lines.append(f"{d.get('time')} {d.get('src')} -> {d.get('dst')} len {m.get('length')}"
                     f" {'TRUNCATED ' if flagged else ''}qp {m.get('dest-qp')} "
                     + ' | '.join(f"node {h.get('node-id')} cause {h.get('cause')} lost "
                                  f"{h.get('lost-count')} psns {h.get('dropped-psns')}" for h in hops))
    dropped = set(t['dropped'])
    r['unique'] = len(listed)
    r['false'] = len(listed - dropped)
    r['covered'] = len(listed & dropped)
    r['missing'] = len(dropped - listed)
    for k, v in values.items():
        r[k] = ','.join(sorted(v)) or '-'
    with open(f'{prefix}.reports.txt', 'w') as f:
        f.write(''.join(line + '\n' for line in lines))
        f.write(''.join(f'dropped, not listed: {k}\n' for k in sorted(dropped - listed)[:50]))
        f.write(''.join(f'listed, not dropped: {k}\n' for k in sorted(listed - dropped, key=str)[:50]))
    order = ('in', 'out', 'dropped', 'dropped-v6', 'dropped-other', 'unmatched', 'datagrams', 'frags', 'icmp',
             'max-ip', 'reports', 'stray', 'invalid', 'truncated', 'cut', 'cut-unflagged',
             'flagged-uncut', 'over', 'entries', 'listed', 'unique', 'false', 'covered', 'missing',
             'lost', 'gap', 'nodes', 'causes', 'methods', 'afs')
    print(' '.join(f'{k}={r[k]}' for k in order))


def delta(before, after, keys):
    def load(path):
        try:
            with open(path) as f:
                return json.load(f).get('stats', {})
        except (OSError, ValueError):
            return {}

    def get(s, key):
        for part in key.split('.'):
            if not isinstance(s, dict) or part not in s:
                return None
            s = s[part]
        return s

    b, a = load(before), load(after)
    out = []
    for k in keys:
        v = get(a, k)
        out.append(f'{k}=absent' if v is None else f'{k}={v - (get(b, k) or 0)}')
    print(' '.join(out))


# ---------------------------------------------------------------- selftest

def pcap(path, link, packets):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, link))
        for i, p in enumerate(packets):
            f.write(struct.pack('<IIII', i, 0, len(p), len(p)) + p)


def ip_udp(src, dst, dport, payload, frag=0):
    udp = struct.pack('!HHHH', 49153, dport, 8 + len(payload), 0) + payload
    return struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, frag, 64, 17, 0,
                       bytes(map(int, src.split('.'))), bytes(map(int, dst.split('.')))) + udp


def ip6(src, dst, nh, payload):
    """An IPv6 packet: next header NH, PAYLOAD (its extension headers
    included)."""
    return (struct.pack('!IHBB', 0x60000000, len(payload), nh, 64)
            + ipaddress.IPv6Address(src).packed + ipaddress.IPv6Address(dst).packed + payload)


def ip6_udp(src, dst, dport, payload, frag=False):
    """UDP in IPv6; with FRAG, behind a Fragment header (a first fragment,
    M set)."""
    udp = struct.pack('!HHHH', 49153, dport, 8 + len(payload), 0) + payload
    if frag:
        return ip6(src, dst, V6_FRAG, struct.pack('!BBHI', 17, 0, 1, 7) + udp)
    return ip6(src, dst, 17, udp)


def eth(ip):
    return b'\x02' * 12 + (b'\x86\xdd' if ip[0] >> 4 == 6 else b'\x08\x00') + ip


def bth(opcode, qp, psn):
    return struct.pack('!BBHB3sB3s', opcode, 0, 0xffff, 0, qp.to_bytes(3, 'big'), 0,
                       psn.to_bytes(3, 'big')) + bytes(40)


def roce(opcode, qp, psn):
    return ip_udp('192.0.2.1', '203.0.113.1', ROCE_PORT, bth(opcode, qp, psn))


def roce6(opcode, qp, psn, frag=False):
    return ip6_udp('2001:db8:a::1', '2001:db8:b::1', ROCE_PORT, bth(opcode, qp, psn), frag)


def path_report(qp, psns, lost, flags=0, node=77, cause=1,
                flow=('192.0.2.1', '203.0.113.1')):
    """A PATH_REPORT (Method 3, one hop entry) about FLOW (IPv4: AF 4,
    IPv6: AF 6)."""
    hop = struct.pack('!IIIiBBH', node, 1, lost, 0, cause, len(psns), 0)
    hop += b''.join(struct.pack('!I', p) for p in psns)
    a = [ipaddress.ip_address(x) for x in flow]
    body = struct.pack('!BBBB', 3, 1, a[0].version, 0) + a[0].packed + a[1].packed
    body += struct.pack('!I', qp) + hop
    return struct.pack('!BBHI', 0x18, flags, 8 + len(body), 0) + body


def run_compare(p, ctl, csf, want):
    c = subprocess.run([sys.executable, __file__, 'compare', p, ctl, csf],
                       capture_output=True, text=True, check=False)
    if c.returncode:
        return {'compare': f'exit {c.returncode}: {c.stderr.strip()}'}, []
    out = c.stdout.split()
    got = dict(w.split('=', 1) for w in out)
    bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    return bad, out


def selftest4(d, ctl):
    p = f'{d}/t'
    # r received PSNs 100..109 of QP 1 and an ACK, forwarded all but 103,
    # 105, 107 (sources) and the ACK.
    pcap(f'{p}.in.pcap', 1, [eth(roce(0x04, 1, n))[:64] for n in range(100, 110)]
         + [eth(roce(0x11, 1, 7))[:64]])
    pcap(f'{p}.out.pcap', 1, [eth(roce(0x04, 1, n))[:64] for n in range(100, 110)
                              if n not in (103, 105, 107)])
    csf = '10.0.1.2'
    rep = [path_report(1, [103, 105], 2), path_report(1, [107, 999], 3, FLAG_TRUNCATED),
           path_report(1, [], 1)]
    pkts = [ip_udp('10.0.1.1', csf, CREM_PORT, m) for m in rep]
    pkts.append(ip_udp('10.0.1.1', '192.0.2.1', CREM_PORT, rep[0]))  # stray
    pkts.append(ip_udp('10.0.1.1', csf, CREM_PORT, b'\x01' * 40, frag=0x2000))  # a fragment
    # tcpdump -i any writes Linux cooked v2 (276) frames.
    pcap(f'{p}.rep.pcap', 276, [b'\x08\x00' + bytes(18) + x for x in pkts])
    want = {'in': '10', 'out': '7', 'dropped': '3', 'dropped-v6': '0', 'dropped-other': '1',
            'reports': '3',
            'stray': '1', 'frags': '1', 'datagrams': '5', 'truncated': '1', 'cut': '2',
            'cut-unflagged': '1', 'flagged-uncut': '0', 'over': '0', 'listed': '4', 'false': '1',
            'covered': '3', 'missing': '0', 'lost': '6', 'gap': '1', 'nodes': '77',
            'causes': 'queue-overflow', 'methods': 'node-local-drop', 'invalid': '0',
            'afs': '4'}
    return run_compare(p, ctl, csf, want)


def selftest6(d, ctl):
    """IPv6 flows (part v6): Ethernet frames of ethertype 0x86dd cut to 80
    octets in and out, IPv4 RoCEv2 mixed in, an IPv6 fragment of RoCEv2
    (no source: unreadable); r's own packets in Linux cooked v1 (113)
    frames: the reports to the CSF's IPv6 address (given spelled another
    way), strays over IPv4 and to another IPv6 address, ICMPv6 bare and
    behind a hop-by-hop header (neighbour discovery, MLD), a fragment."""
    p = f'{d}/t6'
    # PSNs 200..211 of QP 2 in; 202, 205, 211 and an ACK not out; IPv4's
    # PSN 50 of QP 1 in and out; a fragment in only.
    pcap(f'{p}.in.pcap', 1, [eth(roce6(0x04, 2, n))[:80] for n in range(200, 212)]
         + [eth(roce6(0x11, 2, 9))[:80], eth(roce(0x04, 1, 50))[:80],
            eth(roce6(0x04, 2, 500, frag=True))[:80]])
    pcap(f'{p}.out.pcap', 1, [eth(roce6(0x04, 2, n))[:80] for n in range(200, 212)
                              if n not in (202, 205, 211)] + [eth(roce(0x04, 1, 50))[:80]])
    csf, me = '2001:db8:1::2', '2001:db8:1::1'
    flow = ('2001:db8:a::1', '2001:db8:b::1')
    rep = [path_report(2, [202, 205], 2, flow=flow),
           path_report(2, [211, 300], 3, FLAG_TRUNCATED, flow=flow)]
    pkts = [ip6_udp(me, csf, CREM_PORT, m) for m in rep]
    pkts.append(ip_udp('10.0.1.1', '10.0.1.2', CREM_PORT, rep[0]))  # stray: IPv4
    pkts.append(ip6_udp(me, '2001:db8:a::1', CREM_PORT, rep[0]))  # stray: not the CSF
    pkts.append(ip6(me, csf, 58, bytes([135, 0, 0, 0]) + bytes(20)))  # a neighbour solicitation
    pkts.append(ip6(me, 'ff02::16', 0, bytes([58, 0, 5, 2, 0, 0, 1, 0])
                    + bytes([143]) + bytes(27)))  # MLDv2 behind hop-by-hop
    pkts.append(ip6_udp(me, csf, CREM_PORT, rep[0], frag=True))  # a fragment
    pcap(f'{p}.rep.pcap', 113, [bytes(14) + (b'\x86\xdd' if x[0] >> 4 == 6 else b'\x08\x00') + x
                                for x in pkts])
    max_ip = max(len(x) for x in pkts)
    want = {'in': '13', 'out': '10', 'dropped': '3', 'dropped-v6': '3', 'dropped-other': '1',
            'unmatched': '0',
            'reports': '2', 'stray': '2', 'icmp': '2', 'frags': '1', 'datagrams': '7',
            'max-ip': str(max_ip), 'truncated': '1', 'cut': '1', 'cut-unflagged': '0',
            'flagged-uncut': '0', 'over': '0', 'entries': '2', 'listed': '4', 'unique': '4',
            'false': '1', 'covered': '3', 'missing': '0', 'lost': '5', 'gap': '1',
            'nodes': '77', 'causes': 'queue-overflow', 'methods': 'node-local-drop',
            'invalid': '0', 'afs': '6'}
    return run_compare(p, ctl, '2001:0db8:0001:0000::0002', want)


def selftest(ctl):
    d = tempfile.mkdtemp()
    good = True
    for name, case in (('IPv4', selftest4), ('IPv6', selftest6)):
        bad, out = case(d, ctl)
        print(f'selftest {name}:', 'ok' if not bad else f'FAILED {bad}', ' '.join(out))
        good = good and not bad
    return good


if __name__ == '__main__':
    a = sys.argv[1:]
    if a[:1] == ['compare'] and len(a) == 4:
        compare(a[1], a[2], a[3])
    elif a[:1] == ['delta'] and len(a) >= 3:
        delta(a[1], a[2], a[3:])
    elif a[:1] == ['selftest'] and len(a) == 2:
        sys.exit(0 if selftest(a[1]) else 1)
    else:
        sys.exit(__doc__)
