"""`./rtmux bench` (`make bench`): rtmux beside bare-metal, Linux and PREEMPT_RT Linux on one emulated board.

Every case samples a 1 ms periodic timer (SAMPLES_FULL samples, SAMPLES_QUICK with --quick), idle and
under load:

  rtos bare metal          build/rtos/latency.img alone (-smp 1); load: its own (FPU threads, interrupts);
                           reference: -smp 2 with CPU 1 copying memory (cpu1=copy), no hypervisor;
                           and with CPU 1 woken every 1.013 ms for ~10 us of work (cpu1=sweep), the
                           shape of an idle Linux's daemons, which QEMU icount's round-robin lets hold
                           the rtos's CPU now and then
  rtos in its partition    the rtmux system of configs/qemu-virt.toml, the rtos partition (CPU 0) running
                           the latency app; Linux (CPU 1) idle, or running the Linux load
  Linux std, PREEMPT_RT    Debian's kernels bare (-smp 1), cyclictest pinned to CPU 0; Linux load
  Linux std under rtmux    the same cyclictest in the Linux partition of the rtmux system

  control loop (POSIX)     examples/control-loop, one C file against POSIX: built with the rtos SDK and
                           booted bare (-smp 1) and as the rtos partition of the default system beside
                           the Linux load; built with Debian's aarch64 gcc and glibc (static, in the
                           initramfs) and run on PREEMPT_RT bare (-smp 1) under the same load, after that
                           boot's cyclictests; its own lateness figures (clock_gettime after each wake-up)
  V-Bus                    the rtos partition's latency app also serving the channel
                           `echo` (echo=1): Linux measures round trips and throughput through it and
                           through a pipe pair (rtmux-ping), then keeps V-Bus traffic going while the
                           rtos partition measures
  Linux's files            rtos/linuxsvc/bench/remote.c as the rtos partition of the default system
                           (built with the case's sample count): 64-byte remote preads of a file Linux
                           wrote, 4 MiB of remote writes, a 1 kHz POSIX thread's lateness alone, alone
                           beside a busy Linux, and beside a thread looping on remote preads; then Linux
                           times a local dd of the same writes to the same file
  Linux on 3 CPUs          (not with --quick) configs/qemu-virt-4cpu.toml, Linux on CPUs 1-3: boot,
                           hackbench, then the Linux load while the rtos partition (CPU 0) measures;
                           references: Debian's standard kernel bare with -smp 3, boot and hackbench;
                           the rtos bare metal with -smp 4 and CPUs 1-3 copying memory (load_cpus=3)

plus the rtos context-switch time, the POSIX layer's cost over the native rtos calls (rtos/posix/bench/
cost.c: a mutex pair, a semaphore wake-up, a periodic wake-up), Linux's boot-to-shell time and a hackbench
run (bare and under rtmux), the hypervisor's size, and a determinism check (the quick bare rtos cases run
twice must agree exactly). Each case is one QEMU boot (a Linux boot measures idle, then loaded); in icount
mode the boots run `--jobs` at a time, which does not change guest time. The figures go into a marker-
delimited section of BENCHMARKS.md, a CSV beside it, figures and gnuplot files
(rtmux.bench.report, .plot).
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TextIO

from rtmux import paths, qemu
from rtmux.bench import linux_script
from rtmux.bench.model import (
    CONTROL_EXAMPLE,
    CPU1_REFERENCE,
    CPU1_SWEEP,
    FILES_WAIT_BASE_S,
    FILES_WAIT_PER_SAMPLE_S,
    GICV2_CONFIG,
    HACKBENCH_LOOPS_FULL,
    HACKBENCH_LOOPS_QUICK,
    HYPCOST_CONFIG,
    HYPCOST_IMAGE,
    HYPCOST_TIMEOUT_S,
    MODE_ICOUNT,
    MODE_REALTIME,
    PARTITION_HOLD_MARGIN_S,
    PARTITION_WARMUP,
    PERIOD_US,
    POSIX_COST_IMAGE,
    SAMPLES_FULL,
    SAMPLES_QUICK,
    SHARED_CONFIG,
    SHARED_IDLE_RTOS_ARGS,
    SMP_BARE_SAMPLES,
    SMP_CONFIG,
    SMP_LINUX_CPUS,
    SWITCHES,
    VBUS_BULK_S_FULL,
    VBUS_BULK_S_QUICK,
    VBUS_ROUND_TRIPS_FULL,
    VBUS_ROUND_TRIPS_QUICK,
    Options,
    Row,
    Run,
    RunDoc,
    RunOutput,
    files_image,
    records,
    smp_extra_samples,
    vbus_extra_samples,
)
from rtmux.bench.progress import plan_cost, predicted_s
from rtmux.board import QEMU_VIRT_MACHINE
from rtmux.errors import GuestFailure, RtmuxError, SetupError
from rtmux.formats import control_loop, cyclictest, hypcost, latmus, latstats, posix_cost, rtmux_ping
from rtmux.image import initramfs
from rtmux.run import linux, rtos, system


def _rtmux_cmd(args: list[str]) -> str:
    return shlex.join(["./rtmux", *args])


def _shown_argv(argv: list[str]) -> str:
    """QEMU's command line as documentation shows it: program by name, paths relative to the repository."""
    shown = [qemu.QEMU_BIN]
    for arg in argv[1:]:
        shown.append(paths.display(Path(arg)) if arg.startswith(str(paths.REPO_ROOT)) else arg)
    return shlex.join(shown)


