"""ELF reading, the module index and the initramfs plan, on small ELF files and package trees made here."""

from __future__ import annotations

import gzip
import io
import os
import stat
import struct
from pathlib import Path

import pytest

from rtmux import paths
from rtmux.errors import SetupError
from rtmux.formats import elf
from rtmux.image import initramfs, modules_dep

# ------------------------------------------------------------------------------ minimal ELF builders


def _elf_header(e_type: int, phnum: int, shoff: int = 0, shnum: int = 0, shstrndx: int = 0) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    return ident + struct.pack(
        "<HHIQQQIHHHHHH", e_type, 183, 1, 0, 64 if phnum else 0, shoff, 0, 64, 56, phnum, 64, shnum, shstrndx
    )


def make_program(needed: list[str], interpreter: str | None = None) -> bytes:
    """An ET_DYN file with PT_INTERP (optional), one PT_LOAD over the file, PT_DYNAMIC with DT_NEEDED."""
    strtab = b"\0"
    offsets = []
    for name in needed:
        offsets.append(len(strtab))
        strtab += name.encode() + b"\0"
    phnum = 3 if interpreter else 2
    interp = (interpreter.encode() + b"\0") if interpreter else b""
    interp_off = 64 + 56 * phnum
    strtab_off = interp_off + len(interp)
    dyn_off = strtab_off + len(strtab)
    dyn_off += (8 - dyn_off % 8) % 8
    vbase = 0x10000  # the strtab address differs from its offset, as in real files
    entries = [(1, o) for o in offsets] + [(5, vbase + strtab_off), (0, 0)]
    dynamic = b"".join(struct.pack("<qQ", tag, value) for tag, value in entries)
    total = dyn_off + len(dynamic)
    phdrs = b""
    if interpreter:
        phdrs += struct.pack(
            "<IIQQQQQQ", 3, 4, interp_off, interp_off, interp_off, len(interp), len(interp), 1
        )
    phdrs += struct.pack("<IIQQQQQQ", 1, 5, 0, vbase, vbase, total, total, 0x1000)
    phdrs += struct.pack("<IIQQQQQQ", 2, 6, dyn_off, vbase + dyn_off, 0, len(dynamic), len(dynamic), 8)
    body = _elf_header(3, phnum) + phdrs + interp + strtab
    body += bytes(dyn_off - len(body))
    return body + dynamic


def make_module(modinfo: list[str]) -> bytes:
    """An ET_REL file with a .modinfo section holding the given key=value strings."""
    info = b"".join(s.encode() + b"\0" for s in modinfo)
    shstr = b"\0.modinfo\0.shstrtab\0"
    info_off = 64
    shstr_off = info_off + len(info)
    shoff = shstr_off + len(shstr)
    shoff += (8 - shoff % 8) % 8
    sections = bytes(64)
    sections += struct.pack("<IIQQQQIIQQ", 1, 1, 2, 0, info_off, len(info), 0, 0, 1, 0)
    sections += struct.pack("<IIQQQQIIQQ", 10, 3, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0)
    body = _elf_header(1, 0, shoff, 3, 2) + info + shstr
    return body + bytes(shoff - len(body)) + sections


# ------------------------------------------------------------------------------------------- elf


def test_dynamic_info_reads_interp_and_needed() -> None:
    data = make_program(["libnuma.so.1", "libc.so.6"], "/lib/ld-linux-aarch64.so.1")
    info = elf.dynamic_info_bytes(data)
    assert info.interpreter == "/lib/ld-linux-aarch64.so.1"
    assert info.needed == ("libnuma.so.1", "libc.so.6")


def test_dynamic_info_static_and_garbage() -> None:
    assert elf.dynamic_info_bytes(make_program([])) == elf.DynamicInfo(None, ())
    with pytest.raises(elf.ElfError, match="not an ELF"):
        elf.dynamic_info_bytes(b"#!/bin/sh\n" + bytes(80))
    with pytest.raises(elf.ElfError, match="64-bit"):
        elf.dynamic_info_bytes(b"\x7fELF\x01\x01" + bytes(80))


