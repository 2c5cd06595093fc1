#!/usr/bin/env bash
# Stop the multi-node Slurm cluster that scripts/slurm-cluster-up.sh started.
#
# Cancels every job first (slurmd does not kill running job steps when it
# exits), then stops only the daemons whose PIDs slurm-cluster-up.sh recorded
# in $SLURM_CLUSTER_DIR/pids/ (a munged that was running before is left
# alone), and puts back the /etc/slurm/slurm.conf that was there before.
# Packages, the munge key and the logs stay. Exit 1 if a Slurm or munge
# process is still alive afterwards.
set -uo pipefail

STATE=${SLURM_CLUSTER_DIR:-/tmp/gametables-slurm-cluster}
CONF=/etc/slurm/slurm.conf
say() { printf '[slurm-cluster-down] %s\n' "$*" >&2; }

is_running() {
  local pid=${1:-} name=$2
  [[ $pid =~ ^[0-9]+$ ]] && [ -r "/proc/$pid/stat" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 1
  [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]
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

# 2. stop our daemons: node daemons, controller, munge
stop() { # ID NAME
  local id=$1 name=$2 file=$STATE/pids/$1.pid pid
  if [ ! -f "$file" ]; then return; fi
  pid=$(cat "$file")
  if is_running "$pid" "$name"; then
    kill -TERM "$pid" 2>/dev/null
    for (( i = 0; i < 200; i++ )); do is_running "$pid" "$name" || break; sleep 0.1; done
    if is_running "$pid" "$name"; then
      say "$id (pid $pid) still up 20 s after SIGTERM: SIGKILL"
      kill -KILL "$pid" 2>/dev/null
      sleep 0.5
    fi
    say "stopped $id (pid $pid)"
  else
    say "$id (pid $pid) was not running"
  fi
  rm -f "$file"
}
for f in "$STATE"/pids/slurmd-*.pid; do
  [ -e "$f" ] && stop "$(basename "$f" .pid)" slurmd
done
stop slurmctld slurmctld
stop munged munged

# 3. the slurm.conf of before (unless slurm-cluster-up.sh is about to write a new one)
if [ -z "${SLURM_CLUSTER_KEEP_CONF:-}" ] && grep -q "slurm-cluster-up.sh" "$CONF" 2>/dev/null; then
  if [ -e "$STATE/slurm.conf.before" ]; then
    cp -p "$STATE/slurm.conf.before" "$CONF" && rm -f "$STATE/slurm.conf.before"
    say "put back the slurm.conf of before"
  else
    rm -f "$CONF"
    say "removed $CONF (there was none before)"
  fi
fi

# 4. report leftovers (never kill what we did not start)
left=$(ps -eo pid=,stat=,comm= | awk '$3 ~ /^(slurmctld|slurmd|slurmstepd|munged)$/ && $2 !~ /^Z/')
if [ -n "$left" ]; then
  say "still running (not started by slurm-cluster-up.sh, or would not stop):"
  echo "$left" >&2
  exit 1
fi
say "done: no Slurm or munge daemon left"
