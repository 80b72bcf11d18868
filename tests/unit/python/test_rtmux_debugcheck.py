"""guest/rtmux-debugcheck (ptrace single step, hardware breakpoints and watchpoints, perf counters),
built for the host by `make linux-programs`. On the host only `step` runs everywhere ptrace does; the
arm64-only checks and perf must say they cannot run (77), never pass or fail. Linux under rtmux runs
all of them (tests/system/test_system.py, test_shared.py)."""

from __future__ import annotations

import subprocess

import pytest

from rtmux import paths

PROGRAM = paths.linux_program("rtmux-debugcheck", host=True)
CANNOT = 77


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    proc = subprocess.run(
        ["make", "-s", "-C", str(paths.REPO_ROOT), str(PROGRAM.relative_to(paths.REPO_ROOT))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PROGRAM), *args], capture_output=True, text=True, timeout=60)


def test_single_step_counts_every_instruction() -> None:
    r = run("step")
    if r.returncode == CANNOT:
        pytest.skip(f"ptrace is not allowed here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "step: 1000 steps for 1000 instructions\n"


@pytest.mark.parametrize("check", ["break", "watch"])
def test_arm64_only_checks_say_they_cannot_run(check: str) -> None:
    r = run(check)
    assert r.returncode == CANNOT and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert "checked on arm64 only" in r.stderr


def test_perf_passes_or_cannot_run() -> None:
    r = run("perf")
    assert r.returncode in (0, CANNOT), r.stderr
    if r.returncode == 0:
        assert r.stdout.startswith("perf: instructions "), r.stdout


@pytest.mark.parametrize("args", [[], ["nothing"], ["step", "perf"]])
def test_usage_errors(args: list[str]) -> None:
    r = run(*args)
    assert r.returncode == 2 and "rtmux-debugcheck" in r.stderr and r.stdout == ""
