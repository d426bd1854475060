#!/usr/bin/env python3
"""make demo: the same RDMA transfers over the emulated lossy long link without
CREM (rxe's go-back-N), with CREM (fixed k/m; coded retransmission, selective
repeat or both) and with CREM adaptive, as one comparison table
plus results/demo-<UTC timestamp>.json and, beside it, its figure
(demo-<UTC timestamp>.png and .svg, drawn by vm/plot.py).

Cells, each one boot of the three-VM topology (vm/topo.sh), for each RTT:
  off      @ 0%      the loss-free reference (always run, once per RTT)
  off      @ LOSS    rxe's own go-back-N over the lossy link, no crem.ko
  fixed    @ LOSS    crem.ko in the WAN VM, both gateways protect A<->B, k/m
                     fixed; losses past the repairs: coded retransmission
  adaptive @ LOSS    the same with adaptive redundancy
  sr       @ LOSS    fixed k/m; losses past the repairs: selective repeat (the
                     CRF's T/C AETH reports, answered with Source Copy)
  both     @ LOSS    fixed k/m; coded retransmission and selective repeat
  host     @ LOSS    (only with --modes ...,host) crem.ko on the rxe hosts
                     (host mode), fixed k/m, coded retransmission
--loss and --rtt take comma-separated lists (--loss 0,0.1,0.5,1,2,5 --rtt
10,50): every mode runs at every loss, for every RTT, in that order (RTT,
then loss, then mode). Before each cell a progress line on stderr says which
cell of how many runs, the time elapsed and an estimate of the time left (the
mean time of the cells done so far, times the cells left).
Every boot runs TRIALS x the transfers of --workloads: perftest (ib_write_bw,
rping -V; rping verifies the payload; the default), nvme (NVMe over Fabrics on
rxe: fio sequential 128 KiB writes and reads, random 4 KiB writes and reads,
each block checked by crc32c), multiqp (ib_write_bw over 8 queue pairs), or
the transfers --tests names. Goodput and completion time are medians over the
completed trials; transfers that hit the timeout are counted ("done"
column), not hidden. A second table gives fio's IOPS and completion
latencies (p50, p99) for the nvme transfers.

Columns:
  goodput        median Mbit/s of application payload
  vs 0%          goodput / the loss-free (off @ 0%) goodput of the same test
                 and RTT
  time           median completion time, "-" when no trial completed
  done           completed / trials
  window         the goodput rxe's window allows: 128 packets per queue pair
                 per RTT (RXE_MAX_UNACKED_PSNS) x RDMA MTU x queue pairs; a
                 goodput near it is window-limited, not loss-limited
  verified       rping -V or fio's crc32c checked every completed transfer
  lost           packets netem dropped on the WAN, both directions, whole boot
                 (includes CREM's own repair/control packets)
  rxe gbn        gaps rxe itself saw on both hosts, all trials of the row
                 (hw_counters out_of_seq_request + rcvd_seq_err): RDMA's own
                 go-back-N ran; 0 when CREM restored every loss in time
  rxe rto        rxe's retransmission timeouts (completer_retry_err)
  restored       packets the CRFs rebuilt from repairs (gateway totals)
  overhead       repair octets / source octets at the CSFs
  coded retx     coded retransmission symbols sent on request
  src copies     Source Copy symbols sent (answers to T/C AETH reports, i.e.
                 selective repeat, and to FALLBACK requests)
  fallbacks      blocks handed back to rxe's go-back-N
CREM's counters come from `crem-ctl -j stats` totals of both gateways (both
hosts in host mode), read once at the end of the boot: they cover every test
of a cell, so its rows show the same numbers (JSON: counters_scope "cell").
Without CREM (mode off) they are not applicable: "-" and null in the JSON.

After every cell the run so far is saved to
results/demo-<UTC timestamp>.partial.json (the line before the first cell
names it), and the run's copies of crem.ko and crem-ctl are kept beside it
(demo-<UTC timestamp>.bin/). If the run is interrupted, the same command
with --resume PARTIAL boots only the cells not in it, with those same
binaries whatever the tree holds now (other options are refused, saying
which differ), and the results JSON covers every cell, with the binaries'
commit and grid_seconds, the cells' boots summed over every invocation.
That is how make demo-full (hours) can run in parts, across sessions:
make demo-full RESUME=PARTIAL.

A cell whose VMs die before any transfer ran (a boot failure) is booted once
more; any other VM failure makes the exit status non-zero. Transfers that time
out are results, not failures.

--bottleneck R:LIMIT_KB[:ecn] puts a core router between the gateways whose
egress toward gwb is a tbf of R Mbit/s with a LIMIT_KB tail-drop queue
(congestion loss at a node that is no CREM gateway, vm/topo.sh); :ecn marks
CE there instead (fq_codel), and the hosts then connect with ToS 2, ECT(0).
--reporter core makes that router a Path Reporter for the CREM gateway
cells. The header line names both; each cell's bottleneck drops, CE marks
and the reporter's reports sent follow the table.

The numbers come from QEMU with TCG emulation on a shared machine; compare
rows of one run, not absolute values with real hardware.
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import results  # noqa: E402  (vm/results.py: the one reader of a run's files)
import plot  # noqa: E402  (vm/plot.py: the figure; matplotlib only when drawing)

TOP = os.path.dirname(HERE)
# What a boot runs, by workload (--workloads; --tests names any transfer
# vm/topo.sh takes instead). nvme: NVMe over Fabrics on rxe, fio with crc32c
# verification (vm/guest/nvme.sh): sequential 128 KiB writes and reads at
# queue depth 8, random 4 KiB writes at 16 and reads at 1. multiqp:
# ib_write_bw over 8 queue pairs at once (8 flows for CREM).
WORKLOADS = {
    "perftest": ("write_bw", "rping"),
    "nvme": ("fio_write_128k_qd8", "fio_read_128k_qd8", "fio_randwrite_4k_qd16",
             "fio_randread_4k_qd1"),
    "multiqp": ("write_bw_q8",),
}
DEFAULT_WORKLOADS = "perftest"
# What topo.sh configures in each CREM mode: --crem (k/m fixed or adaptive),
# --recovery (what recovers losses past the repairs) and where crem.ko runs:
# the gateways (gw) or the rxe hosts themselves (host mode, coded recovery).
CREM_MODES = {
    "fixed": ("fixed", "coded", "gw"),
    "adaptive": ("adaptive", "coded", "gw"),
    "sr": ("fixed", "selective-repeat", "gw"),
    "both": ("fixed", "both", "gw"),
    "host": ("fixed", "coded", "host"),
}
# The default modes (host mode runs when asked: --modes ...,host).
MODES = ("off", "fixed", "adaptive", "sr", "both")
ALL_MODES = ("off",) + tuple(CREM_MODES)


def crem_nodes(mode):
    """Whose counters a cell of MODE reads: the gateways' or the hosts'."""
    return results.HOSTS if CREM_MODES.get(mode, (0, 0, "gw"))[2] == "host" else results.GATEWAYS


def log(msg):
    print(f"[demo] {msg}", file=sys.stderr, flush=True)


def cell_name(mode, loss, rtt):
    return f"{mode} @ {loss:g}%, rtt {rtt} ms"


def run_cell(args, bins, cell, head):
    """One boot of CELL (mode, loss, rtt); HEAD starts its first log line (the
    progress: which cell of how many, elapsed, time left)."""
    mode, loss, rtt = cell
    name = cell_name(*cell)
    out = tempfile.mkdtemp(prefix=f"crem-demo-{mode}-{loss:g}-{rtt}ms-")
    cmd = [os.path.join(HERE, "topo.sh"), "--out", out, "--rtt", str(rtt),
           "--loss", str(loss), "--rate", str(args.rate), "--size", str(args.size),
           "--iters", str(args.iters), "--trials", str(args.trials),
           "--tmo", str(args.timeout), "--tests", ":".join(tests(args)),
           "--fio-mib", str(args.fio_mib), "--fio-rand-ios", str(args.fio_rand_ios)]
    if args.bottleneck:
        cmd += ["--bottleneck", args.bottleneck]
        if args.bottleneck.endswith(":ecn"):
            # fq_codel marks only ECN-capable packets: ECT(0) from rdma_cm.
            cmd += ["--tos", "2"]
    if reporter(args, mode) != "off":
        cmd += ["--reporter", reporter(args, mode)]
    if mode != "off":
        crem, recovery, where = CREM_MODES[mode]
        if where == "host":
            cmd += ["--host-module", bins["module"], "--host-crem", crem]
        else:
            cmd += ["--gw-module", bins["module"], "--crem", crem, "--recovery", recovery]
        cmd += ["--ctl", bins["ctl"], "--k", str(args.k), "--m", str(args.m),
                "--hold", str(args.hold)]
        if args.epsilon is not None:
            cmd += ["--epsilon", args.epsilon]
    log(f"{head}: {name}: {args.trials} x ({', '.join(tests(args))}), "
        f"timeout {args.timeout} s each; logs in {out}")
    t0 = time.monotonic()
    rc = subprocess.call(cmd, stdout=subprocess.DEVNULL)
    rows = results.rows(out)
    boot_retries = 0
    if rc != 0 and not rows:
        # No transfer ran: a VM died before the test (e.g. TCG's IO-APIC timer
        # check panicking on an overloaded host). Boot the cell once more.
        boot_retries = 1
        log(f"cell {name}: a VM failed before any transfer (rc {rc}); "
            f"booting the cell once more")
        rc = subprocess.call(cmd, stdout=subprocess.DEVNULL)
        rows = results.rows(out)
    elapsed = time.monotonic() - t0
    runs = read_cell(args, mode, loss, rtt, out, rc, boot_retries)
    for r in runs:
        r["cell_seconds"] = round(elapsed, 1)
    summary = ", ".join(f"{x['test']} {x['completed']}/{x['trials']} done, "
                        f"{x['goodput_mbps']} Mb/s" for x in runs)
    log(f"cell {name}: {summary}; {results.connections_text(results.rows(out))}; "
        f"netem dropped {runs[0]['lost_packets']}; {elapsed:.0f} s"
        f"{'' if rc == 0 else f'; A VM FAILED (rc {rc})'}")
    return runs


def read_cell(args, mode, loss, rtt, out, rc=0, boot_retries=0):
    """The table rows (one per test) of a cell whose boot left its files in
    OUT, read with vm/results.py (vm/tests/ runs this on a recorded run)."""
    rows = results.rows(out)
    lost = results.netem_drops(out)
    tot, reader_error = None, None
    nodes = crem_nodes(mode)
    files = f"stats.{{{','.join(nodes)}}}.json"
    if mode != "off":
        try:
            tot = results.totals(out, nodes)
        except ValueError as e:
            reader_error = f"{files}: {e}"
            log(f"cell {mode}: cannot sum the CREM counters in {out}: {e}")
        if tot is None and reader_error is None:
            log(f"cell {mode}: no CREM counters in {out} ({files} missing)")
    by_kind = results.restored_by_kind(out, nodes) if tot is not None else None
    runs = []
    udp_drops = results.host_udp_drops(out)
    reports = results.kernel_reports(out)
    for vm, lines in reports.items():
        log(f"cell {cell_name(mode, loss, rtt)}: KERNEL REPORT in {vm}'s console: {lines[0]}"
            f"{f' (and {len(lines) - 1} more lines)' if len(lines) > 1 else ''}")
    for test in tests(args):
        s = results.summarize(rows, test)
        run = {
            "mode": mode, "test": test, "loss_pct": loss, "rtt_ms": rtt,
            "rate_mbit": args.rate,
            "bottleneck": args.bottleneck, "reporter": reporter(args, mode),
            "bytes": s["bytes"],
            "goodput_mbps": s["goodput_mbps"],
            "goodput_vs_lossfree": None,
            "completion_s": s["completion_s"],
            "completed": s["completed"], "trials": args.trials,
            "not_completed": args.trials - s["completed"],
            "not_run": max(args.trials - s["runs"], 0),
            "never_connected": s["never_connected"],
            "failed_after_connecting": s["failed_after_connecting"],
            "connect_retries": s["connect_retries"],
            "verified": s["verified"],
            "iops": s["iops"], "p50_us": s["p50_us"], "p99_us": s["p99_us"],
            "qps": s["qps"], "window_mbps": s["window_mbps"],
            "nvme_recoveries": s["nvme_recoveries"],
            "rxe": s["rxe"],
            "rxe_gbn": s["rxe_gbn"], "rxe_timeouts": s["rxe_timeouts"],
            "lost_packets": lost,
            "host_udp_drops": udp_drops,
            "kernel_reports": reports,
            "restored": None, "coded_retx_symbols": None, "source_copies": None, "fallbacks": None,
            "resent": None, "replayed": None, "repair_overhead": None,
            "counters_scope": "cell",
            "wan_cpu_us_per_fwd_packet": results.fwd_cost(out),
            "wan_cpu_us_per_rdma_packet": results.rdma_cost(out),
            **bottleneck_counts(args, out),
            "trial_results": s["trial_results"],
            "vm_rc": rc, "boot_retries": boot_retries, "logs": out,
        }
        if reader_error:
            run["reader_error"] = reader_error
        if mode != "off":
            run.update({"k": args.k, "m": args.m, "hold_us": args.hold})
            if args.epsilon is not None:
                run["epsilon"] = args.epsilon
        if tot is not None:
            run.update({
                "restored": tot.get("restored", 0),
                "restored_by_kind": by_kind,
                "coded_retx_symbols": tot.get("coded-retx", 0),
                "source_copies": tot.get("source-copies", 0),
                "fallbacks": tot.get("fallbacks", 0),
                # None: counters of a module that did not have them.
                "resent": tot.get("retransmitted-sources"),
                "replayed": tot.get("replayed"),
                "repair_overhead": results.repair_overhead(tot),
                "crem_totals": tot,
            })
        runs.append(run)
    return runs


def reporter(args, mode):
    """The Path Reporter a cell of MODE runs: --reporter's in the cells
    whose gateways run CREM (the reports go to them), else off."""
    return args.reporter if CREM_MODES.get(mode, (0, 0, "host"))[2] == "gw" else "off"


def bottleneck_counts(args, out):
    """The bottleneck's counts of a cell's boot (vm/topo.sh's core.tc.json
    and stats.core.json): {} without --bottleneck."""
    if not args.bottleneck:
        return {}
    tc = results.bottleneck(out)
    core = results.stats(out, ["core"])
    return {"bottleneck_drops": None if tc is None else tc["drops"],
            "bottleneck_marks": None if tc is None else tc["marks"],
            "reports_sent": None if core is None else results.get(core, "reports-sent")}


def bottleneck_text(args):
    """The header line's words for --bottleneck and --reporter ("" without)."""
    if not args.bottleneck:
        return ""
    rate, limit, *ecn = args.bottleneck.split(":")
    return (f"bottleneck {rate} Mbit/s, {limit} KB {'CE-marking (ToS 2)' if ecn else 'tail drop'}"
            f" at core, reporter {args.reporter}; ")


