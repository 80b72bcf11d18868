"""`./rtmux linux ...`: Debian's arm64 kernel booted bare under QEMU with the rtmux initramfs.

`run_command` is the reusable part: given any QEMU command line whose guest runs the rtmux initramfs
(bare here, inside the hypervisor for `./rtmux run`), it waits for the init's ready line and the shell
prompt, types the command followed by a `printf` that prints a marker with the command's exit status,
waits for that marker, then types `poweroff -f` and ends the run (QEMU is killed after a grace period
if it does not exit, as when a hypervisor only stops the Linux partition).

The marker is `RTMUX_EXIT_<nonce>=<status>`, printed by `printf 'RTMUX_%s_%s=%d\\n' EXIT <nonce> "$?"`:
the console's echo of the typed line never contains the marker itself, so it cannot be mistaken for it.

`run_script` is the deterministic variant (measurement): nothing is typed. The script rides in the
initramfs (initramfs.with_script) and the init's `rtmux.run=` hook starts it at a fixed point of the
boot, then powers off; with fixed seeds (QEMU's -seed for a bare Linux, bundle.fixed_seed under rtmux)
and without a network (whose answers come from the host), a run under icount repeats exactly.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rtmux import paths, qemu
from rtmux.errors import EXIT_FAILED, EXIT_TIMEOUT, GuestFailure, RtmuxError
from rtmux.image import debian, initramfs, uboot

# The console the initramfs' /init and shell produce (guest/initramfs/init keeps these in step).
READY_RE = re.compile(r"rtmux-linux: ready: [^\n]*")
RUN_STATUS_RE = re.compile(r"rtmux-linux: run: exit status (\d+)")
PROMPT_RE = re.compile(r"rtmux-linux:[^\n]*# ")
CONSOLE = "ttyAMA0"
# panic=-1 with QEMU's -no-reboot: a kernel panic ends QEMU at once instead of waiting for the timeout.
BASE_BOOTARGS = f"console={CONSOLE} panic=-1"
DEFAULT_SMP = 1
DEFAULT_MEMORY = "1G"
CMD_TIMEOUT_S = 600.0
INTERACTIVE_TIMEOUT_S = 3600.0
POWEROFF_GRACE_S = 15.0
MEMORY_RE = re.compile(r"^[1-9][0-9]*[MG]$")


def bootargs(append: str = "") -> str:
    return f"{BASE_BOOTARGS} {append}".strip()


def qemu_argv(
    kernel_image: Path | str,
    initrd: Path | str,
    *,
    smp: int = DEFAULT_SMP,
    memory: str = DEFAULT_MEMORY,
    icount: bool = False,
    append: str = "",
    network: bool = True,
    qemu_bin: str = qemu.QEMU_BIN,
    seed: int | None = None,
) -> list[str]:
    """QEMU booting a Linux Image bare on the virt board, console on stdio, user networking. `seed`:
    QEMU's -seed, which fixes the random seeds QEMU writes into the guest's DTB (measurement only)."""
    if smp < 1:
        raise RtmuxError(f"-smp {smp}: at least one CPU is needed")
    if not MEMORY_RE.match(memory):
        raise RtmuxError(f"memory size {memory!r}: expected a number followed by M or G, e.g. 1G")
    cmd = [
        qemu_bin,
        "-M", qemu.MACHINE,
        "-cpu", qemu.CPU,
        "-smp", str(smp),
        "-m", memory,
        "-nographic",
        "-no-reboot",
        # No default NIC: QEMU's default one would want a boot ROM (efi-virtio.rom) not installed here.
        "-nic", "none",
    ]  # fmt: skip
    if network:
        cmd += ["-netdev", "user,id=n0", "-device", "virtio-net-device,netdev=n0"]
    cmd += ["-kernel", str(kernel_image), "-initrd", str(initrd), "-append", bootargs(append)]
    if icount:
        cmd += ["-icount", qemu.ICOUNT]
    if seed is not None:
        cmd += qemu.seed_args(seed)
    return cmd


# ------------------------------------------------------------------------------------ command driving


def marker_command(command: str, nonce: str) -> str:
    """What is typed: the command in a subshell (an `exit` in it cannot end the login shell; a trailing
    comment cannot swallow the rest), then the marker with its status."""
    return f"(\n{command}\n); printf 'RTMUX_%s_%s=%d\\n' EXIT {nonce} \"$?\"\n"


def marker_re(nonce: str) -> re.Pattern[str]:
    return re.compile(rf"RTMUX_EXIT_{re.escape(nonce)}=(\d+)")


def parse_marker(console: str, nonce: str) -> int | None:
    """The exit status the marker reports, or None when the console has no marker for `nonce`."""
    m = marker_re(nonce).search(console)
    return int(m.group(1)) if m else None


def command_output(console: str, nonce: str) -> str | None:
    """What the command printed: the console between the echo of the typed marker line and the marker
    (None without a marker)."""
    m = marker_re(nonce).search(console)
    if m is None:
        return None
    echo = console.rfind(f"EXIT {nonce} ", 0, m.start())
    start = 0 if echo < 0 else console.find("\n", echo) + 1
    return console[start : m.start()]


@dataclass
class CommandRun:
    result: qemu.RunResult
    status: int | None  # the command's exit status; None when no marker came
    output: str | None  # what the command printed (see command_output)
    ready_s: float | None  # wall-clock seconds from QEMU's start to the ready line
    nonce: str


class _Driver:
    """The run_console responder: ready line -> prompt -> type the command -> marker -> power off."""

    def __init__(
        self, command: str, nonce: str, ready: re.Pattern[str], prompt: re.Pattern[str], start: float
    ) -> None:
        self.typed = marker_command(command, nonce).encode()
        self.marker = marker_re(nonce)
        self.ready = ready
        self.prompt = prompt
        self.start = start  # time.monotonic() just before QEMU was started
        self.text = ""
        self.state = "boot"
        self.search_from = 0
        self.ready_s: float | None = None

    def __call__(self, chunk: str) -> qemu.Reply | None:
        self.text += chunk
        if self.state == "boot":
            m = self.ready.search(self.text, self.search_from)
            if m is None:
                # Keep a line's worth of overlap: the pattern may straddle two chunks.
                self.search_from = max(0, len(self.text) - 200)
                return None
            self.ready_s = time.monotonic() - self.start
            self.state = "prompt"
            self.search_from = m.end()
        if self.state == "prompt":
            m = self.prompt.search(self.text, self.search_from)
            if m is None:
                return None
            self.state = "command"
            self.search_from = m.end()
            return qemu.Reply(send=self.typed)
        if self.state == "command":
            m = self.marker.search(self.text, self.search_from)
            if m is None:
                self.search_from = max(self.search_from, len(self.text) - 200)
                return None
            self.state = "poweroff"
            return qemu.Reply(send=b"poweroff -f\n", stop_after_s=POWEROFF_GRACE_S)
        return None


def run_command(
    argv: Sequence[str],
    command: str,
    *,
    timeout_s: float,
    echo: TextIO | None = None,
    ready: re.Pattern[str] = READY_RE,
    prompt: re.Pattern[str] = PROMPT_RE,
) -> CommandRun:
    """Boot `argv` (a QEMU command line whose console reaches the initramfs shell), run `command` in
    the shell and power off. The caller checks CommandRun.status (None: no marker, see result)."""
    nonce = secrets.token_hex(4)
    driver = _Driver(command, nonce, ready, prompt, time.monotonic())
    result = qemu.run_console(argv, timeout_s, echo=echo, respond=driver)
    status = parse_marker(result.console, nonce)
    return CommandRun(result, status, command_output(result.console, nonce), driver.ready_s, nonce)


class _ScriptDriver:
    """The run_console responder of run_script: types nothing; once the hook's status line is out,
    lets QEMU end (a bare Linux powers the board off; under rtmux another partition may run on)."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.text = ""
        self.search_from = 0
        self.ready_s: float | None = None
        self.status: int | None = None

    def __call__(self, chunk: str) -> qemu.Reply | None:
        self.text += chunk
        if self.ready_s is None:
            m = READY_RE.search(self.text, self.search_from)
            if m is None:
                self.search_from = max(0, len(self.text) - 200)
                return None
            self.ready_s = time.monotonic() - self.start
            self.search_from = m.end()
        if self.status is None:
            m = RUN_STATUS_RE.search(self.text, self.search_from)
            if m is None:
                self.search_from = max(self.search_from, len(self.text) - 200)
                return None
            self.status = int(m[1])
            return qemu.Reply(stop_after_s=POWEROFF_GRACE_S)
        return None


