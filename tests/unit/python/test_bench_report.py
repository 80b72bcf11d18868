"""What ./rtmux bench writes: table, CSV, targets, Markdown section, plot (rtmux.bench.report, .plot)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rtmux.bench import linux_script, model, plot, report
from rtmux.formats import cyclictest, hyp_console, latmus, latstats, linux_files, posix_cost, rtmux_ping


def rtos_stats(lat_max: float, samples: int = 10000, overruns: int = 0) -> latstats.LatencyStats:
    return latstats.LatencyStats(samples, 0.4, 0.41, min(1.0, lat_max), lat_max, lat_max, overruns, False)


def linux_stats(avg: float, lat_max: int) -> latstats.LatencyStats:
    return latstats.LatencyStats(10000, 4.0, avg, 9.0, 14.0, float(lat_max), None, True)


def linux_result(
    kernel: str, boot: float, hackbench: float | None, load_start: float | None = None
) -> linux_script.LinuxResult:
    return linux_script.LinuxResult(kernel, 1, boot, hackbench, None, None, load_start, None, None, 1.0, "")


def results(
    *, part_max: float = 0.608, rt_max: int = 20, rtmux_load_max: int = 30, mode: str = model.MODE_ICOUNT
) -> model.BenchResults:
    r = model.BenchResults(
        mode=mode,
        quick=False,
        samples=10000,
        date=datetime(2025, 3, 1, 12, 0, tzinfo=UTC),
        qemu_version="QEMU emulator version 7.2.0",
        jobs=2,
        wall_s=754.0,
        hyp_lines=2200,
        partition_samples=11500,
        source="30325e3",
    )
    rows = [
        ("rtos-bare-idle", "rtos bare", False, rtos_stats(0.4)),
        ("rtos-bare-load", "rtos bare", True, rtos_stats(0.72)),
        ("rtos-rtmux-idle", "rtos in rtmux", False, rtos_stats(0.608, 11500)),
        ("rtos-rtmux-load", "rtos in rtmux", True, rtos_stats(part_max, 11500, 3)),
        ("linux-std-idle", "Linux std", False, linux_stats(4.29, 16)),
        ("linux-std-load", "Linux std", True, linux_stats(5.32, 29)),
        ("linux-rt-idle", "Linux PREEMPT_RT", False, linux_stats(5.19, 18)),
        ("linux-rt-load", "Linux PREEMPT_RT", True, linux_stats(5.71, rt_max)),
        ("linux-rtmux-idle", "Linux under rtmux", False, linux_stats(4.38, 16)),
        ("linux-rtmux-load", "Linux under rtmux", True, linux_stats(5.5, rtmux_load_max)),
        ("linux-rtmux0-load", "Linux under rtmux on CPU 0", True, linux_stats(5.58, 96)),
    ]
    for row_id, system, load, stats in rows:
        counts = {0: stats.samples} if not stats.whole_us else {4: stats.samples - 1, int(stats.max_us): 1}
        r.rows.append(
            model.Row(
                row_id,
                f"label {row_id}",
                system,
                load,
                stats,
                counts,
                Path(f"/x/{row_id}.dat"),
                "run",
                el2_entries={"rtos-rtmux-idle": 0, "rtos-rtmux-load": 2}.get(row_id),
            )
        )
    r.ctxsw = latmus.CtxLine(20002, 8840832, 441.997)
    r.linux = {
        "linux-std": linux_result("6.1.0-56-arm64", 1.04, 0.599),
        "linux-rt": linux_result("6.1.0-56-rt-arm64", 1.10, None),
        "rtmux-linux": linux_result("6.1.0-56-arm64", 1.00, 0.608),
        "rtmux-rtos-idle": linux_result("6.1.0-56-arm64", 1.01, None),
        "rtmux-loaded": linux_result("6.1.0-56-arm64", 1.01, None, load_start=1.05),
    }
    r.kernels = {
        "std": model.KernelInfo("std", "6.1.0-56-arm64", "linux-image-6.1.0-56-arm64-unsigned", "6.1.192-2"),
        "rt": model.KernelInfo(
            "rt", "6.1.0-56-rt-arm64", "linux-image-6.1.0-56-rt-arm64-unsigned", "6.1.192-2"
        ),
    }
    r.determinism = model.Determinism(1000, ["idle", "with its own load"], [])
    r.docs = [
        model.RunDoc(
            "linux-std", "Linux std bare", "./rtmux linux run ...", "qemu-system-aarch64 ...", "say x"
        )
    ]
    return r


def test_table_rows() -> None:
    lines = report.table_rows(results())
    assert lines[0] == "| case | min | avg | p99 | p99.9 | max | overruns | EL2 entries | samples |"
    assert lines[2] == "| label rtos-bare-idle | 0.400 | 0.410 | 0.400 | 0.400 | 0.400 | 0 | – | 10000 |"
    assert lines[5] == "| label rtos-rtmux-load | 0.400 | 0.410 | ≤0.608 | ≤0.608 | 0.608 | 3 | 2 | 11500 |"
    assert lines[6] == "| label linux-std-idle | 4 | 4.29 | 9 | 14 | 16 | – | – | 10000 |"
    assert len(lines) == 13


def test_csv_round_trip() -> None:
    text = report.render_csv(results())
    rows = report.read_csv(text)
    assert [r["case"] for r in rows][:2] == ["rtos-bare-idle", "rtos-bare-load"]
    assert rows[5]["max_us"] == "29" and rows[5]["overruns"] == "" and rows[5]["load"] == "1"
    assert rows[3]["p99_9_us"] == "0.608" and rows[3]["overruns"] == "3"
    assert [rows[i]["percentiles"] for i in (0, 3, 5)] == ["exact", "upper bound", "exact"]
    assert [row["rtos_el2_entries"] for row in rows[:5]] == ["", "", "0", "2", ""]
    assert text.splitlines()[0] == ",".join(report.CSV_FIELDS)
    with pytest.raises(Exception, match="unexpected CSV columns"):
        report.read_csv("a,b\n1,2\n")


def test_targets() -> None:
    got = {t.name: t for t in report.targets(results())}
    assert got["rtos bare metal max idle <= 2 us"].met
    assert got["rtos context switch <= 500 ns"].measured == "441.997 ns"
    same = got["rtos in partition, Linux load: max <= 1.05 x rtos bare max (idle: the same rtos work)"]
    assert not same.met and same.measured == "0.608 us = 1.52 x 0.400 us"
    own = got["rtos in partition, Linux load: max <= 1.05 x rtos bare max (under its own load)"]
    assert own.met
    rt = got["rtos in partition, Linux load: max <= 0.1 x PREEMPT_RT cyclictest max, same Linux load"]
    assert rt.met and rt.measured == "0.608 us = 0.030 x 20 us"
    loaded_max = got["Linux under rtmux: cyclictest max, Linux load, within 10% of bare"]
    assert not loaded_max.met and loaded_max.measured == "30 vs 29 us = 1.03 x" or loaded_max.met
    assert (
        got["Linux under rtmux: cyclictest avg, idle, within 10% of bare"].measured
        == "4.38 vs 4.29 us = 1.02 x"
    )
    hb = got["Linux under rtmux: `hackbench -g 2 -f 10 -l 500` within 10% of bare"]
    assert hb.met and hb.measured == "0.608 vs 0.599 s = 1.02 x"
    cpu0 = got["Linux under rtmux on CPU 0 (artifact check): cyclictest max, Linux load, within 10% of bare"]
    assert not cpu0.met and cpu0.measured == "96 vs 29 us = 3.31 x"
    idle = got["rtos in partition, Linux idle: EL2 entries of the rtos CPU while it measures = 0"]
    assert idle.met and idle.measured == "0"
    load = got["rtos in partition, Linux load: EL2 entries of the rtos CPU while it measures = 0"]
    assert not load.met and load.measured == "2"
    timer = got["rtos bare metal idle: timer interrupt to its thread <= 0.25 us"]
    assert not timer.met and timer.measured == "0.400 us"
    fp_switch = got["rtos context switch, FP/SIMD in both threads, <= 300 ns"]
    assert not fp_switch.met and fp_switch.measured == "441.997 ns"
    ratio = got["rtos bare metal, rtos load: max <= 1.05 x idle max, same run"]
    assert not ratio.met and ratio.measured == "0.720 us = 1.80 x 0.400 us"
    assert len(got) == 18


def test_targets_missed() -> None:
    got = {t.name: t.met for t in report.targets(results(part_max=1834.0, rt_max=20, rtmux_load_max=41))}
    assert not got["rtos in partition, Linux load: max <= 0.1 x PREEMPT_RT cyclictest max, same Linux load"]
    assert not got["Linux under rtmux: cyclictest max, Linux load, within 10% of bare"]


def test_render_section() -> None:
    r = results()
    figures = {"headline": Path("/repo/docs/img/h.png"), "histograms": Path("/repo/docs/img/p.png")}
    text = report.render_section(r, Path("/repo/BENCHMARKS.csv"), figures, Path("/repo/B.md"))
    assert text.startswith("## rtos, Linux and PREEMPT_RT Linux, bare and under rtmux (QEMU icount)")
    assert "2025-03-01 12:00 UTC from commit `30325e3` with" in text
    assert "2025-03-01 12:00 UTC" in text and "`QEMU emulator version 7.2.0`" in text
    assert (
        "PREEMPT_RT `6.1.0-56-rt-arm64` (Debian `linux-image-6.1.0-56-rt-arm64-unsigned` 6.1.192-2)" in text
    )
    assert "in 12:34 of wall time, 2 QEMU run(s) at a time" in text
    headline = f"![{report.FIGURES['headline'][1]}](docs/img/h.png)"
    histograms = f"![{report.FIGURES['histograms'][1]}](docs/img/p.png)"
    assert f"\n\n{headline}\n\n{histograms}\n\nAll figures: [`BENCHMARKS.csv`]" in text, "beside the table"
    assert "[`BENCHMARKS.csv`](BENCHMARKS.csv)" in text
    said = "rtos cases (idle and with its own load, 1000 samples each) were run three times: **identical**"
    assert said in text
    assert "| rtos in partition, Linux load: max <= 1.05 x rtos bare max (idle: the same rtos work) |" in text
    assert "| boot to shell (guest s, /proc/uptime) | 1.04 | 1.10 | 1.00 | 0.96 |" in text
    assert "| `hackbench -g 2 -f 10 -l 500` (guest s) | 0.599 | – | 0.608 | 1.02 |" in text
    assert "| 20002 | 8840832 | 441.997 |" in text
    assert "about 10450 of the loaded run's samples" in text
    assert "Quick run" not in text and "<!--" not in text
    assert "```sh\nsay x\n```" in text
    assert text.rstrip().endswith("</details>")


def test_render_section_quick_late_load_and_differences() -> None:
    r = results()
    r.quick, r.samples, r.partition_samples = True, 1000, 2500
    r.linux["rtmux-loaded"].load_start_s = 1.7
    assert r.determinism is not None
    r.determinism.differences = ["idle: histograms differ"]
    text = report.render_section(r, Path("/r/B.csv"), None, Path("/r/B.md"))
    assert "**Quick run** (`./rtmux bench --quick`, 1000 samples per case)" in text
    assert "**That is fewer than 1000: the load started late.**" in text
    assert (
        "**NOT identical** (RTS| summary, every RTD| interval and the histogram). idle: histograms differ"
        in text
    )
    assert "![" not in text


def test_render_section_realtime() -> None:
    r = results(mode=model.MODE_REALTIME)
    r.determinism = None
    text = report.render_section(r, Path("/r/B-realtime.csv"), None, Path("/r/B.md"))
    assert text.startswith("## The same cases without icount (plain TCG: host-noise-dominated)")
    assert "**Host-noise-dominated:**" in text and "`./rtmux bench --realtime`" in text
    assert "Targets:" not in text and "Determinism" not in text


def test_summary_lines() -> None:
    lines = report.summary_lines(results(part_max=1834.0))
    assert (
        lines[0]
        == "label rtos-bare-idle: min 0.400 avg 0.410 p99 0.400 p99.9 0.400 max 0.400 us (10000 samples)"
    )
    assert any(line.startswith("target rtos in partition") and line.endswith("(MISSED)") for line in lines)
    assert lines[-1] == "determinism: quick bare rtos cases run three times: identical"


def test_paths() -> None:
    out = Path("/r/BENCHMARKS.md")
    assert report.csv_path(out, "icount") == Path("/r/BENCHMARKS.csv")
    assert report.csv_path(out, "realtime") == Path("/r/BENCHMARKS-realtime.csv")
    assert report.plot_path(out, "icount") == Path("/r/docs/img/bench-latency.png")
    assert report.markers("realtime") == ("<!-- bench-realtime:begin -->", "<!-- bench-realtime:end -->")


def test_write_all(tmp_path: Path) -> None:
    out = tmp_path / "BENCHMARKS.md"
    out.write_text("# rtmux benchmarks\n\nintro\n\n## Findings\n\nkept\n")
    written = report.write_all(results(), out)
    img = tmp_path / "docs" / "img"
    assert written == [
        out,
        tmp_path / "BENCHMARKS.csv",
        img / "bench-headline.png",
        img / "bench-latency.png",
    ]
    text = out.read_text()
    assert text.startswith(
        "# rtmux benchmarks\n\nintro\n\n## Findings\n\nkept\n\n<!-- bench-icount:begin -->\n"
    )
    assert text.endswith("<!-- bench-icount:end -->\n")
    for png in written[2:]:
        assert_png(png)
    assert "](docs/img/bench-headline.png)" in text and "](docs/img/bench-latency.png)" in text
    assert len(report.read_csv((tmp_path / "BENCHMARKS.csv").read_text())) == 11
    report.write_all(results(), out)
    assert out.read_text() == text, "a second run replaces its section"


# -------------------------------------------------------------------------------------------------- plot


def test_steps_rtos_narrowed_to_min_and_max() -> None:
    xs, ys = plot.steps(plot.Curve("a", "s", False, {0: 990, 3: 10}, 0.4, 3.2, False))
    assert xs == [0.4, 1.0, 2.0, 3.0, 3.2]
    assert ys[0] == 990 and math.isnan(ys[1]) and math.isnan(ys[2]) and ys[3:] == [10, 10]
    xs, ys = plot.steps(plot.Curve("a", "s", False, {0: 1000}, 0.4, 0.4, False))
    assert xs == [0.4, 0.4] and ys == [1000, 1000]


def test_steps_whole_us_and_markers() -> None:
    c = plot.Curve("a", "s", True, {4: 5, 6: 2}, 4.0, 6.0, True)
    xs, ys = plot.steps(c)
    assert xs == [4.0, 5.0, 6.0, 7.0] and ys[0] == 5 and math.isnan(ys[1]) and ys[2:] == [2, 2]
    mx, my = plot.markers(c)
    assert my == [5, 2] and mx[0] == pytest.approx(math.sqrt(20))
    assert plot.steps(plot.Curve("a", "s", True, {}, 0, 0, True)) == ([], [])
    xs, _ = plot.steps(plot.Curve("a", "s", True, {0: 3}, 0, 0, True))
    assert xs == [plot.SMALLEST_US, 1.0], "a cell at 0 starts at the log axis' left edge"


def test_cyclictest_histogram_feeds_a_row() -> None:
    hist = cyclictest.Histogram({4: 9, 9: 1}, 10, 4, 4, 9, 0)
    stats = hist.stats()
    assert stats.p99_us == 9.0 and stats.avg_us == 4.5


def assert_png(path: Path) -> None:
    """A valid, non-trivial PNG that matplotlib reads back."""
    import matplotlib.image

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, path
    height, width = matplotlib.image.imread(path).shape[:2]
    assert height > 200 and width > 200, path


def add_vbus(r: model.BenchResults) -> None:
    """The V-Bus case's row and rtmux-ping results."""
    stats = rtos_stats(0.960, 16900)
    r.rows.insert(
        4,
        model.Row(
            "rtos-rtmux-vbus",
            "label vbus",
            "rtos in rtmux",
            False,
            stats,
            {0: 16900},
            Path("/x/v.dat"),
            "run",
            0,
        ),
    )
    v = linux_script.VbusResult(
        rtmux_ping.RoundTrips(18.5, 18.9, 21.4, 93.3, 10000),
        rtmux_ping.RoundTrips(17.5, 18.1, 21.1, 87.1, 10000),
        rtmux_ping.Throughput(28.3, 28.2),
        rtmux_ping.Throughput(31.3, 31.3),
        5.4,
    )
    r.linux["rtmux-vbus"] = linux_result("6.1.0-56-arm64", 1.01, None)
    r.linux["rtmux-vbus"].vbus = v


