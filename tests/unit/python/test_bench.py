"""BENCHMARKS.md section rendering and replacement."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from rtmux import bench, latmus
from rtmux.errors import RtmuxError

BEGIN, END = bench.BEGIN_MARKER, bench.END_MARKER


def test_replace_section_keeps_other_content() -> None:
    text = f"# Title\n\nintro\n\n{BEGIN}\nold results\n{END}\n\n## Linux\n\nother section\n"
    new = bench.replace_section(text, "new results\n")
    assert new == f"# Title\n\nintro\n\n{BEGIN}\nnew results\n{END}\n\n## Linux\n\nother section\n"
    assert bench.replace_section(new, "new results") == new, "idempotent"


def test_replace_section_appends_when_absent() -> None:
    assert bench.replace_section("# T\n\ntext\n\n\n", "body") == f"# T\n\ntext\n\n{BEGIN}\nbody\n{END}\n"
    assert bench.replace_section("", "body") == f"{BEGIN}\nbody\n{END}\n"


@pytest.mark.parametrize(
    "text",
    [f"{BEGIN}\nx\n", f"x\n{END}\n", f"{END}\n{BEGIN}\n", f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n"],
)
def test_replace_section_refuses_broken_markers(text: str) -> None:
    with pytest.raises(RtmuxError, match="by hand"):
        bench.replace_section(text, "body")


def results(max_idle: float = 1.5, max_load: float = 2.5, per_switch: float = 192.0) -> bench.BenchResults:
    def rts(lat_max: float) -> latmus.RtsLine:
        return latmus.RtsLine(0.0, 0.5, lat_max, 0, 0, 10, 10, "RTS|...")

    lat = [
        bench.LatencyResult(
            case, 10000, rts(m), Path("build/bench") / f"{case.name}.dat", "./rtmux x", "qemu x", 1
        )
        for case, m in zip(bench.LATENCY_CASES, (max_idle, max_load), strict=True)
    ]
    ctx = bench.CtxswResult(
        latmus.CtxLine(20000, int(per_switch * 20000), per_switch), "./rtmux c", "qemu c", 1
    )
    return bench.BenchResults(
        datetime(2025, 3, 1, 12, 0, tzinfo=UTC), "QEMU emulator version 7.2.0", False, lat, ctx
    )


def test_targets() -> None:
    rows = bench.targets(results())
    assert [met for _, _, met in rows] == [True, False, True]
    assert rows[0][0] == "max timer latency idle <= 2 us"
    assert rows[1][0] == "max timer latency with load <= 2 us"
    assert rows[2] == ("context switch <= 500 ns", "192.000 ns", True)
    assert [met for _, _, met in bench.targets(results(2.0, 2.0, 500.0))] == [True, True, True]
    assert [met for _, _, met in bench.targets(results(2.001, 0, 500.5))] == [False, True, False]


def test_render_section() -> None:
    text = bench.render_section(results())
    assert "2025-03-01 12:00 UTC" in text and "`QEMU emulator version 7.2.0`" in text
    assert "| timer latency, idle | 0.000 | 0.500 | 1.500 | 0 | 10000 |" in text
    assert "| 20000 | 3840000 | 192.000 |" in text
    assert "| max timer latency with load <= 2 us | 2.500 us | **missed** |" in text
    assert "| context switch <= 500 ns | 192.000 ns | met |" in text
    assert "./rtmux x" in text and "qemu c" in text
    assert "quick" not in text
    assert BEGIN not in text and END not in text


def test_update_file(tmp_path: Path) -> None:
    out = tmp_path / "BENCHMARKS.md"
    bench.update_file(out, "first")
    assert out.read_text() == f"# rtmux benchmarks\n\n{BEGIN}\nfirst\n{END}\n"
    out.write_text(out.read_text() + "\n## hypervisor\n\nkept\n")
    bench.update_file(out, "second")
    assert out.read_text() == f"# rtmux benchmarks\n\n{BEGIN}\nsecond\n{END}\n\n## hypervisor\n\nkept\n"


def test_fmt_duration() -> None:
    assert bench.fmt_duration(0) == "0:00"
    assert bench.fmt_duration(61.4) == "1:01"
    assert bench.fmt_duration(3725) == "1:02:05"
