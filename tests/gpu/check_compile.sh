#!/usr/bin/env bash
# nvtxr's ranges inside torch.compile on a GPU (run by check_ncu.sh, or
# alone; it needs the nvtxr wheel in $ART, the machine's PyTorch and ncu).
set -u
ART=${ART:?set ART to the folder with the release artifacts}
OUT=${OUT:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
site=$(mktemp -d)
failed=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }

python3 -m pip install -q --no-index --no-deps --target "$site" "$ART"/nvtxr-*.whl || fail "pip install the wheel"
export PYTHONPATH="$site"
python3 "$here/torch_compiled.py" > "$OUT/compiled-plain.log" 2>&1 || fail "compiled script: $(tail -5 "$OUT/compiled-plain.log")"
cat "$OUT/compiled-plain.log" | grep -E "graph breaks|compile-safe|matches|^torch"
grep -q "graph breaks 0" "$OUT/compiled-plain.log" && ok "0 graph breaks on CUDA" || fail "graph breaks on CUDA"
grep -q "matches eager True" "$OUT/compiled-plain.log" && ok "compiled result matches eager" || fail "compiled result"
# Which kernels run inside the range in compiled code (Nsight Compute's view).
ncu --clock-control none --metrics gpu__time_duration.sum --nvtx --nvtx-include "compiled/" -c 40 \
    python3 "$here/torch_compiled.py" > "$OUT/compiled-ncu.log" 2>&1
kernels=$(grep -o '==PROF== Profiling "[^"]*"' "$OUT/compiled-ncu.log" | sed 's/==PROF== Profiling //' | sort | uniq -c | paste -sd';' -)
[ -n "$kernels" ] && ok "kernels inside the compiled range: $kernels" || fail "no kernel inside the compiled range"
"$site/bin/nvtxr" record -q -o "$OUT/compiled.json" -- python3 "$here/torch_compiled.py" > "$OUT/compiled-record.log" 2>&1 || fail "nvtxr record: $(tail -3 "$OUT/compiled-record.log")"
python3 - "$OUT/compiled.json" <<'PY' && ok "nvtxr record: the compiled range, once per call" || fail "nvtxr record of the compiled script"
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
n = sum(1 for e in events if e.get("name") == "compiled" and e.get("ph") != "M")
print("  'compiled' ranges recorded:", n)
assert n >= 4, n  # explain's trace and three compiled calls (eager-traced runs may add more)
PY
exit $failed
