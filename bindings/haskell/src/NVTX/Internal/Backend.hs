{-# LANGUAGE CPP #-}

-- | The backend the @nvtx@ flag chose: "NVTX.Internal.Native" (foreign calls
-- into nvtxr) or "NVTX.Internal.Portable" (no-ops). They have different module
-- names so that switching the flag in one build directory never picks up
-- the other build's generated module.
module NVTX.Internal.Backend (module Chosen) where

#if defined(NVTX_NATIVE)
import NVTX.Internal.Native as Chosen
#else
import NVTX.Internal.Portable as Chosen
#endif
