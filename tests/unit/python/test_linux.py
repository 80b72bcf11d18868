"""The bare-Linux runner: QEMU command line, end marker, and driving a (fake) guest shell."""

from __future__ import annotations

import io
import json
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from rtmux import qemu
from rtmux.errors import EXIT_TIMEOUT, GuestFailure, RtmuxError, SetupError
from rtmux.run import linux


def test_qemu_argv() -> None:
    cmd = linux.qemu_argv("k/vmlinuz", "b/initramfs.cpio.gz", smp=2, append="loglevel=4")
    assert cmd == [
        "qemu-system-aarch64",
        "-M", "virt,virtualization=on,gic-version=3",
        "-cpu", "cortex-a72",
        "-smp", "2",
        "-m", "1G",
        "-nographic",
        "-no-reboot",
        "-nic", "none",
        "-netdev", "user,id=n0",
        "-device", "virtio-net-device,netdev=n0",
        "-kernel", "k/vmlinuz",
        "-initrd", "b/initramfs.cpio.gz",
        "-append", "console=ttyAMA0 panic=-1 loglevel=4",
    ]  # fmt: skip


def test_qemu_argv_icount_memory_and_errors() -> None:
    cmd = linux.qemu_argv("k", "i", icount=True, memory="512M", network=False)
    assert cmd[-2:] == ["-icount", "shift=0,align=off,sleep=off"]
    assert cmd[cmd.index("-m") + 1] == "512M" and "-netdev" not in cmd
    with pytest.raises(RtmuxError, match="memory size"):
        linux.qemu_argv("k", "i", memory="1 GB")
    with pytest.raises(RtmuxError, match="CPU"):
        linux.qemu_argv("k", "i", smp=0)


def test_marker_is_not_in_the_echo_of_the_typed_line() -> None:
    typed = linux.marker_command("false; echo x", "1a2b3c4d")
    assert typed.startswith("(\nfalse; echo x\n); printf ") and typed.endswith("\n")
    assert linux.parse_marker(typed, "1a2b3c4d") is None  # the echo never reads as a marker


def test_parse_marker_and_output() -> None:
    console = (
        "[    2.3] Run /init as init process\n"
        "rtmux-linux: ready: kernel 6.1.0-9-arm64, 1 CPU(s), eth0 10.0.2.15/24\n"
        "rtmux-linux:~# (\n> uname -r\n> ); printf 'RTMUX_%s_%s=%d\\n' EXIT cafe0001 \"$?\"\n"
        "6.1.0-9-arm64\nsecond line\n"
        "RTMUX_EXIT_cafe0001=42\n"
        "rtmux-linux:~# poweroff -f\n"
    )
    assert linux.parse_marker(console, "cafe0001") == 42
    assert linux.parse_marker(console, "cafe0002") is None
    assert linux.command_output(console, "cafe0001") == "6.1.0-9-arm64\nsecond line\n"
    assert linux.command_output(console, "cafe0002") is None
    # A marker split by nothing but interleaved kernel text elsewhere is still found.
    assert linux.parse_marker("[ 9.1] x\nRTMUX_EXIT_ab=0[ 9.2] y", "ab") == 0


def test_ready_and_prompt_patterns_match_the_init_script() -> None:
    guest = Path(__file__).resolve().parents[3] / "guest" / "initramfs"
    init = (guest / "init").read_text()
    assert 'echo "rtmux-linux: ready: ' in init
    # the console's login shell reads its prompt from /etc/profile (the shell busybox init starts)
    profile = (guest / "profile").read_text()
    assert "PS1='\\h:\\w# '" in profile and "rtmux-linux" in linux.PROMPT_RE.pattern
    assert "/bin/sh -l" in (guest / "inittab").read_text()
    assert linux.READY_RE.search("rtmux-linux: ready: kernel 6.1.0-9-arm64, 2 CPU(s), no network")
    assert not linux.PROMPT_RE.search("rtmux-linux: ready: kernel 6.1.0-9-arm64, 2 CPU(s), no network\n")
    assert linux.PROMPT_RE.search("rtmux-linux:~# ")


