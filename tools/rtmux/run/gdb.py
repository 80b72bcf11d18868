"""`--gdb`: QEMU's gdb server on a run, and the `gdb-multiarch` command that attaches to it.

QEMU's gdb server shows the whole machine: every vCPU is one gdb thread (thread N is CPU N-1), each
at whatever exception level it is running, and memory is read through the selected thread's current
translation. What a target adds is which symbols to load (the rtos application's ELF beside its image,
the hypervisor's ELF, or none for Linux's kernel, whose symbols Debian ships in a package of their own)
and which thread and exception level its code runs at, so that a breakpoint can be limited to it: QEMU
matches a breakpoint's address on every vCPU at every exception level, and the rtos and the hypervisor
are linked at the same addresses (the rtos at its partition's IPA 0x4000_0000, the hypervisor at the
same PA, identity-mapped at EL2). docs/debugging.md says how to use it.
"""

from __future__ import annotations

import shlex
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

from rtmux import config as cfg
from rtmux import paths
from rtmux.errors import SetupError, UsageError

GDB = "gdb-multiarch"  # Debian's gdb for every architecture (`make deps` installs it)
HOST = "127.0.0.1"  # the server listens on the loopback interface only: it can read and write anything
HYP_ELF = paths.BUILD_DIR / "hyp" / "rtmux.elf"
HYP_NAMES = ("hyp", "hypervisor")  # `--gdb hyp`: the hypervisor's ELF (unless a partition has the name)
DOC = "docs/debugging.md"

# The exception level in a gdb condition: CPSR's M[3:2] (QEMU's gdb server gives PSTATE as `cpsr`).
EL1 = 1
EL2 = 2


def el_condition(el: int) -> str:
    return f"($cpsr & 0xc) == {el * 4}"


@dataclass(frozen=True)
class Request:
    """What the user asked for: a partition's name or HYP_NAMES (None: the rtos partition), a TCP port
    (None: a free one), and whether QEMU waits for gdb before its first instruction (-S)."""

    target: str | None = None
    port: int | None = None
    wait: bool = False


@dataclass(frozen=True)
class Target:
    """What a debugger attaches to: its symbols (None: none rtmux has), the CPUs its code runs on and
    at which exception level."""

    what: str  # for messages: "partition 'rtos' (rtos)", "the hypervisor (EL2)"
    elf: Path | None
    cpus: tuple[int, ...]
    el: int
    notes: tuple[str, ...] = ()

    @property
    def threads(self) -> tuple[int, ...]:
        """gdb's thread numbers of the target's CPUs (QEMU numbers a CPU's thread from 1)."""
        return tuple(cpu + 1 for cpu in self.cpus)

    def break_hint(self) -> str:
        """A breakpoint limited to the target's code: its first thread and exception level."""
        return f"break FUNCTION thread {self.threads[0]} if {el_condition(self.el)}"


@dataclass(frozen=True)
class Server:
    """QEMU's gdb server of one run."""

    target: Target
    port: int
    wait: bool

    def qemu_args(self) -> list[str]:
        return qemu_args(self.port, self.wait)


def qemu_args(port: int, wait: bool) -> list[str]:
    """QEMU's options for its gdb server on HOST:port; `wait`: stopped before the first instruction."""
    return ["-gdb", f"tcp:{HOST}:{port}", *(["-S"] if wait else [])]


