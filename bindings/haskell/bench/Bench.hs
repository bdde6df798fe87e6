-- | Cost per call of the Haskell API next to the raw foreign call, in one
-- run. Run it with no tool and with a do-nothing tool:
--
-- > cabal bench
-- > NVTX_INJECTION64_PATH=.../libnvtxr_event_log.so NVTXR_EVENT_LOG_MODE=null cabal bench
module Main (main) where

import Control.Monad (forM_)
import Data.Int (Int32)
import Data.Word (Word64)
import Foreign.C.String (CString, withCString)
import Foreign.Ptr (Ptr, nullPtr)
import GHC.Clock (getMonotonicTimeNSec)
import System.Mem (getAllocationCounter)
import Text.Printf (printf)

import NVTX

foreign import ccall unsafe "nvtxr_mark" c_mark :: Ptr () -> CString -> IO Int32
foreign import ccall unsafe "nvtxr_range_push" c_push :: Ptr () -> CString -> IO Int32
foreign import ccall unsafe "nvtxr_range_pop" c_pop :: Ptr () -> IO Int32

iterations :: Int
iterations = 1000000

-- | Best of 5 runs: ns per call, and bytes allocated per call.
measure :: IO () -> IO (Double, Double)
measure action = minimum <$> mapM (const once) [1 :: Int .. 5]
  where
    once = do
      a0 <- getAllocationCounter
      t0 <- getMonotonicTimeNSec
      loop iterations
      t1 <- getMonotonicTimeNSec
      a1 <- getAllocationCounter
      let per x = fromIntegral x / fromIntegral iterations
      pure (per (t1 - t0 :: Word64), per (a0 - a1))
    loop 0 = pure ()
    loop n = action >> loop (n - 1 :: Int)

-- | A message computed at run time (not a literal): found by identity.
computed :: String
computed = "step " ++ show (length "xyz")
{-# NOINLINE computed #-}

main :: IO ()
main = do
  attached <- isToolAttached
  printf "tool attached: %s; best of 5 x %d calls: ns per call, bytes allocated per call\n" (show attached) iterations
  s <- registerString defaultDomain "registered"
  withCString "raw" $ \raw -> do
    let rows =
          [ ("empty loop (baseline)", pure ())
          , ("raw foreign call: nvtxr_mark", () <$ c_mark nullPtr raw)
          , ("mark (String literal)", mark "string message")
          , ("markString (registered)", markString s)
          , ("raw foreign calls: push+pop", c_push nullPtr raw >> () <$ c_pop nullPtr)
          , ("withRange (String literal)", withRange "string message" (pure ()))
          , ("withRange (String variable)", withRange computed (pure ()))
          , ("withRangeString (registered)", withRangeString s (pure ()))
          ]
    forM_ rows $ \(name, action) -> do
      (ns, bytes) <- measure action
      printf "  %-32s %8.2f ns %8.1f B\n" (name :: String) ns bytes
