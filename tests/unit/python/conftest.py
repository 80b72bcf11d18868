"""Shared fixtures for the host-side Python unit tests: sample consoles and a fake QEMU."""

from __future__ import annotations

import stat
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from rtmux import paths
from rtmux.board import MIB
from rtmux.image import blob

RTH = "RTH|----lat min|----lat avg|----lat max|-overrun|---msw|---lat best|--lat worst"
SEP = "---|-----------|-----------|-----------|--------|------|-------------------------"


def latency_console(
    samples: int = 3000,
    period_us: int = 1000,
    load: bool = False,
    counts: dict[int, int] | None = None,
    crlf: bool = False,
) -> str:
    """A well-formed latency monitor console as docs/rtos-console.md describes it."""
    counts = counts if counts is not None else {0: samples - 2, 1: 2}
    seconds = samples * period_us // 1_000_000
    hms = f"00:{seconds // 60:02d}:{seconds % 60:02d}"
    lines = [
        "rtos: rtmux rtos 0.1.0 entered at EL1",
        f"RTT|  00:00:01  (rtos periodic thread, {period_us} us period, priority 255, "
        f"load {'on' if load else 'off'})",
        RTH,
    ]
    for _ in range(max(seconds, 1)):
        lines.append("RTD|      0.000|      0.014|      1.192|       0|     0|      0.000|      1.192")
    lines += [
        SEP,
        f"RTS|      0.000|      0.014|      1.192|       0|     0|    {hms}/{hms}",
        f"HSH| 1 us cells, {sum(counts.values())} samples, 1000 cells",
    ]
    lines += [f"HSD| {cell} {count}" for cell, count in sorted(counts.items())]
    lines += ["HSE|", "rtos: system off"]
    sep = "\r\n" if crlf else "\n"
    return sep.join(lines) + sep


SELFTEST_OK = """\
rtos: rtmux rtos 0.1.0 entered at EL1
selftest: 2 tests
prio_order: OK
mutex_pi_chain: OK
2 passed, 0 failed
rtos: system off
"""

SELFTEST_FAIL = """\
rtos: rtmux rtos 0.1.0 entered at EL1
selftest: 2 tests
prio_order: OK
mutex_pi_chain: FAIL (owner prio 5, expected 30)
1 passed, 1 failed
rtos: system off
"""

FAULT = """\
rtos: rtmux rtos 0.1.0 entered at EL1
selftest: 1 tests
prio_order: OK
1 passed, 0 failed
FATAL: data abort at EL1
FATAL: ESR=0x96000045 FAR=0x0000000000000008 ELR=0x40081234 thread=faulter
rtos: system halted after fatal error
"""

CTX_OK = """\
rtos: rtmux rtos 0.1.0 entered at EL1
CTX| switches 20000 total_ns 3840000 ns_per_switch 192.000
rtos: system off
"""


@pytest.fixture
def consoles() -> SimpleNamespace:
    """Sample consoles: latency(...) builds one; the others are fixed texts."""
    return SimpleNamespace(
        latency=latency_console,
        selftest_ok=SELFTEST_OK,
        selftest_fail=SELFTEST_FAIL,
        fault=FAULT,
        ctx_ok=CTX_OK,
        rth=RTH,
        sep=SEP,
    )


@pytest.fixture
def fake_qemu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Install a fake qemu-system-aarch64 that prints `console` and exits with `status`.

    It also records its command line in tmp_path/argv.txt. Images are placed in tmp_path/build/rtos.
    Returns the factory; call it again to change the behaviour.
    """
    build = tmp_path / "build" / "rtos"
    build.mkdir(parents=True)
    for app in paths.RTOS_APPS:
        (build / f"{app}.img").write_bytes(b"image")
    monkeypatch.setattr(paths, "RTOS_BUILD_DIR", build)
    script = tmp_path / "qemu-system-aarch64"
    console_file = tmp_path / "console.txt"
    argv_file = tmp_path / "argv.txt"

    def install(console: str = "", status: int = 0, sleep_s: float = 0.0) -> Path:
        console_file.write_text(console, encoding="utf-8")
        script.write_text(
            textwrap.dedent(
                f"""\
                #!{sys.executable}
                import sys, time
                open({str(argv_file)!r}, "w").write("\\n".join(sys.argv[1:]))
                sys.stdout.write(open({str(console_file)!r}).read())
                sys.stdout.flush()
                time.sleep({sleep_s})
                sys.exit({status})
                """
            )
        )
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
        return argv_file

    return install


@pytest.fixture
def blob_payloads() -> dict[str, blob.Payload]:
    """Where the default configuration's images sit in a bundle and load (plausible, inside each RAM)."""
    return {
        "rtos": blob.Payload(
            kernel=blob.ImageSlot(0x10_0000, 0x6B60, 0x4008_0000),
            entry_ipa=0x4008_0000,
            dtb=blob.ImageSlot(0x20_0000, 0x800, 0x40E0_0000),
        ),
        "linux": blob.Payload(
            kernel=blob.ImageSlot(0x30_0000, 32 * MIB, 0x4900_0000),
            entry_ipa=0x4900_0000,
            dtb=blob.ImageSlot(0x230_0000, 0x1000, 0x68E0_0000),
            initrd=blob.ImageSlot(0x240_0000, 2 * MIB, 0x68C0_0000),
            seeds=(blob.SeedRange(0x300, 8), blob.SeedRange(0x320, 32)),
        ),
    }