def test_modinfo(tmp_path: Path) -> None:
    ko = tmp_path / "virtio_net.ko"
    ko.write_bytes(make_module(["alias=virtio:d00000001v*", "depends=net_failover", "name=virtio_net"]))
    assert elf.modinfo(ko) == [
        ("alias", "virtio:d00000001v*"),
        ("depends", "net_failover"),
        ("name", "virtio_net"),
    ]


# ---------------------------------------------------------------------------------------- modules_dep

SAMPLE_DEP = """\
kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko
kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko
kernel/net/core/failover.ko:
kernel/drivers/virtio/virtio_mmio.ko:
kernel/drivers/char/hw_random/virtio-rng.ko: kernel/drivers/char/hw_random/rng-core.ko
kernel/drivers/char/hw_random/rng-core.ko:
kernel/a.ko: kernel/c.ko kernel/b.ko
kernel/b.ko: kernel/c.ko
kernel/c.ko:
"""


def test_parse_modules_dep_and_closure() -> None:
    index = modules_dep.parse_modules_dep(SAMPLE_DEP)
    assert index.path["virtio_rng"] == "kernel/drivers/char/hw_random/virtio-rng.ko"
    assert modules_dep.closure(index.deps, ["virtio_mmio"]) == ["virtio_mmio"]
    order = modules_dep.closure(index.deps, ["virtio-rng", "virtio_net", "virtio_mmio"])
    assert sorted(order) == [
        "failover",
        "net_failover",
        "rng_core",
        "virtio_mmio",
        "virtio_net",
        "virtio_rng",
    ]
    for name in order:  # load order: every module after what it needs
        assert all(order.index(dep) < order.index(name) for dep in index.deps[name])
    # a lists c before b, though b needs c: the order must still load c, then b, then a.
    assert modules_dep.closure(index.deps, ["a"]) == ["c", "b", "a"]


def test_closure_unknown_module_names_who_needs_it() -> None:
    deps = {"x": ["y"]}
    with pytest.raises(modules_dep.ModuleError, match=r"y \(needed by x\)"):
        modules_dep.closure(deps, ["x"])
    with pytest.raises(modules_dep.ModuleError, match="nosuch"):
        modules_dep.closure(deps, ["nosuch"])


def test_closure_survives_a_cycle() -> None:
    assert sorted(modules_dep.closure({"a": ["b"], "b": ["a"]}, ["a"])) == ["a", "b"]


def test_dep_text_lists_closure_loadable_from_the_end() -> None:
    index = modules_dep.parse_modules_dep(SAMPLE_DEP)
    text = index.dep_text(["a", "b", "c"])
    assert "kernel/a.ko: kernel/b.ko kernel/c.ko\n" in text
    assert modules_dep.parse_modules_dep(text).deps == {"a": ["b", "c"], "b": ["c"], "c": []}


def _module_tree(root: Path) -> Path:
    mods = root / "lib" / "modules" / "6.1.0-9-arm64"
    files = {
        "kernel/drivers/virtio/virtio_mmio.ko": ["depends=", "alias=of:N*T*Cvirtio,mmio"],
        "kernel/drivers/virtio/virtio_pci.ko": ["depends=virtio_pci_modern_dev", "alias=pci:v00001AF4d*"],
        "kernel/drivers/virtio/virtio_pci_modern_dev.ko": ["depends="],
        "kernel/drivers/char/virtio_console.ko": ["depends=", "alias=virtio:d00000003v*"],
        "kernel/drivers/net/virtio_net.ko": ["depends=net_failover", "alias=virtio:d00000001v*"],
        "kernel/drivers/net/net_failover.ko": ["depends=failover"],
        "kernel/net/core/failover.ko": ["depends="],
        "kernel/drivers/block/virtio_blk.ko": ["depends="],
        "kernel/sound/unrelated-snd.ko": ["depends="],
    }
    for rel, info in files.items():
        (mods / rel).parent.mkdir(parents=True, exist_ok=True)
        (mods / rel).write_bytes(make_module(info))
    (mods / "modules.builtin").write_text("kernel/drivers/block/virtio_blk.ko\n")
    return mods


