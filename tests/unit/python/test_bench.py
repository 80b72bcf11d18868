"""./rtmux bench: section replacement, progress and remaining-time estimate, parallel runs, determinism."""

from __future__ import annotations

import io
import subprocess
import time
from pathlib import Path

import pytest

from rtmux.bench import linux_script, model, report, runner
from rtmux.bench.cases import Bench
from rtmux.bench.progress import Progress, estimate_remaining, plan_cost
from rtmux.errors import RtmuxError

BEGIN, END = "<!-- bench-icount:begin -->", "<!-- bench-icount:end -->"


def test_replace_section_keeps_other_content() -> None:
    text = f"# Title\n\nintro\n\n{BEGIN}\nold results\n{END}\n\n## Findings\n\nother section\n"
    new = report.replace_section(text, "new results\n", BEGIN, END)
    assert new == f"# Title\n\nintro\n\n{BEGIN}\nnew results\n{END}\n\n## Findings\n\nother section\n"
    assert report.replace_section(new, "new results", BEGIN, END) == new, "idempotent"


def test_replace_section_appends_when_absent() -> None:
    got = report.replace_section("# T\n\ntext\n\n\n", "body", BEGIN, END)
    assert got == f"# T\n\ntext\n\n{BEGIN}\nbody\n{END}\n"
    assert report.replace_section("", "body", BEGIN, END) == f"{BEGIN}\nbody\n{END}\n"


