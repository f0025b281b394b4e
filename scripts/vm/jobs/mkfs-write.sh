# mkfs-write: make an ext4 file system on the export, write the test files
# (each fsynced, then the directories), record their sha256sums in
# SHA256SUMS on the file system, unmount.
t=$(now)
run mkfs.ext4 -q -F $DEV
echo "mkfs.ext4: $(since $t) s"
run mount -t ext4 $DEV $MNT
run mkdir $MNT/small
t=$(now)
write_one() {
  gen "$1" "$2" > "$MNT/$1" || fail "writing $1 failed"
  sync "$MNT/$1" || fail "fsync $1 failed"
}
each_file write_one || exit 1
run sync $MNT $MNT/small
(cd $MNT && find . -type f ! -name SHA256SUMS | sort | xargs sha256sum > SHA256SUMS) \
  || fail "sha256sum failed"
run sync $MNT/SHA256SUMS $MNT
echo "wrote $(($(wc -l < $MNT/SHA256SUMS))) files, $(du -sk $MNT | cut -f1) KiB, each fsynced: $(since $t) s"
t=$(now)
run umount $MNT
echo "umount: $(since $t) s"
