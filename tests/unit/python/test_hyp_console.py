"""Parsers of the hypervisor's console lines (rtmux.formats.hyp_console)."""

from rtmux.formats.hyp_console import el2_entries, mmio_accesses

CONSOLE = "\n".join(
    [
        "rtmux: partition linux stopped: powered off (PSCI)",
        "rtmux: el2-entries cpu=0 partition=rtos total=3 dabt=3 iabt=0 hvc=0 smc=0 sysreg=0 other=0 irq=0 "
        "serror=0 el2irq=0",
        "[linux] rtmux: el2-entries cpu=9 partition=fake total=1",
        "rtmux: el2-entries cpu=1 partition=linux total=40249 dabt=38871 iabt=0 hvc=7 smc=0 sysreg=24 "
        "other=0 irq=1347 serror=0 el2irq=0",
        "rtmux: el2-entries cpu=2 partition=broken",
    ]
)


def test_el2_entries_lines() -> None:
    got = el2_entries(CONSOLE)
    assert [(e.cpu, e.partition, e.total) for e in got] == [(0, "rtos", 3), (1, "linux", 40249)]
    assert got[1].counts["irq"] == 1347 and got[1].counts["dabt"] == 38871
    assert sum(v for k, v in got[1].counts.items() if k != "total") == got[1].total


def test_mmio_lines() -> None:
    text = "\n".join(
        [
            "rtmux: mmio partition=rtos uart=0 gicd=3 gicr=0",
            "[linux] rtmux: mmio partition=fake uart=1",
            "rtmux: mmio partition=linux uart=36738 gicd=328 gicr=32",
            "rtmux: mmio partition=broken uart=x",
        ]
    )
    got = mmio_accesses(text)
    assert [(m.partition, m.counts) for m in got] == [
        ("rtos", {"uart": 0, "gicd": 3, "gicr": 0}),
        ("linux", {"uart": 36738, "gicd": 328, "gicr": 32}),
    ]
