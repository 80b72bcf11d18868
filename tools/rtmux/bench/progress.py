"""Progress lines of `./rtmux bench` and the cost model behind their time estimates."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

from rtmux.bench import linux_script
from rtmux.bench.model import PERIOD_US, fmt_duration

# ------------------------------------------------------------------------------------------- progress


def estimate_remaining(
    running: list[tuple[float, float]], queued: list[float], jobs: int, speed: float
) -> float:
    """Wall seconds until the last run ends. `running`: (predicted s, elapsed s) of each started run;
    `queued`: predicted s of the runs not started, in start order; `speed`: measured / predicted time of
    the runs finished so far. Each queued run starts on the first of `jobs` slots to become free."""
    if jobs < 1:
        raise ValueError("at least one job")
    slots = sorted(max(pred * speed - elapsed, 0.0) for pred, elapsed in running)
    slots += [0.0] * max(jobs - len(slots), 0)
    for pred in queued:
        slots.sort()
        slots[0] += pred * speed
    return max(slots) if slots else 0.0


class Progress:
    """Prints `[bench E elapsed, ~R left] ...` lines: which run of how many starts and ends (with its
    figures), the phases of Linux boots, and a reminder when nothing was printed for a while. The
    remaining time comes from each run's predicted cost, corrected by how long finished runs really took."""

    def __init__(
        self,
        predicted: dict[str, float],
        jobs: int,
        out: TextIO,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.predicted = predicted
        self.order = list(predicted)
        self.jobs = jobs
        self.out = out
        self.clock = clock
        self.start = clock()
        self.started: dict[str, float] = {}
        self.finished: dict[str, float] = {}
        self.last_print = self.start
        self.lock = threading.Lock()

    def number(self, run_id: str) -> str:
        return f"{self.order.index(run_id) + 1} of {len(self.order)}"

    def speed(self) -> float:
        pred = sum(self.predicted[r] for r in self.finished)
        if pred <= 0:
            return 1.0
        return min(max(sum(self.finished.values()) / pred, 0.25), 4.0)

    def remaining(self) -> float:
        now = self.clock()
        running = [(self.predicted[r], now - t0) for r, t0 in self.started.items() if r not in self.finished]
        queued = [self.predicted[r] for r in self.order if r not in self.started]
        return estimate_remaining(running, queued, self.jobs, self.speed())

    def say(self, text: str) -> None:
        with self.lock:
            now = self.clock()
            left = (
                "done" if len(self.finished) == len(self.order) else f"~{fmt_duration(self.remaining())} left"
            )
            print(
                f"[bench {fmt_duration(now - self.start)} elapsed, {left}] {text}", file=self.out, flush=True
            )
            self.last_print = now

    def begin(self, run_id: str, title: str) -> None:
        with self.lock:
            self.started[run_id] = self.clock()
        self.say(f"case {self.number(run_id)} started: {title}")

    def end(self, run_id: str, summary: str) -> None:
        with self.lock:
            wall = self.clock() - self.started[run_id]
            self.finished[run_id] = wall
        self.say(
            f"case {self.number(run_id)} done in {fmt_duration(wall)} "
            f"({len(self.finished)} of {len(self.order)} finished): {summary}"
        )

    def quiet_for(self) -> float:
        return self.clock() - self.last_print

    def running(self) -> list[str]:
        return [self.number(r) for r in self.order if r in self.started and r not in self.finished]


# ------------------------------------------------------------------------------------------ cost model


def predicted_s(
    icount: bool,
    *,
    boot: str = "",
    hackbench_loops: int = 0,
    idle_s: float = 0,
    loaded_s: float = 0,
    rtos_load_s: float = 0,
    vbus_s: float = 0,
) -> float:
    """Wall seconds a run takes on one free core of a current x86 machine (measured once; the progress
    lines correct it as runs finish). In icount mode an idle guest skips to its next timer, a loaded one
    costs every instruction: Linux's load and hackbench (process switches, system calls) ~37 s per guest
    second, the rtos's own load ~5.5 s, V-Bus traffic ~6 s. Without icount guest time is host time."""
    boots = {"": 0.0, "rtos": 1.0, "linux": 5.0, "rtmux": 10.0}
    hackbench = hackbench_loops / 500 * 0.6  # guest seconds of the standard kernel
    if not icount:
        return boots[boot] * 2 + 3.0 * hackbench + 1.1 * (idle_s + loaded_s + rtos_load_s + vbus_s)
    return boots[boot] + 37.0 * (hackbench + loaded_s) + 0.6 * idle_s + 5.5 * rtos_load_s + 6.0 * vbus_s


def plan_cost(
    icount: bool, plan: linux_script.Plan, boot: str, shell_s: float = 1.0, linux_cpus: int = 1
) -> float:
    """predicted_s of a Linux boot that runs `plan` (Linux reaches its shell at `shell_s` guest seconds) on
    `linux_cpus` CPUs: in icount mode one host thread runs every vCPU, so each busy one costs its share."""
    guest = plan.samples * PERIOD_US / 1e6
    idle = guest if plan.idle else 0.0
    loaded = guest if plan.loaded else 0.0
    control = plan.control * PERIOD_US / 1e6
    if plan.load:
        loaded += control
    else:
        idle += control
    vbus = 0.0
    if plan.hold_until_s:
        if plan.load:
            loaded = max(loaded, plan.hold_until_s - shell_s)
        elif plan.vbus is not None:
            vbus = plan.hold_until_s - shell_s
        else:
            idle += plan.hold_until_s - shell_s
    if plan.load:
        loaded += 0.3  # stopping the load
    if plan.files is not None:
        # remote.c's plan.samples preads (~50 us each) and its latency run beside remote I/O keep Linux's
        # diod busy, as V-Bus traffic does; its latency run alone leaves Linux idle; the one beside a busy
        # Linux (a dd and a cat in a loop: processes started, ~20 s of wall a guest second, measured
        # 2026-11-27) costs about half as much as Linux's load
        vbus += plan.samples * (50e-6 + PERIOD_US / 1e6) + 0.5
        idle += plan.samples * PERIOD_US / 1e6
        loaded += 0.55 * (plan.samples * PERIOD_US / 1e6 + 0.6)
    loops = plan.hackbench_loops if plan.hackbench else 0
    if icount:
        loaded *= linux_cpus
    return predicted_s(icount, boot=boot, hackbench_loops=loops, idle_s=idle, loaded_s=loaded, vbus_s=vbus)
