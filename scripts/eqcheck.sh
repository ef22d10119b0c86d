#!/usr/bin/env bash
# Compare every simulated statistic of two warpforge binaries: every workload at small size,
# under SPE and DPE, every field of every launch in `run --json` (host timings excluded;
# fields only the new binary has are not compared). Extra arguments go to both runs
# (e.g. --config fx5800). Exit 1 on any difference.
#   scripts/eqcheck.sh OLD_BINARY NEW_BINARY [--config fx5800 ...]
#   EQCHECK_WORKLOADS="vecadd sgemm" scripts/eqcheck.sh ...   (a subset)
set -uo pipefail
old=$1 new=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# The workload table of `warpforge list`: the rows between its rule line and the blank line.
list() { "$1" list 2>/dev/null | awk '/^---/{f=1;next} /^$/{exit} f{print $1}' | sort; }
# Only the workloads both binaries have (a workload added since OLD has nothing to compare).
workloads=$(comm -12 <(list "$old") <(list "$new"))
only_new=$(comm -13 <(list "$old") <(list "$new") | tr '\n' ' ')
[ -n "$only_new" ] && echo "not in the old binary, not compared: $only_new"
for w in ${EQCHECK_WORKLOADS:-${workloads:-bfs}}; do
    for r in spe dpe; do
        for b in old new; do
            bin=$old; [ "$b" = new ] && bin=$new
            rm -f "$tmp/$b.json"   # a failed run must not compare the previous workload's
            "$bin" run --workload "$w" --size small --set "sm.reconvergence=$r" --no-compare \
                --no-cosim --quiet --json "$tmp/$b.json" "$@" >/dev/null 2>&1
        done
        python3 - "$tmp/old.json" "$tmp/new.json" "$w $r" <<'PY' || fail=1
import json, os, sys
missing = [p for p in sys.argv[1:3] if not os.path.exists(p)]
if missing:
    print(sys.argv[3], "DID NOT RUN:", ", ".join(os.path.basename(p)[:-5] for p in missing))
    sys.exit(1)
old, new = (json.load(open(p)) for p in sys.argv[1:3])
diffs = []
for ro, rn in zip(old["results"], new["results"]):
    if ro["verified"] != rn["verified"]:
        diffs.append("verified")
    for i, (lo, ln) in enumerate(zip(ro["launches"], rn["launches"])):
        diffs += [f"launch {i} {k}" for k in lo if k != "wall_seconds" and lo[k] != ln.get(k)]
print(sys.argv[3], "identical" if not diffs else "DIFFERENT: " + ", ".join(diffs[:8]))
sys.exit(1 if diffs else 0)
PY
    done
done
exit $fail
