#!/usr/bin/env python3
"""The one reader of a topo.sh results directory, for vm/demo.py (imported)
and vm/e2e.sh (this CLI): what the VMs of a run leave there, read one way;
and of the demo's own results JSON (demo_doc(), for vm/plot.py).

Files read (all optional; a missing one reads as "unknown"):
  results.txt           host a's RESULT lines ("RESULT test=... trial=...
                        completed=0|1 seconds= bytes= mbps= verified=0|1
                        connected=0|1 attempts=N [rc=N] qps=N window_mbps=W
                        rxe_a=NAME:DELTA,... rxe_b=..."; fio tests add
                        iops= p50_us= p99_us= verify_bytes= wall_s=
                        nvme_recoveries=)
  host-udp-drops        datagrams the host's sockets (the emulated links)
                        dropped during the run (topo.sh)
  wan.console.log       the WAN VM's console: netem's "gwa Sent ... (dropped N"
                        lines, and the module's "crem: netns exit: ..." lines
  a/b.console.log       the hosts' consoles (netns exit lines, host mode)
  stats.NAME.json       `crem-ctl -j stats` of a gateway (gwa, gwb, after.gwa)
                        or a host (a, b): {"stats": {..., "totals": {...}}};
                        objects nest (msgs-in-by-type, ...) and are summed
                        key by key, at any depth
  flows.NAME.json       `crem-ctl -j flow`: {"flow": [{..., "kind", "side",
                        "stats": {...}}]}
  cpu.wan               the WAN VM's busy jiffies before and after, and HZ
  a.pcap, wan.pcap      topo.sh --capture: RoCEv2 at host a, and what
                        crosses the WAN into gwb
  out.pcap              topo.sh --capture-out: RoCEv2 gwb sends toward B
                        (wan.pcap then too; wan/out.pcap.log: each capture's
                        limit and tcpdump's counts)
  core.tc.json          topo.sh --bottleneck: the core router's qdisc counts
  stats.core.json       topo.sh --reporter core: the reporter's counters
  cm.N.log              host a's RDMA CM events (tracepoint
                        rdma_cma:cm_event_handler) of transfer N, each attempt
                        after a "# transfer N (TEST) attempt A, rc R" line

CLI (for shell scripts; numbers print as 0 when their files are missing,
with a note on stderr; predicates answer by exit status):
  results.py gw DIR KEY            KEY summed over stats.gwa/gwb.json; KEY is a
                                   dotted path under "stats" (totals.restored,
                                   drop-msg-peer, totals.msgs-in-by-type.repair);
                                   an object prints as JSON
  results.py host DIR KEY          the same over the hosts' stats.a/b.json
  results.py stats DIR NAMES KEY   the same over stats.NAME.json, NAMES comma-
                                   separated (e.g. after.gwa)
  results.py counter DIR VM KEY    KEY= summed over VM.console.log's netns exit
                                   lines (VM: a, b, wan)
  results.py drops DIR             packets netem dropped, both directions ("?")
  results.py mbps DIR TEST         median goodput of TEST's completed transfers
  results.py not-slower DIR DIR0 TEST
                                   whether TEST's transfers in DIR are slower than
                                   in DIR0 beyond chance: one-sided exact
                                   Mann-Whitney U and p, as JSON
  results.py count DIR [F=V ...]   RESULT lines with every field F equal to V
  results.py has DIR F=V ...       exit 0 iff count > 0
  results.py all-done DIR          exit 0 iff some transfer ran and all completed
  results.py all-verified DIR      exit 0 iff every verifying transfer (rping,
                                   rping_bulk, connect, fio_*) verified
  results.py completed-verified DIR  exit 0 iff every completed verifying
                                   transfer verified
  results.py flows DIR [NAMES]      the flows of flows.NAME.json (NAMES comma-
                                   separated; the gateways by default), a
                                   JSON object per line
  results.py qp-flows DIR NAME MESSAGES SIZE SECS  the sender flows of NAME
                                   that carried a transfer's QPs (MESSAGES x
                                   SIZE octets each, in SECS s; a flow gone
                                   before the dump from its flow-down event):
                                   how many (gone: of them removed), the
                                   most packets one never coded, the most it
                                   passed unprotected (and released
                                   provisional: passed_max), goodput min /
                                   median / max, JSON
  results.py rxe DIR [HOST] [--but-last]  rxe's counters, summed over the
                                   transfers (HOST a or b; both by default;
                                   --but-last: all but the run's last, e.g.
                                   one cut by topo.sh --unload), JSON, with
                                   "gaps": the RXE_GAPS counters' sum
  results.py host-udp-drops DIR    datagrams the emulated links dropped ("?")
  results.py kernel-reports DIR    the kernel reports (lib.sh KERNEL_REPORT_RE:
                                   splats, KASAN, lockdep, kmemleak) in the
                                   VMs' console logs, by VM, JSON
  results.py restored-kind DIR KIND  restored by the gateways' CRF flows of KIND
                                   (requests, responses)
  results.py lost-sources DIR SRC DST  RoCEv2 source transmissions SRC -> DST
                                   in a.pcap and not in wan.pcap (topo.sh
                                   --capture): what the WAN truly lost ("?")
  results.py psn-conflicts DIR [PCAP]  PSNs a RoCEv2 flow carried twice with
                                   different headers (opcode, RETH) in
                                   DIR/PCAP (out.pcap: topo.sh
                                   --capture-out): a resend out of step with
                                   the original, with wan.sh's count of
                                   the capture (limit, dropped_by_kernel);
                                   JSON ("?" if unreadable)
  results.py naks DIR [PCAP]       the RC NAKs in DIR/PCAP (a.pcap by default;
                                   topo.sh --capture) by sender and code, and
                                   each fatal one with the request it answers
                                   and when a SEND with Invalidate last
                                   invalidated its rkey before; JSON ("?")
  results.py ack-overtakes DIR     the RDMA ACKs gwb passed on toward B while
                                   it held READ responses of the same QP with a
                                   lower PSN (wan.pcap and out.pcap: topo.sh
                                   --capture-out): how many, how many responses
                                   they overtook, the first five; JSON ("?")
  results.py recovery-latency DIR  per RoCEv2 flow and over all, the source
                                   packets lost before gwb, restored by its
                                   CRF or retransmitted by rxe, and their
                                   extra latency (median, p99) from wan.pcap
                                   and out.pcap (topo.sh --capture-out); also
                                   written to DIR/recovery-latency.json with
                                   the proactive-repair counters
  results.py fwd-cost DIR          us of WAN VM busy CPU per RoCEv2 packet the
                                   gateways forwarded ("?")
  results.py rdma-cost DIR         us of WAN VM busy CPU per RDMA packet the
                                   hosts' rxe sent, with or without crem.ko
                                   ("?")
  results.py connections DIR       "N transfers never connected, M failed after
                                   connecting, R connection retries"
  results.py connect-failures DIR  per test: connection attempts, how many
                                   failed, per 100, and the RDMA CM events
                                   that ended the failed ones (cm.N.log), JSON
  results.py bottleneck DIR        the core router's bottleneck drops and CE
                                   marks (core.tc.json), JSON ("?" without)
  results.py rows DIR              the RESULT lines as JSON, one per line
  results.py grid-md JSON          a demo results JSON as README's Markdown
                                   tables, per RTT: goodput against loss-free
                                   (medians; "(n/N)": transfers completed when
                                   not all; "-": none), rxe's gaps/timeouts
                                   (both hosts, all trials) and, for NVMe,
                                   the controller's error recoveries
  results.py pool JSON [JSON ...]  demo results JSONs pooled transfer by
                                   transfer (pool()): per test, RTT, loss and
                                   setting, goodput against each run's own
                                   loss-free reference (n, median, min, max),
                                   overhead, and the one-sided exact
                                   Mann-Whitney p of being slower than each
                                   fixed setting; a JSON object per line
Python 3 standard library only.
"""
import collections
import json
import math
import os
import re
import statistics
import struct
import sys

GATEWAYS = ("gwa", "gwb")
HOSTS = ("a", "b")
RPING_TESTS = ("rping", "rping_bulk", "connect")
# rxe's counters that mean RDMA's own recovery ran: a gap seen by a responder
# (out_of_seq_request) or a requester (rcvd_seq_err: go-back-N from there),
# and a retransmission timeout (completer_retry_err).
RXE_GAPS = ("out_of_seq_request", "rcvd_seq_err")
RXE_TIMEOUTS = ("completer_retry_err",)
RXE_RECOVERY = RXE_GAPS + RXE_TIMEOUTS


def verifies(test):
    """TEST checks its payload end to end: rping -V, and fio's crc32c verify."""
    return test in RPING_TESTS or test.startswith("fio_")


# ---- RESULT lines ----------------------------------------------------------

