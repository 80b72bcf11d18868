"""--gdb: the options, the target a name means in a configuration, the gdb command rtmux prints."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from rtmux import cli, config
from rtmux.errors import EXIT_SETUP, SetupError, UsageError
from rtmux.run import gdb, system

ELF = b"\x7fELF" + bytes(60)


def rtos_files(folder: Path, elf_name: str | None = "demo.elf") -> Path:
    """demo.img (and an ELF named elf_name beside it) in `folder`."""
    image = folder / "demo.img"
    image.write_bytes(b"MZ" + bytes(62))
    if elf_name is not None:
        (folder / elf_name).write_bytes(ELF)
    return image


def test_options() -> None:
    parser = cli.build_parser()
    assert cli._gdb_request(parser.parse_args(["run"])) is None
    assert cli._gdb_request(parser.parse_args(["run", "--gdb"])) == gdb.Request(None, None, False)
    args = parser.parse_args(["run", "--gdb", "rtos", "--gdb-port", "4321", "--gdb-wait"])
    assert cli._gdb_request(args) == gdb.Request("rtos", 4321, True)
    assert cli._gdb_request(parser.parse_args(["rtos", "run", "--gdb"])) == gdb.Request(None, None, False)
    assert cli._gdb_request(parser.parse_args(["rtos", "run"])) is None


@pytest.mark.parametrize("extra", [["--gdb-port", "4321"], ["--gdb-wait"]])
@pytest.mark.parametrize("command", [["run"], ["rtos", "run"]], ids=" ".join)
def test_server_options_need_gdb(command: list[str], extra: list[str]) -> None:
    with pytest.raises(UsageError, match="go with --gdb"):
        cli._gdb_request(cli.build_parser().parse_args([*command, *extra]))


@pytest.mark.parametrize("port", ["0", "65536", "x"])
def test_port_is_validated(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.build_parser().parse_args(["run", "--gdb", "--gdb-port", port])
    assert info.value.code == 2 and "--gdb-port" in capsys.readouterr().err


def test_a_configuration_after_gdb_is_the_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    """`./rtmux run --gdb configs/X.toml`: argparse hands the path to --gdb; it is the configuration."""
    seen: dict[str, object] = {}

    def fake_run(config_path: Path, **kwargs: object) -> int:
        seen.update(kwargs, config=config_path)
        return 0

    monkeypatch.setattr(system, "run", fake_run)
    assert cli.main(["run", "--gdb", "configs/qemu-virt-4cpu.toml", "--gdb-port", "4321"]) == 0
    assert seen["config"] == Path("configs/qemu-virt-4cpu.toml")
    assert seen["gdb_request"] == gdb.Request(None, 4321, False)
    assert cli.main(["run", "--gdb", "linux"]) == 0
    assert seen["config"] == config.DEFAULT_CONFIG
    assert seen["gdb_request"] == gdb.Request("linux", None, False)


def test_targets_of_the_default_configuration(tmp_path: Path) -> None:
    cfg = config.load(config.DEFAULT_CONFIG)
    image = rtos_files(tmp_path)
    for name in (None, "rtos"):
        t = gdb.system_target(cfg, name, rtos_image=image)
        assert t.elf == tmp_path / "demo.elf" and t.cpus == (0,) and t.threads == (1,) and t.el == 1
        assert t.break_hint() == "break FUNCTION thread 1 if ($cpsr & 0xc) == 4"
    for name in gdb.HYP_NAMES:
        t = gdb.system_target(cfg, name)
        assert t.el == 2 and t.cpus == ()
        assert t.elf == (gdb.HYP_ELF if gdb.HYP_ELF.is_file() else None)
    t = gdb.system_target(cfg, "linux")
    assert t.elf is None and t.threads == (2,) and t.el == 1
    assert any("-dbg" in n and "nokaslr" in n for n in t.notes) and any("KASLR" in n for n in t.notes)
    t = gdb.system_target(cfg, "linux", bootargs={"linux": "console=ttyAMA0 nokaslr"})
    assert not any("KASLR" in n for n in t.notes)


def test_a_partition_that_does_not_exist() -> None:
    cfg = config.load(config.DEFAULT_CONFIG)
    with pytest.raises(UsageError) as info:
        gdb.system_target(cfg, "nosuch")
    assert info.value.exit_status == EXIT_SETUP == 2
    assert str(info.value) == (
        "--gdb nosuch: configs/qemu-virt.toml has no partition 'nosuch'; its partitions: rtos, linux "
        "(or `hyp` for the hypervisor)"
    )


def test_a_partition_that_does_not_exist_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Refused before anything is built or booted (--no-build or not)."""
    assert cli.main(["run", "--gdb", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "rtmux: error: --gdb nosuch: configs/qemu-virt.toml has no partition 'nosuch'" in err


def test_elf_beside_the_image(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert gdb.elf_beside(rtos_files(tmp_path / "a")) == tmp_path / "a" / "demo.elf"
    (tmp_path / "b").mkdir()  # the SDK's CMake: the executable, without a suffix, beside NAME.img
    assert gdb.elf_beside(rtos_files(tmp_path / "b", "demo")) == tmp_path / "b" / "demo"
    (tmp_path / "c").mkdir()
    image = rtos_files(tmp_path / "c", None)
    (tmp_path / "c" / "demo.elf").write_text("not an ELF")
    assert gdb.elf_beside(image) is None
    t = gdb.rtos_target(image, "demo.img", (0,))
    assert t.elf is None and "no ELF beside" in t.notes[0]


def test_command_and_instructions(tmp_path: Path) -> None:
    target = gdb.Target("partition 'rtos' (rtos)", gdb.HYP_ELF.parent.parent / "rtos" / "demo.elf", (0,), 1)
    server = gdb.Server(target, 4321, wait=True)
    assert server.qemu_args() == ["-gdb", "tcp:127.0.0.1:4321", "-S"]
    assert gdb.qemu_args(4321, False) == ["-gdb", "tcp:127.0.0.1:4321"]
    assert gdb.gdb_command(server) == [
        "gdb-multiarch",
        "-q",
        "build/rtos/demo.elf",
        "-ex",
        "target remote 127.0.0.1:4321",
    ]
    text = "\n".join(gdb.instructions(server))
    assert "  gdb-multiarch -q build/rtos/demo.elf -ex 'target remote 127.0.0.1:4321'\n" in text
    assert "`break FUNCTION thread 1 if ($cpsr & 0xc) == 4`" in text
    assert "--gdb-wait" in text and "timeout" in text
    linux = gdb.Server(gdb.Target("partition 'linux' (Linux)", None, (1, 2), 1), 4321, wait=False)
    assert gdb.gdb_command(linux)[2:4] == ["-ex", "set architecture aarch64"]
    assert "(or another of threads 2, 3)" in "\n".join(gdb.instructions(linux))


def test_ports() -> None:
    port = gdb.free_port()
    assert 1 <= port <= 65535 and gdb.check_port(port) == port
    with socket.socket() as s:
        s.bind((gdb.HOST, 0))
        s.listen()
        taken = s.getsockname()[1]
        with pytest.raises(SetupError, match=f"--gdb-port {taken}: 127.0.0.1:{taken} is not free"):
            gdb.check_port(taken)
    with pytest.raises(UsageError):
        gdb.check_port(70000)
