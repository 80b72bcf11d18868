"""DMA isolation: a device passed to a partition reaches that partition's RAM and nothing else.

A small kernel (tests/guests/dma/) boots as the Linux partition with the PCIe host, finds the virtio-net
device, turns bus mastering on and drives it itself, pointing the ring the device writes (the transmit
queue's used ring) at its own RAM and then at other memory: the rtos's code (its demo checksums it every
second), the hypervisor's image, RAM no partition has, an address beyond the partition's address space;
and, with its rings in its own RAM, the device's MSI-X vector at the rtos's code (an MSI is a DMA write
of the vector's data word).

- tests/system/configs/dma.toml: the device is behind QEMU's SMMUv3, programmed by the hypervisor
  (dma = "iommu"). The device works in the partition's own RAM; every other target is refused and
  reported by the hypervisor (the SMMU's fault records), and the rtos's code never changes.
- tests/system/configs/dma-unrestricted.toml: the same attack with the device accepted as unrestricted
  (no SMMU): the rtos reports its code CHANGED. This shows that the attack is real, so the isolated
  run passes because of the isolation and not because the attack missed.

Every run is in icount mode with a hard timeout; a failure prints the console. Overruns of the rtos
while the attacker spins on CPU 1 are QEMU icount's round-robin artifact (see test_hostile_guest.py);
they are judged only once the attacker has powered off.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.formats.rtos_console import DemoReport, demo_reports
from rtmux.run import system
from tests.system import console_script

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "system" / "configs"
ISOLATED = CONFIGS / "dma.toml"
UNRESTRICTED = CONFIGS / "dma-unrestricted.toml"
RUN_TIMEOUT_S = 300
STOPPED = "rtmux: partition linux stopped"

# Physical addresses (the Linux partition's IPAs equal them) of the default placement: the rtos's RAM is
# 0x4800_0000..0x4900_0000 with its image at +0x8_0000; 0x20 into an arm64 Image header lies in bytes
# nothing executes, which the rtos's code checksum covers. The hypervisor's image starts at 0x4008_0000.
RTOS_CODE = 0x4808_0020
RTOS_MSI = 0x4808_0040  # the MSI-X message address (also header bytes)
HYP_IMAGE = 0x4008_0020
NO_PARTITION = 0x7000_0000  # free RAM (above the Linux partition, below the end of RAM)
BEYOND_IPA = 0x80_0000_0000  # past the 39-bit device address space the SMMU context translates


@pytest.fixture(scope="module")
def dma_guest(rtos_images: Path) -> Path:
    subprocess.run(["make", "-s", "guests", "hyp"], cwd=ROOT, check=True, timeout=600)
    return ROOT / "build" / "guests" / "dma.img"


@dataclass
class UntilQuiet:
    """Stops the run once the attacker powered off and the rtos reported `after` more times."""

    after: int = 3
    text: str = ""

    def __call__(self, chunk: str) -> qemu.Reply | None:
        self.text += chunk
        at = self.text.find(STOPPED)
        if at >= 0 and len(demo_reports(self.text[at:])) >= self.after:
            return qemu.Reply(stop_after_s=0.0)
        return None


def run(config: Path, bootargs: str) -> qemu.RunResult:
    built = system.build(config, bootargs={"linux": bootargs}, icount=True, no_build=True)
    r = qemu.run_console(built.argv, RUN_TIMEOUT_S, respond=UntilQuiet())
    assert r.stopped and STOPPED in r.console, f"the attacker did not finish{describe(r)}"
    return r


def describe(r: qemu.RunResult) -> str:
    return f"\n$ {r.command_line()}\nexit: {r.returncode} timed out: {r.timed_out}\n{r.console[-16000:]}"


def targets(*attacks: str) -> str:
    return ",".join(["own", *attacks, "own"])


def refused(console: str, address: int) -> list[str]:
    """The hypervisor's reports of the SMMU refusing the device's access to `address`."""
    return re.findall(
        rf"^rtmux: SMMU: DMA (?:read from|write to) {address:#x} by stream 0x0008 \(linux\) refused: "
        r"outside the partition's RAM$",
        console,
        re.MULTILINE,
    )


def reference_before(r: qemu.RunResult, target: str) -> None:
    """The rtos took its code's reference checksum before the first attack on `target` (else an
    "unchanged" would compare against what the attack left)."""
    boot = r.console.find("[rtos] demo: code+rodata checksum 0x")
    attack = r.console.find(f"[linux] dma: target {target}:")
    assert 0 <= boot < attack, f"no rtos reference checksum before the attack{describe(r)}"


def rtos_kept_its_code(r: qemu.RunResult) -> list[DemoReport]:
    demo = demo_reports(r.console)
    assert len(demo) >= 3, f"the rtos stopped reporting{describe(r)}"
    assert "PANIC" not in r.console, describe(r)
    quiet = demo_reports(r.console[r.console.index(STOPPED) :])
    assert len(quiet) >= 3, f"the rtos stopped reporting after the attack{describe(r)}"
    # The first report after the power-off may still count the attack's last second.
    counts = {d.overruns for d in quiet[1:]}
    assert len(counts) == 1, f"rtos overruns after the attack ended: {sorted(counts)}{describe(r)}"
    untouched = console_script.rtos_cpu_untouched(r.console)  # the hypervisor never ran on the rtos's CPU
    assert untouched is None, f"{untouched}{describe(r)}"
    return demo


def test_dma_outside_the_partition_is_stopped_and_reported(dma_guest: Path) -> None:
    attacks = (RTOS_CODE, HYP_IMAGE, NO_PARTITION, BEYOND_IPA)
    # gap_ms: one attack per second, so that each one's reports fit the hypervisor's rate limit.
    used = [f"{a:#x}" for a in attacks]
    r = run(ISOLATED, f"targets={targets(*used, f'msi:{RTOS_MSI:#x}')} delay_ms=1500 gap_ms=1100")
    out = r.console
    assert "rtmux: SMMU: DMA of streams 0x0..0xffff reaches partition linux's RAM only" in out, describe(r)
    # The device works, before and after the attacks: it wrote into the partition's own RAM.
    own = re.findall(
        r"^\[linux\] dma: target own: used ring 0x4908\w+, MSI to 0x0, .*used\.idx 1$", out, re.M
    )
    assert len(own) == 2, describe(r)
    for address in attacks:
        assert f"[linux] dma: target {address:#x}: used ring {address:#x}" in out, describe(r)
        assert refused(out, address), f"no SMMU report for {address:#x}{describe(r)}"
    # The MSI: the frame was sent (used.idx 1 in its own RAM), the message write refused.
    sent = rf"^\[linux\] dma: target msi:{RTOS_MSI:#x}: used ring 0x4908\w+, MSI to {RTOS_MSI:#x}, "
    assert re.search(sent + r".*used\.idx 1$", out, re.M), describe(r)
    assert f"rtmux: SMMU: DMA write to {RTOS_MSI:#x} by stream 0x0008 (linux) refused" in out, describe(r)
    assert "[linux] dma: 7 targets tried" in out, describe(r)
    reference_before(r, f"{RTOS_CODE:#x}")
    demo = rtos_kept_its_code(r)
    assert {d.checksum for d in demo} == {"unchanged"}, f"the rtos's code changed{describe(r)}"


def test_fault_reports_are_rate_limited(dma_guest: Path) -> None:
    """A device made to fault in a loop: the hypervisor reports ten faults a second and counts the rest."""
    r = run(ISOLATED, f"targets={RTOS_CODE:#x} delay_ms=1500 repeat=200")
    out = r.console
    assert f"[linux] dma: target {RTOS_CODE:#x}: 200 attempts" in out, describe(r)
    reports = re.findall(r"^rtmux: SMMU: DMA .* refused", out, re.MULTILINE)
    hidden = [
        int(n) for n in re.findall(r"^rtmux: SMMU: (\d+) more DMA faults in the last second", out, re.M)
    ]
    assert hidden and sum(hidden) > len(reports), describe(r)
    seconds = max(d.t_s for d in demo_reports(out))
    assert len(reports) <= 10 * (seconds + 1), f"{len(reports)} reports in {seconds} s{describe(r)}"
    reference_before(r, f"{RTOS_CODE:#x}")
    demo = rtos_kept_its_code(r)
    assert {d.checksum for d in demo} == {"unchanged"}, f"the rtos's code changed{describe(r)}"


@pytest.mark.parametrize("attack", [f"{RTOS_CODE:#x}", f"msi:{RTOS_MSI:#x}"], ids=["used-ring", "msi"])
def test_without_isolation_the_same_attack_reaches_the_rtos(dma_guest: Path, attack: str) -> None:
    """The control: dma = "unrestricted", no SMMU. Each attack changes the rtos's code, so the isolated
    run above passes because of the SMMU."""
    r = run(UNRESTRICTED, f"targets={targets(attack)} delay_ms=1500")
    out = r.console
    assert "rtmux: SMMU" not in out, describe(r)
    assert f"[linux] dma: target {attack}: used ring " in out, describe(r)
    reference_before(r, attack)
    demo = demo_reports(out)
    assert demo and demo[-1].checksum == "CHANGED", (
        f"the unconfined device did not reach the rtos{describe(r)}"
    )
