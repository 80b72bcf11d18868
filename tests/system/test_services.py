"""Linux's side of the services for rtos threads ([services]; guest/initramfs/services), booted in icount
mode with a boot-time script (--linux-script) that looks from Linux's side.

- The default system with its demo's files turned off (DEMO_WITHOUT_FILES): the demo then opens neither
  rtmux-files nor rtmux-log, so each start of diod and
  of the log reader waits (rtmux-portwait) for the rtos to open its end, and waits for good: diod never
  starts, nothing is started again, and the supervisor and its waiting processes take no CPU time to
  speak of. When the V-Bus device's driver is unbound and bound again (the reset of README), the waits on
  the old ports end and new ones wait on the new ports.
- An application that opens rtmux-files (tests/linuxsvc/files.c, `make linux-programs linuxsvc-tests`):
  diod starts at once, with its arguments, the port as fd 3, its mounts and its own root, and a new one
  comes about 1 s after it is killed; the log reader still waits, the application having printed
  nothing yet.
- What a 9P client of diod reaches in Linux (its confinement).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rtmux import paths, sdk
from rtmux.bench import linux_script
from rtmux.image import debian, initramfs
from rtmux.run import system

pytestmark = pytest.mark.system

TIMEOUT_S = 300
DIOD_ARGS = "/usr/sbin/diod -f -r 3 -w 3 -n -N -u 0 -L stderr"
FILES_PORT = "/dev/virtio-ports/rtmux-files"
LOG_PORT = "/dev/virtio-ports/rtmux-log"
LOG_LINE = re.compile(r"^\[(\d+\.\d+)\] (\S+): (.*)$")
PORT_NODE = re.compile(r"/dev/vport\d+p\d+")
GONE = "the port's device file has been removed (its device is gone)"  # rtmux-portwait's exit status 3
MEASURED_S = 5  # the quiet phase over which the waiting processes' CPU time is read
# The default system's rtos boot arguments with the demo's profile and telemetry files in Linux turned
# off (rtos/apps/demo): it then uses no service of Linux's.
DEMO_WITHOUT_FILES = "rtos=latmon=1 period_us=1000 profile=off telemetry_csv=off"

# Shell: wait up to $2 tenths of a second until the supervisor's log has at least $3 lines matching $1.
WAIT_LOG = r"""
log=/run/rtmux/services.log
wait_log() {
    i=0
    while [ "$(grep -c "$1" $log 2>/dev/null)" -lt "$3" ]; do
        usleep 100000
        i=$((i + 1))
        if [ $i -ge "$2" ]; then echo "@timeout waiting for $3 x '$1'"; break; fi
    done
}
"""

# Shell: the default system's services, waiting. `waits`: each rtmux-portwait, its parent (the start) and
# both's fd 3; `cpu`: one line per process of the supervisor (its shells, the starts among them) and per
# rtmux-portwait with its CPU ticks (utime + stime, /proc/PID/stat), its ns on a CPU (/proc/PID/schedstat)
# and its voluntary context switches, after the time (uptime).
DEMO = (
    WAIT_LOG
    + r"""
cpu() {
    read -r now _ </proc/uptime
    for p in $(pidof rtmux-services) $(pidof rtmux-portwait) $(pidof rtmux-netd); do
        set -- $(cat /proc/$p/stat)
        ticks=$((${14} + ${15}))
        read -r ns _ </proc/$p/schedstat
        sw=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/$p/status)
        echo "@cpu-$phase $now $p $(cat /proc/$p/comm) $ticks $ns $sw"
    done
}
waits() {
    for p in $(pidof rtmux-portwait); do
        set -- $(cat /proc/$p/stat)
        echo "@wait-$phase $p parent=$4 fd3=$(readlink /proc/$p/fd/3) parent-fd3=$(readlink /proc/$4/fd/3)"
    done
}
wait_log 'waiting for the rtos' 300 2
sleep 1
echo "@dirs $(cat /run/rtmux/files.dirs)"
[ -d /srv/rtos ] && echo "@srv-rtos is a directory"
[ -f /var/log/rtos.log ] || echo "@no rtos.log yet"
echo "@pids $(cat /run/rtmux/diod.pid) $(cat /run/rtmux/log-reader.pid)"
phase=first
waits
cpu
sleep MEASURED
phase=later
cpu
echo "@diod-processes $(pidof diod)"
echo "@pids-later $(cat /run/rtmux/diod.pid) $(cat /run/rtmux/log-reader.pid)"
# the V-Bus device's driver unbound and bound again: the ports go, new ones come
p=$(basename $(readlink -f /sys/bus/virtio/drivers/virtio_console/virtio*/..))
echo $p >/sys/bus/platform/drivers/virtio-mmio/unbind
echo $p >/sys/bus/platform/drivers/virtio-mmio/bind
wait_log 'waiting for the rtos' 300 4
sleep 1
phase=rebound
waits
echo @services-log
cat $log
echo @end
""".replace("MEASURED", str(MEASURED_S))
)


def marked(out: str, key: str) -> list[str]:
    """The values the script printed after @KEY (KEY alone, or followed by a space)."""
    return re.findall(rf"^\[linux\] @{re.escape(key)}(?: (.*))?$", out, re.M)


def services_log(out: str) -> list[tuple[float, str, str]]:
    """(time, who, what) of the supervisor's log as the script printed it."""
    block = out[out.index("[linux] @services-log\n") : out.index("[linux] @end\n")]
    lines = [line.removeprefix("[linux] ") for line in block.splitlines()[1:]]
    return [(float(m[1]), m[2], m[3]) for line in lines if (m := LOG_LINE.match(line))]


