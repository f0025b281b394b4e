# verify-files: after the host killed the server under fsync-files and
# served the image again: mount (ext4 replays its journal), check that
# ff/f-1 .. ff/f-N are whole (N from vld.ff_n=N: the last "fsynced N" the
# host saw before the kill), unmount, e2fsck -fn.
N=
for w in $(cat /proc/cmdline); do
  case "$w" in vld.ff_n=*) N=${w#vld.ff_n=} ;; esac
done
case "$N" in ''|*[!0-9]*) fail "vld.ff_n=$N: want the count of fsynced files" ;; esac
run mount -t ext4 $DEV $MNT
i=0
while [ $i -lt "$N" ]; do
  i=$((i + 1))
  [ -f $MNT/ff/f-$i ] || fail "ff/f-$i, fsynced before the crash, is missing"
  ff_gen $i | cmp -s - $MNT/ff/f-$i || fail "ff/f-$i, fsynced before the crash, differs"
done
present=$(ls $MNT/ff | wc -l)
run umount $MNT
e2fsck -fn $DEV > /tmp/fsck.out 2>&1
rc=$?
[ $rc = 0 ] || { cat /tmp/fsck.out; fail "e2fsck -fn found problems (status $rc)"; }
echo "verified $N fsynced files ($present present); e2fsck -fn clean"