def test_vbus_targets_and_table() -> None:
    r = results()
    add_vbus(r)
    got = {t.name: t for t in report.targets(r)}
    ratio = got["V-Bus round trip avg <= 1.5 x the pipe reference, same run"]
    assert ratio.met and ratio.measured == "18.9 vs 18.1 us = 1.04 x"
    assert got["V-Bus round trip avg <= 20 us"].met
    bulk = got["V-Bus throughput >= 100 MB/s each way (4 KiB writes)"]
    assert not bulk.met and bulk.measured == "28.3 / 28.2 MB/s (pipe 31.3 / 31.3)"
    rtos = got["rtos in partition, V-Bus traffic: max <= 1.05 x its max without (Linux idle)"]
    assert not rtos.met and rtos.measured == "0.960 us = 1.58 x 0.608 us"
    assert got["rtos in partition, V-Bus traffic: EL2 entries of the rtos CPU while it measures = 0"].met
    section = report.render_section(r, Path("/x/B.csv"), None, Path("/x/B.md"))
    assert "| V-Bus (`echo`) | 18.5 | 18.9 | 21.4 | 93.3 | 28.3 | 28.2 |" in section
    assert "| pipe pair | 17.5 | 18.1 | 21.1 | 87.1 | 31.3 | 31.3 |" in section
    assert (
        "V-Bus"
        not in report.render_section(results(), Path("/x/B.csv"), None, Path("/x/B.md")).split(
            "### How each case runs"
        )[0]
    )


