"""What the tests of vm/tests share: vm/ on the import path (demo, plot,
results), and the recorded short demo run (fixtures/README.md): its JSON and
its four cells' directories as (mode, loss %, directory)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VM = os.path.dirname(HERE)
sys.path.insert(0, VM)

FIX = os.path.join(HERE, "fixtures")
DEMO_JSON = os.path.join(FIX, "demo-20261201T201655Z.json")
OFF0 = os.path.join(FIX, "demo-off-0")
OFF1 = os.path.join(FIX, "demo-off-1")
FIXED = os.path.join(FIX, "demo-fixed-1")
ADAPTIVE = os.path.join(FIX, "demo-adaptive-1")
# The loss-free cell of a workloads grid (rxe counters and cpu.wan).
WORKLOADS_OFF0 = os.path.join(FIX, "workloads-off-0")
CELLS = [("off", 0.0, OFF0), ("off", 1.0, OFF1), ("fixed", 1.0, FIXED), ("adaptive", 1.0, ADAPTIVE)]
