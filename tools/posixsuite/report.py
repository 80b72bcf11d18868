"""The report of a run: one CSV row per test, and a Markdown summary per interface."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from posixsuite.boot import CRASH, NOT_BUILT, OTHER, TIMEOUT

COLUMNS = ("interface", "test", "result", "detail", "seconds")
# The summary's count columns: (heading, results counted).
SUMMARY = (
    ("PASS", ("PASS",)),
    ("FAIL", ("FAIL",)),
    ("UNRESOLVED", ("UNRESOLVED",)),
    ("UNSUPPORTED", ("UNSUPPORTED",)),
    ("UNTESTED", ("UNTESTED",)),
    ("timeout", (TIMEOUT,)),
    ("crash", (CRASH, OTHER)),
)
_QUIET = ("PASS",)


@dataclass(frozen=True)
class Row:
    interface: str
    test: str
    result: str
    detail: str
    seconds: float


def write_csv(path: Path, rows: Iterable[Row]) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow((r.interface, r.test, r.result, r.detail, f"{r.seconds:.2f}"))


def read_csv(path: Path) -> list[Row]:
    with path.open(newline="") as f:
        return [
            Row(d["interface"], d["test"], d["result"], d["detail"], float(d["seconds"]))
            for d in csv.DictReader(f)
        ]


def summary_table(rows: Sequence[Row]) -> list[str]:
    """Per interface: tests, built, then the count of each result; a total line last."""
    heads = ["interface", "tests", "built", *(h for h, _ in SUMMARY)]
    lines = ["| " + " | ".join(heads) + " |", "|---" + "|---:" * (len(heads) - 1) + "|"]
    interfaces = sorted({r.interface for r in rows})

    def counts(sel: Sequence[Row]) -> list[int]:
        built = sum(1 for r in sel if r.result != NOT_BUILT)
        return [len(sel), built, *(sum(1 for r in sel if r.result in res) for _, res in SUMMARY)]

    for name in interfaces:
        sel = [r for r in rows if r.interface == name]
        lines.append(f"| `{name}` | " + " | ".join(str(c) for c in counts(sel)) + " |")
    lines.append("| **total** | " + " | ".join(f"**{c}**" for c in counts(rows)) + " |")
    return lines


def markdown(rows: Sequence[Row], title: str) -> str:
    out = [f"# {title}", "", *summary_table(rows), ""]
    out += [
        "Results are the tests' exit codes (PASS 0, FAIL 1, UNRESOLVED 2, UNSUPPORTED 4, UNTESTED 5); "
        "timeout: no exit within the wall-clock limit; crash: a FATAL line, no exit line, or an exit "
        "code the suite does not define.",
        "",
        "## Tests that did not pass",
        "",
        "| test | result | detail |",
        "|---|---|---|",
    ]
    for r in rows:
        if r.result not in _QUIET and r.result != NOT_BUILT:
            out.append(f"| `{r.interface}/{r.test}` | {r.result} | {_cell(r.detail)} |")
    out += ["", "## Tests not built (the first missing header or symbol)", ""]
    missing: dict[str, list[str]] = {}
    for r in rows:
        if r.result == NOT_BUILT:
            missing.setdefault(r.detail, []).append(f"{r.interface}/{r.test}")
    out += ["| missing | tests |", "|---|---|"]
    for what, tests in sorted(missing.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(f"| `{_cell(what)}` | {len(tests)}: {', '.join(tests)} |")
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")[:200]
