# bench-lib.sh: shared by the scripts/bench-* scripts that serve or build
# (sourced, not run; bench-locate and bench-presets do without it). Builds
# the plugin, makes the scratch directory, starts and stops nbdkit, records
# the run's conditions.
#
# The caller sets BENCH (its name) and then calls:
#   bench_build             scripts/setup (unless SKIP_SETUP=1), cmake+ninja the
#                           plugin into $BUILD_DIR; sets PLUGIN. SNAPSHOT=1
#                           builds the committed HEAD (git archive) instead of
#                           the work tree, in $BUILD_DIR/snapshot/
#   bench_plugin            PLUGIN=PATH.so given: that build (checked to exist),
#                           to compare another commit's in the same conditions;
#                           otherwise bench_build
#   bench_scratch           a temporary directory on $VLD_TMP (/dev/shm unless
#                           unwritable) removed on exit; sets TMP, TMP_PARENT
#   nbdkit_start DIR ARGS   serve ARGS (plugin parameters) in the background on
#                           DIR/nbd.sock; sets NBDKIT_PID (the job),
#                           NBDKIT_SERVER_PID (from -P, for /proc), URI
#   nbdkit_stop             SIGTERM and wait: the stats file is final after it
#   nbdkit_kill9            SIGKILL and wait: a crash, no clean close
#   fio_or_die LOG ARGS...  fio, its log shown if it fails
#   bench_meta FILE         JSON of the run's conditions (date, commit, host):
#                           python3 -m vldbench.meta
# It also points PYTHONPATH at bench/, so that "$PY" -m vldbench.NAME works:
# what a benchmark computes from its raw outputs lives there, not here.
# Images live on tmpfs so that no real fdatasync enters a measurement
# (docs/pacing.md).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}
PY=/usr/bin/python3   # Debian's: the python3 first in PATH may lack the nbd module
# What the benchmarks compute is the vldbench package ("$PY" -m vldbench.NAME).
export PYTHONPATH=$ROOT/bench${PYTHONPATH:+:$PYTHONPATH}
NBDKIT_PID=
NBDKIT_DIR=
TMP=

SRC_COMMIT=
bench_build() {
  [ "${SKIP_SETUP:-}" = 1 ] || scripts/setup
  local src=$ROOT bld=$BUILD_DIR
  if [ "${SNAPSHOT:-}" = 1 ]; then
    # The committed HEAD, not the work tree: `git archive` into
    # $BUILD_DIR/snapshot/src (read-only for git), built in .../build.
    SRC_COMMIT=$(git -C "$ROOT" rev-parse --short HEAD)
    src=$BUILD_DIR/snapshot/src
    bld=$BUILD_DIR/snapshot/build
    if [ "$(cat "$src/.snapshot-commit" 2>/dev/null)" != "$SRC_COMMIT" ]; then
      rm -rf "$src"
      mkdir -p "$src"
      git -C "$ROOT" archive HEAD | tar -x -C "$src"
      echo "$SRC_COMMIT" >"$src/.snapshot-commit"
    fi
  fi
  cmake -S "$src" -B "$bld" -G Ninja >/dev/null
  ninja -C "$bld" -j"$(nproc)" nbdkit-vld-plugin >/dev/null
  PLUGIN=$(cd "$bld" && pwd)/plugin/nbdkit-vld-plugin.so
  [ -f "$PLUGIN" ] || { echo "$BENCH: $PLUGIN was not built" >&2; exit 1; }
}

bench_plugin() {
  if [ -n "${PLUGIN:-}" ]; then
    [ -f "$PLUGIN" ] || { echo "$BENCH: PLUGIN=$PLUGIN: no such file; give a built" \
      "nbdkit-vld-plugin.so, or leave PLUGIN unset to build one" >&2; exit 2; }
    PLUGIN=$(realpath "$PLUGIN")
  else
    bench_build
  fi
}

