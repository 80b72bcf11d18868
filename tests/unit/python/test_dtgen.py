"""Partition device trees (rtmux.image.dtgen, rtmux.formats.fdt), checked by decompiling them with dtc.

The board DTB is QEMU virt's own (tests/unit/python/data/, compiled here with dtc; with the SMMUv3 that
the default configuration's isolated network brings, and without), so these tests need no QEMU;
tests/system/test_config.py checks the same against a fresh `dumpdtb`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rtmux import config
from rtmux.board import MIB
from rtmux.formats import fdt
from rtmux.image import dtgen

DATA = Path(__file__).parent / "data"
BOARD_DTS = DATA / "qemu-virt-smp2-1G-iommu.dts"  # -M virt,...,iommu=smmuv3: the default configuration
PLAIN_DTS = DATA / "qemu-virt-smp2-1G.dts"  # without the SMMU
# The default Linux partition's network on virtio-mmio transport 31, accepted without isolation.
MMIO_NET = (
    'board = "virtio-mmio.31"\ndma = "unrestricted"\n'
    'qemu = "-netdev user,id=net0 -device virtio-net-device,netdev=net0,bus=virtio-mmio-bus.31"\n'
)


def dtc(*args: str, data: bytes) -> bytes:
    if shutil.which("dtc") is None:
        pytest.fail("dtc not found: install device-tree-compiler (`make deps`)")
    proc = subprocess.run(["dtc", "-q", *args, "-"], input=data, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def decompile(dtb: bytes) -> str:
    return dtc("-I", "dtb", "-O", "dts", data=dtb).decode()


@pytest.fixture(scope="module")
def board_dtb() -> bytes:
    return dtc("-I", "dts", "-O", "dtb", data=BOARD_DTS.read_bytes())


@pytest.fixture(scope="module")
def plain_dtb() -> bytes:
    return dtc("-I", "dts", "-O", "dtb", data=PLAIN_DTS.read_bytes())


@pytest.fixture(scope="module")
def cfg() -> config.SystemConfig:
    return config.load(config.DEFAULT_CONFIG)


def node_block(dts: str, name: str) -> str:
    """The text of one top-level node `name { ... };` of a decompiled tree."""
    m = re.search(rf"^\t{re.escape(name)} {{\n(.*?)^\t}};", dts, re.MULTILINE | re.DOTALL)
    assert m, f"no node {name} in:\n{dts}"
    return m.group(1)


def top_level_nodes(dts: str) -> list[str]:
    return re.findall(r"^\t([^\t\s][^\s]*) \{$", dts, re.MULTILINE)


def test_fdt_round_trip(board_dtb: bytes) -> None:
    tree = fdt.parse(board_dtb)
    again = fdt.serialize(tree)
    assert fdt.parse(again) == tree
    assert decompile(again) == decompile(board_dtb)


def test_fdt_refuses_garbage() -> None:
    with pytest.raises(fdt.FdtError, match="bad magic"):
        fdt.parse(bytes(64))


def test_linux_dtb(board_dtb: bytes, cfg: config.SystemConfig) -> None:
    linux = cfg.partition("linux")
    dtb = dtgen.generate(board_dtb, cfg.board, linux, initrd=(0x68C0_0000, 0x68DF_F0F4))
    dts = decompile(dtb)
    assert top_level_nodes(dts) == [
        "memory@49000000",
        "psci",
        "pcie@10000000",
        "pl011@9000000",
        "pmu",
        "intc@8000000",
        "cpus",
        "timer",
        "apb-pclk",
        "chosen",
    ]
    # Linux's CPU's PMU is Linux's (the hypervisor does not trap it): its PPI 7 (INTID 23) as the board has it
    assert "interrupts = <0x01 0x07 0x04>;" in node_block(dts, "pmu")
    assert "reg = <0x00 0x49000000 0x00 0x20000000>;" in node_block(dts, "memory@49000000")
    assert 'method = "hvc";' in node_block(dts, "psci")
    # The PCIe host without MSIs (no ITS in a partition) and without the SMMU (the hypervisor's), with
    # its I/O and 32-bit memory windows but not the 64-bit one (beyond stage 2's 39-bit IPA space).
    pcie = node_block(dts, "pcie@10000000")
    assert "msi-map" not in pcie and "iommu-map" not in pcie and "smmu" not in dts
    assert "reg = <0x40 0x10000000 0x00 0x10000000>;" in pcie
    assert (
        "ranges = <0x1000000 0x00 0x00 0x00 0x3eff0000 0x00 0x10000 "
        "0x2000000 0x00 0x10000000 0x00 0x10000000 0x00 0x2eff0000>;"
    ) in pcie
    assert "interrupt-map = <0x00 0x00 0x00 0x01 0x8003 0x00 0x00 0x00 0x03 0x04 " in pcie  # INTx: SPIs 3..6
    assert "phandle = <0x8003>;" in node_block(dts, "intc@8000000")
    gic = node_block(dts, "intc@8000000")
    assert "its@" not in gic
    # distributor, then only CPU 1's redistributor frames
    assert "reg = <0x00 0x8000000 0x00 0x10000 0x00 0x80c0000 0x00 0x20000>;" in gic
    assert "#redistributor-regions = <0x01>;" in gic
    cpus = node_block(dts, "cpus")
    assert "cpu@1 {" in cpus and "cpu@0" not in cpus and "cpu-map" not in cpus
    chosen = node_block(dts, "chosen")
    assert 'bootargs = "console=ttyAMA0 earlycon=pl011,mmio32,0x9000000";' in chosen
    assert 'stdout-path = "/pl011@9000000";' in chosen
    assert "linux,initrd-start = <0x00 0x68c00000>;" in chosen
    assert "linux,initrd-end = <0x00 0x68dff0f4>;" in chosen
    assert "rng-seed" not in dts and "kaslr-seed" not in dts
    assert fdt.parse(dtb).boot_cpuid_phys == 1


def test_linux_dtb_with_a_virtio_mmio_device(plain_dtb: bytes) -> None:
    text = config.DEFAULT_CONFIG.read_text()
    cfg = config.loads(text[: text.index('board = "pcie"')] + MMIO_NET)
    assert not cfg.board.iommu_on
    dts = decompile(dtgen.generate(plain_dtb, cfg.board, cfg.partition("linux")))
    assert "virtio_mmio@a003e00" in top_level_nodes(dts) and "pcie" not in dts
    assert "interrupts = <0x00 0x2f 0x01>;" in node_block(dts, "virtio_mmio@a003e00")
    assert "virtio_mmio@a003c00" not in dts


def test_random_seeds(board_dtb: bytes, cfg: config.SystemConfig) -> None:
    seed = bytes(range(1, dtgen.RANDOM_SEED_BYTES + 1))
    chosen = fdt.parse(dtgen.generate(board_dtb, cfg.board, cfg.partition("linux"), seed=seed)).root.find(
        "/chosen"
    )
    assert chosen.props["kaslr-seed"] == seed[:8]
    assert chosen.props["rng-seed"] == seed[8:]
    with pytest.raises(ValueError, match="40 bytes, not 39"):
        dtgen.generate(board_dtb, cfg.board, cfg.partition("linux"), seed=seed[:-1])


def test_rtos_dtb(board_dtb: bytes, cfg: config.SystemConfig) -> None:
    dts = decompile(dtgen.generate(board_dtb, cfg.board, cfg.partition("rtos")))
    assert "reg = <0x00 0x40000000 0x00 0x1000000>;" in node_block(dts, "memory@40000000")  # its IPA
    assert "cpu@0 {" in node_block(dts, "cpus") and "cpu@1" not in dts
    assert "virtio_mmio" not in dts
    assert "pmu" not in top_level_nodes(dts)  # the rtos's PMU accesses trap: it has none
    assert "0x80a0000 0x00 0x20000" in node_block(dts, "intc@8000000")
    chosen = node_block(dts, "chosen")
    assert 'bootargs = "latmon=1 period_us=1000";' in chosen and "initrd" not in chosen


def test_bootargs_override_and_vbus_hook(board_dtb: bytes, cfg: config.SystemConfig) -> None:
    def add_vbus(root: fdt.Node) -> None:
        root.children.append(dtgen.virtio_mmio_node(0x0A00_0000, 0x200, 48))

    dtb = dtgen.generate(board_dtb, cfg.board, cfg.partition("linux"), bootargs="quiet", extra_nodes=add_vbus)
    dts = decompile(dtb)
    vbus = node_block(dts, "virtio_mmio@a000000")
    assert "interrupts = <0x00 0x10 0x01>;" in vbus and "reg = <0x00 0xa000000 0x00 0x200>;" in vbus
    assert 'bootargs = "quiet";' in node_block(dts, "chosen")


def test_assigned_rtc_keeps_its_clock(board_dtb: bytes) -> None:
    text = config.DEFAULT_CONFIG.read_text() + '\n[[partition.device]]\nboard = "rtc"\n'
    cfg = config.loads(text)
    dts = decompile(dtgen.generate(board_dtb, cfg.board, cfg.partition("linux")))
    assert "pl031@9010000" in top_level_nodes(dts) and "apb-pclk" in top_level_nodes(dts)
    assert "pl061" not in dts and "gpio-keys" not in dts


def test_separate_cpus_give_separate_redistributor_regions(board_dtb: bytes) -> None:
    # CPUs 1 and 3 of four: two runs, so two redistributor regions, each ending its scan (GICR_TYPER.Last)
    text = config.DEFAULT_CONFIG.read_text().replace("cpus = 2", "cpus = 4")
    cfg = config.loads(text.replace("cpus = [1]", "cpus = [1, 3]"))
    linux = cfg.partition("linux")
    assert linux.cpus == (1, 3)
    gic = fdt.parse(dtgen.generate(board_dtb, cfg.board, linux)).root.find("/intc@8000000")
    regs = gic.get_cells("reg")
    pairs = [
        ((regs[i] << 32) | regs[i + 1], (regs[i + 2] << 32) | regs[i + 3]) for i in range(0, len(regs), 4)
    ]
    assert pairs == [(0x0800_0000, 0x1_0000), (0x080C_0000, 0x2_0000), (0x0810_0000, 0x2_0000)]
    assert gic.get_cells("#redistributor-regions") == [2]


def test_pmu_affinity_keeps_the_partitions_cpus(board_dtb: bytes) -> None:
    # A board whose PMU has one SPI per CPU (interrupt-affinity) keeps only Linux's CPUs and their SPIs.
    text = config.DEFAULT_CONFIG.read_text().replace("cpus = 2", "cpus = 4")
    cfg = config.loads(text.replace("cpus = [1]", "cpus = [1, 3]"))
    tree = fdt.parse(board_dtb)
    cpu_nodes = [c for c in tree.root.find("/cpus").children if c.basename == "cpu"]
    for n, cpu in enumerate(cpu_nodes):
        cpu.props["phandle"] = fdt.cells(0x100 + n)
    for n in range(len(cpu_nodes), 4):  # the two-CPU board DTB stands in for a four-CPU one
        tree.root.find("/cpus").children.append(
            fdt.Node(f"cpu@{n}", {"reg": fdt.cells(n), "phandle": fdt.cells(0x100 + n)})
        )
    pmu = tree.root.find("/pmu")
    pmu.props["interrupt-affinity"] = fdt.cells(0x100, 0x101, 0x102, 0x103)
    pmu.props["interrupts"] = fdt.cells(0, 40, 4, 0, 41, 4, 0, 42, 4, 0, 43, 4)
    out = fdt.parse(dtgen.generate(fdt.serialize(tree), cfg.board, cfg.partition("linux"))).root.find("/pmu")
    assert out.get_cells("interrupt-affinity") == [0x101, 0x103]
    assert out.get_cells("interrupts") == [0, 41, 4, 0, 43, 4]


def test_cpu_runs() -> None:
    assert dtgen._cpu_runs([3, 0, 1, 5, 6]) == [(0, 2), (3, 1), (5, 2)]


def test_initrd_outside_ram_is_refused(board_dtb: bytes, cfg: config.SystemConfig) -> None:
    with pytest.raises(ValueError, match="outside"):
        dtgen.generate(board_dtb, cfg.board, cfg.partition("linux"), initrd=(0x4000_0000, 0x4000_0000 + MIB))


def test_board_dtb_command(cfg: config.SystemConfig) -> None:
    cmd = dtgen.board_dtb_command(cfg.board, Path("out/x.dtb"), "qemu")
    assert cmd[:9] == [
        "qemu",
        "-M",
        "virt,virtualization=on,gic-version=3,iommu=smmuv3,dumpdtb=out/x.dtb",
        "-cpu",
        "cortex-a72",
        "-smp",
        "2",
        "-m",
        "1G",
    ]


# ---------------------------------------------------------------------------------------------- V-Bus
VBUS_CHANNELS = """
[[channel]]
name = "echo"

