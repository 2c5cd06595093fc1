#!/usr/bin/env bash
# Run gametables' multi-node Slurm tests (tests/it/slurm_cluster.rs) against a
# 3-node cluster on this machine: build the tests, bring the cluster up
# (scripts/slurm-cluster-up.sh), run
#   cargo test --release --test it -- --ignored --test-threads 1 slurm_cluster::
# and tear the cluster down (scripts/slurm-cluster-down.sh) however the tests
# end. Needs root on Debian 12 without systemd, and the one-node cluster of
# slurm-local-up.sh down. Extra arguments go to the test binary (e.g. a test
# name filter). Exit status: the tests' status, or 1 if only the tear-down
# failed.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

stamp() { date +%s; }
T0=$(stamp)
echo "[ci-slurm-cluster] building the tests" >&2
nice -n 19 cargo test --release --test it --no-run

finish() {
  local rc=$?
  echo "[ci-slurm-cluster] tearing the cluster down" >&2
  if ! scripts/slurm-cluster-down.sh; then
    echo "[ci-slurm-cluster] WARNING: slurm-cluster-down.sh reported a problem" >&2
    [ "$rc" = 0 ] && rc=1
  fi
  echo "[ci-slurm-cluster] total $(( $(stamp) - T0 )) s, exit $rc" >&2
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

T1=$(stamp)
scripts/slurm-cluster-up.sh
T2=$(stamp)
echo "[ci-slurm-cluster] cluster up in $(( T2 - T1 )) s; running the tests" >&2
nice -n 19 cargo test --release --test it -- --ignored --test-threads 1 "${@:-slurm_cluster::}"
echo "[ci-slurm-cluster] tests passed in $(( $(stamp) - T2 )) s" >&2