def test_smp_targets_and_table() -> None:
    r = results()
    r.rows.append(
        model.Row(
            "rtos-rtmux-smp-load",
            "label smp",
            "rtos in rtmux",
            True,
            rtos_stats(12355.968, 13100, 3337),
            {0: 13100},
            Path("/x/s.dat"),
            "run",
            0,
        )
    )
    r.linux["linux-std-smp3"] = linux_result("6.1.0-56-arm64", 1.00, 0.655)
    r.linux["rtmux-smp"] = linux_result("6.1.0-56-arm64", 1.06, 0.730)
    r.linux["linux-std-smp3"].cpus = r.linux["rtmux-smp"].cpus = 3
    got = {t.name: t for t in report.targets(r)}
    hackbench = got["Linux on 3 CPUs under rtmux: `hackbench -g 2 -f 10 -l 500` within 10% of bare -smp 3"]
    assert not hackbench.met and hackbench.measured == "0.730 vs 0.655 s = 1.11 x"
    rtos = got["rtos in partition, 3-CPU Linux load: max <= 1.05 x its max with a 1-CPU Linux load"]
    assert not rtos.met and rtos.measured == "12355.968 us = 20322.32 x 0.608 us"
    assert got["rtos in partition, 3-CPU Linux load: EL2 entries of the rtos CPU while it measures = 0"].met
    section = report.render_section(r, Path("/x/B.csv"), None, Path("/x/B.md"))
    assert "| CPUs Linux counted | 3 | 3 | |" in section
    assert "| boot to shell (guest s, /proc/uptime) | 1.00 | 1.06 | 1.06 |" in section
    assert "| `hackbench -g 2 -f 10 -l 500` (guest s) | 0.655 | 0.730 | 1.11 |" in section
    # without the multi-CPU runs (a --quick run): no table, no targets
    plain = results()
    assert "Linux on three CPUs" not in report.render_section(plain, Path("/x/B.csv"), None, Path("/x/B.md"))
    assert not [t for t in report.targets(plain) if "3-CPU" in t.name or "3 CPUs" in t.name]


