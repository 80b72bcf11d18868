"""Smoke test of `./rtmux bench --quick`: every case gives a well-formed row (not checked: the figures,
except one: the rtos partition's CPU takes no EL2 entry while it measures, with Linux idle, loaded or
talking to it over the V-Bus, or while it runs the POSIX control loop or uses Linux's files; icount
makes that count repeat exactly).

Writes into a temporary folder (--output, --data), never into the repository's BENCHMARKS.md or its
pictures; checks that every figure is there, a valid image, and linked from the section.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rtmux.bench import report as benchreport
from rtmux.formats import control_loop, latmus, linux_files

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    "rtos-bare-idle",
    "rtos-bare-load",
    "rtos-rtmux-idle",
    "rtos-rtmux-load",
    "rtos-rtmux-vbus",
    "rtos-rtmux-gicv2-load",
    "linux-std-idle",
    "linux-std-load",
    "linux-rt-idle",
    "linux-rt-load",
    "linux-rtmux-idle",
    "linux-rtmux-load",
    "linux-rtmux-gicv2-load",
    "rtos-bare-trace-idle",
    "rtos-bare-trace-load",
    "rtos-bare-cpu1",
    "rtos-bare-sweep",
    "rtos-shared-load",
    "ctl-rtos-bare",
    "ctl-rtos-rtmux-load",
    "ctl-linux-rt-load",
    "files-rtos-rtmux-alone",
    "files-rtos-rtmux-linux-load",
    "files-rtos-rtmux-io-load",
]  # --quick leaves out the artifact check (linux-rtmux0-load) and the shared-CPU idle case
# --quick took about 2.5 minutes on an otherwise idle 2-core machine before the control loop's cases,
# which add one system boot (35-55 s alone, 2026-11-26) and a second of PREEMPT_RT's load; the
# Linux's-files case adds one system boot (about 50 s alone with its run beside a busy Linux, 2026-11-27)
TIMEOUT_S = 900


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def test_bench_quick(run_rtmux: Callable[..., Any], tmp_path: Path) -> None:
    pictures = sorted((ROOT / "docs" / "img").glob("*.png"))
    committed = {p: digest(p) for p in (ROOT / "BENCHMARKS.md", ROOT / "BENCHMARKS.csv", *pictures)}
    out = tmp_path / "BENCHMARKS.md"
    data = tmp_path / "data"
    r = run_rtmux(
        "bench", "--quick", "--jobs", "1", "--output", str(out), "--data", str(data), timeout=TIMEOUT_S
    )
    why = r.describe()
    assert r.returncode == 0, why
    assert {p: digest(p) for p in committed} == committed, "the repository's results were touched"

    # Progress lines, and the determinism check said in the output.
    assert "case 1 of " in r.stdout and " left] " in r.stdout, why
    assert "determinism: quick bare rtos cases run three times: identical" in r.stdout, why

    rows = benchreport.read_csv((tmp_path / "BENCHMARKS.csv").read_text())
    assert [row["case"] for row in rows] == CASES, why
    for row in rows:
        label = row["case"]
        lo, avg, p99, p999, hi = (float(row[k]) for k in ("min_us", "avg_us", "p99_us", "p99_9_us", "max_us"))
        assert 0 <= lo <= avg <= hi and lo <= p99 <= p999 <= hi, f"{label}: {row}"
        assert int(row["samples"]) >= 1000, f"{label}: {row}"
        assert row["load"] == ("1" if label.endswith("-load") else "0")
        assert (row["overruns"] != "") == label.startswith(("rtos-", "ctl-", "files-")), f"{label}: {row}"
        # the rtos partition's CPU: not one EL2 entry after its initialisation, whatever Linux does
        in_partition = label.startswith(("rtos-rtmux-", "ctl-rtos-rtmux-", "files-rtos-rtmux-"))
        assert row["rtos_el2_entries"] == ("0" if in_partition else ""), f"{label}: {row}"
        if label.startswith("ctl-"):  # the POSIX control loop's own histogram and result lines
            run = control_loop.parse((data / "icount" / f"{label}.txt").read_text())
            assert run.samples == int(row["samples"]) and run.prio > 0, label
            continue
        if label.startswith("files-"):  # Linux's files: rtos/linuxsvc/bench/remote.c's own LSB| lines
            files = linux_files.parse((data / "icount" / f"{label}.txt").read_text())
            kind = {"alone": "alone", "linux-load": "linux_busy", "io-load": "remote_io"}[
                label.removeprefix("files-rtos-rtmux-")
            ]
            assert files.latency[kind].samples == int(row["samples"]) == files.pread.samples, label
            assert files.latency["remote_io"].reads > 0 and files.write.nbytes == 4 << 20, label
            assert files.latency["linux_busy"].reads == 0, label
            continue
        header, counts = latmus.read_histogram_file(data / "icount" / f"{label}.dat")
        assert sum(counts.values()) == int(row["samples"]) == int(header["sample count"]), label

    text = out.read_text()
    begin, end = benchreport.markers("icount")
    section = text[text.index(begin) : text.index(end)]
    assert "**Quick run**" in section
    table = [line for line in section.splitlines() if line.startswith("| ") and line.count("|") == 10]
    # the latency table, the control loop's and Linux's files' (header + one row per case each)
    assert len(table) == 3 + len(CASES), section
    assert "### Same source, two systems: a POSIX control loop" in section
    assert "What it shows: the same source, unchanged, wakes up at worst" in section
    assert "were run three times: **identical" in section
    assert "| rtos context switch <= 500 ns |" in section
    assert (
        "| rtos in partition, Linux load: EL2 entries of the rtos CPU while it measures = 0 | 0 | met |"
        in section
    )
    # The V-Bus case: its table (V-Bus and pipe rows) and its targets, whatever their verdicts.
    vbus = [line for line in section.splitlines() if line.startswith(("| V-Bus (`echo`) |", "| pipe pair |"))]
    assert len(vbus) == 2 and all(line.count("|") == 8 for line in vbus), section
    assert "| V-Bus round trip avg <= 1.5 x the pipe reference, same run |" in section
    assert "| rtos in partition, V-Bus traffic: max <= 1.05 x its max without (Linux idle) |" in section
    # Linux's files: its tables (round trips, writes against Linux's dd) and its targets
    assert "### Linux's files from an rtos thread" in section
    assert "| remote `pread` of 64 B: rtos thread to Linux's `diod` and back (1000 calls) |" in section
    assert (
        "| V-Bus echo of 64 B, same run: Linux program to rtos thread and back (1000 round trips" in section
    )
    assert "| rtos thread, remote (`write`, `fsync`; open and close not timed) |" in section
    assert "| Linux, local: `dd if=/dev/zero of=/srv/rtos/bench-w.bin bs=8k count=512 conv=fsync`" in section
    assert (
        "| Linux's files: remote pread of 64 B, avg <= 1.5 x the V-Bus echo round trip avg, same run |"
        in section
    )
    assert (
        "| Linux's files: 1 kHz POSIX thread's max beside a thread on remote preads <= 1.05 x its max"
        in section
    )
    assert "x its p99.9 alone beside a busy Linux (no remote I/O), same boot |" in section
    assert (
        "| Linux's files: EL2 entries of the rtos CPU from 4 ms after boot to the program's exit (its "
        "wait for Linux, remote calls, the latency runs) = 0 | 0 | met |" in section
    )
    # Every figure, drawn into the temporary folder and linked beside its table.
    import matplotlib.image

    for key in benchreport.FIGURES:
        png = benchreport.figure_path(tmp_path / "docs" / "img", key, "icount")
        image = png.read_bytes()
        assert image[:8] == b"\x89PNG\r\n\x1a\n" and len(image) > 10_000, f"{png.name}: {len(image)} bytes"
        height, width = matplotlib.image.imread(png).shape[:2]
        assert height > 200 and width > 200, png.name
        assert f"](docs/img/{png.name})" in section, png.name
