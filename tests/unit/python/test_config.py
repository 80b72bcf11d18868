"""System configurations: parsing, every class of error, placement (rtmux.config)."""

from __future__ import annotations

import dataclasses
import os
import re
import struct
from pathlib import Path

import pytest

from rtmux import config, paths
from rtmux.board import MIB, Region
from rtmux.config import model
from rtmux.image import blob

CONFIGS = Path(__file__).parent / "configs"
BAD_CONFIGS = sorted(CONFIGS.glob("bad-*.toml"))


def fake_image(path: Path, text_offset: int = 0x80000, image_size: int = 0x20000, size: int = 4096) -> Path:
    """A file with an arm64 Image header (what `make rtos` and Debian's vmlinuz carry)."""
    header = struct.pack("<IIQQQQQQ4sI", 0, 0, text_offset, image_size, 2, 0, 0, 0, b"ARM\x64", 0)
    path.write_bytes(header + bytes(size - len(header)))
    return path


@pytest.fixture
def images(tmp_path: Path) -> dict[str, Path]:
    return {
        "rtos": fake_image(tmp_path / "rtos.img"),
        "kernel": fake_image(tmp_path / "Image", text_offset=0, image_size=40 * MIB),
        "initramfs": _write(tmp_path / "initramfs.cpio.gz", 3 * MIB),
    }


def _write(path: Path, size: int) -> Path:
    path.write_bytes(bytes(size))
    return path


def system(images: dict[str, Path], rtos_extra: str = "", linux_extra: str = "", top: str = "") -> str:
    """A valid two-partition configuration with the fake images, plus extra lines."""
    return f"""{top}
[[partition]]
name = "rtos"
kind = "rtos"
cpus = [0]
memory = "16M"
image = "{images["rtos"]}"
{rtos_extra}

[[partition]]
name = "linux"
kind = "linux"
cpus = [1]
memory = "512M"
kernel = "{images["kernel"]}"
initramfs = "{images["initramfs"]}"
{linux_extra}
"""


# virtio-mmio transport 31 as a device of the Linux partition (it can master DMA and no IOMMU is in front
# of it: the configuration must accept that explicitly).
MMIO31 = '[[partition.device]]\nboard = "virtio-mmio.31"\ndma = "unrestricted"\n'


def errors_of(text: str) -> list[str]:
    with pytest.raises(config.ConfigError) as info:
        config.loads(text, "x.toml")
    return info.value.errors


# ---------------------------------------------------------------------------------------- valid files
def test_default_config_places_everything() -> None:
    cfg = config.load(config.DEFAULT_CONFIG)
    rtos, linux = cfg.partition("rtos"), cfg.partition("linux")
    assert cfg.hypervisor.base == 0x4000_0000 and cfg.hypervisor.end == 0x4800_0000
    assert (rtos.kind, rtos.cpus, rtos.tag) == ("rtos", (0,), "rtos")
    assert (rtos.ram.ipa, rtos.ram.pa, rtos.ram.size) == (0x4000_0000, 0x4800_0000, 16 * MIB)
    assert (linux.kind, linux.cpus, linux.tag) == ("linux", (1,), "linux")
    assert (linux.ram.ipa, linux.ram.pa, linux.ram.size) == (0x4900_0000, 0x4900_0000, 512 * MIB)
    assert linux.interrupts == (35, 36, 37, 38)  # the PCIe host's INTx: SPIs 3..6
    net = next(d for d in linux.devices if d.name == "net")
    assert net.board_device == "pcie" and net.mmio[0].base == 0x1000_0000
    assert (net.dma, net.streams) == ("iommu", Region(0, 0x1_0000))  # every PCI requester ID
    assert linux.streams == (Region(0, 0x1_0000),) and cfg.partition("rtos").streams == ()
    qemu_line = " ".join(cfg.qemu_args())
    assert "-M virt,virtualization=on,gic-version=3,iommu=smmuv3 " in qemu_line
    assert "iommu_platform=on" in qemu_line and "disable-legacy=on" in qemu_line
    assert cfg.console.tags and cfg.console.focus == "linux" and cfg.console.escape_byte == 0x14
    assert "console=ttyAMA0" in linux.bootargs and rtos.bootargs == "latmon=1 period_us=1000"


def test_rtos_gets_its_redistributor_frames(images: dict[str, Path]) -> None:
    cfg = config.loads(system(images))
    gicr = [d for d in cfg.partition("rtos").devices if d.implicit]
    assert [(d.name, d.mmio[0].base, d.mmio[0].size) for d in gicr] == [("gicr.cpu0", 0x080A_0000, 0x2_0000)]
    assert not any(d.implicit for d in cfg.partition("linux").devices)


def test_placement_fills_around_a_fixed_partition(images: dict[str, Path]) -> None:
    text = system(images).replace('memory = "16M"', 'memory = { size = "16M", base = "0x7000_0000" }')
    cfg = config.loads(text)
    assert cfg.partition("rtos").ram.pa == 0x7000_0000
    assert cfg.partition("linux").ram.pa == 0x4800_0000  # first free 2 MiB-aligned address


def test_partition_that_does_not_fit_is_refused(images: dict[str, Path]) -> None:
    text = system(images).replace('memory = "512M"', 'memory = "1000M"')
    assert errors_of(text) == [
        "x.toml: partition 'linux': memory 1000 MiB is more than the board's RAM above the hypervisor "
        "(896 MiB)"
    ]


def test_partition_that_fits_in_no_free_range_is_refused(images: dict[str, Path]) -> None:
    text = system(images).replace('memory = "16M"', 'memory = { size = "16M", base = "0x6000_0000" }')
    assert errors_of(text) == [
        "x.toml: partition 'linux': memory 512 MiB does not fit in the free RAM (largest free range: 496 MiB)"
    ]


def test_payload_layout(images: dict[str, Path]) -> None:
    cfg = config.loads(system(images))
    linux = cfg.partition("linux")
    layout = config.layout_for(linux)
    assert layout is not None
    top = linux.ram.pa + linux.ram.size
    assert layout.entry_ipa == linux.ram.ipa  # text_offset 0
    assert layout.kernel_end == linux.ram.ipa + 40 * MIB
    assert layout.dtb_ipa == top - 2 * MIB
    assert layout.initrd_ipa == top - 2 * MIB - 3 * MIB and layout.initrd_size == 3 * MIB
    rtos = config.layout_for(cfg.partition("rtos"))
    assert rtos is not None and rtos.entry_ipa == 0x4008_0000 and rtos.dtb_ipa == 0x40E0_0000


def test_payload_too_big_for_memory(images: dict[str, Path]) -> None:
    text = system(images).replace('memory = "512M"', 'memory = "44M"')
    assert errors_of(text) == [
        "x.toml: partition 'linux': memory.size 44 MiB is too small for the linux image of 40 MiB + "
        "initramfs of 3 MiB + 2 MiB DTB slot (needs at least 46 MiB)"
    ]


def test_payload_too_big_adds_up_in_one_unit(tmp_path: Path, images: dict[str, Path]) -> None:
    """Sizes that are not whole MiB are all given in KiB (a started KiB counted), so that they add up:
    not `32832 KiB + initramfs of 2851636 bytes`."""
    images = dict(images, initramfs=_write(tmp_path / "odd.cpio.gz", 2_851_636))
    text = system(images).replace('memory = "512M"', 'memory = "44M"')
    assert errors_of(text) == [
        "x.toml: partition 'linux': memory.size 44 MiB is too small for the linux image of 40960 KiB + "
        "initramfs of 2785 KiB + 2048 KiB DTB slot (needs at least 46 MiB)"
    ]


