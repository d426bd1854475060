#!/usr/bin/env bash
# capture-fixtures.sh — capture real RoCEv2 packets from rxe in the QEMU
# topology and write a handful (one per distinct opcode) as hex fixtures for
# crem-core's ICRC tests (rust/core/tests/fixtures/*.hex). A developer tool:
# the fixtures are committed, tests never capture.
#   capture-fixtures.sh [--family 4|6]   rxe-v4-opNN.hex or rxe-v6-opNN.hex [4]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
family=4
[ "${1:-}" = --family ] && family=${2:?--family 4|6}
out=$(mktemp -d /tmp/crem-capture.XXXXXX)
"$here/topo.sh" --out "$out" --family "$family" --capture 600 --tests write_bw:rping --iters 5 --size 4096 >/dev/null
python3 - "$out/a.pcap" "$here/../rust/core/tests/fixtures" "$family" <<'PY'
import os, struct, sys
pcap, dst, family = sys.argv[1], sys.argv[2], int(sys.argv[3])
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
    ethertype = struct.unpack("!H", frame[12:14])[0]
    ip = frame[14:]
    if family == 4 and ethertype == 0x0800:
        ip, hlen = ip[:struct.unpack("!H", ip[2:4])[0]], 20
    elif family == 6 and ethertype == 0x86DD and ip[6] == 17:
        # No extension headers (rxe sends none): UDP right after the 40.
        ip, hlen = ip[:40 + struct.unpack("!H", ip[4:6])[0]], 40
    else:
        continue
    if struct.unpack("!H", ip[hlen + 2:hlen + 4])[0] != 4791:
        continue
    opcode = ip[hlen + 8]
    if opcode in seen:
        continue
    seen.add(opcode)
    name = os.path.join(dst, f"rxe-v{family}-op{opcode:02x}.hex")
    with open(name, "w") as f:
        f.write(ip.hex() + "\n")
    n += 1
print(f"wrote {n} fixtures (opcodes {sorted(hex(o) for o in seen)}) into {dst}")
PY
