"""The benchmark's figures (PNG, matplotlib without a display). Each takes plain data (this module knows
nothing of the results model; rtmux.bench.report builds that data) so that what a figure shows is
computed by pure functions the tests check, and drawing is the only part they do not.

- headline: per case, worst case, p99.9 and average on a log axis, one row per case, cases grouped by
  system with idle and loaded side by side, every bar labelled with its value, targets marked on the rows
  they apply to.
- histograms: the rtos cases on a sub-microsecond panel of their own (min to max, average, p99.9: the
  rtos counts 1-us cells, so its finer shape is its measured extremes), every other case as a 1-us step
  histogram with its own colour and line style.
- vbus: round trips through the V-Bus against the pipe pair of the same boot, and throughput.
- shared: the shared-core world switch's cost each way, and the rtos's latency on the CPU it shares
  against its own CPU and bare metal.

Histograms: both tools' histograms have 1-us cells, cell c holding the samples in [c, c+1) us (cyclictest
rounds down to whole microseconds). Each case is drawn as steps over its cells, with a marker in the middle
of every non-empty cell; an empty cell is a gap. The first and last cells are narrowed to the measured min
and max (the rtos measures them to the nanosecond: all its samples may lie inside one cell).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SMALLEST_US = 0.1  # the left edge of the log axes: a cell starting at 0 starts here
# Cases whose max is below this go to the histogram figure's sub-microsecond (linear) panel.
FINE_PANEL_MAX_US = 5.0
STATS = ("max", "p99.9", "avg")  # the headline's bars of one case, top to bottom
STAT_COLOURS = {"max": "#b2182b", "p99.9": "#ef8a62", "avg": "#67a9cf"}
LINE_STYLES = ("-", "--", ":", "-.")


@dataclass(frozen=True)
class Curve:
    label: str
    system: str
    load: bool
    counts: dict[int, int]  # 1-us cell -> samples
    min_us: float
    max_us: float
    whole_us: bool  # cyclictest: min and max are cells too, nothing to narrow
    avg_us: float | None = None
    p999_us: float | None = None


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


def fine(curve: Curve) -> bool:
    """Whether a case goes to the sub-microsecond panel: the rtos's (ns resolution), max below
    FINE_PANEL_MAX_US."""
    return not curve.whole_us and curve.max_us < FINE_PANEL_MAX_US


def styles(n: int) -> list[tuple[int, str]]:
    """(colour index in tab10, line style) for n curves: neighbours differ in both, no two alike while
    n <= 20 (10 colours, 4 styles: the pair repeats after lcm(10, 4) = 20)."""
    return [(i % 10, LINE_STYLES[i % len(LINE_STYLES)]) for i in range(n)]


def _plain_log_ticks(axis: Any, minor: bool = False) -> None:
    """Tick labels of a log axis as plain numbers (0.1, 1, 10, 100), not powers of ten; `minor`: the
    2s and 5s between them too (for an axis spanning about a decade)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    def two_five(v: float, _: object) -> str:
        return f"{v:g}" if v > 0 and round(v / 10 ** math.floor(math.log10(v) + 1e-9)) in (2, 5) else ""

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(two_five) if minor else NullFormatter())


# ------------------------------------------------------------------------------------------ headline


@dataclass(frozen=True)
class Bar:
    """One case of the headline figure: its row label, the group (system) it is drawn in, its figures
    (microseconds) and the targets that apply to its worst case: (limit in us, short name, met)."""

    group: str
    condition: str  # "idle", "loaded", "V-Bus traffic", ...
    avg_us: float
    p999_us: float
    max_us: float
    whole_us: bool  # cyclictest: whole microseconds
    p999_bound: bool = False  # the p99.9 is an upper bound (the rtos's 1-us cells)
    targets: tuple[tuple[float, str, bool], ...] = ()


def fmt_us(value: float, whole_us: bool, average: bool = False) -> str:
    """A value as the bars' labels show it: the rtos to the nanosecond, cyclictest whole microseconds
    (its average with two decimals)."""
    if not whole_us:
        return f"{value:.3f}"
    return f"{value:.2f}" if average else f"{value:.0f}"


