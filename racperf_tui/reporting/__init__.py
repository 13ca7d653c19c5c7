"""Reports of recorded runs: one file a vendor or a change board reads without racperf
(``racperf report``, the Runs tab's ``e``; docs/REPORT.md).

Between orchestration (the comparison it includes) and commands/ui: contents gathers what the
store holds, figures prints figures in full, orion_maxima finds where ORION's maxima were
reached, charts draws SVG (pygal), render lays it out (Jinja2) and writes the file.
"""
