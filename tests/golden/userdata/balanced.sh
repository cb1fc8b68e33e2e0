#!/bin/sh
# wirespeed boot-time tuning: profile "balanced" (rendered by wirespeed from the profile: edit that, not this).
# Sets the profile's sysctls, NIC ring sizes and MTU before kubelet starts. Never fails the boot: whatever it
# cannot do (unknown NIC, no ethtool, a refused write) is logged and skipped, and it always exits 0.
# Idempotent: a value already in place is left alone. Ring sizes are clamped to the max `ethtool -g` reports and
# rounded as the driver would (wirespeed's NIC catalog), as the wirespeed node agent does.
# Test seams, unset on a node: WIRESPEED_PROC_SYS, WIRESPEED_SYS_CLASS_NET, WIRESPEED_SYSCTL_D.

ws_proc_sys=${WIRESPEED_PROC_SYS:-/proc/sys}
ws_class_net=${WIRESPEED_SYS_CLASS_NET:-/sys/class/net}
ws_sysctl_d=${WIRESPEED_SYSCTL_D:-/etc/sysctl.d}

ws_log() {
	echo "wirespeed-tuning: $*"
}

ws_sysctl() { # NAME PATH-UNDER-/proc/sys VALUE
	if ! ws_now=$(cat "$ws_proc_sys/$2" 2>/dev/null); then
		ws_log "sysctl $1: not present, skipped"
		return 0
	fi
	if [ "$ws_now" = "$3" ]; then
		ws_log "sysctl $1: already $3"
	elif (echo "$3" >"$ws_proc_sys/$2") 2>/dev/null; then
		ws_log "sysctl $1: $ws_now -> $3"
	else
		ws_log "sysctl $1: writing $3 refused, left at $ws_now"
	fi
}

ws_persist_sysctls() { # CONTENT: keep the sysctls across reboots (cloud-init runs this script once per instance)
	ws_conf="$ws_sysctl_d/99-wirespeed-tuning.conf"
	if [ "$(cat "$ws_conf" 2>/dev/null)" = "$1" ]; then
		ws_log "sysctl: $ws_conf already up to date"
	elif mkdir -p "$ws_sysctl_d" 2>/dev/null && (printf '%s\n' "$1" >"$ws_conf") 2>/dev/null; then
		ws_log "sysctl: wrote $ws_conf"
	else
		ws_log "sysctl: could not write $ws_conf; the values above last until reboot"
	fi
}

ws_size() { # WANT DEVICE-MAX MIN RULE -> the ring size to ask for (the agent's rings.Size)
	ws_n=$1
	if [ "$3" != - ] && [ "$ws_n" -lt "$3" ]; then ws_n=$3; fi
	case $4 in
	up) ws_p=1; while [ "$ws_p" -lt "$ws_n" ]; do ws_p=$((ws_p * 2)); done; ws_n=$ws_p ;;
	down) ws_p=1; while [ $((ws_p * 2)) -le "$ws_n" ]; do ws_p=$((ws_p * 2)); done; ws_n=$ws_p ;;
	mult8) ws_n=$(((ws_n + 7) / 8 * 8)) ;;
	esac
	if [ "$ws_n" -gt "$2" ]; then
		ws_n=$2
		case $4 in
		up | down) ws_p=1; while [ $((ws_p * 2)) -le "$ws_n" ]; do ws_p=$((ws_p * 2)); done; ws_n=$ws_p ;;
		mult8) ws_n=$((ws_n / 8 * 8)) ;;
		esac
	fi
	echo "$ws_n"
}

ws_read_rings() { # IFACE -> "MAX_RX MAX_TX CUR_RX CUR_TX" from `ethtool -g` (0: the device has none)
	ethtool -g "$1" 2>/dev/null | awk '
		/^Pre-set maximums/ { s = "max" }
		/^Current hardware settings/ { s = "cur" }
		s != "" && /^RX:/ { v[s "rx"] = $2 }
		s != "" && /^TX:/ { v[s "tx"] = $2 }
		END { if (!("maxrx" in v)) exit 1; print v["maxrx"] + 0, v["maxtx"] + 0, v["currx"] + 0, v["curtx"] + 0 }'
}

ws_selected() { # IFACE SYSFS-DIR: decide role and driver, log why a link is skipped
	ws_if=$1 ws_dir=$2
	case $ws_if in
	lo|veth*|lxc*|cilium_*|cni*|flannel*|vxlan*|geneve*|genev_sys_*|tunl*|docker*|br-*|virbr*|kube-*|azv*|eni*|antrea-*|weave*)
		ws_log "$ws_if: skipped, name matches an exclude glob"
		return 1
		;;
	esac
	if [ ! -e "$ws_dir/device" ]; then
		ws_role=virtual
	elif [ -e "$ws_dir/device/physfn" ] || [ -e "$ws_dir/master/device" ]; then
		ws_role=sriov-vf
	else
		ws_role=primary
	fi
	case $ws_role in
	sriov-vf|primary) ;;
	*) ws_log "$ws_if: skipped, role $ws_role not selected"; return 1 ;;
	esac
	ws_drv=
	if [ -e "$ws_dir/device/driver" ]; then
		ws_drv=$(readlink "$ws_dir/device/driver" 2>/dev/null)
		ws_drv=${ws_drv##*/}
	fi
	if [ -z "$ws_drv" ] && [ -n "$ws_ethtool" ]; then
		ws_drv=$(ethtool -i "$ws_if" 2>/dev/null | sed -n 's/^driver: //p')
	fi
	if [ -z "$ws_drv" ]; then
		ws_log "$ws_if: skipped, driver unknown"
		return 1
	fi
	return 0
}

