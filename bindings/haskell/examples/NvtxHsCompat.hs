-- A program written against nvtx-hs's published API, as its users spell it:
-- its modules (NVTX, NVTX.Types, NVTX.Safe, NVTX.Eff), constructors and
-- signatures, with type annotations that pin each one. It must build
-- unchanged with and without -f-nvtx; the tests check its events.
module Main (main) where

import Control.Monad (forM_)
import Data.Int (Int64)
import Data.Word (Word32, Word64)
import Foreign.C.Types (CInt)

import NVTX
import qualified NVTX.Eff as Eff
import qualified NVTX.Safe as Safe
import qualified NVTX.Types as Types

-- nvtx-hs's signatures, pinned.
pushRange' :: String -> IO CInt
pushRange' = pushRange

popRange' :: IO CInt
popRange' = popRange

createDomain' :: String -> IO (Maybe Domain)
createDomain' = createDomain

domainRangePush' :: Domain -> EventAttribs -> IO CInt
domainRangePush' = domainRangePush

domainRangePop' :: Domain -> IO CInt
domainRangePop' = domainRangePop

startRangeAttribs' :: EventAttribs -> IO RangeId
startRangeAttribs' = startRangeAttribs

payloads :: [Payload]
payloads =
  [ PayloadNone
  , PayloadUInt64 (1 :: Word64)
  , PayloadInt64 (-2 :: Int64)
  , PayloadDouble 2.5
  , PayloadUInt32 (4 :: Word32)
  , PayloadInt32 (-3 :: Int)
  , PayloadFloat 0.5
  ]

colors :: [Color]
colors = [colorRed, colorGreen, colorBlue, colorYellow, colorMagenta, colorCyan, colorWhite, colorOrange, rgb 1 2 3, argb 4 5 6 7]

main :: IO ()
main = do
  nameThread "compat"
  let category = Types.CategoryId 7
  nameCategory category "compat category"
  print (unCategoryId (category + 1), unColor colorMagenta, Safe.nvtxEnabled)
  _ <- pushRange' "raw push"
  _ <- popRange'
  forM_ payloads $ \p -> markAttribs defaultAttribs {attribMessage = Just "payloads", attribPayload = p}
  markAttribs (EventAttribs (Just "colors") (Just colorMagenta) (Just 7) PayloadNone)
  withRangeAttribs defaultAttribs {attribMessage = Just "attribs range", attribColor = Just (head colors)} $
    Safe.withRange "with range" (pure ())
  r <- startRangeAttribs' defaultAttribs {attribMessage = Just "start attribs"}
  endRange r
  md <- createDomain' "compat domain"
  forM_ md $ \d -> do
    _ <- domainRangePush' d defaultAttribs {attribMessage = Just "in domain"}
    _ <- domainRangePop' d
    destroyDomain d
  Eff.runNvtxIO $ \nvtx -> Eff.markE nvtx "via NVTX.Eff"
  mark "compat done"
