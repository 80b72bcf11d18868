"""The debugger (docs/debugging.md): gdb-multiarch in batch mode on QEMU's gdb server, as `--gdb` sets it up.

A breakpoint in the rtos demo's control step (limited to the rtos's CPU and EL1, as rtmux tells the user),
the values gdb reads there (the demo's set-point, the latency monitor's period from the boot argument
`period_us=1000`, the control loop's cycle count), a backtrace through the sampler thread, one step, then
gdb detaches and the system goes on: the rtos reports on with its code unchanged (QEMU's breakpoints
never write the guest's memory) and Linux's shell computes. Every gdb run has its own timeout and its
output is in every failure message.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.formats.rtos_console import demo_reports
from rtmux.run import gdb, system
from tests.system import console_script
from tests.system.console_script import PROMPT

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "qemu-virt.toml"
GDB_TIMEOUT_S = 120.0
SYSTEM_TIMEOUT_S = 400.0
DEMO_LINE = re.compile(r"demo: t=(\d+)s .*checksum (\w+)$", re.MULTILINE)


def batch(target: gdb.Target) -> list[str]:
    """gdb's commands: break where rtmux says, read, step, leave the system running."""
    return [
        "set pagination off",
        "set confirm off",
        target.break_hint().replace("FUNCTION", "control_step"),
        "continue",
        "print setpoint_um",
        "print 'latmon.c'::cfg.period",
        "print ctl.st.cycle > 0",
        "bt",
        "next",
        "frame",
        "delete",
        "detach",
    ]


def gdb_argv(server: gdb.Server, commands: list[str], folder: Path) -> list[str]:
    """The command rtmux prints, in batch mode with `commands` (and without the user's ~/.gdbinit)."""
    script = folder / "commands.gdb"
    script.write_text("".join(f"{c}\n" for c in commands))
    return [*gdb.gdb_command(server), "-nx", "--batch", "-x", str(script)]


def check_gdb_output(out: str) -> None:
    """What the batch above must print: the breakpoint hit on the rtos's thread, the three values, the
    sampler thread's frames down to its start, the step still in control_step."""
    assert re.search(r"Breakpoint 1, control_step \(", out), out
    assert "$1 = -2147483648\n" in out, out  # SETPOINT_AUTO (INT32_MIN): no set-point asked for
    assert "$2 = 1000000\n" in out, out  # period_us=1000, in nanoseconds
    assert "$3 = 1\n" in out, out
    frames = re.findall(r"^#(\d+)\s+(?:0x[0-9a-f]+ in )?(\w+) \(", out, re.MULTILINE)
    names = [name for _, name in frames]
    assert names[:4] == ["control_step", "sampler_entry", "k_thread_main", "arch_thread_start"], out
    assert "corrupt stack" not in out, out
    # after `next`, `frame` shows control_step again, at a later line of main.c
    stepped = re.findall(r"^#0\s+(?:0x[0-9a-f]+ in )?control_step \(.*\) at \S*main\.c:(\d+)$", out, re.M)
    lines = [int(n) for n in stepped]
    assert len(lines) == 2 and lines[1] > lines[0], out
    assert "detached" in out, out


def need_gdb() -> None:
    if shutil.which(gdb.GDB) is None:
        pytest.fail(f"{gdb.GDB} not found; run `make deps`")


