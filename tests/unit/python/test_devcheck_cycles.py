"""tools/devcheck/cycles.py: finds files of one image that depend on each other, from object files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from devcheck import cycles


def obj(source: str, defined: set[str], undefined: set[str]) -> cycles.ObjectSymbols:
    return cycles.ObjectSymbols(source, frozenset(defined), frozenset(undefined))


def test_two_files_calling_each_other_are_a_cycle() -> None:
    graph = cycles.dependency_graph(
        [obj("a", {"fa"}, {"fb"}), obj("b", {"fb"}, {"fa", "memcpy"}), obj("c", {"fc"}, {"fa"})]
    )
    assert graph == {"a": {"b": {"fb"}}, "b": {"a": {"fa"}}, "c": {"a": {"fa"}}}
    assert cycles.strongly_connected(graph) == [["a", "b"]]
    assert "a -> b: fb" in cycles.report("img", graph, [["a", "b"]])


def test_a_longer_cycle_and_a_layered_graph() -> None:
    ring = cycles.dependency_graph([obj(n, {n}, {nxt}) for n, nxt in zip("pqrs", "qrsp", strict=True)])
    assert cycles.strongly_connected(ring) == [["p", "q", "r", "s"]]
    layered = cycles.dependency_graph(
        [obj("top", {"t"}, {"m", "b"}), obj("mid", {"m"}, {"b"}), obj("bot", {"b"}, set())]
    )
    assert cycles.strongly_connected(layered) == []


@pytest.mark.parametrize(("b_calls_a", "status"), [(True, 1), (False, 0)])
def test_real_objects(tmp_path: Path, b_calls_a: bool, status: int) -> None:
    (tmp_path / "a.c").write_text("void b(void); void a(void); void a(void) { b(); }\n")
    body = "a();" if b_calls_a else ""
    (tmp_path / "b.c").write_text(f"void a(void); void b(void); void b(void) {{ {body} }}\n")
    for name in ("a", "b"):
        subprocess.run(
            ["gcc", "-c", "-o", str(tmp_path / f"{name}.o"), str(tmp_path / f"{name}.c")], check=True
        )
    assert cycles.main(["--name", "t", "--root", str(tmp_path), str(tmp_path)]) == status


def test_missing_objects_are_an_error(tmp_path: Path) -> None:
    assert cycles.main(["--root", str(tmp_path), str(tmp_path / "nothing")]) == 2
