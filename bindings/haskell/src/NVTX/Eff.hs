-- | nvtx-hs's effect-handle API: NVTX in any 'MonadIO' (Bluefin, ReaderT
-- stacks, ...), through a handle.
--
-- > import NVTX.Eff
-- >
-- > main :: IO ()
-- > main = runNvtxIO $ \nvtx ->
-- >   withRangeE nvtx "MyOperation" $ markE nvtx "inside"
--
-- == Exceptions
-- Over plain 'MonadIO' nothing can run when the body throws, so 'withRangeE'
-- and 'withRangeColorE' cannot close their range then (nvtx-hs has the same
-- types and the same limit). They do what the types allow: their ranges are
-- start/end ranges, so a range an exception leaves open never unbalances
-- the thread's push/pop nesting (later ranges stay right), and they are
-- right when the body moves between OS threads. In 'IO', prefer "NVTX"'s
-- 'NVTX.withRange', which closes its range on exceptions too.
module NVTX.Eff
  ( -- * The handle
    NvtxE
  , withNvtxE
  , runNvtxIO

    -- * Ranges
  , withRangeE
  , withRangeColorE
  , pushRangeE
  , popRangeE

    -- * Marks
  , markE

    -- * Naming
  , nameThreadE
  , nameCategoryE

    -- * Re-exports
  , Color
  , rgb
  , argb
  , CategoryId (..)
  , colorRed
  , colorGreen
  , colorBlue
  , colorYellow
  ) where

import Control.Monad.IO.Class (MonadIO (..))
import Foreign.C.Types (CInt)

import qualified NVTX
import NVTX.Types

-- | The NVTX handle: proof that the code may annotate.
data NvtxE = NvtxE

-- | Runs the code with a handle.
withNvtxE :: MonadIO m => (NvtxE -> m a) -> m a
withNvtxE f = f NvtxE

-- | 'withNvtxE' in 'IO'.
runNvtxIO :: (NvtxE -> IO a) -> IO a
runNvtxIO = withNvtxE

-- | The body inside a range (see "NVTX.Eff#exceptions").
withRangeE :: MonadIO m => NvtxE -> String -> m a -> m a
withRangeE _ label = startEnd (NVTX.startRange label)

-- | 'withRangeE' with a color.
withRangeColorE :: MonadIO m => NvtxE -> String -> Color -> m a -> m a
withRangeColorE _ label color =
  startEnd (NVTX.startRangeAttribs defaultAttribs {attribMessage = Just label, attribColor = Just color})

startEnd :: MonadIO m => IO NVTX.RangeId -> m a -> m a
startEnd start body = do
  range <- liftIO start
  result <- body
  liftIO (NVTX.endRange range)
  pure result

-- | 'NVTX.pushRange'.
pushRangeE :: MonadIO m => NvtxE -> String -> m CInt
pushRangeE _ = liftIO . NVTX.pushRange

-- | 'NVTX.popRange'.
popRangeE :: MonadIO m => NvtxE -> m CInt
popRangeE _ = liftIO NVTX.popRange

-- | 'NVTX.mark'.
markE :: MonadIO m => NvtxE -> String -> m ()
markE _ = liftIO . NVTX.mark

-- | 'NVTX.nameThread'.
nameThreadE :: MonadIO m => NvtxE -> String -> m ()
nameThreadE _ = liftIO . NVTX.nameThread

-- | 'NVTX.nameCategory'.
nameCategoryE :: MonadIO m => NvtxE -> CategoryId -> String -> m ()
nameCategoryE _ category = liftIO . NVTX.nameCategory category
