"""Board descriptions (tools/rtmux/boarddesc.py, issue 26): `./rtmux board import` against the boards' own
device trees, the repository's platform/<board>/board.toml checked against them, bad input refused, what
rtmux needs of a description named field by field, and the images' header generated from it."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from rtmux import board, boarddesc, config, paths
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
    # written, with what the DTB lacks; and refused (status 1) for what rtmux needs and does not find
    assert proc.returncode == 1, proc.stderr
    assert "spin-table, not PSCI" in proc.stderr and "5 thing(s) missing" in proc.stderr
    for field in ("memory: none", "cpus.enable_method: 'spin-table'", "psci.method: none", "gic.distributor"):
        assert f"bcm2711-rpi-4-b.dtb: not buildable: {field}" in proc.stderr, proc.stderr
    assert boarddesc.load(out) == boarddesc.load(PLATFORMS / "rpi4" / "board.toml")
    bad = subprocess.run([*cmd[:3], str(tmp_path / "absent.dtb")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "absent.dtb" in bad.stderr
    # a DTB with all rtmux needs: status 0
    dtb = tmp_path / "virt.dtb"
    dtb.write_bytes(qemu_dtb(tmp_path))
    good = subprocess.run([*cmd[:3], str(dtb)], capture_output=True, text=True, timeout=60)
    assert good.returncode == 0 and "not buildable" not in good.stderr, good.stderr
    assert 'name = "virt"' in good.stdout


# ------------------------------------------------------------------------------------------------------
# What rtmux needs of a description


def qemu_virt() -> boarddesc.Description:
    return boarddesc.load(PLATFORMS / "qemu-virt" / "board.toml")


def gicv2() -> boarddesc.Description:
    return boarddesc.load(PLATFORMS / "qemu-virt-gicv2" / "board.toml")


@pytest.mark.parametrize("name", ["qemu-virt", "qemu-virt-gicv2", "imx8mp-evk"])
def test_usable_descriptions_have_no_problem(name: str) -> None:
    assert boarddesc.problems(boarddesc.load(PLATFORMS / name / "board.toml")) == []
    boarddesc.load(PLATFORMS / name / "board.toml", usable=True)


def test_rpi4_is_refused_field_by_field() -> None:
    with pytest.raises(BoardError) as err:
        boarddesc.load(PLATFORMS / "rpi4" / "board.toml", usable=True)
    lines = str(err.value).splitlines()
    assert all(line.startswith("platform/rpi4/board.toml: ") for line in lines), lines
    fields = [line.split(": ")[1] for line in lines]
    assert sorted(fields) == sorted(
        [
            "memory",
            "cpus.enable_method",
            "psci.method",
            # the GIC-400 and the UART lie above the first GiB, where the images map devices
            "gic.distributor",
            "gic.cpu_interface",
            "gic.hyp_interface",
            "gic.virtual_cpu_interface",
            "console.frame",
        ]
    )


def _gic(d: boarddesc.Description, **changes: object) -> boarddesc.Description:
    assert d.gic is not None
    return dataclasses.replace(d, gic=dataclasses.replace(d.gic, **changes))  # type: ignore[arg-type]


def _console(d: boarddesc.Description, **changes: object) -> boarddesc.Description:
    assert d.console is not None
    return dataclasses.replace(d, console=dataclasses.replace(d.console, **changes))  # type: ignore[arg-type]


R = board.Region
GIB = board.GIB


@pytest.mark.parametrize(
    ("broken", "field"),
    [
        # GICv2 without the virtualization extensions' frames
        (lambda: _gic(gicv2(), hyp_interface=None), "gic.hyp_interface"),
        (lambda: _gic(gicv2(), virtual_cpu_interface=None), "gic.virtual_cpu_interface"),
        (lambda: _gic(gicv2(), cpu_interface=None), "gic.cpu_interface"),
        (lambda: dataclasses.replace(gicv2(), mpidrs=(0, 0x100)), "cpus.mpidr: 0x100"),
        (lambda: _gic(qemu_virt(), redistributors=None), "gic.redistributors: none"),
        (lambda: _gic(qemu_virt(), redistributors=R(0x080A_0000, 0x2_0000)), "gic.redistributors: 0x080a"),
        (lambda: _gic(qemu_virt(), maintenance_intid=None), "gic.maintenance_intid: none"),
        (lambda: _gic(qemu_virt(), maintenance_intid=40), "gic.maintenance_intid: 40 is not a PPI"),
        (lambda: _gic(qemu_virt(), distributor=R(0x4800_0000, 0x1_0000)), "gic.distributor"),
        (lambda: dataclasses.replace(qemu_virt(), gic=None), "gic: none"),
        # a UART without a driver, or without its interrupt
        (lambda: _console(qemu_virt(), type="16550"), "console.type: '16550'"),
        (lambda: _console(qemu_virt(), intid=None), "console.intid: none"),
        (lambda: _console(qemu_virt(), intid=27), "console.intid: 27 is not an SPI"),
        (lambda: dataclasses.replace(qemu_virt(), console=None), "console: none"),
        (lambda: dataclasses.replace(qemu_virt(), timer=None), "timer: none"),
        (
            lambda: dataclasses.replace(qemu_virt(), timer={**(qemu_virt().timer or {}), "virt": 60}),
            "timer.virt",
        ),
        # RAM that does not fit: none, not where the images run, misaligned, beyond 39 bits, overlapping
        (lambda: dataclasses.replace(qemu_virt(), memory=()), "memory: none"),
        (lambda: dataclasses.replace(qemu_virt(), memory=(R(0, GIB),)), "memory[0]: starts at 0x0000_0000"),
        (lambda: dataclasses.replace(qemu_virt(), memory=(R(2 * GIB, GIB),)), "memory[0]: starts at"),
        (lambda: dataclasses.replace(qemu_virt(), memory=(R(GIB + 0x1000, GIB),)), "memory[0]: base"),
        (
            lambda: dataclasses.replace(qemu_virt(), memory=(R(GIB, GIB), R(1 << 39, GIB))),
            "memory[1]: 0x80_0000_0000..0x80_4000_0000 ends beyond the 39-bit",
        ),
        (lambda: dataclasses.replace(qemu_virt(), memory=(R(GIB, GIB), R(GIB, 1))), "memory[1]:"),
        (
            lambda: dataclasses.replace(qemu_virt(), memory=(R(GIB, GIB), R(0x0800_0000, 0x1000))),
            "memory[1]: 0x0800_0000..0x0800_1000 overlaps gic.distributor",
        ),
        # CPUs and PSCI
        (lambda: dataclasses.replace(qemu_virt(), mpidrs=()), "cpus.mpidr: no CPU"),
        (lambda: dataclasses.replace(qemu_virt(), mpidrs=(0, 1, 1)), "cpus.mpidr: 0x1 more than once"),
        (lambda: dataclasses.replace(qemu_virt(), enable_method="spin-table"), "cpus.enable_method"),
        (lambda: dataclasses.replace(qemu_virt(), psci_method="hvc"), "psci.method: 'hvc'"),
        (lambda: dataclasses.replace(qemu_virt(), psci_method=None), "psci.method: none"),
    ],
)
def test_what_rtmux_needs_is_named(broken, field: str) -> None:
    desc = broken()
    found = boarddesc.problems(desc)
    assert [p for p in found if p.startswith(field)], found
    with pytest.raises(BoardError, match="qemu-virt"):
        boarddesc.header(desc)


def test_load_refuses_what_rtmux_needs_with_the_file_and_the_field(tmp_path: Path) -> None:
    text = (PLATFORMS / "qemu-virt-gicv2" / "board.toml").read_text()
    bad = tmp_path / "board.toml"
    bad.write_text("\n".join(line for line in text.splitlines() if not line.startswith("hyp_interface")))
    assert boarddesc.load(bad).gic is not None  # well-formed: import's output, to complete by hand
    with pytest.raises(BoardError, match=r"board.toml: gic.hyp_interface: none: a GICv2 without"):
        boarddesc.load(bad, usable=True)


def test_every_uart_type_has_its_drivers() -> None:
    """A console type the description may name has a driver in both images and in the Makefile's list."""
    makefile = (paths.REPO_ROOT / "Makefile").read_text()
    assert set(boarddesc.UART_TYPES.values()) == set(boarddesc.UART_DRIVERS)
    for driver in boarddesc.UART_DRIVERS.values():
        assert (paths.REPO_ROOT / "hyp" / "drivers" / f"{driver}.c").is_file()
        assert (paths.REPO_ROOT / "rtos" / "drivers" / f"{driver}.c").is_file()
        assert driver in makefile.split("UART_DRIVERS := ", 1)[1].split("\n", 1)[0].split()


