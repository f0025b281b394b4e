"""Filling one track under a fixed gap between commands: the allocator's greedy order beside the
best order an exhaustive search finds (docs/benchmarks.md section 1, the hp97560 plateau).

Model (vld's fill track, paper 001 section 2.3): a track of N sectors, empty at first; each
command writes a data block of B sectors and its map sector in one pass, in the order the head
meets them; the next command's head arrives GAP sector times after the previous one ended (the
flush's and the next write's controller overheads) and waits for the first whole sector. Waited
sectors are what the drive model charges as rotation.

usage: python3 -m vldbench.filltrack [--sectors 72] [--gap-us 4600] [--sector-us 208.2]
           [--commands 6] [--runs 8]
"""
import argparse
import functools
import math

B = 8


def _free(mask, n, start, length):
    return all(not (mask >> ((start + i) % n)) & 1 for i in range(length))


def _take(mask, n, start, length):
    for i in range(length):
        mask |= 1 << ((start + i) % n)
    return mask


def options(mask, n, arrival, runs, b=B):
    """(waited sectors, new mask, end slot) of each way to place one command from `arrival`: the
    data in one of the first `runs` free runs of b sectors the head meets, its map sector in the
    first free sector behind the data or, if there is one, in the first free sector before it."""
    out, seen = [], 0
    for d in range(n):
        s = (arrival + d) % n
        if not _free(mask, n, s, b):
            continue
        seen += 1
        if seen > runs:
            break
        with_data = _take(mask, n, s, b)
        for m in range(n - b):
            p = (s + b + m) % n
            if _free(with_data, n, p, 1):
                out.append((d + m, _take(with_data, n, p, 1), (p + 1) % n))
                break
        for m in range(d):
            p = (arrival + m) % n
            if _free(mask, n, p, 1):
                out.append((d - 1, _take(with_data, n, p, 1), (s + b) % n))
                break
    return out


def greedy(n, gap, commands, b=B):
    """The allocator's choice (the command that ends soonest), command by command."""
    mask, arrival, waits = 0, 0, []
    for _ in range(commands):
        opts = options(mask, n, arrival, n, b)
        if not opts:
            break
        w, mask, end = min(opts, key=lambda o: o[0])
        waits.append(w)
        arrival = (end + gap) % n
    return waits


def best(n, gap, commands, runs, b=B):
    """The least total wait over every order of `commands` commands (data in one of the first
    `runs` runs each time), by exhaustive search."""
    @functools.lru_cache(maxsize=None)
    def go(mask, arrival, k):
        if k == 0:
            return 0, ()
        found = (math.inf, ())
        for w, m, end in options(mask, n, arrival, runs, b):
            rest, ws = go(m, (end + gap) % n, k - 1)
            if w + rest < found[0]:
                found = (w + rest, (w,) + ws)
        return found
    return list(go(0, 0, commands)[1])


def gap_sectors(gap_us, sector_us):
    """Whole sectors from a command's end to the first sector the next can use."""
    return math.ceil(gap_us / sector_us - 1e-9)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="vldbench.filltrack", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sectors", type=int, default=72)
    ap.add_argument("--gap-us", type=float, default=4600.0)
    ap.add_argument("--sector-us", type=float, default=208.2)
    ap.add_argument("--commands", type=int, default=6)
    ap.add_argument("--runs", type=int, default=8)
    a = ap.parse_args(argv)
    gap = gap_sectors(a.gap_us, a.sector_us)
    g = greedy(a.sectors, gap, a.commands)
    o = best(a.sectors, gap, a.commands, a.runs)
    print(f"track of {a.sectors} sectors, gap {gap} sectors, {a.commands} commands")
    print(f"greedy: waits {g}, {sum(g)} sectors, {sum(g) * a.sector_us / len(g):.0f} us a command")
    print(f"best:   waits {o}, {sum(o)} sectors, {sum(o) * a.sector_us / len(o):.0f} us a command")


if __name__ == "__main__":
    main()
