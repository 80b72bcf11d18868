"""Booting through U-Boot (rtmux.image.uboot): the boot script, U-Boot's DTB, the folder QEMU serves by
TFTP, U-Boot's network transport, QEMU's options and the firmware from the package cache."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

import pytest

from rtmux import config, paths
from rtmux.errors import SetupError
from rtmux.formats import fdt, uimage
from rtmux.image import debian, uboot
from rtmux.run import system


def test_boot_script_loads_and_boots_the_image() -> None:
    text = uboot.boot_script("qemu-virt-0123456789ab.img")
    lines = [line.strip() for line in text.splitlines()]
    load = lines.index("if tftpboot ${kernel_addr_r} qemu-virt-0123456789ab.img; then")
    boot = lines.index("booti ${kernel_addr_r} - ${fdtcontroladdr}")
    assert load < boot < lines.index("poweroff")  # a failed load or booti ends the run at once
    assert f"echo {uboot.SAY} boot failed" in lines
    with pytest.raises(ValueError, match="safe"):
        uboot.boot_script("a b;reset.img")


def test_control_dtb_sets_bootdelay_and_keeps_the_board() -> None:
    board = fdt.Node("", {"model": fdt.string("board")}, [fdt.Node("memory@40000000", {"x": fdt.cells(1)})])
    raw = fdt.serialize(fdt.Tree(board, boot_cpuid_phys=0))
    tree = fdt.parse(uboot.control_dtb(raw))
    assert tree.root.find("/config").get_cells("bootdelay") == [uboot.BOOTDELAY_S]
    assert tree.root.get_string("model") == "board" and tree.root.find("/memory@40000000").get_cells("x") == [
        1
    ]
    # a /config the board has already keeps its other properties
    board.children.append(fdt.Node("config", {"bootdelay": fdt.cells(5), "other": fdt.cells(7)}))
    tree = fdt.parse(uboot.control_dtb(fdt.serialize(fdt.Tree(board))))
    assert len([c for c in tree.root.children if c.name == "config"]) == 1
    assert tree.root.find("/config").get_cells("bootdelay") == [0]
    assert tree.root.find("/config").get_cells("other") == [7]


def test_boot_folder_serves_the_image_script_and_dtb(tmp_path: Path) -> None:
    image = tmp_path / "qemu-virt-0123456789ab.img"
    image.write_bytes(b"image")
    dtb = fdt.serialize(fdt.Tree(fdt.Node("")))
    root = tmp_path / "u-boot"
    stale = root / "qemu-virt-old"
    stale.mkdir(parents=True)
    old = time.time() - 3600
    os.utime(stale, (old, old))
    folder = uboot.boot_folder(image, dtb, root, stale_s=600)
    assert folder == root / image.stem
    assert os.path.samefile(folder / image.name, image)
    script = uimage.parse_script((folder / uboot.SCRIPT_NAME).read_bytes())
    assert script.text == uboot.boot_script(image.name).encode("ascii")
    assert fdt.parse((folder / uboot.CONTROL_DTB).read_bytes()).root.find("/config")
    assert not stale.exists() and not list(folder.glob("*.tmp"))
    # the same image again: the same folder, its files kept
    assert uboot.boot_folder(image, dtb, root, stale_s=600) == folder
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [image.name, uboot.SCRIPT_NAME, uboot.CONTROL_DTB]
    )


def _fake_image(path: Path) -> Path:
    header = struct.pack("<IIQQQQQQ4sI", 0, 0, 0x80000, 0x20000, 2, 0, 0, 0, b"ARM\x64", 0)
    path.write_bytes(header + bytes(4096 - len(header)))
    return path


def test_free_transport_avoids_the_configured_devices(tmp_path: Path) -> None:
    assert uboot.free_transport(config.load(config.DEFAULT_CONFIG)) == 0  # its network is on PCIe
    demo = _fake_image(tmp_path / "demo.img")
    text = (
        f'[[partition]]\nname = "rtos"\nkind = "rtos"\ncpus = [0]\nmemory = "16M"\nimage = "{demo}"\n'
        '[[partition.device]]\nname = "blk"\nboard = "virtio-mmio.0"\ndma = "unrestricted"\n'
        'qemu = "-drive if=none,id=d0,file=x.img -device virtio-blk-device,drive=d0,bus=virtio-mmio-bus.0"\n'
    )
    assert uboot.free_transport(config.loads(text, "x.toml")) == 1


def test_qemu_args_replace_kernel_with_the_firmware(tmp_path: Path) -> None:
    fw = uboot.Firmware(debian.Package("u-boot-qemu", "1", arch=debian.ARCH_ALL), tmp_path / "u-boot.bin")
    folder = tmp_path / "a,b"
    args = uboot.qemu_args(fw, folder, 3)
    assert args[args.index("-bios") + 1] == str(fw.path)
    assert args[args.index("-dtb") + 1] == str(folder / uboot.CONTROL_DTB)
    netdev = args[args.index("-netdev") + 1]
    assert netdev.startswith(f"user,id={uboot.NETDEV},restrict=on,") and netdev.endswith(
        f"tftp={tmp_path}/a,,b"
    )
    assert args[args.index("-device") + 1].endswith(f"netdev={uboot.NETDEV},bus=virtio-mmio-bus.3")
    assert "-kernel" not in args


def test_seed_warns_about_u_boots_network() -> None:
    quiet = config.load(paths.REPO_ROOT / "tests" / "system" / "configs" / "rtos-only.toml")
    assert system.seed_warnings(quiet) == []
    (warning,) = system.seed_warnings(quiet, system.FIRMWARE_UBOOT)
    assert "U-Boot" in warning and "--firmware u-boot" in warning


def test_firmware_is_the_cached_packages_qemu_arm64_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(paths, "DEBIAN_CACHE", tmp_path)
    (tmp_path / "roots" / uboot.ROLE / uboot.FIRMWARE).parent.mkdir(parents=True)
    (tmp_path / "roots" / uboot.ROLE / uboot.FIRMWARE).write_bytes(b"firmware")
    (tmp_path / "roots" / f"{uboot.ROLE}.json").write_text(
        '{"name": "u-boot-qemu", "version": "2023.01", "size": 10, "arch": "all"}'
    )
    fw = uboot.firmware()
    assert fw.package == debian.Package(uboot.ROLE, "2023.01", 10, debian.ARCH_ALL)
    assert fw.path.read_bytes() == b"firmware"
    (tmp_path / "roots" / uboot.ROLE / uboot.FIRMWARE).unlink()
    with pytest.raises(SetupError, match="qemu_arm64/u-boot.bin"):
        uboot.firmware()