# ------------------------------------------------------------------------------------------------------
# The images' header


def test_header_of_one_description() -> None:
    text = boarddesc.header(boarddesc.load(PLATFORMS / "imx8mp-evk" / "board.toml"))
    assert '#define BOARD_UART_DRIVER "imx_uart"' in text
    assert "#define BOARD_UART_BASE 0x30890000ul" in text and "#define BOARD_UART_INTID 59u" in text
    assert "#define BOARD_RAM_BASE 0x40000000\n" in text  # no C suffix: the linker scripts use it
    assert "#define BOARD_GIC_V3 1" in text and "#define BOARD_GIC_V2 0" in text
    assert "BOARD_GICC_BASE" not in text and "#define BOARD_GICR_BASE 0x38880000ul" in text


def test_header_adds_the_other_gic_only_of_the_same_board() -> None:
    both = boarddesc.header(qemu_virt(), gicv2())
    assert "#define BOARD_GICR_BASE 0x080a0000ul" in both and "#define BOARD_GICH_BASE 0x08030000ul" in both
    with pytest.raises(BoardError, match="qemu-virt-gicv2: console: not qemu-virt's"):
        boarddesc.header(qemu_virt(), _console(gicv2(), intid=34))
    with pytest.raises(BoardError, match="qemu-virt-gicv2: gic.maintenance_intid: not qemu-virt's"):
        boarddesc.header(qemu_virt(), _gic(gicv2(), maintenance_intid=24))
    with pytest.raises(BoardError, match="gic.distributor: not at qemu-virt's"):
        boarddesc.header(qemu_virt(), _gic(gicv2(), distributor=R(0x0900_0000, 0x1000)))
    with pytest.raises(BoardError, match="gic.version: 3 twice"):
        boarddesc.header(qemu_virt(), qemu_virt())