def test_build_index_from_modinfo(tmp_path: Path) -> None:
    mods = _module_tree(tmp_path)
    index = modules_dep.build_index(mods)
    modules_dep.write_index(index, mods)
    dep = modules_dep.parse_modules_dep((mods / "modules.dep").read_text())
    assert dep.deps["virtio_net"] == ["net_failover", "failover"]
    assert dep.path["unrelated_snd"] == "kernel/sound/unrelated-snd.ko"
    assert ("virtio:d00000001v*", "virtio_net") in modules_dep.parse_modules_alias(
        (mods / "modules.alias").read_text()
    )


def test_build_index_refuses_missing_dependency(tmp_path: Path) -> None:
    mods = tmp_path / "m"
    mods.mkdir()
    (mods / "x.ko").write_bytes(make_module(["depends=ghost"]))
    with pytest.raises(modules_dep.ModuleError, match="ghost"):
        modules_dep.build_index(mods)


# ------------------------------------------------------------------------------------------ cpio


def test_cpio_round_trip() -> None:
    entries = [
        initramfs.Entry("bin", initramfs.S_DIR),
        initramfs.Entry("bin/busybox", initramfs.S_EXEC, data=b"\x7fELF" + bytes(13)),
        initramfs.Entry("bin/sh", initramfs.S_LINK, data=b"busybox"),
        initramfs.Entry("dev/console", initramfs.S_CONSOLE, rdev=(5, 1)),
        initramfs.Entry("empty", initramfs.S_FILE),
        initramfs.Entry("a-name-of-odd-length", initramfs.S_FILE, data=b"xyz"),
    ]
    out = io.BytesIO()
    initramfs.write_cpio(entries, out)
    raw = out.getvalue()
    assert raw.startswith(b"070701") and len(raw) % 4 == 0
    members = initramfs.read_cpio(raw)
    assert [(m.path, m.mode, m.data, m.rdev) for m in members] == [
        (e.path, e.mode, e.data, e.rdev) for e in entries
    ]
    assert [m.kind for m in members] == ["dir", "file", "link", "char", "file", "file"]


def test_read_cpio_rejects_garbage() -> None:
    with pytest.raises(initramfs.CpioError):
        initramfs.read_cpio(b"not a cpio archive" * 10)


# ------------------------------------------------------------------------------------------- plan


def _busybox(applets: list[str]) -> bytes:
    return b"\x7fELF-static busybox\0" + b"\0".join(a.encode() for a in ["[", "[[", *applets]) + b"\0\0tail"


def fake_trees(tmp: Path) -> tuple[Path, list[Path]]:
    """A kernel modules folder and userland trees laid out as the Debian packages are."""
    kernel = tmp / "kernel"
    mods = _module_tree(kernel)
    modules_dep.write_index(modules_dep.build_index(mods), mods)
    busybox = tmp / "busybox-static"
    (busybox / "bin").mkdir(parents=True)
    (busybox / "bin" / "busybox").write_bytes(_busybox(["ash", "modprobe", "sh", "udhcpc"]))
    (busybox / "bin" / "busybox").chmod(0o755)
    rt = tmp / "rt-tests"
    (rt / "usr" / "bin").mkdir(parents=True)
    interp = "/lib/ld-linux-aarch64.so.1"
    (rt / "usr/bin/cyclictest").write_bytes(
        make_program(["librt.so.1", "libnuma.so.1", "libc.so.6", "ld-linux-aarch64.so.1"], interp)
    )
    (rt / "usr/bin/hackbench").write_bytes(make_program(["libc.so.6", "ld-linux-aarch64.so.1"], interp))
    libc = tmp / "libc6"
    multi = libc / "lib" / "aarch64-linux-gnu"
    multi.mkdir(parents=True)
    (multi / "ld-linux-aarch64.so.1").write_bytes(make_program([]))
    (multi / "libc.so.6").write_bytes(make_program(["ld-linux-aarch64.so.1"], interp))
    (multi / "librt.so.1").write_bytes(make_program(["libc.so.6"]))
    os.symlink("aarch64-linux-gnu/ld-linux-aarch64.so.1", libc / "lib" / "ld-linux-aarch64.so.1")
    numa = tmp / "libnuma1"
    nmulti = numa / "usr" / "lib" / "aarch64-linux-gnu"
    nmulti.mkdir(parents=True)
    (nmulti / "libnuma.so.1.0.0").write_bytes(make_program(["libc.so.6"]))
    os.symlink("libnuma.so.1.0.0", nmulti / "libnuma.so.1")
    diod = tmp / "diod"
    (diod / "usr" / "sbin").mkdir(parents=True)
    (diod / "usr/sbin/diod").write_bytes(make_program(["libcap.so.2", "libc.so.6"], interp))
    (diod / "usr/sbin/diod").chmod(0o755)
    cap = tmp / "libcap2"
    cmulti = cap / "lib" / "aarch64-linux-gnu"
    cmulti.mkdir(parents=True)
    (cmulti / "libcap.so.2.66").write_bytes(make_program(["libc.so.6"]))
    os.symlink("libcap.so.2.66", cmulti / "libcap.so.2")
    return mods, [busybox, rt, libc, numa, diod, cap]


