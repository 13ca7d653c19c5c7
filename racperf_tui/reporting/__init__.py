"""Reports of recorded runs: one file a vendor or a change board reads without racperf
(``racperf report``, the Runs tab's ``e``; docs/REPORT.md).

Between orchestration (the comparison it includes) and commands/ui: contents gathers what the
store holds (ORION's maxima and matrices from tools/orion/maxima.py), figures prints figures in
full, charts draws SVG (pygal), render lays it out (Jinja2) and writes the file.
"""