def test_missing_build_product_is_only_a_note(images: dict[str, Path]) -> None:
    text = system(images).replace(str(images["rtos"]), "build/rtos/demo.img")
    demo = paths.REPO_ROOT / "build/rtos/demo.img"
    cfg = config.loads(text)
    image = cfg.partition("rtos").image("image")
    assert image is not None and image.build == "make rtos"
    if not demo.exists():
        assert any("`make rtos` builds it" in n for n in cfg.notes)


@pytest.mark.parametrize(
    ("key", "value", "hint"),
    [
        (
            "kernel",
            "build/linux/Image-missing",
            "write debian:std or debian:rt for Debian's kernel, fetched by `./rtmux linux fetch`, or the "
            "path of an arm64 Image",
        ),
        (
            "initramfs",
            "out/x.cpio.gz",
            "`./rtmux linux initramfs --kernel rt` builds build/linux/initramfs-rt.cpio.gz; "
            "`./rtmux linux initramfs --kernel std` builds build/linux/initramfs-std.cpio.gz",
        ),
    ],
)
def test_missing_file_hints_at_its_own_kind_only(
    images: dict[str, Path], key: str, value: str, hint: str
) -> None:
    """A missing kernel names what a kernel can be, not the initramfs's build steps (those were listed
    for any missing file of build/linux/); a missing initramfs elsewhere names the initramfs's."""
    text = system(images).replace(str(images[key]), value)
    assert errors_of(text) == [
        f"x.toml: partition 'linux': {key} '{value}' does not exist and no build step produces it ({hint})"
    ]


@pytest.mark.parametrize(
    ("text", "size"),
    [("16M", 16 * MIB), ("512K", 512 * 1024), ("1G", 1 << 30), ("2 MiB", 2 * MIB), ("0x100_0000", 16 * MIB)],
)
def test_parse_size(text: str, size: int) -> None:
    assert config.parse_size(text) == size


