"""`./rtmux app new`: a new rtos application, outside the checkout, built with the rtos SDK.

`make sdk` writes the SDK to build/sdk/ (headers, libraries, linker script, rtos.mk, toolchain.cmake and
the application template app/); a new application is that template with its name and the SDK's place
filled in, plus a system configuration that boots it beside Linux (configs/qemu-virt.toml with the rtos
partition's image replaced).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from rtmux import paths
from rtmux.errors import SetupError, UsageError

SDK_DIR = paths.BUILD_DIR / "sdk"
TEMPLATE = "app"  # the template's folder inside the SDK (rtos/sdk/app/ in the repository)
DEFAULT_SYSTEM = paths.REPO_ROOT / "configs" / "qemu-virt.toml"
# The default system's rtos partition: its image and boot arguments (the demo's), replaced in the copy.
DEMO_IMAGE_LINE = re.compile(r'^image = "build/rtos/demo\.img"$', re.M)
DEMO_BOOTARGS_LINE = re.compile(r'^bootargs = "latmon=1 period_us=1000"$', re.M)
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")


@dataclass(frozen=True)
class NewApp:
    folder: Path
    name: str
    files: tuple[Path, ...]


def build_sdk() -> None:
    proc = subprocess.run(["make", "-s", "sdk"], cwd=paths.REPO_ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SetupError(f"`make -s sdk` failed:\n{proc.stdout}{proc.stderr}")


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise UsageError(
            f"application name {name!r}: a letter, then letters, digits or '_' (at most 32), "
            "as it names the image and appears in C; give one with --name"
        )
    return name


def system_config(image: Path, name: str) -> str:
    """The default system (configs/qemu-virt.toml) with `image` in the rtos partition, no boot arguments."""
    text = DEFAULT_SYSTEM.read_text()
    header = (
        f"# {name} (rtos partition) beside Debian Linux: configs/qemu-virt.toml of rtmux with the rtos\n"
        "# partition's image replaced. Boot it from rtmux's checkout: ./rtmux run PATH/TO/system.toml\n\n"
    )
    text, n_image = DEMO_IMAGE_LINE.subn(f'image = "{image}"', text)
    text, n_args = DEMO_BOOTARGS_LINE.subn('bootargs = ""', text)
    if n_image != 1 or n_args != 1:
        raise SetupError(
            f"{paths.display(DEFAULT_SYSTEM)} no longer has the demo's image and boot-argument lines "
            "that `app new` replaces; update rtmux.sdk"
        )
    text = re.sub(
        r'^description = ".*"$',
        f'description = "{name} on CPU 0, Debian Linux on CPU 1"',
        text,
        count=1,
        flags=re.M,
    )
    return header + text


def new_app(folder: Path, name: str | None = None, *, sdk: Path = SDK_DIR, build: bool = True) -> NewApp:
    """Write a new application into `folder` (which must not exist, or be empty)."""
    folder = folder.resolve()
    name = check_name(name if name is not None else folder.name)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder} exists and is not an empty folder; choose a new one")
    if build:
        build_sdk()
    template = sdk / TEMPLATE
    if not template.is_dir():
        raise SetupError(f"no application template in {paths.display(sdk)}; run `make sdk`")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for src in sorted(template.iterdir()):
        text = src.read_text().replace("@NAME@", name).replace("@SDK@", str(sdk.resolve()))
        dst = folder / src.name
        dst.write_text(text)
        written.append(dst)
    config = folder / "system.toml"
    config.write_text(system_config(folder / "build" / f"{name}.img", name))
    written.append(config)
    return NewApp(folder, name, tuple(written))
