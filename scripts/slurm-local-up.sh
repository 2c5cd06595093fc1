#!/usr/bin/env bash
# Bring up a one-node Slurm cluster on this machine, for gametables' Slurm tests.
#
# For Debian 12 as root on a machine WITHOUT systemd (containers, CI runners):
# installs `slurm-wlm munge` if needed, writes /etc/slurm/slurm.conf for this
# host, starts munged, slurmctld and slurmd as plain daemons and waits until the
# node accepts jobs. Safe to run again while the cluster is up.
#
# The PIDs of the daemons this script starts are written to $STATE/pids/;
# scripts/slurm-local-down.sh stops exactly those and nothing else.
#
# Settings (environment):
#   SLURM_LOCAL_DIR        state, logs and pid files        (/tmp/gametables-slurm)
#   SLURM_LOCAL_PARTITION  name of the only partition       (debug)
#   SLURM_LOCAL_WAIT_S     how long to wait for the node    (60)
#   SLURM_LOCAL_MAX_ARRAY_SIZE  MaxArraySize                (Slurm's default, 1001)
#
# Pitfalls this handles (each one was hit when the recipe was tested):
#   - no systemd: /run/munge must be created by hand, munged started as user munge;
#   - the short host name must resolve, or slurmctld/slurmd cannot find the node;
#   - RealMemory must not exceed what the node reports, or it is drained
#     ("Low RealMemory"): we declare 95% of `free -m`;
#   - cgroup plugins need systemd: use proctrack/linuxproc and task/none;
#   - the default batch_sched_delay makes short jobs start seconds late: set 0;
#   - old controller state from an earlier bring-up is discarded (slurmctld -c);
#   - slurmd leaves running job steps alive when it exits: the down script
#     cancels all jobs first.
set -euo pipefail

STATE=${SLURM_LOCAL_DIR:-/tmp/gametables-slurm}
PARTITION=${SLURM_LOCAL_PARTITION:-debug}
WAIT_S=${SLURM_LOCAL_WAIT_S:-60}
MAX_ARRAY=${SLURM_LOCAL_MAX_ARRAY_SIZE:-}
CONF=/etc/slurm/slurm.conf
START_NS=$(date +%s%N)