bench_cleanup() {
  if [ -n "$NBDKIT_PID" ]; then
    kill -TERM "$NBDKIT_PID" 2>/dev/null || true
    wait "$NBDKIT_PID" 2>/dev/null || true
    NBDKIT_PID=
  fi
  [ -z "$TMP" ] || rm -rf "$TMP"
}

bench_scratch() {
  TMP_PARENT=${VLD_TMP:-/dev/shm}
  [ -d "$TMP_PARENT" ] && [ -w "$TMP_PARENT" ] || TMP_PARENT=${TMPDIR:-/tmp}
  TMP=$(mktemp -d -p "$TMP_PARENT" "vld-$BENCH.XXXXXX")
  trap bench_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# nbdkit_start DIR PLUGIN-OR-NAME ARGS...: nbdkit in the foreground of a
# background job; returns once it listens (its pid file exists).
nbdkit_start() {
  local dir=$1
  shift
  mkdir -p "$dir"
  rm -f "$dir/nbdkit.pid" "$dir/nbd.sock"
  nbdkit -f --exit-with-parent -U "$dir/nbd.sock" -P "$dir/nbdkit.pid" "$@" \
    2>"$dir/nbdkit.log" &
  NBDKIT_PID=$!
  NBDKIT_DIR=$dir
  local waited=0
  until [ -s "$dir/nbdkit.pid" ]; do
    if ! kill -0 "$NBDKIT_PID" 2>/dev/null || [ "$waited" -ge 1200 ]; then
      echo "$BENCH: nbdkit did not start ($*):" >&2
      cat "$dir/nbdkit.log" >&2
      exit 1
    fi
    sleep 0.05
    waited=$((waited + 1))
  done
  # -P names nbdkit itself (for /proc); with -f it is the background job.
  NBDKIT_SERVER_PID=$(cat "$dir/nbdkit.pid")
  URI="nbd+unix:///?socket=$dir/nbd.sock"
}

nbdkit_stop() {
  local pid=$NBDKIT_PID rc=0
  [ -n "$pid" ] || return 0
  NBDKIT_PID=
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "$BENCH: nbdkit exited with status $rc:" >&2
    cat "$NBDKIT_DIR/nbdkit.log" >&2
    return "$rc"
  fi
}

nbdkit_kill9() {
  local pid=$NBDKIT_PID
  [ -n "$pid" ] || return 0
  NBDKIT_PID=
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# fio_or_die LOG ARGS...: run fio, show its log if it fails.
fio_or_die() {
  local log=$1
  shift
  if ! fio "$@" >"$log" 2>&1; then
    echo "$BENCH: fio failed: fio $*" >&2
    cat "$log" >&2
    exit 1
  fi
}

bench_meta() {
  local out=$1
  if [ -n "$SRC_COMMIT" ]; then  # SNAPSHOT=1: exactly the commit
    COMMIT=$SRC_COMMIT DIRTY=no DIFF_HASH=
  else
    COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
    DIRTY=$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo yes || echo no)
    # Uncommitted changes to tracked files are built too: name them by a hash.
    DIFF_HASH=$(git -C "$ROOT" diff HEAD 2>/dev/null | sha256sum | cut -c1-12)
  fi
  NBDKIT_VERSION=$(nbdkit --version 2>/dev/null | head -1)
  FIO_VERSION=$(fio --version 2>/dev/null)
  FSTYPE=$(stat -f -c %T "$TMP")
  COMMIT=$COMMIT DIRTY=$DIRTY DIFF_HASH=$DIFF_HASH NBDKIT_VERSION=$NBDKIT_VERSION FIO_VERSION=$FIO_VERSION \
    FSTYPE=$FSTYPE TMP_PARENT=$TMP_PARENT BUILD_DIR=$BUILD_DIR SNAPSHOT=${SNAPSHOT:-} "$PY" -m vldbench.meta "$out"
}
