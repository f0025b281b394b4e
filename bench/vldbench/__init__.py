"""vldbench: what the benchmarks of vld compute, from the raw outputs of a run.

The bash scripts in scripts/ build the plugin, start and stop nbdkit, attach
devices and run fio or tools/vld-bench; they leave the raw outputs (fio JSON,
the plugin's stats files, vld-bench JSON lines) in a run directory. The
modules here turn a run directory into its results.json, results.csv,
table.md and plot, one module per figure or table of paper 001
(Wang, Anderson and Patterson, OSDI '99):

  fig2      Figure 2: locate time against the track-switch threshold
  fig8      Figure 8: random synchronous updates as the disk fills, vld, in
            place and lld (with and without NVRAM)
  modes     the curve labels: nbdkit parameters, spare= per drive, a point's
            region and warm-up
  locate    sections 2.1-2.2: simulated locate time beside models (1)-(4), (9)
  filltrack section 2.3's fill track under a fixed gap between commands: the
            allocator's greedy order beside the best an exhaustive search finds
  table2    Table 2 / Figure 9: the three drives after compaction
  fig10     Figure 10 beside Figure 11: bursts and idle time, the lld cleaner
            and vld's compactor
  fig11     Figure 11: bursts and idle time, the compactor on and off
  fs        sections 5.1-5.2: small files, large file, fio on a file system
  largefile section 5.2 at the block level: sequential reads after random writes
  fill, presets, pacing, hostcost, recovery, kernel_fsync: this project's own
            measurements (docs/benchmarks.md)
  report    all of them in one HTML and Markdown report

Shared ground: common (fio and stats loading, the results header, fmt),
plotting (matplotlib without a display), meta (the run's conditions).
"""
