"""The configuration blob (rtmux.image.blob): exact layout and round trip."""

from __future__ import annotations

import dataclasses
import struct
import zlib

import pytest

from rtmux import config
from rtmux.board import MIB
from rtmux.errors import SetupError
from rtmux.image import blob, bundle

TWO_TRANSPORTS = """
[[partition]]
name = "rtos"
kind = "rtos"
cpus = [0]
memory = "16M"
image = "build/rtos/demo.img"

[[partition]]
name = "linux"
kind = "linux"
cpus = [1]
memory = "512M"
kernel = "debian:std"

[[partition.device]]
board = "virtio-mmio.0"
dma = "unrestricted"

[[partition.device]]
board = "virtio-mmio.1"
dma = "unrestricted"

[[partition.device]]
board = "rtc"
"""


@pytest.fixture(scope="module")
def cfg() -> config.SystemConfig:
    return config.load(config.DEFAULT_CONFIG)


def test_layout_sizes() -> None:
    assert blob.HEADER.size == 128
    assert blob.PART_SIZE == 576
    assert blob.CHANNEL.size == 64


def test_round_trip(cfg: config.SystemConfig, blob_payloads: dict[str, blob.Payload]) -> None:
    b = blob.from_config(cfg, blob_payloads)
    data = blob.pack(b)
    assert len(data) == 128 + 2 * 576 + 64 * len(cfg.channels) == blob.size_of(cfg)
    assert blob.unpack(data) == b
    assert blob.pack(blob.unpack(data)) == data


def test_header_fields_at_documented_offsets(
    cfg: config.SystemConfig, blob_payloads: dict[str, blob.Payload]
) -> None:
    data = blob.pack(blob.from_config(cfg, blob_payloads))
    assert data[0:4] == b"RMXC"
    assert struct.unpack_from("<HHIII", data, 4) == (
        2,
        4,
        128,
        len(data),
        zlib.crc32(data[:16] + bytes(4) + data[20:]),
    )
    flags, count, psize, poff, cpus = struct.unpack_from("<5I", data, 20)
    assert (flags, count, psize, poff, cpus) == (1, 2, 576, 128, 2)
    assert struct.unpack_from("<4Q", data, 40) == (0x4000_0000, 1 << 30, 0x4000_0000, 128 * MIB)
    # Ctrl-T, focus on partition 1 (linux), GICv3 (since 2.4)
    assert struct.unpack_from("<BBHI", data, 72) == (0x14, 1, 3, 0)
    assert data[80:96] == b"qemu-virt".ljust(16, b"\0")
    nchan = len(cfg.channels)
    at = 128 + 2 * 576 if nchan else 0
    assert struct.unpack_from("<3I", data, 96) == (nchan, 64 if nchan else 0, at)  # the channel table
    assert data[108:128] == bytes(20)


@pytest.mark.parametrize(
    ("fixed_seeds", "boot_report", "flags"),
    [(False, False, 1), (True, False, 3), (False, True, 5), (True, True, 7)],
)
def test_measurement_flags(
    cfg: config.SystemConfig,
    blob_payloads: dict[str, blob.Payload],
    fixed_seeds: bool,
    boot_report: bool,
    flags: int,
) -> None:
    b = dataclasses.replace(
        blob.from_config(cfg, blob_payloads), fixed_seeds=fixed_seeds, boot_report=boot_report
    )
    data = blob.pack(b)
    assert struct.unpack_from("<I", data, 20) == (flags,)  # bits 1 and 2 of the header's flags (since 2.1)
    assert blob.unpack(data) == b


