"""Loading raw outputs and writing results: what every benchmark module shares."""
import argparse
import csv
import json


def load_json(path):
    """The JSON object in PATH, skipping anything before its first '{'.

    fio prints notes and warnings ("note: both iodepth >= 1 and synchronous
    I/O engine ...") before its JSON when --output-format=json goes to a file;
    the plugin's stats files and vld-bench outputs have nothing before it.
    """
    with open(path) as f:
        text = f.read()
    start = text.find("{")
    if start < 0:
        raise ValueError(f"{path}: no JSON object")
    return json.loads(text[start:])


def load_jsonl(path):
    """One JSON object per non-empty line (vld-bench's output)."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def fio_job(path, index=0):
    """Job INDEX of the fio JSON output at PATH."""
    return load_json(path)["jobs"][index]


def fio_percentile_us(latency_ns, percent, missing=0.0):
    """fio's PERCENT percentile of a latency object (clat_ns, lat_ns), in µs.

    fio keys its percentiles as "99.000000"; a job that saw no I/O of that
    kind has none, and then MISSING is returned.
    """
    value_ns = latency_ns.get("percentile", {}).get(f"{float(percent):.6f}")
    return missing if value_ns is None else value_ns / 1e3


def fio_mean_us(latency_ns):
    """The mean of a fio latency object (clat_ns, lat_ns), in µs."""
    return latency_ns["mean"] / 1e3


def results_header(meta, command=None):
    """The first line of every table.md: the command, date, commit and
    whether the work tree had uncommitted changes."""
    command = command if command is not None else meta.get("command", "?")
    dirty = ", uncommitted changes" if meta.get("worktree_modified") else ""
    return f"`{command}` ({meta.get('date_utc', '?')}, commit {meta.get('commit', '?')}{dirty})"


def fmt(value, spec=".0f"):
    """VALUE formatted with SPEC, or '-' when there is none."""
    return "-" if value is None else format(value, spec)


def words(text):
    """A bash list passed as one argument ("st19101 hp97560") as a list."""
    return text.split()


def ints(text):
    """A bash list of integers passed as one argument ("50 80")."""
    return [int(x) for x in text.split()]


def floats(text):
    """A bash list of numbers passed as one argument ("0 20 100")."""
    return [float(x) for x in text.split()]


def load_run_meta(args, **extra):
    """RUN_DIR/meta.json (what bench_meta recorded) with the run id, the command
    and EXTRA parameters of ARGS (from run_parser) added, in that order."""
    meta = load_json(f"{args.run_dir}/meta.json")
    meta.update(run_id=args.run_id, command=args.command, **extra)
    return meta


def run_parser(prog, doc):
    """An argument parser for a module that reads one run directory: RUN_DIR,
    --run-id and --command (what the results header and meta record)."""
    ap = argparse.ArgumentParser(prog=prog, description=doc)
    ap.add_argument("run_dir")
    ap.add_argument("--run-id", required=True)
    ap.add_argument("--command", required=True, help="the command line, for the results header")
    return ap


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)


def write_csv(path, rows):
    """ROWS (dicts) as CSV, the columns in order of first appearance."""
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def write_table(path, lines):
    """The Markdown lines of a table.md, printed too."""
    text = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(text, end="")