def finish(runs, tests=None):
    """Goodput relative to the loss-free off cell's of the same RTT, and the
    table's order (TESTS', else the order the tests first appear in)."""
    tests = list(tests or dict.fromkeys(r["test"] for r in runs))
    ref = results.lossfree_refs(runs)
    for r in runs:
        base = ref.get((r["rtt_ms"], r["test"]))
        r["goodput_vs_lossfree"] = round(r["goodput_mbps"] / base, 3) if base else None
    runs.sort(key=lambda r: tests.index(r["test"]))  # table order; stable within a test


def dash(v, fmt="{}"):
    return "-" if v is None else fmt.format(v)


def print_table(args, runs):
    """One table per RTT (each with its own loss-free reference), then the
    notes on transfers that did not complete."""
    for rtt in sorted({r["rtt_ms"] for r in runs}):
        print_rtt_table(args, rtt, [r for r in runs if r["rtt_ms"] == rtt])
    print("lost: netem drops per boot, both directions; window: the Mbit/s rxe's window "
          "allows (128 packets per QP per RTT); rxe gbn: gaps rxe saw (out_of_seq_request + "
          "rcvd_seq_err), rxe rto: its retransmission timeouts (completer_retry_err), both "
          "hosts, all trials; restored/overhead/coded retx/src copies/fallbacks: both "
          "gateways, per cell (shared by its rows); resent: RDMA's own resends that passed "
          "the CSFs; replayed: packets of those resends the path lost again that a CRF "
          "passed on from its copies; '-': no CREM or not recorded")
    if args.bottleneck:
        seen = set()
        for r in runs:
            cell = (r["mode"], r["loss_pct"], r["rtt_ms"])
            if cell not in seen:
                seen.add(cell)
                print(f"{cell_name(*cell)}: the bottleneck dropped "
                      f"{dash(r.get('bottleneck_drops'))}, CE-marked "
                      f"{dash(r.get('bottleneck_marks'))}; reporter {r.get('reporter', 'off')}"
                      + (f", {dash(r.get('reports_sent'))} PATH_REPORTs sent"
                         if r.get("reporter", "off") != "off" else ""))
    drops = sorted({(r["mode"], r["loss_pct"], r["rtt_ms"], r["host_udp_drops"]) for r in runs
                    if r.get("host_udp_drops")})
    reported = {}
    for r in runs:
        for vm, lines in (r.get("kernel_reports") or {}).items():
            reported.setdefault((r["mode"], r["loss_pct"], r["rtt_ms"], vm), lines)
    for (mode, loss, rtt, vm), lines in reported.items():
        print(f"{cell_name(mode, loss, rtt)}: KERNEL REPORT in {vm}'s console (the cell is not "
              f"to be trusted): {lines[0]}")
    for mode, loss, rtt, n in drops:
        print(f"{cell_name(mode, loss, rtt)}: the host dropped {n} datagrams on the emulated "
              f"links (socket buffers; losses netem did not make)")
    for r in runs:
        if r["not_completed"] or r["connect_retries"]:
            print(f"{r['mode']} {r['test']} @ {r['loss_pct']:g}%, rtt {r['rtt_ms']} ms: "
                  f"{r['completed']}/{r['trials']} "
                  f"completed; {r['never_connected']} never connected, "
                  f"{r['failed_after_connecting']} failed after connecting"
                  f"{', %d never ran' % r['not_run'] if r['not_run'] else ''}; "
                  f"{r['connect_retries']} connection retries")