@pytest.mark.parametrize("text", ["16X", "", "-1M", "M", "1.5G"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        config.parse_size(text)


def test_parse_address() -> None:
    assert config.parse_address("0x4800_0000") == 0x4800_0000
    assert config.parse_address(0x4800_0000) == 0x4800_0000
    with pytest.raises(ValueError):
        config.parse_address("0xZZ")
    with pytest.raises(TypeError):
        config.parse_address(True)


# ------------------------------------------------------------------------------- errors, one class each
@pytest.mark.parametrize("path", BAD_CONFIGS, ids=lambda p: p.stem)
def test_bad_config_files(path: Path) -> None:
    """Each tests/unit/python/configs/bad-*.toml lists, in `# expect:` lines, exactly the errors it gives."""
    expected = [
        line.split("# expect: ", 1)[1] for line in path.read_text().splitlines() if "# expect: " in line
    ]
    assert expected, f"{path.name} has no '# expect:' line"
    with pytest.raises(config.ConfigError) as info:
        config.load(path)
    where = paths.display(path)
    assert info.value.errors == [f"{where}: {e}" for e in expected]


def test_unknown_keys_everywhere(images: dict[str, Path]) -> None:
    text = system(
        images,
        rtos_extra='memory_size = "1M"',
        linux_extra='[[partition.device]]\nboard = "virtio-mmio.31"\ndma = "unrestricted"\ninterupts = [79]',
        top='[console]\nescpe = "ctrl-t"\n[bord]\ncpus = 2',
    )
    assert errors_of(text) == [
        "x.toml: unknown key 'bord' (did you mean 'board'?)",
        "x.toml: partition 'rtos': unknown key 'memory_size' (did you mean 'memory'?)",
        "x.toml: partition 'linux': device 'virtio-mmio.31': unknown key 'interupts' "
        "(did you mean 'interrupts'?)",
        "x.toml: [console]: unknown key 'escpe' (did you mean 'escape'?)",
    ]


def test_key_of_the_other_kind(images: dict[str, Path]) -> None:
    assert errors_of(system(images, rtos_extra='kernel = "x"')) == [
        "x.toml: partition 'rtos': key 'kernel' does not apply to kind 'rtos' (it boots from: image)"
    ]


def test_wrong_types(images: dict[str, Path]) -> None:
    text = system(images).replace('memory = "16M"', "memory = true").replace("cpus = [1]", "cpus = [1.0]")
    assert errors_of(text) == [
        "x.toml: partition 'rtos': memory must be a size (a string such as \"16M\", or an integer), not true "
        "(boolean)",
        "x.toml: partition 'linux': cpus must be an integer or an array of integers, not [...] (array)",
    ]


def test_all_errors_are_reported_at_once(images: dict[str, Path]) -> None:
    text = system(images, top="[board]\ncpus = 1").replace('memory = "16M"', 'memory = "3M"')
    errors = errors_of(text)
    assert errors == [
        "x.toml: partition 'rtos': memory '3M' (3 MiB) is not a non-zero multiple of 2 MiB",
        "x.toml: partition 'linux': cpus: CPU 1 is beyond the board (qemu-virt has only CPU 0)",
    ]


def test_memory_base_alignment(images: dict[str, Path]) -> None:
    text = system(images).replace('memory = "16M"', 'memory = { size = "16M", base = "0x4810_0000" }')
    assert errors_of(text) == ["x.toml: partition 'rtos': memory.base 0x4810_0000 is not 2 MiB aligned"]


def test_interrupt_that_is_not_an_spi(images: dict[str, Path]) -> None:
    text = system(images, linux_extra=MMIO31 + "interrupts = [27, 79]")
    assert errors_of(text) == [
        "x.toml: partition 'linux': device 'virtio-mmio.31': interrupts: INTID 27 (PPI 11) is not an SPI of "
        "qemu-virt: only INTIDs 32..287 can be assigned (SGIs and PPIs belong to each CPU)"
    ]


def test_interrupt_of_a_device_not_assigned(images: dict[str, Path]) -> None:
    text = system(images, linux_extra=MMIO31 + "interrupts = [48]")
    assert errors_of(text) == [
        "x.toml: partition 'linux': device 'virtio-mmio.31': interrupts: INTID 48 (SPI 16) belongs to "
        "virtio-mmio.0, which this device does not cover"
    ]


def test_mmio_of_a_hidden_device(images: dict[str, Path]) -> None:
    text = system(
        images, linux_extra='[[partition.device]]\nname = "x"\nmmio = { base = 0x9020000, size = 0x18 }'
    )
    assert errors_of(text) == [
        "x.toml: partition 'linux': device 'x': mmio 0x0902_0000..0x0902_0018 is fw-cfg, which cannot be "
        "assigned: it is QEMU's firmware interface (DMA to any physical address)"
    ]


def test_unknown_board_device(images: dict[str, Path]) -> None:
    text = system(images, linux_extra='[[partition.device]]\nboard = "virtio-mmio.32"')
    assert errors_of(text) == [
        "x.toml: partition 'linux': device 'virtio-mmio.32': board 'virtio-mmio.32' is not a device of "
        "qemu-virt (it has transports virtio-mmio.0..virtio-mmio.31)"
    ]


def test_qemu_device_must_be_pinned_to_its_transport(images: dict[str, Path]) -> None:
    dev = MMIO31 + 'qemu = "-netdev user,id=n -device virtio-net-device,netdev=n"'
    assert errors_of(system(images, linux_extra=dev)) == [
        "x.toml: partition 'linux': device 'virtio-mmio.31': qemu: -device virtio-net-device needs "
        "bus=virtio-mmio-bus.31; without it QEMU puts the device on the highest free transport, "
        "whichever that is"
    ]


@pytest.mark.parametrize(
    ("escape", "message"),
    [
        ("ctrl-a", "escape 'ctrl-a' cannot be used: QEMU -nographic uses Ctrl-A as its own escape"),
        ("alt-x", "escape 'alt-x' is not a control key (write it as ctrl-t or ^T)"),
    ],
)
def test_console_escape(images: dict[str, Path], escape: str, message: str) -> None:
    assert errors_of(system(images, top=f'[console]\nescape = "{escape}"')) == [
        f"x.toml: [console]: {message}"
    ]


def test_console_escape_caret_form(images: dict[str, Path]) -> None:
    cfg = config.loads(system(images, top='[console]\nescape = "^B"\ntags = false\nfocus = "rtos"'))
    assert (cfg.console.escape, cfg.console.escape_byte, cfg.console.tags, cfg.console.focus) == (
        "ctrl-b",
        2,
        False,
        "rtos",
    )


def test_missing_required_fields() -> None:
    assert errors_of('[[partition]]\nkind = "linux"') == [
        "x.toml: partition #1: name is missing",
        "x.toml: partition #1: cpus is missing (e.g. cpus = [1])",
        'x.toml: partition #1: memory is missing (e.g. memory = "16M" or memory = { size = "16M" })',
        "x.toml: partition #1: kernel is missing (the file to boot, e.g. debian:std)",
    ]


def test_toml_syntax_error() -> None:
    with pytest.raises(config.ConfigError) as info:
        config.loads("[board\n", "x.toml")
    assert info.value.errors[0].startswith("x.toml: TOML syntax error: ")


def test_not_an_arm64_image(tmp_path: Path, images: dict[str, Path]) -> None:
    images["rtos"] = _write(tmp_path / "junk.img", 4096)
    assert errors_of(system(images)) == [
        f"x.toml: partition 'rtos': image '{images['rtos']}' is not an arm64 Image (no 'ARM\\x64' magic at "
        "offset 0x38)"
    ]


def test_describe_lists_the_placement() -> None:
    text = config.describe(config.load(config.DEFAULT_CONFIG))
    assert "partition 'rtos': kind rtos, CPU 0, tag 'rtos'" in text
    assert "RAM       0x4800_0000..0x4900_0000 (16 MiB), seen at IPA 0x4000_0000..0x4100_0000" in text
    assert (
        "device    net (board pcie): 0x1000_0000..0x3eff_0000, 0x3eff_0000..0x3f00_0000, "
        "0x40_1000_0000..0x40_2000_0000, INTID 35 (SPI 3), INTID 36 (SPI 4), INTID 37 (SPI 5), "
        "INTID 38 (SPI 6); DMA through the IOMMU, streams 0x0000..0xffff: this partition's RAM only"
    ) in text
    assert "QEMU -M virt,virtualization=on,gic-version=3,iommu=smmuv3 -cpu" in text
    assert "free RAM: 0x6900_0000..0x8000_0000 (368 MiB)" in text


def test_describe_counts_cpus_in_the_singular_and_plural() -> None:
    one = config.describe(config.load(paths.REPO_ROOT / "configs" / "qemu-virt-1cpu.toml"))
    assert "board qemu-virt: 1 CPU, RAM 0x4000_0000..0x8000_0000 (1 GiB); " in one
    four = config.describe(config.load(paths.REPO_ROOT / "configs" / "qemu-virt-4cpu.toml"))
    assert "board qemu-virt: 4 CPUs, RAM " in four and "partition 'linux': kind linux, CPUs 1, 2, 3, " in four


# ------------------------------------------------------------------------------- DMA isolation
PCIE = '[[partition.device]]\nname = "net"\nboard = "pcie"\n'
NET_PCI = "-netdev user,id=n -device virtio-net-pci,netdev=n"


def test_dma_device_behind_the_iommu(images: dict[str, Path]) -> None:
    dev = PCIE + f'dma = "iommu"\nqemu = "{NET_PCI},disable-legacy=on,iommu_platform=on"'
    cfg = config.loads(system(images, linux_extra=dev))
    assert cfg.partition("linux").streams == (Region(0, 0x1_0000),)
    assert cfg.board.iommu_on and "iommu=smmuv3" in cfg.qemu_args()[1]
    assert not any("unrestricted" in n for n in cfg.notes)


def test_no_iommu_without_a_device_behind_it(images: dict[str, Path]) -> None:
    cfg = config.loads(system(images, linux_extra=MMIO31))
    assert not cfg.board.iommu_on and "iommu" not in cfg.qemu_args()[1]
    assert cfg.partition("linux").streams == ()
    assert any('dma = "unrestricted": the device can read and write all RAM' in n for n in cfg.notes)


@pytest.mark.parametrize(
    ("device", "message"),
    [
        (
            '[[partition.device]]\nname = "net"\nboard = "virtio-mmio.31"',
            "dma is missing: virtio-mmio.31 can master DMA and is not behind an IOMMU on qemu-virt "
            '(only pcie is); write dma = "unrestricted" to accept that it can read and write all RAM '
            "(the other partitions' and the hypervisor's included), or use a device behind the IOMMU with "
            'dma = "iommu"',
        ),
        (
            PCIE,
            'dma is missing: pcie can master DMA, which stage 2 does not confine; write dma = "iommu" to '
            'confine it to this partition\'s RAM through the IOMMU, or dma = "unrestricted" to accept that '
            "it can read and write all RAM",
        ),
        (
            '[[partition.device]]\nname = "net"\nboard = "virtio-mmio.31"\ndma = "iommu"',
            "dma 'iommu': virtio-mmio.31 is not behind an IOMMU on qemu-virt (only pcie is); write "
            'dma = "unrestricted" to accept that it can read and write all RAM, or use a device behind the '
            "IOMMU",
        ),
        (
            PCIE + 'dma = "none"',
            'dma \'none\': pcie can master DMA; write dma = "iommu" or "unrestricted" '
            "(docs/configuration.md)",
        ),
        (
            '[[partition.device]]\nname = "net"\nboard = "rtc"\ndma = "iommu"',
            "dma 'iommu': rtc cannot master DMA; leave dma out (or write \"none\")",
        ),
        (PCIE + 'dma = "iomu"', "dma 'iomu' is not a DMA isolation mode (did you mean 'iommu'?)"),
        (PCIE + "dma = true", "dma must be a string, not true (boolean)"),
        (
            PCIE + f'dma = "iommu"\nqemu = "{NET_PCI}"',
            "qemu: -device virtio-net-pci needs disable-legacy=on and iommu_platform=on with "
            'dma = "iommu": without iommu_platform QEMU\'s virtio devices write to physical addresses '
            "directly, past the IOMMU (and QEMU allows it only on a modern-only device)",
        ),
    ],
)
def test_dma_isolation_must_be_stated(images: dict[str, Path], device: str, message: str) -> None:
    assert errors_of(system(images, linux_extra=device)) == [
        f"x.toml: partition 'linux': device 'net': {message}"
    ]


def test_device_without_dma_needs_no_key(images: dict[str, Path]) -> None:
    cfg = config.loads(system(images, linux_extra='[[partition.device]]\nboard = "rtc"'))
    (rtc,) = cfg.partition("linux").devices
    assert (rtc.dma, rtc.streams) == ("none", None)


def test_smmu_cannot_be_assigned(images: dict[str, Path]) -> None:
    dev = '[[partition.device]]\nname = "x"\nmmio = { base = 0x9050000, size = 0x1000 }'
    assert errors_of(system(images, linux_extra=dev)) == [
        "x.toml: partition 'linux': device 'x': mmio 0x0905_0000..0x0905_1000 is smmu, which cannot be "
        "assigned: it is the IOMMU the hypervisor programs to confine DMA"
    ]


# ------------------------------------------------------------------------------- Debian kernels
def test_debian_kernel_through_the_lookup_load_is_given(images: dict[str, Path]) -> None:
    """config sits below rtmux.image.debian: the cache lookup comes in as `find_kernel`."""
    text = system(images).replace(f'kernel = "{images["kernel"]}"', 'kernel = "debian:rt"')
    asked: list[str] = []

    def find_kernel(flavour: str) -> Path | None:
        asked.append(flavour)
        return images["kernel"]

    kernel = config.loads(text, find_kernel=find_kernel).partition("linux").image("kernel")
    assert asked == ["rt"]
    assert kernel is not None and kernel.exists and kernel.path == images["kernel"]
    unfetched = config.loads(text, find_kernel=lambda flavour: None)
    missing = unfetched.partition("linux").image("kernel")
    assert missing is not None and not missing.exists and missing.build == "./rtmux linux fetch"
    assert any("debian:rt is not fetched yet" in note for note in unfetched.notes)


def test_debian_kernel_flavour_unknown(images: dict[str, Path]) -> None:
    text = system(images).replace(f'kernel = "{images["kernel"]}"', 'kernel = "debian:lts"')
    assert errors_of(text) == [
        "x.toml: partition 'linux': kernel 'debian:lts' is not a Debian kernel flavour "
        "(known: debian:std, debian:rt)"
    ]


# ------------------------------------------------------------------------------- fault policy
def test_fault_policy_defaults(images: dict[str, Path]) -> None:
    cfg = config.loads(system(images))
    assert cfg.partition("rtos").fault == config.FaultPolicy(config.FAULT_STOP)
    assert cfg.partition("linux").fault == config.FaultPolicy(config.FAULT_RESTART, 3, 60)


def test_fault_policy_given(images: dict[str, Path]) -> None:
    cfg = config.loads(
        system(
            images,
            rtos_extra='fault = { policy = "restart", max_restarts = 2, window_s = 600 }',
            linux_extra='fault = { policy = "stop" }',
        )
    )
    assert cfg.partition("rtos").fault == config.FaultPolicy(config.FAULT_RESTART, 2, 600)
    assert cfg.partition("linux").fault == config.FaultPolicy(config.FAULT_STOP)
    assert "  fault     restart, at most 2 in 600 s, then stop" in config.describe(cfg).splitlines()


def test_linux_command_line_carries_the_panic_arguments(images: dict[str, Path]) -> None:
    linux = config.loads(system(images)).partition("linux")
    assert config.linux_bootargs(linux.bootargs).split()[-2:] == ["panic=-1", "reboot=panic_warm"]


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ('{ policy = "reboot" }', "fault.policy 'reboot' is not a fault policy (one of stop, restart)"),
        ("{ max_restarts = 2 }", "fault.policy is missing (one of stop, restart)"),
        ('{ policy = "stop", window_s = 10 }', 'fault.window_s applies only to fault.policy = "restart"'),
        ('{ policy = "restart", max_restarts = 0 }', "fault.max_restarts 0 is outside 1..16"),
        ('{ policy = "restart", max_restarts = 17 }', "fault.max_restarts 17 is outside 1..16"),
        ('{ policy = "restart", window_s = "60s" }', "fault.window_s must be an integer, not '60s' (string)"),
        (
            '{ policy = "restart", windows = 60 }',
            "unknown key 'fault.windows' (did you mean 'fault.window_s'?)",
        ),
        ('"restart"', "fault must be a table, not 'restart' (string)"),
    ],
)
def test_fault_policy_errors(images: dict[str, Path], fault: str, message: str) -> None:
    assert errors_of(system(images, linux_extra=f"fault = {fault}")) == [
        f"x.toml: partition 'linux': {message}"
    ]


