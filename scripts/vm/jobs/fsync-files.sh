# fsync-files: the crash half of tests/fs/kernel_nbd_test.py. mkfs.ext4,
# then numbered files ff/f-1, f-2, ... one after another until the host
# kills the server: each written whole and fsynced (dd conv=fsync), then
# its directory fsynced (coreutils sync DIR), and only then the line
# "fsynced N". Every file whose line the host saw before its kill -9 must
# come back whole (verify-files).
# Kernel command line: vld.ff_max=N stops after N files (default: never).
MAX=1000000
for w in $(cat /proc/cmdline); do
  case "$w" in vld.ff_max=*) MAX=${w#vld.ff_max=} ;; esac
done
mkfs.ext4 -q -F -b 4096 $DEV > /tmp/mkfs.out 2>&1 || { cat /tmp/mkfs.out; fail "mkfs.ext4 failed"; }
run mount -t ext4 $DEV $MNT
run mkdir $MNT/ff
run /usr/bin/sync $MNT
i=0
while [ $i -lt "$MAX" ]; do
  i=$((i + 1))
  ff_gen $i | dd of=$MNT/ff/f-$i bs=64k conv=fsync 2>/dev/null || fail "writing ff/f-$i"
  /usr/bin/sync $MNT/ff || fail "fsync of the directory after ff/f-$i"
  echo "fsynced $i"
done
