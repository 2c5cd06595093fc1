#!/usr/bin/env bash
# Bring up a Slurm cluster of several compute nodes on this one machine, for
# gametables' multi-node tests (tests/it/slurm_cluster.rs).
#
# For Debian 12 as root without systemd. Installs `slurm-wlm munge` with
# apt-get, writes /etc/slurm/slurm.conf (the one there before is kept in
# $STATE/slurm.conf.before and put back by slurm-cluster-down.sh), starts
# munged, one slurmctld and one `slurmd -N nK` per node, and waits until every
# node accepts jobs (and MPI steps: `srun --mpi=pmix`, each node with its own
# mpi.conf). Debian's stock slurmd runs several daemons on one host
# when each node has its own NodeName and Port (`NodeHostname` = this host);
# no emulator build and no network namespace is needed, and all traffic stays
# on 127.0.0.1. Safe to run again: a node whose slurmd died is started again.
#
# Each node is declared with its own CPUs and RealMemory, and the controller
# schedules CPUs and memory (select/cons_tres, CR_CPU_Memory), so placement is
# real: a 3-node cluster of 2 CPUs and 1536 MB each runs at most 6 one-CPU
# tasks, at most 3 of 1 GB. Memory is enforced without cgroups by the
# accounting sampler (jobacct_gather/linux, OverMemoryKill, every second): a
# task above its --mem is killed and its log says "exceeded memory limit".
# Finished jobs stay in `squeue --states=all` for MinJobAge seconds (there is
# no slurmdbd, hence no sacct).
#
# The PIDs of the daemons this script starts are written to $STATE/pids/;
# scripts/slurm-cluster-down.sh stops exactly those and nothing else.
# It refuses to start while the one-node cluster of slurm-local-up.sh is up.
#
# Settings (environment):
#   SLURM_CLUSTER_DIR       state, logs and pid files        (/tmp/gametables-slurm-cluster)
#   SLURM_CLUSTER_NODES     compute nodes n1 … nN            (3)
#   SLURM_CLUSTER_CPUS      CPUs of each node                (2)
#   SLURM_CLUSTER_MEM_MB    RealMemory of each node, MB      (1536)
#   SLURM_CLUSTER_DEF_MEM_PER_CPU  MB a job gets without --mem (512)
#   SLURM_CLUSTER_PORT      port of n1; nK uses PORT+K-1     (17001)
#   SLURM_CLUSTER_MAX_ARRAY_SIZE  MaxArraySize               (Slurm's default, 1001)
#   SLURM_CLUSTER_MIN_JOB_AGE     MinJobAge, seconds         (900)
#   SLURM_CLUSTER_PARTITION partition name                   (debug)
#   SLURM_CLUSTER_WAIT_S    how long to wait for the nodes   (60)
set -euo pipefail

STATE=${SLURM_CLUSTER_DIR:-/tmp/gametables-slurm-cluster}
NODES=${SLURM_CLUSTER_NODES:-3}
CPUS=${SLURM_CLUSTER_CPUS:-2}
MEM=${SLURM_CLUSTER_MEM_MB:-1536}
DEF_MEM=${SLURM_CLUSTER_DEF_MEM_PER_CPU:-512}
PORT=${SLURM_CLUSTER_PORT:-17001}
MAX_ARRAY=${SLURM_CLUSTER_MAX_ARRAY_SIZE:-}
MIN_JOB_AGE=${SLURM_CLUSTER_MIN_JOB_AGE:-900}
PARTITION=${SLURM_CLUSTER_PARTITION:-debug}
WAIT_S=${SLURM_CLUSTER_WAIT_S:-60}
ONE_NODE_STATE=${SLURM_LOCAL_DIR:-/tmp/gametables-slurm}
CONF=/etc/slurm/slurm.conf
START_NS=$(date +%s%N)

say() { printf '[slurm-cluster-up %6.1fs] %s\n' "$(( ($(date +%s%N) - START_NS) / 1000000 ))e-3" "$*" >&2; }
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
[[ $NODES =~ ^[0-9]+$ ]] && (( NODES >= 1 && NODES <= 64 )) || fail "SLURM_CLUSTER_NODES must be 1..64"
for f in "$ONE_NODE_STATE"/pids/slurmctld.pid "$ONE_NODE_STATE"/pids/slurmd.pid; do
  if is_running "$(cat "$f" 2>/dev/null)" "$(basename "$f" .pid)"; then
    fail "the one-node cluster of slurm-local-up.sh is up: stop it with scripts/slurm-local-down.sh first"
  fi
done
mkdir -p "$STATE/log" "$STATE/pids" "$STATE/run" "$STATE/ctld"

# 1. packages
missing=0
for f in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/bin/squeue /usr/sbin/munged; do
  [ -x "$f" ] || missing=1
done
if [ $missing = 1 ]; then
  say "installing slurm-wlm and munge (apt log: $STATE/log/apt.log)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >"$STATE/log/apt.log" 2>&1 || { tail -20 "$STATE/log/apt.log" >&2; fail "apt-get update failed"; }
  apt-get install -y -q slurm-wlm munge >>"$STATE/log/apt.log" 2>&1 \
    || { tail -20 "$STATE/log/apt.log" >&2; fail "apt-get install slurm-wlm munge failed"; }
  say "installed"
