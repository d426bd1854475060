#!/usr/bin/env python3
"""The demo's figure: goodput and completion time against loss, one line per
mode, from a results JSON that vm/demo.py wrote (read by vm/results.py), or
that `crem-sim --demo FILE` wrote from simulation ("simulation": true: the
title, every label and a watermark say SIMULATION).

  vm/plot.py results/demo-<UTC timestamp>.json [-o PREFIX]

writes PREFIX.png and PREFIX.svg; PREFIX defaults to the JSON's path without
.json, i.e. beside it, where vm/demo.py puts the figure of its run.

Layout: one column per test (ib_write_bw, rping -V) and, for each RTT in the
JSON, two rows: goodput (Mbit/s) and completion time (s) against the random
loss per WAN direction. One line per mode: off (rxe's own go-back-N, no
crem.ko), fixed, adaptive, and any other mode the JSON has.
  point        the median over the completed trials (the table's number)
  error bar    min..max over the completed trials, when more than one
  "k/N"        beside a point: only k of the N trials completed
  x  "0/N"     no trial completed: goodput drawn as 0, completion time at the
               top of its axis (it ran into the timeout); lines are broken
               there, not bridged
  dashed grey  the loss-free reference (off @ 0 %) of the same test and RTT
The x axis is logarithmic beyond the smallest non-zero loss when the losses
span a factor of 10 or more (0, 0.1, 0.5, 1, 2, 5 stay apart), linear else.

Exit status: 0 drawn, 1 the JSON is not a demo's or matplotlib is missing
(Debian's python3-matplotlib, installed by make setup; the Agg backend, no
display), 2 usage. prepare() decides what is drawn without matplotlib.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import results  # noqa: E402  (vm/results.py: the one reader of results)

# The known modes' legend labels and colours, so that a mode looks the same in
# every figure; a mode not listed (a later one) is labelled by its name and
# takes the next spare colour.
MODE_STYLE = {
    "off": ("off (rxe go-back-N, no CREM)", "tab:gray"),
    "fixed": ("CREM fixed k/m", "tab:blue"),
    "adaptive": ("CREM adaptive", "tab:orange"),
    "sr": ("CREM fixed k/m, selective repeat", "tab:green"),
    "both": ("CREM fixed k/m, coded + selective repeat", "tab:purple"),
}
# A simulated document's (crem-sim --demo, "simulation": true): the same
# colours, every label saying simulated.
SIM_MODE_STYLE = {
    "off": ("off (simulated RDMA NAK/resend, no CREM)", "tab:gray"),
    "fixed": ("CREM fixed k/m (simulated)", "tab:blue"),
    "adaptive": ("CREM adaptive (simulated)", "tab:orange"),
}
SPARE_COLOURS = ("tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")
TEST_LABEL = {"write_bw": "ib_write_bw", "rping": "rping -V",
              "sim": "simulated flow (crem-sim)"}
METRICS = (("goodput", "goodput, Mbit/s"), ("time", "completion time, s"))


class NoMatplotlib(Exception):
    """matplotlib cannot be imported: the figure cannot be drawn (the reason)."""


# ---- what to draw (no matplotlib) ----------------------------------------

def in_order(values, known=()):
    """VALUES once each: the KNOWN ones first in that order, then the others
    as they first appear (a JSON's runs are in the demo's table order)."""
    seen = list(dict.fromkeys(values))
    return [v for v in known if v in seen] + [v for v in seen if v not in known]


def spread(run, key):
    """(median, min, max) of a run's completed trials for KEY ("mbps" or
    "seconds"); the median is the run's own (the table's), min and max come
    from trial_results, or are the median when the JSON has none."""
    med = run["goodput_mbps"] if key == "mbps" else run["completion_s"]
    vals = [t[key] for t in run.get("trial_results") or []
            if t.get("completed") and t.get(key) is not None]
    return (med, min(vals), max(vals)) if vals else (med, med, med)


def point(run):
    """One cell of one test as drawn: its loss, how many trials completed,
    and "state": done (all completed), partial (some: labelled k/N) or none
    (no trial completed: an x, goodput 0 and no completion time)."""
    done, trials = run["completed"], run["trials"]
    state = "none" if done == 0 else "partial" if done < trials else "done"
    return {"loss": run["loss_pct"], "completed": done, "trials": trials, "state": state,
            "goodput": spread(run, "mbps") if done else (0.0, 0.0, 0.0),
            "time": spread(run, "seconds") if done else None}


def segments(points):
    """The runs of consecutive points with a completed trial, each drawn as one
    line, so that a line never bridges a cell that did not complete."""
    out, cur = [], []
    for p in points:
        if p["state"] == "none":
            out, cur = out + ([cur] if cur else []), []
        else:
            cur.append(p)
    return out + ([cur] if cur else [])


def x_scale(losses):
    """("symlog", the smallest non-zero loss) when the non-zero losses span a
    factor of 10 or more, so small losses do not crowd at 0; else ("linear",
    None)."""
    nz = [x for x in losses if x > 0]
    return ("symlog", min(nz)) if nz and max(nz) >= 10 * min(nz) else ("linear", None)


def title(doc, rtts):
    p = doc.get("params") or {}
    rate = p.get("rate_mbit")
    commit = doc.get("git_commit")
    if doc.get("simulation"):
        return (f"SIMULATION (crem-sim, not measured): one flow paced at "
                f"{p.get('pps', '?')} packets/s, rtt {', '.join(f'{r:g}' for r in rtts)} ms, "
                f"links {rate or '?'} Mbit/s, {p.get('trials', '?')} seed(s) per cell, "
                f"CREM k={p.get('k', '?')} m={p.get('m', '?')}\n"
                f"commit {commit[:10] if commit else 'unknown'}, {doc.get('created_utc', '?')}; "
                f"medians, bars min-max over seeds; time: sending plus the last losses' "
                f"recovery; RDMA resends NAKed PSNs only")
    # demo.py --bottleneck R:LIMIT_KB[:ecn] / --reporter: the loss is
    # (also) a core router's queue, which the x axis does not show.
    bn = p.get("bottleneck")
    bn = "" if not bn else (f"bottleneck {bn.split(':')[0]} Mbit/s {bn.split(':')[1]} KB"
                            f"{' ECN' if bn.endswith(':ecn') else ''}, reporter "
                            f"{p.get('reporter', 'off')}, ")
    return (f"RDMA over the emulated WAN ({doc.get('emulation', '?')}): rtt "
            f"{', '.join(map(str, rtts))} ms, rate "
            f"{'unlimited' if not rate else f'{rate} Mbit/s'}, {bn}"
            f"{p.get('trials', '?')} trial(s) per cell, timeout {p.get('timeout_s', '?')} s, "
            f"CREM k={p.get('k', '?')} m={p.get('m', '?')}\n"
            f"commit {commit[:10] if commit else 'unknown'}, {doc.get('created_utc', '?')}; "
            f"medians, bars min-max over completed trials; compare lines, not absolute values")


def panel(runs, rtt, test, style):
    """One (rtt, test) panel of RUNS: {"rtt", "test", "label", "reference"
    ({"goodput", "time"} of off @ 0 %, or None when it is absent or did not
    complete), "lines"}: a line per mode of STYLE that has a run here,
    {"mode", "label", "colour", "points", "segments"}."""
    mine = [r for r in runs if r["rtt_ms"] == rtt and r["test"] == test]
    ref = next((point(r) for r in mine if r["mode"] == "off" and r["loss_pct"] == 0), None)
    lines = []
    for m, (label, colour) in style.items():
        pts = sorted((point(r) for r in mine if r["mode"] == m), key=lambda p: p["loss"])
        if pts:
            lines.append({"mode": m, "label": label, "colour": colour,
                          "points": pts, "segments": segments(pts)})
    return {"rtt": rtt, "test": test, "label": TEST_LABEL.get(test, test),
            "reference": ({"goodput": ref["goodput"][0], "time": ref["time"][0]}
                          if ref and ref["state"] != "none" else None),
            "lines": lines}


def prepare(doc):
    """What the figure shows, as plain data: {"title", "losses" (the x ticks),
    "xscale", "rtts", "tests", "modes" ([(mode, label, colour)]), "panels"
    (one per rtt and test, see panel())}. Every run of the JSON is a point:
    a cell that did not complete is one too, with state "none"."""
    runs = doc["runs"]
    if not runs:
        raise ValueError("the JSON has no runs to draw")
    rtts = sorted({r["rtt_ms"] for r in runs})
    tests = in_order([r["test"] for r in runs], TEST_LABEL)
    modes = in_order([r["mode"] for r in runs], MODE_STYLE)
    simulation = bool(doc.get("simulation"))
    known = SIM_MODE_STYLE if simulation else MODE_STYLE
    spare = iter(SPARE_COLOURS * len(modes))  # never runs out, however many modes
    style = {m: known.get(m) or (m + (" (simulated)" if simulation else ""), next(spare))
             for m in modes}
    losses = sorted({r["loss_pct"] for r in runs})
    return {"title": title(doc, rtts), "simulation": simulation,
            "losses": losses, "xscale": x_scale(losses),
            "rtts": rtts, "tests": tests, "modes": [(m, *style[m]) for m in modes],
            "panels": [panel(runs, rtt, test, style) for rtt in rtts for test in tests]}


# ---- drawing (matplotlib) ------------------------------------------------

def pyplot():
    """matplotlib's pyplot on the Agg backend (files only, no display)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot as plt
    except ImportError as e:
        # Debian's package serves /usr/bin/python3 only: name the interpreter.
        raise NoMatplotlib(f"matplotlib is not importable by {sys.executable} ({e}); "
                           f"install python3-matplotlib (make setup)") from e
    return plt


