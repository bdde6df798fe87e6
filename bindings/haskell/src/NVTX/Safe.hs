-- | The same API as "NVTX", under the module name nvtx-hs users import for
-- portable code: @import NVTX.Safe@ compiles unchanged. Every build of this
-- package is safe in that sense: with @-f-nvtx@ or with no tool attached,
-- every call is a no-op.
module NVTX.Safe
  ( module NVTX
  ) where

import NVTX