def parse_result_line(line):
    """The fields of one "RESULT k=v ..." line as a dict of strings, or None."""
    if not line.startswith("RESULT "):
        return None
    return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


def rows(d):
    """Every RESULT line of DIR/results.txt, in order ([] without the file)."""
    try:
        with open(os.path.join(d, "results.txt"), errors="replace") as f:
            return [r for r in map(parse_result_line, f) if r is not None]
    except OSError:
        return []


def completed(r):
    return r.get("completed") == "1"


def match(rs, **fields):
    """The rows whose fields equal every given value (as strings)."""
    return [r for r in rs if all(r.get(k) == str(v) for k, v in fields.items())]


def median(xs, nd=3):
    return round(statistics.median(xs), nd) if xs else None


def goodputs(rs, test):
    """The goodputs (Mbit/s) of TEST's completed transfers."""
    return [float(r["mbps"]) for r in rs if r.get("test") == test and completed(r)]


def mbps(rs, test):
    """Median goodput (Mbit/s) of the completed transfers of TEST, 0.0 if none."""
    v = goodputs(rs, test)
    return median(v) if v else 0.0


def not_slower(with_rs, without_rs, test):
    """Whether TEST's completed transfers in WITH_RS are slower than those
    in WITHOUT_RS beyond chance: the one-sided exact Mann-Whitney test of
    their goodputs ([`mann_whitney_lower`]). {"u", "pairs", "p", "with":
    [...], "without": [...]}; p None without transfers on either side."""
    a, b = sorted(goodputs(with_rs, test)), sorted(goodputs(without_rs, test))
    out = {"u": None, "pairs": len(a) * len(b), "p": None, "with": a, "without": b}
    if not a or not b:
        return out
    u, p = mann_whitney_lower(a, b)
    out.update({"u": u, "p": round(p, 4)})
    return out


def mann_whitney_lower(a, b):
    """The one-sided exact Mann-Whitney test that the values A are lower
    than B: U counts the pairs (a, b) with a > b (a tie counts half); p is
    the chance of a U this small or smaller if both came from one
    distribution (every split of the pooled values equally likely, ties
    kept). (u, p); p None if either side is empty.

    Counted, not enumerated: U = W - n(n+1)/2 with W the sum of A's
    mid-ranks, and the number of splits giving each sum of (doubled, so
    integer) mid-ranks is built one pooled value at a time, so twelve
    transfers a side take a moment where listing the 2.7 million splits
    would not."""
    n = len(a)
    if not a or not b:
        return None, None
    pooled = sorted(a + b)
    mid2 = {}
    i = 0
    while i < len(pooled):
        j = i
        while j < len(pooled) and pooled[j] == pooled[i]:
            j += 1
        mid2[pooled[i]] = (i + 1) + j  # twice the mean of ranks i+1..j
        i = j
    w2 = sum(mid2[x] for x in a)
    u = (w2 - n * (n + 1)) / 2
    ways = {(0, 0): 1}  # (values of A so far, their doubled rank sum): splits
    for x in pooled:
        step = dict(ways)
        for (k, s), c in ways.items():
            if k < n:
                key = (k + 1, s + mid2[x])
                step[key] = step.get(key, 0) + c
        ways = step
    le = sum(c for (k, s), c in ways.items() if k == n and s <= w2)
    return u, le / math.comb(len(pooled), n)


def lossfree_refs(runs):
    """The loss-free reference of a demo's cells (RUNS, its "runs"): the
    goodput of off @ 0 % by (RTT, test)."""
    return {(r.get("rtt_ms"), r.get("test")): r.get("goodput_mbps") for r in runs
            if r.get("mode") == "off" and r.get("loss_pct") == 0}


def setting(mode, params):
    """A demo cell's setting as pool() groups it: fixed and adaptive with
    the run's k and m or ε (PARAMS, the demo's "params"), else the mode."""
    if mode == "fixed":
        return f"fixed k{params.get('k')} m{params.get('m')}"
    if mode == "adaptive":
        eps = params.get("epsilon")
        return f"adaptive k{params.get('k')} eps {'default' if eps is None else eps}"
    return mode


def pool(docs):
    """Demo results (vm/demo.py's JSON, as dicts) pooled transfer by transfer:
    each completed transfer's goodput against its own run's loss-free
    reference (off @ 0 % of the same test and RTT), grouped by test, RTT,
    loss and setting ("fixed k16 m2", "adaptive k16 eps default", "sr", ...:
    runs with other k, m or ε stay apart). One dict per group, sorted: n,
    median, min, max, the mean repair overhead of its cells, the runs it
    came from, and "p_slower": for each fixed setting of the same test, RTT
    and loss, the one-sided exact Mann-Whitney p that this group is slower
    ([`mann_whitney_lower`]), so that adaptive-against-fixed over several
    runs is one command (README, "Issue 13: a looser adaptive target")."""
    groups = {}
    for doc in docs:
        runs = doc.get("runs", [])
        ref = lossfree_refs(runs)
        for r in runs:
            base = ref.get((r.get("rtt_ms"), r.get("test")))
            if r.get("mode") == "off" and r.get("loss_pct") == 0 or not base:
                continue
            label = setting(r.get("mode"), doc.get("params", {}))
            key = (r.get("test"), r.get("rtt_ms"), r.get("loss_pct"), label)
            g = groups.setdefault(key, {"values": [], "overheads": [], "runs": []})
            g["values"] += [t["mbps"] / base for t in r.get("trial_results", [])
                            if t.get("completed") and _is_num(t.get("mbps"))]
            if _is_num(r.get("repair_overhead")):
                g["overheads"].append(r["repair_overhead"])
            g["runs"].append(doc.get("created_utc"))
    out = []
    for (test, rtt, loss, label), g in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        v = g["values"]
        row = {"test": test, "rtt_ms": rtt, "loss_pct": loss, "setting": label, "n": len(v),
               "median": round(statistics.median(v), 3) if v else None,
               "min": round(min(v), 3) if v else None, "max": round(max(v), 3) if v else None,
               "overhead": round(statistics.mean(g["overheads"]), 3) if g["overheads"] else None,
               "runs": g["runs"], "p_slower": {}}
        for (t2, r2, l2, other), g2 in groups.items():
            if (t2, r2, l2) == (test, rtt, loss) and other != label and other.startswith("fixed"):
                p = mann_whitney_lower(v, g2["values"])[1]
                row["p_slower"][other] = None if p is None else round(p, 3)
        out.append(row)
    return out


def _cell_order(runs):
    """A demo's cells as (mode, loss) in the order its tables show them:
    modes as they first appear, losses ascending."""
    modes = list(dict.fromkeys(r.get("mode") for r in runs))
    losses = sorted({r.get("loss_pct") for r in runs})
    have = {(r.get("mode"), r.get("loss_pct")) for r in runs}
    return [(m, x) for m in modes for x in losses if (m, x) in have]


def _done(r):
    """" (n/N)" when not every transfer of the row completed, else ""."""
    c, n = r.get("completed"), r.get("trials")
    return "" if c == n else f" ({c}/{n})"


def grid_markdown(doc):
    """A demo results JSON (DOC) as the Markdown tables README shows of its
    grid, per RTT: goodput against the loss-free run of the same test and
    RTT, rxe's gaps/retransmission timeouts, and NVMe's controller
    recoveries (fio tests only). A list of lines."""
    runs = doc.get("runs", [])
    ref = lossfree_refs(runs)
    cells = _cell_order(runs)
    name = lambda m, x: f"{m} {x:g} %"  # noqa: E731
    out = []

    def table(title, cols, rows):
        out.extend(["", title, "", "| test | " + " | ".join(cols) + " |",
                    "|---|" + "---:|" * len(cols)] + ["| " + " | ".join(r) + " |" for r in rows])

    for rtt in sorted({r.get("rtt_ms") for r in runs}):
        at = {(r.get("mode"), r.get("loss_pct"), r.get("test")): r
              for r in runs if r.get("rtt_ms") == rtt}
        tests = list(dict.fromkeys(t for (_, _, t) in at))
        lossy = [c for c in cells if c != ("off", 0)]

        def ratio(r, t):
            if r is None:
                return ""
            if not r.get("completed"):
                return "-" + _done(r)
            base = ref.get((rtt, t))
            v = r.get("goodput_mbps")
            return ("-" if not base or not _is_num(v) else f"{v / base:.2f}") + _done(r)

        rows = []
        for t in tests:
            off0 = at.get(("off", 0, t))
            first = "-" if off0 is None else f"{off0.get('goodput_mbps', 0):.1f} " \
                f"({off0.get('completed')}/{off0.get('trials')})"
            rows.append([t, first] + [ratio(at.get((m, x, t)), t) for m, x in lossy])
        table(f"**RTT {rtt} ms**: goodput against loss-free", ["loss-free Mbit/s"]
              + [name(m, x) for m, x in lossy], rows)
        cell = lambda r: "" if r is None else f"{dash(r.get('rxe_gbn'))}/{dash(r.get('rxe_timeouts'))}"  # noqa: E731,E501
        table(f"**RTT {rtt} ms**: rxe's gaps/timeouts", [name(m, x) for m, x in cells],
              [[t] + [cell(at.get((m, x, t))) for m, x in cells] for t in tests])
        fio = [t for t in tests if any(at.get((m, x, t), {}).get("nvme_recoveries") is not None
                                       for m, x in cells)]
        if fio:
            rec = lambda r: "" if r is None else dash(r.get("nvme_recoveries"))  # noqa: E731
            table(f"**RTT {rtt} ms**: NVMe controller recoveries",
                  [name(m, x) for m, x in cells],
                  [[t] + [rec(at.get((m, x, t))) for m, x in cells] for t in fio])
    return out[1:]