def bar_values(bar: Bar) -> list[tuple[str, float, str]]:
    """(stat, value, label) of a case's bars, top to bottom (STATS)."""
    return [
        ("max", bar.max_us, fmt_us(bar.max_us, bar.whole_us)),
        ("p99.9", bar.p999_us, ("≤" if bar.p999_bound else "") + fmt_us(bar.p999_us, bar.whole_us)),
        ("avg", bar.avg_us, fmt_us(bar.avg_us, bar.whole_us, average=True)),
    ]


@dataclass(frozen=True)
class Layout:
    """Where the headline's rows go: y of each case (top = 0, growing downwards), its tick label, and each
    group's name at the y of its first row."""

    ys: list[float]
    labels: list[str]
    groups: list[tuple[str, float, float]] = field(default_factory=list)  # name, first y, last y


GROUP_GAP = 0.6  # extra space between two groups, in rows


def layout(bars: Sequence[Bar]) -> Layout:
    """One row per case in the order given (a group's cases must be adjacent), a gap between groups."""
    ys: list[float] = []
    groups: list[tuple[str, float, float]] = []
    y = 0.0
    for i, bar in enumerate(bars):
        if i and bar.group != bars[i - 1].group:
            y += GROUP_GAP
        ys.append(y)
        if groups and groups[-1][0] == bar.group:
            groups[-1] = (bar.group, groups[-1][1], y)
        else:
            groups.append((bar.group, y, y))
        y += 1.0
    return Layout(ys, [b.condition for b in bars], groups)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, plt: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # No software/date metadata in the PNG, so an unchanged figure is an unchanged file.
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def target_text(bar: Bar) -> str:
    """What the right margin says of a case's targets: each bound, its name and whether it was met."""
    return "\n".join(
        f"max ≤ {limit:.3g} us{f' ({name})' if name else ''}: {'met' if met else 'MISSED'}"
        for limit, name, met in bar.targets
    )


def headline(bars: Sequence[Bar], path: Path, title: str) -> None:
    plt = _pyplot()
    from matplotlib.transforms import blended_transform_factory as blended

    lay = layout(bars)
    height = 1.6 + 0.42 * (len(bars) + GROUP_GAP * len(lay.groups))
    fig, ax = plt.subplots(figsize=(12, height), dpi=110)
    thick = 0.27
    top = max(max(b.max_us for b in bars), max((t[0] for b in bars for t in b.targets), default=0.0))
    right = 10 ** (math.ceil(math.log10(top * 2.5)))
    drawn: set[bool] = set()
    for y, bar in zip(lay.ys, bars, strict=True):
        for k, (stat, value, text) in enumerate(bar_values(bar)):
            yy = y + (k - 1) * thick
            ax.barh(yy, value - SMALLEST_US / 2, left=SMALLEST_US / 2, height=thick * 0.92,
                    color=STAT_COLOURS[stat], label=stat if y == lay.ys[0] else None)  # fmt: skip
            ax.text(value * 1.08, yy, text, va="center", ha="left", fontsize=7.5, zorder=4,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.3, "alpha": 0.85})  # fmt: skip
        for limit, _, met in bar.targets:
            label = None if met in drawn else f"target on the worst case, {'met' if met else 'missed'}"
            ax.plot([limit, limit], [y - 0.47, y + 0.47], color="black" if met else "#d6604d",
                    linewidth=2, label=label)  # fmt: skip
            drawn.add(met)
        if bar.targets:
            ax.text(1.01, y, target_text(bar), transform=blended(ax.transAxes, ax.transData), ha="left",
                    va="center", fontsize=7, color="black")  # fmt: skip
    for i, (name, first, last) in enumerate(lay.groups):
        ax.axhspan(first - 0.5, last + 0.5, color="#f0f0f0" if i % 2 else "white", zorder=0)
        ax.text(0.01, (first + last) / 2, name, transform=blended(fig.transFigure, ax.transData),
                ha="left", va="center", fontsize=8.5, fontweight="bold")  # fmt: skip
    ax.set_yticks(lay.ys, lay.labels, fontsize=8)
    ax.tick_params(axis="y", length=0, pad=4)
    ax.set_ylim(lay.ys[-1] + 0.6, -0.6)
    ax.set_xscale("log")
    ax.set_xlim(SMALLEST_US / 2, right)
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel(
        "timer latency (us, log scale); ≤: an upper bound (the rtos's percentiles come from 1-us cells)"
    )
    ax.grid(True, axis="x", which="major", alpha=0.35)
    ax.set_title(title, fontsize=9.5)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.5 / height * 1.6), ncol=5)
    fig.tight_layout()
    fig.subplots_adjust(left=0.24, right=0.72)
    _save(fig, plt, path)


