"""Linux's services from rtos threads, in the whole system (issue 25): an rtos application built with the
SDK (tests/linuxsvc/NAME.c) in the default system's rtos partition, Linux running a boot-time script
(QEMU icount, no network device; each run with a timeout, the console shown when it fails).

- files: 1 B to 1 MiB written by the rtos, checked by Linux's md5sum against the pattern; six threads
  at once; a listing, stdio, rename, unlink, rmdir; errors (ENOENT, EACCES, EISDIR, ENOTDIR, EEXIST,
  ENOTEMPTY, ENOSPC on a 64 KiB tmpfs exported too); diod killed under three reading threads: their
  calls fail, then work again with the server the supervisor starts; stdout copied to Linux's
  /var/log/rtos.log.
- hostile: rtmux-hostile9p in diod's place answers every request with a misbehaviour; the rtos's calls
  fail, its guarded buffers and code stay intact, the refusals are counted, and it recovers.
- reboot: Linux reboots under the rtos's calls; they fail (EIO, EBADF, ENOTCONN) and work again after
  Linux's second boot.
- sockets: an rtos TCP client of Linux's echo server (busybox nc), an rtos TCP server Linux's nc
  reaches, UDP between two rtos sockets through Linux's loopback, a file read
  from an rtos TFTP server by busybox tftp, poll().
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rtmux import paths, sdk
from rtmux.bench import linux_script
from tests.system import console_script

pytestmark = pytest.mark.system

TIMEOUT_S = 420
APPS = paths.BUILD_DIR / "linuxsvc"


def _pattern(n: int, seed: int) -> bytes:
    """tests/linuxsvc/files.c's pattern()."""
    return bytes((i * 131 + seed * 7 + (i >> 9)) & 0xFF for i in range(n))


def _config(tmp_path: Path, app: str, extra: str) -> Path:
    """The default system (without its network) with the application in the rtos partition, and
    `extra` appended (more of [services])."""
    image = APPS / f"{app}.img"
    assert image.is_file(), f"{image} missing: make linuxsvc-tests"
    config = tmp_path / f"{app}.toml"
    config.write_text(linux_script.without_devices(sdk.system_config(image, app)) + extra, encoding="utf-8")
    return config


def _run(run_rtmux: Callable[..., Any], tmp_path: Path, app: str, script: str, extra: str = "") -> Any:
    script_file = tmp_path / f"{app}.sh"
    script_file.write_text(script, encoding="utf-8")
    config = _config(tmp_path, app, extra)
    return run_rtmux("run", str(config), "--icount", "--linux-script", str(script_file), timeout=TIMEOUT_S)


# A second export for ENOSPC: Linux's script mounts a 64 KiB tmpfs there, and the next diod serves it
# (diod does not walk into a file system mounted below an export, so it is an export of its own).
SMALL_EXPORT = """
[[services.dir]]
path = "/srv/small"
"""


WAIT_FOR = console_script.WAIT_FOR

FILES_SCRIPT = (
    WAIT_FOR
    + r"""
wait_for /run/rtmux/diod.pid 300
mkdir -p /srv/small
mount -t tmpfs -o size=64k tmpfs /srv/small
# diod binds its exports when it starts: the next one (the supervisor's, 1 s on) serves the tmpfs
read -r pid </run/rtmux/diod.pid && kill -9 "$pid"
sleep 2
read -r up _ </proc/uptime
echo "@ready-at $up"
touch /srv/rtos/ready
wait_for /srv/rtos/done 3000
cd /srv/rtos
for f in size-*.bin t*.bin; do echo "@md5 $(md5sum $f)"; done
sed 's/^/@stdio /' stdio.txt
read -r pid </run/rtmux/diod.pid
echo "@kill diod $pid"
kill -9 "$pid"
wait_for /srv/rtos/done2 3000
grep -c 'diod: started' /run/rtmux/services.log | sed 's/^/@diod-starts /'
sed 's/^/@log /' /var/log/rtos.log
sed -n 's/^\[\([0-9.]*\)\] log-reader: /@log-reader \1 /p' /run/rtmux/services.log
echo "@end-$((6 * 7))"
"""
)


