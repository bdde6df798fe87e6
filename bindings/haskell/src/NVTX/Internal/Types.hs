-- | Types shared by the native and the portable (@-f-nvtx@) builds. Handles
-- are plain pointers in both builds, so the API and its types never depend
-- on the flag.
module NVTX.Internal.Types
  ( Color (..)
  , Payload (..)
  , CategoryId
  , EventAttribs (..)
  , defaultAttribs
  , Domain (..)
  , RegisteredString (..)
  , RangeId (..)
  , defaultDomain
  ) where

import Data.Int (Int32, Int64)
import Data.Word (Word32, Word64)
import Foreign.Ptr (Ptr, nullPtr)

-- | A color as @0xAARRGGBB@.
newtype Color = Color Word32
  deriving (Eq, Ord, Show)

-- | A numeric value attached to an event (shown by Nsight Systems).
data Payload
  = NoPayload -- ^ No payload.
  | PayloadU64 !Word64 -- ^ Unsigned 64-bit.
  | PayloadI64 !Int64 -- ^ Signed 64-bit.
  | PayloadF64 !Double -- ^ Double.
  | PayloadU32 !Word32 -- ^ Unsigned 32-bit.
  | PayloadI32 !Int32 -- ^ Signed 32-bit.
  | PayloadF32 !Float -- ^ Float.
  deriving (Eq, Show)

-- | A category id; 0 means no category. Name categories with
-- 'NVTX.nameCategory' or 'NVTX.domainNameCategory'.
type CategoryId = Word32

-- | Everything an event can carry. Start from 'defaultAttribs'.
data EventAttribs = EventAttribs
  { attribMessage :: Maybe String
    -- ^ The message text.
  , attribColor :: Maybe Color
    -- ^ The color shown for the range or mark.
  , attribCategory :: Maybe CategoryId
    -- ^ The category (must not be 0 when given).
  , attribPayload :: Payload
    -- ^ A numeric payload.
  , attribRegistered :: Maybe RegisteredString
    -- ^ A registered string used as the message (takes precedence over
    -- 'attribMessage'). It must belong to the domain the event goes to.
  }

-- | No message, color, category or payload.
defaultAttribs :: EventAttribs
defaultAttribs = EventAttribs Nothing Nothing Nothing NoPayload Nothing

-- | An NVTX domain. The handle is valid with or without a tool.
newtype Domain = Domain (Ptr ())
  deriving (Eq, Show)

-- | The default (global) domain.
defaultDomain :: Domain
defaultDomain = Domain nullPtr

-- | A string registered once in a domain and passed to the tool by handle.
data RegisteredString = RegisteredString
  { registeredDomain :: !Domain
  , registeredHandle :: !(Ptr ())
  }
  deriving (Eq, Show)

-- | A start/end range, ended with 'NVTX.endRange' on any thread.
data RangeId = RangeId !Domain !Word64
  deriving (Eq, Show)
