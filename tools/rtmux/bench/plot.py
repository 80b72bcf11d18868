"""The benchmark's latency histogram plot (PNG): one curve per case, counts on a log scale.

Both tools' histograms have 1-us cells, cell c holding the samples in [c, c+1) us (cyclictest rounds
down to whole microseconds). Each case is drawn as steps over its cells, with a marker in the middle of
every non-empty cell; an empty cell is a gap. The first and last cells are narrowed to the measured min
and max (the rtos measures them to the nanosecond: all its samples may lie inside one cell).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SMALLEST_US = 0.1  # the left edge of the log axis: a cell starting at 0 starts here


@dataclass(frozen=True)
class Curve:
    label: str
    system: str  # cases of one system share a colour
    load: bool  # loaded cases are dashed
    counts: dict[int, int]  # 1-us cell -> samples
    min_us: float
    max_us: float
    whole_us: bool  # cyclictest: min and max are cells too, nothing to narrow


def steps(curve: Curve) -> tuple[list[float], list[float]]:
    """Step coordinates for drawstyle="steps-post": x = each cell's left edge, then the last cell's right
    edge (for the rtos the first and last edges are its min and max); y = the cell's count, NaN for an
    empty cell (a gap), the last count repeated for the right edge."""
    cells = sorted(c for c, n in curve.counts.items() if n > 0)
    if not cells:
        return [], []
    lo, hi = cells[0], cells[-1]
    first = float(lo) if curve.whole_us else max(float(lo), curve.min_us)
    last = float(hi + 1) if curve.whole_us else min(float(hi + 1), max(curve.max_us, first))
    xs: list[float] = []
    ys: list[float] = []
    for c in range(lo, hi + 1):
        xs.append(max(first if c == lo else float(c), SMALLEST_US))
        ys.append(float(curve.counts.get(c, 0)) or math.nan)
    xs.append(max(last, xs[-1]))
    ys.append(ys[-1])
    return xs, ys


def markers(curve: Curve) -> tuple[list[float], list[float]]:
    """One point in the middle of each non-empty cell (of its narrowed extent), at the cell's count."""
    xs, ys = steps(curve)
    points = [((xs[i] * xs[i + 1]) ** 0.5, ys[i]) for i in range(len(xs) - 1) if not math.isnan(ys[i])]
    return [p[0] for p in points], [p[1] for p in points]


def plot(curves: Sequence[Curve], path: Path, title: str) -> None:
    """Write the PNG (matplotlib, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = list(dict.fromkeys(c.system for c in curves))
    colours = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(11, 6.5), dpi=110)
    for curve in curves:
        colour = colours(systems.index(curve.system) % 10)
        xs, ys = steps(curve)
        style = "--" if curve.load else "-"
        ax.plot(
            xs, ys, drawstyle="steps-post", linestyle=style, linewidth=1.3, color=colour, label=curve.label
        )
        mx, my = markers(curve)
        ax.plot(mx, my, linestyle="none", marker="o" if not curve.load else "s", markersize=3.5, color=colour)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("timer latency (us), 1-us cells")
    ax.set_ylabel("samples per cell")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    # No software/date metadata in the PNG, so an unchanged plot is an unchanged file.
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
