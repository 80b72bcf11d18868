"""The `PXC|` lines of rtos/posix/bench/cost.c: the POSIX layer's cost over the native rtos API.

    PXC| mutex native_ns 181.001 posix_ns 203.000 ratio 1.121
    PXC| wake-max native_ns 336 posix_ns 368
    PXC| done

Each named measurement has an average line (with the ratio posix / native) and, except the mutex pair,
a `-max` line with the worst cases; `PXC| done` ends a complete run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PAIR_RE = re.compile(
    r"^PXC\| (?P<name>[a-z]+) native_ns (?P<native>\d+\.\d{3}) posix_ns (?P<posix>\d+\.\d{3}) "
    r"ratio (?P<ratio>\d+\.\d{3})$"
)
MAX_RE = re.compile(r"^PXC\| (?P<name>[a-z]+)-max native_ns (?P<native>\d+) posix_ns (?P<posix>\d+)$")
# What each measurement is, in the order the program prints them.
NAMES = {
    "mutex": "uncontended lock + unlock (default mutex / rt_mutex)",
    "wake": "post waking a more urgent waiter, to the waiter running (sem_post / rt_sem_give)",
    "periodic": "1 kHz periodic thread's lateness (clock_nanosleep TIMER_ABSTIME / rt_periodic_wait)",
}


class PosixCostFormatError(ValueError):
    pass


@dataclass(frozen=True)
class Cost:
    name: str
    native_ns: float
    posix_ns: float
    ratio: float
    native_max_ns: int | None = None
    posix_max_ns: int | None = None

    @property
    def what(self) -> str:
        return NAMES[self.name]


def parse(console: str) -> list[Cost]:
    """Every measurement of a complete run, in NAMES' order; PosixCostFormatError otherwise."""
    pairs: dict[str, tuple[float, float, float]] = {}
    maxima: dict[str, tuple[int, int]] = {}
    done = False
    for raw in console.splitlines():
        line = raw.strip()
        if line.startswith("[rtos] "):
            line = line[len("[rtos] ") :]
        if not line.startswith("PXC|"):
            continue
        if line == "PXC| done":
            done = True
        elif m := PAIR_RE.match(line):
            pairs[m["name"]] = (float(m["native"]), float(m["posix"]), float(m["ratio"]))
        elif m := MAX_RE.match(line):
            maxima[m["name"]] = (int(m["native"]), int(m["posix"]))
        else:
            raise PosixCostFormatError(f"malformed PXC| line: {line!r}")
    if not done:
        raise PosixCostFormatError("no `PXC| done` line: the run did not complete")
    missing = [n for n in NAMES if n not in pairs]
    if missing:
        raise PosixCostFormatError(f"no figures for {', '.join(missing)}")
    out = []
    for name in NAMES:
        native, posix, ratio = pairs[name]
        if native <= 0 or abs(posix / native - ratio) > 0.002:
            raise PosixCostFormatError(f"{name}: ratio {ratio} does not match {posix} / {native}")
        hi = maxima.get(name)
        out.append(Cost(name, native, posix, ratio, hi[0] if hi else None, hi[1] if hi else None))
    return out
