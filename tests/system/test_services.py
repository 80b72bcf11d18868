"""Linux's side of the services for rtos threads ([services]; guest/initramfs/services): the default system
booted in icount mode with a boot-time script (--linux-script) that looks from Linux's side. The rtos's
demo opens neither rtmux-files nor rtmux-log, so their ports read end of file: diod and the log reader end
at once and are started again every second, which the supervisor's log says and the console must not.

diod lives a few milliseconds each time; the script catches one (the supervisor's pid file names the
process that becomes diod), stops it with SIGSTOP to look at it, then kills it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rtmux.image import debian, initramfs
from rtmux.run import system

pytestmark = pytest.mark.system

TIMEOUT_S = 300
DIOD_ARGS = "/usr/sbin/diod -f -r 3 -w 3 -n -N -u 0 -L stderr"
LOG_LINE = re.compile(r"^\[(\d+\.\d+)\] (\S+): (.*)$")

# Shell: catch the supervisor's diod alive and stop it (SIGSTOP); $pid is its PID, empty if none came
# within the loop. A process that ended between the look and the signal is a zombie (state Z), not T.
CATCH_DIOD = r"""
catch_diod() {
    pid=
    i=0
    while [ $i -lt 400000 ]; do
        i=$((i + 1))
        read -r p </run/rtmux/diod.pid 2>/dev/null || continue
        read -r comm </proc/$p/comm 2>/dev/null || continue
        [ "$comm" = diod ] || continue
        kill -STOP $p 2>/dev/null || continue
        if [ "$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$p/status 2>/dev/null)" = T ]; then
            pid=$p
            return
        fi
    done
}
"""

SUPERVISION = (
    CATCH_DIOD
    + r"""
log=/run/rtmux/services.log
i=0
while [ "$(grep -c 'diod: started' $log 2>/dev/null)" -lt 2 ] && [ $i -lt 200 ]; do
    usleep 100000
    i=$((i + 1))
done
echo "@supervisor $(pidof rtmux-services)"
echo "@dirs $(cat /run/rtmux/files.dirs)"
[ -d /srv/rtos ] && echo "@srv-rtos is a directory"
catch_diod
echo "@diod pid=$pid"
echo "@args $(tr '\0' ' ' </proc/$pid/cmdline)"
echo "@fd3 $(readlink /proc/$pid/fd/3)"
sed 's/^/@mount /' /proc/$pid/mountinfo
ls /proc/$pid/root/ | tr '\n' ' ' | sed 's/^/@root /'; echo
read -r up _ </proc/uptime
echo "@kill $up"
kill -9 $pid
sleep 3
echo "@log-reader $(cat /run/rtmux/log-reader.pid)"
[ -f /var/log/rtos.log ] && echo "@rtos.log exists"
echo @services-log
cat $log
echo @end
"""
)


def marked(out: str, key: str) -> list[str]:
    return re.findall(rf"^\[linux\] @{re.escape(key)} ?(.*)$", out, re.M)


def services_log(out: str) -> list[tuple[float, str, str]]:
    """(time, who, what) of the supervisor's log as the script printed it."""
    block = out[out.index("[linux] @services-log\n") : out.index("[linux] @end\n")]
    lines = [line.removeprefix("[linux] ") for line in block.splitlines()[1:]]
    return [(float(m[1]), m[2], m[3]) for line in lines if (m := LOG_LINE.match(line))]


