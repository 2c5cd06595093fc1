#!/usr/bin/env bash
# Cost of `verify --full` (issue #14, acceptance 3) against the run it checks.
#
#   scripts/fullcheck-bench.sh [JOB…]        # default: every job file in jobs/ but three-row-131072
#
# For each job file: `run` it into a fresh run directory, then `verify DIR --full`, both under
# /usr/bin/time -v; prints one Markdown table row per job (run wall, full-check wall, ratio, user+sys,
# peak RSS of each, the load average before the check) and the check's coverage lines.
# Needs a release build (`cargo build --release`) and GNU time. Set GT_BIN to use another binary and
# GT_BENCH_DIR to keep the run directories (default: a temporary directory, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${GT_BIN:-target/release/gametables}
[ -x "$bin" ] || { echo "no $bin: cargo build --release first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time" >&2; exit 2; }
if [ $# -eq 0 ]; then
  set -- $(ls jobs/*.toml | sed 's|jobs/||; s|\.toml$||' | grep -v '^three-row-131072$')
fi
keep=${GT_BENCH_DIR:-}
root=${keep:-$(mktemp -d)}
mkdir -p "$root"
: >"$root/coverage.txt"

# field NAME FILE: a line of /usr/bin/time -v's report.
field() { grep -F "$1" "$2" | sed 's/.*: //'; }
# secs "h:mm:ss" or "m:ss.ss" → seconds.
secs() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }

echo "| job | run wall | run user+sys | run peak RSS | full wall | full user+sys | full peak RSS | full/run | load (1 min) |"
echo "|---|---|---|---|---|---|---|---|---|"
for job in "$@"; do
  dir="$root/$job"
  rm -rf "$dir"
  load_run=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -v -o "$root/$job.run.time" "$bin" run "jobs/$job.toml" --run-dir "$dir" --no-progress \
    >"$root/$job.run.log" 2>&1 || { echo "run of $job failed (log $root/$job.run.log)" >&2; exit 1; }
  load_full=$(cut -d' ' -f1 /proc/loadavg)
  status=0
  /usr/bin/time -v -o "$root/$job.full.time" "$bin" verify "$dir" --full >"$root/$job.full.log" 2>&1 || status=$?
  rw=$(secs "$(field 'Elapsed (wall clock)' "$root/$job.run.time")")
  fw=$(secs "$(field 'Elapsed (wall clock)' "$root/$job.full.time")")
  ru=$(awk '/User time|System time/ { s += $NF } END { printf "%.1f", s }' "$root/$job.run.time")
  fu=$(awk '/User time|System time/ { s += $NF } END { printf "%.1f", s }' "$root/$job.full.time")
  rr=$(($(field 'Maximum resident' "$root/$job.run.time") / 1024))
  fr=$(($(field 'Maximum resident' "$root/$job.full.time") / 1024))
  ratio=$(awk -v a="$fw" -v b="$rw" 'BEGIN { printf "%.2f", a / b }')
  echo "| \`$job\` | $rw s | $ru s | $rr MB | $fw s | $fu s | $fr MB | ${ratio}× | $load_run / $load_full |"
  if [ "$status" -ne 0 ]; then
    echo "verify --full of $job exited $status:" >&2
    cat "$root/$job.full.log" >&2
    exit 1
  fi
  grep -E '^  ' "$root/$job.full.log" | sed "s/^/  $job: /" >>"$root/coverage.txt"
done
echo
echo "Coverage (what share of the stored values was checked from the rules):"
cat "$root/coverage.txt"
[ -n "$keep" ] || rm -rf "$root"
