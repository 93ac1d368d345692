#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/vm/setup.sh BUILDDIR [--flavor host|trixie] [--force] [--no-siw] [--quiet]
#
# Prepares everything the RDMA test VM needs and caches it in BUILDDIR/vm/
# (flavor trixie: BUILDDIR/vm/trixie/). Idempotent: a second run only checks
# the cache (well under a second).
#
#  1. the Debian packages the VM uses (QEMU, busybox, rdma-core tools, ndctl,
#     Debian's librpma 1.x, ...) are installed with apt-get when missing
#     (as root, through sudo when the caller is not root);
#     flavor trixie: a Debian 13 root is made with debootstrap (through
#     sudo when the caller is not root: debootstrap and chroot need it; from the
#     mirror the host's apt uses) and the packages that building and
#     testing the project need are installed in it; every later step that
#     asks apt or builds runs in that root (chroot), so it takes Debian 13's
#     packages and compiler;
#  2. the kernel image package that linux-image-amd64 currently depends on
#     (in the flavor's root) is fetched with `apt-get download` and unpacked
#     into the cache's kernel/ (nothing is installed into /boot), followed by
#     depmod;
#  3. the uncompressed vmlinux is extracted (faster boot under TCG);
#  4. the initramfs (busybox + virtio/9p/overlay modules) is built;
#  5. siw.ko, which Debian does not build, is compiled out of tree from
#     linux-source of the same version against linux-headers of the image.
#     Failing that, the reason is recorded, and the siw suites fail with
#     it (unless meson's options leave siw out);
#  6. rdma_rxe.ko is compiled the same way, with rxe-fence-fix.py applied
#     to its sources: Debian's own can stop a queue pair for ever after a
#     retransmission behind a fenced request (README.md). Failing that,
#     setup fails (RPMA_VM_RXE=stock keeps Debian's module instead).
#
# --flavor  host (the default): the host's root and Debian 12's kernel;
#           trixie: a Debian 13 root and kernel (see lib.sh)
# --force   redo every step (packages are still only installed when missing)
# --no-siw  do not build siw.ko now (a later run without --no-siw builds
#           it; the siw suites cannot run until then)
# --quiet   print nothing when the cache is complete
#
# Environment: RPMA_VM_KERNEL_DEB=/path/linux-image-*.deb uses that package
# instead of downloading one (offline machines; host flavor only),
# RPMA_VM_MIRROR the Debian mirror for debootstrap (default: the one the
# host's apt uses), RPMA_VM_RXE=fixed|stock (step 6; fixed by default).

set -euo pipefail
. "$(dirname "$0")/lib.sh"
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

usage() { echo "usage: $0 BUILDDIR [--flavor host|trixie] [--force] [--no-siw] [--quiet]" >&2; exit 2; }
[ $# -ge 1 ] || usage
builddir=$1
shift
force=0
want_siw=${RPMA_VM_SIW:-1}
quiet=0
flavor=host
while [ $# -gt 0 ]; do
	case "$1" in
	--flavor) [ $# -ge 2 ] || usage; flavor=$2; shift ;;
	--flavor=*) flavor=${1#*=} ;;
	--force) force=1 ;;
	--no-siw) want_siw=0 ;;
	--quiet) quiet=1 ;;
	*) usage ;;
	esac
	shift
done

vm_init "$builddir" "$flavor"
setup_lock

t_setup=$(now)

# Packages the VM needs on the host. "package:command" -- the command is
# checked first, it is cheaper. The host flavor's guest runs the host's
# userspace: the RDMA tools are needed here.
VM_PKGS="qemu-system-x86:qemu-system-x86_64 busybox-static:/bin/busybox kmod:depmod
cpio:cpio python3:python3 xz-utils:xz util-linux:flock"
# What the trixie root holds: the build and test dependencies of the project
# (tests/install-deps.sh lists Debian 12's), the guest's tools, and gcc and
# make for siw.ko.
ROOT_PKGS="meson ninja-build g++ pkg-config python3 libibverbs-dev librdmacm-dev
libpmem2-dev libcmocka-dev rdma-core ibverbs-providers ibverbs-utils rdmacm-utils
perftest ndctl daxctl kmod iproute2 util-linux bash valgrind gcc make procps"
if [ "$VM_ROOT" = / ]; then
	# librpma0: Debian's librpma 1.x, the peer of the interop suite
	VM_PKGS="$VM_PKGS iproute2:rdma rdma-core:rdma-ndd ibverbs-providers:
