#!/bin/busybox sh
# /init of the arm64 test guest's initramfs: loads the modules that mount
# the root disk (virtio-mmio, virtio-blk, ext4), mounts it, gives it the
# kernel's file systems, runs the project's guest checks chrooted and
# powers off.  Its console is the test's output.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.order); do insmod "/lib/modules/$m" 2> /dev/null; done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
R=/newroot
if ! mount -t ext4 /dev/vda $R; then
	echo "IGVM: no root disk"
	poweroff -f
fi
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
mount -t tmpfs -o mode=755 tmpfs $R/run
mount -t bpf bpf $R/sys/fs/bpf
mount -t tracefs tracefs $R/sys/kernel/tracing 2> /dev/null
mount -t debugfs debugfs $R/sys/kernel/debug 2> /dev/null
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2> /dev/null
chmod 1777 $R/tmp
ifconfig lo 127.0.0.1 up
hostname arm64-guest
echo "IGVM: root up at $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r) $(uname -m)"
chroot $R /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root TERM=dumb LANG=C.UTF-8 /bin/sh "${igscript:-/opt/idlegap/tests/arm64/guest.sh}"
echo "IGVM: guest checks exited $? at $(cut -d' ' -f1 /proc/uptime) s"
sync
umount $R/tmp 2> /dev/null
poweroff -f
