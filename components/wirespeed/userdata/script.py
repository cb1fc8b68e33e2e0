"""Render a tuning profile as the POSIX sh script that applies it once at boot, before kubelet starts.

The script is the boot-time half of the node agent: the same profile, the same rules (interface selection by
role, driver and name globs; ring size clamped to the device max that ``ethtool -g`` reports, rounded by the
driver's rule from the catalog), so the agent that starts later finds nothing to change. It never fails the
boot: an unknown NIC, a missing ``ethtool``, a sysctl that is absent or a write the kernel refuses are logged
and skipped, and the script always exits 0. Every change is logged (``wirespeed-tuning: ...`` on stdout, which
cloud-init keeps in /var/log/cloud-init-output.log) and a value already in place is left alone (idempotent).

cloud-init runs a ``text/x-shellscript`` part once per instance, not on every boot: the sysctls are therefore
also written to ``/etc/sysctl.d/99-wirespeed-tuning.conf`` (systemd-sysctl applies them on every boot), and
after a reboot the rings are the agent's to restore.

Pure: reads the profile and the catalog's NIC facts, imports no Pulumi.
"""

from __future__ import annotations

import re

from wirespeed import catalog
from wirespeed.catalog import UnknownDriver
from wirespeed.errors import UserError
from wirespeed.problems import InvalidInputError, Problem
from wirespeed.profile import Profile

SYSCTL_CONF = "99-wirespeed-tuning.conf"
# The first comment line of every rendered script: `wirespeed audit aws` looks for it in launch template user data.
SCRIPT_MARKER = "# wirespeed boot-time tuning:"
LOG_PREFIX = "wirespeed-tuning"

# Interface globs are written into the script as sh `case` patterns, unquoted so they keep glob meaning:
# only characters that cannot end the pattern or start an expansion are allowed.
SAFE_GLOB = re.compile(r"^[A-Za-z0-9_.:@%+=,*?!^\[\]-]+$")
SAFE_GLOB_ALLOWED = "letters, digits, _ . : @ % + = , - and the glob characters * ? [ ] ^ !"
# A profile's globs mean what the agent's Go path.Match makes of them (wirespeed.profile.GLOB_PATTERN): '[^...]'
# negates a class and a '!' is a character like any other. POSIX sh negates with '[!...]' instead, and dash reads
# '[^...]' as a class holding '^' (busybox negates): so the script gets '[!...]' for '[^...]', and a class that
# starts with a literal '!' gets it moved to its end. Validated globs have no escapes here (SAFE_GLOB has no
# backslash), so the first ']' after '[' closes the class.
_CLASS = re.compile(r"\[([^\]]*)\]")
BANG_RANGE_ALLOWED = "a class may not start with a range from '!' (e.g. [!-%]): sh would read it as a negation"

# The sh names of the catalog's rounding rules (catalog._model.Rounding).
_RULES = {"up_power_of_two": "up", "down_power_of_two": "down", "multiple_of_8": "mult8", "none": "none"}


class ScriptError(UserError, InvalidInputError):
    """The profile cannot be rendered as a boot script; ``problems`` lists every reason, each at its JSON pointer."""

    field = "profile"

    def __init__(self, problems: list[Problem]):
        super().__init__("profile cannot be rendered as a boot script", problems)


def script_problems(profile: Profile) -> list[Problem]:
    """Every reason ``profile`` cannot become a boot script (empty when it can), each at its JSON pointer."""
    problems = []
    for kind in ("include", "exclude"):
        for index, glob in enumerate(getattr(profile.interfaces, kind)):
            if not SAFE_GLOB.match(glob):
                problems.append(Problem.refused(f"/interfaces/{kind}/{index}", glob, SAFE_GLOB_ALLOWED))
            elif any(body.startswith("!-") for body in _CLASS.findall(glob)):
                problems.append(Problem.refused(f"/interfaces/{kind}/{index}", glob, BANG_RANGE_ALLOWED))
    return problems


def _sh_class(match: re.Match[str]) -> str:
    body = match[1]
    if body.startswith("^"):
        return f"[!{body[1:]}]"  # after sh's negating '!', another '!' is a character again
    if body == "!":
        return "!"  # a class of '!' alone: '!' outside a class is itself in a case pattern
    if body.startswith("!"):
        return f"[{body[1:]}!]"
    return match[0]


def sh_pattern(glob: str) -> str:
    """``glob`` (Go path.Match syntax, as the agent matches it) as the sh `case` pattern that matches the same names."""
    return _CLASS.sub(_sh_class, glob)


def _case_patterns(globs: list[str]) -> str:
    return "|".join(sh_pattern(glob) for glob in globs)


