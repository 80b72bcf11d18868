"""guest/initramfs/vports (/sbin/rtmux-vports in the initramfs): the /dev/virtio-ports/NAME links of named
virtio console ports, run by the host's sh on a fake /sys and /dev (RTMUX_SYS, RTMUX_DEV)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from rtmux import paths

SCRIPT = paths.GUEST_DIR / "initramfs" / "vports"


class Tree:
    def __init__(self, root: Path) -> None:
        self.sys = root / "sys"
        self.dev = root / "dev"
        (self.sys / "class" / "virtio-ports").mkdir(parents=True)
        (self.sys / "bus" / "virtio" / "drivers" / "virtio_console").mkdir(parents=True)
        self.dev.mkdir()

    def console(self, index: int) -> None:
        (self.sys / "bus" / "virtio" / "drivers" / "virtio_console" / f"virtio{index}").mkdir()

    def port(self, node: str, name: str | None) -> None:
        """A port as Linux shows it: its sysfs folder (with `name` once PORT_NAME came) and its node."""
        folder = self.sys / "class" / "virtio-ports" / node
        folder.mkdir(exist_ok=True)
        if name is not None:
            (folder / "name").write_text(name + "\n")
        (self.dev / node).write_text("")  # stands for the character device devtmpfs makes

    def remove_port(self, node: str) -> None:
        for f in (self.sys / "class" / "virtio-ports" / node).iterdir():
            f.unlink()
        (self.sys / "class" / "virtio-ports" / node).rmdir()
        (self.dev / node).unlink()

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        full = {
            "PATH": os.environ["PATH"],
            "RTMUX_SYS": str(self.sys),
            "RTMUX_DEV": str(self.dev),
            **(env or {}),
        }
        proc = subprocess.run(
            ["sh", str(SCRIPT), *args], env=full, capture_output=True, text=True, timeout=30
        )
        assert proc.returncode == 0, proc.stderr
        return proc

    def links(self) -> dict[str, str]:
        folder = self.dev / "virtio-ports"
        if not folder.is_dir():
            return {}
        return {p.name: os.readlink(p) for p in folder.iterdir()}


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path)


def test_named_ports_get_udev_style_links(tree: Tree) -> None:
    tree.console(0)
    tree.port("vport0p1", "echo")
    tree.port("vport0p2", "telemetry")
    tree.port("vport0p3", None)  # not named yet: no link
    tree.run()
    assert tree.links() == {"echo": "../vport0p1", "telemetry": "../vport0p2"}
    assert (tree.dev / "virtio-ports" / "echo").exists()  # the link resolves to the port's node
    tree.run()  # idempotent
    assert tree.links() == {"echo": "../vport0p1", "telemetry": "../vport0p2"}


def test_names_that_are_no_file_names_are_skipped(tree: Tree) -> None:
    for i, name in enumerate(["", ".hidden", "..", "a/b", "ok.name"]):
        tree.port(f"vport0p{i + 1}", name)
    tree.run()
    assert tree.links() == {"ok.name": "../vport0p5"}


def test_links_follow_ports_that_go_and_come(tree: Tree) -> None:
    tree.port("vport0p1", "echo")
    tree.run()
    tree.remove_port("vport0p1")
    tree.port("vport1p1", "echo")  # the device was reset and came back as another virtio device
    tree.run()
    assert tree.links() == {"echo": "../vport1p1"}
    tree.remove_port("vport1p1")
    tree.run()
    assert tree.links() == {}


def test_as_uevent_program_it_acts_on_virtio_ports_only(tree: Tree) -> None:
    tree.port("vport0p1", "echo")
    tree.run(env={"ACTION": "add", "SUBSYSTEM": "net"})
    assert tree.links() == {}
    tree.run(env={"ACTION": "change", "SUBSYSTEM": "virtio-ports", "DEVNAME": "vport0p1"})
    assert tree.links() == {"echo": "../vport0p1"}


def test_an_event_links_its_own_port_only(tree: Tree) -> None:
    """One event, one port: a boot's 2N events must not each rescan every port."""
    tree.port("vport0p1", "echo")
    tree.port("vport0p2", "telemetry")
    tree.run(env={"ACTION": "add", "SUBSYSTEM": "virtio-ports", "DEVNAME": "vport0p2"})
    assert tree.links() == {"telemetry": "../vport0p2"}
    env = {
        "ACTION": "change",
        "SUBSYSTEM": "virtio-ports",
        "DEVPATH": "/devices/virtio0/virtio-ports/vport0p1",
    }
    tree.run(env=env)  # no DEVNAME: the port from DEVPATH
    assert tree.links() == {"echo": "../vport0p1", "telemetry": "../vport0p2"}
    tree.port("vport0p3", None)
    tree.run(env={"ACTION": "add", "SUBSYSTEM": "virtio-ports", "DEVNAME": "vport0p3"})  # no name yet
    assert set(tree.links()) == {"echo", "telemetry"}
    tree.remove_port("vport0p1")
    tree.run(env={"ACTION": "remove", "SUBSYSTEM": "virtio-ports", "DEVNAME": "vport0p1"})
    assert tree.links() == {"telemetry": "../vport0p2"}
    for bad in ("", "../vport0p2", "tty0"):
        tree.run(env={"ACTION": "change", "SUBSYSTEM": "virtio-ports", "DEVNAME": bad})
    assert tree.links() == {"telemetry": "../vport0p2"}


def test_wait_returns_once_the_ports_are_named(tree: Tree) -> None:
    """The driver adds and names ports after modprobe returns: --wait waits for them."""
    tree.console(0)

    def device() -> None:
        time.sleep(0.4)
        tree.port("vport0p1", None)
        time.sleep(0.3)
        (tree.sys / "class" / "virtio-ports" / "vport0p1" / "name").write_text("echo\n")

    t = threading.Thread(target=device)
    start = time.monotonic()
    t.start()
    tree.run("--wait", "5")
    took = time.monotonic() - start
    t.join()
    assert tree.links() == {"echo": "../vport0p1"}
    assert 0.7 <= took < 4, took


def test_wait_is_bounded(tree: Tree) -> None:
    tree.console(0)
    tree.port("vport0p1", None)  # never named
    start = time.monotonic()
    tree.run("--wait", "1")
    assert 0.9 <= time.monotonic() - start < 4
    assert tree.links() == {}


def test_wait_without_a_console_does_not_wait(tree: Tree) -> None:
    start = time.monotonic()
    tree.run("--wait", "3")
    assert time.monotonic() - start < 1.5
