-- | Cost per call of the Haskell API next to the raw foreign call, in one
-- run, and the floor under 'withRange': the raw push and pop with what
-- keeps a range balanced under asynchronous exceptions (the thread's
-- boundness checked, 'mask', the body restored inside 'onException'). Run
-- it with no tool and with a do-nothing tool (@cargo xtask bench-haskell@
-- runs both):
--
-- > cabal bench
-- > NVTX_INJECTION64_PATH=.../libnvtxr_event_log.so NVTXR_EVENT_LOG_MODE=null cabal bench
--
-- Its argument, if any, is the number of calls per operation (1,000,000).
module Main (main) where

import Control.Concurrent (isCurrentThreadBound)
import Control.Exception (mask, onException)
import Control.Monad (forM_, when)
import Data.Int (Int32)
import Data.Word (Word64)
import Foreign.C.String (CString, withCString)
import Foreign.Ptr (Ptr, nullPtr)
import GHC.Clock (getMonotonicTimeNSec)
import System.Mem (getAllocationCounter)
import System.Environment (getArgs)
import Text.Printf (printf)

import NVTX

foreign import ccall unsafe "nvtxr_mark" c_mark :: Ptr () -> CString -> IO Int32
foreign import ccall unsafe "nvtxr_range_push" c_push :: Ptr () -> CString -> IO Int32
foreign import ccall unsafe "nvtxr_range_pop" c_pop :: Ptr () -> IO Int32

-- | Best of 5 runs of @iterations@ calls: ns per call, and bytes allocated per call.
measure :: Int -> IO () -> IO (Double, Double)
measure iterations action = minimum <$> mapM (const once) [1 :: Int .. 5]
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

-- | The raw push and pop as 'withRange' must wrap them on a bound thread.
maskedPushPop :: CString -> IO ()
maskedPushPop raw = do
  bound <- isCurrentThreadBound
  when bound $ mask $ \restore -> do
    _ <- c_push nullPtr raw
    restore (pure ()) `onException` c_pop nullPtr
    () <$ c_pop nullPtr

-- | A message computed at run time (not a literal): found by identity.
computed :: String
computed = "step " ++ show (length "xyz")
{-# NOINLINE computed #-}

main :: IO ()
main = do
  args <- getArgs
  let iterations = case args of
        [n] -> read n
        _ -> 1000000 :: Int
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
          , ("floor: raw push+pop, masked", maskedPushPop raw)
          , ("withRange (String literal)", withRange "string message" (pure ()))
          , ("withRange (String variable)", withRange computed (pure ()))
          , ("withRangeString (registered)", withRangeString s (pure ()))
          ]
    forM_ rows $ \(name, action) -> do
      (ns, bytes) <- measure iterations action
      printf "  %-32s %8.2f ns %8.1f B\n" (name :: String) ns bytes