def print_rtt_table(args, rtt, runs):
    """The tables of RTT's RUNS, in their order (finish sorts them)."""
    losses = ",".join(f"{x:g}" for x in args.loss)
    tests = list(dict.fromkeys(r["test"] for r in runs))
    print(f"\nRDMA over the emulated WAN: rtt {rtt} ms, loss {losses}% per direction, "
          f"rate {args.rate or 'unlimited'}{' Mbit/s' if args.rate else ''}; "
          f"{bottleneck_text(args)}{', '.join(tests)}; ib_write_bw {args.iters} x {args.size} B; CREM k={args.k} "
          f"m={args.m} hold={args.hold} us"
          f"{'' if args.epsilon is None else ' epsilon=' + args.epsilon}; medians of {args.trials} trial(s), "
          f"timeout {args.timeout} s")
    cols = [("mode", 9, "<"), ("test", 22, "<"), ("loss%", 6, ">"), ("goodput Mb/s", 13, ">"),
            ("vs 0%", 7, ">"), ("window", 8, ">"), ("time s", 8, ">"), ("done", 6, ">"),
            ("verified", 9, ">"), ("lost", 6, ">"), ("rxe gbn", 8, ">"), ("rxe rto", 8, ">"),
            ("restored", 9, ">"), ("overhead", 9, ">"), ("coded retx", 11, ">"),
            ("src copies", 11, ">"), ("fallbacks", 10, ">"), ("resent", 7, ">"),
            ("replayed", 9, ">")]
    table(cols, [[r["mode"], r["test"], f"{r['loss_pct']:g}", f"{r['goodput_mbps']:.3f}",
                  dash(r["goodput_vs_lossfree"], "{:.2f}"), dash(r.get("window_mbps"), "{:.0f}"),
                  dash(r["completion_s"], "{:.2f}"), f"{r['completed']}/{r['trials']}",
                  ("yes" if r["verified"] else "no") if results.verifies(r["test"]) else "n/a",
                  dash(r["lost_packets"]), dash(r.get("rxe_gbn")), dash(r.get("rxe_timeouts")),
                  dash(r["restored"]), dash(r["repair_overhead"], "{:.3f}"),
                  dash(r["coded_retx_symbols"]), dash(r["source_copies"]), dash(r["fallbacks"]),
                  dash(r.get("resent")), dash(r.get("replayed"))]
                 for r in runs])
    fio = [r for r in runs if r.get("iops") is not None]
    if fio:
        print(f"\nNVMe over Fabrics (fio, crc32c verify; {args.fio_mib} MiB sequential, "
              f"{args.fio_rand_ios} random I/Os): rtt {rtt} ms, medians of {args.trials} trial(s)")
        cols = [("mode", 9, "<"), ("test", 22, "<"), ("loss%", 6, ">"), ("MB/s", 8, ">"),
                ("vs 0%", 7, ">"), ("IOPS", 8, ">"), ("p50 ms", 8, ">"), ("p99 ms", 9, ">"),
                ("done", 6, ">"), ("verified", 9, ">"), ("recovered", 10, ">"),
                ("rxe gbn", 8, ">"), ("rxe rto", 8, ">")]
        table(cols, [[r["mode"], r["test"], f"{r['loss_pct']:g}", f"{r['goodput_mbps'] / 8:.2f}",
                      dash(r["goodput_vs_lossfree"], "{:.2f}"), dash(r["iops"], "{:.0f}"),
                      dash(r["p50_us"] and r["p50_us"] / 1000, "{:.1f}"),
                      dash(r["p99_us"] and r["p99_us"] / 1000, "{:.1f}"),
                      f"{r['completed']}/{r['trials']}", "yes" if r["verified"] else "no",
                      dash(r.get("nvme_recoveries")), dash(r.get("rxe_gbn")),
                      dash(r.get("rxe_timeouts"))] for r in fio])
        print("recovered: the NVMe controller's error recoveries (a queue pair in error or a "
              "timeout; it reconnects after 10 s), all trials")


