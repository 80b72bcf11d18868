"""`make run` as a person at a terminal meets it: `./rtmux run` inside tmux (a real pseudo-terminal, keys
sent with send-keys, the screen read with capture-pane). Linux's shell is a serial console's shell on a
board: Ctrl-C stops the foreground command, Ctrl-Z stops it into a job, and `reboot` without -f goes
through init and brings the shell back."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest

from rtmux import paths

pytestmark = pytest.mark.system

# Wide enough that no line the test matches wraps on the screen.
COLUMNS, ROWS = 240, 60
RUN_TIMEOUT_S = 400  # ./rtmux run's own limit: QEMU is stopped after it whatever the test does
STEP_TIMEOUT_S = 120.0  # wall seconds for one step (icount: Linux's boot takes ~20 s of them here)
PROMPT = r"^\[linux\] rtmux-linux:~#"  # no space: the screen's last line loses its trailing one


class Terminal:
    """One tmux server of our own (its own socket) with one window running a command."""

    def __init__(self, name: str, command: list[str]) -> None:
        self.socket = f"rtmux-test-{name}-{os.getpid()}"
        self.tmux(
            "new-session",
            "-d",
            "-x",
            str(COLUMNS),
            "-y",
            str(ROWS),
            "-s",
            name,
            "--",
            *command,
        )
        self.tmux("set-option", "-g", "history-limit", "20000")
        self.pid = int(self.tmux("display-message", "-p", "#{pane_pid}").strip())

    def tmux(self, *args: str) -> str:
        r = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30, check=False
        )
        if r.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def keys(self, *keys: str) -> None:
        """Keys as tmux names them (`C-c`, `Enter`) or literal text (-l)."""
        for k in keys:
            if re.fullmatch(r"C-.|Enter", k):
                self.tmux("send-keys", k)
            else:
                self.tmux("send-keys", "-l", k)

    def screen(self) -> str:
        """Everything the window showed, its history included, lines joined where they wrapped."""
        try:
            return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-E", "-")
        except RuntimeError:
            return ""  # the command ended and the window with it

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def wait(self, pattern: str, start: int = 0, count: int = 1, timeout: float = STEP_TIMEOUT_S) -> int:
        """Waits until `pattern` (multiline) matches `count` times in the screen from line `start`;
        returns the index of the line after the last match's, where the next step looks from."""
        deadline = time.monotonic() + timeout
        while True:
            lines = self.screen().rstrip("\n").splitlines()  # not the window's empty rows below the text
            text = "\n".join(lines[start:])
            found = list(re.finditer(pattern, text, re.MULTILINE))
            if len(found) >= count:
                return start + text.count("\n", 0, found[count - 1].end()) + 1
            if time.monotonic() > deadline or not self.alive():
                raise AssertionError(
                    f"no {pattern!r} (x{count}) on the screen after line {start}:\n" + "\n".join(lines)
                )
            time.sleep(0.5)

    def close(self) -> None:
        if self.alive():
            os.kill(self.pid, signal.SIGTERM)  # ./rtmux unwinds and stops its QEMU
            for _ in range(40):
                if not self.alive():
                    break
                time.sleep(0.25)
        try:
            self.tmux("kill-server")
        except RuntimeError:
            pass  # the server ended with its last window


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is missing: `make deps` installs it")
    t = Terminal(
        "run",
        [
            str(paths.REPO_ROOT / "rtmux"),
            "run",
            "--no-build",
            "--timeout",
            str(RUN_TIMEOUT_S),
            str(paths.REPO_ROOT / "configs" / "qemu-virt.toml"),
        ],
    )
    try:
        yield t
    finally:
        print(t.screen())
        t.close()


def test_ctrl_c_ctrl_z_and_reboot_in_linux_shell(terminal: Terminal) -> None:
    t = terminal
    at = t.wait(PROMPT)
    # the README's own example: the telemetry port prints a line a second until Ctrl-C stops it
    t.keys("cat /dev/virtio-ports/telemetry", "Enter")
    at = t.wait(r"^\[linux\] t=\d+s control loop", start=at, count=2)
    t.keys("C-c")
    t.keys("echo stopped-$((6*7))", "Enter")  # typed into cat instead, it would print itself, not 42
    at = t.wait(r"^\[linux\] stopped-42\s*$", start=at)
    # Ctrl-Z: the foreground job stops and the shell lists it
    t.keys("sleep 300", "Enter")
    time.sleep(2)
    t.keys("C-z")
    t.keys("jobs >/tmp/jobs; echo jobs-$(grep -c Stopped /tmp/jobs)", "Enter")  # $(jobs) is a subshell's
    at = t.wait(r"^\[linux\] jobs-1\s*$", start=at)
    t.keys("kill %1", "Enter")
    # reboot without -f: PID 1 stops every process and resets; Linux comes back with a new shell
    t.keys("reboot", "Enter")
    at = t.wait(r"^\[linux\] rtmux-linux: ready: ", start=at)
    at = t.wait(PROMPT, start=at)
    t.keys("echo back-$((6*7))", "Enter")
    t.wait(r"^\[linux\] back-42\s*$", start=at)