say() { printf '[slurm-local-up %6.1fs] %s\n' "$(( ($(date +%s%N) - START_NS) / 1000000 ))e-3" "$*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

# is_running PID NAME: PID is a live (non-zombie) process called NAME
is_running() {
  local pid=${1:-} name=$2
  [[ $pid =~ ^[0-9]+$ ]] && [ -r "/proc/$pid/stat" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 1
  [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]
}
# pid_from FILE NAME TIMEOUT_S: print the pid in FILE once it names a live NAME
pid_from() {
  local file=$1 name=$2 tries=$(( $3 * 10 )) pid
  while (( tries-- > 0 )); do
    pid=$(cat "$file" 2>/dev/null || true)
    if is_running "$pid" "$name"; then echo "$pid"; return 0; fi
    sleep 0.1
  done
  return 1
}

[ "$(id -u)" = 0 ] || fail "run me as root"
mkdir -p "$STATE/log" "$STATE/pids" "$STATE/run" "$STATE/ctld" "$STATE/slurmd"

# 1. packages
missing=0
for f in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/bin/squeue /usr/sbin/munged; do
  [ -x "$f" ] || missing=1
done
if [ $missing = 1 ]; then
  say "installing slurm-wlm and munge (apt log: $STATE/log/apt.log)"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q slurm-wlm munge >"$STATE/log/apt.log" 2>&1; then
    apt-get update -q >>"$STATE/log/apt.log" 2>&1
    apt-get install -y -q slurm-wlm munge >>"$STATE/log/apt.log" 2>&1 \
      || { tail -20 "$STATE/log/apt.log" >&2; fail "apt-get install slurm-wlm munge failed"; }
  fi
  say "installed"
fi
id slurm >/dev/null 2>&1 || fail "no user 'slurm' (the slurm-wlm packages should have created it)"
id munge >/dev/null 2>&1 || fail "no user 'munge' (the munge package should have created it)"

# 2. host name must resolve
HOST=$(hostname -s)
if ! getent hosts "$HOST" >/dev/null; then
  say "adding '127.0.0.1 $HOST' to /etc/hosts (the host name did not resolve)"
  echo "127.0.0.1 $HOST" >>/etc/hosts
fi

# 3. ownership: slurmctld runs as user slurm, slurmd as root, munged as munge
chmod 755 "$STATE" "$STATE/log" "$STATE/run"
chown slurm:slurm "$STATE/ctld" "$STATE/log" "$STATE/run"
install -d -o munge -g munge -m 0700 /etc/munge /var/log/munge
install -d -o munge -g munge -m 0711 /var/lib/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
  say "creating the munge key"
  if [ -x /usr/sbin/mungekey ]; then
    runuser -u munge -- /usr/sbin/mungekey --create --keyfile=/etc/munge/munge.key
  else
    head -c 1024 /dev/urandom >/etc/munge/munge.key
  fi
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key

# 4. slurm.conf from what slurmd sees of this machine
HW=$(/usr/sbin/slurmd -C | head -n 1)
field() { grep -o "\b$1=[0-9]*" <<<"$HW" | cut -d= -f2; }
CPUS=$(field CPUs); BOARDS=$(field Boards); SOCKETS=$(field SocketsPerBoard)
CORES=$(field CoresPerSocket); THREADS=$(field ThreadsPerCore)
[ -n "$CPUS" ] && [ -n "$CORES" ] || fail "cannot read the hardware from 'slurmd -C': $HW"
MEM=$(( $(free -m | awk '$1 == "Mem:" {print $2}') * 95 / 100 ))
WANT=$STATE/slurm.conf
cat >"$WANT" <<CONF
# Written by gametables scripts/slurm-local-up.sh: a one-node test cluster.
ClusterName=gametables
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
${MAX_ARRAY:+MaxArraySize=$MAX_ARRAY}
MailProg=/bin/true
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS Boards=$BOARDS SocketsPerBoard=$SOCKETS CoresPerSocket=$CORES ThreadsPerCore=$THREADS RealMemory=$MEM State=UNKNOWN
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
if ! cmp -s "$WANT" "$CONF"; then
  if is_running "$(cat "$STATE/run/slurmctld.pid" 2>/dev/null)" slurmctld \
    || is_running "$(cat "$STATE/run/slurmd.pid" 2>/dev/null)" slurmd; then
    say "slurm.conf changes: stopping the running daemons first"
    "$(dirname "$(readlink -f "$0")")/slurm-local-down.sh"
  fi
  mkdir -p /etc/slurm
  [ -e "$CONF" ] && cp -p "$CONF" "$STATE/slurm.conf.before"
  install -m 0644 "$WANT" "$CONF"
  say "wrote $CONF ($CPUS CPUs, ${MEM} MB)"
fi

# 5. daemons
pid=$(cat /run/munge/munged.pid 2>/dev/null || true)
if is_running "$pid" munged && munge -n </dev/null | unmunge >/dev/null 2>&1; then
  say "munged is already running (pid $pid)"
else
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged || fail "munged did not start (see /var/log/munge/munged.log)"
  pid=$(pid_from /run/munge/munged.pid munged 10) || fail "munged did not write its pid file"
  echo "$pid" >"$STATE/pids/munged.pid"
  say "started munged (pid $pid)"
fi
munge -n </dev/null | unmunge >/dev/null || fail "munge cannot decode its own credential (see /var/log/munge/munged.log)"

start_daemon() { # NAME COMMAND...
  local name=$1 pidfile=$STATE/run/$1.pid pid
  shift
  pid=$(cat "$pidfile" 2>/dev/null || true)
  if is_running "$pid" "$name"; then say "$name is already running (pid $pid)"; return; fi
  rm -f "$pidfile"
  "$@" || { tail -n 20 "$STATE/log/$name.log" >&2; fail "$name did not start"; }
  pid=$(pid_from "$pidfile" "$name" 15) || { tail -n 20 "$STATE/log/$name.log" >&2; fail "$name exited at start"; }
  echo "$pid" >"$STATE/pids/$name.pid"
  say "started $name (pid $pid)"
}
start_daemon slurmctld /usr/sbin/slurmctld -c
start_daemon slurmd /usr/sbin/slurmd

# 6. wait for the node
tried_resume=0
node=unknown
for (( i = 0; i < WAIT_S * 5; i++ )); do
  node=$(sinfo -h -n "$HOST" -o %T 2>/dev/null | head -n 1 || true)
  case $node in
    idle | mixed | allocated | completing) break ;;
    down* | drain* )
      if [ $tried_resume = 0 ]; then
        say "node is '$node': asking the controller to resume it"
        scontrol update NodeName="$HOST" State=RESUME 2>/dev/null || true
        tried_resume=1
      fi ;;
  esac
  sleep 0.2
done
case $node in
  idle | mixed | allocated | completing) ;;
  *) scontrol show node "$HOST" >&2 || true
     tail -n 20 "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log" >&2 || true
     fail "node $HOST is '$node' after ${WAIT_S}s" ;;
esac
say "node $HOST is $node; partition $PARTITION; $(sinfo -V)"
