"""The V-Bus's limits and layout are defined once, in C (lib/include/lib/vbus.h: the rtos, the
hypervisor and the tools' placement follow it); the tools' copies (rtmux.config.model) must agree. The
header is compiled natively, so the sizes compared are the compiler's, not a reading of the text."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rtmux import paths
from rtmux.config import model

HEADER = paths.REPO_ROOT / "lib" / "include" / "lib" / "vbus.h"

# Each name printed by the probe, and the tools' value for it.
EXPECTED = {
    "VBUS_MAX_CHANNELS": model.VBUS_MAX_CHANNELS,
    "VBUS_NAME_SIZE": model.VBUS_NAME_SIZE,
    "VBUS_RING_MIN": model.VBUS_RING_MIN,
    "VBUS_RING_MAX": model.VBUS_RING_MAX,
    "VBUS_ALIGN": model.VBUS_ALIGN,
    "VBUS_SGI_TO_RTOS": model.VBUS_SGI_TO_RTOS,
    "VBUS_SGI_TO_HYP": model.VBUS_SGI_TO_HYP,
    "VBUS_RING_HEADER_SIZE": model.VBUS_RING_HEADER,
    "sizeof(struct vbus_region)": model.VBUS_REGION_HEADER,
    "sizeof(struct vbus_chan)": model.VBUS_CHAN_SIZE,
    "offsetof(struct vbus_ring, data)": model.VBUS_RING_HEADER,
}


def test_stats_port_name_is_the_header_s() -> None:
    m = re.search(r'^#define VBUS_STATS_PORT "([^"]*)"', HEADER.read_text(), re.M)
    assert m is not None and m[1] == model.VBUS_STATS_PORT


PROBE = """#include <stdio.h>
#include "lib/vbus.h"
int main(void)
{
%s    return 0;
}
"""


@pytest.fixture(scope="module")
def c_values(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc is not None, "a host C compiler is needed (make deps installs gcc)"
    work: Path = tmp_path_factory.mktemp("vbus")
    body = "".join(f'    printf("%s=%%lu\\n", (unsigned long)({expr}));\n' % (expr,) for expr in EXPECTED)
    src = work / "probe.c"
    src.write_text(PROBE % body)
    exe = work / "probe"
    include = paths.REPO_ROOT / "lib" / "include"
    subprocess.run(
        [cc, "-std=c11", "-Wall", "-Werror", f"-I{include}", "-o", str(exe), str(src)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=30).stdout
    return {k: int(v) for k, v in (line.split("=", 1) for line in out.splitlines())}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_tools_agree_with_lib_vbus_h(c_values: dict[str, int], name: str) -> None:
    assert c_values[name] == EXPECTED[name], f"{name}: lib/vbus.h says {c_values[name]}"


def test_every_define_is_compared() -> None:
    """A new #define in lib/vbus.h must be mirrored (or deliberately left out here)."""
    defined = set(re.findall(r"^#define[ \t]+(VBUS_\w+)[ \t]", HEADER.read_text(), re.M))
    assert defined - {"VBUS_MAGIC", "VBUS_STATS_PORT"} <= set(EXPECTED)  # the string: compared above
