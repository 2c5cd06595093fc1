#!/usr/bin/env bash
# Run gametables' Slurm integration tests against a real one-node cluster:
# build the tests, bring the cluster up (scripts/slurm-local-up.sh), run
#   cargo test --release --test it -- --ignored slurm::
# and tear the cluster down (scripts/slurm-local-down.sh) however the tests end.
# Needs root on Debian 12 without systemd (see slurm-local-up.sh). Extra
# arguments go to the test binary. A name filter among them replaces
# `slurm::` (libtest runs the tests matching any filter), so give it with its
# module: `slurm::slurm_detach`; options that take a value as `--opt=value`.
# Exit status: the tests' status, or 1 if only the tear-down failed.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

stamp() { date +%s; }
T0=$(stamp)
echo "[ci-slurm] building the tests" >&2
cargo test --release --test it --no-run

finish() {
  local rc=$?
  echo "[ci-slurm] tearing the cluster down" >&2
  if ! scripts/slurm-local-down.sh; then
    echo "[ci-slurm] WARNING: slurm-local-down.sh reported a problem" >&2
    [ "$rc" = 0 ] && rc=1
  fi
  echo "[ci-slurm] total $(( $(stamp) - T0 )) s, exit $rc" >&2
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

# The tests' commands keep this PATH (with the cluster's commands) only when
# told to: by default they run with a PATH that finds no Slurm (tests/it/support).
export GAMETABLES_TEST_HOST_PATH=1

T1=$(stamp)
# A small MaxArraySize makes the 14 Chomp boxes span two job arrays, so the
# tests also cover split arrays and a merge that waits for several.
SLURM_LOCAL_MAX_ARRAY_SIZE=${SLURM_LOCAL_MAX_ARRAY_SIZE:-8} scripts/slurm-local-up.sh
T2=$(stamp)
echo "[ci-slurm] cluster up in $(( T2 - T1 )) s; running the Slurm tests" >&2
filter=slurm::
for a in "$@"; do
  case "$a" in -*) ;; *) filter= ;; esac
done
cargo test --release --test it -- --ignored $filter "$@"
echo "[ci-slurm] Slurm tests passed in $(( $(stamp) - T2 )) s" >&2