[[channel]]
name = "telemetry"
to_linux = "4K"
to_rtos = 256
"""


@pytest.fixture(scope="module")
def vbus_cfg() -> config.SystemConfig:
    text = config.DEFAULT_CONFIG.read_text()
    if "[[channel]]" not in text:
        text += VBUS_CHANNELS
    return config.loads(text)


def test_linux_dtb_has_the_vbus_device(board_dtb: bytes, vbus_cfg: config.SystemConfig) -> None:
    linux = vbus_cfg.partition("linux")
    node = dtgen.vbus_device_node(vbus_cfg, linux)
    assert node is not None
    dtb = dtgen.generate(board_dtb, vbus_cfg.board, linux, extra_nodes=dtgen.append_nodes(node))
    dts = decompile(dtb)
    assert "virtio_mmio@a004000" in top_level_nodes(dts)
    block = node_block(dts, "virtio_mmio@a004000")
    assert 'compatible = "virtio,mmio";' in block
    assert "reg = <0x00 0xa004000 0x00 0x200>;" in block
    assert "interrupts = <0x00 0xc0 0x04>;" in block  # SPI 192, level-high
    assert "dma-coherent;" in block
    # the root's interrupt-parent (the GIC) applies to it, as to QEMU's own transports
    assert re.search(r"^\tinterrupt-parent = <0x[0-9a-f]+>;", dts, re.M)
    assert dtgen.vbus_device_node(vbus_cfg, vbus_cfg.partition("rtos")) is None
    assert dtgen.vbus_device_node(cfg_without_channels(), linux) is None


def cfg_without_channels() -> config.SystemConfig:
    text = config.DEFAULT_CONFIG.read_text()
    return config.loads(text.split("[[channel]]", 1)[0])


def test_rtos_dtb_has_the_vbus_region(vbus_cfg: config.SystemConfig) -> None:
    from rtmux.image import bundle

    rtos = vbus_cfg.partition("rtos")
    node = dtgen.vbus_region_node(vbus_cfg, rtos)
    assert node is not None and rtos.vbus is not None
    dtb = bundle.rtos_dtb(rtos, "x=1", vbus_cfg.console_ring(rtos), node)
    dts = decompile(dtb)
    block = node_block(dts, "rtmux-vbus")
    assert 'compatible = "rtmux,vbus";' in block
    base, size = rtos.vbus.base, rtos.vbus.size
    assert f"reg = <0x00 {base:#x} 0x00 {size:#x}>;" in block
    assert "rtmux,doorbell = <0x0e 0x0f 0x00 0x01>;" in block  # SGIs 14 and 15, Linux's CPU 1
    assert "#address-cells = <0x01>;" in block and "#size-cells = <0x00>;" in block
    tree = fdt.parse(dtb)
    vbus = tree.root.find("/rtmux-vbus")
    by_label = {c.get_string("label"): c for c in vbus.children}
    for ch in vbus_cfg.channels:
        child = by_label[ch.name]
        assert child.name == f"channel@{ch.index:x}" and child.get_cells("reg") == [ch.index]
        assert child.get_cells("rtmux,layout") == [
            ch.chan_off,
            ch.to_linux_off,
            ch.to_linux,
            ch.to_rtos_off,
            ch.to_rtos,
        ]
    assert [c.get_cells("reg")[0] for c in vbus.children] == list(range(len(vbus_cfg.channels)))
    # the region in the DTB is what the blob says
    from rtmux.image import blob

    record = blob.from_config(vbus_cfg).partitions[0].vbus
    assert (record.ipa, record.size) == (base, size)
    assert dtgen.vbus_region_node(vbus_cfg, vbus_cfg.partition("linux")) is None
    assert "rtmux-vbus" not in decompile(bundle.rtos_dtb(rtos, "x=1"))


def test_doorbell_names_the_linux_boot_cpu(board_dtb: bytes) -> None:
    text = config.DEFAULT_CONFIG.read_text().replace("cpus = 2 ", "cpus = 4 ")
    text = text.replace("cpus = [1]", "cpus = [3]")
    if "[[channel]]" not in text:
        text += VBUS_CHANNELS
    cfg = config.loads(text)
    node = dtgen.vbus_region_node(cfg, cfg.partition("rtos"))
    assert node is not None and node.get_cells("rtmux,doorbell") == [14, 15, 0, 3]
    assert cfg.board.mpidr(17) == 0x101  # QEMU virt, GICv3: 16 CPUs per cluster


def test_board_mpidr_is_the_dtb_cpu_reg(board_dtb: bytes, cfg: config.SystemConfig) -> None:
    """The doorbell's MPIDR comes from Board.mpidr; QEMU's DTB writes the same value as each cpu's reg."""
    cpus = fdt.parse(board_dtb).root.find("/cpus")
    regs = {c.name: c.get_cells("reg")[-1] for c in cpus.children if c.basename == "cpu"}
    assert regs == {f"cpu@{n:x}": cfg.board.mpidr(n) for n in range(cfg.board.cpus)}


