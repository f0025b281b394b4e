"""vld-bench replay's own speed: requests per second of host time, and the
peak memory of the process, over synthetic traces of growing length.

A synthetic trace is a fio v3 iolog written by synthetic_lines(): random
4 KiB requests over the first UTIL of the export, WRITE_PERCENT of them
writes, a sync after every FLUSH_EVERY writes, arriving GAP_MS apart on
average (exponential gaps, so some are long enough for idle work). It is
piped into `vld-bench replay -`, so the trace never lands on disk and the
generator runs on the other core.

For each (length, timing): the summary's requests_per_host_s (the replay
loop alone: the aging before it is not counted) and the child's peak RSS
(ru_maxrss from wait4), in one table. Flat memory: the peak at 10 million
requests is the peak at 100 thousand, give or take the allocator.

Then each trace given with --traces, on vld, inplace and lld, closed loop:
its requests per second of host time (traces.md).

usage: python3 -m vldbench.replay_speed --vld-bench PATH --out DIR
           [--requests 100000,1000000,10000000] [--timings open,closed]
           [--mode vld] [--geometry st19101] [--size 256M] [--util 80]
           [--traces T.log.gz ...]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import threading

from .common import write_json, write_table


def synthetic_lines(n, export_blocks, write_percent=70, flush_every=4, gap_ms=5.0, seed=1):
    """The lines of a fio v3 iolog of n requests (flushes included); fio v3
    stamps each line in microseconds."""
    rng = random.Random(seed)
    yield "fio version 3 iolog\n"
    t_ms, writes, made = 0.0, 0, 0
    while made < n:
        t_ms += rng.expovariate(1.0 / gap_ms)
        off = rng.randrange(export_blocks) * 4096
        if rng.randrange(100) < write_percent:
            yield f"{int(t_ms * 1000)} syn write {off} 4096\n"
            writes += 1
            made += 1
            if writes % flush_every == 0 and made < n:
                yield f"{int(t_ms * 1000)} syn sync\n"
                made += 1
        else:
            yield f"{int(t_ms * 1000)} syn read {off} 4096\n"
            made += 1


def feed(pipe, lines):
    try:
        buf = []
        for line in lines:
            buf.append(line)
            if len(buf) == 4096:
                pipe.write("".join(buf))
                buf = []
        pipe.write("".join(buf))
    except BrokenPipeError:
        pass
    finally:
        try:
            pipe.close()
        except BrokenPipeError:
            pass


def run_one(vld_bench, n, timing, args):
    """(summary, peak RSS in KiB) of one replay of a synthetic trace."""
    cmd = [vld_bench, "replay", "-", "--format", "fio-v3", "--mode", args.mode,
           "--geometry", args.geometry, "--size", args.size, "--util", str(args.util)]
    if timing == "closed":
        cmd.append("--closed-loop")
    size_blocks = parse_size(args.size) // 4096
    region = int(size_blocks * args.util / 100)
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    t = threading.Thread(target=feed, args=(p.stdin, synthetic_lines(n, max(region, 1))))
    t.start()
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    t.join()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"replay_speed: {' '.join(cmd)} failed")
    return json.loads(out), usage.ru_maxrss


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def trace_rates(vld_bench, traces, args):
    """Markdown lines: each trace on each mode, closed loop, its host rate."""
    lines = ["| trace | mode | requests | requests/s (host) |", "|---|---|---:|---:|"]
    for trace in traces:
        for mode in ("vld", "inplace", "lld"):
            out = subprocess.run([vld_bench, "replay", trace, "--mode", mode, "--util",
                                  str(args.util), "--geometry", args.geometry, "--size",
                                  args.size, "--closed-loop"],
                                 check=True, capture_output=True, text=True).stdout
            j = json.loads(out)
            lines.append(f"| {os.path.basename(trace)} | {mode} | {j['requests']} | "
                         f"{j['requests_per_host_s']:.0f} |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(prog="vldbench.replay_speed", description=__doc__.split("\n")[0])
    ap.add_argument("--vld-bench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--requests", default="100000,1000000,10000000")
    ap.add_argument("--timings", default="open,closed")
    ap.add_argument("--mode", default="vld")
    ap.add_argument("--geometry", default="st19101")
    ap.add_argument("--size", default="256M")
    ap.add_argument("--util", type=float, default=80)
    ap.add_argument("--traces", nargs="*", default=[])
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for n in (int(x) for x in args.requests.split(",")):
        for timing in args.timings.split(","):
            summary, rss_kib = run_one(args.vld_bench, n, timing, args)
            rows.append({"requests": summary["requests"], "timing": timing,
                         "requests_per_host_s": summary["requests_per_host_s"],
                         "host_s": summary["host_s"], "peak_rss_mib": rss_kib / 1024,
                         "mean_us": summary["latency_us"]["mean"],
                         "idle_steps": summary["idle_steps"]})
            r = rows[-1]
            print(f"{r['requests']:>10} {timing:>6}: {r['requests_per_host_s']:>9.0f} requests/s, "
                  f"peak RSS {r['peak_rss_mib']:.0f} MiB", file=sys.stderr)
    write_json(os.path.join(args.out, "results.json"), rows)
    lines = ["| requests | timing | requests/s (host) | host s | peak RSS MiB | mean latency us |",
             "|---:|---|---:|---:|---:|---:|"]
    lines += [f"| {r['requests']} | {r['timing']} | {r['requests_per_host_s']:.0f} | "
              f"{r['host_s']:.1f} | {r['peak_rss_mib']:.0f} | {r['mean_us']:.0f} |" for r in rows]
    write_table(os.path.join(args.out, "table.md"), lines)
    print("\n".join(lines))
    if args.traces:
        lines = trace_rates(args.vld_bench, args.traces, args)
        write_table(os.path.join(args.out, "traces.md"), lines)
        print("\n".join(lines))


if __name__ == "__main__":
    main()
