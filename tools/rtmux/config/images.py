"""Where a partition's image files come from: the build steps that produce them and Debian's kernels.

The Debian package cache belongs to rtmux.image.debian, a layer above this one: `load` takes its lookup
(`KernelLookup`, e.g. `debian.cached_kernel_image`) as an argument instead of importing it. Without one,
a `debian:FLAVOUR` kernel is reported as not fetched yet.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rtmux import paths

# Debian's kernel of a flavour, e.g. "std" -> its Image in the package cache; None while it is not fetched.
KernelLookup = Callable[[str], Path | None]


# ------------------------------------------------------------------------------------------ build steps
def build_products() -> dict[str, str]:
    """Files a build step produces (path relative to the repository root) -> the command that builds them."""
    products = {f"build/rtos/{app}.img": "make rtos" for app in paths.RTOS_APPS}
    for file, command in _linux_products().items():
        products[file] = command
    return products


# The ./rtmux commands that fetch the Debian kernel and build the initramfs (rtmux.image.debian,
# rtmux.image.initramfs, rtmux.run.linux).
LINUX_FETCH_COMMAND = "./rtmux linux fetch"
DEBIAN_KERNEL_PREFIX = "debian:"  # kernel = "debian:std": Debian's current kernel of that flavour


def linux_initramfs_command(flavour: str) -> str:
    return f"./rtmux linux initramfs --kernel {flavour}"


def _linux_products() -> dict[str, str]:
    return {rel(paths.initramfs_image(f)): linux_initramfs_command(f) for f in paths.LINUX_FLAVOURS}


def rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(paths.REPO_ROOT))
    except ValueError:
        return str(path)


def example_image(role: str) -> str:
    return {
        "image": "build/rtos/demo.img",
        "kernel": "debian:std",
        "initramfs": "build/linux/initramfs-std.cpio.gz",
    }.get(role, "")


def build_hint(rel: str, products: dict[str, str]) -> str:
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    near = sorted(p for p in products if p.rsplit("/", 1)[0] == folder)
    if near:
        by_cmd: dict[str, list[str]] = {}
        for p in near:
            by_cmd.setdefault(products[p], []).append(p)
        return "; ".join(f"`{cmd}` builds {', '.join(files)}" for cmd, files in by_cmd.items())
    commands = sorted(set(products.values()))
    return "build steps: " + ", ".join(f"`{c}`" for c in commands)