def not_done_at(ax, metric):
    """Where an x goes, as (y, transform): goodput 0 in data; completion time
    at the top of the axis (the transfer ran into its timeout: longer than
    anything drawn), outside the autoscaling so the completed cells keep the
    axis."""
    if metric == "goodput":
        return 0.0, ax.transData
    return 1.0, ax.get_xaxis_transform()


def draw_line(ax, line, metric, dodge):
    """One mode's points, lines, bars and marks on AX; its error bars are
    shifted DODGE points sideways so that the modes' bars at one loss do not
    hide each other (the points stay at their loss)."""
    from matplotlib.transforms import offset_copy
    c = line["colour"]
    shifted = offset_copy(ax.transData, fig=ax.figure, x=dodge, y=0, units="points")
    for seg in line["segments"]:
        med = [p[metric][0] for p in seg]
        ax.plot([p["loss"] for p in seg], med, color=c, marker="o", ms=4, lw=1.5)
        for p, y in zip(seg, med):
            if p["completed"] > 1:  # one trial has no spread: no zero-length bar
                ax.errorbar([p["loss"]], [y], yerr=[[y - p[metric][1]], [p[metric][2] - y]],
                            fmt="none", ecolor=c, capsize=3, lw=1, transform=shifted)
            if p["state"] == "partial":
                ax.annotate(f"{p['completed']}/{p['trials']}", (p["loss"], y), color=c,
                            fontsize=8, xytext=(4, 4), textcoords="offset points")
    for p in line["points"]:
        if p["state"] == "none":
            y, where = not_done_at(ax, metric)
            ax.plot([p["loss"]], [y], marker="x", ms=10, mew=2.5, color=c, ls="none",
                    clip_on=False, zorder=5, transform=where)
            ax.annotate(f"0/{p['trials']}", (p["loss"], y), xycoords=where, color=c,
                        fontsize=8, fontweight="bold", textcoords="offset points",
                        xytext=(6, 4 if metric == "goodput" else -12))


