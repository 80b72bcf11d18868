"""rtmux.formats.uimage: U-Boot's legacy script image, as mkimage writes it and U-Boot's `source` reads it."""

from __future__ import annotations

import pytest

from rtmux.formats import uimage

# `mkimage -A arm64 -O linux -T script -C none -n "rtmux boot script" -d s.txt s.uimg` (u-boot-tools
# 2023.01, SOURCE_DATE_EPOCH=0) for s.txt = MKIMAGE_TEXT: U-Boot's own writer, for comparison.
MKIMAGE_TEXT = "echo hello\ntftpboot ${kernel_addr_r} x.img\n"
MKIMAGE_OUT = (
    bytes.fromhex(
        "27051956573bf47c000000000000003300000000000000005cc4fd3205160600"
        "72746d757820626f6f7420736372697074000000000000000000000000000000"
        "0000002b00000000"
    )
    + MKIMAGE_TEXT.encode()
)


def test_script_image_is_what_mkimage_writes() -> None:
    assert uimage.script(MKIMAGE_TEXT, "rtmux boot script") == MKIMAGE_OUT
    assert uimage.parse_script(MKIMAGE_OUT) == uimage.Script("rtmux boot script", MKIMAGE_TEXT, 0)


def test_script_image_round_trip_and_checks() -> None:
    image = uimage.script("echo one\n", "n", timestamp=1_700_000_000)
    assert uimage.parse_script(image) == uimage.Script("n", "echo one\n", 1_700_000_000)
    with pytest.raises(ValueError, match="longer than 31"):
        uimage.script("x", "n" * 32)
    broken = bytearray(image)
    broken[40] ^= 1  # in the name: the header's CRC no longer matches
    with pytest.raises(uimage.UImageError, match="header CRC"):
        uimage.parse_script(bytes(broken))
    broken = bytearray(image)
    broken[-1] ^= 1  # in the script: the data's CRC
    with pytest.raises(uimage.UImageError, match="data CRC"):
        uimage.parse_script(bytes(broken))
    with pytest.raises(uimage.UImageError, match="magic"):
        uimage.parse_script(bytes(64))
    with pytest.raises(uimage.UImageError, match="follow the header"):
        uimage.parse_script(image[:-1])
