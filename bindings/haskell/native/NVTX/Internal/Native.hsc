{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE CApiFFI #-}
{-# LANGUAGE MagicHash #-}

-- | The native backend: foreign calls into nvtxr's C ABI (@nvtxr.h@). The
-- imports are @capi@, so the C compiler checks each one against the header;
-- the layout of @nvtxr_event_t@ comes from the header through hsc2hs.
--
-- Event calls are @unsafe@ imports (they never call back into Haskell and
-- return in nanoseconds); calls that may load the tool or take a lock are
-- @safe@.
--
-- Messages are encoded to UTF-8 once: the first 'maxCachedMessages'
-- distinct message strings are kept encoded (see 'withMessage'), so a hot
-- loop's @withRange \"Forward\"@ never encodes again, and a program that
-- formats a new message on every call keeps bounded memory.
module NVTX.Internal.Native
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

import Data.Bits (shiftR, (.&.), (.|.))
import Data.Char (ord)
import Data.Int (Int32, Int64)
import Data.IORef (IORef, atomicModifyIORef', newIORef, readIORef)
import qualified Data.Map.Strict as Map
import Data.Word (Word32, Word64, Word8)
import Foreign.C.String (CString)
import Foreign.C.Types (CBool (..), CDouble (..), CInt, CSize)
import Foreign.Marshal.Alloc (allocaBytes, allocaBytesAligned, free, mallocBytes)
import Foreign.Marshal.Array (withArrayLen)
import Foreign.Marshal.Utils (fillBytes)
import Foreign.Ptr (Ptr, castPtr, plusPtr)
import Foreign.Storable (Storable, poke, pokeByteOff)
import GHC.Exts (isTrue##, reallyUnsafePtrEquality##)
import System.IO.Unsafe (unsafePerformIO)

import NVTX.Internal.Message
import NVTX.Types

#include <nvtxr.h>

foreign import capi safe "nvtxr.h nvtxr_initialize" c_initialize :: IO CBool
foreign import capi safe "nvtxr.h nvtxr_tool_attached" c_tool_attached :: IO CBool
foreign import capi safe "nvtxr.h nvtxr_domain_create" c_domain_create :: CString -> IO (Ptr ())
foreign import capi safe "nvtxr.h nvtxr_domain_destroy" c_domain_destroy :: Ptr () -> IO Int32
-- ccall, not capi: it returns a const pointer, which a capi import of GHC 9.0
-- can only declare as a non-const one (a C compiler warning).
foreign import ccall safe "nvtxr_string_register" c_string_register :: Ptr () -> CString -> IO (Ptr ())
foreign import capi safe "nvtxr.h nvtxr_name_category" c_name_category :: Ptr () -> Word32 -> CString -> IO Int32
foreign import capi safe "nvtxr.h nvtxr_name_current_thread" c_name_current_thread :: CString -> IO Int32
-- The event calls: ccall, not capi, so that GHC calls nvtxr directly (a capi
-- import goes through a C wrapper GHC generates: one more call per event,
-- about 1.5 ns here). Their types are the header's; the test suites see each
-- argument arrive at the event-log tool.
foreign import ccall unsafe "nvtxr_mark" c_mark :: Ptr () -> CString -> IO Int32
foreign import ccall unsafe "nvtxr_mark_string" c_mark_string :: Ptr () -> Ptr () -> IO Int32
foreign import ccall unsafe "nvtxr_mark_ex" c_mark_ex :: Ptr () -> Ptr Event -> IO Int32
foreign import ccall unsafe "nvtxr_range_push" c_push :: Ptr () -> CString -> IO Int32
foreign import ccall unsafe "nvtxr_range_push_string" c_push_string :: Ptr () -> Ptr () -> IO Int32
foreign import ccall unsafe "nvtxr_range_push_ex" c_push_ex :: Ptr () -> Ptr Event -> IO Int32
foreign import ccall unsafe "nvtxr_range_pop" c_pop :: Ptr () -> IO Int32
foreign import ccall unsafe "nvtxr_range_start" c_start :: Ptr () -> CString -> IO Word64
foreign import ccall unsafe "nvtxr_range_start_string" c_start_string :: Ptr () -> Ptr () -> IO Word64
foreign import ccall unsafe "nvtxr_range_start_ex" c_start_ex :: Ptr () -> Ptr Event -> IO Word64
foreign import ccall unsafe "nvtxr_range_end" c_end :: Ptr () -> Word64 -> IO Int32
foreign import capi safe "nvtxr.h nvtxr_counter_register" c_counter_register :: Ptr () -> CString -> Word32 -> IO Word64
foreign import ccall unsafe "nvtxr_counter_sample_int64" c_counter_sample_int64 :: Ptr () -> Word64 -> Int64 -> IO Int32
foreign import ccall unsafe "nvtxr_counter_sample_float64" c_counter_sample_float64 :: Ptr () -> Word64 -> CDouble -> IO Int32
foreign import capi safe "nvtxr.h nvtxr_payload_schema_register" c_payload_schema_register :: Ptr () -> Ptr Schema -> IO Word64

-- | @nvtxr_payload_schema_t@, as the header lays it out.
data Schema

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
withUtf8 str action = allocaBytes (encodedLength str + 1) $ \buf -> do
  end <- encode buf str
  poke end 0
  action (castPtr buf)

-- | The bytes 'encode' writes.
encodedLength :: String -> Int
encodedLength = go 0
  where
    go !n [] = n
    go !n (c : cs) = go (n + charLength (sanitize c)) cs

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

-- | The most message strings kept encoded.
maxCachedMessages :: Int
maxCachedMessages = 4096

-- | How many recently used messages are found by identity.
recentMessages :: Int
recentMessages = 16

-- | Messages encoded once, by text; never freed (at most 'maxCachedMessages').
messages :: IORef (Map.Map String CString)
messages = unsafePerformIO (newIORef Map.empty)
{-# NOINLINE messages #-}

-- | The most recently used messages, most recent first. A 'String' is a
-- linked list: comparing two costs about 13 ns a character here, as much
-- as encoding it. But a program's literal messages (@withRange
-- \"Forward\"@) are the same heap object on every call, so these are found
-- by identity first, without reading a character.
recent :: IORef [(String, CString)]
recent = unsafePerformIO (newIORef [])
{-# NOINLINE recent #-}

-- | The message as NUL-terminated UTF-8 for the duration of the action:
-- found by identity among the recent ones, else by text in the cache
-- (encoded into it the first time), else (the cache full) encoded for this
-- call only.
withMessage :: String -> (CString -> IO a) -> IO a
withMessage msg action = do
  known <- readIORef recent
  case lookupSame known of
    Just c -> action c
    Nothing -> do
      c <- cachedMessage msg
      case c of
        Just encoded -> do
          atomicModifyIORef' recent $ \r -> ((msg, encoded) : take (recentMessages - 1) r, ())
          action encoded
        Nothing -> withUtf8 msg action
  where
    lookupSame [] = Nothing
    lookupSame ((m, c) : rest)
      | isTrue## (reallyUnsafePtrEquality## m msg) = Just c
      | otherwise = lookupSame rest

-- | The message's encoding from the cache, added if there is room.
cachedMessage :: String -> IO (Maybe CString)
cachedMessage msg = do
  known <- readIORef messages
  case Map.lookup msg known of
    Just c -> pure (Just c)
    Nothing
      | Map.size known >= maxCachedMessages -> pure Nothing
      | otherwise -> do
          new <- mallocBytes (encodedLength msg + 1)
          end <- encode new msg
          poke end 0
          let c = castPtr new
          -- Another thread may have added it meanwhile: keep the first.
          kept <- atomicModifyIORef' messages $ \m -> case Map.lookup msg m of
            Just old -> (m, old)
            Nothing -> (Map.insert msg c m, c)
          if kept /= c then free new else pure ()
          pure (Just kept)

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

-- | Registers a counter (values @Int64@ when the flag is false, else
-- @Double@); its id, 0 with no tool.
registerCounter :: Ptr () -> String -> Bool -> IO Word64
registerCounter d name isDouble =
  withUtf8 name $ \c -> c_counter_register d c (if isDouble then #{const NVTXR_COUNTER_FLOAT64} else #{const NVTXR_COUNTER_INT64})

sampleCounterInt64 :: Ptr () -> Word64 -> Int64 -> IO ()
sampleCounterInt64 d counter value = () <$ c_counter_sample_int64 d counter value

sampleCounterDouble :: Ptr () -> Word64 -> Double -> IO ()
sampleCounterDouble d counter value = () <$ c_counter_sample_float64 d counter (realToFrac value)

-- | Registers a static schema named @name@ of records of @size@ bytes, its
-- fields as (name, 'NVTX.FieldType' index, offset); its id, 0 with no tool.
registerSchemaIn :: Ptr () -> String -> Int -> [(String, Int, Int)] -> IO Word64
registerSchemaIn d name size fields =
  withUtf8 name $ \cname ->
    withNames (map (\(n, _, _) -> n) fields) $ \names ->
      allocaBytesAligned (count * entrySize) #{alignment nvtxr_payload_entry_t} $ \entries -> do
        fillBytes entries 0 (count * entrySize)
        sequence_
          [ do
              let e = entries `plusPtr` (i * entrySize)
              #{poke nvtxr_payload_entry_t, type} e (entryType t)
              #{poke nvtxr_payload_entry_t, name} e n
              #{poke nvtxr_payload_entry_t, offset} e (fromIntegral offset :: Word64)
          | (i, (_, t, offset), n) <- zip3 [0 ..] fields names
          ]
        allocaBytesAligned #{size nvtxr_payload_schema_t} #{alignment nvtxr_payload_schema_t} $ \s -> do
          fillBytes s 0 #{size nvtxr_payload_schema_t}
          -- NVTXR_PAYLOAD_SCHEMA_INIT: the size this binding was built with.
          #{poke nvtxr_payload_schema_t, size} s (#{size nvtxr_payload_schema_t} :: Word32)
          #{poke nvtxr_payload_schema_t, kind} s (#{const NVTXR_SCHEMA_STATIC} :: Word32)
          #{poke nvtxr_payload_schema_t, name} s cname
          #{poke nvtxr_payload_schema_t, entries} s entries
          #{poke nvtxr_payload_schema_t, entry_count} s (fromIntegral count :: CSize)
          #{poke nvtxr_payload_schema_t, static_size} s (fromIntegral size :: CSize)
          c_payload_schema_register d s
  where
    count = length fields
    entrySize = #{size nvtxr_payload_entry_t}
    withNames [] k = k []
    withNames (n : ns) k = withUtf8 n $ \c -> withNames ns (k . (c :))
    -- In 'NVTX.FieldType' order.
    entryType :: Int -> Word64
    entryType t =
      [ #{const NVTXR_TYPE_INT8}, #{const NVTXR_TYPE_INT16}, #{const NVTXR_TYPE_INT32}, #{const NVTXR_TYPE_INT64}
      , #{const NVTXR_TYPE_UINT8}, #{const NVTXR_TYPE_UINT16}, #{const NVTXR_TYPE_UINT32}, #{const NVTXR_TYPE_UINT64}
      , #{const NVTXR_TYPE_FLOAT}, #{const NVTXR_TYPE_DOUBLE}
      ] !! t

-- | How an event reaches nvtxr: by the plain-text call, the registered-string
-- call, or with full attributes (whose own message is ignored: @msg@ names
-- the event), as NVIDIA's own API would send it.
withEvent
  :: Message
  -> EventAttribs
  -> (CString -> IO r)
  -> (Ptr () -> IO r)
  -> (Ptr Event -> IO r)
  -> IO r
withEvent msg attrs text string full = case (msg, attrs) of
  (Literal c, EventAttribs _ Nothing Nothing PayloadNone) -> text c
  (Text m, EventAttribs _ Nothing Nothing PayloadNone) -> withMessage m text
  (Registered r, EventAttribs _ Nothing Nothing PayloadNone) -> string r
  (_, EventAttribs _ color category payload) ->
    allocaBytesAligned #{size nvtxr_event_t} #{alignment nvtxr_event_t} $ \p -> do
      fillBytes p 0 #{size nvtxr_event_t}
      -- NVTXR_EVENT_INIT: the size this binding was built with.
      #{poke nvtxr_event_t, size} p (#{size nvtxr_event_t} :: Word32)
      pokeColor p color
      #{poke nvtxr_event_t, category} p (maybe 0 unCategoryId category)
      withPayload p payload $ case msg of
        NoMessage -> full p
        Literal c -> #{poke nvtxr_event_t, message} p c >> full p
        Text m -> withMessage m $ \c -> #{poke nvtxr_event_t, message} p c >> full p
        Registered r -> #{poke nvtxr_event_t, registered_message} p r >> full p
{-# INLINE withEvent #-}

pokeColor :: Ptr Event -> Maybe Color -> IO ()
pokeColor _ Nothing = pure ()
pokeColor p (Just (Color c)) = do
  #{poke nvtxr_event_t, color_type} p (#{const NVTXR_COLOR_ARGB} :: Word32)
  #{poke nvtxr_event_t, color} p c

-- | The event's payload set for the duration of the action (a record's
-- bytes and payload data live that long).
withPayload :: Ptr Event -> Payload -> IO r -> IO r
withPayload p (PayloadRecord schema bytes) action =
  withArrayLen bytes $ \len b ->
    allocaBytesAligned #{size nvtxr_payload_data_t} #{alignment nvtxr_payload_data_t} $ \d -> do
      #{poke nvtxr_payload_data_t, schema_id} d schema
      #{poke nvtxr_payload_data_t, size} d (fromIntegral len :: CSize)
      #{poke nvtxr_payload_data_t, data} d b
      #{poke nvtxr_event_t, payloads} p d
      #{poke nvtxr_event_t, payload_count} p (1 :: CSize)
      action
withPayload p payload action = pokePayload p payload >> action

pokePayload :: Ptr Event -> Payload -> IO ()
pokePayload p payload = case payload of
  PayloadNone -> pure ()
  PayloadRecord _ _ -> pure ()
  PayloadUInt64 v -> set #{const NVTXR_PAYLOAD_U64} v
  PayloadInt64 v -> set #{const NVTXR_PAYLOAD_I64} v
  PayloadDouble v -> set #{const NVTXR_PAYLOAD_F64} v
  PayloadUInt32 v -> set #{const NVTXR_PAYLOAD_U32} v
  PayloadInt32 v -> set #{const NVTXR_PAYLOAD_I32} (fromIntegral v :: Int32)
  PayloadFloat v -> set #{const NVTXR_PAYLOAD_F32} v
  where
    set :: Storable v => Word32 -> v -> IO ()
    set t v = do
      #{poke nvtxr_event_t, payload_type} p t
      pokeByteOff p #{offset nvtxr_event_t, payload} v

markEvent :: Ptr () -> Message -> EventAttribs -> IO ()
markEvent d msg attrs =
  () <$ withEvent msg attrs (c_mark d) (c_mark_string d) (c_mark_ex d)
{-# INLINE markEvent #-}

pushEvent :: Ptr () -> Message -> EventAttribs -> IO CInt
pushEvent d msg attrs =
  fromIntegral <$> withEvent msg attrs (c_push d) (c_push_string d) (c_push_ex d)
{-# INLINE pushEvent #-}

popEvent :: Ptr () -> IO CInt
popEvent d = fromIntegral <$> c_pop d
{-# INLINE popEvent #-}

startEvent :: Ptr () -> Message -> EventAttribs -> IO Word64
startEvent d msg attrs =
  withEvent msg attrs (c_start d) (c_start_string d) (c_start_ex d)
{-# INLINE startEvent #-}

endEvent :: Ptr () -> Word64 -> IO ()
endEvent d i = () <$ c_end d i
{-# INLINE endEvent #-}
