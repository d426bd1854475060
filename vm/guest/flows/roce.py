#!/usr/bin/env python3
"""roce.py send DST QPS SECONDS [PPS [TOS [CSUM [BURST]]]] | ack PEER REPORT [EVERY]: RoCEv2-shaped traffic
without an RDMA device, for the churn test (vm/guest/churn.sh).

send: RC SEND_ONLY packets (BTH opcode 0x04, 256 octets of payload and a
      valid ICRC) to DST:4791 from this netns, round robin over destination
      QPs 1..QPS, each QP with its own PSN sequence, for SECONDS at about PPS
      packets a second (default 2000), IP ToS TOS (default 0), with a UDP
      checksum if CSUM is 1 (default 0: none, as rxe sends; UDP GRO
      aggregates only checksummed datagrams), BURST consecutive PSNs of a
      QP at a time (default 1), built first and sent back to back (so that
      they fall in one CSF block: it closes a block after 2 ms without a
      source, shorter than a packet's gap in Python under TCG). Raw IPv4
      (IP_HDRINCL) so that the Identification, which the ICRC covers, is
      ours. Prints the packets sent; SIGTERM ends it early.
      An IPv6 DST (datapath6.sh): plain AF_INET6 UDP sockets, one per QP
      (source port 49152 + QP), traffic class TOS (IPV6_TCLASS), the
      kernel's UDP checksum (CSUM ignored): IPv6 has no field the ICRC
      covers that the sender cannot know, and the ICRC masks the traffic
      class, flow label, hop limit and checksum. ROCE_V6_DSTOPTS=1 in the
      environment puts a Destination Options header (a PadN) before UDP:
      RoCEv2 that CREM leaves unprotected, counted (skip-ipv6-ext).
ack:  answers every EVERYth packet (default 8: PSN % EVERY == EVERY - 1;
      0: none) of each QP that arrives on UDP 4791 with an RC ACKNOWLEDGE
      (opcode 0x11, AETH ACK) for its PSN, sent to PEER:4791, as the
      responder would (it releases the CSF's retention). Runs until
      SIGTERM, then writes what arrived to REPORT as key=value words:
      received, acks, not-ect/ect0/ce (by the packets' ECN bits), psn5,
      dup (packets of a QP and PSN that had arrived before). An IPv6 PEER:
      an AF_INET6 socket (ECN from its IPV6_TCLASS), which accepts only
      checksummed datagrams (as a plain IPv6 UDP socket does).

A restored packet therefore verifies as a real one would (the CRF solves
the Identification from the ICRC: crem_core::roce::solve_ipv4_ident)."""
import os
import signal
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791


def bth(opcode, dqp, psn, ackreq=False):
    # opcode, SE/M/Pad/TVer, P_Key, resv8, DestQP, A/resv7, PSN.
    return struct.pack('!BBHB3sB3s', opcode, 0, 0xffff, 0, dqp.to_bytes(3, 'big'),
                       0x80 if ackreq else 0, (psn & 0xffffff).to_bytes(3, 'big'))


ICRC_SEED = 0xDEBB20E3  # CRC-32 state after the 8 masked LRH octets


def icrc_v4(iph, udp):
    """The RoCEv2 ICRC (crem_core::roce::icrc_v4): CRC-32 over the IPv4
    header with TOS, TTL and checksum masked, the UDP header with its
    checksum masked, the BTH with its resv8a masked, and the payload."""
    m = bytearray(iph)
    m[1] = 0xff
    m[8] = 0xff
    m[10:12] = b'\xff\xff'
    u = bytearray(udp[:8])
    u[6:8] = b'\xff\xff'
    b = bytearray(udp[8:20])
    b[4] = 0xff
    data = bytes(m) + bytes(u) + bytes(b) + udp[20:-4]
    return zlib.crc32(data, ~ICRC_SEED & 0xffffffff)


def icrc_v6(src, dst, udp):
    """The RoCEv2 ICRC over IPv6 (crem_core::roce::icrc_v6): CRC-32 over
    the IPv6 header with traffic class, flow label and hop limit masked,
    then the UDP header (checksum masked), BTH (resv8a masked), payload."""
    m = struct.pack('!IHBB16s16s', 0x6fffffff, len(udp), 17, 0xff,
                    socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst))
    u = bytearray(udp[:8])
    u[6:8] = b'\xff\xff'
    b = bytearray(udp[8:20])
    b[4] = 0xff
    data = m + bytes(u) + bytes(b) + udp[20:-4]
    return zlib.crc32(data, ~ICRC_SEED & 0xffffffff)


def send6(dst, qps, seconds, pps, tos=0, burst=1):
    socks = {}
    for q in range(1, qps + 1):
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, tos)
        if os.environ.get('ROCE_V6_DSTOPTS') == '1':
            # Next header (the kernel's), length 0 (8 octets), PadN of 4.
            s.setsockopt(socket.IPPROTO_IPV6, 59, bytes([0, 0, 1, 4, 0, 0, 0, 0]))  # IPV6_DSTOPTS
        s.bind(('::', 49152 + q))
        s.connect((dst, ROCE_PORT))
        socks[q] = s
    src = socks[1].getsockname()[0]
    payload = bytes(range(256)) + b'\0\0\0\0'
    psn = {q: 1000 * q for q in range(1, qps + 1)}
    end = time.time() + seconds
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    n = 0
    gap = 1.0 / pps
    nxt = time.time()
    while time.time() < end and not stop:
        for q in range(1, qps + 1):
            pkts = []
            for _ in range(burst):
                roce = bth(0x04, q, psn[q], psn[q] % 8 == 7) + payload
                udp = struct.pack('!HHHH', 49152 + q, ROCE_PORT, 8 + len(roce), 0) + roce
                crc = icrc_v6(src, dst, udp)
                pkts.append(roce[:-4] + struct.pack('<I', crc))
                psn[q] += 1
            for p in pkts:
                try:
                    socks[q].send(p)
                    n += 1
                except OSError:
                    pass
            nxt += gap * burst
            pause = nxt - time.time()
            if pause > 0:
                time.sleep(pause)
    print(n)


