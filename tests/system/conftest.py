"""System-test helpers: build the images once, run ./rtmux under a hard timeout, show its output on failure.

Every test here boots QEMU through ./rtmux, which has its own --timeout; `run_rtmux` adds an outer limit
as a backstop so that no test can hang CI. On that outer timeout ./rtmux gets SIGTERM first, so it kills
the QEMU it started before it exits.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT_S = 1200


@dataclass
class CliResult:
    args: list[str]
    returncode: int | None  # None: killed by the outer timeout
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def describe(self) -> str:
        """The whole run, for an assertion message: command, status, stdout (the console), stderr."""
        return (
            f"\n$ {' '.join(self.args)}\nexit status: {self.returncode}\n"
            f"---- stdout ----\n{self.stdout}\n---- stderr ----\n{self.stderr}\n---- end ----"
        )


def _run(args: list[str], timeout_s: float) -> CliResult:
    proc = subprocess.Popen(
        args, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return CliResult(args, proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        proc.terminate()  # ./rtmux unwinds on SIGTERM and kills its QEMU
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        result = CliResult(args, None, out, err)
        pytest.fail(f"outer timeout of {timeout_s:g} s expired{result.describe()}")


@pytest.fixture(scope="session")
def rtos_images() -> Path:
    """Build the rtos images once per session with `make -s rtos` (the CLI runs then use --no-build).

    RTMUX_NO_BUILD=1 skips the build and tests the images already in build/rtos/.
    """
    if shutil.which("qemu-system-aarch64") is None:
        pytest.fail("qemu-system-aarch64 not found; run `make deps`")
    if os.environ.get("RTMUX_NO_BUILD") == "1":
        return ROOT / "build" / "rtos"
    result = _run(["make", "-s", "rtos"], BUILD_TIMEOUT_S)
    assert result.returncode == 0, f"`make -s rtos` failed{result.describe()}"
    return ROOT / "build" / "rtos"


RunRtmux = Callable[..., CliResult]


@pytest.fixture(scope="session")
def run_rtmux(rtos_images: Path) -> RunRtmux:
    """run_rtmux("rtos", "selftest", ..., timeout=S): ./rtmux with the images built, under an outer timeout.

    The caller passes --timeout to ./rtmux itself; the outer timeout is 60 s longer.
    """

    def run(*args: str, timeout: float) -> CliResult:
        return _run(
            [sys.executable, str(ROOT / "rtmux"), *args, "--no-build", "--timeout", str(timeout)],
            timeout + 60,
        )

    return run


@pytest.fixture(scope="session")
def latency_runs(run_rtmux: RunRtmux, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., tuple]:
    """latency_runs(samples, load, tag="") -> (CliResult, histogram path), each distinct run done once."""
    cache: dict[tuple[int, bool, str], tuple[CliResult, Path]] = {}
    folder = tmp_path_factory.mktemp("latency")

    def get(samples: int, load: bool, tag: str = "") -> tuple[CliResult, Path]:
        key = (samples, load, tag)
        if key not in cache:
            hist = folder / f"hist-{samples}-{int(load)}{tag}.dat"
            args = ["rtos", "latency", "--icount", "--samples", str(samples), "--histogram", str(hist)]
            if load:
                args.append("--load")
            cache[key] = (run_rtmux(*args, timeout=300), hist)
        return cache[key]

    return get