def console_is_quiet(out: str) -> bool:
    """Nothing of the supervisor reached the console but what the script printed."""
    printed = out[out.index("[linux] @services-log\n") : out.index("[linux] @end\n")]
    return not re.search(r"\[\d+\.\d+\] (diod|log-reader|files|log|services): ", out.replace(printed, ""))


def cpu_table(out: str, phase: str) -> tuple[float, dict[int, tuple[str, int, int, int]]]:
    """The script's @cpu-PHASE lines: their time, and pid -> (name, ticks, ns, voluntary switches)."""
    rows = [line.split() for line in marked(out, f"cpu-{phase}")]
    return float(rows[0][0]), {int(r[1]): (r[2], int(r[3]), int(r[4]), int(r[5])) for r in rows}


def test_without_the_rtos_the_services_wait_at_no_cost(run_rtmux: Callable[..., Any], tmp_path: Path) -> None:
    """The default system (its demo's files off: it opens neither channel): one start of each service,
    waiting; no diod, no start again, no CPU time taken while it waits; the waits follow the ports across
    a rebind."""
    script = tmp_path / "demo.sh"
    script.write_text(DEMO)
    r = run_rtmux(
        "run",
        str(system.DEFAULT_CONFIG),
        "--icount",
        "--linux-script",
        str(script),
        "--bootargs",
        DEMO_WITHOUT_FILES,
        timeout=TIMEOUT_S,
    )
    out = r.stdout
    why = r.describe()
    assert r.returncode == 0 and "rtmux-linux: run: exit status 0" in out, why
    assert not marked(out, "timeout"), why
    assert marked(out, "dirs") == ["/srv/rtos rw"], why
    assert marked(out, "srv-rtos is a directory"), why
    assert marked(out, "no rtos.log yet"), why  # no log reader has run: the file is cat's to make
    # one start each, waiting: the start's shell holds the port as fd 3 and runs rtmux-portwait on it
    diod, reader = (int(p) for p in marked(out, "pids")[0].split())
    waits = [w.split() for w in marked(out, "wait-first")]
    assert sorted(int(w[1].removeprefix("parent=")) for w in waits) == sorted([diod, reader]), why
    for w in waits:
        assert PORT_NODE.fullmatch(w[2].removeprefix("fd3=")), why
        assert w[2].removeprefix("fd3=") == w[3].removeprefix("parent-fd3="), why
    assert marked(out, "pids-later") == marked(out, "pids"), why  # the same starts, still waiting
    assert marked(out, "diod-processes") == [""], why
    # no CPU time to speak of over MEASURED_S s: the supervisor's shells none at all, each
    # rtmux-portwait a look every 100 ms
    t0, first = cpu_table(out, "first")
    t1, later = cpu_table(out, "later")
    assert t1 - t0 >= MEASURED_S and set(first) == set(later), why
    names = sorted(name for name, *_ in first.values())
    # the files' and the log's waits, rtmux-netd waiting by itself in the same way (it polls the port
    # too), and the supervisor's shells: its own, one loop per service and the two waiting starts
    assert names == ["rtmux-netd"] + ["rtmux-portwait"] * 2 + ["rtmux-services"] * 6, why
    for pid, (name, ticks, ns, switches) in later.items():
        _, ticks0, ns0, switches0 = first[pid]
        if name == "rtmux-services":
            assert (ticks, ns, switches) == (ticks0, ns0, switches0), why
        else:
            assert ticks - ticks0 <= 1, why
            assert ns - ns0 < 0.001 * (t1 - t0) * 1e9, why  # below 0.1% of a CPU
            assert (switches - switches0) / (t1 - t0) < 12, why  # ten looks a second
    # the log: for each service its wait, once; nothing started, nothing ended before the rebind
    log = services_log(out)
    before = [(who, what) for t, who, what in log if t < t1]
    assert [what for who, what in before if who == "diod"] == [
        f"waiting for the rtos to open {FILES_PORT} (pid {diod})"
    ], why
    assert [what for who, what in before if who == "log-reader"] == [
        f"waiting for the rtos to open {LOG_PORT} (pid {reader})"
    ], why
    # the rebind: each wait saw its port go (rtmux-portwait's status 3) and a new one waits on a new port
    for who, pid in (("diod", diod), ("log-reader", reader)):
        ended = [what for t, w, what in log if w == who and what.startswith(f"pid {pid} ended")]
        assert len(ended) == 1 and ended[0].startswith(f"pid {pid} ended (exit status 3)"), why
        gone = [what for _, w, what in log if w == who and what.startswith("rtmux-portwait")]
        assert gone == [f"rtmux-portwait: fd 3: {GONE}"], why
    # new starts, waiting on the new ports: a live device file each (one removed reads "... (deleted)")
    rebound = marked(out, "wait-rebound")
    assert len(rebound) == 2, why
    for line in rebound:
        m = re.fullmatch(r"(\d+) parent=(\d+) fd3=(/dev/vport\d+p\d+) parent-fd3=(\S+)", line)
        assert m is not None and m[3] == m[4] and int(m[2]) not in (diod, reader), why
    assert not [what for _, who, what in log if who in ("diod", "log-reader") and "started" in what], why
    assert console_is_quiet(out), why


