-- | The portable backend (@cabal build -f-nvtx@): no native library, every
-- call a no-op. Same names and types as the native backend.
module NVTX.Internal.Backend
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
  ) where

import Data.Word (Word32, Word64)
import Foreign.Ptr (Ptr, nullPtr)

import NVTX.Internal.Types (EventAttribs)

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

markEvent :: Ptr () -> EventAttribs -> IO ()
markEvent _ _ = pure ()

pushEvent :: Ptr () -> EventAttribs -> IO ()
pushEvent _ _ = pure ()

popEvent :: Ptr () -> IO ()
popEvent _ = pure ()

startEvent :: Ptr () -> EventAttribs -> IO Word64
startEvent _ _ = pure 0

endEvent :: Ptr () -> Word64 -> IO ()
endEvent _ _ = pure ()

nameCategoryIn :: Ptr () -> Word32 -> String -> IO ()
nameCategoryIn _ _ _ = pure ()

nameCurrentThread :: String -> IO ()
nameCurrentThread _ = pure ()
