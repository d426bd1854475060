"""vm/results.py and the demo's table on files recorded from a real run.

The fixtures (fixtures/README.md) are the four cells of one short demo,
`vm/demo.py --trials 1 --iters 20 --timeout 60`: each cell's results.txt,
the gateways' `crem-ctl -j stats` / `-j flow` output, cpu.wan, and the lines
of wan.console.log that are read (netem's `tc -s qdisc` and the module's
netns-exit lines, verbatim), plus the JSON that demo run wrote. The numbers
asserted below are read off those files; a change to `crem-ctl -j` or to the
RESULT lines that breaks the reader (or the demo) fails here.

Run: python3 -m unittest discover -s vm/tests
"""
import copy
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

from recorded import ADAPTIVE, CELLS, DEMO_JSON, FIX, FIXED, OFF0, OFF1, VM, WORKLOADS_OFF0
import demo  # noqa: E402  (after recorded: it puts vm/ on the path)
import results  # noqa: E402

SMOKE = os.path.join(FIX, "e2e-smoke")
LOSSY_REF = os.path.join(FIX, "e2e-lossy-ref")
LOSSY_CREM = os.path.join(FIX, "e2e-lossy-crem")
HOST = os.path.join(FIX, "e2e-host")


def cli(*args):
    """vm/results.py's CLI as e2e.sh runs it: (exit status, stdout)."""
    p = subprocess.run([sys.executable, os.path.join(VM, "results.py"), *args],
                       capture_output=True, text=True)
    return p.returncode, p.stdout.strip()


class ResultLines(unittest.TestCase):
    def test_rows_of_a_crem_cell(self):
        rs = results.rows(FIXED)
        self.assertEqual([r["test"] for r in rs], ["write_bw", "rping"])
        self.assertEqual(rs[0], {"test": "write_bw", "trial": "1", "completed": "1",
                                 "seconds": "5.598", "bytes": "1310720", "mbps": "1.873",
                                 "verified": "0", "connected": "1", "attempts": "1"})
        self.assertEqual(rs[1]["mbps"], "0.136")
        self.assertEqual(rs[1]["verified"], "1")

    def test_goodput_and_predicates(self):
        self.assertEqual(results.mbps(results.rows(FIXED), "write_bw"), 1.873)
        self.assertEqual(results.mbps(results.rows(ADAPTIVE), "rping"), 0.08)
        self.assertEqual(results.mbps(results.rows(OFF0), "rping_bulk"), 0.0)  # no such test
        for _, _, d in CELLS:
            rs = results.rows(d)
            self.assertTrue(results.all_done(rs), d)
            self.assertTrue(results.all_verified(rs), d)
            self.assertTrue(results.completed_verified(rs), d)
        self.assertFalse(results.all_done([]))  # nothing ran is not "all done"
        self.assertEqual(results.rows(os.path.join(FIX, "no-such-dir")), [])

    def test_summary(self):
        s = results.summarize(results.rows(OFF1), "write_bw")
        self.assertEqual((s["runs"], s["completed"], s["goodput_mbps"], s["completion_s"],
                          s["bytes"], s["verified"]), (1, 1, 1.696, 6.184, 1310720, False))
        s = results.summarize(results.rows(OFF1), "rping")
        self.assertEqual((s["goodput_mbps"], s["completion_s"], s["bytes"], s["verified"]),
                         (0.177, 9.267, 204800, True))
        self.assertEqual(s["trial_results"], [{"trial": 1, "completed": True, "seconds": 9.267,
                                               "mbps": 0.177, "connected": True, "attempts": 1}])

    def test_median_of_three_trials(self):
        # e2e lossy's two runs, three trials each (write_bw 7.216 7.529 9.702
        # and 2.136 3.754 2.726 Mb/s)
        self.assertEqual(results.mbps(results.rows(LOSSY_REF), "write_bw"), 7.529)
        self.assertEqual(results.mbps(results.rows(LOSSY_CREM), "write_bw"), 2.726)
        self.assertEqual(cli("mbps", LOSSY_CREM, "rping_bulk"), (0, "0.714"))
        self.assertEqual(cli("count", LOSSY_CREM, "test=rping_bulk", "verified=1"), (0, "3"))
        self.assertEqual(cli("all-done", LOSSY_CREM)[0], 0)
        self.assertEqual(cli("all-verified", LOSSY_CREM)[0], 0)

    def test_median_of_several_transfers(self):
        rs = [results.parse_result_line(f"RESULT test=write_bw trial={i} completed=1 "
                                        f"seconds=1 bytes=1 mbps={v} verified=0")
              for i, v in enumerate(("3.0", "1.0", "2.0", "9.0"), 1)]
        self.assertEqual(results.mbps(rs, "write_bw"), 2.5)

    def test_connections(self):
        # The recorded run: every transfer connected at its first attempt.
        for _, _, d in CELLS:
            self.assertEqual(results.connections(results.rows(d)),
                             {"never_connected": 0, "failed_after_connecting": 0,
                              "connect_unknown": 0, "connect_retries": 0,
                              "teardown_failed": 0})
        self.assertEqual(cli("connections", FIXED),
                         (0, "0 transfers never connected, 0 failed after connecting, "
                             "0 connection retries"))
        # Failures as host.sh writes them (no recorded run failed): a reject
        # retried three times, a data-path failure, a retried success, and
        # a line from before connected= existed.
        lines = [
            "RESULT test=write_bw trial=1 completed=0 seconds=- bytes=1310720 mbps=0 "
            "verified=0 rc=1 connected=0 attempts=3",
            "RESULT test=rping_bulk trial=1 completed=0 seconds=- bytes=1310720 mbps=0 "
            "verified=0 rc=255 connected=1 attempts=1",
            "RESULT test=rping trial=2 completed=1 seconds=3.1 bytes=204800 mbps=0.5 "
            "verified=1 connected=1 attempts=2",
            "RESULT test=rping trial=3 completed=0 seconds=- bytes=204800 mbps=0 verified=0 rc=124",
            "RESULT test=write_bw trial=2 completed=1 seconds=4.2 bytes=6553600 mbps=12.5 "
            "verified=0 connected=1 attempts=1 teardown=failed",
        ]
        rs = [results.parse_result_line(x) for x in lines]
        self.assertEqual(results.connections(rs),
                         {"never_connected": 1, "failed_after_connecting": 1,
                          "connect_unknown": 1, "connect_retries": 3,
                          "teardown_failed": 1})
        self.assertEqual(results.connections_text(rs),
                         "1 transfers never connected, 1 failed after connecting, "
                         "3 connection retries, 1 completed, then failed in teardown, "
                         "1 failed without a connected= field")
        self.assertFalse(results.all_done(rs))
        self.assertFalse(results.all_verified(rs))
        self.assertTrue(results.completed_verified(rs))
        s = results.summarize(rs, "rping")
        self.assertEqual((s["completed"], s["never_connected"], s["connect_retries"]), (1, 0, 1))
        self.assertEqual(s["trial_results"][1]["rc"], 124)


    def test_connect_failures(self):
        # Two transfers as host.sh leaves them: write_bw rejected twice, then
        # connected (attempts=3); connect never connected in three attempts,
        # the last without any failure event. cm.N.log lines in the
        # tracepoint's format.
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "results.txt"), "w") as f:
            f.write("RESULT test=write_bw trial=1 completed=1 seconds=2.0 bytes=20480 "
                    "mbps=0.1 verified=0 connected=1 attempts=3\n"
                    "RESULT test=connect trial=1 completed=0 seconds=- bytes=64 mbps=0 "
                    "verified=0 rc=1 connected=0 attempts=3\n")
        ev = ("   rping-1 [000] ..... 1.0: cm_event_handler: cm.id=1 src=192.0.2.1:1 "
              "dst=203.0.113.1:2 tos=0 {} ({}/{})\n")
        with open(os.path.join(d, "cm.1.log"), "w") as f:
            f.write("# transfer 1 (write_bw) attempt 1, rc 1\n" + ev.format("ADDR_RESOLVED", 0, 0)
                    + ev.format("REJECTED", 8, 28)
                    + "# transfer 1 (write_bw) attempt 2, rc 1\n" + ev.format("REJECTED", 8, 28)
                    + "# transfer 1 (write_bw) attempt 3, rc 0\n"
                    + ev.format("ESTABLISHED", 9, 0))
        with open(os.path.join(d, "cm.2.log"), "w") as f:
            f.write("# transfer 2 (connect) attempt 1, rc 1\n" + ev.format("UNREACHABLE", 7, -110)
                    + "# transfer 2 (connect) attempt 2, rc 1\n" + ev.format("REJECTED", 8, 28)
                    + "# transfer 2 (connect) attempt 3, rc 1\n")
        got = results.connect_failures(results.rows(d), d)
        self.assertEqual(got["write_bw"], {"transfers": 1, "attempts": 3, "failed": 2,
                                           "per_100": 66.7, "by_event": {"REJECTED/28": 2}})
        self.assertEqual(got["connect"], {"transfers": 1, "attempts": 3, "failed": 3,
                                          "per_100": 100.0,
                                          "by_event": {"UNREACHABLE/-110": 1, "REJECTED/28": 1,
                                                       "no failure event": 1}})
        code, out = cli("connect-failures", d)
        self.assertEqual((code, json.loads(out)), (0, got))

