"""vldcompare: vld-compare, one workload replayed on every disk mode and a
report (report.md, report.html) comparing them.

cli.py reads the command line; jobs.py plans the runs (one `vld-bench
replay` per workload, drive preset and mode) and runs them; runs.py loads
what a run wrote; plots.py draws; report.py writes the report. Installed by
``cmake --install`` under share/vld/python beside vldplot (whose stats
loader it uses), with the ``vld-compare`` launcher in bin (tools/compare/).
"""