def test_files_from_rtos_threads(run_rtmux: Callable[..., Any], tmp_path: Path) -> None:
    r = _run(run_rtmux, tmp_path, "files", FILES_SCRIPT, SMALL_EXPORT)
    why = r.describe()
    out = r.stdout
    assert r.returncode == 0, why
    assert "@end-42" in out, why
    assert "[rtos] linux files: " in out and re.search(r"linux files: \d+ passed, 0 failed", out), why
    assert "[rtos] FAIL" not in out, why
    # the supervisor's set-up (diod's root, the log's folder) was done before the ready line
    assert "not ready after" not in out and "rtmux-linux: ready:" in out, why
    # every file the rtos wrote has, in Linux, the bytes of its pattern
    wrote = re.findall(r"^\[rtos\] FILES\| wrote (\S+) (\d+) (\d+)$", out, re.M)
    assert len(wrote) == 13, why
    md5 = dict(
        (name, digest) for digest, name in re.findall(r"^\[linux\] @md5 ([0-9a-f]{32})  (\S+)$", out, re.M)
    )
    for name, size, seed in wrote:
        assert md5.get(name) == hashlib.md5(_pattern(int(size), int(seed))).hexdigest(), f"{name}\n{why}"
    stdio = re.findall(r"^\[linux\] @stdio (.*)$", out, re.M)
    assert stdio == [f"line {i} of 5: {i * 1.5:.3f}" for i in range(5)], why
    assert "[rtos] FILES| listed list 30" in out, why
    assert "[rtos] FILES| errors checked" in out, why
    # the server killed: calls failed and worked again with the next diod
    m = re.search(
        r"FILES\| server restart: lost (\d+) sessions (\d+), errors EIO (\d+) EBADF (\d+) "
        r"ENOTCONN (\d+), reads after (\d+)",
        out,
    )
    assert m, why
    lost, sessions, eio, ebadf, enotconn, after = map(int, m.groups())
    assert lost >= 1 and sessions >= 2 and eio + ebadf + enotconn > 0 and after > 0, why
    starts = re.search(r"^\[linux\] @diod-starts (\d+)$", out, re.M)
    assert starts and int(starts[1]) >= 2, why
    # stdout went to Linux's log as well as to the console
    log = re.findall(r"^\[linux\] @log (.*)$", out, re.M)
    assert "FILES| listed list 30" in log and "FILES| errors checked" in log, why
    # its reader waited for the rtos to open rtmux-log (at its first line, once `ready` was there), then
    # started right after (and ended when the rtos powered off at the application's end, closing it)
    reader = re.findall(r"^\[linux\] @log-reader (\S+) (.*)$", out, re.M)
    assert [what.split(" (")[0] for _, what in reader[:2]] == [
        "waiting for the rtos to open /dev/virtio-ports/rtmux-log",
        "started",
    ], why
    ready_at = re.search(r"^\[linux\] @ready-at (\S+)$", out, re.M)
    assert ready_at and 0 <= float(reader[1][0]) - float(ready_at[1]) <= 1.0, why


HOSTILE_SCRIPT = (
    WAIT_FOR
    + r"""
mkdir -p /srv/rtos
touch /srv/rtos/ready
wait_for /srv/rtos/hostile-go 1200
# the supervisor and its diod out of the way: the hostile server takes the port
for p in /proc/[0-9]*; do
    case "$(tr '\0' ' ' <$p/cmdline 2>/dev/null)" in *rtmux-services*) kill -9 ${p#/proc/} ;; esac
done
read -r pid </run/rtmux/diod.pid && kill -9 "$pid"
sleep 1
rtmux-hostile9p rtmux-files -n 150 | sed 's/^/@/'
echo -n recovered-42 >/srv/rtos/after.txt
/sbin/rtmux-services </dev/null >/dev/null 2>&1 &
wait_for /srv/rtos/hostile-done 3000
echo "@end-$((6 * 7))"
"""
)


