#!/usr/bin/env python3
"""hello.py FIRST COUNT [GAP_S] [--v6 SRC DST TO] [--ack]: send HELLOs
(rust/core/src/wire/hello.rs) describing the flows 192.0.2.1 -> 203.0.113.1
with destination QPs FIRST .. FIRST+COUNT-1 to the CREM port 10.0.0.1:7470,
as the CSF of the peer 10.0.0.2 would. Run in n2 (the source address must
be n1's peer).
  --v6 SRC DST TO  an IPv6 flow SRC -> DST (AF 6), sent to TO:7470 (over
                   TO's family)
  --ack            then wait (2 s) for one answer per HELLO and print each
                   answer's type and length ("type 3 len N": HELLO_ACK)"""
import ipaddress
import socket
import struct
import sys
import time

def hello(src, dst, dqp, nonce):
    src, dst = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    # Flow Kind 1 (RoCEv2), AF 4 or 6, schemes 0b111, max k 255, max m 16,
    # max T 4200, RDMA MTU 1024, reserved, nonce, addresses, Flow Label.
    body = struct.pack('!BBHBBHHHQ', 1, src.version, 0b111, 255, 16, 4200, 1024, 0, nonce)
    body += src.packed + dst.packed
    body += struct.pack('!I', dqp & 0xffffff)
    # Common header: version 1 << 4 | type 2 (HELLO), flags, length, Flow ID 0.
    return struct.pack('!BBHI', 0x12, 0, 8 + len(body), 0) + body

args = sys.argv[1:]
ack = '--ack' in args
args = [a for a in args if a != '--ack']
src, dst, to, fam = '192.0.2.1', '203.0.113.1', '10.0.0.1', socket.AF_INET
if '--v6' in args:
    i = args.index('--v6')
    src, dst, to = args[i + 1:i + 4]
    fam = socket.AF_INET6 if ipaddress.ip_address(to).version == 6 else socket.AF_INET
    del args[i:i + 4]
first, count = int(args[0]), int(args[1])
gap = float(args[2]) if len(args) > 2 else 0.002
s = socket.socket(fam, socket.SOCK_DGRAM)
for q in range(first, first + count):
    s.sendto(hello(src, dst, q, q), (to, 7470))
    time.sleep(gap)  # the creation queue holds 64 requests
if ack:
    s.settimeout(2)
    for _ in range(count):
        try:
            m, frm = s.recvfrom(2048)
        except socket.timeout:
            print('no answer')
            break
        print(f'type {m[0] & 0x0f} len {len(m)} from {frm[0]}')