class Bench:
    """Prepares the images, defines the runs and gathers their outputs into BenchResults."""

    def __init__(self, opts: Options, out: TextIO, seed: int = linux_script.SEED) -> None:
        self.opts = opts
        self.out = out
        self.icount = not opts.realtime
        self.mode = MODE_ICOUNT if self.icount else MODE_REALTIME
        self.samples = opts.samples or (SAMPLES_QUICK if opts.quick else SAMPLES_FULL)
        # the measurement seed of every Linux boot (`--seed`); the benchmark's own is linux_script.SEED,
        # `./rtmux bench linux-tail` boots its two Linux cases with several (rtmux.bench.tail)
        self.seed = seed
        # absolute: the control loop's image is built by a make in its own folder (`make -C`)
        self.data = opts.data_dir.resolve() / self.mode
        self.guests: dict[str, initramfs.Guest] = {}
        self.systems: dict[str, tuple[list[str], Path]] = {}
        self.hyp_lines = 0
        self.control_images: dict[int, Path] = {}  # periods -> the control loop's rtos image
        self.hypcost_argv: list[str] = []

    # ------------------------------------------------------------------ preparation (sequential)

    def prepare(self) -> None:
        if self.opts.build:
            system.make(
                ["rtos", "hyp", "guests", "sdk", "posix-bench", paths.display(files_image(self.samples))]
            )
        self.hyp_lines = linux_script.hypervisor_lines()  # the sources of the hypervisor just built
        self.hypcost_argv = system.build(HYPCOST_CONFIG, icount=self.icount, no_build=True).argv
        for flavour in ("std", "rt"):
            self.guests[flavour] = initramfs.build(flavour)
        n, w = self.samples, PARTITION_WARMUP
        plans = self.plans()
        self.data.mkdir(parents=True, exist_ok=True)
        for periods in (n, n + w):
            self.control_images[periods] = self._build_control(periods)
        self.systems["ctl-loaded"] = linux_script.system_argv(
            self._system_name("ctl-loaded"),
            "",
            icount=self.icount,
            folder=self.data / "configs",
            script_text=self._write_script("rtmux-ctl-loaded", plans["rtmux-ctl-loaded"]).read_text(
                encoding="utf-8"
            ),
            rtos_image=self.control_images[n + w],
            seed=self.seed,
        )
        image = files_image(n)
        if not image.is_file():
            raise SetupError(
                f"{paths.display(image)} not found: run `make {paths.display(image)}` "
                "(or leave out --no-build)"
            )
        self.systems["files"] = linux_script.system_argv(
            self._system_name("files"),
            "",
            icount=self.icount,
            folder=self.data / "configs",
            script_text=self._write_script("rtmux-files", plans["rtmux-files"]).read_text(encoding="utf-8"),
            rtos_image=image,
            seed=self.seed,
        )
        for name, args, run_id in self.system_cases():
            if name in ("linux-cpu0", "smp", "shared-idle", "shared-hackbench") and self.opts.quick:
                continue
            self.prepare_system(name, args, run_id, plans[run_id])

    def prepare_linux_tail(self, cpu0: bool = False) -> None:
        """What `./rtmux bench linux-tail` needs of prepare(): the standard kernel's initramfs and the
        system of the loaded rtmux case (`cpu0`: and of its artifact check, Linux on CPU 0), with this
        Bench's seed (the images are built once, by the caller)."""
        self.guests["std"] = initramfs.build("std")
        self.data.mkdir(parents=True, exist_ok=True)
        names = ("rtos-loaded", "linux-cpu0") if cpu0 else ("rtos-loaded",)
        for name, args, run_id in self.system_cases():
            if name in names:
                self.prepare_system(name, args, run_id, self.plans()[run_id])

    def system_cases(self) -> list[tuple[str, str, str]]:
        """The rtmux systems of the cases: (name, the rtos partition's boot arguments, run id)."""
        n, w = self.samples, PARTITION_WARMUP
        return [
            ("rtos-idle", f"period_us={PERIOD_US} samples={n + w}", "rtmux-rtos-idle"),
            ("rtos-loaded", f"period_us={PERIOD_US} samples={n + w}", "rtmux-loaded"),
            ("linux", f"period_us={PERIOD_US} samples=0", "rtmux-linux"),
            ("linux-cpu0", f"period_us={PERIOD_US} samples=0", "rtmux-linux-cpu0"),
            ("vbus", self.vbus_rtos_args(), "rtmux-vbus"),
            ("smp", self.smp_rtos_args(), "rtmux-smp"),
            ("shared-idle", f"period_us={PERIOD_US} samples={n + w}", "rtmux-shared-idle"),
            ("shared-loaded", f"period_us={PERIOD_US} samples={n + w}", "rtmux-shared-loaded"),
            ("shared-hackbench", SHARED_IDLE_RTOS_ARGS, "rtmux-shared-hackbench"),
            ("gicv2-loaded", f"period_us={PERIOD_US} samples={n + w}", "rtmux-gicv2-loaded"),
        ]

    def _system_name(self, name: str) -> str:
        """The system image's name (build/system/bench-NAME.img): one per mode, and per seed but the
        benchmark's own, so that boots with other seeds never overwrite the benchmark's images."""
        seed = "" if self.seed == linux_script.SEED else f"-seed{self.seed}"
        return f"{self.mode}-{name}{seed}"

    def prepare_system(self, name: str, args: str, run_id: str, plan: linux_script.Plan) -> None:
        base = {"smp": SMP_CONFIG, "gicv2-loaded": GICV2_CONFIG}.get(
            name, SHARED_CONFIG if name.startswith("shared") else None
        )
        self.systems[name] = linux_script.system_argv(
            self._system_name(name),
            args,
            icount=self.icount,
            folder=self.data / "configs",
            swapped=name == "linux-cpu0",
            script_text=self._write_script(run_id, plan).read_text(encoding="utf-8"),
            base=base or system.DEFAULT_CONFIG,
            seed=self.seed,
        )

    def _control_out(self, periods: int) -> Path:
        return self.data / "control-loop" / f"rtos-{periods}"

    def _control_make(self, periods: int, shown: bool = False) -> list[str]:
        """The make command building the control loop's rtos image of `periods` periods (compiled in, so
        one folder per count); `shown`: with paths relative to the repository, as documentation shows it."""
        folder, out = CONTROL_EXAMPLE, self._control_out(periods)
        where = [paths.display(folder), paths.display(out)] if shown else [str(folder), str(out)]
        return ["make", "-s", "-C", where[0], "rtos", f"PERIODS={periods}", f"OUT={where[1]}"]

    def _build_control(self, periods: int) -> Path:
        cmd = self._control_make(periods)
        proc = subprocess.run(
            cmd, cwd=paths.REPO_ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        if proc.returncode != 0:
            raise RtmuxError(f"`{shlex.join(cmd)}` failed:\n{proc.stdout}{proc.stderr}")
        return self._control_out(periods) / "rtos" / "control_loop.img"  # the Makefile's $(OUT)/rtos/

    # ----------------------------------------------------------------------------- the runs

    def _run_args(self, config: Path, script_path: Path, extra: Sequence[str] = ()) -> list[str]:
        """`./rtmux run`'s arguments that reproduce a case on the system `config` (after `./rtmux`):
        its QEMU mode, the measurement seed, `extra`, Linux's boot-time script."""
        args = ["run", paths.display(config), "--icount" if self.icount else "--plain"]
        args += ["--seed", str(self.seed), *extra]
        return args + ["--linux-script", paths.display(script_path)]

    def vbus_plan(self) -> linux_script.VbusPlan:
        if self.opts.quick:
            return linux_script.VbusPlan(VBUS_ROUND_TRIPS_QUICK, VBUS_BULK_S_QUICK)
        return linux_script.VbusPlan(VBUS_ROUND_TRIPS_FULL, VBUS_BULK_S_FULL)

    def vbus_rtos_samples(self) -> int:
        v = self.vbus_plan()
        return self.samples + PARTITION_WARMUP + vbus_extra_samples(v.round_trips, v.bulk_s)

    def vbus_rtos_args(self) -> str:
        return f"period_us={PERIOD_US} samples={self.vbus_rtos_samples()} echo=1"

    def smp_rtos_samples(self) -> int:
        loops = HACKBENCH_LOOPS_QUICK if self.opts.quick else HACKBENCH_LOOPS_FULL
        return self.samples + PARTITION_WARMUP + smp_extra_samples(loops)

    def smp_rtos_args(self) -> str:
        return f"period_us={PERIOD_US} samples={self.smp_rtos_samples()}"

    def plans(self) -> dict[str, linux_script.Plan]:
        """What Linux does in each Linux boot."""
        n = self.samples
        loops = HACKBENCH_LOOPS_QUICK if self.opts.quick else HACKBENCH_LOOPS_FULL
        hold = (n + PARTITION_WARMUP) * PERIOD_US / 1e6 + PARTITION_HOLD_MARGIN_S
        return {
            # PREEMPT_RT's hackbench is not compared with anything and costs three times the standard one's.
            "linux-std": linux_script.Plan(
                n, hackbench=True, idle=True, load=True, loaded=True, hackbench_loops=loops
            ),
            # The POSIX control loop after the loaded cyclictest, under the same load.
            "linux-rt": linux_script.Plan(n, idle=True, load=True, loaded=True, control=n),
            "rtmux-rtos-idle": linux_script.Plan(n, hold_until_s=hold),
            "rtmux-loaded": linux_script.Plan(n, load=True, loaded=True, hold_until_s=hold),
            "rtmux-gicv2-loaded": linux_script.Plan(n, load=True, loaded=True, hold_until_s=hold),
            "rtmux-ctl-loaded": linux_script.Plan(n, load=True, hold_until_s=hold),
            "rtmux-linux": linux_script.Plan(n, hackbench=True, idle=True, hackbench_loops=loops),
            "rtmux-linux-cpu0": linux_script.Plan(n, load=True, loaded=True),
            "rtmux-vbus": linux_script.Plan(
                n,
                vbus=self.vbus_plan(),
                hold_until_s=self.vbus_rtos_samples() * PERIOD_US / 1e6 + PARTITION_HOLD_MARGIN_S,
            ),
            "linux-std-smp3": linux_script.Plan(n, hackbench=True, hackbench_loops=loops),
            "rtmux-files": linux_script.Plan(
                n, files=linux_script.FilesPlan(FILES_WAIT_BASE_S + FILES_WAIT_PER_SAMPLE_S * n)
            ),
            "rtmux-shared-idle": linux_script.Plan(n, hold_until_s=hold),
            "rtmux-shared-loaded": linux_script.Plan(n, load=True, hold_until_s=hold),
            "rtmux-shared-hackbench": linux_script.Plan(n, hackbench=True, hackbench_loops=loops),
            "rtmux-smp": linux_script.Plan(
                n,
                hackbench=True,
                hackbench_loops=loops,
                load=True,
                hold_until_s=self.smp_rtos_samples() * PERIOD_US / 1e6 + PARTITION_HOLD_MARGIN_S,
            ),
        }

    def runs(self) -> list[Run]:
        n, icount = self.samples, self.icount
        guest_s = n * PERIOD_US / 1e6
        plans = self.plans()
        runs = [
            Run(
                "rtos-bare-idle",
                "rtos bare metal, idle",
                predicted_s(icount, boot="rtos", idle_s=guest_s),
                lambda phase: self.rtos_bare(False, n, "rtos-bare-idle"),
            ),
            Run(
                "rtos-bare-load",
                "rtos bare metal, its own load",
                predicted_s(icount, boot="rtos", rtos_load_s=guest_s),
                lambda phase: self.rtos_bare(True, n, "rtos-bare-load"),
            ),
            Run(
                "rtos-bare-trace-idle",
                "rtos bare metal, idle, scheduler trace on",
                predicted_s(icount, boot="rtos", idle_s=guest_s),
                lambda phase: self.rtos_bare(False, n, "rtos-bare-trace-idle", trace=True),
            ),
            Run(
                "rtos-bare-trace-load",
                "rtos bare metal, its own load, scheduler trace on",
                predicted_s(icount, boot="rtos", rtos_load_s=guest_s),
                lambda phase: self.rtos_bare(True, n, "rtos-bare-trace-load", trace=True),
            ),
            Run(
                "rtos-bare-cpu1",
                "rtos bare metal (-smp 2), CPU 1 copying memory",
                predicted_s(icount, boot="rtos", loaded_s=guest_s),
                lambda phase: self.rtos_bare(False, n, "rtos-bare-cpu1", cpu1=CPU1_REFERENCE),
            ),
            Run(
                "rtos-bare-sweep",
                "rtos bare metal (-smp 2), CPU 1 waking every 1.013 ms",
                predicted_s(icount, boot="rtos", idle_s=guest_s),
                lambda phase: self.rtos_bare(False, n, "rtos-bare-sweep", cpu1=CPU1_SWEEP),
            ),
            Run(
                "ctxsw",
                "rtos context switch",
                predicted_s(icount, boot="rtos", rtos_load_s=0.2),
                lambda phase: self.ctxsw(),
            ),
            Run(
                "posix-cost",
                "POSIX layer's cost over the native rtos calls",
                predicted_s(icount, boot="rtos", rtos_load_s=2.5),
                lambda phase: self.posix_cost(),
            ),
            Run(
                "hypcost",
                "what the hypervisor costs Linux: trapped paths, bare and under rtmux",
                predicted_s(icount, boot="rtmux", rtos_load_s=0.1),
                lambda phase: self.hyp_cost(),
            ),
            Run(
                "linux-std",
                "Linux std bare (-smp 1): boot, hackbench, cyclictest idle and loaded",
                plan_cost(icount, plans["linux-std"], "linux"),
                lambda phase: self.linux_bare("std", plans["linux-std"], phase),
            ),
            Run(
                "linux-rt",
                "Linux PREEMPT_RT bare (-smp 1): boot, cyclictest idle and loaded, POSIX control loop loaded",
                plan_cost(icount, plans["linux-rt"], "linux"),
                lambda phase: self.linux_bare("rt", plans["linux-rt"], phase),
            ),
            Run(
                "rtmux-rtos-idle",
                "rtmux: rtos partition latency, Linux idle",
                plan_cost(icount, plans["rtmux-rtos-idle"], "rtmux"),
                lambda phase: self.rtmux_rtos_idle(plans["rtmux-rtos-idle"], phase),
            ),
            Run(
                "rtmux-loaded",
                "rtmux: rtos partition latency and Linux cyclictest, Linux loaded",
                plan_cost(icount, plans["rtmux-loaded"], "rtmux"),
                lambda phase: self.rtmux_loaded(plans["rtmux-loaded"], phase),
            ),
            Run(
                "rtmux-gicv2-loaded",
                "rtmux on GICv2: rtos partition latency and Linux cyclictest, Linux loaded",
                plan_cost(icount, plans["rtmux-gicv2-loaded"], "rtmux"),
                lambda phase: self.rtmux_loaded(plans["rtmux-gicv2-loaded"], phase, gic=2),
            ),
            Run(
                "rtmux-linux",
                "rtmux: Linux boot, hackbench, cyclictest idle",
                plan_cost(icount, plans["rtmux-linux"], "rtmux"),
                lambda phase: self.rtmux_linux_idle(plans["rtmux-linux"], phase),
            ),
            Run(
                "rtmux-vbus",
                "rtmux: V-Bus round trips and throughput, rtos partition latency with V-Bus traffic",
                plan_cost(icount, plans["rtmux-vbus"], "rtmux"),
                lambda phase: self.rtmux_vbus(plans["rtmux-vbus"], phase),
            ),
            Run(
                "ctl-rtos-bare",
                "POSIX control loop, rtos bare metal",
                predicted_s(icount, boot="rtos", idle_s=guest_s),
                lambda phase: self.control_rtos_bare(),
            ),
            Run(
                "rtmux-ctl-loaded",
                "rtmux: POSIX control loop in the rtos partition, Linux loaded",
                plan_cost(icount, plans["rtmux-ctl-loaded"], "rtmux"),
                lambda phase: self.rtmux_control_loaded(plans["rtmux-ctl-loaded"], phase),
            ),
            Run(
                "rtmux-files",
                "rtmux: Linux's files from an rtos thread: remote pread, write, latency beside remote I/O",
                plan_cost(icount, plans["rtmux-files"], "rtmux"),
                lambda phase: self.rtmux_files(plans["rtmux-files"], phase),
            ),
        ]
        # --quick (make test's smoke run) keeps the loaded case only: each shared case is a Linux boot.
        for case in ("loaded",) if self.opts.quick else ("idle", "loaded"):
            run_id = f"rtmux-shared-{case}"
            runs.append(
                Run(
                    run_id,
                    f"rtmux -smp 1, shared CPU: rtos partition latency, Linux {case}",
                    plan_cost(icount, plans[run_id], "rtmux", shell_s=1.5),
                    self._shared_work(case, plans[run_id]),
                )
            )
        if not self.opts.quick:
            # Left out of --quick, whose time limit (3 minutes on 2 cores) they would break.
            runs += [
                Run(
                    "rtmux-shared-hackbench",
                    "rtmux -smp 1, shared CPU: Linux boot and hackbench beside an idle rtos",
                    plan_cost(icount, plans["rtmux-shared-hackbench"], "rtmux"),
                    lambda phase: self.rtmux_shared_hackbench(plans["rtmux-shared-hackbench"], phase),
                ),
                Run(
                    "rtmux-linux-cpu0",
                    "rtmux, artifact check: Linux on CPU 0, rtos on CPU 1: cyclictest, Linux loaded",
                    plan_cost(icount, plans["rtmux-linux-cpu0"], "rtmux"),
                    lambda phase: self.rtmux_linux_cpu0(plans["rtmux-linux-cpu0"], phase),
                ),
                Run(
                    "rtos-bare-cpus3",
                    f"rtos bare metal (-smp 4), CPUs 1-{SMP_LINUX_CPUS} copying memory",
                    predicted_s(icount, boot="rtos", loaded_s=3.0 if icount else SMP_BARE_SAMPLES / 1000),
                    lambda phase: self.rtos_bare(
                        False, SMP_BARE_SAMPLES, "rtos-bare-cpus3", CPU1_REFERENCE, SMP_LINUX_CPUS
                    ),
                ),
                Run(
                    "linux-std-smp3",
                    f"Linux std bare (-smp {SMP_LINUX_CPUS}): boot, hackbench",
                    plan_cost(icount, plans["linux-std-smp3"], "linux", linux_cpus=SMP_LINUX_CPUS),
                    lambda phase: self.linux_bare_smp(plans["linux-std-smp3"], phase),
                ),
                Run(
                    "rtmux-smp",
                    "rtmux -smp 4: Linux on CPUs 1-3 boot, hackbench, then loaded while the rtos measures",
                    plan_cost(icount, plans["rtmux-smp"], "rtmux", linux_cpus=SMP_LINUX_CPUS),
                    lambda phase: self.rtmux_smp(plans["rtmux-smp"], phase),
                ),
            ]
        if icount:
            # Determinism: the quick bare rtos cases twice (the quick run's own cases are the first time),
            # and a third run that decides when those two differ (runner._determinism).
            q = SAMPLES_QUICK
            for load in (False, True):
                kind = "load" if load else "idle"
                for k in (1, 2, 3) if not self.opts.quick else (2, 3):
                    runs.append(
                        Run(
                            f"repeat-{kind}-{k}",
                            f"determinism: rtos bare {kind}, {q} samples, run {k}",
                            predicted_s(
                                icount,
                                boot="rtos",
                                idle_s=0 if load else q / 1000,
                                rtos_load_s=q / 1000 if load else 0,
                            ),
                            self._repeat_work(load, k),
                        )
                    )
        return runs

    def _shared_work(
        self, case: str, plan: linux_script.Plan
    ) -> Callable[[Callable[[str], None]], RunOutput]:
        return lambda phase: self.rtmux_shared(case, plan, phase)

    def _repeat_work(self, load: bool, k: int) -> Callable[[Callable[[str], None]], RunOutput]:
        return lambda phase: self.rtos_repeat(load, k)

    # ---------------------------------------------------------------------------- rtos bare

    def _rtos_latency(
        self,
        load: bool,
        samples: int,
        hist: Path,
        cpu1: str | None = None,
        load_cpus: int = 1,
        trace: bool = False,
    ) -> latmus.LatencyReport:
        run = rtos.latency(
            cpu1=cpu1,
            load_cpus=load_cpus,
            period_us=PERIOD_US,
            samples=samples,
            load=load,
            icount=self.icount,
            # every busy vCPU takes its turn on the one host thread of icount: with three of them the
            # -smp 4 reference ran past twice the plain estimate while another case ran beside it
            timeout_s=rtos.default_latency_timeout(samples, PERIOD_US, load)
            * 2
            * (load_cpus + 1 if cpu1 else 1),
            histogram_path=hist,
            on_line=None,
            trace=trace,
        )
        return run.report

    def rtos_bare(
        self,
        load: bool,
        samples: int,
        row_id: str,
        cpu1: str | None = None,
        load_cpus: int = 1,
        trace: bool = False,
    ) -> RunOutput:
        hist = self.data / f"{row_id}.dat"
        report = self._rtos_latency(load, samples, hist, cpu1, load_cpus, trace)
        stats = latstats.rtos_stats(report)
        label = "rtos bare metal, rtos load" if load else "rtos bare metal, idle"
        if trace:
            label += ", scheduler trace on (trace=1)"
        if cpu1 == CPU1_SWEEP:
            label = f"rtos bare metal (-smp 2), CPU 1 waking every 1.013 ms (cpu1={cpu1}, reference)"
        elif cpu1 is not None and load_cpus == 1:
            label = f"rtos bare metal (-smp 2), CPU 1 busy (cpu1={cpu1}, reference)"
        elif cpu1 is not None:
            label = (
                f"rtos bare metal (-smp {1 + load_cpus}), CPUs 1-{load_cpus} busy "
                f"(cpu1={cpu1} load_cpus={load_cpus}, reference)"
            )
        row = Row(row_id, label, "rtos bare", load, stats, dict(report.histogram.counts), hist, row_id)
        args = ["rtos", "latency"] + ["--icount"] * self.icount
        args += ["--period-us", str(PERIOD_US), "--samples", str(samples)] + ["--load"] * load
        args += ["--cpu1", cpu1] if cpu1 is not None else []
        args += ["--load-cpus", str(load_cpus)] if load_cpus != 1 else []
        args += ["--trace"] if trace else []
        args += ["--histogram", paths.display(hist)]
        boot_args: dict[str, object] = {"period_us": PERIOD_US, "samples": samples, "load": load}
        if cpu1 is not None:
            boot_args["cpu1"] = cpu1
        if load_cpus != 1:
            boot_args["load_cpus"] = load_cpus
        if trace:
            boot_args["trace"] = 1
        bootargs = rtos.format_bootargs(boot_args)
        smp = 1 if cpu1 is None else 1 + load_cpus
        shown = rtos.shown_command("latency", bootargs, self.icount, smp)
        doc = RunDoc(row_id, label, _rtmux_cmd(args), shown)
        out = RunOutput(rows=[row], docs=[doc], summary=_summary(stats))
        if self.opts.quick and self.icount:
            out.records = records(report)
        return out

    def rtos_repeat(self, load: bool, k: int) -> RunOutput:
        kind = "load" if load else "idle"
        report = self._rtos_latency(
            load, SAMPLES_QUICK, self.data / "determinism" / f"rtos-bare-{kind}-{k}.dat"
        )
        return RunOutput(records=records(report), summary=_summary(latstats.rtos_stats(report)))

    def posix_cost(self) -> RunOutput:
        """rtos/posix/bench/cost.c bare: the same work through POSIX and through rt_ calls, one boot."""
        image = POSIX_COST_IMAGE
        if not image.is_file():
            raise SetupError(
                f"{paths.display(image)} not found: run `make posix-bench` (or leave out --no-build)"
            )
        result = rtos.boot(image, "", icount=self.icount, timeout_s=rtos.CTXSW_TIMEOUT_S * 4)
        rtos.check_exit(result, "POSIX cost")
        try:
            costs = posix_cost.parse(result.console)
        except posix_cost.PosixCostFormatError as exc:
            raise GuestFailure(f"POSIX cost: {exc}", result) from exc
        args = ["rtos", "run", "--image", paths.display(image)] + ["--icount"] * self.icount
        shown = _shown_argv(qemu.qemu_command(image, "", icount=self.icount))
        doc = RunDoc("posix-cost", "POSIX layer's cost", f"make posix-bench\n{_rtmux_cmd(args)}", shown)
        summary = ", ".join(f"{c.name} x{c.ratio:.3f}" for c in costs)
        return RunOutput(posix_cost=costs, docs=[doc], summary=summary)

    def hyp_cost(self) -> RunOutput:
        """tests/guests/hypcost/ bare (-smp 2, entered at EL1: no hypervisor; QEMU answers its PSCI) and
        as the Linux partition of HYPCOST_CONFIG: each trapped path's time, bare and under rtmux."""
        if not HYPCOST_IMAGE.is_file():
            raise SetupError(
                f"{paths.display(HYPCOST_IMAGE)} not found: run `make guests` (or leave out --no-build)"
            )
        bare_argv = qemu.qemu_command(HYPCOST_IMAGE, "", icount=self.icount, smp=2)
        bare_argv[bare_argv.index("-M") + 1] = QEMU_VIRT_MACHINE.replace("virtualization=on,", "")
        bare = qemu.run_console(bare_argv, HYPCOST_TIMEOUT_S)

        stop_line = "rtmux: partition linux stopped"
        tail = [""]

        def stop_at_end(text: str) -> qemu.Reply | None:
            # The rtos partition runs on: the run ends a second after the guest's partition has stopped
            # (its SYSTEM_OFF) and the hypervisor has printed its reports. Text comes in pieces as small
            # as a character: the line is looked for in the piece and the end of the one before.
            seen = tail[0] + text
            tail[0] = seen[-len(stop_line) :]
            return qemu.Reply(stop_after_s=1.0) if stop_line in seen else None

        under = qemu.run_console(self.hypcost_argv, HYPCOST_TIMEOUT_S, respond=stop_at_end)
        figures = {}
        for what, result in (("bare", bare), ("under rtmux", under)):
            try:
                figures[what] = hypcost.parse(result.console)
            except hypcost.HypCostFormatError as exc:
                raise GuestFailure(f"hypervisor cost, {what}: {exc}", result) from exc
        costs = hypcost.costs(figures["bare"], figures["under rtmux"])
        docs = [
            RunDoc("hypcost-bare", "hypcost guest bare", "make guests", _shown_argv(bare_argv)),
            RunDoc(
                "hypcost-rtmux",
                "hypcost guest as the Linux partition",
                _rtmux_cmd(["run", paths.display(HYPCOST_CONFIG)] + ["--icount"] * self.icount),
                _shown_argv(self.hypcost_argv),
            ),
        ]
        summary = ", ".join(f"{c.name} +{c.cost_ns:.0f}" for c in costs)
        return RunOutput(hypcost=costs, docs=docs, summary=summary)

    def ctxsw(self) -> RunOutput:
        ctx = rtos.ctxsw(switches=SWITCHES, icount=self.icount, timeout_s=rtos.CTXSW_TIMEOUT_S, echo=None)
        args = ["rtos", "ctxsw"] + ["--icount"] * self.icount + ["--switches", str(SWITCHES)]
        shown = rtos.shown_command("ctxsw", rtos.format_bootargs({"switches": SWITCHES}), self.icount)
        return RunOutput(
            ctxsw=ctx,
            docs=[RunDoc("ctxsw", "rtos context switch", _rtmux_cmd(args), shown)],
            summary=f"{ctx.ns_per_switch:.3f} ns per switch",
        )

    # ------------------------------------------------------------------------------- Linux

    def _linux_timeout(self, plan: linux_script.Plan, linux_cpus: int = 1) -> float:
        """Three times the predicted wall time, plus 5 minutes."""
        return 300.0 + 3.0 * plan_cost(self.icount, plan, "rtmux", linux_cpus=linux_cpus)

    def _write_script(self, run_id: str, plan: linux_script.Plan) -> Path:
        path = self.data / f"{run_id}.sh"
        path.write_text(linux_script.script(plan) + "\n", encoding="utf-8")
        return path

    def _cyclictest_row(
        self,
        row_id: str,
        label: str,
        system_name: str,
        load: bool,
        hist: cyclictest.Histogram,
        run_id: str,
        started: datetime,
        command: str,
    ) -> Row:
        path = self.data / f"{row_id}.dat"
        cyclictest.write_gnuplot(
            path,
            hist,
            title=label,
            started=started,
            mode=qemu.mode_description(self.icount),
            load=load,
            command=command,
        )
        return Row(row_id, label, system_name, load, hist.stats(), dict(hist.counts), path, run_id)

    def _linux_bare_boot(
        self, run_id: str, flavour: str, smp: int, plan: linux_script.Plan, phase: Callable[[str], None]
    ) -> tuple[linux_script.LinuxResult, RunDoc, datetime]:
        """One boot of Debian's `flavour` kernel bare with `smp` CPUs running `plan`."""
        guest = self.guests[flavour]
        script_path = self._write_script(run_id, plan)
        argv = linux.boot_argv(
            guest,
            smp=smp,
            memory=linux.DEFAULT_MEMORY,
            icount=self.icount,
            append="",
            script=script_path.read_text(encoding="utf-8"),
            seed=self.seed,
        )
        started = datetime.now().astimezone()
        name = "Linux std" if flavour == "std" else "Linux PREEMPT_RT"
        result = linux_script.run(
            argv,
            plan,
            what=f"{name} bare (-smp {smp})",
            timeout_s=self._linux_timeout(plan, smp),
            on_phase=phase,
        )
        _check_kernel(result, guest.kernel.release, run_id)
        if result.cpus != smp:
            raise RtmuxError(f"{run_id}: Linux counted {result.cpus} CPUs, not {smp}")
        rtmux_args = ["linux", "run", "--kernel", flavour] + ["--icount"] * self.icount + ["--smp", str(smp)]
        rtmux_args += ["--seed", str(self.seed), "--linux-script", paths.display(script_path)]
        doc = RunDoc(
            run_id,
            f"{name} bare (-smp {smp})",
            _rtmux_cmd(rtmux_args),
            _shown_argv(argv),
            linux_script.script(plan),
        )
        return result, doc, started

    def linux_bare(self, flavour: str, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        run_id = f"linux-{flavour}"
        result, doc, started = self._linux_bare_boot(run_id, flavour, 1, plan, phase)
        name = "Linux std" if flavour == "std" else "Linux PREEMPT_RT"
        assert result.idle is not None and result.loaded is not None
        cmd_idle = cyclictest.command(plan.samples, linux_script.histfile("idle"))
        cmd_loaded = cyclictest.command(plan.samples, linux_script.histfile("loaded"))
        rows = [
            self._cyclictest_row(
                f"{run_id}-idle",
                f"{name} (bare, -smp 1), idle",
                name,
                False,
                result.idle,
                run_id,
                started,
                cmd_idle,
            ),
            self._cyclictest_row(
                f"{run_id}-load",
                f"{name} (bare, -smp 1), Linux load",
                name,
                True,
                result.loaded,
                run_id,
                started,
                cmd_loaded,
            ),
        ]
        if result.control is not None:
            rows.append(
                self._control_row(
                    f"ctl-{run_id}-load",
                    f"control loop (POSIX), {name} bare -smp 1, Linux load",
                    name,
                    True,
                    result.control,
                    run_id,
                    linux_script.control_command(plan.control),
                )
            )
        return RunOutput(rows=rows, linux=result, docs=[doc], summary=_linux_summary(result))

    # ------------------------------------------------------------------- the POSIX control loop

    def _control_row(
        self,
        row_id: str,
        label: str,
        system_name: str,
        load: bool,
        report: control_loop.Report,
        run_id: str,
        command: str,
        el2_entries: int | None = None,
    ) -> Row:
        """A row of the control loop's own figures (its system `system_name`, POSIX control loop: a
        colour of its own in the histogram figure); its data file: the program's histogram and result lines
        (rtmux.formats.control_loop reads them) after a comment saying what ran."""
        path = self.data / f"{row_id}.txt"
        head = f"# {label}: {command} ({qemu.mode_description(self.icount)})\n"
        path.write_text(head + control_loop.render(report), encoding="utf-8")
        return Row(
            row_id,
            label,
            f"{system_name}, POSIX control loop",
            load,
            report.stats(),
            report.us_counts(),
            path,
            run_id,
            el2_entries=el2_entries,
        )

    def control_rtos_bare(self) -> RunOutput:
        run_id = "ctl-rtos-bare"
        n = self.samples
        image = self.control_images[n]
        result = rtos.boot(
            image, "", icount=self.icount, timeout_s=rtos.default_latency_timeout(n, PERIOD_US) * 2
        )
        rtos.check_exit(result, "control loop (rtos bare)")
        status = rtos.app_exit_status(result.console)
        if status != 0:
            raise GuestFailure(f"control loop (rtos bare): main() ended with status {status}", result)
        try:
            report = linux_script.control_report(result.console, n, "control loop (rtos bare)")
        except RtmuxError as exc:
            raise GuestFailure(str(exc), result) from exc
        args = ["rtos", "run", "--image", paths.display(image)] + ["--icount"] * self.icount
        label = "control loop (POSIX), rtos bare metal"
        row = self._control_row(run_id, label, "rtos bare", False, report, run_id, _rtmux_cmd(args))
        shown = _shown_argv(qemu.qemu_command(image, "", icount=self.icount))
        make = shlex.join(self._control_make(n, shown=True))
        doc = RunDoc(run_id, "POSIX control loop, rtos bare metal", f"{make}\n{_rtmux_cmd(args)}", shown)
        return RunOutput(rows=[row], docs=[doc], summary=_summary(row.stats))

    def rtmux_control_loaded(self, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        """The control loop as the rtos partition (its periods start at boot, PARTITION_WARMUP more than
        the other cases', as the latency app's) while Linux runs the load."""
        run_id = "rtmux-ctl-loaded"
        periods = self.samples + PARTITION_WARMUP
        argv, config = self.systems["ctl-loaded"]
        script_path = self._write_script(run_id, plan)
        args = self._run_args(config, script_path)
        title = "rtmux: POSIX control loop as the rtos partition, Linux loaded"
        doc = RunDoc(
            run_id,
            title,
            f"{shlex.join(self._control_make(periods, shown=True))}\n{_rtmux_cmd(args)}",
            _shown_argv(argv),
            linux_script.script(plan),
        )
        result = linux_script.run(
            argv,
            plan,
            what=title,
            timeout_s=self._linux_timeout(plan),
            rtos_control=periods,
            on_phase=phase,
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        assert result.rtos_control is not None
        row = self._control_row(
            "ctl-rtos-rtmux-load",
            "control loop (POSIX), rtos partition, Linux load",
            "rtos in rtmux",
            True,
            result.rtos_control,
            run_id,
            f"./rtmux run {paths.display(config)}",
            el2_entries=result.rtos_el2,
        )
        return RunOutput(
            rows=[row],
            linux=result,
            docs=[doc],
            summary=f"{_summary(row.stats)}; rtos CPU EL2 entries {result.rtos_el2}",
        )

    # ------------------------------------------------------------------------ Linux's files

    def rtmux_files(self, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        """rtos/linuxsvc/bench/remote.c as the rtos partition (it waits for Linux's files, then measures),
        Linux's script preparing its files, waiting for it and timing a local dd (FilesPlan)."""
        run_id = "rtmux-files"
        n = self.samples
        image = files_image(n)
        argv, config = self.systems["files"]
        script_path = self._write_script(run_id, plan)
        args = self._run_args(config, script_path)
        title = "rtmux: Linux's files from an rtos thread (rtos/linuxsvc/bench/remote.c), then Linux's dd"
        doc = RunDoc(
            run_id,
            title,
            f"make {paths.display(image)}\n{_rtmux_cmd(args)}",
            _shown_argv(argv),
            linux_script.script(plan),
        )
        result = linux_script.run(
            argv,
            plan,
            what=title,
            timeout_s=self._linux_timeout(plan),
            rtos_files=n,
            on_phase=phase,
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        assert result.files is not None
        files = result.files
        # the data file of both rows: the program's result lines, after a comment saying what ran
        rtos_lines = linux_script.parse_console(result.console).rtos.splitlines()
        what = f"{paths.display(image)} in {paths.display(config)} ({qemu.mode_description(self.icount)})"
        text = "\n".join(line for line in rtos_lines if line.startswith("LSB|")) + "\n"
        rows = []
        for row_id, kind, label, load in (
            (
                "files-rtos-rtmux-alone",
                "alone",
                "rtos partition, POSIX thread alone (Linux's files case)",
                False,
            ),
            (
                "files-rtos-rtmux-linux-load",
                "linux_busy",
                "rtos partition, POSIX thread alone beside a busy Linux (no remote I/O)",
                True,
            ),
            (
                "files-rtos-rtmux-io-load",
                "remote_io",
                "rtos partition, POSIX thread beside remote file reads",
                True,
            ),
        ):
            lat = files.rtos.latency[kind]
            path = self.data / f"{row_id}.txt"
            path.write_text(f"# {label}: {what}\n{text}", encoding="utf-8")
            system_name = "rtos in rtmux, POSIX thread"
            row = Row(row_id, label, system_name, load, lat.stats(), dict(lat.cells), path, run_id)
            row.el2_entries = result.rtos_el2
            rows.append(row)
        p, w = files.rtos.pread, files.rtos.write
        return RunOutput(
            rows=rows,
            linux=result,
            docs=[doc],
            summary=f"pread64 avg {p.avg_ns / 1000:.1f} us (max {p.max_ns / 1000:.1f}); write "
            f"{w.mbps:.1f} MB/s (Linux's dd {files.dd.mbps:.1f}); latency max alone "
            f"{rows[0].stats.max_us:.3f} us, beside a busy Linux {rows[1].stats.max_us:.3f} us, beside "
            f"remote I/O {rows[2].stats.max_us:.3f} us; "
            f"rtos CPU EL2 entries {result.rtos_el2}",
        )

    def _system_doc(
        self, run_id: str, title: str, name: str, rtos_args: str, plan: linux_script.Plan
    ) -> RunDoc:
        argv, config = self.systems[name]
        script_path = self._write_script(run_id, plan)
        args = self._run_args(
            config, script_path, ["--rtos-app", "latency", "--bootargs", f"rtos={rtos_args}"]
        )
        return RunDoc(
            run_id,
            title,
            _rtmux_cmd(args),
            _shown_argv(argv),
            linux_script.script(plan),
        )

    def _rtos_partition_row(
        self,
        row_id: str,
        label: str,
        load: bool,
        report: latmus.LatencyReport,
        run_id: str,
        started: datetime,
        rtos_args: str,
        el2_entries: int | None,
    ) -> Row:
        path = self.data / f"{row_id}.dat"
        latmus.write_histogram(
            path,
            report,
            started=started,
            period_us=PERIOD_US,
            mode=qemu.mode_description(self.icount),
            load=load,
            command=f"./rtmux run --rtos-app latency --bootargs rtos='{rtos_args}'",
        )
        stats = latstats.rtos_stats(report)
        return Row(
            row_id,
            label,
            "rtos in rtmux",
            load,
            stats,
            dict(report.histogram.counts),
            path,
            run_id,
            el2_entries=el2_entries,
        )

    def _partition_run(
        self,
        run_id: str,
        title: str,
        system_name: str,
        rtos_samples: int,
        rtos_args: str,
        plan: linux_script.Plan,
        phase: Callable[[str], None],
        linux_cpus: int = 1,
    ) -> tuple[RunDoc, datetime, linux_script.LinuxResult]:
        """One boot of the system `system_name` whose rtos partition measures `rtos_samples` samples."""
        doc = self._system_doc(run_id, title, system_name, rtos_args, plan)
        started = datetime.now().astimezone()
        result = linux_script.run(
            self.systems[system_name][0],
            plan,
            what=title,
            timeout_s=self._linux_timeout(plan, linux_cpus),
            rtos_samples=rtos_samples,
            on_phase=phase,
        )
        return doc, started, result

    def rtmux_rtos_idle(self, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        run_id = "rtmux-rtos-idle"
        rtos_samples = self.samples + PARTITION_WARMUP
        rtos_args = f"period_us={PERIOD_US} samples={rtos_samples}"
        doc, started, result = self._partition_run(
            run_id, "rtmux: rtos partition, Linux idle", "rtos-idle", rtos_samples, rtos_args, plan, phase
        )
        assert result.rtos is not None
        row = self._rtos_partition_row(
            "rtos-rtmux-idle",
            "rtos in rtmux partition, Linux idle",
            False,
            result.rtos,
            run_id,
            started,
            rtos_args,
            result.rtos_el2,
        )
        return RunOutput(
            rows=[row],
            linux=result,
            docs=[doc],
            summary=f"{_summary(row.stats)}; rtos CPU EL2 entries {result.rtos_el2}",
        )

    def rtmux_loaded(self, plan: linux_script.Plan, phase: Callable[[str], None], gic: int = 3) -> RunOutput:
        """The rtos partition and Linux's cyclictest, Linux loaded: on GICv3 (the default system), or on
        GICv2 (configs/qemu-virt-gicv2.toml: the rows rtos-rtmux-gicv2-load and linux-rtmux-gicv2-load)."""
        v2 = "gicv2-" if gic == 2 else ""
        on = ", GICv2" if gic == 2 else ""
        run_id = f"rtmux-{v2}loaded"
        rtos_samples = self.samples + PARTITION_WARMUP
        rtos_args = f"period_us={PERIOD_US} samples={rtos_samples}"
        title = f"rtmux{' on GICv2' if gic == 2 else ''}: rtos partition and Linux cyclictest, Linux loaded"
        doc, started, result = self._partition_run(
            run_id, title, f"{v2}loaded" if gic == 2 else "rtos-loaded", rtos_samples, rtos_args, plan, phase
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        assert result.rtos is not None and result.loaded is not None
        rows = [
            self._rtos_partition_row(
                f"rtos-rtmux-{v2}load",
                f"rtos in rtmux partition, Linux load{on}",
                True,
                result.rtos,
                run_id,
                started,
                rtos_args,
                result.rtos_el2,
            ),
            self._cyclictest_row(
                f"linux-rtmux-{v2}load",
                f"Linux std under rtmux, Linux load{on}",
                "Linux under rtmux",
                True,
                result.loaded,
                run_id,
                started,
                cyclictest.command(plan.samples, linux_script.histfile("loaded")),
            ),
        ]
        return RunOutput(
            rows=rows,
            linux=result,
            docs=[doc],
            summary=f"rtos {_summary(rows[0].stats)}, EL2 entries {result.rtos_el2}; "
            f"Linux {_summary(rows[1].stats)}",
        )

    def rtmux_vbus(self, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        run_id = "rtmux-vbus"
        rtos_samples = self.vbus_rtos_samples()
        rtos_args = self.vbus_rtos_args()
        title = "rtmux: V-Bus round trips and throughput, then V-Bus traffic"
        doc, started, result = self._partition_run(
            run_id, title, "vbus", rtos_samples, rtos_args, plan, phase
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        assert result.rtos is not None and result.vbus is not None
        window_s = rtos_samples * PERIOD_US / 1e6
        if result.vbus.end_s > window_s:
            raise RtmuxError(
                f"{run_id}: the V-Bus measurements ended at {result.vbus.end_s:.2f} s of Linux's uptime, "
                f"after the rtos partition's {window_s:.2f} s of sampling "
                "(rtmux.bench.model.vbus_extra_samples is too small)"
            )
        row = self._rtos_partition_row(
            "rtos-rtmux-vbus",
            "rtos in rtmux partition, V-Bus traffic",
            False,
            result.rtos,
            run_id,
            started,
            rtos_args,
            result.rtos_el2,
        )
        v = result.vbus
        if v.rtt_hist is not None and v.pipe_rtt_hist is not None:  # the distributions the figure draws
            (self.data / "vbus-rtt.dat").write_text(
                rtmux_ping.render_hists({"vbus": v.rtt_hist, "pipe": v.pipe_rtt_hist}), encoding="utf-8"
            )
        return RunOutput(
            rows=[row],
            linux=result,
            docs=[doc],
            summary=f"V-Bus rtt avg {v.rtt.avg_us:.1f} us (pipe {v.pipe_rtt.avg_us:.1f}), "
            f"{v.bulk.tx_mbps:.1f}/{v.bulk.rx_mbps:.1f} MB/s (pipe {v.pipe_bulk.tx_mbps:.1f}); "
            f"rtos {_summary(row.stats)}, EL2 entries {result.rtos_el2}",
        )

    def linux_bare_smp(self, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        """The multi-CPU case's reference: the standard kernel bare on as many CPUs, boot and hackbench."""
        result, doc, _ = self._linux_bare_boot("linux-std-smp3", "std", SMP_LINUX_CPUS, plan, phase)
        return RunOutput(linux=result, docs=[doc], summary=_linux_summary(result))

    def rtmux_smp(self, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        """Linux on CPUs 1-3 (configs/qemu-virt-4cpu.toml): boot and hackbench on its three CPUs, then the
        load while the rtos partition on CPU 0 measures."""
        run_id = "rtmux-smp"
        rtos_samples = self.smp_rtos_samples()
        rtos_args = self.smp_rtos_args()
        title = "rtmux -smp 4: Linux on CPUs 1-3, hackbench, then loaded"
        doc, started, result = self._partition_run(
            run_id, title, "smp", rtos_samples, rtos_args, plan, phase, linux_cpus=SMP_LINUX_CPUS
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        if result.cpus != SMP_LINUX_CPUS:
            raise RtmuxError(f"{run_id}: Linux counted {result.cpus} CPUs, not {SMP_LINUX_CPUS}")
        assert result.rtos is not None and result.load_start_s is not None
        under_load_s = rtos_samples * PERIOD_US / 1e6 - result.load_start_s
        if under_load_s < self.samples * PERIOD_US / 1e6:
            raise RtmuxError(
                f"{run_id}: the load started at {result.load_start_s:.2f} s of Linux's uptime, leaving "
                f"{under_load_s:.2f} s of the rtos partition's sampling under it, less than "
                f"{self.samples} samples (rtmux.bench.model.smp_extra_samples is too small)"
            )
        row = self._rtos_partition_row(
            "rtos-rtmux-smp-load",
            f"rtos in rtmux partition, {SMP_LINUX_CPUS}-CPU Linux load (-smp 4)",
            True,
            result.rtos,
            run_id,
            started,
            rtos_args,
            result.rtos_el2,
        )
        return RunOutput(
            rows=[row],
            linux=result,
            docs=[doc],
            summary=f"{_linux_summary(result)}; rtos {_summary(row.stats)}, EL2 entries {result.rtos_el2}",
        )

    def rtmux_shared(self, case: str, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        """Shared-core mode: the rtos partition measures on the CPU it shares with Linux (idle at its
        shell, or loaded); the hypervisor's books give the world switches' cost."""
        run_id = f"rtmux-shared-{case}"
        rtos_samples = self.samples + PARTITION_WARMUP
        rtos_args = f"period_us={PERIOD_US} samples={rtos_samples}"
        title = f"rtmux -smp 1: the rtos and Linux sharing CPU 0, Linux {case}"
        doc, started, result = self._partition_run(
            run_id, title, f"shared-{case}", rtos_samples, rtos_args, plan, phase
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        if result.share is None:
            raise RtmuxError(f"{run_id}: no `rtmux: share` report of the shared CPU")
        assert result.rtos is not None
        load = case == "loaded"
        row = self._rtos_partition_row(
            f"rtos-shared-{'load' if load else 'idle'}",
            f"rtos in rtmux, CPU shared with Linux (-smp 1), Linux {'load' if load else 'idle'}",
            load,
            result.rtos,
            run_id,
            started,
            rtos_args,
            None,  # it enters EL2 at every idle WFI by design: its interrupts are what counts (targets)
        )
        c, e = result.share.counts, result.rtos_el2_by_cause
        return RunOutput(
            rows=[row],
            linux=result,
            docs=[doc],
            summary=f"rtos {_summary(row.stats)}; switches to Linux {c['switch_ns_to_linux']} ns, "
            f"to the rtos {c['switch_ns_to_rtos']} ns; rtos EL2 entries: irq {e.get('irq')}, "
            f"wfi {e.get('wfi')}",
        )

    def rtmux_shared_hackbench(self, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        run_id = "rtmux-shared-hackbench"
        title = "rtmux -smp 1: Linux boot and hackbench on the CPU it shares with an idle rtos"
        doc = self._system_doc(run_id, title, "shared-hackbench", SHARED_IDLE_RTOS_ARGS, plan)
        result = linux_script.run(
            self.systems["shared-hackbench"][0],
            plan,
            what=title,
            timeout_s=self._linux_timeout(plan),
            on_phase=phase,
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        return RunOutput(linux=result, docs=[doc], summary=_linux_summary(result))

    def rtmux_linux_idle(self, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        run_id = "rtmux-linux"
        rtos_args = f"period_us={PERIOD_US} samples=0"
        doc = self._system_doc(
            run_id, "rtmux: Linux boot, hackbench and cyclictest, Linux idle", "linux", rtos_args, plan
        )
        started = datetime.now().astimezone()
        result = linux_script.run(
            self.systems["linux"][0],
            plan,
            what="rtmux, Linux cyclictest",
            timeout_s=self._linux_timeout(plan),
            on_phase=phase,
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        assert result.idle is not None
        row = self._cyclictest_row(
            "linux-rtmux-idle",
            "Linux std under rtmux, idle",
            "Linux under rtmux",
            False,
            result.idle,
            run_id,
            started,
            cyclictest.command(plan.samples, linux_script.histfile("idle")),
        )
        return RunOutput(rows=[row], linux=result, docs=[doc], summary=_linux_summary(result))

    def rtmux_linux_cpu0(self, plan: linux_script.Plan, phase: Callable[[str], None]) -> RunOutput:
        """The icount round-robin check (BENCHMARKS.md, "The rtos beside a busy vCPU"): the loaded Linux
        case under rtmux with the measured work moved to CPU 0 (the partitions' CPUs exchanged, the rtos
        sampling on CPU 1)."""
        run_id = "rtmux-linux-cpu0"
        rtos_args = f"period_us={PERIOD_US} samples=0"
        argv, config = self.systems["linux-cpu0"]
        script_path = self._write_script(run_id, plan)
        args = self._run_args(
            config, script_path, ["--rtos-app", "latency", "--bootargs", f"rtos={rtos_args}"]
        )
        doc = RunDoc(
            run_id,
            "rtmux, artifact check: Linux partition on CPU 0 (qemu-virt.toml with the CPUs exchanged)",
            _rtmux_cmd(args),
            _shown_argv(argv),
            linux_script.script(plan),
        )
        started = datetime.now().astimezone()
        result = linux_script.run(
            argv, plan, what="rtmux, Linux on CPU 0", timeout_s=self._linux_timeout(plan), on_phase=phase
        )
        _check_kernel(result, self.guests["std"].kernel.release, run_id)
        assert result.loaded is not None
        row = self._cyclictest_row(
            "linux-rtmux0-load",
            "Linux std under rtmux on CPU 0 (artifact check), Linux load",
            "Linux under rtmux on CPU 0",
            True,
            result.loaded,
            run_id,
            started,
            cyclictest.command(plan.samples, linux_script.histfile("loaded")),
        )
        return RunOutput(rows=[row], linux=result, docs=[doc], summary=_summary(row.stats))


def _summary(stats: latstats.LatencyStats) -> str:
    f = latstats.fmt_value
    return (
        f"min {f(stats, stats.min_us)} avg {f(stats, stats.avg_us, average=True)} "
        f"p99.9 {latstats.fmt_percentile(stats, stats.p999_us)} max {f(stats, stats.max_us)} us"
    )


def _linux_summary(r: linux_script.LinuxResult) -> str:
    parts = [f"{r.kernel}, shell at {r.boot_s:.2f} s"]
    if r.hackbench_s is not None:
        parts.append(f"hackbench {r.hackbench_s:.3f} s")
    for name, hist in (("idle", r.idle), ("loaded", r.loaded)):
        if hist is not None:
            parts.append(f"{name} {_summary(hist.stats())}")
    return "; ".join(parts)


def _check_kernel(result: linux_script.LinuxResult, release: str, what: str) -> None:
    if result.kernel != release:
        raise RtmuxError(f"{what}: Linux reports `uname -r` {result.kernel!r}, {release!r} was booted")
