# Sourced by every kernel-nbd guest job before the job itself (busybox sh).
# A job ends with status 0 on success; fail REASON ends it with status 1 and
# REASON becomes the "VLD-GUEST-RESULT: fail REASON" line.
# shellcheck disable=SC2034  # used by the jobs
DEV=/dev/nbd0 MNT=/mnt

now() { cut -d' ' -f1 /proc/uptime; }   # guest uptime, seconds
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }  # since T0
fail() { echo "$*" > /tmp/reason; echo "FAILED: $*"; exit 1; }
run() {  # run CMD...: run it, fail if it fails
  "$@" || fail "$* failed (status $?)"
}

# The test files: NAME SIZE (bytes). Mixed sizes around the 4 KiB block.
FILES="
f-empty 0
f-1 1
f-100 100
f-4095 4095
f-4096 4096
f-4097 4097
f-64k 65536
f-1m-7 1048569
f-4m+512 4194816
"
SMALL_FILES=24   # small/s-N, N=1..24, 1500 bytes + N*100

# gen NAME SIZE: deterministic content: each 512-byte sector is a line
# naming the file and the sector's number, then filler, so every sector of
# every file differs from every other.
gen() {
  awk -v name="$1" -v n=$((($2 + 511) / 512)) 'BEGIN {
    f = sprintf("%447s", ""); gsub(/ /, ".", f)
    for (i = 0; i < n; i++) printf "%-24s %010d vld kernel-nbd test data ..\n%s\n", name, i, f
  }' | head -c "$2"
}

# each_file FN: FN PATH SIZE for every test file (PATH relative to $MNT).
each_file() {
  echo "$FILES" | while read -r name size; do
    [ -z "$name" ] || "$1" "$name" "$size" || exit 1
  done || return 1
  i=1
  while [ $i -le $SMALL_FILES ]; do
    "$1" "small/s-$i" $((1500 + i * 100)) || return 1
    i=$((i + 1))
  done
}

# ff_gen N: the content of fsync-files' file f-N: 512 + (N * 997 mod 20000)
# bytes of gen, so that sizes vary around and across 4 KiB blocks.
ff_gen() {
  gen "ff-$1" $((512 + $1 * 997 % 20000))
}