@pytest.mark.parametrize("arg", ["panic=10", "reboot=w", "panic=0"])
def test_linux_bootargs_may_not_change_the_panic_path(images: dict[str, Path], arg: str) -> None:
    assert errors_of(system(images, linux_extra=f'bootargs = "console=ttyAMA0 {arg}"')) == [
        f"x.toml: partition 'linux': bootargs: {arg!r} would change how a panic reaches the hypervisor "
        "(rtmux appends 'panic=-1 reboot=panic_warm'); choose what a panic does with fault.policy"
    ]


@pytest.mark.parametrize(
    "arg", ["irq_prio_timer=31", "irq_prio_vbus=256", "irq_prio_timer=high", "irq_prio_vbus="]
)
def test_rtos_interrupt_priorities_outside_the_range_are_refused(images: dict[str, Path], arg: str) -> None:
    assert errors_of(system(images, rtos_extra=f'bootargs = "latmon=1 {arg}"')) == [
        f"x.toml: partition 'rtos': bootargs: {arg!r} is not an interrupt priority of the rtos (32..255, "
        "higher is more urgent: rtos/irq.h)"
    ]


def test_rtos_interrupt_priorities_in_the_range_pass(images: dict[str, Path]) -> None:
    cfg = config.loads(system(images, rtos_extra='bootargs = "irq_prio_timer=200 irq_prio_vbus=255"'))
    assert "irq_prio_timer=200" in cfg.partitions[0].bootargs


# ------------------------------------------------------------------------------- console view
@pytest.mark.parametrize(
    ("view", "interactive", "shown"),
    [("auto", True, "focus"), ("auto", False, "all"), ("all", True, "all"), ("focus", False, "focus")],
)
def test_console_view(images: dict[str, Path], view: str, interactive: bool, shown: str) -> None:
    cfg = config.loads(system(images, top=f'[console]\nview = "{view}"'))
    assert cfg.console.view == view
    assert cfg.console.resolved(interactive).view == shown


def test_console_view_default_is_auto_and_reaches_the_blob(images: dict[str, Path]) -> None:
    cfg = config.loads(system(images))
    assert cfg.console.view == "auto"
    focus = dataclasses.replace(cfg, console=cfg.console.resolved(True))
    assert blob.unpack(blob.pack(blob.from_config(focus))).console_focus_view
    assert not blob.unpack(blob.pack(blob.from_config(cfg))).console_focus_view


def test_console_view_error(images: dict[str, Path]) -> None:
    assert errors_of(system(images, top='[console]\nview = "quiet"')) == [
        "x.toml: [console]: view 'quiet' is not a console view (one of auto, all, focus)"
    ]


# ------------------------------------------------------------------------------------- V-Bus channels
POW2 = "must be a power of two from 256 bytes to 1 MiB (data bytes per direction; lib/vbus.h)"


def channels(*entries: str) -> str:
    return "".join(f"\n[[channel]]\n{e}\n" for e in entries)


