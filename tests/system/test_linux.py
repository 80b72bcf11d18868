"""Debian's arm64 kernels booted bare under QEMU with the rtmux initramfs, through ./rtmux linux.

The first use fetches the Debian packages into cache/debian/ (CI starts with nothing cached), so that
step gets its own, generous limit; each boot then takes a few seconds of wall-clock time.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
FETCH_TIMEOUT_S = 1200
BOOT_TIMEOUT_S = 240
TEST_CMD = "grep -c ^processor /proc/cpuinfo; uname -r; cyclictest -m -p98 -i1000 -l 200 -q"
CYCLICTEST = re.compile(r"^T: 0 \( *\d+\) P:98 I:1000 C: +200 Min: +\d+ Act: +\d+ Avg: +\d+ Max: +\d+$", re.M)


def rtmux(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """./rtmux under an outer limit 60 s beyond its own; SIGTERM first, so it kills its QEMU."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "rtmux"), *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        pytest.fail(f"outer timeout expired: ./rtmux {' '.join(args)}\n{out}\n{err}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def describe(r: subprocess.CompletedProcess[str]) -> str:
    return f"\nexit status {r.returncode}\n---- stdout ----\n{r.stdout}\n---- stderr ----\n{r.stderr}"


@pytest.fixture(scope="module")
def guests() -> None:
    """Both kernels and the userland fetched and both initramfs archives built, once."""
    for kernel in ("std", "rt"):
        r = rtmux("linux", "initramfs", "--kernel", kernel, timeout=FETCH_TIMEOUT_S)
        assert r.returncode == 0, describe(r)


def boot(*args: str) -> subprocess.CompletedProcess[str]:
    return rtmux("linux", "run", *args, "--timeout", str(BOOT_TIMEOUT_S), timeout=BOOT_TIMEOUT_S)


def after_marker_echo(stdout: str) -> str:
    """The console after the typed marker line's echo: what the command printed, then the marker."""
    return stdout[stdout.rindex("EXIT ") :]


def test_std_kernel_runs_cyclictest(guests: None) -> None:
    r = boot("--kernel", "std", "--linux-cmd", TEST_CMD)
    assert r.returncode == 0, describe(r)
    assert "rtmux-linux: ready: kernel " in r.stdout, describe(r)
    out = after_marker_echo(r.stdout)
    assert re.search(r"^1$", out, re.M), describe(r)  # one vCPU by default
    assert re.search(r"^\d+\.\d+\.\d+-\d+-arm64$", out, re.M), describe(r)
    assert CYCLICTEST.search(out), describe(r)
    assert re.search(r"RTMUX_EXIT_[0-9a-f]+=0", out), describe(r)
    m = re.search(r"ready after ([\d.]+) s", r.stderr)
    assert m, describe(r)
    print(f"std kernel, plain TCG, -smp 1: ready after {m.group(1)} s (wall clock)")


def test_rt_kernel_icount_two_cpus_and_exit_status(guests: None) -> None:
    r = boot("--kernel", "rt", "--smp", "2", "--icount", "--linux-cmd", "nproc; uname -r; exit 3")
    assert r.returncode == 3, describe(r)
    out = after_marker_echo(r.stdout)
    assert re.search(r"^2$", out, re.M), describe(r)
    assert re.search(r"^\d+\.\d+\.\d+-\d+-rt-arm64$", out, re.M), describe(r)
    assert "status 3" in r.stderr, describe(r)


def test_timeout_prints_the_console(guests: None) -> None:
    # Linux is not ready after 1 s of wall-clock time: QEMU is killed, the console shown.
    r = rtmux("linux", "run", "--linux-cmd", "true", "--timeout", "1", timeout=1)
    assert r.returncode == 124, describe(r)
    assert "---- guest console" in r.stderr and "-kernel" in r.stderr, describe(r)
    assert "timed out after 1 s" in r.stderr and "ready line" in r.stderr, describe(r)
