#!/usr/bin/env bash
# Run the Qt (pytest-qt) test files again and again, to catch crashes that happen once in many runs
# (a segfault in Qt's event loop: exit code 139, or -11 from pytest's point of view).
#
#   bash scripts/repeat-qt-tests.sh [RUNS] [extra pytest args...]     (RUNS defaults to 20)
#
# Each run's output goes to .cache/qt-repeat/run-N.log (or $QT_REPEAT_OUT/run-N.log); a crashed run's log keeps faulthandler's
# Python stack of every thread (pytest enables it), which names the test and the frame that crashed.
# The last line printed is the summary: runs, crashes, other failures.
# Two loops side by side (QT_REPEAT_OUT=another folder) go faster with OMP_WAIT_POLICY=PASSIVE: otherwise
# the OpenMP threads of one loop's runtimes spin while the other loop waits for a core (measured: 7.5 vs 5.6 min a run).
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
shift || true
out=${QT_REPEAT_OUT:-.cache/qt-repeat}  # a second loop running beside the first needs its own folder
mkdir -p "$out"
files=$(grep -rl "qtbot" tests --include='test_*.py' | sort)
export QT_QPA_PLATFORM=offscreen
crashes=0
failures=0
for i in $(seq 1 "$runs"); do
    .venv/bin/python -X faulthandler -m pytest -q -p no:cacheprovider -p no:randomly $files "$@" >"$out/run-$i.log" 2>&1
    rc=$?
    case $rc in
        0) echo "run $i: passed" ;;
        139 | 134 | 135 | 136 | 1[3-9][0-9]) crashes=$((crashes + 1)); echo "run $i: CRASHED (exit $rc), see $out/run-$i.log" ;;
        *) failures=$((failures + 1)); echo "run $i: failed (exit $rc), see $out/run-$i.log" ;;
    esac
done
echo "runs: $runs, crashes: $crashes, other failures: $failures"
[ "$crashes" = 0 ] && [ "$failures" = 0 ]
