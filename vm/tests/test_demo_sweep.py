"""vm/demo.py's sweeps (--loss and --rtt lists), its progress line, and its
table and JSON for several RTTs, without a VM: the cells are the recorded
ones (fixtures/), read again as if run at another RTT.

Run: python3 -m unittest discover -s vm/tests
"""
import glob
import io
import json
import os
import re
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

from recorded import CELLS
import demo  # noqa: E402  (after recorded: it puts vm/ on the path)
import demo_short_check  # noqa: E402


def parse(*argv):
    return demo.make_parser().parse_args(list(argv))


class SweepArguments(unittest.TestCase):
    def test_defaults_are_the_short_demo_cells(self):
        # vm/check.sh's demo-short wants exactly these cells from the defaults.
        args = parse("--trials", "1", "--iters", "20", "--timeout", "60")
        self.assertEqual((args.loss, args.rtt), ([1.0], [10]))
        self.assertEqual(demo.sweep(args.rtt, args.loss, demo.MODES),
                         [("off", 0.0, 10), ("off", 1.0, 10), ("fixed", 1.0, 10),
                          ("adaptive", 1.0, 10), ("sr", 1.0, 10), ("both", 1.0, 10)])

    def test_lists(self):
        self.assertEqual(parse("--loss", "0,0.1,0.5,1,2,5").loss, [0.0, 0.1, 0.5, 1.0, 2.0, 5.0])
        self.assertEqual(parse("--loss", "5, 1,1").loss, [1.0, 5.0])  # sorted, once each
        self.assertEqual(parse("--loss", "2.5").loss, [2.5])
        self.assertEqual(parse("--rtt", "50,10").rtt, [10, 50])

    def test_refused(self):
        for argv in (["--loss", "x"], ["--loss", "1,,y"], ["--loss", ","], ["--loss", "-1"],
                     ["--loss", "101"], ["--loss", "nan"], ["--rtt", "1.5"], ["--rtt", "-3"],
                     ["--rtt", ""]):
            err = io.StringIO()
            with self.subTest(argv=argv), redirect_stderr(err), self.assertRaises(SystemExit):
                parse(*argv)
            self.assertIn(f"argument {argv[0]}", err.getvalue())

    def test_sweep_cells(self):
        cells = demo.sweep([10, 50], [0.0, 0.1, 0.5, 1.0, 2.0, 5.0], demo.MODES)
        self.assertEqual(len(cells), 2 * (6 * 5))  # off @ 0 is the reference, once per RTT
        self.assertEqual(len(set(cells)), len(cells))
        self.assertEqual([c for c in cells if c[:2] == ("off", 0.0)],
                         [("off", 0.0, 10), ("off", 0.0, 50)])
        self.assertEqual(cells[:7], [("off", 0.0, 10), ("fixed", 0.0, 10), ("adaptive", 0.0, 10),
                                     ("sr", 0.0, 10), ("both", 0.0, 10), ("off", 0.1, 10),
                                     ("fixed", 0.1, 10)])
        self.assertEqual(cells[30], ("off", 0.0, 50))
        # --modes fixed: the off reference still runs first.
        self.assertEqual(demo.sweep([10], [1.0, 2.0], ["fixed"]),
                         [("off", 0.0, 10), ("fixed", 1.0, 10), ("fixed", 2.0, 10)])


class Progress(unittest.TestCase):
    def test_line(self):
        self.assertEqual(demo.progress(1, 4, 0.2), "cell 1/4, 0s elapsed, time left ?")
        # Two cells took 600 s: 300 s each, cells 3 and 4 to go.
        self.assertEqual(demo.progress(3, 4, 600), "cell 3/4, 10m00s elapsed, about 10m00s left")
        self.assertEqual(demo.progress(36, 36, 35 * 200), "cell 36/36, 1h56m elapsed, "
                                                          "about 3m20s left")

    def test_duration(self):
        self.assertEqual([demo.duration(s) for s in (0, 59.4, 59.6, 61, 3599, 3600, 3725)],
                         ["0s", "59s", "1m00s", "1m01s", "59m59s", "1h00m", "1h02m"])


