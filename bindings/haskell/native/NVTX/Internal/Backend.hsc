{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE ForeignFunctionInterface #-}

-- | The native backend: foreign calls into nvtxr's C ABI (@nvtxr.h@). The
-- layout of @nvtxr_event_t@ comes from the header through hsc2hs.
--
-- Event calls are @unsafe@ imports (they never call back into Haskell and
-- return in nanoseconds); calls that may load the tool or take a lock are
-- @safe@.
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

import Data.Bits (shiftR, (.&.), (.|.))
import Data.Char (ord)
import Data.Int (Int32)
import Data.Word (Word32, Word64, Word8)
import Foreign.C.String (CString)
import Foreign.C.Types (CBool (..), CInt (..))
import Foreign.Marshal.Alloc (allocaBytes, allocaBytesAligned)
import Foreign.Marshal.Utils (fillBytes)
import Foreign.Ptr (Ptr, castPtr, plusPtr)
import Data.Maybe (fromMaybe)
import Foreign.Storable (Storable, poke, pokeByteOff)
import System.IO.Unsafe (unsafePerformIO)

import NVTX.Internal.Types

#include <nvtxr.h>

foreign import ccall safe "nvtxr_initialize" c_initialize :: IO CBool
foreign import ccall safe "nvtxr_tool_attached" c_tool_attached :: IO CBool
foreign import ccall safe "nvtxr_domain_create" c_domain_create :: CString -> IO (Ptr ())
foreign import ccall safe "nvtxr_domain_destroy" c_domain_destroy :: Ptr () -> IO Int32
foreign import ccall safe "nvtxr_string_register" c_string_register :: Ptr () -> CString -> IO (Ptr ())
foreign import ccall safe "nvtxr_name_category" c_name_category :: Ptr () -> Word32 -> CString -> IO Int32
foreign import ccall safe "nvtxr_name_current_thread" c_name_current_thread :: CString -> IO Int32
foreign import ccall unsafe "nvtxr_mark" c_mark :: Ptr () -> CString -> IO Int32
foreign import ccall unsafe "nvtxr_mark_string" c_mark_string :: Ptr () -> Ptr () -> IO Int32
foreign import ccall unsafe "nvtxr_mark_ex" c_mark_ex :: Ptr () -> Ptr Event -> IO Int32
foreign import ccall unsafe "nvtxr_range_push" c_push :: Ptr () -> CString -> IO CInt
foreign import ccall unsafe "nvtxr_range_push_string" c_push_string :: Ptr () -> Ptr () -> IO CInt
foreign import ccall unsafe "nvtxr_range_push_ex" c_push_ex :: Ptr () -> Ptr Event -> IO CInt
foreign import ccall unsafe "nvtxr_range_pop" c_pop :: Ptr () -> IO CInt
foreign import ccall unsafe "nvtxr_range_start" c_start :: Ptr () -> CString -> IO Word64
foreign import ccall unsafe "nvtxr_range_start_string" c_start_string :: Ptr () -> Ptr () -> IO Word64
foreign import ccall unsafe "nvtxr_range_start_ex" c_start_ex :: Ptr () -> Ptr Event -> IO Word64
foreign import ccall unsafe "nvtxr_range_end" c_end :: Ptr () -> Word64 -> IO Int32

-- | @nvtxr_event_t@, only ever handled through a pointer.
data Event

-- | True: this build calls nvtxr.
enabled :: Bool
enabled = True

-- | Whether a tool is attached. Evaluated once, by a safe foreign call that
-- loads the tool if nobody has yet; afterwards a plain 'Bool'.
toolAttached :: Bool
toolAttached = unsafePerformIO (fmap (/= 0) c_tool_attached)
{-# NOINLINE toolAttached #-}

initializeTool :: IO Bool
initializeTool = fmap (/= 0) c_initialize

-- | The string as NUL-terminated UTF-8 for the duration of the action.
-- NUL characters and lone surrogates become U+FFFD, so nothing after them is
-- lost and the bytes are always valid UTF-8. (A hand-written encoder: GHC's
-- text-encoding machinery costs about 300 ns for a short message.)
withUtf8 :: String -> (CString -> IO a) -> IO a
withUtf8 str action = allocaBytes (encodedLength 0 str + 1) $ \buf -> do
  end <- encode buf str
  poke end 0
  action (castPtr buf)
  where
    encodedLength :: Int -> String -> Int
    encodedLength !n [] = n
    encodedLength !n (c : cs) = encodedLength (n + charLength (sanitize c)) cs

charLength :: Int -> Int
charLength o
  | o < 0x80 = 1
  | o < 0x800 = 2
  | o < 0x10000 = 3
  | otherwise = 4

-- | The code point to encode: U+FFFD for NUL and surrogates.
sanitize :: Char -> Int
sanitize c
  | o == 0 || (o >= 0xD800 && o <= 0xDFFF) = 0xFFFD
  | otherwise = o
  where
    o = ord c

-- | Writes the UTF-8 bytes; returns the address after the last one.
encode :: Ptr Word8 -> String -> IO (Ptr Word8)
encode !p [] = pure p
encode !p (c : cs) = do
  let o = sanitize c
      byte i v = pokeByteOff p i (fromIntegral v :: Word8)
      cont k = 0x80 .|. ((o `shiftR` (6 * k)) .&. 0x3F)
  case charLength o of
    1 -> byte 0 o
    2 -> byte 0 (0xC0 .|. (o `shiftR` 6)) >> byte 1 (cont 0)
    3 -> byte 0 (0xE0 .|. (o `shiftR` 12)) >> byte 1 (cont 1) >> byte 2 (cont 0)
    _ -> byte 0 (0xF0 .|. (o `shiftR` 18)) >> byte 1 (cont 2) >> byte 2 (cont 1) >> byte 3 (cont 0)
  encode (p `plusPtr` charLength o) cs

createDomainHandle :: String -> IO (Ptr ())
createDomainHandle name = withUtf8 name c_domain_create

destroyDomainHandle :: Ptr () -> IO ()
destroyDomainHandle d = () <$ c_domain_destroy d

registerStringHandle :: Ptr () -> String -> IO (Ptr ())
registerStringHandle d text = withUtf8 text (c_string_register d)

nameCategoryIn :: Ptr () -> Word32 -> String -> IO ()
nameCategoryIn d cat name = () <$ withUtf8 name (c_name_category d cat)

nameCurrentThread :: String -> IO ()
nameCurrentThread name = () <$ withUtf8 name c_name_current_thread

-- | How an event reaches nvtxr: by the plain-text call, the registered-string
-- call, or with full attributes, as NVIDIA's own API would send it.
withEvent
  :: EventAttribs
  -> (CString -> IO r)
  -> (Ptr () -> IO r)
  -> (Ptr Event -> IO r)
  -> IO r
withEvent attrs text registered full = case attrs of
  EventAttribs (Just msg) Nothing Nothing NoPayload Nothing -> withUtf8 msg text
  EventAttribs _ Nothing Nothing NoPayload (Just s) -> registered (registeredHandle s)
  EventAttribs msg color category payload reg ->
    allocaBytesAligned #{size nvtxr_event_t} #{alignment nvtxr_event_t} $ \p -> do
      fillBytes p 0 #{size nvtxr_event_t}
      -- NVTXR_EVENT_INIT: the size this binding was built with.
      #{poke nvtxr_event_t, size} p (#{size nvtxr_event_t} :: Word32)
      pokeColor p color
      #{poke nvtxr_event_t, category} p (fromMaybe 0 category)
      pokePayload p payload
      case (reg, msg) of
        (Just s, _) -> do
          #{poke nvtxr_event_t, registered_message} p (registeredHandle s)
          full p
        (Nothing, Just m) -> withUtf8 m $ \c -> do
          #{poke nvtxr_event_t, message} p c
          full p
        (Nothing, Nothing) -> full p

pokeColor :: Ptr Event -> Maybe Color -> IO ()
pokeColor _ Nothing = pure ()
pokeColor p (Just (Color c)) = do
  #{poke nvtxr_event_t, color_type} p (#{const NVTXR_COLOR_ARGB} :: Word32)
  #{poke nvtxr_event_t, color} p c

pokePayload :: Ptr Event -> Payload -> IO ()
pokePayload p payload = case payload of
  NoPayload -> pure ()
  PayloadU64 v -> set #{const NVTXR_PAYLOAD_U64} v
  PayloadI64 v -> set #{const NVTXR_PAYLOAD_I64} v
  PayloadF64 v -> set #{const NVTXR_PAYLOAD_F64} v
  PayloadU32 v -> set #{const NVTXR_PAYLOAD_U32} v
  PayloadI32 v -> set #{const NVTXR_PAYLOAD_I32} v
  PayloadF32 v -> set #{const NVTXR_PAYLOAD_F32} v
  where
    set :: Storable v => Word32 -> v -> IO ()
    set t v = do
      #{poke nvtxr_event_t, payload_type} p t
      pokeByteOff p #{offset nvtxr_event_t, payload} v

markEvent :: Ptr () -> EventAttribs -> IO ()
markEvent d attrs = () <$ withEvent attrs (c_mark d) (c_mark_string d) (c_mark_ex d)

pushEvent :: Ptr () -> EventAttribs -> IO ()
pushEvent d attrs = () <$ withEvent attrs (c_push d) (c_push_string d) (c_push_ex d)

popEvent :: Ptr () -> IO ()
popEvent d = () <$ c_pop d

startEvent :: Ptr () -> EventAttribs -> IO Word64
startEvent d attrs = withEvent attrs (c_start d) (c_start_string d) (c_start_ex d)

endEvent :: Ptr () -> Word64 -> IO ()
endEvent d i = () <$ c_end d i