def test_partition_fields_at_documented_offsets(
    cfg: config.SystemConfig, blob_payloads: dict[str, blob.Payload]
) -> None:
    data = blob.pack(blob.from_config(cfg, blob_payloads))
    rtos, linux = 128, 128 + 576
    assert data[rtos : rtos + 16] == b"rtos".ljust(16, b"\0")
    assert data[rtos + 16 : rtos + 32] == b"rtos".ljust(16, b"\0")
    assert struct.unpack_from("<IIQQQQQQ", data, rtos + 32) == (
        1,  # kind rtos
        0,
        0b01,
        0x4000_0000,  # RAM IPA: where the rtos is linked
        0x4800_0000,  # RAM PA
        16 * MIB,
        0x4008_0000,  # entry
        0x40E0_0000,  # DTB
    )
    assert struct.unpack_from("<IIII", data, rtos + 88) == (0, 1, 0, 0)  # boot CPU 0, 1 device, 0 irqs
    assert struct.unpack_from("<3Q", data, rtos + 104) == (0x10_0000, 0x6B60, 0x4008_0000)
    assert struct.unpack_from("<3Q", data, rtos + 128) == (0, 0, 0)  # no initramfs
    assert struct.unpack_from("<3Q", data, rtos + 152) == (0x20_0000, 0x800, 0x40E0_0000)
    assert struct.unpack_from("<3Q", data, rtos + 176) == (0x080A_0000, 0x080A_0000, 0x2_0000)  # its GICR
    assert data[rtos + 200 : rtos + 536] == bytes(336)  # no more devices, no seeds, no streams; fault: stop
    assert struct.unpack_from("<QII", data, rtos + 536) == (0x40FF_8000, 0x4000, 0)  # its console ring
    # its V-Bus region (the default system's three channels and its services' four: 156 KiB below its
    # DTB slot)
    assert struct.unpack_from("<QII", data, rtos + 552) == (0x40DD_9000, 156 * 1024, 0)
    assert data[rtos + 568 : rtos + 576] == bytes(8)

    assert struct.unpack_from("<I", data, linux + 32) == (2,)
    assert struct.unpack_from("<QQQQ", data, linux + 40) == (0b10, 0x4900_0000, 0x4900_0000, 512 * MIB)
    assert struct.unpack_from("<IIII", data, linux + 88) == (1, 2, 4, 0)  # 2 device ranges, 4 irqs
    assert struct.unpack_from("<3Q", data, linux + 128) == (0x240_0000, 2 * MIB, 0x68C0_0000)
    # the PCIe host: its 32-bit memory and I/O windows (adjacent: one range), then its ECAM
    assert struct.unpack_from("<3Q", data, linux + 176) == (0x1000_0000, 0x1000_0000, 0x2F00_0000)
    assert struct.unpack_from("<3Q", data, linux + 200) == (0x40_1000_0000, 0x40_1000_0000, 0x1000_0000)
    assert struct.unpack_from("<5I", data, linux + 368) == (35, 36, 37, 38, 0)  # INTx, SPIs 3..6
    assert struct.unpack_from("<4I", data, linux + 496) == (0x300, 8, 0x320, 32)  # kaslr-seed, rng-seed
    assert blob.unpack(data).partitions[1].seeds == (blob.SeedRange(0x300, 8), blob.SeedRange(0x320, 32))
    # every stream ID of the PCIe host goes to this partition's RAM through the SMMU
    assert struct.unpack_from("<4I", data, linux + 512) == (0, 0x1_0000, 0, 0)
    assert struct.unpack_from("<BBHI", data, linux + 528) == (1, 3, 0, 60)  # restart, at most 3 in 60 s
    assert data[linux + 536 : linux + 552] == bytes(16)  # no console ring
    assert struct.unpack_from("<QII", data, linux + 552) == (0x0A00_4000, 0x1000, 224)  # the V-Bus device
    assert data[linux + 568 : linux + 576] == bytes(8)
    # the channel table: echo, telemetry, setpoint, served by partition 0
    table = 128 + 2 * 576
    names = [data[table + 64 * i : table + 64 * i + 32].rstrip(b"\0") for i in range(3)]
    assert names == [b"echo", b"telemetry", b"setpoint"]
    assert [struct.unpack_from("<I", data, table + 64 * i + 32)[0] for i in range(3)] == [0, 0, 0]
    assert blob.unpack(data).partitions[1].streams == (blob.StreamRange(0, 0x1_0000),)


def test_empty_stream_range_is_refused(cfg: config.SystemConfig) -> None:
    b = blob.from_config(cfg)
    linux = dataclasses.replace(b.partitions[1], streams=(blob.StreamRange(8, 0),))
    with pytest.raises(blob.BlobError, match="empty stream range"):
        blob.pack(dataclasses.replace(b, partitions=(b.partitions[0], linux)))


def test_seed_range_outside_the_dtb_is_refused(
    cfg: config.SystemConfig, blob_payloads: dict[str, blob.Payload]
) -> None:
    bad = blob_payloads
    bad["linux"] = dataclasses.replace(bad["linux"], seeds=(blob.SeedRange(0xFF0, 32),))
    with pytest.raises(blob.BlobError, match="do not fit its 4096-byte DTB"):
        blob.pack(blob.from_config(cfg, bad))


def test_seed_ranges_are_found_once() -> None:
    dtb = b"head" + b"K" * 8 + b"mid" + b"R" * 32 + b"tail"
    assert bundle.seed_ranges(dtb, b"K" * 8, b"R" * 32) == (blob.SeedRange(4, 8), blob.SeedRange(15, 32))
    with pytest.raises(SetupError, match="not unique"):
        bundle.seed_ranges(dtb + b"R" * 32, b"R" * 32)


def test_devices_are_pages_merged() -> None:
    cfg = config.loads(TWO_TRANSPORTS)
    records = blob.device_pages(cfg.partition("linux"))
    # transports 0 and 1 share the page 0x0a00_0000; the RTC has its own
    assert records == (
        blob.DeviceRecord(0x0901_0000, 0x0901_0000, 0x1000),
        blob.DeviceRecord(0x0A00_0000, 0x0A00_0000, 0x1000),
    )
    assert cfg.partition("linux").interrupts == (34, 48, 49)