ws_ring_plan() { # DRIVER -> "RX TX RX_MIN TX_MIN RULE"; 1: no rings in the profile, 2: the driver has none
	case $1 in
	ena) echo "2048 1024 256 256 down" ;; # catalog
	mana) echo "2048 2048 128 128 up" ;; # catalog
	mlx4_en) echo "2048 2048 256 64 up" ;; # catalog
	mlx5_core) echo "2048 2048 16 64 up" ;; # catalog
	*) return 1 ;;
	esac
}

ws_tune_rings() { # IFACE DRIVER
	ws_plan=$(ws_ring_plan "$2")
	case $? in
	1) ws_log "$1 ($2): no ring sizes for this driver in the profile, left alone"; return 0 ;;
	2) ws_log "$1 ($2): the driver has no NIC rings to set, left alone"; return 0 ;;
	esac
	if [ -z "$ws_ethtool" ]; then
		ws_log "$1 ($2): ethtool not found, rings left to the node agent"
		return 0
	fi
	if ! ws_rings=$(ws_read_rings "$1"); then
		ws_log "$1 ($2): ethtool -g failed, rings left alone"
		return 0
	fi
	read -r ws_want_rx ws_want_tx ws_min_rx ws_min_tx ws_rule <<EOF
$ws_plan
EOF
	read -r ws_max_rx ws_max_tx ws_cur_rx ws_cur_tx <<EOF
$ws_rings
EOF
	set -- "$1" "$2"
	ws_new_rx=$ws_cur_rx ws_new_tx=$ws_cur_tx
	if [ "$ws_want_rx" != - ] && [ "$ws_max_rx" -gt 0 ]; then
		ws_new_rx=$(ws_size "$ws_want_rx" "$ws_max_rx" "$ws_min_rx" "$ws_rule")
		if [ "$ws_new_rx" != "$ws_cur_rx" ]; then set -- "$@" rx "$ws_new_rx"; fi
	fi
	if [ "$ws_want_tx" != - ] && [ "$ws_max_tx" -gt 0 ]; then
		ws_new_tx=$(ws_size "$ws_want_tx" "$ws_max_tx" "$ws_min_tx" "$ws_rule")
		if [ "$ws_new_tx" != "$ws_cur_tx" ]; then set -- "$@" tx "$ws_new_tx"; fi
	fi
	ws_if=$1 ws_drv=$2
	shift 2
	if [ $# -eq 0 ]; then
		ws_log "$ws_if ($ws_drv): rings already rx $ws_cur_rx tx $ws_cur_tx (max rx $ws_max_rx tx $ws_max_tx)"
		return 0
	fi
	if ! ws_err=$(ethtool -G "$ws_if" "$@" 2>&1); then
		ws_log "$ws_if ($ws_drv): ethtool -G $ws_if $* refused, rings left at rx $ws_cur_rx tx $ws_cur_tx: $ws_err"
		return 0
	fi
	ws_after=$(ws_read_rings "$ws_if")
	read -r ws_max_rx ws_max_tx ws_cur_rx2 ws_cur_tx2 <<EOF
$ws_after
EOF
	if [ "$ws_cur_rx2" != "$ws_cur_rx" ]; then
		ws_log "$ws_if ($ws_drv): rx ring $ws_cur_rx -> $ws_cur_rx2 (asked $ws_new_rx, max $ws_max_rx)"
	fi
	if [ "$ws_cur_tx2" != "$ws_cur_tx" ]; then
		ws_log "$ws_if ($ws_drv): tx ring $ws_cur_tx -> $ws_cur_tx2 (asked $ws_new_tx, max $ws_max_tx)"
	fi
	if [ "$ws_cur_rx2" != "$ws_new_rx" ] || [ "$ws_cur_tx2" != "$ws_new_tx" ]; then
		ws_log "$ws_if ($ws_drv): the device kept rx $ws_cur_rx2 tx $ws_cur_tx2, not rx $ws_new_rx tx $ws_new_tx"
	fi
	return 0
}

ws_main() {
	ws_log "applying profile balanced"
	ws_sysctl net.core.netdev_max_backlog net/core/netdev_max_backlog 8192
	ws_persist_sysctls '# wirespeed profile balanced: written at first boot by the wirespeed tuning script
net.core.netdev_max_backlog = 8192'
	ws_ethtool=$(command -v ethtool 2>/dev/null)
	for ws_path in "$ws_class_net"/*; do
		[ -e "$ws_path" ] || continue
		ws_name=${ws_path##*/}
		ws_selected "$ws_name" "$ws_path" || continue
		ws_link_driver=$ws_drv
		ws_tune_rings "$ws_name" "$ws_link_driver"
	done
	ws_log "done"
}

ws_main || ws_log "stopped early; the boot continues"
exit 0
