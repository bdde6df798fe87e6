-- The quick start of the nvtx-hs README, unchanged but for the imports and
-- the stand-in workload.
module Main (main) where

import Control.Monad (forM_)
import NVTX

epochs :: Int
epochs = 3

forwardPass, backwardPass, updateWeights :: IO ()
forwardPass = pure ()
backwardPass = pure ()
updateWeights = pure ()

main :: IO ()
main = do
  nameThread "Main"

  withRange "Training" $ do
    forM_ [1..epochs] $ \epoch ->
      withRange ("Epoch " ++ show epoch) $ do
        withRange "Forward" forwardPass
        withRange "Backward" backwardPass
        withRange "Update" updateWeights
  putStrLn ("quickstart: done (NVTX enabled: " ++ show nvtxEnabled ++ ")")
