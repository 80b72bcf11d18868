"""Parsing of the latmus-format latency records, CTX| lines and the gnuplot histogram file."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from rtmux.formats import latmus
from rtmux.formats.latmus import LatmusFormatError


def test_parse_latency_good(consoles: SimpleNamespace) -> None:
    report = latmus.parse_latency(consoles.latency(samples=3000))
    assert report.header.period_us == 1000
    assert report.header.load is False
    assert report.header.elapsed_s == 1
    assert len(report.intervals) == 3
    assert report.intervals[0] == latmus.RtdLine(0.0, 0.014, 1.192, 0, 0, 0.0, 1.192)
    assert report.summary.lat_max == pytest.approx(1.192)
    assert report.summary.elapsed_s == 3 and report.summary.requested_s == 3
    assert report.histogram.samples == 3000
    assert report.histogram.counts == {0: 2998, 1: 2}
    assert report.histogram.cell_us == 1 and report.histogram.cells == 1000


def test_parse_latency_crlf_and_free_text(consoles: SimpleNamespace) -> None:
    text = "booting...\n" + consoles.latency(load=True, crlf=True).replace("RTH|", "unknown key foo\nRTH|", 1)
    report = latmus.parse_latency(text)
    assert report.header.load is True


def test_repeated_headers_are_accepted(consoles: SimpleNamespace) -> None:
    text = consoles.latency(samples=3000)
    rtt = next(line for line in text.splitlines() if line.startswith("RTT|"))
    text = text.replace(consoles.sep, f"{rtt}\n{consoles.rth}\n{consoles.sep}")
    assert len(latmus.parse_latency(text).intervals) == 3


@pytest.mark.parametrize(
    "line",
    [
        "RTD|      0.000|      0.014|      0.192|       0|     0|      0.000",  # 6 columns
        "RTD|      0.00|      0.014|      0.192|       0|     0|      0.000|      0.192",  # 2 decimals
        "RTD|      0.000|      0.014|      0.192|      -1|     0|      0.000|      0.192",  # negative count
        "RTD|      0.000|      0.014|      0.192|       0|     0|      0.000|      0.192|",  # trailing column
        "RTD|      abc|      0.014|      0.192|       0|     0|      0.000|      0.192",
        "RTD|      0.300|      0.014|      0.192|       0|     0|      0.000|      0.192",  # min > avg
        "RTD|      0.000|      0.014|      0.192|       0|     0|      0.500|      0.192",  # best > worst
    ],
)
def test_bad_rtd(line: str) -> None:
    with pytest.raises(LatmusFormatError, match="RTD"):
        latmus.parse_rtd(line, 7)


def test_negative_latency_is_a_valid_figure() -> None:
    rtd = latmus.parse_rtd("RTD|     -0.250|      0.014|      0.192|       0|     0|     -0.250|      0.192")
    assert rtd.lat_min == -0.25


@pytest.mark.parametrize(
    "line",
    [
        "RTS|      0.000|      0.014|      0.192|       0|     0|    00:00:10",
        "RTS|      0.000|      0.014|      0.192|       0|     0|    00:00:10/00:00:1",
        "RTS|      0.000|      0.014|      0.192|       0|     0|    00:61:10/00:00:10",
        "RTS|      0.000|      0.014|      0.192|       0|    00:00:10/00:00:10",
    ],
)
def test_bad_rts(line: str) -> None:
    with pytest.raises(LatmusFormatError):
        latmus.parse_rts(line, 3)


def test_error_names_line_number_and_text(consoles: SimpleNamespace) -> None:
    text = consoles.latency().replace("RTD|      0.000", "RTD|      0.0", 1)
    with pytest.raises(LatmusFormatError) as info:
        latmus.parse_latency(text)
    assert info.value.line_no == 4
    assert "console line 4" in str(info.value) and "RTD|      0.0|" in str(info.value)


def test_bad_rth(consoles: SimpleNamespace) -> None:
    text = consoles.latency().replace("--lat worst", "--lat wrst")
    with pytest.raises(LatmusFormatError, match="RTH"):
        latmus.parse_latency(text)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t: t.replace("HSE|\n", ""), "HSE"),
        (lambda t: t.replace("HSD| 1 2\n", ""), "add up to 2998"),
        (lambda t: t.replace("HSD| 1 2\n", "HSD| 1 2\nHSD| 1 2\n"), "increasing"),
        (lambda t: t.replace("HSD| 1 2\n", "HSD| 1000 2\n"), "beyond"),
        (lambda t: t.replace("HSD| 1 2\n", "HSD| 1 0\nHSD| 2 2\n"), "empty cell"),
        (lambda t: t.replace("HSD| 1 2\n", "HSD| 1\n"), "HSD"),
        (lambda t: "\n".join(x for x in t.splitlines() if not x.startswith("RTS|")), "RTS"),
        (lambda t: "\n".join(x for x in t.splitlines() if not x.startswith("RTT|")), "RTT"),
        (lambda t: "\n".join(x for x in t.splitlines() if not x.startswith("RTD|")), "RTD"),
        (lambda t: "\n".join(x for x in t.splitlines() if not x.startswith("HS")), "HSH"),
        (
            lambda t: t.replace("HSE|", "HSE|\nRTD|      0.000|      0.014|      0.192|       0|     0|"),
            "after",
        ),
        (lambda t: t.replace("HSH| 1 us cells", "HSH| 1 us cell"), "HSH"),
        (lambda t: t.replace("RTH|", "RTX| what\nRTH|"), "unknown record"),
        (lambda t: t.replace("HSE|", "HSE| x"), "HSE"),
    ],
)
def test_malformed_latency(consoles: SimpleNamespace, mutate, message: str) -> None:
    with pytest.raises(LatmusFormatError, match=message):
        latmus.parse_latency(mutate(consoles.latency()))


def test_rtd_after_summary_is_refused(consoles: SimpleNamespace) -> None:
    text = consoles.latency()
    rtd = next(line for line in text.splitlines() if line.startswith("RTD|"))
    text = text.replace("HSH|", f"{rtd}\nHSH|")
    with pytest.raises(LatmusFormatError, match="after the RTS"):
        latmus.parse_latency(text)


def test_ctx_good(consoles: SimpleNamespace) -> None:
    ctx = latmus.parse_ctxsw(consoles.ctx_ok)
    assert ctx == latmus.CtxLine(20000, 3840000, 192.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rtos: system off\n", "no CTX"),
        ("CTX| switches 20000 total_ns 3840000 ns_per_switch 192.00\n", "malformed"),
        ("CTX| switches 20000 total_ns 3840000 ns_per_switch 191.000\n", "total_ns / switches"),
        ("CTX| switches 0 total_ns 0 ns_per_switch 0.000\n", "0 switches"),
        (
            "CTX| switches 2 total_ns 4 ns_per_switch 2.000\n" * 2,
            "more",
        ),
        ("RTD| 1\n", "unexpected record"),
    ],
)
def test_ctx_bad(text: str, message: str) -> None:
    with pytest.raises(LatmusFormatError, match=message):
        latmus.parse_ctxsw(text)


@pytest.mark.parametrize(
    ("duration", "period", "samples"),
    [
        (10, 1000, 10000),
        (3, 1000, 3000),
        (1, 100, 10000),
        (0.5, 1000, 500),
        (0.0015, 1000, 2),
        (2.5, 333, 7508),
    ],
)
def test_samples_for_duration(duration: float, period: int, samples: int) -> None:
    assert latmus.samples_for_duration(duration, period) == samples


@pytest.mark.parametrize(("duration", "period"), [(0, 1000), (-1, 1000), (1, 0), (0.0001, 1000)])
def test_samples_for_duration_refuses(duration: float, period: int) -> None:
    with pytest.raises(ValueError):
        latmus.samples_for_duration(duration, period)


def test_write_histogram(tmp_path: Path, consoles: SimpleNamespace) -> None:
    report = latmus.parse_latency(consoles.latency(samples=3000, counts={0: 2990, 1: 7, 5: 3}))
    out = tmp_path / "sub" / "hist.dat"
    started = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=1)))
    latmus.write_histogram(
        out, report, started=started, period_us=1000, mode="icount (test)", load=True, command="qemu ..."
    )
    text = out.read_text()
    header_lines = [line for line in text.splitlines() if line.startswith("#")]
    data_lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert text.splitlines()[: len(header_lines)] == header_lines, "all comments come first"
    assert data_lines == ["0 2990", "1 7", "5 3"]
    header, counts = latmus.read_histogram_file(out)
    assert header["test started on"] == "2025-01-02 03:04:05 +0100 (host clock)"
    assert header["sampling period"] == "1000 us"
    assert header["QEMU mode"] == "icount (test)"
    assert header["min latency"] == "0.000 us"
    assert header["avg latency"] == "0.014 us"
    assert header["max latency"] == "1.192 us"
    assert header["sample count"] == "3000"
    assert header["load"] == "on"
    assert sum(counts.values()) == 3000


def test_read_histogram_file_refuses_garbage(tmp_path: Path) -> None:
    bad = tmp_path / "bad.dat"
    bad.write_text("# x: y\n1 2 3\n")
    with pytest.raises(LatmusFormatError, match="cell count"):
        latmus.read_histogram_file(bad)
