"""The progress lines of long runs (vm/progress.sh: vm/check.sh's after each
step, the fuzzers' per target) and vm/check.sh's plan of steps (the total
of its progress line), run through bash without running a step.

Run: python3 -m unittest discover -s vm/tests
"""
import os
import shutil
import subprocess
import tempfile
import unittest

from recorded import VM

PROGRESS = os.path.join(VM, "progress.sh")


def sh(script, *args):
    """SCRIPT's stdout, run by bash with vm/progress.sh sourced."""
    r = subprocess.run(["bash", "-c", f'. "{PROGRESS}"; {script}', "_", *args],
                       capture_output=True, text=True, check=True)
    return r.stdout


class Durations(unittest.TestCase):
    def test_as_the_demo_shows_them(self):
        for s, want in ((0, "0s"), (42, "42s"), (59, "59s"), (60, "1m00s"), (307, "5m07s"),
                        (3599, "59m59s"), (3600, "1h00m"), (3720, "1h02m")):
            with self.subTest(s=s):
                self.assertEqual(sh('duration "$1"', str(s)), want)


class CheckProgress(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="crem-progress-test-")
        self.addCleanup(shutil.rmtree, self.dir)
        self.prev = os.path.join(self.dir, "prev")

    def test_without_a_previous_run_no_estimate(self):
        self.assertEqual(sh('check_progress 5 12 800 "$(times_left "$1" cargo-test)"', self.prev),
                         "[check] 5/12 done, 13m20s elapsed, time left ?\n")

    def test_estimate_is_the_previous_runs_time_after_that_step(self):
        # A previous run's lines as vm/check.sh writes them: two lanes overlap,
        # so what is left after a step is the last end minus its end.
        for name, secs, end in (("cargo-test", 90, 200), ("kunit-qemu", 14, 300),
                                ("flows-qemu", 169, 470), ("line-edges", 257, 560),
                                ("e2e-host", 65, 1240)):
            sh('times_record "$1" "$2" "$3" "$4"', self.prev, name, str(secs), str(end))
        with open(self.prev) as f:
            self.assertEqual(f.readline(), "cargo-test 90 200\n")
        self.assertEqual(sh('times_left "$1" cargo-test', self.prev), "1040\n")
        self.assertEqual(sh('times_left "$1" flows-qemu', self.prev), "770\n")
        self.assertEqual(sh('times_left "$1" e2e-host', self.prev), "0\n")
        self.assertEqual(sh('times_left "$1" new-step', self.prev), "")  # not in it: none
        self.assertEqual(sh('check_progress 5 12 800 "$(times_left "$1" flows-qemu)"', self.prev),
                         "[check] 5/12 done, 13m20s elapsed, about 12m50s left\n")

    def test_record_never_fails_the_run(self):
        out = subprocess.run(["bash", "-c", f'. "{PROGRESS}"; times_record /nonexistent/t a 1 2; '
                              'echo rc $?'], capture_output=True, text=True)
        self.assertEqual(out.stdout, "rc 0\n")


class FuzzProgress(unittest.TestCase):
    def test_time_left_is_this_and_the_later_targets(self):
        self.assertEqual(sh("fuzz_progress wire_decode 2 9 60 65"),
                         "[fuzz] target 2/9 (wire_decode), 1m05s elapsed, about 8m00s left\n")
        self.assertEqual(sh("fuzz_progress last 9 9 60 600"),
                         "[fuzz] target 9/9 (last), 10m00s elapsed, about 1m00s left\n")


class FuzzKernelProgress(unittest.TestCase):
    def test_phases(self):
        line = 'fuzz_kernel_progress wire+netlink 120 "$1" "$2"'
        head = "[fuzz] fuzz-kernel (wire+netlink): "
        self.assertEqual(sh(line, "95", ""),
                         head + "booting and setting up, 1m35s elapsed, then 2m00s of fuzzing\n")
        self.assertEqual(sh(line, "200", "45"),
                         head + "fuzzing 45/120 s, 3m20s elapsed, about 1m15s of fuzzing left\n")
        self.assertEqual(sh(line, "300", "120"),
                         head + "fuzzing done, checking the module, 5m00s elapsed\n")


class CheckPlan(unittest.TestCase):
    """vm/check.sh with CREM_CHECK_PLAN=1: the steps its progress line counts."""

    def plan(self, variant, **env):
        logs = tempfile.mkdtemp(prefix="crem-plan-test-")
        self.addCleanup(shutil.rmtree, logs, True)
        e = dict(os.environ, CREM_CHECK_PLAN="1", CREM_CHECK_LOGS=logs, CREM_CHECK_DEBUG="0",
                 CARGO_TARGET_DIR=os.path.join(VM, "..", "target"))
        e.update(env)
        r = subprocess.run([os.path.join(VM, "check.sh"), variant], capture_output=True,
                           text=True, env=e, check=True)
        return r.stdout.split()

    def test_make_check(self):
        steps = self.plan("normal")
        self.assertEqual(steps[:3], ["cargo-fmt", "results-py", "kernel-rustfmt"])
        self.assertEqual(len(steps), len(set(steps)))
        for s in ("install-check", "demo-short", "kunit-qemu", "flows-qemu", "e2e-adversarial"):
            self.assertIn(s, steps)
        # README: crem-ctl-qemu and e2e-smoke are make check-full's only.
        self.assertNotIn("crem-ctl-qemu", steps)
        self.assertNotIn("e2e-smoke", steps)
        self.assertEqual(steps[-3:], ["e2e-host", "e2e-nvme", "e2e-ipv6"])

    def test_planning_leaves_a_running_checks_logs(self):
        # Stop 60: a plan listed beside a running check-full wiped its
        # logs (CREM_CHECK_LOGS), and the lane then running failed.
        logs = tempfile.mkdtemp(prefix="crem-plan-running-")
        self.addCleanup(shutil.rmtree, logs, True)
        with open(os.path.join(logs, "times"), "w") as f:
            f.write("cargo-fmt 0 1\n")
        with open(os.path.join(logs, "line-edges.log"), "w") as f:
            f.write("running\n")
        e = dict(os.environ, CREM_CHECK_PLAN="1", CREM_CHECK_LOGS=logs, CREM_CHECK_DEBUG="0")
        subprocess.run([os.path.join(VM, "check.sh"), "full"], capture_output=True,
                       text=True, env=e, check=True)
        self.assertEqual(sorted(os.listdir(logs)), ["line-edges.log", "times"])
        with open(os.path.join(logs, "times")) as f:
            self.assertEqual(f.read(), "cargo-fmt 0 1\n")

    def test_ci_and_full_add_their_steps(self):
        normal = self.plan("normal")
        ci = self.plan("normal", CREM_CHECK_DEBUG="1")
        self.assertIn("debug-kunit-qemu", ci)
        self.assertIn("debug-e2e-adversarial", ci)
        self.assertNotIn("e2e-adversarial", ci)  # the debug kernel's superset instead
        full = self.plan("full")
        self.assertEqual(full[:len(normal)], normal)
        self.assertIn("crem-ctl-qemu", full)
        self.assertEqual(full[-1], "debug-e2e-smoke")


if __name__ == "__main__":
    unittest.main()