ibverbs-utils:ibv_devinfo rdmacm-utils:rping perftest:ib_write_lat
ndctl:ndctl daxctl:daxctl librpma0:"
else
	# zstd: Debian 13 compresses its kernel with it
	VM_PKGS="$VM_PKGS debootstrap:debootstrap zstd:zstd"
fi
root_stamp=$VM_DIR/root.stamp

# rxe: Debian's module (stock) or one built with rxe-fence-fix.py (fixed,
# the default), named in the state by the script's hash
rxe_want=${RPMA_VM_RXE:-fixed}
case "$rxe_want" in fixed | stock) ;; *) die "RPMA_VM_RXE is fixed or stock, not $rxe_want" ;; esac
rxe_fix_id=fixed-$(sha256sum "$VM_SRCDIR/rxe-fence-fix.py" | cut -c1-12)
rxe_state_wanted=$rxe_fix_id
[ "$rxe_want" = fixed ] || rxe_state_wanted=stock
# rxe_cached KV: the cache of kernel KV holds the rdma_rxe.ko asked for
rxe_cached() {
	[ "$(state_get RXE)" = "$rxe_state_wanted" ] || return 1
	[ "$rxe_want" = stock ] || [ -r "$VM_DIR/kernel/lib/modules/$1/updates/rdma_rxe.ko" ]
}

initramfs_inputs=("$VM_SRCDIR/guest/init.sh" "$VM_SRCDIR/setup.sh")

