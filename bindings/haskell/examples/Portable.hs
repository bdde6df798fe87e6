-- The "Portable Code" example of the nvtx-hs README: NVTX.Safe compiles and
-- runs the same with or without NVTX (cabal build -f-nvtx).
module Main (main) where

import NVTX.Safe

expensiveComputation :: IO ()
expensiveComputation = mark "computed"

main :: IO ()
main = do
  putStrLn $ "NVTX enabled: " ++ show nvtxEnabled
  withRange "MyOperation" $ do
    -- Works whether or not NVTX is available
    expensiveComputation
