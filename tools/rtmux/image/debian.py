"""Debian bookworm arm64 packages for the Linux guest, fetched once into cache/debian/ and reused.

What is fetched (each a *role*, unpacked into its own folder):

- `kernel-std`, `kernel-rt`: the unsigned kernel image packages that Debian's metapackages
  `linux-image-arm64` and `linux-image-rt-arm64` currently point at (`linux-image-<abi>-arm64-unsigned`,
  `linux-image-<abi>-rt-arm64-unsigned`). They ship `boot/vmlinuz-<release>`, an uncompressed arm64
  Image, and uncompressed modules; `modules.dep` and `modules.alias` are not shipped (depmod writes them
  at install time), so they are generated here from the modules' `.modinfo` (see modules_dep.py).
- `busybox-static`, `rt-tests` (cyclictest, hackbench) and the packages holding the shared libraries
  those two need: `libc6` (libc, librt, libpthread, the dynamic loader) and `libnuma1` (libnuma).
- `diod` (the 9P2000.L server of the files service, /usr/sbin/diod) and the packages holding the libraries
  it needs, directly and through each other (DIOD_LIBRARY_PACKAGES).
- `u-boot-qemu` (U-Boot for QEMU's boards; rtmux.image.uboot boots the system image through its
  qemu_arm64 build). It is an `Architecture: all` package: apt names it `u-boot-qemu:all` and its file
  ends in `_all.deb` (Package.arch).

Cache layout (paths.DEBIAN_CACHE): `debs/*.deb` as apt-get downloaded them, `roots/<role>/` the
`dpkg-deb -x` tree, `roots/<role>.json` the package name and version in it, written last (a folder without
it is incomplete and unpacked again). Once a role is cached it is reused without asking apt; `refresh`
(`./rtmux linux fetch --refresh`) resolves the versions from apt again and fetches what changed.

A package built for every architecture at once (`Architecture: all`, e.g. `u-boot-qemu`) is looked up and
downloaded as such when apt has no arm64 build of it.

Getting the arm64 package lists needs root once (`dpkg --add-architecture arm64`, `apt-get update`);
without root the exact commands are printed instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from rtmux import paths
from rtmux.errors import SetupError
from rtmux.image import modules_dep

ARCH = "arm64"
ARCH_ALL = "all"  # a package that is the same on every architecture
FLAVOURS = paths.LINUX_FLAVOURS
KERNEL_METAPACKAGES = {"std": "linux-image-arm64", "rt": "linux-image-rt-arm64"}
# Userland of the initramfs. The libraries are those DT_NEEDED by cyclictest and hackbench (and by the
# libraries themselves): librt.so.1, libpthread.so.0, libc.so.6, ld-linux-aarch64.so.1 (libc6) and
# libnuma.so.1 (libnuma1); and by diod (bookworm's 1.0.24): libcap.so.2, liblua5.1.so.0, libmunge.so.2,
# libwrap.so.0, which needs libnsl.so.2, which needs libtirpc.so.3, which needs libgssapi_krb5.so.2 and
# with it Kerberos's libkrb5.so.3, libk5crypto.so.3, libkrb5support.so.0, libcom_err.so.2 and
# libkeyutils.so.1 (libm, libdl, libresolv: libc6). diod's Depends also name libncurses6 and libtinfo6,
# which only dtop, another program of the package, links: not fetched. rtmux.image.initramfs fails with a
# clear message if a future version needs more.
DIOD_LIBRARY_PACKAGES = (
    "libcap2",
    "liblua5.1-0",
    "libmunge2",
    "libwrap0",
    "libnsl2",
    "libtirpc3",
    "libgssapi-krb5-2",
    "libkrb5-3",
    "libk5crypto3",
    "libkrb5support0",
    "libcom-err2",
    "libkeyutils1",
)
USERLAND_PACKAGES = ("busybox-static", "rt-tests", "libc6", "libnuma1", "diod", *DIOD_LIBRARY_PACKAGES)

APT_TIMEOUT_S = 600
DOWNLOAD_TIMEOUT_S = 1800
UNPACK_TIMEOUT_S = 600

# The arm64 Image header: "ARM\x64" at offset 0x38 (Documentation/arch/arm64/booting.rst).
IMAGE_MAGIC_OFFSET = 0x38
IMAGE_MAGIC = b"ARM\x64"

Log = Callable[[str], None]


def _log_stderr(message: str) -> None:
    print(f"rtmux: debian: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Package:
    name: str  # without the :arm64 suffix
    version: str
    size: int = 0  # bytes of the .deb, 0 when unknown
    arch: str = ARCH  # or ARCH_ALL

    @property
    def spec(self) -> str:
        """What apt-get download takes: name:arch=version."""
        return f"{self.name}:{self.arch}={self.version}"


@dataclass(frozen=True)
class Unpacked:
    role: str
    package: Package
    root: Path


@dataclass(frozen=True)
class Kernel:
    flavour: str
    package: Package
    release: str  # what `uname -r` prints, e.g. 6.1.0-56-arm64
    root: Path

    @property
    def image(self) -> Path:
        return self.root / "boot" / f"vmlinuz-{self.release}"

    @property
    def dtb_dir(self) -> Path:
        """The boards' device trees, one folder per vendor (broadcom/bcm2711-rpi-4-b.dtb, ...)."""
        return self.root / "usr" / "lib" / f"linux-image-{self.release}"

    @property
    def modules_dir(self) -> Path:
        return self.root / "lib" / "modules" / self.release