class SeveralRtts(unittest.TestCase):
    """The recorded cells read as rtt 10 and again as rtt 50, the 50 ms
    loss-free write_bw goodput halved: each RTT is against its own reference."""

    def setUp(self):
        self.args = parse("--trials", "1", "--iters", "20", "--rtt", "10,50")
        self.runs = [r for rtt in self.args.rtt for mode, loss, d in CELLS
                     for r in demo.read_cell(self.args, mode, loss, rtt, d)]
        ref50 = next(r for r in self.runs if (r["rtt_ms"], r["mode"], r["loss_pct"], r["test"])
                     == (50, "off", 0.0, "write_bw"))
        ref50["goodput_mbps"] /= 2
        demo.finish(self.runs)

    def vs(self, rtt, mode):
        return next(r["goodput_vs_lossfree"] for r in self.runs
                    if (r["rtt_ms"], r["mode"], r["loss_pct"], r["test"])
                    == (rtt, mode, 1.0, "write_bw"))

    def test_reference_per_rtt(self):
        self.assertEqual(self.vs(10, "fixed"), 0.912)  # 1.873 / 2.054
        self.assertEqual(self.vs(50, "fixed"), 1.824)  # 1.873 / 1.027

    def test_a_table_per_rtt(self):
        out = io.StringIO()
        with redirect_stdout(out):
            demo.print_table(self.args, self.runs)
        heads = [x for x in out.getvalue().splitlines() if x.startswith("RDMA over")]
        self.assertEqual([h.split(",")[0] for h in heads],
                         ["RDMA over the emulated WAN: rtt 10 ms", "RDMA over the emulated WAN: "
                                                                   "rtt 50 ms"])
        self.assertEqual(sum(x.startswith("mode ") for x in out.getvalue().splitlines()), 2)

    def test_json_params(self):
        doc = demo.document(self.args, list(demo.MODES), {}, self.runs)
        self.assertEqual((doc["params"]["rtt_ms"], doc["params"]["loss_pct"]), ([10, 50], [1.0]))
        self.assertEqual(sorted({r["rtt_ms"] for r in doc["runs"]}), [10, 50])


def fake_figure(doc, prefix):
    """plot.draw's files, only their formats' signatures (drawing is test_plot's)."""
    for ext, body in ((".png", b"\x89PNG\r\n\x1a\n..."), (".svg", b"<?xml?>\n<svg></svg>")):
        with open(prefix + ext, "wb") as f:
            f.write(body)
    return [prefix + ".png", prefix + ".svg"]


