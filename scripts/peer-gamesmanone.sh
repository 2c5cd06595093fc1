#!/bin/bash
# Run the benchmark peer GamesmanOne (https://github.com/GamesCrafters/GamesmanOne,
# commit 196998681259254c0bd8b2d6f19b4042a43e841b, v1.3.0) on Quixo 3x3 and 4x4 and
# print its figures. See docs/peers/gamesmanone.md.
#
# This script fetches nothing and builds nothing: it needs an already built
# `gamesman` binary (Release, OpenMP, no MPI), given as $1 or GM1_BIN.
# (No build recipe for the peer's code is kept in this repository, by workplace rule.)
#
# Env: GM1_RUNS  4x4 solve repetitions (default 3)
#      GM1_ENV   extra environment for the solver, e.g. OMP_NUM_THREADS=1
#      GM1_LOCK  lock file held around every solve (default /work/build.lock)
#      GM1_WORK  scratch dir for its databases (default /tmp/gm1-work)
set -euo pipefail
B=${1:-${GM1_BIN:-}}
[ -x "$B" ] || { echo "usage: $0 /path/to/GamesmanOne/bin/gamesman" >&2; exit 2; }
B=$(readlink -f "$B")
LOCK=${GM1_LOCK:-/work/build.lock}
WORK=${GM1_WORK:-/tmp/gm1-work}
RUNS=${GM1_RUNS:-3}
[ -x /usr/bin/time ] || apt-get install -y time >/dev/null

# Its '-d' short option takes no argument (use --data-path=), and an absolute
# --data-path fails (its MkdirRecursive calls mkdir("")): run from $WORK with a
# relative data path. Quixo variant ids: 0 = 5x5, 1 = 4x4, 2 = 3x3.
mkdir -p "$WORK"; cd "$WORK"
solve() {  # label variant run
  rm -rf "$1"   # remove its database so that it really solves
  echo "== $1 run $3: load before $(cut -d' ' -f1-3 /proc/loadavg)"
  flock "$LOCK" /usr/bin/time -v env ${GM1_ENV:-} "$B" --data-path="$1" solve quixo "$2" \
    > "$1-solve-$3.out" 2> "$1-solve-$3.err"
  echo "   load after $(cut -d' ' -f1-3 /proc/loadavg)"
  grep -E "Elapsed|User time|System time|Maximum resident" "$1-solve-$3.err" | sed 's/^\s*/   /'
}
solve q3 2 1
for r in $(seq 1 "$RUNS"); do solve q4 1 "$r"; done

start() {  # label variant formal-start
  "$B" --data-path="$1" query quixo "$2" "$3" | python3 -c \
    'import json,sys;d=json.load(sys.stdin);print(" ",d["position"],d["positionValue"],"remoteness",d["remoteness"],"moves",len(d["moves"]))'
}
echo "3x3 start:"; start q3 2 "1_---------"
echo "4x4 start:"; start q4 1 "1_----------------"

# 'analyze' counts positions reachable from the start (each symmetric copy counted;
# "canonical" = those that are their own symmetry representative), per tier and in total.
for v in "q3 2" "q4 1"; do
  set -- $v
  flock "$LOCK" "$B" --data-path="$1" analyze quixo "$2" > "$1-analyze.out"
  echo "$1 analyze (per-tier blocks in $WORK/$1-analyze.out):"
  sed -n '/Finished analyzing all tiers/,$p' "$1-analyze.out"
done
