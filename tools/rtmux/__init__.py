"""Host tooling for rtmux: build, boot, test and measure the rtos and the hypervisor under QEMU."""

__version__ = "0.1.0"
