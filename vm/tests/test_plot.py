"""vm/plot.py, the demo's figure, on the recorded demo JSON (fixtures/) and on
sweeps derived from it.

What is drawn (prepare(): every cell a point, a cell without a completed
trial marked, never left out) is tested without matplotlib; drawing the files
needs it (Debian's python3-matplotlib) and is skipped, with the reason, where
this interpreter cannot import it.

Run: python3 -m unittest discover -s vm/tests
"""
import copy
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

from recorded import DEMO_JSON, FIX, FIXED, VM
import demo  # noqa: E402  (after recorded: it puts vm/ on the path)
import plot  # noqa: E402
import results  # noqa: E402

try:
    plot.pyplot()
    NO_MATPLOTLIB = None
except plot.NoMatplotlib as e:
    NO_MATPLOTLIB = str(e)


SIM_JSON = os.path.join(FIX, "sim-demo.json")


def recorded():
    return results.demo_doc(DEMO_JSON)


def run_of(doc, mode, test, loss):
    return next(r for r in doc["runs"]
                if (r["mode"], r["test"], r["loss_pct"]) == (mode, test, loss))


def not_completed(run):
    """RUN as demo.py writes a cell none of whose trials completed (every
    transfer ran into its timeout)."""
    r = copy.deepcopy(run)
    r.update(completed=0, not_completed=r["trials"], goodput_mbps=0.0, completion_s=None)
    for t in r["trial_results"]:
        t.update(completed=False, seconds=None, mbps=0.0)
    return r


def sweep_doc():
    """The recorded run as if swept: every lossy cell again at 2 % and 5 %,
    off @ 2 % with no completed trial, a later mode "fec2" (not in MODE_STYLE), and all of it
    again at 50 ms RTT."""
    doc = recorded()
    lossy = [r for r in doc["runs"] if r["loss_pct"] == 1.0]
    extra = [dict(copy.deepcopy(r), loss_pct=x) for x in (2.0, 5.0) for r in lossy]
    extra = [not_completed(r) if (r["mode"], r["loss_pct"]) == ("off", 2.0) else r
             for r in extra]
    sr = [dict(copy.deepcopy(r), mode="fec2") for r in lossy + extra if r["mode"] == "fixed"]
    runs = doc["runs"] + extra + sr
    doc["runs"] = runs + [dict(copy.deepcopy(r), rtt_ms=50) for r in runs]
    return doc


def panel(prep, test, rtt=10):
    return next(p for p in prep["panels"] if (p["test"], p["rtt"]) == (test, rtt))


def line(pnl, mode):
    return next(x for x in pnl["lines"] if x["mode"] == mode)


