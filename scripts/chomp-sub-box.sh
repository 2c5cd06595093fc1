#!/bin/bash
# The rows of a Chomp box run's rectangles.csv that lie in a smaller box, and
# their SHA-256 beside the smaller box's reference digest: a cross-check of a
# new box against an old one (every rectangle both boxes hold must have the
# same winning moves, byte for byte).
#
#   scripts/chomp-sub-box.sh RUN_DIR|RESULTS_DIR ROWS COLS [MANIFEST]
#
# e.g. scripts/chomp-sub-box.sh /work/runs/chomp-21x21 20 20 manifests/chomp-20x20.toml
# Prints the digest of the header and the rows with rows <= ROWS and
# cols <= COLS (in the table's order), and, with MANIFEST, whether it equals
# that manifest's rectangles.csv digest (exit 1 if not).
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n 2,12p "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
dir=$1 rows=$2 cols=$3 manifest=${4:-}
table=$dir/tables/rectangles.csv
[ -e "$table" ] || table=$dir/rectangles.csv # a results/ folder holds the tables themselves
got=$(awk -F, -v R="$rows" -v C="$cols" 'NR == 1 || ($1 <= R && $2 <= C)' \
  "$table" | sha256sum | cut -d' ' -f1)
echo "rectangles.csv rows within ${rows}x${cols}: $got"
if [ -n "$manifest" ]; then
  want=$(awk '/name = "rectangles.csv"/ { getline; gsub(/[" ]/, "", $0); sub(/sha256=/, "", $0); print; exit }' "$manifest")
  echo "$manifest rectangles.csv:    $want"
  [ "$got" = "$want" ] && echo "match" || { echo "MISMATCH"; exit 1; }
fi