def test_channels_default_sizes_and_one_rtos_partition(images: dict[str, Path]) -> None:
    cfg = config.loads(
        system(images) + channels('name = "echo"', 'name = "t"\nto_linux = "4K"', 'name = "s"\nsize = 256')
    )
    assert [(c.name, c.rtos, c.index, c.to_linux, c.to_rtos) for c in cfg.channels] == [
        ("echo", "rtos", 0, 16 * 1024, 16 * 1024),
        ("t", "rtos", 1, 4096, 16 * 1024),
        ("s", "rtos", 2, 256, 256),
    ]
    assert cfg.vbus == config.VbusDevice("linux", Region(0x0A00_4000, 0x1000), 224)
    assert cfg.partition("linux").vbus is None


def test_vbus_region_layout_and_place(images: dict[str, Path]) -> None:
    """struct vbus_region, the channel blocks, then the rings: aligned, inside the region, disjoint; the
    region ends where the DTB slot starts, page aligned, clear of the image and the console ring."""
    cfg = config.loads(system(images) + channels('name = "a"', 'name = "b"\nto_rtos = "1M"', 'name = "c"'))
    rtos = cfg.partition("rtos")
    region = rtos.vbus
    assert region is not None
    assert region.end == rtos.ram.ipa + rtos.ram.size - 2 * MIB
    assert region.base % 4096 == 0 and region.size % 4096 == 0
    pieces = [(0, config.VBUS_REGION_HEADER)]
    for c in cfg.channels:
        pieces += [
            (c.chan_off, config.VBUS_CHAN_SIZE),
            (c.to_linux_off, config.VBUS_RING_HEADER + c.to_linux),
            (c.to_rtos_off, config.VBUS_RING_HEADER + c.to_rtos),
        ]
    pieces.sort()
    for (off, size), (next_off, _) in zip(pieces, pieces[1:], strict=False):
        assert off % config.VBUS_ALIGN == 0 and off + size <= next_off
    assert pieces[-1][0] + pieces[-1][1] <= region.size
    assert [c.chan_off for c in cfg.channels] == [64, 192, 320]  # the control blocks together, first
    ring = cfg.console_ring(rtos)
    assert ring is not None and not region.overlaps(Region(ring.base, ring.size + 64))
    layout = config.layout_for(rtos)
    assert layout is not None and layout.kernel_end <= region.base


def test_two_rtos_partitions_each_get_a_region(images: dict[str, Path]) -> None:
    second = '[[partition]]\nname = "rtos2"\nkind = "rtos"\ncpus = [2]\nmemory = "16M"\n'
    second = f'\n{second}image = "{images["rtos"]}"\n'
    text = "[board]\ncpus = 3\n" + system(images) + second
    assert errors_of(text + channels('name = "a"')) == [
        "x.toml: channel 'a': rtos is missing: the system has 2 rtos partitions (rtos, rtos2); name the one "
        "that serves the channel"
    ]
    cfg = config.loads(
        text
        + channels('name = "a"\nrtos = "rtos2"', 'name = "b"\nrtos = "rtos"', 'name = "c"\nrtos = "rtos2"')
    )
    assert [(c.name, c.rtos, c.index) for c in cfg.channels] == [
        ("a", "rtos2", 0),
        ("b", "rtos", 0),
        ("c", "rtos2", 1),
    ]
    assert cfg.partition("rtos").vbus is not None and cfg.partition("rtos2").vbus is not None
    assert [c.name for c in cfg.channels_of(cfg.partition("rtos2"))] == ["a", "c"]


def test_no_channels_no_vbus(images: dict[str, Path]) -> None:
    cfg = config.loads(system(images))
    assert cfg.channels == () and cfg.vbus is None
    assert all(p.vbus is None for p in cfg.partitions)


def test_too_many_channels(images: dict[str, Path]) -> None:
    text = system(images) + channels(*(f'name = "c{i}"\nsize = 256' for i in range(33)))
    assert errors_of(text) == [
        "x.toml: [[channel]]: 33 channels; at most 32 (VBUS_MAX_CHANNELS in lib/vbus.h: a region's pending "
        "masks are 32-bit)"
    ]
    assert (
        len(
            config.loads(
                system(images) + channels(*(f'name = "c{i}"\nsize = 256' for i in range(32)))
            ).channels
        )
        == 32
    )


def test_several_linux_partitions(images: dict[str, Path]) -> None:
    second = '\n[[partition]]\nname = "linux2"\nkind = "linux"\ncpus = [2]\nmemory = "256M"\n'
    second += f'kernel = "{images["kernel"]}"\n'
    assert errors_of("[board]\ncpus = 3\n" + system(images) + second + channels('name = "echo"')) == [
        "x.toml: [[channel]]: the V-Bus device goes into one Linux partition, but the system has 2 (linux, "
        "linux2); channels need exactly one"
    ]


def test_no_rtos_partition_to_serve(images: dict[str, Path]) -> None:
    text = '[[partition]]\nname = "linux"\nkind = "linux"\ncpus = [1]\nmemory = "512M"\n'
    text += f'kernel = "{images["kernel"]}"\n'
    assert errors_of(text + channels('name = "echo"')) == [
        "x.toml: channel 'echo': no partition of kind 'rtos' serves it (the system has none)"
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            'name = "e"\nsize = "16K"\nto_linux = "4K"\nto_rtos = "4K"',
            "size has no effect when both to_linux and to_rtos are given; remove it",
        ),
        (
            'name = "e"\nsize = 128',
            f"size 128 {POW2}",
        ),
        (
            'name = "e"\nto_linux = "0x300"',
            f"to_linux '0x300' {POW2}",
        ),
        (
            'name = "e"\nsize = true',
            'size must be a size (a string such as "16M", or an integer), not true (boolean)',
        ),
        ('name = "e"\nrtos = 1', "rtos must be a string, not 1 (integer)"),
        ('name = "e"\nsizes = 256', "unknown key 'sizes' (did you mean 'size'?)"),
    ],
)
def test_channel_field_errors(images: dict[str, Path], entry: str, message: str) -> None:
    assert errors_of(system(images) + channels(entry)) == [f"x.toml: channel 'e': {message}"]


def test_channel_name_rules(images: dict[str, Path]) -> None:
    good = ["echo", "a", "Telemetry_2", "x.y-z", "-", "A" * 31]
    cfg = config.loads(system(images) + channels(*(f'name = "{n}"\nsize = 256' for n in good)))
    assert [c.name for c in cfg.channels] == good
    for bad in ["", ".hidden", "a b", "ä", "a" * 32, "a:b", "a\\\\b"]:
        errors = errors_of(system(images) + channels(f'name = "{bad}"'))
        assert len(errors) == 1 and "must be 1..31 characters" in errors[0], bad
    assert errors_of(system(images) + channels("size = 256")) == [
        'x.toml: channel #1: name is missing (the port name Linux shows, e.g. name = "echo")'
    ]
    assert errors_of(system(images) + 'channel = "echo"\n') != []
    assert errors_of(system(images) + channels('name = "rtmux-stats"')) == [
        "x.toml: channel #1: name 'rtmux-stats' is the hypervisor's own port (the V-Bus counters, "
        "/dev/virtio-ports/rtmux-stats); choose another"
    ]


def test_region_must_fit_the_rtos_ram(images: dict[str, Path]) -> None:
    big = [f'name = "c{i}"\nsize = "1M"' for i in range(8)]  # 16 MiB of rings
    assert errors_of(system(images) + channels(*big)) == [
        "x.toml: partition 'rtos': memory 16 MiB cannot hold its V-Bus region of 16388 KiB (channels c0, c1, "
        "c2, c3, c4, c5, c6, c7) and the 2 MiB DTB slot"
    ]


