-- |
-- Module      : NVTX
-- Description : NVTX annotations (ranges, marks, domains) for Nsight Systems
--
-- Annotate Haskell code with ranges and marks that NVIDIA's profilers
-- (Nsight Systems, Nsight Compute) show on their timelines, through nvtxr.
--
-- > import NVTX
-- >
-- > main :: IO ()
-- > main = do
-- >   nameThread "Main"
-- >   withRange "Training" $
-- >     forM_ [1 .. 3 :: Int] $ \epoch ->
-- >       withRange ("Epoch " ++ show epoch) $ do
-- >         withRangeColor "Forward" colorBlue forwardPass
-- >         withRangeColor "Backward" colorRed backwardPass
--
-- == Cost
-- With no tool attached (the normal case outside a profiler) every call
-- returns after reading one 'Bool': no allocation, no foreign call, and the
-- message 'String' is never forced. With a tool, a 'String' message is
-- encoded to UTF-8 per call; a 'RegisteredString' is passed by handle.
--
-- == Threads
-- NVTX push/pop ranges belong to an OS thread. A Haskell thread is only
-- guaranteed to stay on one OS thread if it is /bound/ ('forkOS', the main
-- thread under @-threaded@). So 'withRange' and friends use a push/pop range
-- on bound threads and a start/end range everywhere else (unbound 'forkIO'
-- threads, and every thread under the non-threaded runtime, where green
-- threads interleave on one OS thread). Either way the range closes exactly
-- once, on the right thread's timeline or as a cross-thread range.
--
-- 'nameThread' names the OS thread running the caller now (Linux @gettid@).
-- For an unbound thread that can change later; name threads from bound
-- threads (@runInBoundThread@, 'forkOS') for a stable name.
--
-- == Exceptions
-- Every @with...@ function closes its range when the body returns, throws,
-- or receives an asynchronous exception ('throwTo', 'System.Timeout.timeout'):
-- they are built on 'bracket'. Nothing in this package calls 'error', and no
-- call throws because a tool is missing.
--
-- == Portable builds
-- @cabal build -f-nvtx@ builds the same API with no native dependency;
-- every call is then a no-op and 'nvtxEnabled' is 'False'.
module NVTX
  ( -- * Push/pop ranges (scoped)
    withRange
  , withRangeColor
  , withRangeAttribs
  , withRangeString

    -- * Start/end ranges (may cross threads)
  , RangeId
  , startRange
  , startRangeAttribs
  , endRange
  , withStartEndRange
  , rangeIdValue

    -- * Marks
  , mark
  , markAttribs
  , markString

    -- * Event attributes
  , EventAttribs (..)
  , defaultAttribs
  , Payload (..)
  , CategoryId

    -- * Colors
  , Color (..)
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

    -- * Naming
  , nameThread
  , nameCategory

    -- * Domains
  , Domain
  , defaultDomain
  , withDomain
  , createDomain
  , destroyDomain
  , withDomainRange
  , domainMark
  , domainStartRange
  , domainNameCategory

    -- * Registered strings
  , RegisteredString
  , registerString

    -- * Tool
  , initialize
  , isToolAttached
  , nvtxEnabled
  ) where

import Control.Concurrent (isCurrentThreadBound)
import Control.Exception (bracket, bracket_)
import Data.Bits (shiftL, (.|.))
import Data.Word (Word64, Word8)

import NVTX.Internal.Backend
import NVTX.Internal.Types

-- | Whether this build calls nvtxr ('False' for @cabal build -f-nvtx@).
--
-- @since 0.1.0
nvtxEnabled :: Bool
nvtxEnabled = enabled

-- | Loads and attaches the tool named by @NVTX_INJECTION64_PATH@ now,
-- instead of on the first annotation, and tells the tool
-- @nvtxInitialize@. Returns whether a tool is attached. A safe foreign call:
-- loading a tool may take long.
--
-- @since 0.1.0
initialize :: IO Bool
initialize = initializeTool

-- | Whether a tool is attached (loads it on first use).
--
-- @since 0.1.0
isToolAttached :: IO Bool
isToolAttached = pure toolAttached

