{-# LANGUAGE ScopedTypeVariables #-}

-- |
-- Counters and record payloads, NVTX's counters and payload extensions:
-- a domain's named series of values, and records a tool shows field by
-- field. Re-exported by "NVTX".
module NVTX.Internal.Records
  ( Counter
  , CounterValue
  , counter
  , sample
  , PayloadFields (..)
  , Field (..)
  , FieldType (..)
  , Schema
  , registerSchema
  , recordPayload
  ) where

import Data.Int (Int64)
import Data.Word (Word64, Word8)
import Foreign.Marshal.Array (peekArray)
import Foreign.Marshal.Utils (with)
import Foreign.Ptr (Ptr, castPtr)
import Foreign.Storable (Storable (..))

import NVTX.Internal.Backend
import NVTX.Types

-- | A counter of a domain: a named series of values (@Int64@ or @Double@)
-- the tool plots over time, through NVTX's counters extension. Made by
-- 'counter'; with no tool (or the portable build) sampling does nothing.
--
-- @since 0.1.0
data Counter a = Counter !Domain !Word64

-- | A counter's value type: @Int64@ or @Double@.
--
-- @since 0.1.0
class CounterValue a where
  counterIsDouble :: proxy a -> Bool
  sampleValue :: Ptr () -> Word64 -> a -> IO ()

instance CounterValue Int64 where
  counterIsDouble _ = False
  sampleValue = sampleCounterInt64

instance CounterValue Double where
  counterIsDouble _ = True
  sampleValue = sampleCounterDouble

-- | Registers counter @name@ in a domain:
--
-- > loss <- counter defaultDomain "loss" :: IO (Counter Double)
-- > sample loss 0.25
--
-- @since 0.1.0
counter :: forall a. CounterValue a => Domain -> String -> IO (Counter a)
counter dom@(Domain d) name
  | not toolAttached = pure (Counter dom 0)
  | otherwise = Counter dom <$> registerCounter d name (counterIsDouble ([] :: [a]))

-- | A record a tool shows field by field next to an event (NVTX's payload
-- extension): its fields' names, types and byte offsets in its 'Storable'
-- layout.
--
-- > data Send = Send Word64 Int32
-- > instance Storable Send where
-- >   sizeOf _ = 16
-- >   alignment _ = 8
-- >   peek p = Send <$> peekByteOff p 0 <*> peekByteOff p 8
-- >   poke p (Send b r) = pokeByteOff p 0 b >> pokeByteOff p 8 r
-- > instance PayloadFields Send where
-- >   payloadFields _ = [Field "bytes" FieldWord64 0, Field "peer" FieldInt32 8]
--
-- @since 0.1.0
class Storable a => PayloadFields a where
  payloadFields :: proxy a -> [Field]

-- | One field of a record: its name, type and byte offset.
--
-- @since 0.1.0
data Field = Field
  { fieldName :: String
  , fieldType :: FieldType
  , fieldOffset :: Int
  }
  deriving (Eq, Show)

-- | A field's type.
--
-- @since 0.1.0
data FieldType
  = FieldInt8 | FieldInt16 | FieldInt32 | FieldInt64
  | FieldWord8 | FieldWord16 | FieldWord32 | FieldWord64
  | FieldFloat | FieldDouble
  deriving (Eq, Show, Enum, Bounded)

-- | A record type's schema, registered in a domain by 'registerSchema'
-- (id 0 with no tool or the portable build: its payloads are left out).
--
-- @since 0.1.0
newtype Schema a = Schema Word64

-- | Registers record type @a@'s schema, named @name@, in a domain:
--
-- > schema <- registerSchema comm "send" :: IO (Schema Send)
-- > payload <- recordPayload schema (Send 1048576 3)
-- > domainMark comm defaultAttribs {attribMessage = Just "send", attribPayload = payload}
--
-- @since 0.1.0
registerSchema :: forall a. PayloadFields a => Domain -> String -> IO (Schema a)
registerSchema (Domain d) name
  | not toolAttached = pure (Schema 0)
  | otherwise =
      Schema
        <$> registerSchemaIn d name (sizeOf (undefined :: a))
              [(fieldName f, fromEnum (fieldType f), fieldOffset f) | f <- payloadFields ([] :: [a])]

-- | A record as an event's payload ('PayloadNone' for schema 0).
--
-- @since 0.1.0
recordPayload :: forall a. PayloadFields a => Schema a -> a -> IO Payload
recordPayload (Schema 0) _ = pure PayloadNone
recordPayload (Schema s) value =
  with value $ \p -> PayloadRecord s <$> peekArray (sizeOf value) (castPtr p :: Ptr Word8)

-- | Records a value of the counter now.
--
-- @since 0.1.0
sample :: CounterValue a => Counter a -> a -> IO ()
sample (Counter (Domain d) c) value
  | c == 0 = pure ()
  | otherwise = sampleValue d c value
{-# INLINE sample #-}