# ---------------------------------------------------------------------------------------- histograms


def fine_rows(curves: Sequence[Curve]) -> list[tuple[str, float, float, float | None, float | None]]:
    """The sub-microsecond panel's rows, top to bottom: (label, min, max, avg, p99.9)."""
    return [(c.label, c.min_us, c.max_us, c.avg_us, c.p999_us) for c in curves if fine(c)]


def histograms(curves: Sequence[Curve], path: Path, title: str) -> None:
    plt = _pyplot()
    rows = fine_rows(curves)
    coarse = [c for c in curves if not fine(c)]
    panels = (1 if rows else 0) + (1 if coarse else 0)
    ratios = [max(len(rows), 2) * 0.45 + 1.0] * bool(rows) + [6.0] * bool(coarse)
    fig, axes = plt.subplots(panels, 1, figsize=(11, sum(ratios) + 0.8), dpi=110,
                             gridspec_kw={"height_ratios": ratios}, squeeze=False)  # fmt: skip
    axes = [a[0] for a in axes]
    if rows:
        ax = axes[0]
        for i, (_, lo, hi, avg, p999) in enumerate(rows):
            ax.plot([lo, hi], [i, i], color="#2166ac", linewidth=5, solid_capstyle="butt",
                    label="min to max" if i == 0 else None)  # fmt: skip
            if p999 is not None:
                ax.plot([p999], [i], marker="|", markersize=14, color="#b2182b", linestyle="none",
                        label="p99.9 (upper bound: 1-us cells)" if i == 0 else None)  # fmt: skip
            if avg is not None:
                ax.plot([avg], [i], marker="D", markersize=5, color="#fddbc7", markeredgecolor="black",
                        linestyle="none", label="average" if i == 0 else None)  # fmt: skip
            text = f"{lo:.3f} to {hi:.3f} us" + (f", avg {avg:.3f}" if avg is not None else "")
            ax.text(hi + 0.02, i, text, va="center", fontsize=7.5)
        ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(0, max(r[2] for r in rows) * 1.35 + 0.1)
        ax.set_xlabel("rtos timer latency (us, linear): measured to the nanosecond, counted in 1-us cells")
        ax.grid(True, axis="x", alpha=0.35)
        ax.legend(fontsize=7.5, loc="upper right")
        ax.set_title(title, fontsize=9.5)
    if coarse:
        ax = axes[-1]
        for curve, (colour, style) in zip(coarse, styles(len(coarse)), strict=True):
            c = plt.get_cmap("tab10")(colour)
            xs, ys = steps(curve)
            ax.plot(
                xs, ys, drawstyle="steps-post", linestyle=style, linewidth=1.4, color=c, label=curve.label
            )
            mx, my = markers(curve)
            ax.plot(mx, my, linestyle="none", marker="o" if not curve.load else "s", markersize=3.5, color=c)
        ax.set_xscale("log")
        ax.set_yscale("log")
        _plain_log_ticks(ax.xaxis, minor=True)
        ax.set_xlabel("timer latency (us, log scale), 1-us cells")
        ax.set_ylabel("samples per cell")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7.5, loc="upper right")
        if not rows:
            ax.set_title(title, fontsize=9.5)
    fig.tight_layout()
    _save(fig, plt, path)


def plot(curves: Sequence[Curve], path: Path, title: str) -> None:
    """The histogram figure (the name the runner used before the other figures existed)."""
    histograms(curves, path, title)


# --------------------------------------------------------------------------------------------- V-Bus


