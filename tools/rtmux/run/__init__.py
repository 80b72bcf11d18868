"""Booting under QEMU: the rtos alone, Linux alone, and the whole rtmux system of a configuration."""
