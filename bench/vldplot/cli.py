"""vld-plot's command line: one subcommand per kind of picture.

Exit status: 0 drawn, 1 the input or the output was refused (one line on
stderr saying which and why), 2 usage error (argparse's).
"""
import argparse
import sys

from vldplot import layout, stats

PROG = "vld-plot"


class Refused(Exception):
    """An input that cannot be drawn or an output that cannot be written:
    the message is the whole line vld-plot prints."""


class Formatter(argparse.HelpFormatter):
    """argparse's help with "Usage:" capitalised, as help2man (the man
    page is made from --help) and CLI11's tools have it, and every
    subcommand's description on its name's line, where help2man finds it."""

    def add_usage(self, usage, actions, groups, prefix=None):
        # argparse makes a subcommand's prog from its parent's usage with
        # prefix "": only None means "the default prefix".
        super().add_usage(usage, actions, groups, "Usage: " if prefix is None else prefix)

    def add_argument(self, action):
        super().add_argument(action)
        # argparse sizes the name column without the subcommands' extra
        # indent, so a name longer than the column's 8 characters went on
        # a line of its own, and help2man took the description for an item.
        if isinstance(action, argparse._SubParsersAction):
            for sub in action._get_subactions():
                self._action_max_length = max(self._action_max_length,
                                              len(sub.metavar or sub.dest) + self._current_indent + 4)


def parser(version=None):
    """The argument parser; its --help is also the man page's source."""
    top = argparse.ArgumentParser(
        prog=PROG, formatter_class=Formatter,
        description="Draw what vld's tools report, with matplotlib (PNG files, no display).",
        epilog="Exit status: 0 drawn; 1 an input could not be read or drawn, or the "
               "output could not be written (one line on stderr); 2 usage error. "
               "See vld-plot SUBCOMMAND --help.")
    top.add_argument("--version", action="version",
                     version=f"{PROG} {version or 'unknown (run from the source tree)'}")
    top._optionals.title = "Options"  # help2man makes "Options:" the OPTIONS section
    sub = top.add_subparsers(dest="command", metavar="SUBCOMMAND", required=True)
    lay = sub.add_parser(
        "layout", formatter_class=Formatter, help="a picture of an image's platters from vld-inspect --json",
        description="Draw the platters of a vld image from the \"layout\" section of "
                    "`vld-inspect --json IMAGE`: cylinders across, heads down (each head's "
                    "row split by angle), every cell coloured by what most of its sectors "
                    "hold, with the title, axes, scale and legend vld-inspect computed. "
                    "`vld-inspect --layout FILE.png IMAGE` runs this.",
        epilog="Example: vld-inspect --json disk.img > disk.json && "
               "vld-plot layout disk.json -o disk.png")
    lay.add_argument("input", metavar="INSPECT.json",
                     help="vld-inspect --json output (or its \"layout\" object); - reads stdin")
    lay.add_argument("-o", "--output", metavar="OUT.png", required=True,
                     help="the PNG to write")
    lay.add_argument("--dpi", type=int, default=100, help="resolution (default 100)")
    lay.set_defaults(run=run_layout)
    add_stats_commands(sub)
    return top


# The pictures of a run (vldplot.stats): subcommand -> (figure function,
# whether it takes --op/--size, what it draws).
STATS_FIGURES = {
    "latency": (stats.figure_over_time, "op",
                "latency over time (mean and p99 per interval) above the drive's busy share "
                "and its idle work (compactor, cleaner), from each stats file's PATH.jsonl"),
    "cdf": (stats.figure_cdf, "op+size", "the latency CDF of each run, from its histogram"),
    "histogram": (stats.figure_histogram, "op+size",
                  "the latency histogram of each run (the fixed buckets of docs/stats.md)"),
    "breakdown": (stats.figure_breakdown, "",
                  "where a write's time goes, paper 001's Figure 9: overhead, seek, head "
                  "switch, rotation and transfer stacked, one bar per run"),
}
STATS_INPUT_HELP = ("a stats file (statsfile= of nbdkit-vld-plugin, or vld-bench --stats), "
                    "its PATH.jsonl read too if present; or a PATH.jsonl alone")