def test_header_command_refuses_with_the_field_named(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "rtmux.boarddesc", "header"]
    env = {"PYTHONPATH": str(paths.REPO_ROOT / "tools"), "PATH": "/usr/bin:/bin"}
    out = tmp_path / "board_desc.h"
    ok = subprocess.run(
        [*cmd, str(PLATFORMS / "imx8mp-evk" / "board.toml"), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert ok.returncode == 0 and ok.stderr == "" and out.read_text().startswith("/*")
    out.unlink()
    bad = subprocess.run(
        [*cmd, str(PLATFORMS / "rpi4" / "board.toml"), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert bad.returncode == 1 and not out.exists()
    assert "rtmux.boarddesc: platform/rpi4/board.toml: psci.method: none" in bad.stderr
    assert "no header written" in bad.stderr


def test_check_refuses_a_board_whose_description_rtmux_cannot_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """`./rtmux check` (config.load): the tools' board comes from the description, so a description that
    lacks what rtmux needs is a configuration error naming the board, the file and the field."""

    def described(name: str) -> boarddesc.Description:
        raise BoardError(f"platform/{name}/board.toml: gic.hyp_interface: none: a GICv2 without ...")

    monkeypatch.setattr(board, "description", described)
    with pytest.raises(config.ConfigError) as err:
        config.loads('[board]\nname = "qemu-virt-gicv2"\n', "x.toml")
    assert err.value.errors == [
        "x.toml: [board]: name 'qemu-virt-gicv2': its description platform/qemu-virt-gicv2/board.toml: "
        "gic.hyp_interface: none: a GICv2 without ..."
    ]