class NotSlower(unittest.TestCase):
    """The one-sided exact Mann-Whitney test behind e2e congestion's
    "no lower goodput with CREM" (five transfers a side)."""

    @staticmethod
    def rs(*mbps):
        return [{"test": "write_bw", "completed": "1", "mbps": str(v)} for v in mbps]

    def test_every_transfer_slower_is_the_rarest_split(self):
        r = results.not_slower(self.rs(1, 2, 3, 4, 5), self.rs(6, 7, 8, 9, 10), "write_bw")
        self.assertEqual((r["u"], r["pairs"]), (0.0, 25))
        self.assertAlmostEqual(r["p"], round(1 / 252, 4))

    def test_the_same_goodputs_are_not_slower(self):
        r = results.not_slower(self.rs(4.4, 4.9, 5.3), self.rs(4.5, 5.0, 5.4), "write_bw")
        self.assertGreater(r["p"], 0.05)
        r = results.not_slower(self.rs(5, 5, 5), self.rs(5, 5, 5), "write_bw")
        self.assertEqual((r["u"], r["p"]), (4.5, 1.0))

    def test_faster_with_is_far_from_slower(self):
        r = results.not_slower(self.rs(6, 7, 8, 9, 10), self.rs(1, 2, 3, 4, 5), "write_bw")
        self.assertEqual((r["u"], r["p"]), (25.0, 1.0))

    def test_one_slow_outlier_is_not_enough(self):
        # Stop 50's check-full run: medians 0.90 of without, ranges overlapping.
        r = results.not_slower(self.rs(4.480, 5.311, 4.397), self.rs(5.355, 4.965, 4.499), "write_bw")
        self.assertGreater(r["p"], 0.05)

    def test_no_transfer_no_verdict(self):
        r = results.not_slower([], self.rs(5), "write_bw")
        self.assertEqual((r["u"], r["p"]), (None, None))


class MannWhitney(unittest.TestCase):
    """mann_whitney_lower counts the splits of the pooled values; it must
    agree with listing every split, ties included."""

    @staticmethod
    def listed(a, b):
        import itertools

        def u_of(xs, ys):
            return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in xs for y in ys)
        u, pooled = u_of(a, b), a + b
        splits = list(itertools.combinations(range(len(pooled)), len(a)))
        le = sum(1 for c in splits
                 if u_of([pooled[i] for i in c],
                         [pooled[i] for i in range(len(pooled)) if i not in c]) <= u + 1e-9)
        return u, le / len(splits)

    def test_agrees_with_listing_every_split(self):
        cases = [([1, 2, 3], [4, 5, 6]), ([4, 5, 6], [1, 2, 3]), ([5, 5, 5], [5, 5, 5]),
                 ([1, 2, 2, 3], [2, 3, 3, 4, 4]), ([0.86, 0.9, 0.75, 0.8], [0.88, 0.9, 0.79]),
                 ([7], [1, 2, 3, 7, 9]), ([1.5, 1.5, 2.5], [1.5, 2.5, 2.5, 3.5])]
        for a, b in cases:
            u, p = results.mann_whitney_lower(a, b)
            lu, lp = self.listed(a, b)
            self.assertEqual(u, lu, (a, b))
            self.assertAlmostEqual(p, lp, places=12, msg=(a, b))

    def test_twelve_a_side_is_quick_and_exact(self):
        a, b = list(range(12)), list(range(12, 24))
        self.assertEqual(results.mann_whitney_lower(a, b), (0.0, 1 / 2704156))
        self.assertEqual(results.mann_whitney_lower([], b), (None, None))


class Pool(unittest.TestCase):
    @staticmethod
    def doc(stamp, eps, cells):
        runs = [{"mode": "off", "test": "write_bw", "rtt_ms": 10, "loss_pct": 0,
                 "goodput_mbps": 10.0, "trial_results": []}]
        for mode, loss, mbps, ovh in cells:
            runs.append({"mode": mode, "test": "write_bw", "rtt_ms": 10, "loss_pct": loss,
                         "repair_overhead": ovh,
                         "trial_results": [{"completed": True, "mbps": v} for v in mbps]
                         + [{"completed": False, "mbps": None}]})
        return {"created_utc": stamp, "params": {"k": 16, "m": 2, "epsilon": eps}, "runs": runs}

    def test_transfers_pool_by_setting_against_their_own_reference(self):
        one = self.doc("A", None, [("fixed", 1, [9, 8, 9.5], 0.14), ("adaptive", 1, [7, 7.5, 8], 0.2)])
        two = self.doc("B", None, [("fixed", 1, [8.5], 0.12), ("adaptive", 1, [6], 0.22)])
        two["runs"][0]["goodput_mbps"] = 5.0  # B's reference: its ratios double
        eps = self.doc("C", "2.5e-3", [("adaptive", 1, [9], 0.13)])
        rows = {r["setting"]: r for r in results.pool([one, two, eps])}
        self.assertEqual(set(rows), {"fixed k16 m2", "adaptive k16 eps default",
                                     "adaptive k16 eps 2.5e-3"})
        f, a = rows["fixed k16 m2"], rows["adaptive k16 eps default"]
        self.assertEqual((f["n"], f["median"], f["min"], f["max"]), (4, 0.925, 0.8, 1.7))
        self.assertEqual((a["n"], a["median"], a["overhead"], a["runs"]), (4, 0.775, 0.21, ["A", "B"]))
        self.assertEqual(f["p_slower"], {})
        p = results.mann_whitney_lower([0.7, 0.75, 0.8, 1.2], [0.9, 0.8, 0.95, 1.7])[1]
        self.assertEqual(a["p_slower"], {"fixed k16 m2": round(p, 3)})
        self.assertEqual(rows["adaptive k16 eps 2.5e-3"]["n"], 1)


