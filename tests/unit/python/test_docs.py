"""The documentation's examples against what the code says and prints, so that they cannot drift.

docs/configuration.md: the full example is configs/qemu-virt.toml; each row of the error table is the
`# expect:` line of a file under tests/unit/python/configs/ (whose errors test_config.py checks against
the tools), and each message of the list below the table is one that test_config.py checks; the escape
key's help line is the hypervisor's. README.md: the Debian packages are tools/deps.sh's. Every file
named NAME.md exists. (The sample `./rtmux check` output needs the built images: tests/system/
test_config.py.)
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from rtmux import paths

ROOT = paths.REPO_ROOT
CONFIGURATION_MD = ROOT / "docs" / "configuration.md"
BAD_CONFIGS = sorted((ROOT / "tests" / "unit" / "python" / "configs").glob("bad-*.toml"))


def _section(text: str, heading: str) -> str:
    """The section of a Markdown text from `heading` to the next heading of its level."""
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}\n")
    end = text.find(f"\n{level} ", start + len(heading) + 2)
    return text[start : end if end >= 0 else len(text)]


def _expected_errors(path: Path) -> list[str]:
    return [line.split("# expect: ", 1)[1] for line in path.read_text().splitlines() if "# expect: " in line]


def _error_table() -> list[tuple[str, str]]:
    """(class, message) of each row of configuration.md's error table."""
    rows = []
    for line in _section(CONFIGURATION_MD.read_text(), "## Errors").splitlines():
        m = re.fullmatch(r"\| ([^|]+) \| (``?)(.+?)\2 \|", line)
        if m is not None and m[1] != "class":
            rows.append((m[1], m[3].strip()))
    return rows


def test_full_example_is_the_default_configuration() -> None:
    text = _section(CONFIGURATION_MD.read_text(), "## Full example (the default system)")
    m = re.search(r"```toml\n(.*?)```", text, re.S)
    assert m is not None
    assert tomllib.loads(m[1]) == tomllib.loads((ROOT / "configs" / "qemu-virt.toml").read_text())


def test_error_table_rows_are_the_test_files_errors() -> None:
    """One row per file under tests/unit/python/configs/, its message exactly one the file expects."""
    rows = _error_table()
    assert len(rows) == len(BAD_CONFIGS), [c for c, _ in rows]
    by_message = {e: p.name for p in BAD_CONFIGS for e in _expected_errors(p)}
    unknown = [(c, m) for c, m in rows if m not in by_message]
    assert unknown == [], "rows whose message no tests/unit/python/configs/bad-*.toml expects"
    assert sorted(by_message[m] for _, m in rows) == [p.name for p in BAD_CONFIGS]


def _tested_messages() -> list[str]:
    """Every string test_config.py compares errors with (an f-string's fields as `{}`)."""
    tree = ast.parse((ROOT / "tests" / "unit" / "python" / "test_config.py").read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            found.append(
                "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)  # type: ignore[misc]
            )
    return found


def _other_errors() -> list[str]:
    """The messages listed after the error table ("Others: `...`; `...`."), on one line each."""
    section = _section(CONFIGURATION_MD.read_text(), "## Errors")
    others = section[section.index("\nOthers: ") :]
    return [" ".join(m.split()) for m in re.findall(r"`([^`]+)`", others)]


@pytest.mark.parametrize("message", _other_errors())
def test_other_errors_are_tested_messages(message: str) -> None:
    """Each of them (`...` standing for any text) is part of a message test_config.py checks."""
    pattern = re.compile(".*".join(re.escape(part.strip()) for part in message.split("...")))
    assert any(pattern.search(" ".join(t.split())) for t in _tested_messages()), message


def test_escape_help_line_is_the_hypervisors() -> None:
    """What escape followed by another key prints (hyp/core/conmux.c), as configuration.md quotes it."""
    source = (ROOT / "hyp" / "core" / "conmux.c").read_text()
    call = source[source.index('"\\nrtmux: escape then') :]
    literals = re.findall(r'"((?:[^"\\]|\\.)*)"', call[: call.index(";")])
    line = "".join(literals).replace("\\n", "").replace("%u", "N")
    assert line.startswith("rtmux: escape then 1..N chooses the partition")
    doc = " ".join(CONFIGURATION_MD.read_text().split())
    assert f"`{line}`" in doc


def test_readme_lists_the_packages_deps_installs() -> None:
    script = (ROOT / "tools" / "deps.sh").read_text()
    m = re.search(r"^packages=\((.*?)\)", script, re.S | re.M)
    assert m is not None
    installed = sorted(m[1].split())
    readme = " ".join((ROOT / "README.md").read_text().split())
    listed = re.search(r"the Debian packages `([^`]+)`", readme)
    assert listed is not None
    assert sorted(listed[1].split()) == installed


def test_named_markdown_files_exist() -> None:
    """A NAME.md that a document or a configuration's comment points to is in the repository (a report a
    command writes under build/ is not: a clean checkout has none)."""
    sources = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "configs").glob("*")),
    ]
    missing = []
    for source in sources:
        for name in set(re.findall(r"(?<![\w/.-])(\w[\w./-]*\.md)\b", source.read_text())):
            if name.startswith("build/"):
                continue
            if not any((base / name).is_file() for base in (ROOT, ROOT / "docs", source.parent)):
                missing.append(f"{paths.display(source)}: {name}")
    assert missing == []