# A stand-in for QEMU + Linux: prints a boot log and a prompt, then plays a shell that answers the
# typed marker line with the configured status, and powers off (or not) on `poweroff -f`.
FAKE_GUEST = """\
import re, sys, time
status, exits, ready = {status}, {exits}, {ready}
out = sys.stdout
out.write("[    0.0] Booting Linux\\n")
if ready:
    out.write("rtmux-linux: ready: kernel 6.1.0-9-arm64, 1 CPU(s), no network\\n\\nrtmux-linux:~# ")
out.flush()
if not ready:
    time.sleep(60)
for line in sys.stdin:
    out.write(line)  # the console echo
    m = re.search(r"EXIT ([0-9a-f]+) ", line)
    if m:
        out.write("hello from the guest\\n")
        out.write("RTMUX_EXIT_%s=%d\\nrtmux-linux:~# " % (m.group(1), status))
    if line.startswith("poweroff -f"):
        out.write("[    5.0] reboot: Power down\\n")
        out.flush()
        if exits:
            sys.exit(0)
        time.sleep(60)
    out.flush()
"""


def fake_guest(tmp_path: Path, status: int = 0, exits: bool = True, ready: bool = True) -> list[str]:
    script = tmp_path / "fake-guest"
    script.write_text(f"#!{sys.executable}\n" + FAKE_GUEST.format(status=status, exits=exits, ready=ready))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return [str(script)]


def test_run_command_reports_status_and_output(tmp_path: Path) -> None:
    echo = io.StringIO()
    run = linux.run_command(fake_guest(tmp_path, status=3), "uname -r", timeout_s=30, echo=echo)
    assert run.status == 3 and linux.check_command(run, "guest") == 3
    assert run.output == "hello from the guest\n"
    assert run.ready_s is not None and run.result.exited and not run.result.stopped
    assert "uname -r" in echo.getvalue() and "Power down" in run.result.console


def test_run_command_stops_a_guest_that_does_not_power_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(linux, "POWEROFF_GRACE_S", 0.5)
    run = linux.run_command(fake_guest(tmp_path, exits=False), "true", timeout_s=30)
    assert run.status == 0 and run.result.stopped and not run.result.timed_out
    assert run.result.elapsed_s < 20


def test_run_command_timeout_before_ready(tmp_path: Path) -> None:
    run = linux.run_command(fake_guest(tmp_path, ready=False), "true", timeout_s=1.5)
    assert run.status is None and run.ready_s is None and run.result.timed_out
    with pytest.raises(GuestFailure, match="ready line") as info:
        linux.check_command(run, "guest")
    assert info.value.exit_status == EXIT_TIMEOUT
    assert "Booting Linux" in info.value.result.console


def test_run_console_respond_sends_input() -> None:
    code = "import sys; print('ask', flush=True); print('got', sys.stdin.readline().strip(), flush=True)"

    def respond(text: str) -> qemu.Reply | None:
        return qemu.Reply(send=b"answer\n") if "ask" in text else None

    result = qemu.run_console([sys.executable, "-c", code], 30, respond=respond)
    assert result.exited and "got answer" in result.console


def test_fetch_needs_no_apt_when_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rtmux import paths
    from rtmux.image import debian

    monkeypatch.setattr(paths, "DEBIAN_CACHE", tmp_path / "cache")
    roots = tmp_path / "cache" / "roots"
    for role in ("kernel-std", "libc6"):
        (roots / role).mkdir(parents=True)
        (roots / f"{role}.json").write_text(json.dumps({"name": f"{role}-pkg", "version": "1.0"}))

    def no_apt(*args: object, **kwargs: object) -> None:
        raise AssertionError("apt must not be asked when everything is cached")

    monkeypatch.setattr(debian, "resolve", no_apt)
    got = debian.ensure(["kernel-std", "libc6"])
    assert got["libc6"].package == debian.Package("libc6-pkg", "1.0")
    assert got["kernel-std"].root == roots / "kernel-std"


def test_debian_kernel_names() -> None:
    from rtmux.image import debian

    dep = "linux-image-6.1.0-56-rt-arm64 (= 6.1.192-2)"
    assert debian.kernel_image_dependency(dep) == "linux-image-6.1.0-56-rt-arm64"
    assert debian.unsigned_name("linux-image-6.1.0-56-rt-arm64") == "linux-image-6.1.0-56-rt-arm64-unsigned"
    assert debian.release_of("linux-image-6.1.0-56-rt-arm64-unsigned") == "6.1.0-56-rt-arm64"
    fields = debian.parse_control(
        textwrap.dedent(
            """\
            Package: linux-image-arm64
            Version: 6.1.192-2
            Depends: linux-image-6.1.0-56-arm64 (= 6.1.192-2)
            Description: Linux for 64-bit ARMv8 machines (meta-package)
             continued
            """
        )
    )
    assert fields["Version"] == "6.1.192-2" and fields["Description"].endswith("\ncontinued")