class ConsoleLogs(unittest.TestCase):
    def test_netem_drops(self):
        # fixed: "gwa ... (dropped 30" + "gwb ... (dropped 11"
        self.assertEqual(results.netem_drops(FIXED), 41)
        self.assertEqual(results.netem_drops(ADAPTIVE), 37)
        self.assertEqual(results.netem_drops(OFF1), 27)
        self.assertEqual(results.netem_drops(OFF0), 0)
        self.assertIsNone(results.netem_drops(os.path.join(FIX, "no-such-dir")))
        self.assertEqual(cli("drops", FIXED), (0, "41"))

    def test_netns_exit_counters(self):
        lines = results.netns_exit(FIXED, "wan")
        self.assertEqual(len(lines), 3)  # init_net, gwa, gwb
        self.assertEqual(lines[1], {"in": 0, "fwd": 3228, "out": 0, "sources": 2676,
                                    "other": 552, "malformed": 0})
        self.assertEqual(results.counter(FIXED, "wan", "fwd"), 3228 + 3223)
        self.assertEqual(results.counter(ADAPTIVE, "wan", "sources"), 2804 + 2795)
        self.assertEqual(results.counter(OFF1, "wan", "fwd"), 0)  # no module without CREM
        self.assertEqual(cli("counter", FIXED, "wan", "fwd"), (0, "6451"))
        self.assertEqual(cli("counter", FIXED, "wan", "in"), (0, "0"))

    def test_host_and_gateway_hooks(self):
        # e2e smoke: crem.ko on both hosts and in the WAN VM, loss-free.
        self.assertEqual(cli("counter", SMOKE, "a", "sources"), (0, "1763"))
        self.assertEqual(cli("counter", SMOKE, "a", "out"), (0, "1757"))
        self.assertEqual(cli("counter", SMOKE, "b", "in"), (0, "1757"))
        self.assertEqual(cli("counter", SMOKE, "wan", "fwd"), (0, str(2251 + 2251)))
        self.assertEqual(results.counter(SMOKE, "a", "malformed"), 0)
        self.assertEqual(results.counter(SMOKE, "b", "no-such-key"), 0)
        self.assertEqual(results.counter(SMOKE, "no-such-vm", "in"), 0)
        self.assertEqual(results.netem_drops(SMOKE), 0)
        self.assertEqual(cli("has", SMOKE, "test=rping", "completed=1", "verified=1")[0], 0)

    def test_fwd_cost(self):
        # cpu.wan "1577 3443 100": 18.66 s busy over 6451 forwarded packets
        self.assertEqual(results.fwd_cost(FIXED), 2892.6)
        self.assertIsNone(results.fwd_cost(OFF0))  # no module, no fwd count
        self.assertEqual(cli("fwd-cost", FIXED), (0, "2892.6"))
        self.assertEqual(cli("fwd-cost", OFF0), (0, "?"))

    def test_rdma_cost(self):
        # cpu.wan "361 18498 100": 181.37 s busy over the 567,179 packets
        # rxe sent on a and b in its 21 transfers; no crem.ko needed.
        self.assertEqual(results.rdma_cost(WORKLOADS_OFF0), 319.8)
        self.assertIsNone(results.fwd_cost(WORKLOADS_OFF0))
        self.assertEqual(cli("rdma-cost", WORKLOADS_OFF0), (0, "319.8"))
        # Without rxe counters (runs before they were read): unknown.
        self.assertIsNone(results.rdma_cost(FIXED))
        self.assertEqual(cli("rdma-cost", OFF0), (0, "?"))