def test_hostile_linux_side(run_rtmux: Callable[..., Any], tmp_path: Path) -> None:
    r = _run(run_rtmux, tmp_path, "hostile", HOSTILE_SCRIPT)
    why = r.describe()
    out = r.stdout
    assert r.returncode == 0, why
    assert "@end-42" in out, why
    assert re.search(r"linux hostile: \d+ passed, 0 failed", out), why
    m = re.search(
        r"HOSTILE\| calls (\d+) failed (\d+); bad_frames (\d+) unknown_tags (\d+) bad_replies (\d+)", out
    )
    assert m, why
    calls, failed, frames, tags, replies = map(int, m.groups())
    assert calls == 90 and failed > 0 and frames > 0 and tags > 0 and replies > 0, why
    assert "[rtos] HOSTILE| recovered 1" in out, why
    modes = dict(re.findall(r"^\[linux\] @rtmux-hostile9p: (\w+) (\d+)$", out, re.M))
    assert all(int(modes.get(k, "0")) > 0 for k in ("tag", "dup", "type", "short", "huge", "garbage")), why


REBOOT_SCRIPT = r"""
mkdir -p /srv/rtos
touch /srv/rtos/ready
i=0
while :; do
    if [ -e /srv/rtos/rebooted-ok ]; then echo "@second boot: rebooted-ok"; break; fi
    if [ -e /srv/rtos/done ]; then echo "@first boot: rebooting"; sync; reboot -f; fi
    usleep 100000
    i=$((i + 1))
    if [ $i -ge 3000 ]; then echo "@timeout"; exit 1; fi
done
echo "@end-$((6 * 7))"
"""


def test_linux_reboot_under_rtos_calls(run_rtmux: Callable[..., Any], tmp_path: Path) -> None:
    r = _run(run_rtmux, tmp_path, "reboot", REBOOT_SCRIPT)
    why = r.describe()
    out = r.stdout
    assert r.returncode == 0, why
    assert "@first boot: rebooting" in out and "@second boot: rebooted-ok" in out and "@end-42" in out, why
    assert re.search(r"linux reboot: \d+ passed, 0 failed", out), why
    m = re.search(
        r"REBOOT\| lost (\d+) sessions (\d+); EIO (\d+) EBADF (\d+) ENOTCONN (\d+) other (\d+); "
        r"calls after (\d+)",
        out,
    )
    assert m, why
    lost, sessions, eio, ebadf, enotconn, other, after = map(int, m.groups())
    assert lost >= 1 and sessions >= 1 and other == 0 and after > 0 and enotconn > 0, why


SOCKETS_SCRIPT = (
    WAIT_FOR
    + r"""
nc -ll -p 7000 -e /bin/cat &
mkdir -p /srv/rtos
touch /srv/rtos/ready
wait_for /srv/rtos/listening 1200
echo "hello-$((6 * 7))" | nc -w 10 127.0.0.1 7001 | sed 's/^/@reply /'
wait_for /srv/rtos/udp-listening 1200
cd /tmp && tftp -g -r greeting -l /tmp/greeting 127.0.0.1 7005 && sed 's/^/@tftp /' /tmp/greeting
wait_for /srv/rtos/sockets-done 1200
echo "@end-$((6 * 7))"
"""
)


def test_sockets_from_rtos_threads(run_rtmux: Callable[..., Any], tmp_path: Path) -> None:
    r = _run(run_rtmux, tmp_path, "sockets", SOCKETS_SCRIPT)
    why = r.describe()
    out = r.stdout
    assert r.returncode == 0 and "@end-42" in out, why
    assert re.search(r"linux sockets: \d+ passed, 0 failed", out), why
    assert "[rtos] SOCK| tcp echo 100000 bytes" in out, why
    assert "[rtos] SOCK| tcp server heard 9 bytes from 127.0.0.1" in out, why
    assert "[linux] @reply rtos-heard-9-bytes-from-127.0.0.1" in out, why
    assert "[rtos] SOCK| udp 20 datagrams" in out, why
    tftp = r"\[rtos\] SOCK\| udp: tftp read of greeting by 127\.0\.0\.1:\d+, acknowledged"
    assert re.search(tftp, out), why
    assert re.search(r"\[linux\] @tftp rtos-tftp-greeting-\d+-bytes-from-127\.0\.0\.1\n", out), why
