"""guest/rtmux-top (the rtos's threads seen from Linux), built for the host by `make linux-programs` and
run against a stand-in for the rtos's server (rtos/lib/threadstat.c) on a pty: a thread that reads its
request lines and answers them as told, well, wrongly or not at all. The protocol: docs/rtmux-top.md."""

from __future__ import annotations

import os
import re
import select
import subprocess
import threading
import tty
from collections.abc import Callable, Iterator

import pytest

from rtmux import paths

TOP = paths.linux_program("rtmux-top", host=True)
REQUEST = re.compile(r"^threads 1 (\d+) (all|id \d+|name .+)$")
ROW = re.compile(
    r"^\s*(?P<id>\d+) (?P<name>\S+)\s+(?P<base>\d+)/(?P<prio>\d+) (?P<state>\w+)\s+(?P<cpu>[\d.]+)\s+"
    r"(?P<wakeups>\d+)\s+(?P<worst>[\d.]+)\s+(?P<used>\d+)/(?P<size>\d+)$"
)
Answer = Callable[[str, str, int], str]  # (tag, what, request number) -> the reply's text


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    proc = subprocess.run(
        ["make", "-s", "-C", str(paths.REPO_ROOT), str(TOP.relative_to(paths.REPO_ROOT))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def reply(tag: str, step: int, threads: list[tuple[int, str, int, int]] | None = None) -> str:
    """A well-formed reply: `step` seconds of uptime; each thread (id, name, prio, cpu_ns per second)."""
    threads = threads or [(1, "idle", 0, 700_000_000), (4, "control", 200, 200_000_000), (7, "logger", 20, 0)]
    up = step * 1_000_000_000
    lines = [
        f"threads 1 {tag} ok {len(threads)}",
        f"system {up} {up * 7 // 10} {step * 1000} {len(threads)} 0",
    ]
    lines.append(f"server {step} 1 0")
    for tid, name, prio, per_s in threads:
        state = "running" if name == "rtmux-threads" else "blocked"
        lines.append(
            f"thread {tid} {prio} {prio} {state} {per_s * step} {step * 10} {step * 5} 1500 900 8192 {name}"
        )
    lines.append(f"end {tag}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def server() -> Iterator[Callable[[Answer], str]]:
    """server(answer) -> the pty's path: each request line read is answered with answer(tag, what, n)."""
    stops: list[threading.Event] = []
    threads: list[threading.Thread] = []
    fds: list[int] = []

    def start(answer: Answer) -> str:
        master, slave = os.openpty()
        tty.setraw(slave)
        fds.extend((master, slave))
        stop = threading.Event()
        stops.append(stop)

        def serve() -> None:
            pending = b""
            n = 0
            while not stop.is_set():
                ready, _, _ = select.select([master], [], [], 0.05)
                if not ready:
                    continue
                try:
                    pending += os.read(master, 4096)
                except OSError:
                    return
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    m = REQUEST.match(line.decode())
                    out = answer(m[1], m[2], n) if m else "threads 1 - error malformed not a request\n"
                    n += 1
                    os.write(master, out.encode())

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        threads.append(thread)
        return os.ttyname(slave)

    yield start
    for stop in stops:
        stop.set()
    for thread in threads:  # before the descriptors close: a new pty may reuse their numbers
        thread.join(timeout=5)
    for fd in fds:
        os.close(fd)


def top(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TOP), *args], capture_output=True, text=True, timeout=timeout)


def rows(out: str) -> list[list[dict[str, str]]]:
    """The tables of a batch run: one list of rows (by column) per table."""
    tables = []
    for block in out.strip().split("\n\n"):
        lines = block.splitlines()
        assert lines[0].startswith("rtmux-top: rtos up ") and lines[1].split()[:2] == ["ID", "NAME"], block
        parsed = [ROW.match(line) for line in lines[2:]]
        assert all(parsed), block
        tables.append([m.groupdict() for m in parsed if m])
    return tables


def test_tables_show_the_share_of_each_interval(server: Callable[[Answer], str]) -> None:
    """Three tables: the first since the boot (the rtos up 1 s, then 2 and 3), each thread's CPU share over
    its interval, most urgent first; the header's idle share, interrupts a second and refused count."""
    port = server(lambda tag, what, n: reply(tag, n + 1))
    r = top("-b", "-n", "3", "-d", "0.05", "-p", port)
    assert r.returncode == 0, r.stderr
    tables = rows(r.stdout)
    assert len(tables) == 3
    for table in tables:
        assert [t["name"] for t in table] == ["control", "logger", "idle"]
        assert [float(t["cpu"]) for t in table] == [20.0, 0.0, 70.0]
        assert table[0]["worst"] == "1.500" and table[0]["used"] == "900" and table[0]["size"] == "8192"
    assert [t[0]["wakeups"] for t in tables] == ["5", "10", "15"]
    heads = [line for line in r.stdout.splitlines() if line.startswith("rtmux-top:")]
    assert (
        heads[0]
        == "rtmux-top: rtos up 1.000 s, 3 threads, idle 70.0 %, 1000 interrupts/s, 1 refused requests"
    )
    assert "\033[" not in r.stdout  # batch: no screen control


def test_one_thread_by_name_or_id_and_an_unknown_one(server: Callable[[Answer], str]) -> None:
    asked: list[str] = []

    def answer(tag: str, what: str, n: int) -> str:
        asked.append(what)
        if what in ("name control", "id 4"):
            return reply(tag, 1, [(4, "control", 200, 200_000_000)])
        return f"threads 1 {tag} error unknown-thread no thread named 'nope' (3 threads listed)\n"

    port = server(answer)
    for sel in ("control", "4"):
        r = top("-b", "-n", "1", "-t", sel, "-p", port)
        assert r.returncode == 0 and [t["name"] for t in rows(r.stdout)[0]] == ["control"], r.stderr
    r = top("-b", "-n", "1", "-t", "nope", "-p", port)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == "rtmux-top: no thread named 'nope' (3 threads listed)\n"
    assert asked == ["name control", "id 4", "name nope"]


def test_stale_replies_are_skipped(server: Callable[[Answer], str]) -> None:
    """Lines of another tag (an earlier run's reply nobody read) come first: skipped."""
    port = server(lambda tag, what, n: reply("7", 1) + reply(tag, 2))
    r = top("-b", "-n", "1", "-p", port)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("rtmux-top: rtos up 2.000 s")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.replace(" ok 3", " ok 65"), "expected 'threads 1 TAG ok N' (N at most 64)"),
        (lambda s: s.replace(" ok 3", " fine 3"), "expected 'threads 1 TAG ok N'"),
        (lambda s: s.replace("thread 4 200 200 blocked", "thread 4 256 200 blocked"), "expected 'thread ID"),
        (lambda s: s.replace("blocked", "sleeping", 1), "expected a state: running, ready or blocked"),
        (lambda s: s.replace("900 8192", "-9 8192", 1), "expected 'thread ID"),
        (lambda s: s.replace("900 8192", "99999999999999999999999 8192", 1), "expected 'thread ID"),
        (lambda s: s.replace(" logger", " " + "x" * 40), "expected a name of 1 to 31 printable characters"),
        (lambda s: s.replace("system 1000000000 700000000", "system 1 700000000"), "idle at most the uptime"),
        (lambda s: s.replace("server 1 1 0", "server 1 1"), "expected 'server REQUESTS REFUSED ABANDONED'"),
        (lambda s: s.replace("thread 7 ", "thread 4 "), "thread id 4 listed twice"),
        (lambda s: s[: s.index("end ")] + "end 1\n", "expected end "),
        (lambda s: s.replace(" ok 3", " ok 4"), "expected 'thread ID"),
        (lambda s: s.replace(" ok 3", " ok 2"), "expected end "),
        (lambda s: s.replace("threads 1 ", "threads 2 ", 1), "expected a reply of version 1"),
        (lambda s: s.replace("logger", "x" * 300), "a line longer than 255 bytes"),
        (lambda s: s.replace("control", "con\x01trol"), "expected a name of 1 to 31 printable characters"),
    ],
)
def test_malformed_replies_end_it_with_the_line(
    server: Callable[[Answer], str], change: Callable[[str], str], message: str
) -> None:
    port = server(lambda tag, what, n: change(reply(tag, n + 1)))
    r = top("-b", "-n", "1", "-p", port)
    assert r.returncode == 1, r.stdout + r.stderr
    assert message in r.stderr and r.stderr.startswith("rtmux-top: "), r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_garbage_and_silence_end_in_time(server: Callable[[Answer], str]) -> None:
    port = server(lambda tag, what, n: "\x00\xff garbage\n" * 3)
    r = top("-b", "-n", "1", "-T", "1", "-p", port)
    assert r.returncode == 1 and "no reply to this request" not in r.stderr
    assert "no reply from the rtos within 1.0 s" in r.stderr, r.stderr
    port = server(lambda tag, what, n: "")
    r = top("-b", "-n", "1", "-T", "0.5", "-p", port)
    assert r.returncode == 1 and "no reply from the rtos within 0.5 s" in r.stderr, r.stderr
    port = server(lambda tag, what, n: f"threads 1 {tag} error malformed unknown request; expected ...\n")
    r = top("-b", "-n", "1", "-p", port)
    assert r.returncode == 1
    assert (
        r.stderr
        == "rtmux-top: the rtos refused the request 'all' (malformed): unknown request; expected ...\n"
    )


def test_missing_port_and_usage() -> None:
    r = top("-b", "-n", "1", "-p", "rtmux-no-such-port")
    assert r.returncode == 1
    assert r.stderr == (
        "rtmux-top: /dev/virtio-ports/rtmux-no-such-port: no such port: this system's configuration does not "
        "offer the rtos's threads (its [services] needs threads = true; docs/configuration.md)\n"
    )
    for args in (
        ["-d", "0"],
        ["-d", "x"],
        ["-n", "-1"],
        ["-t", ""],
        ["-t", "a b\x01"],
        ["extra"],
        ["-T", "9999"],
    ):
        r = top(*args)
        assert r.returncode == 2 and "usage: rtmux-top" in r.stderr, (args, r.stderr)
