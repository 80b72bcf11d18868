"""`./rtmux run`: build the whole system of a configuration (hypervisor, rtos, Linux) and boot it.

The images come from the configuration: an rtos partition's `image` (built by `make rtos`), a Linux
partition's Debian kernel and initramfs (fetched and built by rtmux.image.debian and
rtmux.image.initramfs). rtmux.image.bundle packs them with the configuration blob behind
build/hyp/rtmux.img into build/system/NAME-HASH.img, named after its content so that runs of the same
configuration in parallel (pytest -n, the benchmark) never boot each other's image. QEMU boots it with
-kernel, or (`firmware` FIRMWARE_UBOOT) runs Debian's U-Boot, which loads it from QEMU's TFTP server
(build/system/u-boot/NAME-HASH/) and starts it with booti (rtmux.image.uboot).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from rtmux import config as cfg
from rtmux import paths, qemu
from rtmux.errors import SetupError
from rtmux.image import bundle, debian, dtgen, initramfs, uboot
from rtmux.run import gdb, linux

DEFAULT_CONFIG = cfg.DEFAULT_CONFIG
SYSTEM_DIR = paths.BUILD_DIR / "system"
HYP_IMAGE = paths.BUILD_DIR / "hyp" / "rtmux.img"
UBOOT_DIR = SYSTEM_DIR / "u-boot"  # one folder per image U-Boot boots (uboot.boot_folder): QEMU's TFTP root
# How the system image is started: QEMU loads it itself (-kernel), or U-Boot, as the board's firmware,
# loads it and starts it with booti.
FIRMWARE_NONE = "none"
FIRMWARE_UBOOT = "u-boot"
FIRMWARES = (FIRMWARE_NONE, FIRMWARE_UBOOT)
# Older images of a configuration are removed when a new one is written; QEMU reads its -kernel file
# whole when it starts, so an image is needed for seconds only, and this age leaves any run in flight
# its file.
STALE_IMAGE_S = 600


@dataclass(frozen=True)
class System:
    config: cfg.SystemConfig
    image: Path
    argv: list[str]
    firmware: uboot.Firmware | None = None  # with FIRMWARE_UBOOT: the U-Boot that boots the image
    gdb_server: gdb.Server | None = None  # QEMU's gdb server, when asked for (--gdb)


def make(targets: list[str]) -> None:
    """Run `make -s TARGETS` at the repository root; SetupError with its output when it fails."""
    proc = subprocess.run(["make", "-s", *targets], cwd=paths.REPO_ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SetupError(f"`make -s {' '.join(targets)}` failed:\n{proc.stdout}{proc.stderr}")


def write_image(stem: str, data: bytes) -> Path:
    """SYSTEM_DIR/STEM-HASH.img holding `data` (written atomically, once per content), removing that
    configuration's images older than STALE_IMAGE_S."""
    SYSTEM_DIR.mkdir(parents=True, exist_ok=True)
    image = SYSTEM_DIR / f"{stem}-{hashlib.sha256(data).hexdigest()[:12]}.img"
    if image.is_file():
        os.utime(image)  # in use again: not stale for another run's pruning below
    else:
        tmp = image.with_name(f"{image.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(image)
    now = time.time()
    for old in SYSTEM_DIR.glob(f"{stem}-*.img"):
        try:
            if old != image and now - old.stat().st_mtime > STALE_IMAGE_S:
                old.unlink()
        except FileNotFoundError:
            pass  # another run removed it first
    return image


def _flavour(text: str) -> str | None:
    return text.split(":", 1)[1] if text.startswith("debian:") else None


def _other_app(part: cfg.Partition, rtos_image: Path | None) -> bool:
    """Whether `rtos_image` (--rtos-app) replaces the rtos partition's configured image by another."""
    img = part.image("image")
    return rtos_image is not None and (img is None or img.path.resolve() != rtos_image.resolve())


def rtos_app_notes(config: cfg.SystemConfig, rtos_image: Path | None, bootargs: dict[str, str]) -> list[str]:
    """What --rtos-app does to the boot arguments: the configured ones belong to the configured
    application, so another one boots without them (partition_images) unless --bootargs gives some."""
    notes = []
    for part in config.partitions:
        if part.kind == cfg.KIND_RTOS and _other_app(part, rtos_image) and part.name not in bootargs:
            assert rtos_image is not None
            configured = part.image("image")
            own = f" (those of {configured.text})" if configured is not None else ""
            if part.bootargs.replace("timer=phys", "").strip():
                notes.append(
                    f"partition {part.name!r}: {paths.display(rtos_image)} boots without the configured "
                    f"boot arguments {part.bootargs!r}{own}; --bootargs {part.name}=ARGS gives it some"
                )
    return notes


def seed_warnings(config: cfg.SystemConfig, firmware: str = FIRMWARE_NONE) -> list[str]:
    """Why a --seed boot of `config` would not repeat: its network devices, whose answers (DHCP, router
    advertisements) come from the host at host-dependent times; U-Boot's network, for the same reason."""
    warnings = [
        f"--seed: partition {p.name!r} has a network device ({d.name!r}), whose answers come from the "
        "host: this boot will not repeat exactly; measure with a configuration without one (as ./rtmux "
        "bench does)"
        for p in config.partitions
        for d in p.devices
        if d.network
    ]
    if firmware == FIRMWARE_UBOOT:
        warnings.append(
            "--seed: U-Boot loads the image over QEMU's network, whose answers come from the host: this "
            "boot will not repeat exactly; measure without --firmware u-boot"
        )
    return warnings


def partition_images(
    config: cfg.SystemConfig,
    rtos_image: Path | None,
    bootargs: dict[str, str],
    linux_script: str | None = None,
) -> dict[str, bundle.PartitionImages]:
    """The bytes each partition boots, fetching and building what a Linux partition needs; with
    `linux_script`, every Linux partition's initramfs carries it and its init runs it at boot."""
    out: dict[str, bundle.PartitionImages] = {}
    for part in config.partitions:
        args = bootargs.get(part.name)
        if part.kind == cfg.KIND_RTOS:
            img = part.image("image")
            path = rtos_image if rtos_image is not None else (img.path if img else None)
            if path is None or not path.is_file():
                raise SetupError(f"partition {part.name!r}: rtos image {path} not found; run `make rtos`")
            if args is None and _other_app(part, rtos_image):
                args = ""  # the configured arguments are its own application's; this one starts with none
            if args is not None and part.shared and "timer=" not in args:
                args = f"{args} timer=phys".strip()  # as the configuration's own (config/partitions.py)
            out[part.name] = bundle.PartitionImages(path.read_bytes(), bootargs=args)
            continue
        kernel = part.image("kernel")
        initrd = part.image("initramfs")
        if kernel is None:
            raise SetupError(f"partition {part.name!r}: no kernel")
        flavour = _flavour(kernel.text)
        kernel_path: Path
        initrd_path: Path | None
        if flavour is not None:
            guest = initramfs.build(flavour)
            kernel_path, initrd_path = guest.kernel.image, guest.initramfs
        else:
            kernel_path = kernel.path
            initrd_path = initrd.path if initrd is not None else None
        if initrd is not None and _flavour(kernel.text) is None and not initrd.path.is_file():
            raise SetupError(f"partition {part.name!r}: initramfs {initrd.path} not found")
        initrd_bytes = initrd_path.read_bytes() if initrd_path is not None else b""
        if linux_script is not None:
            if not initrd_bytes:
                raise SetupError(f"partition {part.name!r}: a boot-time script needs an initramfs")
            initrd_bytes = initramfs.with_script(initrd_bytes, linux_script)
            args = f"{part.bootargs if args is None else args} {initramfs.RUN_BOOTARG}".strip()
        out[part.name] = bundle.PartitionImages(kernel_path.read_bytes(), initrd_bytes, bootargs=args)
    return out


def build(
    config_path: Path,
    *,
    rtos_image: Path | None = None,
    bootargs: dict[str, str] | None = None,
    icount: bool = False,
    no_build: bool = False,
    linux_script: str | None = None,
    seed: int | None = None,
    interactive: bool = False,
    firmware: str = FIRMWARE_NONE,
    gdb_request: gdb.Request | None = None,
) -> System:
    """Build everything the configuration needs and pack it (write_image). `linux_script`: Linux runs
    it at boot (partition_images); `seed`: the measurement mode: fixed seeds, kept by the hypervisor
    at every start, QEMU's seed_args, and the hypervisor's el2-entries report at its first console tick
    (a reference for counting entries without typing, which would make the run depend on the host);
    `interactive`: a person watches the console (decides the console view "auto"); `firmware`: how
    the image is started (FIRMWARES); `gdb_request`: QEMU's gdb server for a partition or the hypervisor
    (rtmux.run.gdb; a partition the configuration lacks is refused before anything is built)."""
    if firmware not in FIRMWARES:
        raise SetupError(f"firmware {firmware!r}: expected one of {', '.join(FIRMWARES)}")
    config = cfg.load(config_path, find_kernel=debian.cached_kernel_image)
    config = replace(config, console=config.console.resolved(interactive))
    target = None
    if gdb_request is not None:
        target = gdb.system_target(config, gdb_request.target, rtos_image, bootargs)
    if not no_build:
        make(["rtos", "hyp"])
    if not HYP_IMAGE.is_file():
        raise SetupError(f"{paths.display(HYP_IMAGE)} not found; run `make hyp`")
    images = partition_images(config, rtos_image, bootargs or {}, linux_script)
    board_dtb = dtgen.board_dtb(config.board)
    data = bundle.pack(
        config,
        HYP_IMAGE.read_bytes(),
        images,
        board_dtb,
        bundle.fixed_seed(seed) if seed is not None else secrets.token_bytes,
        fixed_seeds=seed is not None,
        boot_report=seed is not None,
    )
    image = write_image(Path(config_path).stem, data)
    argv = [qemu.find_qemu(), *config.qemu_args(), "-nographic", "-nic", "none"]
    fw = None
    if firmware == FIRMWARE_UBOOT:
        fw = uboot.firmware()
        folder = uboot.boot_folder(image, board_dtb, UBOOT_DIR, STALE_IMAGE_S)
        argv += uboot.qemu_args(fw, folder, uboot.free_transport(config))
    else:
        argv += ["-kernel", str(image)]
    if icount:
        argv += ["-icount", qemu.ICOUNT]
    if seed is not None:
        argv += qemu.seed_args(seed)
    debug = None
    if gdb_request is not None and target is not None:
        debug = gdb.server(target, gdb_request)
        argv += debug.qemu_args()
    return System(config, image, argv, fw, debug)


def run(
    config_path: Path,
    *,
    icount: bool,
    timeout_s: float | None,
    linux_cmd: str | None,
    rtos_image: Path | None = None,
    bootargs: dict[str, str] | None = None,
    no_build: bool = False,
    echo: TextIO | None = None,
    linux_script: str | None = None,
    seed: int | None = None,
    firmware: str = FIRMWARE_NONE,
    gdb_request: gdb.Request | None = None,
) -> int:
    """Boot the system. Interactive without linux_cmd (0 when QEMU ends normally); with linux_cmd, wait
    for Linux's shell, run it, power Linux off and return its exit status; with linux_script, Linux runs
    it at boot and powers off (its status is returned). `firmware`: how the image is started (build).
    `gdb_request`: QEMU's gdb server (build), announced with the gdb command that attaches to it; the run's
    default limit is then the interactive one (time stopped in gdb is wall time too)."""
    echo = echo if echo is not None else sys.stdout
    interactive = linux_cmd is None and linux_script is None and sys.stdin.isatty()
    system = build(
        config_path,
        rtos_image=rtos_image,
        bootargs=bootargs,
        icount=icount,
        no_build=no_build,
        linux_script=linux_script,
        seed=seed,
        interactive=interactive,
        firmware=firmware,
        gdb_request=gdb_request,
    )
    for note in rtos_app_notes(system.config, rtos_image, bootargs or {}):
        print(f"rtmux: {note}", file=sys.stderr)
    print(f"rtmux: booting {paths.display(system.image)}: {qemu.mode_description(icount)}", file=sys.stderr)
    if system.firmware is not None:
        print(
            f"rtmux: through {system.firmware.describe()} (-bios): its boot script loads the image from "
            f"QEMU's TFTP server ({paths.display(UBOOT_DIR / system.image.stem)}) and starts it with booti",
            file=sys.stderr,
        )
    if seed is not None:
        print(
            f"rtmux: fixed seeds ({seed}): for measurement only, every boot has the same KASLR",
            file=sys.stderr,
        )
        for warning in seed_warnings(system.config, firmware):
            print(f"rtmux: warning: {warning}", file=sys.stderr)
    wanted = linux_cmd is not None or linux_script is not None
    if wanted and not system.config.of_kind(cfg.KIND_LINUX):
        raise SetupError(f"--linux-cmd/--linux-script: {paths.display(config_path)} has no Linux partition")
    what = f"system {paths.display(system.image)}"
    if system.gdb_server is not None:
        for line in gdb.instructions(system.gdb_server):
            print(f"rtmux: {line}", file=sys.stderr)
        sys.stderr.flush()
        if timeout_s is None:
            timeout_s = linux.INTERACTIVE_TIMEOUT_S
    return linux.session(
        system.argv,
        what,
        icount=icount,
        linux_cmd=linux_cmd,
        timeout_s=timeout_s,
        echo=echo,
        script=linux_script is not None,
    )
