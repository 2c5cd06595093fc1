#!/bin/bash
# The rows of a Chomp box run's rectangles.csv that lie in a smaller box, and
# their SHA-256 beside the smaller box's reference digest or beside the same
# rows of another box's table: a cross-check of a new box against an old one
# (every rectangle both boxes hold must have the same winning moves, byte for
# byte).
#
#   scripts/chomp-sub-box.sh DIR ROWS COLS [MANIFEST.toml | OTHER_DIR]
#
# DIR, OTHER_DIR: a run directory (its tables/rectangles.csv) or a results/
# folder (its rectangles.csv). e.g.
#   scripts/chomp-sub-box.sh /work/runs/chomp-21x21 20 20 manifests/chomp-20x20.toml
#   scripts/chomp-sub-box.sh results/chomp-21x21 10 21 results/chomp-10x60
# Prints the digest of the header and the rows with rows <= ROWS and
# cols <= COLS (in the table's order), and, with a MANIFEST, whether it equals
# that manifest's rectangles.csv digest, with OTHER_DIR whether it equals the
# digest of the same rows of that table (exit 1 if not).
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n 2,17p "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
rows=$2 cols=$3 other=${4:-}
table() { if [ -e "$1/tables/rectangles.csv" ]; then echo "$1/tables/rectangles.csv"; else echo "$1/rectangles.csv"; fi; }
within() {
  awk -F, -v R="$rows" -v C="$cols" 'NR == 1 || ($1 <= R && $2 <= C)' "$(table "$1")" |
    sha256sum | cut -d' ' -f1
}
got=$(within "$1")
echo "rectangles.csv rows within ${rows}x${cols}: $got"
if [ -z "$other" ]; then
  exit 0
elif [ -d "$other" ]; then
  want=$(within "$other")
  echo "$other, the same rows:  $want"
else
  want=$(awk '/name = "rectangles.csv"/ { getline; gsub(/[" ]/, "", $0); sub(/sha256=/, "", $0); print; exit }' "$other")
  echo "$other rectangles.csv:    $want"
fi
[ "$got" = "$want" ] && echo "match" || { echo "MISMATCH"; exit 1; }
