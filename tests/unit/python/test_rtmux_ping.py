"""guest/rtmux-ping (the V-Bus round-trip and throughput program), built for the host by `make
linux-programs` and run against an echo on a pty: the other side of a V-Bus channel is the rtos's echo
service, which these tests replace by a thread that echoes, corrupts, drops or stays silent."""

from __future__ import annotations

import os
import re
import select
import subprocess
import threading
import tty
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from rtmux import paths

PING = paths.linux_program("rtmux-ping", host=True)
RTT = re.compile(r"^rtt_us min=(\S+) avg=(\S+) p99=(\S+) max=(\S+) n=(\d+)$")
THROUGHPUT = re.compile(r"^throughput_MBps tx=(\S+) rx=(\S+)$")


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    proc = subprocess.run(
        ["make", "-s", "-C", str(paths.REPO_ROOT), str(PING.relative_to(paths.REPO_ROOT))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@dataclass
class Peer:
    """The far side of a pty: `path` for rtmux-ping, a thread passing what it reads through `change`."""

    path: str
    received: int = 0


@pytest.fixture
def peer() -> Iterator[Callable[[Callable[[bytes, int], bytes]], Peer]]:
    stops: list[threading.Event] = []
    threads: list[threading.Thread] = []
    fds: list[int] = []

    def start(change: Callable[[bytes, int], bytes]) -> Peer:
        master, slave = os.openpty()
        tty.setraw(slave)
        fds.extend((master, slave))
        p = Peer(os.ttyname(slave))
        stop = threading.Event()
        stops.append(stop)

        def echo() -> None:
            while not stop.is_set():
                ready, _, _ = select.select([master], [], [], 0.05)
                if not ready:
                    continue
                try:
                    data = os.read(master, 65536)
                except OSError:
                    return
                out = change(data, p.received)
                p.received += len(data)
                view = memoryview(out)
                while view:
                    n = os.write(master, view)
                    view = view[n:]

        thread = threading.Thread(target=echo, daemon=True)
        thread.start()
        threads.append(thread)
        return p

    yield start
    for stop in stops:
        stop.set()
    for thread in threads:  # before the descriptors close: their numbers are reused at once
        thread.join(timeout=5)
    for fd in fds:
        os.close(fd)


def echo(data: bytes, at: int) -> bytes:
    return data


def ping(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PING), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("count", "size"), [(200, 64), (50, 1), (20, 4096), (5, 65536)])
def test_round_trips(peer: Callable[..., Peer], count: int, size: int) -> None:
    p = peer(echo)
    proc = ping(p.path, "-n", str(count), "-s", str(size))
    assert proc.returncode == 0, proc.stderr
    m = RTT.match(proc.stdout.splitlines()[-1])
    assert m, proc.stdout
    low, avg, p99, high = (float(m.group(i)) for i in range(1, 5))
    assert 0 < low <= avg <= high and low <= p99 <= high
    assert int(m.group(5)) == count
    assert p.received == count * size  # every byte went through the far side once


def test_a_changed_byte_is_found(peer: Callable[..., Peer]) -> None:
    def flip(data: bytes, at: int) -> bytes:
        out = bytearray(data)
        if at <= 5000 < at + len(data):
            out[5000 - at] ^= 0x40
        return bytes(out)

    proc = ping(peer(flip).path, "-n", "100", "-s", "100")
    assert proc.returncode == 1
    assert "byte 5000 of the stream came back as" in proc.stderr


def test_a_moved_block_is_found(peer: Callable[..., Peer]) -> None:
    """Two 256-byte blocks swapped: every byte is one that was sent, 256 bytes from where it was sent;
    the pattern mixes the higher bytes of the position in, so the first moved byte is found."""
    held = bytearray()

    def swap(data: bytes, at: int) -> bytes:
        if at >= 4096:
            return data
        held.extend(data)
        if len(held) < 4096:
            return b""
        out = held[256:512] + held[:256] + held[512:]
        return bytes(out)

    proc = ping(peer(swap).path, "-n", "3", "-s", "4096")
    assert proc.returncode == 1
    assert "byte 0 of the stream came back as" in proc.stderr


def test_silence_times_out(peer: Callable[..., Peer]) -> None:
    proc = ping(peer(lambda data, at: b"").path, "-n", "3", "-T", "1")
    assert proc.returncode == 1
    assert "round trip 0: nothing moved for 1000 ms (sent 64 of 64 bytes, 0 came back)" in proc.stderr


def test_more_than_was_sent_is_an_error(peer: Callable[..., Peer]) -> None:
    proc = ping(peer(lambda data, at: data + data).path, "-n", "10", "-s", "8")
    assert proc.returncode == 1
    assert "came back, only" in proc.stderr or "came back as" in proc.stderr


def test_bulk(peer: Callable[..., Peer]) -> None:
    p = peer(echo)
    proc = ping(p.path, "--bulk", "-t", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    m = THROUGHPUT.match(lines[-1])
    assert m, proc.stdout
    assert float(m.group(1)) > 0 and float(m.group(2)) > 0
    sent = int(re.match(r"rtmux-ping: (\d+) bytes each way", lines[-2]).group(1))  # type: ignore[union-attr]
    assert sent > 0 and sent % 4096 == 0 and p.received == sent


def test_bulk_checks_the_content(peer: Callable[..., Peer]) -> None:
    def flip(data: bytes, at: int) -> bytes:
        out = bytearray(data)
        if at <= 100_000 < at + len(data):
            out[100_000 - at] ^= 1
        return bytes(out)

    proc = ping(peer(flip).path, "--bulk", "-t", "2")
    assert proc.returncode == 1
    assert "byte 100000 of the stream came back as" in proc.stderr


def test_port_names_are_opened_under_dev_virtio_ports() -> None:
    proc = ping("no-such-channel", "-n", "1")
    assert proc.returncode == 1
    assert "cannot open /dev/virtio-ports/no-such-channel" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "PORT is missing"),
        (("a", "b"), "one PORT only"),
        (("echo", "-s", "0"), "-s '0': expected 1..1048576"),
        (("echo", "-n", "x"), "-n 'x'"),
        (("echo", "-t", "3"), "-t is for --bulk"),
        (("echo", "--bulk", "-s", "64"), "-n and -s are for round trips"),
        (("--pipe", "echo"), "--pipe takes no PORT"),
    ],
)
def test_usage_errors(args: tuple[str, ...], message: str) -> None:
    proc = ping(*args)
    assert proc.returncode == 2
    assert message in proc.stderr and "usage: rtmux-ping PORT" in proc.stderr


@pytest.mark.parametrize(("count", "size"), [(200, 64), (3, 65536)])
def test_pipe_round_trips(count: int, size: int) -> None:
    """--pipe: the same round trips through a pipe pair to a child process (make bench's reference)."""
    proc = ping("--pipe", "-n", str(count), "-s", str(size))
    assert proc.returncode == 0, proc.stderr
    m = RTT.match(proc.stdout.splitlines()[-1])
    assert m, proc.stdout
    lo, avg, p99, hi = (float(m.group(i)) for i in range(1, 5))
    assert 0 < lo <= avg <= hi and lo <= p99 <= hi and int(m.group(5)) == count


def test_pipe_bulk() -> None:
    proc = ping("--pipe", "--bulk", "-t", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    m = THROUGHPUT.match(lines[-1])
    assert m and float(m.group(1)) > 0 and float(m.group(2)) > 0, proc.stdout
    sent = int(re.match(r"rtmux-ping: (\d+) bytes each way", lines[-2]).group(1))  # type: ignore[union-attr]
    assert sent > 0 and sent % 4096 == 0