def static_program() -> bytes:
    """A static arm64 executable: ET_EXEC, one PT_LOAD, no interpreter, no dynamic section."""
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, 0x40_0000, 0x40_0000, 120, 120, 0x1000)
    return _elf_header(2, 1) + phdr


def fake_programs(tmp: Path) -> dict[str, Path]:
    (tmp / "guest").mkdir(exist_ok=True)
    ping = tmp / "guest" / "rtmux-ping"
    if not ping.exists():  # written once: its modification time is part of the plan's digest
        ping.write_bytes(static_program())
    return {"rtmux-ping": ping}


def plan(
    mods: Path, roots: list[Path], tmp: Path, modules: tuple[str, ...] = initramfs.MODULES
) -> initramfs.Plan:
    return initramfs.plan_initramfs(
        mods, "6.1.0-9-arm64", roots, modules=modules, guest_programs=fake_programs(tmp)
    )


def test_plan_lists_what_the_guest_needs(tmp_path: Path) -> None:
    mods, roots = fake_trees(tmp_path)
    plan = initramfs.plan_initramfs(mods, "6.1.0-9-arm64", roots, guest_programs=fake_programs(tmp_path))
    e = plan.entries
    # busybox and its applets (the table's own [ and [[ included), programs, libraries, loader.
    assert e["bin/busybox"].mode == initramfs.S_EXEC
    for applet in ("[", "ash", "modprobe", "sh", "udhcpc"):
        assert e[f"bin/{applet}"] == initramfs.Entry(f"bin/{applet}", initramfs.S_LINK, data=b"busybox")
    for rel in (
        "usr/bin/cyclictest",
        "usr/bin/hackbench",
        "lib/aarch64-linux-gnu/libc.so.6",
        "lib/aarch64-linux-gnu/librt.so.1",
        "lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
        "usr/lib/aarch64-linux-gnu/libnuma.so.1.0.0",
    ):
        assert e[rel].source is not None and stat.S_ISREG(e[rel].mode), rel
    assert e["lib/ld-linux-aarch64.so.1"].data == b"aarch64-linux-gnu/ld-linux-aarch64.so.1"
    assert e["usr/lib/aarch64-linux-gnu/libnuma.so.1"].data == b"libnuma.so.1.0.0"
    # Modules: the closure only; virtio_blk is built in, so neither copied nor loaded.
    base = "lib/modules/6.1.0-9-arm64"
    kos = sorted(p.removeprefix(base + "/") for p in e if p.endswith(".ko"))
    assert kos == [
        "kernel/drivers/char/virtio_console.ko",
        "kernel/drivers/net/net_failover.ko",
        "kernel/drivers/net/virtio_net.ko",
        "kernel/drivers/virtio/virtio_mmio.ko",
        "kernel/drivers/virtio/virtio_pci.ko",
        "kernel/drivers/virtio/virtio_pci_modern_dev.ko",
        "kernel/net/core/failover.ko",
    ]
    dep = modules_dep.parse_modules_dep(e[f"{base}/modules.dep"].data.decode())
    assert set(dep.path) == {
        "virtio_console",
        "net_failover",
        "virtio_net",
        "virtio_mmio",
        "virtio_pci",
        "virtio_pci_modern_dev",
        "failover",
    }
    assert "virtio_net" in e[f"{base}/modules.alias"].data.decode()
    assert e["etc/rtmux/modules"].data == b"virtio_mmio\nvirtio_pci\nvirtio_console\nvirtio_net\n"
    assert e["init"].mode == initramfs.S_EXEC and e["init"].contents().startswith(b"#!/bin/sh")
    assert e["dev/console"].rdev == (5, 1)
    # V-Bus: the port links' script (which /init runs, and busybox uevent for every uevent), and
    # rtmux's own programs
    assert e["sbin/rtmux-vports"].mode == initramfs.S_EXEC
    assert e["sbin/rtmux-vports"].contents().startswith(b"#!/bin/sh")
    init = e["init"].contents().decode()
    assert "uevent /sbin/rtmux-vports " in init and "/sbin/rtmux-vports --wait" in init
    assert init.index("uevent /sbin/rtmux-vports") < init.index('modprobe "$module"')
    assert e["usr/bin/rtmux-ping"].mode == initramfs.S_EXEC
    assert e["usr/bin/rtmux-ping"].contents() == static_program()
    assert not any("unrelated" in p for p in e)
    # Linux's services for the rtos: diod with what it needs (listed for the root it runs in), and their
    # supervisor, which /init starts in the background before the ready line
    assert e["usr/sbin/diod"].mode == initramfs.S_EXEC
    assert sorted(e[initramfs.DIOD_FILES].data.decode().splitlines()) == [
        "lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
        "lib/aarch64-linux-gnu/libc.so.6",
        "lib/aarch64-linux-gnu/libcap.so.2",  # a link, then its file
        "lib/aarch64-linux-gnu/libcap.so.2.66",
        "lib/ld-linux-aarch64.so.1",  # PT_INTERP: a link into lib/aarch64-linux-gnu/
        "usr/sbin/diod",
    ]
    assert e["sbin/rtmux-services"].mode == initramfs.S_EXEC
    start = init.index("/sbin/rtmux-services </dev/null >/dev/null 2>&1 &")
    ready = init.index('echo "rtmux-linux: ready:')
    assert init.index("/sbin/rtmux-vports --wait") < start < ready
    # the ready line waits (bounded) for the supervisor's set-up, which it says with services.ready
    assert start < init.index("while [ ! -e /run/rtmux/services.ready ]") < ready
    services = (paths.GUEST_DIR / "initramfs" / "services").read_text()
    assert "READY=$RUN/services.ready" in services and "RUN=/run/rtmux" in services


