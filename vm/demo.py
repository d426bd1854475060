#!/usr/bin/env python3
"""make demo: the same RDMA transfers over the emulated lossy long link without
CREM, with CREM (fixed k/m) and with CREM adaptive, as one comparison table
plus results/demo-<UTC timestamp>.json.

Cells, each one boot of the three-VM topology (vm/topo.sh):
  off      @ 0%      the loss-free reference (always run)
  off      @ LOSS    rxe's own go-back-N over the lossy link, no crem.ko
  fixed    @ LOSS    crem.ko in the WAN VM, both gateways protect A<->B, k/m fixed
  adaptive @ LOSS    the same with adaptive redundancy
Every boot runs TRIALS x (ib_write_bw, rping -V); rping verifies the payload.
Goodput and completion time are medians over the completed trials; transfers
that hit the timeout are counted ("done" column), not hidden.

Columns:
  goodput        median Mbit/s of application payload
  vs 0%          goodput / the loss-free (off @ 0%) goodput of the same test
  time           median completion time, "-" when no trial completed
  done           completed / trials
  verified       rping -V checked every completed transfer's payload
  lost           packets netem dropped on the WAN, both directions, whole boot
                 (includes CREM's own repair/control packets)
  restored       packets the CRFs rebuilt from repairs (gateway totals)
  overhead       repair octets / source octets at the CSFs
  coded retx     coded retransmission symbols sent on request
  fallbacks      blocks handed back to rxe's go-back-N
CREM's counters come from `crem-ctl -j stats` totals of both gateways, read
once at the end of the boot: they cover both tests of a cell, so the write_bw
and rping rows of a cell show the same numbers (JSON: counters_scope "cell").
Without CREM (mode off) they are not applicable: "-" and null in the JSON.

A cell whose VMs die before any transfer ran (a boot failure) is booted once
more; any other VM failure makes the exit status non-zero. Transfers that time
out are results, not failures.

The numbers come from QEMU with TCG emulation on a shared machine; compare
rows of one run, not absolute values with real hardware.
"""
import argparse
import datetime
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
TESTS = ("write_bw", "rping")
MODES = ("off", "fixed", "adaptive")


def log(msg):
    print(f"[demo] {msg}", file=sys.stderr, flush=True)


def parse_results(path):
    rows = []
    if not os.path.exists(path):
        return rows
    for line in open(path):
        if not line.startswith("RESULT "):
            continue
        rows.append(dict(f.split("=", 1) for f in line.split()[1:] if "=" in f))
    return rows


def netem_drops(out):
    """Packets netem dropped on the WAN (both directions), from the WAN VM's log."""
    try:
        text = open(os.path.join(out, "wan.console.log"), errors="replace").read()
    except OSError:
        return None
    drops = re.findall(r"gw[ab] Sent \d+ bytes \d+ pkt \(dropped (\d+)", text)
    return sum(int(d) for d in drops) if drops else None


def crem_totals(out):
    """Sum of the `crem-ctl -j stats` totals of both gateways, or None."""
    total = {}
    for gw in ("gwa", "gwb"):
        try:
            with open(os.path.join(out, f"stats.{gw}.json")) as f:
                t = json.load(f)["stats"]["totals"]
        except (OSError, ValueError, KeyError):
            return None
        for k, v in t.items():
            total[k] = total.get(k, 0) + v
    return total


def median(xs, nd=3):
    return round(statistics.median(xs), nd) if xs else None