def test_debian_arch_all_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An `Architecture: all` package (u-boot-qemu): apt-get download takes `name:all=version`, its file
    ends in _all.deb, and the cache remembers it; an arm64 one keeps `name:arm64`."""
    from rtmux import paths
    from rtmux.image import debian

    package = debian._package_from({"Version": "2023.01", "Size": "10", "Architecture": "all"}, "u-boot-qemu")
    assert package == debian.Package("u-boot-qemu", "2023.01", 10, debian.ARCH_ALL)
    assert package.spec == "u-boot-qemu:all=2023.01"
    assert debian._deb_glob(package.name, package.arch) == "u-boot-qemu_*_all.deb"
    assert debian._package_from({"Version": "1", "Architecture": "arm64"}, "libc6").spec == "libc6:arm64=1"
    monkeypatch.setattr(paths, "DEBIAN_CACHE", tmp_path)

    def dpkg_deb(argv: list[str], *args: object, **kwargs: object) -> str:
        assert argv[:2] == ["dpkg-deb", "-x"]
        Path(argv[3]).mkdir(parents=True)  # an empty package
        return ""

    monkeypatch.setattr(debian, "_run", dpkg_deb)
    deb = tmp_path / "u-boot-qemu_2023.01_all.deb"
    deb.write_bytes(b"")
    debian._unpack("u-boot-qemu", package, deb, lambda message: None)
    cached = debian.cached("u-boot-qemu")
    assert cached is not None and cached.package == package


def test_debian_not_root_prints_the_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    from rtmux.image import debian

    answers = {"--print-foreign-architectures": "\n", "--print-architecture": "amd64\n"}
    monkeypatch.setattr(debian, "_run", lambda argv, *a, **k: answers[argv[1]])
    monkeypatch.setattr(debian, "_is_root", lambda: False)
    with pytest.raises(SetupError, match=r"dpkg --add-architecture arm64 && apt-get update"):
        debian.ensure_arch()


FAKE_SCRIPT_GUEST = """\
import sys, time
out = sys.stdout
out.write("[    0.0] Booting Linux\\n")
out.write("rtmux-linux: ready: kernel 6.1.0-9-arm64, 1 CPU(s), no network\\n")
out.write("rtmux-linux: run: /etc/rtmux/script\\nfrom the script\\n")
out.write("rtmux-linux: run: exit status {status}\\n[    5.0] reboot: Power down\\n")
out.flush()
if not {exits}:
    time.sleep(60)
"""


@pytest.mark.parametrize("exits", [True, False])
def test_run_script_types_nothing_and_reads_the_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exits: bool
) -> None:
    monkeypatch.setattr(linux, "POWEROFF_GRACE_S", 0.5)
    script = tmp_path / "fake-guest"
    script.write_text(f"#!{sys.executable}\n" + FAKE_SCRIPT_GUEST.format(status=4, exits=exits))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    run = linux.run_script([str(script)], timeout_s=30)
    assert run.status == 4 and linux.check_command(run, "guest") == 4
    assert run.output == "from the script\n"
    assert run.result.stopped != exits and not run.result.timed_out


def test_init_runs_the_hook_and_prints_the_status_line() -> None:
    init = (Path(__file__).resolve().parents[3] / "guest" / "initramfs" / "init").read_text()
    assert 'echo "rtmux-linux: run: exit status $?"' in init
    assert linux.RUN_STATUS_RE.search("rtmux-linux: run: exit status 0")
    assert "rtmux\\.run=" in init


def test_qemu_argv_seed() -> None:
    argv = linux.qemu_argv("Image", "initrd", seed=7, network=False)
    assert argv[argv.index("-seed") + 1] == "7"
    assert argv[argv.index("-rtc") + 1] == qemu.FIXED_RTC
    assert "-netdev" not in argv
    assert "-seed" not in linux.qemu_argv("Image", "initrd")
