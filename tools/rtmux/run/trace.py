"""`./rtmux trace`: boot the rtos (alone, or in its partition of a system) with its scheduler trace on,
read the trace's ring out of its memory, and write what a viewer opens.

The rtos records into `k_trace_ring` (rtos/kernel/trace.h) and sends nothing anywhere; the ring is read
through QEMU's monitor (QMP, on a socket of this run): the machine is stopped, `pmemsave` copies the
buffer's bytes from guest physical memory, and QEMU quits. The buffer's address and size come from the
application's ELF (next to its image); inside rtmux the rtos runs with its MMU off at IPA = the address
it is linked at, and the configuration's placement gives the physical address of that IPA. QEMU runs
with -no-shutdown, so a guest that powers off (an application that ends, or one that stopped the trace
and the system on a fault) keeps its memory until it is read.
"""

from __future__ import annotations

import json
import re
import socket
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from rtmux import config as cfg
from rtmux import paths, qemu
from rtmux.errors import EXIT_FAILED, EXIT_TIMEOUT, GuestFailure, SetupError, UsageError
from rtmux.formats import rtos_trace
from rtmux.image import debian
from rtmux.run import rtos, system

SYMBOL = "k_trace_ring"
# The rtos's console line when the trace starts at boot (rtos/kernel/boot.c).
TRACE_ON_RE = re.compile(r"rtos: trace on \((\d+) events")
STOPPED_RE = re.compile(r"rtos: system off|FATAL:|rtos: halted")
OUT_DIR = paths.BUILD_DIR / "trace"
QMP_TIMEOUT_S = 30.0
DEFAULT_SECONDS = 2.0
DEFAULT_WINDOW_MS = 10.0


@dataclass(frozen=True)
class Ring:
    """Where the trace buffer is: its address in the rtos (its ELF) and in QEMU's physical memory."""

    address: int
    size: int
    physical: int

    @property
    def events(self) -> int:
        """The ring's size in events, from the buffer's size (rtos_trace's layout)."""
        head = rtos_trace.HEADER.size
        # The names table and the events: nnames * NAME + nevents * EVENT, with nnames = RT_THREADS_MAX.
        return (self.size - head - THREADS_MAX * rtos_trace.NAME.size) // rtos_trace.EVENT.size


THREADS_MAX = 64  # RT_THREADS_MAX (rtos/include/rtos/thread.h): the names table's entries


def find_ring(elf: Path, pa_offset: int = 0) -> Ring:
    """`k_trace_ring`'s address and size in the rtos ELF `elf`; SetupError naming what is missing."""
    if not elf.is_file():
        raise SetupError(
            f"{paths.display(elf)} not found: the trace's address comes from the rtos application's ELF"
        )
    with elf.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")  # type: ignore[no-untyped-call]
        if not isinstance(symtab, SymbolTableSection):
            raise SetupError(f"{paths.display(elf)} has no symbol table (stripped?)")
        syms = symtab.get_symbol_by_name(SYMBOL)  # type: ignore[no-untyped-call]
    if not syms:
        raise SetupError(
            f"{paths.display(elf)} has no {SYMBOL}: an rtos built before the scheduler trace existed"
        )
    sym = syms[0]
    return Ring(address=sym["st_value"], size=sym["st_size"], physical=sym["st_value"] + pa_offset)


@dataclass(frozen=True)
class Target:
    """What to boot for a trace."""

    argv: list[str]
    elf: Path
    ring: Ring
    what: str


def rtos_target(app: str, bootargs: str, *, icount: bool, gic: int = 3) -> Target:
    """The rtos application `app` alone on QEMU (bare metal: physical = linked address)."""
    image = rtos.image_for(app)
    elf = image.with_suffix(".elf")
    args = f"{bootargs} trace=1".strip()
    argv = qemu.qemu_command(image, args, icount=icount, qemu=qemu.find_qemu(), gic=gic)
    return Target(argv, elf, find_ring(elf), f"rtos {rtos.image_label(app)}")