# Shell: with an application that has rtmux-files open, diod starts at once; a look at it, then at the log
# reader (still waiting), then diod killed and its successor.
FILES = (
    WAIT_LOG
    + r"""
wait_comm() {
    i=0
    until [ "$(cat /proc/$1/comm 2>/dev/null)" = "$2" ] || [ $i -ge 50 ]; do
        usleep 100000
        i=$((i + 1))
    done
}
wait_log 'diod: started' 300 1
read -r pid </run/rtmux/diod.pid
wait_comm $pid diod
echo "@diod pid=$pid comm=$(cat /proc/$pid/comm)"
echo "@args $(tr '\0' ' ' </proc/$pid/cmdline)"
echo "@fd3 $(readlink /proc/$pid/fd/3)"
echo "@port $(readlink -f /dev/virtio-ports/rtmux-files)"
sed 's/^/@mount /' /proc/$pid/mountinfo
ls /proc/$pid/root/ | tr '\n' ' ' | sed 's/^/@root /'; echo
read -r lpid </run/rtmux/log-reader.pid
echo "@log-reader pid=$lpid comm=$(cat /proc/$lpid/comm) fd3=$(readlink /proc/$lpid/fd/3)"
echo "@portwait $(pidof rtmux-portwait)"
read -r up _ </proc/uptime
echo "@kill $up"
kill -9 $pid
wait_log 'diod: started' 50 2
read -r pid2 </run/rtmux/diod.pid
wait_comm $pid2 diod
echo "@diod2 pid=$pid2 comm=$(cat /proc/$pid2/comm) fd3=$(readlink /proc/$pid2/fd/3)"
echo @services-log
cat $log
echo @end
"""
)


