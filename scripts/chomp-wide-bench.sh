#!/usr/bin/env bash
# Old against new Chomp box solver, alternating, medians of RUNS (default 5):
# the 10×40 and 17×17 boxes (or the boxes given as MxN arguments), one window (WINDOWS chained windows if set),
# 2 threads, through `examples/chomp_window.rs` built from OLD (default: main)
# and from the working tree. Prints wall and CPU (user + sys) medians and the
# rate in staircases per CPU-second for each. Check `uptime` first: timings
# under load are not comparable (the CPU figures less so than the wall ones).
#
#   scripts/chomp-wide-bench.sh                 # 10x40 and 17x17, main vs here
#   OLD=fb6fe0c RUNS=3 scripts/chomp-wide-bench.sh 10x30
#   WINDOWS=4 scripts/chomp-wide-bench.sh 10x36  # a split box: 4 chained windows,
#                                                # each given the P-positions below it
#
# Builds and each timed run take the build lock (/work/build.lock) when it
# exists. The old build's target directory is target/bench-old (kept).
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${OLD:-main}
RUNS=${RUNS:-5}
THREADS=${THREADS:-2}
WINDOWS=${WINDOWS:-1}
boxes=("$@")
[ ${#boxes[@]} -gt 0 ] || boxes=(10x40 17x17)
lock() { if [ -e /work/build.lock ]; then flock /work/build.lock "$@"; else "$@"; fi; }
old_tree=$(mktemp -d /tmp/chomp-old.XXXXXX)
trap 'git worktree remove --force "$old_tree" >/dev/null 2>&1 || true' EXIT
git worktree add --detach "$old_tree" "$OLD" >/dev/null 2>&1
lock cargo build --release --example chomp_window -q
old_target="$PWD/target/bench-old"
(cd "$old_tree" && CARGO_TARGET_DIR="$old_target" lock cargo build --release --example chomp_window -q)
new_bin=target/release/examples/chomp_window
old_bin="$old_target/release/examples/chomp_window"
echo "windows: $WINDOWS, threads: $THREADS; old: $OLD ($(git rev-parse --short "$OLD")), new: working tree ($(git rev-parse --short HEAD)); $(uptime)"
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for bx in "${boxes[@]}"; do
  m=${bx%x*}; n=${bx#*x}
  : >/tmp/chomp-bench-old; : >/tmp/chomp-bench-new
  for r in $(seq 1 "$RUNS"); do
    for which in old new; do
      bin=$old_bin; [ $which = new ] && bin=$new_bin
      lock /usr/bin/time -f "%e %U %S" -o /tmp/chomp-bench-t "$bin" "$m" "$n" "$THREADS" "$WINDOWS" >/tmp/chomp-bench-out 2>/dev/null
      read -r wall user sys </tmp/chomp-bench-t
      ranks=$(awk '{print $2}' /tmp/chomp-bench-out)
      echo "$wall $(echo "$user + $sys" | bc) $ranks" >>/tmp/chomp-bench-$which
      echo "  $bx run $r $which: wall $wall s, cpu $(echo "$user + $sys" | bc) s"
    done
  done
  for which in old new; do
    w=$(awk '{print $1}' /tmp/chomp-bench-$which | median)
    c=$(awk '{print $2}' /tmp/chomp-bench-$which | median)
    ranks=$(head -1 /tmp/chomp-bench-$which | awk '{print $3}')
    echo "$bx $which: median wall $w s, median CPU $c s, $(echo "$ranks / $c / 1000000" | bc) M staircases per CPU-second"
  done
done