def script_output(console: str) -> str | None:
    """What the boot-time script printed: the console between the hook's start and status lines."""
    start = re.search(r"rtmux-linux: run: [^\n]*\n", console)
    end = RUN_STATUS_RE.search(console)
    if start is None or end is None or end.start() < start.end():
        return None
    return console[start.end() : end.start()]


def run_script(argv: Sequence[str], *, timeout_s: float, echo: TextIO | None = None) -> CommandRun:
    """Boot `argv`, whose Linux runs a script through the init's `rtmux.run=` hook (see the module's
    docstring), and wait for its status line; the caller checks CommandRun.status like run_command's."""
    driver = _ScriptDriver(time.monotonic())
    result = qemu.run_console(argv, timeout_s, echo=echo, respond=driver)
    m = RUN_STATUS_RE.search(result.console)
    status = int(m[1]) if m else None
    return CommandRun(result, status, script_output(result.console), driver.ready_s, "")


def check_command(run: CommandRun, what: str) -> int:
    """The command's exit status, or GuestFailure (with the console) when it did not finish."""
    result = run.result
    if run.status is not None:
        return run.status
    if result.timed_out:
        stage = "the ready line" if run.ready_s is None else "the command's end marker"
        raise GuestFailure(
            f"{what}: QEMU timed out after {result.timeout_s:g} s (wall clock) waiting for {stage}",
            result,
            EXIT_TIMEOUT,
        )
    if run.ready_s is None:
        raise GuestFailure(f"{what}: QEMU exited (status {result.returncode}) before Linux was ready", result)
    raise GuestFailure(
        f"{what}: QEMU exited (status {result.returncode}) before the command's end marker", result
    )


