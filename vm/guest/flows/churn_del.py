#!/usr/bin/env python3
"""churn_del.py SECONDS KEEP: for SECONDS, delete a random flow whenever more
than KEEP exist (flow-get dump, then flow-del by id and side). Run in n1.
The spec is not validated against the genetlink schema here (netlink/gen.sh
does that): under TCG the validation alone took most of a 30 s run."""
import random
import sys
import time
sys.path.insert(0, '/tmp/ynl')
from lib import YnlFamily, NlError  # noqa: E402

ynl = YnlFamily('/tmp/ynl/crem.yaml', '')
end, keep, deleted = time.time() + float(sys.argv[1]), int(sys.argv[2]), 0
while time.time() < end:
    flows = ynl.dump('flow-get', {})  # each the flow's attributes
    if len(flows) <= keep:
        time.sleep(0.01)
        continue
    for f in random.sample(flows, len(flows) - keep):
        try:
            ynl.do('flow-del', {'id': f['id'], 'side': f['side']})
            deleted += 1
        except NlError:
            pass  # gone meanwhile
print(deleted)
