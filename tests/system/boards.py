"""The GIC versions the system tests run on: a configuration as written (QEMU virt with a GICv3), or a
copy of it on the board qemu-virt-gicv2 (the same images: the hypervisor and the rtos pick their GIC
driver when they start)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# pytest ids and the board each version's configurations name.
GICS = (3, 2)
GIC_IDS = {3: "gicv3", 2: "gicv2"}
_BOARD_LINE = re.compile(r'^name = "qemu-virt"', re.MULTILINE)


def gic_params() -> list[object]:
    """pytest.mark.parametrize values for a `gic` argument or an indirect fixture: 3, then 2."""
    return [pytest.param(g, id=GIC_IDS[g]) for g in GICS]


def on_gic(config: Path, gic: int, folder: Path) -> Path:
    """`config` itself for GICv3; for GICv2 a copy in `folder` whose [board] is qemu-virt-gicv2."""
    if gic == 3:
        return config
    text, n = _BOARD_LINE.subn('name = "qemu-virt-gicv2"', config.read_text(), count=1)
    if n != 1:
        raise ValueError(f"{config} names no qemu-virt board")
    out = folder / f"{config.stem}-gicv2.toml"
    out.write_text(text)
    return out
