#!/usr/bin/env python3
"""vm/check.sh's demo-short: what the short demo must leave in its results
directory (DIR, its --results-dir): a demo-*.json with every cell of the
defaults (off @ 0 %, off, fixed and adaptive @ 1 %), two rows each, and its
figure beside it, a PNG and an SVG (vm/demo.py only warns when it cannot
draw; make check fails then). vm/tests/test_demo_sweep.py runs it.

  vm/demo_short_check.py DIR

Exit status 0 with one line saying what it found, else 1 with the problem.
"""
import glob
import json
import os
import sys

CELLS = {("off", 0.0), ("off", 1.0), ("fixed", 1.0), ("adaptive", 1.0), ("sr", 1.0),
         ("both", 1.0)}
# Each figure file by the signature its format starts with (an SVG after
# matplotlib's XML declaration and DOCTYPE).
FIGURE = ((".png", b"\x89PNG\r\n\x1a\n", "a PNG image"), (".svg", b"<svg", "an SVG image"))


def check(d):
    """The line saying what DIR holds; ValueError with the problem."""
    js = sorted(j for j in glob.glob(os.path.join(d, "demo-*.json"))
                if not j.endswith(".partial.json"))  # an interrupted run's
    if not js:
        raise ValueError(f"no demo-*.json in {d}")
    with open(js[0]) as f:
        runs = json.load(f)["runs"]
    cells = {(r["mode"], r["loss_pct"]) for r in runs}
    if cells != CELLS or len(runs) != 2 * len(CELLS):
        raise ValueError(f"{js[0]} has cells {sorted(cells)}, {len(runs)} rows")
    base = os.path.splitext(js[0])[0]
    for ext, magic, kind in FIGURE:
        try:
            with open(base + ext, "rb") as f:
                head = f.read(1024)
        except OSError as e:
            raise ValueError(f"no figure {base + ext} ({e.strerror}); see the demo's "
                             f"'figure skipped' line") from None
        if magic not in head:
            raise ValueError(f"{base + ext} is not {kind}")
    return f"{js[0]}: {len(runs)} rows; figure {base}.png and .svg"


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        print(f"demo-short: {check(argv[1])}")
    except (ValueError, OSError, KeyError) as e:
        print(f"demo-short: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
