-- | The portable backend (@cabal build -f-nvtx@): no native library, every
-- call a no-op. Same names and types as "NVTX.Internal.Native".
module NVTX.Internal.Portable
  ( enabled
  , toolAttached
  , initializeTool
  , createDomainHandle
  , destroyDomainHandle
  , registerStringHandle
  , markEvent
  , pushEvent
  , popEvent
  , startEvent
  , endEvent
  , nameCategoryIn
  , nameCurrentThread
  , registerCounter
  , sampleCounterInt64
  , sampleCounterDouble
  , registerSchemaIn
  ) where

import Data.Int (Int64)
import Data.Word (Word32, Word64)
import Foreign.C.Types (CInt)
import Foreign.Ptr (Ptr, nullPtr)

import NVTX.Internal.Message (Message)
import NVTX.Types (EventAttribs)

-- | False: this build has no NVTX support.
enabled :: Bool
enabled = False

toolAttached :: Bool
toolAttached = False

initializeTool :: IO Bool
initializeTool = pure False

createDomainHandle :: String -> IO (Ptr ())
createDomainHandle _ = pure nullPtr

destroyDomainHandle :: Ptr () -> IO ()
destroyDomainHandle _ = pure ()

registerStringHandle :: Ptr () -> String -> IO (Ptr ())
registerStringHandle _ _ = pure nullPtr

markEvent :: Ptr () -> Message -> EventAttribs -> IO ()
markEvent _ _ _ = pure ()

-- | What NVTX's push and pop return with no tool.
noPushPopTracking :: CInt
noPushPopTracking = -2

pushEvent :: Ptr () -> Message -> EventAttribs -> IO CInt
pushEvent _ _ _ = pure noPushPopTracking

popEvent :: Ptr () -> IO CInt
popEvent _ = pure noPushPopTracking

startEvent :: Ptr () -> Message -> EventAttribs -> IO Word64
startEvent _ _ _ = pure 0

endEvent :: Ptr () -> Word64 -> IO ()
endEvent _ _ = pure ()

nameCategoryIn :: Ptr () -> Word32 -> String -> IO ()
nameCategoryIn _ _ _ = pure ()

nameCurrentThread :: String -> IO ()
nameCurrentThread _ = pure ()

registerCounter :: Ptr () -> String -> Bool -> IO Word64
registerCounter _ _ _ = pure 0

sampleCounterInt64 :: Ptr () -> Word64 -> Int64 -> IO ()
sampleCounterInt64 _ _ _ = pure ()

sampleCounterDouble :: Ptr () -> Word64 -> Double -> IO ()
sampleCounterDouble _ _ _ = pure ()

registerSchemaIn :: Ptr () -> String -> Int -> [(String, Int, Int)] -> IO Word64
registerSchemaIn _ _ _ _ = pure 0
