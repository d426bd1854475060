#!/usr/bin/env python3
"""Tests of netlink/gen_rust.py (run by netlink/gen.sh --check, make check's
netlink-spec step; alone: python3 netlink/test_gen_rust.py). The committed
rust/core/src/nl/generated.rs is current; an edited copy of the spec makes
--check fail and shows in the output; what the generator cannot express is
refused, not dropped."""

import copy
import os
import subprocess
import sys
import tempfile
import unittest

import yaml

sys.dont_write_bytecode = True  # no __pycache__ in netlink/ from the import below

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_rust  # noqa: E402

GEN = os.path.join(HERE, "gen_rust.py")


def run(*args):
    return subprocess.run([sys.executable, GEN, *args], capture_output=True, text=True)


class GenRust(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.spec, cls.spdx = gen_rust.load(gen_rust.SPEC)

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="gen-rust-test-")
        self.addCleanup(self.tmp.cleanup)

    def spec_copy(self):
        return copy.deepcopy(self.spec)

    def write_spec(self, spec):
        path = os.path.join(self.tmp.name, "crem.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write("# SPDX-License-Identifier: " + self.spdx + "\n")
            yaml.safe_dump(spec, f, sort_keys=False)
        return path

    def attr_set(self, spec, name):
        return next(s for s in spec["attribute-sets"] if s["name"] == name)

    def refused(self, spec, words):
        with self.assertRaises(gen_rust.SpecError) as e:
            gen_rust.generate(spec, self.spdx)
        for w in words:
            self.assertIn(w, str(e.exception))

    def test_committed_file_is_current(self):
        r = run("--check")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "")

    def test_a_new_counter_makes_check_fail(self):
        spec = self.spec_copy()
        fs = self.attr_set(spec, "flow-stats")
        fs["attributes"].append({"name": "new-counter", "type": "uint", "doc": "A new one."})
        path = self.write_spec(spec)
        r = run("--spec", path, "--check")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("is stale", r.stderr)
        # Ids from 1, none given: the new one's is the set's length.
        nid = len(fs["attributes"])
        self.assertIn(f"+pub const FLOW_STATS_NEW_COUNTER: u16 = {nid};", r.stdout)
        # Written elsewhere: the counter table and its index follow.
        out = os.path.join(self.tmp.name, "generated.rs")
        r = run("--spec", path, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        n = sum(1 for a in fs["attributes"] if a["type"] == "uint")
        self.assertIn(f"    pub const NEW_COUNTER: usize = {n - 1};\n", text)
        self.assertIn(f"    pub const N: usize = {n};\n", text)
        self.assertIn('doc: "A new one.",', text)
        self.assertEqual(run("--spec", path, "--out", out, "--check").returncode, 0)

    def test_a_changed_check_or_enum_makes_check_fail(self):
        spec = self.spec_copy()
        cfg = self.attr_set(spec, "config")
        next(a for a in cfg["attributes"] if a["name"] == "hold-us")["checks"]["max"] = 2000000
        r = run("--spec", self.write_spec(spec), "--check")
        self.assertEqual(r.returncode, 1)
        self.assertIn("+            max: Some(2_000_000),", r.stdout)
        spec = self.spec_copy()
        role = next(d for d in spec["definitions"] if d["name"] == "role")
        role["entries"].append("relay")
        r = run("--spec", self.write_spec(spec), "--check")
        self.assertEqual(r.returncode, 1)
        self.assertIn("+    pub const RELAY: u8 = 3;", r.stdout)

    def test_names(self):
        text = gen_rust.generate(self.spec_copy(), self.spdx)
        # An attribute named like an enum table gets _ATTR, the enum keeps it.
        self.assertIn("pub const FLOW_STATE_ATTR: u16 = 6;", text)
        self.assertIn("pub const FLOW_STATE: &[&str] =", text)
        self.assertIn("pub const FLOW_KIND_ATTR: u16 = 21;", text)
        self.assertIn("    (CMD_FLOW_CHANGE_NTF, &FLOW_SET),", text)
        self.assertIn("pub const CMD_CONFIG_GET: u8 = 1;", text)
        self.assertIn("pub mod flow_stat {", text)
        self.assertIn("Do not edit", text)
        self.assertEqual(text, gen_rust.generate(self.spec_copy(), self.spdx))

    def test_enum_bounds_are_derived(self):
        """An enum attribute's max is its last value (ynl-gen-c's
        NLA_POLICY_MAX), an enum-as-flags one's the mask of its bits."""
        text = gen_rust.generate(self.spec_copy(), self.spdx)
        role = text[text.index('name: "role",\n'):]
        self.assertIn("max: Some(2),", role[:role.index("doc:")])
        schemes = text[text.index('name: "schemes",\n'):]
        self.assertIn("max: Some(7),", schemes[:schemes.index("doc:")])

    def test_refuses_what_it_cannot_express(self):
        spec = self.spec_copy()
        self.attr_set(spec, "flow")["attributes"].append({"name": "label", "type": "string"})
        self.refused(spec, ["flow.label", "type string"])

        spec = self.spec_copy()
        self.attr_set(spec, "stats")["attributes"].append({"name": "ratio", "type": "u32"})
        self.refused(spec, ["stats.ratio", "counter set"])

        spec = self.spec_copy()
        next(a for a in self.attr_set(spec, "config")["attributes"]
             if a["name"] == "k")["checks"]["max-len"] = 3
        self.refused(spec, ["config.k checks", "max-len"])

        spec = self.spec_copy()
        self.attr_set(spec, "flow")["attributes"][1]["sub-type"] = "u32"
        self.refused(spec, ["sub-type"])

        # A bound the generator derives from the enum, written by hand.
        spec = self.spec_copy()
        next(a for a in self.attr_set(spec, "config")["attributes"]
             if a["name"] == "role")["checks"] = {"max": 2}
        self.refused(spec, ["config.role", "derives it from the enum"])

        spec = self.spec_copy()
        spec["attribute-sets"].append({"name": "flow-get", "subset-of": "flow", "attributes": []})
        self.refused(spec, ["subset-of"])

        # A notification of an op without a set; an op of a set that is not.
        spec = self.spec_copy()
        ops = spec["operations"]["list"]
        next(o for o in ops if o["name"] == "stats-reset").pop("attribute-set")
        ops.append({"name": "stats-reset-ntf", "notify": "stats-reset", "mcgrp": "events"})
        self.refused(spec, ["stats-reset-ntf", "no attribute-set"])
        spec = self.spec_copy()
        next(o for o in spec["operations"]["list"]
             if o["name"] == "flow-del")["attribute-set"] = "flows"
        self.refused(spec, ["flow-del", "no attribute set 'flows'"])

        spec = self.spec_copy()
        next(d for d in spec["definitions"] if d["name"] == "side")["value-start"] = 1
        self.refused(spec, ["enum side", "values 0, 1, 2"])

        spec = self.spec_copy()
        spec["definitions"].append({"type": "flags", "name": "opts", "entries": ["a"]})
        self.refused(spec, ["opts", "flags"])

        # Two attributes of one set whose names differ only in - and _.
        spec = self.spec_copy()
        self.attr_set(spec, "peer")["attributes"].append({"name": "prefix_len", "type": "u8"})
        self.refused(spec, ["PEER_PREFIX_LEN", "names both"])

        spec = self.spec_copy()
        self.attr_set(spec, "flow")["attributes"].append(
            {"name": "x", "type": "nest", "nested-attributes": "nope"})
        self.refused(spec, ["flow.x", "no attribute set nope"])

    def test_a_refusal_exits_2_with_the_reason(self):
        spec = self.spec_copy()
        self.attr_set(spec, "flow")["attributes"].append({"name": "label", "type": "string"})
        r = run("--spec", self.write_spec(spec), "--check")
        self.assertEqual(r.returncode, 2)
        self.assertIn("flow.label: type string", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