-- | Runs the action inside a range named by the message.
--
-- @since 0.1.0
withRange :: String -> IO a -> IO a
withRange msg = withDomainRange defaultDomain (message msg)
{-# INLINE withRange #-}

-- | 'withRange' with a color.
--
-- @since 0.1.0
withRangeColor :: String -> Color -> IO a -> IO a
withRangeColor msg color = withDomainRange defaultDomain (message msg) {attribColor = Just color}
{-# INLINE withRangeColor #-}

-- | 'withRange' with full attributes.
--
-- @since 0.1.0
withRangeAttribs :: EventAttribs -> IO a -> IO a
withRangeAttribs = withDomainRange defaultDomain
{-# INLINE withRangeAttribs #-}

-- | A range named by a registered string, in the string's domain.
--
-- @since 0.1.0
withRangeString :: RegisteredString -> IO a -> IO a
withRangeString s = withDomainRange (registeredDomain s) defaultAttribs {attribRegistered = Just s}
{-# INLINE withRangeString #-}

-- | Runs the action inside a range of the domain: push/pop on a bound thread,
-- start/end otherwise (see "NVTX#threads"). Closed on exceptions too.
--
-- @since 0.1.0
withDomainRange :: Domain -> EventAttribs -> IO a -> IO a
withDomainRange dom attrs action
  | not toolAttached = action
  | otherwise = trackedRange dom attrs action
{-# INLINE withDomainRange #-}

trackedRange :: Domain -> EventAttribs -> IO a -> IO a
trackedRange (Domain d) attrs action = do
  bound <- isCurrentThreadBound
  if bound
    then bracket_ (pushEvent d attrs) (popEvent d) action
    else bracket (startEvent d attrs) (endEvent d) (const action)
{-# NOINLINE trackedRange #-}

message :: String -> EventAttribs
message msg = defaultAttribs {attribMessage = Just msg}

-- | What 'startRange' returns with no tool: a static value, so nothing is allocated.
noRange :: RangeId
noRange = RangeId defaultDomain 0
{-# NOINLINE noRange #-}

-- | Starts a range that any thread may end with 'endRange'.
--
-- @since 0.1.0
startRange :: String -> IO RangeId
startRange msg = domainStartRange defaultDomain (message msg)
{-# INLINE startRange #-}

-- | 'startRange' with full attributes.
--
-- @since 0.1.0
startRangeAttribs :: EventAttribs -> IO RangeId
startRangeAttribs = domainStartRange defaultDomain
{-# INLINE startRangeAttribs #-}

-- | Starts a range in a domain.
--
-- @since 0.1.0
domainStartRange :: Domain -> EventAttribs -> IO RangeId
domainStartRange dom@(Domain d) attrs
  | not toolAttached = pure noRange
  | otherwise = RangeId dom <$> startEvent d attrs
{-# INLINE domainStartRange #-}

-- | Ends a range (in the domain it was started in). Ending a range twice is
-- passed to the tool, which decides; ranges started with no tool are ignored.
--
-- @since 0.1.0
endRange :: RangeId -> IO ()
endRange (RangeId (Domain d) i)
  | not toolAttached || i == 0 = pure ()
  | otherwise = endEvent d i
{-# INLINE endRange #-}

-- | The tool's 64-bit id of the range (0 when no tool is attached).
--
-- @since 0.1.0
rangeIdValue :: RangeId -> Word64
rangeIdValue (RangeId _ i) = i

-- | A start/end range around the action, closed on exceptions too. Use it
-- for ranges that overlap others.
--
-- @since 0.1.0
withStartEndRange :: String -> IO a -> IO a
withStartEndRange msg action
  | not toolAttached = action
  | otherwise = bracket (startRange msg) endRange (const action)
{-# INLINE withStartEndRange #-}

-- | An instantaneous event.
--
-- @since 0.1.0
mark :: String -> IO ()
mark msg = domainMark defaultDomain (message msg)
{-# INLINE mark #-}

-- | A mark with full attributes.
--
-- @since 0.1.0
markAttribs :: EventAttribs -> IO ()
markAttribs = domainMark defaultDomain
{-# INLINE markAttribs #-}

-- | A mark named by a registered string, in the string's domain.
--
-- @since 0.1.0
markString :: RegisteredString -> IO ()
markString s = domainMark (registeredDomain s) defaultAttribs {attribRegistered = Just s}
{-# INLINE markString #-}

-- | A mark in a domain.
--
-- @since 0.1.0
domainMark :: Domain -> EventAttribs -> IO ()
domainMark (Domain d) attrs
  | not toolAttached = pure ()
  | otherwise = markEvent d attrs
{-# INLINE domainMark #-}

-- | Names the OS thread that runs the caller now (Linux @gettid@); see
-- "NVTX#threads" for unbound threads.
--
-- @since 0.1.0
nameThread :: String -> IO ()
nameThread name
  | not toolAttached = pure ()
  | otherwise = nameCurrentThread name
{-# INLINE nameThread #-}

-- | Names a category of the default domain.
--
-- @since 0.1.0
nameCategory :: CategoryId -> String -> IO ()
nameCategory = domainNameCategory defaultDomain
{-# INLINE nameCategory #-}

-- | Names a category of a domain.
--
-- @since 0.1.0
domainNameCategory :: Domain -> CategoryId -> String -> IO ()
domainNameCategory (Domain d) cat name
  | not toolAttached = pure ()
  | otherwise = nameCategoryIn d cat name
{-# INLINE domainNameCategory #-}

-- | Creates a domain for the duration of the action and destroys it after
-- (also on exceptions). Works, as a no-op, with no tool attached.
--
-- @since 0.1.0
withDomain :: String -> (Domain -> IO a) -> IO a
withDomain name = bracket (createDomain name) destroyDomain

-- | Creates (or shares, for a name already created) a domain. Pair with
-- 'destroyDomain', or use 'withDomain'.
--
-- @since 0.1.0
createDomain :: String -> IO Domain
createDomain name = Domain <$> createDomainHandle name

-- | Releases one 'createDomain' of the domain; the last release destroys it
-- in the tool. Events sent to a destroyed domain are dropped.
--
-- @since 0.1.0
destroyDomain :: Domain -> IO ()
destroyDomain (Domain d) = destroyDomainHandle d

-- | Registers a string in a domain once; registering the same text again
-- returns the same string without calling the tool.
--
-- @since 0.1.0
registerString :: Domain -> String -> IO RegisteredString
registerString dom@(Domain d) text = RegisteredString dom <$> registerStringHandle d text

-- | An opaque color from red, green and blue.
--
-- @since 0.1.0
rgb :: Word8 -> Word8 -> Word8 -> Color
rgb = argb 0xFF

-- | A color from alpha, red, green and blue.
--
-- @since 0.1.0
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