def test_plan_missing_library_is_a_clear_error(tmp_path: Path) -> None:
    mods, roots = fake_trees(tmp_path)
    (roots[1] / "usr/bin/hackbench").write_bytes(make_program(["libmystery.so.3"]))
    with pytest.raises(SetupError, match=r"libmystery\.so\.3 needed by /usr/bin/hackbench"):
        plan(mods, roots, tmp_path)


def test_plan_missing_module_is_a_clear_error(tmp_path: Path) -> None:
    mods, roots = fake_trees(tmp_path)
    with pytest.raises(SetupError, match="virtio_gpu"):
        plan(mods, roots, tmp_path, modules=("virtio_gpu",))


def test_archive_is_reproducible_and_rebuilt_only_on_change(tmp_path: Path) -> None:
    mods, roots = fake_trees(tmp_path)
    out = tmp_path / "out" / "initramfs-std.cpio.gz"
    logs: list[str] = []
    first_plan = plan(mods, roots, tmp_path)
    assert initramfs.build_plan(first_plan, out, logs.append)
    first = out.read_bytes()
    assert not initramfs.build_plan(plan(mods, roots, tmp_path), out, logs.append)
    assert len(logs) == 1
    # Same inputs written again from scratch: the same bytes.
    out.unlink()
    assert initramfs.build_plan(first_plan, out, logs.append) and out.read_bytes() == first
    # A changed input (newer libc) rebuilds.
    libc = roots[2] / "lib/aarch64-linux-gnu/libc.so.6"
    libc.write_bytes(libc.read_bytes() + b"\0")
    assert initramfs.build_plan(plan(mods, roots, tmp_path), out, logs.append)
    members = {m.path: m for m in initramfs.read_initramfs(out)}
    assert members["lib/aarch64-linux-gnu/libc.so.6"].data == libc.read_bytes()
    assert members["bin"].kind == "dir" and members["usr/lib/aarch64-linux-gnu"].kind == "dir"
    # Parents come before children in the archive (the kernel's unpacker needs them first).
    order = [m.path for m in initramfs.read_cpio(gzip.decompress(out.read_bytes()))]
    for i, path in enumerate(order):
        parent = path.rpartition("/")[0]
        assert not parent or parent in order[:i], path


