"""rtmux.run.system.write_image: content-named system images, safe for parallel runs."""

import os
import struct
import time
from pathlib import Path

import pytest

from rtmux import config, paths
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


def _fake_image(path: Path) -> Path:
    header = struct.pack("<IIQQQQQQ4sI", 0, 0, 0x80000, 0x20000, 2, 0, 0, 0, b"ARM\x64", 0)
    path.write_bytes(header + bytes(4096 - len(header)))
    return path


def _rtos_alone(tmp_path: Path, bootargs: str, shared: bool = False) -> config.SystemConfig:
    """An rtos partition with `bootargs` and its image demo.img (a Linux partition too with `shared`)."""
    demo = _fake_image(tmp_path / "demo.img")
    text = f'[[partition]]\nname = "rtos"\nkind = "rtos"\ncpus = [0]\nmemory = "16M"\nimage = "{demo}"\n'
    text += f'bootargs = "{bootargs}"\n'
    if shared:
        kernel = _fake_image(tmp_path / "Image")
        text += 'shared = true\n[[partition]]\nname = "linux"\nkind = "linux"\ncpus = [0]\nmemory = "64M"\n'
        text += f'kernel = "{kernel}"\n'
    return config.loads(f"[board]\ncpus = 1\n{text}" if shared else text, "x.toml")


def test_another_rtos_app_boots_without_the_configured_bootargs(tmp_path: Path) -> None:
    """--rtos-app selftest on the demo's configuration: the demo's arguments (latmon=1 ...) are not
    the selftest's, which warned about each; it boots with none, and `run` says so."""
    cfg = _rtos_alone(tmp_path, "latmon=1 period_us=1000")
    selftest = _fake_image(tmp_path / "selftest.img")
    assert system.partition_images(cfg, selftest, {})["rtos"].bootargs == ""
    assert system.rtos_app_notes(cfg, selftest, {}) == [
        f"partition 'rtos': {selftest} boots without the configured boot arguments 'latmon=1 "
        "period_us=1000' (those of " + str(tmp_path / "demo.img") + "); --bootargs rtos=ARGS gives it some"
    ]
    # given arguments, or the configured application itself: nothing changes, nothing to say
    assert system.partition_images(cfg, selftest, {"rtos": "only=a"})["rtos"].bootargs == "only=a"
    assert system.rtos_app_notes(cfg, selftest, {"rtos": "only=a"}) == []
    demo = tmp_path / "demo.img"
    assert system.partition_images(cfg, demo, {})["rtos"].bootargs is None  # the configured ones
    assert system.rtos_app_notes(cfg, demo, {}) == [] and system.rtos_app_notes(cfg, None, {}) == []


def test_another_rtos_app_on_a_shared_cpu_keeps_its_timer(tmp_path: Path) -> None:
    cfg = _rtos_alone(tmp_path, "latmon=1", shared=True)
    selftest = _fake_image(tmp_path / "selftest.img")
    assert system.partition_images(cfg, selftest, {})["rtos"].bootargs == "timer=phys"


def test_seed_warns_about_a_network_device() -> None:
    """--seed promises a boot that repeats; the default system's user network answers from the host."""
    assert system.seed_warnings(config.load(config.DEFAULT_CONFIG)) == [
        "--seed: partition 'linux' has a network device ('net'), whose answers come from the host: this "
        "boot will not repeat exactly; measure with a configuration without one (as ./rtmux bench does)"
    ]
    quiet = paths.REPO_ROOT / "tests" / "system" / "configs" / "rtos-only.toml"
    assert system.seed_warnings(config.load(quiet)) == []
