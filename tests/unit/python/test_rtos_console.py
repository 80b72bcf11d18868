"""Common console lines: boot line, system off, fatal error reports, selftest results."""

from __future__ import annotations

from types import SimpleNamespace

from rtmux.formats import rtos_console


def test_boot_line() -> None:
    m = rtos_console.boot_line("junk\nrtos: rtmux rtos 0.1.0-3-gabc entered at EL1\n")
    assert m is not None and m["version"] == "0.1.0-3-gabc" and m["el"] == "1"
    assert rtos_console.boot_line("rtos: rtmux rtos entered at EL1\n") is None


def test_system_off() -> None:
    assert rtos_console.has_system_off("a\r\nrtos: system off\r\n")
    assert not rtos_console.has_system_off("rtos: system offline\n")


def test_fatal(consoles: SimpleNamespace) -> None:
    fatal = rtos_console.find_fatal(consoles.fault)
    assert fatal is not None
    assert fatal.reason == "data abort at EL1"
    assert fatal.esr == 0x96000045 and fatal.far == 8 and fatal.elr == 0x40081234
    assert fatal.thread == "faulter" and fatal.halted
    assert "faulter" in fatal.describe() and "ESR=0x96000045" in fatal.describe()
    assert rtos_console.find_fatal(consoles.selftest_ok) is None


def test_fatal_without_register_line() -> None:
    fatal = rtos_console.find_fatal("FATAL: stack overflow\nrtos: system halted after fatal error\n")
    assert fatal is not None and fatal.reason == "stack overflow" and fatal.thread is None
    assert fatal.describe() == "stack overflow"


def test_survived_fatal_reports_do_not_count() -> None:
    text = (
        "FATAL: undefined instruction\n"
        "FATAL: ESR=0x2000000 FAR=0x0 ELR=0x40084610 thread=undef\n"
        "FATAL: thread undef killed by the fault hook; system continues\n"
        "fault_kills_thread: OK\n"
        "FATAL: data abort\n"
        "FATAL: SP=0x4008f0c0 LR=0x40087368\n"
        "FATAL: ESR=0x96000005 FAR=0x100000000 ELR=0x400801c4 thread=faulter\n"
        "rtos: system halted after fatal error\n"
    )
    reports = rtos_console.fatal_reports(text)
    assert [(r.reason, r.thread, r.halted) for r in reports] == [
        ("undefined instruction", "undef", False),
        ("data abort", "faulter", True),
    ]
    fatal = rtos_console.find_fatal(text)
    assert fatal is not None and fatal.thread == "faulter" and fatal.far == 0x100000000
    assert rtos_console.find_fatal(text.replace("rtos: system halted after fatal error\n", "")) is None


def test_halt_without_fatal_line() -> None:
    fatal = rtos_console.find_fatal("rtos: system halted after fatal error\n")
    assert fatal is not None and fatal.halted


def test_selftest_ok(consoles: SimpleNamespace) -> None:
    report = rtos_console.parse_selftest(consoles.selftest_ok)
    assert report.announced == 2
    assert report.has_summary and report.passed == 2 and report.failed == 0
    assert [r.name for r in report.results] == ["prio_order", "mutex_pi_chain"]
    assert report.failures == []


def test_selftest_fail(consoles: SimpleNamespace) -> None:
    report = rtos_console.parse_selftest(consoles.selftest_fail)
    assert report.passed == 1 and report.failed == 1
    assert report.failures == [rtos_console.TestResult("mutex_pi_chain", False, "owner prio 5, expected 30")]


def test_selftest_without_summary() -> None:
    report = rtos_console.parse_selftest("selftest: 3 tests\nprio_order: OK\n")
    assert not report.has_summary and report.passed is None


def test_demo_reports_tagged_and_bare() -> None:
    line = (
        "demo: t=3s control loop 3000 cycles, 221 overruns, set-point 10 mm, position 10119 um, "
        "worst wake-up 3015.680 us, checksum unchanged"
    )
    text = f"[linux] {line}\n[rtos] {line}\n[rtos] demo: running; Ctrl-A x leaves QEMU\n"
    want = rtos_console.DemoReport(t_s=3, cycles=3000, overruns=221, worst_us=3015.68, checksum="unchanged")
    assert rtos_console.demo_reports(text) == [want]
    assert rtos_console.demo_reports(text, tag="linux") == [want]
    changed = line.replace("unchanged", "CHANGED")
    assert rtos_console.demo_reports(changed + "\n", tag=None)[0].checksum == "CHANGED"
    # QEMU stopped in the middle of a report: its cut line is no report (it once read as checksum "u")
    assert rtos_console.demo_reports(f"{text}[rtos] {line[:-8]}") == [want]
    assert rtos_console.demo_reports(f"[rtos] {line}") == []
    assert rtos_console.demo_reports(text, tag=None) == []  # tagged lines are not bare ones