def _ring_arm(driver: str, profile: Profile) -> str:
    """One `case` arm of ws_ring_plan: "RX TX RX_MIN TX_MIN RULE" for a driver ('-': leave it alone)."""
    size = profile.rings[driver]
    try:
        facts = catalog.nic_driver(driver)
    except UnknownDriver:
        facts = None
    if facts is not None and not facts.has_rings:
        return f"\t{driver}) return 2 ;; # {facts.description}"
    rx_min = tx_min = "-"
    rule = "none"
    if facts is not None and facts.rx is not None and facts.tx is not None:
        rx_min, tx_min, rule = str(facts.rx.min), str(facts.tx.min), _RULES[facts.rounding]
    rx = "-" if size.rx is None else str(size.rx)
    tx = "-" if size.tx is None else str(size.tx)
    source = "catalog" if facts is not None else "not in the catalog: device max only"
    return f'\t{driver}) echo "{rx} {tx} {rx_min} {tx_min} {rule}" ;; # {source}'


_HEAD = """\
#!/bin/sh
{marker} profile "{name}" (rendered by wirespeed from the profile: edit that, not this).
# Sets the profile's sysctls, NIC ring sizes and MTU before kubelet starts. Never fails the boot: whatever it
# cannot do (unknown NIC, no ethtool, a refused write) is logged and skipped, and it always exits 0.
# Idempotent: a value already in place is left alone. Ring sizes are clamped to the max `ethtool -g` reports and
# rounded as the driver would (wirespeed's NIC catalog), as the wirespeed node agent does.
# Test seams, unset on a node: WIRESPEED_PROC_SYS, WIRESPEED_SYS_CLASS_NET, WIRESPEED_SYSCTL_D.

ws_proc_sys=${{WIRESPEED_PROC_SYS:-/proc/sys}}
ws_class_net=${{WIRESPEED_SYS_CLASS_NET:-/sys/class/net}}
ws_sysctl_d=${{WIRESPEED_SYSCTL_D:-/etc/sysctl.d}}

ws_log() {{
	echo "{prefix}: $*"
}}

ws_sysctl() {{ # NAME PATH-UNDER-/proc/sys VALUE
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
}}

ws_persist_sysctls() {{ # CONTENT: keep the sysctls across reboots (cloud-init runs this script once per instance)
	ws_conf="$ws_sysctl_d/{conf}"
	if [ "$(cat "$ws_conf" 2>/dev/null)" = "$1" ]; then
		ws_log "sysctl: $ws_conf already up to date"
	elif mkdir -p "$ws_sysctl_d" 2>/dev/null && (printf '%s\\n' "$1" >"$ws_conf") 2>/dev/null; then
		ws_log "sysctl: wrote $ws_conf"
	else
		ws_log "sysctl: could not write $ws_conf; the values above last until reboot"
	fi
}}

ws_size() {{ # WANT DEVICE-MAX MIN RULE -> the ring size to ask for (the agent's rings.Size)
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
}}

ws_read_rings() {{ # IFACE -> "MAX_RX MAX_TX CUR_RX CUR_TX" from `ethtool -g` (0: the device has none)
	ethtool -g "$1" 2>/dev/null | awk '
		/^Pre-set maximums/ {{ s = "max" }}
		/^Current hardware settings/ {{ s = "cur" }}
		s != "" && /^RX:/ {{ v[s "rx"] = $2 }}
		s != "" && /^TX:/ {{ v[s "tx"] = $2 }}
		END {{ if (!("maxrx" in v)) exit 1; print v["maxrx"] + 0, v["maxtx"] + 0, v["currx"] + 0, v["curtx"] + 0 }}'
}}
"""

_TUNE = """
ws_selected() {{ # IFACE SYSFS-DIR: decide role and driver, log why a link is skipped
	ws_if=$1 ws_dir=$2
{name_filters}	if [ ! -e "$ws_dir/device" ]; then
		ws_role=virtual
	elif [ -e "$ws_dir/device/physfn" ] || [ -e "$ws_dir/master/device" ]; then
		ws_role=sriov-vf
	else
		ws_role=primary
	fi
	case $ws_role in
	{roles}) ;;
	*) ws_log "$ws_if: skipped, role $ws_role not selected"; return 1 ;;
	esac
	ws_drv=
	if [ -e "$ws_dir/device/driver" ]; then
		ws_drv=$(readlink "$ws_dir/device/driver" 2>/dev/null)
		ws_drv=${{ws_drv##*/}}
	fi
	if [ -z "$ws_drv" ] && [ -n "$ws_ethtool" ]; then
		ws_drv=$(ethtool -i "$ws_if" 2>/dev/null | sed -n 's/^driver: //p')
	fi
	if [ -z "$ws_drv" ]; then
		ws_log "$ws_if: skipped, driver unknown"
		return 1
	fi
{driver_filter}	return 0
}}

ws_ring_plan() {{ # DRIVER -> "RX TX RX_MIN TX_MIN RULE"; 1: no rings in the profile, 2: the driver has none
	case $1 in
{ring_arms}	*) return 1 ;;
	esac
}}

ws_tune_rings() {{ # IFACE DRIVER
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
}}
"""

