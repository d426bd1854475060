#!/usr/bin/env python3
"""hello.py FIRST COUNT [GAP_S]: send HELLOs (rust/core/src/wire/hello.rs)
describing the flows 192.0.2.1 -> 203.0.113.1 with destination QPs FIRST ..
FIRST+COUNT-1 to the CREM port 10.0.0.1:7470, as the CSF of the peer
10.0.0.2 would. Run in n2 (the source address must be n1's peer)."""
import socket
import struct
import sys
import time

def hello(src, dst, dqp, nonce):
    # Flow Kind 1 (RoCEv2), AF 4, schemes 0b111, max k 255, max m 16,
    # max T 4200, RDMA MTU 1024, reserved, nonce, addresses, Flow Label.
    body = struct.pack('!BBHBBHHHQ', 1, 4, 0b111, 255, 16, 4200, 1024, 0, nonce)
    body += socket.inet_aton(src) + socket.inet_aton(dst)
    body += struct.pack('!I', dqp & 0xffffff)
    # Common header: version 1 << 4 | type 2 (HELLO), flags, length, Flow ID 0.
    return struct.pack('!BBHI', 0x12, 0, 8 + len(body), 0) + body

first, count = int(sys.argv[1]), int(sys.argv[2])
gap = float(sys.argv[3]) if len(sys.argv) > 3 else 0.002
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for q in range(first, first + count):
    s.sendto(hello('192.0.2.1', '203.0.113.1', q, q), ('10.0.0.1', 7470))
    time.sleep(gap)  # the creation queue holds 64 requests
