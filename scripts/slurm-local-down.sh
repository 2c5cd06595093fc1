#!/usr/bin/env bash
# Stop the one-node Slurm cluster that scripts/slurm-local-up.sh started.
#
# Cancels every job first (slurmd does not kill running job steps when it
# exits), then stops only the daemons whose PIDs slurm-local-up.sh recorded in
# $SLURM_LOCAL_DIR/pids/ (a munged that was running before is left alone).
# Packages, slurm.conf, the munge key and the logs stay. Exit 1 if a Slurm or
# munge process is still alive afterwards.
set -uo pipefail

STATE=${SLURM_LOCAL_DIR:-/tmp/gametables-slurm}
say() { printf '[slurm-local-down] %s\n' "$*" >&2; }

is_running() {
  local pid=${1:-} name=$2
  [[ $pid =~ ^[0-9]+$ ]] && [ -r "/proc/$pid/stat" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 1
  [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]   # an unreaped zombie counts as gone
}

# 1. empty the queue while the controller still answers
if is_running "$(cat "$STATE/pids/slurmctld.pid" 2>/dev/null)" slurmctld; then
  jobs=$(squeue -h -o %F 2>/dev/null | sort -u | tr '\n' ' ')
  if [ -n "${jobs// /}" ]; then
    say "cancelling jobs $jobs"
    # shellcheck disable=SC2086
    scancel $jobs 2>/dev/null || true
    for (( i = 0; i < 150; i++ )); do
      [ -z "$(squeue -h -o %F 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
fi

# 2. stop our daemons: node daemon, controller, munge
stop() {
  local name=$1 file=$STATE/pids/$1.pid pid
  if [ ! -f "$file" ]; then say "$name: not started by slurm-local-up.sh (or already stopped)"; return; fi
  pid=$(cat "$file")
  if is_running "$pid" "$name"; then
    kill -TERM "$pid" 2>/dev/null
    for (( i = 0; i < 200; i++ )); do is_running "$pid" "$name" || break; sleep 0.1; done
    if is_running "$pid" "$name"; then
      say "$name (pid $pid) still up 20 s after SIGTERM: SIGKILL"
      kill -KILL "$pid" 2>/dev/null
      sleep 0.5
    fi
    say "stopped $name (pid $pid)"
  else
    say "$name (pid $pid) was not running"
  fi
  rm -f "$file"
}
stop slurmd
stop slurmctld
stop munged

# 3. report leftovers (never kill what we did not start)
left=$(ps -eo pid=,stat=,comm= | awk '$3 ~ /^(slurmctld|slurmd|slurmstepd|munged)$/ && $2 !~ /^Z/')
if [ -n "$left" ]; then
  say "still running (not started by slurm-local-up.sh, or would not stop):"
  echo "$left" >&2
  exit 1
fi
say "done: no Slurm or munge daemon left"