FILES_RUN = """\
LSB| pread64 samples 1000 min_ns 38304 avg_ns 45069 p99_ns 50000 max_ns 319904
LSB| write bytes 4194304 ns 72006832
LSB| hist alone 0 1000
LSB| latency alone samples 1000 min_ns 448 avg_ns 448 p99_ns 448 p999_ns 448 max_ns 448 overruns 0 reads 0
LSB| hist linux_busy 0 1000
LSB| latency linux_busy samples 1000 min_ns 448 avg_ns 493 p99_ns 656 p999_ns 656 max_ns 656 overruns 0 \
reads 0
LSB| hist remote_io 0 836
LSB| hist remote_io 1 164
LSB| latency remote_io samples 1000 min_ns 448 avg_ns 658 p99_ns 1792 p999_ns 1824 max_ns 1840 overruns 0 \
reads 8143
LSB| done
"""


def add_files(r: model.BenchResults, el2: int = 0) -> None:
    """The Linux's-files case: its three latency rows and its boot's figures."""
    rtos = linux_files.parse(FILES_RUN)
    for row_id, kind, load in (
        ("files-rtos-rtmux-alone", "alone", False),
        ("files-rtos-rtmux-linux-load", "linux_busy", True),
        ("files-rtos-rtmux-io-load", "remote_io", True),
    ):
        lat = rtos.latency[kind]
        r.rows.append(
            model.Row(row_id, f"label {row_id}", "rtos in rtmux, POSIX thread", load, lat.stats(),
                      dict(lat.cells), Path(f"/x/{row_id}.txt"), "rtmux-files", el2)
        )  # fmt: skip
    res = linux_result("6.1.0-56-arm64", 1.19, None)
    res.files = linux_script.FilesResult(
        rtos, linux_files.Throughput(4194304, 8599184), 10687376, 2088192, 57
    )
    res.rtos_el2 = el2
    r.linux["rtmux-files"] = res


