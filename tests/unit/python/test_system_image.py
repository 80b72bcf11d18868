"""rtmux.run.system.write_image: content-named system images, safe for parallel runs."""

import os
import time
from pathlib import Path

import pytest

from rtmux.run import system


def test_images_are_named_by_content_reused_and_pruned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(system, "SYSTEM_DIR", tmp_path)
    a = system.write_image("cfg", b"one")
    b = system.write_image("cfg", b"two")
    assert a != b and a.read_bytes() == b"one" and b.read_bytes() == b"two"
    assert a.name.startswith("cfg-") and a.suffix == ".img"
    old = time.time() - system.STALE_IMAGE_S - 60
    os.utime(a, (old, old))
    os.utime(b, (old, old))
    # writing `one` again reuses a (and makes it fresh); the stale b goes, another stem's file stays
    other = tmp_path / "else-000000000000.img"
    other.write_bytes(b"x")
    os.utime(other, (old, old))
    assert system.write_image("cfg", b"one") == a
    assert a.is_file() and a.stat().st_mtime > old + 60
    assert not b.exists() and other.exists()
    assert not list(tmp_path.glob("*.tmp"))
