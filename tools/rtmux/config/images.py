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
def build_products(role: str | None = None) -> dict[str, str]:
    """Files a build step produces (path relative to the repository root) -> the command that builds them:
    those a partition's `role` key may name (`image`: the rtos images, `initramfs`: the Linux
    initramfs archives, `kernel`: none, Debian's kernels are named `debian:FLAVOUR`), or all of them."""
    by_role = {
        "image": {f"build/rtos/{app}.img": "make rtos" for app in paths.RTOS_APPS},
        "initramfs": _linux_products(),
    }
    if role is not None:
        return dict(by_role.get(role, {}))
    return {file: command for products in by_role.values() for file, command in products.items()}


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


def build_hint(rel: str, products: dict[str, str], role: str = "") -> str:
    """What to write instead of a missing file: the build steps that make files of its kind (those of
    its folder first), or for a kernel, what a kernel can be."""
    if role == "kernel":
        flavours = " or ".join(DEBIAN_KERNEL_PREFIX + f for f in paths.LINUX_FLAVOURS)
        return (
            f"write {flavours} for Debian's kernel, fetched by `{LINUX_FETCH_COMMAND}`, or the path of an "
            "arm64 Image"
        )
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    near = sorted(p for p in products if p.rsplit("/", 1)[0] == folder) or sorted(products)
    if not near:
        return "no build step makes a file of this kind"
    by_cmd: dict[str, list[str]] = {}
    for p in near:
        by_cmd.setdefault(products[p], []).append(p)
    return "; ".join(f"`{cmd}` builds {', '.join(files)}" for cmd, files in by_cmd.items())
