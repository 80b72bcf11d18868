"""guest/rtmux-portwait (waits until the other side of a V-Bus port has its end open), built for the host
by `make linux-programs`. A V-Bus port polls POLLHUP while the rtos has its end closed, and stops when it
opens; the host has no such port, but a FIFO's read end behaves alike (POLLHUP once its writers have come
and gone, none once a writer opens it again), so these tests check the program's rules on a FIFO: it
waits while POLLHUP, returns soon after the other side opens, reads nothing, costs no CPU meanwhile,
ends when its file is removed or its caller dies. That the driver reports a closed rtos end the same way
is checked in Linux under rtmux (tests/system/test_services.py)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rtmux import paths

PROGRAM = paths.linux_program("rtmux-portwait", host=True)
TICKS = os.sysconf("SC_CLK_TCK")


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    proc = subprocess.run(
        ["make", "-s", "-C", str(paths.REPO_ROOT), str(PROGRAM.relative_to(paths.REPO_ROOT))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture
def closed_fifo(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A FIFO and a non-blocking read end of it whose writer has come, written `sent`, and gone: the
    read end polls POLLHUP (and POLLIN: the bytes wait there)."""
    path = tmp_path / "port"
    os.mkfifo(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(path, os.O_WRONLY)
    os.write(writer, b"sent")
    os.close(writer)
    p = select.poll()
    p.register(fd, 0)
    assert p.poll(0) == [(fd, select.POLLHUP)]
    yield path, fd
    os.close(fd)


def start(fd: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(PROGRAM), str(fd)], pass_fds=(fd,), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def cpu_ticks(pid: int) -> int:
    """utime + stime of the process, in clock ticks (proc(5): fields 14 and 15 of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_waits_while_the_other_side_is_closed_then_returns(closed_fifo: tuple[Path, int]) -> None:
    path, fd = closed_fifo
    proc = start(fd)
    try:
        time.sleep(0.3)
        assert proc.poll() is None, proc.communicate()
        before = cpu_ticks(proc.pid)
        time.sleep(1.0)
        assert proc.poll() is None, proc.communicate()
        # ten looks a second: no CPU time to speak of (one tick is 10 ms here)
        assert cpu_ticks(proc.pid) - before <= 1
        opened = time.monotonic()
        writer = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        out, err = proc.communicate(timeout=10)
        waited = time.monotonic() - opened
        os.close(writer)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and out == "" and err == "", (proc.returncode, out, err)
    assert waited < 1.0  # a look every 100 ms
    # it read nothing: the bytes written before it started are all still there
    assert os.read(fd, 100) == b"sent"


def test_returns_at_once_when_the_other_side_is_open() -> None:
    rd, wr = os.pipe()
    try:
        began = time.monotonic()
        r = subprocess.run(
            [str(PROGRAM), str(rd)], pass_fds=(rd,), capture_output=True, text=True, timeout=10
        )
        assert r.returncode == 0 and r.stdout == r.stderr == "", r
        assert time.monotonic() - began < 1.0
    finally:
        os.close(rd)
        os.close(wr)


def test_a_removed_port_is_gone(closed_fifo: tuple[Path, int]) -> None:
    """A port whose device file has been removed (its driver unbound) will never open: exit 3."""
    path, fd = closed_fifo
    proc = start(fd)
    time.sleep(0.3)
    assert proc.poll() is None
    path.unlink()
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 3 and out == "", (proc.returncode, err)
    assert err == f"rtmux-portwait: fd {fd}: the port's device file has been removed (its device is gone)\n"


def test_the_wait_ends_with_its_caller(closed_fifo: tuple[Path, int]) -> None:
    """A shell that runs it and is killed leaves no wait behind (which would keep the port open)."""
    _, fd = closed_fifo
    shell = subprocess.Popen(["sh", "-c", f"{PROGRAM} {fd}; echo not-reached"], pass_fds=(fd,))
    child = None
    try:
        deadline = time.monotonic() + 10
        while child is None and time.monotonic() < deadline:
            for stat in Path("/proc").glob("[0-9]*/stat"):
                try:
                    text = stat.read_text()
                except OSError:
                    continue
                if "(rtmux-portwait)" in text and int(text.rsplit(")", 1)[1].split()[1]) == shell.pid:
                    child = int(stat.parent.name)
            time.sleep(0.05)
        assert child is not None
        shell.send_signal(signal.SIGKILL)
        shell.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                break  # gone and reaped
            if state == "Z":
                break  # gone, its parent not yet told
            time.sleep(0.05)
        else:
            os.kill(child, signal.SIGKILL)  # no wait left behind by a failing test
            pytest.fail(f"rtmux-portwait (pid {child}) outlived its shell")
    finally:
        if shell.poll() is None:
            shell.kill()
            shell.wait()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "no FD given"),
        (["3", "4"], "one FD only"),
        (["x"], "FD must be a file descriptor's number"),
        (["-1"], "FD must be a file descriptor's number"),
        (["3x"], "FD must be a file descriptor's number"),
        (["99999999999"], "FD must be a file descriptor's number"),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    r = subprocess.run([str(PROGRAM), *args], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.startswith(f"rtmux-portwait: {message}\nusage: rtmux-portwait FD"), r.stderr


def test_a_descriptor_that_is_not_open() -> None:
    r = subprocess.run([str(PROGRAM), "9"], capture_output=True, text=True, timeout=10, close_fds=True)
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr == "rtmux-portwait: fd 9: not an open file descriptor: Bad file descriptor\n"
