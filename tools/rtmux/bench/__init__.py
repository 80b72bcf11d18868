"""`./rtmux bench`: the benchmark cases, their parallel runs, the Linux-side script, the report and plot."""
