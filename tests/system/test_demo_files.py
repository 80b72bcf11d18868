"""The rtos demo's files in Linux (issue 25, its last item; rtos/apps/demo, docs/linux-services.md "The demo
uses it"): the default system (without its network device), QEMU icount, Linux running a boot-time
script; each run with a timeout, its console shown when it fails.

- In one boot: the demo follows the example profile the initramfs ships, then a profile the test writes
  from Linux's shell; a number on the setpoint channel holds the motor, `auto` gives the profile back;
  Linux's file server is killed and the telemetry is written again once the next one is there, no row
  lost; a malformed profile is refused with its line named, the one before kept; without the file the
  demo goes back to its square wave. Linux's `cat` of the telemetry CSV, between computed markers, is
  then read row by row: well formed, one a second with no cycle missing, time going up, each set-point
  the one its source says (the profile's at the row's time into its cycle), and each row the same
  second the console reported.
- Bare metal (no Linux at all): one line says so, and the demo runs its square wave.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rtmux import qemu
from rtmux.bench import linux_script
from rtmux.formats import demo_files
from rtmux.formats.rtos_console import demo_reports
from rtmux.run import rtos, system
from tests.system import console_script

pytestmark = pytest.mark.system

TIMEOUT_S = 420
PROFILE = "/linux/srv/rtos/demo/profile.csv"
CSV = "/linux/srv/rtos/demo/telemetry.csv"

# guest/initramfs/demo-profile.csv's points
EXAMPLE = [(0, 0.0), (500, 10.0), (2000, 10.0), (2500, 0.0), (4000, 0.0)]
# The test's: ramps, a step down (two points at 1500 ms) and a jump at the cycle's end, 2600 ms long, so
# that rows a second apart fall at 13 different times into it.
MINE = [(0, 1.0), (700, 8.5), (1500, 8.5), (1500, -3.0), (2600, 2.0)]
HOLD_MM = 4  # the number written to the setpoint channel

SCRIPT = (
    console_script.WAIT_FOR
    + r"""cd /srv/rtos/demo
# the demo writes its first rows once Linux's files are there; a few more, following the example
wait_for telemetry.csv 600
sleep 3
# a profile of the test's, written beside and moved over the old one (the demo never reads half of it)
printf '# the test profile\ntime_ms,setpoint_mm\nMINE' >profile.new && mv profile.new profile.csv
sleep 8
echo HOLD >/dev/virtio-ports/setpoint
sleep 3
echo auto >/dev/virtio-ports/setpoint
sleep 3
read -r pid </run/rtmux/diod.pid && kill -9 "$pid" && echo "@killed diod $((pid - pid + 42))"
sleep 5
printf '0,1\n500,2\n900,x\n' >profile.new && mv profile.new profile.csv
sleep 4
rm profile.csv
sleep 4
echo "@csv-begin-$((6 * 7))"
cat telemetry.csv
echo "@csv-end-$((6 * 7))"
""".replace("MINE", "".join(f"{t},{mm}\\n" for t, mm in MINE)).replace("HOLD", str(HOLD_MM))
)


def _runs(rows: list[demo_files.TelemetryRow]) -> list[tuple[str, int]]:
    """The rows' sources, each run of one source as (source, rows)."""
    runs: list[tuple[str, int]] = []
    for row in rows:
        if runs and runs[-1][0] == row.source:
            runs[-1] = (row.source, runs[-1][1] + 1)
        else:
            runs.append((row.source, 1))
    return runs


def _follows(row: demo_files.TelemetryRow, points: list[tuple[int, float]]) -> bool:
    return (
        row.profile_ms is not None
        and abs(row.setpoint_um - demo_files.setpoint_um(points, row.profile_ms)) <= 1
    )


