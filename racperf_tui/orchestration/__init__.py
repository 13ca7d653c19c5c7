"""Orchestration: runs of tools on hosts. Above the tools (it loads them and plans with them),
below the commands and the UI (which call it). supervisor (the process that owns one run),
runs (launch, stop, follow, foreground), pair_runs (both ends of a network test), run_plan
(tool + config -> a judged Invocation)."""
