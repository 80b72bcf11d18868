"""The Linux guest's initramfs: build/linux/initramfs-<flavour>.cpio.gz from the Debian packages.

Contents (`plan`):
- busybox (static) as /bin/busybox with one /bin/<applet> symlink per applet it was built with;
- /usr/bin/cyclictest and /usr/bin/hackbench (rt-tests) and /usr/sbin/diod (the files service's 9P
  server), with the shared libraries and the dynamic loader they need, found by following DT_NEEDED and
  PT_INTERP through the unpacked packages, symlinks kept as the packages have them; /etc/rtmux/diod.files
  lists what diod needs (itself, loader, libraries, links), which the services supervisor copies into the
  root it confines diod to;
- the kernel modules of MODULES and everything modules.dep says they need, under
  lib/modules/<release>/ with the package's layout, plus modules.dep and modules.alias for exactly those
  modules (busybox modprobe reads them); modules built into the kernel are left out;
- /init, /sbin/rtmux-vports (the /dev/virtio-ports/NAME links of V-Bus channels), /sbin/rtmux-services
  (the supervisor of Linux's services for the rtos: diod, the log reader) and the udhcpc script from
  guest/initramfs/, /etc/rtmux/modules (what /init loads), a minimal /etc (passwd, group,
  hostname), /dev/console, and the rtos demo's example set-point profile as
  /srv/rtos/demo/profile.csv (the default system's exported directory);
- rtmux's own Linux programs (guest/NAME/, built static for arm64 into build/guest/ by `make
  linux-programs`) in /usr/bin, and the Linux builds of the examples paths.LINUX_EXAMPLES names.

The archive is the kernel's "newc" cpio format, written here (no cpio tool needed) with every owner
root and every time 0, and gzip-compressed with a zero timestamp: the same inputs give the same bytes.
A stamp beside the archive holds a digest of the whole plan (paths, modes, each source file's size and
modification time, inline contents): the archive is rebuilt only when that digest changes.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from rtmux import paths
from rtmux.errors import SetupError
from rtmux.formats import elf
from rtmux.image import debian, modules_dep

# Bump when the archive layout or the format writer changes, so existing archives are rebuilt.
FORMAT_VERSION = 1

# Modules the guest loads at boot, in this order (virtio_mmio first: it finds the devices, the V-Bus
# among them; virtio_console drives the V-Bus's ports).
MODULES = ("virtio_mmio", "virtio_pci", "virtio_console", "virtio_net", "virtio_blk")
# guest/initramfs/ file -> its place in the archive (all executable).
# guest/initramfs/NAME -> path in the archive, executable or not
GUEST_FILES = (
    ("init", "init", True),
    ("inittab", "etc/inittab", False),
    ("profile", "etc/profile", False),
    ("vports", "sbin/rtmux-vports", True),
    ("services", "sbin/rtmux-services", True),
    ("udhcpc.script", "etc/udhcpc/default.script", True),
    # the rtos demo's set-point profile, in the default system's exported directory (rtos/apps/demo)
    ("demo-profile.csv", "srv/rtos/demo/profile.csv", False),
)
LINUX_PROGRAMS_COMMAND = "make linux-programs"
DIOD = "usr/sbin/diod"
PROGRAMS = ("usr/bin/cyclictest", "usr/bin/hackbench", DIOD)
# What diod needs to run, one archive path a line (its binary, loader, libraries, the symbolic links to
# them): guest/initramfs/services copies these into the root diod runs in.
DIOD_FILES = "etc/rtmux/diod.files"
BUSYBOX = "bin/busybox"
# Where the dynamic loader looks without an ld.so.cache (Debian's multiarch paths first).
LIBRARY_DIRS = ("lib/aarch64-linux-gnu", "usr/lib/aarch64-linux-gnu", "lib", "usr/lib")
DIRECTORIES = (
    "bin", "sbin", "usr/bin", "usr/sbin", "lib", "etc", "etc/rtmux", "etc/udhcpc", "dev", "proc", "sys",
    "tmp", "run", "root", "var", "mnt",
)  # fmt: skip
HOSTNAME = "rtmux-linux"

S_DIR = stat.S_IFDIR | 0o755
S_FILE = stat.S_IFREG | 0o644
S_EXEC = stat.S_IFREG | 0o755
S_LINK = stat.S_IFLNK | 0o777
S_CONSOLE = stat.S_IFCHR | 0o600

Log = Callable[[str], None]


def _log_stderr(message: str) -> None:
    print(f"rtmux: initramfs: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Entry:
    """One archive member. Files come from `source` or `data`; a symlink's target is in `data`."""

    path: str  # relative, POSIX, no leading slash: "bin/busybox"
    mode: int  # st_mode with the file type bits
    data: bytes = b""
    source: Path | None = None
    rdev: tuple[int, int] = (0, 0)  # (major, minor) of a device node

    def contents(self) -> bytes:
        return self.source.read_bytes() if self.source is not None else self.data


