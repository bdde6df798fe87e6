-- | The types of the NVTX API, under nvtx-hs's names: colors, payloads,
-- categories, event attributes, domains. Shared by the native and the
-- portable (@-f-nvtx@) builds: handles are plain pointers in both, so no type
-- depends on the flag.
module NVTX.Types
  ( -- * Colors
    Color (..)
  , rgb
  , argb
  , colorRed
  , colorGreen
  , colorBlue
  , colorYellow
  , colorCyan
  , colorMagenta
  , colorOrange
  , colorPurple
  , colorWhite
  , colorBlack

    -- * Payloads and categories
  , Payload (..)
  , CategoryId (..)

    -- * Event attributes
  , EventAttribs (..)
  , defaultAttribs

    -- * Handles
  , Domain (..)
  , defaultDomain
  , RegisteredString (..)
  , RangeId (..)
  ) where

import Data.Bits (shiftL, (.|.))
import Data.Int (Int64)
import Data.Word (Word32, Word64, Word8)
import Foreign.Ptr (Ptr, nullPtr)

-- | A color as @0xAARRGGBB@.
--
-- @since 0.1.0
newtype Color = Color {unColor :: Word32}
  deriving (Eq, Ord, Show)

-- | An opaque color from red, green and blue.
rgb :: Word8 -> Word8 -> Word8 -> Color
rgb = argb 0xFF

-- | A color from alpha, red, green and blue.
argb :: Word8 -> Word8 -> Word8 -> Word8 -> Color
argb a r g b =
  Color (fromIntegral a `shiftL` 24 .|. fromIntegral r `shiftL` 16 .|. fromIntegral g `shiftL` 8 .|. fromIntegral b)

-- | Opaque red.
colorRed :: Color
colorRed = rgb 0xFF 0x00 0x00

-- | Opaque green.
colorGreen :: Color
colorGreen = rgb 0x00 0xFF 0x00

-- | Opaque blue.
colorBlue :: Color
colorBlue = rgb 0x00 0x00 0xFF

-- | Opaque yellow.
colorYellow :: Color
colorYellow = rgb 0xFF 0xFF 0x00

-- | Opaque cyan.
colorCyan :: Color
colorCyan = rgb 0x00 0xFF 0xFF

-- | Opaque magenta.
colorMagenta :: Color
colorMagenta = rgb 0xFF 0x00 0xFF

-- | Opaque orange.
colorOrange :: Color
colorOrange = rgb 0xFF 0xA5 0x00

-- | Opaque purple.
colorPurple :: Color
colorPurple = rgb 0x80 0x00 0x80

-- | Opaque white.
colorWhite :: Color
colorWhite = rgb 0xFF 0xFF 0xFF

-- | Opaque black.
colorBlack :: Color
colorBlack = rgb 0x00 0x00 0x00

-- | A numeric value attached to an event (shown by Nsight Systems).
data Payload
  = PayloadNone -- ^ No payload.
  | PayloadUInt64 !Word64 -- ^ Unsigned 64-bit.
  | PayloadInt64 !Int64 -- ^ Signed 64-bit.
  | PayloadDouble !Double -- ^ Double.
  | PayloadUInt32 !Word32 -- ^ Unsigned 32-bit.
  | PayloadInt32 !Int -- ^ Signed 32-bit (an 'Int', as nvtx-hs has it: cut to its low 32 bits).
  | PayloadFloat !Float -- ^ Float.
  | PayloadRecord !Word64 [Word8]
    -- ^ A record of a registered schema: its schema id and bytes (make it
    -- with 'NVTX.recordPayload'; the tool shows its fields by name).
  deriving (Eq, Show)

-- | A category; 0 means none. Numeric literals are categories
-- (@nameCategory 1 \"Training\"@). Name categories with 'NVTX.nameCategory'
-- or 'NVTX.domainNameCategory'.
newtype CategoryId = CategoryId {unCategoryId :: Word32}
  deriving (Eq, Ord, Show)

-- | Arithmetic on the underlying 'Word32', so that literals work.
instance Num CategoryId where
  CategoryId a + CategoryId b = CategoryId (a + b)
  CategoryId a - CategoryId b = CategoryId (a - b)
  CategoryId a * CategoryId b = CategoryId (a * b)
  abs = id
  signum (CategoryId a) = CategoryId (signum a)
  fromInteger = CategoryId . fromInteger

-- | Everything an event can carry. Start from 'defaultAttribs'.
data EventAttribs = EventAttribs
  { attribMessage :: Maybe String
    -- ^ The message text.
  , attribColor :: Maybe Color
    -- ^ The color shown for the range or mark.
  , attribCategory :: Maybe CategoryId
    -- ^ The category (0 is the same as none).
  , attribPayload :: Payload
    -- ^ A numeric payload.
  }
  deriving (Eq, Show)

-- | No message, color, category or payload.
defaultAttribs :: EventAttribs
defaultAttribs = EventAttribs Nothing Nothing Nothing PayloadNone

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
