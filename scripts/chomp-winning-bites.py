#!/usr/bin/env python3
"""Winning bites of every N-position of a small Chomp box, counted by the row bitten.

    python3 scripts/chomp-winning-bites.py ROWS COLS

A brute-force count, independent of the solver: every staircase of the ROWS x COLS box
(rows r0 >= r1 >= ... >= r_{ROWS-1}, row 0 holds the poisoned square) is solved in order
of size by trying all its bites, and every bite that leaves a P-position is counted under
the row it bites. The box solver marks, for every P-position, all its predecessors, so the
total is the number of marks it makes (a bite of the last row is one range of ranks, the
others are single marks). Prints the P- and N-positions, the winning bites in all and per
N-position, and their shares by row. Pure Python: 10 x 12 takes a few minutes.
"""

import sys


def staircases(rows, cap):
    """Every non-increasing tuple of `rows` values in 0..=cap."""
    if rows == 0:
        yield ()
        return
    for v in range(cap + 1):
        for rest in staircases(rows - 1, v):
            yield (v,) + rest


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip())
        sys.exit(2)
    m, n = int(sys.argv[1]), int(sys.argv[2])
    is_p = {}
    by_row = [0] * m
    p_count = n_count = several = 0
    for s in sorted(staircases(m, n), key=sum):
        if sum(s) == 0:
            continue  # the empty board: never reached (biting the poison ends the game)
        wins = [0] * m
        for i in range(m):
            for c in range(s[i]):
                if i == 0 and c == 0:
                    continue  # the poisoned square
                child = s[:i] + tuple(min(x, c) for x in s[i:])
                if is_p[child]:
                    wins[i] += 1
        total = sum(wins)
        is_p[s] = total == 0
        if total == 0:
            p_count += 1
        else:
            n_count += 1
            several += total > 1
            for i in range(m):
                by_row[i] += wins[i]
    marks = sum(by_row)
    print(f"{m}x{n}: {p_count} P-positions, {n_count} N-positions "
          f"({several} with two or more winning bites)")
    print(f"winning bites: {marks}, {marks / n_count:.3f} per N-position")
    for i, w in enumerate(by_row):
        print(f"  row {i}: {w} ({100 * w / marks:.1f} %)")


if __name__ == "__main__":
    main()