def draw_panel(ax, panel, metric, ylabel, prep, bottom_row):
    ref = panel["reference"]
    if ref is not None:
        ax.axhline(ref[metric], color="0.45", ls="--", lw=1)
    n = len(panel["lines"])
    for i, line in enumerate(panel["lines"]):
        draw_line(ax, line, metric, dodge=3 * (i - (n - 1) / 2))
    ax.set_ylim(bottom=0)  # the top is autoscaled (an x at the top is outside it)
    loss_axis(ax, prep["losses"], prep["xscale"], bottom_row)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if metric == "goodput":
        ax.set_title(f"{panel['label']}, rtt {panel['rtt']:g} ms")


def loss_axis(ax, losses, scale, labelled):
    """The x axis: a tick at every loss swept, labelled as given (0.1, not 10^-1)."""
    kind, lin = scale
    lo, hi = losses[0], losses[-1]
    if kind == "symlog":
        ax.set_xscale("symlog", linthresh=lin)
        ax.set_xlim(lo - lin / 2, hi * 1.4)  # symmetric autoscaling would show negatives
    else:
        pad = 0.06 * ((hi - lo) or 1)
        ax.set_xlim(lo - pad, hi + pad)  # room for an x and its label at either end
    ax.set_xticks(losses)
    ax.set_xticklabels([f"{x:g}" for x in losses])
    if labelled:
        ax.set_xlabel("random loss per WAN direction, %")