def test_diod_starts_once_the_rtos_has_its_end_open(run_rtmux: Callable[..., Any], tmp_path: Path) -> None:
    """files.img in the rtos partition opens rtmux-files at its first call: diod starts at once, with the
    configured export, in its own root, on the rtmux-files port; a new one is there about 1 s after it is
    killed. The application has printed nothing, so the log reader is still waiting."""
    image = paths.BUILD_DIR / "linuxsvc" / "files.img"
    assert image.is_file(), f"{image} missing: make linuxsvc-tests"
    config = tmp_path / "files.toml"
    config.write_text(linux_script.without_devices(sdk.system_config(image, "files")), encoding="utf-8")
    script = tmp_path / "files.sh"
    script.write_text(FILES)
    r = run_rtmux("run", str(config), "--icount", "--linux-script", str(script), timeout=TIMEOUT_S)
    out = r.stdout
    why = r.describe()
    assert r.returncode == 0 and "rtmux-linux: run: exit status 0" in out, why
    assert not marked(out, "timeout"), why
    pid = re.fullmatch(r"pid=(\d+) comm=diod", marked(out, "diod")[0])
    assert pid is not None, why
    assert marked(out, "args") == [f"{DIOD_ARGS} -e /srv/rtos "], why
    # fd 3: the port, the one the start opened and waited on
    port = marked(out, "port")[0]
    assert PORT_NODE.fullmatch(port) and marked(out, "fd3") == [port], why
    # its root: diod's files and the export, nothing else of Linux; the export's bind without set-user-ID
    # programs or devices, the rest read-only
    assert marked(out, "root")[0].split() == ["etc", "lib", "srv", "usr"], why
    mounts = {m.split()[4]: m.split()[5].split(",") for m in marked(out, "mount")}
    assert set(mounts) == {"/", "/srv/rtos"}, why
    assert mounts["/"][0] == "ro", why
    assert mounts["/srv/rtos"][0] == "rw" and {"nosuid", "nodev"} <= set(mounts["/srv/rtos"]), why
    # the start: its wait, then diod at once (the rtos opened its end before Linux booted)
    log = services_log(out)
    diod_lines = [(t, what) for t, who, what in log if who == "diod"]
    assert diod_lines[0][1] == f"waiting for the rtos to open {FILES_PORT} (pid {pid[1]})", why
    started = re.fullmatch(
        rf"started \(pid {pid[1]}\): the rtos opened {re.escape(FILES_PORT)} after (\d+\.\d+) s",
        diod_lines[1][1],
    )
    assert started is not None and float(started[1]) <= 0.2, why
    # killed: the supervisor says how it ended and starts the next one about a second later, on the port
    killed = [t for t, what in diod_lines if what.startswith(f"pid {pid[1]} ended (killed by signal 9)")]
    assert len(killed) == 1 and float(marked(out, "kill")[0]) <= killed[0] + 0.1, why
    after = [t for t, what in diod_lines if what.startswith("started") and t >= killed[0]]
    assert len(after) == 1 and after[0] - killed[0] <= 2.0, why
    second = re.fullmatch(r"pid=(\d+) comm=diod fd3=(\S+)", marked(out, "diod2")[0])
    assert second is not None and second[1] != pid[1] and second[2] == port, why
    # the log reader: waiting for the rtos to open rtmux-log, the port as fd 3, its rtmux-portwait alone
    reader = re.fullmatch(
        r"pid=(\d+) comm=rtmux-services fd3=(/dev/vport\d+p\d+)", marked(out, "log-reader")[0]
    )
    assert reader is not None and len(marked(out, "portwait")[0].split()) == 1, why
    assert [what for _, who, what in log if who == "log-reader"] == [
        f"waiting for the rtos to open {LOG_PORT} (pid {reader[1]})"
    ], why
    assert console_is_quiet(out), why


# The default system's services with a read-only directory and the log to syslog.
CONFINED = """
[services]
log = "syslog"

[[services.dir]]
path = "/srv/rtos"

[[services.dir]]
path = "/etc/rtos"
read_only = true
"""

# Shell: what a client of diod reaches. Linux's own files (a secret in /root, a link to / and a device
# node in the export), then diod's start as the supervisor makes it (rtmux-services --diod, fd 3) on each
# connection to a local TCP port instead of the channel, and diod's own clients (diodcat, diodls) trying
# to get out: every answer printed on one line (@NAME ...).
PROBES = r"""
ask() {
    name=$1
    shift
    echo "@$name $("$@" 2>&1 | head -c 300 | tr '\n\0' '  ')"
}
S="-s 127.0.0.1:5640 -t 20"
ask inside diodcat $S -a /srv/rtos in.txt
ask read-only diodcat $S -a /etc/rtos ro.txt
ask walk-up diodcat $S -a /srv/rtos ../../root/secret.txt
ask walk-up-list diodls $S -a /srv/rtos ../..
ask walk-up-etc diodcat $S -a /srv/rtos ../../etc/passwd
ask attach-root diodls $S -a / .
ask attach-other diodcat $S -a /root secret.txt
ask attach-dotdot diodcat $S -a /srv/rtos/../../root secret.txt
ask attach-ctl diodcat $S -a ctl exports
ask attach-link diodls $S -a /srv/rtos/rootlink root
ask walk-link diodls $S -a /srv/rtos rootlink/root
ask uid-1000 diodcat $S -u 1000 -a /srv/rtos in.txt
ask device diodcat $S -a /srv/rtos zero
"""


