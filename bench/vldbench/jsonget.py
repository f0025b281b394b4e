"""Print one value of a JSON file (a stats file, fio output) for a bash script.

usage: python3 -m vldbench.jsonget FILE KEY[.KEY...]
e.g.   python3 -m vldbench.jsonget stats.json geometry.platter_bytes
"""
import sys

from .common import load_json


def get(obj, dotted_key):
    """OBJ[k1][k2]... for DOTTED_KEY 'k1.k2...' (a number indexes a list)."""
    for k in dotted_key.split("."):
        obj = obj[int(k)] if isinstance(obj, list) else obj[k]
    return obj


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    print(get(load_json(argv[0]), argv[1]))


if __name__ == "__main__":
    main()