def add_stats_commands(sub):
    for name, (_, takes, what) in STATS_FIGURES.items():
        cmd = sub.add_parser(
            name, formatter_class=Formatter, help=what,
            description=f"Draw {what}. Several stats files are drawn side by side, one colour "
                        "each, labelled by vld-bench's label or by mode and drive.",
            epilog=f"Example: vld-bench table2 --writes 5000 --stats t2.json "
                   f"--stats-interval 0.5 && vld-plot {name} t2.json t2.2.json -o {name}.png")
        cmd.add_argument("inputs", metavar="STATS.json", nargs="+", help=STATS_INPUT_HELP)
        cmd.add_argument("-o", "--output", metavar="OUT.png", required=True,
                         help="the PNG to write")
        cmd.add_argument("--label", action="append", default=[], metavar="TEXT",
                         help="a run's label in the legend, in the order of the inputs "
                              "(repeat; default: vld-bench's label, or mode and drive)")
        if "op" in takes:
            cmd.add_argument("--op", choices=stats.OPS, default="write",
                             help="which requests (default write)")
        if "size" in takes:
            cmd.add_argument("--size", choices=stats.SIZE_CLASSES,
                             help="only this request size class (reads and writes): 4k (at "
                                  "most 4096 bytes), 64k (up to 65536), larger")
        cmd.add_argument("--dpi", type=int, default=100, help="resolution (default 100)")
        cmd.set_defaults(run=run_stats_figure, figure=name)
    show = sub.add_parser(
        "show", formatter_class=Formatter, help="print stats files for a person (no picture)",
        description="Print each stats file as a few lines: the drive, the requests, latency "
                    "per operation, where a write's time goes, what opening the image did "
                    "(recovery) and the checksum failures, the same for every mode, and its "
                    "time series if any.")
    show.add_argument("inputs", metavar="STATS.json", nargs="+", help=STATS_INPUT_HELP)
    show.set_defaults(run=run_show)


def load_runs(paths, labels=()):
    if len(labels) > len(paths):
        raise Refused(f"{len(labels)} --label for {len(paths)} stats files")
    runs = []
    for i, path in enumerate(paths):
        try:
            runs.append(stats.load_run(path, labels[i] if i < len(labels) else None))
        except OSError as e:
            raise Refused(f"{path}: cannot read it ({e.strerror})") from e
        except ValueError as e:
            raise Refused(str(e)) from e
    return runs


def run_stats_figure(args):
    runs = load_runs(args.inputs, args.label)
    draw, takes, _ = STATS_FIGURES[args.figure]
    kwargs = {}
    if "op" in takes:
        kwargs["op"] = args.op
    if "size" in takes and args.size:
        if args.op == "flush":
            raise Refused("--size applies to reads and writes, not flushes")
        kwargs["size"] = args.size
    try:
        fig = draw(runs, **kwargs)
    except ValueError as e:
        raise Refused(str(e)) from e
    try:
        fig.savefig(args.output, dpi=args.dpi)
    except OSError as e:
        raise Refused(f"{args.output}: cannot create it ({e.strerror or e})") from e


def run_show(args):
    print("\n".join(stats.describe(r) for r in load_runs(args.inputs)))


def run_layout(args):
    name = "standard input" if args.input == "-" else args.input
    try:
        if args.input == "-":
            section = layout.load(sys.stdin)
        else:
            with open(args.input, encoding="utf-8") as f:
                section = layout.load(f)
    except OSError as e:
        raise Refused(f"{name}: cannot read it ({e.strerror})") from e
    except ValueError as e:
        raise Refused(f"{name}: {e}") from e
    try:
        layout.draw(section, args.output, dpi=args.dpi)
    except OSError as e:
        raise Refused(f"{args.output}: cannot create it ({e.strerror or e})") from e


def main(argv=None, version=None):
    """Runs vld-plot; returns the exit status."""
    args = parser(version).parse_args(argv)
    try:
        args.run(args)
    except Refused as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"{PROG}: needs matplotlib for /usr/bin/python3 (python3-matplotlib): {e}",
              file=sys.stderr)
        return 1
    return 0
