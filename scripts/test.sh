#!/usr/bin/env bash
# npm test: the type check and the lint run beside the unit tier instead of before it. tsc is one
# thread for 12-14 s and Biome 2 s, so run first they left one of the 2 cores idle; beside tap they
# take their share of the same CPU. Their output is printed after tap's, and any of the three
# failing fails the run. Arguments go to tap (`npm test -- test/x/y.test.ts`).
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npm run --silent typecheck >"$out/typecheck.txt" 2>&1 &
typecheck=$!
npm run --silent lint >"$out/lint.txt" 2>&1 &
lint=$!
tap --disable-coverage "$@"
rc_tap=$?
wait "$typecheck"
rc_typecheck=$?
wait "$lint"
rc_lint=$?
for part in typecheck lint; do
  rc_var="rc_$part"
  if [ "${!rc_var}" -eq 0 ]; then
    echo "== npm run $part: ok"
  else
    echo "== npm run $part: failed (exit ${!rc_var})"
    cat "$out/$part.txt"
  fi
done
[ "$rc_tap" -eq 0 ] && [ "$rc_typecheck" -eq 0 ] && [ "$rc_lint" -eq 0 ]