def test_files_targets_and_table() -> None:
    r = results()
    add_vbus(r)
    add_files(r)
    got = {t.name: t for t in report.targets(r)}
    pread = got["Linux's files: remote pread of 64 B, avg <= 1.5 x the V-Bus echo round trip avg, same run"]
    assert not pread.met and pread.measured == "45.1 vs 18.9 us = 2.38 x" and pread.measured_here
    lat = got[
        "Linux's files: 1 kHz POSIX thread's max beside a thread on remote preads <= 1.05 x its max alone, "
        "same boot"
    ]
    assert not lat.met and lat.measured == "1.840 us = 4.11 x 0.448 us"
    busy = got[
        "Linux's files: 1 kHz POSIX thread's p99.9 beside a thread on remote preads <= 1.05 x its p99.9 "
        "alone beside a busy Linux (no remote I/O), same boot"
    ]
    assert not busy.met and busy.measured == "1.824 us = 2.78 x 0.656 us"
    el2 = got[
        "Linux's files: EL2 entries of the rtos CPU from 4 ms after boot to the program's exit (its wait for "
        "Linux, remote calls, the latency runs) = 0"
    ]
    assert el2.met and el2.measured == "0"
    section = report.render_section(r, Path("/x/B.csv"), None, Path("/x/B.md"))
    assert "### Linux's files from an rtos thread" in section
    assert (
        "| remote `pread` of 64 B: rtos thread to Linux's `diod` and back (1000 calls) | 38.3 | 45.1 | 50.0 "
        "| 319.9 |" in section
    )
    assert (
        "| V-Bus echo of 64 B, same run: Linux program to rtos thread and back (10000 round trips, above) "
        in section
    )
    assert "cRTOS's 27.7 us on a Xeon" in section
    assert "| rtos thread, remote (`write`, `fsync`; open and close not timed) | 72.007 | 58.2 |" in section
    assert (
        "| Linux, local: `dd if=/dev/zero of=/srv/rtos/bench-w.bin bs=8k count=512 conv=fsync` (its start, "
        "open, sync and close subtracted: a dd of no block took 2.088 ms) | 8.599 | 487.8 |" in section
    )
    assert "reach 0.12 x Linux's local rate" in section
    assert (
        "| label files-rtos-rtmux-io-load | 0.448 | 0.658 | ≤1.792 | ≤1.824 | 1.840 | 0 | 0 | 1000 |"
        in section
    )
    assert (
        "Linux's rounds of its load while the rtos asked for it: 57; the other thread's remote preads"
        in section
    )
    assert "during the last run: 8143" in section
    # its rows are in its own table and the CSV, not in the main latency table
    assert not any("files-" in line for line in report.table_rows(r))
    assert len(report.table_rows(r, files=True)) == 5
    assert [row["case"] for row in report.read_csv(report.render_csv(r))][-3:] == list(model.FILES_ROWS)
    assert (
        "| Linux's files: remote pread of 64 B" in section
        and "| 45.1 vs 18.9 us = 2.38 x | **missed** |" in section
    )