class GatewayStats(unittest.TestCase):
    def test_totals_restored_and_friends(self):
        t = results.totals(FIXED)
        self.assertEqual(t["restored"], 1 + 13)  # gwa 1, gwb 13
        self.assertEqual(t["fallbacks"], 2)
        self.assertEqual(t["source-octets"], 1761544)
        self.assertEqual(t["repair-octets"], 308428)
        self.assertEqual(results.repair_overhead(t), 0.1751)
        t = results.totals(ADAPTIVE)
        self.assertEqual((t["restored"], t["coded-retx"], t["fallbacks"]), (2 + 8, 15, 1))
        self.assertIsNone(results.totals(OFF1))  # no CREM: no stats files

    def test_nested_by_type_objects_sum(self):
        t = results.totals(FIXED)
        self.assertEqual(t["msgs-in-by-type"],
                         {"repair": 61 + 219, "hello": 29, "hello-ack": 8, "param-update": 10,
                          "param-ack": 10, "repair-request": 1, "loss-report": 441,
                          "path-report": 0, "close": 0, "tc-aeth": 0, "other": 0})
        self.assertEqual(t["msgs-out-by-type"]["repair"], 284)
        s = results.stats(FIXED)
        self.assertEqual(s["msgs-in-by-type"]["hello"], 34)  # the socket's, not the flows'
        self.assertEqual(results.totals(ADAPTIVE)["msgs-in-by-type"]["repair-request"], 16)

    def test_cli_gw(self):
        self.assertEqual(cli("gw", FIXED, "totals.restored"), (0, "14"))
        self.assertEqual(cli("gw", FIXED, "totals.msgs-in-by-type.repair"), (0, "280"))
        self.assertEqual(cli("gw", ADAPTIVE, "totals.coded-retx"), (0, "15"))
        self.assertEqual(cli("gw", FIXED, "drop-msg-peer"), (0, "0"))
        rc, out = cli("gw", FIXED, "totals.msgs-out-by-type")
        self.assertEqual(json.loads(out)["loss-report"], 443)
        self.assertEqual(cli("gw", FIXED, "totals.no-such-counter"), (0, "0"))
        self.assertEqual(cli("gw", OFF1, "totals.restored"), (0, "0"))  # missing files: 0
        # wan.sh's PATH_REPORTs: one taken (from the reporter), one dropped.
        self.assertEqual(cli("stats", FIXED, "after.gwa", "path-reports"), (0, "1"))
        self.assertEqual(cli("stats", FIXED, "after.gwa", "drop-msg-peer"), (0, "1"))
        self.assertEqual(cli("stats", FIXED, "gwa", "drop-msg-peer"), (0, "0"))

    def test_restored_by_flow_kind(self):
        self.assertEqual(results.restored_by_kind(FIXED), {"requests": 13, "responses": 1})
        self.assertEqual(results.restored_by_kind(ADAPTIVE), {"requests": 2, "responses": 3})
        self.assertEqual(cli("restored-kind", FIXED, "responses"), (0, "1"))
        self.assertEqual(cli("restored-kind", OFF1, "responses"), (0, "0"))
        # The totals keep the counts of flows that ended before the dump (in
        # the adaptive cell each gateway created 8 flows, 5 were left, with
        # 5 of its 10 restorations); a flow dump only has the live ones.
        self.assertEqual(sum(results.restored_by_kind(FIXED).values()), 14)
        self.assertEqual(sum(results.restored_by_kind(ADAPTIVE).values()), 5)

    def test_a_new_nested_object_does_not_break_totals(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        for n in results.GATEWAYS:
            with open(os.path.join(FIXED, f"stats.{n}.json")) as f:
                doc = json.load(f)
            doc["stats"]["totals"]["latency-us-by-bucket"] = {"le-100": 3, "le-1000": 4,
                                                              "deeper": {"x": 1}}
            doc["stats"]["per-cpu"] = [{"cpu": 0}]  # and a list, left alone
            doc["stats"]["label"] = n  # and a string the gateways disagree on
            with open(os.path.join(tmp, f"stats.{n}.json"), "w") as f:
                json.dump(doc, f)
        t = results.totals(tmp)
        self.assertEqual(t["restored"], 14)
        self.assertEqual(t["msgs-in-by-type"]["repair"], 280)
        self.assertEqual(t["latency-us-by-bucket"], {"le-100": 6, "le-1000": 8, "deeper": {"x": 2}})
        self.assertNotIn("label", results.stats(tmp))
        self.assertEqual(cli("gw", tmp, "totals.latency-us-by-bucket.deeper.x"), (0, "2"))
        # The demo's row for such a cell still builds, with the same numbers.
        args = demo.make_parser().parse_args(["--trials", "1", "--iters", "20"])
        shutil.copy(os.path.join(FIXED, "results.txt"), tmp)
        row = demo.read_cell(args, "fixed", 1.0, 10, tmp)[0]
        self.assertEqual((row["restored"], row["repair_overhead"]), (14, 0.1751))

    def test_sum_nested(self):
        a = {"n": 1, "o": {"x": 1, "p": {"y": 2}}, "only-a": 5, "s": "same"}
        b = {"n": 2, "o": {"x": 10, "p": {"y": 20, "z": 1}}, "s": "same"}
        before = copy.deepcopy(a)
        self.assertEqual(results.sum_nested([a, b]),
                         {"n": 3, "o": {"x": 11, "p": {"y": 22, "z": 1}}, "only-a": 5,
                          "s": "same"})
        self.assertEqual(a, before)  # inputs untouched
        with self.assertRaises(ValueError):
            results.sum_nested([{"k": 1}, {"k": {"x": 1}}])

    def test_get(self):
        s = results.stats(FIXED)
        self.assertEqual(results.get(s, "totals.msgs-in-by-type.loss-report"), 441)
        self.assertEqual(results.get(s, "totals.restored.deeper"), 0)
        self.assertIsNone(results.get(s, "nope", None))


class HostStats(unittest.TestCase):
    """e2e host: crem.ko in host mode on a and b (stats.a.json, stats.b.json,
    host.sh's stats_out; b's saved just before its unload under traffic)."""

    def test_host_files(self):
        self.assertEqual(cli("host", HOST, "totals.restored"), (0, str(16 + 66)))
        self.assertEqual(cli("stats", HOST, "b", "totals.injected"), (0, "686"))
        self.assertEqual(cli("host", HOST, "totals.repairs-sent"), (0, str(693 + 362)))
        t = results.totals(HOST, results.HOSTS)
        self.assertEqual(t["msgs-in-by-type"]["repair"], 372 + 698)
        self.assertEqual(t["icrc-failures"], 0)
        self.assertEqual(results.stats(HOST, results.HOSTS)["roce-local-in"], 3511 + 7877)
        self.assertEqual(cli("gw", HOST, "totals.restored"), (0, "0"))  # no gateway files
        self.assertIsNone(results.totals(HOST))

    def test_host_rows_and_hooks(self):
        rs = results.rows(HOST)
        self.assertEqual(len(rs), 4)
        self.assertTrue(results.all_done(rs) and results.all_verified(rs))
        self.assertEqual(results.mbps(rs, "rping_bulk"), round((0.565 + 0.320) / 2, 3))
        self.assertEqual(results.counter(HOST, "a", "sources"), 7405)
        self.assertEqual(results.counter(HOST, "b", "in"), 8000)  # at b's unload


class Predicates(unittest.TestCase):
    def test_cli_predicates(self):
        self.assertEqual(cli("all-done", FIXED)[0], 0)
        self.assertEqual(cli("all-verified", FIXED)[0], 0)
        self.assertEqual(cli("completed-verified", FIXED)[0], 0)
        self.assertEqual(cli("has", FIXED, "test=rping", "completed=1", "verified=1")[0], 0)
        self.assertEqual(cli("has", FIXED, "test=rping_bulk", "completed=1")[0], 1)
        self.assertEqual(cli("count", FIXED), (0, "2"))
        self.assertEqual(cli("count", FIXED, "completed=0"), (0, "0"))
        self.assertEqual(cli("mbps", FIXED, "write_bw"), (0, "1.873"))
        self.assertEqual(cli("all-done", os.path.join(FIX, "no-such-dir"))[0], 1)
        self.assertNotEqual(cli("bogus", FIXED)[0], 0)


def pcap(path, frames, link=1):
    """A little-endian pcap file of FRAMES (bytes) with link type LINK."""
    import struct
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, link))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)) + fr)


def roce_frame(src, dst, opcode, qp, psn, vlan=False, port=4791, rest=bytes(8)):
    """An Ethernet frame of an IPv4 RoCEv2 packet (BTH and REST: 8 octets by
    default)."""
    import struct
    bth = bytes([opcode, 0, 0xff, 0xff, 0]) + qp.to_bytes(3, "big") + b"\0" + psn.to_bytes(3, "big")
    udp = struct.pack(">HHHH", 49152, port, 8 + len(bth) + len(rest), 0) + bth + rest
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
    eth = bytes(12) + (b"\x81\x00\x00\x05" if vlan else b"") + b"\x08\x00"
    return eth + ip + udp