def table(cols, rows):
    """Print a header of COLS ((name, width, alignment)) and ROWS under it."""
    hdr = "".join(f"{n:{a}{w}}" for n, w, a in cols)
    print(hdr)
    print("-" * len(hdr))
    for vals in rows:
        print("".join(f"{v:{a}{w}}" for v, (_, w, a) in zip(vals, cols)))


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def snapshot(path, keep):
    """A private copy in KEEP (beside the run's partial file), so a rebuild
    during the run, or before a --resume, cannot mix binaries between
    cells."""
    dst = os.path.join(keep, os.path.basename(path))
    shutil.copy2(path, dst)
    return dst, sha256_of(dst)


def number_list(kind, lo, hi=math.inf):
    """An argparse type: comma-separated KINDs (int or float) in [LO, HI],
    sorted and each once, so a sweep runs (and is drawn) in order:
    "1,0,0.1" -> [0.0, 0.1, 1.0]."""
    def parse(text):
        try:
            vals = sorted({kind(v) for v in text.split(",") if v.strip()})
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a comma-separated list of {kind.__name__}s") from None
        # "not lo <= v <= hi" also refuses nan, which compares false both ways.
        bad = [v for v in vals if not lo <= v <= hi]
        if not vals or bad:
            span = f"from {lo} to {hi}" if hi < math.inf else f"of {lo} or more"
            raise argparse.ArgumentTypeError(
                f"{text!r}: want one or more values {span}"
                f"{', not ' + ','.join(map(str, bad)) if bad else ''}")
        return vals
    return parse


