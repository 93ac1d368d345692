#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/debian/check-packages.sh build|lintian SOURCE_DIR OUT_DIR VERSION
#
# The Debian packages of the tree, built by build-packages.sh into
# OUT_DIR/debs (or taken from there when this tree's are built already):
#
#   build    the three packages are there, of the project's version; each
#            takes the place of its Debian counterpart as debian/control
#            says (Provides with the version, Conflicts, Replaces), so that
#            a program whose package depends on librpma0 (>= 1.0), as
#            Debian's symbols file has it, keeps its dependency satisfied;
#            each holds what it must; the packaged librpma.so.0 needs only
#            libc, libibverbs and librdmacm, as Debian's does.
#   lintian  lintian reports neither an error nor a warning (the warnings
#            that are explained are overridden in debian/*.lintian-overrides,
#            each with its reason); its verdict is kept with the packages,
#            since it is the same for the same packages.
set -euo pipefail

[ $# -eq 4 ] || { echo "usage: $0 build|lintian SOURCE_DIR OUT_DIR VERSION" >&2; exit 2; }
what=$1 src=$2 out=$3 version=$4
here=$(cd "$(dirname "$0")" && pwd)

for tool in dpkg-buildpackage dh objdump; do
	command -v "$tool" >/dev/null || {
		echo "FAIL: $tool is missing (packages dpkg-dev, debhelper, binutils:" \
			"tests/install-deps.sh test installs them)"
		exit 1
	}
done
"$here/build-packages.sh" "$src" "$out"
debs=$out/debs
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

if [ "$what" = lintian ]; then
	command -v lintian >/dev/null || {
		echo "FAIL: lintian is missing (tests/install-deps.sh test installs it)"
		exit 1
	}
	verdict=$out/lintian.$(cat "$out/key").$(dpkg-query -W -f '${Version}' lintian)
	if [ ! -f "$verdict" ]; then
		rc=0
		start=$(date +%s)
		# (--show-overrides would count the overridden warnings as failures)
		lintian --fail-on error,warning --display-info \
			"$debs"/rpma-ng_"$version"_"$arch".changes >"$verdict.log" 2>&1 || rc=$?
		echo "lintian: $(($(date +%s) - start)) s" >>"$verdict.log"
		echo "$rc" >"$verdict.rc"
		mv "$verdict.log" "$verdict"
	fi
	grep -v '^running with root privileges' "$verdict" || true
	[ "$(cat "$verdict.rc")" = 0 ] || fail "lintian found errors or warnings that are not overridden"
	for o in "$src"/debian/*.lintian-overrides; do
		[ -e "$o" ] || continue
		echo "overridden in debian/$(basename "$o"), with the reason:"
		sed 's/^/    /' "$o"
	done
	[ "$failures" -eq 0 ] && echo "lintian: no error, no warning but those overridden"
	exit $((failures != 0))
fi

pkgs=(librpma-ng0 librpma-ng-dev rpma-ng-tools)
for p in "${pkgs[@]}"; do
	[ -f "$debs/${p}_${version}_${arch}.deb" ] || fail "${p}_${version}_${arch}.deb was not built"
done
for deb in "$debs"/*.deb; do
	name=$(basename "$deb")
	case " ${pkgs[*]} " in
	*" ${name%%_*} "*) ;;
	*) fail "a package that is not to be built: $name" ;;
	esac
done
[ "$failures" -eq 0 ] || exit 1

# field PACKAGE FIELD: the field of the package's control file
field() { dpkg-deb -f "$debs/${1}_${version}_${arch}.deb" "$2"; }
# takes_place PACKAGE DEBIAN_PACKAGE: provides it at its own version,
# conflicts with it and replaces it
takes_place() {
	grep -qE "(^|, )$2 \(= $version\)(,|$)" <<<"$(field "$1" Provides)" ||
		fail "$1 does not provide $2 (= $version): Provides: $(field "$1" Provides)"
	for f in Conflicts Replaces; do
		grep -qE "(^|, )$2(,|$)" <<<"$(field "$1" "$f")" ||
			fail "$1 does not say $f: $2 ($f: $(field "$1" "$f"))"
	done
}
takes_place librpma-ng0 librpma0
takes_place librpma-ng-dev librpma-dev
grep -qF "librpma-ng0 (= $version)" <<<"$(field librpma-ng-dev Depends)" ||
	fail "librpma-ng-dev does not depend on librpma-ng0 (= $version)"

# contents PACKAGE PATH...: the package holds each path (./ relative)
contents() {
	local p=$1 list
	shift
	list=$(dpkg-deb -c "$debs/${p}_${version}_${arch}.deb" | awk '{print $6}')
	for f in "$@"; do
		grep -qxF "./$f" <<<"$list" || fail "$p does not hold /$f"
	done
}
lib=usr/lib/$multiarch
contents librpma-ng0 "$lib/librpma.so.0"
contents librpma-ng-dev usr/include/librpma.h usr/include/rpma.hpp usr/include/rpma/conn.hpp \
	"$lib/librpma.so" "$lib/pkgconfig/librpma.pc" "$lib/librpma/cmake/librpma-config.cmake" \
	"$lib/librpma/cmake/librpma-config-version.cmake" usr/share/man/man3/rpma_flush.3.gz \
	usr/share/man/man3/rpma_op.3.gz usr/share/man/man7/librpma.7.gz \
	usr/share/man/man7/rpma.hpp.7.gz
contents rpma-ng-tools usr/bin/rpma-mirror usr/share/man/man1/rpma-mirror.1.gz

# the library as packaged (built with Debian's flags) needs what Debian's needs
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$debs/librpma-ng0_${version}_${arch}.deb" "$root"
python3 "$src/tests/abi/check_needed.py" objdump "$root/$lib/librpma.so.0" none ||
	fail "the packaged librpma.so.0 needs more than libc, libibverbs and librdmacm"

if [ "$failures" -ne 0 ]; then
	echo "$failures problem(s)"
	exit 1
fi
echo "packages of rpma-ng $version ($arch): ${pkgs[*]}: ok"
