"""`python -m racperf_tui` is the same as the `racperf` console script."""

from racperf_tui.cli import main

raise SystemExit(main())
