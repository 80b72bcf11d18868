"""The suite's layout: which tests an interface has, and the build of one test with the rtos SDK.

A test is conformance/interfaces/<interface>/[speculative/]<N>-<M>.c (files named `*-buildonly.c` are
compile checks and are left out, as the suite's own scripts do). It defines test_main(); the suite's
lib/common.c has the main() that calls it, so both are built into the image.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

INTERFACES_DIR = Path("conformance") / "interfaces"
TEST_NAME = re.compile(r"\d+-\d+\.c")

# The interfaces the rtos implements (docs/posix.md), as patterns of conformance/interfaces/ names.
DEFAULT_PATTERNS = ("clock", "clock_*", "nanosleep", "sem_*", "mq_*", "timer_*", "sched_*", "pthread_*")

# The suite's own compiler settings (include/mk/config.mk.in), and its include folder and the test's.
SUITE_CFLAGS = "-std=c99 -D_POSIX_C_SOURCE=200809L -D_XOPEN_SOURCE=700 -Wall -Wextra"
# The C library's heap (rtos.mk's HEAP_SIZE): some tests start 100 threads of the default 16 KiB stack.
DEFAULT_HEAP_SIZE = 4 * 1024 * 1024


class SuiteError(Exception):
    """The suite folder is not usable (absent, or not the Open POSIX Test Suite)."""


@dataclass(frozen=True)
class Test:
    interface: str  # e.g. "sem_open"
    name: str  # e.g. "1-1", or "speculative/4-3"
    source: Path

    @property
    def ident(self) -> str:
        return f"{self.interface}/{self.name}"


@dataclass(frozen=True)
class BuildResult:
    image: Path | None  # None when the test did not build
    missing: str  # the first missing header or symbol (or the first error), when it did not build
    log: str


def find_root(suite: Path) -> Path:
    """The folder that holds conformance/interfaces/: `suite` itself, or the suite inside an LTP tree."""
    for root in (suite, suite / "testcases" / "open_posix_testsuite"):
        if (root / INTERFACES_DIR).is_dir() and (root / "include" / "posixtest.h").is_file():
            return root
    if not suite.is_dir():
        raise SuiteError(f"{suite}: no such folder (extract the Open POSIX Test Suite there: docs/posix.md)")
    raise SuiteError(
        f"{suite}: not the Open POSIX Test Suite (no {INTERFACES_DIR}/ and include/posixtest.h in it "
        "or in its testcases/open_posix_testsuite/)"
    )


def matches(interface: str, name: str, patterns: tuple[str, ...]) -> bool:
    """A pattern with a `/` matches "interface/test", one without matches the interface."""
    return any(fnmatchcase(f"{interface}/{name}" if "/" in p else interface, p) for p in patterns)


def discover(root: Path, patterns: tuple[str, ...] = DEFAULT_PATTERNS) -> list[Test]:
    """The tests of the interfaces that `patterns` match, sorted by interface and test number."""
    tests: list[Test] = []
    for folder in sorted((root / INTERFACES_DIR).iterdir()):
        if not folder.is_dir():
            continue
        for sub in (folder, folder / "speculative"):
            prefix = "" if sub == folder else "speculative/"
            files = sub.glob("*.c") if sub.is_dir() else ()
            for src in files:
                name = prefix + src.stem
                if TEST_NAME.fullmatch(src.name) and matches(folder.name, name, patterns):
                    tests.append(Test(folder.name, name, src))
    return sorted(tests, key=lambda t: (t.interface, _number_key(t.name)))


def _number_key(name: str) -> tuple[int, int, int]:
    spec, _, numbers = name.rpartition("/")
    a, b = numbers.split("-")
    return (1 if spec else 0, int(a), int(b))


_MISSING_PATTERNS = (
    re.compile(r"fatal error: ([^:\s]+): No such file"),
    re.compile(r"undefined reference to `([^']+)'"),
    re.compile(r"error: '([^']+)' undeclared"),
    re.compile(r"error: unknown type name '([^']+)'"),
    re.compile(r"implicit declaration of function '([^']+)'"),
    re.compile(r"error: (.+)"),
)


def first_missing(log: str) -> str:
    """The first header or symbol a failed build lacks, else its first error line."""
    lines = log.splitlines()
    for pattern in _MISSING_PATTERNS:
        for line in lines:
            m = pattern.search(line)
            if m is not None and ("implicit declaration" not in line or "error" in line):
                return m[1]
    return lines[-1].strip() if lines else "build failed"


def build(
    test: Test, root: Path, sdk: Path, out: Path, heap_size: int = DEFAULT_HEAP_SIZE, make: str = "make"
) -> BuildResult:
    """Build `test` into out/<interface>/<name>/test.img with the SDK's rtos.mk."""
    folder = out / test.interface / test.name.replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [
        make,
        "-s",
        "--no-print-directory",
        "-f",
        str(sdk.resolve() / "rtos.mk"),
        f"RTOS_SDK={sdk.resolve()}",
        "APP=test",
        f"SRCS={test.source.resolve()} {(root / 'lib' / 'common.c').resolve()}",
        f"OUT={folder.resolve()}",
        f"HEAP_SIZE={heap_size}",
        f"EXTRA_CFLAGS={SUITE_CFLAGS} -I{(root / 'include').resolve()} -I{test.source.parent.resolve()}",
    ]
    env = {**os.environ, "LC_ALL": "C"}  # the compiler's messages in ASCII, as first_missing reads them
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300, env=env)
    log = proc.stdout + proc.stderr
    image = folder / "test.img"
    if proc.returncode != 0 or not image.is_file():
        return BuildResult(None, first_missing(log), log)
    return BuildResult(image, "", log)