def free_port() -> int:
    """A TCP port free on HOST now (the kernel's choice; QEMU binds it moments later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def check_port(port: int) -> int:
    """`port` if QEMU can listen on it, else a SetupError saying so (rather than QEMU's exit)."""
    if not 1 <= port <= 65535:
        raise UsageError(f"--gdb-port {port}: a TCP port is 1 to 65535")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError as exc:
            raise SetupError(
                f"--gdb-port {port}: {HOST}:{port} is not free ({exc.strerror}); leave out --gdb-port for a "
                "free one"
            ) from exc
    return port


def server(target: Target, request: Request) -> Server:
    port = check_port(request.port) if request.port is not None else free_port()
    return Server(target, port, request.wait)


def elf_beside(image: Path) -> Path | None:
    """The ELF an rtos image was made from: NAME.elf beside NAME.img (the Makefile, the SDK's rtos.mk), or
    NAME beside it (the SDK's CMake rtos_image); None when neither is an ELF file."""
    for candidate in (image.with_suffix(".elf"), image.with_suffix("")):
        try:
            with candidate.open("rb") as f:
                if candidate != image and f.read(4) == b"\x7fELF":
                    return candidate
        except OSError:
            continue
    return None


def rtos_target(image: Path, what: str, cpus: tuple[int, ...]) -> Target:
    elf = elf_beside(image)
    notes: tuple[str, ...] = ()
    if elf is None:
        notes = (
            f"no ELF beside {paths.display(image)} ({image.with_suffix('.elf').name}): gdb runs without the "
            "application's symbols; build it with symbols (-g) and keep its ELF beside its image",
        )
    return Target(what, elf, cpus, EL1, notes)


def hyp_target() -> Target:
    notes = []
    if not HYP_ELF.is_file():
        notes.append(f"{paths.display(HYP_ELF)} not found: run `make hyp`")
    return Target("the hypervisor (EL2)", HYP_ELF if HYP_ELF.is_file() else None, (), EL2, tuple(notes))


def linux_target(part: cfg.Partition, bootargs: str | None = None) -> Target:
    """A Linux partition: no symbols (notes on Debian's); `bootargs`: those of this run, when --bootargs
    replaces the configured ones."""
    kernel = part.image("kernel")
    version = None
    if kernel is not None and kernel.path.name.startswith("vmlinuz-"):
        version = kernel.path.name.removeprefix("vmlinuz-")
    package = f"linux-image-{version}-dbg" if version else "linux-image-VERSION-dbg (the kernel's version)"
    vmlinux = f"/usr/lib/debug/boot/vmlinux-{version or 'VERSION'}"
    notes = [
        f"rtmux has no symbols of Linux's kernel: Debian ships them in {package} ({vmlinux}); load it "
        f"with `file VMLINUX` in gdb, and boot with `nokaslr` in the partition's bootargs ({DOC})",
    ]
    if "nokaslr" not in (part.bootargs if bootargs is None else bootargs).split():
        notes.append(
            f"partition {part.name!r} boots with KASLR (its bootargs have no `nokaslr`): the kernel's "
            "addresses differ from vmlinux's"
        )
    return Target(f"partition {part.name!r} (Linux)", None, part.cpus, EL1, tuple(notes))


def system_target(
    config: cfg.SystemConfig,
    name: str | None,
    rtos_image: Path | None = None,
    bootargs: dict[str, str] | None = None,
) -> Target:
    """The target `--gdb NAME` means in `config` (None: its rtos partition, else the hypervisor);
    a UsageError naming the partitions when NAME is none of them. `rtos_image`: --rtos-app's image,
    which replaces the rtos partition's; `bootargs`: --bootargs's, which replace a partition's."""
    names = [p.name for p in config.partitions]
    if name is None:
        rtos = config.of_kind(cfg.KIND_RTOS)
        if not rtos:
            return hyp_target()
        name = rtos[0].name
    part = next((p for p in config.partitions if p.name == name), None)
    if part is None:
        if name in HYP_NAMES:
            return hyp_target()
        raise UsageError(
            f"--gdb {name}: {paths.display(config.path)} has no partition {name!r}; its partitions: "
            f"{', '.join(names)} (or `hyp` for the hypervisor)"
        )
    if part.kind == cfg.KIND_RTOS:
        img = part.image("image")
        image = rtos_image if rtos_image is not None else (img.path if img is not None else None)
        if image is None:
            raise SetupError(f"--gdb {name}: partition {name!r} has no image")
        return rtos_target(image, f"partition {part.name!r} (rtos)", part.cpus)
    return linux_target(part, (bootargs or {}).get(part.name))


def gdb_command(server: Server) -> list[str]:
    """The gdb-multiarch command line that attaches to `server` with its target's symbols."""
    cmd = [GDB, "-q"]
    if server.target.elf is not None:
        cmd.append(paths.display(server.target.elf))
    else:
        cmd += ["-ex", "set architecture aarch64"]
    return [*cmd, "-ex", f"target remote {HOST}:{server.port}"]


def instructions(server: Server) -> list[str]:
    """What to tell the user: where the server listens, the gdb command, how to break in the target."""
    t = server.target
    lines = [
        f"gdb: QEMU's gdb server listens on {HOST}:{server.port} for {t.what}; attach with:",
        f"  {shlex.join(gdb_command(server))}",
    ]
    if server.wait:
        lines.append(
            "gdb: QEMU waits for gdb before its first instruction (--gdb-wait): `continue` starts it"
        )
    if t.cpus:
        threads = ", ".join(str(n) for n in t.threads)
        cpus = ", ".join(str(c) for c in t.cpus)
        which = f" (or another of threads {threads})" if len(t.threads) > 1 else ""
        lines.append(
            f"gdb: its code runs on CPU {cpus} (gdb thread {threads}) at EL{t.el}; other code can run at the "
            f"same addresses, so limit a breakpoint to it: `{t.break_hint()}`{which}"
        )
    else:
        lines.append(
            f"gdb: its code runs at EL{t.el} on any CPU, at the same addresses as the rtos's at EL1: "
            f"`break FUNCTION if {el_condition(t.el)}`"
        )
    lines += [f"gdb: note: {note}" for note in t.notes]
    if shutil.which(GDB) is None:
        lines.append(f"gdb: note: {GDB} not found here: install it with `make deps` (Debian package {GDB})")
    lines.append(f"gdb: every QEMU run keeps its timeout (--timeout S); {DOC} says more")
    return lines
