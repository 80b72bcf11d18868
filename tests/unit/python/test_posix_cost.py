"""rtmux.formats.posix_cost: the POSIX layer's cost lines (rtos/posix/bench/cost.c)."""

from __future__ import annotations

import pytest

from rtmux.formats import posix_cost

RUN = """rtos: rtmux rtos 0.1.0 entered at EL2
PXC| mutex native_ns 181.001 posix_ns 203.000 ratio 1.121
PXC| wake native_ns 332.000 posix_ns 361.001 ratio 1.087
PXC| wake-max native_ns 336 posix_ns 368
PXC| periodic native_ns 400.000 posix_ns 416.000 ratio 1.040
PXC| periodic-max native_ns 400 posix_ns 416
PXC| done
rtos: exit(0)
"""


def test_parse_a_complete_run() -> None:
    costs = posix_cost.parse(RUN)
    assert [c.name for c in costs] == ["mutex", "wake", "periodic"]
    mutex, wake, periodic = costs
    assert (mutex.native_ns, mutex.posix_ns, mutex.ratio) == (181.001, 203.0, 1.121)
    assert mutex.native_max_ns is None and wake.posix_max_ns == 368 and periodic.native_max_ns == 400
    assert "sem_post" in wake.what


def test_parse_tagged_lines_of_a_partition() -> None:
    tagged = "\n".join(f"[rtos] {line}" for line in RUN.splitlines())
    assert [c.ratio for c in posix_cost.parse(tagged)] == [1.121, 1.087, 1.04]


@pytest.mark.parametrize(
    ("console", "message"),
    [
        (RUN.replace("PXC| done\n", ""), "did not complete"),
        (
            RUN.replace("PXC| wake native_ns 332.000 posix_ns 361.001 ratio 1.087\n", ""),
            "no figures for wake",
        ),
        (RUN.replace("ratio 1.121", "ratio 1.500"), "does not match"),
        (RUN.replace("PXC| done", "PXC| mutex 12"), "malformed"),
    ],
)
def test_refuses_incomplete_or_inconsistent_runs(console: str, message: str) -> None:
    with pytest.raises(posix_cost.PosixCostFormatError, match=message):
        posix_cost.parse(console)
