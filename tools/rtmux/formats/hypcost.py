"""The `hypcost:` lines of tests/guests/hypcost/ (what the hypervisor costs Linux, issue 27).

    hypcost: uart-write n=20000 ns=296.335
    hypcost: done

One line per path, its time per iteration in ns (to the picosecond: many iterations between two
reads of the 16-ns counter); `hypcost: done` ends a complete run. The same guest runs bare and as the
Linux partition, and `costs` pairs the two runs' figures: the difference is the hypervisor's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE_RE = re.compile(
    r"^(?:\[linux\] )?hypcost: (?P<name>[a-z-]+) n=(?P<n>\d+) ns=(?P<ns>\d+\.\d{3})\r?$", re.M
)
DONE_RE = re.compile(r"^(?:\[linux\] )?hypcost: done\r?$", re.M)
# What each path is, in the order the guest prints them.
NAMES = {
    "uart-write": "PL011 register write (UARTIMSC), trapped MMIO round trip",
    "uart-read": "PL011 register read (UARTFR), trapped MMIO round trip",
    "gicd-write": "GIC distributor register write (GICD_ISENABLER1), trapped MMIO round trip",
    "gicd-read": "GIC distributor register read (GICD_CTLR), trapped MMIO round trip",
    "timer-irq": "timer PPI: fire, handler (acknowledge, stop, EOI), back; injected through a list register",
    "timer-entry": "timer PPI: from firing to the handler's first instruction",
    "sgi-self": "SGI to itself: ICC_SGI1R_EL1 write (trapped), handler, EOI",
    "sgi-pingpong": "SGI round trip between two CPUs (two SGIs, two handlers)",
}


class HypCostFormatError(ValueError):
    pass


@dataclass(frozen=True)
class Figure:
    name: str
    n: int
    ns: float


@dataclass(frozen=True)
class Cost:
    name: str
    bare_ns: float
    rtmux_ns: float

    @property
    def what(self) -> str:
        return NAMES[self.name]

    @property
    def cost_ns(self) -> float:
        """What the hypervisor adds."""
        return self.rtmux_ns - self.bare_ns


def parse(console: str, names: tuple[str, ...] = tuple(NAMES)) -> dict[str, Figure]:
    """The figures of a complete run (at least `names`); HypCostFormatError otherwise."""
    figures = {m["name"]: Figure(m["name"], int(m["n"]), float(m["ns"])) for m in LINE_RE.finditer(console)}
    if not DONE_RE.search(console):
        raise HypCostFormatError("no `hypcost: done` line: the run did not complete")
    missing = [n for n in names if n not in figures]
    if missing:
        raise HypCostFormatError(f"no figures for {', '.join(missing)}")
    unknown = [n for n in figures if n not in NAMES]
    if unknown:
        raise HypCostFormatError(f"unknown paths {', '.join(unknown)}")
    return figures


def costs(bare: dict[str, Figure], rtmux: dict[str, Figure]) -> list[Cost]:
    """The paths both runs measured, in NAMES' order."""
    return [Cost(n, bare[n].ns, rtmux[n].ns) for n in NAMES if n in bare and n in rtmux]