def csum16(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack(f'!{len(data) // 2}H', data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def packet(src, dst, sport, tos, ident, roce, csum=False):
    """IPv4 + UDP (checksum 0, as RoCEv2 allows, unless @csum) + @roce, its
    ICRC filled (the ICRC masks the UDP checksum)."""
    udp_len = 8 + len(roce)
    iph = struct.pack('!BBHHHBBH4s4s', 0x45, tos, 20 + udp_len, ident, 0x4000, 64, 17, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    udp = struct.pack('!HHHH', sport, ROCE_PORT, udp_len, 0) + roce
    crc = icrc_v4(iph, udp)
    udp = udp[:-4] + struct.pack('<I', crc)
    if csum:
        pseudo = iph[12:20] + struct.pack('!BBH', 0, 17, udp_len)
        c = csum16(pseudo + udp) or 0xffff
        udp = udp[:6] + struct.pack('!H', c) + udp[8:]
    return iph + udp


def send(dst, qps, seconds, pps, tos=0, csum=False, burst=1):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect((dst, ROCE_PORT))
    src = probe.getsockname()[0]
    payload = bytes(range(256)) + b'\0\0\0\0'  # data, then the ICRC field
    psn = {q: 1000 * q for q in range(1, qps + 1)}
    end = time.time() + seconds
    # SIGTERM ends the traffic early (a test that stops it when its own
    # steps are done); the count is printed all the same.
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    n = ident = 0
    gap = 1.0 / pps
    nxt = time.time()
    while time.time() < end and not stop:
        for q in range(1, qps + 1):
            pkts = []
            for _ in range(burst):
                ident = ident % 65535 + 1
                roce = bth(0x04, q, psn[q], psn[q] % 8 == 7) + payload
                pkts.append(packet(src, dst, 49152 + q, tos, ident, roce, csum))
                psn[q] += 1
            for p in pkts:
                try:
                    s.sendto(p, (dst, 0))
                    n += 1
                except OSError:
                    pass  # the route is being torn down and rebuilt by the test
            nxt += gap * burst
            pause = nxt - time.time()
            if pause > 0:
                time.sleep(pause)
    print(n)


def ack(peer, report, every=8):
    v6 = ':' in peer
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVTCLASS, 1)
        tos_of = (socket.IPPROTO_IPV6, socket.IPV6_TCLASS)
    else:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
        tos_of = (socket.IPPROTO_IP, socket.IP_TOS)
    # Bursts (netem slots, GRO) must not overflow a slow reader's buffer.
    s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE (root)
    s.bind(('::' if v6 else '0.0.0.0', ROCE_PORT))
    out = socket.socket(fam, socket.SOCK_DGRAM)
    # What arrived: packets, ACKs sent, packets by ECN codepoint, and
    # packets whose PSN is 5 mod 32 (datapath.sh's FORWARD rule drops those),
    # and copies of a (QP, PSN) that had arrived already.
    c = {'received': 0, 'acks': 0, 'not-ect': 0, 'ect0': 0, 'ce': 0, 'psn5': 0, 'dup': 0}
    seen = set()

    def done(*_):
        with open(report, 'w') as f:
            f.write(' '.join(f'{k}={v}' for k, v in c.items()) + '\n')
        sys.exit(0)

    signal.signal(signal.SIGTERM, done)
    while True:
        pkt, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(4))
        if len(pkt) < 12 or pkt[0] != 0x04:
            continue
        c['received'] += 1
        tos = next((d[0] for lvl, typ, d in anc if (lvl, typ) == tos_of and d), 0)
        ecn = ('not-ect', 'ect1', 'ect0', 'ce')[tos & 3]
        c[ecn] = c.get(ecn, 0) + 1
        qp = int.from_bytes(pkt[5:8], 'big')
        psn = int.from_bytes(pkt[9:12], 'big')
        if psn % 32 == 5:
            c['psn5'] += 1
        if (qp, psn) in seen:
            c['dup'] += 1
            if c['dup'] <= 5:
                print(f'roce.py: duplicate qp {qp} psn {psn} after {c["received"]} packets',
                      file=sys.stderr)
        seen.add((qp, psn))
        if not every or psn % every != every - 1:
            continue
        # The ACK names the requester's QP; here the same number.
        msg = bth(0x11, qp, psn) + struct.pack('!I', psn & 0xffffff) + b'\0\0\0\0'
        try:
            out.sendto(msg, (peer, ROCE_PORT))
            c['acks'] += 1
        except OSError:
            pass


if __name__ == '__main__':
    if sys.argv[1] == 'send' and ':' in sys.argv[2]:
        send6(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]),
              float(sys.argv[5]) if len(sys.argv) > 5 else 2000,
              int(sys.argv[6]) if len(sys.argv) > 6 else 0,
              int(sys.argv[8]) if len(sys.argv) > 8 else 1)
    elif sys.argv[1] == 'send':
        send(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]),
             float(sys.argv[5]) if len(sys.argv) > 5 else 2000,
             int(sys.argv[6]) if len(sys.argv) > 6 else 0,
             len(sys.argv) > 7 and sys.argv[7] == '1',
             int(sys.argv[8]) if len(sys.argv) > 8 else 1)
    elif sys.argv[1] == 'ack':
        ack(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 8)
    else:
        sys.exit(__doc__)
