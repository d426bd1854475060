#!/usr/bin/env python3
"""fio_result.py JSON TEST: the RESULT fields of one fio run (host.sh's fio_*
tests), from fio's --output-format=json report.

Prints "bytes=B seconds=S mbps=M iops=I p50_us=X p99_us=Y verified=0|1
verify_bytes=V", the direction the test is named for (fio_write_...: write,
fio_read_...: read). seconds and mbps are fio's own: the time the job spent
on that direction, not the verification pass after a write. verified is 1
when fio ended without error (verify_fatal: any bad block is an error) and,
for a write, it read back every octet it wrote (verify_bytes). Exits 1 if
the report cannot be read (fio died before writing it)."""
import json
import sys


def fields(doc, test):
    job = doc["jobs"][0]
    rw = test.split("_")[1]
    main = job["write" if "write" in rw else "read"]
    io = main["io_bytes"]
    secs = main["runtime"] / 1000.0
    pct = main.get("clat_ns", {}).get("percentile", {})
    verify_bytes = job["read"]["io_bytes"] if "write" in rw else io
    ok = job.get("error", 1) == 0 and io > 0 and verify_bytes >= io
    return {
        "bytes": io,
        "seconds": f"{secs:.3f}",
        "mbps": f"{io * 8 / secs / 1e6:.3f}" if secs > 0 else "0",
        "iops": f"{main['iops']:.1f}",
        "p50_us": f"{pct.get('50.000000', 0) / 1000:.0f}",
        "p99_us": f"{pct.get('99.000000', 0) / 1000:.0f}",
        "verified": int(ok),
        "verify_bytes": verify_bytes,
    }


def main():
    path, test = sys.argv[1], sys.argv[2]
    try:
        with open(path) as f:
            text = f.read()
        # fio may print notes before its JSON (e.g. about the libaio engine).
        doc = json.loads(text[text.index("{"):])
        out = fields(doc, test)
    except (OSError, ValueError, KeyError, IndexError) as e:
        print(f"fio_result: {path}: {e}", file=sys.stderr)
        return 1
    print(" ".join(f"{k}={v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
