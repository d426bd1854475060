#!/usr/bin/env python3
"""sub.py N SECONDS READY: subscribe to the crem "events" group with the YNL
library, touch READY once subscribed, and print the first N notifications
(or all received within SECONDS) as one JSON list of {"name", "msg"}, as
cli.py --subscribe does but without a fixed sleep.

A burst (256 flow-downs when the role goes off) overflows the default
receive buffer and the kernel drops notifications for this socket (recv
fails with ENOBUFS): the socket asks for 8 MiB as `crem-ctl monitor` does,
and an overflow that still happens is one {"name": "lost"} entry, so the
output is always JSON and a count that falls short says why."""
import errno
import json
import socket
import sys
import time
sys.path.insert(0, '/tmp/ynl')
from lib import YnlFamily  # noqa: E402

SO_RCVBUFFORCE = 33
n, end, ready = int(sys.argv[1]), time.time() + float(sys.argv[2]), sys.argv[3]
ynl = YnlFamily('/tmp/ynl/crem.yaml', '/tmp/ynl/genetlink-legacy.yaml')
ynl.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
ynl.ntf_subscribe('events')
open(ready, 'w').close()
lost = 0
while len(ynl.async_msg_queue) < n and time.time() < end:
    try:
        ynl.check_ntf()
    except OSError as e:
        if e.errno != errno.ENOBUFS:
            raise
        lost += 1
    time.sleep(0.05)
print(json.dumps([{'name': m['name'], 'msg': m['msg']} for m in ynl.async_msg_queue]
                 + [{'name': 'lost', 'msg': {}}] * lost,
                 # bytes as YNL's cli.py writes them; an enum-as-flags set
                 # (schemes) as a sorted list
                 default=lambda v: sorted(v) if isinstance(v, set) else v.hex()))
