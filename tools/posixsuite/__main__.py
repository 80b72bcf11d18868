"""python -m posixsuite --suite DIR [--sdk build/sdk] [--out build/posix-conformance] [PATTERN...]

Builds each test of the interfaces that the patterns match (default: those the rtos implements;
`sem_*`, `sem_open/1-1`) with the SDK, then boots them one at a time and writes DIR/report.csv and
DIR/report.md (with --out's DIR). The builds run side by side (--jobs), the boots strictly one after
the other, never while a build runs. Exit status 0 when the run completed, whatever the results.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from posixsuite import boot, report, suite


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="posixsuite", description=__doc__.split("\n\n")[0] if __doc__ else "")
    ap.add_argument("--suite", type=Path, required=True, help="the Open POSIX Test Suite's root")
    ap.add_argument("--sdk", type=Path, default=Path("build/sdk"), help="the rtos SDK (make sdk)")
    ap.add_argument("--out", type=Path, default=Path("build/posix-conformance"))
    ap.add_argument("--timeout", type=float, default=20.0, help="wall-clock seconds per test")
    ap.add_argument("--jobs", type=int, default=2, help="builds side by side (no QEMU runs meanwhile)")
    ap.add_argument("--heap-size", type=int, default=suite.DEFAULT_HEAP_SIZE, help="HEAP_SIZE in bytes")
    ap.add_argument("--qemu", default=boot.QEMU)
    ap.add_argument("patterns", nargs="*", help="interfaces (sem_*) or tests (sem_open/1-*)")
    args = ap.parse_args(argv)

    try:
        root = suite.find_root(args.suite)
    except suite.SuiteError as exc:
        print(f"posixsuite: {exc}", file=sys.stderr)
        return 2
    if not (args.sdk / "rtos.mk").is_file():
        print(f"posixsuite: {args.sdk}: no rtos SDK there (make sdk)", file=sys.stderr)
        return 2
    tests = suite.discover(root, tuple(args.patterns) or suite.DEFAULT_PATTERNS)
    if not tests:
        print("posixsuite: no test matches", file=sys.stderr)
        return 2
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    builds = out / "builds"

    print(f"posixsuite: building {len(tests)} tests ({args.jobs} at a time)", flush=True)
    with ThreadPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        built = list(pool.map(lambda t: suite.build(t, root, args.sdk, builds, args.heap_size), tests))

    rows: list[report.Row] = []
    logs = out / "logs"
    for i, (test, b) in enumerate(zip(tests, built, strict=True), 1):
        log = logs / test.interface / (test.name.replace("/", "-") + ".log")
        log.parent.mkdir(parents=True, exist_ok=True)
        if b.image is None:
            log.write_text(b.log)
            row = report.Row(test.interface, test.name, boot.NOT_BUILT, b.missing, 0.0)
        else:
            r = boot.run(b.image, args.timeout, args.qemu)
            log.write_text(r.console)
            row = report.Row(test.interface, test.name, r.result, r.detail, r.seconds)
        rows.append(row)
        print(f"[{i}/{len(tests)}] {test.ident}: {row.result} {row.detail}".rstrip(), flush=True)

    report.write_csv(out / "report.csv", rows)
    (out / "report.md").write_text(report.markdown(rows, "Open POSIX Test Suite on the rtos"))
    print(f"posixsuite: report in {out / 'report.md'} and {out / 'report.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
