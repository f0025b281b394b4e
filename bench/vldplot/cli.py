"""vld-plot's command line: one subcommand per kind of picture.

Exit status: 0 drawn, 1 the input or the output was refused (one line on
stderr saying which and why), 2 usage error (argparse's).
"""
import argparse
import sys

from vldplot import layout

PROG = "vld-plot"


class Refused(Exception):
    """An input that cannot be drawn or an output that cannot be written:
    the message is the whole line vld-plot prints."""


class Formatter(argparse.HelpFormatter):
    """argparse's help with "Usage:" capitalised, as help2man (the man
    page is made from --help) and CLI11's tools have it."""

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, prefix or "Usage: ")


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
    return top


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
