"""Runs a POSIX conformance suite's tests as rtos applications (`make posix-conformance SUITE=DIR`).

The suite is the Open POSIX Test Suite (part of the Linux Test Project); the user extracts it and names
its root. Each test of the interfaces asked for is built with the rtos SDK, booted bare on QEMU `virt` in
icount mode, one at a time, and classified; the report (CSV and Markdown) goes to build/. No code of the
suite is kept here: this package only finds, builds, boots and counts (docs/posix.md, "Conformance").
"""
