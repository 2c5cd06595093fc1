#!/usr/bin/env python3
"""Checks a Chomp box run's rectangles against their transposes.

    python3 scripts/chomp-transposed-pairs.py RUN_DIR | TABLES_DIR | rectangles.csv

Chomp on an a x b rectangle is Chomp on the b x a rectangle with rows and columns swapped, so
the winning first moves of b x a are those of a x b mirrored (row:col becomes col:row). For
every pair a x b / b x a that `rectangles.csv` holds both of, this compares the number of
winning moves and the mirrored moves. The solver ranks the two differently (a staircase of a
rows against one of b rows), so agreement is a cross-check of the solver, not an identity of
the code. Prints the pairs compared and exits 1 on any disagreement.
"""

import csv
import os
import sys


def moves(text):
    """The set of (row, col) of a `moves` cell like `3:11 4:8`."""
    return {tuple(int(x) for x in mv.split(":")) for mv in text.split()}


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip())
        sys.exit(2)
    path = sys.argv[1]
    if os.path.isdir(path):
        inside = os.path.join(path, "rectangles.csv")
        path = inside if os.path.exists(inside) else os.path.join(path, "tables", "rectangles.csv")
    table = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            table[(int(row["rows"]), int(row["cols"]))] = (int(row["n_winning"]), moves(row["moves"]))
    pairs = bad = 0
    for (a, b), (count, mv) in sorted(table.items()):
        if a >= b or (b, a) not in table:
            continue
        pairs += 1
        t_count, t_mv = table[(b, a)]
        mirrored = {(c, r) for (r, c) in mv}
        if t_count != count or t_mv != mirrored or count != len(mv):
            bad += 1
            print(f"DISAGREE {a}x{b} ({count}: {sorted(mv)}) and {b}x{a} ({t_count}: {sorted(t_mv)})")
    print(f"{path}: {pairs} transposed pairs compared, {bad} disagree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