class Debugging:
    """Console responder: at Linux's prompt, gdb runs its batch (in the background, so that the console
    is still read); once it has ended, Linux's shell computes, then the rtos reports three more times."""

    def __init__(self, argv: list[str], log: Path) -> None:
        self.argv, self.log = argv, log
        self.text = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self.after_gdb: int | None = None  # console offset when gdb had ended
        self.answered: int | None = None  # console offset of Linux's answer
        self.finished = False

    def __call__(self, chunk: str) -> qemu.Reply | None:
        self.text += chunk
        if self.proc is None:
            if re.search(PROMPT, self.text):
                with self.log.open("wb") as out:
                    self.proc = subprocess.Popen(
                        self.argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
                    )
            return None
        if self.after_gdb is None:
            if self.proc.poll() is None:
                return None
            self.after_gdb = len(self.text)
            return qemu.Reply(send=b"echo ok-$((6*7))\n")
        if self.answered is None:
            m = re.compile(r"^\[linux\] ok-42$", re.MULTILINE).search(self.text, self.after_gdb)
            if m is None:
                return None
            self.answered = m.end()
        if not self.finished and len(demo_reports(self.text[self.answered :])) >= 3:
            self.finished = True
            return qemu.Reply(stop_after_s=0.5)
        return None

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.is_file() else "(gdb did not start)"

    def stop(self) -> None:
        """gdb is gone afterwards (it ends by itself once QEMU has; killed after its timeout)."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.wait(timeout=GDB_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def test_gdb_on_the_rtos_partition_while_linux_runs(rtos_images: Path, tmp_path: Path) -> None:
    need_gdb()
    built = system.build(CONFIG, icount=True, gdb_request=gdb.Request("rtos"))
    server = built.gdb_server
    assert server is not None
    assert server.target.elf == rtos_images / "demo.elf" and server.target.threads == (1,)
    argv = gdb_argv(server, batch(server.target), tmp_path)
    responder = Debugging(argv, tmp_path / "gdb.log")
    started = time.monotonic()
    try:
        r = qemu.run_console(built.argv, SYSTEM_TIMEOUT_S, respond=responder)
    finally:
        responder.stop()
    out = responder.output()
    why = (
        f"\n$ {shlex.join(argv)}\n---- gdb ----\n{out}\n---- end of gdb ----"
        f"{console_script.describe(r, tail=20000)}\nwall: {time.monotonic() - started:.1f} s"
    )
    assert responder.proc is not None, f"Linux's prompt never came{why}"
    assert responder.proc.returncode == 0, why
    check_gdb_output(out)
    assert responder.finished, why
    assert "PANIC" not in r.console, why
    # the rtos went on after gdb: its code intact, its reports one a second of guest time
    assert responder.after_gdb is not None
    after = DEMO_LINE.findall(r.console[responder.after_gdb :])
    assert len(after) >= 3 and all(c == "unchanged" for _, c in after), why
    seconds = [int(t) for t, _ in after]
    assert seconds == list(range(seconds[0], seconds[0] + len(seconds))), why
    assert "rtmux: partition rtos stopped" not in r.console, why


def test_rtos_run_gdb_prints_a_command_that_works(rtos_images: Path, tmp_path: Path) -> None:
    """./rtmux rtos run --gdb: the printed command, run as printed (in batch mode), debugs the demo."""
    need_gdb()
    out_path, err_path = tmp_path / "stdout", tmp_path / "stderr"
    args = [sys.executable, str(ROOT / "rtmux"), "rtos", "run", "--gdb", "--icount", "--no-build"]
    args += ["--timeout", "200"]
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(args, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    gdb_out = ""

    def why() -> str:
        return (
            f"\n$ {shlex.join(args)}\nexit: {proc.returncode}\n---- stderr ----\n{err_path.read_text()}\n"
            f"---- gdb ----\n{gdb_out}\n---- console ----\n{out_path.read_text(errors='replace')[-20000:]}"
        )

    try:
        command: list[str] | None = None
        deadline = time.monotonic() + 60
        while command is None and time.monotonic() < deadline and proc.poll() is None:
            m = re.search(r"^rtmux:   (gdb-multiarch .*)$", err_path.read_text(), re.MULTILINE)
            command = shlex.split(m[1]) if m else None
            time.sleep(0.2)
        assert command is not None, f"no gdb command printed{why()}"
        assert command[:3] == ["gdb-multiarch", "-q", "build/rtos/demo.elf"], why()
        script = tmp_path / "commands.gdb"
        script.write_text(
            "".join(f"{c}\n" for c in batch(gdb.rtos_target(rtos_images / "demo.img", "", (0,))))
        )
        done = subprocess.run(
            [*command, "-nx", "--batch", "-x", str(script)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GDB_TIMEOUT_S,
        )
        gdb_out = done.stdout + done.stderr
        assert done.returncode == 0, why()
        check_gdb_output(gdb_out)
        # the rtos reports on after gdb detached
        seen = len(out_path.read_text(errors="replace"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(DEMO_LINE.findall(out_path.read_text()[seen:])) < 2:
            time.sleep(0.5)
        after = DEMO_LINE.findall(out_path.read_text(errors="replace")[seen:])
        assert len(after) >= 2 and all(c == "unchanged" for _, c in after), why()
    finally:
        if proc.poll() is None:
            proc.terminate()  # ./rtmux unwinds on SIGTERM and kills its QEMU
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_gdb_on_a_partition_that_does_not_exist(rtos_images: Path) -> None:
    args = [sys.executable, str(ROOT / "rtmux"), "run", "--gdb", "nosuch", "--no-build", "--timeout", "60"]
    done = subprocess.run(
        args, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done
    assert "--gdb nosuch: configs/qemu-virt.toml has no partition 'nosuch'; its partitions: rtos, linux" in (
        done.stderr
    ), done
    assert "qemu-system" not in done.stdout + done.stderr, done
