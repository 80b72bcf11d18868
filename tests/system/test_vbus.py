"""The V-Bus end to end (issue 12): Linux programs on /dev/virtio-ports/NAME, through the hypervisor's
virtio console device, to the rtos demo's services (rtos/apps/demo: echo, telemetry, setpoint), in the
default system, in icount mode.

Every byte rtmux-ping and rtmux-fill send is a function of its position in the stream, so a byte lost,
added, changed or moved (a stale byte from an earlier connection included) makes them fail; the
hypervisor's per-channel counters (printed when a partition stops) say what it moved and dropped.
The rtos's CPU must not enter the hypervisor for any of it: its EL2 entries stay those of its start
(the hypervisor's report on escape then e, and at every stop).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rtmux import paths
from rtmux.formats import vbus_stats
from rtmux.formats.hyp_console import el2_entries
from rtmux.formats.rtos_console import demo_reports
from rtmux.run import system
from tests.system.boards import gic_params, on_gic
from tests.system.console_script import PROMPT, Script, rtos_cpu_untouched, run_to_end, until

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt.toml"
ENTRIES = "\x14e"  # the console escape (Ctrl-T), then e: the hypervisor prints its entries per CPU
REPORT = r"rtmux: el2-entries cpu=1 .*\n"
RTT = re.compile(r"^\[linux\] rtt_us min=\S+ avg=\S+ p99=\S+ max=\S+ n=(\d+)$", re.M)
THROUGHPUT = re.compile(r"^\[linux\] throughput_MBps tx=(\S+) rx=(\S+)$", re.M)
FILL = re.compile(r"^\[linux\] fill: wrote (\d+) bytes, (.*)$", re.M)
DRAINED = re.compile(r"^\[linux\] fill: read back (\d+) bytes in order$", re.M)
CHANNEL = re.compile(
    r"^rtmux: vbus: channel (?P<name>\S+): to-rtos (?P<to_rtos>\d+) bytes in (?P<writes>\d+) writes "
    r"\((?P<full>\d+) times full\), to-linux (?P<to_linux>\d+) bytes in (?P<buffers>\d+) buffers, "
    r"(?P<discarded>\d+) discarded, (?P<errors>\d+) errors$",
    re.M,
)
DEVICE = re.compile(r"^rtmux: vbus: device in linux: (\d+) resets, (\d+) violations \(NEEDS_RESET\)", re.M)
RESET_LINE = "rtmux: partition linux: reset requested; restarting from its pristine images"
READY = (
    r"^\[linux\] rtmux-linux: ready: .*V-Bus ports: "
    r"echo rtmux-files rtmux-log rtmux-net rtmux-stats rtmux-threads setpoint telemetry"
)


# The counters port: each read is a whole snapshot, then end of file (so cat ends).
STATS = "cat /dev/virtio-ports/rtmux-stats"


def channels(console: str) -> dict[str, dict[str, int]]:
    """The last counters the hypervisor printed for each channel."""
    out: dict[str, dict[str, int]] = {}
    for m in CHANNEL.finditer(console):
        out[m["name"]] = {k: int(v) for k, v in m.groupdict().items() if k != "name"}
    return out


@pytest.mark.parametrize("gic", gic_params())
def test_round_trips_all_channels_and_full_rings(gic: int, tmp_path: Path) -> None:
    """Round trips of 1 B to 64 KiB with content checked; every channel at once (bulk echo, telemetry
    read, a set-point written); the echo channel filled both ways until Linux's write blocks, then
    until it gets EAGAIN, then read back whole; the rtos's CPU never entered the hypervisor (GICv3), or
    only for the doorbells it rang (GICv2, where sending an SGI is a distributor write, which traps)."""
    pings = "; ".join(
        f"rtmux-ping echo -n 8 -s {s} -T 60 || echo ping-failed-{s}" for s in (1, 64, 4096, 65536)
    )
    together = (
        "(rtmux-ping echo --bulk -t 3 -T 60 > /tmp/bulk 2>&1; echo bulk-status=$? >> /tmp/bulk) & "
        "(head -n 3 /dev/virtio-ports/telemetry > /tmp/telemetry) & "
        "(echo 7 > /dev/virtio-ports/setpoint); wait; cat /tmp/bulk /tmp/telemetry"
    )
    fills = "rtmux-fill echo -n 4000000 -t 3; rtmux-fill echo -n 4000000 --nonblock"
    script = Script(
        [
            (PROMPT, ""),
            (r"\[rtos\] demo: t=\d+s.*\n", ENTRIES),  # the rtos is past its start
            (REPORT, f"{pings}; echo pings-$((6*7))\n"),
            (r"pings-42", f"{together}; echo together-$((6*7))\n"),
            (r"together-42", f"{fills}; echo fills-$((6*7))\n"),
            (r"fills-42", f"{STATS}; {STATS}; echo stats-$((6*7))\n"),
            (r"stats-42", ENTRIES),
            (REPORT, "poweroff -f\n"),
            (r"rtmux: vbus: device in linux: .*\n", ""),
        ],
        after=2,
    )
    built = system.build(on_gic(CONFIG, gic, tmp_path), icount=True)
    r, why = run_to_end(built.argv, 900, script)
    out = r.console
    # round trips: four sizes, eight each, every byte checked by rtmux-ping
    assert [int(n) for n in RTT.findall(out)] == [8, 8, 8, 8], why
    assert not re.search(r"^\[linux\] ping-failed-\d+$", out, re.M), why
    # all channels at once
    assert "bulk-status=0" in out and len(THROUGHPUT.findall(out)) == 1, why
    telemetry = re.findall(r"^\[linux\] t=\d+s control loop \d+ cycles, .* checksum unchanged$", out, re.M)
    assert len(telemetry) == 3, why
    assert "[rtos] demo: set-point: 7000 um" in out, why
    later = out[out.index("[rtos] demo: set-point: 7000 um") :]
    assert re.search(r"^\[rtos\] demo: t=\d+s .* set-point 7 mm, ", later, re.M), why
    # full both ways: Linux blocked, then got EAGAIN with no POLLOUT; everything came back in order
    fills_seen = [(int(n), how) for n, how in FILL.findall(out)]
    assert [how for _, how in fills_seen] == ["then the write blocked", "then EAGAIN, no POLLOUT"], why
    assert all(n > 64 * 1024 for n, _ in fills_seen), why  # both rings and Linux's buffers were full
    assert [int(n) for n in DRAINED.findall(out)] == [n for n, _ in fills_seen], why
    # the hypervisor's counters: everything Linux sent to the echo came back, nothing dropped or wrong
    counts = channels(out)
    echo = counts["echo"]
    assert echo["to_rtos"] == echo["to_linux"] > 1_000_000, why
    assert echo["full"] > 0 and echo["discarded"] == 0 and echo["errors"] == 0, why
    assert counts["setpoint"]["to_rtos"] == 2 and counts["telemetry"]["to_linux"] > 0, why
    assert all(c["errors"] == 0 for c in counts.values()), why
    assert DEVICE.search(out) and DEVICE.search(out)[2] == "0", why  # type: ignore[index]
    # Linux's view of the same counters (the counters port, read twice after the fills): the echo's
    # bytes each way as the hypervisor counted them until then, the rtos's own full count (its echo
    # found the ring to Linux full while rtmux-fill did not read), nothing wrong
    first, second = vbus_stats.parse(out)
    services = {"rtmux-files", "rtmux-log", "rtmux-net", "rtmux-threads"}
    assert set(first.channels) == {"echo", "telemetry", "setpoint"} | services, why
    assert first.device["needs_reset"] == 0 and first.device["violations"] == 0, why
    assert first.counter("echo", "linux_open") == 0 and first.counter("echo", "rtos_open") == 1, why
    assert 1_000_000 < first.counter("echo", "to_rtos_bytes") <= echo["to_rtos"], why
    assert first.counter("echo", "to_linux_bytes") == first.counter("echo", "to_rtos_bytes"), why
    assert first.counter("echo", "rtos_full") > 0 and first.counter("echo", "errors") == 0, why
    assert second.uptime_us > first.uptime_us, why
    assert second.channels["echo"] == first.channels["echo"], why  # nothing moved in between
    # the rtos's CPU: its start-up entries only, before and after all of it (on GICv2 its distributor
    # accesses only: its doorbells' GICD_SGIR writes trap, fewer than the echo's buffers, as a doorbell
    # serves a burst)
    rtos = [e for e in el2_entries(out) if e.partition == "rtos"]
    assert len(rtos) == 3 and rtos_cpu_untouched(out) is None, why
    if gic == 3:
        assert all(e.counts == rtos[0].counts for e in rtos), why
    else:
        assert rtos[0].total < rtos[-1].total < echo["to_linux"], why
    assert {d.checksum for d in demo_reports(out)} == {"unchanged"}, why


def test_linux_first_then_reboot_with_bytes_in_flight() -> None:
    """Linux opens the echo port before the rtos serves it (the rtos opens 40 s after its start): a read
    is end-of-file at once, rtmux-ping waits and then passes. Then Linux fills the channel both ways,
    exits with the bytes still in flight and reboots: after the new boot, rtmux-ping passes again (a
    stale byte would fail its check) and the hypervisor counted the bytes it dropped."""
    script = Script(
        [
            (PROMPT, "cat /dev/virtio-ports/echo; echo eof-$((6*7))\n"),
            (r"eof-42", "rtmux-ping echo -n 10 -s 300 -T 120; echo first-$((6*7))\n"),
            (r"first-42", "rtmux-fill echo -n 600000 --no-drain; echo filled-$((6*7))\n"),
            (r"filled-42", "reboot\n"),
            (f"^{re.escape(RESET_LINE)}$", ""),
            (READY, ""),
            (PROMPT, "rtmux-ping echo -n 20 -s 4096 -T 60; echo again-$((6*7))\n"),
            (r"again-42", "poweroff -f\n"),
            (r"rtmux: vbus: device in linux: .*\n", ""),  # the counters, printed when Linux stops
        ],
        after=1,
    )
    built = system.build(CONFIG, bootargs={"rtos": "latmon=1 period_us=1000 echo_open_s=40"}, icount=True)
    r, why = run_to_end(built.argv, 900, script)
    out = r.console
    eof = out.index("eof-42")
    opened = out.index("[rtos] demo: echo opened after 40 s")
    assert eof < opened, f"Linux was not first{why}"
    assert re.search(r"^\[linux\] eof-42$", out, re.M), why  # cat ended (end of file) at once
    rtts = [int(n) for n in RTT.findall(out)]
    assert rtts == [10, 20], why
    assert out.index("rtt_us", eof) > opened, why  # the first round trips waited for the rtos
    fill = FILL.search(out)
    assert fill is not None and fill[2] == "then the write blocked", why
    # the bytes in flight at the reboot were dropped, counted, and none reached the new boot
    final = channels(out)
    assert final["echo"]["discarded"] > 0 and final["echo"]["errors"] == 0, why
    assert rtos_cpu_untouched(out) is None, why


def test_rtos_sends_from_an_interrupt_handler(rtos_images: Path) -> None:
    """The rtos selftest's chan_irq (rtos/apps/selftest): once Linux's `head` opened the echo port, eight
    interrupts each send one line from their handler with RT_NO_WAIT (waiting there is refused); Linux
    reads exactly those lines, in order, and the rtos sees it close the port."""
    read = "head -n 8 /dev/virtio-ports/echo | tr '\\n' ,; echo end-$((6*7))\n"
    # The rtos's verdict and Linux's output come in either order (the rtos ends when `head` closes).
    done = r"(?s)\[rtos\] \d+ passed, \d+ failed.*end-42|end-42.*\[rtos\] \d+ passed, \d+ failed"
    script = Script([(PROMPT, read), (done, "")], linger_s=0.0)
    built = system.build(
        CONFIG,
        rtos_image=paths.rtos_image("selftest"),
        bootargs={"rtos": "only=chan_irq chan_irq=echo"},
        icount=True,
    )
    r, why = run_to_end(built.argv, 600, script)
    lines = ",".join(f"irq-send {k}/8" for k in range(1, 9))
    assert re.search(rf"^\[linux\] {lines},end-42$", r.console, re.M), why
    assert "[rtos] chan_irq: OK" in r.console and "[rtos] 1 passed, 0 failed" in r.console, why


def test_sends_of_256_bytes_or_less_reach_the_ring_whole(rtos_images: Path) -> None:
    """The rtos selftest's chan_whole (rtos/apps/selftest): Linux's `cat` echoes the setpoint channel,
    whose ring to Linux holds 256 bytes, so the rtos's sends keep waiting for room; a less urgent thread
    sends 200-byte messages back to back while a more urgent one sends 100-byte ones now and then. Every
    message comes back whole and in order (rtos/chan.h: a send of at most 256 bytes is never split)."""
    echo = "exec 3<>/dev/virtio-ports/setpoint; sleep 1; cat <&3 >&3\n"
    script = Script([(PROMPT, echo), (r"\[rtos\] \d+ passed, \d+ failed", "")], linger_s=0.0)
    built = system.build(
        CONFIG,
        rtos_image=paths.rtos_image("selftest"),
        bootargs={"rtos": "only=chan_whole chan_whole=setpoint"},
        icount=True,
    )
    r, why = run_to_end(built.argv, 600, script)
    assert "[rtos] chan_whole: OK" in r.console and "[rtos] 1 passed, 0 failed" in r.console, why


HOSTILE = ROOT / "tests" / "system" / "configs" / "vbus-hostile.toml"
# tests/guests/vbus's attacks, in its order, and the reason the hypervisor's line must give for each.
ATTACKS = [
    ("loop", "queue 1: descriptor chain longer than the queue (a loop)"),
    ("foreign_buffer", "queue 1: buffer outside the partition's RAM"),
    ("huge_length", "queue 1: buffer outside the partition's RAM"),
    ("wrong_direction", "queue 1: device-writable buffer in a transmit queue"),
    ("index_jump", "queue 1: available index more than a queue ahead"),
    ("head_beyond", "queue 1: available head beyond the descriptor table"),
    ("queue_size", "queue 1: queue size not a power of two within the maximum"),
    ("foreign_ring", "queue 1: ring area outside the partition's RAM"),
    ("foreign_receive_buffer", "queue 0: buffer outside the partition's RAM"),
    ("no_version_1", "registers: driver did not accept VIRTIO_F_VERSION_1"),
    ("control_port", "queue 3: control message for a port that does not exist"),
]


@pytest.fixture(scope="module")
def vbus_guest(rtos_images: Path) -> Path:
    subprocess.run(["make", "-s", "guests", "hyp"], cwd=ROOT, check=True, timeout=600)
    return ROOT / "build" / "guests" / "vbus.img"


def test_hostile_driver_ends_in_needs_reset_and_the_rtos_is_unharmed(vbus_guest: Path) -> None:
    """A bare-metal guest in Linux's place drives the device like Linux's driver (a round trip through
    the rtos's echo), then gives it bad rings and misuses its registers: each attack ends in
    DEVICE_NEEDS_RESET with the configuration interrupt and one log line naming the reason, the device
    then ignores the guest until it resets it, and works again after the reset. The rtos keeps its code,
    its control loop and its CPU to itself throughout."""
    del vbus_guest  # built; the configuration names it
    script = until(r"rtmux: vbus: device in linux: .*\n", after=3)
    built = system.build(HOSTILE, icount=True)
    r, why = run_to_end(built.argv, 300, script)
    out = r.console
    assert (
        "[linux] vbus-guest: 4 ports named: echo telemetry setpoint rtmux-stats; 3 open on the rtos's side"
        in out
    ), why
    assert "[linux] vbus-guest: round trip before the attacks: ok" in out, why
    logged = re.findall(r"^rtmux: vbus: linux: (.*); device needs reset \((\d+) so far\)$", out, re.M)
    assert logged == [(reason, str(k + 1)) for k, (_, reason) in enumerate(ATTACKS)], why
    for name, _ in ATTACKS:
        line = (
            f"[linux] vbus-guest: attack {name}: needs-reset 1, config interrupt 1, stopped 1; "
            "after a reset: works"
        )
        assert line in out, f"{name}{why}"
    assert f"[linux] vbus-guest: {len(ATTACKS)} attacks, {len(ATTACKS)} recovered" in out, why
    device = DEVICE.search(out)
    assert device is not None and device[2] == str(len(ATTACKS)), why
    # the rtos: every second reported, its code unchanged, no period missed, its CPU never entered
    reports = demo_reports(out)
    assert len(reports) >= 3 and [d.t_s for d in reports] == list(range(1, len(reports) + 1)), why
    assert {d.checksum for d in reports} == {"unchanged"} and reports[-1].overruns == 0, why
    assert rtos_cpu_untouched(out) is None, why
    assert "PANIC" not in out, why


def test_rtos_restart_closes_the_ports_and_they_work_again(tmp_path: Path) -> None:
    """The rtos partition restarts (the demo's data abort at 12 s, policy restart, at most once): a
    program talking through the echo at that moment sees the port close (end of file, not a wrong
    byte), the new rtos serves the channel again and round trips pass with nothing left over from before;
    when the rtos stops for good at its second fault, the port reads end of file."""
    text = CONFIG.read_text()
    marker = 'name = "rtos"\n'
    config = tmp_path / "system.toml"
    config.write_text(
        text.replace(
            marker, f'{marker}fault = {{ policy = "restart", max_restarts = 1, window_s = 600 }}\n', 1
        )
    )
    long_ping = (
        "(rtmux-ping echo -n 1000000 -s 64 -T 60 > /tmp/long 2>&1; echo long-status=$? >> /tmp/long) &"
    )
    script = Script(
        [
            (PROMPT, f"rtmux-ping echo -n 5 -s 64; {long_ping} echo started-$((6*7))\n"),
            (r"started-42", ""),
            (r"rtmux: partition rtos: fault 1: .*\n", ""),
            (
                r"\[rtos\] demo: running",
                "sleep 1; cat /tmp/long; rtmux-ping echo -n 50 -s 256 -T 30; echo second-$((6*7))\n",
            ),
            (r"second-42", ""),
            (r"rtmux: partition rtos stopped: .*\n", "cat /dev/virtio-ports/echo; echo eof-$((6*7))\n"),
            (r"eof-42", ""),
        ]
    )
    # The demo's files in Linux off: at the restart their end (diod ending, its supervisor's work) keeps
    # Linux busy, and the ping then ran only after Linux's driver had taken both the close and the new
    # rtos's reopen in one go, so it never saw the end of file (docs/architecture.md, "Limits": V-Bus).
    built = system.build(
        config,
        bootargs={"rtos": "latmon=1 period_us=1000 fault_s=12 profile=off telemetry_csv=off"},
        icount=True,
    )
    r, why = run_to_end(built.argv, 600, script)
    out = r.console
    # the program talking at the restart saw the port close, never a wrong byte
    assert "[linux] long-status=1" in out, why
    assert re.search(r"^\[linux\] rtmux-ping: echo: the other side closed the channel", out, re.M), why
    assert "came back as" not in out, why
    # round trips before the restart and after it (the new rtos's echo), every byte checked
    assert [int(n) for n in RTT.findall(out)] == [5, 50], why
    assert out.index("rtt_us", out.index("rtmux: partition rtos: fault 1")) > out.index("second-42") - 200, (
        why
    )
    # the counters (printed when the rtos stops for good): nothing wrong
    assert all(c["errors"] == 0 for c in channels(out).values()), why
    assert "PANIC" not in out, why


def test_stock_linux_resets_a_broken_device_by_rebinding_its_driver() -> None:
    """Root unbinds the device's virtio-mmio driver while a program holds the echo port open, breaks the
    device through /dev/mem (an unknown status bit; /dev/mem refuses the page while a driver has it),
    which logs the reason and raises the configuration interrupt with nobody to take it, then binds the
    driver again: the driver's probe resets the device, the ports come back and round trips pass, every
    byte checked. Before the distributor kept emulated interrupts' enable bits, the freed interrupt came
    back after every EOI and Linux never got past the bind. The rtos is untouched throughout."""
    drv = "/sys/bus/platform/drivers/virtio-mmio"
    # The device's platform name from sysfs (its address first: a004000.virtio_mmio).
    find = "p=$(basename $(readlink -f /sys/bus/virtio/drivers/virtio_console/virtio*/..))"
    status = "$((0x${p%%.*} + 0x70))"  # the Status register
    brk = (
        f"{find}; exec 3<>/dev/virtio-ports/echo; echo $p > {drv}/unbind; devmem {status} 32 0x10; "
        f"echo status=$(devmem {status} 32); echo $p > {drv}/bind; exec 3>&-; "
        "for i in 1 2 3 4 5 6 7 8 9 10; do [ -e /dev/virtio-ports/echo ] && break; sleep 1; done"
    )
    script = Script(
        [
            (PROMPT, "rtmux-ping echo -n 5 -s 64; echo before-$((6*7))\n"),
            (r"before-42", f"{brk}; echo rebound-$((6*7))\n"),
            (r"rtmux: vbus: linux: registers: unknown device status bits; device needs reset .*\n", ""),
            (r"rebound-42", "rtmux-ping echo -n 20 -s 4096 -T 60; echo after-$((6*7))\n"),
            (r"after-42", "poweroff -f\n"),
            (r"rtmux: vbus: device in linux: .*\n", ""),
        ],
        after=1,
    )
    built = system.build(CONFIG, icount=True)
    r, why = run_to_end(built.argv, 600, script)
    out = r.console
    broken = re.search(r"^\[linux\] status=(0x[0-9a-fA-F]+)$", out, re.M)
    assert broken is not None and int(broken[1], 16) & 0x40, why  # DEVICE_NEEDS_RESET, as Linux reads it
    assert [int(n) for n in RTT.findall(out)] == [5, 20], why  # before the break, and after the rebind
    device = DEVICE.search(out)
    assert device is not None and device[2] == "1", why  # one violation: the register write
    assert all(c["errors"] == 0 for c in channels(out).values()), why
    assert rtos_cpu_untouched(out) is None, why
    assert {d.checksum for d in demo_reports(out)} == {"unchanged"}, why
