"""File and console formats, parsed and written without running anything: FDT, ELF, the rtos's latmus
console lines and histograms, cyclictest's histogram, latency statistics."""
