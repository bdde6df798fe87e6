{-# LANGUAGE MagicHash #-}
{-# LANGUAGE ScopedTypeVariables #-}

-- |
-- Module      : NVTX
-- Description : NVTX annotations (ranges, marks, domains) for Nsight Systems
--
-- Annotate Haskell code with ranges and marks that NVIDIA's profilers
-- (Nsight Systems, Nsight Compute) show on their timelines, through nvtxr.
--
-- > import Control.Monad (forM_)
-- > import NVTX
-- >
-- > forwardPass, backwardPass :: IO ()
-- > forwardPass = pure ()
-- > backwardPass = pure ()
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
-- encoded to UTF-8 the first time it is seen and kept (the first 4096
-- distinct messages; later ones are encoded per call, so memory stays
-- bounded); a 'RegisteredString' is passed by handle.
--
-- == nvtx-hs
-- The modules ("NVTX", "NVTX.Types", "NVTX.Safe", "NVTX.Eff") and names are
-- nvtx-hs's, so code written for nvtx-hs compiles unchanged. nvtx-hs's
-- @NVTX.Raw@ (the C functions under NVIDIA's names) is not offered: it
-- would hand out raw pointers to NVIDIA's structs, which the portable build
-- cannot provide and nvtxr's checks would not see.
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
-- they mask asynchronous exceptions around the range's bookkeeping, as 'bracket' does. Nothing in this package calls 'error', and no
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
  , withRangeStringAttribs
  , pushRange
  , popRange

    -- * Start/end ranges (may cross threads)
  , startRange
  , startRangeAttribs
  , endRange
  , withStartEndRange
  , rangeIdValue

    -- * Marks
  , mark
  , markAttribs
  , markString
  , markStringAttribs

    -- * Naming
  , nameThread
  , nameCategory

    -- * Domains
  , withDomain
  , createDomain
  , destroyDomain
  , withDomainRange
  , domainRangePush
  , domainRangePop
  , domainMark
  , domainStartRange
  , domainNameCategory

    -- * Registered strings
  , registerString

    -- * Counters
  , Counter
  , CounterValue
  , counter
  , sample

    -- * Record payloads
  , PayloadFields (..)
  , Field (..)
  , FieldType (..)
  , Schema
  , registerSchema
  , recordPayload

    -- * Tool
  , initialize
  , isToolAttached
  , nvtxEnabled

    -- * Types: colors, payloads, categories, attributes, handles
  , module NVTX.Types
  ) where

import Control.Concurrent (isCurrentThreadBound)
import Control.Exception (bracket, mask, onException)
import Data.Maybe (fromMaybe)
import Data.Word (Word64)
import Foreign.C.String (CString)
import Foreign.C.Types (CInt)
import Foreign.Ptr (nullPtr)
import GHC.Ptr (Ptr (..))
import GHC.Base (build, unpackCString#, unpackFoldrCString#)

import NVTX.Internal.Backend
import NVTX.Internal.Message
import NVTX.Internal.Records
import NVTX.Types

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
{-# INLINE [0] withRange #-}

-- | 'withRange' with a color.
--
-- @since 0.1.0
withRangeColor :: String -> Color -> IO a -> IO a
withRangeColor msg color = withDomainRange defaultDomain (message msg) {attribColor = Just color}
{-# INLINE [0] withRangeColor #-}

-- String literals: GHC compiles @withRange \"Forward\"@ to a call on
-- @unpackCString# \"Forward\"#@, static NUL-terminated ASCII bytes (literals
-- with other characters use @unpackCStringUtf8#@ and are not rewritten).
-- These rules (when optimizing) pass those bytes to nvtxr as they are: no
-- 'String' is built, compared or encoded.
--
-- GHC's own rules first turn the literal into @build (unpackFoldrCString#
-- a)@ (until phase 1), then back (from phase 1): each rule matches both forms.
{-# RULES
"NVTX withRange/literal" forall a. withRange (unpackCString# a) = literalRange (Ptr a) Nothing
"NVTX withRange/literal build" forall a. withRange (build (unpackFoldrCString# a)) = literalRange (Ptr a) Nothing
"NVTX withRangeColor/literal" forall a c. withRangeColor (unpackCString# a) c = literalRange (Ptr a) (Just c)
"NVTX withRangeColor/literal build" forall a c. withRangeColor (build (unpackFoldrCString# a)) c = literalRange (Ptr a) (Just c)
"NVTX mark/literal" forall a. mark (unpackCString# a) = literalMark (Ptr a)
"NVTX mark/literal build" forall a. mark (build (unpackFoldrCString# a)) = literalMark (Ptr a)
"NVTX pushRange/literal" forall a. pushRange (unpackCString# a) = literalPush (Ptr a)
"NVTX pushRange/literal build" forall a. pushRange (build (unpackFoldrCString# a)) = literalPush (Ptr a)
"NVTX startRange/literal" forall a. startRange (unpackCString# a) = literalStart (Ptr a)
"NVTX startRange/literal build" forall a. startRange (build (unpackFoldrCString# a)) = literalStart (Ptr a)
  #-}

literalRange :: CString -> Maybe Color -> IO a -> IO a
literalRange c color action
  | not toolAttached = action
  | otherwise = trackedRange nullPtr (Literal c) (maybe defaultAttribs colored color) action
  where
    colored k = defaultAttribs {attribColor = Just k}
{-# INLINE literalRange #-}

literalMark :: CString -> IO ()
literalMark c
  | not toolAttached = pure ()
  | otherwise = markEvent nullPtr (Literal c) defaultAttribs
{-# INLINE literalMark #-}

literalPush :: CString -> IO CInt
literalPush c
  | not toolAttached = pure noPushPopTracking
  | otherwise = pushEvent nullPtr (Literal c) defaultAttribs
{-# INLINE literalPush #-}

literalStart :: CString -> IO RangeId
literalStart c
  | not toolAttached = pure noRange
  | otherwise = RangeId defaultDomain <$> startEvent nullPtr (Literal c) defaultAttribs
{-# INLINE literalStart #-}

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
withRangeString s = withRangeStringAttribs s defaultAttribs
{-# INLINE withRangeString #-}

-- | A range named by a registered string, with attributes (their message is
-- ignored), in the string's domain.
--
-- @since 0.1.0
withRangeStringAttribs :: RegisteredString -> EventAttribs -> IO a -> IO a
withRangeStringAttribs (RegisteredString (Domain d) s) attrs action
  | not toolAttached = action
  | otherwise = trackedRange d (Registered s) attrs action
{-# INLINE withRangeStringAttribs #-}

-- | Opens a push/pop range in the default domain; returns the tool's
-- nesting depth (-2 when no tool tracks it). Pair with 'popRange' on the
-- same OS thread: use it on bound threads ('forkOS', the main thread under
-- @-threaded@), or prefer 'withRange', which is exception-safe and right on
-- every thread.
--
-- @since 0.1.0
pushRange :: String -> IO CInt
pushRange msg = domainRangePush defaultDomain (message msg)
{-# INLINE [0] pushRange #-}

-- | Closes the innermost push/pop range of the default domain on this OS
-- thread; returns the tool's depth, or -2.
--
-- @since 0.1.0
popRange :: IO CInt
popRange = domainRangePop defaultDomain
{-# INLINE popRange #-}

-- | 'pushRange' in a domain, with attributes.
--
-- @since 0.1.0
domainRangePush :: Domain -> EventAttribs -> IO CInt
domainRangePush (Domain d) attrs
  | not toolAttached = pure noPushPopTracking
  | otherwise = pushEvent d (messageOf attrs) attrs
{-# INLINE domainRangePush #-}

-- | 'popRange' in a domain.
--
-- @since 0.1.0
domainRangePop :: Domain -> IO CInt
domainRangePop (Domain d)
  | not toolAttached = pure noPushPopTracking
  | otherwise = popEvent d
{-# INLINE domainRangePop #-}

-- | What push and pop return when no tool tracks nesting.
noPushPopTracking :: CInt
noPushPopTracking = -2

-- | Runs the action inside a range of the domain: push/pop on a bound thread,
-- start/end otherwise (see "NVTX#threads"). Closed on exceptions too.
--
-- @since 0.1.0
withDomainRange :: Domain -> EventAttribs -> IO a -> IO a
withDomainRange (Domain d) attrs action
  | not toolAttached = action
  | otherwise = trackedRange d (messageOf attrs) attrs action
{-# INLINE withDomainRange #-}

-- | A range in domain @d@ named by @msg@: push/pop on a bound thread,
-- start/end otherwise; closed on exceptions too.
trackedRange :: Ptr () -> Message -> EventAttribs -> IO a -> IO a
trackedRange d msg attrs action = do
  bound <- isCurrentThreadBound
  if bound
    then mask $ \restore -> do
      _ <- pushEvent d msg attrs
      r <- restore action `onException` popEvent d
      _ <- popEvent d
      pure r
    else bracket (startEvent d msg attrs) (endEvent d) (const action)
{-# INLINE trackedRange #-}

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
{-# INLINE [0] startRange #-}

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
  | otherwise = RangeId dom <$> startEvent d (messageOf attrs) attrs
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
{-# INLINE [0] mark #-}

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
markString s = markStringAttribs s defaultAttribs
{-# INLINE markString #-}

-- | A mark named by a registered string, with attributes (their message is
-- ignored), in the string's domain.
--
-- @since 0.1.0
markStringAttribs :: RegisteredString -> EventAttribs -> IO ()
markStringAttribs (RegisteredString (Domain d) s) attrs
  | not toolAttached = pure ()
  | otherwise = markEvent d (Registered s) attrs
{-# INLINE markStringAttribs #-}

-- | A mark in a domain.
--
-- @since 0.1.0
domainMark :: Domain -> EventAttribs -> IO ()
domainMark (Domain d) attrs
  | not toolAttached = pure ()
  | otherwise = markEvent d (messageOf attrs) attrs
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
  | otherwise = nameCategoryIn d (unCategoryId cat) name
{-# INLINE domainNameCategory #-}

-- | Creates a domain for the duration of the action and destroys it after
-- (also on exceptions). Works, as a no-op, with no tool attached.
--
-- @since 0.1.0
withDomain :: String -> (Domain -> IO a) -> IO a
withDomain name action =
  bracket (createDomain name) (mapM_ destroyDomain) (action . fromMaybe defaultDomain)

-- | Creates (or shares, for a name already created) a domain. Pair with
-- 'destroyDomain', or use 'withDomain'. 'Nothing' in the portable build
-- (and if nvtxr refuses the name: a NUL character, or a call from a signal
-- handler); with nvtxr a domain is made whether or not a tool is attached.
--
-- @since 0.1.0
createDomain :: String -> IO (Maybe Domain)
createDomain name = do
  handle <- createDomainHandle name
  pure (if handle == nullPtr then Nothing else Just (Domain handle))

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
