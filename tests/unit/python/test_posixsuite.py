"""tools/posixsuite: the suite's layout, the classification of a run and the report (no suite, no QEMU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from posixsuite import boot, report, suite


def make_suite(root: Path) -> Path:
    (root / "include").mkdir(parents=True)
    (root / "include" / "posixtest.h").write_text("")
    for rel in (
        "sem_wait/1-1.c",
        "sem_wait/10-1.c",
        "sem_wait/2-1.c",
        "sem_wait/3-buildonly.c",
        "sem_wait/helper.c",
        "sem_wait/speculative/4-1.c",
        "fork/1-1.c",
        "mq_open/1-1.c",
    ):
        path = root / suite.INTERFACES_DIR / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


def test_discover_takes_numbered_tests_of_matching_interfaces_in_order(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "testcases" / "open_posix_testsuite")
    assert suite.find_root(tmp_path) == root
    names = [t.ident for t in suite.discover(root, ("sem_*",))]
    assert names == ["sem_wait/1-1", "sem_wait/2-1", "sem_wait/10-1", "sem_wait/speculative/4-1"]
    assert [t.ident for t in suite.discover(root, ("mq_open/1-*", "fork"))] == ["fork/1-1", "mq_open/1-1"]


def test_a_folder_that_is_not_the_suite_is_refused(tmp_path: Path) -> None:
    with pytest.raises(suite.SuiteError, match="no such folder"):
        suite.find_root(tmp_path / "absent")
    with pytest.raises(suite.SuiteError, match="not the Open POSIX Test Suite"):
        suite.find_root(tmp_path)


def test_first_missing_names_the_header_or_symbol() -> None:
    assert suite.first_missing("x.c:3:10: fatal error: sys/mman.h: No such file or directory") == "sys/mman.h"
    log = "x.c:9: warning: implicit declaration of function 'fork'\nld: x.o: undefined reference to `fork'"
    assert suite.first_missing(log) == "fork"
    assert suite.first_missing("x.c:4: error: 'SIGALRM' undeclared (first use)") == "SIGALRM"


@pytest.mark.parametrize(
    ("console", "timed_out", "expected"),
    [
        ("rtos: start\nTest PASSED\nrtos: exit(0)\nrtos: system off\n", False, ("PASS", "Test PASSED")),
        ("rtos: start\nwrong errno\nrtos: exit(1)\n", False, ("FAIL", "wrong errno")),
        ("rtos: exit(4)\nqemu-system-aarch64: warning: icount\n", False, ("UNSUPPORTED", "")),
        ("rtos: exit(3)\n", False, ("CRASH", "exit(3)")),
        ("waiting\n", True, ("TIMEOUT", "waiting")),
        ("FATAL: data abort (EC 0x25)\nrtos: system off\n", False, ("CRASH", "FATAL: data abort (EC 0x25)")),
    ],
)
def test_classify(console: str, timed_out: bool, expected: tuple[str, str]) -> None:
    result, detail = boot.classify(console, timed_out)
    assert (result if result != boot.OTHER else boot.CRASH, detail) == expected


def test_report_counts_per_interface_and_round_trips(tmp_path: Path) -> None:
    rows = [
        report.Row("sem_wait", "1-1", "PASS", "", 0.1),
        report.Row("sem_wait", "2-1", "FAIL", "a | b", 0.2),
        report.Row("mq_open", "1-1", boot.NOT_BUILT, "fork", 0.0),
    ]
    report.write_csv(tmp_path / "r.csv", rows)
    assert report.read_csv(tmp_path / "r.csv") == rows
    md = report.markdown(rows, "t")
    assert "| `sem_wait` | 2 | 2 | 1 | 1 | 0 | 0 | 0 | 0 | 0 |" in md
    assert "| `mq_open` | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |" in md
    assert "| `sem_wait/2-1` | FAIL | a \\| b |" in md
    assert "| `fork` | 1: mq_open/1-1 |" in md