def run_cell(args, bins, mode, loss):
    out = tempfile.mkdtemp(prefix=f"crem-demo-{mode}-{loss:g}-")
    cmd = [os.path.join(HERE, "topo.sh"), "--out", out, "--rtt", str(args.rtt),
           "--loss", str(loss), "--rate", str(args.rate), "--size", str(args.size),
           "--iters", str(args.iters), "--trials", str(args.trials),
           "--tmo", str(args.timeout), "--tests", ":".join(TESTS)]
    if mode != "off":
        cmd += ["--gw-module", bins["module"], "--crem", mode, "--ctl", bins["ctl"],
                "--k", str(args.k), "--m", str(args.m), "--hold", str(args.hold)]
    log(f"cell {mode} @ {loss:g}% loss, rtt {args.rtt} ms: {args.trials} x "
        f"({', '.join(TESTS)}), timeout {args.timeout} s each; logs in {out}")
    t0 = time.monotonic()
    rc = subprocess.call(cmd, stdout=subprocess.DEVNULL)
    rows = parse_results(os.path.join(out, "results.txt"))
    boot_retries = 0
    if rc != 0 and not rows:
        # No transfer ran: a VM died before the test (e.g. TCG's IO-APIC timer
        # check panicking on an overloaded host). Boot the cell once more.
        boot_retries = 1
        log(f"cell {mode} @ {loss:g}%: a VM failed before any transfer (rc {rc}); "
            f"booting the cell once more")
        rc = subprocess.call(cmd, stdout=subprocess.DEVNULL)
        rows = parse_results(os.path.join(out, "results.txt"))
    elapsed = time.monotonic() - t0
    lost = netem_drops(out)
    tot = crem_totals(out) if mode != "off" else None
    if mode != "off" and tot is None:
        log(f"cell {mode}: no gateway counters in {out} (stats.gw*.json missing)")
    runs = []
    for test in TESTS:
        r = [x for x in rows if x.get("test") == test]
        done = [x for x in r if x.get("completed") == "1"]
        secs = [float(x["seconds"]) for x in done]
        mbps = [float(x["mbps"]) for x in done]
        run = {
            "mode": mode, "test": test, "loss_pct": loss, "rtt_ms": args.rtt,
            "rate_mbit": args.rate,
            "bytes": int(r[0]["bytes"]) if r else None,
            "goodput_mbps": median(mbps) if mbps else 0.0,
            "goodput_vs_lossfree": None,
            "completion_s": median(secs),
            "completed": len(done), "trials": args.trials,
            "not_completed": args.trials - len(done),
            "verified": test == "rping" and len(done) > 0
                        and all(x.get("verified") == "1" for x in done),
            "lost_packets": lost,
            "restored": None, "coded_retx_symbols": None, "fallbacks": None,
            "repair_overhead": None,
            "counters_scope": "cell",
            "trial_results": [{"trial": int(x.get("trial", 0)),
                               "completed": x.get("completed") == "1",
                               "seconds": float(x["seconds"]) if x.get("completed") == "1" else None,
                               "mbps": float(x.get("mbps", 0))} for x in r],
            "vm_rc": rc, "boot_retries": boot_retries, "logs": out,
        }
        if mode != "off":
            run.update({"k": args.k, "m": args.m, "hold_us": args.hold})
        if tot is not None:
            src = tot.get("source-octets", 0)
            run.update({
                "restored": tot.get("restored", 0),
                "coded_retx_symbols": tot.get("coded-retx", 0),
                "fallbacks": tot.get("fallbacks", 0),
                "repair_overhead": round(tot.get("repair-octets", 0) / src, 4) if src else None,
                "crem_totals": tot,
            })
        runs.append(run)
    summary = ", ".join(f"{x['test']} {x['completed']}/{x['trials']} done, "
                        f"{x['goodput_mbps']} Mb/s" for x in runs)
    log(f"cell {mode} @ {loss:g}%: {summary}; netem dropped {lost}; "
        f"{elapsed:.0f} s{'' if rc == 0 else f'; A VM FAILED (rc {rc})'}")
    return runs


def dash(v, fmt="{}"):
    return "-" if v is None else fmt.format(v)


def print_table(args, runs):
    print(f"\nRDMA over the emulated WAN: rtt {args.rtt} ms, loss {args.loss:g}% per direction, "
          f"rate {args.rate or 'unlimited'}{' Mbit/s' if args.rate else ''}; "
          f"ib_write_bw {args.iters} x {args.size} B, rping -V; CREM k={args.k} m={args.m} "
          f"hold={args.hold} us; medians of {args.trials} trial(s), timeout {args.timeout} s")
    cols = [("mode", 9, "<"), ("test", 9, "<"), ("loss%", 6, ">"), ("goodput Mb/s", 13, ">"),
            ("vs 0%", 7, ">"), ("time s", 8, ">"), ("done", 6, ">"), ("verified", 9, ">"),
            ("lost", 6, ">"), ("restored", 9, ">"), ("overhead", 9, ">"),
            ("coded retx", 11, ">"), ("fallbacks", 10, ">")]
    hdr = "".join(f"{n:{a}{w}}" for n, w, a in cols)
    print(hdr)
    print("-" * len(hdr))
    for test in TESTS:
        for r in (x for x in runs if x["test"] == test):
            vals = [r["mode"], r["test"], f"{r['loss_pct']:g}", f"{r['goodput_mbps']:.3f}",
                    dash(r["goodput_vs_lossfree"], "{:.2f}"), dash(r["completion_s"], "{:.2f}"),
                    f"{r['completed']}/{r['trials']}",
                    ("yes" if r["verified"] else "no") if r["test"] == "rping" else "n/a",
                    dash(r["lost_packets"]), dash(r["restored"]),
                    dash(r["repair_overhead"], "{:.3f}"), dash(r["coded_retx_symbols"]),
                    dash(r["fallbacks"])]
            print("".join(f"{v:{a}{w}}" for v, (_, w, a) in zip(vals, cols)))
    print("lost: netem drops per boot, both directions; restored/overhead/coded retx/"
          "fallbacks: both gateways, per cell (shared by its two rows); '-': no CREM")