@dataclass
class Plan:
    """What goes into the archive, path -> entry (parents are added when written)."""

    entries: dict[str, Entry] = field(default_factory=dict)

    def add(self, entry: Entry) -> None:
        old = self.entries.get(entry.path)
        if old is not None and old != entry:
            raise SetupError(f"initramfs: two different entries for /{entry.path}")
        self.entries[entry.path] = entry

    def add_dir(self, path: str) -> None:
        self.add(Entry(path, S_DIR))

    def add_file(self, path: str, source: Path, executable: bool | None = None) -> None:
        if executable is None:
            executable = bool(source.stat().st_mode & 0o111)
        self.add(Entry(path, S_EXEC if executable else S_FILE, source=source))

    def add_text(self, path: str, text: str, executable: bool = False) -> None:
        self.add(Entry(path, S_EXEC if executable else S_FILE, data=text.encode()))

    def add_symlink(self, path: str, target: str) -> None:
        self.add(Entry(path, S_LINK, data=target.encode()))

    def sorted_entries(self) -> list[Entry]:
        """Every entry, parents before children, with any missing parent directory added."""
        entries = dict(self.entries)
        for path in list(entries):
            for parent in PurePosixPath(path).parents:
                key = str(parent)
                if key != "." and key not in entries:
                    entries[key] = Entry(key, S_DIR)
        return [entries[p] for p in sorted(entries, key=lambda p: PurePosixPath(p).parts)]

    def digest(self) -> str:
        """Changes whenever the archive would: paths, modes, inline data, sources' size and mtime."""
        h = hashlib.sha256(f"rtmux-initramfs {FORMAT_VERSION}\n".encode())
        for e in self.sorted_entries():
            h.update(f"{e.path}\0{e.mode:o}\0{e.rdev}\0".encode())
            if e.source is not None:
                st = e.source.stat()
                h.update(f"{e.source}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
            else:
                h.update(hashlib.sha256(e.data).digest())
        return h.hexdigest()


# ------------------------------------------------------------------------------------ cpio (newc)

NEWC_MAGIC = b"070701"
TRAILER = "TRAILER!!!"


def _pad4(n: int) -> int:
    return (4 - n % 4) % 4


def _newc_header(ino: int, mode: int, nlink: int, size: int, rdev: tuple[int, int], namesize: int) -> bytes:
    fields = (ino, mode, 0, 0, nlink, 0, size, 0, 0, rdev[0], rdev[1], namesize, 0)
    return NEWC_MAGIC + b"".join(b"%08X" % f for f in fields)


def write_cpio(entries: Iterable[Entry], out: io.BufferedIOBase | io.BytesIO) -> None:
    """Write `entries` (in the order given) as a newc cpio archive, with the trailer."""
    ino = 1
    for e in entries:
        data = e.contents() if not stat.S_ISDIR(e.mode) else b""
        name = e.path.encode() + b"\0"
        nlink = 2 if stat.S_ISDIR(e.mode) else 1
        out.write(_newc_header(ino, e.mode, nlink, len(data), e.rdev, len(name)))
        out.write(name + b"\0" * _pad4(110 + len(name)))
        out.write(data + b"\0" * _pad4(len(data)))
        ino += 1
    name = TRAILER.encode() + b"\0"
    out.write(_newc_header(0, 0, 1, 0, (0, 0), len(name)))
    out.write(name + b"\0" * _pad4(110 + len(name)))


@dataclass(frozen=True)
class CpioMember:
    path: str
    mode: int
    data: bytes  # file contents, or a symlink's target
    rdev: tuple[int, int] = (0, 0)

    @property
    def kind(self) -> str:
        for test, kind in ((stat.S_ISDIR, "dir"), (stat.S_ISLNK, "link"), (stat.S_ISREG, "file")):
            if test(self.mode):
                return kind
        return "char" if stat.S_ISCHR(self.mode) else "other"


class CpioError(ValueError):
    pass


def read_cpio(data: bytes) -> list[CpioMember]:
    """The members of a newc cpio archive (up to its trailer)."""
    members: list[CpioMember] = []
    pos = 0
    while True:
        header = data[pos : pos + 110]
        if len(header) < 110 or header[:6] != NEWC_MAGIC:
            raise CpioError(f"no newc header at offset {pos}")
        try:
            f = [int(header[6 + 8 * i : 14 + 8 * i], 16) for i in range(13)]
        except ValueError as exc:
            raise CpioError(f"malformed newc header at offset {pos}") from exc
        mode, size, rmajor, rminor, namesize = f[1], f[6], f[9], f[10], f[11]
        name_start = pos + 110
        name = data[name_start : name_start + namesize].rstrip(b"\0").decode()
        pos = name_start + namesize
        pos += _pad4(pos)
        body = data[pos : pos + size]
        if len(body) != size:
            raise CpioError(f"member {name!r} is truncated")
        pos += size + _pad4(size)
        if name == TRAILER:
            return members
        members.append(CpioMember(name, mode, body, (rmajor, rminor)))


def read_initramfs(path: Path) -> list[CpioMember]:
    """The members of a gzip-compressed (or plain) newc archive."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return read_cpio(raw)


# ------------------------------------------------------------------------------------------ content


class Trees:
    """The union of unpacked package trees, looked up as one file system (first tree wins)."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = list(roots)

    def find(self, rel: str) -> Path | None:
        for root in self.roots:
            p = root / rel
            if p.is_symlink() or p.exists():
                return p
        return None


def _normalize(rel: str) -> str:
    """Collapse `.` and `..` in a tree-relative path (no file system access)."""
    parts: list[str] = []
    for part in PurePosixPath(rel).parts:
        if part in ("/", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def add_from_trees(plan: Plan, trees: Trees, rel: str, what: str, added: list[str] | None = None) -> str:
    """Add /rel as the packages have it: a symlink chain is kept, its final file copied. Returns the
    path of that final file (relative); `added` gets every path added, links first."""
    rel = _normalize(rel)
    for _ in range(16):
        found = trees.find(rel)
        if found is None:
            raise SetupError(f"initramfs: {what}: /{rel} is in none of the unpacked packages")
        if added is not None:
            added.append(rel)
        if not found.is_symlink():
            if not found.is_file():
                raise SetupError(f"initramfs: {what}: /{rel} is not a regular file")
            plan.add_file(rel, found)
            return rel
        target = os.readlink(found)
        plan.add_symlink(rel, target)
        rel = _normalize(target if target.startswith("/") else f"{PurePosixPath(rel).parent}/{target}")
    raise SetupError(f"initramfs: {what}: too many symbolic links at /{rel}")


def find_library(trees: Trees, soname: str) -> str | None:
    for directory in LIBRARY_DIRS:
        rel = f"{directory}/{soname}"
        if trees.find(rel) is not None:
            return rel
    return None


def add_program(plan: Plan, trees: Trees, rel: str) -> list[str]:
    """Add an executable with its interpreter and, transitively, every DT_NEEDED library; returns every
    path added for it (files and symbolic links), each once."""
    todo = [(rel, "program")]
    seen: set[str] = set()
    added: list[str] = []
    while todo:
        path, needed_by = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        final = add_from_trees(plan, trees, path, f"needed by {needed_by}", added)
        source = trees.find(final)
        assert source is not None
        try:
            info = elf.dynamic_info(source)
        except elf.ElfError as exc:
            raise SetupError(f"initramfs: {exc}") from exc
        if info.interpreter:
            todo.append((info.interpreter.lstrip("/"), f"/{path}"))
        for soname in info.needed:
            lib = find_library(trees, soname)
            if lib is None:
                raise SetupError(
                    f"initramfs: library {soname} needed by /{path} is in none of the unpacked packages "
                    f"({', '.join(debian.USERLAND_PACKAGES)}); add its package to debian.USERLAND_PACKAGES"
                )
            todo.append((lib, f"/{path}"))
    return list(dict.fromkeys(added))


def busybox_applets(binary: bytes) -> list[str]:
    """The applet names compiled into a busybox binary: its sorted, NUL-separated name table, which
    starts with the `[` and `[[` applets."""
    start = binary.find(b"\0[\0[[\0")
    if start < 0:
        raise SetupError("initramfs: cannot find the applet table in the busybox binary")
    names = []
    pos = start + 1
    while True:
        end = binary.index(b"\0", pos)
        name = binary[pos:end]
        if not name or len(name) > 64 or not all(32 < c < 127 and c != ord("/") for c in name):
            break
        names.append(name.decode())
        pos = end + 1
    if "sh" not in names:
        raise SetupError(f"initramfs: busybox applet table read wrongly ({len(names)} names, no `sh`)")
    return names


def add_busybox(plan: Plan, trees: Trees) -> list[str]:
    source = trees.find(BUSYBOX)
    if source is None or not source.is_file():
        raise SetupError(f"initramfs: /{BUSYBOX} is in none of the unpacked packages (busybox-static)")
    plan.add_file(BUSYBOX, source, executable=True)
    applets = [a for a in busybox_applets(source.read_bytes()) if a != "busybox"]
    for applet in applets:
        plan.add_symlink(f"bin/{applet}", "busybox")
    return applets


def builtin_modules(modules_dir: Path) -> set[str]:
    path = modules_dir / "modules.builtin"
    if not path.is_file():
        return set()
    return {modules_dep.module_name(line.strip()) for line in path.read_text().splitlines() if line.strip()}


def add_modules(plan: Plan, modules_dir: Path, release: str, wanted: Sequence[str]) -> list[str]:
    """Add `wanted` and their dependencies (modules.dep of `modules_dir`) keeping the package layout;
    returns the wanted modules that are loadable (built-in ones are dropped)."""
    dep_file = modules_dir / "modules.dep"
    if not dep_file.is_file():
        raise SetupError(f"initramfs: {dep_file} missing (the package cache is incomplete)")
    index = modules_dep.parse_modules_dep(dep_file.read_text(encoding="utf-8"))
    alias_file = modules_dir / "modules.alias"
    if alias_file.is_file():
        index.aliases = modules_dep.parse_modules_alias(alias_file.read_text(encoding="utf-8"))
    builtin = builtin_modules(modules_dir)
    loadable = [modules_dep.normalize(m) for m in wanted if modules_dep.normalize(m) not in builtin]
    try:
        needed = modules_dep.closure(index.deps, loadable)
    except modules_dep.ModuleError as exc:
        raise SetupError(f"initramfs: {exc}") from exc
    base = f"lib/modules/{release}"
    for name in needed:
        plan.add_file(f"{base}/{index.path[name]}", modules_dir / index.path[name], executable=False)
    plan.add_text(f"{base}/modules.dep", index.dep_text(needed))
    plan.add_text(f"{base}/modules.alias", index.alias_text(needed))
    return loadable


def add_guest_programs(plan: Plan, programs: Mapping[str, Path]) -> None:
    """rtmux's Linux programs (name -> built file) as /usr/bin/NAME: static arm64 executables, since
    they must run whatever libraries the initramfs holds."""
    for name, source in sorted(programs.items()):
        if not source.is_file():
            raise SetupError(
                f"initramfs: {paths.display(source)} missing: `{LINUX_PROGRAMS_COMMAND}` builds it"
            )
        data = source.read_bytes()
        try:
            arch = elf.machine(data, str(source))
            info = elf.dynamic_info_bytes(data, str(source))
        except elf.ElfError as exc:
            raise SetupError(f"initramfs: {exc}") from exc
        if arch != elf.EM_AARCH64 or info.interpreter is not None or info.needed:
            raise SetupError(
                f"initramfs: {paths.display(source)} is not a static arm64 executable "
                f"(`{LINUX_PROGRAMS_COMMAND}` builds it so)"
            )
        plan.add_file(f"usr/bin/{name}", source, executable=True)


def built_programs() -> dict[str, Path]:
    """The programs of guest/ and the examples' Linux builds, as `make linux-programs` builds them for the
    initramfs."""
    return {name: paths.linux_program(name) for name in paths.LINUX_PROGRAMS + paths.LINUX_EXAMPLES}


ETC_PASSWD = "root:x:0:0:root:/root:/bin/sh\n"
ETC_GROUP = "root:x:0:\n"


def plan_initramfs(
    kernel_modules_dir: Path,
    release: str,
    userland_roots: Sequence[Path],
    *,
    guest_dir: Path | None = None,
    modules: Sequence[str] = MODULES,
    programs: Sequence[str] = PROGRAMS,
    guest_programs: Mapping[str, Path] | None = None,
    extra: dict[str, bytes] | None = None,
) -> Plan:
    """Everything the archive holds, from an unpacked kernel's modules folder and userland trees;
    `guest_programs` (name -> file) defaults to built_programs()."""
    guest_dir = guest_dir if guest_dir is not None else paths.GUEST_DIR / "initramfs"
    plan = Plan()
    for d in DIRECTORIES:
        plan.add_dir(d)
    plan.add(Entry("dev/console", S_CONSOLE, rdev=(5, 1)))
    trees = Trees(userland_roots)
    add_busybox(plan, trees)
    for program in programs:
        needs = add_program(plan, trees, program)
        if program == DIOD:
            plan.add_text(DIOD_FILES, "".join(f"{path}\n" for path in needs))
    add_guest_programs(plan, built_programs() if guest_programs is None else guest_programs)
    loadable = add_modules(plan, kernel_modules_dir, release, modules)
    plan.add_text("etc/rtmux/modules", "".join(f"{m}\n" for m in loadable))
    for name, target, executable in GUEST_FILES:
        source = guest_dir / name
        if not source.is_file():
            raise SetupError(f"initramfs: {source} missing")
        plan.add_file(target, source, executable=executable)
    plan.add_text("etc/passwd", ETC_PASSWD)
    plan.add_text("etc/group", ETC_GROUP)
    plan.add_text("etc/hostname", HOSTNAME + "\n")
    for path, data in (extra or {}).items():
        plan.entries[path.lstrip("/")] = Entry(path.lstrip("/"), S_FILE, data=data)
    return plan


def write_archive(plan: Plan, output: Path) -> None:
    """Write the plan as a gzip-compressed newc archive (atomically: a temporary file, then rename)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(f"{output.name}.{os.getpid()}.tmp")  # parallel builds each write their own
    raw = io.BytesIO()
    write_cpio(plan.sorted_entries(), raw)
    with open(tmp, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as gz:
        gz.write(raw.getvalue())
    tmp.replace(output)


# The boot-time script of guest/initramfs/init's `rtmux.run=` hook, as with_script adds it.
SCRIPT_PATH = "etc/rtmux/script"
RUN_BOOTARG = f"rtmux.run=/{SCRIPT_PATH}"
_OVERLAY_ALIGN = 512  # the kernel skips zero bytes between archives; any multiple of 4 would do


def with_script(initramfs: bytes, script: str) -> bytes:
    """`initramfs` followed by a second, uncompressed newc archive holding /etc/rtmux/script (executable;
    `#!/bin/sh` added when it has no interpreter line). The kernel unpacks the archives in turn, the later
    adding to the earlier, so the image itself is not rebuilt. Boot with RUN_BOOTARG to run it."""
    text = script if script.startswith("#!") else "#!/bin/sh\n" + script
    if not text.endswith("\n"):
        text += "\n"
    extra = io.BytesIO()
    write_cpio([Entry(SCRIPT_PATH, S_EXEC, data=text.encode())], extra)
    pad = (-len(initramfs)) % _OVERLAY_ALIGN
    return initramfs + bytes(pad) + extra.getvalue()


def output_path(flavour: str) -> Path:
    return paths.initramfs_image(flavour)


def _stamp_path(output: Path) -> Path:
    return output.with_name(output.name + ".digest")


def build_plan(plan: Plan, output: Path, log: Log = _log_stderr) -> bool:
    """Write `output` unless its stamp says it already holds `plan`; True when it was (re)built."""
    digest = plan.digest()
    stamp = _stamp_path(output)
    if output.is_file() and stamp.is_file() and stamp.read_text().strip() == digest:
        return False
    log(f"building {paths.display(output)} ({len(plan.entries)} entries)")
    stamp.unlink(missing_ok=True)
    write_archive(plan, output)
    stamp.write_text(digest + "\n")
    return True


def make_linux_programs() -> None:
    proc = subprocess.run(
        ["make", "-s", "linux-programs"],
        cwd=paths.REPO_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SetupError(f"`{LINUX_PROGRAMS_COMMAND}` failed:\n{proc.stdout}{proc.stderr}")


@dataclass(frozen=True)
class Guest:
    """What a bare Linux boot needs: the kernel (Image inside) and the initramfs built for it."""

    kernel: debian.Kernel
    initramfs: Path


def build(flavour: str, *, refresh: bool = False, log: Log | None = None) -> Guest:
    """Fetch what is missing, then build build/linux/initramfs-<flavour>.cpio.gz if its inputs changed
    (rtmux's Linux programs included: `make linux-programs` runs first, a no-op when they are built)."""
    make_linux_programs()
    kernel = debian.kernel(flavour, refresh=refresh)
    userland = debian.userland(refresh=refresh)
    plan = plan_initramfs(kernel.modules_dir, kernel.release, [u.root for u in userland])
    output = output_path(flavour)
    build_plan(plan, output, log if log is not None else _log_stderr)
    return Guest(kernel, output)