fi
id slurm >/dev/null 2>&1 || fail "no user 'slurm' (the slurm-wlm packages should have created it)"
id munge >/dev/null 2>&1 || fail "no user 'munge' (the munge package should have created it)"

# 2. host name must resolve (every node's NodeHostname is this host)
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

# 4. slurm.conf: N nodes on this host, each with its own port, CPUs and memory
WANT=$STATE/slurm.conf
{
  cat <<CONF
# Written by gametables scripts/slurm-cluster-up.sh: $NODES nodes on one machine.
ClusterName=gametables
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=1
JobAcctGatherParams=OverMemoryKill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=$DEF_MEM
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=30
MinJobAge=$MIN_JOB_AGE
${MAX_ARRAY:+MaxArraySize=$MAX_ARRAY}
MailProg=/bin/true
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd-%n
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd-%n.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd-%n.log
CONF
  for (( k = 1; k <= NODES; k++ )); do
    echo "NodeName=n$k NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$(( PORT + k - 1 )) CPUs=$CPUS RealMemory=$MEM State=UNKNOWN"
  done
  echo "PartitionName=$PARTITION Nodes=n[1-$NODES] Default=YES MaxTime=INFINITE State=UP"
} >"$WANT"

running_any() {
  local f
  for f in "$STATE"/run/*.pid; do
    [ -e "$f" ] || continue
    case $(basename "$f") in
      slurmctld.pid) is_running "$(cat "$f")" slurmctld && return 0 ;;
      slurmd-*.pid) is_running "$(cat "$f")" slurmd && return 0 ;;
    esac
  done
  return 1
}
if ! cmp -s "$WANT" "$CONF"; then
  if running_any; then
    say "slurm.conf changes: stopping the running daemons first"
    SLURM_CLUSTER_KEEP_CONF=1 "$(dirname "$(readlink -f "$0")")/slurm-cluster-down.sh"
  fi
  mkdir -p /etc/slurm
  if [ -e "$CONF" ] && [ ! -e "$STATE/slurm.conf.before" ] && ! grep -q "slurm-cluster-up.sh" "$CONF"; then
    cp -p "$CONF" "$STATE/slurm.conf.before"
  fi
  install -m 0644 "$WANT" "$CONF"
  say "wrote $CONF ($NODES nodes of $CPUS CPUs and $MEM MB)"
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

start_daemon() { # ID NAME LOG COMMAND...
  local id=$1 name=$2 log=$3 pidfile=$STATE/run/$1.pid pid
  shift 3
  pid=$(cat "$pidfile" 2>/dev/null || true)
  if is_running "$pid" "$name"; then say "$id is already running (pid $pid)"; return; fi
  rm -f "$pidfile"
  "$@" || { tail -n 20 "$log" >&2; fail "$id did not start"; }
  pid=$(pid_from "$pidfile" "$name" 15) || { tail -n 20 "$log" >&2; fail "$id exited at start"; }
  echo "$pid" >"$STATE/pids/$id.pid"
  say "started $id (pid $pid)"
}
start_daemon slurmctld slurmctld "$STATE/log/slurmctld.log" /usr/sbin/slurmctld -c
# Each slurmd reads its own copy of slurm.conf, beside an mpi.conf of its own:
# the PMIx plugin (`srun --mpi=pmix`, SLURM_MPI_TYPE=pmix) makes a directory
# per job step named without the node, so nodes sharing one /tmp collide unless
# each has its own PMIxCliTmpDirBase.
for (( k = 1; k <= NODES; k++ )); do
  mkdir -p "$STATE/conf-n$k" "$STATE/pmix-n$k"
  cp "$CONF" "$STATE/conf-n$k/slurm.conf"
  echo "PMIxCliTmpDirBase=$STATE/pmix-n$k" >"$STATE/conf-n$k/mpi.conf"
  start_daemon "slurmd-n$k" slurmd "$STATE/log/slurmd-n$k.log" \
    /usr/sbin/slurmd -f "$STATE/conf-n$k/slurm.conf" -N "n$k"
done

# 6. wait for every node
declare -A resumed=()
for (( i = 0; i < WAIT_S * 5; i++ )); do
  ready=0
  while read -r node st; do
    case $st in
      idle* | mixed* | allocated* | completing*) ready=$(( ready + 1 )) ;;
      down* | drain*)
        if [ -z "${resumed[$node]:-}" ]; then
          say "node $node is '$st': asking the controller to resume it"
          scontrol update NodeName="$node" State=RESUME 2>/dev/null || true
          resumed[$node]=1
        fi ;;
    esac
  done < <(sinfo -h -N -o '%N %T' 2>/dev/null || true)
  (( ready >= NODES )) && break
  sleep 0.2
done
if (( ready < NODES )); then
  sinfo -N >&2 || true
  tail -n 20 "$STATE/log/slurmctld.log" >&2 || true
  fail "only $ready of $NODES nodes are up after ${WAIT_S}s"
fi
say "$NODES nodes up: $(sinfo -h -N -o '%N:%T' | tr '\n' ' '); partition $PARTITION; $(sinfo -V)"
