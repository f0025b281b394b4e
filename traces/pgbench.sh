#!/usr/bin/env bash
# The workload of traces/pgbench.log.gz, run by scripts/capture in the mount
# point: a PostgreSQL cluster made there (initdb, fsync on, the defaults),
# pgbench's scale-1 tables (pgbench -i -s 1), then TRANSACTIONS TPC-B-like
# transactions from one client (pgbench -c 1 -t), and a clean stop.
# PostgreSQL refuses to run as root: the server runs as the system user
# vldtrace, made if missing. It listens only on a unix socket in the mount.
#
# usage: traces/pgbench.sh [TRANSACTIONS]   (default 1000; in $MNT or cwd)
set -euo pipefail
TRANSACTIONS=${1:-1000}
PG=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
DIR=$PWD/pg
id vldtrace >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin vldtrace
mkdir "$DIR" && chown vldtrace "$DIR"
as() { runuser -u vldtrace -- "$@"; }
as "$PG/initdb" -D "$DIR/data" -A trust -U postgres >/dev/null
as "$PG/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w \
  -o "-k $DIR -c listen_addresses= -p 5499" start >/dev/null
trap 'as "$PG/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null' EXIT
as "$PG/pgbench" -h "$DIR" -p 5499 -U postgres -i -s 1 -q postgres 2>&1 | tail -n 1
as "$PG/pgbench" -h "$DIR" -p 5499 -U postgres -c 1 -t "$TRANSACTIONS" postgres |
  grep -E '^(number of transactions actually processed|tps)'