def snapshot(path, tmp):
    """A private copy, so a rebuild during the run cannot mix binaries between cells."""
    dst = os.path.join(tmp, os.path.basename(path))
    shutil.copy2(path, dst)
    return dst, hashlib.sha256(open(dst, "rb").read()).hexdigest()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(TOP, "target")
    p.add_argument("--rtt", type=int, default=10, help="WAN RTT in ms (default 10)")
    p.add_argument("--loss", type=float, default=1.0,
                   help="random loss %% on each WAN direction for the lossy cells (default 1)")
    p.add_argument("--rate", type=int, default=0, help="WAN rate in Mbit/s, 0 = unlimited (default)")
    p.add_argument("--size", type=int, default=65536, help="ib_write_bw message size (default 65536)")
    p.add_argument("--iters", type=int, default=100,
                   help="ib_write_bw messages per transfer (default 100: the data phase, "
                   "not the RDMA CM set-up of about 2 s under TCG, dominates the time)")
    p.add_argument("--trials", type=int, default=3, help="trials per cell and test (default 3)")
    p.add_argument("--timeout", type=int, default=60, help="per-transfer timeout in s (default 60)")
    p.add_argument("--k", type=int, default=16, help="CREM source packets per block (default 16)")
    p.add_argument("--m", type=int, default=2, help="CREM repairs per block (default 2)")
    p.add_argument("--hold", type=int, default=30000, help="CRF hold time in us (default 30000)")
    p.add_argument("--modes", default=",".join(MODES),
                   help="comma-separated modes for the lossy cells (default off,fixed,adaptive); "
                        "the loss-free off reference always runs")
    p.add_argument("--module", default=os.path.join(TOP, "crem.ko"),
                   help="crem.ko for the gateways (default: the repo's, built by make module)")
    p.add_argument("--ctl", default=os.path.join(target, "release", "crem-ctl"),
                   help="crem-ctl (default: target/release/crem-ctl)")
    args = p.parse_args()

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        p.error(f"--modes: unknown {','.join(bad) or '(empty)'}; choose from {','.join(MODES)}")
    if args.trials < 1:
        p.error("--trials must be >= 1")
    bins, hashes = {}, {}
    if any(m != "off" for m in modes):
        for key, path, how in (("module", args.module, "make module"),
                               ("ctl", args.ctl, "cargo build -p crem-ctl --release")):
            if not os.path.isfile(path):
                p.error(f"no {key} at {path}: run '{how}' (make demo does)")
        tmp = tempfile.mkdtemp(prefix="crem-demo-bin-")
        for key, path in (("module", args.module), ("ctl", args.ctl)):
            bins[key], hashes[key] = snapshot(path, tmp)

    cells = [("off", 0.0)] + [(m, args.loss) for m in modes if not (m == "off" and args.loss == 0)]
    log(f"{len(cells)} cells: " + ", ".join(f"{m}@{l:g}%" for m, l in cells))
    runs = []
    for mode, loss in cells:
        runs += run_cell(args, bins, mode, loss)

    ref = {r["test"]: r["goodput_mbps"] for r in runs if r["mode"] == "off" and r["loss_pct"] == 0}
    for r in runs:
        base = ref.get(r["test"])
        r["goodput_vs_lossfree"] = round(r["goodput_mbps"] / base, 3) if base else None
    runs.sort(key=lambda r: TESTS.index(r["test"]))  # table order; stable within a test
    print_table(args, runs)

    try:
        commit = subprocess.run(["git", "-C", TOP, "rev-parse", "HEAD"], capture_output=True,
                                text=True).stdout.strip() or None
    except OSError:
        commit = None
    os.makedirs(os.path.join(TOP, "results"), exist_ok=True)
    ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = os.path.join(TOP, "results", f"demo-{ts}.json")
    doc = {
        "created_utc": ts, "git_commit": commit, "emulation": "QEMU TCG",
        "params": {"rtt_ms": args.rtt, "loss_pct": args.loss, "rate_mbit": args.rate,
                   "size": args.size, "iters": args.iters, "trials": args.trials,
                   "timeout_s": args.timeout, "k": args.k, "m": args.m, "hold_us": args.hold,
                   "modes": modes},
        "sha256": hashes,
        "notes": {"medians": "goodput_mbps and completion_s are medians over completed trials",
                  "counters_scope": "cell: CREM counters are the summed totals of both "
                                    "gateways for the whole boot, shared by its write_bw and "
                                    "rping rows; null without CREM",
                  "lost_packets": "packets netem dropped on the WAN, both directions, per boot, "
                                  "including CREM's repair/control packets"},
        "runs": runs,
    }
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    print(f"\nwritten: {path}")
    failed = sorted({(r["mode"], r["loss_pct"], r["vm_rc"]) for r in runs if r["vm_rc"] != 0})
    for mode, loss, rc in failed:
        print(f"FAILED: a VM of cell {mode} @ {loss:g}% exited {rc}; see its logs", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
