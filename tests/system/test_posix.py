"""The C library and the POSIX layer for rtos applications (issue 24; docs/posix.md).

Each tests/posix/NAME.c is an application built with the rtos SDK (`make posix-tests`) that prints
"NAME: P passed, F failed" and exits with F: booted bare metal and in its rtmux partition, both in
icount mode. Then an application made by `./rtmux app new` in a folder outside the checkout is built
with the SDK's Makefile and with its CMake toolchain file, and booted.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.run import system
from tests.system.conftest import CliResult, RunRtmux

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
RTOS_ONLY = ROOT / "tests" / "system" / "configs" / "rtos-only.toml"
TESTS = sorted(p.stem for p in (ROOT / "tests" / "posix").glob("*.c"))
SUMMARY = re.compile(r"^(?:\[rtos\] )?(\w+): (\d+) passed, (\d+) failed$", re.M)
TIMEOUT_S = 300


@pytest.fixture(scope="module")
def posix_images(rtos_images: Path) -> Path:
    proc = subprocess.run(
        ["make", "-s", "sdk", "posix-tests", "hyp"], cwd=ROOT, capture_output=True, text=True, timeout=1200
    )
    assert proc.returncode == 0, f"`make -s sdk posix-tests hyp` failed:\n{proc.stdout}{proc.stderr}"
    return ROOT / "build" / "posix"


def describe(r: qemu.RunResult) -> str:
    return f"\n$ {r.command_line()}\nexit: {r.returncode} timed out: {r.timed_out}\n{r.console}"


def check_passed(r: qemu.RunResult, name: str) -> None:
    assert r.exited and not r.timed_out, describe(r)
    found = [m for m in SUMMARY.finditer(r.console) if m[1] == name]
    assert len(found) == 1, f"no single summary line of {name}{describe(r)}"
    passed, failed = int(found[0][2]), int(found[0][3])
    assert failed == 0 and passed > 0, describe(r)
    assert "rtos: exit(0)" in r.console, describe(r)
    assert "FATAL" not in r.console, describe(r)


@pytest.mark.parametrize("name", TESTS)
def test_posix_bare_metal(posix_images: Path, name: str) -> None:
    r = qemu.run_console(qemu.qemu_command(posix_images / f"{name}.img", "", icount=True), TIMEOUT_S)
    check_passed(r, name)


@pytest.mark.parametrize("name", TESTS)
def test_posix_in_partition(posix_images: Path, name: str) -> None:
    built = system.build(RTOS_ONLY, rtos_image=posix_images / f"{name}.img", icount=True, no_build=True)
    r = qemu.run_console(built.argv, TIMEOUT_S)
    check_passed(r, name)
    assert "entered at EL1" in r.console, describe(r)


def run(args: list[str], cwd: Path, timeout: float = 600) -> CliResult:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return CliResult(args, proc.returncode, proc.stdout, proc.stderr)


def test_app_new_builds_and_boots_outside_the_checkout(
    posix_images: Path, run_rtmux: RunRtmux, tmp_path: Path
) -> None:
    folder = tmp_path / "blinky"
    made = run([str(ROOT / "rtmux"), "app", "new", str(folder), "--no-build"], ROOT)
    assert made.returncode == 0, made.describe()
    assert {p.name for p in folder.iterdir()} == {"main.c", "Makefile", "CMakeLists.txt", "system.toml"}

    built = run(["make"], folder)
    assert built.returncode == 0, built.describe()
    image = folder / "build" / "blinky.img"
    booted = run_rtmux("rtos", "run", "--image", str(image), "--icount", timeout=120)
    assert booted.returncode == 0, booted.describe()
    ticks = re.findall(r"^blinky: tick (\d+) of 10 at ", booted.stdout, re.M)
    assert ticks == [str(i) for i in range(1, 11)], booted.describe()
    assert "blinky: done" in booted.stdout and "rtos: exit(0)" in booted.stdout, booted.describe()

    # its system configuration is valid and names the image it built
    checked = run([str(ROOT / "rtmux"), "check", str(folder / "system.toml")], ROOT)
    assert checked.returncode == 0 and str(image) in checked.stdout, checked.describe()

    if shutil.which("cmake") is None:
        pytest.fail("cmake not found; run `make deps`")
    configured = run(
        ["cmake", f"-DCMAKE_TOOLCHAIN_FILE={ROOT / 'build' / 'sdk' / 'toolchain.cmake'}", "-B", "cbuild"],
        folder,
    )
    assert configured.returncode == 0, configured.describe()
    cbuilt = run(["cmake", "--build", "cbuild"], folder)
    assert cbuilt.returncode == 0, cbuilt.describe()
    booted = run_rtmux(
        "rtos", "run", "--image", str(folder / "cbuild" / "blinky.img"), "--icount", timeout=120
    )
    assert booted.returncode == 0 and "blinky: done" in booted.stdout, booted.describe()


def test_exit_status_is_the_command_status(posix_images: Path, run_rtmux: RunRtmux, tmp_path: Path) -> None:
    """An application's exit(N) is `./rtmux rtos run --image`'s status, as a program's would be."""
    folder = tmp_path / "fails"
    made = run([str(ROOT / "rtmux"), "app", "new", str(folder), "--no-build"], ROOT)
    assert made.returncode == 0, made.describe()
    (folder / "main.c").write_text(
        '#include <stdio.h>\nint main(void)\n{\n    puts("fails: 3");\n    return 3;\n}\n'
    )
    built = run(["make"], folder)
    assert built.returncode == 0, built.describe()
    booted = run_rtmux("rtos", "run", "--image", str(folder / "build" / "fails.img"), "--icount", timeout=60)
    assert booted.returncode == 3 and "fails: 3" in booted.stdout, booted.describe()
