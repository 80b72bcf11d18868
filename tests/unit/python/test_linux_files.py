"""rtmux.formats.linux_files: the `LSB|` lines of rtos/linuxsvc/bench/remote.c."""

from __future__ import annotations

import pytest

from rtmux.formats import linux_files

LINES = [
    "LSB| pread64 samples 1000 min_ns 38304 avg_ns 45069 p99_ns 50000 max_ns 319904",
    "LSB| write bytes 4194304 ns 72006832",
    "LSB| hist alone 0 1000",
    "LSB| latency alone samples 1000 min_ns 448 avg_ns 448 p99_ns 448 p999_ns 448 max_ns 448 overruns 0 "
    "reads 0",
    "LSB| hist linux_busy 0 1000",
    "LSB| latency linux_busy samples 1000 min_ns 448 avg_ns 493 p99_ns 656 p999_ns 656 max_ns 656 "
    "overruns 0 reads 0",
    "LSB| hist remote_io 0 836",
    "LSB| hist remote_io 1 164",
    "LSB| latency remote_io samples 1000 min_ns 448 avg_ns 658 p99_ns 1792 p999_ns 1824 max_ns 1840 "
    "overruns 0 reads 8143",
    "LSB| done",
]
RUN = "\n".join(["rtos: rtmux rtos 0.1.0 entered at EL1", *LINES, "rtos: exit(0)"]) + "\n"


def test_parse_a_complete_run() -> None:
    r = linux_files.parse(RUN)
    assert r.pread == linux_files.RoundTrips(1000, 38304, 45069, 50000, 319904)
    assert (r.write.nbytes, r.write.ns) == (4194304, 72006832)
    assert r.write.mbps == pytest.approx(58.25, abs=0.01)
    assert list(r.latency) == ["alone", "linux_busy", "remote_io"]
    busy = r.latency["linux_busy"]
    assert (busy.max_ns, busy.reads, busy.cells) == (656, 0, {0: 1000})
    alone, io = r.latency["alone"], r.latency["remote_io"]
    assert alone.cells == {0: 1000} and alone.reads == 0
    assert (io.min_ns, io.avg_ns, io.p99_ns, io.p999_ns, io.max_ns, io.reads) == (
        448,
        658,
        1792,
        1824,
        1840,
        8143,
    )
    assert io.cells == {0: 836, 1: 164}
    s = io.stats()
    assert (s.samples, s.min_us, s.avg_us, s.p99_us, s.p999_us, s.max_us) == (
        1000,
        0.448,
        0.658,
        1.792,
        1.824,
        1.84,
    )
    assert s.overruns == 0 and not s.whole_us


def test_parse_tagged_lines_of_a_partition() -> None:
    tagged = "\n".join(f"[rtos] {line}" for line in RUN.splitlines())
    assert linux_files.parse(tagged).pread.avg_ns == 45069


def replaced(old: str, new: str) -> str:
    assert old in RUN
    return RUN.replace(old, new)


@pytest.mark.parametrize(
    ("console", "message"),
    [
        (replaced("LSB| done\n", ""), "did not finish"),
        (replaced("LSB| done", "LSB| error pread: -1 errno 5"), "the program failed: pread: -1 errno 5"),
        (RUN.replace("LSB| pread64", "LSB| error: Linux's /linux/srv/rtos/ready did not come"), "failed"),
        (replaced("LSB| write bytes 4194304 ns 72006832\n", ""), "0 `LSB| write` lines"),
        (
            replaced("LSB| write bytes 4194304", "LSB| write bytes 4194304\nLSB| write bytes 1 ns 1"),
            "malformed",
        ),
        (replaced("LSB| done", "LSB| done\nLSB| done"), "after `LSB| done`"),
        (replaced("LSB| hist remote_io 1 164", "LSB| hist remote_io 1 163"), "holds 999 samples"),
        (replaced("LSB| hist remote_io 1 164\n", ""), "holds 836 samples"),
        (replaced("LSB| hist alone 0 1000\n", ""), "histograms of"),
        (replaced("p99_ns 1792", "p99_ns 992"), "p99 is not in its histogram cell"),
        (replaced("p999_ns 1824 max_ns 1840", "p999_ns 1900 max_ns 1840"), "out of order"),
        (replaced("min_ns 38304 avg_ns 45069", "min_ns 48304 avg_ns 45069"), "pread64 figures out of order"),
        (replaced("overruns 0 reads 0", "overruns 0 reads 3"), "latency alone: remote reads counted"),
        (
            replaced("max_ns 656 overruns 0 reads 0", "max_ns 656 overruns 0 reads 3"),
            "latency linux_busy: remote reads counted while it ran alone",
        ),
        (replaced("LSB| hist linux_busy 0 1000\n", ""), "histograms of"),
        (replaced("LSB| hist alone 0 1000", "LSB| hist alone 0 990\nLSB| hist alone 7 10"), "min or max"),
        (replaced("LSB| latency remote_io", "LSB| latency alone"), "two `LSB| latency alone` lines"),
        (replaced("LSB| hist remote_io 1 164", "LSB| hist remote_io 0 164"), "out of place"),
        (replaced("LSB| pread64 samples 1000", "LSB| pread64 samples x"), "malformed"),
    ],
)
def test_refuses_incomplete_or_inconsistent_runs(console: str, message: str) -> None:
    with pytest.raises(linux_files.LinuxFilesFormatError, match=message):
        linux_files.parse(console)