def sweep(rtts, losses, modes):
    """The cells (mode, loss, rtt) in run order: per RTT the loss-free off
    reference first, then every mode at every loss (off @ 0 % only once)."""
    per_rtt = [("off", 0.0)] + [(m, x) for x in losses for m in modes if (m, x) != ("off", 0)]
    return [(m, x, rtt) for rtt in rtts for m, x in per_rtt]


def duration(s):
    """Seconds as the progress line shows them: 42s, 5m07s, 1h02m."""
    s = int(round(s))
    if s >= 3600:
        return f"{s // 3600}h{s // 60 % 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def progress(i, n, elapsed):
    """The head of the line before cell I of N (from 1), ELAPSED s into the
    run. Every cell is one boot of the same transfers, so the mean time of the
    cells done, times the cells left, is the estimate (rough: a transfer that
    runs into its timeout or a boot retried makes its cell longer); before the
    first cell is done there is none."""
    left = f"about {duration(elapsed / (i - 1) * (n - i + 1))} left" if i > 1 else "time left ?"
    return f"cell {i}/{n}, {duration(elapsed)} elapsed, {left}"


def epsilon_arg(text):
    """An argparse type: a target block failure rate in (0, 1), kept as
    crem-ctl takes it (e.g. "2.5e-3")."""
    try:
        x = float(text)
    except ValueError:
        x = -1.0
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a rate between 0 and 1, e.g. 2.5e-3")
    return text.strip()


def workload_list(text):
    """An argparse type: comma-separated workloads -> their transfers, in
    order, each once."""
    names = [w.strip() for w in text.split(",") if w.strip()]
    bad = [w for w in names if w not in WORKLOADS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown {','.join(bad) or '(empty)'}; "
                                         f"choose from {','.join(WORKLOADS)}")
    return list(dict.fromkeys(t for w in names for t in WORKLOADS[w]))


def test_list(text):
    """An argparse type: comma-separated transfers vm/topo.sh takes."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in names if not TEST_RE.fullmatch(t)
           or (t.startswith("fio_") and t.split("_")[2][-1] in "kK"
               and int(t.split("_")[2][:-1]) % 4)]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown {','.join(bad) or '(empty)'} (fio block "
                                         f"sizes: whole 4 KiB blocks, e.g. 4k, 128k, 1m)")
    return list(dict.fromkeys(names))


def fio_mib(text):
    """An argparse type: MiB a sequential fio test moves, 1 to the RAM disk's."""
    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= FIO_MAX_MIB:
        raise argparse.ArgumentTypeError(
            f"{text!r}: want 1 to {FIO_MAX_MIB} (the NVMe target's RAM disk)")
    return v


def bottleneck_spec(text):
    """An argparse type: R:LIMIT_KB[:ecn] (vm/topo.sh --bottleneck), R
    Mbit/s > 0 (a decimal allowed, as tc takes it), LIMIT_KB a whole
    number > 0; returned as given."""
    parts = text.split(":")
    try:
        ok = len(parts) in (2, 3) and float(parts[0]) > 0 and math.isfinite(float(parts[0])) \
            and int(parts[1]) > 0 and parts[2:] in ([], ["ecn"])
    except ValueError:
        ok = False
    if not ok:
        raise argparse.ArgumentTypeError(
            f"{text!r}: want R:LIMIT_KB or R:LIMIT_KB:ecn (R Mbit/s, LIMIT_KB the queue "
            f"in KB; e.g. 20:100)")
    return text


def tests(args):
    """The transfers every trial of a cell runs: --tests, else --workloads'."""
    return args.tests or args.workloads


