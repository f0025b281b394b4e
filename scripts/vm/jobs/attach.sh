# attach: the export is attached; read its first MiB and report its size.
echo "size $(blockdev --getsize64 $DEV) bytes"
run dd if=$DEV of=/dev/null bs=64k count=16
echo "read 1 MiB from $DEV"
