#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
#
# /init of the test VM's initramfs (busybox only). It builds the guest's
# root and hands over to the host userspace:
#   - loads the virtio, 9p and overlay modules listed in /mods/order;
#   - mounts the guest's root (9p tag "hostroot", read-only: the host's /,
#     or the flavor's root such as the Debian 13 one) under a tmpfs-backed
#     overlay, so every binary of that root is there and the guest can
#     write anywhere (writes vanish at power-off);
#   - mounts the job directory (tag "job") and the read-write shares listed
#     in JOB/mounts ("tag path" lines) at their host paths;
#   - bind-mounts the unpacked Debian module tree (JOB/kmoddir, a host path:
#     in the root, or else in a share) on /lib/modules/$(uname -r) so the
#     root's modprobe loads the guest kernel's modules;
#   - switch_root, then runs stage 2 (guest/stage2.sh) with bash.
# Kernel command line: rpmavm.job=JOBDIR rpmavm.stage2=SCRIPT

/bin/busybox --install -s /bin
export PATH=/bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

halt_now() {
	echo "rpma-vm guest: $*" >/dev/console
	echo o >/proc/sysrq-trigger
	sleep 30
}

for m in $(cat /mods/order); do
	insmod "/mods/$m" || echo "rpma-vm guest: insmod $m failed"
done

JOB=
STAGE2=
for x in $(cat /proc/cmdline); do
	case "$x" in
	rpmavm.job=*) JOB=${x#rpmavm.job=} ;;
	rpmavm.stage2=*) STAGE2=${x#rpmavm.stage2=} ;;
	esac
done
[ -n "$JOB" ] && [ -n "$STAGE2" ] || halt_now "no rpmavm.job= / rpmavm.stage2= on the command line"

P9="trans=virtio,version=9p2000.L,msize=512000"
mount -t 9p -o "$P9,cache=none" job /job || halt_now "cannot mount the job directory"
mount -t 9p -o "$P9,ro,cache=loose" hostroot /lower || halt_now "cannot mount the host root"
mount -t tmpfs -o mode=755 tmpfs /rw
mkdir -p /rw/upper /rw/work
R=/newroot
if ! mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay $R; then
	echo "rpma-vm guest: overlay failed, the root stays read-only"
	mount --move /lower $R
fi

KV=$(uname -r)
KMODDIR=$(cat /job/kmoddir)
mkdir -p "$R/lib/modules/$KV"
# from the root when it is there (the host's / holds the build directory),
# else once the shares are mounted
kmods_bound=0
if [ -d "$R$KMODDIR" ]; then
	mount --bind "$R$KMODDIR" "$R/lib/modules/$KV" && kmods_bound=1
fi

mount --move /dev $R/dev
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
mount -t tmpfs -o mode=755 tmpfs $R/run
mount -t tmpfs -o mode=1777 tmpfs $R/tmp
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null

# read-write shares at their host paths (parents before children), over
# the tmpfs mounts above so that a share under /tmp stays visible
while read -r tag path; do
	[ -n "$tag" ] || continue
	mkdir -p "$R$path" 2>/dev/null
	mount -t 9p -o "$P9,cache=mmap" "$tag" "$R$path" || echo "rpma-vm guest: cannot mount $path"
done </job/mounts
if [ $kmods_bound = 0 ]; then
	mount --bind "$R$KMODDIR" "$R/lib/modules/$KV" || echo "rpma-vm guest: no module tree"
fi

mkdir -p "$R$JOB" 2>/dev/null
mount --move /job "$R$JOB" || halt_now "cannot move the job directory"

hostname rpma-vm
ip link set lo up

umount /proc /sys
exec switch_root $R /bin/bash "$STAGE2" "$JOB"