# ----------------------------------------------------------------------------------------- commands


def script_initramfs(guest: initramfs.Guest, script: str) -> Path:
    """The guest's initramfs with `script` added (initramfs.with_script), as a file for QEMU's -initrd:
    build/linux/initramfs-FLAVOUR+script-HASH.cpio.gz (written once per content)."""
    data = initramfs.with_script(guest.initramfs.read_bytes(), script)
    digest = hashlib.sha256(data).hexdigest()[:12]
    out = guest.initramfs.with_name(guest.initramfs.name.replace(".cpio", f"+script-{digest}.cpio"))
    if not out.is_file() or out.read_bytes() != data:
        tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(out)
    return out


def boot_argv(
    guest: initramfs.Guest,
    *,
    smp: int,
    memory: str,
    icount: bool,
    append: str,
    script: str | None = None,
    seed: int | None = None,
) -> list[str]:
    """QEMU's command line for a bare boot of `guest`. With `script`, the init runs it at boot (no
    typing); with `seed`, QEMU's random seeds are fixed and the network left out (its answers come from
    the host): together, the deterministic mode of run_script."""
    initrd = guest.initramfs
    if script is not None:
        initrd = script_initramfs(guest, script)
        append = f"{append} {initramfs.RUN_BOOTARG}".strip()
    return qemu_argv(
        guest.kernel.image,
        initrd,
        smp=smp,
        memory=memory,
        icount=icount,
        append=append,
        network=seed is None,
        qemu_bin=qemu.find_qemu(),
        seed=seed,
    )


def run(
    flavour: str,
    *,
    smp: int = DEFAULT_SMP,
    memory: str = DEFAULT_MEMORY,
    icount: bool = False,
    append: str = "",
    linux_cmd: str | None = None,
    linux_script: str | None = None,
    seed: int | None = None,
    timeout_s: float | None = None,
    refresh: bool = False,
    echo: TextIO | None = None,
) -> int:
    """`./rtmux linux run`: the command's (or script's) exit status, 0 for an interactive session
    that ended by a power-off; GuestFailure otherwise."""
    echo = echo if echo is not None else sys.stdout
    guest = initramfs.build(flavour, refresh=refresh)
    argv = boot_argv(
        guest, smp=smp, memory=memory, icount=icount, append=append, script=linux_script, seed=seed
    )
    what = f"Linux {guest.kernel.release}"
    return session(
        argv,
        what,
        icount=icount,
        linux_cmd=linux_cmd,
        timeout_s=timeout_s,
        echo=echo,
        script=linux_script is not None,
    )