def test_rtos_dtb_services_node() -> None:
    """/rtmux-services: the exported directories in configuration order, one read-only cell each, the log
    destination; only what is offered; no node without [services], none for a Linux partition."""
    from rtmux.image import bundle

    base = config.DEFAULT_CONFIG.read_text().split("\n[services]", 1)[0]
    text = base + '\n[services]\nlog = "syslog"\n[[services.dir]]\npath = "/b"\nread_only = true\n'
    text += '[[services.dir]]\npath = "/a"\n'
    cfg = config.loads(text)
    rtos = cfg.partition("rtos")
    node = dtgen.services_node(cfg, rtos)
    assert node is not None
    block = node_block(decompile(bundle.rtos_dtb(rtos, "x=1", services=node)), "rtmux-services")
    assert 'compatible = "rtmux,services";' in block
    assert 'rtmux,files = "/b\\0/a";' in block
    assert "rtmux,files-ro = <0x01 0x00>;" in block
    assert 'rtmux,log = "syslog";' in block
    assert dtgen.services_node(cfg, cfg.partition("linux")) is None
    only_files = config.loads(base + '\n[services]\n[[services.dir]]\npath = "/a"\n')
    node = dtgen.services_node(only_files, only_files.partition("rtos"))
    assert node is not None and set(node.props) == {"compatible", "rtmux,files", "rtmux,files-ro"}
    only_log = config.loads(base + '\n[services]\nlog = "file:/l"\n')
    node = dtgen.services_node(only_log, only_log.partition("rtos"))
    assert node is not None and set(node.props) == {"compatible", "rtmux,log"}
    assert node.get_string("rtmux,log") == "file:/l"
    plain = config.loads(base)
    assert dtgen.services_node(plain, plain.partition("rtos")) is None