# --- fast path: everything cached ------------------------------------------
cache_complete() {
	local kv kimg
	[ "$force" = 0 ] || return 1
	[ "$(state_get COMPLETE)" = 1 ] || return 1
	if [ "$VM_ROOT" != / ]; then
		[ "$(cat "$root_stamp" 2>/dev/null)" = "$(echo $ROOT_PKGS)" ] || return 1
	fi
	kv=$(state_get KV)
	[ -n "$kv" ] || return 1
	kimg=$VM_DIR/kernel/boot/vmlinux-$kv
	[ -r "$kimg" ] || kimg=$VM_DIR/kernel/boot/vmlinuz-$kv
	[ -r "$kimg" ] || return 1
	[ -r "$VM_DIR/kernel/lib/modules/$kv/modules.dep" ] || return 1
	[ -r "$VM_DIR/initramfs.cpio.gz" ] || return 1
	for f in "${initramfs_inputs[@]}"; do
		[ "$VM_DIR/initramfs.cpio.gz" -nt "$f" ] || return 1
	done
	case "$(state_get SIW)" in
	ok) [ -r "$VM_DIR/kernel/lib/modules/$kv/updates/siw.ko" ] || return 1 ;;
	unavailable) [ -r "$VM_DIR/siw/unavailable" ] || return 1 ;;
	# left out by --no-siw: a run that wants siw builds it now
	skipped) [ "$want_siw" = 0 ] || return 1 ;;
	*) return 1 ;;
	esac
	rxe_cached "$kv" || return 1
	local pc
	for pc in $VM_PKGS; do
		pc=${pc#*:}
		[ -z "$pc" ] && continue
		case "$pc" in
		/*) [ -x "$pc" ] || return 1 ;;
		*) command -v "$pc" >/dev/null 2>&1 || return 1 ;;
		esac
	done
	return 0
}

if cache_complete; then
	[ "$quiet" = 1 ] || msg "setup: $VM_FLAVOR cached in $VM_DIR (kernel $(state_get KV), siw $(state_get SIW), rxe $(state_get RXE)) ($(elapsed "$t_setup") s)"
	exit 0
fi

msg "setting up the RDMA test VM ($VM_FLAVOR) in $VM_DIR"

step_t=0
step() { step_t=$(now); msg "$*"; }
step_done() { msg "  done ($(elapsed "$step_t") s)"; }

# --- 1. packages ------------------------------------------------------------
# With ROOT=/ (the default) these work on the host; with ROOT set to the
# flavor's root (VM_ROOT), in that root. on_root runs as the caller, so that
# what it writes in the build directory is the caller's; on_root_priv as
# root, for apt.
ROOT=/
on_root() { if [ "$ROOT" = / ]; then "$@"; else in_root_as_caller "$@"; fi; }
on_root_priv() { if [ "$ROOT" = / ]; then as_root "$@"; else in_root "$@"; fi; }

# pkg_missing PKG... -> the ones not installed
pkg_missing() {
	local p s
	for p in "$@"; do
		s=$(dpkg-query --admindir="${ROOT%/}/var/lib/dpkg" -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$s" = installed ] || echo "$p"
	done
}

apt_updated=0
# apt_install PKG... : install with apt-get (refreshing the lists once when
# the first attempt fails); returns non-zero on failure
apt_install() {
	command -v apt-get >/dev/null || { echo "rpma-vm: apt-get not found (not a Debian system?)" >&2; return 1; }
	export DEBIAN_FRONTEND=noninteractive
	if ! on_root_priv env DEBIAN_FRONTEND=noninteractive apt-get install -o DPkg::Lock::Timeout=600 -y -q --no-install-recommends "$@" \
		>"$VM_DIR/apt.log" 2>&1; then
		if [ "$apt_updated" = 0 ]; then
			apt_updated=1
			msg "  refreshing the package lists (apt-get update)"
			on_root_priv apt-get update -q >>"$VM_DIR/apt.log" 2>&1 || true
			on_root_priv env DEBIAN_FRONTEND=noninteractive apt-get install -o DPkg::Lock::Timeout=600 -y -q --no-install-recommends "$@" \
				>>"$VM_DIR/apt.log" 2>&1 && return 0
		fi
		tail -n 15 "$VM_DIR/apt.log" >&2
		echo "rpma-vm: apt-get install $* failed (log: $VM_DIR/apt.log)" >&2
		return 1
	fi
}

pkgs=()
for pc in $VM_PKGS; do pkgs+=("${pc%%:*}"); done
command -v dpkg-query >/dev/null || die "dpkg-query not found: this harness needs a Debian (or derived) host"
missing=$(pkg_missing "${pkgs[@]}" | tr '\n' ' ')
if [ -n "$missing" ]; then
	step "installing packages: $missing"
	# shellcheck disable=SC2086
	apt_install $missing || die "cannot install the packages the VM needs"
	step_done
fi

# --- 1b. the flavor's root --------------------------------------------------
if [ "$VM_ROOT" != / ]; then
	if [ "$force" = 1 ] || [ ! -x "$VM_ROOT/usr/bin/apt-get" ]; then
		# the mirror the host's apt already uses
		mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' 2>/dev/null |
			grep -m 1 '/debian/$' || true)
		mirror=${RPMA_VM_MIRROR:-${mirror:-http://deb.debian.org/debian/}}
		step "debootstrap $VM_FLAVOR from $mirror"
		rm -f "$root_stamp"
		as_root rm -rf "$VM_ROOT" "$VM_ROOT.new"
		# debootstrap makes device nodes and files of other owners: root
		# (through sudo) is needed, and the root's files are root's
		if ! as_root debootstrap --variant=minbase "$VM_FLAVOR" "$VM_ROOT.new" "$mirror" \
			>"$VM_DIR/debootstrap.log" 2>&1; then
			tail -n 10 "$VM_DIR/debootstrap.log" >&2
			die "debootstrap $VM_FLAVOR failed (log: $VM_DIR/debootstrap.log)"
		fi
		# no services start in the root; no documentation is unpacked
		as_root /bin/sh -c '
			printf "#!/bin/sh\nexit 101\n" >"$1/usr/sbin/policy-rc.d"
			chmod 755 "$1/usr/sbin/policy-rc.d"
			printf "%s\n" "path-exclude=/usr/share/doc/*" "path-exclude=/usr/share/man/*" \
				"path-exclude=/usr/share/locale/*" "path-include=/usr/share/locale/locale.alias" \
				>"$1/etc/dpkg/dpkg.cfg.d/01rpma-vm-nodoc"
			mv "$1" "$2"' sh "$VM_ROOT.new" "$VM_ROOT" || die "cannot prepare $VM_ROOT"
		step_done
	fi
	if [ "$(cat "$root_stamp" 2>/dev/null)" != "$(echo $ROOT_PKGS)" ]; then
		ROOT=$VM_ROOT
		# shellcheck disable=SC2086
		missing=$(pkg_missing $ROOT_PKGS | tr '\n' ' ')
		if [ -n "$missing" ]; then
			step "installing in the $VM_FLAVOR root: $missing"
			# shellcheck disable=SC2086
			apt_install $missing || die "cannot install the packages the $VM_FLAVOR root needs"
			step_done
		fi
		echo $ROOT_PKGS >"$root_stamp"
	fi
	ROOT=$VM_ROOT
fi

# --- 2. kernel image --------------------------------------------------------
mkdir -p "$VM_DIR/debs"
if [ -n "${RPMA_VM_KERNEL_DEB:-}" ] && [ "$VM_ROOT" = / ]; then
	[ -r "$RPMA_VM_KERNEL_DEB" ] || die "RPMA_VM_KERNEL_DEB=$RPMA_VM_KERNEL_DEB is not readable"
	kdeb=$(readlink -f "$RPMA_VM_KERNEL_DEB")
	kpkg=$(dpkg-deb -f "$kdeb" Package)
else
	kpkg=
	[ "$force" = 1 ] || kpkg=$(state_get KPKG)
	resolve_kpkg() {
		on_root apt-cache depends linux-image-amd64 2>/dev/null |
			awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
	}
	if [ -z "$kpkg" ]; then
		kpkg=$(resolve_kpkg)
		if [ -z "$kpkg" ]; then
			msg "  refreshing the package lists (apt-get update)"
			on_root_priv apt-get update -q >"$VM_DIR/apt.log" 2>&1 || true
			apt_updated=1
			kpkg=$(resolve_kpkg)
		fi
		[ -n "$kpkg" ] || die "cannot tell which kernel package to use: 'apt-cache depends linux-image-amd64' names none (run apt-get update, or set RPMA_VM_KERNEL_DEB)"
	fi
	kdeb=$(ls "$VM_DIR/debs/${kpkg}_"*.deb 2>/dev/null | head -n 1 || true)
	if [ -z "$kdeb" ]; then
		step "downloading kernel $kpkg"
		on_root /bin/sh -c 'cd "$1" && apt-get download -q "$2"' sh "$VM_DIR/debs" "$kpkg" \
			>"$VM_DIR/download.log" 2>&1 || {
			tail -n 5 "$VM_DIR/download.log" >&2
			die "apt-get download $kpkg failed (no network? set RPMA_VM_KERNEL_DEB to a local copy)"
		}
		kdeb=$(ls "$VM_DIR/debs/${kpkg}_"*.deb | head -n 1)
		step_done
	fi
fi
kversion=$(dpkg-deb -f "$kdeb" Version)

kv=$(state_get KV)
if [ "$force" = 1 ] || [ "$(state_get KPKG)" != "$kpkg" ] || [ -z "$kv" ] ||
	[ ! -r "$VM_DIR/kernel/lib/modules/$kv/modules.dep" ]; then
	step "unpacking $(basename "$kdeb")"
	rm -rf "$VM_DIR/kernel" "$VM_DIR/kernel.new"
	dpkg-deb -x "$kdeb" "$VM_DIR/kernel.new"
	# merged /usr (Debian 13): the modules are in usr/lib/modules
	if [ ! -e "$VM_DIR/kernel.new/lib" ] && [ -d "$VM_DIR/kernel.new/usr/lib/modules" ]; then
		ln -s usr/lib "$VM_DIR/kernel.new/lib"
	fi
	kv=$(ls "$VM_DIR/kernel.new/lib/modules" | head -n 1)
	[ -n "$kv" ] || die "$kdeb holds no /lib/modules tree"
	on_root depmod -b "$VM_DIR/kernel.new" "$kv"
	mv "$VM_DIR/kernel.new" "$VM_DIR/kernel"
	# a new kernel invalidates what was built for the old one
	rm -f "$VM_DIR/initramfs.cpio.gz" "$VM_DIR/siw/unavailable"
	: >"$VM_STATE"
	step_done
fi
kroot=$VM_DIR/kernel
kmods=$kroot/lib/modules/$kv

# --- 3. uncompressed kernel -------------------------------------------------
if [ ! -r "$kroot/boot/vmlinux-$kv" ]; then
	step "extracting vmlinux-$kv"
	python3 "$VM_SRCDIR/extract-vmlinux.py" "$kroot/boot/vmlinuz-$kv" "$kroot/boot/vmlinux-$kv" >&2 ||
		warn "no uncompressed kernel; booting the bzImage (slower under TCG)"
	step_done
fi

# --- 4. initramfs -----------------------------------------------------------
stale=0
[ -r "$VM_DIR/initramfs.cpio.gz" ] || stale=1
for f in "${initramfs_inputs[@]}"; do
	[ "$VM_DIR/initramfs.cpio.gz" -nt "$f" ] || stale=1
done
if [ "$force" = 1 ] || [ "$stale" = 1 ]; then
	step "building the initramfs"
	[ -x /bin/busybox ] || die "/bin/busybox missing (package busybox-static)"
	if command -v readelf >/dev/null && readelf -l /bin/busybox | grep -q INTERP; then
		die "/bin/busybox is dynamically linked: install busybox-static"
	fi
	w=$(mktemp -d "$VM_DIR/initramfs.XXXXXX")
	mkdir -p "$w"/{bin,dev,proc,sys,mods,lower,rw,newroot,job}
	cp /bin/busybox "$w/bin/busybox"
	: >"$w/mods/order"
	for m in virtio_pci virtio_console 9pnet_virtio 9p overlay; do
		on_root modprobe -d "$kroot" -S "$kv" --show-depends "$m" ||
			die "module $m not found in $kmods"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r p; do
		b=$(basename "$p")
		case "$b" in
		*.ko) cp "$p" "$w/mods/$b" ;;
		*.ko.xz) xz -dc "$p" >"$w/mods/${b%.xz}"; b=${b%.xz} ;;
		*.ko.zst) zstd -qdc "$p" >"$w/mods/${b%.zst}"; b=${b%.zst} ;;
		*.ko.gz) gzip -dc "$p" >"$w/mods/${b%.gz}"; b=${b%.gz} ;;
		esac
		echo "$b" >>"$w/mods/order"
	done
	install -m 755 "$VM_SRCDIR/guest/init.sh" "$w/init"
	(cd "$w" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$VM_DIR/initramfs.cpio.gz.new"
	mv "$VM_DIR/initramfs.cpio.gz.new" "$VM_DIR/initramfs.cpio.gz"
	msg "  modules: $(tr '\n' ' ' <"$w/mods/order")"
	rm -rf "$w"
	step_done
fi

# --- 5. modules built from Debian's kernel source --------------------------
# build_module MODULE DIR CONFIG [FIX]: MODULE.ko compiled out of tree from
# linux-source of the kernel's version (drivers/infiniband/sw/DIR, with
# CONFIG=m) against linux-headers of the image, after the script FIX edited
# the sources when given, into the kernel's updates/ (which modprobe
# prefers to the image's own). Status 1 with the reason in $build_failure.
# The sources of every module built here are unpacked together, once, into
# $sw_src: linux-source is one xz stream, which tar reads to its end for
# any member (about 15 s of processor time a pass).
build_failure=
sw_dirs="siw rxe"
sw_src=$VM_DIR/sw-src
rm -rf "$sw_src"
build_module() {
	local mod=$1 dir=$2 config=$3 fix=${4:-} srcpkg hdrpkg missing srcver tarball top d m
	local work=$VM_DIR/$dir members=()
	# linux-source-6.1 for kernel version 6.1.192-2
	srcpkg=linux-source-$(echo "$kversion" | cut -d. -f1-2)
	hdrpkg=linux-headers-$kv
	missing=$(pkg_missing "$srcpkg" "$hdrpkg" gcc make | tr '\n' ' ')
	if [ -n "$missing" ]; then
		step "installing packages for $mod.ko: $missing"
		# shellcheck disable=SC2086
		apt_install $missing || { build_failure="cannot install $missing"; return 1; }
		step_done
	fi
	srcver=$(dpkg-query --admindir="${ROOT%/}/var/lib/dpkg" -W -f='${Version}' "$srcpkg")
	[ "$srcver" = "$kversion" ] ||
		warn "$srcpkg is $srcver but the kernel is $kversion; building $mod.ko anyway"
	tarball=$(ls "${ROOT%/}/usr/src/$srcpkg".tar.* 2>/dev/null | head -n 1 || true)
	[ -n "$tarball" ] || { build_failure="no /usr/src/$srcpkg.tar.* (package $srcpkg)"; return 1; }
	step "building $mod.ko from $(basename "$tarball") for $kv${fix:+, with $(basename "$fix")}"
	mkdir -p "$work"
	: >"$work/build.log"
	top=$(basename "$tarball" | sed 's/\.tar\..*//')
	d=$sw_src/$top/drivers/infiniband/sw/$dir
	if [ ! -d "$d" ]; then
		rm -rf "$sw_src"
		mkdir -p "$sw_src"
		for m in $sw_dirs; do members+=("$top/drivers/infiniband/sw/$m/*"); done
		if ! tar -xf "$tarball" -C "$sw_src" --wildcards "${members[@]}" \
			>"$work/build.log" 2>&1 || [ ! -d "$d" ]; then
			build_failure="cannot unpack the $dir sources from $tarball"
			return 1
		fi
	fi
	if [ -n "$fix" ] && ! python3 "$fix" "$d" >>"$work/build.log" 2>&1; then
		tail -n 10 "$work/build.log" >&2
		build_failure="$(basename "$fix") does not apply to $top (log: $work/build.log)"
		return 1
	fi
	if ! on_root make -C "/usr/src/linux-headers-$kv" M="$d" "$config=m" -j"$(nproc)" modules \
		>>"$work/build.log" 2>&1 || [ ! -r "$d/$mod.ko" ]; then
		tail -n 10 "$work/build.log" >&2
		build_failure="compiling $mod.ko failed (log: $work/build.log)"
		return 1
	fi
	mkdir -p "$kmods/updates"
	cp "$d/$mod.ko" "$kmods/updates/$mod.ko"
	on_root depmod -b "$kroot" "$kv"
	local magic
	magic=$(modinfo -F vermagic "$kmods/updates/$mod.ko" | awk '{print $1}')
	[ "$magic" = "$kv" ] || warn "$mod.ko vermagic $magic differs from $kv"
	step_done
}

