"""rtmux.run.path: attribution of an exec trace to functions and stages."""

from __future__ import annotations

import pytest

from rtmux.errors import RtmuxError
from rtmux.run import path

NM = """\
0000000040000000 T _start
0000000040001000 T k_irq_handle
0000000040001100 T k_timer_isr
0000000040001200 t k_reschedule.part.0
0000000040001300 T arch_switch
0000000040001400 T rt_time_now
0000000040001500 T thread_a
0000000040001600 T rt_sem_give
0000000040002000 T arch_vectors
0000000040002800 t irq_entry
"""


def line(pc: int) -> str:
    return f"Trace 0: 0x7f0000000000 [0000000000000000/{pc:016x}/00000061/ff020201] \n"


def syms() -> path.Symbols:
    return path.Symbols.from_nm(NM)


def test_symbols_name_the_function_holding_a_pc() -> None:
    s = syms()
    assert s.name(0x40001104) == "k_timer_isr"
    assert s.name(0x40002804) == "irq_entry"
    assert s.name(0x3FFFFFFF) == "?"
    assert s.address("arch_vectors") == 0x40002000
    with pytest.raises(RtmuxError):
        s.address("missing")


def test_a_block_logged_twice_in_a_row_is_one_instruction() -> None:
    pcs = path.parse_pcs([line(0x40002280), line(0x40002280), line(0x40002800), "noise\n", line(0x40002280)])
    assert pcs == [0x40002280, 0x40002800, 0x40002280]


def test_timer_path_runs_from_the_irq_vector_to_the_counter_read() -> None:
    vec = 0x40002000 + path.IRQ_VECTOR_OFFSET
    run = [0x40000000, vec, 0x40002800, 0x40002804, 0x40001000, 0x40001100, 0x40001104, 0x40001200,
           0x40001300, 0x40001400, 0x40000000]  # fmt: skip
    b = path.timer_path(run, syms())
    assert b.total == 8
    assert b.functions == {"arch_vectors": 1, "irq_entry": 2, "k_irq_handle": 1, "k_timer_isr": 2,
                           "k_reschedule.part.0": 1, "arch_switch": 1}  # fmt: skip
    stages = b.stages()
    assert stages["vector entry and register save"] == 3
    assert stages["timer queue"] == 2
    assert stages["scheduler"] == 1  # a GCC clone counts as its function
    assert sum(stages.values()) == b.total


def test_a_second_interrupt_before_the_thread_runs_is_not_a_path() -> None:
    vec = 0x40002000 + path.IRQ_VECTOR_OFFSET
    with pytest.raises(RtmuxError):
        path.timer_path([vec, 0x40001000, vec, 0x40001000], syms())


def test_switch_round_is_between_two_gives_of_thread_a() -> None:
    a, give, sw = 0x40001500, 0x40001600, 0x40001300
    run = [a, give, sw, a, give, sw, sw, a, give, sw, a, give]
    b = path.switch_round(run, syms())
    assert b.functions == {"rt_sem_give": 1, "arch_switch": 2, "thread_a": 1}
    with pytest.raises(RtmuxError):
        path.switch_round([a, give], syms())
