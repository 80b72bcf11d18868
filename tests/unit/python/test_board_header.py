"""The images' board facts (platform/qemu-virt/board.h and the board_desc.h it includes, which the build
generates from the board's descriptions) against the tools' board (tools/rtmux/board.py, built from the
same descriptions plus what only QEMU knows): they must agree, and the build must regenerate the header
when a description changes."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from rtmux import board, boarddesc, paths
from rtmux.image import bundle

HEADER = paths.REPO_ROOT / "platform" / "qemu-virt" / "board.h"
DEFINE = re.compile(r"^#define[ \t]+(BOARD_\w+)[ \t]+(.+?)[ \t]*(?:/\*.*)?$", re.M)
GENERATED = Path("gen") / "qemu-virt" / "board_desc.h"  # under the build folder


def defines(*texts: str) -> dict[str, int | str]:
    """#define BOARD_* lines: integers (C suffixes dropped; sums of numbers and earlier names) or strings."""
    out: dict[str, int | str] = {}
    for text in texts:
        for name, value in DEFINE.findall(text):
            if value.startswith('"'):
                out[name] = value.strip('"')
                continue
            expr = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", value)
            expr = re.sub(r"\bBOARD_\w+\b", lambda m: str(out[m.group(0)]), expr)
            terms = expr.replace("(", "").replace(")", "").split("+")
            assert all(re.fullmatch(r"\s*(0x[0-9a-fA-F]+|\d+)\s*", t) for t in terms), f"{name}: {value!r}"
            out[name] = sum(int(t, 0) for t in terms)
    return out


