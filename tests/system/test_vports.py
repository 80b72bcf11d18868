"""The Linux side of the V-Bus without the hypervisor's device: Debian's kernel booted bare with QEMU's
own virtio console (virtio-serial-device, MULTIPORT, over virtio-mmio, as the V-Bus device is) and three
ports, so that the initramfs' part is checked against the stock kernel: the modules load, every named
port gets /dev/virtio-ports/NAME (guest/initramfs/vports) by the ready line and an unnamed one none, a
uevent brings a removed link back (the uevent helper /init starts), and rtmux-ping (the
static arm64 build) passes its round trips and its bulk mode through a real port whose far side is an
echo on the host (a Unix socket QEMU connects to).
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rtmux.image import initramfs
from rtmux.run import linux

pytestmark = pytest.mark.system

RUN_TIMEOUT_S = 300
RTT = re.compile(r"^rtt_us min=\S+ avg=\S+ p99=\S+ max=\S+ n=(\d+)$", re.M)
THROUGHPUT = re.compile(r"^throughput_MBps tx=(\S+) rx=(\S+)$", re.M)


@pytest.fixture
def echo_socket(tmp_path: Path) -> Iterator[Path]:
    """A Unix socket that echoes what its one client (QEMU's chardev) sends."""
    path = tmp_path / "echo.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    server.settimeout(RUN_TIMEOUT_S)

    def serve() -> None:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path
    server.close()
    thread.join(timeout=10)


def test_named_ports_and_rtmux_ping_on_the_stock_kernel(echo_socket: Path) -> None:
    guest = initramfs.build("std")
    argv = linux.boot_argv(guest, smp=1, memory="512M", icount=False, append="")
    argv += [
        "-chardev", f"socket,id=echo0,path={echo_socket}",
        "-chardev", "null,id=null0",
        "-chardev", "null,id=null1",
        "-device", "virtio-serial-device,max_ports=4",
        "-device", "virtserialport,chardev=echo0,name=echo",
        "-device", "virtserialport,chardev=null0,name=telemetry",
        "-device", "virtserialport,chardev=null1",
    ]  # fmt: skip
    command = (
        "ls /sys/class/virtio-ports; ls /dev/virtio-ports; "
        "for p in /dev/virtio-ports/*; do echo link $p $(readlink $p); done; "
        # a uevent alone brings a removed link back (busybox uevent runs rtmux-vports)
        "rm /dev/virtio-ports/echo; for d in /sys/class/virtio-ports/*; do echo change > $d/uevent; done; "
        "sleep 1; echo relinked $(readlink /dev/virtio-ports/echo); "
        "rtmux-ping echo -n 200 -s 64 && rtmux-ping echo -n 10 -s 65536 && rtmux-ping echo --bulk -t 2"
    )
    run = linux.run_command(argv, command, timeout_s=RUN_TIMEOUT_S)
    out = run.output or ""
    assert run.status == 0, f"status {run.status}\n{run.result.console[-6000:]}"
    assert "V-Bus ports: echo telemetry" in run.result.console  # the ready line: linked by then
    links = dict(re.findall(r"^link /dev/virtio-ports/(\S+) (\S+)$", out, re.M))
    assert set(links) == {"echo", "telemetry"}  # the unnamed port has none
    assert all(re.fullmatch(r"\.\./vport\d+p\d+", target) for target in links.values()), links
    assert re.search(r"^relinked \.\./vport\d+p\d+$", out, re.M), out
    assert [int(n) for n in RTT.findall(out)] == [200, 10]
    m = THROUGHPUT.search(out)
    assert m and float(m[1]) > 0 and float(m[2]) > 0, out
