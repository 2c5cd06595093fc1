#!/bin/bash
# After a frontier Chomp box run (e.g. jobs/chomp-22x22.toml) has ended: copies
# its reference digests and tables into the repository and runs the
# cross-checks that need no second run.
#
#   scripts/chomp-frontier-finish.sh RUN_DIR NAME [SUB_BOX_CHECK ...]
#
# RUN_DIR: the run directory; NAME: the job file's name (chomp-22x22). Writes
# manifests/NAME.toml (the run's result.toml), results/NAME/ (tables and
# report.md), then prints: the transposed pairs check, and one line per
# SUB_BOX_CHECK "ROWS COLS OTHER" (OTHER: a results/ folder or a manifest), as
# scripts/chomp-sub-box.sh prints it. Exit 1 if a check fails.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n 2,12p "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
run=$1 name=$2
shift 2
cd "$(dirname "$0")/.."
[ -e "$run/result.toml" ] || { echo "no $run/result.toml: the run has not ended" >&2; exit 1; }
cp "$run/result.toml" "manifests/$name.toml"
mkdir -p "results/$name"
cp "$run"/tables/* "results/$name/"
cp "$run/report.md" "results/$name/report.md"
python3 scripts/chomp-transposed-pairs.py "results/$name"
for check in "$@"; do
  # shellcheck disable=SC2086
  scripts/chomp-sub-box.sh "results/$name" $check
done
