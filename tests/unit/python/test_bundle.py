"""The system image (rtmux.image.bundle): the blob and every partition's DTB as the bundle carries them,
checked by reading the bundle back (no QEMU, fake images with arm64 Image headers)."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from rtmux import config
from rtmux.board import KIB, MIB
from rtmux.errors import SetupError
from rtmux.formats import fdt
from rtmux.image import blob, bundle

DATA = Path(__file__).parent / "data"
CHANNELS = """
[[channel]]
name = "echo"

[[channel]]
name = "setpoint"
size = 256
"""


def arm64_image(text_offset: int, image_size: int, size: int) -> bytes:
    header = struct.pack("<IIQQQQQQ4sI", 0, 0, text_offset, image_size, 2, 0, 0, 0, b"ARM\x64", 0)
    return header + bytes(size - len(header))


@pytest.fixture(scope="module")
def board_dtb() -> bytes:
    if shutil.which("dtc") is None:
        pytest.fail("dtc not found: install device-tree-compiler (`make deps`)")
    dts = (DATA / "qemu-virt-smp2-1G-iommu.dts").read_bytes()
    return subprocess.run(
        ["dtc", "-q", "-I", "dts", "-O", "dtb", "-"], input=dts, capture_output=True, check=True
    ).stdout


def system(text: str = "") -> config.SystemConfig:
    base = config.DEFAULT_CONFIG.read_text()
    if "[[channel]]" not in base:
        base += CHANNELS
    return config.loads(base + text)


def pack(cfg: config.SystemConfig, board_dtb: bytes, rtos_bss: int = 256 * KIB) -> bytes:
    images = {
        "rtos": bundle.PartitionImages(arm64_image(0x80000, rtos_bss, 64 * KIB)),
        "linux": bundle.PartitionImages(
            arm64_image(0, 40 * MIB, 64 * KIB), initramfs=b"\x1f\x8b" + bytes(4094)
        ),
    }
    hyp = arm64_image(0x80000, 256 * KIB, 128 * KIB)
    return bundle.pack(cfg, hyp, images, board_dtb, seed=bundle.fixed_seed(1))


def read_back(data: bytes) -> tuple[blob.Blob, dict[str, fdt.Tree]]:
    image_size = struct.unpack_from("<Q", data, 16)[0]
    assert image_size == len(data)
    b = blob.unpack(data[256 * KIB :])  # the hypervisor's image_size, page aligned
    dtbs = {}
    for p in b.partitions:
        slot = p.images[blob.IMAGE_DTB]
        dtbs[p.name] = fdt.parse(data[slot.offset : slot.offset + slot.size])
    return b, dtbs


def test_bundle_carries_the_vbus_to_the_hypervisor_and_both_dtbs(board_dtb: bytes) -> None:
    cfg = system()
    b, dtbs = read_back(pack(cfg, board_dtb))
    assert b == blob.unpack(blob.pack(b)) and len(b.channels) == len(cfg.channels)
    rtos, linux = b.partitions
    region = cfg.partition("rtos").vbus
    assert region is not None and (rtos.vbus.ipa, rtos.vbus.size) == (region.base, region.size)
    assert (linux.vbus.ipa, linux.vbus.size, linux.vbus.intid) == (0x0A00_4000, 0x1000, 224)
    node = dtbs["rtos"].root.find("/rtmux-vbus")
    reg = node.get_cells("reg")
    assert ((reg[0] << 32) | reg[1], (reg[2] << 32) | reg[3]) == (rtos.vbus.ipa, rtos.vbus.size)
    for record, child in zip(b.channels, node.children, strict=True):
        assert child.get_string("label") == record.name
        assert child.get_cells("rtmux,layout") == [
            record.chan_off,
            record.to_linux_off,
            record.to_linux_size,
            record.to_rtos_off,
            record.to_rtos_size,
        ]
    dev = dtbs["linux"].root.find("/virtio_mmio@a004000")
    assert dev.get_strings("compatible") == ["virtio,mmio"]
    assert dev.get_cells("interrupts") == [0, 192, 4]
    # the rtos's image (with its BSS) and DTB stay clear of the region
    kernel, dtb = rtos.images[blob.IMAGE_KERNEL], rtos.images[blob.IMAGE_DTB]
    assert kernel.load_ipa + 256 * KIB <= region.base and region.end <= dtb.load_ipa


def test_no_channels_no_vbus_anywhere(board_dtb: bytes) -> None:
    text = config.DEFAULT_CONFIG.read_text().split("[[channel]]", 1)[0]
    b, dtbs = read_back(pack(config.loads(text), board_dtb))
    assert b.channels == () and all(p.vbus == blob.VbusRecord() for p in b.partitions)
    assert dtbs["rtos"].root.child("rtmux-vbus") is None
    assert not any(c.name.startswith("virtio_mmio") for c in dtbs["linux"].root.children)


def test_rtos_image_over_the_region_is_refused(board_dtb: bytes) -> None:
    with pytest.raises(SetupError, match="V-Bus region"):
        pack(system(), board_dtb, rtos_bss=14 * MIB)


SERVICES = """
[services]
log = "file:/var/log/rtos.log"

