# fsync-loop: N random 4 KiB overwrites of a preallocated file on ext4, each
# followed by fsync (busybox dd conv=notrunc,fsync), as a database's commit
# log would; prints one summary line and nothing else.
# On an ext4 already on the export (with the file, or the file is made);
# else mkfs.ext4 first: 4 KiB blocks (-b 4096, as mke2fs picks anyway on a
# 4096-byte-sector nbd0), the inode tables and the journal zeroed now
# (lazy_itable_init=0, lazy_journal_init=0), so that no background zeroing
# runs during the loop. The file is written with real blocks (dd from
# /dev/zero, fsynced), not fallocated: the loop overwrites allocated blocks.
# The offsets come from awk's srand(SEED): the same SEED, the same blocks.
# Kernel command line (scripts/kernel-nbd: VLD_VM_APPEND="vld.fsync_n=500"):
#   vld.fsync_n=N      fsyncs (default 200; 0: only mkfs and the file)
#   vld.fsync_mib=M    the file's size in MiB (default 64)
#   vld.fsync_seed=S   the offsets' seed (default 1)
# Summary: "fsync-loop: n=N file_mib=M seed=S fs=mkfs|existing secs=T
# writes=W write_kib=K flushes=F reads=R discards=D", W..D from
# /sys/block/nbd0/stat around the loop alone (the block layer's view: each
# request is one NBD command; which writes carry FUA it does not count).
N=200 MIB=64 SEED=1
for w in $(cat /proc/cmdline); do
  case "$w" in
    vld.fsync_n=*) N=${w#vld.fsync_n=} ;;
    vld.fsync_mib=*) MIB=${w#vld.fsync_mib=} ;;
    vld.fsync_seed=*) SEED=${w#vld.fsync_seed=} ;;
  esac
done
case "$N" in ''|*[!0-9]*) fail "vld.fsync_n=$N: want a count" ;; esac
case "$MIB" in ''|*[!0-9]*|0) fail "vld.fsync_mib=$MIB: want MiB > 0" ;; esac
case "$SEED" in ''|*[!0-9]*) fail "vld.fsync_seed=$SEED: want a number" ;; esac
F=$MNT/fsync-loop.dat
BLOCKS=$((MIB * 256))

fs=existing
if ! mount -t ext4 $DEV $MNT 2>/dev/null; then
  fs=mkfs
  mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 $DEV > /tmp/mkfs.out 2>&1 \
    || { cat /tmp/mkfs.out; fail "mkfs.ext4 failed"; }
  run mount -t ext4 $DEV $MNT
fi
if [ "$(stat -c %s "$F" 2>/dev/null)" != $((BLOCKS * 4096)) ]; then
  rm -f "$F"
  dd if=/dev/zero of="$F" bs=1048576 count="$MIB" conv=fsync 2>/tmp/dd.out \
    || { cat /tmp/dd.out; fail "writing the $MIB MiB file failed"; }
fi
run sync
awk -v n="$N" -v seed="$SEED" -v b="$BLOCKS" \
  'BEGIN { srand(seed); for (i = 0; i < n; i++) print int(rand() * b) }' > /tmp/offsets
dd if=/dev/urandom of=/tmp/blk bs=4096 count=1 2>/dev/null || fail "no /dev/urandom"

before=$(cat /sys/block/nbd0/stat)
t=$(now)
while read -r off; do
  dd if=/tmp/blk of="$F" bs=4096 seek="$off" count=1 conv=notrunc,fsync 2>/dev/null \
    || fail "dd seek=$off conv=fsync failed"
done < /tmp/offsets
secs=$(since "$t")
after=$(cat /sys/block/nbd0/stat)

# /sys/block/DEV/stat: 1 reads, 3 read sectors, 5 writes, 7 write sectors,
# 12 discards, 16 flushes (Documentation/block/stat.rst).
echo "$before $after" | awk -v n="$N" -v mib="$MIB" -v seed="$SEED" -v fs="$fs" -v secs="$secs" '{
  k = NF / 2
  if (k < 17) { print "fsync-loop: FAILED: /sys/block/nbd0/stat has " k " fields, want 17"; exit 1 }
  printf "fsync-loop: n=%d file_mib=%d seed=%d fs=%s secs=%s writes=%d write_kib=%d flushes=%d reads=%d discards=%d\n",
    n, mib, seed, fs, secs, $(k + 5) - $5, ($(k + 7) - $7) / 2, $(k + 16) - $16, $(k + 1) - $1, $(k + 12) - $12
}' || fail "reading /sys/block/nbd0/stat failed"
run umount $MNT