def session(
    argv: Sequence[str],
    what: str,
    *,
    icount: bool,
    linux_cmd: str | None,
    timeout_s: float | None,
    echo: TextIO,
    script: bool = False,
) -> int:
    """Boot `argv` and either hand the console to the user (interactive, 0 when QEMU ends normally) or
    run linux_cmd in Linux's shell and return its exit status, or (`script`: argv's Linux runs a script
    at boot) wait for the script's status; GuestFailure otherwise. Shared by `./rtmux linux run` (bare
    Linux) and `./rtmux run` (the whole system)."""
    if script:
        if linux_cmd is not None:
            raise RtmuxError("a boot-time script and --linux-cmd exclude each other")
        cmd_run = run_script(argv, timeout_s=timeout_s if timeout_s is not None else CMD_TIMEOUT_S, echo=echo)
        status = check_command(cmd_run, what)
        print(f"rtmux: {what}: the boot-time script exited with status {status}", file=sys.stderr, flush=True)
        return status
    if linux_cmd is None:
        timeout = timeout_s if timeout_s is not None else INTERACTIVE_TIMEOUT_S
        result = qemu.run_console(argv, timeout, echo=echo, interactive=True)
        if result.timed_out:
            # A session a person watches, not a judged run: its limit ends it normally, and the console,
            # already on the screen, is not printed again.
            echo.flush()
            print(
                f"rtmux: {what}: stopped after {timeout:g} s (wall clock), the limit of this session; "
                "--timeout S sets it",
                file=sys.stderr,
                flush=True,
            )
            return 0
        if result.returncode != 0:
            raise GuestFailure(f"{what}: QEMU exited with status {result.returncode}", result, EXIT_FAILED)
        return 0
    timeout = timeout_s if timeout_s is not None else CMD_TIMEOUT_S
    cmd_run = run_command(argv, linux_cmd, timeout_s=timeout, echo=echo)
    status = check_command(cmd_run, what)
    ready = f"{cmd_run.ready_s:.1f} s" if cmd_run.ready_s is not None else "?"
    print(
        f"rtmux: {what}: Linux ready after {ready} (wall clock, {'icount' if icount else 'plain TCG'}); "
        f"command exited with status {status}",
        file=sys.stderr,
        flush=True,
    )
    return status


def fetch(refresh: bool) -> list[str]:
    """`./rtmux linux fetch`: both kernels and the userland in the cache; lines describing them."""
    lines = []
    for flavour in debian.FLAVOURS:
        k = debian.kernel(flavour, refresh=refresh)
        lines.append(f"kernel {flavour}: {k.package.name} {k.package.version} (uname -r {k.release})")
        lines.append(f"  image: {paths.display(k.image)}")
    for u in debian.userland(refresh=refresh):
        lines.append(f"{u.package.name} {u.package.version}")
    fw = uboot.firmware(refresh=refresh)
    lines.append(
        f"{fw.package.name} {fw.package.version} (QEMU virt's U-Boot: ./rtmux run --firmware u-boot)"
    )
    lines.append(f"cache: {paths.display(debian.cache_dir())} ({debian.cache_size() / 2**20:.0f} MiB)")
    return lines


def initramfs_report(flavour: str, *, refresh: bool = False, listing: bool = False) -> list[str]:
    """`./rtmux linux initramfs`: build the archive if needed; describe it (and list it)."""
    guest = initramfs.build(flavour, refresh=refresh)
    members = initramfs.read_initramfs(guest.initramfs)
    lines = [
        f"{paths.display(guest.initramfs)}: {guest.initramfs.stat().st_size / 2**20:.1f} MiB, "
        f"{len(members)} entries, for {guest.kernel.package.name} {guest.kernel.package.version}",
        f"kernel image: {paths.display(guest.kernel.image)}",
    ]
    if listing:
        for m in members:
            target = f" -> {m.data.decode(errors='replace')}" if m.kind == "link" else ""
            size = f" {len(m.data)}" if m.kind == "file" else ""
            lines.append(f"{m.kind:5} {m.mode & 0o7777:04o} /{m.path}{size}{target}")
    return lines