_MTU = """
ws_tune_mtu() {{ # IFACE DRIVER SYSFS-DIR
{driver_case}	ws_mtu=$(cat "$3/mtu" 2>/dev/null)
	if [ "$ws_mtu" = {mtu} ]; then
		ws_log "$1 ($2): mtu already {mtu}"
	elif ! command -v ip >/dev/null 2>&1; then
		ws_log "$1 ($2): ip not found, mtu left at $ws_mtu"
	elif ws_err=$(ip link set dev "$1" mtu {mtu} 2>&1); then
		ws_log "$1 ($2): mtu $ws_mtu -> {mtu}"
	else
		ws_log "$1 ($2): mtu {mtu} refused, left at $ws_mtu: $ws_err"
	fi
}}
"""

_MAIN = """
ws_main() {{
	ws_log "applying profile {name}"
{sysctls}	ws_ethtool=$(command -v ethtool 2>/dev/null)
	for ws_path in "$ws_class_net"/*; do
		[ -e "$ws_path" ] || continue
		ws_name=${{ws_path##*/}}
		ws_selected "$ws_name" "$ws_path" || continue
		ws_link_driver=$ws_drv
		ws_tune_rings "$ws_name" "$ws_link_driver"
{mtu_call}	done
	ws_log "done"
}}

ws_main || ws_log "stopped early; the boot continues"
exit 0
"""


def render_script(profile: Profile) -> str:
    """The boot script for ``profile``. Raises :class:`ScriptError` listing every problem."""
    problems = script_problems(profile)
    if problems:
        raise ScriptError(problems)
    selector = profile.interfaces
    name_filters = ""
    if selector.include:
        name_filters += (
            f"\tcase $ws_if in\n\t{_case_patterns(selector.include)}) ;;\n"
            '\t*) ws_log "$ws_if: skipped, name matches no include glob"; return 1 ;;\n\tesac\n'
        )
    if selector.exclude:
        name_filters += (
            f"\tcase $ws_if in\n\t{_case_patterns(selector.exclude)})\n"
            '\t\tws_log "$ws_if: skipped, name matches an exclude glob"\n\t\treturn 1\n\t\t;;\n\tesac\n'
        )
    driver_filter = ""
    if selector.drivers:
        driver_filter = (
            f"\tcase $ws_drv in\n\t{'|'.join(selector.drivers)}) ;;\n"
            '\t*) ws_log "$ws_if: skipped, driver $ws_drv not selected"; return 1 ;;\n\tesac\n'
        )
    ring_arms = "".join(_ring_arm(driver, profile) + "\n" for driver in sorted(profile.rings))

    sysctls = profile.sysctls.as_dict()
    sysctl_lines = "".join(f"\tws_sysctl {name} {name.replace('.', '/')} {value}\n" for name, value in sysctls.items())
    if sysctls:
        conf = "\n".join(
            [f"# wirespeed profile {profile.name}: written at first boot by the wirespeed tuning script"]
            + [f"{name} = {value}" for name, value in sysctls.items()]
        )
        sysctl_lines += f"\tws_persist_sysctls '{conf}'\n"

    mtu_part, mtu_call = "", ""
    if profile.mtu is not None:
        driver_case = ""
        if profile.mtu.drivers:
            driver_case = f"\tcase $2 in\n\t{'|'.join(profile.mtu.drivers)}) ;;\n\t*) return 0 ;;\n\tesac\n"
        mtu_part = _MTU.format(driver_case=driver_case, mtu=profile.mtu.value)
        mtu_call = '\t\tws_tune_mtu "$ws_name" "$ws_link_driver" "$ws_path"\n'

    return (
        _HEAD.format(marker=SCRIPT_MARKER, name=profile.name, prefix=LOG_PREFIX, conf=SYSCTL_CONF)
        + _TUNE.format(
            name_filters=name_filters,
            roles="|".join(selector.roles),
            driver_filter=driver_filter,
            ring_arms=ring_arms,
        )
        + mtu_part
        + _MAIN.format(name=profile.name, sysctls=sysctl_lines, mtu_call=mtu_call)
    )