def test_busybox_applets_without_table() -> None:
    with pytest.raises(SetupError, match="applet table"):
        initramfs.busybox_applets(b"no table here")


def test_with_script_appends_an_archive() -> None:
    base = b"\x1f\x8b" + bytes(101)  # stands for a compressed archive
    data = initramfs.with_script(base, "echo hi")
    assert data.startswith(base) and len(data) % 4 == 0
    extra = data[512:]
    assert set(data[len(base) : 512]) == {0}  # zero padding, which the kernel skips
    members = {m.path: m for m in initramfs.read_cpio(extra)}
    script = members[initramfs.SCRIPT_PATH]
    assert script.data == b"#!/bin/sh\necho hi\n" and script.mode & 0o111
    assert initramfs.RUN_BOOTARG == "rtmux.run=/etc/rtmux/script"
    kept = initramfs.with_script(b"", "#!/bin/busybox sh\ntrue\n")
    assert {m.path: m.data for m in initramfs.read_cpio(kept)}[initramfs.SCRIPT_PATH].startswith(
        b"#!/bin/busybox"
    )


def test_guest_programs_must_be_static_arm64(tmp_path: Path) -> None:
    mods, roots = fake_trees(tmp_path)
    dynamic = tmp_path / "dyn"
    dynamic.write_bytes(make_program(["libc.so.6"], "/lib/ld-linux-aarch64.so.1"))
    with pytest.raises(SetupError, match="is not a static arm64 executable"):
        initramfs.plan_initramfs(mods, "6.1.0-9-arm64", roots, guest_programs={"x": dynamic})
    x86 = tmp_path / "x86"
    x86.write_bytes(static_program()[:18] + struct.pack("<H", 62) + static_program()[20:])
    with pytest.raises(SetupError, match="is not a static arm64 executable"):
        initramfs.plan_initramfs(mods, "6.1.0-9-arm64", roots, guest_programs={"x": x86})
    with pytest.raises(SetupError, match="missing: `make linux-programs` builds it"):
        initramfs.plan_initramfs(mods, "6.1.0-9-arm64", roots, guest_programs={"x": tmp_path / "none"})


def test_the_programs_make_builds_go_into_the_initramfs(tmp_path: Path) -> None:
    """Every guest/NAME program and the examples' Linux builds, as `make linux-programs` builds them, are
    accepted for /usr/bin."""
    initramfs.make_linux_programs()
    programs = initramfs.built_programs()
    assert set(programs) == set(paths.LINUX_PROGRAMS + paths.LINUX_EXAMPLES) and "rtmux-ping" in programs
    assert "control-loop" in programs
    mods, roots = fake_trees(tmp_path)
    e = initramfs.plan_initramfs(mods, "6.1.0-9-arm64", roots).entries
    for name in programs:
        assert e[f"usr/bin/{name}"].source == paths.linux_program(name)
        assert elf.machine(paths.linux_program(name).read_bytes()) == elf.EM_AARCH64
