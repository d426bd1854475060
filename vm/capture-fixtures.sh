#!/usr/bin/env bash
# capture-fixtures.sh — capture real RoCEv2 packets from rxe in the QEMU
# topology and write a handful (one per distinct opcode) as hex fixtures for
# crem-core's ICRC tests (rust/core/tests/fixtures/*.hex). A developer tool:
# the fixtures are committed, tests never capture.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d /tmp/crem-capture.XXXXXX)
"$here/topo.sh" --out "$out" --capture 600 --tests write_bw:rping --iters 4 --size 4096 >/dev/null
python3 - "$out/a.pcap" "$here/../rust/core/tests/fixtures" <<'PY'
import os, struct, sys
pcap, dst = sys.argv[1], sys.argv[2]
data = open(pcap, "rb").read()
magic = struct.unpack("<I", data[:4])[0]
assert magic == 0xA1B2C3D4, "expected a little-endian microsecond pcap"
linktype = struct.unpack("<I", data[20:24])[0]
assert linktype == 1, "expected Ethernet captures"
off, seen, n = 24, set(), 0
os.makedirs(dst, exist_ok=True)
while off + 16 <= len(data):
    _, _, incl, _ = struct.unpack("<IIII", data[off:off + 16])
    frame = data[off + 16: off + 16 + incl]
    off += 16 + incl
    if struct.unpack("!H", frame[12:14])[0] != 0x0800:
        continue
    ip = frame[14:]
    ip = ip[:struct.unpack("!H", ip[2:4])[0]]
    opcode = ip[20 + 8]
    if opcode in seen:
        continue
    seen.add(opcode)
    name = os.path.join(dst, f"rxe-v4-op{opcode:02x}.hex")
    with open(name, "w") as f:
        f.write(ip.hex() + "\n")
    n += 1
print(f"wrote {n} fixtures (opcodes {sorted(hex(o) for o in seen)}) into {dst}")
PY
