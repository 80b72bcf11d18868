"""The hypervisor's own blob parser (hyp/core/config.c, built natively as build/unit/hyp_blob_reader) on
blobs that the tools make: what it reads back equals what was packed, and every kind of damage is refused
with its own message. This ties the C definition (hyp/include/hyp/blob.h) to tools/rtmux/image/blob.py."""

from __future__ import annotations

import dataclasses
import subprocess
import zlib
from pathlib import Path

import pytest

from rtmux import config, paths
from rtmux.board import GIB, MIB
from rtmux.image import blob

READER = paths.BUILD_DIR / "unit" / "hyp_blob_reader"


@pytest.fixture(scope="module")
def reader() -> Path:
    """Builds the reader (make -C tests/unit/c, idempotent)."""
    proc = subprocess.run(
        ["make", "-s", "-C", str(paths.REPO_ROOT / "tests" / "unit" / "c"), str(READER)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return READER


def run(reader: Path, data: bytes, tmp_path: Path) -> tuple[int, dict[str, str]]:
    f = tmp_path / "blob.bin"
    f.write_bytes(data)
    proc = subprocess.run([str(reader), str(f)], capture_output=True, text=True, timeout=30)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 1: refused; anything else: a crash
    fields = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    if proc.returncode == 1:
        assert proc.stdout.startswith("panic: "), proc.stdout
        fields = {"panic": proc.stdout.removeprefix("panic: ").strip()}
    return proc.returncode, fields


@pytest.fixture
def good(blob_payloads: dict[str, blob.Payload]) -> blob.Blob:
    return blob.from_config(config.load(config.DEFAULT_CONFIG), blob_payloads)


def triple(*values: int) -> str:
    return ",".join(f"0x{v:x}" for v in values)


def expected_fields(b: blob.Blob) -> dict[str, str]:
    want = {
        "partitions": str(len(b.partitions)),
        "board_cpus": str(b.board_cpus),
        "console_tags": str(int(b.console_tags)),
        "console_view": str(int(b.console_focus_view)),
        "console_escape": str(b.console_escape),
        "console_focus": str(b.console_focus),
        "boot_report": str(int(b.boot_report)),
        "gic_version": str(b.gic_version),
    }
    for i, p in enumerate(b.partitions):
        want |= {
            f"part{i}.name": p.name,
            f"part{i}.tag": p.tag,
            f"part{i}.kind": str(p.kind),  # enum part_kind uses the blob's codes (1 rtos, 2 linux)
            f"part{i}.cpu_mask": f"0x{p.cpu_mask:x}",
            f"part{i}.ram": triple(p.ram_ipa, p.ram_pa, p.ram_size),
            f"part{i}.entry_ipa": f"0x{p.entry_ipa:x}",
            f"part{i}.irqs": ",".join(str(q) for q in p.irqs),
        }
        for name, slot in zip(("kernel", "initrd", "dtb"), p.images, strict=True):
            want[f"part{i}.{name}"] = triple(slot.offset if slot.size else 0, slot.size, slot.load_ipa)
        for d, dev in enumerate(p.devices):
            want[f"part{i}.device{d}"] = triple(dev.ipa, dev.pa, dev.size)
        for k, seed in enumerate(p.seeds):
            want[f"part{i}.seed{k}"] = f"0x{seed.offset:x},0x{seed.size:x}"
        for k, stream in enumerate(p.streams):
            want[f"part{i}.stream{k}"] = f"0x{stream.first:x},0x{stream.count:x}"
        want[f"part{i}.seeds_fixed"] = str(int(b.fixed_seeds))
        if p.flags & blob.PART_FLAG_SHARED:
            want[f"part{i}.shared"] = str(p.starved_ms)
        want[f"part{i}.fault"] = f"{p.fault.policy},{p.fault.max_restarts},{p.fault.window_s}"
        if p.conring.size:
            want[f"part{i}.conring"] = f"0x{p.conring.ipa:x},0x{p.conring.size:x}"
        if p.vbus.size and p.kind == blob.KIND_CODES[config.KIND_RTOS]:
            want[f"part{i}.vbus"] = f"0x{p.vbus.ipa:x},0x{p.vbus.size:x},0x{p.vbus.ipa:x}"
        if p.vbus.size and p.kind == blob.KIND_CODES[config.KIND_LINUX]:
            want["vbus.device"] = f"{i},0x{p.vbus.ipa:x},{p.vbus.intid}"
    want["vbus.nchan"] = str(len(b.channels))
    index: dict[int, int] = {}
    for k, c in enumerate(b.channels):
        n = index.get(c.rtos, 0)
        index[c.rtos] = n + 1
        want[f"chan{k}"] = (
            f"{c.name},{c.rtos},{n},0x{c.chan_off:x},0x{c.to_linux_off:x},0x{c.to_linux_size:x},"
            f"0x{c.to_rtos_off:x},0x{c.to_rtos_size:x}"
        )
    return want


def test_good_blob_reads_back_equal(reader: Path, good: blob.Blob, tmp_path: Path) -> None:
    rc, fields = run(reader, blob.pack(good), tmp_path)
    assert rc == 0
    assert fields == expected_fields(good)
    assert fields["part1.device0"]  # the Linux partition's passed-through devices came through
    assert fields["part1.stream0"] == "0x0,0x10000"  # and the PCIe host's streams, behind the SMMU
    assert fields["part0.fault"] == "0,0,0"  # the rtos stops on a fault (its default)
    assert fields["part1.fault"] == "1,3,60"  # Linux restarts, at most 3 times in 60 s (its default)
    assert fields["part0.conring"] == "0x40ff8000,0x4000"  # the rtos's console ring: the last 32 KiB
    assert "part1.conring" not in fields


@pytest.mark.parametrize(("fixed_seeds", "boot_report"), [(True, False), (False, True), (True, True)])
def test_measurement_flags_read_back(
    reader: Path, good: blob.Blob, tmp_path: Path, fixed_seeds: bool, boot_report: bool
) -> None:
    b = dataclasses.replace(good, fixed_seeds=fixed_seeds, boot_report=boot_report)
    rc, fields = run(reader, blob.pack(b), tmp_path)
    assert rc == 0
    assert fields == expected_fields(b)
    assert [fields[f"part{i}.seeds_fixed"] for i in range(2)] == [str(int(fixed_seeds))] * 2
    assert fields["boot_report"] == str(int(boot_report))


@pytest.mark.parametrize(("gic", "read"), [(2, "2"), (3, "3"), (0, "3")], ids=["v2", "v3", "before-2.4"])
def test_gic_version_read_back(reader: Path, good: blob.Blob, tmp_path: Path, gic: int, read: str) -> None:
    """The board's GIC version (since 2.4), which the hypervisor checks against the CPU's; a blob made
    before 2.4 has 0 there and means a GICv3."""
    rc, fields = run(reader, blob.pack(dataclasses.replace(good, gic_version=gic)), tmp_path)
    assert rc == 0
    assert fields["gic_version"] == read


def test_newer_minor_revision_is_accepted(reader: Path, good: blob.Blob, tmp_path: Path) -> None:
    rc, fields = run(reader, blob.pack(dataclasses.replace(good, version_minor=9)), tmp_path)
    assert rc == 0 and fields == expected_fields(good)


def test_shared_cpu_reads_back(reader: Path, good: blob.Blob, tmp_path: Path) -> None:
    """The rtos shares CPU 0 with a Linux partition that has CPUs 0 and 1 (multi-CPU Linux beside it)."""
    shared = with_partition(good, 0, flags=blob.PART_FLAG_SHARED, starved_ms=250)
    shared = with_partition(shared, 1, cpu_mask=0b11)
    rc, fields = run(reader, blob.pack(shared), tmp_path)
    assert rc == 0
    assert fields == expected_fields(shared)
    assert fields["part0.shared"] == "250" and "part1.shared" not in fields


def with_partition(b: blob.Blob, index: int, **changes: object) -> blob.Blob:
    parts = list(b.partitions)
    parts[index] = dataclasses.replace(parts[index], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(b, partitions=tuple(parts))


def damaged(data: bytes, offset: int, value: bytes) -> bytes:
    return data[:offset] + value + data[offset + len(value) :]


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("bad magic", "no configuration blob after the hypervisor image"),
        ("bad crc", "CRC mismatch"),
        # the default system's 3 channels and its services' 4
        ("truncated", "configuration blob truncated: 1728 bytes announced, 1100 present"),
        ("newer major", "configuration blob revision 3.4; this hypervisor reads 2.x"),
        ("layout", "layout not understood"),
        ("outside ram", "partition linux: RAM 0x70000000+0x20000000 is outside the board's RAM"),
        ("over hypervisor", "partition rtos: RAM 0x40000000+0x1000000 is outside the board's RAM or over"),
        ("overlapping", "partitions rtos and linux overlap in RAM"),
        ("cpu twice", "partition linux: bad kind 2 or CPUs 0x1 (overlapping or beyond 8 CPUs)"),
        ("rtos on several cpus", "partition rtos: CPUs 0x5: an rtos partition runs on one CPU"),
        ("shared linux", "partition linux: bad flags 0x1 or starved_ms 1000 (the shared flag is an rtos"),
        ("starved unshared", "partition rtos: bad flags 0x0 or starved_ms 5 (the shared flag is an rtos"),
        ("unknown flag", "partition rtos: bad flags 0x3 or starved_ms 1000"),
        ("shared alone", "partition rtos: shared, but no Linux partition has its CPU"),
        ("two rtos on a cpu", "partition rtos2: bad kind 1 or CPUs 0x1 (overlapping or beyond 8 CPUs)"),
        ("not an spi", "partition linux: interrupt 27 is not an SPI"),
        ("image outside ram", "partition rtos: image 2 (0x800 bytes at IPA 0x41000000) is outside its RAM"),
        ("no image", "partition rtos has no image"),
        ("seed outside dtb", "partition linux: seed range 1 (0x20 bytes at 0x1000) is outside its DTB"),
        ("device over ram", "partition linux: device range 0 (PA 0x48000000, IPA 0xa000000, 0x1000 bytes)"),
        ("device misaligned", "partition linux: device range 0 (PA 0xa000100, IPA 0xa000000, 0x1000 bytes)"),
        ("device wraps", "partition linux: device range 0 (PA 0xfffffffffffff000, IPA 0xa000000, 0x2000"),
        ("device shared", "partitions rtos and linux share device memory at PA 0xa000000"),
        ("interrupt shared", "partitions rtos and linux both claim interrupt 40"),
        ("image outside payload", "partition rtos: image 0 (0x"),
        ("ram wraps", "partition linux: RAM 0xffffffffffe00000+0x400000 is outside the board's RAM"),
        ("streams shared", "partitions rtos and linux share IOMMU streams 0x8..0x8"),
        ("stream range wraps", "partition linux: stream range 0xffffffff+0x2 wraps"),
        ("unknown fault policy", "partition linux: fault policy 2 with 3 restarts in 60 s is not valid"),
        ("restart without a window", "partition linux: fault policy 1 with 3 restarts in 0 s is not valid"),
        ("too many restarts", "partition rtos: fault policy 1 with 17 restarts in 60 s is not valid"),
        ("ring beyond ram", "partition rtos: console ring of 0x4000 bytes at IPA 0x40ffc000 is not inside"),
        ("ring size", "partition rtos: console ring of 0x3000 bytes at IPA 0x40ff8000 is not inside"),
        ("unknown gic", "configuration blob: GIC version 4 (rtmux drives GICv3 and GICv2)"),
    ],
)
def test_damaged_blob_is_refused_with_its_reason(
    reader: Path, good: blob.Blob, tmp_path: Path, case: str, message: str
) -> None:
    data = blob.pack(good)
    rtos_off, linux_off = 128, 128 + 576
    match case:
        case "bad magic":
            data = damaged(data, 0, b"XMXC")
        case "bad crc":
            data = damaged(data, rtos_off + 1, b"X")  # a name byte: nothing but the CRC notices
        case "truncated":
            data = data[:1100]
        case "newer major":
            data = blob.pack(dataclasses.replace(good, version_major=3))
        case "unknown gic":
            data = blob.pack(dataclasses.replace(good, gic_version=4))
        case "layout":
            data = blob.pack(good)
            data = damaged(data, 28, (256).to_bytes(4, "little"))  # partition_size
        case "outside ram":
            data = blob.pack(with_partition(good, 1, ram_pa=0x4000_0000 + GIB - 256 * MIB))
        case "over hypervisor":
            data = blob.pack(with_partition(good, 0, ram_pa=0x4000_0000))
        case "overlapping":
            data = blob.pack(with_partition(good, 1, ram_pa=0x4800_0000 + 2 * MIB))
        case "cpu twice":
            data = blob.pack(with_partition(good, 1, cpu_mask=0b1))
        case "shared linux":
            data = blob.pack(with_partition(good, 1, flags=blob.PART_FLAG_SHARED, starved_ms=1000))
        case "starved unshared":
            data = blob.pack(with_partition(good, 0, starved_ms=5))
        case "unknown flag":
            data = blob.pack(with_partition(good, 0, flags=blob.PART_FLAG_SHARED | 2, starved_ms=1000))
        case "shared alone":  # the rtos on CPU 0, Linux on CPU 1
            data = blob.pack(with_partition(good, 0, flags=blob.PART_FLAG_SHARED, starved_ms=1000))
        case "two rtos on a cpu":  # a second shared rtos on the CPU the first shares with Linux
            shared = with_partition(good, 0, flags=blob.PART_FLAG_SHARED, starved_ms=1000)
            shared = with_partition(shared, 1, cpu_mask=0b11)
            second = dataclasses.replace(
                shared.partitions[0], name="rtos2", flags=blob.PART_FLAG_SHARED, starved_ms=1000
            )
            data = blob.pack(dataclasses.replace(shared, partitions=(*shared.partitions, second)))
        case "rtos on several cpus":
            data = blob.pack(with_partition(good, 0, cpu_mask=0b101))
        case "not an spi":
            data = blob.pack(with_partition(good, 1, irqs=(27,)))
        case "image outside ram":
            images = good.partitions[0].images
            dtb = dataclasses.replace(images[2], load_ipa=0x4100_0000)
            data = blob.pack(with_partition(good, 0, images=(images[0], images[1], dtb)))
        case "no image":
            images = good.partitions[0].images
            data = blob.pack(with_partition(good, 0, images=(blob.ImageSlot(), images[1], images[2])))
        case "device over ram":  # the rtos's RAM as a "device" of Linux
            dev = blob.DeviceRecord(ipa=0x0A00_0000, pa=0x4800_0000, size=0x1000)
            data = blob.pack(with_partition(good, 1, devices=(dev,)))
        case "device misaligned":
            dev = blob.DeviceRecord(ipa=0x0A00_0000, pa=0x0A00_0100, size=0x1000)
            data = blob.pack(with_partition(good, 1, devices=(dev,)))
        case "device wraps":
            dev = blob.DeviceRecord(ipa=0x0A00_0000, pa=(1 << 64) - 0x1000, size=0x2000)
            data = blob.pack(with_partition(good, 1, devices=(dev,)))
        case "device shared":
            dev = blob.DeviceRecord(ipa=0x0A00_0000, pa=0x0A00_0000, size=0x1000)
            data = blob.pack(with_partition(with_partition(good, 0, devices=(dev,)), 1, devices=(dev,)))
        case "interrupt shared":
            data = blob.pack(with_partition(with_partition(good, 0, irqs=(40,)), 1, irqs=(40,)))
        case "image outside payload":
            images = good.partitions[0].images
            far = dataclasses.replace(images[0], offset=1 << 40)
            data = blob.pack(with_partition(good, 0, images=(far, images[1], images[2])))
        case "ram wraps":
            data = blob.pack(with_partition(good, 1, ram_pa=(1 << 64) - 2 * MIB, ram_size=4 * MIB))
        case "seed outside dtb":
            # pack refuses such a seed itself; write the range into the record and fix the CRC after.
            data = damaged(data, linux_off + 496 + 8, (0x1000).to_bytes(4, "little"))
            data = refresh_crc(data)
        case "streams shared":
            data = blob.pack(with_partition(good, 0, streams=(blob.StreamRange(8, 1),)))
        case "stream range wraps":
            data = blob.pack(with_partition(good, 1, streams=(blob.StreamRange(0xFFFF_FFFF, 2),)))
        case "unknown fault policy":
            data = blob.pack(with_partition(good, 1, fault=blob.FaultRecord(2, 3, 60)))
        case "restart without a window":
            data = blob.pack(with_partition(good, 1, fault=blob.FaultRecord(1, 3, 0)))
        case "too many restarts":
            data = blob.pack(with_partition(good, 0, fault=blob.FaultRecord(1, 17, 60)))
        case "ring beyond ram":
            data = blob.pack(with_partition(good, 0, conring=blob.ConringRecord(0x40FF_C000, 0x4000)))
        case "ring size":
            data = blob.pack(with_partition(good, 0, conring=blob.ConringRecord(0x40FF_8000, 0x3000)))
    rc, fields = run(reader, data, tmp_path)
    assert rc == 1
    assert message in fields["panic"]


def refresh_crc(data: bytes) -> bytes:
    zeroed = data[:16] + bytes(4) + data[20:]
    return data[:16] + zlib.crc32(zeroed).to_bytes(4, "little") + data[20:]


def test_console_focus_view_flag(reader: Path, good: blob.Blob, tmp_path: Path) -> None:
    rc, fields = run(reader, blob.pack(dataclasses.replace(good, console_focus_view=True)), tmp_path)
    assert rc == 0 and fields["console_view"] == "1"


# ---------------------------------------------------------------------------------- V-Bus (since 2.2)
# Three channels beside the default system's own: served by the rtos (partition 0), whose region holds
# them, and the device in the Linux partition (1).
EXTRA_CHANNELS = """
[[channel]]
name = "v0"
rtos = "rtos"
size = "16K"

[[channel]]
name = "v.1"
to_linux = "4K"
to_rtos = 256

[[channel]]
name = "V_2-x"
size = "1M"
"""


@pytest.fixture
def vbus_good(blob_payloads: dict[str, blob.Payload]) -> blob.Blob:
    text = config.DEFAULT_CONFIG.read_text() + EXTRA_CHANNELS
    cfg = config.loads(text, str(config.DEFAULT_CONFIG))
    return blob.from_config(cfg, blob_payloads)


def with_channel(b: blob.Blob, index: int, **changes: object) -> blob.Blob:
    chans = list(b.channels)
    chans[index] = dataclasses.replace(chans[index], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(b, channels=tuple(chans))


def test_vbus_blob_reads_back_equal(reader: Path, vbus_good: blob.Blob, tmp_path: Path) -> None:
    rc, fields = run(reader, blob.pack(vbus_good), tmp_path)
    assert rc == 0, fields
    assert fields == expected_fields(vbus_good)
    assert fields["vbus.device"] == "1,0xa004000,224"
    region = vbus_good.partitions[0].vbus
    assert fields["part0.vbus"] == f"0x{region.ipa:x},0x{region.size:x},0x{region.ipa:x}"
    count = int(fields["vbus.nchan"])
    names = [fields[f"chan{k}"].split(",")[0] for k in range(count)]
    # the services' come last
    assert names[-7:] == ["v0", "v.1", "V_2-x", "rtmux-files", "rtmux-log", "rtmux-net", "rtmux-threads"]
    assert fields[f"chan{count - 1}"].split(",")[2] == str(count - 1)  # its index in the region


def test_blob_2_1_reads_as_no_vbus(reader: Path, good: blob.Blob, tmp_path: Path) -> None:
    """A 2.1 blob has zeros where 2.2 put the V-Bus: it reads, with no V-Bus."""
    parts = tuple(dataclasses.replace(p, vbus=blob.VbusRecord()) for p in good.partitions)
    old = dataclasses.replace(good, version_minor=1, channels=(), partitions=parts)
    rc, fields = run(reader, blob.pack(old), tmp_path)
    assert rc == 0 and fields["vbus.nchan"] == "0" and "vbus.device" not in fields


def with_second_linux(b: blob.Blob) -> blob.Blob:
    """A second Linux partition (CPU 2, its own RAM), also with the V-Bus device."""
    other = dataclasses.replace(
        b.partitions[1],
        name="linux2",
        tag="linux2",
        cpu_mask=0b100,
        ram_ipa=0x7000_0000,
        ram_pa=0x7000_0000,
        ram_size=64 * MIB,
        entry_ipa=0x7000_0000,
        images=(blob.ImageSlot(0x30_0000, MIB, 0x7000_0000), blob.ImageSlot(), blob.ImageSlot()),
        devices=(),
        irqs=(),
        seeds=(),
        streams=(),
    )
    return dataclasses.replace(b, partitions=(*b.partitions, other), board_cpus=3)


NAME_BAD = "V-Bus channel {a}: name not terminated, empty, or not [A-Za-z0-9._-] without a leading '.'"
DEVICE_BAD = "is not one page apart from its RAM and devices, with an SPI"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("name characters", NAME_BAD),
        ("name leading dot", NAME_BAD),
        ("name empty", NAME_BAD),
        ("name unterminated", NAME_BAD),
        ("name padding", NAME_BAD),
        ("duplicate names", "V-Bus channels {a} and {b} are both named v0"),
        ("served by linux", "V-Bus channel v0: partition 1 is not an rtos partition with a V-Bus region"),
        ("served by nobody", "V-Bus channel v0: partition 7 is not an rtos partition with a V-Bus region"),
        ("ring not a power of two", "V-Bus channel v0: ring sizes 0x300 (to_linux) and 0x4000 (to_rtos)"),
        ("ring too small", "V-Bus channel v0: ring sizes 0x4000 (to_linux) and 0x80 (to_rtos)"),
        ("ring too big", "V-Bus channel v0: ring sizes 0x200000 (to_linux) and 0x4000 (to_rtos)"),
        ("ring misaligned", "V-Bus channel v0: to_linux ring (0x4080 bytes at offset 0x"),
        ("ring outside region", "V-Bus channel v0: to_rtos ring (0x4080 bytes at offset 0x"),
        ("block over region header", "V-Bus channel v0: control block (0x80 bytes at offset 0x0)"),
        ("own rings overlap", "V-Bus channel v0: its to_rtos ring overlaps its to_linux ring"),
        ("blocks overlap", "V-Bus channel v.1: its control block overlaps the control block of channel v0"),
        ("rings overlap", "V-Bus channel v.1: its to_linux ring overlaps the to_rtos ring of channel v0"),
        ("region outside ram", "partition rtos: V-Bus region of 0x"),
        ("region misaligned", "partition rtos: V-Bus region of 0x"),
        ("region over image", "partition rtos: V-Bus region at IPA 0x40080000 overlaps its image 0"),
        ("region over dtb", "partition rtos: V-Bus region at IPA 0x40e00000 overlaps its image 2"),
        (
            "region over console ring",
            "partition rtos: V-Bus region at IPA 0x40ff0000 overlaps its console ring",
        ),
        ("region with interrupt", "partition rtos: V-Bus region of 0x"),
        ("place of size 0", "partition linux: V-Bus place at IPA 0xa004000 (interrupt 224) has size 0"),
        ("region without channel", "partition rtos: V-Bus region without a channel"),
        ("channels without device", "V-Bus channels, but no Linux partition has the V-Bus device"),
        ("device without channels", "0 V-Bus channels, but a Linux partition has the V-Bus device"),
        ("device on ram", f"V-Bus device (0x1000 bytes at IPA 0x49000000, interrupt 224) {DEVICE_BAD}"),
        (
            "device on its device",
            f"V-Bus device (0x1000 bytes at IPA 0x10000000, interrupt 224) {DEVICE_BAD}",
        ),
        ("device on the uart", f"V-Bus device (0x1000 bytes at IPA 0x9000000, interrupt 224) {DEVICE_BAD}"),
        ("device on the gic", f"V-Bus device (0x1000 bytes at IPA 0x80a0000, interrupt 224) {DEVICE_BAD}"),
        ("device of two pages", f"V-Bus device (0x2000 bytes at IPA 0xa004000, interrupt 224) {DEVICE_BAD}"),
        ("device misaligned", f"V-Bus device (0x1000 bytes at IPA 0xa004200, interrupt 224) {DEVICE_BAD}"),
        (
            "device interrupt not an spi",
            f"V-Bus device (0x1000 bytes at IPA 0xa004000, interrupt 27) {DEVICE_BAD}",
        ),
        ("device interrupt owned", "partition linux owns interrupt 35, the V-Bus device's"),
        ("two devices", "partitions linux and linux2 both have the V-Bus device"),
        ("too many channels", "layout not understood"),
        ("channel table elsewhere", "layout not understood"),
    ],
)
def test_damaged_vbus_is_refused_with_its_reason(
    reader: Path, vbus_good: blob.Blob, tmp_path: Path, case: str, message: str
) -> None:
    b = vbus_good
    a = next(i for i, c in enumerate(b.channels) if c.name == "v0")
    n1 = next(i for i, c in enumerate(b.channels) if c.name == "v.1")
    v0 = b.channels[a]
    assert v0.rtos == 0 and v0.to_linux_size == v0.to_rtos_size == 0x4000
    region = b.partitions[0].vbus
    name_at = 128 + 2 * 576 + a * 64
    data: bytes | None = None
    match case:
        case "name characters":
            b = with_channel(b, a, name="a/b")
        case "name leading dot":
            b = with_channel(b, a, name=".v0")
        case "name empty":
            b = with_channel(b, a, name="")
        case "name unterminated":
            data = refresh_crc(damaged(blob.pack(b), name_at, b"x" * 32))
        case "name padding":
            data = refresh_crc(damaged(blob.pack(b), name_at, b"v0\0x"))
        case "duplicate names":
            b = with_channel(b, n1, name="v0")
        case "served by linux":
            b = with_channel(b, a, rtos=1)
        case "served by nobody":
            b = with_channel(b, a, rtos=7)
        case "ring not a power of two":
            b = with_channel(b, a, to_linux_size=0x300)
        case "ring too small":
            b = with_channel(b, a, to_rtos_size=0x80)
        case "ring too big":
            b = with_channel(b, a, to_linux_size=2 * MIB)
        case "ring misaligned":
            b = with_channel(b, a, to_linux_off=v0.to_linux_off + 8)
        case "ring outside region":
            b = with_channel(b, a, to_rtos_off=region.size - 64)
        case "block over region header":
            b = with_channel(b, a, chan_off=0)
        case "own rings overlap":
            b = with_channel(b, a, to_rtos_off=v0.to_linux_off + 64)
        case "blocks overlap":
            b = with_channel(b, n1, chan_off=v0.chan_off)
        case "rings overlap":
            b = with_channel(b, n1, to_linux_off=v0.to_rtos_off)
        case "region outside ram":
            b = with_partition(b, 0, vbus=blob.VbusRecord(0x4100_0000 - 4096, region.size))
        case "region misaligned":
            b = with_partition(b, 0, vbus=blob.VbusRecord(region.ipa + 8, region.size))
        case "region over image":
            b = with_partition(b, 0, vbus=blob.VbusRecord(0x4008_0000, region.size))
        case "region over dtb":
            b = with_partition(b, 0, vbus=blob.VbusRecord(0x40E0_0000, 0x1_0000))
        case "region over console ring":
            b = with_partition(b, 0, vbus=blob.VbusRecord(0x40FF_0000, 0x1_0000))
        case "region with interrupt":
            b = with_partition(b, 0, vbus=blob.VbusRecord(region.ipa, region.size, 224))
        case "place of size 0":
            b = with_partition(b, 1, vbus=blob.VbusRecord(0x0A00_4000, 0, 224))
        case "region without channel":
            b = with_partition(dataclasses.replace(b, channels=()), 1, vbus=blob.VbusRecord())
        case "channels without device":
            b = with_partition(b, 1, vbus=blob.VbusRecord())
        case "device without channels":
            b = with_partition(dataclasses.replace(b, channels=()), 0, vbus=blob.VbusRecord())
        case "device on ram":
            b = with_partition(b, 1, vbus=blob.VbusRecord(0x4900_0000, 0x1000, 224))
        case "device on its device":
            b = with_partition(b, 1, vbus=blob.VbusRecord(0x1000_0000, 0x1000, 224))
        case "device on the uart":
            b = with_partition(b, 1, vbus=blob.VbusRecord(0x0900_0000, 0x1000, 224))
        case "device on the gic":
            b = with_partition(b, 1, vbus=blob.VbusRecord(0x080A_0000, 0x1000, 224))
        case "device of two pages":
            b = with_partition(b, 1, vbus=blob.VbusRecord(0x0A00_4000, 0x2000, 224))
        case "device misaligned":
            b = with_partition(b, 1, vbus=blob.VbusRecord(0x0A00_4200, 0x1000, 224))
        case "device interrupt not an spi":
            b = with_partition(b, 1, vbus=blob.VbusRecord(0x0A00_4000, 0x1000, 27))
        case "device interrupt owned":
            b = with_partition(b, 1, vbus=blob.VbusRecord(0x0A00_4000, 0x1000, 35))
        case "two devices":
            b = with_second_linux(b)
        case "too many channels":
            data = refresh_crc(damaged(blob.pack(b), 96, (33).to_bytes(4, "little")))
        case "channel table elsewhere":
            data = refresh_crc(damaged(blob.pack(b), 104, (128 + 576).to_bytes(4, "little")))
    rc, fields = run(reader, data if data is not None else blob.pack(b), tmp_path)
    assert rc == 1, fields
    assert message.format(a=a, b=n1) in fields["panic"]