@dataclass(frozen=True)
class Vbus:
    """The V-Bus case's figures: round trips (min, avg, p99, max; us) and throughput (tx, rx; MB/s) of the
    channel and of the pipe pair, in the same boot; the targets."""

    rtt: tuple[float, float, float, float]
    pipe_rtt: tuple[float, float, float, float]
    mbps: tuple[float, float]
    pipe_mbps: tuple[float, float]
    rtt_avg_target_us: float
    mbps_target: float
    # the round trips' distributions (rtmux-ping --hist): cell width in us and cell -> round trips; drawn
    # as the share of round trips at least x long (log scale: the tail shows)
    hist: tuple[float, dict[int, int]] | None = None
    pipe_hist: tuple[float, dict[int, int]] | None = None


def exceedance(width_us: float, counts: dict[int, int]) -> tuple[list[float], list[float]]:
    """Step coordinates (steps-post) of the share of round trips at least x long, from a histogram of
    `width_us` cells: at each non-empty cell's lower edge the share in it and above, held to the last
    cell's upper edge (so the slowest round trip shows as a step of 1/n, never 0 on a log axis)."""
    cells = sorted(c for c, n in counts.items() if n > 0)
    total = sum(counts[c] for c in cells)
    xs: list[float] = []
    ys: list[float] = []
    left = total
    for cell in cells:
        xs.append(cell * width_us)
        ys.append(left / total)
        left -= counts[cell]
    if cells:
        xs.append((cells[-1] + 1) * width_us)
        ys.append(ys[-1])
    return xs, ys


def vbus(v: Vbus, path: Path, title: str) -> None:
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.6), dpi=110, gridspec_kw={"width_ratios": [3, 2]})
    width = 0.38
    who_rtt = (
        ("V-Bus: Linux program to rtos thread", v.rtt, v.hist, "#2166ac"),
        ("pipe pair: Linux to Linux, same boot", v.pipe_rtt, v.pipe_hist, "#999999"),
    )
    if v.hist is not None and v.pipe_hist is not None:
        from matplotlib.ticker import FuncFormatter

        for (who, rtt, hist, colour), style in zip(who_rtt, ("-", "--"), strict=True):
            assert hist is not None
            xs, ys = exceedance(*hist)
            left.plot(xs, ys, drawstyle="steps-post", color=colour, linestyle=style, linewidth=1.6,
                      label=f"{who}: avg {rtt[1]:.1f}, p99 {rtt[2]:.1f}, max {rtt[3]:.1f} us")  # fmt: skip
            left.axvline(rtt[1], color=colour, linestyle=":", linewidth=1)
        target = f"target: V-Bus avg <= {v.rtt_avg_target_us:g} us (dotted: each average)"
        left.axvline(v.rtt_avg_target_us, color="black", linewidth=1.2, linestyle="--", label=target)
        left.set_xscale("log")
        left.set_yscale("log")
        _plain_log_ticks(left.xaxis, minor=True)
        left.set_xlabel(f"round trip, 64 B (us, log scale; measured in {v.hist[0]:g}-us cells, guest time)")
        left.set_ylabel("share of round trips at least this long")
        left.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.4g}"))
        left.legend(fontsize=7, loc="upper right")
        left.grid(True, which="both", alpha=0.3)
    else:  # summary figures only (a run before rtmux-ping --hist)
        names = ("min", "avg", "p99", "max")
        for k, (who, values, _, colour) in enumerate(who_rtt):
            xs = [i + (k - 0.5) * width for i in range(len(names))]
            left.bar(xs, values, width=width * 0.95, color=colour, label=who)
            for x, value in zip(xs, values, strict=True):
                left.text(x, value, f"{value:.1f}", ha="center", va="bottom", fontsize=7.5)
        left.axhline(v.rtt_avg_target_us, color="black", linewidth=1.2, linestyle="--",
                     label=f"target: V-Bus avg <= {v.rtt_avg_target_us:g} us")  # fmt: skip
        left.set_xticks(range(len(names)), names)
        left.set_ylabel("round trip, 64 B (us, guest time)")
        left.set_ylim(0, max(v.rtt[3], v.pipe_rtt[3]) * 1.3)
        left.legend(fontsize=7.5, loc="upper left")
        left.grid(True, axis="y", which="both", alpha=0.3)
    for k, (who, rates, colour) in enumerate(
        (("V-Bus", v.mbps, "#2166ac"), ("pipe pair", v.pipe_mbps, "#999999"))
    ):
        xs = [i + (k - 0.5) * width for i in range(2)]
        right.bar(xs, rates, width=width * 0.95, color=colour, label=who)
        for x, value in zip(xs, rates, strict=True):
            right.text(x, value, f"{value:.1f}", ha="center", va="bottom", fontsize=7.5)
    right.axhline(v.mbps_target, color="black", linewidth=1.2, linestyle="--",
                  label=f"target: V-Bus >= {v.mbps_target:g} MB/s each way")  # fmt: skip
    right.set_xticks(range(2), ["Linux to the other side", "back"])
    right.set_ylabel("throughput, 4 KiB writes (MB/s)")
    right.set_ylim(0, max(v.mbps_target, *v.mbps, *v.pipe_mbps) * 1.25)
    right.legend(fontsize=7.5, loc="upper right")
    right.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=9.5)
    fig.tight_layout()
    _save(fig, plt, path)