[[services.dir]]
path = "/srv/rtos"

[[services.dir]]
path = "/etc/rtos"
read_only = true
"""


def without_services(text: str) -> str:
    return text.split("\n[services]", 1)[0]


def test_bundle_tells_both_sides_about_the_services(board_dtb: bytes) -> None:
    """The rtos's DTB gets /rtmux-services, Linux's command line rtmux.files= and rtmux.log=, the blob the
    services' channels."""
    cfg = config.loads(without_services(config.DEFAULT_CONFIG.read_text()) + SERVICES)
    b, dtbs = read_back(pack(cfg, board_dtb))
    node = dtbs["rtos"].root.find("/rtmux-services")
    assert node.get_strings("compatible") == ["rtmux,services"]
    assert node.get_strings("rtmux,files") == ["/srv/rtos", "/etc/rtos"]
    assert node.get_cells("rtmux,files-ro") == [0, 1]
    assert node.get_string("rtmux,log") == "file:/var/log/rtos.log"
    bootargs = dtbs["linux"].root.find("/chosen").get_string("bootargs").split()
    assert bootargs[-4:] == [
        "panic=-1",
        "reboot=panic_warm",
        "rtmux.files=/srv/rtos,/etc/rtos:ro",
        "rtmux.log=file:/var/log/rtos.log",
    ]
    assert [c.name for c in b.channels][-2:] == ["rtmux-files", "rtmux-log"]
    vbus = dtbs["rtos"].root.find("/rtmux-vbus")
    assert [c.get_string("label") for c in vbus.children][-2:] == ["rtmux-files", "rtmux-log"]
    # given boot arguments (./rtmux run --bootargs linux=...) replace the configured ones, not the services'
    images = {
        "rtos": bundle.PartitionImages(arm64_image(0x80000, 256 * KIB, 64 * KIB)),
        "linux": bundle.PartitionImages(
            arm64_image(0, 40 * MIB, 64 * KIB), initramfs=b"\x1f\x8b" + bytes(4094), bootargs="quiet"
        ),
    }
    data = bundle.pack(cfg, arm64_image(0x80000, 256 * KIB, 128 * KIB), images, board_dtb)
    _, dtbs = read_back(data)
    assert dtbs["linux"].root.find("/chosen").get_string("bootargs") == (
        "quiet panic=-1 reboot=panic_warm rtmux.files=/srv/rtos,/etc/rtos:ro rtmux.log=file:/var/log/rtos.log"
    )


def test_no_services_no_node_and_no_arguments(board_dtb: bytes) -> None:
    cfg = config.loads(without_services(config.DEFAULT_CONFIG.read_text()))
    _, dtbs = read_back(pack(cfg, board_dtb))
    assert dtbs["rtos"].root.child("rtmux-services") is None
    assert "rtmux." not in dtbs["linux"].root.find("/chosen").get_string("bootargs")
    # [services] that offers nothing: the node says so (no properties but compatible), no arguments
    _, dtbs = read_back(
        pack(config.loads(without_services(config.DEFAULT_CONFIG.read_text()) + "\n[services]\n"), board_dtb)
    )
    assert set(dtbs["rtos"].root.find("/rtmux-services").props) == {"compatible"}
    assert "rtmux." not in dtbs["linux"].root.find("/chosen").get_string("bootargs")