class Prepare(unittest.TestCase):
    """What the figure shows, decided without matplotlib."""

    def test_recorded_run(self):
        doc = recorded()
        prep = plot.prepare(doc)
        self.assertEqual((prep["rtts"], prep["tests"], prep["losses"], prep["xscale"]),
                         ([10], ["write_bw", "rping"], [0.0, 1.0], ("linear", None)))
        self.assertEqual([m for m, _, _ in prep["modes"]], ["off", "fixed", "adaptive"])
        wb = panel(prep, "write_bw")
        self.assertEqual(wb["label"], "ib_write_bw")
        self.assertEqual(wb["reference"], {"goodput": 2.054, "time": 5.104})  # off @ 0 %
        off = line(wb, "off")
        self.assertEqual([p["loss"] for p in off["points"]], [0.0, 1.0])
        self.assertEqual(off["points"][1]["goodput"], (1.696, 1.696, 1.696))  # one trial
        self.assertEqual(len(off["segments"]), 1)
        fixed = line(wb, "fixed")["points"]
        self.assertEqual((fixed[0]["state"], fixed[0]["time"]), ("done", (5.598, 5.598, 5.598)))
        self.assertEqual(panel(prep, "rping")["reference"], {"goodput": 0.221, "time": 7.401})
        # Every row of the JSON is one point of the figure.
        self.assertEqual(sum(len(x["points"]) for p in prep["panels"] for x in p["lines"]),
                         len(doc["runs"]))
        for want in ("rtt 10 ms", "rate unlimited", "1 trial(s)", "timeout 60 s",
                     "k=16 m=2", "commit 9178bfca07", "QEMU TCG"):
            self.assertIn(want, prep["title"])

    def test_bottleneck_in_the_title(self):
        # demo.py --bottleneck/--reporter: named in the title; not without.
        self.assertNotIn("bottleneck", plot.prepare(recorded())["title"])
        doc = recorded()
        doc["params"].update(bottleneck="20:100", reporter="core")
        self.assertIn("rate unlimited, bottleneck 20 Mbit/s 100 KB, reporter core, 1 trial(s)",
                      plot.prepare(doc)["title"])
        doc["params"].update(bottleneck="20:1000:ecn", reporter="off")
        self.assertIn("bottleneck 20 Mbit/s 1000 KB ECN, reporter off,",
                      plot.prepare(doc)["title"])

    def test_a_cell_that_did_not_complete_is_drawn_not_omitted(self):
        doc = recorded()
        i = doc["runs"].index(run_of(doc, "fixed", "write_bw", 1.0))
        doc["runs"][i] = not_completed(doc["runs"][i])
        fixed = line(panel(plot.prepare(doc), "write_bw"), "fixed")
        self.assertEqual(len(fixed["points"]), 1)
        p = fixed["points"][0]
        self.assertEqual((p["state"], p["completed"], p["trials"], p["goodput"], p["time"]),
                         ("none", 0, 1, (0.0, 0.0, 0.0), None))
        self.assertEqual(fixed["segments"], [])  # no line through it
        self.assertIn("fixed", [m for m, _, _ in plot.prepare(doc)["modes"]])  # in the legend

    def test_a_line_breaks_at_a_cell_that_did_not_complete(self):
        off = line(panel(plot.prepare(sweep_doc()), "rping"), "off")
        self.assertEqual([p["state"] for p in off["points"]], ["done", "done", "none", "done"])
        self.assertEqual([[p["loss"] for p in s] for s in off["segments"]],
                         [[0.0, 1.0], [5.0]])

    def test_no_reference_when_the_loss_free_cell_did_not_complete(self):
        doc = recorded()
        i = doc["runs"].index(run_of(doc, "off", "rping", 0.0))
        doc["runs"][i] = not_completed(doc["runs"][i])
        prep = plot.prepare(doc)
        self.assertIsNone(panel(prep, "rping")["reference"])
        self.assertEqual(line(panel(prep, "rping"), "off")["points"][0]["state"], "none")
        self.assertIsNotNone(panel(prep, "write_bw")["reference"])

    def test_some_trials_completed(self):
        # Three trials, two completed: medians are the run's, bars the
        # completed trials' min and max, the failed trial left out.
        doc = recorded()
        r = run_of(doc, "adaptive", "write_bw", 1.0)
        t = r["trial_results"][0]
        r["trial_results"] = [dict(t, trial=1, mbps=1.5, seconds=7.0),
                              dict(t, trial=2, mbps=2.0, seconds=5.2),
                              dict(t, trial=3, completed=False, mbps=0.0, seconds=None)]
        r.update(trials=3, completed=2, goodput_mbps=1.75, completion_s=6.1)
        p = line(panel(plot.prepare(doc), "write_bw"), "adaptive")["points"][0]
        self.assertEqual((p["state"], p["completed"], p["trials"]), ("partial", 2, 3))
        self.assertEqual((p["goodput"], p["time"]), ((1.75, 1.5, 2.0), (6.1, 5.2, 7.0)))

    def test_sweep_with_another_mode_and_two_rtts(self):
        prep = plot.prepare(sweep_doc())
        self.assertEqual((prep["rtts"], prep["losses"]), ([10, 50], [0.0, 1.0, 2.0, 5.0]))
        self.assertEqual(len(prep["panels"]), 4)  # (10, 50) x (write_bw, rping)
        modes = {m: (label, colour) for m, label, colour in prep["modes"]}
        self.assertEqual(list(modes), ["off", "fixed", "adaptive", "fec2"])  # known ones first
        self.assertEqual(modes["fec2"][0], "fec2")
        self.assertEqual(len({c for _, c in modes.values()}), 4)  # a colour each
        for rtt in (10, 50):
            sr = line(panel(prep, "write_bw", rtt), "fec2")
            self.assertEqual([p["loss"] for p in sr["points"]], [1.0, 2.0, 5.0])
            self.assertEqual(panel(prep, "write_bw", rtt)["reference"]["goodput"], 2.054)
        self.assertIn("rtt 10, 50 ms", prep["title"])

    def test_x_scale(self):
        self.assertEqual(plot.x_scale([0, 0.1, 0.5, 1, 2, 5]), ("symlog", 0.1))
        self.assertEqual(plot.x_scale([0.0, 1.0]), ("linear", None))
        self.assertEqual(plot.x_scale([0.0]), ("linear", None))
        self.assertEqual(plot.x_scale([1, 2, 5]), ("linear", None))  # less than 10x

    def test_order_known_first(self):
        self.assertEqual(plot.in_order(["b", "sr", "off", "b"], ("off", "fixed")), ["off", "b", "sr"])

    def test_nothing_to_draw(self):
        with self.assertRaises(ValueError):
            plot.prepare({"runs": []})

    def test_results_reader(self):
        self.assertEqual(len(recorded()["runs"]), 8)
        for bad in (os.path.join(FIXED, "stats.gwa.json"),  # JSON, not a demo's
                    os.path.join(FIXED, "results.txt"),  # not JSON
                    os.path.join(FIX, "no-such.json")):
            with self.assertRaises(ValueError):
                results.demo_doc(bad)


