"""`./rtmux check` end to end, and the Linux DTB generated from a fresh QEMU `dumpdtb`."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rtmux import config
from rtmux.formats import fdt
from rtmux.image import dtgen

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
BAD_CONFIGS = sorted((ROOT / "tests" / "unit" / "python" / "configs").glob("bad-*.toml"))
CHECK_TIMEOUT_S = 60
BUILD_TIMEOUT_S = 1200  # the initramfs, and Debian's packages when they are not fetched yet


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "rtmux"), "check", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CHECK_TIMEOUT_S,
    )


def test_default_config_is_valid() -> None:
    proc = check("configs/qemu-virt.toml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.startswith("configs/qemu-virt.toml: valid\n")
    assert "hypervisor: RAM 0x4000_0000..0x4800_0000 (128 MiB)" in out
    assert "partition 'rtos': kind rtos, CPU 0, tag 'rtos'" in out
    assert "partition 'linux': kind linux, CPU 1, tag 'linux'" in out
    assert "device    net (board pcie): " in out and "INTID 35 (SPI 3)" in out
    assert "DMA through the IOMMU, streams 0x0000..0xffff: this partition's RAM only" in out


# Fields of the sample output that follow the build (the images' sizes and where they end) or Debian's
# current kernel package: each is compared as a pattern, every other character exactly.
BUILD_FIELDS = [
    (re.compile(r"\((\d+) bytes\)"), "(N bytes)"),
    (re.compile(r"image up to 0x[0-9a-f_]+"), "image up to ADDRESS"),
    (re.compile(r"initramfs 0x[0-9a-f_]+\.\.0x[0-9a-f_]+"), "initramfs ADDRESS..ADDRESS"),
    (re.compile(r"/vmlinuz-[^ ]+ "), "/vmlinuz-VERSION "),
]


def _build_fields_out(text: str) -> str:
    for pattern, placeholder in BUILD_FIELDS:
        text = pattern.sub(placeholder, text)
    return text


def test_configuration_md_sample_is_what_check_prints(rtos_images: Path) -> None:
    """docs/configuration.md's sample `./rtmux check` output of the default system, line for line."""
    built = subprocess.run(
        [sys.executable, str(ROOT / "rtmux"), "linux", "initramfs", "--kernel", "std"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    doc = (ROOT / "docs" / "configuration.md").read_text()
    sample = re.search(r"`\./rtmux check` on it prints:\n\n```\n(.*?)```", doc, re.S)
    assert sample is not None
    proc = check()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _build_fields_out(proc.stdout).splitlines() == _build_fields_out(sample[1]).splitlines()


def test_default_argument_is_the_default_config() -> None:
    assert check().stdout == check("configs/qemu-virt.toml").stdout


@pytest.mark.parametrize("path", BAD_CONFIGS, ids=lambda p: p.stem)
def test_each_error_class_is_refused(path: Path) -> None:
    expected = [
        line.split("# expect: ", 1)[1] for line in path.read_text().splitlines() if "# expect: " in line
    ]
    rel = str(path.relative_to(ROOT))
    proc = check(rel)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[:-1] == [f"{rel}: {e}" for e in expected]
    assert lines[-1] == f"rtmux: {rel}: {len(expected)} error(s); nothing was built"


def test_unreadable_config() -> None:
    proc = check("configs/does-not-exist.toml")
    assert proc.returncode == 2
    assert "configs/does-not-exist.toml: cannot read: No such file or directory" in proc.stderr


def test_linux_dtb_from_qemu_dumpdtb(tmp_path: Path) -> None:
    if shutil.which("qemu-system-aarch64") is None or shutil.which("dtc") is None:
        pytest.fail("qemu-system-aarch64 and dtc are needed; run `make deps`")
    cfg = config.load(config.DEFAULT_CONFIG)
    board = dtgen.board_dtb(cfg.board, cache_dir=tmp_path)
    root = fdt.parse(board).root
    # The facts board.py relies on, as this QEMU states them.
    assert root.find("/pl011@9000000").get_cells("interrupts") == [0, 1, 4]
    assert root.find("/virtio_mmio@a003e00").get_cells("interrupts") == [0, 47, 1]
    assert root.find("/memory@40000000").get_cells("reg") == [0, 0x4000_0000, 0, 0x4000_0000]
    smmu = root.find("/smmuv3@9050000")  # the default system's network sits behind the SMMU
    assert smmu.get_cells("reg") == [0, 0x0905_0000, 0, 0x2_0000]
    assert smmu.get_cells("interrupts") == [0, 74, 1, 0, 75, 1, 0, 76, 1, 0, 77, 1]
    pcie = root.find("/pcie@10000000")
    assert pcie.get_cells("reg") == [0x40, 0x1000_0000, 0, 0x1000_0000]
    assert pcie.get_cells("iommu-map") == [0, smmu.phandle(), 0, 0x1_0000]  # every requester ID
    assert dtgen.board_dtb(cfg.board, cache_dir=tmp_path) == board  # from the cache now
    dtb = dtgen.generate(board, cfg.board, cfg.partition("linux"), initrd=(0x6800_0000, 0x6810_0000))
    proc = subprocess.run(
        ["dtc", "-q", "-I", "dtb", "-O", "dts", "-"], input=dtb, capture_output=True, timeout=CHECK_TIMEOUT_S
    )
    assert proc.returncode == 0, proc.stderr
    dts = proc.stdout.decode()
    for present in ("memory@49000000 {", "pcie@10000000 {", 'method = "hvc";', "linux,initrd-start"):
        assert present in dts
    for absent in (
        "smmuv3@",
        "iommu-map",
        "msi-map",
        "fw-cfg@",
        "pl031@",
        "pl061@",
        "flash@",
        "its@",
        "virtio_mmio@",
    ):
        assert absent not in dts
