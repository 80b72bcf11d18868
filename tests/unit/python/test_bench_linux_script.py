"""The benchmark's Linux scripts and the reading of their consoles (rtmux.bench.linux_script)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rtmux.bench import linux_script
from rtmux.errors import RtmuxError

HIST = """\
# Histogram
000004 000900
000005 000099
000017 000001
# Total: 000001000
# Min Latencies: 00004
# Avg Latencies: 00004
# Max Latencies: 00017
# Histogram Overflows: 00000
# Histogram Overflow at cycle number:
# Thread 0:
"""


def test_plan_phases() -> None:
    full = linux_script.Plan(1000, hackbench=True, idle=True, load=True, loaded=True)
    assert full.phases == ["hackbench", "idle", "loaded", "dump"]
    assert linux_script.Plan(1000, load=True, loaded=True, hold_until_s=2.8).phases == [
        "loaded",
        "hold",
        "dump",
    ]
    with pytest.raises(ValueError):
        linux_script.Plan(1000, loaded=True)


def test_script_announces_every_phase_in_order() -> None:
    for plan in (
        linux_script.Plan(1000, hackbench=True, idle=True, load=True, loaded=True, hackbench_loops=100),
        linux_script.Plan(2000, hold_until_s=3.8),
        linux_script.Plan(2000, load=True, loaded=True, hold_until_s=3.8),
    ):
        text = linux_script.script(plan)
        phases = [line.split()[2] for line in text.splitlines() if line.startswith("say phase ")]
        assert phases == plan.phases
        assert text.splitlines()[-1] == "say done 1"
        # The console's echo of the script must never look like a report line.
        assert "@bench" not in text


def test_script_contents() -> None:
    text = linux_script.script(
        linux_script.Plan(1000, hackbench=True, idle=True, load=True, loaded=True, hackbench_loops=100)
    )
    assert "hackbench -g 2 -f 10 -l 100 | sed -n 's/^Time: //p'" in text
    assert "cyclictest -m -p98 -i1000 -a 0 -t 1 -l 1000 -q -h 20000 --histfile=/tmp/rtmux-idle.hist" in text
    assert text.index("rtmux-idle.hist >/dev/null") < text.index("pids=") < text.index("rtmux-loaded.hist >")
    assert text.index(linux_script.STOP_LOAD) < text.index("say hist idle")
    held = linux_script.script(linux_script.Plan(1000, load=True, hold_until_s=2.8))
    assert "awk -v t=2.80 '{exit !($1 < t)}' /proc/uptime; do sleep 0.1; done" in held
    assert "cyclictest" not in held


ENTRIES = "rtmux: el2-entries cpu={cpu} partition={part} total={total} dabt=3 iabt=0 hvc={hvc} smc=0 sysreg=0"


def report(total: int, hvc: int, cpu: int = 0, part: str = "rtos") -> str:
    return ENTRIES.format(cpu=cpu, part=part, total=total, hvc=hvc)


# What the hypervisor prints in a measurement-mode run: its boot report, then the rtos partition's stop.
BOOT = [report(3, 0), report(900, 6, cpu=1, part="linux")]
STOP = ["rtmux: partition rtos stopped: powered off (PSCI)", report(4, 1), report(30000, 6, 1, "linux")]


def console(tagged: bool, *, hist: str = HIST, extra: str = "", stop: list[str] | None = None) -> str:
    linux = [
        '> say kernel "$(uname -r)"',
        "@bench kernel=6.1.0-56-arm64",
        "@bench cpus=1",
        "@bench uptime=1.01",
        "@bench load_start=1.05",
        "@bench phase=loaded",
        "@bench loaded_status=0",
        "@bench load_end=3.06",
        "@bench hist=loaded",
        *hist.splitlines(),
        "[   12.345678] a kernel warning in the middle",
        "@bench end=loaded",
        "@bench done=1",
    ]
    rtos = [
        "RTT|  00:00:01  (rtos periodic thread, 1000 us period, priority 255, load off)",
        "RTH|----lat min|----lat avg|----lat max|-overrun|---msw|---lat best|--lat worst",
        "RTD|      0.400|      0.450|      0.608|       0|     0|      0.400|      0.608",
        "---|-----------|-----------|-----------|--------|------|-------------------------",
        "RTS|      0.400|      0.453|      0.608|       0|     0|    00:00:02/00:00:02",
        "HSH| 1 us cells, 2500 samples, 1000 cells",
        "HSD| 0 2500",
        "HSE|",
    ]
    if not tagged:
        return "\n".join(linux) + extra
    lines = (
        BOOT
        + [f"[linux] {x}" for x in linux[:5]]
        + [f"[rtos] {x}" for x in rtos]
        + (STOP if stop is None else stop)
        + [f"[linux] {x}" for x in linux[5:]]
    )
    return "\n".join(lines) + extra


def test_parse_console_tagged_and_bare() -> None:
    for tagged in (False, True):
        found = linux_script.parse_console(console(tagged))
        assert found.values["kernel"] == "6.1.0-56-arm64"
        assert found.values["load_start"] == "1.05"
        assert "phase" not in found.values
        assert found.histograms["loaded"] == HIST.rstrip("\n"), "the kernel message is left out"
        assert ("RTS|" in found.rtos) is tagged


def test_parse_console_refuses_an_unmatched_end() -> None:
    with pytest.raises(RtmuxError, match="without its"):
        linux_script.parse_console("@bench hist=idle\n@bench end=loaded\n")


def test_read_results() -> None:
    plan = linux_script.Plan(1000, load=True, loaded=True, hold_until_s=3.0)
    r = linux_script.read_results(console(True), plan, what="rtmux", rtos_samples=2500, wall_s=12.0)
    assert (r.kernel, r.cpus, r.boot_s, r.load_start_s, r.load_end_s, r.wall_s) == (
        "6.1.0-56-arm64", 1, 1.01, 1.05, 3.06, 12.0,
    )  # fmt: skip
    assert r.idle is None and r.hackbench_s is None
    assert r.loaded is not None and r.loaded.max_us == 17
    assert r.rtos is not None and r.rtos.summary.lat_max == 0.608
    assert r.rtos_el2 == 0  # 4 at the stop = 3 at boot + the SYSTEM_OFF call


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        (STOP, 0),
        ([STOP[0], report(6, 1), STOP[2]], 2),  # two entries while it measured
        ([STOP[0], report(6, 2)], 2),  # one of them a hypervisor call
        # later reports (at Linux's power-off) do not count: the first one after the stop does
        ([*STOP, "rtmux: partition linux stopped: powered off (PSCI)", report(4, 1)], 0),
    ],
)
def test_rtos_el2_entries(stop: list[str], expected: int) -> None:
    text = console(True, stop=stop)
    assert linux_script.rtos_el2_entries(text, what="x") == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("\n".join(BOOT), "no `rtmux: partition rtos stopped` line"),
        ("\n".join(STOP), "reports for partition rtos at boot and at its stop are missing"),
        ("\n".join(BOOT + STOP[:1]), "missing"),
        ("\n".join([*BOOT, STOP[0], report(5, 0)]), "without a PSCI call counted"),
        ("\n".join([*BOOT, STOP[0], report(4, 1, cpu=1)]), "on CPU 0, then 1"),
    ],
)
def test_rtos_el2_entries_refuses(text: str, message: str) -> None:
    with pytest.raises(RtmuxError, match=message):
        linux_script.rtos_el2_entries(text, what="x")


@pytest.mark.parametrize(
    ("text", "kwargs", "message"),
    [
        (console(False).replace("@bench done=1", ""), {}, "did not finish"),
        (console(False).replace("loaded_status=0", "loaded_status=1"), {}, "exited with status 1"),
        (console(False).replace("000005 000099", "000005 000098"), {}, "add up to 999"),
        (console(False).replace("@bench cpus=1\n", ""), {}, "cpus"),
        (console(False), {"rtos_samples": 2500}, "rtos partition: malformed"),
        (console(True), {"rtos_samples": 1000}, "2500 samples, 1000 were requested"),
    ],
)
def test_read_results_refuses(text: str, kwargs: dict[str, int], message: str) -> None:
    plan = linux_script.Plan(1000, load=True, loaded=True)
    with pytest.raises(RtmuxError, match=message):
        linux_script.read_results(text, plan, what="x", rtos_samples=kwargs.get("rtos_samples"))


def test_read_results_needs_the_idle_histogram_it_planned() -> None:
    plan = linux_script.Plan(1000, idle=True, load=True, loaded=True)
    text = console(False).replace("@bench loaded_status=0", "@bench loaded_status=0\n@bench idle_status=0")
    with pytest.raises(RtmuxError, match="no dump of the idle"):
        linux_script.read_results(text, plan, what="x", rtos_samples=None)


def test_phase_sink() -> None:
    seen: list[str] = []
    sink = linux_script._PhaseSink(seen.append)
    sink.write("[linux] @bench phase=idle\n@bench pha")
    sink.write("se=loaded\n> say phase hold\n")
    assert seen == ["idle", "loaded"]


CONFIG = """\
[board]
cpus = 2                # -smp 2