def test_demo_profile_and_telemetry_in_linux(run_rtmux: Callable[..., Any], tmp_path: Path) -> None:
    config = tmp_path / "demo.toml"
    config.write_text(linux_script.without_devices(system.DEFAULT_CONFIG.read_text()), encoding="utf-8")
    script = tmp_path / "demo.sh"
    script.write_text(SCRIPT, encoding="utf-8")
    r = run_rtmux("run", str(config), "--icount", "--linux-script", str(script), timeout=TIMEOUT_S)
    why = r.describe()
    out = r.stdout
    assert r.returncode == 0 and "rtmux-linux: run: exit status 0" in out, why
    assert "@timeout" not in out and "[linux] @killed diod 42" in out, why
    # what the demo said, in this order
    said = [
        "demo: profile: 5 points, a 4000 ms cycle, from " + PROFILE,
        "demo: telemetry: a row a second appended to " + CSV,
        "demo: profile: 5 points, a 2600 ms cycle, from " + PROFILE,
        f"demo: set-point: {HOLD_MM * 1000} um",
        "demo: set-point: profile",
        "demo: telemetry: " + CSV + ": ",
        "demo: telemetry: " + CSV + " open again; ",
        f"demo: profile: {PROFILE} line 3: setpoint_mm is not a number of millimetres from -1000 to 1000: "
        "'900,x'; rejected, the profile read before stays",
        f"demo: profile: {PROFILE}: No such file or directory; square wave",
    ]
    at = 0
    for line in said:
        found = out.find("[rtos] " + line, at)
        assert found >= 0, f"{line!r} not said (in this order){why}"
        at = found
    # and nothing else about its files: one line each
    until_cat = out[: out.index("[linux] @csv-end-42\n")]  # then Linux powers off, the telemetry stops
    files_lines = re.findall(r"^\[rtos\] (demo: (?:profile|telemetry|Linux).*)$", until_cat, re.M)
    assert len(files_lines) == len([line for line in said if "set-point" not in line]), f"{files_lines}{why}"
    lost = re.search(r"open again; (\d+) rows kept meanwhile, (\d+) dropped$", files_lines[4])
    assert lost is not None and int(lost[1]) >= 1 and lost[2] == "0", why
    # the CSV as Linux's cat printed it
    begin = out.index("[linux] @csv-begin-42\n") + len("[linux] @csv-begin-42\n")
    lines = out[begin : out.index("[linux] @csv-end-42\n")].splitlines()
    text = "".join(line.removeprefix("[linux] ") + "\n" for line in lines if line.startswith("[linux] "))
    try:
        rows = demo_files.parse_telemetry(text)
    except demo_files.DemoFilesFormatError as e:
        pytest.fail(f"{e}{why}")
    # a row a second from the first, none lost (not while the file server was away either), time going up
    assert len(rows) >= 25 and rows[0].cycle == 1000, why
    assert [row.cycle for row in rows] == list(range(1000, 1000 * (len(rows) + 1), 1000)), why
    assert all(b.time_ms - a.time_ms == 1000 for a, b in zip(rows, rows[1:], strict=False)), why
    # each row is the second the console reported
    reports = {d.cycles: d for d in demo_reports(out)}
    for row in rows:
        report = reports[row.cycle]
        assert (row.overruns, row.worst_ns) == (report.overruns, round(report.worst_us * 1000)), f"{row}{why}"
    assert rows[-1].overruns == 0, why
    # the sources: the square wave until Linux's files came, the example, the test's profile, the hold,
    # the test's profile again (through the server's restart and the malformed file), the square wave
    runs = _runs(rows)
    assert [s for s, _ in runs] == ["square", "profile", "setpoint", "profile", "square"], f"{runs}{why}"
    square, profile1, hold, profile2, square2 = (n for _, n in runs)
    assert hold >= 2 and profile2 >= 10 and square2 >= 2, f"{runs}{why}"
    # the first profile run: the example, then the test's (at least 5 rows); each set-point its profile's
    first = rows[square : square + profile1]
    switch = next((k for k in range(len(first)) if all(_follows(x, MINE) for x in first[k:])), len(first))
    assert switch >= 1 and all(_follows(x, EXAMPLE) for x in first[:switch]), f"{first}{why}"
    mine = first[switch:] + rows[square + profile1 : square + profile1 + hold + profile2]
    assert len(mine) >= 5 + hold + 10, why
    # the test's profile keeps time, under the hold too: 1000 ms further into its 2600 ms cycle each row
    assert all(
        b.profile_ms == ((a.profile_ms or 0) + 1000) % MINE[-1][0]
        for a, b in zip(mine, mine[1:], strict=False)
    ), f"{mine}{why}"
    for row in mine:
        if row.source == "profile":
            assert _follows(row, MINE), f"{row}{why}"
        else:
            assert row.setpoint_um == HOLD_MM * 1000, f"{row}{why}"
    held = rows[square + profile1 + hold - 1]
    assert abs(held.position_um - HOLD_MM * 1000) < 500, f"{held}{why}"  # the motor got there
    # the square wave before and after: its two values, no profile time
    for row in rows[:square] + rows[-square2:]:
        assert row.setpoint_um in (0, 10000) and row.profile_ms is None, f"{row}{why}"
    # the rtos: every second reported, its code intact, its CPU never entered by the hypervisor after
    # its start although its threads used Linux's files
    seconds = [d.t_s for d in demo_reports(out)]
    assert seconds == list(range(1, len(seconds) + 1)), why
    assert {d.checksum for d in demo_reports(out)} == {"unchanged"}, why
    untouched = console_script.rtos_cpu_untouched(out)
    assert untouched is None, f"{untouched}{why}"


def test_demo_bare_metal_says_it_has_no_linux_files(rtos_images: Path) -> None:
    argv = qemu.qemu_command(rtos.image_for("demo"), "", icount=True, qemu=qemu.find_qemu())
    script = console_script.Script([(r"^demo: t=3s .*\n", "")], linger_s=0.0)
    r = console_script.run(argv, 60, script)
    why = console_script.describe(r, script)
    assert script.finished, why
    out = r.console
    assert (
        "demo: Linux offers no files (bare metal, or no [services] directory): square wave, no telemetry file"
        in out.splitlines()
    ), why
    assert not re.search(r"^demo: (profile|telemetry)", out, re.M), why
    reports = demo_reports(out, tag=None)
    assert [d.t_s for d in reports] == [1, 2, 3] and all(d.overruns == 0 for d in reports), why
    assert re.search(r"^demo: t=2s .* set-point 10 mm, ", out, re.M), why  # the square wave
