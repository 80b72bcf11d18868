"""`./rtmux bench linux-tail` (issue 27): Linux's loaded cyclictest tail over many boots, not one.

A loaded maximum is one event of one boot, and under icount one boot is one seed: the benchmark's own
rows (`./rtmux bench`, seed 1) cannot tell whether Linux's longest wake-up is longer under rtmux or
landed somewhere worse. This part boots the benchmark's two loaded standard-kernel cases, unchanged
(rtmux.bench.cases: "Linux std (bare, -smp 1), Linux load", the boot of `linux-std`, and "Linux std
under rtmux, Linux load", the boot of `rtmux-loaded`), once per seed 1..N (`--seeds`; the seed is the
boot's `--seed`: KASLR, the RNG seed, QEMU's `-seed`), and reports per case:

- each boot's maximum, and their min, median and max (the median of an even count is the mean of the
  two middle values);
- p99.9 twice: **pooled**, the nearest-rank 99.9th percentile of every boot's samples together (the
  per-boot 1-us histograms added cell by cell; the target is judged on it), and the **median of the
  per-boot p99.9** (each boot's own nearest-rank p99.9);
- the ratio of each to bare, against the targets: median of the maxima, and pooled p99.9, within
  1.1 x bare.

The statistics are the pure functions below (tests/unit/python/test_bench_tail.py); running and writing
are `run_linux_tail` and `write_all`. The figures go into their own marker-delimited section of
BENCHMARKS.md (`<!-- bench-linux-tail:begin -->`) and BENCHMARKS-linux-tail.csv beside it.
"""

from __future__ import annotations

import csv
import io
import pickle
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from rtmux import paths, qemu
from rtmux.bench import report, runner
from rtmux.bench.cases import Bench
from rtmux.bench.model import (
    PERIOD_US,
    Options,
    Run,
    RunDoc,
    RunOutput,
    fmt_duration,
)
from rtmux.bench.progress import Progress, plan_cost
from rtmux.errors import RtmuxError
from rtmux.formats import cyclictest, latstats
from rtmux.run import system

DEFAULT_SEEDS = 10
TARGET_RATIO = 1.1
P999 = 0.999
MARKERS = ("<!-- bench-linux-tail:begin -->", "<!-- bench-linux-tail:end -->")
CSV_FIELDS = (
    "case", "seed", "samples", "min_us", "avg_us", "p999_us", "max_us", "overflows", "data_file",
)  # fmt: skip


@dataclass(frozen=True)
class CaseDef:
    """One of the two cases: its row in the benchmark's table, the boot that gives it."""

    id: str  # the benchmark's row id
    label: str
    run_id: str  # the benchmark's run whose boot measures it


BARE = CaseDef("linux-std-load", "Linux std (bare, -smp 1), Linux load", "linux-std")
RTMUX = CaseDef("linux-rtmux-load", "Linux std under rtmux, Linux load", "rtmux-loaded")
# The benchmark's artifact check (BENCHMARKS.md, "The rtos beside a busy vCPU"): the loaded rtmux case
# with the partitions' CPUs exchanged, Linux on CPU 0, the first of icount's round-robin (`--cpu0`).
CPU0 = CaseDef(
    "linux-rtmux0-load", "Linux std under rtmux on CPU 0 (artifact check), Linux load", "rtmux-linux-cpu0"
)
CASES = (BARE, RTMUX)


# --------------------------------------------------------------------------------------- statistics


def median(values: Sequence[float]) -> float:
    """The median; of an even count, the mean of the two middle values."""
    if not values:
        raise ValueError("the median of no values")
    return float(statistics.median(values))


@dataclass(frozen=True)
class Pooled:
    """Several boots' whole-microsecond histograms added cell by cell."""

    counts: dict[int, int]
    overflows: int  # samples above the histograms' range (their values unknown)
    max_us: int  # the largest maximum of the boots

    @property
    def samples(self) -> int:
        return sum(self.counts.values()) + self.overflows


