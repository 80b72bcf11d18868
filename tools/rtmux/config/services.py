"""[services]: Linux's services for the rtos's threads (files, logs, sockets) and the rtos's thread
statistics for Linux (rtmux-top), checked; their channels are added by rtmux.config.channels.

    [services]
    log = "file:/var/log/rtos.log"   # or "syslog", or "off" (the default)
    network = true                   # sockets through Linux (rtmux-netd); false by default
    threads = true                   # the rtos's threads seen from Linux (rtmux-top); false by default
    [[services.dir]]
    path = "/srv/rtos"               # the rtos reaches it as /linux/srv/rtos/...
    read_only = false

Every path goes on Linux's command line (rtmux.files=, rtmux.log=; model.Services.linux_bootargs), so it
is held to a small alphabet: no space (which ends an argument), no comma (which separates directories),
no colon (which marks a read-only one).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from rtmux.config.fields import Fields
from rtmux.config.model import (
    KIND_LINUX,
    KIND_RTOS,
    LOG_FILE_PREFIX,
    LOG_OFF,
    LOG_SYSLOG,
    MAX_SERVICE_DIRS,
    MAX_SERVICE_PATH,
    ServiceDir,
    Services,
)
from rtmux.config.partitions import PartDraft

SERVICES_KEYS = ("log", "dir", "network", "threads")
DIR_KEYS = ("path", "read_only")
_PATH_RE = re.compile(r"^[A-Za-z0-9/._+@~-]+$")
PATH_ALPHABET = "letters, digits, '/' and . _ - + @ ~"


def path_problem(path: str) -> str | None:
    """Why `path` cannot be an exported directory or the log file, or None. The wording follows "path
    '...' " in the messages."""
    if not path.startswith("/"):
        return "is not absolute: write the whole Linux path, starting with '/'"
    if not _PATH_RE.match(path):
        return (
            f"may hold only {PATH_ALPHABET} (it goes on Linux's command line, where a space ends it, a "
            "comma separates directories and ':ro' marks a read-only one)"
        )
    if len(path) > MAX_SERVICE_PATH:
        return f"is {len(path)} characters long; at most {MAX_SERVICE_PATH}"
    if path == "/":
        return "is the whole file system: name a directory below it"
    if any(part in ("", ".", "..") for part in path[1:].split("/")):
        return f"is not normalised (no '.', '..', '//' or trailing '/'): write {posixpath.normpath(path)!r}"
    return None


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or below it (both normalised)."""
    return path == folder or path.startswith(folder + "/")


class ServicesReader(Fields):
    """Reads [services], reporting through Fields."""

    def load_services(self, data: dict[str, Any], drafts: list[PartDraft]) -> Services | None:
        """The services, or None without [services] (or after an error: nothing is offered then, so that
        no channel of theirs adds its own errors)."""
        if "services" not in data:
            return None
        table = self.get_table("", data, "services")
        if table is None:
            return None
        ctx = "[services]"
        before = len(self.errors)
        self.check_keys(ctx, table, SERVICES_KEYS)
        dirs = self.load_dirs(table)
        log = self.load_log(ctx, table, dirs)
        network = table.get("network", False)
        if not isinstance(network, bool):
            self.wrong_type(ctx, "network", network, "true or false")
        threads = table.get("threads", False)
        if not isinstance(threads, bool):
            self.wrong_type(ctx, "threads", threads, "true or false")
        self.check_partitions(ctx, drafts)
        if len(self.errors) > before:
            return None
        return Services(tuple(dirs), log, network is True, threads is True)

    def load_dirs(self, table: dict[str, Any]) -> list[ServiceDir]:
        raw = table.get("dir", [])
        if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
            self.wrong_type("[services]", "dir", raw, "an array of tables ([[services.dir]])")
            return []
        if len(raw) > MAX_SERVICE_DIRS:
            self.error(
                "[services]", f"{len(raw)} directories in [[services.dir]]; at most {MAX_SERVICE_DIRS}"
            )
        dirs: list[ServiceDir] = []
        numbers: list[int] = []
        for i, entry in enumerate(raw):
            label = f"services dir #{i + 1}"
            self.check_keys(label, entry, DIR_KEYS)
            read_only = entry.get("read_only", False)
            if not isinstance(read_only, bool):
                self.wrong_type(label, "read_only", read_only, "true or false")
            path = entry.get("path")
            if path is None:
                self.error(label, 'path is missing (the Linux directory to export, e.g. path = "/srv/rtos")')
                continue
            if not isinstance(path, str):
                self.wrong_type(label, "path", path, "a string")
                continue
            problem = path_problem(path)
            if problem is not None:
                self.error(label, f"path {path!r} {problem}")
                continue
            clash = self.overlap(path, dirs, numbers)
            if clash is not None:
                self.error(label, clash)
                continue
            dirs.append(ServiceDir(path, read_only is True))
            numbers.append(i)
        return dirs

    @staticmethod
    def overlap(path: str, dirs: list[ServiceDir], numbers: list[int]) -> str | None:
        """Why `path` cannot be exported beside `dirs` (one export would hold another), or None."""
        for other, n in zip(dirs, numbers, strict=True):
            if path == other.path:
                return f"path {path!r} is already services dir #{n + 1}"
            if inside(path, other.path):
                return (
                    f"path {path!r} is inside services dir #{n + 1} ({other.path!r}), which exports it "
                    "already: leave one of them out"
                )
            if inside(other.path, path):
                return (
                    f"path {path!r} holds services dir #{n + 1} ({other.path!r}), which it would export "
                    "again: leave one of them out"
                )
        return None

    def load_log(self, ctx: str, table: dict[str, Any], dirs: list[ServiceDir]) -> str:
        value = table.get("log", LOG_OFF)
        if not isinstance(value, str):
            self.wrong_type(ctx, "log", value, 'a string ("off", "syslog" or "file:/PATH")')
            return LOG_OFF
        if value in (LOG_OFF, LOG_SYSLOG):
            return value
        if not value.startswith(LOG_FILE_PREFIX):
            self.error(
                ctx,
                f'log {value!r} is not a log destination ("off", "syslog", or "file:/PATH": a file in Linux)',
            )
            return LOG_OFF
        path = value.removeprefix(LOG_FILE_PREFIX)
        problem = path_problem(path)
        if problem is not None:
            self.error(ctx, f"log file path {path!r} {problem}")
            return LOG_OFF
        for n, d in enumerate(dirs):
            if path == d.path:
                self.error(ctx, f"log file {path!r} is services dir #{n + 1}, a directory")
            elif d.read_only and inside(path, d.path):
                self.error(
                    ctx,
                    f"log file {path!r} is inside services dir #{n + 1} ({d.path!r}), which is read-only: "
                    "choose a path outside it, or make the directory writable",
                )
        return value

    def check_partitions(self, ctx: str, drafts: list[PartDraft]) -> None:
        """One rtos partition (whose threads use the services) and one Linux partition (which offers them,
        its V-Bus device carrying their channels)."""
        for kind, role in (
            (KIND_RTOS, "the services are for an rtos partition's threads"),
            (KIND_LINUX, "Linux offers the services, over the V-Bus device in its partition"),
        ):
            found = [d.name or f"#{d.index + 1}" for d in drafts if d.kind == kind]
            if not found:
                self.error(ctx, f"no partition of kind '{kind}': {role}")
            elif len(found) > 1:
                self.error(
                    ctx,
                    f"the system has {len(found)} partitions of kind '{kind}' ({', '.join(found)}); "
                    f"[services] needs exactly one ({role})",
                )
