-- | What names an event, as the API hands it to the backend.
module NVTX.Internal.Message
  ( Message (..)
  , messageOf
  ) where

import Foreign.C.String (CString)
import Foreign.Ptr (Ptr)

import NVTX.Types (EventAttribs (..))

data Message
  = NoMessage
  | Text String
    -- ^ Encoded to UTF-8 by the backend (once: it keeps the encoding).
  | Literal !CString
    -- ^ A string literal of the program: GHC's static, NUL-terminated
    -- ASCII bytes, passed as they are (see the rewrite rules in "NVTX").
  | Registered !(Ptr ())
    -- ^ A registered string's handle.

-- | The message of the attributes.
messageOf :: EventAttribs -> Message
messageOf attrs = maybe NoMessage Text (attribMessage attrs)
{-# INLINE messageOf #-}
