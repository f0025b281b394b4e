"""Live runs: a workload against the vld plugin served by a real nbdkit,
summarized in the keys of `vld-bench replay`'s summary ("timing": "live"),
so that a replay of a trace can be set beside the run it models.

Each run serves a new image in OUT_DIR with nbdkit (latency=sleep unless
told otherwise, statsfile=OUT_DIR/stats.json, stats_interval=1), runs the
workload, stops nbdkit with SIGTERM and waits, so that the plugin writes its
stats file a last time (docs/stats.md), and writes OUT_DIR/summary.json.

util (a percent, as vld-bench replay's --util) > 0 ages the disk first, in
a server of its own that is stopped before the measured one starts (so the
stats file holds only the workload): the first util% of size bytes are written once, sequentially, with fio (1 MiB
requests of fio's default non-zero buffers, latency=none). That is a disk
that was filled once, not the Figure 8 warm-up of `vld-bench replay --util`
(fill plus random updates); say which when comparing.

The summary's numbers come from the stats file, so they are what the plugin
measured: latencies are simulated service times (docs/stats.md), which are
replay's completion - arrival only when requests do not queue (one client
at queue depth 1). Percentiles of "latency_us" (all requests) are read from
the merged histograms (within 6.25%); the per-kind ones are the file's own.
Thread-compatible: each call owns its OUT_DIR and its nbdkit.
"""
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
FUSE_ATTACH = REPO / "scripts" / "fuse-attach"
KINDS = ("read", "write", "flush", "trim", "zero")
PLURAL = {"read": "reads", "write": "writes", "flush": "flushes", "trim": "trims", "zero": "zeroes"}
LLD_DEFAULT_NVRAM_BYTES = 1 << 20  # the plugin's nvram= default


class LiveError(RuntimeError):
    """A live run could not be made (nbdkit, fio, mount...); one line."""


def plugin_path():
    """The plugin: $VLD_PLUGIN, or the build's (build/, then build-dev/)."""
    env = os.environ.get("VLD_PLUGIN")
    if env:
        return pathlib.Path(env)
    for build in ("build", "build-dev"):
        p = REPO / build / "plugin" / "nbdkit-vld-plugin.so"
        if p.exists():
            return p
    return REPO / "build" / "plugin" / "nbdkit-vld-plugin.so"


def missing_tools():
    """Why live runs cannot be made here, or None: nbdkit, fio or the plugin absent."""
    for tool in ("nbdkit", "fio"):
        if shutil.which(tool) is None:
            return f"no {tool} in PATH"
    if not plugin_path().exists():
        return f"no plugin at {plugin_path()} (scripts/build, or set VLD_PLUGIN)"
    return None


def mode_params(mode):
    """(plugin parameters, NVRAM bytes) for a mode name: vld, inplace, lld
    (the plugin's default NVRAM) or lld-nvram0 (mode=lld nvram=0)."""
    if mode in ("vld", "inplace"):
        return [f"mode={mode}"], 0
    if mode == "lld":
        return ["mode=lld"], LLD_DEFAULT_NVRAM_BYTES
    if mode == "lld-nvram0":
        return ["mode=lld", "nvram=0"], 0
    raise ValueError(f"mode {mode!r}: want vld, inplace, lld or lld-nvram0")


def size_bytes(size):
    """SIZE as the plugin reads it (a number with an optional K, M, G suffix)."""
    m = re.fullmatch(r"(\d+)([KMG]?)", str(size).strip().upper())
    if not m:
        raise ValueError(f"size {size!r}: want bytes or a number with K, M or G")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


class Server:
    """nbdkit serving the plugin on a unix socket in the foreground; stop()
    sends SIGTERM and waits, the plugin's clean close."""

    def __init__(self, out_dir, params, name):
        # A unix socket's path has at most 107 bytes: a directory of its own
        # under the system's temporary directory, not out_dir, which may be deep.
        self.sock_dir = pathlib.Path(tempfile.mkdtemp(prefix="vld-compare-"))
        self.sock = self.sock_dir / f"{name}.sock"
        self.log = out_dir / f"{name}.nbdkit.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                ["nbdkit", "-f", "-U", str(self.sock), str(plugin_path()), *params],
                stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 30
        while not self.sock.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise LiveError(f"nbdkit did not start: {self.last_log_line()}")
            time.sleep(0.05)

    @property
    def uri(self):
        return f"nbd+unix:///?socket={self.sock}"

    def last_log_line(self):
        lines = self.log.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else "(no output)"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise LiveError("nbdkit did not exit within 120 s of SIGTERM")
        shutil.rmtree(self.sock_dir, ignore_errors=True)
        if self.proc.returncode not in (0, -signal.SIGTERM):
            raise LiveError(f"nbdkit exited with {self.proc.returncode}: {self.last_log_line()}")


