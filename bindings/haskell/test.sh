#!/usr/bin/env bash
# Builds and tests the Haskell package both ways: against nvtxr (found through
# pkg-config, in-tree) and portable (-f-nvtx, no native dependency).
# Installs GHC, cabal and the test libraries from Debian when missing; builds
# offline (no Hackage).
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v ghc >/dev/null || ! command -v cabal >/dev/null || ! command -v pkg-config >/dev/null \
    || ! ghc-pkg list --simple-output tasty-hunit 2>/dev/null | grep -q tasty-hunit; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq ghc cabal-install pkg-config libghc-tasty-dev libghc-tasty-hunit-dev >/dev/null
fi

# nvtxr's library, its in-tree nvtxr.pc, and the recording tool the tests attach.
eval "$(cd ../.. && cargo run -q -p nvtxr-harness --bin artifacts)"
export CABAL_CONFIG="$PWD/cabal.config"
cabal=(cabal --offline -v1)

echo "== Haskell: native build (links nvtxr)"
"${cabal[@]}" build all
"${cabal[@]}" test --test-show-details=direct

echo "== Haskell: portable build (-f-nvtx)"
PKG_CONFIG_PATH='' "${cabal[@]}" build -f-nvtx --builddir dist-portable all
PKG_CONFIG_PATH='' "${cabal[@]}" test -f-nvtx --builddir dist-portable --test-show-details=direct
