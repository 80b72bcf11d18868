"""The rtos commands end to end against a fake QEMU: checks, exit statuses, histogram, console on failure."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from rtmux import cli, paths, qemu
from rtmux.errors import EXIT_FAILED, EXIT_SETUP, EXIT_TIMEOUT, RtmuxError, SetupError
from rtmux.formats import latmus
from rtmux.run import linux, rtos


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = cli.main(args)
    out, err = capsys.readouterr()
    return status, out, err


def test_selftest_passes(fake_qemu: Callable[..., Path], consoles: SimpleNamespace, capsys) -> None:
    argv = fake_qemu(consoles.selftest_ok)
    status, out, err = run_cli(["rtos", "selftest", "--no-build", "--icount", "--only", "a,b"], capsys)
    assert status == 0, err
    assert "2 passed, 0 failed" in out and "selftest passed" in out
    args = argv.read_text().splitlines()
    assert args[args.index("-append") + 1] == "only=a,b"
    assert "-icount" in args


def test_selftest_failure_names_tests_and_prints_console(
    fake_qemu: Callable[..., Path], consoles: SimpleNamespace, capsys
) -> None:
    fake_qemu(consoles.selftest_fail)
    status, _, err = run_cli(["rtos", "selftest", "--no-build"], capsys)
    assert status == EXIT_FAILED
    assert "mutex_pi_chain" in err.splitlines()[-1]
    assert "---- guest console" in err and "FAIL (owner prio 5" in err


@pytest.mark.parametrize(
    ("console", "status", "message"),
    [
        ("selftest: 1 tests\nrtos: system off\n", 0, "no summary line"),
        ("0 passed, 0 failed\nrtos: system off\n", 0, "no test ran"),
        ("2 passed, 0 failed\n", 0, "no `rtos: system off`"),
        ("2 passed, 0 failed\nrtos: system off\n", 1, "exited with status 1"),
    ],
)
def test_selftest_refuses(
    fake_qemu: Callable[..., Path], capsys, console: str, status: int, message: str
) -> None:
    fake_qemu(console, status=status)
    rc, _, err = run_cli(["rtos", "selftest", "--no-build"], capsys)
    assert rc == EXIT_FAILED
    assert message in err


def test_selftest_timeout(fake_qemu: Callable[..., Path], capsys) -> None:
    fake_qemu("selftest: 1 tests\nprio_order: OK\n", sleep_s=30)
    rc, _, err = run_cli(["rtos", "selftest", "--no-build", "--timeout", "1"], capsys)
    assert rc == EXIT_TIMEOUT
    assert "timed out after 1 s" in err and "prio_order: OK" in err


def test_run_reports_fatal(fake_qemu: Callable[..., Path], consoles: SimpleNamespace, capsys) -> None:
    argv = fake_qemu(consoles.fault)
    rc, out, err = run_cli(
        ["rtos", "run", "--no-build", "--app", "selftest", "--bootargs", "fault=data"], capsys
    )
    assert rc == EXIT_FAILED
    assert "FATAL: ESR=0x96000045" in out
    assert "fatal error" in err and "thread faulter" in err
    assert "build/rtos/selftest.img" in argv.read_text() or "selftest.img" in argv.read_text()


def test_run_ok(fake_qemu: Callable[..., Path], capsys) -> None:
    fake_qemu("hello\nrtos: system off\n")
    rc, out, _ = run_cli(["rtos", "run", "--no-build"], capsys)
    assert rc == 0 and "hello" in out


def test_run_ends_normally_at_its_limit(fake_qemu: Callable[..., Path], capsys) -> None:
    """The demo never ends by itself: `rtos run` stops it at --timeout and says so, without an error
    and without printing the console a second time."""
    fake_qemu("demo: running; Ctrl-A x leaves QEMU\n", sleep_s=30)
    rc, out, err = run_cli(["rtos", "run", "--no-build", "--timeout", "1"], capsys)
    assert rc == 0 and "demo: running" in out
    assert (
        err == "rtmux: demo.img: stopped after 1 s (wall clock), the limit of this run; --timeout S sets it\n"
    )


def test_run_default_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float] = []

    def boot(*args: object, timeout_s: float, **kwargs: object) -> object:
        seen.append(timeout_s)
        return SimpleNamespace(timed_out=False, console="", returncode=0)

    monkeypatch.setattr(rtos, "boot", boot)
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(isatty=lambda: True))
    rtos.run("demo", "", icount=False, timeout_s=None)
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(isatty=lambda: False))
    rtos.run("demo", "", icount=False, timeout_s=None)
    assert seen == [rtos.INTERACTIVE_RUN_TIMEOUT_S, rtos.RUN_TIMEOUT_S] == [3600.0, 600.0]


def test_latency(fake_qemu: Callable[..., Path], consoles: SimpleNamespace, capsys, tmp_path: Path) -> None:
    argv = fake_qemu(consoles.latency(samples=3000))
    hist = tmp_path / "h.dat"
    rc, out, err = run_cli(
        ["rtos", "latency", "--no-build", "--icount", "--duration", "3", "--histogram", str(hist)], capsys
    )
    assert rc == 0, err
    args = argv.read_text().splitlines()
    assert args[args.index("-append") + 1] == "period_us=1000 samples=3000 load=0"
    assert "RTS|" in out and "RTD|" in out and "HSD|" not in out
    header, counts = latmus.read_histogram_file(hist)
    assert sum(counts.values()) == 3000 and header["sample count"] == "3000"
    assert header["QEMU mode"].startswith("icount")
    assert "-append 'period_us=1000 samples=3000 load=0'" in header["command"]


def test_latency_load_on_three_cpus(
    fake_qemu: Callable[..., Path], consoles: SimpleNamespace, capsys, tmp_path: Path
) -> None:
    started = "latency: cpu1 load 'copy' started on 3 CPU(s)\n"
    argv = fake_qemu(started + consoles.latency(samples=3000))
    cmd = ["rtos", "latency", "--no-build", "--samples", "3000", "--histogram", str(tmp_path / "h.dat")]
    rc, _, err = run_cli([*cmd, "--cpu1", "copy", "--load-cpus", "3"], capsys)
    assert rc == 0, err
    args = argv.read_text().splitlines()
    assert args[args.index("-smp") + 1] == "4"
    assert args[args.index("-append") + 1] == "period_us=1000 samples=3000 load=0 cpu1=copy load_cpus=3"
    # the guest said it loaded another number of CPUs: refused
    fake_qemu(started.replace("3 CPU", "1 CPU") + consoles.latency(samples=3000))
    rc, _, err = run_cli([*cmd, "--cpu1", "copy", "--load-cpus", "3"], capsys)
    assert rc == EXIT_FAILED and "did not start on 3 CPU(s)" in err
    # a CPU count without a load
    rc, _, err = run_cli([*cmd, "--load-cpus", "2"], capsys)
    assert rc != 0 and "needs a load pattern" in err


@pytest.mark.parametrize("pattern", ["spin", "copy"])
def test_latency_load_beside_a_busy_cpu_is_refused_in_icount(
    fake_qemu: Callable[..., Path], consoles: SimpleNamespace, capsys, pattern: str
) -> None:
    """Issue 31: the combination never finished under icount; it is refused with the reason, before QEMU
    starts, and still runs without icount."""
    argv = fake_qemu(f"latency: cpu1 load '{pattern}' started on 1 CPU(s)\n" + consoles.latency(samples=3000))
    cmd = ["rtos", "latency", "--no-build", "--samples", "3000", "--load", "--cpu1", pattern]
    rc, _, err = run_cli([*cmd, "--icount"], capsys)
    assert rc == EXIT_SETUP and "does not run in icount mode" in err and "--cpu1 tick" in err
    assert not argv.exists()
    rc, _, err = run_cli(cmd, capsys)
    assert rc == 0, err


def test_latency_sample_mismatch(fake_qemu: Callable[..., Path], consoles: SimpleNamespace, capsys) -> None:
    fake_qemu(consoles.latency(samples=3000))
    rc, _, err = run_cli(["rtos", "latency", "--no-build", "--samples", "2000", "--load"], capsys)
    assert rc == EXIT_FAILED and "2000 were requested" in err


def test_latency_malformed(fake_qemu: Callable[..., Path], consoles: SimpleNamespace, capsys) -> None:
    fake_qemu(consoles.latency(samples=3000).replace("HSE|", "HSE|x"))
    rc, _, err = run_cli(["rtos", "latency", "--no-build", "--samples", "3000"], capsys)
    assert rc == EXIT_FAILED and "malformed output" in err.splitlines()[-1]
    assert "---- guest console" in err


def test_ctxsw(fake_qemu: Callable[..., Path], consoles: SimpleNamespace, capsys) -> None:
    argv = fake_qemu(consoles.ctx_ok)
    rc, out, err = run_cli(["rtos", "ctxsw", "--no-build"], capsys)
    assert rc == 0, err
    assert "192.000 ns per context switch" in out
    assert "switches=20000" in argv.read_text()
    rc, _, err = run_cli(["rtos", "ctxsw", "--no-build", "--switches", "30000"], capsys)
    assert rc == EXIT_FAILED and "30000 were requested" in err


def test_missing_image(fake_qemu: Callable[..., Path], tmp_path: Path, capsys) -> None:
    fake_qemu("")
    (tmp_path / "build" / "rtos" / "ctxsw.img").unlink()
    rc, _, err = run_cli(["rtos", "ctxsw", "--no-build"], capsys)
    assert rc == EXIT_SETUP and "ctxsw.img not found" in err and "make rtos" in err


def test_missing_qemu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    rc, _, err = run_cli(["rtos", "selftest", "--no-build"], capsys)
    assert rc == EXIT_SETUP and "qemu-system-aarch64 not found" in err and "make deps" in err


@pytest.mark.parametrize(
    "args",
    [
        ["rtos", "latency", "--samples", "10", "--duration", "1"],
        ["rtos", "latency", "--samples", "0"],
        ["rtos", "latency", "--period-us", "-5"],
        ["rtos", "latency", "--cpu1", "copy", "--load-cpus", "4"],
        ["rtos", "selftest", "--timeout", "0"],
        ["rtos", "selftest", "--only", "a b"],
        ["rtos", "run", "--app", "nope"],
        ["rtos"],
    ],
)
def test_usage_errors(args: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(args)
    assert info.value.code == 2


def test_default_latency_timeout_scales() -> None:
    assert rtos.default_latency_timeout(10000, 1000) == pytest.approx(220.0)
    assert rtos.default_latency_timeout(100000, 1000) > rtos.default_latency_timeout(10000, 1000)
    assert rtos.default_latency_timeout(10000, 1000, load=True) == pytest.approx(420.0)


def test_format_bootargs() -> None:
    assert rtos.format_bootargs({"period_us": 100, "load": True, "x": "a,b"}) == "period_us=100 load=1 x=a,b"
    with pytest.raises(RtmuxError):
        rtos.format_bootargs({"only": "a b"})


def test_build_runs_make_rtos(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    (tmp_path / "Makefile").write_text("rtos:\n\t@touch built\n")
    rtos.build(True)
    assert (tmp_path / "built").exists()
    (tmp_path / "built").unlink()
    rtos.build(False)
    assert not (tmp_path / "built").exists()


def test_build_failure_is_a_setup_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    with pytest.raises(SetupError, match="no Makefile"):
        rtos.build(True)
    (tmp_path / "Makefile").write_text("rtos:\n\t@exit 3\n")
    with pytest.raises(SetupError, match="--no-build"):
        rtos.build(True)


def test_interactive_session_ends_normally_at_its_limit(fake_qemu: Callable[..., Path], capsys) -> None:
    """`./rtmux run` and `./rtmux linux run` without a command: the session's limit ends it without an
    error and without printing the console a second time (the interactive `rtos run` does the same)."""
    fake_qemu("[linux] / # \n", sleep_s=30)
    out = io.StringIO()
    rc = linux.session(
        [qemu.find_qemu()], "system x.img", icount=False, linux_cmd=None, timeout_s=1, echo=out
    )
    _, err = capsys.readouterr()
    assert rc == 0 and "[linux] / #" in out.getvalue()
    limit = "stopped after 1 s (wall clock), the limit of this session; --timeout S sets it"
    assert err == f"rtmux: system x.img: {limit}\n"