def test_files_without_the_vbus_case_and_without_the_case() -> None:
    r = results()
    add_files(r, el2=2)
    got = {t.name: t for t in report.targets(r)}
    pread = got["Linux's files: remote pread of 64 B, avg <= 1.5 x the V-Bus echo round trip avg, same run"]
    assert not pread.measured_here and pread.measured == "45.1 us; the V-Bus case did not run"
    assert not [t for t in got.values() if "EL2 entries of the rtos CPU from 4 ms" in t.name][0].met
    section = report.render_section(r, Path("/x/B.csv"), None, Path("/x/B.md"))
    assert "| 45.1 us; the V-Bus case did not run | not measured |" in section
    assert "V-Bus echo of 64 B" not in section
    assert any(line.endswith("(not measured)") for line in report.summary_lines(r))
    plain = results()
    assert "Linux's files" not in report.render_section(plain, Path("/x/B.csv"), None, Path("/x/B.md"))
    assert not [t for t in report.targets(plain) if "Linux's files" in t.name]


def add_shared(r: model.BenchResults) -> None:
    """The shared-core cases' row and the hypervisor's books."""
    r.rows.append(
        model.Row(
            "rtos-shared-load", "label shared", "rtos in rtmux", True, rtos_stats(1.5, 11500), {1: 11500},
            Path("/x/s.dat"), "run",
        )
    )  # fmt: skip
    share = hyp_console.ShareReport(
        0,
        "rtos",
        "linux",
        {
            "rtos_ms": 400, "linux_ms": 11000, "idle_ms": 0, "to_linux": 11500, "to_rtos": 11499,
            "switch_ns_to_linux": 432, "switch_ns_to_rtos": 384, "longest_wait_ms": 0, "starved": 0,
        },
    )  # fmt: skip
    for case, irq in (("idle", 0), ("loaded", 1)):
        res = linux_result("6.1.0-56-arm64", 1.3, None, load_start=1.4)
        res.share, res.rtos_el2_by_cause = share, {"total": 11510 + irq, "wfi": 11500, "irq": irq}
        r.linux[f"rtmux-shared-{case}"] = res
    r.linux["rtmux-shared-hackbench"] = linux_result("6.1.0-56-arm64", 1.10, 0.640)


def test_shared_targets_and_table() -> None:
    r = results()
    add_shared(r)
    got = {t.name: t for t in report.targets(r)}
    assert got["rtos sharing its CPU with Linux, Linux load: max <= 2 us"].met
    ratio = got[
        "rtos sharing its CPU with Linux, Linux load: max <= 0.1 x PREEMPT_RT cyclictest max (-smp 1, same "
        "Linux load)"
    ]
    assert ratio.met and ratio.measured == "1.500 us = 0.075 x 20 us"
    through = "rtos sharing its CPU with Linux, {}: its interrupts taken through EL2 while it measures = 0"
    assert got[through.format("Linux idle")].met and not got[through.format("Linux load")].met
    hb = got[
        "Linux on the CPU it shares with an idle rtos: `hackbench -g 2 -f 10 -l 500` within 10% of bare "
        "-smp 1"
    ]
    assert hb.met and hb.measured == "0.640 vs 0.599 s = 1.07 x"
    section = report.render_section(r, Path("/x/B.csv"), None, Path("/x/B.md"))
    assert "| loaded | 432 | 384 | 11500 / 11499 | 400 / 11000 / 0 | 11500, 1 |" in section
    assert "| `hackbench -g 2 -f 10 -l 500` (guest s) | 0.599 | 0.640 | 1.07 |" in section
    plain = results()
    assert "Shared-core mode" not in report.render_section(plain, Path("/x/B.csv"), None, Path("/x/B.md"))
    assert not [t for t in report.targets(plain) if "shares" in t.name or "sharing" in t.name]


def test_control_loop_table_and_what_it_shows() -> None:
    """The POSIX control loop's rows get their own table (not the latency table's) and a sentence
    comparing the rtos partition with PREEMPT_RT under the same load; the CSV has them too."""
    r = results()
    for row_id, system, load, stats, el2 in (
        ("ctl-rtos-bare", "rtos bare", False, rtos_stats(0.5), None),
        ("ctl-rtos-rtmux-load", "rtos in rtmux", True, rtos_stats(0.752, 11500), 0),
        ("ctl-linux-rt-load", "Linux PREEMPT_RT", True, rtos_stats(21.36), None),
    ):
        r.rows.append(
            model.Row(
                row_id, f"label {row_id}", system, load, stats, {0: 1}, Path(f"/x/{row_id}.txt"), "run",
                el2_entries=el2,
            )
        )  # fmt: skip
    assert not any("ctl-" in line for line in report.table_rows(r))
    control = report.table_rows(r, control=True)
    assert [line.split(" | ")[0] for line in control[2:]] == [
        "| label ctl-rtos-bare", "| label ctl-rtos-rtmux-load", "| label ctl-linux-rt-load",
    ]  # fmt: skip
    assert (
        control[3]
        == "| label ctl-rtos-rtmux-load | 0.400 | 0.410 | ≤0.752 | ≤0.752 | 0.752 | 0 | 0 | 11500 |"
    )
    text = report.render_section(r, Path("/r/B.csv"), None, Path("/r/B.md"))
    assert "### Same source, two systems: a POSIX control loop" in text
    assert "`examples/control-loop/control_loop.c`" in text and "`control-loop 10000`" in text
    assert (
        "wakes up at worst 0.752 us late in the rtos partition while Linux runs the load beside it "
        "(EL2 entries of its CPU: 0), and 21.360 us late on PREEMPT_RT under that same load (28 x; "
        "p99.9 ≤0.752 against ≤21.360 us); on the bare rtos its worst is 0.500 us." in text
    )
    assert "ctl-linux-rt-load" in report.render_csv(r)