def system_target(
    config_path: Path,
    partition: str | None,
    bootargs: str | None,
    *,
    icount: bool,
    no_build: bool,
    linux_script: str | None = None,
    seed: int | None = None,
) -> Target:
    """The system of a configuration with the trace on in its rtos partition `partition` (the only one
    when None); `linux_script` and `seed` as for `./rtmux run` (Linux runs the script at boot; fixed
    seeds: with icount, a boot that repeats exactly)."""
    config = cfg.load(config_path, find_kernel=debian.cached_kernel_image)
    parts = config.of_kind(cfg.KIND_RTOS)
    if not parts:
        raise UsageError(f"{paths.display(config_path)} has no rtos partition to trace")
    if partition is None:
        if len(parts) > 1:
            raise UsageError(
                f"{paths.display(config_path)} has several rtos partitions; name one with --partition"
            )
        part = parts[0]
    else:
        named = [p for p in parts if p.name == partition]
        if not named:
            raise UsageError(
                f"{paths.display(config_path)}: no rtos partition {partition!r} (rtos partitions: "
                f"{', '.join(p.name for p in parts)})"
            )
        part = named[0]
    img = part.image("image")
    if img is None:
        raise UsageError(f"partition {part.name!r} has no image")
    args = f"{part.bootargs if bootargs is None else bootargs} trace=1".strip()
    built = system.build(
        config_path,
        bootargs={part.name: args},
        icount=icount,
        no_build=no_build,
        linux_script=linux_script,
        seed=seed,
    )
    elf = img.path.with_suffix(".elf")
    ring = find_ring(elf, part.ram.pa - part.ram.ipa)
    return Target(built.argv, elf, ring, f"partition {part.name!r} of {paths.display(config_path)}")


class Qmp:
    """A QMP client on a unix socket: commands in order, events set aside."""

    def __init__(self, path: Path, timeout_s: float = QMP_TIMEOUT_S) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.sock.connect(str(path))
                break
            except (FileNotFoundError, ConnectionRefusedError) as exc:
                if time.monotonic() > deadline:
                    raise SetupError(f"QEMU's monitor socket did not open within {timeout_s:g} s") from exc
                time.sleep(0.05)
        self.buf = b""
        self._read()  # the greeting
        self.command("qmp_capabilities")

    def _read(self) -> dict[str, Any]:
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise SetupError("QEMU closed its monitor")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return dict(json.loads(line))

    def command(self, name: str, **arguments: Any) -> Any:
        msg: dict[str, Any] = {"execute": name}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._read()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise SetupError(
                    f"QEMU's monitor refused {name}: {reply['error'].get('desc', reply['error'])}"
                )
            # an asynchronous event (STOP, SHUTDOWN, ...): not an answer

    def close(self) -> None:
        self.sock.close()


@dataclass
class Capture:
    data: bytes
    result: qemu.RunResult
    reason: str  # what ended the recording: the time, the --until line, the guest's end