def test_image_may_not_reach_into_the_region(tmp_path: Path, images: dict[str, Path]) -> None:
    """An rtos image whose BSS would cover the region is refused once it is built (payload_layout)."""
    images = dict(images, rtos=fake_image(tmp_path / "big.img", image_size=13 * MIB))
    assert config.loads(system(images))  # without channels it fits below the DTB slot
    errors = errors_of(system(images) + channels('name = "a"\nsize = "1M"'))
    assert errors == [
        "x.toml: partition 'rtos': memory.size 16 MiB is too small for the rtos image of 13312 KiB + V-Bus "
        "region of 2052 KiB + 2048 KiB DTB slot (needs at least 18 MiB)"
    ]


def test_vbus_page_and_interrupt_cannot_be_assigned(images: dict[str, Path]) -> None:
    mmio = '[[partition.device]]\nname = "x"\nmmio = { base = "0x0a00_4000", size = "0x200" }\n'
    assert errors_of(system(images, linux_extra=mmio)) == [
        "x.toml: partition 'linux': device 'x': mmio 0x0a00_4000..0x0a00_4200 is vbus, which cannot be "
        "assigned: it is the V-Bus device the hypervisor emulates in the Linux partition ([[channel]])"
    ]
    irq = '[[partition.device]]\nname = "rtc"\nboard = "rtc"\ninterrupts = [34, 224]\n'
    assert errors_of(system(images, rtos_extra=irq)) == [
        "x.toml: partition 'rtos': device 'rtc': interrupts: INTID 224 (SPI 192) belongs to vbus, which "
        "cannot be assigned: it is the V-Bus device the hypervisor emulates in the Linux partition "
        "([[channel]])"
    ]


def test_describe_shows_region_device_and_channels(images: dict[str, Path]) -> None:
    cfg = config.loads(system(images) + channels('name = "echo"', 'name = "log"\nto_rtos = 256'))
    text = config.describe(cfg)
    assert (
        "  vbus      region at IPA 0x40df_3000..0x40e0_0000 (52 KiB, PA 0x48df_3000): channels echo, log"
        in text
    )
    assert (
        "  vbus      virtio-mmio console at IPA 0x0a00_4000 (0x200 bytes of a 4 KiB page, emulated), "
        "INTID 224 (SPI 192): ports echo, log, and rtmux-stats (the counters)" in text
    )
    assert (
        "channel 'echo': /dev/virtio-ports/echo in 'linux', served by 'rtos' (channel 0): to_linux 16 KiB "
        "(ring at IPA 0x40df_3140), to_rtos 16 KiB (ring at IPA 0x40df_71c0)" in text
    )


# ------------------------------------------------------------------------------- shared-core mode
SHARED_CONFIG = Path(__file__).parents[3] / "configs" / "qemu-virt-1cpu.toml"


def test_shipped_single_cpu_config_shares_cpu_0() -> None:
    cfg = config.load(SHARED_CONFIG)
    rtos, linux = cfg.partitions
    assert (rtos.cpus, linux.cpus, rtos.shared, linux.shared) == ((0,), (0,), True, False)
    assert rtos.starved_ms == 1000
    assert rtos.bootargs.split()[-1] == "timer=phys"  # Linux keeps the EL1 virtual timer
    text = config.describe(cfg)
    assert (
        "CPU 0: shared by 'rtos' (first: runs whenever it has work) and 'linux' (only while 'rtos' is idle; "
        "its interrupts wait meanwhile; reported after 1000 ms without running)"
    ) in text.splitlines()


@pytest.mark.parametrize(("report", "ms"), [('"250ms"', 250), ('"2s"', 2000), ('"60s"', 60_000)])
def test_shared_rtos_beside_a_multi_cpu_linux(images: dict[str, Path], report: str, ms: int) -> None:
    text = system(images, rtos_extra=f"shared = true\nstarved_report = {report}", top="[board]\ncpus = 2")
    text = text.replace("cpus = [1]", "cpus = [0, 1]")
    path = images["rtos"].parent / "x.toml"
    path.write_text(text)
    cfg = config.load(path)
    assert cfg.partitions[0].starved_ms == ms and cfg.partitions[1].cpus == (0, 1)
    part = blob.from_config(cfg, {}).partitions[0]
    assert (part.flags, part.starved_ms) == (blob.PART_FLAG_SHARED, ms)


def test_unshared_partitions_carry_no_sharing(images: dict[str, Path]) -> None:
    path = images["rtos"].parent / "x.toml"
    path.write_text(system(images))
    cfg = config.load(path)
    assert "timer=" not in cfg.partitions[0].bootargs
    assert [(p.flags, p.starved_ms) for p in blob.from_config(cfg, {}).partitions] == [(0, 0), (0, 0)]
    assert "shared by" not in config.describe(cfg)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"1h"', 'starved_report must be a duration such as "500ms" or "2s", not \'1h\' (string)'),
        ("5", 'starved_report must be a duration such as "500ms" or "2s", not 5 (integer)'),
        ('"61s"', "starved_report '61s' is outside 1 ms..60 s"),
    ],
)
def test_starved_report_values(images: dict[str, Path], value: str, message: str) -> None:
    text = system(images, rtos_extra=f"shared = true\nstarved_report = {value}", top="[board]\ncpus = 2")
    errors = errors_of(text.replace("cpus = [1]", "cpus = [0, 1]"))
    assert len(errors) == 1 and message in errors[0], errors


def test_console_view_constants_are_the_hypervisors() -> None:
    """What `check` says the focus view keeps is what hyp/core/conmux.c keeps."""
    source = (paths.REPO_ROOT / "hyp" / "core" / "conmux.c").read_text()
    hold = re.search(r"#define HOLD_SIZE\s+\((\d+)u \* (\d+)u\)", source)
    status = re.search(r"#define HOLD_STATUS_S\s+(\d+)u", source)
    assert hold is not None and status is not None
    assert int(hold[1]) * int(hold[2]) == model.CONSOLE_HOLD_SIZE
    assert int(status[1]) == model.CONSOLE_STATUS_S
    text = config.describe(config.load(config.DEFAULT_CONFIG))
    assert "the newest 32 KiB of each, replayed when it gets the focus, saying how many older lines" in text


def test_paths_under_a_symlink_show_relative(tmp_path: Path) -> None:
    """A cache/ that is a symbolic link (shared between clones) still shows as cache/... in `check`."""
    paths.BUILD_DIR.mkdir(exist_ok=True)
    link = paths.BUILD_DIR / f"test-link-{os.getpid()}"
    link.symlink_to(tmp_path)
    try:
        assert paths.display(link / "vmlinuz") == f"build/{link.name}/vmlinuz"
        assert paths.display(tmp_path / "x") == str(tmp_path / "x")  # outside: as given
    finally:
        link.unlink()


# ------------------------------------------------------------------------------- [services]
def services(body: str = "") -> str:
    return f"\n[services]\n{body}\n"


def service_dirs(*entries: str) -> str:
    return "".join(f"\n[[services.dir]]\n{e}\n" for e in entries)


