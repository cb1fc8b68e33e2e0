#!/bin/sh
# Fetch the pinned Debian generic kernel for the real-driver QEMU tests and unpack it into a cache.
#
# Why the generic flavour: the cloud flavour (linux-image-*-cloud-amd64) is built without e1000e, igb and
# igbvf (its config has CONFIG_E1000E unset); the generic one builds them as modules, alongside virtio_net.
# Why 6.1.0-50 (6.1.176-1, Debian 12 "bookworm" main): virtio_net ring resize (ethtool -G) needs kernel
# >= 6.0 with VIRTIO_F_RING_RESET (Linux commit "virtio_net: support set_ringparam", v6.0), and bookworm main
# is the suite whose packages stay put between point releases. When a point release drops that ABI's
# package, the script follows bookworm's linux-image-amd64 to the current 6.1 generic kernel.
#
# The .deb is only unpacked (dpkg-deb -x), never installed; depmod -b writes modules.dep into the unpacked
# tree because the package ships none (its postinst runs depmod on install).
#
# Idempotent: a complete cache (marked by .complete) is left alone. Prints the kernel tree's path.
# Usage: fetch-kernel.sh [CACHE_DIR]   (default: the .cache directory next to this script)
# Env:   WIRESPEED_QEMU_KERNEL_PKG overrides the package (e.g. linux-image-6.12.95+deb12-amd64 from
#        bookworm-backports); the kernel release is taken from the package name.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-"$here/.cache"}
pinned=linux-image-6.1.0-50-amd64
pkg=${WIRESPEED_QEMU_KERNEL_PKG:-$pinned}
if [ -z "${WIRESPEED_QEMU_KERNEL_PKG:-}" ] && ! apt-cache show "$pkg" >/dev/null 2>&1; then
	# Debian removes an ABI's package from bookworm at the next point release: follow bookworm's own
	# generic metapackage (never backports) to the current 6.1 kernel rather than fail every CI run.
	meta=$(apt-cache madison linux-image-amd64 |
		awk -F'|' '$3 ~ /bookworm(-security)?\/main/ && $3 !~ /backports/ {gsub(/ /, "", $2); print $2; exit}')
	current=$(apt-cache depends "linux-image-amd64=$meta" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ {print $2; exit}')
	if [ -n "$current" ]; then
		echo "fetch-kernel.sh: $pinned is no longer in the archive; using $current (bookworm linux-image-amd64 $meta)" >&2
		pkg=$current
	fi
fi
release=${pkg#linux-image-}
tree="$cache/$pkg"

if [ -f "$tree/.complete" ]; then
	echo "$tree"
	exit 0
fi

for tool in apt-get dpkg-deb depmod flock; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "fetch-kernel.sh: $tool not found (install apt, dpkg, kmod and util-linux)" >&2
		exit 1
	}
done

mkdir -p "$cache"
# Two test runs at once (several engineers share this machine) must not unpack over each other.
exec 9>"$cache/.lock"
flock 9
if [ -f "$tree/.complete" ]; then
	echo "$tree"
	exit 0
fi
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT

# apt-get download writes into the current directory; it warns (harmlessly) when run as root because the
# _apt sandbox user cannot write to a private temp dir.
if ! (cd "$work" && apt-get download -q "$pkg" >&2); then
	echo "fetch-kernel.sh: apt-get download $pkg failed: run apt-get update; if Debian no longer carries" \
		"$pkg, set WIRESPEED_QEMU_KERNEL_PKG to a current linux-image-6.1.0-*-amd64" >&2
	exit 1
fi
deb=$(ls "$work"/*.deb)
dpkg-deb -x "$deb" "$work/root"
depmod -b "$work/root" "$release"

test -f "$work/root/boot/vmlinuz-$release" || {
	echo "fetch-kernel.sh: $deb has no boot/vmlinuz-$release" >&2
	exit 1
}

rm -rf "$tree"
mkdir -p "$tree"
mv "$work/root/boot" "$work/root/lib" "$tree/"
echo "$release" >"$tree/release"
basename "$deb" >"$tree/deb"
touch "$tree/.complete"
echo "$tree"
