"""Root in the stock Linux of the default system (configs/qemu-virt.toml) attacks the hypervisor.

Issue 10, suite (a): root is as strong as its kernel, and nothing it does may crash or hang the
hypervisor, reach the rtos's or the hypervisor's memory, or disturb the rtos. Each test checks that the
attack reached the hypervisor (its emulation answered, or it counted the refused accesses) and that the
rtos demo reported on with its code checksum unchanged.

test_redistributor_frames_beyond_the_board: the redistributor frames of CPUs the board does not have (on
the 2-CPU default board, from IPA 0x080e_0000) are in the region the hypervisor emulates for every
partition, and no Linux driver claims them, so STRICT_DEVMEM lets `devmem` map them. A read there once
made the hypervisor read that unassigned space itself: a data abort at EL2, a hypervisor panic, the rtos
stopped with it. The emulation now reads such frames as zero and ignores writes (hyp/arch/arm64/vgicd.c).
The same command reads the identification register (GICR_PIDR2) of the rtos CPU's frame, which is not
mapped into Linux either, and gets the GIC's architecture revision from the hypervisor's emulation.

test_devmem_over_the_whole_board: every region of the board (tests/system/devmem_map.py), every width, on
the default system and on the same system on the GICv2 board (configs/qemu-virt-gicv2.toml).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rtmux import board as b
from rtmux import config as cfg
from rtmux.formats.rtos_console import demo_reports
from rtmux.image import debian
from rtmux.run import system
from tests.system import console_script, devmem_map
from tests.system.console_script import PROMPT, Script

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt.toml"
# The default system on QEMU virt with a GICv2.
GICV2_CONFIG = ROOT / "configs" / "qemu-virt-gicv2.toml"
# On the default board (2 CPUs), frame n of the redistributor region starts at 0x080a0000 + n * 0x20000.
BEYOND = 0x080E0000  # CPU 2's frame: no such CPU
BEYOND_TYPER = BEYOND + 0x8
BEYOND_PIDR2 = BEYOND + 0xFFE8
BEYOND_ISENABLER0 = BEYOND + 0x10100
RTOS_PIDR2 = 0x080AFFE8  # CPU 0's frame: the rtos's, trapped and emulated for Linux
GICR_PIDR2_ARCH_V3 = 0x3  # ArchRev [7:4]


def value(console: str, name: str) -> int:
    """The number a `echo NAME=$(devmem ...)` printed (never matches the echoed command line)."""
    found = console_script.linux_value(console, name)
    assert found is not None and found.startswith("0x"), f"{name}= not found"
    return int(found, 16)


def test_redistributor_frames_beyond_the_board(rtos_images: Path) -> None:
    built = system.build(CONFIG, icount=True)
    attack = (
        f"echo rtos_pidr2=$(devmem 0x{RTOS_PIDR2:x} 32); "
        f"echo beyond32=$(devmem 0x{BEYOND_TYPER:x} 32); "
        f"echo beyond64=$(devmem 0x{BEYOND_TYPER:x} 64); "
        f"echo beyond_pidr2=$(devmem 0x{BEYOND_PIDR2:x} 32); "
        f"devmem 0x{BEYOND_ISENABLER0:x} 32 0xffffffff; "  # ignored
        f"echo after=$(devmem 0x{BEYOND_ISENABLER0:x} 32); "
        "echo attack=done-$((6*7))\n"
    )
    script = Script(
        [
            (PROMPT, attack),
            (r"attack=done-42", ""),
            # the rtos reports on: three more of its once-a-second lines after the attack
            (r"(\[rtos\] demo: t=\d+s.*\n(.*\n)*?){3}", ""),
        ]
    )
    r, why = console_script.run_to_end(built.argv, 300, script)
    out = r.console
    # the accesses reached the hypervisor's emulation: the rtos's frame shows the GIC's revision ...
    assert (value(out, "rtos_pidr2") >> 4) & 0xF == GICR_PIDR2_ARCH_V3, why
    # ... and the frames beyond the board read as zero, writes there are ignored
    for name in ("beyond32", "beyond64", "beyond_pidr2", "after"):
        assert value(out, name) == 0, f"{name}{why}"
    # the rtos never noticed: reports every second after the attack, no new overrun, code intact
    attack_at = out.index("attack=done-42")
    after = [(d.t_s, d.overruns, d.checksum) for d in demo_reports(out[attack_at:])]
    assert len(after) >= 3, why
    assert [t for t, _, _ in after] == list(range(after[0][0], after[0][0] + len(after))), why
    assert len({o for _, o, _ in after}) == 1 and all(c == "unchanged" for _, _, c in after), why
    assert "rtmux: partition rtos stopped" not in out, why


# ---- /dev/mem over the whole board ------------------------------------------------------------------

# One access's results, ended by " ." (found in Linux's output joined into one stream: a line whose output
# paused for a console tick is shown in part, and a hypervisor line written then, such as a rate-limited
# abort report, ends it on screen; the rest follows as a new tagged line).
SWEEP_RECORD = re.compile(r"@(?P<kind>[rw]) (?P<address>0x[0-9a-f]+)(?P<results>( \d+(:[^\s.]*)?){4}) \.")
CHUNK = 700  # characters of addresses per typed line (busybox's line editor takes up to 1024)


def typed_list(name: str, addresses: list[int]) -> list[tuple[str, str]]:
    """Script steps that build the shell variable NAME from `addresses` a line at a time, each line
    acknowledged by a number the shell computes (the typed text never fills the console's input ring)."""
    words = [f"0x{a:x}" for a in addresses]
    lines: list[list[str]] = [[]]
    for w in words:
        if sum(len(x) + 1 for x in lines[-1]) + len(w) > CHUNK:
            lines.append([])
        lines[-1].append(w)
    steps = []
    for i, line in enumerate(lines):
        steps.append((PROMPT, f'{name}="${name} {" ".join(line)}"; echo {name}_chunk=$((1000+{i}))\n'))
        steps.append((rf"^\[linux\] {name}_chunk={1000 + i}$", ""))
    return steps


def sweep_results(console: str) -> dict[tuple[str, int, int], tuple[int, str]]:
    """(r|w, address, width) -> (exit status, value read) from the sweep's lines."""
    out: dict[tuple[str, int, int], tuple[int, str]] = {}
    stream = "".join(line[len("[linux] ") :] for line in console.splitlines() if line.startswith("[linux] "))
    for m in SWEEP_RECORD.finditer(stream):
        for width, result in zip(devmem_map.WIDTHS, m["results"].split(), strict=True):
            status, _, value = result.partition(":")
            out[(m["kind"], int(m["address"], 16), width)] = (int(status), value)
    return out


@pytest.mark.parametrize("config", [CONFIG, GICV2_CONFIG], ids=["gicv3", "gicv2"])
def test_devmem_over_the_whole_board(rtos_images: Path, config: Path) -> None:
    """Root reads and writes, with every devmem width, the start, an unaligned offset, a page crossing,
    the end and the last byte of every region of the board (devmem_map: devices not assigned to Linux,
    holes, the GIC and UART the hypervisor emulates, the other partitions' RAM, free RAM, beyond RAM,
    beyond the IPA space; on the GICv2 board the distributor's 4 KiB, the CPU interface mapped for Linux,
    GICH and GICV's physical frames, and where redistributors would be). Linux boots with iomem=relaxed,
    which a root user can arrange (kexec), so that Linux's own drivers do not keep /dev/mem away from the
    GIC and the UART: the attack reaches them.

    Every access has the outcome the map predicts (exit status: 135 when the hypervisor refused it with
    an abort, 0 when it was emulated or is Linux's own device, 1 when Linux refused its own RAM), the
    hypervisor counts exactly the refused ones, emulated registers show their known values, and the rtos
    never notices."""
    system_config = cfg.load(config, find_kernel=debian.cached_kernel_image)
    board_map = devmem_map.Map(system_config, "linux")
    board_map.check_pages()
    reads = board_map.reads()
    probes = board_map.probes()
    read_addresses = sorted({a.address for a in reads} | {p.address for p in probes})
    expected = {("r", a, w): board_map.outcome(a, w) for a in read_addresses for w in devmem_map.WIDTHS}
    expected |= {("w", a.address, a.width): a.outcome for a in board_map.writes()}
    write_addresses = board_map.write_addresses()
    linux = next(p for p in system_config.partitions if p.name == "linux")
    built = system.build(config, bootargs={"linux": f"{linux.bootargs} iomem=relaxed"}, icount=True)
    # Each result line is printed whole: a partial line would be shown alone after a quiet console tick.
    sweep = (
        'for a in $R; do l="@r $a"; for w in 8 16 32 64; do v=$(devmem $a $w); l="$l $?:$v"; done; '
        'echo "$l ."; done 2>/dev/null; '
        'for a in $W; do l="@w $a"; for w in 8 16 32 64; do devmem $a $w 0xa5a5a5a5a5a5a5a5; l="$l $?"; '
        'done; echo "$l ."; done 2>/dev/null; '
        "echo bad=$(dmesg | grep -cE 'BUG|WARNING|Oops'); echo sweep=done-$((6*7))\n"
    )
    script = Script(
        [
            *typed_list("R", read_addresses),
            *typed_list("W", write_addresses),
            (PROMPT, sweep),
            (r"^\[linux\] sweep=done-42$", ""),
            (PROMPT, "poweroff -f\n"),
            (r"^rtmux: partition linux stopped: powered off", ""),
        ],
        after=3,
    )
    r, why = console_script.run_to_end(built.argv, 900, script, tail=20000)
    out = r.console
    results = sweep_results(out)
    missing = sorted(set(expected) - set(results))
    assert not missing, f"{len(missing)} accesses without a result, e.g. {missing[:5]}{why}"
    wrong = [
        f"{k} {b.hexa(a)} {w}-bit ({board_map.area_of(a).name}): status {results[(k, a, w)][0]}, "
        f"expected {o.status} ({o.value})"
        for (k, a, w), o in sorted(expected.items())
        if results[(k, a, w)][0] != o.status
    ]
    assert not wrong, f"{len(wrong)} accesses with another outcome:\n" + "\n".join(wrong[:40]) + why
    # the hypervisor refused exactly the accesses the map says it must (and nothing else Linux did)
    aborts = sum(o == devmem_map.Outcome.ABORT for o in expected.values())
    stats = console_script.hyp_stats(out)
    assert stats is not None and stats["aborts"] == aborts, f"{stats} but {aborts} refused accesses{why}"
    # the emulation answered: registers with known values
    for p in probes:
        status, text = results[("r", p.address, p.width)]
        assert status == 0 and text.startswith("0x"), f"{p.name}: {status}:{text}{why}"
        assert (int(text, 16) >> p.shift) & p.mask == p.expected, f"{p.name} = {text}{why}"
    assert console_script.linux_value(out, "bad") == "0", why
    # the rtos never noticed: every report with its code intact, none missing, and once Linux is off
    # no more missed periods (while Linux runs, missed periods are the emulator's: docs/security.md)
    console_script.rtos_reported_unharmed(
        out, why, quiet_from="rtmux: partition linux stopped", gic=system_config.board.gic_version
    )
    assert "rtmux: partition rtos stopped" not in out, why
    print(
        f"devmem sweep ({system_config.board.name}): {len(read_addresses)} read and "
        f"{len(write_addresses)} write addresses, "
        f"{len(expected)} accesses, {aborts} refused, wall {r.elapsed_s:.0f} s"
    )


# ---- console flood -----------------------------------------------------------------------------------

# A whole line of the demo's: its report, or one about its files in Linux (its profile, its telemetry).
DEMO_LINE = (
    r"demo: t=\d+s .*unchanged|demo: (?:profile|telemetry): .*(?:\.csv|square wave|stays|written|dropped)"
)

FLOOD_TEXT = "flood-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRS"  # 63 characters + newline
FLOOD_LINES = 16384  # 1 MiB
DROPPED = re.compile(r"^rtmux: (\S+): (\d+) output characters dropped \(console ring full\)$", re.MULTILINE)


def test_console_flood_from_linux(rtos_images: Path) -> None:
    """Root writes megabytes to the console as fast as Linux can. Every line arrives whole and tagged
    (the hypervisor writes a partition's output line by line: no rtos line is cut by Linux's), the
    rtos's reports keep coming in between, nothing is dropped unannounced, and the shell answers after."""
    built = system.build(CONFIG, icount=True)
    flood = f"yes {FLOOD_TEXT} | head -n {FLOOD_LINES} >/dev/console; echo flood=done-$((6*7))\n"
    script = Script(
        [
            (PROMPT, flood),
            (r"^\[linux\] flood=done-42$", ""),
            (PROMPT, "echo ok-$((6*7))\n"),
            (r"^\[linux\] ok-42$", ""),
            (PROMPT, "poweroff -f\n"),
            (r"^rtmux: partition linux stopped: powered off", ""),
        ],
        after=3,
    )
    r, why = console_script.run_to_end(built.argv, 900, script, tail=6000)
    out = r.console
    start = out.index(f"head -n {FLOOD_LINES}")
    end = out.index("[linux] flood=done-42")
    window = out[start:end].splitlines()[1:]
    flood_lines = [line for line in window if line == f"[linux] {FLOOD_TEXT}"]
    # every byte arrived, or the hypervisor said how many it dropped (the Linux CPU drains the rings on
    # each of Linux's writes, so nothing is expected to be dropped)
    dropped = {m[1]: int(m[2]) for m in DROPPED.finditer(out)}
    others = [line for line in window if line != f"[linux] {FLOOD_TEXT}" and not line.startswith("[rtos] ")]
    assert dropped == {} and len(flood_lines) == FLOOD_LINES, (
        f"{len(flood_lines)} lines, dropped {dropped}, other lines {others[:5]}{why}"
    )
    # nothing else in that window but whole rtos lines (demo reports and latency records; the demo's
    # files in Linux, whose lines come when Linux's file server first answers, may fall in it)
    others = [line for line in window if line != f"[linux] {FLOOD_TEXT}"]
    strays = [line for line in others if not re.fullmatch(rf"\[rtos\] ({DEMO_LINE}|RTD\|.*)", line)]
    assert not strays, f"lines cut or mixed: {strays[:10]}{why}"
    assert any(line.startswith("[rtos] demo: t=") for line in others), f"no rtos report during the flood{why}"
    console_script.rtos_reported_unharmed(out, why, quiet_from="rtmux: partition linux stopped")
    print(
        f"console flood: {FLOOD_LINES * 64} bytes, {len(others)} rtos lines between, wall {r.elapsed_s:.0f} s"
    )


# ---- set-point flood ---------------------------------------------------------------------------------

# newlines: each an empty line, "auto" for the rtos demo (its answer: "profile", or "square wave" without one)
SETPOINT_FLOOD = 256 * 1024


def test_setpoint_flood_from_linux(rtos_images: Path) -> None:
    """Root writes 256 KiB of newlines to /dev/virtio-ports/setpoint (issue 23: 1 MiB made the demo print a
    line per byte and drop 264,763 of them, its status lines glued to cut ones). The demo spends on it what
    it chooses (64 bytes a millisecond: Linux's writer waits for the full channel), answers at most 4
    lines a second with the count of the others, and its console keeps every line whole: no line
    dropped, every second's report there and intact."""
    built = system.build(CONFIG, icount=True)
    flood = f"yes '' | head -c {SETPOINT_FLOOD} > /dev/virtio-ports/setpoint; echo flood=done-$((6*7))\n"
    script = Script(
        [
            (PROMPT, flood),
            (r"^\[linux\] flood=done-42$", ""),
            (PROMPT, "echo 7 > /dev/virtio-ports/setpoint; poweroff -f\n"),
            (r"^rtmux: partition linux stopped: powered off", ""),
        ],
        after=2,
    )
    r, why = console_script.run_to_end(built.argv, 900, script, tail=6000)
    out = r.console
    start = out.index(f"head -c {SETPOINT_FLOOD} > /dev/virtio-ports/setpoint")
    end = out.index("[linux] flood=done-42")
    window = out[start:end]
    answers = re.findall(r"^\[rtos\] demo: set-point: (?:profile|square wave)$", window, re.M)
    untold = [
        int(n) for n in re.findall(r"^\[rtos\] demo: set-point: (\d+) lines not answered", window, re.M)
    ]
    reports = demo_reports(window)
    assert len(reports) >= 3, why
    assert len(answers) <= 4 * (len(reports) + 1) and sum(untold) > 0, f"{len(answers)} answers{why}"
    assert len(answers) + sum(untold) <= SETPOINT_FLOOD, why
    assert "console ring full" not in out, why
    strays = [
        line
        for line in window.splitlines()[1:]
        if line.startswith("[rtos] ")
        and not re.fullmatch(rf"\[rtos\] ({DEMO_LINE}|RTD\|.*|demo: set-point: .*)", line)
    ]
    assert not strays, f"rtos lines cut or mixed: {strays[:10]}{why}"
    # the service still serves: the line after the flood (its answer may fall within the limit) moves the
    # motor, as the demo's reports say
    assert re.search(r"^\[rtos\] demo: t=\d+s .* set-point 7 mm, ", out[end:], re.M), why
    console_script.rtos_reported_unharmed(out, why, quiet_from="rtmux: partition linux stopped")
    print(
        f"set-point flood: {len(answers)} answers, {sum(untold)} counted unanswered, {len(reports)} reports"
    )


# ---- reboot loop -------------------------------------------------------------------------------------

REBOOTS = 5
RESET_LINE = "rtmux: partition linux: reset requested; restarting from its pristine images"
READY = r"^\[linux\] rtmux-linux: ready: "
# In icount mode QEMU runs the vCPUs in turn from one host thread. While Linux computes on CPU 1 the rtos's
# timer interrupt waits for CPU 1's turn to end: up to 3.9 ms in most seconds of a Linux boot. In 2 of 6
# runs one second right after the first reset showed 25.64 ms (the same figure both times); its cause is
# not established (docs/security.md). The bound below is far above both and catches an rtos held up by
# the hypervisor for a noticeable time (a stall, a lock, a reset that reaches the rtos's CPU).
WORST_WAKEUP_US = 50_000.0


def test_reboot_loop(rtos_images: Path) -> None:
    """Root reboots Linux (`reboot -f`: PSCI SYSTEM_RESET) again and again, then powers it off. Every
    reset is logged and restarts Linux from its pristine images; Linux boots each time and its shell
    answers; the rtos reports every second with its code intact.

    Missed control periods: every Linux boot costs the rtos's demo some (about 250-310 per boot here, as
    the first boot, which follows no reset, does too), and they stop the moment Linux is off. The same
    count comes from a shell busy loop in Linux that never leaves EL0/EL1 but for its timer tick (227
    misses for 1.85 s of guest time): they are the icount emulator's round-robin, not the hypervisor,
    which takes no exception on the rtos's CPU. So zero misses is asserted once Linux is off, and while
    it reboots only that the rtos reports every second and never waits WORST_WAKEUP_US."""
    built = system.build(CONFIG, icount=True)
    steps: list[tuple[str, str]] = []
    for _ in range(REBOOTS):
        steps += [(PROMPT, "reboot -f\n"), (f"^{re.escape(RESET_LINE)}$", ""), (READY, "")]
    steps += [
        (PROMPT, "echo up=$(cut -d. -f1 /proc/uptime); echo ok-$((6*7))\n"),
        (r"^\[linux\] ok-42$", ""),
        (PROMPT, "poweroff -f\n"),
        (r"^rtmux: partition linux stopped: powered off", ""),
    ]
    script = Script(steps, after=4)
    r, why = console_script.run_to_end(built.argv, 900, script, tail=12000)
    out = r.console
    # every reset logged, each followed by a fresh Linux (its own boot, a shell that computes)
    assert out.count(RESET_LINE) == REBOOTS, why
    assert len(re.findall(READY, out, re.MULTILINE)) == REBOOTS + 1, why
    up = console_script.linux_value(out, "up")
    assert up is not None and int(up) < 10, f"uptime {up}: not a fresh boot{why}"
    assert "rtmux: partition rtos stopped" not in out, why
    # the rtos: every second reported, code intact, no wake-up beyond the emulator's slice, and no
    # missed period once Linux is off
    off = "rtmux: partition linux stopped"
    reports = console_script.rtos_reported_unharmed(out, why, quiet_from=off, quiet_reports=4)
    worst = max(d.worst_us for d in reports)
    timeline = "\n".join(line for line in out.splitlines() if "demo: t=" in line or line.startswith("rtmux:"))
    assert worst <= WORST_WAKEUP_US, f"rtos woke up {worst} us late:\n{timeline}{why}"
    quiet = demo_reports(out[out.index(off) :])
    print(
        f"reboot loop: {REBOOTS} resets, rtos missed {quiet[-1].overruns} periods in {quiet[-1].t_s} s "
        f"(none after the power-off), worst wake-up {worst} us, wall {r.elapsed_s:.0f} s"
    )
