"""Where things are in the repository. Every path is derived from this file's place in tools/rtmux/.

A base module: it imports nothing of rtmux, so that every layer can name the files the others make.
"""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = REPO_ROOT / "build"
RTOS_BUILD_DIR = BUILD_DIR / "rtos"
BENCH_DIR = BUILD_DIR / "bench"
BENCHMARKS_MD = REPO_ROOT / "BENCHMARKS.md"
LINUX_BUILD_DIR = BUILD_DIR / "linux"
# Downloaded Debian arm64 packages and their unpacked trees (never committed, reused across builds).
DEBIAN_CACHE = REPO_ROOT / "cache" / "debian"
GUEST_DIR = REPO_ROOT / "guest"

# Applications linked with the rtos: one folder each under rtos/apps/ (the Makefile reads the same
# list); `make rtos` builds build/rtos/<app>.img for each.
RTOS_APPS = tuple(sorted(p.name for p in (REPO_ROOT / "rtos" / "apps").iterdir() if p.is_dir()))


def rtos_image(app: str) -> Path:
    """The image `make rtos` builds for an rtos application."""
    return RTOS_BUILD_DIR / f"{app}.img"


# Debian's arm64 kernel flavours the Linux guest boots (`debian:std`, `debian:rt` in a configuration);
# rtmux.image.debian fetches them, rtmux.image.initramfs builds one initramfs per flavour.
LINUX_FLAVOURS = ("std", "rt")


# Linux programs for the initramfs' /usr/bin: one folder of C sources each under guest/ (the Makefile
# reads the same list); `make linux-programs` builds build/guest/<name> (static arm64) and
# build/guest/host/<name> (the same sources for the host, for unit tests).
GUEST_BUILD_DIR = BUILD_DIR / "guest"
LINUX_PROGRAMS = tuple(sorted(p.name for p in GUEST_DIR.iterdir() if p.is_dir() and any(p.glob("*.c"))))


# Examples whose Linux build also goes into the initramfs' /usr/bin under their folder's name (each
# examples/NAME/Makefile's `linux` target: a static arm64 executable; the Makefile's LEXAMPLES is the same
# list); `make linux-programs` copies it to build/guest/<name> (no host build: they have no unit tests).
EXAMPLES_DIR = REPO_ROOT / "examples"
LINUX_EXAMPLES = ("control-loop",)


def linux_program(name: str, host: bool = False) -> Path:
    """The file `make linux-programs` builds for a program of guest/ or an example of LINUX_EXAMPLES (for
    the host with `host`: guest/'s only)."""
    return (GUEST_BUILD_DIR / "host" if host else GUEST_BUILD_DIR) / name


def initramfs_image(flavour: str) -> Path:
    """The initramfs `./rtmux linux initramfs --kernel FLAVOUR` builds for a Debian kernel flavour."""
    return LINUX_BUILD_DIR / f"initramfs-{flavour}.cpio.gz"


def display(path: Path) -> str:
    """A path as the user should see it: relative to the repository root when inside it, also when it
    lies under a symbolic link there (a cache/ shared between clones)."""
    for candidate in (Path(os.path.abspath(path)), path.resolve()):
        try:
            return str(candidate.relative_to(REPO_ROOT))
        except ValueError:
            pass
    return str(path)