class Captures(unittest.TestCase):
    """results.lost_sources: the source transmissions host a sent that the
    WAN capture never saw, independent of CREM's own counters."""

    def test_lost_sources(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        a, b = "192.0.2.1", "203.0.113.1"
        sent = [roce_frame(a, b, 0x06, 17, p) for p in range(1, 6)]
        sent += [roce_frame(a, b, 0x06, 17, 3),  # PSN 3 again (go-back-N)
                 roce_frame(a, b, 0x11, 17, 9),  # an ACK: no source
                 roce_frame(b, a, 0x06, 17, 7),  # the other direction
                 roce_frame(a, b, 0x06, 17, 8, port=7470)]  # not RoCEv2
        pcap(os.path.join(d, "a.pcap"), sent)
        self.assertIsNone(results.lost_sources(d, a, b))  # no WAN capture
        # Across the WAN: PSN 2 never, PSN 3 once of twice (VLAN-tagged).
        wan = [roce_frame(a, b, 0x06, 17, p, vlan=p == 3) for p in (1, 3, 4, 5)]
        pcap(os.path.join(d, "wan.pcap"), wan)
        self.assertEqual(results.lost_sources(d, a, b), 2)
        # Raw IP link type reads the same (the tagged frame left out).
        pcap(os.path.join(d, "wan.pcap"), [fr[14:] for fr in wan if fr[12:14] == b"\x08\x00"], 101)
        self.assertEqual(results.lost_sources(d, a, b), 3)


class PsnConflicts(unittest.TestCase):
    """results.psn_conflicts: a PSN a flow carried twice with different
    headers, a resend out of step with the original."""

    def test_the_recorded_rxe_retry_shift(self):
        # gwb's capture toward host b in the 32-QP run that failed "status
        # 9" before vm/kernel-patches/0001 (fixtures/README.md): the resend
        # began with a zero-length WRITE Only (0x0a) where WRITE First (0x06)
        # had been, and every later packet came a PSN late.
        rc, out = cli("psn-conflicts", os.path.join(FIX, "rxe-retry-shift"))
        self.assertEqual(rc, 0)
        doc = json.loads(out)
        self.assertEqual((doc["packets"], doc["flows"], doc["conflicts"]), (302, 1, 7))
        self.assertEqual(doc["first"][0], {"flow": "192.0.2.1>203.0.113.1 qp 0x20",
                                           "psn": 1612215, "opcodes": ["0x06", "0x0a"]})

    def test_go_back_n_repeats_and_other_flows_are_no_conflict(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        a, b = "192.0.2.1", "203.0.113.1"
        ops = {1: 0x06, 2: 0x07, 3: 0x08, 4: 0x0a}
        frames = [roce_frame(a, b, ops[p], 17, p) for p in (1, 2, 3, 4)]
        frames += [roce_frame(a, b, ops[p], 17, p) for p in (2, 3, 4)]  # go-back-N
        frames += [roce_frame(a, b, 0x0a, 18, 2),  # PSN 2 of another QP
                   roce_frame(b, a, 0x11, 17, 3)]  # an ACK
        pcap(os.path.join(d, "out.pcap"), frames)
        doc = results.psn_conflicts(os.path.join(d, "out.pcap"))
        self.assertEqual((doc["packets"], doc["flows"], doc["conflicts"]), (8, 2, 0))
        # The same resend a PSN late: PSN 3 as First, 4 as Middle.
        frames += [roce_frame(a, b, 0x06, 17, 3), roce_frame(a, b, 0x07, 17, 4)]
        pcap(os.path.join(d, "out.pcap"), frames)
        self.assertEqual(results.psn_conflicts(os.path.join(d, "out.pcap"))["conflicts"], 2)
        self.assertEqual(cli("psn-conflicts", d, "none.pcap"), (0, "?"))


class Naks(unittest.TestCase):
    """results.rc_naks: a capture's NAKs by sender and code, and a fatal
    one traced to the request it answers and the SEND with Invalidate that
    had revoked the request's rkey."""

    def test_replayed_read_after_invalidate(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        a, b = "192.0.2.1", "203.0.113.1"
        reth = lambda rkey: bytes(8) + rkey.to_bytes(4, "big") + (4096).to_bytes(4, "big")
        aeth = lambda syn: bytes([syn, 0, 0, 1])
        frames = [
            roce_frame(b, a, 0x0C, 0x21, 100, rest=reth(0x1234)),  # READ request, t 0
            roce_frame(a, b, 0x10, 0x31, 100, rest=aeth(0)),  # its response
            roce_frame(a, b, 0x11, 0x31, 7, rest=aeth(0x60)),  # a sequence-error NAK
            roce_frame(b, a, 0x17, 0x21, 101, rest=(0x1234).to_bytes(4, "big")),  # SEND Only Inv, t 3
            roce_frame(b, a, 0x0C, 0x21, 100, rest=reth(0x1234)),  # the READ again, t 4
            roce_frame(a, b, 0x11, 0x31, 100, rest=aeth(0x62)),  # remote access error, t 5
            roce_frame(a, b, 0x11, 0x31, 55, rest=aeth(0x61)),  # invalid request, no request seen
        ]
        pcap(os.path.join(d, "a.pcap"), frames)
        rc, out = cli("naks", d)
        self.assertEqual(rc, 0)
        doc = json.loads(out)
        self.assertEqual(doc["packets"], 7)
        self.assertEqual(doc["naks"], {f"{a}>{b} invalid-request": 1, f"{a}>{b} psn-seq-err": 1,
                                       f"{a}>{b} remote-access-err": 1})
        self.assertEqual(len(doc["fatal"]), 2)
        self.assertEqual(doc["fatal"][0], {
            "time": 5.0, "by": a, "psn": 100, "code": "remote-access-err",
            "request": {"opcode": "0x0c", "first_seen": 0.0, "last_seen": 4.0, "rkey": "0x1234"},
            "rkey_invalidated_at": 3.0})
        self.assertIsNone(doc["fatal"][1]["request"])
        self.assertEqual(cli("naks", d, "none.pcap"), (0, "?"))


class AckOvertakes(unittest.TestCase):
    """results.ack_overtakes: ACKs gwb passed on ahead of READ responses of
    the same QP that it had received and still held."""

    def test_an_ack_ahead_of_held_responses(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        a, b = "192.0.2.1", "203.0.113.1"
        fr = lambda op, qp, psn: roce_frame(a, b, op, qp, psn)  # noqa: E731
        # Response 10 lost on the WAN; 11 and 12 held until it is restored.
        pcap_at(os.path.join(d, "wan.pcap"), [
            (0, fr(0x0d, 5, 9)), (1000, fr(0x0e, 5, 11)), (2000, fr(0x0f, 5, 12)),
            (3000, fr(0x11, 5, 13))])
        self.assertIsNone(results.ack_overtakes(d))  # no out.pcap
        pcap_at(os.path.join(d, "out.pcap"), [
            (100, fr(0x0d, 5, 9)),
            (3100, fr(0x11, 5, 13)),  # the ACK, ahead of 11 and 12
            (5000, fr(0x0e, 5, 10)), (5100, fr(0x0e, 5, 11)), (5200, fr(0x0f, 5, 12)),
            (6000, fr(0x11, 5, 14)),  # behind them
            (6100, fr(0x11, 6, 12))])  # another QP's
        rc, out = cli("ack-overtakes", d)
        self.assertEqual(rc, 0)
        self.assertEqual(json.loads(out), {"acks": 3, "overtaking": 1, "responses": 2,
                                           "first": [{"qp": 5, "psn": 13, "held": [11, 12]}]})


class GridMarkdown(unittest.TestCase):
    """grid-md: README's tables of a demo grid, from its JSON."""

    @staticmethod
    def run_(mode, loss, test, mbps, done, gbn=0, rto=0, rec=None, rtt=10):
        return {"mode": mode, "loss_pct": loss, "rtt_ms": rtt, "test": test,
                "goodput_mbps": mbps, "completed": done, "trials": 3, "rxe_gbn": gbn,
                "rxe_timeouts": rto, "nvme_recoveries": rec}

    def test_tables(self):
        r = self.run_
        doc = {"runs": [r("off", 0, "write_bw", 14.14, 3), r("off", 0, "fio_write", 75.4, 3, rec=0),
                        r("off", 1, "write_bw", 4.1, 3, 323, 167),
                        r("off", 1, "fio_write", 0, 0, 497, 1173, rec=9),
                        r("fixed", 0, "write_bw", 13.7, 3), r("fixed", 0, "fio_write", 58.1, 3, rec=0),
                        r("fixed", 1, "write_bw", 12.2, 2, 0, 2),
                        r("fixed", 1, "fio_write", 51.3, 3, 0, 6, rec=1)]}
        lines = results.grid_markdown(doc)
        self.assertEqual(lines[:7], [
            "**RTT 10 ms**: goodput against loss-free", "",
            "| test | loss-free Mbit/s | off 1 % | fixed 0 % | fixed 1 % |",
            "|---|---:|---:|---:|---:|",
            "| write_bw | 14.1 (3/3) | 0.29 | 0.97 | 0.86 (2/3) |",
            "| fio_write | 75.4 (3/3) | - (0/3) | 0.77 | 0.68 |", ""])
        self.assertIn("| write_bw | 0/0 | 323/167 | 0/0 | 0/2 |", lines)
        # NVMe's recoveries: fio tests only
        self.assertEqual(lines[-3:], ["| test | off 0 % | off 1 % | fixed 0 % | fixed 1 % |",
                                      "|---|---:|---:|---:|---:|", "| fio_write | 0 | 9 | 0 | 1 |"])
        self.assertEqual(sum(x.startswith("**RTT") for x in lines), 3)


class KernelReports(unittest.TestCase):
    """kernel_reports: the console lines lib.sh's KERNEL_REPORT_RE finds, by VM."""

    def test_reports_by_vm(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        warn = "[   16.945766] WARNING: CPU: 0 PID: 152 at drivers/infiniband/sw/rxe/rxe_comp.c:827"
        with open(os.path.join(d, "b.console.log"), "w") as f:
            f.write("[    1.3] rdma_rxe: loaded\n" + warn + "\nRESULT test=x\n")
        with open(os.path.join(d, "a.console.log"), "w") as f:
            f.write("[    1.3] nvme nvme0: starting error recovery\n")
        self.assertEqual(results.kernel_reports(d), {"b": [warn]})
        rc, text = cli("kernel-reports", d)
        self.assertEqual((rc, json.loads(text)), (0, {"b": [warn]}))


class DemoTable(unittest.TestCase):
    """The demo's rows and table from the recorded cells, against the JSON
    that run wrote."""

    def setUp(self):
        self.args = demo.make_parser().parse_args(["--trials", "1", "--iters", "20",
                                                   "--timeout", "60"])
        self.runs = []
        for mode, loss, d in CELLS:
            self.runs += demo.read_cell(self.args, mode, loss, 10, d)
        demo.finish(self.runs)
        with open(DEMO_JSON) as f:
            self.recorded = json.load(f)["runs"]

    def test_rows_match_the_recorded_json(self):
        keys = ("mode", "test", "loss_pct", "bytes", "goodput_mbps", "goodput_vs_lossfree",
                "completion_s", "completed", "trials", "verified", "lost_packets", "restored",
                "coded_retx_symbols", "fallbacks", "repair_overhead")
        self.assertEqual(len(self.runs), 8)
        for got, want in zip(self.runs, self.recorded):
            self.assertEqual({k: got[k] for k in keys}, {k: want[k] for k in keys})
        self.assertEqual(self.runs[0]["crem_totals"] if "crem_totals" in self.runs[0] else None,
                         None)  # off @ 0 %: no CREM counters
        fixed = [r for r in self.runs if r["mode"] == "fixed"]
        self.assertEqual([r["restored"] for r in fixed], [14, 14])  # per cell, both rows
        self.assertEqual(fixed[0]["restored_by_kind"], {"requests": 13, "responses": 1})
        self.assertEqual(fixed[0]["crem_totals"]["msgs-in-by-type"]["repair"], 280)
        self.assertEqual(fixed[0]["goodput_vs_lossfree"], 0.912)  # 1.873 / 2.054
        self.assertEqual(fixed[0]["wan_cpu_us_per_fwd_packet"], 2892.6)
        self.assertEqual((fixed[0]["never_connected"], fixed[0]["failed_after_connecting"]),
                         (0, 0))

    def test_table(self):
        buf = io.StringIO()
        with redirect_stdout(buf):
            demo.print_table(self.args, self.runs)
        lines = buf.getvalue().splitlines()
        self.assertIn("ib_write_bw 20 x 65536 B", lines[1])
        self.assertTrue(lines[2].startswith("mode     test "))
        self.assertIn(" loss% goodput Mb/s  vs 0%  window", lines[2])
        row = next(x for x in lines if x.startswith("fixed    write_bw"))
        # window, rxe gbn, rxe rto: "-", the recorded run read no rxe counters
        self.assertEqual(row.split(), ["fixed", "write_bw", "1", "1.873", "0.91", "-", "5.60",
                                       "1/1", "n/a", "41", "-", "-", "14", "0.175", "0", "1",
                                       "2", "-", "-"])
        row = next(x for x in lines if x.startswith("off      rping ") and x.split()[2] == "0")
        self.assertEqual(row.split()[3:9], ["0.221", "1.00", "-", "7.40", "1/1", "yes"])
        self.assertEqual(row.split()[9:], ["0", "-", "-", "-", "-", "-", "-", "-", "-", "-"])


NVME = os.path.join(FIX, "nvme-off")


class Workloads(unittest.TestCase):
    """fio's RESULT fields and rxe's counters (issue 19), on a real run."""

    def test_fio_summary(self):
        s = results.summarize(results.rows(NVME), "fio_write_128k_qd8")
        self.assertEqual((s["goodput_mbps"], s["completion_s"], s["bytes"], s["verified"]),
                         (9.095, 29.516, 33554432, True))
        self.assertEqual((s["iops"], s["p50_us"], s["p99_us"]), (8.7, 221250, 10938745))
        self.assertEqual((s["qps"], s["window_mbps"]), (1, 104.9))
        # Both hosts, the one trial: rxe's own recovery ran without netem loss.
        self.assertEqual({k: s["rxe"][k] for k in results.RXE_RECOVERY},
                         {"out_of_seq_request": 6, "rcvd_seq_err": 4, "completer_retry_err": 118})
        t = s["trial_results"][0]
        self.assertEqual((t["rxe_a"]["duplicate_request"], t["rxe_b"]["completer_retry_err"]),
                         (330, 116))
        s = results.summarize(results.rows(NVME), "fio_randread_4k_qd1")
        self.assertEqual((s["iops"], s["p50_us"], s["p99_us"], s["bytes"]),
                         (66.5, 13435, 21889, 4194304))

    def test_a_failed_verify_is_not_verified(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(NVME, "results.txt")) as f:
            lines = f.read().splitlines()
        bad = lines[1].replace("completed=1", "completed=0").replace("verified=1", "verified=0")
        with open(os.path.join(d, "results.txt"), "w") as f:
            f.write("\n".join([lines[0], bad]) + "\n")
        self.assertFalse(results.all_verified(results.rows(d)))
        self.assertTrue(results.completed_verified(results.rows(d)))
        self.assertTrue(results.all_verified(results.rows(NVME)))
        self.assertEqual(cli("all-verified", d)[0], 1)

    def test_rows_without_rxe_counters(self):
        self.assertIsNone(results.rxe_sum(results.rows(OFF1)))
        self.assertNotIn("rxe_a", results.summarize(results.rows(OFF1), "write_bw")
                         ["trial_results"][0])

    def test_cli(self):
        rc, out = cli("rxe", NVME, "b")
        self.assertEqual(rc, 0)
        self.assertEqual(json.loads(out)["completer_retry_err"], 118)
        self.assertEqual(cli("host-udp-drops", NVME), (0, "7069"))
        self.assertEqual(cli("host-udp-drops", OFF1), (0, "?"))
        self.assertNotEqual(cli("rxe", NVME, "c")[0], 0)
        rc, out = cli("flows", FIXED, "gwa")
        self.assertEqual(rc, 0)
        self.assertEqual([json.loads(x) for x in out.splitlines()],
                         results.flows(FIXED, ["gwa"]))
        self.assertGreater(len(out.splitlines()), 0)

    def test_demo_rows_and_fio_table(self):
        args = demo.make_parser().parse_args(["--trials", "1", "--workloads", "nvme"])
        runs = demo.read_cell(args, "off", 0.0, 10, NVME)
        demo.finish(runs)
        self.assertEqual([r["test"] for r in runs], list(demo.WORKLOADS["nvme"]))
        w = runs[0]
        self.assertEqual((w["rxe_gbn"], w["rxe_timeouts"], w["window_mbps"], w["host_udp_drops"]),
                         (10, 118, 104.9, 7069))
        self.assertEqual(w["goodput_vs_lossfree"], 1.0)
        buf = io.StringIO()
        with redirect_stdout(buf):
            demo.print_table(args, runs)
        lines = buf.getvalue().splitlines()
        i = next(i for i, x in enumerate(lines) if x.startswith("NVMe over Fabrics"))
        row = next(x for x in lines[i:] if x.startswith("off      fio_randread_4k_qd1"))
        # recovered: "-", the recorded run did not count the NVMe recoveries
        self.assertEqual(row.split()[2:], ["0", "0.27", "1.00", "66", "13.4", "21.9", "1/1",
                                           "yes", "-", "0", "0"])
        self.assertIn("the host dropped 7069 datagrams", buf.getvalue())
        self.assertEqual(demo.test_list("fio_randread_4k_qd32,write_bw_q8,rping"),
                         ["fio_randread_4k_qd32", "write_bw_q8", "rping"])
        for bad in ("fio_randrw_4k_qd1", "write_bw_q0", "fio_read_4k"):
            with self.assertRaises(Exception):
                demo.test_list(bad)


    def test_host_mode_cell_reads_the_hosts_counters(self):
        args = demo.make_parser().parse_args(["--trials", "2", "--tests", "write_bw,rping_bulk",
                                              "--modes", "off,host"])
        runs = demo.read_cell(args, "host", 1.0, 10, HOST)
        self.assertEqual([(r["test"], r["restored"], r["fallbacks"], r["coded_retx_symbols"])
                          for r in runs], [("write_bw", 82, 3, 21), ("rping_bulk", 82, 3, 21)])
        self.assertNotIn("reader_error", runs[0])
        # A gateway mode cell of the same directory finds no gateway files.
        self.assertIsNone(demo.read_cell(args, "fixed", 1.0, 10, HOST)[0]["restored"])
        self.assertEqual(demo.crem_nodes("host"), results.HOSTS)
        self.assertEqual(demo.crem_nodes("sr"), results.GATEWAYS)


    def test_qp_flows(self):
        d = os.path.join(FIX, "multiqp-fixed")
        q = results.qp_flows(d, "gwa", 100, 65536, 11.846)
        # 6,400 packets per QP (100 x 64 KiB at MTU 1024); two flows were
        # made late and saw 5,187 and 4,184 of theirs.
        self.assertEqual((q["flows"], q["short_max"], q["unprotected_max"]), (8, 2216, 0))
        self.assertEqual(q["mbps"][2], 4.496)  # 6,400 x 1,040 octets in 11.846 s
        self.assertEqual(results.qp_flows(d, "gwb", 100, 65536, 11.846)["flows"], 0)
        rc, out = cli("qp-flows", d, "gwa", "100", "65536", "11.846")
        self.assertEqual((rc, json.loads(out)["short_max"]), (0, 2216))

    def test_qp_flows_removed_before_the_dump(self):
        # A QP that finished early went idle and its flow expired before the
        # dump (e2e-long, 32 QPs, stop 51: 30 of 32 flows in the dump): its
        # flow-down event has its last counters. A flow-down of a flow the
        # dump has (the netns's exit, after the dump) is not counted twice.
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)

        def flow(qp, sources, unprot=0, prov=0, fid=None):
            return {"id": 1000 + qp if fid is None else fid,
                    "src": "192.0.2.1", "dst": "203.0.113.1", "dest-qp": qp, "side": "csf",
                    "kind": "requests", "rdma-mtu": 1024,
                    "stats": {"sources": sources, "source-octets": sources * 1040,
                              "unprotected": unprot, "provisional-released": prov}}
        with open(os.path.join(d, "flows.gwa.json"), "w") as f:
            json.dump({"flow": [flow(17, 3200, unprot=5)]}, f)
        with open(os.path.join(d, "events.gwa.log"), "w") as f:
            # QP 18's event twice (counted once); QP 19's flow closed before
            # it kept its Flow ID (id 0, as a real closing flow reports).
            for t, fl in ((12.5, flow(18, 3000, prov=16)), (12.5, flow(18, 3000, prov=16)),
                          (13.0, flow(19, 3100, fid=0)), (20.0, flow(17, 3200, unprot=5))):
                f.write(f"{t} " + json.dumps({"event": "flow-down", "flow": fl}) + "\n")
            f.write("20.1 not json\n")
        q = results.qp_flows(d, "gwa", 50, 65536, 10)
        # QP 18: 3,200 - 3,000 never sources, plus 16 coded provisionally and
        # released; passed = unprotected + provisional-released.
        self.assertEqual((q["flows"], q["gone"], q["short_max"], q["unprotected_max"], q["passed_max"]),
                         (3, 2, 216, 5, 16))


if __name__ == "__main__":
    unittest.main()


def pcap_at(path, packets):
    """A little-endian microsecond pcap of (time in us, Ethernet frame)."""
    import struct
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for us, fr in packets:
            f.write(struct.pack("<IIII", us // 1000000, us % 1000000, len(fr), len(fr)) + fr)


def crem_frame(src, dst, msg):
    """An Ethernet frame of a CREM message (UDP to port 7470)."""
    import struct
    udp = struct.pack(">HHHH", 7470, 7470, 8 + len(msg), 0) + msg
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
    return bytes(12) + b"\x08\x00" + ip + udp


def crem_msg(typ, flow_id, body, flags=0):
    import struct
    return struct.pack(">BBHI", 0x10 | typ, flags, 8 + len(body), flow_id) + body


class RecoveryLatency(unittest.TestCase):
    """results.recovery_latency on two synthetic captures at gwb: wb (what
    arrived over the WAN, CREM messages both ways) and eth1 (what left
    toward B), with times in us."""

    A, B, GWA, GWB = "192.0.2.1", "203.0.113.1", "198.51.100.1", "198.51.100.2"
    NONCE = bytes(range(1, 9))

    def hello(self, qp):
        import struct
        body = struct.pack(">BBHBBHHH", 1, 4, 7, 255, 16, 4134, 1024, 0) + self.NONCE
        body += bytes(map(int, self.A.split("."))) + bytes(map(int, self.B.split(".")))
        return crem_frame(self.GWA, self.GWB, crem_msg(2, 0, body + struct.pack(">I", qp)))

    def hello_ack(self, flow_id):
        import struct
        body = struct.pack(">BBHBBHHH", 1, 4, 7, 255, 16, 4134, 1024, 0) + self.NONCE
        return crem_frame(self.GWB, self.GWA, crem_msg(3, flow_id, body + bytes(4)))

    def block_request(self, flow_id, start, lost, k=16):
        import struct
        bits = sum(1 << (31 - j) for j in lost)
        body = struct.pack(">BBBB", 1, 1, k, 0) + start.to_bytes(3, "big") + bytes([1])
        body += struct.pack(">HH", 7, 0) + struct.pack(">I", bits)
        return crem_frame(self.GWB, self.GWA, crem_msg(6, flow_id, body))

    def range_request(self, flow_id, ranges):
        import struct
        body = struct.pack(">HH", 9, len(ranges))
        body += b"".join(s.to_bytes(3, "big") + bytes([n]) for s, n in ranges)
        return crem_frame(self.GWB, self.GWA, crem_msg(6, flow_id, body, flags=0x10))

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.d)
        A, B = self.A, self.B
        w = lambda qp, psn: roce_frame(A, B, 0x07, qp, psn)  # noqa: E731
        t0 = 1_000_000
        # QP 17 crosses the PSN wrap: 0xfffffc .. 0x000003. Lost before wb:
        # 0xfffffe, 1 and 2. 0xfffffe is restored 7 ms after 0xffffff came,
        # after a block request naming it; 2 is restored 13 ms after 3 came,
        # before any request names it; 1 is retransmitted by rxe (go-back-N
        # from 1: 2 and 3 come again, 2 after its restoration).
        wan = [(t0 - 500, self.hello(17)), (t0 - 400, self.hello_ack(0x42)),
               (t0, w(17, 0xfffffc)), (t0 + 1000, w(17, 0xfffffd)),
               (t0 + 3000, w(17, 0xffffff)), (t0 + 4000, w(17, 0)),
               (t0 + 5000, self.block_request(0x42, 0xfffffc, [2])),
               (t0 + 7000, w(17, 3)),
               (t0 + 7500, roce_frame(B, A, 0x11, 17, 3)),  # an ACK back: no source
               (t0 + 50000, w(17, 1)), (t0 + 51000, w(17, 2)), (t0 + 52000, w(17, 3))]
        out = [(t0 + 100, w(17, 0xfffffc)), (t0 + 1100, w(17, 0xfffffd)),
               (t0 + 3100, w(17, 0xffffff)), (t0 + 4100, w(17, 0)),
               (t0 + 7100, w(17, 3)), (t0 + 10000, w(17, 0xfffffe)),
               (t0 + 20000, w(17, 2)), (t0 + 50500, w(17, 1)),
               (t0 + 51200, w(17, 2)), (t0 + 52200, w(17, 3))]  # go-back-N duplicates
        # QP 18 (no HELLO seen: its requests cannot be matched): 102 never
        # arrives nor leaves (a READ span's PSN); 104 lost and restored 7 ms
        # after 105 came; 106 lost and restored, but nothing after it came:
        # no reference, not counted.
        t1 = 2_000_000
        wan += [(t1, w(18, 100)), (t1 + 1000, w(18, 101)), (t1 + 3000, w(18, 103)),
                (t1 + 4000, self.range_request(0x43, [(104, 1)])), (t1 + 5000, w(18, 105))]
        out += [(t1 + 100, w(18, 100)), (t1 + 1100, w(18, 101)), (t1 + 3100, w(18, 103)),
                (t1 + 5100, w(18, 105)), (t1 + 12000, w(18, 104)), (t1 + 30000, w(18, 106))]
        self.wan, self.out = sorted(wan), sorted(out)
        pcap_at(os.path.join(self.d, "wan.pcap"), self.wan)
        pcap_at(os.path.join(self.d, "out.pcap"), self.out)

    def test_request_psns(self):
        frame = self.block_request(1, 0xfffffe, [0, 2, 15])
        self.assertEqual(results._request_psns(frame[42:]), [0xfffffe, 0, 13])
        frame = self.range_request(1, [(0xffffff, 2), (9, 1)])
        self.assertEqual(results._request_psns(frame[42:]), [0xffffff, 0, 9])

    def test_unwrap(self):
        u = results.PsnUnwrap(0xfffffe)
        self.assertEqual([u(p) for p in (0xfffffe, 0xffffff, 0, 1, 0xffffff, 2)],
                         [0xfffffe, 0xffffff, 1 << 24, (1 << 24) + 1, 0xffffff, (1 << 24) + 2])

    def test_percentile(self):
        self.assertEqual(results.percentile(list(range(1, 101)), 99), 99)
        self.assertEqual(results.percentile([5, 1, 3], 99), 5)
        self.assertEqual(results.percentile([5, 1, 3], 50), 3)
        self.assertIsNone(results.percentile([], 99))

    def test_per_flow_and_overall(self):
        doc = results.recovery_latency(self.d)
        f17, f18 = doc["flows"]
        self.assertEqual((f17["dest_qp"], f17["arrived"], f17["departed"], f17["requests"]),
                         (17, 8, 10, 1))
        self.assertEqual({k: f17[k] for k in ("lost", "restored", "retransmitted",
                                              "restored_also_retransmitted",
                                              "restored_before_request", "never_delivered",
                                              "past_capture")},
                         {"lost": 3, "restored": 2, "retransmitted": 1,
                          "restored_also_retransmitted": 1, "restored_before_request": 1,
                          "never_delivered": 0, "past_capture": 0})
        self.assertEqual(f17["extra"], {"n": 3, "min_ms": 7.0, "median_ms": 13.0, "p99_ms": 43.5,
                                        "max_ms": 43.5})
        self.assertEqual(f17["extra_restored"]["median_ms"], 10.0)  # 7 and 13
        self.assertEqual(f17["extra_retransmitted"]["median_ms"], 43.5)
        self.assertEqual((f18["lost"], f18["restored"], f18["retransmitted"],
                          f18["never_delivered"], f18["restored_before_request"]),
                         (1, 1, 0, 1, None))  # its requests name no flow seen in a HELLO
        self.assertEqual(f18["extra"]["median_ms"], 7.0)
        o = doc["overall"]
        self.assertEqual((o["flows"], o["lost"], o["restored"], o["retransmitted"],
                          o["restored_before_request"], o["never_delivered"], o["requests"]),
                         (2, 4, 3, 1, 1, 1, 1))
        # 7, 7, 13, 43.5 ms: the median between the middle two
        self.assertEqual(o["extra"], {"n": 4, "min_ms": 7.0, "median_ms": 10.0, "p99_ms": 43.5,
                                      "max_ms": 43.5})
        self.assertEqual(o["extra_restored"], {"n": 3, "min_ms": 7.0, "median_ms": 7.0, "p99_ms": 13.0,
                                               "max_ms": 13.0})
        self.assertEqual(doc["captures"]["wan"], {"limit": None, "dropped_by_kernel": None,
                                                  "packets": 17})

    def test_a_capture_at_its_limit_ends_the_count(self):
        # wan.pcap stopped at its limit just after QP 18's 105: the losses of
        # QP 18 depart after that, so they are past the capture.
        with open(os.path.join(self.d, "wan.pcap.log"), "w") as f:
            f.write("limit 17\ntcpdump: listening on wb\n17 packets captured\n"
                    "20 packets received by filter\n3 packets dropped by kernel\n")
        doc = results.recovery_latency(self.d)
        self.assertEqual((doc["overall"]["lost"], doc["overall"]["past_capture"]), (3, 1))
        self.assertEqual(doc["captures"]["wan"], {"limit": 17, "dropped_by_kernel": 3,
                                                  "packets": 17})
        self.assertIn("INCOMPLETE", "\n".join(results.recovery_text(doc)))

    def test_cli_writes_json(self):
        rc, text = cli("recovery-latency", self.d)
        self.assertEqual(rc, 0)
        self.assertTrue(text.splitlines()[-4].startswith("all "))
        with open(os.path.join(self.d, "recovery-latency.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["overall"]["lost"], 4)
        self.assertIsNone(doc["counters"]["core-reports-sent"])  # no stats.core.json
        os.remove(os.path.join(self.d, "out.pcap"))
        self.assertEqual(cli("recovery-latency", self.d)[0], 1)