def run(cmd, what, **kw):
    """Runs CMD; a failure is a LiveError naming WHAT and its last line."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        tail = r.stdout.strip().splitlines()[-1:] or ["(no output)"]
        raise LiveError(f"{what} failed (status {r.returncode}): {tail[0]}")
    return r.stdout


def disk_params(out_dir, mode, preset, size):
    params, _ = mode_params(mode)
    return [f"file={out_dir / 'disk.img'}", f"size={size}", f"geometry={preset}", *params]


def age(out_dir, disk, size, util):
    """Writes the first util percent of size bytes once, sequentially (see
    the module doc), in a server of its own (latency=none), stopped before
    returning."""
    fill = int(size_bytes(size) * util / 100) // (1 << 20) * (1 << 20)
    if fill <= 0:
        return
    server = Server(out_dir, [*disk, "latency=none"], "fill")
    try:
        run(["fio", "--name=fill", "--ioengine=nbd", f"--uri={server.uri}", "--rw=write",
             "--bs=1M", f"--size={fill}", "--iodepth=1", "--output-format=terse"], "the fill")
    finally:
        server.stop()


def fio_job_file(job_file, uri, out_path):
    """The user's job file with the target replaced: a [global] section with
    ioengine=nbd and uri= first, and the job file's own ioengine=, uri=,
    filename= and directory= lines dropped (fio's job sections override
    global options, so they could not be overridden otherwise)."""
    drop = re.compile(r"\s*(ioengine|uri|filename|directory)\s*=")
    lines = [line for line in pathlib.Path(job_file).read_text().splitlines()
             if not drop.match(line)]
    out_path.write_text("\n".join(["[global]", "ioengine=nbd", f"uri={uri}", *lines]) + "\n")
    return out_path


def measured(out_dir, disk, latency):
    """The measured server: statsfile=OUT_DIR/stats.json, one line a second."""
    stats = out_dir / "stats.json"
    return Server(out_dir, [*disk, f"latency={latency}", f"statsfile={stats}",
                            "stats_interval=1"], "live")


def run_fio(job_file, mode, preset, size, util, out_dir, latency="sleep"):
    """Runs fio's JOB_FILE against a new disk through fio's nbd engine
    (host_s: fio's run); writes OUT_DIR/summary.json (and fio.json,
    stats.json) and returns the summary."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    disk = disk_params(out_dir, mode, preset, size)
    age(out_dir, disk, size, util)
    server = measured(out_dir, disk, latency)
    try:
        job = fio_job_file(job_file, server.uri, out_dir / "job.fio")
        started = time.monotonic()
        run(["fio", "--output-format=json", f"--output={out_dir / 'fio.json'}", str(job)], "fio")
        host_s = time.monotonic() - started
    finally:
        server.stop()
    return finish(out_dir, mode, preset, util, latency, host_s,
                  {"experiment": "live-fio", "workload": str(job_file)})


