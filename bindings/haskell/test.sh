#!/usr/bin/env bash
# Builds and tests the Haskell package both ways, in one build directory
# (switching the nvtx flag back and forth must work): against nvtxr (found
# through pkg-config, in-tree) and portable (-f-nvtx, no native dependency).
# Then compiles and runs every Haskell snippet the READMEs show, both ways,
# and builds a dependent project outside the source tree against an
# installed nvtxr prefix. Installs GHC, cabal and the test libraries from
# Debian when missing; builds offline (no Hackage).
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD

if ! command -v ghc >/dev/null || ! command -v cabal >/dev/null || ! command -v pkg-config >/dev/null \
    || ! ghc-pkg list --simple-output tasty-hunit 2>/dev/null | grep -q tasty-hunit; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq ghc cabal-install pkg-config libghc-tasty-dev libghc-tasty-hunit-dev >/dev/null
fi

# nvtxr's library, its in-tree nvtxr.pc, and the event-log tool the tests attach.
eval "$(cd ../.. && cargo run -q -p nvtxr-harness --bin artifacts)"
export CABAL_CONFIG="$here/cabal.config"
cabal=(cabal --offline -v1)
work=$(mktemp -d)

# Cabal for building and testing, less one known false warning: each
# component depending on the package's own library is told of an
# "extraneous version range" that cabal added itself (haskell/cabal#5119).
# Everything else, errors included, passes; so does cabal's exit status.
quiet_cabal() {
    "${cabal[@]}" "$@" 2>&1 | awk '
        /^Warning: The package has an extraneous version range/ { skip = 1 }
        !skip { print }
        skip && /will always be used\.$/ { skip = 0 }'
}
trap 'rm -rf "$work"' EXIT

# Compiles and runs each ```haskell block of the READMEs against the package
# as built now (flag $1), under the event-log tool; each must exit 0.
readme_snippets() {
    local n=0
    for readme in ../../README.md README.md; do
        python3 - "$readme" "$work/snippets" <<'PY'
import os, re, sys
text = open(sys.argv[1]).read()
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
tag = os.path.basename(os.path.dirname(os.path.abspath(sys.argv[1]))) or "root"
for i, block in enumerate(re.findall(r"```haskell\n(.*?)```", text, re.S)):
    open(os.path.join(out, f"{tag}{i}.hs"), "w").write(block)
PY
    done
    for snippet in "$work"/snippets/*.hs; do
        local exe="${snippet%.hs}-$1"
        "${cabal[@]}" exec -v0 -- ghc -v0 -package nvtxr -threaded -outputdir "$exe.o" "$snippet" -o "$exe"
        NVTX_INJECTION64_PATH="$NVTXR_EVENT_LOG" NVTXR_EVENT_LOG_OUT="$exe.log" "$exe" >/dev/null
        if [ "$1" = native ] && ! grep -q . "$exe.log"; then
            echo "README snippet $snippet recorded no event" >&2
            exit 1
        fi
        n=$((n + 1))
    done
    echo "README snippets ($1): $n compiled and ran"
}

echo "== Haskell: native build (links nvtxr)"
quiet_cabal build all
quiet_cabal test --test-show-details=direct
readme_snippets native

echo "== Haskell: portable build (-f-nvtx), same build directory"
PKG_CONFIG_PATH='' quiet_cabal build -f-nvtx all
PKG_CONFIG_PATH='' quiet_cabal test -f-nvtx --test-show-details=direct
readme_snippets portable

echo "== Haskell: native again in the same build directory"
quiet_cabal build all

echo "== Haskell: the benchmark prints every figure (cargo xtask bench-haskell --quick)"
bench=$(cd ../.. && cargo run -q -p nvtxr-workflows --bin bench_haskell -- --quick)
echo "$bench"
rows=$(printf '%s\n' "$bench" | awk -F'|' '/^\| / && !/operation/ && $3 ~ /[0-9]/ && $4 ~ /[0-9]/ && $5 ~ /[0-9]x/ { n++ } END { print n + 0 }')
if [ "$rows" -ne 9 ]; then
    echo "the Haskell benchmark printed $rows complete rows, not 9" >&2
    exit 1
fi

echo "== Haskell: a dependent project against an installed prefix"
(cd ../.. && cargo xtask install --prefix "$work/prefix")
mkdir -p "$work/app"
cat > "$work/app/Main.hs" <<'HS'
import NVTX
main :: IO ()
main = withRange "installed" (mark "inside")
HS
cat > "$work/app/app.cabal" <<'CABAL'
cabal-version: 2.4
name:          app
version:       0
executable app
  main-is:          Main.hs
  build-depends:    base, nvtxr
  default-language: Haskell2010
CABAL
echo "packages: . $here" > "$work/app/cabal.project"
(cd "$work/app" && PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" "${cabal[@]}" build exe:app)
app=$(cd "$work/app" && PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" cabal --offline -v0 list-bin exe:app)
env -u LD_LIBRARY_PATH NVTX_INJECTION64_PATH="$NVTXR_EVENT_LOG" NVTXR_EVENT_LOG_OUT="$work/app.log" "$app"
ldd "$app" | grep "libnvtxr.so.0.1 => $work/prefix/lib/" >/dev/null || { ldd "$app"; echo "app is not linked to the installed nvtxr" >&2; exit 1; }
grep -q 'MarkA "inside"' "$work/app.log" || { cat "$work/app.log"; echo "the installed-prefix app recorded nothing" >&2; exit 1; }
echo "installed prefix: the dependent program runs without LD_LIBRARY_PATH"

echo "== Haskell: the source distribution carries the license"
cabal -v0 sdist -o "$work/sdist" >/dev/null
tar tzf "$work"/sdist/nvtxr-*.tar.gz | grep '/LICENSE$' >/dev/null || { echo "cabal sdist has no LICENSE" >&2; exit 1; }