def test_diod_is_confined_to_the_exports(run_rtmux: Callable[..., Any], tmp_path: Path) -> None:
    """What a 9P client of the files service reaches in Linux (Debian's diodcat and diodls, from the
    diod package, run in the guest): the exports and nothing else. Walks of `..` out of an export, an
    attach with another name, through a link to / or as another uid find nothing of Linux; a device
    node in an export opens nothing; the read-only directory is bound read-only."""
    guest = initramfs.build("std")
    del guest  # the package cache holds diod's tree now
    diod = debian.cached("diod")
    assert diod is not None
    tools = ""
    for name in ("diodcat", "diodls"):
        data = base64.encodebytes((diod.root / "usr" / "sbin" / name).read_bytes()).decode()
        tools += f"base64 -d >/usr/bin/{name} <<'EOF'\n{data}EOF\nchmod 755 /usr/bin/{name}\n"
    # diod's start on a connection kept open without a word: its mounts (the demo, its files off, never opens
    # rtmux-files, so the only diod)
    setup = r"""
mkdir -p /srv/rtos /etc/rtos
echo SECRET >/root/secret.txt
echo inside >/srv/rtos/in.txt
echo read-only >/etc/rtos/ro.txt
ln -s / /srv/rtos/rootlink
mknod /srv/rtos/zero c 1 5
wait_log 'log-reader: waiting for the rtos' 200 1
echo "@syslogd $(pidof syslogd)"
grep -q 'log: started syslogd' /run/rtmux/services.log && echo "@syslogd started by the supervisor"
cat >/tmp/serve <<'SERVE'
#!/bin/sh
exec unshare -m --propagation private /sbin/rtmux-services --diod 3<&0 2>>/tmp/serve.log
SERVE
chmod 755 /tmp/serve
nc -ll -p 5640 -e /tmp/serve &
usleep 500000
echo "@supervisor's diod: $(pidof diod)"
sleep 60 | nc 127.0.0.1 5640 >/dev/null &
i=0
until pid=$(pidof diod) || [ $i -ge 100 ]; do usleep 100000; i=$((i + 1)); done
sed 's/^/@mount /' /proc/$pid/mountinfo
kill $!
"""
    config = tmp_path / "confined.toml"
    config.write_text(system.DEFAULT_CONFIG.read_text().split("\n[services]", 1)[0] + CONFINED)
    script = tmp_path / "confined.sh"
    script.write_text(tools + WAIT_LOG + setup + PROBES)
    r = run_rtmux(
        "run",
        str(config),
        "--icount",
        "--linux-script",
        str(script),
        "--bootargs",
        DEMO_WITHOUT_FILES,
        timeout=TIMEOUT_S,
    )
    out = r.stdout
    why = r.describe()
    assert r.returncode == 0 and "rtmux-linux: run: exit status 0" in out, why
    assert not marked(out, "timeout"), why
    answer = {name: marked(out, name)[0] for name in re.findall(r"^ask (\S+) ", PROBES, re.M)}
    assert answer["inside"].strip() == "inside", why
    assert answer["read-only"].strip() == "read-only", why
    # out of the export by `..`: diod's root holds nothing of Linux's (and diod does not walk on from a
    # mount point's parent: the walk ends there)
    for probe in ("walk-up", "walk-up-list", "walk-up-etc"):
        assert "No such file or directory" in answer[probe], why
    # other anames, a link to /, another uid: refused, or diod's root
    for probe in ("attach-root", "attach-other", "attach-dotdot", "attach-ctl", "uid-1000"):
        assert "Operation not permitted" in answer[probe], why
    # the link to / leads to diod's root, which has no /root (diod alone lists Linux's /root there)
    assert "No such file or directory" in answer["attach-link"], why
    assert "No such file or directory" in answer["walk-link"], why
    assert "Permission denied" in answer["device"], why  # nodev
    assert "SECRET" not in out.replace("echo SECRET", ""), why
    # diod's start binds both exports, the read-only one read-only
    assert marked(out, "supervisor's diod:") == [""], why
    mounts = {m.split()[4]: m.split()[5].split(",") for m in marked(out, "mount")}
    assert mounts["/etc/rtos"][0] == "ro" and mounts["/srv/rtos"][0] == "rw", why
    assert {"nosuid", "nodev"} <= set(mounts["/etc/rtos"]) & set(mounts["/srv/rtos"]), why
    # the log goes to syslog: the supervisor started syslogd, though no reader has started yet
    assert marked(out, "syslogd")[0].strip().isdigit(), why
    assert marked(out, "syslogd started by the supervisor"), why