def all_done(rs):
    """Some transfer ran, and every one completed."""
    return bool(rs) and all(completed(r) for r in rs)


def all_verified(rs):
    """Every rping-family transfer (completed or not) verified its payload."""
    return all(r.get("verified") == "1" for r in rs if verifies(r.get("test", "")))


def completed_verified(rs):
    """Every rping-family transfer that completed verified its payload."""
    return all(r.get("verified") == "1" for r in rs
               if verifies(r.get("test", "")) and completed(r))


def rxe_deltas(r, host):
    """rxe's counters over one transfer on HOST (a or b) from a RESULT row's
    rxe_a/rxe_b field ("name:delta,..."), as a dict; {} when not recorded."""
    out = {}
    for kv in r.get(f"rxe_{host}", "").split(","):
        name, _, v = kv.partition(":")
        if name and v.lstrip("-").isdigit():
            out[name] = int(v)
    return out


def rxe_gaps(rxe):
    """The gaps rxe saw (RXE_GAPS summed) in counters RXE (rxe_sum's)."""
    return sum(rxe.get(n, 0) for n in RXE_GAPS)


def rxe_sum(rs, hosts=HOSTS):
    """rxe's counters summed over the rows RS and HOSTS; None when no row
    recorded them (runs before they were read)."""
    tot, seen = collections.Counter(), False
    for r in rs:
        for h in hosts:
            d = rxe_deltas(r, h)
            seen |= bool(d)
            tot.update(d)
    return dict(tot) if seen else None


def _field(x, key):
    """Row X's field KEY as a float, None when absent or not a number."""
    try:
        return float(x[key])
    except (KeyError, ValueError):
        return None


def connections(rs):
    """How the transfers that did not complete failed, and the connection
    retries: {"never_connected": N, "failed_after_connecting": M,
    "connect_unknown": U (RESULT lines without connected=, older runs),
    "connect_retries": R (attempts beyond the first, over all transfers)}."""
    failed = [r for r in rs if not completed(r)]
    return {
        "never_connected": sum(1 for r in failed if r.get("connected") == "0"),
        "failed_after_connecting": sum(1 for r in failed if r.get("connected") == "1"),
        "connect_unknown": sum(1 for r in failed if r.get("connected") not in ("0", "1")),
        "connect_retries": sum(max(int(r.get("attempts", "1")) - 1, 0) for r in rs),
        # Completed, then its client failed in teardown: a write_bw ended
        # 10 s after its report, an rping that lost its own exit race
        # (host.sh).
        "teardown_failed": sum(1 for r in rs if r.get("teardown") == "failed"),
    }


def connections_text(rs):
    c = connections(rs)
    s = (f"{c['never_connected']} transfers never connected, "
         f"{c['failed_after_connecting']} failed after connecting, "
         f"{c['connect_retries']} connection retries")
    if c["teardown_failed"]:
        s += f", {c['teardown_failed']} completed, then failed in teardown"
    if c["connect_unknown"]:
        s += f", {c['connect_unknown']} failed without a connected= field"
    return s


# An RDMA CM event that ends a connection attempt without a connection,
# as the tracepoint prints it: "REJECTED (8/28)" (event number/status).
_CM_FAIL = re.compile(r" (REJECTED|UNREACHABLE|ADDR_ERROR|ROUTE_ERROR|CONNECT_ERROR|"
                      r"DEVICE_REMOVAL|ADDR_CHANGE|TIMEWAIT_EXIT) \((\d+)/(-?\d+)\)")
_CM_ATTEMPT = re.compile(r"^# transfer (\d+) \((\S+)\) attempt (\d+), rc (\d+)")


def cm_attempts(d):
    """Every connection attempt of cm.N.log: (transfer, test, attempt, rc,
    ["EVENT/status", ...] of its failure events)."""
    out = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        m = re.fullmatch(r"cm\.(\d+)\.log", name)
        if not m:
            continue
        cur = None
        for line in _read(os.path.join(d, name)).splitlines():
            a = _CM_ATTEMPT.match(line)
            if a:
                cur = (int(a[1]), a[2], int(a[3]), int(a[4]), [])
                out.append(cur)
            elif cur is not None:
                cur[4].extend(f"{e[0]}/{e[2]}" for e in _CM_FAIL.findall(line))
    return out


def connect_failures(rs, d):
    """Per test: attempts (every try to connect, retries included), failed
    (attempts that never set a connection up: each retry is one, and a
    transfer that ended never connected), per_100, and by_event (the CM
    failure events of those attempts, "REJECTED/28": count)."""
    cm = cm_attempts(d)
    out = {}
    for test in sorted({r.get("test") for r in rs}):
        mine = [r for r in rs if r.get("test") == test]
        attempts = sum(int(r.get("attempts", "1")) for r in mine)
        failed = sum(int(r.get("attempts", "1")) - (1 if r.get("connected") != "0" else 0)
                     for r in mine)
        last = {}
        for n, t, a, _rc, _ev in cm:
            if t == test:
                last[n] = max(last.get(n, 0), a)
        by_event = {}
        for n, t, a, _rc, ev in cm:
            # Transfer N is the Nth RESULT line. An attempt failed if another
            # followed it, or if its transfer never connected.
            row = rs[n - 1] if 0 < n <= len(rs) else {}
            if t != test or (a == last[n] and row.get("connected") != "0"):
                continue
            for e in ev or ["no failure event"]:
                by_event[e] = by_event.get(e, 0) + 1
        out[test] = {"transfers": len(mine), "attempts": attempts, "failed": failed,
                     "per_100": round(100 * failed / attempts, 1) if attempts else 0.0,
                     "by_event": by_event}
    return out


def field_median(rs, key, nd):
    """The median of field KEY over the rows RS that have it, None if none."""
    return median([v for v in (_field(x, key) for x in rs) if v is not None], nd)


def field_sum(rs, key):
    """The sum of field KEY over the rows RS, None if no row has it."""
    vals = [v for v in (_field(x, key) for x in rs) if v is not None]
    return int(sum(vals)) if vals else None


def summarize(rs, test):
    """What the demo reports of TEST's transfers in one boot."""
    r = [x for x in rs if x.get("test") == test]
    done = [x for x in r if completed(x)]
    c = connections(r)
    rxe = rxe_sum(r)
    return {
        "runs": len(r),
        "completed": len(done),
        "goodput_mbps": mbps(r, test),
        "completion_s": median([float(x["seconds"]) for x in done]),
        "bytes": int(r[0]["bytes"]) if r and r[0].get("bytes", "").isdigit() else None,
        "verified": verifies(test) and bool(done)
                    and all(x.get("verified") == "1" for x in done),
        # fio's (medians over completed trials; None for other tests)
        "iops": field_median(done, "iops", 1),
        "p50_us": field_median(done, "p50_us", 0),
        "p99_us": field_median(done, "p99_us", 0),
        "qps": int(r[0]["qps"]) if r and r[0].get("qps", "").isdigit() else None,
        "window_mbps": _field(r[0], "window_mbps") if r else None,
        # the NVMe controller's error recoveries (QP in error, timeouts),
        # every trial; None for other tests and runs that did not count them
        "nvme_recoveries": field_sum(r, "nvme_recoveries"),
        # RDMA's own recovery on both hosts over every trial (run or not)
        "rxe": rxe,
        "rxe_gbn": None if rxe is None else rxe_gaps(rxe),
        "rxe_timeouts": None if rxe is None else sum(rxe.get(n, 0) for n in RXE_TIMEOUTS),
        "never_connected": c["never_connected"],
        "failed_after_connecting": c["failed_after_connecting"],
        "connect_retries": c["connect_retries"],
        "trial_results": [{"trial": int(x.get("trial", 0)), "completed": completed(x),
                           "seconds": float(x["seconds"]) if completed(x) else None,
                           "mbps": float(x.get("mbps", 0)),
                           "connected": {"1": True, "0": False}.get(x.get("connected")),
                           "attempts": int(x.get("attempts", 1)),
                           **{f"rxe_{h}": rxe_deltas(x, h) for h in HOSTS
                              if rxe_deltas(x, h)},
                           **({"rc": int(x["rc"])} if x.get("rc", "").isdigit() else {})}
                          for x in r],
    }


