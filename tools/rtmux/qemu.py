"""QEMU command lines and guest runs with a hard wall-clock timeout.

Every guest run goes through `run_console`: it starts QEMU, captures its console (QEMU's stdout and
stderr together), optionally echoes it live, kills QEMU when the timeout expires and always makes sure the
process it started is gone before returning. The captured console is kept whole so a failure can print it.
A `respond` callback may type into the console (QEMU's standard input) and end the run early.
"""

from __future__ import annotations

import codecs
import os
import selectors
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rtmux.board import QEMU_VIRT_CPU, QEMU_VIRT_MACHINE, qemu_virt_machine
from rtmux.errors import GuestOutput, SetupError

QEMU_BIN = "qemu-system-aarch64"
MACHINE = QEMU_VIRT_MACHINE
CPU = QEMU_VIRT_CPU
MEMORY = "1G"
# Deterministic time: one instruction is one nanosecond of guest time and runs repeat exactly.
ICOUNT = "shift=0,align=off,sleep=off"

MODE_ICOUNT = f"icount (-icount {ICOUNT}: 1 instruction = 1 ns of guest time, deterministic)"
MODE_PLAIN = "plain TCG emulation (timing follows the host's load)"


# Fixed seeds (measurement only): QEMU's own random numbers (the seeds it writes into a guest's DTB) from
# -seed, and a real-time clock that starts at a fixed date and follows guest time, not the host's.
FIXED_RTC = "base=2025-01-01T00:00:00,clock=vm"


def seed_args(seed: int) -> list[str]:
    """QEMU options of the fixed-seed mode: the same random numbers and dates at every run."""
    return ["-seed", str(seed), "-rtc", FIXED_RTC]


def mode_description(icount: bool) -> str:
    """How time behaves in a run, as written into result files."""
    return MODE_ICOUNT if icount else MODE_PLAIN


def qemu_command(
    image: Path | str,
    append: str = "",
    *,
    icount: bool = False,
    smp: int = 1,
    qemu: str = QEMU_BIN,
    cntfrq: int | None = None,
    gic: int = 3,
) -> list[str]:
    """The QEMU command line that boots `image` (arm64 Image header) with boot arguments `append`;
    `cntfrq` sets the generic timer's counter frequency (Hz) instead of QEMU's 62.5 MHz, `gic` the GIC
    version of the board."""
    cpu = CPU if cntfrq is None else f"{CPU},cntfrq={cntfrq}"
    cmd = [
        qemu,
        "-M", MACHINE if gic == 3 else qemu_virt_machine(gic),
        "-cpu", cpu,
        "-smp", str(smp),
        "-m", MEMORY,
        "-nographic",
        "-nic", "none",
        "-kernel", str(image),
    ]  # fmt: skip
    if append:
        cmd += ["-append", append]
    if icount:
        cmd += ["-icount", ICOUNT]
    return cmd


def find_qemu(qemu: str = QEMU_BIN) -> str:
    """The full path of the QEMU binary, or a SetupError saying how to install it."""
    path = shutil.which(qemu)
    if path is None:
        raise SetupError(
            f"{qemu} not found on PATH; install it with `make deps` (Debian package qemu-system-arm)"
        )
    return path


