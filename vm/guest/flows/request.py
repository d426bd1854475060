#!/usr/bin/env python3
"""request.py FLOW_ID FIRST_PSN [RANGES [DST [READY]]]: send one forged REPAIR_REQUEST
(rust/core/src/wire/request.rs) in PSN-range form with FALLBACK, naming
RANGES (default 64, the most the CSF reads) ranges of 255 PSNs from
FIRST_PSN on, for Flow ID FLOW_ID, to the CREM port DST:7470 (default
10.0.0.2), as the CRF of that flow would. Run in n1 (the source address
must be the CSF's peer; the source port is not checked). With READY, it
creates that file once the message is built and sends it on SIGUSR1 (so
that Python's start, seconds under TCG, is not in the caller's measure).
FIRST_PSN may be @FILE: the first PSN is then read from FILE when the
message is sent (after SIGUSR1 with READY), so that the caller can name
the PSNs its sender has reached by then. Prints the octets sent."""
import signal
import socket
import struct
import sys

FLAG_RANGES, FLAG_FALLBACK = 0x10, 0x20


def request(flow_id, first, ranges, request_id=0x4242):
    # Request ID, Range Count, then Start PSN (24) | Count (8) per range.
    body = struct.pack('!HH', request_id, ranges)
    for i in range(ranges):
        body += struct.pack('!I', ((first + 255 * i) & 0xffffff) << 8 | 255)
    # Common header: version 1 << 4 | type 6 (REPAIR_REQUEST), flags,
    # length, Flow ID.
    return struct.pack('!BBHI', 0x16, FLAG_RANGES | FLAG_FALLBACK, 8 + len(body),
                       flow_id) + body


def first_psn(arg):
    if arg.startswith('@'):
        with open(arg[1:]) as f:
            return int(f.read())
    return int(arg)


flow_id = int(sys.argv[1])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 64
dst = sys.argv[4] if len(sys.argv) > 4 else '10.0.0.2'
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if len(sys.argv) > 5:
    # Blocked first: a signal sent as soon as READY exists waits for us.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    open(sys.argv[5], 'w').close()
    signal.sigwait({signal.SIGUSR1})
msg = request(flow_id, first_psn(sys.argv[2]), n)
s.sendto(msg, (dst, 7470))
print(len(msg))