class ShortDemo(unittest.TestCase):
    """demo.py's main() as vm/check.sh's demo-short runs it, each boot
    replaced by the recorded cell's files: the progress lines, and the JSON
    and figure files demo-short checks (vm/demo_short_check.py; drawing the
    figure is test_plot's)."""

    def run_main(self, draw):
        """main()'s stdout and stderr and its results directory, with
        plot.draw replaced by DRAW."""
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        heads = []

        def boot(args, bins, cell, head):
            heads.append(head)
            mode, loss, rtt = cell
            # The recording has no sr or both cell: the fixed one's files
            # stand in (read_cell labels them with the cell's mode).
            rec = {"sr": "fixed", "both": "fixed"}.get(mode, mode)
            d = next(d for m, x, d in CELLS if (m, x) == (rec, loss))
            return demo.read_cell(args, mode, loss, rtt, d)

        argv = ["demo.py", "--trials", "1", "--iters", "20", "--timeout", "60",
                "--results-dir", tmp, "--module", __file__, "--ctl", __file__]
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(sys, "argv", argv), mock.patch.object(demo, "run_cell", boot), \
                mock.patch.object(demo, "snapshot", lambda path, _: (path, "-")), \
                mock.patch.object(demo.plot, "draw", draw), \
                redirect_stdout(out), redirect_stderr(err):
            self.assertEqual(demo.main(), 0)
        return out.getvalue(), err.getvalue(), tmp, heads

    def test_main(self):
        out, err, tmp, heads = self.run_main(fake_figure)
        self.assertEqual(len(heads), 6)
        self.assertRegex(heads[0], r"^cell 1/6, \d+s elapsed, time left \?$")
        self.assertRegex(heads[5], r"^cell 6/6, \d+s elapsed, about \d+s left$")
        self.assertRegex(out, re.compile(r"^mode .*goodput Mb/s", re.M))
        [path] = glob.glob(os.path.join(tmp, "demo-*.json"))
        with open(path) as f:
            runs = json.load(f)["runs"]
        self.assertEqual({(r["mode"], r["loss_pct"]) for r in runs},
                         {("off", 0.0), ("off", 1.0), ("fixed", 1.0), ("adaptive", 1.0),
                          ("sr", 1.0), ("both", 1.0)})
        self.assertEqual(len(runs), 12)
        # vm/check.sh demo_short's check, as it makes it.
        base = path[:-len(".json")]
        self.assertEqual(demo_short_check.check(tmp),
                         f"{path}: 12 rows; figure {base}.png and .svg")

    def test_no_figure_fails_demo_short(self):
        # The demo itself succeeds without its figure (one line on stderr);
        # make check's demo-short does not (it did before: the JSON only).
        _, err, tmp, _ = self.run_main(mock.Mock(side_effect=RuntimeError("not here")))
        self.assertIn("figure skipped: drawing failed", err)
        with self.assertRaisesRegex(ValueError, r"no figure .*demo-.*\.png \(No such file"):
            demo_short_check.check(tmp)

    def test_figure_not_of_its_format_fails(self):
        _, _, tmp, _ = self.run_main(fake_figure)
        [svg] = glob.glob(os.path.join(tmp, "demo-*.svg"))
        with open(svg, "w") as f:
            f.write("")
        with self.assertRaisesRegex(ValueError, r"\.svg is not an SVG image"):
            demo_short_check.check(tmp)
        self.assertEqual(demo_short_check.main(["x", tmp]), 1)


if __name__ == "__main__":
    unittest.main()