def test_no_control_loop_table_without_its_rows() -> None:
    text = report.render_section(results(), Path("/r/B.csv"), None, Path("/r/B.md"))
    assert "Same source" not in text


def test_posix_cost_targets_and_table() -> None:
    """Each POSIX measurement is a target (<= 1.1 x native) and a row of its own table; none without a run."""
    r = results()
    assert not [t for t in report.targets(r) if t.name.startswith("POSIX")]
    assert "The POSIX layer's cost" not in report.render_section(r, Path("/r/B.csv"), None, Path("/r/B.md"))
    r.posix_cost = posix_cost.parse(
        "PXC| mutex native_ns 181.001 posix_ns 203.000 ratio 1.121\n"
        "PXC| wake native_ns 332.000 posix_ns 361.001 ratio 1.087\n"
        "PXC| wake-max native_ns 336 posix_ns 368\n"
        "PXC| periodic native_ns 400.000 posix_ns 416.000 ratio 1.040\n"
        "PXC| periodic-max native_ns 400 posix_ns 416\n"
        "PXC| done\n"
    )
    got = {t.name: t for t in report.targets(r)}
    assert not got["POSIX mutex <= 1.1 x native"].met
    assert got["POSIX wake <= 1.1 x native"].met and got["POSIX periodic <= 1.1 x native"].met
    assert got["POSIX mutex <= 1.1 x native"].measured == "x1.121 (203.000 / 181.001 ns)"
    text = report.render_section(r, Path("/r/B.csv"), None, Path("/r/B.md"))
    assert "The POSIX layer's cost" in text
    assert "| uncontended lock + unlock (default mutex / rt_mutex) | 181.001 | 203.000 | 1.121 | - |" in text
    assert "| 332.000 | 361.001 | 1.087 | 336 / 368 |" in text


# ------------------------------------------------------------------------------------------- figures


def test_headline_bars_groups_values_and_targets() -> None:
    r = results()
    add_vbus(r)
    add_shared(r)
    bars = report.headline_bars(r)
    got = [(b.group.split("\n")[0], b.condition) for b in bars]
    assert got == [
        ("rtos", "idle"), ("rtos", "own load"),
        ("rtos under rtmux,", "Linux idle"), ("rtos under rtmux,", "Linux loaded"),
        ("rtos under rtmux,", "Linux loaded"),  # sharing Linux's CPU: only its loaded case here
        ("rtos under rtmux,", "Linux talking"),
        ("PREEMPT_RT Linux", "idle"), ("PREEMPT_RT Linux", "loaded"),
        ("Linux", "idle"), ("Linux", "loaded"),
        ("Linux under rtmux", "idle"), ("Linux under rtmux", "loaded"),
    ]  # fmt: skip
    assert "linux-rtmux0-load" not in {b.condition for b in bars}, "reference rows are in the table only"
    part = bars[3]
    assert (part.max_us, part.p999_us, part.avg_us, part.p999_bound) == (0.608, 0.608, 0.41, True)
    assert [(stat, label) for stat, _, label in plot.bar_values(part)] == [
        ("max", "0.608"), ("p99.9", "≤0.608"), ("avg", "0.410")
    ]  # fmt: skip
    # the partition's worst case: 1.05 x the bare idle and loaded maxima, 0.1 x PREEMPT_RT's
    assert [(round(limit, 6), name, met) for limit, name, met in part.targets] == [
        (0.42, "1.05 x bare idle", False),
        (0.756, "1.05 x bare loaded", True),
        (2.0, "0.1 x PREEMPT_RT", True),
    ]
    assert plot.target_text(part).splitlines()[0] == "max ≤ 0.42 us (1.05 x bare idle): MISSED"
    # equal bounds are one mark; an absolute bound has no name
    shared = bars[4]
    assert shared.targets == ((2.0, "0.1 x PREEMPT_RT", True),)
    assert plot.target_text(bars[0]) == "max ≤ 2 us: met"
    linux = bars[-1]
    assert plot.bar_values(linux)[0][2] == "30" and plot.bar_values(linux)[2][2] == "5.50"
    assert [(round(limit, 6), name, met) for limit, name, met in linux.targets] == [
        (31.9, "1.1 x bare", True)
    ]
    assert report.headline_bars(results(mode=model.MODE_REALTIME))[0].targets == ()


def test_layout_groups_rows() -> None:
    bars = [plot.Bar(g, c, 1, 2, 3, True) for g, c in (("a", "idle"), ("a", "loaded"), ("b", "idle"))]
    lay = plot.layout(bars)
    assert lay.ys == [0.0, 1.0, 2.0 + plot.GROUP_GAP] and lay.labels == ["idle", "loaded", "idle"]
    assert lay.groups == [("a", 0.0, 1.0), ("b", 2.0 + plot.GROUP_GAP, 2.0 + plot.GROUP_GAP)]


