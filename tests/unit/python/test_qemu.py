"""QEMU command lines and run_console: capture, echo, line callbacks, timeout and kill."""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.errors import SetupError


def test_qemu_command() -> None:
    cmd = qemu.qemu_command(Path("build/rtos/latency.img"), "samples=10 load=1")
    assert cmd == [
        "qemu-system-aarch64",
        "-M", "virt,virtualization=on,gic-version=3",
        "-cpu", "cortex-a72",
        "-smp", "1",
        "-m", "1G",
        "-nographic",
        "-nic", "none",
        "-kernel", "build/rtos/latency.img",
        "-append", "samples=10 load=1",
    ]  # fmt: skip


def test_qemu_command_icount_no_append() -> None:
    cmd = qemu.qemu_command("x.img", icount=True)
    assert "-append" not in cmd
    assert cmd[-2:] == ["-icount", "shift=0,align=off,sleep=off"]


def test_qemu_command_gicv2() -> None:
    """`./rtmux rtos ... --gic 2`: QEMU virt with a GICv2; a version QEMU virt has but rtmux does not
    drive is refused."""
    cmd = qemu.qemu_command("x.img", gic=2)
    assert cmd[cmd.index("-M") + 1] == "virt,virtualization=on,gic-version=2"
    with pytest.raises(ValueError, match="no GIC version 4"):
        qemu.qemu_command("x.img", gic=4)


def test_find_qemu_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SetupError, match="make deps"):
        qemu.find_qemu()


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_run_console_captures_and_echoes() -> None:
    echo = io.StringIO()
    lines: list[str] = []
    code = "import sys; sys.stdout.write('a\\r\\nb\\n'); sys.stderr.write('err\\n'); sys.stdout.write('tail')"
    result = qemu.run_console(py(code), 30, echo=echo, on_line=lines.append)
    assert result.exited and result.returncode == 0 and not result.timed_out
    assert result.console.startswith("a\nb\n") and "err\n" in result.console
    assert result.console.endswith("tail")
    assert echo.getvalue() == result.console
    assert lines[:2] == ["a", "b"] and lines[-1] == "tail"


def test_run_console_exit_status() -> None:
    result = qemu.run_console(py("import sys; print('x'); sys.exit(3)"), 30)
    assert result.exited and result.returncode == 3


def test_run_console_invalid_utf8_is_replaced() -> None:
    result = qemu.run_console(py("import sys; sys.stdout.buffer.write(b'ok \\xff\\n')"), 30)
    assert result.console == "ok \ufffd\n"


def test_run_console_timeout_kills(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = (
        f"import os, sys, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
        "print('started', flush=True); time.sleep(60)"
    )
    t0 = time.monotonic()
    result = qemu.run_console(py(code), 1.5)
    assert time.monotonic() - t0 < 10
    assert result.timed_out and result.returncode is None and not result.exited
    assert "started" in result.console
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_run_console_timeout_when_output_closed_but_process_lives() -> None:
    code = "import os, time; print('bye', flush=True); os.close(1); os.close(2); time.sleep(60)"
    result = qemu.run_console(py(code), 1.5)
    assert result.timed_out and "bye" in result.console


def test_run_console_needs_timeout() -> None:
    with pytest.raises(ValueError):
        qemu.run_console(py("pass"), 0)


def test_run_console_missing_binary() -> None:
    with pytest.raises(SetupError, match="cannot start"):
        qemu.run_console(["/nonexistent/qemu-system-aarch64"], 5)


def test_print_console() -> None:
    result = qemu.RunResult(["qemu", "-append", "a b"], None, True, "one\ntwo", 1.0, 1.0)
    out = io.StringIO()
    qemu.print_console(result, out)
    text = out.getvalue()
    assert "guest console (2 lines)" in text and "qemu -append 'a b'" in text
    assert "one\ntwo\n---- end of guest console ----\n" in text