# The transfers vm/guest/host.sh runs (its --tests).
# fio block sizes are whole 4 KiB blocks: every block carries its crc32c
# header (--verify_interval=4096).
TEST_RE = re.compile(r"write_bw(_q[1-9][0-9]*)?|rping|rping_bulk|connect"
                     r"|fio_(read|write|randread|randwrite)_([1-9][0-9]*[mM]|[1-9][0-9]*[kK])"
                     r"_qd[1-9][0-9]*")
FIO_MAX_MIB = 128  # the RAM disk run-vm.sh gives the target (brd.rd_size)


def make_parser():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(TOP, "target")
    # String defaults: argparse passes them through the type, so both are lists.
    p.add_argument("--rtt", type=number_list(int, 0), default="10",
                   help="WAN RTT in ms, or a comma-separated list to sweep (default 10)")
    p.add_argument("--loss", type=number_list(float, 0.0, 100.0), default="1",
                   help="random loss %% on each WAN direction for the lossy cells, or a "
                        "comma-separated list to sweep, e.g. 0,0.1,0.5,1,2,5 (default 1)")
    p.add_argument("--rate", type=int, default=0, help="WAN rate in Mbit/s, 0 = unlimited (default)")
    p.add_argument("--bottleneck", type=bottleneck_spec, default=None, metavar="R:LIMIT_KB[:ecn]",
                   help="a core router between the gateways whose egress toward gwb is a "
                        "tbf of R Mbit/s with a LIMIT_KB tail-drop queue (congestion loss "
                        "at a node that is no CREM gateway); :ecn, an fq_codel under it "
                        "marking CE instead, and the hosts connect with ToS 2 (default: "
                        "none)")
    p.add_argument("--reporter", choices=("off", "core"), default="off",
                   help="core: with --bottleneck, the core router is a Path Reporter sending "
                        "PATH_REPORTs about its own drops to the gateways in the CREM "
                        "gateway cells (default off)")
    p.add_argument("--size", type=int, default=65536, help="ib_write_bw message size (default 65536)")
    p.add_argument("--iters", type=int, default=100,
                   help="ib_write_bw messages per transfer (default 100: the data phase, "
                   "not the RDMA CM set-up of about 2 s under TCG, dominates the time)")
    p.add_argument("--trials", type=int, default=3, help="trials per cell and test (default 3)")
    p.add_argument("--timeout", type=int, default=60, help="per-transfer timeout in s (default 60)")
    p.add_argument("--k", type=int, default=16, help="CREM source packets per block (default 16)")
    p.add_argument("--m", type=int, default=2, help="CREM repairs per block (default 2)")
    p.add_argument("--hold", type=int, default=30000, help="CRF hold time in us (default 30000)")
    p.add_argument("--epsilon", type=epsilon_arg, default=None,
                   help="the adaptive policy's target block failure rate, as crem-ctl takes "
                        "it (e.g. 2.5e-3; default: the module's, the draft's 1e-4); every "
                        "CREM cell gets it, only adaptive uses it"),
    p.add_argument("--workloads", type=workload_list, default=DEFAULT_WORKLOADS,
                   help="comma-separated workloads every cell runs, each trial: "
                        + "; ".join(f"{w}: {', '.join(t)}" for w, t in WORKLOADS.items())
                        + f" (default {DEFAULT_WORKLOADS})")
    p.add_argument("--tests", type=test_list, default=None,
                   help="comma-separated transfers instead of --workloads: any vm/topo.sh "
                        "--tests takes (write_bw, write_bw_qN, rping, rping_bulk, connect, "
                        "fio_RW_BS_qdN such as fio_randread_4k_qd32)")
    p.add_argument("--fio-mib", type=fio_mib, default=32, metavar=f"1..{FIO_MAX_MIB}",
                   help="MiB each sequential fio test moves, at most the target's RAM disk "
                        f"({FIO_MAX_MIB}; default 32)")
    p.add_argument("--fio-rand-ios", type=int, default=1024,
                   help="I/Os each random fio test makes (default 1024)")
    p.add_argument("--modes", default=",".join(MODES),
                   help="comma-separated modes for the lossy cells (default "
                        "off,fixed,adaptive,sr,both; host: crem.ko on the rxe hosts, "
                        "fixed k/m, instead of the gateways); "
                        "the loss-free off reference always runs")
    p.add_argument("--module", default=os.path.join(TOP, "crem.ko"),
                   help="crem.ko for the gateways (default: the repo's, built by make module)")
    p.add_argument("--ctl", default=os.path.join(target, "release", "crem-ctl"),
                   help="crem-ctl (default: target/release/crem-ctl)")
    p.add_argument("--results-dir", default=os.path.join(TOP, "results"),
                   help="where demo-<UTC timestamp>.json goes (default: the repo's results/)")
    p.add_argument("--resume", metavar="PARTIAL", default=None,
                   help="go on with the run whose cells done so far are in PARTIAL (the "
                        "demo-<UTC timestamp>.partial.json every run writes after each "
                        "cell), with the binaries it kept: the same options are "
                        "required, the cells it holds are not run again, and the "
                        "results JSON covers all")
    return p