def test_titles_name_the_run() -> None:
    r = results()
    assert (
        report.run_name(r)
        == "full run of 2025-03-01, commit 30325e3, QEMU icount, guest time, 10000 samples per case"
    )
    r.quick, r.samples = True, 1000
    assert report.headline_title(r).endswith(
        "quick run of 2025-03-01, commit 30325e3, QEMU icount, guest time, 1000 samples per case"
    )


def test_histogram_curves_split_and_styles() -> None:
    curves = report.curves(results())
    rows = plot.fine_rows(curves)
    assert [row[0] for row in rows] == [
        f"label rtos-{k}" for k in ("bare-idle", "bare-load", "rtmux-idle", "rtmux-load")
    ]
    assert rows[1][1:] == (0.4, 0.72, 0.41, 0.72)
    coarse = [c for c in curves if not plot.fine(c)]
    assert len(coarse) == 7
    got = plot.styles(20)
    assert len(set(got)) == 20, "no two curves alike"
    assert all(a[0] != b[0] and a[1] != b[1] for a, b in zip(got, got[1:], strict=False)), "neighbours differ"


def test_figure_dir(tmp_path: Path) -> None:
    from rtmux import paths

    data = tmp_path / "data"
    assert report.figure_dir(paths.BENCHMARKS_MD, True, data) == data / "img", "a quick run: not docs/img"
    assert report.figure_dir(paths.BENCHMARKS_MD, False, data) == paths.REPO_ROOT / "docs" / "img"
    assert report.figure_dir(tmp_path / "B.md", True, data) == tmp_path / "docs" / "img"


def test_every_figure_drawn_and_linked_beside_its_table(tmp_path: Path) -> None:
    r = results()
    add_vbus(r)
    add_shared(r)
    out = tmp_path / "B.md"
    figures = tmp_path / "figs"
    written = report.write_all(r, out, figures)
    names = ["bench-headline.png", "bench-latency.png", "bench-vbus.png", "bench-shared.png"]
    assert written[2:] == [figures / n for n in names]
    for png in written[2:]:
        assert_png(png)
    text = out.read_text()
    vbus = text.index("| pipe pair |")
    assert text.index("](figs/bench-vbus.png)") > vbus and text.index(
        "](figs/bench-shared.png)"
    ) > text.index("| loaded | 432 | 384 |")
    v = report.vbus_figure(r)
    assert v is not None and v.rtt == (18.5, 18.9, 21.4, 93.3) and v.pipe_mbps == (31.3, 31.3)
    s = report.shared_figure(r)
    assert s is not None and s.switches == (("idle", 432.0, 384.0), ("loaded", 432.0, 384.0))
    assert [row[0] for row in s.latency][-1] == "shared CPU, Linux loaded"
    assert report.vbus_figure(results()) is None and report.shared_figure(results()) is None


def test_redraw_from_the_csv_and_section(tmp_path: Path) -> None:
    r = results()
    out = tmp_path / "BENCHMARKS.md"
    report.write_all(r, out)
    back = report.results_from_csv((tmp_path / "BENCHMARKS.csv").read_text(), out.read_text())
    assert (back.date, back.source, back.samples, back.quick) == (r.date, "30325e3", 10000, False)
    assert back.qemu_version == "QEMU emulator version 7.2.0"
    assert report.headline_bars(back) == report.headline_bars(r)
    assert report.headline_title(back) == report.headline_title(r)
    (tmp_path / "docs" / "img" / "bench-headline.png").unlink()
    assert report.redraw(out) == [tmp_path / "docs" / "img" / "bench-headline.png"]
    assert_png(tmp_path / "docs" / "img" / "bench-headline.png")
    with pytest.raises(Exception, match="not found"):
        report.redraw(tmp_path / "none.md")
    with pytest.raises(Exception, match="no `<!-- bench-icount:begin -->` section"):
        report.results_from_csv((tmp_path / "BENCHMARKS.csv").read_text(), "# nothing\n")


def test_vbus_distribution(tmp_path: Path) -> None:
    xs, ys = plot.exceedance(0.1, {185: 6, 186: 3, 190: 1})
    assert xs == pytest.approx([18.5, 18.6, 19.0, 19.1]) and ys == pytest.approx([1.0, 0.4, 0.1, 0.1])
    assert plot.exceedance(0.1, {}) == ([], [])
    r = results()
    add_vbus(r)
    v = r.linux["rtmux-vbus"].vbus
    assert v is not None
    r.linux["rtmux-vbus"].vbus = linux_script.VbusResult(
        v.rtt, v.pipe_rtt, v.bulk, v.pipe_bulk, v.end_s,
        rtmux_ping.RttHistogram(100, {185: 9000, 190: 999, 933: 1}),
        rtmux_ping.RttHistogram(100, {175: 10000}),
    )  # fmt: skip
    fig = report.vbus_figure(r)
    assert fig is not None and fig.hist == (0.1, {185: 9000, 190: 999, 933: 1})
    plot.vbus(fig, tmp_path / "v.png", "t")
    assert_png(tmp_path / "v.png")
