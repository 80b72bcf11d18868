"""Board descriptions (tools/rtmux/boarddesc.py, issue 26): `./rtmux board import` against the boards' own
device trees, the repository's platform/<board>/board.toml checked against them, and bad input refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rtmux import board, boarddesc, paths
from rtmux.boarddesc import BoardError
from rtmux.formats import fdt
from rtmux.image import debian

PLATFORMS = paths.REPO_ROOT / "platform"
DEBIAN_DTB = {
    # board -> its DTB in Debian's arm64 kernel package
    "rpi4": "broadcom/bcm2711-rpi-4-b.dtb",
    "imx8mp-evk": "freescale/imx8mp-evk.dtb",
}


def debian_dtb(board_name: str) -> bytes:
    """The board's DTB from Debian's arm64 kernel package (fetched into cache/debian/ if not there yet,
    as the Linux guest's build does)."""
    kernel = debian.kernel("std")
    path = kernel.root / "usr" / "lib" / f"linux-image-{kernel.release}" / DEBIAN_DTB[board_name]
    assert path.is_file(), f"{kernel.package.name} has no {DEBIAN_DTB[board_name]}"
    return path.read_bytes()


def qemu_dtb(tmp_path: Path, gic_version: int = 3) -> bytes:
    """QEMU virt's own DTB, as rtmux's default run makes the board (-smp 2 -m 1G)."""
    b = board.qemu_virt()
    machine = b.machine.replace("gic-version=3", f"gic-version={gic_version}")
    args = [*b.qemu_args()]
    args[args.index("-M") + 1] = machine
    out = tmp_path / f"virt-gicv{gic_version}.dtb"
    proc = subprocess.run(
        ["qemu-system-aarch64", *args, "-machine", f"dumpdtb={out}", "-nographic", "-nic", "none"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and out.is_file(), proc.stderr
    return out.read_bytes()


def dtb_of(name: str, tmp_path: Path) -> bytes:
    if name == "qemu-virt-gicv2":
        return qemu_dtb(tmp_path, 2)
    return qemu_dtb(tmp_path) if name == "qemu-virt" else debian_dtb(name)


def test_every_description_is_checked() -> None:
    assert sorted(p.parent.name for p in PLATFORMS.glob("*/board.toml")) == sorted(DESCRIPTIONS)


DESCRIPTIONS = ["qemu-virt", "qemu-virt-gicv2", "rpi4", "imx8mp-evk"]


@pytest.mark.parametrize("name", DESCRIPTIONS)
def test_repository_descriptions_match_their_dtbs(name: str, tmp_path: Path) -> None:
    committed = boarddesc.load(PLATFORMS / name / "board.toml")
    imported = boarddesc.from_dtb(dtb_of(name, tmp_path), name)
    assert committed == imported.description
    # what the import could not find is written at the top of the file, one comment line each
    text = (PLATFORMS / name / "board.toml").read_text()
    for line in imported.missing:
        assert f"#   {line}\n" in text


def test_qemu_virt_gicv3_agrees_with_the_tools_board(tmp_path: Path) -> None:
    """Two sources that must agree: QEMU's DTB through the import, and rtmux.board's QEMU virt."""
    d = boarddesc.from_dtb(qemu_dtb(tmp_path), "qemu-virt").description
    b = board.qemu_virt()
    assert d.gic is not None and d.gic.version == 3
    assert d.gic.distributor == b.gicd
    assert d.gic.redistributors == b.gicr
    assert d.gic.maintenance_intid == b.gic_maintenance
    assert d.console is not None and d.console.type == "pl011"
    assert d.console.frame.base == b.uart.regions[0].base
    assert d.memory == (b.ram,)
    assert d.mpidrs == tuple(b.mpidr(cpu) for cpu in range(b.cpus))
    assert d.enable_method == "psci"


def test_qemu_virt_gicv2_frames(tmp_path: Path) -> None:
    """QEMU 7.2's -M virt,gic-version=2,virtualization=on: GICD, GICC, GICH, GICV and PPI 9 (issue 26)."""
    d = boarddesc.from_dtb(qemu_dtb(tmp_path, 2), "qemu-virt-gicv2").description
    assert d.gic is not None and d.gic.version == 2
    assert d.gic.distributor.base == 0x0800_0000
    assert d.gic.cpu_interface is not None and d.gic.cpu_interface.base == 0x0801_0000
    assert d.gic.hyp_interface is not None and d.gic.hyp_interface.base == 0x0803_0000
    assert d.gic.virtual_cpu_interface is not None and d.gic.virtual_cpu_interface.base == 0x0804_0000
    assert d.gic.maintenance_intid == 16 + 9


def test_rpi4_says_what_rtmux_needs_given_by_hand() -> None:
    imported = boarddesc.from_dtb(debian_dtb("rpi4"), "rpi4")
    d = imported.description
    # the GIC-400 and UART0 sit behind /soc's ranges (bus 0x7e000000 -> CPU 0xfe000000, 0x40000000 ->
    # 0xff800000): the description has CPU addresses
    assert d.gic is not None and d.gic.version == 2 and d.gic.distributor.base == 0xFF84_1000
    assert d.console is not None and d.console.type == "pl011" and d.console.frame.base == 0xFE20_1000
    assert d.console.intid == 32 + 121
    assert d.memory == () and d.enable_method == "spin-table" and d.psci_method is None
    text = "\n".join(imported.missing)
    for needle in ("memory@0 has a size of 0", "spin-table, not PSCI", "no psci node", "took serial0"):
        assert needle in text, text


def test_not_a_dtb_is_refused() -> None:
    with pytest.raises(BoardError, match="not a device tree"):
        boarddesc.from_dtb(b"\0" * 8, "x")
    with pytest.raises(BoardError, match="board name"):
        boarddesc.from_dtb(debian_dtb("rpi4"), 'rpi"4')
    # a tree that parses but whose CPU has no reg: an error that says so, not a traceback
    tree = fdt.parse(debian_dtb("imx8mp-evk"))
    cpus = tree.root.find("/cpus")
    cpu = next(c for c in cpus.children if c.props.get("device_type") == b"cpu\0")
    del cpu.props["reg"]
    with pytest.raises(BoardError, match="'reg'"):
        boarddesc.from_dtb(fdt.serialize(tree), "imx8mp-evk")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("version = 3", "version = 4"), "GICv2 and GICv3"),
        (('type = "pl011"', 'type = "16550"'), "console.type"),
        (("distributor = { base = 0x8000000, size = 0x10000 }", "distributor = 5"), "gic.distributor"),
        (("mpidr = [0x0, 0x1]\n", ""), "missing key 'mpidr'"),
    ],
)
def test_malformed_descriptions_are_refused(change: tuple[str, str], message: str, tmp_path: Path) -> None:
    text = (PLATFORMS / "qemu-virt" / "board.toml").read_text()
    assert change[0] in text
    bad = tmp_path / "board.toml"
    bad.write_text(text.replace(change[0], change[1]))
    with pytest.raises(BoardError, match=message):
        boarddesc.load(bad)


def test_board_import_command(tmp_path: Path) -> None:
    dtb = tmp_path / "bcm2711-rpi-4-b.dtb"
    dtb.write_bytes(debian_dtb("rpi4"))
    out = tmp_path / "rpi4" / "board.toml"
    cmd = [str(paths.REPO_ROOT / "rtmux"), "board", "import", str(dtb), "--name", "rpi4", "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "spin-table, not PSCI" in proc.stderr and "5 thing(s) missing" in proc.stderr
    assert boarddesc.load(out) == boarddesc.load(PLATFORMS / "rpi4" / "board.toml")
    bad = subprocess.run([*cmd[:3], str(tmp_path / "absent.dtb")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "absent.dtb" in bad.stderr
