#!/usr/bin/env python3
"""dump.py SECONDS: repeat the flow-get dump for SECONDS (and at least 6
times) with the YNL library, noting the kernel's NLM_F_DUMP_INTR (cli.py
ignores it). Every dump must succeed and list each flow (id, side, peer) and
each key (src, dst, dest-qp, side) once. Prints one JSON line: dumps, interrupted, failures, duplicates,
max flows seen."""
import json
import random
import sys
import time
sys.path.insert(0, '/tmp/ynl')
from lib import YnlFamily, Netlink  # noqa: E402
from lib.ynl import NlMsgs  # noqa: E402

NLM_F_DUMP_INTR = 0x10
ynl = YnlFamily('/tmp/ynl/crem.yaml', '/tmp/ynl/genetlink-legacy.yaml')
op = ynl.ops['flow-get']

def dump():
    seq = random.randint(1024, 65535)
    ynl.sock.send(ynl._encode_message(op, {}, [Netlink.NLM_F_DUMP], seq), 0)
    flows, intr = [], False
    while True:
        for m in NlMsgs(ynl.sock.recv(ynl._recv_size)):
            if m.nl_seq != seq:
                continue
            intr |= bool(m.nl_flags & NLM_F_DUMP_INTR)
            if m.error:
                raise RuntimeError(f'dump failed: error {m.error}')
            if m.done:
                return flows, intr
            d = ynl.nlproto.decode(ynl, m, op)
            # A message's attributes are the flow's (no flow nest).
            flows.append(ynl._decode(d.raw_attrs, op.attr_set.name))

res = dict(dumps=0, interrupted=0, failures=0, duplicates=0, max_flows=0, errors=[])
# At least 6 dumps however slow the kernel (a debug kernel takes seconds per
# dump of 250 flows), but no longer than a minute past SECONDS.
start = time.time()
end, cap = start + float(sys.argv[1]), start + float(sys.argv[1]) + 60
while time.time() < end or (res['dumps'] + res['failures'] < 6 and time.time() < cap):
    try:
        flows, intr = dump()
    except Exception as e:  # noqa: BLE001
        res['failures'] += 1
        res['errors'].append(str(e))
        continue
    res['dumps'] += 1
    res['interrupted'] += intr
    res['max_flows'] = max(res['max_flows'], len(flows))
    ids = [(f['id'], f['side'], f['peer']) for f in flows]
    keys = [(f['src'], f['dst'], f['dest-qp'], f['side']) for f in flows]
    dup = len(ids) - len(set(ids)) + len(keys) - len(set(keys))
    if dup:
        res['duplicates'] += 1
        res['errors'].append(f'duplicate in {"interrupted" if intr else "consistent"} dump')
res['errors'] = res['errors'][:5]
print(json.dumps(res))
