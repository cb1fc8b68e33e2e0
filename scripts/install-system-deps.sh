#!/usr/bin/env bash
# Debian packages the test suite needs: real kernel objects (netns, veth, nftables), a QEMU guest with
# real NIC drivers, and etcd for a real Kubernetes API server. QEMU >= 8 is needed for the emulated igb NIC
# (SR-IOV VFs); bookworm has 7.2, so QEMU comes from bookworm-backports. Idempotent: installs only what is missing. Needs root (CI runs as root).
# Another package manager holding apt's locks (unattended-upgrades on a fresh VM) is waited for, at most
# WIRESPEED_APT_LOCK_TIMEOUT seconds in all (default 900): scripts/apt-lock.sh.
set -euo pipefail
# shellcheck source=scripts/apt-lock.sh
source "$(dirname "$0")/apt-lock.sh"

# The shellcheck package lints the rendered EKS boot scripts and this repository's shell scripts.
# prometheus: promtool checks and unit-tests the generated alert rules and parses every dashboard query.
# etcd-server and openssl: the real API server the tests start (tests/apiserver.py; etcd 3.4 works with the
# kube-apiserver builders/apiserver/build.sh builds).
# qemu-user: qemu-aarch64 runs the arm64 agent image's binary (agent/image); Debian's user-mode emulator, 12 MB, called
# directly, so no binfmt_misc registration.
packages=(busybox-static cpio nftables iproute2 ethtool kmod zstd xz-utils prometheus etcd-server openssl shellcheck qemu-user)
backports=(qemu-system-x86)
# nodejs and npm: tests/manifests/test_dashboard.py type-checks the Grafana dashboard against @grafana/schema with tsc, both
# installed by `npm ci` from tests/grafana-schema/. Only when no npm is on PATH: a Node.js from elsewhere (NodeSource's
# nodejs package bundles npm) must not be replaced by Debian's.
if ! command -v npm >/dev/null 2>&1; then packages+=(nodejs npm); fi

missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
qemu_major=$(qemu-system-x86_64 --version 2>/dev/null | sed -n 's/.*version \([0-9]*\)\..*/\1/p' || true)
need_qemu=0
if [ -z "$qemu_major" ] || [ "$qemu_major" -lt 8 ]; then need_qemu=1; fi
if [ ${#missing[@]} -eq 0 ] && [ $need_qemu -eq 0 ]; then exit 0; fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-system-deps: missing ${missing[*]} ${backports[*]}; run as root (sudo $0)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ $need_qemu -eq 1 ] && ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  # Reuse the mirror this machine already uses for bookworm, so no host is hard-coded here.
  uri=$(grep -rhs '^URIs:' /etc/apt/sources.list.d/debian.sources | head -n1 | awk '{print $2}')
  if [ -z "$uri" ]; then
    uri=$(awk '$1=="deb" && $3=="bookworm" {print $2; exit}' /etc/apt/sources.list)
  fi
  printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" > /etc/apt/sources.list.d/wirespeed-backports.sources
fi
echo "install-system-deps: installing ${missing[*]}$([ $need_qemu -eq 1 ] && echo " ${backports[*]} (bookworm-backports)")"
apt_get update -qq
if [ ${#missing[@]} -gt 0 ]; then apt_get install -y -qq --no-install-recommends "${missing[@]}"; fi
if [ $need_qemu -eq 1 ]; then apt_get install -y -qq --no-install-recommends -t bookworm-backports "${backports[@]}"; fi