# ---- console logs ----------------------------------------------------------

def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


NETEM_RE = re.compile(r"gw[ab] Sent \d+ bytes \d+ pkt \(dropped (\d+)")


def _kernel_report_re():
    """lib.sh's KERNEL_REPORT_RE, the one pattern of a kernel report (a
    splat, KASAN, lockdep, kmemleak) for the shell's checks and this."""
    text = _read(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib.sh")) or ""
    m = re.search(r"^KERNEL_REPORT_RE='([^']*)'", text, re.M)
    if m is None:
        raise RuntimeError("vm/lib.sh has no KERNEL_REPORT_RE='...' line")
    return re.compile(m.group(1))


def kernel_reports(d):
    """The kernel reports in the VMs' console logs of run DIR: {VM: [the
    line of each]} for the VMs (a, b, wan) that have any."""
    pat = _kernel_report_re()
    out = {}
    for vm in ("a", "b", "wan"):
        text = _read(os.path.join(d, f"{vm}.console.log")) or ""
        hits = [line.strip() for line in text.splitlines() if pat.search(line)]
        if hits:
            out[vm] = hits
    return out


def host_udp_drops(d):
    """Datagrams the host's UDP sockets (the VMs' links) dropped during the
    run (topo.sh's host-udp-drops), None when unknown (older runs)."""
    text = _read(os.path.join(d, "host-udp-drops"))
    return int(text) if text and text.strip().isdigit() else None


def netem_drops(d):
    """Packets netem dropped on the WAN (both directions, the whole boot), from
    wan.sh's `tc -s qdisc` lines in wan.console.log; None when unknown."""
    text = _read(os.path.join(d, "wan.console.log"))
    if text is None:
        return None
    drops = NETEM_RE.findall(text)
    return sum(map(int, drops)) if drops else None


def netns_exit(d, vm):
    """The module's "crem: netns exit: k=N ..." lines of VM's console log (one
    per network namespace the module saw end), each as a dict of ints."""
    text = _read(os.path.join(d, f"{vm}.console.log")) or ""
    out = []
    for line in text.splitlines():
        i = line.find("crem: netns exit:")
        if i < 0:
            continue
        kv = {}
        for tok in line[i + len("crem: netns exit:"):].split():
            k, eq, v = tok.partition("=")
            if eq and v.isdigit():
                kv[k] = int(v)
        out.append(kv)
    return out


def counter(d, vm, key):
    """KEY summed over VM's netns exit lines (0 if none)."""
    return sum(kv.get(key, 0) for kv in netns_exit(d, vm))


# ---- packet captures (topo.sh --capture) -----------------------------------

ROCE_PORT = 4791
# BTH opcodes that are no CREM source in either direction: ACKNOWLEDGE and CNP.
NOT_SOURCES = (0x11, 0x81)


def pcap_udp(path):
    """(source, destination, UDP destination port, UDP payload) of every IPv4
    UDP packet in the pcap file PATH (Ethernet, Linux cooked or raw IP link
    type), or None if it cannot be read."""
    pkts = pcap_udp_ts(path)
    return None if pkts is None else [p[1:] for p in pkts]


def pcap_udp_ts(path):
    """pcap_udp's tuples with the capture time in seconds (a float) first:
    (time, source, destination, UDP destination port, UDP payload); the
    nanosecond pcap format's fraction read as such."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if len(data) < 24:
        return None
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    else:
        return None
    frac = 1e-9 if magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d") else 1e-6
    link = struct.unpack(e + "I", data[20:24])[0]
    out, off = [], 24
    while off + 16 <= len(data):
        sec, sub, incl = struct.unpack(e + "III", data[off:off + 12])
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if link == 1:  # Ethernet, VLAN tags skipped
            l3, et = 14, frame[12:14]
            while et == b"\x81\x00" and len(frame) >= l3 + 4:
                et, l3 = frame[l3 + 2:l3 + 4], l3 + 4
            if et != b"\x08\x00":
                continue
        elif link == 113:  # Linux cooked
            l3 = 16
            if frame[14:16] != b"\x08\x00":
                continue
        elif link in (101, 228):  # raw IPv4
            l3 = 0
        else:
            return None
        ip = frame[l3:]
        if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != 17:
            continue
        ihl = (ip[0] & 15) * 4
        udp = ip[ihl:]
        if len(udp) < 8:
            continue
        out.append((sec + sub * frac, ".".join(map(str, ip[12:16])),
                    ".".join(map(str, ip[16:20])), struct.unpack(">H", udp[2:4])[0], udp[8:]))
    return out


def roce_sources(path, src, dst):
    """The RoCEv2 source packets (anything but ACKs and CNPs) from SRC to DST
    in a capture, as a multiset (collections.Counter) of (opcode, dest QP,
    PSN): a packet sent twice counts twice. None if unreadable."""
    pkts = pcap_udp(path)
    if pkts is None:
        return None
    c = collections.Counter()
    for s, d, port, bth in pkts:
        if (s, d, port) == (src, dst, ROCE_PORT) and len(bth) >= 12 and bth[0] not in NOT_SOURCES:
            c[(bth[0], int.from_bytes(bth[5:8], "big"), int.from_bytes(bth[9:12], "big"))] += 1
    return c


def lost_sources(d, src, dst):
    """Source transmissions from SRC (host a) to DST that host a's capture
    (a.pcap, as they left) has and the WAN capture (wan.pcap, into gwb after
    netem's losses) has not: the source packets the WAN truly lost on the
    way a -> b, counted apart from anything CREM says (the other direction
    has no capture before its losses). None without both captures."""
    sent = roce_sources(os.path.join(d, "a.pcap"), src, dst)
    arrived = roce_sources(os.path.join(d, "wan.pcap"), src, dst)
    if sent is None or arrived is None:
        return None
    return sum((sent - arrived).values())


# RoCEv2 request opcodes with a RETH (the VA a message starts at): RC RDMA
# WRITE First, Only, Only with Immediate, RDMA READ Request.
RETH_OPCODES = (0x06, 0x0A, 0x0B, 0x0C)


def psn_conflicts(path):
    """The PSNs a capture saw carried twice with different headers on one
    RoCEv2 flow (source, destination, dest QP): another opcode, or another
    RETH. A go-back-N resend repeats each PSN's packet exactly, so any such
    PSN is a resend out of step with the original (rxe's retry past an
    acknowledged WQE, vm/kernel-patches/0001: a zero-length packet at the
    next WQE's first PSN and every later one a PSN late). Only where the
    headers differ does it show: a message's boundaries (a Middle shifted
    onto a Middle looks the same), so a shift of a whole message or more
    shows at least once per message. JSON-able dict:
    packets (source packets read), flows, conflicts (PSNs), first (up to 5
    of them: flow, PSN, the two opcodes); None if unreadable."""
    pkts = pcap_udp(path)
    if pkts is None:
        return None
    seen, bad, n = {}, {}, 0
    for s, d, port, pl in pkts:
        b = _bth(pl) if port == ROCE_PORT else None
        if b is None or b[0] in NOT_SOURCES:
            continue
        n += 1
        op, qp, psn = b
        hdr = (op, bytes(pl[12:28]) if op in RETH_OPCODES else b"")
        old = seen.setdefault((s, d, qp, psn), hdr)
        if old != hdr and (s, d, qp, psn) not in bad:
            bad[(s, d, qp, psn)] = {"flow": f"{s}>{d} qp {qp:#x}", "psn": psn,
                                    "opcodes": [f"{old[0]:#04x}", f"{op:#04x}"]}
    return {"packets": n, "flows": len({k[:3] for k in seen}), "conflicts": len(bad),
            "first": list(bad.values())[:5]}


# RoCEv2 opcodes that carry an AETH after the BTH (RC READ Response First,
# Last, Only; ACKNOWLEDGE; ATOMIC ACKNOWLEDGE), and the ones whose IETH names
# the rkey a SEND invalidates (SEND Last / Only with Invalidate).
AETH_OPCODES = (0x0D, 0x0F, 0x10, 0x11, 0x12)
IETH_OPCODES = (0x16, 0x17)
# An AETH's NAK codes (syndrome 011 in the top three bits, IBA 9.7.5.2.2).
# All but the sequence error are fatal: the responder's QP goes to the error
# state (class A/C) and, for RDMA READ and WRITE, with no receive WQE to
# complete, its owner sees nothing but flushed work requests.
NAK_CODES = {0: "psn-seq-err", 1: "invalid-request", 2: "remote-access-err",
             3: "remote-op-err", 4: "invalid-rd-request"}


def rc_naks(path):
    """The NAKs in a RoCEv2 capture (topo.sh --capture: a host's a.pcap or
    b.pcap sees both directions), by who sent them and their code, and
    each fatal one (every code but the PSN sequence error) with the request
    it answers: the latest packet of the other direction with the NAK's PSN
    before it (opcode, when it was first and last seen, its RETH rkey), and
    when a SEND with Invalidate last invalidated that rkey before (a
    replayed RDMA READ that meets an invalidated rkey kills the responder's
    QP: rxe duplicate_request() then read_reply()'s rxe_recheck_mr()).
    JSON-able dict: packets, naks {"SRC>DST CODE": n}, fatal [...]; None if
    unreadable."""
    pkts = pcap_udp_ts(path)
    if pkts is None:
        return None
    naks, fatal, n = collections.Counter(), [], 0
    # (src, dst, PSN) -> (opcode, rkey, first seen, last seen) of requests;
    # (src, dst, rkey) -> when a SEND with Invalidate last named the rkey.
    requests, invalidated = {}, {}
    for t, s, d, port, pl in pkts:
        b = _bth(pl) if port == ROCE_PORT else None
        if b is None:
            continue
        n += 1
        op, _, psn = b
        if op in AETH_OPCODES and len(pl) >= 13 and pl[12] >> 5 == 3:
            code = NAK_CODES.get(pl[12] & 0x1f, f"nak-{pl[12] & 0x1f}")
            naks[f"{s}>{d} {code}"] += 1
            if pl[12] & 0x1f:
                req = requests.get((d, s, psn))
                rkey = req and req[1]
                inv = invalidated.get((d, s, rkey)) if rkey is not None else None
                fatal.append({
                    "time": round(t, 6), "by": s, "psn": psn, "code": code,
                    "request": req and {"opcode": f"{req[0]:#04x}", "first_seen": round(req[2], 6),
                                        "last_seen": round(req[3], 6),
                                        "rkey": None if rkey is None else f"{rkey:#x}"},
                    "rkey_invalidated_at": None if inv is None else round(inv, 6)})
            continue
        if op in NOT_SOURCES:
            continue
        rkey = int.from_bytes(pl[20:24], "big") if op in RETH_OPCODES and len(pl) >= 24 else None
        seen = requests.get((s, d, psn))
        requests[(s, d, psn)] = (op, rkey, seen[2] if seen else t, t)
        if op in IETH_OPCODES and len(pl) >= 16:
            # The invalidating SEND goes requester -> responder, the same
            # way as the READ request whose rkey it names.
            invalidated[(s, d, int.from_bytes(pl[12:16], "big"))] = t
    return {"packets": n, "naks": dict(sorted(naks.items())), "fatal": fatal}


# ---- recovery latency (topo.sh --capture-out: wan.pcap and out.pcap) -------

PSN_SPACE = 1 << 24
CREM_PORT = 7470
# CREM's common header: octet 0 is version 1 << 4 | type.
CREM_HELLO, CREM_HELLO_ACK, CREM_REQUEST = 0x12, 0x13, 0x16
REQUEST_RANGES = 0x10  # REPAIR_REQUEST flag: the PSN-range form


class PsnUnwrap:
    """24-bit PSNs onto an unbounded line, each one the value nearest the
    previous one (a sequence that moves by less than 2^23 at a time, go-back-N
    steps back included, crosses 0xffffff -> 0 as one more step)."""

    def __init__(self, base):
        self.prev = base

    def __call__(self, psn):
        self.prev += (psn - self.prev + PSN_SPACE // 2) % PSN_SPACE - PSN_SPACE // 2
        return self.prev


def _bth(payload):
    """(opcode, dest QP, PSN) of a BTH, None when too short."""
    if len(payload) < 12:
        return None
    return payload[0], int.from_bytes(payload[5:8], "big"), int.from_bytes(payload[9:12], "big")


def _request_psns(msg):
    """The PSNs (24-bit) a REPAIR_REQUEST names: block form, Block Start PSN
    plus each position of the Lost Source Bitmap (a position is a PSN offset:
    crf.rs); range form, each Start PSN and the Count after it. [] when it
    does not parse."""
    if len(msg) < 8:
        return []
    flags, length = msg[1], int.from_bytes(msg[2:4], "big")
    msg = msg[:length]
    if flags & REQUEST_RANGES:
        n = int.from_bytes(msg[10:12], "big") if len(msg) >= 12 else 0
        out = []
        for i in range(n):
            e = msg[12 + 4 * i:16 + 4 * i]
            if len(e) == 4:
                start = int.from_bytes(e[:3], "big")
                out += [(start + j) % PSN_SPACE for j in range(e[3])]
        return out
    if len(msg) < 20:
        return []
    k, start = msg[10], int.from_bytes(msg[12:15], "big")
    bits = int.from_bytes(msg[20:20 + 4 * -(-k // 32)], "big")
    width = 32 * -(-k // 32)
    return [(start + j) % PSN_SPACE for j in range(k) if bits >> (width - 1 - j) & 1]


def _requests_by_flow(wan):
    """REPAIR_REQUESTs the CRFs behind the WAN capture sent, by flow (src,
    dst, dest QP): [(time, [PSN, ...])], every flow whose Flow ID is known
    present (a known flow without requests has []). A request names its
    flow by the Flow ID the CRF gave in its HELLO_ACK, whose Sender Nonce
    is the one of the CSF's HELLO that carries the flow's addresses and QP:
    both messages cross the same capture. Requests flows (Flow Kind 1)
    only."""
    hellos, ids, out = {}, {}, collections.defaultdict(list)
    for t, src, dst, port, msg in wan:
        if port != CREM_PORT or len(msg) < 8:
            continue
        if msg[0] == CREM_HELLO and len(msg) >= 40 and msg[8] == 1 and msg[9] == 4:
            flow = (".".join(map(str, msg[28:32])), ".".join(map(str, msg[32:36])),
                    int.from_bytes(msg[36:40], "big") & 0xffffff)
            hellos[(dst, msg[20:28])] = flow  # by the CRF's address and the nonce
        elif msg[0] == CREM_HELLO_ACK and len(msg) >= 28 and msg[8] == 1:
            flow = hellos.get((src, msg[20:28]))
            if flow is not None:  # a Flow ID may be given again: the latest holds
                ids[(src, int.from_bytes(msg[4:8], "big"))] = flow
                out.setdefault(flow, [])
        elif msg[0] == CREM_REQUEST:
            flow = ids.get((src, int.from_bytes(msg[4:8], "big")))
            if flow is not None:
                out[flow].append((t, _request_psns(msg)))
    return out


def percentile(xs, q):
    """The nearest-rank Q-th percentile of XS (no interpolation: a value
    that occurred), None when empty."""
    if not xs:
        return None
    xs = sorted(xs)
    return xs[max(0, -(-len(xs) * q // 100) - 1)]


def _latency(xs):
    """{"n", "min_ms", "median_ms", "p99_ms", "max_ms"} of latencies XS in
    seconds (a restoration can precede the next PSN's arrival: min < 0)."""
    ms = lambda v: None if v is None else round(v * 1e3, 3)  # noqa: E731
    return {"n": len(xs), "min_ms": ms(min(xs) if xs else None),
            "median_ms": ms(statistics.median(xs) if xs else None),
            "p99_ms": ms(percentile(xs, 99)), "max_ms": ms(max(xs) if xs else None)}


# RDMA READ response opcodes (RC): FIRST, MIDDLE, LAST, ONLY.
READ_RESPONSES = (0x0d, 0x0e, 0x0f, 0x10)
RC_ACKNOWLEDGE = 0x11


def ack_overtakes(d, span=1024):
    """From topo.sh --capture-out's two captures of gwb (wan.pcap: what
    reached it; out.pcap: what it sent toward B), the RDMA ACKs and NAKs
    gwb passed on while it held READ responses of the same QP with a lower
    PSN (within SPAN): responses it had received before the ACK and sent
    on only after it. Read responses and the ACKs of the same requester
    share its PSN space, so an ACK sent ahead of them is out of order, and
    an RDMA requester takes an ACK beyond a pending READ for the READ's
    responses lost (rxe: COMPST_ERROR_RETRY) and resends from there. None
    if a capture is missing; else {"acks", "overtaking", "responses"
    (held responses overtaken, summed over the ACKs), "first" (up to 5:
    dest QP, the ACK's PSN, the overtaken PSNs' range)}."""
    def rows(name):
        pkts = pcap_udp_ts(os.path.join(d, name))
        if pkts is None:
            return None
        out = []
        for t, _, _, port, p in pkts:
            b = _bth(p) if port == ROCE_PORT else None
            if b:
                out.append((t, *b))
        return out
    wan, out = rows("wan.pcap"), rows("out.pcap")
    if wan is None or out is None:
        return None
    arrived, sent = {}, {}
    for t, op, qp, psn in wan:
        if op in READ_RESPONSES:
            arrived.setdefault((qp, psn), t)
    for t, op, qp, psn in out:
        if op in READ_RESPONSES:
            sent.setdefault((qp, psn), t)
    doc = {"acks": 0, "overtaking": 0, "responses": 0, "first": []}
    for t, op, qp, psn in out:
        if op != RC_ACKNOWLEDGE:
            continue
        doc["acks"] += 1
        held = [q for q in ((psn - i) & 0xffffff for i in range(span, 0, -1))
                if arrived.get((qp, q), t) < t < sent.get((qp, q), t)]
        if held:
            doc["overtaking"] += 1
            doc["responses"] += len(held)
            if len(doc["first"]) < 5:
                doc["first"].append({"qp": qp, "psn": psn, "held": [held[0], held[-1]]})
    return doc

def recovery_latency(d):
    """The recovery latency of every source packet lost before gwb (topo.sh
    --capture-out: DIR/wan.pcap, what arrives on gwb's WAN interface wb,
    and DIR/out.pcap, what gwb sends toward B; one netns, one clock). Per
    RoCEv2 flow (source, destination, dest QP) of out.pcap, and over all:

      lost           PSNs gwb sent toward B that had not arrived on wb when
                     the first higher PSN of their flow did (the packet was
                     lost before wb; without a higher PSN there is no telling,
                     so a flow's last packets are not counted)
      restored       of those, the ones gwb sent toward B before any copy
                     reached wb: restored by the CRF (CREM injects past wb)
      retransmitted  the ones whose first departure followed a copy on wb:
                     rxe's retransmission (go-back-N or timeout)
      restored_also_retransmitted  restored, and a copy came on wb later
                     anyway (rxe's recovery ran regardless)
      restored_before_request  restored before the CRF sent any
                     REPAIR_REQUEST naming the PSN (REPAIR_REQUESTs leave
                     gwb through wb: wan.pcap has them); None when no
                     request could be matched to a flow (no HELLO/HELLO_ACK
                     in the capture)
      extra          t(first departure toward B) - t(first higher PSN of
                     the flow arrives on wb): median, p99 (nearest rank) and
                     max in ms, over all, restored, retransmitted and
                     restored-before-request ones
      never_delivered  PSNs missing on wb that never left toward B (READ
                     spans, or a transfer that did not finish)

    Only what both captures cover counts: a capture that reached its limit
    (NAME.pcap.log) ended early, and a loss whose reference or departure
    is after its last packet is left out (past_capture). "captures": each
    one's packets, limit and tcpdump's count of the packets the kernel
    dropped from its ring (a capture that dropped any is incomplete: a
    packet it missed on wb reads as lost). None when either capture cannot
    be read."""
    wan = pcap_udp_ts(os.path.join(d, "wan.pcap"))
    out = pcap_udp_ts(os.path.join(d, "out.pcap"))
    if wan is None or out is None:
        return None
    caps = {"wan": capture_log(d, "wan"), "out": capture_log(d, "out")}
    end = math.inf
    for name, pkts in (("wan", wan), ("out", out)):
        caps[name]["packets"] = len(pkts)
        if pkts and caps[name]["limit"] is not None and len(pkts) >= caps[name]["limit"]:
            end = min(end, max(p[0] for p in pkts))
    requests = _requests_by_flow(wan)

    def sources(pkts):
        by = collections.defaultdict(list)
        for t, src, dst, port, pl in sorted(pkts, key=lambda p: p[0]):
            b = _bth(pl) if port == ROCE_PORT else None
            if b is not None and b[0] not in NOT_SOURCES:
                by[(src, dst, b[1])].append((t, b[2]))
        return by
    arrived, left = sources(wan), sources(out)
    flows, every = [], {"restored": [], "retransmitted": [], "unasked": []}
    tot = collections.Counter()
    for key in sorted(left):
        o, w = left[key], arrived.get(key, [])
        base = min(o[:1] + w[:1])[1]
        un_o, un_w, un_r = PsnUnwrap(base), PsnUnwrap(base), PsnUnwrap(base)
        dep, first = {}, {}
        for t, p in o:
            dep.setdefault(un_o(p), t)  # go-back-N duplicates: the first departure
        arr = [(t, un_w(p)) for t, p in w]
        copies = collections.defaultdict(list)
        for t, u in arr:
            copies[u].append(t)
            first.setdefault(u, t)
        # The reference of PSN p: the arrival time of the first PSN above p,
        # i.e. of the first arrival that raised the flow's highest PSN past p.
        raised, hi = [], None
        for t, u in arr:
            if hi is None or u > hi:
                raised.append((u, t))
                hi = u
        asked = [(t, {un_r(p) for p in ps}) for t, ps in requests.get(key, [])]
        c = collections.Counter()
        ex = {"restored": [], "retransmitted": [], "unasked": []}
        gaps = set()
        prev = None
        for u, t in raised:  # PSNs skipped over by each rise (never arrived before it)
            if prev is not None:
                gaps.update(x for x in range(prev + 1, u) if first.get(x, t + 1) > t)
            prev = u
        refs = {}
        for u in sorted(set(dep) | gaps):
            # The first rise past u (binary search over the rising PSNs).
            lo, hi_i = 0, len(raised)
            while lo < hi_i:
                mid = (lo + hi_i) // 2
                if raised[mid][0] > u:
                    hi_i = mid
                else:
                    lo = mid + 1
            if lo < len(raised):
                refs[u] = raised[lo][1]
        for u, ref in sorted(refs.items()):
            if first.get(u, math.inf) <= ref:
                continue  # arrived before any higher PSN: not lost
            if u not in dep:
                c["never_delivered"] += 1
                continue
            if ref > end or dep[u] > end:
                c["past_capture"] += 1
                continue
            c["lost"] += 1
            later = [t for t in copies.get(u, []) if t > ref]
            how = "retransmitted" if later and later[0] <= dep[u] else "restored"
            c[how] += 1
            ex[how].append(dep[u] - ref)
            if how == "restored":
                if later:
                    c["restored_also_retransmitted"] += 1
                if not any(t < dep[u] and u in ps for t, ps in asked):
                    c["restored_before_request"] += 1
                    ex["unasked"].append(dep[u] - ref)
        row = {"src": key[0], "dst": key[1], "dest_qp": key[2],
               "arrived": len(w), "departed": len(o), "requests": len(asked)}
        for n in ("lost", "restored", "retransmitted", "restored_also_retransmitted",
                  "restored_before_request", "never_delivered", "past_capture"):
            row[n] = c[n]
        if key not in requests:  # no HELLO_ACK gave its Flow ID: unknown
            row["restored_before_request"] = None
        row["extra"] = _latency(ex["restored"] + ex["retransmitted"])
        row["extra_restored"] = _latency(ex["restored"])
        row["extra_retransmitted"] = _latency(ex["retransmitted"])
        row["extra_restored_before_request"] = _latency(ex["unasked"])
        flows.append(row)
        tot.update(c)
        for how in ex:
            every[how] += ex[how]
    overall = {n: tot[n] for n in ("lost", "restored", "retransmitted",
                                   "restored_also_retransmitted", "restored_before_request",
                                   "never_delivered", "past_capture")}
    # Over the flows whose requests could be told (None if none could).
    known = [r for r in flows if r["restored_before_request"] is not None]
    overall["restored_before_request"] = \
        sum(r["restored_before_request"] for r in known) if known else None
    overall["restored_of_known_flows"] = sum(r["restored"] for r in known)
    overall["flows"] = len(flows)
    overall["requests"] = sum(len(v) for v in requests.values())
    overall["extra"] = _latency(every["restored"] + every["retransmitted"])
    overall["extra_restored"] = _latency(every["restored"])
    overall["extra_retransmitted"] = _latency(every["retransmitted"])
    overall["extra_restored_before_request"] = _latency(every["unasked"])
    return {"flows": flows, "overall": overall, "captures": caps}


def capture_log(d, name):
    """wan.sh's NAME.pcap.log (capture_out=): {"limit": the -c count,
    "dropped_by_kernel": tcpdump's count}, each None when not recorded."""
    text = _read(os.path.join(d, f"{name}.pcap.log")) or ""
    lim = re.search(r"^limit (\d+)", text, re.M)
    drop = re.search(r"^(\d+) packets? dropped by kernel", text, re.M)
    return {"limit": int(lim[1]) if lim else None,
            "dropped_by_kernel": int(drop[1]) if drop else None}


def recovery_counters(d):
    """The counters beside the latency, from the gateways' totals (a flow
    of an early trial may have expired before flows.NAME.json was dumped):
    gwa's sender side (repairs-sent, repairs-proactive, proactive-limited,
    proactive-covered, repair-rate-limited, retx-budget-symbols,
    path-reports, path-dropped-psns, coded-retx), gwb's
    receiver side (requests-sent, restored, fallbacks), and the core
    reporter's reports-sent. None for a file that is missing."""
    out = {}
    for name, keys in (("gwa", ("repairs-sent", "repairs-proactive", "proactive-limited",
                                "proactive-covered", "repair-rate-limited",
                                "retx-budget-symbols", "path-reports", "path-dropped-psns",
                                "coded-retx")),
                       ("gwb", ("requests-sent", "restored", "fallbacks"))):
        tot = totals(d, [name])
        for k in keys:
            out[f"{name}-{k}"] = None if tot is None else get(tot, k)
    core = stats(d, ["core"])
    out["core-reports-sent"] = None if core is None else get(core, "reports-sent")
    return out


def recovery_text(doc, counters=None):
    """recovery_latency's result as lines of text."""
    def lat(x):
        return f"{dash(x.get('median_ms'))}/{dash(x.get('p99_ms'))}/{dash(x.get('max_ms'))}"
    lines = ["flow                                 lost restored (before req, also retx) "
             "retx   extra ms median/p99/max: all | restored | retransmitted | "
             "restored before request"]
    for r in doc["flows"] + [dict(doc["overall"], src="all", dst="", dest_qp="")]:
        name = f"{r['src']}->{r['dst']} qp {r['dest_qp']}" if r["dst"] else "all"
        lines.append(f"{name:36} {r['lost']:4} {r['restored']:8} ({dash(r['restored_before_request'])}, "
                     f"{r['restored_also_retransmitted']}) {r['retransmitted']:12}   "
                     f"{lat(r['extra'])} | {lat(r['extra_restored'])} | "
                     f"{lat(r['extra_retransmitted'])} | "
                     f"{lat(r.get('extra_restored_before_request') or {})}")
    if counters:
        lines.append("counters: " + ", ".join(f"{k} {dash(v)}" for k, v in counters.items()))
    for name, c in sorted(doc.get("captures", {}).items()):
        lines.append(f"{name}.pcap: {c['packets']} packets (limit {dash(c['limit'])}), "
                     f"{dash(c['dropped_by_kernel'])} dropped by the kernel"
                     + (" -- INCOMPLETE: missed packets read as lost"
                        if c["dropped_by_kernel"] else ""))
    return lines


def dash(v):
    return "-" if v is None else str(v)


def wan_busy_us(d):
    """Microseconds the WAN VM was busy over the transfers (cpu.wan), or None."""
    text = _read(os.path.join(d, "cpu.wan"))
    try:
        b0, b1, hz = map(float, text.split()[:3])
    except (AttributeError, ValueError):
        return None
    return (b1 - b0) / hz * 1e6 if hz > 0 else None


def fwd_cost(d):
    """Microseconds of the WAN VM's busy CPU per RoCEv2 packet forwarded by
    gwa and gwb (cpu.wan and the FORWARD hook's fwd= counts), or None."""
    n, busy = counter(d, "wan", "fwd"), wan_busy_us(d)
    return round(busy / n, 1) if n > 0 and busy is not None else None


def rdma_cost(d):
    """Microseconds of the WAN VM's busy CPU per RoCEv2 packet the hosts'
    rxe sent over the transfers (sent_pkts of a and b: every RDMA packet
    that crossed the WAN, retransmissions included), or None. Unlike
    fwd_cost it needs no crem.ko, so cells with and without CREM compare.
    The busy time includes the VM's own background work while it waits
    (its scripts poll for flag files), which grows with the boot's length:
    compare cells of like length (the same tests and trials, loss-free),
    where the difference is what CREM adds per RDMA packet (its repairs
    and control messages, its hooks)."""
    rxe, busy = rxe_sum(rows(d)), wan_busy_us(d)
    n = (rxe or {}).get("sent_pkts", 0)
    return round(busy / n, 1) if n > 0 and busy is not None else None


def bottleneck(d):
    """The core router's bottleneck qdiscs (topo.sh --bottleneck:
    core.tc.json, `tc -s -j qdisc show dev cb`), summed: {"drops", "marks"
    (CE, fq_codel's ecn_mark)}; None without the file."""
    doc = load_json(os.path.join(d, "core.tc.json"))
    if not isinstance(doc, list):
        return None
    qs = [q for q in doc if isinstance(q, dict)]
    return {"drops": sum(q.get("drops") or 0 for q in qs),
            "marks": sum(q.get("ecn_mark") or 0 for q in qs)}


# ---- crem-ctl JSON ---------------------------------------------------------

def load_json(path):
    """A JSON file, or None when it is missing or not JSON."""
    text = _read(path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def demo_doc(path):
    """The results JSON vm/demo.py wrote (results/demo-*.json) as a dict with
    a "runs" list of objects; ValueError saying why when the file is missing,
    not JSON, or not a demo's (so vm/plot.py can name the problem)."""
    doc = load_json(path)
    if doc is None:
        raise ValueError(f"{path}: missing, unreadable or not JSON")
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise ValueError(f"{path}: not a demo results JSON (no \"runs\" list of objects)")
    return doc


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def sum_nested(docs, path=""):
    """The key-by-key sum of dicts of counters: numbers add, objects (e.g.
    msgs-in-by-type) are summed the same way at any depth, a key present in
    some only counts where it is. Other values (strings, lists) are kept when
    every document agrees and left out otherwise. A key that is a number in
    one document and an object in another is an error (ValueError)."""
    out = {}
    for doc in docs:
        for k, v in doc.items():
            where = f"{path}.{k}" if path else k
            if k not in out:
                out[k] = sum_nested([v], where) if isinstance(v, dict) else v
            elif isinstance(out[k], dict) != isinstance(v, dict):
                raise ValueError(f"{where}: an object in one document, not in another")
            elif isinstance(v, dict):
                out[k] = sum_nested([out[k], v], where)
            elif _is_num(v) and _is_num(out[k]):
                out[k] += v
            elif out[k] != v:
                out[k] = _DISAGREE
    return {k: v for k, v in out.items() if v is not _DISAGREE}


_DISAGREE = object()


def stats(d, names=GATEWAYS):
    """The "stats" objects of stats.NAME.json for NAMES, summed; None if any is
    missing or unreadable (so a boot that left no counters is told apart from
    one whose counters are zero)."""
    docs = []
    for n in names:
        doc = load_json(os.path.join(d, f"stats.{n}.json"))
        if not isinstance(doc, dict) or not isinstance(doc.get("stats"), dict):
            return None
        docs.append(doc["stats"])
    return sum_nested(docs)


def totals(d, names=GATEWAYS):
    """The summed flow totals ("stats"."totals") of NAMES, or None."""
    s = stats(d, names)
    return None if s is None else s.get("totals", {})


def get(obj, key, default=0):
    """A dotted path (totals.restored) into nested dicts; DEFAULT when absent."""
    for part in key.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return default
        obj = obj[part]
    return obj


def flows(d, names=GATEWAYS):
    """Every flow object of flows.NAME.json for NAMES (missing files skipped)."""
    out = []
    for n in names:
        doc = load_json(os.path.join(d, f"flows.{n}.json"))
        if isinstance(doc, dict):
            out += [f for f in doc.get("flow", []) if isinstance(f, dict)]
    return out


def flows_gone(d, name):
    """The flows of NAME's flow-down events (events.NAME.log, `crem-ctl -j
    monitor` lines after an uptime stamp): each flow as it was removed, its
    last counters included."""
    text = _read(os.path.join(d, f"events.{name}.log")) or ""
    out = []
    for line in text.splitlines():
        try:
            ev = json.loads(line.split(" ", 1)[1])
        except (IndexError, ValueError):
            continue
        if isinstance(ev, dict) and ev.get("event") == "flow-down" and isinstance(ev.get("flow"), dict):
            out.append(ev["flow"])
    return out


def qp_flows(d, name, messages, size, secs):
    """The sender flows of NAME (a gateway or host) that carried a transfer's
    queue pairs, each MESSAGES writes of SIZE octets in SECS seconds: the
    request flows that saw at least half of a QP's packets (the QPs' own; a
    connection's control traffic is smaller), from the flow dump, and for a
    QP the dump has none of, its flows removed before it (flow-down events:
    a QP that finished early and went idle). Per flow, `short`: the QP's
    packets (MESSAGES x SIZE / the flow's RDMA MTU) it never counted as
    sources: they passed before it existed, or unprotected, or their first
    transmission was lost before the gateway (a resent PSN is no source),
    plus the sources it coded provisionally and released unprotected
    (`provisional-released`: HELLO unanswered); `passed`: what the flow
    itself counted as passed unprotected (`unprotected` plus
    `provisional-released`; a part of `short`), and its goodput. {"flows":
    N, "gone": of them from flow-down events, "short_max",
    "unprotected_max", "passed_max", "mbps": [min, median, max]}; N 0 when
    none."""
    out = {"flows": 0, "gone": 0, "short_max": None, "unprotected_max": None,
           "passed_max": None, "mbps": None}
    short, unprot, passed, rates, gone = [], [], [], [], 0

    def key(f):
        # A flow's id, or (a flow closing before its Flow ID was kept
        # reports id 0) its addresses, dest QP, side and kind.
        return f.get("id") or (f.get("src"), f.get("dst"), f.get("dest-qp"), f.get("side"), f.get("kind"))
    dumped = flows(d, [name])
    seen = {key(f) for f in dumped}
    later = []
    for f in flows_gone(d, name):  # not in the dump (the netns's exit comes after it), once each
        if key(f) not in seen:
            seen.add(key(f))
            later.append(f)
    for f, was_gone in [(f, False) for f in dumped] + [(f, True) for f in later]:
        mtu = f.get("rdma-mtu") or 0
        if f.get("side") != "csf" or f.get("kind") != "requests" or mtu <= 0:
            continue
        expected = messages * -(-size // mtu)
        st = f.get("stats", {})
        if get(st, "sources") * 2 < expected:
            continue
        gone += was_gone
        short.append(max(0, expected - get(st, "sources")) + get(st, "provisional-released"))
        unprot.append(get(st, "unprotected"))
        passed.append(get(st, "unprotected") + get(st, "provisional-released"))
        if secs > 0:
            rates.append(round(get(st, "source-octets") * 8 / secs / 1e6, 3))
    if short:
        out.update({"flows": len(short), "gone": gone, "short_max": max(short),
                    "unprotected_max": max(unprot), "passed_max": max(passed),
                    "mbps": [min(rates), median(rates), max(rates)] if rates else None})
    return out


def restored_by_kind(d, names=GATEWAYS):
    """Packets restored by the CRF flows of each kind: {"requests": N, ...}."""
    out = {}
    for f in flows(d, names):
        if f.get("side") == "crf":
            k = f.get("kind", "?")
            out[k] = out.get(k, 0) + get(f, "stats.restored")
    return out


def repair_overhead(tot):
    """Repair octets / source octets at the CSFs, or None without sources."""
    src = tot.get("source-octets", 0)
    return round(tot.get("repair-octets", 0) / src, 4) if src else None


# ---- CLI -------------------------------------------------------------------

def _num(v):
    if isinstance(v, dict):
        return json.dumps(v, separators=(",", ":"))
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _stats_value(d, names, key):
    s = stats(d, names)
    if s is None:
        print(f"results.py: no stats.{{{','.join(names)}}}.json in {d}: reading {key} as 0",
              file=sys.stderr)
        return 0
    return get(s, key)


def _fields(args):
    try:
        return dict(a.split("=", 1) for a in args)
    except ValueError:
        raise SystemExit(f"results.py: expected FIELD=VALUE, got {' '.join(args)}")


def main(argv):
    usage = __doc__[__doc__.index("CLI"):__doc__.index("Python 3 standard")]
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        print(usage, file=sys.stderr)
        return 2
    cmd, d, rest = argv[0], argv[1], argv[2:]

    def need(n):
        if len(rest) != n:
            raise SystemExit(f"results.py {cmd}: wrong arguments\n{usage}")
    if cmd == "gw":
        need(1); print(_num(_stats_value(d, GATEWAYS, rest[0])))
    elif cmd == "host":
        need(1); print(_num(_stats_value(d, HOSTS, rest[0])))
    elif cmd == "stats":
        need(2); print(_num(_stats_value(d, rest[0].split(","), rest[1])))
    elif cmd == "counter":
        need(2); print(counter(d, rest[0], rest[1]))
    elif cmd == "drops":
        need(0); v = netem_drops(d); print("?" if v is None else v)
    elif cmd == "mbps":
        need(1); print(f"{mbps(rows(d), rest[0]):.3f}")
    elif cmd == "not-slower":
        need(2); print(json.dumps(not_slower(rows(d), rows(rest[0]), rest[1]), separators=(",", ":")))
    elif cmd == "count":
        print(len(match(rows(d), **_fields(rest))))
    elif cmd == "has":
        return 0 if match(rows(d), **_fields(rest)) else 1
    elif cmd == "all-done":
        need(0); return 0 if all_done(rows(d)) else 1
    elif cmd == "flows":
        if len(rest) > 1:
            raise SystemExit(f"results.py {cmd}: wrong arguments\n{usage}")
        for f in flows(d, rest[0].split(",") if rest else GATEWAYS):
            print(json.dumps(f, sort_keys=True))
    elif cmd == "qp-flows":
        need(4)
        print(json.dumps(qp_flows(d, rest[0], int(rest[1]), int(rest[2]), float(rest[3]))))
    elif cmd == "rxe":
        but_last = "--but-last" in rest
        rest = [a for a in rest if a != "--but-last"]
        if len(rest) > 1 or (rest and rest[0] not in HOSTS):
            raise SystemExit(f"results.py {cmd}: wrong arguments\n{usage}")
        rs = rows(d)
        total = rxe_sum(rs[:-1] if but_last else rs, tuple(rest) or HOSTS) or {}
        if total:
            total["gaps"] = rxe_gaps(total)
        print(json.dumps(total, sort_keys=True))
    elif cmd == "kernel-reports":
        need(0); print(json.dumps(kernel_reports(d), sort_keys=True))
    elif cmd == "host-udp-drops":
        need(0); v = host_udp_drops(d); print("?" if v is None else v)
    elif cmd == "all-verified":
        need(0); return 0 if all_verified(rows(d)) else 1
    elif cmd == "completed-verified":
        need(0); return 0 if completed_verified(rows(d)) else 1
    elif cmd == "restored-kind":
        need(1); print(restored_by_kind(d).get(rest[0], 0))
    elif cmd == "lost-sources":
        need(2); v = lost_sources(d, rest[0], rest[1]); print("?" if v is None else v)
    elif cmd == "psn-conflicts":
        if len(rest) > 1:
            need(1)
        name = rest[0] if rest else "out.pcap"
        v = psn_conflicts(os.path.join(d, name))
        if v is not None:
            v["capture"] = capture_log(d, name[:-len(".pcap")] if name.endswith(".pcap") else name)
        print("?" if v is None else json.dumps(v, sort_keys=True))
    elif cmd == "naks":
        if len(rest) > 1:
            need(1)
        v = rc_naks(os.path.join(d, rest[0] if rest else "a.pcap"))
        print("?" if v is None else json.dumps(v, sort_keys=True))
    elif cmd == "ack-overtakes":
        need(0); v = ack_overtakes(d); print("?" if v is None else json.dumps(v, sort_keys=True))
    elif cmd == "recovery-latency":
        need(0)
        doc = recovery_latency(d)
        if doc is None:
            print(f"results.py: {d}/wan.pcap and {d}/out.pcap needed (topo.sh --capture-out)",
                  file=sys.stderr)
            return 1
        doc["counters"] = recovery_counters(d)
        with open(os.path.join(d, "recovery-latency.json"), "w") as f:
            json.dump(doc, f, indent=2)
        print("\n".join(recovery_text(doc, doc["counters"])))
    elif cmd == "fwd-cost":
        need(0); v = fwd_cost(d); print("?" if v is None else f"{v:.1f}")
    elif cmd == "rdma-cost":
        need(0); v = rdma_cost(d); print("?" if v is None else f"{v:.1f}")
    elif cmd == "connections":
        need(0); print(connections_text(rows(d)))
    elif cmd == "connect-failures":
        need(0); print(json.dumps(connect_failures(rows(d), d), sort_keys=True))
    elif cmd == "bottleneck":
        need(0); v = bottleneck(d); print("?" if v is None else json.dumps(v, sort_keys=True))
    elif cmd == "rows":
        need(0)
        for r in rows(d):
            print(json.dumps(r))
    elif cmd == "grid-md":
        try:
            doc = demo_doc(d)
        except ValueError as e:
            raise SystemExit(f"results.py grid-md: {e}")
        need(0); print("\n".join(grid_markdown(doc)))
    elif cmd == "pool":
        try:
            docs = [demo_doc(f) for f in [d] + rest]
        except ValueError as e:
            raise SystemExit(f"results.py pool: {e}")
        for r in pool(docs):
            print(json.dumps(r))
    else:
        raise SystemExit(f"results.py: unknown command {cmd}\n{usage}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