def test_without_payloads_images_are_absent(cfg: config.SystemConfig) -> None:
    b = blob.unpack(blob.pack(blob.from_config(cfg)))
    assert all(slot == blob.ImageSlot() for p in b.partitions for slot in p.images)


def test_payload_outside_ram_is_refused(
    cfg: config.SystemConfig, blob_payloads: dict[str, blob.Payload]
) -> None:
    bad = blob_payloads
    bad["rtos"] = blob.Payload(
        blob.ImageSlot(0, 16, 0x4800_0000), 0x4800_0000, blob.ImageSlot(0, 16, 0x40E0_0000)
    )
    with pytest.raises(blob.BlobError, match="outside its RAM"):
        blob.from_config(cfg, bad)


@pytest.mark.parametrize(
    ("offset", "value", "message"),
    [
        (0, b"XMXC", "bad magic"),
        (4, struct.pack("<H", 3), r"revision 3\.4; this reader handles 2\.x"),
        (200, b"\x01", "CRC mismatch"),
        (12, struct.pack("<I", 10_000), "inconsistent sizes"),
    ],
)
def test_unpack_refuses(cfg: config.SystemConfig, offset: int, value: bytes, message: str) -> None:
    data = bytearray(blob.pack(blob.from_config(cfg)))
    data[offset : offset + len(value)] = value
    with pytest.raises(blob.BlobError, match=message):
        blob.unpack(bytes(data))


def test_newer_minor_revision_is_read(cfg: config.SystemConfig) -> None:
    b = blob.from_config(cfg)
    newer = blob.Blob(**{**b.__dict__, "version_minor": 3})
    assert blob.unpack(blob.pack(newer)).version_minor == 3


def test_fixed_seed_repeats_for_the_same_number_only() -> None:
    one, again, two = bundle.fixed_seed(1), bundle.fixed_seed(1), bundle.fixed_seed(2)
    assert one(40) == again(40) and len(one(40)) == 40
    assert one(40) != two(40)
    assert one(8) == one(40)[:8]  # SHAKE: a longer draw extends a shorter one


VBUS = """
[[partition]]
name = "linux"
kind = "linux"
cpus = [1]
memory = "512M"
kernel = "debian:std"

[[partition]]
name = "rtos"
kind = "rtos"
cpus = [0]
memory = "16M"
image = "build/rtos/demo.img"

[[channel]]
name = "echo"

[[channel]]
name = "telemetry"
to_linux = "4K"
to_rtos = 256
"""


def test_vbus_fields_at_documented_offsets(blob_payloads: dict[str, blob.Payload]) -> None:
    """Since 2.2: the channel table after the partitions, each partition's V-Bus place at +552."""
    cfg = config.loads(VBUS)
    data = blob.pack(blob.from_config(cfg))
    linux, rtos, table = 128, 128 + 576, 128 + 2 * 576
    assert len(data) == table + 2 * 64
    assert struct.unpack_from("<3I", data, 96) == (2, 64, table)
    # the rtos partition (index 1): its region, 40 KiB below its DTB slot (IPAs); no interrupt
    region = cfg.partition("rtos").vbus
    assert region is not None and region.end == 0x40E0_0000
    assert struct.unpack_from("<QII", data, rtos + 552) == (region.base, region.size, 0)
    # the Linux partition: the device's page and SPI 192
    assert struct.unpack_from("<QII", data, linux + 552) == (0x0A00_4000, 0x1000, 224)
    assert data[rtos + 568 : rtos + 576] == bytes(8) and data[linux + 568 : linux + 576] == bytes(8)
    assert data[table : table + 32] == b"echo".ljust(32, b"\0")
    echo = cfg.channels[0]
    assert struct.unpack_from("<7I", data, table + 32) == (
        1,  # served by partition 1
        64,  # its struct vbus_chan right after struct vbus_region
        echo.to_linux_off,
        16 * 1024,
        echo.to_rtos_off,
        16 * 1024,
        0,
    )
    assert data[table + 64 : table + 64 + 32] == b"telemetry".ljust(32, b"\0")
    assert struct.unpack_from("<7I", data, table + 96)[:2] == (1, 192)
    assert struct.unpack_from("<II", data, table + 96 + 12) == (4096, cfg.channels[1].to_rtos_off)
    back = blob.unpack(data)
    assert back == blob.from_config(cfg)
    t = cfg.channels[1]
    assert back.channels[1] == blob.ChannelRecord(
        "telemetry", 1, 192, t.to_linux_off, 4096, t.to_rtos_off, 256
    )


def test_channel_name_too_long_is_refused() -> None:
    b = blob.from_config(config.loads(VBUS))
    long = dataclasses.replace(b.channels[0], name="x" * 32)
    with pytest.raises(blob.BlobError, match="longer than 31 bytes"):
        blob.pack(dataclasses.replace(b, channels=(long,)))
