"""The command line's shared options: one spelling and one validation across commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rtmux import cli, config, paths
from rtmux.errors import EXIT_PIPE

COMMANDS_WITH_TIMEOUT = [
    ["rtos", "run"],
    ["rtos", "selftest"],
    ["rtos", "latency"],
    ["rtos", "ctxsw"],
    ["linux", "run"],
    ["run"],
    ["bench"],
]


@pytest.mark.parametrize("command", COMMANDS_WITH_TIMEOUT, ids=" ".join)
@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_timeout_is_validated_the_same_everywhere(command: list[str], value: str, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli.build_parser().parse_args([*command, "--timeout", value])
    assert info.value.code == 2
    assert "--timeout" in capsys.readouterr().err


@pytest.mark.parametrize("command", COMMANDS_WITH_TIMEOUT, ids=" ".join)
def test_timeout_is_seconds(command: list[str]) -> None:
    assert cli.build_parser().parse_args([*command, "--timeout", "2.5"]).timeout == 2.5


@pytest.mark.parametrize("command", [["rtos", "run"], ["linux", "run"]], ids=" ".join)
def test_bootargs_and_its_old_spelling(command: list[str]) -> None:
    parser = cli.build_parser()
    assert parser.parse_args([*command, "--bootargs", "a=1 b"]).bootargs == "a=1 b"
    assert parser.parse_args([*command, "--append", "a=1 b"]).bootargs == "a=1 b"
    assert parser.parse_args(command).bootargs == ""


def test_system_run_bootargs_per_partition() -> None:
    args = cli.build_parser().parse_args(["run", "--bootargs", "rtos=samples=0", "--bootargs", "linux=quiet"])
    assert args.bootargs == ["rtos=samples=0", "linux=quiet"]


@pytest.mark.parametrize("command", ["run", "check"])
def test_config_positional_default_and_old_option(command: str) -> None:
    parser = cli.build_parser()
    assert cli._config_of(parser.parse_args([command])) == config.DEFAULT_CONFIG
    assert cli._config_of(parser.parse_args([command, "x.toml"])) == Path("x.toml")
    assert cli._config_of(parser.parse_args([command, "--config", "y.toml"])) == Path("y.toml")


def test_system_run_is_icount_unless_plain() -> None:
    """`./rtmux run` (what `make run` types) boots in icount mode; --plain asks for plain TCG."""
    parse = cli.build_parser().parse_args
    assert parse(["run"]).icount is True
    assert parse(["run", "--icount"]).icount is True
    assert parse(["run", "--plain"]).icount is False


def test_system_run_firmware(capsys: pytest.CaptureFixture[str]) -> None:
    """`./rtmux run` boots the image with -kernel unless --firmware u-boot asks for U-Boot's booti."""
    parse = cli.build_parser().parse_args
    assert parse(["run"]).firmware == "none"
    assert parse(["run", "--firmware", "u-boot"]).firmware == "u-boot"
    with pytest.raises(SystemExit):
        parse(["run", "--firmware", "uefi"])
    assert "--firmware" in capsys.readouterr().err


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    """`./rtmux ... | head`: once the reader has gone, rtmux stops with the status a shell gives a
    program ended by SIGPIPE (141), and no `[Errno 32] Broken pipe` error."""
    proc = subprocess.Popen(
        [sys.executable, str(paths.REPO_ROOT / "rtmux"), "check", "tests/system/configs/rtos-only.toml"],
        cwd=paths.REPO_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before rtmux has written anything: its first write fails
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == EXIT_PIPE == 141
    assert err == ""