def run_fs(fs, cmd, mode, preset, size, util, out_dir, latency="sleep", mkfs_opts=()):
    """Makes file system FS on a new disk (not measured), then mounts it
    through scripts/fuse-attach (nbdfuse + a loop device) and runs the shell
    command CMD in the mount point (MNT exported), unmounts and detaches;
    that is measured (host_s: from the mount to the end of the unmount). Needs root and FUSE. Writes OUT_DIR/summary.json and
    returns the summary."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    disk = disk_params(out_dir, mode, preset, size)
    age(out_dir, disk, size, util)
    # mkfs without discard: it would trim the aged blocks away.
    nodiscard = {"xfs": ["-K"]}.get(fs, ["-E", "nodiscard"])
    with attached(out_dir, disk, "latency=none", "mkfs") as loop:
        run([f"mkfs.{fs}", "-q", *nodiscard, *mkfs_opts, loop], f"mkfs.{fs}")
    mnt = out_dir / "mnt"
    mnt.mkdir(exist_ok=True)
    with attached(out_dir, disk, None, "live", latency) as loop:
        started = time.monotonic()
        run(["mount", loop, str(mnt)], "mount")
        try:
            run(["bash", "-c", cmd], "the command", cwd=mnt, env={**os.environ, "MNT": str(mnt)})
        finally:
            run(["umount", str(mnt)], "umount")
        host_s = time.monotonic() - started
    return finish(out_dir, mode, preset, util, latency, host_s,
                  {"experiment": "live-fs", "workload": cmd, "fs": fs})


class attached:
    """A server (the measured one when extra is None) attached as a loop
    device with scripts/fuse-attach up DIR --socket; on exit, fuse-attach
    down, then the server is stopped."""

    def __init__(self, out_dir, disk, extra, name, latency="none"):
        self.out_dir, self.state = out_dir, out_dir / f"{name}.attach"
        self.server = (measured(out_dir, disk, latency) if extra is None
                       else Server(out_dir, [*disk, extra], name))

    def __enter__(self):
        try:
            out = run([str(FUSE_ATTACH), "up", str(self.state), "--socket", str(self.server.sock)],
                      "fuse-attach up")
        except LiveError:
            self.server.stop()
            raise
        return out.strip().splitlines()[-1]

    def __exit__(self, *exc):
        try:
            run([str(FUSE_ATTACH), "down", str(self.state)], "fuse-attach down")
        finally:
            self.server.stop()
        return False


def merged_latency(stats):
    """Mean, p50, p99, max over every read, write and flush (the per-kind
    histograms added bucket by bucket; percentiles interpolated in a bucket)."""
    parts = [stats.get(f"{k}_latency_us") or {} for k in ("read", "write", "flush")]
    parts = [p for p in parts if p.get("count")]
    if not parts:
        return {"mean": 0.0, "p50": 0.0, "p99": 0.0, "max": 0.0}
    if len(parts) == 1:
        return {k: parts[0][k] for k in ("mean", "p50", "p99", "max")}
    total = sum(p["count"] for p in parts)
    buckets = {}
    for p in parts:
        for low, high, count in p.get("histogram", []):
            buckets[(low, high)] = buckets.get((low, high), 0) + count
    return {"mean": sum(p["mean"] * p["count"] for p in parts) / total,
            "p50": percentile(sorted(buckets.items()), total, 0.50),
            "p99": percentile(sorted(buckets.items()), total, 0.99),
            "max": max(p["max"] for p in parts)}


def percentile(buckets, total, q):
    """The q quantile of sorted ((low, high), count) buckets holding TOTAL."""
    want, seen = q * total, 0
    for (low, high), count in buckets:
        if seen + count >= want:
            return low + (high - low) * (want - seen) / count
        seen += count
    return buckets[-1][0][1] if buckets else 0.0


def write_amplification(stats):
    """The mode's own figure (vld: compactor.write_amplification; lld:
    lld.write_amplification), else physical blocks per client block."""
    for section in ("compactor", "lld"):
        wa = (stats.get(section) or {}).get("write_amplification")
        if wa is not None:
            return wa
    block = stats["geometry"]["block_bytes"]
    client_blocks = stats.get("bytes_written", 0) / block
    return stats.get("physical_writes", 0) / client_blocks if client_blocks else 0.0


def summary_from_stats(stats, mode, preset, util, latency, host_s):
    """The replay summary's keys that the plugin's stats file gives."""
    req = stats["requests"]
    counts = {PLURAL[k]: req.get(k, 0) for k in KINDS}
    total = sum(counts.values())
    writes = counts["writes"]
    breakdown = dict(stats.get("breakdown_us") or {})
    if breakdown:
        breakdown["locate"] = sum(breakdown.get(k, 0) for k in ("seek", "head_switch", "rotation"))
    lld = stats.get("lld") or {}
    _, nvram_bytes = mode_params(mode)
    mode_report = {k: stats[k] for k in ("vld", "compactor", "lld") if k in stats}
    return {
        "timing": "live", "mode": stats.get("mode"), "nvram_bytes": nvram_bytes, "latency": latency,
        "disk": {"geometry": preset, "export_bytes": stats["geometry"].get("export_bytes"),
                 "util": util},
        "requests": total, **counts, "interrupted": False,
        "sim_s": stats.get("simulated_time_us", 0) / 1e6, "host_s": host_s,
        "requests_per_host_s": total / host_s if host_s else 0.0,
        "iops": total / host_s if host_s else 0.0,
        "latency_us": merged_latency(stats),
        **{f"{k}_latency_us": {n: (stats.get(f"{k}_latency_us") or {}).get(n, 0)
                               for n in ("mean", "p50", "p99", "max")}
           for k in ("read", "write", "flush")},
        "breakdown_us": breakdown,
        "nvram_us": lld.get("nvram_ms", 0) * 1e3 / writes if writes else 0.0,
        "client_bytes_written": stats.get("bytes_written", 0),
        "physical_blocks_written": stats.get("physical_writes", 0),
        "write_amplification": write_amplification(stats),
        "idle_steps": stats.get("idle_steps", 0),
        "idle_busy_ms": stats.get("idle_busy_us", 0) / 1e3,
        "mode_report": mode_report,
    }


def finish(out_dir, mode, preset, util, latency, host_s, head):
    stats_path = out_dir / "stats.json"
    if not stats_path.exists():
        raise LiveError(f"nbdkit wrote no stats file at {stats_path}")
    stats = json.loads(stats_path.read_text())
    summary = {**head, **summary_from_stats(stats, mode, preset, util, latency, host_s)}
    (out_dir / "summary.json").write_text(json.dumps(summary) + "\n")
    return summary