def legend(fig, prep):
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], color=c, marker="o", ms=4, label=label)
               for _, label, c in prep["modes"]]
    handles.append(Line2D([], [], color="0.45", ls="--", label="loss-free reference (off @ 0%)"))
    handles.append(Line2D([], [], color="black", marker="x", ms=8, mew=2, ls="none",
                          label="no trial completed (0/N): goodput 0, time off the top"))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 3), fontsize=9,
               frameon=False)


def figure(plt, prep):
    rows, cols = 2 * len(prep["rtts"]), len(prep["tests"])
    # At least two columns' width: the title and legend need it with one test.
    fig, axes = plt.subplots(rows, cols, figsize=(5.6 * max(cols, 2), 3.0 * rows + 1.0),
                             squeeze=False)
    for panel in prep["panels"]:
        r, c = 2 * prep["rtts"].index(panel["rtt"]), prep["tests"].index(panel["test"])
        for i, (metric, ylabel) in enumerate(METRICS):
            draw_panel(axes[r + i][c], panel, metric, ylabel, prep, r + i == rows - 1)
    fig.suptitle(prep["title"], fontsize=10)
    if prep["simulation"]:
        # Across every panel, so that no crop of the figure passes for a measurement.
        fig.text(0.5, 0.5, "SIMULATION", fontsize=60, color="0.85", alpha=0.5, ha="center",
                 va="center", rotation=20, zorder=0)
    legend(fig, prep)
    # Room (in inches, whatever the height) for the two-line title above and
    # the legend below.
    height = fig.get_figheight()
    fig.tight_layout(rect=(0, 0.55 / height, 1, 1 - 0.45 / height))
    return fig


def draw(doc, prefix):
    """PREFIX.png and PREFIX.svg of a demo results document; their paths.
    NoMatplotlib when matplotlib is missing."""
    plt = pyplot()
    prep = prepare(doc)
    # A fixed SVG id salt and no date: the same JSON gives the same SVG, so a
    # committed figure changes only when the results do.
    plt.rcParams["svg.hashsalt"] = "crem-demo"
    fig = figure(plt, prep)
    files = [f"{prefix}.png", f"{prefix}.svg"]
    try:
        fig.savefig(files[0], dpi=110)
        fig.savefig(files[1], metadata={"Date": None})
    finally:
        plt.close(fig)
    return files


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", help="a results JSON of vm/demo.py (results/demo-*.json)")
    p.add_argument("-o", "--output", metavar="PREFIX",
                   help="write PREFIX.png and PREFIX.svg (default: beside the JSON)")
    a = p.parse_args(argv)
    prefix = a.output or os.path.splitext(a.json)[0]
    try:
        doc = results.demo_doc(a.json)
        if os.path.dirname(prefix):
            os.makedirs(os.path.dirname(prefix), exist_ok=True)
        files = draw(doc, prefix)
    except KeyError as e:
        print(f"plot.py: {a.json}: a run has no {e} field (not a demo's run?)", file=sys.stderr)
        return 1
    except (ValueError, NoMatplotlib, OSError) as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 1
    for f in files:
        print(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
