"""The console's focus view (`[console] view = "focus"`, what `make run` uses on a terminal): only the
focused partition's lines appear as they come; the others' are held, summed up by a status line every
10 s when their latest line changed, and all replayed, in order, when that partition gets the focus.
icount: the run repeats."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rtmux.formats.rtos_console import demo_reports
from rtmux.run import system
from tests.system.console_script import PROMPT, Script, run_to_end

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
STATUS = r"^\[rtos\] \(background: (\d+) lines held, Ctrl-T then 1 shows them\) (.*)$"
REPLAY = r"^rtmux: rtos: (\d+) lines it wrote in the background follow$"


def test_focus_view_holds_and_replays_the_background(tmp_path: Path) -> None:
    text = (
        (ROOT / "configs" / "qemu-virt.toml")
        .read_text()
        .replace("[console]\n", '[console]\nview = "focus"\n', 1)
    )
    config = tmp_path / "focus.toml"
    config.write_text(text)
    script = Script(
        [
            (PROMPT, "echo typed-$((6*7))\n"),
            (r"typed-42", ""),
            # 10 s of guest time: one status line for the held rtos output; then 40 s more in which a
            # status line comes only when the rtos's latest line (its RTD line, Linux idle) changed
            (STATUS, "sleep 40; echo slept-$((6*7))\n"),
            (r"slept-42", "\x141"),
            (REPLAY, ""),
            (r"^\[rtos\] demo: t=\d+s.*\n(.*\n)*?\[rtos\] demo: t=\d+s.*\n", "\x142"),  # live, then back
            (r"rtmux: console input now goes to linux\n", "echo back-$((6*7))\n"),
            (r"back-42", ""),
        ]
    )
    built = system.build(config, icount=True)
    r, why = run_to_end(built.argv, 240, script)
    out = r.console
    switch = out.index("rtmux: console input now goes to rtos")
    before, after = out[:switch], out[switch:]
    # while Linux had the focus no rtos line came through as it was written, only status lines
    assert demo_reports(before) == [], why
    status = re.findall(STATUS, before, re.MULTILINE)
    assert status and all(re.match(r"demo: t=|RTD\|", line) for _, line in status), why  # the latest held
    texts = [line for _, line in status]
    # the switch replays everything held, in order, no second missing, then the rtos goes on live
    replayed = int(re.findall(REPLAY, after, re.MULTILINE)[0])
    assert replayed >= int(status[0][0]), why
    ticks = [d.t_s for d in demo_reports(after)]
    assert ticks[:3] == [1, 2, 3] and ticks == list(range(1, len(ticks) + 1)), why
    # A status line only when the latest held line changed, and at most one per 10 s of guest time (the
    # demo's seconds, replayed, bound the time Linux had the focus). How many there are is not fixed: an
    # idle rtos's RTD line changes when a second's max does (the network's timers under -smp 2 do not
    # repeat exactly), so the bound is the pace, not a count.
    repeats = [a for a, b in zip(texts, texts[1:], strict=False) if a == b]
    assert not repeats, f"status lines repeat: {texts}{why}"
    assert len(texts) <= len(ticks) // 10 + 1, f"{len(texts)} status lines in {len(ticks)} s: {texts}{why}"
    assert re.search(r"^\[rtos\] rtos: rtmux rtos \S+ entered at EL1$", after, re.MULTILINE), why
