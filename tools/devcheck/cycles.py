"""Fail when source files of one image depend on each other in a cycle.

A file depends on another when its object file references a symbol (function or data) that the other's
object file defines. Static inline functions in headers create no reference: a header-only helper is a
leaf by construction. Reads the object files that make up one image (ELF symbol tables, with
pyelftools); folders are searched for *.o, and names are reported relative to --root:

    python -m devcheck.cycles --name hypervisor --root build/hyp build/hyp
    python -m devcheck.cycles --name demo --root build/rtos build/rtos/rtos build/rtos/lib

Exit status 1 and one report per cycle (the files, and the symbols each uses of the next) if any.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.elffile import ELFFile


@dataclass(frozen=True)
class ObjectSymbols:
    source: str  # the source file the object was built from, relative to the repository
    defined: frozenset[str]
    undefined: frozenset[str]


def read_object(path: Path, roots: Sequence[Path]) -> ObjectSymbols:
    """Global symbols an object defines and references (local ones cannot link files together)."""
    defined: set[str] = set()
    undefined: set[str] = set()
    with path.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")  # type: ignore[no-untyped-call]
        for sym in symtab.iter_symbols() if symtab is not None else ():
            if not sym.name or sym["st_info"]["bind"] not in ("STB_GLOBAL", "STB_WEAK"):
                continue
            (undefined if sym["st_shndx"] == "SHN_UNDEF" else defined).add(sym.name)
    return ObjectSymbols(source_of(path, roots), frozenset(defined), frozenset(undefined))


def source_of(obj: Path, roots: Sequence[Path]) -> str:
    """build/hyp/hyp/core/main.o -> hyp/core/main (the extension is not known from the object)."""
    for root in roots:
        if obj.is_relative_to(root):
            return str(obj.relative_to(root).with_suffix(""))
    return str(obj.with_suffix(""))


def object_files(paths: Iterable[Path]) -> list[Path]:
    found: set[Path] = set()
    for p in paths:
        found.update(p.rglob("*.o") if p.is_dir() else [p])
    return sorted(found)


def dependency_graph(objects: Iterable[ObjectSymbols]) -> dict[str, dict[str, set[str]]]:
    """graph[a][b] = the symbols source a uses from source b (a != b)."""
    objs = list(objects)
    owner: dict[str, str] = {}
    for o in objs:
        for name in o.defined:
            owner.setdefault(name, o.source)
    graph: dict[str, dict[str, set[str]]] = {o.source: {} for o in objs}
    for o in objs:
        for name in o.undefined:
            target = owner.get(name)
            if target is not None and target != o.source:
                graph[o.source].setdefault(target, set()).add(name)
    return graph


def strongly_connected(graph: Mapping[str, Mapping[str, object]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components of more than one node, each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, succ = work[-1]
            if succ:
                nxt = succ.pop(0)
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, {}))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def report(name: str, graph: Mapping[str, Mapping[str, set[str]]], cycles: Sequence[list[str]]) -> str:
    lines = []
    for members in cycles:
        lines.append(f"{name}: these files depend on each other in a cycle: {', '.join(members)}")
        inside = set(members)
        for a in members:
            for b, symbols in sorted(graph[a].items()):
                if b in inside:
                    lines.append(f"  {a} -> {b}: {', '.join(sorted(symbols))}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devcheck.cycles", description=__doc__.splitlines()[0])
    parser.add_argument("paths", type=Path, nargs="+", help="object files, or folders holding them")
    parser.add_argument(
        "--root", type=Path, action="append", default=[], help="folder the names start from (repeatable)"
    )
    parser.add_argument("--name", default="image", help="what the objects make up, for messages")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.paths if not p.exists()]
    paths = object_files(args.paths)
    if missing or not paths:
        print(
            f"{args.name}: no object files in {' '.join(missing or map(str, args.paths))}: build first",
            file=sys.stderr,
        )
        return 2
    objects = [read_object(p, args.root) for p in paths]
    graph = dependency_graph(objects)
    cycles = strongly_connected(graph)
    if cycles:
        print(report(args.name, graph, cycles), file=sys.stderr)
        return 1
    edges = sum(len(v) for v in graph.values())
    print(f"{args.name}: {len(objects)} files, {edges} dependencies, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
