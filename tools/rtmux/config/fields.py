"""Reading TOML values with every problem reported: sizes, addresses, typed getters, unknown keys."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rtmux.board import GIB, KIB, MIB

_SIZE_RE = re.compile(r"^\s*(0x[0-9a-f_]+|[0-9][0-9_]*)\s*(k|m|g|kib|mib|gib|kb|mb|gb)?\s*$", re.IGNORECASE)
_UNITS = {"k": KIB, "m": MIB, "g": GIB}


def parse_size(value: object) -> int:
    """ "16M", "512 KiB", "0x100_0000", 4096 -> bytes; ValueError otherwise (negative included)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(value)
    if isinstance(value, int):
        if value < 0:
            raise ValueError("is negative")
        return value
    m = _SIZE_RE.match(value)
    if not m:
        raise ValueError("is not a size (examples: 16M, 512K, 1G, 0x100_0000)")
    digits = m.group(1).replace("_", "").lower()
    number = int(digits, 16) if digits.startswith("0x") else int(digits, 10)
    unit = m.group(2)
    return number * (_UNITS[unit[0].lower()] if unit else 1)


def parse_address(value: object) -> int:
    """ "0x4800_0000", 1207959552 -> int; ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(value)
    if isinstance(value, int):
        if value < 0:
            raise ValueError("is negative")
        return value
    text = value.strip().replace("_", "")
    try:
        number = int(text, 16) if text.lower().startswith("0x") else int(text, 10)
    except ValueError:
        raise ValueError("is not an address (write it as hex, e.g. 0x4800_0000)") from None
    if number < 0:
        raise ValueError("is negative")
    return number


def type_name(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return "date/time"


def show(value: object) -> str:
    """A value as it appears in messages: strings quoted, tables and arrays abbreviated."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{...}"
    if isinstance(value, list):
        return "[...]"
    return str(value)


class Fields:
    """Collects the problems of one configuration file, each as `FILE: WHERE: MESSAGE`."""

    def __init__(self, where: str, path: Path) -> None:
        self.where = where
        self.path = path
        self.errors: list[str] = []
        self.notes: list[str] = []

    # ---- reporting
    def error(self, ctx: str, message: str) -> None:
        self.errors.append(f"{self.where}: {ctx}: {message}" if ctx else f"{self.where}: {message}")

    def check_keys(self, ctx: str, table: dict[str, Any], known: Iterable[str], prefix: str = "") -> None:
        known = list(known)
        for key in table:
            if key in known:
                continue
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f"did you mean '{prefix}{close[0]}'?" if close else "known keys: " + ", ".join(known)
            self.error(ctx, f"unknown key '{prefix}{key}' ({hint})")

    def wrong_type(self, ctx: str, key: str, value: object, expected: str) -> None:
        self.error(ctx, f"{key} must be {expected}, not {show(value)} ({type_name(value)})")

    def get_table(self, ctx: str, table: dict[str, Any], key: str) -> dict[str, Any] | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            self.wrong_type(ctx, key, value, "a table")
            return None
        return value

    def get_str(self, ctx: str, table: dict[str, Any], key: str, name: str | None = None) -> str | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.wrong_type(ctx, name or key, value, "a string")
            return None
        return value

    def get_size(self, ctx: str, value: object, name: str) -> int | None:
        try:
            return parse_size(value)
        except TypeError:
            self.wrong_type(ctx, name, value, 'a size (a string such as "16M", or an integer)')
        except ValueError as exc:
            self.error(ctx, f"{name} {show(value)} {exc}")
        return None

    def get_address(self, ctx: str, value: object, name: str) -> int | None:
        try:
            return parse_address(value)
        except TypeError:
            self.wrong_type(
                ctx, name, value, 'an address (a hex string such as "0x4800_0000", or an integer)'
            )
        except ValueError as exc:
            self.error(ctx, f"{name} {show(value)} {exc}")
        return None