def test_services_add_their_channels_after_the_users(images: dict[str, Path]) -> None:
    text = system(images) + channels('name = "echo"') + services('log = "file:/var/log/rtos.log"')
    text += service_dirs('path = "/srv/rtos"', 'path = "/etc/rtos"\nread_only = true')
    cfg = config.loads(text)
    assert cfg.services == config.Services(
        (config.ServiceDir("/srv/rtos"), config.ServiceDir("/etc/rtos", True)), "file:/var/log/rtos.log"
    )
    assert [(c.name, c.rtos, c.index, c.to_linux, c.to_rtos) for c in cfg.channels] == [
        ("echo", "rtos", 0, 16 * 1024, 16 * 1024),
        ("rtmux-files", "rtos", 1, 16 * 1024, 16 * 1024),
        ("rtmux-log", "rtos", 2, 4096, 256),
    ]
    assert cfg.vbus is not None and cfg.vbus.partition == "linux"
    assert cfg.services is not None and cfg.services.log_file == "/var/log/rtos.log"


def test_services_alone_bring_the_vbus(images: dict[str, Path]) -> None:
    """Without any [[channel]], the services' channels make the V-Bus device and region."""
    cfg = config.loads(system(images) + services('log = "syslog"'))
    assert [c.name for c in cfg.channels] == ["rtmux-log"] and cfg.vbus is not None
    assert cfg.partition("rtos").vbus is not None
    cfg = config.loads(system(images) + services() + service_dirs('path = "/srv/rtos"'))
    assert [c.name for c in cfg.channels] == ["rtmux-files"]


def test_services_threads_add_their_channel(images: dict[str, Path]) -> None:
    """threads = true adds rtmux-threads (16 KiB to Linux, 256 bytes to the rtos) after the other services'
    channels, puts nothing on Linux's command line (rtmux-top opens the port when it runs) and is said by
    check; a value that is not a boolean is refused with the key named."""
    text = system(images) + channels('name = "echo"') + services('log = "syslog"\nthreads = true')
    cfg = config.loads(text)
    assert cfg.services is not None and cfg.services.threads
    assert [(c.name, c.index, c.to_linux, c.to_rtos) for c in cfg.channels] == [
        ("echo", 0, 16 * 1024, 16 * 1024),
        ("rtmux-log", 1, 4096, 256),
        ("rtmux-threads", 2, 16 * 1024, 256),
    ]
    assert cfg.services.linux_bootargs() == "rtmux.log=syslog"
    alone = config.loads(system(images) + services("threads = true"))
    assert [c.name for c in alone.channels] == ["rtmux-threads"] and alone.vbus is not None
    assert (
        "services for 'rtos': the rtos's threads seen from Linux (rtmux-top), on channel rtmux-threads"
        in config.describe(alone).splitlines()
    )
    assert alone.services is not None and alone.services.linux_bootargs() == ""
    off = config.loads(system(images) + services('log = "syslog"\nthreads = false'))
    assert off.services is not None and not off.services.threads
    assert [c.name for c in off.channels] == ["rtmux-log"]
    assert errors_of(system(images) + services('threads = "yes"')) == [
        "x.toml: [services]: threads must be true or false, not 'yes' (string)"
    ]


def test_default_system_serves_rtmux_top() -> None:
    """The default system answers rtmux-top out of the box: its rtos gets the channel."""
    cfg = config.load(config.DEFAULT_CONFIG)
    assert cfg.services is not None and cfg.services.threads
    assert [c.name for c in cfg.channels][-1] == "rtmux-threads"


def test_services_linux_command_line(images: dict[str, Path]) -> None:
    text = system(images) + services('log = "syslog"')
    text += service_dirs('path = "/srv/rtos"', 'path = "/etc/rtos"\nread_only = true', 'path = "/data"')
    cfg = config.loads(text)
    linux = cfg.partition("linux")
    assert config.linux_bootargs(linux.bootargs, cfg.services).split()[-4:] == [
        "panic=-1",
        "reboot=panic_warm",
        "rtmux.files=/srv/rtos,/etc/rtos:ro,/data",
        "rtmux.log=syslog",
    ]
    assert (
        "  bootargs  'console=ttyAMA0 earlycon=pl011,mmio32,0x9000000' + 'panic=-1 reboot=panic_warm' "
        "(a panic reaches the fault policy) + 'rtmux.files=/srv/rtos,/etc/rtos:ro,/data rtmux.log=syslog' "
        "([services])"
    ) in config.describe(cfg).splitlines()
    only_log = config.loads(system(images) + services('log = "file:/l.txt"'))
    assert only_log.services is not None and only_log.services.linux_bootargs() == "rtmux.log=file:/l.txt"
    only_files = config.loads(system(images) + services('log = "off"') + service_dirs('path = "/x"'))
    assert only_files.services is not None and only_files.services.linux_bootargs() == "rtmux.files=/x"
    # without [services], or with one that offers nothing, Linux's command line is as before
    for text in (system(images), system(images) + services()):
        cfg = config.loads(text)
        assert config.linux_bootargs("a=1", cfg.services) == "a=1 panic=-1 reboot=panic_warm"


def test_services_line_of_check(images: dict[str, Path]) -> None:
    lines = config.describe(config.loads(system(images))).splitlines()
    assert "services: none (no [services])" in lines
    lines = config.describe(config.loads(system(images) + services())).splitlines()
    assert 'services: none ([services] exports no directory, log is "off", no network, no threads)' in lines
    text = system(images) + services('log = "file:/var/log/rtos.log"')
    text += service_dirs('path = "/srv/rtos"', 'path = "/etc/rtos"\nread_only = true')
    lines = config.describe(config.loads(text)).splitlines()
    assert (
        "services for 'rtos': files /srv/rtos (read-write), /etc/rtos (read-only), served by diod (9P2000.L) "
        "on channel rtmux-files, seen by the rtos under /linux; log appended to /var/log/rtos.log by Linux, "
        "from channel rtmux-log"
    ) in lines
    lines = config.describe(config.loads(system(images) + services('log = "syslog"'))).splitlines()
    assert "services for 'rtos': log to Linux's syslog (tag rtos), from channel rtmux-log" in lines


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("srv/rtos", "path 'srv/rtos' is not absolute: write the whole Linux path, starting with '/'"),
        ("/", "path '/' is the whole file system: name a directory below it"),
        (
            "/srv/rtos/",
            "path '/srv/rtos/' is not normalised (no '.', '..', '//' or trailing '/'): write '/srv/rtos'",
        ),
        (
            "/srv//rtos",
            "path '/srv//rtos' is not normalised (no '.', '..', '//' or trailing '/'): write '/srv/rtos'",
        ),
        (
            "/srv/./rtos",
            "path '/srv/./rtos' is not normalised (no '.', '..', '//' or trailing '/'): write '/srv/rtos'",
        ),
        (
            "/srv/x/../rtos",
            "path '/srv/x/../rtos' is not normalised (no '.', '..', '//' or trailing '/'): write '/srv/rtos'",
        ),
        (
            "/srv/my files",
            "path '/srv/my files' may hold only letters, digits, '/' and . _ - + @ ~ (it goes on Linux's "
            "command line, where a space ends it, a comma separates directories and ':ro' marks a read-only "
            "one)",
        ),
        (
            "/srv/a,b",
            "path '/srv/a,b' may hold only letters, digits, '/' and . _ - + @ ~ (it goes on Linux's "
            "command line, where a space ends it, a comma separates directories and ':ro' marks a read-only "
            "one)",
        ),
        ("/srv/a:ro", "path '/srv/a:ro' may hold only letters, digits, '/' and . _ - + @ ~ (it goes on"),
        ("/srv/ä", "path '/srv/ä' may hold only letters, digits"),
        ("/" + "d" * 128, "path '/ddd"),
    ],
)
def test_services_dir_path_errors(images: dict[str, Path], path: str, message: str) -> None:
    errors = errors_of(system(images) + services() + service_dirs(f'path = "{path}"'))
    assert len(errors) == 1 and errors[0].startswith(f"x.toml: services dir #1: {message}"), errors
    if path.startswith("/ddd"):
        assert errors[0].endswith("is 129 characters long; at most 128")


