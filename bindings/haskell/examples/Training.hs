-- The training-loop example of the nvtx-hs README, unchanged but for the
-- imports and the stand-in model.
module Main (main) where

import Control.Monad (foldM)
import NVTX

data Model = Model  -- your model type
data Batch = Batch  -- your batch type

initModel :: IO Model
initModel = pure Model

loadData :: IO [Batch]
loadData = pure (replicate 3 Batch)

forward :: Model -> Batch -> IO Double
forward _ _ = pure 1

computeLoss :: Double -> Batch -> IO Double
computeLoss out _ = pure (out / 2)

backward :: Model -> Double -> IO Double
backward _ loss = pure loss

updateWeights :: Model -> Double -> IO Model
updateWeights model _ = pure model

trainEpoch :: Model -> [Batch] -> IO Model
trainEpoch model batches = do
  withRange "Epoch" $ do
    foldM trainStep model (zip [1..] batches)

trainStep :: Model -> (Int, Batch) -> IO Model
trainStep model (i, batch) = do
  withRangeAttribs (defaultAttribs
    { attribMessage = Just $ "Step " ++ show i
    , attribColor = Just colorGreen
    }) $ do

    -- Forward pass
    output <- withRangeColor "Forward" colorBlue $
      forward model batch

    -- Compute loss
    loss <- withRange "Loss" $
      computeLoss output batch

    -- Backward pass
    grads <- withRangeColor "Backward" colorRed $
      backward model loss

    -- Update weights
    withRangeColor "Update" colorYellow $
      updateWeights model grads

main :: IO ()
main = do
  nameThread "MainTrainer"
  nameCategory 1 "Training"
  nameCategory 2 "Validation"

  mark "Training Start"

  model <- initModel
  batches <- loadData

  _finalModel <- trainEpoch model batches

  mark "Training Complete"
  putStrLn "training: done"