def test_supervisor_keeps_diod_and_the_log_reader(run_rtmux: Callable[..., Any], tmp_path: Path) -> None:
    """The supervisor runs; diod is started with the configured export (/srv/rtos, created), in its own
    root, on the rtmux-files port, and a new one is there about 1 s after it is killed; the log reader
    runs; none of it reaches the console."""
    script = tmp_path / "services.sh"
    script.write_text(SUPERVISION)
    r = run_rtmux(
        "run", str(system.DEFAULT_CONFIG), "--icount", "--linux-script", str(script), timeout=TIMEOUT_S
    )
    out = r.stdout
    why = r.describe()
    assert r.returncode == 0 and "rtmux-linux: run: exit status 0" in out, why
    assert marked(out, "supervisor")[0].split(), why  # its processes (the supervisor and its loops)
    assert marked(out, "dirs") == ["/srv/rtos rw"], why
    assert marked(out, "srv-rtos is a directory"), why
    pid = marked(out, "diod pid=")[0]
    assert pid.isdigit(), why
    assert marked(out, "args") == [f"{DIOD_ARGS} -e /srv/rtos "], why
    assert re.fullmatch(r"/dev/vport\d+p\d+", marked(out, "fd3")[0]), why
    # its root: diod's files and the export, nothing else of Linux; the export's bind without set-user-ID
    # programs or devices, the rest read-only
    assert marked(out, "root")[0].split() == ["etc", "lib", "srv", "usr"], why
    # its mount namespace's mounts, by mount point as its root shows them
    mounts = {m.split()[4]: m.split()[5].split(",") for m in marked(out, "mount")}
    assert set(mounts) == {"/", "/srv/rtos"}, why
    assert mounts["/"][0] == "ro", why
    assert mounts["/srv/rtos"][0] == "rw" and {"nosuid", "nodev"} <= set(mounts["/srv/rtos"]), why
    # killed: the supervisor says how it ended and starts the next one about a second later
    log = services_log(out)
    killed = [
        t
        for t, who, what in log
        if who == "diod" and what.startswith(f"pid {pid} ended (killed by signal 9)")
    ]
    assert len(killed) == 1, why
    after = [t for t, who, what in log if who == "diod" and what.startswith("started") and t >= killed[0]]
    assert after and after[0] - killed[0] <= 2.0, why
    assert float(marked(out, "kill")[0]) <= killed[0] + 0.1, why
    # every other diod ended by itself (end of file: the rtos has not opened rtmux-files), at most once a
    # second (no busy loop)
    starts = [t for t, who, what in log if who == "diod" and what.startswith("started")]
    assert len(starts) >= 3 and all(b - a >= 1.0 for a, b in zip(starts, starts[1:], strict=False)), why
    ends = [re.sub(r"^pid \d+ ended \((.*?)\).*$", r"\1", what) for _, who, what in log if who == "diod"]
    ends = [e for e in ends if not e.startswith("started")]
    assert ends.count("killed by signal 9") == 1 and ends.count("exit status 0") == len(ends) - 1, why
    # the log reader: cat of the rtmux-log port into /var/log/rtos.log, started again the same way
    readers = [what for _, who, what in log if who == "log-reader" and what.startswith("started")]
    assert len(readers) >= 3 and marked(out, "log-reader")[0].isdigit(), why
    assert marked(out, "rtos.log exists"), why
    # the console: nothing of the supervisor but what the script printed
    printed = out[out.index("[linux] @services-log\n") : out.index("[linux] @end\n")]
    assert not re.search(r"\[\d+\.\d+\] (diod|log-reader|files|log|services): ", out.replace(printed, "")), (
        why
    )


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
    setup = r"""
mkdir -p /srv/rtos /etc/rtos
echo SECRET >/root/secret.txt
echo inside >/srv/rtos/in.txt
echo read-only >/etc/rtos/ro.txt
ln -s / /srv/rtos/rootlink
mknod /srv/rtos/zero c 1 5
i=0
while [ "$(grep -c 'diod: started' /run/rtmux/services.log 2>/dev/null)" -lt 2 ] && [ $i -lt 200 ]; do
    usleep 100000
    i=$((i + 1))
done
catch_diod
sed 's/^/@mount /' /proc/$pid/mountinfo
kill -CONT $pid
echo "@syslogd $(pidof syslogd)"
grep -q 'log: started syslogd' /run/rtmux/services.log && echo "@syslogd started by the supervisor"
cat >/tmp/serve <<'SERVE'
#!/bin/sh
exec unshare -m --propagation private /sbin/rtmux-services --diod 3<&0 2>>/tmp/serve.log
SERVE
chmod 755 /tmp/serve
nc -ll -p 5640 -e /tmp/serve &
usleep 500000
"""
    config = tmp_path / "confined.toml"
    config.write_text(system.DEFAULT_CONFIG.read_text().split("\n[services]", 1)[0] + CONFINED)
    script = tmp_path / "confined.sh"
    script.write_text(tools + CATCH_DIOD + setup + PROBES)
    r = run_rtmux("run", str(config), "--icount", "--linux-script", str(script), timeout=TIMEOUT_S)
    out = r.stdout
    why = r.describe()
    assert r.returncode == 0 and "rtmux-linux: run: exit status 0" in out, why
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
    # the supervisor's diod: both exports bound, the read-only one read-only
    mounts = {m.split()[4]: m.split()[5].split(",") for m in marked(out, "mount")}
    assert mounts["/etc/rtos"][0] == "ro" and mounts["/srv/rtos"][0] == "rw", why
    # the log goes to syslog: the supervisor started syslogd
    assert marked(out, "syslogd")[0].strip().isdigit(), why
    assert marked(out, "syslogd started by the supervisor"), why
