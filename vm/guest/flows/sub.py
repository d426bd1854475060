#!/usr/bin/env python3
"""sub.py N SECONDS READY: subscribe to the crem "events" group with the YNL
library, touch READY once subscribed, and print the first N notifications
(or all received within SECONDS) as one JSON list of {"name", "msg"}, as
cli.py --subscribe does but without a fixed sleep."""
import json
import sys
import time
sys.path.insert(0, '/tmp/ynl')
from lib import YnlFamily  # noqa: E402

n, end, ready = int(sys.argv[1]), time.time() + float(sys.argv[2]), sys.argv[3]
ynl = YnlFamily('/tmp/ynl/crem.yaml', '/tmp/ynl/genetlink.yaml')
ynl.ntf_subscribe('events')
open(ready, 'w').close()
while len(ynl.async_msg_queue) < n and time.time() < end:
    ynl.check_ntf()
    time.sleep(0.05)
print(json.dumps([{'name': m['name'], 'msg': m['msg']} for m in ynl.async_msg_queue],
                 default=lambda b: b.hex()))