# ---------------------------------------------------------------------------------------- shared core


@dataclass(frozen=True)
class Shared:
    """Shared-core mode's figures: the world switch's average cost each way per Linux state
    ((state, ns to Linux, ns to the rtos)), and the rtos's latency rows ((label, avg us, max us)) with
    the target on its worst case."""

    switches: tuple[tuple[str, float, float], ...]
    latency: tuple[tuple[str, float, float], ...]
    max_target_us: float


def shared(s: Shared, path: Path, title: str) -> None:
    plt = _pyplot()
    panels = (1 if s.switches else 0) + (1 if s.latency else 0)
    fig, axes = plt.subplots(1, panels, figsize=(11, 4.2), dpi=110, squeeze=False)
    axes = list(axes[0])
    if s.switches:
        ax = axes[0]
        width = 0.38
        for k, (who, colour) in enumerate((("to Linux", "#999999"), ("to the rtos", "#2166ac"))):
            xs = [i + (k - 0.5) * width for i in range(len(s.switches))]
            values = [row[1 + k] for row in s.switches]
            ax.bar(xs, values, width=width * 0.95, color=colour, label=f"switch {who}")
            for x, value in zip(xs, values, strict=True):
                ax.text(x, value, f"{value:.0f} ns", ha="center", va="bottom", fontsize=7.5)
        ax.set_xticks(range(len(s.switches)), [f"Linux {row[0]}" for row in s.switches])
        ax.set_xlim(-0.8, len(s.switches) - 0.2)
        ax.set_ylabel("world switch, average (ns, guest time)")
        ax.set_ylim(0, max(max(r[1], r[2]) for r in s.switches) * 1.3)
        ax.legend(fontsize=7.5, loc="upper right")
        ax.grid(True, axis="y", alpha=0.3)
    if s.latency:
        ax = axes[-1]
        ys = list(range(len(s.latency)))
        ax.barh([y - 0.2 for y in ys], [r[2] for r in s.latency], height=0.38, color=STAT_COLOURS["max"],
                label="max")  # fmt: skip
        ax.barh([y + 0.2 for y in ys], [r[1] for r in s.latency], height=0.38, color=STAT_COLOURS["avg"],
                label="avg")  # fmt: skip
        for y, (_, avg, hi) in zip(ys, s.latency, strict=True):
            ax.text(hi, y - 0.2, f" {hi:.3f}", va="center", fontsize=7.5)
            ax.text(avg, y + 0.2, f" {avg:.3f}", va="center", fontsize=7.5)
        ax.axvline(s.max_target_us, color="black", linewidth=1.2, linestyle="--",
                   label=f"target: max <= {s.max_target_us:g} us")  # fmt: skip
        ax.set_yticks(ys, [r[0] for r in s.latency], fontsize=8)
        ax.set_ylim(len(ys) - 0.5, -0.5)
        ax.set_xlim(0, max(s.max_target_us, *(r[2] for r in s.latency)) * 1.2)
        ax.set_xlabel("rtos timer latency (us)")
        ax.legend(fontsize=7.5, loc="upper right")
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(title, fontsize=9.5)
    fig.tight_layout()
    _save(fig, plt, path)
