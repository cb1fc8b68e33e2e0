# shellcheck shell=bash
# apt_get: apt-get that waits, within one bounded total, for another package manager to finish. A fresh VM runs
# unattended-upgrades (or cloud-init's apt) right after boot, and plain apt-get fails at once on its lock:
#   E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1234 (unattended-upgr)
# `install` waits on dpkg's locks through apt's own DPkg::Lock::Timeout; `update` takes the package lists' lock,
# which that option does not cover (apt 2.6 fails at once), so the lock's holder is waited for here, and an update
# that still lost the race is run again. The lock files come from apt's configuration (APT_CONFIG is honoured).
#
#   source scripts/apt-lock.sh; apt_get update; apt_get install -y PACKAGE...
#
# WIRESPEED_APT_LOCK_TIMEOUT: seconds all apt_get calls of this shell may wait in total (default 900: Debian's
# unattended-upgrades can take several minutes on a fresh image).

apt_lock_deadline=$((SECONDS + ${WIRESPEED_APT_LOCK_TIMEOUT:-900}))

# apt_lock_files update|install: the lock files apt-get takes for that command.
apt_lock_files() {
  local lists status
  eval "$(apt-config shell lists Dir::State::Lists/d status Dir::State::status/f)"
  if [ "$1" = update ]; then
    echo "${lists}lock"
  else
    echo "$(dirname "$status")/lock-frontend"
    echo "$(dirname "$status")/lock"
  fi
}

# apt_lock_holder FILE: the pid holding an fcntl lock on FILE (as apt and dpkg take them), from /proc/locks.
apt_lock_holder() {
  [ -e "$1" ] || return 0
  local dev ino id
  read -r dev ino < <(stat -L -c '%d %i' "$1")
  # /proc/locks names a file MAJOR:MINOR:INODE, major and minor in hex (fs/locks.c).
  id=$(printf '%02x:%02x:%s' $(((dev >> 8) & 0xfff)) $(((dev & 0xff) | ((dev >> 12) & 0xfff00))) "$ino")
  awk -v id="$id" '($2 == "POSIX" || $2 == "OFDLCK") && $6 == id { print $5; exit }' /proc/locks
}

# apt_wait_for_locks FILE...: return once no other process holds any of FILE; exit 1 past the deadline.
apt_wait_for_locks() {
  local file pid told=0
  for file in "$@"; do
    while pid=$(apt_lock_holder "$file") && [ -n "$pid" ] && [ "$pid" != "$$" ]; do
      local who
      who=$(cat "/proc/$pid/comm" 2>/dev/null || echo "exited")
      if [ "$SECONDS" -ge "$apt_lock_deadline" ]; then
        echo "install-system-deps: gave up waiting for $file, still held by process $pid ($who):" \
          "another package manager has run for longer than WIRESPEED_APT_LOCK_TIMEOUT=${WIRESPEED_APT_LOCK_TIMEOUT:-900} s." \
          "Let it finish (or stop it) and run this again, or raise WIRESPEED_APT_LOCK_TIMEOUT." >&2
        exit 1
      fi
      if [ $((told % 30)) -eq 0 ]; then
        echo "install-system-deps: waiting for process $pid ($who) to release $file (another package manager," \
          "e.g. unattended-upgrades on a fresh VM); up to $((apt_lock_deadline - SECONDS)) s more" >&2
      fi
      told=$((told + 1))
      sleep 1
    done
  done
}

# apt_get COMMAND ARGS...: apt-get COMMAND ARGS once the locks are free, the remaining time as apt's own lock timeout.
apt_get() {
  local kind=install err status
  if [ "$1" = update ]; then kind=update; fi
  err=$(mktemp)
  while true; do
    # shellcheck disable=SC2046 # lock file paths never contain spaces
    apt_wait_for_locks $(apt_lock_files "$kind")
    status=0
    # stderr goes to a file, then to ours: a process substitution's tee would leave $err incomplete when read
    # (bash sets no $! for it to be waited on).
    apt-get -o DPkg::Lock::Timeout=$((apt_lock_deadline - SECONDS > 0 ? apt_lock_deadline - SECONDS : 0)) "$@" \
      2>"$err" || status=$?
    cat "$err" >&2
    if [ "$status" -eq 0 ] || ! grep -q "Could not get lock" "$err"; then break; fi
    if [ "$SECONDS" -ge "$apt_lock_deadline" ]; then
      echo "install-system-deps: gave up: apt-get $1 could not get its lock within" \
        "WIRESPEED_APT_LOCK_TIMEOUT=${WIRESPEED_APT_LOCK_TIMEOUT:-900} s (the holder is named above)." \
        "Let that package manager finish and run this again, or raise WIRESPEED_APT_LOCK_TIMEOUT." >&2
      break
    fi
    sleep 1 # another apt took the lock between the wait and this apt-get: wait again
  done
  rm -f "$err"
  return "$status"
}