[[partition]]
name = "rtos"
cpus = [0]              # CPU 0
memory = "16M"

[[partition]]
name = "linux"
cpus = [ 1 ]
bootargs = "cpus = [7]"

[[partition.device]]
name = "net"
"""


def test_swap_cpus() -> None:
    out = linux_script.swap_cpus(CONFIG)
    assert "cpus = [1]  # exchanged for the benchmark's artifact check\nmemory" in out
    assert "cpus = [0]  # exchanged for the benchmark's artifact check\nbootargs" in out
    assert "cpus = 2                # -smp 2" in out, "the board's CPU count stays"
    assert out.count("\n") == CONFIG.count("\n")


def test_swap_cpus_refuses_other_shapes() -> None:
    with pytest.raises(RtmuxError, match="found 1"):
        linux_script.swap_cpus(CONFIG.replace("cpus = [ 1 ]", "cpus = [1, 2]"))


def test_without_devices() -> None:
    out = linux_script.without_devices(CONFIG + '\n[[partition]]\nname = "third"\n')
    assert 'name = "net"' not in out and "[[partition.device]]\n" not in out
    assert "# [[partition.device]] left out by the benchmark" in out
    assert out.endswith(
        'bootargs = "cpus = [7]"\n\n# [[partition.device]] left out by the benchmark '
        '(deterministic runs)\n[[partition]]\nname = "third"\n'
    )


def test_without_devices_on_the_default_configuration() -> None:
    from rtmux import config
    from rtmux.run import system

    def devices(text: str) -> dict[str, list[str]]:
        return {p.name: [d.name for d in p.devices] for p in config.loads(text).partitions}

    text = system.DEFAULT_CONFIG.read_text()
    assert devices(text)["linux"] == ["net"]
    # the rtos's redistributor frame is not a [[partition.device]]: it stays
    assert devices(linux_script.without_devices(text)) == {"rtos": ["gicr.cpu0"], "linux": []}


def test_swap_cpus_on_the_default_configuration() -> None:
    from rtmux import config
    from rtmux.run import system

    swapped = config.loads(linux_script.swap_cpus(system.DEFAULT_CONFIG.read_text()))
    assert {p.kind: p.cpus for p in swapped.partitions} == {"rtos": (1,), "linux": (0,)}


VBUS = linux_script.VbusPlan(round_trips=1000, bulk_s=1)
VBUS_LINES = [
    "@bench phase=vbus",
    "@bench vbus_rtt_status=0",
    "@bench vbus_rtt=rtt_us min=18.5 avg=18.9 p99=21.4 max=91.6 n=1000",
    "@bench vbus_rtt_hist=100 185:600 190:399 916:1",
    "@bench pipe_rtt_status=0",
    "@bench pipe_rtt=rtt_us min=17.5 avg=18.1 p99=21.1 max=64.3 n=1000",
    "@bench pipe_rtt_hist=100 175:1000",
    "@bench vbus_bulk_status=0",
    "@bench vbus_bulk=throughput_MBps tx=29.04 rx=29.03",
    "@bench pipe_bulk_status=0",
    "@bench pipe_bulk=throughput_MBps tx=31.29 rx=31.27",
    "@bench vbus_end=3.40",
]


def vbus_console(lines: list[str]) -> str:
    head = ["@bench kernel=6.1.0-56-arm64", "@bench cpus=1", "@bench uptime=1.01"]
    return "\n".join([*head, *lines, "@bench phase=hold", "@bench phase=dump", "@bench done=1"])


def test_vbus_plan_script() -> None:
    plan = linux_script.Plan(1000, vbus=VBUS, hold_until_s=5.8)
    assert plan.phases == ["vbus", "hold", "dump"]
    text = linux_script.script(plan)
    for command in VBUS.commands().values():
        assert f"out=$({command})" in text
    assert (
        "rtmux-ping --pipe --hist -n 1000 -s 64 -T 30" in text and "rtmux-ping echo --bulk -t 1 -T 30" in text
    )
    assert 'say pipe_rtt_hist "$(echo "$out" | sed -n \'s/^rtt_hist_ns //p\')"' in text
    # the traffic starts after the measurements, runs through the hold, and is stopped before the dump
    assert text.index("say vbus_end") < text.index(linux_script.VBUS_TRAFFIC) < text.index("say phase hold")
    assert text.index("kill $traffic") < text.index("say phase dump")
    with pytest.raises(ValueError):
        linux_script.Plan(1000, load=True, vbus=VBUS)


def test_read_results_vbus() -> None:
    plan = linux_script.Plan(1000, vbus=VBUS, hold_until_s=5.8)
    r = linux_script.read_results(vbus_console(VBUS_LINES), plan, what="v", rtos_samples=None)
    assert r.vbus is not None
    assert (r.vbus.rtt.avg_us, r.vbus.pipe_rtt.avg_us, r.vbus.rtt.n) == (18.9, 18.1, 1000)
    assert (r.vbus.bulk.tx_mbps, r.vbus.pipe_bulk.rx_mbps, r.vbus.end_s) == (29.04, 31.27, 3.40)
    assert r.vbus.rtt_hist is not None and r.vbus.rtt_hist.counts == {185: 600, 190: 399, 916: 1}
    assert r.vbus.pipe_rtt_hist is not None and r.vbus.pipe_rtt_hist.cell_ns == 100


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("@bench vbus_bulk_status=0", "@bench vbus_bulk_status=1"),
            "`rtmux-ping echo --bulk -t 1 -T 30` exited",
        ),
        (("n=1000", "n=999"), "vbus_rtt: 999 round trips (1000 in its histogram), 1000 were asked"),
        (("190:399", "190:398"), "vbus_rtt: 1000 round trips (999 in its histogram), 1000 were asked"),
        (("185:600 190", "190:600 185"), "inconsistent round-trip histogram"),
        (("@bench pipe_rtt_hist=100 175:1000", "@bench pipe_rtt_hist="), "not an `rtt_hist_ns"),
        (("tx=31.29 rx=31.27", "tx=31.29"), "not a `throughput_MBps"),
        (("@bench vbus_end=3.40", ""), "vbus_end"),
    ],
)
def test_read_results_vbus_refuses(change: tuple[str, str], message: str) -> None:
    old, new = change
    lines = [line.replace(old, new, 1) for line in VBUS_LINES]
    plan = linux_script.Plan(1000, vbus=VBUS, hold_until_s=5.8)
    with pytest.raises(RtmuxError, match=re.escape(message)):
        linux_script.read_results(vbus_console(lines), plan, what="v", rtos_samples=None)


def test_rtos_el2_counts_by_cause() -> None:
    """A shared CPU's rtos: entries at every idle WFI, none for its interrupts; the stop's call left out."""
    line = (
        "rtmux: el2-entries cpu=0 partition=rtos total={} dabt=3 iabt=0 hvc={} smc=0 sysreg=0 other=0 irq=0 "
    )
    line += "serror=0 el2irq=0 wfi={}"
    text = "\n".join(
        [
            line.format(5, 0, 2),
            "rtmux: partition rtos stopped: powered off (PSCI)",
            line.format(1206, 1, 1202),
        ]
    )
    counts = linux_script.rtos_el2_counts(text, what="x")
    assert counts == {
        "total": 1200, "dabt": 0, "iabt": 0, "hvc": 0, "smc": 0, "sysreg": 0, "other": 0, "irq": 0,
        "serror": 0, "el2irq": 0, "wfi": 1200,
    }  # fmt: skip
    assert linux_script.rtos_el2_entries(text, what="x") == 1200


# The POSIX control loop (examples/control-loop): run by Linux after its cyclictests, or as the rtos
# partition.
CTL_LINES = [
    "CTH| 5000 990",
    "CTH| 9100 10",
    "CTL| periods 1000 period_us 1000 samples 1000 min_us 5.040 avg_us 5.100 p99_us 5.100 p999_us 9.184 "
    "max_us 9.184 overruns 0 dropped 0 prio 98 cell_ns 100",
]


def test_control_plan_script() -> None:
    plan = linux_script.Plan(1000, idle=True, load=True, loaded=True, control=1000)
    assert plan.phases == ["idle", "loaded", "control", "dump"]
    text = linux_script.script(plan)
    run = f"control-loop 1000 >{linux_script.CONTROL_OUT}"
    # after the loaded cyclictest, before the load stops; its output dumped with the histograms
    assert text.index("rtmux-loaded.hist >") < text.index(run) < text.index(linux_script.STOP_LOAD)
    assert "say control_status $?" in text
    assert f"say hist control; grep '^CT[HL]|' {linux_script.CONTROL_OUT}; say end control" in text
    assert "control-loop" not in linux_script.script(linux_script.Plan(1000, idle=True))


def control_console(status: str = "0", lines: list[str] = CTL_LINES) -> str:
    return console(False).replace(
        "@bench done=1",
        f"@bench phase=control\n@bench control_status={status}\n@bench hist=control\n"
        + "\n".join(lines)
        + "\n@bench end=control\n@bench done=1",
    )


def test_read_results_control() -> None:
    plan = linux_script.Plan(1000, load=True, loaded=True, control=1000)
    r = linux_script.read_results(control_console(), plan, what="x", rtos_samples=None)
    assert r.control is not None and (r.control.samples, r.control.max_ns, r.control.prio) == (1000, 9184, 98)
    assert r.rtos_control is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (control_console(status="1"), "`control-loop 1000` exited with status 1"),
        (console(False), "exited with status None"),
        (control_console(lines=CTL_LINES[:2]), "Linux: the control loop's output: no `CTL|`"),
        (control_console(lines=[x.replace(" prio 98", " prio 0") for x in CTL_LINES]), "without SCHED_FIFO"),
        (
            control_console(lines=[x.replace("periods 1000", "periods 2000") for x in CTL_LINES]),
            "1000 samples of 2000 periods, 1000 were asked",
        ),
    ],
)
def test_read_results_control_refuses(text: str, message: str) -> None:
    plan = linux_script.Plan(1000, load=True, loaded=True, control=1000)
    with pytest.raises(RtmuxError, match=message):
        linux_script.read_results(text, plan, what="x", rtos_samples=None)


def test_read_results_rtos_partition_control_loop() -> None:
    """The rtos partition ran the control loop (its lines tagged [rtos]): its report and its CPU's EL2
    entries while it ran."""
    lines = BOOT + [f"[rtos] {x}" for x in ["rtos: rtmux rtos 0.1.0", *CTL_LINES, "rtos: exit(0)"]] + STOP
    text = "\n".join(lines) + "\n" + console(False)
    plan = linux_script.Plan(1000, load=True, loaded=True)
    r = linux_script.read_results(text, plan, what="x", rtos_samples=None, rtos_control=1000)
    assert r.rtos_control is not None and r.rtos_control.samples == 1000
    assert r.rtos_el2 == 0 and r.rtos is None
    with pytest.raises(RtmuxError, match="rtos partition: the control loop reports 1000 samples"):
        linux_script.read_results(text, plan, what="x", rtos_samples=None, rtos_control=2500)


def test_system_argv_with_an_sdk_image_refuses_boot_arguments(tmp_path: Path) -> None:
    with pytest.raises(RtmuxError, match="without boot arguments"):
        linux_script.system_argv(
            "x", "samples=1", icount=True, folder=tmp_path, rtos_image=tmp_path / "control_loop.img"
        )


# ------------------------------------------------------------------------------------- Linux's files

LSB_LINES = [
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
FILES_LINUX = [
    "@bench kernel=6.1.0-56-arm64",
    "@bench cpus=1",
    "@bench uptime=1.19",
    "@bench phase=files",
    "@bench files_wait=done",
    "@bench files_busy_rounds=57",
    "@bench dd_status=0",
    "@bench dd_ns=3664564080 3666652272 3677339648",
    "@bench dd_bytes=4194304",
    "@bench phase=dump",
    "@bench done=1",
]


def files_console(linux: list[str] = FILES_LINUX, lsb: list[str] = LSB_LINES) -> str:
    """A boot of the files case: the rtos partition's remote.c lines, its stop, then Linux's dd."""
    rtos = [f"[rtos] {x}" for x in ["rtos: rtmux rtos 0.1.0", *lsb, "rtos: exit(0)"]]
    return "\n".join(
        BOOT + [f"[linux] {x}" for x in linux[:4]] + rtos + STOP + [f"[linux] {x}" for x in linux[4:]]
    )


FILES_PLAN = linux_script.Plan(1000, files=linux_script.FilesPlan(34.0))


def test_files_plan_script() -> None:
    assert FILES_PLAN.phases == ["files", "dump"]
    text = linux_script.script(FILES_PLAN)
    ready, deadline, wait = (
        text.index("touch /srv/rtos/ready"),
        text.index("read up rest </proc/uptime; end=$((${up%.*} + 34)); b=0"),
        text.index("while [ ! -e /srv/rtos/done ] && read up rest </proc/uptime && [ ${up%.*} -lt $end ]"),
    )
    # while remote.c's `busy` is there, Linux loops on its load (local reads, the V-Bus's counters)
    busy = text.index(
        "  if [ -e /srv/rtos/busy ]; then dd if=/srv/rtos/bench-w.bin of=/dev/null bs=8k 2>/dev/null; "
        "cat /dev/virtio-ports/rtmux-stats >/dev/null; b=$((b+1)); else usleep 100000; fi"
    )
    assert ready < deadline < wait < busy < text.index('say files_busy_rounds "$b"')
    assert "rm -f /srv/rtos/ready /srv/rtos/done /srv/rtos/busy /srv/rtos/bench-w.bin" in text
    written = text.index("dd if=/dev/zero of=/srv/rtos/bench.bin bs=4096 count=1")
    empty = text.index(linux_script.files_dd(0))
    whole = text.index(linux_script.files_dd(512))
    assert written < ready < wait < empty < whole < text.index("say phase dump")
    assert "dd if=/dev/zero of=/srv/rtos/bench-w.bin bs=8k count=512 conv=fsync" in text
    assert "say files_wait" in text and 'say dd_ns "$t0 $t1 $t2"' in text
    with pytest.raises(ValueError, match="otherwise idle"):
        linux_script.Plan(1000, load=True, files=linux_script.FilesPlan(34.0))
    with pytest.raises(ValueError, match="bound"):
        linux_script.FilesPlan(0)


def test_read_results_files() -> None:
    r = linux_script.read_results(files_console(), FILES_PLAN, what="x", rtos_samples=None, rtos_files=1000)
    assert r.files is not None and r.rtos is None and r.rtos_control is None
    f = r.files
    assert f.rtos.pread.avg_ns == 45069 and f.rtos.latency["remote_io"].reads == 8143
    assert f.rtos.latency["linux_busy"].max_ns == 656 and f.busy_rounds == 57
    # the dd of 512 blocks took 10.687376 ms, the dd of none 2.088192 ms: 8.599184 ms for the writes
    assert (f.dd_whole_ns, f.dd_empty_ns, f.dd.ns, f.dd.nbytes) == (10687376, 2088192, 8599184, 4194304)
    assert f.dd.mbps == pytest.approx(487.76, abs=0.01)
    assert r.rtos_el2 == 0  # 4 at the stop = 3 at boot + the SYSTEM_OFF call


def swap(lines: list[str], old: str, new: str) -> list[str]:
    assert any(old in line for line in lines)
    return [line.replace(old, new) for line in lines]


@pytest.mark.parametrize(
    ("text", "samples", "message"),
    [
        (files_console(swap(FILES_LINUX, "files_wait=done", "files_wait=timeout")), 1000, "did not create"),
        (files_console(lsb=LSB_LINES[:-1]), 1000, "rtos partition: no `LSB| done`"),
        (files_console(), 2000, r"took \[1000, 1000, 1000, 1000\] samples"),
        (files_console(swap(FILES_LINUX, "files_busy_rounds=57", "files_busy_rounds=0")), 1000, "no round"),
        (files_console([x for x in FILES_LINUX if "busy_rounds" not in x]), 1000, "no busy Linux"),
        (files_console(lsb=swap(LSB_LINES, "reads 8143", "reads 0")), 1000, "no remote read"),
        (files_console(swap(FILES_LINUX, "dd_status=0", "dd_status=1")), 1000, "exited with status 1"),
        (files_console(swap(FILES_LINUX, "dd_ns=3664564080 ", "dd_ns=")), 1000, "no valid `@bench dd_ns"),
        (files_console(swap(FILES_LINUX, "dd_ns=3664564080", "dd_ns=3666652273")), 1000, "went backwards"),
        (files_console(swap(FILES_LINUX, "dd_bytes=4194304", "dd_bytes=4096")), 1000, "wrote 4096 bytes"),
    ],
)
def test_read_results_files_refuses(text: str, samples: int, message: str) -> None:
    with pytest.raises(RtmuxError, match=message):
        linux_script.read_results(text, FILES_PLAN, what="x", rtos_samples=None, rtos_files=samples)


def test_read_results_files_needs_plan_and_program() -> None:
    with pytest.raises(RtmuxError, match="need both"):
        linux_script.read_results(files_console(), FILES_PLAN, what="x", rtos_samples=None)
    plain = linux_script.Plan(1000)
    with pytest.raises(RtmuxError, match="need both"):
        linux_script.read_results(files_console(), plain, what="x", rtos_samples=None, rtos_files=1000)