GICV2_DTS = DATA / "qemu-virt-gicv2-smp2-1G-iommu.dts"  # -M virt,...,gic-version=2,iommu=smmuv3


@pytest.mark.parametrize("name", ["linux", "rtos"])
def test_gicv2_partition_dtbs(name: str) -> None:
    """On the GICv2 board each partition sees a GICv2 with the distributor's 4 KiB and the CPU
    interface's 8 KiB only: not the virtualization frames or their maintenance interrupt (the
    hypervisor's), not the GICv2m MSI frame; its #address-cells stay for the PCIe host's interrupt-map."""
    cfg = config.load(config.DEFAULT_CONFIG.with_name("qemu-virt-gicv2.toml"))
    assert cfg.board.gic_version == 2
    board_dtb = dtc("-I", "dts", "-O", "dtb", data=GICV2_DTS.read_bytes())
    dts = decompile(dtgen.generate(board_dtb, cfg.board, cfg.partition(name)))
    gic = node_block(dts, "intc@8000000")
    assert 'compatible = "arm,cortex-a15-gic";' in gic
    assert "reg = <0x00 0x8000000 0x00 0x1000 0x00 0x8010000 0x00 0x2000>;" in gic
    assert "interrupts" not in gic and "v2m" not in dts and "msi-parent" not in dts
    assert "#address-cells = <0x02>;" in gic and "interrupt-controller;" in gic
    if name == "linux":
        pcie = node_block(dts, "pcie@10000000")
        assert "interrupt-map = <0x00 0x00 0x00 0x01 0x8003 0x00 0x00 0x00 0x03 0x04 " in pcie