@pytest.mark.parametrize(
    "text",
    [f"{BEGIN}\nx\n", f"x\n{END}\n", f"{END}\n{BEGIN}\n", f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n"],
)
def test_replace_section_refuses_broken_markers(text: str) -> None:
    with pytest.raises(RtmuxError, match="by hand"):
        report.replace_section(text, "body", BEGIN, END)


def test_fmt_duration() -> None:
    assert model.fmt_duration(0) == "0:00"
    assert model.fmt_duration(61.4) == "1:01"
    assert model.fmt_duration(3725) == "1:02:05"
    assert model.fmt_duration(-3) == "0:00"


# ------------------------------------------------------------------------------------ remaining time


def test_estimate_remaining_one_job_adds_up() -> None:
    assert estimate_remaining([], [10, 20, 30], 1, 1.0) == 60
    assert estimate_remaining([(10, 4)], [20], 1, 1.0) == 26
    assert estimate_remaining([(10, 4)], [20], 1, 2.0) == 56, "measured speed scales predictions"


def test_estimate_remaining_parallel_slots() -> None:
    # Two slots: 100 and 50 running (30 s in); queued 60 then 10 go to the first free slot.
    assert estimate_remaining([(100, 30), (50, 30)], [60, 10], 2, 1.0) == 80
    assert estimate_remaining([], [60, 50, 40, 30], 2, 1.0) == 90
    assert estimate_remaining([], [], 2, 1.0) == 0
    # A run that overstays its prediction counts as about to end, not as negative time.
    assert estimate_remaining([(10, 50)], [], 1, 1.0) == 0
    with pytest.raises(ValueError):
        estimate_remaining([], [1], 0, 1.0)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_progress_lines_and_speed_correction() -> None:
    clock, out = Clock(), io.StringIO()
    p = Progress({"a": 10.0, "b": 30.0}, 1, out, clock=clock)
    p.say("2 QEMU runs")
    p.begin("a", "first case")
    clock.t += 20  # twice the prediction
    p.end("a", "min 1 max 2 us")
    assert p.speed() == 2.0
    p.begin("b", "second case")
    clock.t += 5
    p.say("phase")
    lines = out.getvalue().splitlines()
    assert lines[0] == "[bench 0:00 elapsed, ~0:40 left] 2 QEMU runs"
    assert lines[1] == "[bench 0:00 elapsed, ~0:40 left] case 1 of 2 started: first case"
    assert (
        lines[2]
        == "[bench 0:20 elapsed, ~1:00 left] case 1 of 2 done in 0:20 (1 of 2 finished): min 1 max 2 us"
    )
    assert lines[4] == "[bench 0:25 elapsed, ~0:55 left] phase"
    clock.t += 55
    p.end("b", "ok")
    assert out.getvalue().splitlines()[-1].startswith("[bench 1:20 elapsed, done] case 2 of 2 done in 1:00")
    assert p.running() == []


def test_progress_speed_is_bounded() -> None:
    clock = Clock()
    p = Progress({"a": 1.0}, 1, io.StringIO(), clock=clock)
    assert p.speed() == 1.0, "nothing finished yet: the model as it is"
    p.begin("a", "x")
    clock.t += 100
    p.end("a", "")
    assert p.speed() == 4.0


# ---------------------------------------------------------------------------------------- running


def _run(run_id: str, seconds: float, log: list[str], fail: bool = False) -> model.Run:
    def work(phase: object) -> model.RunOutput:
        log.append(f"start {run_id}")
        time.sleep(seconds)
        if fail:
            raise RtmuxError(f"{run_id} failed")
        log.append(f"end {run_id}")
        return model.RunOutput(summary=f"{run_id} ok")

    return model.Run(run_id, f"case {run_id}", seconds, work)


def test_execute_runs_longest_first_in_parallel() -> None:
    log: list[str] = []
    runs = [_run("short", 0.01, log), _run("long", 0.2, log), _run("mid", 0.05, log)]
    out = io.StringIO()
    progress = Progress({r.id: r.predicted_s for r in runs}, 2, out)
    outputs = runner.execute(runs, 2, progress)
    assert set(outputs) == {"short", "long", "mid"}
    assert log[:2] == ["start long", "start mid"]
    assert "case 2 of 3 started: case long" in out.getvalue()


def test_execute_one_job_keeps_the_order() -> None:
    log: list[str] = []
    runs = [_run("a", 0.0, log), _run("b", 0.01, log)]
    runner.execute(runs, 1, Progress({"a": 0.0, "b": 0.01}, 1, io.StringIO()))
    assert log == ["start a", "end a", "start b", "end b"]


def test_execute_raises_the_first_failure() -> None:
    log: list[str] = []
    runs = [_run("bad", 0.0, log, fail=True), _run("slow", 0.1, log)]
    aborted: list[bool] = []
    with pytest.raises(RtmuxError, match="bad failed"):
        runner.execute(
            runs,
            2,
            Progress({"bad": 1.0, "slow": 0.1}, 2, io.StringIO()),
            on_abort=lambda: aborted.append(True),
        )
    assert aborted == [True]


def test_execute_overall_timeout() -> None:
    log: list[str] = []
    aborted: list[bool] = []
    runs = [_run("slow", 0.5, log)]
    with pytest.raises(runner.BenchTimeout, match="limit of 0.05 s expired while case.s. 1 of 1 ran"):
        runner.execute(
            runs,
            1,
            Progress({"slow": 0.5}, 1, io.StringIO()),
            on_abort=lambda: aborted.append(True),
            timeout_s=0.05,
        )
    assert aborted == [True] and runner.BenchTimeout.exit_status == 124


def test_child_pids_lists_running_children() -> None:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        assert proc.pid in runner.child_pids()
    finally:
        proc.kill()
        proc.wait()
    assert proc.pid not in runner.child_pids()


def test_execute_heartbeat() -> None:
    log: list[str] = []
    out = io.StringIO()
    runs = [_run("slow", 0.3, log)]
    runner.execute(runs, 1, Progress({"slow": 0.3}, 1, out), heartbeat_s=0.05)
    assert "running case(s) 1 of 1" in out.getvalue()


# ------------------------------------------------------------------------------------- cost, records


def test_plan_cost() -> None:
    # Loaded guest time dominates in icount mode; the hold of an rtos partition run counts from the shell.
    plan = linux_script.Plan(1000, load=True, loaded=True, hold_until_s=2.8)
    assert plan_cost(True, plan, "rtmux") == pytest.approx(10.0 + 37.0 * (1.8 + 0.3))
    idle = linux_script.Plan(1000, hold_until_s=2.8)
    assert plan_cost(True, idle, "rtmux") == pytest.approx(10.0 + 0.6 * 1.8)
    hb = linux_script.Plan(10000, hackbench=True, idle=True, hackbench_loops=500)
    assert plan_cost(True, hb, "linux") == pytest.approx(5.0 + 37.0 * 0.6 + 0.6 * 10)
    assert plan_cost(False, hb, "linux") == pytest.approx(10.0 + 1.8 + 11.0)
    # icount runs every vCPU in one host thread: three loaded Linux CPUs cost three times the wall time
    assert plan_cost(True, plan, "rtmux", linux_cpus=3) == pytest.approx(10.0 + 37.0 * 3 * (1.8 + 0.3))
    assert plan_cost(False, plan, "rtmux", linux_cpus=3) == plan_cost(False, plan, "rtmux")


def test_bench_runs_and_plans_of_the_multi_cpu_case(tmp_path: Path) -> None:
    full = Bench(model.Options(data_dir=tmp_path), io.StringIO())
    quick = Bench(model.Options(quick=True, data_dir=tmp_path), io.StringIO())
    ids = [r.id for r in full.runs()]
    assert {"rtos-bare-cpus3", "linux-std-smp3", "rtmux-smp"} <= set(ids)
    assert not {"rtos-bare-cpus3", "linux-std-smp3", "rtmux-smp"} & {r.id for r in quick.runs()}
    plan = full.plans()["rtmux-smp"]
    assert plan.hackbench and plan.load and not plan.loaded
    assert plan.hackbench_loops == model.HACKBENCH_LOOPS_FULL
    samples = full.smp_rtos_samples()
    assert samples == model.SAMPLES_FULL + model.PARTITION_WARMUP + model.smp_extra_samples(500) == 13100
    assert plan.hold_until_s == pytest.approx(samples / 1000 + model.PARTITION_HOLD_MARGIN_S)
    assert full.smp_rtos_args() == f"period_us=1000 samples={samples}"
    assert full.plans()["linux-std-smp3"].phases == ["hackbench", "dump"]


def test_bench_runs_and_plans_of_the_files_case(tmp_path: Path) -> None:
    """Linux's files (issue 25): in quick and full runs, remote.c built with the run's sample count, Linux
    waiting for it with a bound that grows with the samples; its cost counts Linux's busy diod."""
    for quick, samples in ((False, model.SAMPLES_FULL), (True, model.SAMPLES_QUICK)):
        bench = Bench(model.Options(quick=quick, data_dir=tmp_path), io.StringIO())
        assert "rtmux-files" in [r.id for r in bench.runs()]
        plan = bench.plans()["rtmux-files"]
        assert plan.files is not None and plan.samples == samples
        assert plan.files.wait_s == pytest.approx(
            model.FILES_WAIT_BASE_S + model.FILES_WAIT_PER_SAMPLE_S * samples
        )
        assert plan.phases == ["files", "dump"]
    assert model.files_image(1000).parts[-2:] == ("linuxsvc", "remote-1000.img")
    plan = linux_script.Plan(1000, files=linux_script.FilesPlan(34.0))
    busy, idle, linux_busy = 1000 * (50e-6 + 1e-3) + 0.5, 1.0, 0.55 * (1.0 + 0.6)
    assert plan_cost(True, plan, "rtmux") == pytest.approx(10.0 + 6.0 * busy + 0.6 * idle + 37.0 * linux_busy)


def test_bench_data_folder_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative --data names a folder of the current directory, also for the control loop's image,
    which a make in examples/control-loop builds (it once landed there)."""
    monkeypatch.chdir(tmp_path)
    bench = Bench(model.Options(quick=True, data_dir=Path("rel")), io.StringIO())
    assert bench.data == tmp_path / "rel" / model.MODE_ICOUNT
    out = bench._control_make(2500)[-1]
    assert out == f"OUT={tmp_path / 'rel' / model.MODE_ICOUNT / 'control-loop' / 'rtos-2500'}"


def test_compare_records() -> None:
    a = ("RTS| 1", ("RTD| x",), ((0, 10),))
    assert model.compare_records("idle", a, a) == []
    b = ("RTS| 2", ("RTD| y",), ((0, 9), (1, 1)))
    diffs = model.compare_records("idle", a, b)
    assert len(diffs) == 3 and diffs[0].startswith("idle: RTS| lines differ")


def _outputs(quick: bool, idle: list[str], load: list[str]) -> dict[str, model.RunOutput]:
    """Three runs per kind, each told by its RTS| line alone."""

    def rec(rts: str) -> model.RunOutput:
        return model.RunOutput(records=(rts, ("RTD| x",), ((0, 1000),)))

    out: dict[str, model.RunOutput] = {}
    for kind, values in (("idle", idle), ("load", load)):
        keys = [f"rtos-bare-{kind}" if quick else f"repeat-{kind}-1", f"repeat-{kind}-2", f"repeat-{kind}-3"]
        out.update({k: rec(v) for k, v in zip(keys, values, strict=True)})
    return out


def test_determinism_three_runs() -> None:
    same = runner._determinism(_outputs(True, ["a", "a", "a"], ["b", "b", "b"]), True)
    assert same.identical and same.odd_runs == []
    assert report.determinism_verdict(same) == "identical"
    # one odd run out of three (QEMU's warp race) is told, and not counted against the code
    odd = runner._determinism(_outputs(False, ["a", "a2", "a"], ["b", "b", "b"]), False)
    assert odd.identical and len(odd.odd_runs) == 1
    assert odd.odd_runs[0].startswith("idle: run 2 of 3 differed from the two others (idle: RTS| lines")
    assert report.determinism_verdict(odd).startswith("identical but for one odd run")
    # no two runs agree: not identical, whatever the emulator
    bad = runner._determinism(_outputs(True, ["a", "a", "a"], ["b1", "b2", "b3"]), True)
    assert not bad.identical and bad.odd_runs == []
    assert report.determinism_verdict(bad).startswith("NOT identical: with its own load: RTS| lines differ")
    assert len(runner._determinism(_outputs(True, ["a1", "a", "a"], ["b", "b", "b2"]), True).odd_runs) == 2


def test_default_jobs() -> None:
    assert 1 <= runner.default_jobs() <= 8


def test_source_version() -> None:
    version = runner.source_version()
    assert version == "" or all(c.isalnum() or c in "-." for c in version)