def qemu_version(qemu: str = QEMU_BIN) -> str:
    """The first line of `qemu-system-aarch64 --version`."""
    path = find_qemu(qemu)
    try:
        proc = subprocess.run(
            [path, "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired as exc:
        raise SetupError(f"`{qemu} --version` did not answer within 30 s") from exc
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or not lines:
        raise SetupError(f"`{qemu} --version` failed (exit status {proc.returncode}): {proc.stderr.strip()}")
    return lines[0].strip()


@dataclass
class RunResult:
    """What one guest run produced."""

    command: list[str]
    returncode: int | None  # None when QEMU was killed on timeout
    timed_out: bool
    console: str
    elapsed_s: float
    timeout_s: float
    stopped: bool = False  # ended by a Reply's stop_after_s (QEMU was killed, not timed out)

    @property
    def exited(self) -> bool:
        """QEMU ended by itself (the guest powered off or QEMU failed), before the timeout."""
        return not self.timed_out and self.returncode is not None

    @property
    def lines(self) -> list[str]:
        return self.console.splitlines()

    def command_line(self) -> str:
        return shlex.join(self.command)


LineCallback = Callable[[str], None]


@dataclass(frozen=True)
class Reply:
    """What a `respond` callback asks of run_console after seeing new console text."""

    send: bytes = b""  # written to QEMU's standard input (the guest's console input)
    stop_after_s: float | None = None  # end the run this many seconds from now unless QEMU exits first


Responder = Callable[[str], Reply | None]


class _Console:
    """Collects decoded console text, echoes it and hands out complete lines."""

    def __init__(self, echo: TextIO | None, on_line: LineCallback | None) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self._pending = ""
        self._echo = echo
        self._on_line = on_line

    def feed(self, data: bytes, final: bool = False) -> str:
        """Add raw console bytes; returns the new text (decoded, carriage returns removed)."""
        # The PL011 driver may end lines with CR LF; keep LF only.
        text = self._decoder.decode(data, final).replace("\r", "")
        if text:
            self._parts.append(text)
            if self._echo is not None:
                self._echo.write(text)
                self._echo.flush()
            if self._on_line is not None:
                self._pending += text
                *complete, self._pending = self._pending.split("\n")
                for line in complete:
                    self._on_line(line)
        if final and self._pending and self._on_line is not None:
            line, self._pending = self._pending, ""
            self._on_line(line)
        return text

    @property
    def text(self) -> str:
        return "".join(self._parts)


def run_console(
    command: Sequence[str],
    timeout_s: float,
    *,
    echo: TextIO | None = None,
    on_line: LineCallback | None = None,
    interactive: bool = False,
    respond: Responder | None = None,
) -> RunResult:
    """Run `command` (normally QEMU) for at most `timeout_s` seconds of wall-clock time.

    echo: stream to write the console to as it arrives (None: silent).
    on_line: called with each complete console line (without the newline), e.g. to echo a filtered view.
    interactive: when standard input is a terminal, hand it to QEMU (Ctrl-A x quits) and restore the
    terminal's settings afterwards; otherwise QEMU's standard input is /dev/null.
    respond: called with each piece of new console text (carriage returns removed); its Reply's bytes
    are written to QEMU's standard input (a pipe then, and `interactive` is ignored), and its
    stop_after_s ends the run early, which is not a timeout (RunResult.stopped).
    """
    if timeout_s <= 0:
        raise ValueError("every guest run needs a positive timeout")
    console = _Console(echo, on_line)
    tty_fd: int | None = None
    saved_tty: list[Any] | None = None
    if respond is None and interactive and sys.stdin is not None and sys.stdin.isatty():
        import termios

        tty_fd = sys.stdin.fileno()
        saved_tty = termios.tcgetattr(tty_fd)
    start = time.monotonic()
    deadline = start + timeout_s
    stop_at: float | None = None
    stopped = False
    stdin: int | None
    if respond is not None:
        stdin = subprocess.PIPE
    else:
        stdin = None if tty_fd is not None else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            list(command),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
    except OSError as exc:
        raise SetupError(f"cannot start {command[0]}: {exc}") from exc
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    timed_out = False
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                now = time.monotonic()
                if stop_at is not None and now >= stop_at:
                    stopped = True
                    break
                remaining = deadline - now
                if remaining <= 0:
                    timed_out = True
                    break
                wait = min(remaining, 1.0) if stop_at is None else min(remaining, stop_at - now, 1.0)
                if not sel.select(max(wait, 0.0)):
                    continue
                data = os.read(fd, 65536)
                if not data:
                    break  # QEMU closed its output: it is exiting
                text = console.feed(data)
                if respond is not None and text:
                    reply = respond(text)
                    if reply is not None:
                        if reply.send:
                            _send(proc, reply.send)
                        if reply.stop_after_s is not None and stop_at is None:
                            stop_at = time.monotonic() + max(reply.stop_after_s, 0.0)
        if not timed_out and not stopped:
            end = deadline if stop_at is None else min(deadline, stop_at)
            try:
                proc.wait(timeout=max(end - time.monotonic(), 0.5))
            except subprocess.TimeoutExpired:
                if stop_at is not None and time.monotonic() >= stop_at - 0.01:
                    stopped = True
                else:
                    timed_out = True
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        # The process is gone, so the pipe is at EOF after what it still holds: keep all of it.
        _drain(fd, console)
        console.feed(b"", final=True)
        proc.stdout.close()
        if proc.stdin is not None:
            proc.stdin.close()
        if tty_fd is not None and saved_tty is not None:
            import termios

            termios.tcsetattr(tty_fd, termios.TCSADRAIN, saved_tty)
    return RunResult(
        command=list(command),
        returncode=None if timed_out else proc.returncode,
        timed_out=timed_out,
        console=console.text,
        elapsed_s=time.monotonic() - start,
        timeout_s=timeout_s,
        stopped=stopped,
    )


def _send(proc: subprocess.Popen[bytes], data: bytes) -> None:
    """Type `data` into QEMU's standard input; a QEMU that has gone away is noticed by the read loop."""
    if proc.stdin is None:
        return
    try:
        proc.stdin.write(data)
        proc.stdin.flush()
    except (BrokenPipeError, ValueError):
        pass


def _drain(fd: int, console: _Console) -> None:
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while sel.select(1.0):
            data = os.read(fd, 65536)
            if not data:
                return
            console.feed(data)


def print_console(result: GuestOutput, stream: TextIO | None = None) -> None:
    """Write the whole captured console, framed, for a failure report."""
    stream = stream if stream is not None else sys.stderr
    lines = result.console.splitlines()
    stream.write(f"---- guest console ({len(lines)} lines) of: {result.command_line()} ----\n")
    stream.write(result.console)
    if result.console and not result.console.endswith("\n"):
        stream.write("\n")
    stream.write("---- end of guest console ----\n")
    stream.flush()
