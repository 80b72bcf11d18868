"""U-Boot's legacy script image (tools/rtmux/formats/uimage.py): the bytes mkimage makes, and damaged
images refused with the reason."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rtmux.formats import uimage

SCRIPT = (
    b"echo rtmux\n"
    b"if load virtio 0:1 ${kernel_addr_r} rtmux.img; then\n"
    b"  booti ${kernel_addr_r} - ${fdt_addr}\n"
    b"fi\n"
)


def test_round_trip() -> None:
    image = uimage.script(SCRIPT, "a name")
    got = uimage.parse_script(image)
    assert got.text == SCRIPT and got.name == "a name" and got.time == 0
    assert (got.os, got.arch) == (uimage.OS_LINUX, uimage.ARCH_ARM64)
    assert len(image) == uimage.HEADER.size + 8 + len(SCRIPT)
    assert uimage.script(SCRIPT, "a name") == image  # no time, no randomness


@pytest.mark.skipif(shutil.which("mkimage") is None, reason="mkimage (u-boot-tools) is not installed")
def test_same_bytes_as_mkimage(tmp_path: Path) -> None:
    """mkimage -A arm64 -O linux -T script -C none, with its time field fixed by SOURCE_DATE_EPOCH=0."""
    for n, text in enumerate([SCRIPT, b"x", b"y" * 1001]):
        source = tmp_path / f"s{n}.cmd"
        source.write_bytes(text)
        out = tmp_path / f"s{n}.scr"
        argv = [
            "mkimage",
            "-A",
            "arm64",
            "-O",
            "linux",
            "-T",
            "script",
            "-C",
            "none",
            "-n",
            "rtmux boot script",
        ]
        proc = subprocess.run(
            [*argv, "-d", str(source), str(out)],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "SOURCE_DATE_EPOCH": "0"},
        )
        assert proc.returncode == 0, proc.stderr
        assert uimage.script(text, "rtmux boot script") == out.read_bytes()


def _damaged(offset: int) -> bytes:
    image = bytearray(uimage.script(SCRIPT, "x"))
    image[offset] ^= 0x01
    return bytes(image)


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (b"\x27\x05\x19\x56", "shorter than"),
        (_damaged(0), "magic"),
        (_damaged(40), "header's CRC"),  # the name
        (_damaged(uimage.HEADER.size + 20), "data's CRC"),
        (uimage.script(SCRIPT, "x")[:-1], r"gives (\d+) bytes of data, the image has (?!\1)\d+"),
    ],
)
def test_damaged_images_are_refused(image: bytes, message: str) -> None:
    with pytest.raises(uimage.UImageError, match=message):
        uimage.parse_script(image)


def test_a_name_that_does_not_fit_is_refused() -> None:
    uimage.script(b"", "n" * 31)
    with pytest.raises(uimage.UImageError, match="longer than 31"):
        uimage.script(b"", "n" * 32)
