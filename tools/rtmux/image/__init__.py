"""What a boot needs, built on the host: the hypervisor's configuration blob, partition DTBs, the bundled
system image, Debian's packages, modules.dep, and the Linux initramfs."""
