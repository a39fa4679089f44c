#!/bin/bash
# `npm test` N times in a row (default 3) while two busy loops keep both cores of a 2-core machine
# busy: how the suite holds up on a loaded laptop or CI runner. Prints one line per run.
#   scripts/test-under-load.sh [RUNS]
cd "$(dirname "$0")/.." || exit 1
node -e 'for(;;){}' & first=$!
node -e 'for(;;){}' & second=$!
trap 'kill $first $second 2>/dev/null' EXIT
failed=0
for i in $(seq 1 "${1:-3}"); do
  started=$(date +%s)
  npm test > "test-under-load-$i.log" 2>&1
  rc=$?
  echo "run $i: exit $rc in $(( $(date +%s) - started )) s (test-under-load-$i.log)"
  [ $rc -eq 0 ] || failed=1
done
exit $failed
