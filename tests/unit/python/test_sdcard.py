"""`./rtmux sdcard --board rpi4` (tools/rtmux/image/sdcard.py): the Raspberry Pi 4 boot partition's files,
config.txt's keys, the boot script's commands, where each file comes from, what is listed as missing, and
a second run that changes nothing. Fake package trees, except the last tests, which take Debian's own
packages as the command does (as test_boarddesc.py takes Debian's kernel package)."""

from __future__ import annotations

import dataclasses
import struct
import subprocess
from pathlib import Path

import pytest

from rtmux import paths
from rtmux.errors import SetupError
from rtmux.formats import elf, fdt, uimage
from rtmux.image import debian, sdcard

GENERATED = {sdcard.CONFIG_TXT, sdcard.BOOT_CMD, sdcard.BOOT_SCR, sdcard.README}


def dtb(symbols: bool) -> bytes:
    root = fdt.Node("", {"compatible": fdt.strings("raspberrypi,4-model-b", "brcm,bcm2711")})
    root.children.append(fdt.Node("chosen"))
    if symbols:
        root.children.append(fdt.Node("__symbols__", {"uart0": fdt.string("/soc/serial@7e201000")}))
    return fdt.serialize(fdt.Tree(root))


def provided(path: Path, data: bytes, origin: str) -> sdcard.Provided:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return sdcard.Provided(path, origin)


def fake_inputs(tmp_path: Path, *, firmware: bool = False, image: bool = False) -> sdcard.Inputs:
    """Inputs from fake package trees: every file's bytes name the file, so a mix-up shows."""
    pkgs = tmp_path / "pkgs"
    fw: dict[str, sdcard.Provided] = {}
    if firmware:
        for name in sdcard.FIRMWARE_FILES:
            data = dtb(True) if name == sdcard.DTB else f"firmware {name}".encode()
            fw[name] = provided(pkgs / "firmware" / name, data, f"firmware: {name}")
    return sdcard.Inputs(
        uboot=provided(pkgs / "u-boot" / "u-boot.bin", b"u-boot rpi_4", "u-boot-rpi 1"),
        bl31=provided(pkgs / "tf-a" / "bl31.bin", b"bl31 rpi4", "arm-trusted-firmware 1"),
        firmware=fw,
        firmware_note="no firmware here",
        kernel_dtb=provided(pkgs / "kernel" / sdcard.DTB_IN_KERNEL, dtb(False), "kernel 1"),
        image=provided(pkgs / "rtmux.img", b"rtmux image", "image") if image else None,
    )