def main():
    p = make_parser()
    args = p.parse_args()

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in ALL_MODES]
    if bad or not modes:
        p.error(f"--modes: unknown {','.join(bad) or '(empty)'}; "
                f"choose from {','.join(ALL_MODES)}")
    if args.trials < 1:
        p.error("--trials must be >= 1")
    if args.reporter != "off" and not args.bottleneck:
        p.error("--reporter core needs --bottleneck (the reporter is its core router)")
    cells = sweep(args.rtt, args.loss, modes)
    log(f"{len(cells)} cells: " + ", ".join(f"{m}@{x:g}%" + (f"/{r}ms" if len(args.rtt) > 1 else "")
                                            for m, x, r in cells))
    prm = params(args, modes)
    os.makedirs(args.results_dir, exist_ok=True)
    partial = args.resume
    if partial:
        # The interrupted run's own binaries (kept beside its partial file),
        # whatever the tree holds now: every cell of a grid runs one build.
        try:
            saved = load_partial(partial, prm)
        except (OSError, ValueError, KeyError) as e:
            p.error(f"--resume: {e}")
        runs, bins, hashes, commit = (saved["runs"], saved["bins"], saved["sha256"],
                                      saved["git_commit"])
        log(f"resuming {partial} (binaries of {commit or 'an unknown commit'}): "
            f"{len(cell_times(runs).keys() & set(cells))} of {len(cells)} cells done "
            f"({duration(sum(cell_times(runs).values()))} of boots)")
    else:
        runs, bins, hashes, commit = [], {}, {}, git_commit()
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        partial = os.path.join(args.results_dir, f"demo-{stamp}.partial.json")
        if any(m != "off" for m in modes):
            for key, path, how in (("module", args.module, "make module"),
                                   ("ctl", args.ctl, "cargo build -p crem-ctl --release")):
                if not os.path.isfile(path):
                    p.error(f"no {key} at {path}: run '{how}' (make demo does)")
            keep = kept_bins(partial)
            os.makedirs(keep, exist_ok=True)
            for key, path in (("module", args.module), ("ctl", args.ctl)):
                bins[key], hashes[key] = snapshot(path, keep)
    log(f"after each cell: {partial} (interrupted? the same command with --resume {partial})")
    done = cell_times(runs)
    todo = [c for c in cells if c not in done]
    t0 = time.monotonic()
    for i, cell in enumerate(todo, 1):
        runs += run_cell(args, bins, cell, progress(i, len(todo), time.monotonic() - t0))
        save_partial(partial, {"params": prm, "sha256": hashes, "bins": bins,
                               "git_commit": commit, "runs": runs})
    log(f"{len(todo)} cells in {duration(time.monotonic() - t0)}"
        + (f"; the grid's boots: {duration(sum(cell_times(runs).values()))}" if args.resume
           else ""))

    finish(runs, tests(args))
    print_table(args, runs)

    doc = document(args, modes, hashes, runs, commit)
    path = os.path.join(args.results_dir, f"demo-{doc['created_utc']}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    print(f"\nwritten: {path}")
    # All of it is in the results JSON now.
    os.remove(partial)
    shutil.rmtree(kept_bins(partial), ignore_errors=True)
    draw(doc, path)
    failed = sorted({(r["mode"], r["loss_pct"], r["rtt_ms"], r["vm_rc"]) for r in runs
                     if r["vm_rc"] != 0})
    for mode, loss, rtt, rc in failed:
        print(f"FAILED: a VM of cell {cell_name(mode, loss, rtt)} exited {rc}; see its logs",
              file=sys.stderr)
    unread = sorted({(r["mode"], r["loss_pct"], r["rtt_ms"], r["reader_error"]) for r in runs
                     if r.get("reader_error")})
    for mode, loss, rtt, err in unread:
        print(f"FAILED: cell {cell_name(mode, loss, rtt)}: {err}", file=sys.stderr)
    return 1 if failed or unread else 0


def params(args, modes):
    """What a run was asked to do: the results JSON's "params", and what a
    resumed run must match."""
    return {"rtt_ms": args.rtt, "loss_pct": args.loss, "rate_mbit": args.rate,
            "bottleneck": args.bottleneck, "reporter": args.reporter,
            "size": args.size, "iters": args.iters, "trials": args.trials,
            "timeout_s": args.timeout, "k": args.k, "m": args.m, "hold_us": args.hold,
            "epsilon": args.epsilon,
            "modes": modes, "tests": tests(args), "fio_mib": args.fio_mib,
            "fio_rand_ios": args.fio_rand_ios}


PARTIAL_FORMAT = "crem-demo-partial/1"


def save_partial(path, state):
    """STATE (params, sha256 and paths of the binaries, git_commit, and the
    runs of the cells done so far, each with its cell_seconds), so that
    --resume PATH can go on after an interruption: written after every
    cell, through a rename (a stop mid-write leaves the previous one)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"format": PARTIAL_FORMAT, **state}, f, indent=1)
    os.replace(tmp, path)


def load_partial(path, prm):
    """The state a partial file saved, if PRM (this invocation's params)
    may go on from it and its binaries are still there, unchanged;
    ValueError saying what differs."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("format") != PARTIAL_FORMAT:
        raise ValueError(f"{path} is not a partial demo run ({PARTIAL_FORMAT})")
    # JSON turns tuples into lists and keeps numbers: compare through it.
    want = json.loads(json.dumps(prm))
    diff = sorted(k for k in set(want) | set(doc["params"])
                  if want.get(k) != doc["params"].get(k))
    if diff:
        raise ValueError(f"{path} was run with other settings ({', '.join(diff)}): "
                         f"give the same options, or start over without --resume")
    for key, bin_path in doc["bins"].items():
        if not os.path.isfile(bin_path) or sha256_of(bin_path) != doc["sha256"].get(key):
            raise ValueError(f"{path}: its {key} {bin_path} is gone or changed: "
                             f"start over without --resume")
    return doc


def cell_times(runs):
    """Seconds each cell (mode, loss, rtt) of RUNS took to boot (its runs
    all carry it); its keys are the cells RUNS hold."""
    return {(r["mode"], float(r["loss_pct"]), int(r["rtt_ms"])): r.get("cell_seconds", 0)
            for r in runs}


def kept_bins(partial):
    """Where a run whose partial file is PARTIAL keeps its binaries."""
    return partial[:-len(".partial.json")] + ".bin"


def git_commit():
    """HEAD of the tree the binaries were built from (None outside git)."""
    try:
        return subprocess.run(["git", "-C", TOP, "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or None
    except OSError:
        return None


def document(args, modes, hashes, runs, commit=None):
    """The results JSON's content (vm/plot.py draws it, through vm/results.py);
    COMMIT: the binaries' (default: HEAD now)."""
    commit = commit or git_commit()
    ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return {
        "created_utc": ts, "git_commit": commit, "emulation": "QEMU TCG",
        "params": params(args, modes),
        "sha256": hashes,
        "grid_seconds": round(sum(cell_times(runs).values()), 1),
        "notes": {"medians": "goodput_mbps and completion_s are medians over completed trials",
                  "sweep": "params rtt_ms and loss_pct are the lists swept; each run has its "
                           "own; goodput_vs_lossfree is against off @ 0 % of the same RTT",
                  "counters_scope": "cell: CREM counters are the summed totals of both "
                                    "gateways for the whole boot, shared by its write_bw and "
                                    "rping rows; null without CREM",
                  "lost_packets": "packets netem dropped on the WAN, both directions, per boot, "
                                  "including CREM's repair/control packets",
                  "connections": "not_completed = never_connected (the RDMA CM connection "
                                 "was never set up, after up to 3 attempts) + "
                                 "failed_after_connecting (data had begun to flow; never "
                                 "retried); connect_retries: attempts beyond the first",
                  "rxe": "rxe's hw_counters of both hosts (sysfs), summed over the cell's "
                         "trials of the test; rxe_gbn = out_of_seq_request + rcvd_seq_err "
                         "(gaps: go-back-N), rxe_timeouts = completer_retry_err",
                  "window_mbps": "the goodput rxe's window allows the test's queue pairs: "
                                 "qps x 128 packets x RDMA MTU per RTT",
                  "fio": "iops, p50_us, p99_us (completion latency): fio's, medians over "
                         "completed trials; goodput is fio's bandwidth in the test's "
                         "direction; verified: crc32c of every 4 KiB block; "
                         "nvme_recoveries: host a's NVMe controller error recoveries "
                         "during the test's transfers",
                  "host_udp_drops": "datagrams the host's sockets dropped on the emulated "
                                    "links during the boot (losses netem did not make)",
                  "kernel_reports": "per VM (a, b, wan), the lines of the cell's boot that "
                                    "hold a kernel report (a WARNING, BUG, KASAN, lockdep or "
                                    "kmemleak finding; vm/lib.sh KERNEL_REPORT_RE): a cell "
                                    "with any is not to be trusted; {} when none",
                  "bottleneck": "params bottleneck R:LIMIT_KB[:ecn]: a core router's tbf "
                                "toward gwb (null: none); per run bottleneck_drops and "
                                "bottleneck_marks are its qdisc's drops and CE marks over "
                                "the boot, reports_sent the Path Reporter's (core) PATH_REPORTs; "
                                "reporter is core only in CREM gateway cells",
                  "wan_cpu_us_per_fwd_packet": "the WAN VM's busy CPU per RoCEv2 packet "
                                               "the gateways forwarded, per boot (TCG: "
                                               "compare cells, not absolute values)",
                  "wan_cpu_us_per_rdma_packet": "the WAN VM's busy CPU per RDMA packet the "
                                                "hosts' rxe sent (sent_pkts of a and b), per "
                                                "boot, in every mode, including the VM's "
                                                "background work while it waits (compare "
                                                "cells of like length)",
                  "grid_seconds": "the cells' boots summed (cell_seconds of each run: "
                                  "its cell's), over every invocation of a --resume'd "
                                  "run"},
        "runs": runs,
    }


def draw(doc, json_path):
    """The figure beside the JSON (same name, .png and .svg). The table and
    the JSON are the demo's job: no plotting problem may fail the run, so any
    is one line on stderr and the figure can be redrawn with vm/plot.py."""
    redo = f"redraw with: vm/plot.py {json_path}"
    try:
        files = plot.draw(doc, os.path.splitext(json_path)[0])
    except plot.NoMatplotlib as e:
        files = draw_with_debian_python(json_path)
        if files is None:
            log(f"figure skipped: {e}; then {redo}")
            return
    except Exception as e:  # noqa: BLE001  (see above: never fail the demo for a figure)
        log(f"figure skipped: drawing failed ({type(e).__name__}: {e}); {redo}")
        return
    print(f"figure: {', '.join(files)}")


DEBIAN_PYTHON = "/usr/bin/python3"


def draw_with_debian_python(json_path):
    """The python3 on PATH may not be Debian's (a pyenv one, as on the CI
    machines), and python3-matplotlib is Debian's: vm/plot.py under
    /usr/bin/python3 then. The files written, or None if that did not work."""
    if not os.path.exists(DEBIAN_PYTHON) or \
            os.path.realpath(sys.executable) == os.path.realpath(DEBIAN_PYTHON):
        return None
    r = subprocess.run([DEBIAN_PYTHON, os.path.join(HERE, "plot.py"), json_path],
                       capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else None


if __name__ == "__main__":
    sys.exit(main())