class Draw(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def assertFigure(self, files):
        self.assertEqual([os.path.splitext(f)[1] for f in files], [".png", ".svg"])
        with open(files[0], "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        with open(files[1]) as f:
            self.assertIn("<svg", f.read())
        for f in files:
            self.assertGreater(os.path.getsize(f), 10000, f)

    @unittest.skipIf(NO_MATPLOTLIB, NO_MATPLOTLIB)
    def test_recorded_run_same_svg_twice(self):
        a = plot.draw(recorded(), os.path.join(self.tmp, "a"))
        self.assertFigure(a)
        b = plot.draw(recorded(), os.path.join(self.tmp, "b"))
        with open(a[1]) as fa, open(b[1]) as fb:
            self.assertEqual(fa.read(), fb.read())  # a committed SVG changes with the data only

    @unittest.skipIf(NO_MATPLOTLIB, NO_MATPLOTLIB)
    def test_sweep_with_a_cell_that_did_not_complete(self):
        self.assertFigure(plot.draw(sweep_doc(), os.path.join(self.tmp, "sweep")))

    @unittest.skipIf(NO_MATPLOTLIB, NO_MATPLOTLIB)
    def test_cli(self):
        prefix = os.path.join(self.tmp, "sub", "fig")
        p = subprocess.run([sys.executable, os.path.join(VM, "plot.py"), DEMO_JSON, "-o", prefix],
                           capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout.split()), (0, [prefix + ".png", prefix + ".svg"]))
        self.assertFigure([prefix + ".png", prefix + ".svg"])

    def test_cli_refuses_what_is_not_a_demo_json(self):
        bad = os.path.join(FIXED, "stats.gwa.json")
        p = subprocess.run([sys.executable, os.path.join(VM, "plot.py"), bad, "-o",
                            os.path.join(self.tmp, "x")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("not a demo results JSON", p.stderr)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_without_matplotlib(self):
        # As on a machine without python3-matplotlib: import fails.
        with mock.patch.dict(sys.modules, {"matplotlib": None}):
            with self.assertRaises(plot.NoMatplotlib) as e:
                plot.draw(recorded(), os.path.join(self.tmp, "x"))
        self.assertIn("install python3-matplotlib", str(e.exception))
        self.assertEqual(os.listdir(self.tmp), [])


class DemoFigure(unittest.TestCase):
    """demo.py's figure step: a figure beside the JSON, or one line saying why
    not; never an exception (the table and JSON are the demo's job)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.json = os.path.join(self.tmp, "demo-X.json")

    def draw(self):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            demo.draw(recorded(), self.json)
        return out.getvalue(), err.getvalue()

    def test_skipped_without_matplotlib(self):
        with mock.patch.dict(sys.modules, {"matplotlib": None}):
            out, err = self.draw()
        self.assertEqual(out, "")
        self.assertEqual(len(err.splitlines()), 1)
        self.assertRegex(err, r"^\[demo\] figure skipped: matplotlib is not importable .*"
                              r"redraw with: vm/plot.py .*demo-X.json$")

    def test_skipped_when_drawing_fails(self):
        with mock.patch.object(plot, "draw", side_effect=RuntimeError("boom")):
            out, err = self.draw()
        self.assertEqual(out, "")
        self.assertIn("figure skipped: drawing failed (RuntimeError: boom)", err)

    @unittest.skipIf(NO_MATPLOTLIB, NO_MATPLOTLIB)
    def test_beside_the_json(self):
        out, err = self.draw()
        want = [os.path.join(self.tmp, "demo-X." + ext) for ext in ("png", "svg")]
        self.assertEqual((out.strip(), err), (f"figure: {want[0]}, {want[1]}", ""))
        self.assertTrue(all(os.path.getsize(f) for f in want))


class Simulation(unittest.TestCase):
    """crem-sim --demo's JSON (fixtures/sim-demo.json): the same figure,
    every label saying it is a simulation."""

    def test_labelled_simulation(self):
        prep = plot.prepare(results.demo_doc(SIM_JSON))
        self.assertTrue(prep["simulation"])
        self.assertTrue(prep["title"].startswith("SIMULATION (crem-sim, not measured): one "
                                                 "flow paced at 20000 packets/s, rtt 10 ms"),
                        prep["title"])
        self.assertEqual([m for m, _, _ in prep["modes"]], ["off", "fixed", "adaptive"])
        for _, label, _ in prep["modes"]:
            self.assertIn("simulated", label)
        [panel] = prep["panels"]
        self.assertEqual((panel["label"], panel["rtt"]), ("simulated flow (crem-sim)", 10.0))
        self.assertEqual(prep["losses"], [0.0, 1.0, 5.0])
        self.assertIsNotNone(panel["reference"])  # off @ 0 %
        # Every cell a point, 2 seeds each, all delivered.
        self.assertEqual({(ln["mode"], len(ln["points"])) for ln in panel["lines"]},
                         {("off", 3), ("fixed", 3), ("adaptive", 3)})
        self.assertTrue(all(p["state"] == "done" and p["trials"] == 2
                            for ln in panel["lines"] for p in ln["points"]))

    def test_a_measured_run_is_not(self):
        prep = plot.prepare(recorded())
        self.assertFalse(prep["simulation"])
        self.assertNotIn("SIMULATION", prep["title"])
        self.assertFalse(any("simulated" in label for _, label, _ in prep["modes"]))

    @unittest.skipIf(NO_MATPLOTLIB, NO_MATPLOTLIB)
    def test_drawn_with_a_watermark(self):
        plt = plot.pyplot()
        fig = plot.figure(plt, plot.prepare(results.demo_doc(SIM_JSON)))
        try:
            self.assertIn("SIMULATION", [t.get_text() for t in fig.texts])
            self.assertTrue(fig._suptitle.get_text().startswith("SIMULATION"))
        finally:
            plt.close(fig)
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        files = plot.draw(results.demo_doc(SIM_JSON), os.path.join(tmp, "sim"))
        self.assertEqual([os.path.getsize(f) > 10000 for f in files], [True, True])


if __name__ == "__main__":
    unittest.main()
