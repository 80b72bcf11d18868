"""`python -m rtmux` (with tools/ on sys.path) is the same as `./rtmux`."""

from rtmux.cli import main

raise SystemExit(main())
