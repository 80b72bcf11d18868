"""formats/hypcost.py: the micro-benchmark guest's lines, bare and tagged, and the pairing of two runs."""

from __future__ import annotations

import pytest

from rtmux.formats import hypcost


def _console(tag: str, scale: float, done: bool = True) -> str:
    lines = [f"{tag}hypcost: start cpu=0x1 hz=62500000"]
    lines += [f"{tag}hypcost: {name} n=100 ns={(i + 1) * scale:.3f}" for i, name in enumerate(hypcost.NAMES)]
    return "\n".join(lines + ([f"{tag}hypcost: done"] if done else [])) + "\n"


def test_bare_and_tagged_runs_pair_up() -> None:
    bare = hypcost.parse(_console("", 1.0))
    under = hypcost.parse(_console("[linux] ", 3.5))
    costs = hypcost.costs(bare, under)
    assert [c.name for c in costs] == list(hypcost.NAMES)
    assert costs[1].bare_ns == 2.0 and costs[1].rtmux_ns == 7.0 and costs[1].cost_ns == 5.0
    assert all(c.what for c in costs)


def test_incomplete_run_refused() -> None:
    with pytest.raises(hypcost.HypCostFormatError, match="did not complete"):
        hypcost.parse(_console("", 1.0, done=False))
    text = _console("", 1.0).replace("hypcost: sgi-self", "hypcost: x-sgi-self")
    with pytest.raises(hypcost.HypCostFormatError):
        hypcost.parse(text)
    one_missing = "\n".join(x for x in _console("", 1.0).splitlines() if "gicd-read" not in x)
    with pytest.raises(hypcost.HypCostFormatError, match="gicd-read"):
        hypcost.parse(one_missing)