def capture(
    target: Target,
    *,
    seconds: float,
    until: re.Pattern[str] | None,
    timeout_s: float,
    echo: TextIO | None,
) -> Capture:
    """Boot the target, wait until its trace is on and then `seconds` of wall-clock time, a console line
    matching `until`, or the guest's end, whichever comes first; stop QEMU and read the ring."""
    with tempfile.TemporaryDirectory(prefix="rtmux-trace-") as tmp:
        sock = Path(tmp) / "qmp"
        dump = Path(tmp) / "ring.bin"
        argv = [*target.argv, "-qmp", f"unix:{sock},server=on,wait=off", "-no-shutdown"]
        on = threading.Event()
        matched = threading.Event()
        ended = threading.Event()
        box: dict[str, Any] = {}

        def on_line(line: str) -> None:
            if TRACE_ON_RE.search(line):
                on.set()
            if until is not None and until.search(line):
                matched.set()
            if STOPPED_RE.search(line):
                ended.set()

        def run() -> None:
            try:
                box["result"] = qemu.run_console(argv, timeout_s, echo=echo, on_line=on_line)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                box["error"] = exc
            finally:
                ended.set()
                on.set()

        worker = threading.Thread(target=run, name="qemu", daemon=True)
        worker.start()
        on.wait(timeout_s)
        reason = ""
        if "result" not in box and "error" not in box:
            limit = time.monotonic() + seconds if until is None else time.monotonic() + timeout_s
            while time.monotonic() < limit and not ended.is_set() and not matched.is_set():
                time.sleep(0.05)
            reason = (
                "the guest stopped"
                if ended.is_set()
                else f"a console line matched {until.pattern!r}"
                if matched.is_set() and until is not None
                else f"{seconds:g} s after the trace started"
            )
        data = b""
        if "result" not in box and "error" not in box:
            try:
                mon = Qmp(sock)
                try:
                    mon.command("stop")
                    mon.command(
                        "pmemsave", val=target.ring.physical, size=target.ring.size, filename=str(dump)
                    )
                    mon.command("quit")
                finally:
                    mon.close()
                data = dump.read_bytes()
            except (OSError, SetupError) as exc:
                box.setdefault("qmp_error", exc)
        worker.join(timeout_s)
        if "error" in box:
            raise box["error"]
        result: qemu.RunResult = box["result"]
        if not data:
            why = box.get("qmp_error")
            status = EXIT_TIMEOUT if result.timed_out else EXIT_FAILED
            raise GuestFailure(
                f"{target.what}: the trace could not be read"
                + (f" ({why})" if why else "")
                + ("" if on.is_set() and not result.timed_out else ": the rtos never said its trace was on"),
                result,
                status,
            )
        return Capture(data, result, reason)


@dataclass
class Written:
    json_path: Path
    png_path: Path | None
    raw_path: Path
    trace: rtos_trace.Trace
    exported: int


def write(
    data: bytes, prefix: Path, *, events: int | None, window_ms: float, picture: bool, title: str
) -> Written:
    """PREFIX.bin (the ring's bytes), PREFIX.json (the trace-event file of the last `events` events, or
    all) and, with `picture`, PREFIX.png (the last `window_ms`)."""
    trace = rtos_trace.parse(data)
    if events is not None and events > trace.nevents:
        raise UsageError(f"--events {events}: the ring holds {trace.nevents} events (RT_TRACE_EVENTS)")
    chosen = trace.events if events is None else trace.events[-events:]
    prefix.parent.mkdir(parents=True, exist_ok=True)
    raw = prefix.with_suffix(".bin")
    raw.write_bytes(data)
    json_path = prefix.with_suffix(".json")
    json_path.write_text(json.dumps(rtos_trace.to_chrome(trace, chosen)) + "\n")
    png = None
    if picture and trace.events:
        png = prefix.with_suffix(".png")
        rtos_trace.plot_timeline(trace, window_ms, png, title)
    return Written(json_path, png, raw, trace, len(chosen))


def summary(w: Written) -> list[str]:
    t = w.trace
    threads = sorted({e.arg for e in t.events if e.type in (rtos_trace.SWITCH, rtos_trace.WAKE)})
    lines = [
        f"{len(t.events)} events over {t.span_ns() / 1e6:.3f} ms (ring of {t.nevents}"
        + (", full: the oldest were overwritten)" if t.wrapped else ")")
        + ("" if t.recording else "; the application had stopped the trace"),
        "threads: " + ", ".join(f"{t.thread_name(i)} ({t.names.get(i, ('', '?'))[1]})" for i in threads),
        f"trace-event file: {paths.display(w.json_path)} ({w.exported} events; open it in ui.perfetto.dev)",
    ]
    if w.png_path is not None:
        lines.append(f"timeline: {paths.display(w.png_path)}")
    lines.append(f"raw ring: {paths.display(w.raw_path)} (./rtmux trace --from FILE converts it again)")
    return lines


def check_events(events: int | None, ring: Ring) -> None:
    """Refuse, before booting, a request for more events than the ring holds."""
    if events is not None and (events <= 0 or events > ring.events):
        raise UsageError(f"--events {events}: the ring holds 1 to {ring.events} events (RT_TRACE_EVENTS)")


def default_prefix(name: str) -> Path:
    return OUT_DIR / name