def test_services_dirs_inside_each_other_and_too_many(images: dict[str, Path]) -> None:
    text = system(images) + services()
    text += service_dirs(
        'path = "/srv/rtos"', 'path = "/srv/rtos/data"', 'path = "/srv"', 'path = "/srv/rtos"'
    )
    assert errors_of(text) == [
        "x.toml: services dir #2: path '/srv/rtos/data' is inside services dir #1 ('/srv/rtos'), which "
        "exports it already: leave one of them out",
        "x.toml: services dir #3: path '/srv' holds services dir #1 ('/srv/rtos'), which it would export "
        "again: leave one of them out",
        "x.toml: services dir #4: path '/srv/rtos' is already services dir #1",
    ]
    # siblings and names that only share a prefix are separate directories
    ok = service_dirs('path = "/srv/rtos"', 'path = "/srv/rtos2"', 'path = "/srv/rto"')
    assert config.loads(system(images) + services() + ok).services is not None
    nine = service_dirs(*(f'path = "/d{i}"' for i in range(9)))
    assert errors_of(system(images) + services() + nine) == [
        "x.toml: [services]: 9 directories in [[services.dir]]; at most 8"
    ]
    eight = config.loads(system(images) + services() + service_dirs(*(f'path = "/d{i}"' for i in range(8))))
    assert eight.services is not None and len(eight.services.dirs) == 8


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            'log = "console"',
            'log \'console\' is not a log destination ("off", "syslog", or "file:/PATH": a file in Linux)',
        ),
        (
            'log = "file:var/log/rtos.log"',
            "log file path 'var/log/rtos.log' is not absolute: write the whole Linux path, starting with '/'",
        ),
        (
            'log = "file:/var/log/"',
            "log file path '/var/log/' is not normalised (no '.', '..', '//' or "
            "trailing '/'): write '/var/log'",
        ),
        ('log = "file:/var/my log"', "log file path '/var/my log' may hold only letters, digits"),
        ("log = true", 'log must be a string ("off", "syslog" or "file:/PATH"), not true (boolean)'),
        ('logs = "syslog"', "unknown key 'logs' (did you mean 'log'?)"),
        ('dir = "/srv/rtos"', "dir must be an array of tables ([[services.dir]]), not '/srv/rtos' (string)"),
    ],
)
def test_services_log_and_table_errors(images: dict[str, Path], body: str, message: str) -> None:
    errors = errors_of(system(images) + services(body))
    assert len(errors) == 1 and errors[0].startswith(f"x.toml: [services]: {message}"), errors


def test_services_log_file_and_the_dirs(images: dict[str, Path]) -> None:
    dirs = service_dirs('path = "/srv/rtos"', 'path = "/etc/rtos"\nread_only = true')
    assert errors_of(system(images) + services('log = "file:/etc/rtos/rtos.log"') + dirs) == [
        "x.toml: [services]: log file '/etc/rtos/rtos.log' is inside services dir #2 ('/etc/rtos'), which is "
        "read-only: choose a path outside it, or make the directory writable"
    ]
    assert errors_of(system(images) + services('log = "file:/srv/rtos"') + dirs) == [
        "x.toml: [services]: log file '/srv/rtos' is services dir #1, a directory"
    ]
    # inside a writable directory: the rtos may read its own log there
    cfg = config.loads(system(images) + services('log = "file:/srv/rtos/log/rtos.log"') + dirs)
    assert cfg.services is not None and cfg.services.log == "file:/srv/rtos/log/rtos.log"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("read_only = true", 'path is missing (the Linux directory to export, e.g. path = "/srv/rtos")'),
        ("path = 5", "path must be a string, not 5 (integer)"),
        ('path = "/srv/rtos"\nread_only = "yes"', "read_only must be true or false, not 'yes' (string)"),
        ('path = "/srv/rtos"\nreadonly = true', "unknown key 'readonly' (did you mean 'read_only'?)"),
    ],
)
def test_services_dir_field_errors(images: dict[str, Path], entry: str, message: str) -> None:
    assert errors_of(system(images) + services() + service_dirs(entry)) == [
        f"x.toml: services dir #1: {message}"
    ]


def test_services_need_one_rtos_and_one_linux_partition(images: dict[str, Path]) -> None:
    linux_only = '[[partition]]\nname = "linux"\nkind = "linux"\ncpus = [1]\nmemory = "512M"\n'
    linux_only += f'kernel = "{images["kernel"]}"\n'
    assert errors_of(linux_only + services('log = "syslog"')) == [
        "x.toml: [services]: no partition of kind 'rtos': the services are for an rtos partition's threads"
    ]
    rtos_only = '[[partition]]\nname = "rtos"\nkind = "rtos"\ncpus = [0]\nmemory = "16M"\n'
    rtos_only += f'image = "{images["rtos"]}"\n'
    assert errors_of(rtos_only + services()) == [
        "x.toml: [services]: no partition of kind 'linux': Linux offers the services, over the V-Bus device "
        "in its partition"
    ]
    second = '\n[[partition]]\nname = "rtos2"\nkind = "rtos"\ncpus = [2]\nmemory = "16M"\n'
    second += f'image = "{images["rtos"]}"\n'
    assert errors_of("[board]\ncpus = 3\n" + system(images) + second + services('log = "syslog"')) == [
        "x.toml: [services]: the system has 2 partitions of kind 'rtos' (rtos, rtos2); [services] needs "
        "exactly one (the services are for an rtos partition's threads)"
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "rtmux-files",
            "name 'rtmux-files' is a service's channel, which the tools add for [services] "
            "(docs/configuration.md); choose another",
        ),
        (
            "rtmux-log",
            "name 'rtmux-log' is a service's channel, which the tools add for [services] "
            "(docs/configuration.md); choose another",
        ),
        (
            "rtmux-net",
            "name 'rtmux-net' is a service's channel, which the tools add for [services] "
            "(docs/configuration.md); choose another",
        ),
        (
            "rtmux-threads",
            "name 'rtmux-threads' is a service's channel, which the tools add for [services] "
            "(docs/configuration.md); choose another",
        ),
        (
            "rtmux-mine",
            "name 'rtmux-mine' starts with 'rtmux-', which is kept for rtmux's own channels "
            "(rtmux-stats, rtmux-files, rtmux-log, rtmux-net, rtmux-threads, and those to come); "
            "choose another",
        ),
    ],
)
def test_reserved_channel_names(images: dict[str, Path], name: str, message: str) -> None:
    assert errors_of(system(images) + channels(f'name = "{name}"')) == [f"x.toml: channel #1: {message}"]


@pytest.mark.parametrize("arg", ["rtmux.files=/srv", "rtmux.log=syslog"])
def test_linux_bootargs_may_not_set_the_services(images: dict[str, Path], arg: str) -> None:
    key = arg.split("=")[0]
    assert errors_of(system(images, linux_extra=f'bootargs = "console=ttyAMA0 {arg}"')) == [
        f"x.toml: partition 'linux': bootargs: {arg!r} is rtmux's to write: it appends {key}= from "
        "[services] (docs/configuration.md); configure the services there"
    ]
