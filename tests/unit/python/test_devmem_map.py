"""The /dev/mem map the system test test_hostile.py::test_devmem_over_the_whole_board sweeps
(tests/system/devmem_map.py): every address of the default system, and of the default system on the
GICv2 board, falls where it should."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtmux import config as cfg
from tests.system.devmem_map import PA_LIMIT, Map, Outcome

ROOT = Path(__file__).resolve().parents[3]


def load_map(name: str) -> Map:
    # placement only: the kernel's size does not move anything the map uses
    system = cfg.load(ROOT / "configs" / name, find_kernel=lambda flavour: None)
    m = Map(system, "linux")
    m.check_pages()
    return m


@pytest.fixture(scope="module")
def board_map() -> Map:
    return load_map("qemu-virt.toml")


@pytest.fixture(scope="module")
def gicv2_map() -> Map:
    return load_map("qemu-virt-gicv2.toml")


@pytest.fixture(scope="module", params=["qemu-virt.toml", "qemu-virt-gicv2.toml"])
def any_map(request: pytest.FixtureRequest) -> Map:
    return load_map(request.param)


@pytest.mark.parametrize(
    ("address", "width", "outcome"),
    [
        (0x0000_0000, 32, Outcome.ABORT),  # flash
        (0x0800_FFE8, 32, Outcome.EMULATED),  # GICD_PIDR2
        (0x0800_FFFF, 16, Outcome.EMULATED),  # crosses into the hole: the emulated page answers
        (0x0808_0000, 32, Outcome.ABORT),  # ITS
        (0x080A_0000, 32, Outcome.EMULATED),  # the rtos CPU's redistributor, trapped for Linux
        (0x0819_FFF8, 64, Outcome.EMULATED),  # last frame of the hypervisor's window (CPU 7)
        (0x081A_0000, 32, Outcome.ABORT),  # beyond that window
        (0x0900_0FE0, 32, Outcome.EMULATED),  # the virtual PL011
        (0x0902_0010, 64, Outcome.ABORT),  # fw-cfg
        (0x0905_0000, 32, Outcome.ABORT),  # SMMU
        (0x0A00_3E00, 32, Outcome.ABORT),  # virtio-mmio.31
        (0x0A00_3FFC, 64, Outcome.ABORT),  # crosses into the V-Bus page: the first page decides
        (0x0A00_4000, 32, Outcome.EMULATED),  # the V-Bus device (MagicValue)
        (0x0A00_4FFF, 8, Outcome.EMULATED),  # its page's last byte (registers use 0x200 of it)
        (0x0A00_5000, 32, Outcome.ABORT),  # the hole after it
        (0x1000_0000, 32, Outcome.MAPPED),  # Linux's PCIe window
        (0x3EFF_FFFC, 64, Outcome.ABORT),  # PCIe I/O window's end crossing into the hole
        (0x4000_0000, 64, Outcome.ABORT),  # hypervisor
        (0x4800_0000, 32, Outcome.ABORT),  # rtos RAM
        (0x48FF_FFF8, 16, Outcome.LINUX),  # devmem also maps the next page: Linux's RAM
        (0x48FF_F000, 64, Outcome.ABORT),
        (0x4A00_0000, 8, Outcome.LINUX),
        (0x6900_0000, 32, Outcome.ABORT),  # free RAM
        (0x8000_0000, 32, Outcome.ABORT),  # beyond RAM
        (0x40_1000_0000, 32, Outcome.MAPPED),  # ECAM
        (0x80_0000_0000, 32, Outcome.ABORT),  # first address beyond the IPA space
        (PA_LIMIT, 32, Outcome.BEYOND_PA),
    ],
)
def test_outcomes(board_map: Map, address: int, width: int, outcome: Outcome) -> None:
    assert board_map.outcome(address, width) == outcome


@pytest.mark.parametrize(
    ("address", "width", "outcome"),
    [
        (0x0800_0000, 32, Outcome.EMULATED),  # GICD_CTLR
        (0x0800_0FE8, 32, Outcome.EMULATED),  # GICD_PIDR2, in the last 48 bytes of the 4 KiB
        (0x0800_0FFF, 16, Outcome.EMULATED),  # crosses into the frame's rest: the emulated page answers
        (0x0800_1000, 32, Outcome.ABORT),  # the distributor's 64 KiB frame beyond its 4 KiB
        (0x0800_FFE8, 32, Outcome.ABORT),  # where a GICv3's GICD_PIDR2 is
        (0x0801_0000, 32, Outcome.MAPPED),  # GICC_CTLR: Linux's virtual CPU interface, mapped
        (0x0801_1000, 32, Outcome.MAPPED),  # GICC_DIR, its second page
        (0x0801_1FFC, 64, Outcome.ABORT),  # crosses into the frame's rest: the unmapped page refuses
        (0x0801_2000, 32, Outcome.ABORT),
        (0x0802_0000, 32, Outcome.ABORT),  # QEMU's GICv2m frame: no MSIs in a partition
        (0x0803_0000, 32, Outcome.ABORT),  # GICH: the hypervisor's
        (0x0804_0000, 32, Outcome.ABORT),  # GICV's physical frame (Linux sees it at GICC's address only)
        (0x0808_0000, 32, Outcome.ABORT),  # no ITS on a GICv2 board: nothing
        (0x080A_0000, 32, Outcome.ABORT),  # no redistributors
        (0x0819_FFF8, 64, Outcome.ABORT),
        (0x0900_0FE0, 32, Outcome.EMULATED),  # the virtual PL011
        (0x0A00_4000, 32, Outcome.EMULATED),  # the V-Bus device
        (0x1000_0000, 32, Outcome.MAPPED),  # Linux's PCIe window
        (0x4800_0000, 32, Outcome.ABORT),  # rtos RAM
    ],
)
def test_gicv2_outcomes(gicv2_map: Map, address: int, width: int, outcome: Outcome) -> None:
    assert gicv2_map.outcome(address, width) == outcome


def test_gicv2_probes_and_writes(gicv2_map: Map) -> None:
    probes = {p.name: p for p in gicv2_map.probes()}
    assert probes["GICD_PIDR2"].address == 0x0800_0FE8 and probes["GICD_PIDR2"].expected == 2
    assert probes["GICD_TYPER.CPUNumber"].expected == 1  # two CPUs
    assert probes["GICD_TYPER.ITLinesNumber"].expected == 8  # 256 SPIs
    assert probes["GICD_ITARGETSR0 (this CPU's interface)"].expected == 0x0202_0202  # Linux on CPU 1
    # SPIs 32..35: none, the virtual UART's (33), the RTC's (34, not Linux's), the PCIe host's INTA (35)
    assert probes["GICD_ITARGETSR8 (SPIs 32..35)"].expected == 0x0200_0200
    assert not any(n.startswith("GICR") for n in probes)
    for p in gicv2_map.probes():
        assert gicv2_map.outcome(p.address, p.width) in (Outcome.EMULATED, Outcome.MAPPED)
    writes = gicv2_map.write_addresses()
    assert 0x0800_0F00 in writes and 0x0800_0800 in writes  # GICD_SGIR, GICD_ITARGETSR0
    # nothing is written into the CPU interface Linux takes its interrupts with
    assert not any(0x0801_0000 <= a < 0x0801_2000 for a in writes)


def test_every_device_of_the_board_is_swept(any_map: Map) -> None:
    names = {a.name.split(" #")[0] for a in any_map.areas}
    for dev in any_map.board.devices:
        if dev.name != "pcie":  # Linux's, under its configuration name
            assert dev.name in names
    reads = any_map.reads()
    swept = {any_map.area_of(a.address).name for a in reads}
    assert swept == {a.name for a in any_map.areas}
    assert {a.outcome for a in reads} == set(Outcome)


def test_writes_never_reach_what_linux_lives_on(any_map: Map) -> None:
    for access in any_map.writes():
        # refused by the hypervisor or by Linux itself, or into a register where no write changes anything
        assert access.outcome in (Outcome.ABORT, Outcome.EMULATED, Outcome.LINUX)
        assert not any_map.area_of(access.address).name.startswith("redistributor CPU 1 ")
