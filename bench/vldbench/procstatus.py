"""The memory fields of /proc/PID/status, in KiB, as JSON (bench-recovery's
memory per GiB exported).

usage: python3 -m vldbench.procstatus PID OUT.json
"""
import sys

from .common import write_json

KEYS = ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "VmSize", "Threads")


def parse_status(text):
    """{field: value} for KEYS in the text of /proc/PID/status (KiB, or a count)."""
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k in KEYS:
            out[k] = int(v.split()[0])
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    with open(f"/proc/{argv[0]}/status") as f:
        write_json(argv[1], parse_status(f.read()))


if __name__ == "__main__":
    main()
