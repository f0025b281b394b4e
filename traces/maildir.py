#!/usr/bin/env python3
"""A mail server's delivery loop, the workload of traces/maildir.log.gz.

Each message is delivered as maildir delivers it (maildir(5), "How a
message is delivered"): written to tmp/, fsynced, renamed into new/, and the
directory fsynced so the rename is durable. A reader then takes the oldest
messages away (unlink, directory fsync) so that at most --keep stay. The
bodies are deterministic (the message number seeds them), so two runs write
the same bytes.

usage: maildir.py [DIR] [--messages N] [--keep K]
"""
import argparse
import os
import random
import sys


def fsync_dir(path):
    """Makes a rename or unlink in path durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def body(n):
    """Message n: headers and 1 to 8 KiB of text, the same for every run."""
    rng = random.Random(n)
    size = rng.randint(1024, 8192)
    words = [rng.choice("abcdefghijklmnopqrstuvwxyz") * rng.randint(1, 9) for _ in range(size // 5)]
    text = " ".join(words)[:size]
    return (f"From: sender{n % 17}@example.org\nTo: user@example.org\n"
            f"Subject: message {n}\n\n{text}\n").encode()


def deliver(root, n):
    """Writes message n to tmp/, fsyncs it, renames it into new/."""
    name = f"{n:06d}.vldtrace"
    tmp = os.path.join(root, "tmp", name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, body(n))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, os.path.join(root, "new", name))
    fsync_dir(os.path.join(root, "new"))
    return name


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir", nargs="?", default="Maildir")
    p.add_argument("--messages", type=int, default=1000)
    p.add_argument("--keep", type=int, default=50)
    a = p.parse_args(argv)
    if a.messages < 1 or a.keep < 1:
        p.error("--messages and --keep must be at least 1")
    for sub in ("tmp", "new", "cur"):
        os.makedirs(os.path.join(a.dir, sub), exist_ok=True)
    fsync_dir(a.dir)
    delivered = []
    for n in range(a.messages):
        delivered.append(deliver(a.dir, n))
        if len(delivered) > a.keep:
            os.unlink(os.path.join(a.dir, "new", delivered.pop(0)))
            fsync_dir(os.path.join(a.dir, "new"))
    print(f"maildir: {a.messages} messages delivered, {len(delivered)} kept")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
