"""The board facts are written once in C (platform/qemu-virt/board.h: the rtos, the hypervisor and both
linker scripts use it) and once in the tools' board description (tools/rtmux/board.py); they must agree."""

from __future__ import annotations

import re

import pytest

from rtmux import board, paths
from rtmux.image import bundle

HEADER = paths.REPO_ROOT / "platform" / "qemu-virt" / "board.h"
DEFINE = re.compile(r"^#define[ \t]+(BOARD_\w+)[ \t]+(.+?)[ \t]*(?:/\*.*)?$", re.M)


def defines() -> dict[str, int | str]:
    """#define BOARD_* lines: integers (C suffixes dropped; sums of numbers and earlier names) or strings."""
    out: dict[str, int | str] = {}
    for name, value in DEFINE.findall(HEADER.read_text()):
        if value.startswith('"'):
            out[name] = value.strip('"')
            continue
        expr = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", value)
        expr = re.sub(r"\bBOARD_\w+\b", lambda m: str(out[m.group(0)]), expr)
        terms = expr.replace("(", "").replace(")", "").split("+")
        assert all(re.fullmatch(r"\s*(0x[0-9a-fA-F]+|\d+)\s*", t) for t in terms), f"{name}: {value!r}"
        out[name] = sum(int(t, 0) for t in terms)
    return out


@pytest.fixture(scope="module")
def c() -> dict[str, int | str]:
    return defines()


def test_header_agrees_with_the_tools_board(c: dict[str, int | str]) -> None:
    b = board.qemu_virt()
    uart = b.device("pl011")
    assert uart is not None
    assert c["BOARD_NAME"] == b.name
    assert c["BOARD_RAM_BASE"] == b.ram.base
    assert c["BOARD_GICD_BASE"] == b.gicd.base
    assert c["BOARD_GICR_BASE"] == b.gicr.base
    assert c["BOARD_GICR_STRIDE"] == b.gicr_stride
    assert c["BOARD_UART_BASE"] == uart.regions[0].base
    assert c["BOARD_UART_SIZE"] == uart.regions[0].size
    assert c["BOARD_UART_INTID"] == uart.interrupts[0]
    assert c["BOARD_UART_DRIVER"] == "pl011"  # the driver of the tools' UART, the board's PL011
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


def test_reader_sees_every_define(c: dict[str, int | str]) -> None:
    names = re.findall(r"^#define[ \t]+(BOARD_\w+)[ \t]", HEADER.read_text(), re.M)
    assert sorted(c) == sorted(names)