def kernel_role(flavour: str) -> str:
    if flavour not in FLAVOURS:
        raise SetupError(f"unknown kernel flavour {flavour!r}; expected one of {', '.join(FLAVOURS)}")
    return f"kernel-{flavour}"


def cache_dir() -> Path:
    return paths.DEBIAN_CACHE


def _roots_dir() -> Path:
    return cache_dir() / "roots"


def _debs_dir() -> Path:
    return cache_dir() / "debs"


# ------------------------------------------------------------------------------------------------ apt


def _run(argv: Sequence[str], what: str, timeout_s: float, cwd: Path | None = None) -> str:
    """Run a host tool, return its stdout; a SetupError with its output when it fails."""
    try:
        proc = subprocess.run(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env={**os.environ, "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"},
        )
    except FileNotFoundError as exc:
        raise SetupError(
            f"{what}: `{argv[0]}` not found (a Debian host with apt and dpkg is needed)"
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise SetupError(f"{what}: `{' '.join(argv)}` did not finish within {timeout_s:g} s") from exc
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip()
        raise SetupError(f"{what}: `{' '.join(argv)}` failed (exit status {proc.returncode}):\n{output}")
    return proc.stdout


def _is_root() -> bool:
    return os.geteuid() == 0


def _setup_commands() -> str:
    return f"dpkg --add-architecture {ARCH} && apt-get update"


def ensure_arch(log: Log = _log_stderr) -> None:
    """Make apt know arm64 packages: add the foreign architecture (root), or say what to run."""
    foreign = _run(["dpkg", "--print-foreign-architectures"], "checking dpkg architectures", 60).split()
    native = _run(["dpkg", "--print-architecture"], "checking dpkg architectures", 60).strip()
    if ARCH in foreign or native == ARCH:
        return
    if not _is_root():
        raise SetupError(
            f"apt does not know {ARCH} packages yet; as root run:\n  {_setup_commands()}\n"
            "then run this command again"
        )
    log(f"adding the {ARCH} architecture to dpkg and updating apt's package lists")
    _run(["dpkg", "--add-architecture", ARCH], "dpkg --add-architecture", 60)
    apt_update(log)


def apt_update(log: Log = _log_stderr) -> None:
    if not _is_root():
        raise SetupError(
            f"apt's package lists lack {ARCH} packages; as root run:\n  apt-get update\n"
            "then run this command again"
        )
    log("apt-get update")
    _run(["apt-get", "update", "-q"], "apt-get update", APT_TIMEOUT_S)


def parse_control(text: str) -> dict[str, str]:
    """The fields of the first stanza of Debian control text (continuation lines joined)."""
    fields: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        if line[0] in " \t" and key is not None:
            fields[key] += "\n" + line.strip()
            continue
        key, sep, value = line.partition(":")
        if not sep:
            key = None
            continue
        fields[key] = value.strip()
    return fields


def apt_show(name: str) -> dict[str, str] | None:
    """The control fields of the candidate version of `name:arm64` (or of `name:all` when apt has no
    arm64 build of it), or None when apt has no such package."""
    for arch in (ARCH, ARCH_ALL):
        try:
            proc = subprocess.run(
                ["apt-cache", "show", "--no-all-versions", f"{name}:{arch}"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=APT_TIMEOUT_S,
                env={**os.environ, "LC_ALL": "C"},
            )
        except FileNotFoundError as exc:
            raise SetupError("`apt-cache` not found (a Debian host with apt is needed)") from exc
        if proc.returncode == 0 and proc.stdout.strip():
            return parse_control(proc.stdout)
    return None


def _package_from(fields: dict[str, str], name: str) -> Package:
    version = fields.get("Version")
    if not version:
        raise SetupError(f"apt shows no version for {name}:{ARCH}")
    try:
        size = int(fields.get("Size", "0"))
    except ValueError:
        size = 0
    arch = ARCH_ALL if fields.get("Architecture") == ARCH_ALL else ARCH
    return Package(name, version, size, arch)


def kernel_image_dependency(depends: str) -> str:
    """The kernel image package a metapackage depends on: `linux-image-6.1.0-56-arm64 (= ...)` ->
    `linux-image-6.1.0-56-arm64`."""
    for item in depends.split(","):
        first = item.split("|")[0].strip()
        m = re.match(r"(linux-image-[^\s:(]+)", first)
        if m:
            return m.group(1)
    raise SetupError(f"no linux-image-* package in the dependencies {depends!r}")


def unsigned_name(image_package: str) -> str:
    """The unsigned twin of a (signed) kernel image package name."""
    return image_package if image_package.endswith("-unsigned") else f"{image_package}-unsigned"


def release_of(package_name: str) -> str:
    """`linux-image-6.1.0-56-rt-arm64-unsigned` -> `6.1.0-56-rt-arm64` (what uname -r prints)."""
    name = package_name.removeprefix("linux-image-").removesuffix("-unsigned")
    if name == package_name:
        raise SetupError(f"{package_name} is not a kernel image package name")
    return name


class _Resolver:
    """Looks packages up in apt; runs `apt-get update` once (as root) when one is missing."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.updated = False

    def show(self, name: str) -> dict[str, str]:
        fields = apt_show(name)
        if fields is None and not self.updated:
            self.updated = True
            apt_update(self.log)
            fields = apt_show(name)
        if fields is None:
            raise SetupError(
                f"apt knows no package {name}:{ARCH} (nor {name}:{ARCH_ALL}); check the apt sources "
                f"(Debian bookworm, main) and run `{_setup_commands()}` as root"
            )
        return fields

    def package(self, name: str) -> Package:
        return _package_from(self.show(name), name)

    def kernel(self, flavour: str) -> Package:
        meta = KERNEL_METAPACKAGES[flavour]
        image = kernel_image_dependency(self.show(meta).get("Depends", ""))
        return self.package(unsigned_name(image))


def resolve(roles: Sequence[str], log: Log = _log_stderr) -> dict[str, Package]:
    """The current candidate package of each role, from apt."""
    ensure_arch(log)
    resolver = _Resolver(log)
    wanted = {}
    for role in roles:
        if role.startswith("kernel-"):
            wanted[role] = resolver.kernel(role.removeprefix("kernel-"))
        else:
            wanted[role] = resolver.package(role)
    return wanted


# ---------------------------------------------------------------------------------------------- cache


@contextlib.contextmanager
def _cache_lock(log: Log) -> Iterator[None]:
    """Only one rtmux process changes the cache at a time."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / ".lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log("waiting for another rtmux process that is updating the package cache")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _stamp(role: str) -> Path:
    return _roots_dir() / f"{role}.json"


def cached(role: str) -> Unpacked | None:
    """The package unpacked for `role`, or None when the cache has none (or an incomplete one)."""
    stamp = _stamp(role)
    root = _roots_dir() / role
    try:
        data = json.loads(stamp.read_text(encoding="utf-8"))
        package = Package(
            str(data["name"]), str(data["version"]), int(data.get("size", 0)), str(data.get("arch", ARCH))
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not root.is_dir():
        return None
    return Unpacked(role, package, root)


def _deb_glob(package: Package) -> str:
    return f"{package.name}_*_{package.arch}.deb"


def _download(packages: Sequence[Package], log: Log) -> dict[str, Path]:
    """apt-get download the packages into debs/; name -> .deb path."""
    debs = _debs_dir()
    debs.mkdir(parents=True, exist_ok=True)
    tmp = cache_dir() / "download.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    total = sum(p.size for p in packages)
    names = ", ".join(f"{p.name} {p.version}" for p in packages)
    log(f"downloading {len(packages)} package(s), {total / 1e6:.1f} MB: {names}")
    argv = ["apt-get", "download", "-q"]
    if _is_root():
        argv += ["-o", "APT::Sandbox::User=root"]  # the _apt user may not write into the cache
    _run(argv + [p.spec for p in packages], "apt-get download", DOWNLOAD_TIMEOUT_S, cwd=tmp)
    result = {}
    for p in packages:
        found = sorted(tmp.glob(_deb_glob(p)))
        if len(found) != 1:
            raise SetupError(f"apt-get download left {len(found)} files for {p.name} (expected 1) in {tmp}")
        for old in debs.glob(_deb_glob(p)):
            old.unlink()
        target = debs / found[0].name
        found[0].replace(target)
        result[p.name] = target
    shutil.rmtree(tmp, ignore_errors=True)
    return result


def _find_deb(package: Package) -> Path | None:
    """The cached .deb of exactly this version, if any."""
    for deb in _debs_dir().glob(_deb_glob(package)):
        fields = _deb_fields(deb)
        if fields.get("Version") == package.version and fields.get("Package") == package.name:
            return deb
    return None


def _deb_fields(deb: Path) -> dict[str, str]:
    try:
        return parse_control(_run(["dpkg-deb", "--field", str(deb)], f"reading {deb.name}", 120))
    except SetupError:
        return {}


def _unpack(role: str, package: Package, deb: Path, log: Log) -> Unpacked:
    roots = _roots_dir()
    roots.mkdir(parents=True, exist_ok=True)
    stamp = _stamp(role)
    root = roots / role
    old = cached(role)
    if old is not None and old.package.name != package.name:
        # A new kernel ABI is a new package name: drop the replaced package's download too.
        for old_deb in _debs_dir().glob(_deb_glob(old.package)):
            old_deb.unlink()
    stamp.unlink(missing_ok=True)
    shutil.rmtree(root, ignore_errors=True)
    tmp = roots / f"{role}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    log(f"unpacking {deb.name}")
    _run(["dpkg-deb", "-x", str(deb), str(tmp)], f"unpacking {deb.name}", UNPACK_TIMEOUT_S)
    if role.startswith("kernel-"):
        _prepare_kernel_tree(tmp, package, log)
    tmp.rename(root)
    stamp.write_text(
        json.dumps(
            {"name": package.name, "version": package.version, "size": package.size, "arch": package.arch}
        )
        + "\n",
        encoding="utf-8",
    )
    return Unpacked(role, package, root)


def _prepare_kernel_tree(root: Path, package: Package, log: Log) -> None:
    """Check the kernel package's layout and write modules.dep/modules.alias as depmod would."""
    release = kernel_release(root, package)
    check_image(root / "boot" / f"vmlinuz-{release}")
    modules_dir = root / "lib" / "modules" / release
    log(f"indexing the modules of {release} (modules.dep, modules.alias)")
    try:
        index = modules_dep.build_index(modules_dir)
    except (modules_dep.ModuleError, ValueError) as exc:
        raise SetupError(f"cannot index the modules of {package.name}: {exc}") from exc
    modules_dep.write_index(index, modules_dir)


def kernel_release(root: Path, package: Package) -> str:
    """The release (uname -r) of an unpacked kernel package: its one lib/modules/<release>/ folder."""
    modules = root / "lib" / "modules"
    releases = sorted(p.name for p in modules.iterdir() if p.is_dir()) if modules.is_dir() else []
    if len(releases) != 1:
        raise SetupError(f"{package.name}: expected one lib/modules/<release>/ folder, found {releases}")
    return releases[0]


def check_image(image: Path) -> None:
    """Refuse anything but an uncompressed arm64 Image (which QEMU -kernel and the hypervisor load)."""
    try:
        with open(image, "rb") as f:
            header = f.read(64)
    except OSError as exc:
        raise SetupError(f"kernel image {image} cannot be read: {exc}") from exc
    if header[IMAGE_MAGIC_OFFSET : IMAGE_MAGIC_OFFSET + 4] != IMAGE_MAGIC:
        raise SetupError(f"{image} is not an uncompressed arm64 Image (no ARM\\x64 magic at 0x38)")


def fetch(wanted: dict[str, Package], log: Log = _log_stderr) -> dict[str, Unpacked]:
    """Make the cache hold `wanted` (role -> package); download and unpack only what differs."""
    with _cache_lock(log):
        result: dict[str, Unpacked] = {}
        todo: dict[str, Package] = {}
        for role, package in wanted.items():
            have = cached(role)
            if have is not None and (have.package.name, have.package.version) == (
                package.name,
                package.version,
            ):
                result[role] = have
            else:
                todo[role] = package
        if not todo:
            return result
        debs = {role: _find_deb(p) for role, p in todo.items()}
        missing = [todo[role] for role, deb in debs.items() if deb is None]
        if missing:
            downloaded = _download(missing, log)
            for role, package in todo.items():
                if debs[role] is None:
                    debs[role] = downloaded[package.name]
        for role, package in todo.items():
            deb = debs[role]
            assert deb is not None
            result[role] = _unpack(role, package, deb, log)
        return result


def ensure(roles: Sequence[str], *, refresh: bool = False, log: Log = _log_stderr) -> dict[str, Unpacked]:
    """The unpacked trees of `roles`: from the cache when all are there (apt is not asked), otherwise
    (or with refresh) resolved from apt and fetched."""
    if not refresh:
        have = {role: cached(role) for role in roles}
        if all(u is not None for u in have.values()):
            return {role: u for role, u in have.items() if u is not None}
        absent = [role for role, u in have.items() if u is None]
        log(f"not in the cache yet: {', '.join(absent)}")
    wanted = resolve(roles, log)
    return fetch(wanted, log)


def kernel(flavour: str, *, refresh: bool = False, log: Log = _log_stderr) -> Kernel:
    """Debian's current kernel of `flavour` (std or rt), unpacked, with its module index."""
    role = kernel_role(flavour)
    unpacked = ensure([role], refresh=refresh, log=log)[role]
    return kernel_from(flavour, unpacked)


def kernel_from(flavour: str, unpacked: Unpacked) -> Kernel:
    release = kernel_release(unpacked.root, unpacked.package)
    k = Kernel(flavour, unpacked.package, release, unpacked.root)
    if not k.image.is_file():
        raise SetupError(f"{unpacked.package.name} has no boot/vmlinuz-{release}")
    return k


def cached_kernel_image(flavour: str) -> Path | None:
    """The Image of Debian's kernel `flavour` in the package cache, or None while it is not fetched
    (the lookup rtmux.config.load is given for `kernel = "debian:FLAVOUR"`)."""
    unpacked = cached(kernel_role(flavour))
    if unpacked is None:
        return None
    try:
        return kernel_from(flavour, unpacked).image
    except SetupError:
        return None


def userland(*, refresh: bool = False, log: Log = _log_stderr) -> list[Unpacked]:
    """The unpacked userland packages (busybox, rt-tests, libraries), in USERLAND_PACKAGES order."""
    got = ensure(list(USERLAND_PACKAGES), refresh=refresh, log=log)
    return [got[name] for name in USERLAND_PACKAGES]


def cache_size() -> int:
    """Bytes used by the cache (debs and unpacked trees)."""
    total = 0
    for dirpath, _dirs, files in os.walk(cache_dir()):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, f)).st_size
    return total
