"""A fake `vld-bench replay` for vld-compare's tests: a script, written
into a test's directory, that answers as the replay contract does (one
JSON summary line on stdout, --stats PATH and PATH.jsonl) with the real
stats files of data/compare (made by data/compare/make-fixture), one per
mode. A trace whose name holds "bad" fails on mode=lld with NVRAM: one
line on stderr, exit status 1."""
import json
import os
import pathlib

FIXTURE = pathlib.Path(__file__).parent / "data" / "compare"
MODES = ("vld", "inplace", "lld", "lld-nvram0")
ERROR = "vld-bench: replay: bad.log line 3: an unknown operation 'X'"

SCRIPT = '''#!/usr/bin/python3
import shutil, sys
args = sys.argv[1:]
assert args[0] == "replay", args
trace = args[1]
opt = {args[i]: args[i + 1] for i in range(2, len(args) - 1) if args[i].startswith("--")}
mode = opt["--mode"]
if mode == "lld" and opt.get("--nvram") == "0":
    mode = "lld-nvram0"
if "bad" in trace and mode == "lld":
    print("reading the trace...", file=sys.stderr)
    print(ERROR, file=sys.stderr)
    sys.exit(1)
shutil.copy(f"{FIXTURE}/{mode}.stats.json", opt["--stats"])
shutil.copy(f"{FIXTURE}/{mode}.stats.json.jsonl", opt["--stats"] + ".jsonl")
sys.stdout.write(open(f"{FIXTURE}/{mode}.summary.json").read() + "\\n")
'''

def write_fake(directory):
    """The fake vld-bench in directory; its path."""
    path = os.path.join(directory, "vld-bench")
    with open(path, "w", encoding="utf-8") as f:
        f.write(SCRIPT.replace("{FIXTURE}", str(FIXTURE)).replace("ERROR", repr(ERROR)))
    os.chmod(path, 0o755)
    return path

def summary(mode):
    with open(FIXTURE / f"{mode}.summary.json", encoding="utf-8") as f:
        return json.load(f)

def trace(directory, name):
    """An (empty) trace file: the fake never reads it."""
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("")
    return path