class Resume(unittest.TestCase):
    """An interrupted run goes on with --resume: the cells done are kept
    (the partial file written after each), only the rest boot, and the
    results JSON covers all of them with the grid's summed boot time."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.booted = []

    def boot(self, stop_at=None):
        def boot(args, bins, cell, head):
            if len(self.booted) == stop_at:
                raise KeyboardInterrupt  # the session ends mid-grid
            self.booted.append(cell)
            mode, loss, rtt = cell
            rec = {"sr": "fixed", "both": "fixed"}.get(mode, mode)
            d = next(d for m, x, d in CELLS if (m, x) == (rec, loss))
            runs = demo.read_cell(args, mode, loss, rtt, d)
            for r in runs:
                r["cell_seconds"] = 100.0
            return runs
        return boot

    def main(self, boot, *extra):
        argv = ["demo.py", "--trials", "1", "--iters", "20", "--timeout", "60",
                "--results-dir", self.tmp, "--module", __file__, "--ctl", __file__, *extra]
        err = io.StringIO()
        with mock.patch.object(sys, "argv", argv), mock.patch.object(demo, "run_cell", boot), \
                mock.patch.object(demo, "snapshot", lambda path, _: (path, "-")), \
                mock.patch.object(demo, "sha256_of", lambda path: "-"), \
                mock.patch.object(demo.plot, "draw", fake_figure), \
                redirect_stdout(io.StringIO()), redirect_stderr(err):
            try:
                return demo.main(), err.getvalue()
            except SystemExit as e:  # argparse's error
                return e.code, err.getvalue()

    def test_interrupted_then_resumed(self):
        with self.assertRaises(KeyboardInterrupt):
            self.main(self.boot(stop_at=4))
        [partial] = glob.glob(os.path.join(self.tmp, "demo-*.partial.json"))
        self.assertEqual(len(self.booted), 4)
        self.booted.clear()
        rc, err = self.main(self.boot(), "--resume", partial)
        self.assertEqual(rc, 0)
        self.assertIn("4 of 6 cells done (6m40s of boots)", err)
        # Only the two cells left booted, in sweep order.
        self.assertEqual(self.booted, [("sr", 1.0, 10), ("both", 1.0, 10)])
        [path] = glob.glob(os.path.join(self.tmp, "demo-*.json"))
        self.assertFalse(os.path.exists(partial), "the results JSON holds it all")
        with open(path) as f:
            doc = json.load(f)
        self.assertEqual(len(doc["runs"]), 12)
        self.assertEqual({(r["mode"], r["loss_pct"]) for r in doc["runs"]},
                         {("off", 0.0), ("off", 1.0), ("fixed", 1.0), ("adaptive", 1.0),
                          ("sr", 1.0), ("both", 1.0)})
        self.assertEqual(doc["grid_seconds"], 600.0)
        # The reference cell booted before the interruption still scales
        # the cells after it.
        both = [r for r in doc["runs"] if r["mode"] == "both"]
        self.assertTrue(all(r["goodput_vs_lossfree"] is not None for r in both))

    def test_other_options_are_refused(self):
        with self.assertRaises(KeyboardInterrupt):
            self.main(self.boot(stop_at=2))
        [partial] = glob.glob(os.path.join(self.tmp, "demo-*.partial.json"))
        self.booted.clear()
        for other, what in ((["--k", "8"], "k"), (["--trials", "2"], "trials")):
            rc, err = self.main(self.boot(), "--resume", partial, *other)
            self.assertEqual(rc, 2)
            self.assertIn(f"was run with other settings ({what})", err)
        self.assertEqual(self.booted, [])

    def test_other_binaries_are_refused(self):
        with self.assertRaises(KeyboardInterrupt):
            self.main(self.boot(stop_at=2))
        [partial] = glob.glob(os.path.join(self.tmp, "demo-*.partial.json"))
        with open(partial) as f:
            doc = json.load(f)
        # The binaries the run kept are checked before any cell boots.
        self.assertEqual(doc["bins"], {"module": __file__, "ctl": __file__})
        doc["sha256"]["module"] = "another build"
        with open(partial, "w") as f:
            json.dump(doc, f)
        with self.assertRaisesRegex(ValueError, r"its module .* is gone or changed"):
            demo.load_partial(partial, doc["params"])
        doc["bins"]["ctl"] = os.path.join(self.tmp, "gone")
        doc["sha256"]["module"] = demo.sha256_of(__file__)
        with open(partial, "w") as f:
            json.dump(doc, f)
        with self.assertRaisesRegex(ValueError, r"its ctl .*gone is gone or changed"):
            demo.load_partial(partial, doc["params"])


class Bottleneck(unittest.TestCase):
    """--bottleneck and --reporter: parsed, passed to vm/topo.sh (the
    reporter only to the CREM gateway cells, ToS 2 with :ecn), recorded in
    the JSON and named in the table's header; the recorded cells stand in
    for the boots, with the core router's files added."""

    def test_parsed(self):
        self.assertEqual(parse("--bottleneck", "20:100").bottleneck, "20:100")
        self.assertEqual(parse("--bottleneck", "2.5:16:ecn").bottleneck, "2.5:16:ecn")
        a = parse()
        self.assertEqual((a.bottleneck, a.reporter), (None, "off"))
        for argv in (["--bottleneck", "20"], ["--bottleneck", "0:100"], ["--bottleneck", "x:1"],
                     ["--bottleneck", "20:1.5"], ["--bottleneck", "20:100:red"],
                     ["--bottleneck", "20:0"], ["--bottleneck", "inf:10"],
                     ["--reporter", "gwa"]):
            err = io.StringIO()
            with self.subTest(argv=argv), redirect_stderr(err), self.assertRaises(SystemExit):
                parse(*argv)
            self.assertIn(f"argument {argv[0]}", err.getvalue())

    def test_reporter_needs_a_bottleneck(self):
        err = io.StringIO()
        with mock.patch.object(sys, "argv", ["demo.py", "--reporter", "core", "--modes", "off"]), \
                redirect_stderr(err), self.assertRaises(SystemExit):
            demo.main()
        self.assertIn("--reporter core needs --bottleneck", err.getvalue())

    def topo_args(self, argv, mode):
        """vm/topo.sh's arguments for one cell of MODE under ARGV."""
        calls = []
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        with mock.patch.object(demo.subprocess, "call",
                               lambda cmd, **_: calls.append(cmd) or 0), \
                mock.patch.object(demo.tempfile, "mkdtemp", lambda **_: tmp), \
                redirect_stderr(io.StringIO()):
            demo.run_cell(parse(*argv), {"module": "m.ko", "ctl": "ctl"}, (mode, 0.0, 10), "")
        return calls[0]

    def test_passed_to_topo(self):
        cmd = self.topo_args(["--bottleneck", "20:100", "--reporter", "core"], "fixed")
        self.assertEqual(cmd[cmd.index("--bottleneck") + 1], "20:100")
        self.assertEqual(cmd[cmd.index("--reporter") + 1], "core")
        self.assertNotIn("--tos", cmd)
        # No CREM gateways, no reporter: off, and host mode.
        for mode in ("off", "host"):
            cmd = self.topo_args(["--bottleneck", "20:100", "--reporter", "core"], mode)
            self.assertIn("--bottleneck", cmd)
            self.assertNotIn("--reporter", cmd)
        cmd = self.topo_args(["--bottleneck", "20:1000:ecn"], "adaptive")
        self.assertEqual(cmd[cmd.index("--tos") + 1], "2")
        self.assertNotIn("--reporter", cmd)
        cmd = self.topo_args([], "adaptive")
        self.assertFalse({"--bottleneck", "--reporter", "--tos"} & set(cmd))

    def test_recorded_and_printed(self):
        args = parse("--trials", "1", "--iters", "20", "--bottleneck", "20:100",
                     "--reporter", "core")
        runs = []
        for mode, loss, d in CELLS:
            cell = tempfile.mkdtemp()
            self.addCleanup(shutil.rmtree, cell)
            shutil.copytree(d, cell, dirs_exist_ok=True)
            with open(os.path.join(cell, "core.tc.json"), "w") as f:
                json.dump([{"kind": "tbf", "drops": 40, "packets": 900}], f)
            if mode != "off":
                with open(os.path.join(cell, "stats.core.json"), "w") as f:
                    json.dump({"stats": {"reports-sent": 7}}, f)
            runs += demo.read_cell(args, mode, loss, 10, cell)
        demo.finish(runs)
        off, fixed = runs[0], next(r for r in runs if r["mode"] == "fixed")
        self.assertEqual((off["bottleneck"], off["reporter"], off["bottleneck_drops"],
                          off["bottleneck_marks"], off["reports_sent"]),
                         ("20:100", "off", 40, 0, None))
        self.assertEqual((fixed["reporter"], fixed["reports_sent"]), ("core", 7))
        doc = demo.document(args, ["off", "fixed"], {}, runs)
        self.assertEqual((doc["params"]["bottleneck"], doc["params"]["reporter"]),
                         ("20:100", "core"))
        out = io.StringIO()
        with redirect_stdout(out):
            demo.print_table(args, runs)
        lines = out.getvalue().splitlines()
        head = next(x for x in lines if x.startswith("RDMA over"))
        self.assertIn("; bottleneck 20 Mbit/s, 100 KB tail drop at core, reporter core; ", head)
        self.assertIn("fixed @ 1%, rtt 10 ms: the bottleneck dropped 40, CE-marked 0; "
                      "reporter core, 7 PATH_REPORTs sent", lines)
        self.assertIn("off @ 0%, rtt 10 ms: the bottleneck dropped 40, CE-marked 0; reporter off",
                      lines)

    def test_without_a_bottleneck_nothing_changes(self):
        args = parse("--trials", "1", "--iters", "20")
        run = demo.read_cell(args, "fixed", 1.0, 10, CELLS[2][2])[0]
        self.assertEqual((run["bottleneck"], run["reporter"]), (None, "off"))
        self.assertNotIn("bottleneck_drops", run)
        self.assertEqual(demo.bottleneck_text(args), "")
