"""The rtos images under QEMU, through ./rtmux (docs/rtos-console.md is the contract checked here)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

pytestmark = pytest.mark.system

# The latmus column format, widths included (printf "%11.3f|%11.3f|%11.3f|%8d|%6u|%11.3f|%11.3f").
US11 = r" *-?\d+\.\d{3}"
RTD_FORMAT = re.compile(
    rf"^RTD\|(?P<min>{US11})\|(?P<avg>{US11})\|(?P<max>{US11})\|(?P<ovr> *\d+)\|(?P<msw> *\d+)"
    rf"\|(?P<best>{US11})\|(?P<worst>{US11})$"
)
RTD_WIDTHS = (11, 11, 11, 8, 6, 11, 11)
RTS_FORMAT = re.compile(
    r"^RTS\|(?P<min> *-?\d+\.\d{3})\|(?P<avg> *-?\d+\.\d{3})\|(?P<max> *-?\d+\.\d{3})\| *\d+\| *\d+"
    r"\| *\d{2}:\d{2}:\d{2}/\d{2}:\d{2}:\d{2}$"
)
CTX_FORMAT = re.compile(r"^CTX\| switches (\d+) total_ns (\d+) ns_per_switch (\d+\.\d{3})$")
BOOT_LINE = re.compile(r"^rtos: rtmux rtos \S+ entered at EL[12]$", re.MULTILINE)


def lines_with(prefix: str, text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.startswith(prefix)]


def rts_max(text: str) -> float:
    (rts,) = lines_with("RTS|", text)
    m = RTS_FORMAT.match(rts)
    assert m, f"malformed RTS line {rts!r}"
    return float(m["max"])


# Counter frequencies of real boards besides QEMU's 62.5 MHz: conversions and timeouts must hold at each
# (i.MX 8M 24 MHz, Raspberry Pi 4 54 MHz, Armv8.6+ 1 GHz, where 2^64 ns no longer fit the counter).
BOARD_CNTFRQ = [None, 24_000_000, 54_000_000, 1_000_000_000]


def cntfrq_args(cntfrq: int | None) -> list[str]:
    return [] if cntfrq is None else ["--cntfrq", str(cntfrq)]


@pytest.mark.parametrize(
    "cntfrq", BOARD_CNTFRQ, ids=lambda f: "qemu" if f is None else f"{f // 1_000_000}MHz"
)
def test_selftest_passes(run_rtmux, cntfrq: int | None) -> None:
    r = run_rtmux("rtos", "selftest", "--icount", *cntfrq_args(cntfrq), timeout=300)
    assert r.returncode == 0, r.describe()
    assert BOOT_LINE.search(r.stdout), r.describe()
    summary = [line for line in r.stdout.splitlines() if re.fullmatch(r"\d+ passed, 0 failed", line.strip())]
    assert summary and int(summary[-1].split()[0]) > 0, r.describe()
    assert "rtos: system off" in r.stdout, r.describe()


def test_selftest_on_gicv2(run_rtmux) -> None:
    """The rtos's GICv2 driver, on the kind of board that has one (a Raspberry Pi 4: GIC-400, counter at
    54 MHz): the whole self-test, SGIs and the timer included. The GICv3 driver would stop at its first
    GIC system-register access there, which the CPU does not implement."""
    r = run_rtmux("rtos", "selftest", "--icount", "--gic", "2", "--cntfrq", "54000000", timeout=300)
    assert r.returncode == 0, r.describe()
    summary = [line for line in r.stdout.splitlines() if re.fullmatch(r"\d+ passed, 0 failed", line.strip())]
    assert summary and int(summary[-1].split()[0]) > 0, r.describe()


def test_latency_on_gicv2_beside_a_second_cpu(run_rtmux, tmp_path) -> None:
    """GICv2 with two CPU interfaces (the targets are implemented, unlike on one CPU), the second CPU
    woken by its own timer PPI through the same driver: the generous icount bound holds."""
    hist = tmp_path / "hist.dat"
    r = run_rtmux(
        "rtos", "latency", "--icount", "--gic", "2", "--cpu1", "tick", "--samples", "2000",
        "--histogram", str(hist), timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.describe()
    assert rts_max(r.stdout) < 20.0, r.describe()
    assert "gic-version=2" in hist.read_text(), hist.read_text()


def test_latency_format(latency_runs: Callable[..., tuple]) -> None:
    r, hist = latency_runs(3000, False)
    assert r.returncode == 0, r.describe()
    out = r.stdout
    assert lines_with("RTT|", out) and lines_with("RTH|", out), r.describe()
    rtd = lines_with("RTD|", out)
    assert len(rtd) >= 3, r.describe()
    for line in rtd:
        assert RTD_FORMAT.match(line), f"RTD line not in latmus format: {line!r}{r.describe()}"
        widths = tuple(len(field) for field in line.split("|")[1:])
        assert widths == RTD_WIDTHS, f"RTD column widths {widths} != {RTD_WIDTHS}: {line!r}"
    assert len(lines_with("RTS|", out)) == 1, r.describe()
    rts_max(out)

    text = hist.read_text()
    counts = [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert all(len(c) == 2 for c in counts), text
    assert sum(int(count) for _, count in counts) == 3000, text
    assert re.search(r"^# sample count: 3000$", text, re.MULTILINE), text
    assert re.search(r"^# sampling period: 1000 us$", text, re.MULTILINE), text
    assert re.search(r"^# QEMU mode: icount", text, re.MULTILINE), text


@pytest.mark.parametrize("load", [False, True], ids=["idle", "load"])
def test_latency_bound_icount(latency_runs: Callable[..., tuple], load: bool) -> None:
    """A generous regression bound in icount mode (the targets are checked by `make bench`)."""
    r, _ = latency_runs(3000, load)
    assert r.returncode == 0, r.describe()
    assert rts_max(r.stdout) < 20.0, r.describe()


@pytest.mark.parametrize("cntfrq", [24_000_000, 54_000_000], ids=["24MHz", "54MHz"])
def test_latency_at_board_frequencies(run_rtmux, cntfrq: int, tmp_path) -> None:
    """The latency monitor at a board's counter rate, under load: the same generous bound."""
    hist = tmp_path / "hist.dat"
    r = run_rtmux(
        "rtos", "latency", "--icount", "--load", "--samples", "2000", "--histogram", str(hist),
        *cntfrq_args(cntfrq), timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.describe()
    assert rts_max(r.stdout) < 20.0, r.describe()
    assert f"cntfrq={cntfrq}" in hist.read_text(), hist.read_text()


def test_latency_is_deterministic_in_icount(latency_runs: Callable[..., tuple]) -> None:
    first, _ = latency_runs(2000, True, "a")
    second, _ = latency_runs(2000, True, "b")
    assert first.returncode == 0, first.describe()
    assert second.returncode == 0, second.describe()
    assert lines_with("RTS|", first.stdout) == lines_with("RTS|", second.stdout), (
        first.describe() + second.describe()
    )


def test_fault_is_reported_and_halts(run_rtmux) -> None:
    r = run_rtmux(
        "rtos",
        "run",
        "--app",
        "selftest",
        "--bootargs",
        "only=prio_order fault=data",
        "--icount",
        timeout=120,
    )
    assert r.returncode not in (None, 124), f"QEMU did not exit by itself{r.describe()}"
    assert r.returncode != 0, f"a fatal error must fail the run{r.describe()}"
    out = r.stdout
    for needle in ("FATAL:", "ESR=0x", "FAR=0x", "ELR=0x", "thread=faulter", "system halted"):
        assert needle in out, f"{needle!r} missing{r.describe()}"
    assert "timed out" not in r.stderr, r.describe()


def test_thread_exit_in_handler_is_fatal(run_rtmux) -> None:
    """rt_thread_exit() in an interrupt handler stops the system with a FATAL line saying so (it halted
    with none)."""
    r = run_rtmux(
        "rtos", "run", "--app", "selftest", "--bootargs", "only=prio_order fault=exit_irq", "--icount",
        timeout=120,
    )  # fmt: skip
    assert r.returncode not in (None, 0, 124), r.describe()
    assert "FATAL: rt_thread_exit called from an interrupt handler" in r.stdout, r.describe()
    assert "still running after" not in r.stdout, r.describe()


def test_ctxsw_line(run_rtmux) -> None:
    r = run_rtmux("rtos", "ctxsw", "--icount", "--switches", "2000", timeout=120)
    assert r.returncode == 0, r.describe()
    ctx = lines_with("CTX|", r.stdout)
    assert len(ctx) == 1, r.describe()
    m = CTX_FORMAT.match(ctx[0])
    assert m, f"malformed CTX line {ctx[0]!r}{r.describe()}"
    switches, total, per = int(m[1]), int(m[2]), float(m[3])
    assert switches >= 2000 and total > 0, r.describe()
    assert per == pytest.approx(total / switches, abs=0.001)
