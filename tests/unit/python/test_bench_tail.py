"""`./rtmux bench linux-tail` (rtmux.bench.tail): median of per-boot maxima, pooled percentiles, targets,
its CSV and section, and the command line."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from rtmux import cli
from rtmux.bench import tail
from rtmux.errors import SetupError
from rtmux.formats import cyclictest


def hist(counts: dict[int, int], overflows: int = 0, max_us: int | None = None) -> cyclictest.Histogram:
    total = sum(counts.values())
    top = max(counts) if max_us is None else max_us
    avg = sum(c * n for c, n in counts.items()) // total
    return cyclictest.Histogram(dict(counts), total, min(counts), avg, top, overflows)


def case(definition: tail.CaseDef, hists: list[cyclictest.Histogram]) -> tail.CaseResult:
    return tail.CaseResult(definition, [tail.Boot(i + 1, h) for i, h in enumerate(hists)])


def test_median_odd_even_and_empty() -> None:
    assert tail.median([183, 120, 74]) == 120
    assert tail.median([10, 40, 20, 30]) == 25  # the two middle values' mean
    assert tail.median([7]) == 7
    with pytest.raises(ValueError):
        tail.median([])


def test_median_of_maxima_is_not_the_max_of_maxima() -> None:
    c = case(tail.RTMUX, [hist({5: 99, m: 1}) for m in (60, 200, 80, 70, 90)])
    assert c.maxima == [60, 200, 80, 70, 90]
    assert c.median_max == 80


def test_pool_adds_cells_and_overflows() -> None:
    p = tail.pool([hist({4: 10, 5: 2}), hist({5: 3, 9: 1}, overflows=2, max_us=30000)])
    assert p.counts == {4: 10, 5: 5, 9: 1}
    assert p.overflows == 2
    assert p.samples == 18
    assert p.max_us == 30000
    with pytest.raises(ValueError):
        tail.pool([])


def test_pooled_p999_uses_every_boots_samples() -> None:
    # Three boots of 1,000 samples, the long ones all in the third: the per-boot p99.9 (rank 999 of
    # 1,000) are 5, 5 and 50 us, their median 5; pooled, rank 2,997 of 3,000 falls among the long ones.
    c = case(tail.BARE, [hist({5: 1000}), hist({5: 1000}), hist({5: 996, 50: 4})])
    assert c.p999s == [5, 5, 50]
    assert c.median_p999 == 5
    assert c.pooled_p999 == (50.0, True)
    # and the other way round: long samples spread one or two per boot stay below the pooled p99.9
    d = case(tail.BARE, [hist({5: 1000}), hist({5: 998, 40: 1, 50: 1})])
    assert d.p999s == [5, 40]
    assert d.median_p999 == 22.5
    assert d.pooled_p999 == (5.0, True)


def test_pooled_quantile_nearest_rank_edges() -> None:
    p = tail.pool([hist({1: 999, 2: 1})])
    assert tail.pooled_quantile(p, 0.999) == (1.0, True)  # rank 999
    assert tail.pooled_quantile(p, 1.0) == (2.0, True)


def test_pooled_quantile_among_overflows_is_an_upper_bound() -> None:
    p = tail.pool([hist({4: 998}, overflows=2, max_us=25000)])
    assert tail.pooled_quantile(p, 0.999) == (25000.0, False)


def test_count_at_least_includes_overflows() -> None:
    assert tail.count_at_least({10: 3, 29: 1, 30: 2, 150: 1}, 0, 30) == 3
    assert tail.count_at_least({10: 3}, 4, 30) == 4


def test_targets_ratio_and_verdict() -> None:
    bare = case(tail.BARE, [hist({5: 999, m: 1}) for m in (100, 120, 140)])
    under = case(tail.RTMUX, [hist({5: 999, m: 1}) for m in (110, 130, 300)])
    median_t, p999_t = tail.targets(bare, under)
    assert (median_t.measured, median_t.bare) == (130, 120)
    assert median_t.ratio == pytest.approx(130 / 120)
    assert median_t.met  # 1.083 <= 1.1
    assert p999_t.met and p999_t.exact
    worse = case(tail.RTMUX, [hist({5: 999, m: 1}) for m in (140, 150, 160)])
    assert not tail.targets(bare, worse)[0].met  # 150 / 120 = 1.25


def test_seeds_start_at_the_benchmarks_own() -> None:
    assert tail.seeds_of(3) == [1, 2, 3]
    with pytest.raises(ValueError):
        tail.seeds_of(0)


def results() -> tail.TailResults:
    r = tail.TailResults(
        seeds=[1, 2],
        samples=1000,
        date=datetime(2026, 11, 27, 12, 0, tzinfo=UTC),
        qemu_version="QEMU emulator version 7.2",
        source="abc1234",
        kernel="6.1.0-56-arm64",
        wall_s=600,
    )
    r.cases[tail.BARE.id] = case(tail.BARE, [hist({4: 998, 20: 1, 120: 1}), hist({4: 999, 66: 1})])
    r.cases[tail.RTMUX.id] = case(tail.RTMUX, [hist({4: 998, 21: 1, 183: 1}), hist({4: 999, 90: 1})])
    return r


def test_csv_has_one_line_per_boot() -> None:
    lines = tail.render_csv(results()).splitlines()
    assert lines[0] == ",".join(tail.CSV_FIELDS)
    assert lines[1].startswith("linux-std-load,1,1000,4,")
    assert lines[1].split(",")[6] == "120"
    assert len(lines) == 5


def test_section_states_the_method_the_boots_and_the_verdicts(tmp_path: Path) -> None:
    out = tmp_path / "B.md"
    text = tail.render_section(results(), tmp_path / "B-linux-tail.csv", out)
    assert "| Linux std under rtmux, Linux load | 2 | 136.5 | 90 / 183 |" in text
    assert "| Linux std (bare, -smp 1), Linux load (max / p99.9) | 120 / 20 | 66 / 4 |" in text
    assert "nearest-rank" in text
    # median of maxima 136.5 vs 93 us: missed; pooled p99.9 (rank 1,998 of 2,000) 21 vs 20 us: met
    assert "136.5 vs 93 us = 1.47 x | **missed** |" in text
    assert "21 vs 20 us = 1.05 x | met |" in text


def test_write_all_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    out = tmp_path / "B.md"
    begin, end = tail.MARKERS
    out.write_text(f"# head\n\n{begin}\nold\n{end}\n\n## after\n", encoding="utf-8")
    written = tail.write_all(results(), out)
    text = out.read_text(encoding="utf-8")
    assert written == [out, tmp_path / "B-linux-tail.csv"]
    assert text.startswith("# head\n") and text.endswith("## after\n") and "old" not in text
    assert (tmp_path / "B-linux-tail.csv").is_file()


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "linux-tail", "--realtime"],
        ["bench", "--full", "--realtime"],
        ["bench", "linux-tail", "--full"],
        ["bench", "linux-tail", "--redraw"],
        ["bench", "--samples", "100"],
    ],
)
def test_cli_refuses_what_linux_tail_cannot_do(argv: list[str]) -> None:
    args = cli.build_parser().parse_args(argv)
    with pytest.raises(SetupError):
        args.func(args)


def test_cli_parses_seeds() -> None:
    args = cli.build_parser().parse_args(["bench", "linux-tail", "--seeds", "12", "--samples", "4000"])
    assert (args.part, args.seeds, args.full, args.samples) == ("linux-tail", 12, False, 4000)
    assert cli.build_parser().parse_args(["bench"]).seeds == tail.DEFAULT_SEEDS
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["bench", "linux-tail", "--seeds", "0"])