def files_in(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def config_keys(text: str) -> dict[str, str]:
    """config.txt as the firmware reads it: key=value lines, `#` comments; a key given twice fails."""
    keys: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        assert sep and key and value, f"not a key=value line: {line!r}"
        assert key not in keys, f"{key} given twice"
        keys[key] = value
    return keys


def commands(script: str) -> list[str]:
    return [
        line.strip() for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]


def test_layout_without_firmware_lists_what_is_missing(tmp_path: Path) -> None:
    inputs = fake_inputs(tmp_path)
    card = sdcard.write(tmp_path / "card", inputs)
    on_disk = files_in(tmp_path / "card")
    assert set(on_disk) == GENERATED | {sdcard.UBOOT, sdcard.BL31, sdcard.DTB}
    assert card.missing == (sdcard.START, sdcard.FIXUP, sdcard.OVERLAY, sdcard.IMAGE)
    assert on_disk[sdcard.UBOOT] == inputs.uboot.path.read_bytes()
    assert on_disk[sdcard.BL31] == inputs.bl31.path.read_bytes()
    assert inputs.kernel_dtb is not None and on_disk[sdcard.DTB] == inputs.kernel_dtb.path.read_bytes()
    assert {e.name for e in card.entries} == set(on_disk) | set(card.missing)
    readme = on_disk[sdcard.README].decode()
    still = readme.split("Still to add", 1)[1].split("\n\n", 1)[0]
    assert [line.strip() for line in still.splitlines()[1:]] == list(card.missing)
    assert inputs.firmware_note in readme.replace("\n", " ")
    for e in card.entries:
        if not e.missing:
            assert e.origin in readme, e
    # Debian's DTB has no /__symbols__: the overlay config.txt asks for cannot apply, and both say so
    (note,) = card.notes
    assert "__symbols__" in note and "disable-bt" in note
    assert "__symbols__" in readme


def test_config_txt(tmp_path: Path) -> None:
    sdcard.write(tmp_path / "card", fake_inputs(tmp_path))
    keys = config_keys((tmp_path / "card" / sdcard.CONFIG_TXT).read_text())
    assert keys == {
        "arm_64bit": "1",
        "enable_uart": "1",
        "dtoverlay": "disable-bt",
        "enable_gic": "1",
        "armstub": "bl31.bin",
        "kernel": "u-boot.bin",
    }
    # the files it names are on the card, and the overlay is one of those to add
    assert (tmp_path / "card" / keys["armstub"]).is_file() and (tmp_path / "card" / keys["kernel"]).is_file()
    assert f"overlays/{keys['dtoverlay']}.dtbo" in sdcard.FIRMWARE_FILES


def test_boot_script(tmp_path: Path) -> None:
    card = sdcard.write(tmp_path / "card", fake_inputs(tmp_path))
    text = (tmp_path / "card" / sdcard.BOOT_CMD).read_text(encoding="ascii")
    script = uimage.parse_script((tmp_path / "card" / sdcard.BOOT_SCR).read_bytes())
    assert script.text.decode("ascii") == text and script.arch == uimage.ARCH_ARM64
    assert "`" not in text  # nothing the shell of U-Boot could take for a command substitution
    cmds = commands(text)
    load = next(i for i, c in enumerate(cmds) if " load " in f" {c} ")
    words = cmds[load].removeprefix("if ").removesuffix("; then").split()
    # load from where distro boot found the script, to kernel_addr_r, the image the card lists
    assert words == ["load", "${devtype}", "${devnum}:${distro_bootpart}", "${kernel_addr_r}", sdcard.IMAGE]
    assert sdcard.IMAGE in {e.name for e in card.entries}
    assert cmds[load].startswith("if ") and cmds[load].endswith("; then")
    booti = cmds.index("booti ${kernel_addr_r} - ${fdt_addr}")
    end = cmds.index("fi")
    assert load < booti < end  # booti only after the image loaded
    assert all(c.split()[0] in {"echo", "if", "booti", "fi"} for c in cmds), cmds


def test_firmware_from_a_folder(tmp_path: Path) -> None:
    inputs = fake_inputs(tmp_path, firmware=True, image=True)
    card = sdcard.write(tmp_path / "card", inputs)
    on_disk = files_in(tmp_path / "card")
    assert card.missing == () and card.notes == ()
    for name, source in inputs.firmware.items():
        assert on_disk[name] == source.path.read_bytes()
    assert on_disk[sdcard.IMAGE] == b"rtmux image"
    assert "Nothing is missing" in on_disk[sdcard.README].decode()


def test_firmware_folder_checked(tmp_path: Path) -> None:
    folder = tmp_path / "boot"
    (folder / "overlays").mkdir(parents=True)
    (folder / sdcard.START).write_bytes(b"start")
    with pytest.raises(SetupError, match=r"no fixup4\.dat, bcm2711-rpi-4-b\.dtb, overlays/disable-bt\.dtbo"):
        sdcard.firmware_from_folder(folder)
    with pytest.raises(SetupError, match="not a folder"):
        sdcard.firmware_from_folder(tmp_path / "absent")
    for name in sdcard.FIRMWARE_FILES:
        (folder / name).write_bytes(name.encode())
    got = sdcard.firmware_from_folder(folder)
    assert {name: p.path for name, p in got.items()} == {
        name: folder / name for name in sdcard.FIRMWARE_FILES
    }


def test_firmware_from_a_package_tree(tmp_path: Path) -> None:
    """Debian's raspi-firmware (not reachable here): whatever of the files its tree holds, wherever."""
    root = tmp_path / "raspi-firmware"
    for name in ("usr/lib/raspi-firmware/start4.elf", "usr/lib/raspi-firmware/fixup4.dat", "usr/share/doc/x"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(name.encode())
    unpacked = debian.Unpacked("raspi-firmware", debian.Package("raspi-firmware", "9"), root)
    got = sdcard.firmware_from_tree(unpacked)
    assert set(got) == {sdcard.START, sdcard.FIXUP}
    assert got[sdcard.START].path == root / "usr/lib/raspi-firmware/start4.elf"
    assert got[sdcard.START].origin == "Debian raspi-firmware 9: usr/lib/raspi-firmware/start4.elf"
    inputs = fake_inputs(tmp_path)
    card = sdcard.write(tmp_path / "card", dataclasses.replace(inputs, firmware=got))
    assert card.missing == (sdcard.OVERLAY, sdcard.IMAGE)


def test_a_second_run_changes_nothing_and_keeps_what_the_user_added(tmp_path: Path) -> None:
    inputs = fake_inputs(tmp_path)
    out = tmp_path / "card"
    first = sdcard.write(out, inputs)
    assert all(e.changed for e in first.entries if not e.missing)
    before = {name: (out / name).stat().st_mtime_ns for name in files_in(out)}
    snapshot = files_in(out)
    second = sdcard.write(out, inputs)
    assert not any(e.changed for e in second.entries)
    assert files_in(out) == snapshot
    assert {name: (out / name).stat().st_mtime_ns for name in files_in(out)} == before
    assert [(e.name, e.origin) for e in second.entries] == [(e.name, e.origin) for e in first.entries]
    assert second.notes == first.notes

    # the user adds a firmware file and their own DTB (with symbols): kept, counted as present
    (out / sdcard.START).write_bytes(b"the user's start4.elf")
    (out / sdcard.DTB).write_bytes(dtb(True))
    third = sdcard.write(out, inputs)
    assert (out / sdcard.START).read_bytes() == b"the user's start4.elf"
    assert (out / sdcard.DTB).read_bytes() == dtb(True)
    assert third.missing == (sdcard.FIXUP, sdcard.OVERLAY, sdcard.IMAGE) and third.notes == ()
    kept = {e.name: e.origin for e in third.entries}
    assert "your copy" in kept[sdcard.START] and "your copy" in kept[sdcard.DTB]
    snapshot = files_in(out)
    fourth = sdcard.write(out, inputs)
    assert files_in(out) == snapshot and not any(e.changed for e in fourth.entries)
    # nothing but the card's files were written: no temporary file is left behind
    assert set(files_in(out)) == GENERATED | {sdcard.UBOOT, sdcard.BL31, sdcard.DTB, sdcard.START}


def test_bad_output_and_image_are_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(SetupError, match="is not a folder"):
        sdcard.write(tmp_path / "file", fake_inputs(tmp_path))
    with pytest.raises(SetupError, match="absent.img"):
        sdcard.image_input(tmp_path / "absent.img")
    (tmp_path / "x.img").write_bytes(b"\0" * 64)
    with pytest.raises(SetupError, match="no arm64 Image header"):
        sdcard.image_input(tmp_path / "x.img")
    header = bytearray(64)
    header[0x38:0x3C] = b"ARM\x64"
    (tmp_path / "ok.img").write_bytes(bytes(header))
    assert sdcard.image_input(tmp_path / "ok.img").path == tmp_path / "ok.img"


# ------------------------------------------------------------------------------ Debian's own packages


def rtmux(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(paths.REPO_ROOT / "rtmux"), "sdcard", *args],
        cwd=paths.REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_command_with_debians_packages(tmp_path: Path) -> None:
    out = tmp_path / "card"
    proc = rtmux("--board", "rpi4", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    uboot = debian.cached(sdcard.UBOOT_PACKAGE)
    tfa = debian.cached(sdcard.TFA_PACKAGE)
    assert uboot is not None and tfa is not None
    assert (out / sdcard.UBOOT).read_bytes() == (uboot.root / sdcard.UBOOT_FILE).read_bytes()
    assert (out / sdcard.BL31).read_bytes() == (tfa.root / sdcard.BL31_FILE).read_bytes()
    # the rpi_4 build is AArch64 code linked where the firmware loads a kernel without an Image header
    uboot_elf = (uboot.root / sdcard.UBOOT_FILE).with_name("uboot.elf").read_bytes()
    assert elf.machine(uboot_elf) == elf.EM_AARCH64 and struct.unpack_from("<Q", uboot_elf, 24)[0] == 0x80000
    kernel = debian.kernel(sdcard.KERNEL_FLAVOUR)
    assert (out / sdcard.DTB).read_bytes() == (kernel.dtb_dir / sdcard.DTB_IN_KERNEL).read_bytes()
    # what docs/boards.md says of Debian's DTB: no /__symbols__, so the overlay cannot apply to it
    assert not sdcard.has_symbols((out / sdcard.DTB).read_bytes())
    printed = proc.stdout
    if debian.apt_show(sdcard.FIRMWARE_PACKAGE) is None:
        # no firmware to be had: each of its files but the DTB is listed, and the image
        listed = printed.split("still to add by hand", 1)[1].split("rtmux: sdcard:", 1)[0]
        expected = [name for name in sdcard.FIRMWARE_FILES if name != sdcard.DTB] + [sdcard.IMAGE]
        assert sorted(line.strip() for line in listed.splitlines()[1:]) == sorted(expected)
    assert "__symbols__" in printed
    again = rtmux("--board", "rpi4", "-o", str(out))
    assert again.returncode == 0 and "written" not in again.stdout.replace("written by", "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--board", "imx8mp-evk"], "invalid choice: 'imx8mp-evk'"),
        (["--board", "rpi4", "--firmware", "absent-folder"], "absent-folder: not a folder"),
        (["--board", "rpi4", "--image", "README.md"], "no arm64 Image header"),
    ],
)
def test_the_command_refuses(args: list[str], message: str, tmp_path: Path) -> None:
    proc = rtmux(*args, "-o", str(tmp_path / "card"))
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