# siw.ko, which Debian does not build. Failing that, the reason is
# recorded and the siw suites fail with it.
siw_state=unavailable
mkdir -p "$VM_DIR/siw"
if [ "$want_siw" = 0 ] && [ ! -r "$kmods/updates/siw.ko" ]; then
	siw_state=skipped
elif [ "$force" = 0 ] && [ -r "$kmods/updates/siw.ko" ]; then
	siw_state=ok
elif [ "$force" = 0 ] && [ -r "$VM_DIR/siw/unavailable" ]; then
	msg "siw.ko: not built earlier: $(cat "$VM_DIR/siw/unavailable") (setup.sh --force retries)"
else
	rm -f "$VM_DIR/siw/unavailable"
	if build_module siw siw CONFIG_RDMA_SIW; then
		siw_state=ok
	else
		echo "$build_failure" >"$VM_DIR/siw/unavailable"
		warn "siw.ko not built: $build_failure (the $VM_FLAVOR siw suites cannot run)"
	fi
fi

# --- 6. rdma_rxe.ko with its fence fixed ------------------------------------
# Debian's rdma_rxe can stop a queue pair for ever after a retransmission
# when a fenced request (every rpma_atomic_write) has a read posted after
# it (rxe-fence-fix.py says how). Every suite over rxe would fail now and
# then for it; the fix is rebuilt when the script changes.
# RPMA_VM_RXE=stock keeps Debian's own module.
if [ "$rxe_want" = stock ]; then
	if [ -e "$kmods/updates/rdma_rxe.ko" ]; then
		rm -f "$kmods/updates/rdma_rxe.ko"
		on_root depmod -b "$kroot" "$kv"
	fi
	rxe_state=stock
elif [ "$force" = 0 ] && rxe_cached "$kv"; then
	rxe_state=$rxe_fix_id
elif build_module rdma_rxe rxe CONFIG_RDMA_RXE "$VM_SRCDIR/rxe-fence-fix.py"; then
	rxe_state=$rxe_fix_id
else
	die "rdma_rxe.ko with its fence fixed not built: $build_failure (RPMA_VM_RXE=stock runs Debian's own, whose fence can stop a queue pair: tests/vm/README.md)"
fi
rm -rf "$sw_src"

# --- done -------------------------------------------------------------------
cat >"$VM_STATE.new" <<EOF
KPKG=$kpkg
KV=$kv
KVERSION=$kversion
SIW=$siw_state
RXE=$rxe_state
COMPLETE=1
EOF
mv "$VM_STATE.new" "$VM_STATE"
mkdir -p "$VM_DIR/jobs"
msg "setup complete ($VM_FLAVOR): kernel $kv ($kversion), siw $siw_state, rxe $rxe_state ($(elapsed "$t_setup") s)"