def pool(hists: Sequence[cyclictest.Histogram]) -> Pooled:
    if not hists:
        raise ValueError("nothing to pool")
    counts: dict[int, int] = {}
    for h in hists:
        for cell, n in h.counts.items():
            counts[cell] = counts.get(cell, 0) + n
    return Pooled(counts, sum(h.overflows for h in hists), max(h.max_us for h in hists))


def pooled_quantile(pooled: Pooled, fraction: float) -> tuple[float, bool]:
    """The nearest-rank `fraction` quantile of the pooled samples, and whether it is exact: a quantile
    among the overflows (no value known) is given as the largest maximum, an upper bound."""
    cell = latstats.quantile_cell(pooled.counts, fraction, pooled.overflows)
    return (float(pooled.max_us), False) if cell is None else (float(cell), True)


def count_at_least(counts: Mapping[int, int], overflows: int, threshold_us: int) -> int:
    """Samples of `threshold_us` or more (the overflows, above every cell, included)."""
    return sum(n for cell, n in counts.items() if cell >= threshold_us) + overflows


@dataclass(frozen=True)
class Boot:
    seed: int
    hist: cyclictest.Histogram
    data_file: Path | None = None

    @property
    def stats(self) -> latstats.LatencyStats:
        return self.hist.stats()


# the tail thresholds the tables count samples at (us)
LONG_US = (30, 100)


@dataclass
class CaseResult:
    case: CaseDef
    boots: list[Boot] = field(default_factory=list)

    @property
    def maxima(self) -> list[float]:
        return [b.stats.max_us for b in self.boots]

    @property
    def median_max(self) -> float:
        return median(self.maxima)

    @property
    def p999s(self) -> list[float]:
        return [b.stats.p999_us for b in self.boots]

    @property
    def median_p999(self) -> float:
        return median(self.p999s)

    @property
    def pooled(self) -> Pooled:
        return pool([b.hist for b in self.boots])

    @property
    def pooled_p999(self) -> tuple[float, bool]:
        return pooled_quantile(self.pooled, P999)

    @property
    def avg_us(self) -> float:
        """The mean of every sample of every boot (from the histograms; overflows left out)."""
        p = self.pooled
        n = sum(p.counts.values())
        return sum(c * k for c, k in p.counts.items()) / n

    def long_samples(self, threshold_us: int) -> int:
        p = self.pooled
        return count_at_least(p.counts, p.overflows, threshold_us)


@dataclass(frozen=True)
class Target:
    what: str
    measured: float
    bare: float
    exact: bool = True  # False: `measured` or `bare` is an upper bound (a quantile among overflows)

    @property
    def ratio(self) -> float:
        return self.measured / self.bare if self.bare else float("inf")

    @property
    def met(self) -> bool:
        return self.ratio <= TARGET_RATIO


def targets(bare: CaseResult, under: CaseResult) -> list[Target]:
    """The two targets of issue 27: median of the per-boot maxima, and pooled p99.9, within TARGET_RATIO
    of bare."""
    (up, ue), (bp, be) = under.pooled_p999, bare.pooled_p999
    return [
        Target("median of the per-boot maxima", under.median_max, bare.median_max),
        Target("p99.9, pooled over the boots", up, bp, ue and be),
    ]


def seeds_of(count: int) -> list[int]:
    """The seeds of `count` boots per case: 1 (the benchmark's own) to `count`."""
    if count < 1:
        raise ValueError("at least one seed")
    return list(range(1, count + 1))


# ------------------------------------------------------------------------------------------ results


