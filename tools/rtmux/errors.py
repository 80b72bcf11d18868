"""Exceptions and exit statuses shared by the rtmux commands (the bottom layer: imports nothing of rtmux)."""

from typing import Protocol

# Exit statuses of ./rtmux (documented in `./rtmux --help`).
EXIT_OK = 0
EXIT_FAILED = 1  # the guest ran but failed: a test failed, output malformed, fatal error, QEMU error
EXIT_SETUP = 2  # usage error, or something missing on the host (QEMU, an image, the build)
EXIT_TIMEOUT = 124  # the guest did not finish within the wall-clock timeout (as coreutils `timeout`)
EXIT_PIPE = 141  # the reader of standard output went away (`| head`): what a shell reports for SIGPIPE


class RtmuxError(Exception):
    """An error reported to the user as one clear message, without a traceback."""

    exit_status = EXIT_FAILED


class UsageError(RtmuxError):
    """Options that cannot go together, refused before anything runs."""

    exit_status = EXIT_SETUP


class SetupError(RtmuxError):
    """Something the command needs is missing: a host tool, an image, a working build."""

    exit_status = EXIT_SETUP


class GuestOutput(Protocol):
    """What a failure report shows of a guest run (qemu.RunResult has it)."""

    @property
    def console(self) -> str: ...

    def command_line(self) -> str: ...


class GuestFailure(RtmuxError):
    """A guest run that failed; the command prints the whole console, then the reason."""

    def __init__(self, reason: str, result: GuestOutput, status: int = EXIT_FAILED) -> None:
        super().__init__(reason)
        self.result = result
        self.exit_status = status
