# verify: mount the file system mkfs-write made (read-only), check
# SHA256SUMS and every file against its expected content, unmount, and
# check the file system with e2fsck -fn.
mount -t ext4 -o ro $DEV $MNT || fail "cannot mount $DEV as ext4 (run mkfs-write on this export first)"
[ -f $MNT/SHA256SUMS ] || fail "no SHA256SUMS on the file system (run mkfs-write first)"
(cd $MNT && sha256sum -c -s SHA256SUMS) || fail "sha256sum -c SHA256SUMS: mismatches"
check_one() {
  [ -f "$MNT/$1" ] || fail "$1 is missing"
  gen "$1" "$2" | cmp -s - "$MNT/$1" || fail "$1 differs from its expected content"
}
each_file check_one || exit 1
n=$(($(wc -l < $MNT/SHA256SUMS)))
run umount $MNT
e2fsck -fn $DEV > /tmp/fsck.out 2>&1
rc=$?
[ $rc = 0 ] || { cat /tmp/fsck.out; fail "e2fsck -fn found problems (status $rc)"; }
echo "verified $n files; e2fsck -fn clean"