def make_header(build: Path) -> Path:
    """The generated header as the build makes it (the Makefile's rule), in a build folder of its own."""
    proc = subprocess.run(
        ["make", "-s", "-C", str(paths.REPO_ROOT), f"BUILD={build}", str(build / GENERATED)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return build / GENERATED


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_header(tmp_path_factory.mktemp("build")).read_text()


@pytest.fixture(scope="module")
def c(generated: str) -> dict[str, int | str]:
    text = HEADER.read_text()
    assert '#include "board_desc.h"' in text
    return defines(generated, text)


def test_header_agrees_with_the_tools_board(c: dict[str, int | str]) -> None:
    b = board.qemu_virt()
    uart = b.device("pl011")
    assert uart is not None
    assert c["BOARD_NAME"] == b.name
    assert c["BOARD_RAM_BASE"] == b.ram.base
    assert c["BOARD_GICD_BASE"] == b.gicd.base
    assert c["BOARD_GICD_SIZE"] == b.gicd.size
    assert c["BOARD_GICR_BASE"] == b.gicr.base
    assert c["BOARD_GICR_SIZE"] == b.gicr.size
    assert c["BOARD_GICR_STRIDE"] == b.gicr_stride
    assert c["BOARD_GIC_V3"] == 1 and c["BOARD_GIC_V2"] == 1
    assert c["BOARD_INTID_GIC_MAINT"] == b.gic_maintenance
    assert c["BOARD_INTID_SEC_TIMER"] == b.timer.secure_phys
    assert c["BOARD_INTID_PHYS_TIMER"] == b.timer.el1_phys
    assert c["BOARD_INTID_VIRT_TIMER"] == b.timer.el1_virt
    assert c["BOARD_INTID_HYP_TIMER"] == b.timer.el2_phys
    assert c["BOARD_UART_BASE"] == uart.regions[0].base
    assert c["BOARD_UART_SIZE"] == uart.regions[0].size
    assert c["BOARD_UART_INTID"] == uart.interrupts[0]
    assert c["BOARD_UART_DRIVER"] == "pl011"  # the driver of the tools' UART, the board's PL011
    # the Makefile's own map of the description's console type (read before Python exists) agrees
    makefile = (paths.REPO_ROOT / "Makefile").read_text()
    for kind, driver in boarddesc.UART_DRIVERS.items():
        assert re.search(rf"^UART_DRIVER_{kind}\s*:= {driver}$", makefile, re.M), (kind, driver)
    assert c["BOARD_PSCI_SMC"] == 1
    rtc = b.device("rtc")
    assert rtc is not None and rtc.assignable and not rtc.edge
    assert c["BOARD_RTC_BASE"] == rtc.regions[0].base
    assert c["BOARD_RTC_SIZE"] == rtc.regions[0].size
    assert c["BOARD_RTC_INTID"] == rtc.interrupts[0]
    smmu = b.device("smmu")
    assert smmu is not None and b.iommu is smmu
    assert c["BOARD_SMMU_BASE"] == smmu.regions[0].base
    assert c["BOARD_SMMU_SIZE"] == smmu.regions[0].size
    vbus = b.vbus
    assert vbus is not None and b.device("vbus") is vbus and not vbus.assignable
    assert c["BOARD_VBUS_BASE"] == vbus.regions[0].base == board.VBUS_MMIO_BASE
    assert c["BOARD_VBUS_SIZE"] == vbus.regions[0].size == board.PAGE_SIZE
    assert c["BOARD_VBUS_INTID"] == vbus.interrupts[0] == board.spi(board.VBUS_SPI)


def test_header_has_the_gicv2_board_s_frames(c: dict[str, int | str]) -> None:
    """One build runs on both GIC versions: the header has the frames of the tools' qemu-virt-gicv2."""
    b = board.qemu_virt(gic=2)
    assert b.gicc is not None and b.gich is not None and b.gicv is not None
    assert (c["BOARD_GICC_BASE"], c["BOARD_GICC_SIZE"]) == (b.gicc.base, b.gicc.size)
    assert (c["BOARD_GICH_BASE"], c["BOARD_GICH_SIZE"]) == (b.gich.base, b.gich.size)
    assert (c["BOARD_GICV_BASE"], c["BOARD_GICV_SIZE"]) == (b.gicv.base, b.gicv.size)
    assert c["BOARD_GICD_BASE"] == b.gicd.base and c["BOARD_INTID_GIC_MAINT"] == b.gic_maintenance


def test_generated_header_is_the_descriptions(generated: str) -> None:
    """The build's header is boarddesc.header() of the two descriptions of QEMU virt, and no BOARD_* name
    is both generated and written by hand."""
    descs = [board.description(name) for name in board.QEMU_VIRT_BOARDS.values()]
    sources = [f"platform/{d.name}/board.toml" for d in descs]
    assert generated == boarddesc.header(*descs, sources=sources)
    names = [
        re.findall(r"^#define[ \t]+(BOARD_\w+)[ \t]", text, re.M) for text in (generated, HEADER.read_text())
    ]
    assert names[0] and names[1] and not set(names[0]) & set(names[1])


def test_build_regenerates_the_header_when_a_description_changes(tmp_path: Path) -> None:
    header = make_header(tmp_path)
    text = header.read_text()
    os.utime(header, (0, 0))  # older than the descriptions: as if one of them had changed since
    assert make_header(tmp_path).stat().st_mtime > 0
    assert header.read_text() == text


def test_vbus_device_is_where_the_board_has_nothing() -> None:
    """The V-Bus page touches no other device's page, its SPI is no device's, and the SPI lies below the
    distributor's limit (what a partition's GICD_TYPER allows)."""
    b = board.qemu_virt()
    assert b.vbus is not None
    page = b.vbus.regions[0]
    assert page.base % board.PAGE_SIZE == 0 and page.size == board.PAGE_SIZE
    others = [d for d in b.all_devices() if d is not b.vbus]
    for dev in others:
        for r in dev.regions:
            rounded = board.Region(
                r.base // board.PAGE_SIZE * board.PAGE_SIZE, r.size + r.base % board.PAGE_SIZE
            )
            assert not rounded.overlaps(page), dev.name
        assert b.vbus.interrupts[0] not in dev.interrupts, dev.name
    assert not b.ram.overlaps(page)
    assert board.SPI_BASE <= b.vbus.interrupts[0] < board.SPI_BASE + b.spi_count


def test_link_address_is_where_the_bundle_loads(c: dict[str, int | str]) -> None:
    assert c["BOARD_TEXT_OFFSET"] == bundle.LOAD_OFFSET
    assert c["BOARD_LINK_ADDR"] == board.qemu_virt().ram.base + bundle.LOAD_OFFSET


def test_reader_sees_every_define(c: dict[str, int | str], generated: str) -> None:
    text = HEADER.read_text() + generated
    names = re.findall(r"^#define[ \t]+(BOARD_\w+)[ \t]", text, re.M)
    assert sorted(c) == sorted(names)