@dataclass
class TailResults:
    seeds: list[int]
    samples: int
    date: datetime
    qemu_version: str
    source: str
    kernel: str = ""
    command: str = "./rtmux bench linux-tail"
    wall_s: float = 0.0
    cases: dict[str, CaseResult] = field(default_factory=dict)  # CaseDef.id -> its boots
    docs: list[RunDoc] = field(default_factory=list)  # seed 1's: how each boot is reproduced

    @property
    def bare(self) -> CaseResult:
        return self.cases[BARE.id]

    @property
    def under(self) -> CaseResult:
        return self.cases[RTMUX.id]


def render_csv(r: TailResults) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for case in r.cases.values():
        for b in case.boots:
            s = b.stats
            data = "" if b.data_file is None else paths.display(b.data_file)
            w.writerow([
                case.case.id, b.seed, s.samples, f"{s.min_us:.0f}", f"{s.avg_us:.2f}", f"{s.p999_us:.0f}",
                f"{s.max_us:.0f}", b.hist.overflows, data,
            ])  # fmt: skip
    return buf.getvalue()


def _us(value: float) -> str:
    return f"{value:g}"


def render_section(r: TailResults, csv_file: Path, output: Path) -> str:
    n = len(r.seeds)
    seeds = f"{r.seeds[0]}-{r.seeds[-1]}" if n > 1 else str(r.seeds[0])
    source = f" from commit `{r.source}`" if r.source else ""
    check = (
        f" With `--cpu0`, also the benchmark's \"{CPU0.label}\" (the partitions' CPUs exchanged: Linux on "
        "CPU 0, the first vCPU of icount's round-robin), with the same seeds; no target, its ratio says how "
        "much of the rtmux row the round-robin makes."
        if CPU0.id in r.cases
        else ""
    )
    lines = [
        "### Figures: each loaded Linux case over many boots (`./rtmux bench linux-tail`, QEMU icount)",
        "",
        f"Measured {r.date:%Y-%m-%d %H:%M} UTC{source} with `{r.qemu_version}`; kernel `{r.kernel}`. Run by "
        f"`{r.command}` in {fmt_duration(r.wall_s)} of wall time.",
        "",
        f"Mode: icount (-icount {qemu.ICOUNT}). The benchmark's two loaded standard-kernel cases, "
        f'unchanged ("{BARE.label}" and "{RTMUX.label}"; their scripts and commands are the '
        "benchmark's, below with seed 1), each booted once per seed "
        f"{seeds} (`--seed N`: KASLR, Linux's RNG seed, QEMU's `-seed`), {r.samples} cyclictest samples "
        f"at {PERIOD_US} us a boot. Seed 1 is the benchmark's own boot.{check}",
        "",
        "How the figures are computed: each boot's max and p99.9 are its cyclictest histogram's (whole "
        "microseconds; p99.9 by nearest rank). *Median of maxima*: the median of the per-boot maxima (of "
        "an even count of boots, the mean of the two middle ones). *Pooled p99.9*: the nearest-rank "
        f"99.9th percentile of all {n} boots' samples together (the histograms added cell by cell; the "
        "target is judged on it). *Median p99.9*: the median of the per-boot p99.9.",
        "",
        "| case | boots | median of maxima | min / max of maxima | pooled p99.9 | median p99.9 | avg "
        f"| samples ≥ {LONG_US[0]} us | samples ≥ {LONG_US[1]} us | x bare: median of maxima, pooled p99.9 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    bare = r.cases.get(BARE.id)
    for case in r.cases.values():
        p999, exact = case.pooled_p999
        ratios = "–"
        if bare is not None and case is not bare:
            ratios = f"{case.median_max / bare.median_max:.2f}, {p999 / bare.pooled_p999[0]:.2f}"
        lines.append(
            f"| {case.case.label} | {len(case.boots)} | {_us(case.median_max)} | "
            f"{_us(min(case.maxima))} / {_us(max(case.maxima))} | {'' if exact else '≤'}{_us(p999)} | "
            f"{_us(case.median_p999)} | {case.avg_us:.2f} | {case.long_samples(LONG_US[0])} | "
            f"{case.long_samples(LONG_US[1])} | {ratios} |"
        )
    lines += ["", "Each boot's max and p99.9 (us), by seed:", ""]
    header = "| case | " + " | ".join(f"seed {s}" for s in r.seeds) + " |"
    lines += [header, "|---|" + "---:|" * n]
    for case in r.cases.values():
        by_seed = {b.seed: b.stats for b in case.boots}
        cells = [
            f"{by_seed[s].max_us:.0f} / {by_seed[s].p999_us:.0f}" if s in by_seed else "–" for s in r.seeds
        ]
        lines.append(f"| {case.case.label} (max / p99.9) | " + " | ".join(cells) + " |")
    lines += ["", "Targets:", "", "| target | measured | status |", "|---|---:|---|"]
    if BARE.id in r.cases and RTMUX.id in r.cases:
        for t in targets(r.bare, r.under):
            bound = "" if t.exact else " (an upper bound)"
            lines.append(
                f"| Linux under rtmux, Linux load: {t.what} within {TARGET_RATIO:g} x bare | "
                f"{_us(t.measured)} vs {_us(t.bare)} us = {t.ratio:.2f} x{bound} | "
                f"{report.verdict(t.met)} |"
            )
    rel = output.parent
    csv_rel = csv_file.relative_to(rel).as_posix() if csv_file.is_relative_to(rel) else csv_file.name
    lines += [
        "",
        f"Every boot's figures: [`{csv_rel}`]({csv_rel}). Histograms (not committed): "
        "`build/bench/linux-tail/seed-N/icount/<case>.dat`. Each boot, seed 1's shown (the others "
        "differ in `--seed` only):",
        "",
    ]
    for doc in r.docs:
        lines += [f"- {doc.title}: `{doc.rtmux}`"]
    return "\n".join(lines) + "\n"


def csv_path(output: Path) -> Path:
    return output.parent / f"{output.stem}-linux-tail.csv"


def write_all(r: TailResults, output: Path) -> list[Path]:
    csv_file = csv_path(output)
    csv_file.parent.mkdir(parents=True, exist_ok=True)
    csv_file.write_text(render_csv(r), encoding="utf-8")
    text = output.read_text(encoding="utf-8") if output.exists() else ""
    output.write_text(
        report.replace_section(text, render_section(r, csv_file, output), *MARKERS), encoding="utf-8"
    )
    return [output, csv_file]


def summary_lines(r: TailResults) -> list[str]:
    out = []
    for case in r.cases.values():
        p999, exact = case.pooled_p999
        out.append(
            f"{case.case.label}: maxima {', '.join(f'{m:.0f}' for m in case.maxima)} us; median "
            f"{_us(case.median_max)}, pooled p99.9 {'' if exact else '<='}{_us(p999)}, median p99.9 "
            f"{_us(case.median_p999)} us"
        )
    if BARE.id in r.cases and RTMUX.id in r.cases:
        for t in targets(r.bare, r.under):
            out.append(f"target {t.what}: {t.ratio:.2f} x bare ({'met' if t.met else 'missed'})")
    return out


# ------------------------------------------------------------------------------------------ running


def tail_data_dir(data_dir: Path, seed: int) -> Path:
    """Where a seed's boots put their scripts, configurations and histograms."""
    return data_dir / "linux-tail" / f"seed-{seed}"


def _boot_work(bench: Bench, case: CaseDef) -> Run:
    plan = bench.plans()[case.run_id]
    run_id, title = f"{case.run_id}-seed{bench.seed}", f"{case.label}, seed {bench.seed}"
    if case is BARE:
        cost = plan_cost(bench.icount, plan, "linux")
        return Run(run_id, title, cost, lambda phase: bench.linux_bare("std", plan, phase))
    cost = plan_cost(bench.icount, plan, "rtmux")
    if case is CPU0:
        return Run(run_id, title, cost, lambda phase: bench.rtmux_linux_cpu0(plan, phase))
    return Run(run_id, title, cost, lambda phase: bench.rtmux_loaded(plan, phase))


def run_linux_tail(opts: Options, seeds: int, out: TextIO | None = None, cpu0: bool = False) -> TailResults:
    """Boot both cases (`cpu0`: and the artifact check CPU0) once per seed, `opts.jobs` QEMU runs at a
    time, seed after seed; write the section and the CSV."""
    cases = (*CASES, CPU0) if cpu0 else CASES
    out = out if out is not None else sys.stdout
    if opts.realtime:
        raise RtmuxError("bench linux-tail measures in icount mode (its seeds repeat only there)")
    t0 = time.monotonic()
    seed_list = seeds_of(seeds)
    version = qemu.qemu_version()
    source = runner.source_version()
    if opts.build:
        system.make(["rtos", "hyp"])
    benches = []
    for seed in seed_list:
        seed_opts = Options(
            quick=opts.quick,
            realtime=False,
            jobs=opts.jobs,
            output=opts.output,
            data_dir=tail_data_dir(opts.data_dir, seed),
            build=False,
            timeout_s=opts.timeout_s,
            samples=opts.samples,
        )
        bench = Bench(seed_opts, out, seed=seed)
        bench.prepare_linux_tail(cpu0=cpu0)
        benches.append(bench)
    samples = benches[0].samples
    print(
        f"rtmux bench linux-tail: icount, {len(cases)} cases x {seeds} seeds, {samples} samples a boot, "
        f"{opts.jobs} run(s) at a time; {version}",
        file=out,
        flush=True,
    )
    runs = [_boot_work(b, c) for b in benches for c in cases]
    progress = Progress({r.id: r.predicted_s for r in runs}, opts.jobs, out)
    outputs = runner.execute(runs, opts.jobs, progress, timeout_s=opts.timeout_s)
    results = TailResults(
        seeds=seed_list,
        samples=samples,
        date=datetime.now(UTC),
        qemu_version=version,
        source=source,
        kernel=benches[0].guests["std"].kernel.release,
        command=command(seeds, opts, cpu0),
    )
    for case in cases:
        results.cases[case.id] = CaseResult(case)
    for bench in benches:
        for case in cases:
            o = outputs[f"{case.run_id}-seed{bench.seed}"]
            results.cases[case.id].boots.append(_boot(o, case, bench.seed))
            if bench.seed == seed_list[0]:
                results.docs += [d for d in o.docs if d.run_id == case.run_id]
    results.wall_s = time.monotonic() - t0
    # everything measured, for a later look or a new rendering (pickle: same code, same machine)
    (tail_data_dir(opts.data_dir, 0).parent / "results.pickle").write_bytes(pickle.dumps(results))
    written = write_all(results, opts.output)
    print(f"rtmux bench linux-tail: done in {fmt_duration(results.wall_s)}", file=out)
    for path in written:
        print(f"  wrote {paths.display(path)}", file=out)
    for line in summary_lines(results):
        print(f"  {line}", file=out)
    out.flush()
    return results


def command(seeds: int, opts: Options, cpu0: bool = False) -> str:
    """The command line of a linux-tail run, as the section names it."""
    args = ["./rtmux", "bench", "linux-tail", "--seeds", str(seeds)] + ["--cpu0"] * cpu0
    args += ["--quick"] * opts.quick
    args += ["--samples", str(opts.samples)] if opts.samples else []
    return " ".join(args)


def _boot(o: RunOutput, case: CaseDef, seed: int) -> Boot:
    o_linux = o.linux
    row = next((r for r in o.rows if r.id == case.id), None)
    if row is None or o_linux is None or o_linux.loaded is None:
        raise RtmuxError(
            f"bench linux-tail: the boot of {case.run_id} with seed {seed} gave no `{case.id}` row"
        )
    return Boot(seed, o_linux.loaded, row.data_file)
