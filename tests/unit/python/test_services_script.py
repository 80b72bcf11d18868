"""guest/initramfs/services (/sbin/rtmux-services in the initramfs): what it reads from the kernel command
line the tools write (rtmux.config.model.Services.linux_bootargs) and the diod command line it makes of
it, run by the host's sh in its --plan mode (RTMUX_CMDLINE: the command line's file). Its supervision
runs in the guest: tests/system/test_services.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from rtmux import config, paths

SCRIPT = paths.GUEST_DIR / "initramfs" / "services"
DIOD = "diod -f -r 3 -w 3 -n -N -u 0 -L stderr"


def plan(tmp_path: Path, cmdline: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "cmdline"
    path.write_text(cmdline + "\n")
    env = {"PATH": os.environ["PATH"], "RTMUX_CMDLINE": str(path)}
    return subprocess.run(
        ["sh", str(SCRIPT), "--plan"], env=env, capture_output=True, text=True, timeout=30, check=False
    )


def test_reads_what_the_tools_write(tmp_path: Path) -> None:
    services = config.Services(
        (config.ServiceDir("/srv/rtos"), config.ServiceDir("/etc/rtos", True), config.ServiceDir("/a-b_c.d")),
        "file:/var/log/rtos.log",
    )
    proc = plan(tmp_path, "console=ttyAMA0 " + config.linux_bootargs("quiet", services) + " rtmux.run=/x")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.splitlines() == [
        "/srv/rtos rw",
        "/etc/rtos ro",
        "/a-b_c.d rw",
        "log file:/var/log/rtos.log",
        f"{DIOD} -e /srv/rtos -e /etc/rtos -e /a-b_c.d",  # read-only: diod's root binds it read-only
    ]
    only_log = config.Services(log="syslog")
    proc = plan(tmp_path, config.linux_bootargs("console=ttyAMA0", only_log))
    assert proc.stdout.splitlines() == ["log syslog", DIOD]


def test_leaves_out_what_is_not_a_directory_path(tmp_path: Path) -> None:
    """The tools never write these (config/services.py refuses them); the script does not trust that."""
    proc = plan(tmp_path, "rtmux.files=/ok,relative,/,/a//b,/x/../y,/z/./w,/t/,/ro:ro")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["/ok rw", "/ro ro", f"{DIOD} -e /ok -e /ro"]
    assert proc.stderr.splitlines() == [
        f"files: '{bad}' is not a directory's path"
        for bad in ("relative", "/", "/a//b", "/x/../y", "/z/./w", "/t/")
    ]
