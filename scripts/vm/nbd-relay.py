#!/usr/bin/python3
"""Relay one guest NBD connection to the caller's nbdkit (scripts/kernel-nbd).

qemu's user network runs this for each guest connection to the guestfwd
address (-netdev user,guestfwd=tcp:10.0.2.100:10809-cmd:...), with the
connection on stdin, stdout and stderr. It connects to TARGET, a unix socket
path or 127.0.0.1:PORT, and copies bytes both ways until both sides are done.
Nothing may be printed here (stderr is the guest's connection too):
diagnostics go to LOGFILE, if given.

usage: nbd-relay.py TARGET [LOGFILE]
"""
import os
import socket
import sys
import threading


def log(msg):
    if len(sys.argv) > 2:
        with open(sys.argv[2], "a") as f:
            f.write("nbd-relay[%d]: %s\n" % (os.getpid(), msg))


def pump(src, dst, counts, key, quickack=False):
    try:
        while True:
            data = src.recv(1 << 20)
            if not data:
                break
            if quickack:
                # Re-armed after every read: the kernel leaves quick-ack
                # mode again on its own (see main).
                src.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
            dst.sendall(data)
            counts[key] += len(data)
    except OSError as e:
        log("%s: %s" % (key, e))
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def main():
    target = sys.argv[1]
    guest = socket.socket(fileno=os.dup(0))
    os.close(2)
    os.open(os.devnull, os.O_WRONLY)  # fd 2: nothing reaches the guest by accident
    if target.startswith("/") or not target.rpartition(":")[2].isdigit():
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        addr = target
    else:
        host, _, port = target.rpartition(":")
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        addr = (host or "127.0.0.1", int(port))
    try:
        server.connect(addr)
    except OSError as e:
        log("connect %s: %s" % (target, e))
        return 1
    for s in (guest, server):
        if s.family != socket.AF_UNIX:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    # qemu's user network (libslirp) hands us the guest's connection as one
    # end of a TCP pair on loopback, and writes into its end with Nagle on.
    # A request larger than one guest segment (an NBD write: 28 bytes of
    # header and 4 KiB) reaches slirp as several segments; it sends the
    # first, then holds the rest until we acknowledge it, and a request-reply
    # connection has delayed ACKs (40 ms). Acknowledging at once keeps a
    # 4 KiB write at ~8 ms under TCG instead of ~50 ms.
    quickack = guest.family != socket.AF_UNIX and hasattr(socket, "TCP_QUICKACK")
    counts = {"to_server": 0, "to_guest": 0}
    t = threading.Thread(target=pump, args=(server, guest, counts, "to_guest"))
    t.start()
    pump(guest, server, counts, "to_server", quickack)
    t.join()
    log("closed: %d bytes to the server, %d to the guest" % (counts["to_server"], counts["to_guest"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
