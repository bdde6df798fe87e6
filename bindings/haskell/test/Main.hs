-- | Tests of the NVTX package. Recorded tests run this executable again as a
-- child process with nvtxr's event-log tool attached (NVTXR_EVENT_LOG names
-- it; tests/run-all.sh sets it) and check what the tool received. In the
-- portable build (-f-nvtx) the same children must record nothing.
module Main (main) where

import Control.Concurrent
import Control.Exception
import Control.Monad
import Control.Monad.IO.Class (liftIO)
import qualified Data.Map.Strict as Map
import Data.Int (Int32, Int64)
import Data.Word (Word64)
import Foreign.Storable (Storable (..))
import Data.List (isInfixOf, isPrefixOf, sort)
import Data.Maybe (mapMaybe)
import System.Directory (getTemporaryDirectory, removeFile)
import System.Environment (getEnvironment, getExecutablePath, lookupEnv)
import System.Exit (ExitCode (..), exitSuccess)
import System.Process
import System.Mem (getAllocationCounter)
import System.Timeout (timeout)
import Test.Tasty
import Test.Tasty.HUnit
import Text.Read (readMaybe)

import NVTX
import NVTX.Eff

main :: IO ()
main = do
  scenario <- lookupEnv "NVTXR_HS_SCENARIO"
  case scenario >>= flip lookup scenarios of
    Just run -> run >> exitSuccess
    Nothing -> do
      eventLog <- lookupEnv "NVTXR_EVENT_LOG"
      defaultMain (tests eventLog)

scenarios :: [(String, IO ())]
scenarios =
  [ ("sequence", sequenceScenario)
  , ("threads", threadsScenario)
  , ("exceptions", exceptionsScenario)
  , ("eff", effScenario)
  , ("cache", cacheScenario)
  , ("counters", countersScenario)
  , ("payloads", payloadsScenario)
  ]

runtime :: String
runtime = if rtsSupportsBoundThreads then "threaded" else "non-threaded"

tests :: Maybe FilePath -> TestTree
tests eventLog =
  testGroup ("NVTX (" ++ runtime ++ " runtime, NVTX enabled: " ++ show nvtxEnabled ++ ")")
    [ testCase "no tool: every call is a no-op that returns its result" noToolTest
    , recorded "exact event sequence" "sequence" checkSequence
    , recorded "many threads with nested ranges: every range closed exactly once" "threads" checkThreads
    , recorded "exceptions (sync, timeout, killThread) close the range" "exceptions" checkExceptions
    , recorded "the quick-start example runs" "nvtxr-quickstart" checkQuickStart
    , recorded "the training example runs" "nvtxr-training" checkTraining
    , recorded "the NVTX.Safe example runs" "nvtxr-portable" checkPortable
    , recorded "a program written against nvtx-hs's API runs unchanged" "nvtxr-nvtx-hs-compat" checkCompat
    , recorded "NVTX.Eff: ranges, marks and names through the handle" "eff" checkEff
    , recorded "a String message is encoded once, not per call" "cache" checkCache
    , recorded "counters: registered in their domain, sampled with their type" "counters" checkCounters
    , recorded "record payloads: a schema registered, the record sent with the event" "payloads" checkPayloads
    , testCase "record payloads: nvtxr record shows each field" payloadsRecorded
    ]
  where
    recorded name scenario check = testCase name $ case eventLog of
      Nothing
        | nvtxEnabled -> assertFailure "NVTXR_EVENT_LOG is not set: run through tests/run-all.sh"
        | otherwise -> pure ()
      Just lib -> do
        events <- runRecorded lib scenario
        if nvtxEnabled
          then do
            take 1 events @?= [initOk]
            check (drop 1 events)
          else events @?= [] -- the portable build never loads a tool

initOk :: String
initOk = "init callbacks=16 versioninfo=24 version=3 sizes=16,9,15,7,16,7 tables=ok unknown_module=0 other_etids=null"

-- | Runs this executable with the scenario (or, for a name starting with
-- "nvtxr-", that example program) with the event-log tool attached.
runRecorded :: FilePath -> String -> IO [String]
runRecorded lib scenario = do
  self <- if "nvtxr-" `isPrefixOf` scenario then pure scenario else getExecutablePath
  tmp <- getTemporaryDirectory
  let out = tmp ++ "/nvtxr-hs-" ++ scenario ++ "-" ++ runtime ++ ".log"
  _ <- try (removeFile out) :: IO (Either IOException ())
  let env' =
        [ ("NVTXR_HS_SCENARIO", scenario)
        , ("NVTX_INJECTION64_PATH", lib)
        , ("NVTXR_EVENT_LOG_OUT", out)
        ]
  baseEnv <- filter ((`notElem` map fst env') . fst) <$> getEnvironment
  (code, stdout', stderr') <- readCreateProcessWithExitCode (proc self []) {env = Just (env' ++ baseEnv)} ""
  assertEqual ("child failed: " ++ stdout' ++ stderr') ExitSuccess code
  contents <- either (const "") id <$> (try (readFile out) :: IO (Either IOException String))
  _ <- length contents `seq` (try (removeFile out) :: IO (Either IOException ()))
  pure (lines contents)

-- Scenarios -------------------------------------------------------------------

sequenceScenario :: IO ()
sequenceScenario = do
  nameThread "hs main"
  nameCategory 3 "io"
  r <- withRange "outer" $ withRangeColor "inner" colorGreen (pure (42 :: Int))
  when (r /= 42) $ throwIO (userError "withRange lost the result")
  mark "a mark"
  markAttribs defaultAttribs
    { attribMessage = Just "attrs", attribColor = Just (argb 0x80 1 2 3)
    , attribCategory = Just 3, attribPayload = PayloadInt64 (-5) }
  forM_ payloads $ \p -> markAttribs defaultAttribs {attribMessage = Just "p", attribPayload = p}
  withDomain "hs domain" $ \d -> do
    domainNameCategory d 1 "compute"
    s <- registerString d "step"
    s' <- registerString d "step"
    when (s /= s') $ throwIO (userError "registering twice gave two strings")
    withRangeString s (markString s)
    withRangeStringAttribs s defaultAttribs {attribPayload = PayloadDouble 0.5} (pure ())
    domainMark d defaultAttribs {attribMessage = Just "unicode \955"}
  rid <- startRange "manual"
  endRange rid
  withStartEndRange "start-end" (pure ())

payloads :: [Payload]
payloads = [PayloadUInt64 1, PayloadInt64 (-2), PayloadDouble 2.5, PayloadUInt32 4, PayloadInt32 (-5), PayloadFloat 0.25]

threadsScenario :: IO ()
threadsScenario = do
  done <- newEmptyMVar
  let unbound = 40
      bound = if rtsSupportsBoundThreads then 4 else 0
  replicateM_ unbound $ forkIO $ do
    replicateM_ 10 $ withRange "t1" $ withRange "t2" $ withRange "t3" yield
    putMVar done ()
  replicateM_ bound $ forkOS $ do
    replicateM_ 10 $ withRange "b1" $ withRange "b2" yield
    putMVar done ()
  replicateM_ (unbound + bound) (takeMVar done)

exceptionsScenario :: IO ()
exceptionsScenario = do
  _ <- try (withRange "throws" (throwIO (userError "boom"))) :: IO (Either IOException ())
  _ <- timeout 10000 (withRange "timed out" (threadDelay 5000000))
  finished <- newEmptyMVar
  t <- forkFinally (withRange "killed" (threadDelay 5000000)) (\_ -> putMVar finished ())
  threadDelay 20000
  killThread t
  takeMVar finished
  _ <- try (withStartEndRange "start-end throws" (throwIO (userError "boom"))) :: IO (Either IOException ())
  _ <- try (withDomain "exc domain" $ \d -> withDomainRange d defaultAttribs {attribMessage = Just "domain throws"} (throwIO (userError "boom"))) :: IO (Either IOException ())
  pure ()

effScenario :: IO ()
effScenario = runNvtxIO $ \nvtx -> do
  nameThreadE nvtx "eff"
  nameCategoryE nvtx (CategoryId 4) "effects"
  r <- withRangeE nvtx "eff range" $ withRangeColorE nvtx "eff colored" colorYellow $ do
    markE nvtx "eff mark"
    pure (3 :: Int)
  when (r /= 3) $ throwIO (userError "withRangeE lost the result")
  -- A range an exception leaves open over MonadIO is a start/end range: it
  -- does not unbalance the push/pop ranges after it.
  _ <- try (withRangeE nvtx "eff throws" (liftIO (throwIO (userError "boom")))) :: IO (Either IOException ())
  depth <- pushRangeE nvtx "eff push"
  depth' <- popRangeE nvtx
  when (depth /= depth') $ throwIO (userError "push and pop disagree")

countersScenario :: IO ()
countersScenario = withDomain "train" $ \d -> do
  loss <- counter d "loss" :: IO (Counter Double)
  steps <- counter d "steps" :: IO (Counter Int64)
  sample loss 0.25
  sample steps (-3)

-- | A record with a 'Storable' layout: bytes at 0, peer at 8, ratio at 16.
data Send = Send Word64 Int32 Double

instance Storable Send where
  sizeOf _ = 24
  alignment _ = 8
  peek p = Send <$> peekByteOff p 0 <*> peekByteOff p 8 <*> peekByteOff p 16
  poke p (Send b r x) = pokeByteOff p 0 b >> pokeByteOff p 8 r >> pokeByteOff p 16 x

instance PayloadFields Send where
  payloadFields _ = [Field "bytes" FieldWord64 0, Field "peer" FieldInt32 8, Field "ratio" FieldDouble 16]

payloadsScenario :: IO ()
payloadsScenario = withDomain "comm" $ \d -> do
  schema <- registerSchema d "send" :: IO (Schema Send)
  payload <- recordPayload schema (Send 1048576 3 0.5)
  domainMark d defaultAttribs {attribMessage = Just "send", attribPayload = payload}

-- Checks ----------------------------------------------------------------------

noToolTest :: IO ()
noToolTest = do
  attached <- isToolAttached
  attached @?= False
  r <- withRange "x" (pure 'r')
  r @?= 'r'
  rid <- startRange "x"
  rangeIdValue rid @?= 0
  endRange rid
  v <- withDomain "no tool domain" $ \d -> do
    s <- registerString d "s"
    withRangeString s (markString s)
    domainMark d defaultAttribs
    withDomainRange d defaultAttribs (pure (7 :: Int))
  v @?= 7
  e <- try (withRange "x" (throwIO (userError "propagates"))) :: IO (Either IOException ())
  assertBool "exceptions propagate" (either (const True) (const False) e)
  nameThread "t" >> nameCategory 1 "c" >> mark "m"
  ok <- initialize
  ok @?= False

-- | The events of 'sequenceScenario'. Bound threads (the main thread under
-- -threaded) use push/pop; otherwise every scoped range is start/end.
checkSequence :: [String] -> Assertion
checkSequence events = events @?= expected
  where
    d = "domain=\"hs domain\""
    pushPop = rtsSupportsBoundThreads
    expected =
      [ "NameOsThreadA tid=self \"hs main\""
      , "NameCategoryA 3 \"io\""
      ]
        ++ ( if pushPop
              then ["RangePushA \"outer\" -> 0", "RangePushEx {msg=\"inner\" color=0xff00ff00} -> 1", "RangePop -> 1", "RangePop -> 0"]
              else ["RangeStartA \"outer\" -> 1", "RangeStartEx {msg=\"inner\" color=0xff00ff00} -> 2", "RangeEnd 2", "RangeEnd 1"]
           )
        ++ [ "MarkA \"a mark\""
           , "MarkEx {msg=\"attrs\" color=0x80010203 category=3 payload=i64:-5}"
           , "MarkEx {msg=\"p\" payload=u64:1}"
           , "MarkEx {msg=\"p\" payload=i64:-2}"
           , "MarkEx {msg=\"p\" payload=f64:2.5}"
           , "MarkEx {msg=\"p\" payload=u32:4}"
           , "MarkEx {msg=\"p\" payload=i32:-5}"
           , "MarkEx {msg=\"p\" payload=f32:0.25}"
           , "DomainCreateA \"hs domain\""
           , "DomainNameCategoryA " ++ d ++ " 1 \"compute\""
           , "DomainRegisterStringA " ++ d ++ " \"step\""
           ]
        ++ ( if pushPop
              then
                [ "DomainRangePushEx " ++ d ++ " {msg=reg:\"step\"} -> 0"
                , "DomainMarkEx " ++ d ++ " {msg=reg:\"step\"}"
                , "DomainRangePop " ++ d ++ " -> 0"
                , "DomainRangePushEx " ++ d ++ " {msg=reg:\"step\" payload=f64:0.5} -> 0"
                , "DomainRangePop " ++ d ++ " -> 0"
                ]
              else
                [ "DomainRangeStartEx " ++ d ++ " {msg=reg:\"step\"} -> 3"
                , "DomainMarkEx " ++ d ++ " {msg=reg:\"step\"}"
                , "DomainRangeEnd " ++ d ++ " 3"
                , "DomainRangeStartEx " ++ d ++ " {msg=reg:\"step\" payload=f64:0.5} -> 4"
                , "DomainRangeEnd " ++ d ++ " 4"
                ]
           )
        ++ [ "DomainMarkEx " ++ d ++ " {msg=\"unicode \955\"}"
           , "DomainDestroy " ++ d
           ]
        ++ ( let n = if pushPop then 1 else 5 :: Int
              in [ "RangeStartA \"manual\" -> " ++ show n, "RangeEnd " ++ show n
                 , "RangeStartA \"start-end\" -> " ++ show (n + 1), "RangeEnd " ++ show (n + 1) ]
           )

-- | Every start/end range ended exactly once, every push popped on its own
-- thread (the event-log tool tracks depth per OS thread: a pop on the wrong thread
-- would return -1), and the expected number of each.
balanced :: [String] -> Map.Map String Int -> Assertion
balanced events expectedOpens = do
  let starts = mapMaybe startOf events
      ends = sort (mapMaybe endOf events)
      pushes = mapMaybe pushOf events
      pops = filter ("RangePop" `isInfixOf`) events
  assertEqual "every started range ends exactly once" (sort (map snd starts)) ends
  assertEqual "pushes and pops balance" (length pushes) (length pops)
  assertBool "no pop without a push on its thread" (not (any ("-> -1" `isInfixOf`) pops))
  let opens = Map.fromListWith (+) [(l, 1) | l <- map fst starts ++ pushes]
  opens @?= expectedOpens
  where
    startOf l
      | "RangeStart" `isInfixOf` l = (,) (label l) <$> readMaybe (last (words l))
      | otherwise = Nothing
    endOf l
      | "RangeEnd" `isInfixOf` l = readMaybe (last (words l)) :: Maybe Int
      | otherwise = Nothing
    pushOf l
      | "RangePush" `isInfixOf` l = Just (label l)
      | otherwise = Nothing
    -- The message: after msg=" (or msg=reg:") when present, else the first quoted text.
    label l = case breakOn "msg=" l of
      Just rest -> quoted rest
      Nothing -> quoted l
    quoted = takeWhile (/= '"') . drop 1 . dropWhile (/= '"')
    breakOn pat str
      | pat `isPrefixOf` str = Just (drop (length pat) str)
      | null str = Nothing
      | otherwise = breakOn pat (drop 1 str)

checkThreads :: [String] -> Assertion
checkThreads events =
  balanced events $
    Map.fromList ([(t, 400) | t <- ["t1", "t2", "t3"]] ++ [(b, 40) | rtsSupportsBoundThreads, b <- ["b1", "b2"]])

-- | The examples run on their main thread: bound (push/pop) under -threaded.
checkQuickStart :: [String] -> Assertion
checkQuickStart events = do
  take 2 events @?= ["NameOsThreadA tid=self \"Main\"", "RangePushA \"Training\" -> 0"]
  length (filter ("RangePushA" `isPrefixOf`) events) @?= 1 + 3 * 4
  balanced events $
    Map.fromList ([("Training", 1), ("Forward", 3), ("Backward", 3), ("Update", 3)] ++ [("Epoch " ++ show e, 1) | e <- [1 .. 3 :: Int]])

checkTraining :: [String] -> Assertion
checkTraining events = do
  take 4 events
    @?= [ "NameOsThreadA tid=self \"MainTrainer\""
        , "NameCategoryA 1 \"Training\""
        , "NameCategoryA 2 \"Validation\""
        , "MarkA \"Training Start\""
        ]
  assertBool "colored step" ("RangePushEx {msg=\"Step 1\" color=0xff00ff00} -> 1" `elem` events)
  assertBool "colored forward" ("RangePushEx {msg=\"Forward\" color=0xff0000ff} -> 2" `elem` events)
  last events @?= "MarkA \"Training Complete\""
  balanced events $
    Map.fromList ([("Epoch", 1), ("Forward", 3), ("Loss", 3), ("Backward", 3), ("Update", 3)] ++ [("Step " ++ show i, 1) | i <- [1 .. 3 :: Int]])

checkPortable :: [String] -> Assertion
checkPortable events = events @?= ["RangePushA \"MyOperation\" -> 0", "MarkA \"computed\"", "RangePop -> 0"]

checkCounters :: [String] -> Assertion
checkCounters events =
  filter ("Counter" `isPrefixOf`) events
    @?= [ "CounterRegister domain=\"train\" name=\"loss\" schema=44 description=NULL scope=0 semantics=[]"
        , "CounterRegister domain=\"train\" name=\"steps\" schema=17 description=NULL scope=0 semantics=[]"
        , "CounterSampleFloat64 domain=\"train\" counter=4294967303 value=0.25"
        , "CounterSampleInt64 domain=\"train\" counter=4294967303 value=-3"
        ]

checkPayloads :: [String] -> Assertion
checkPayloads events = do
  filter ("PayloadSchemaRegister" `isPrefixOf`) events @?= ["PayloadSchemaRegister domain=\"comm\" attributes=ptr"]
  -- NVTX_PAYLOAD_TYPE_EXT (0xDFBD0009 as an int32): one extended payload.
  assertBool (show events) $
    any ("DomainMarkEx domain=\"comm\" {msg=\"send\" payloadtype=-541261815 " `isPrefixOf`) events

-- | The payloads scenario under @nvtxr record@ (NVTXR_COMMAND): the mark
-- carries the record's fields, decoded. The portable build sends nothing.
payloadsRecorded :: Assertion
payloadsRecorded = do
  command <- lookupEnv "NVTXR_COMMAND"
  case command of
    Nothing
      | nvtxEnabled -> assertFailure "NVTXR_COMMAND is not set: run through tests/run-all.sh"
      | otherwise -> pure ()
    Just nvtxr
      | not nvtxEnabled -> pure ()
      | otherwise -> do
          self <- getExecutablePath
          tmp <- getTemporaryDirectory
          let trace = tmp ++ "/nvtxr-hs-payloads-" ++ runtime ++ ".json"
          baseEnv <- filter ((/= "NVTX_INJECTION64_PATH") . fst) <$> getEnvironment
          (code, out, err) <-
            readCreateProcessWithExitCode
              (proc nvtxr ["record", "-q", "-o", trace, "--", self]) {env = Just (("NVTXR_HS_SCENARIO", "payloads") : baseEnv)}
              ""
          assertEqual ("nvtxr record failed: " ++ out ++ err) ExitSuccess code
          json <- readFile trace
          assertBool json ("\"fields\":{\"bytes\":1048576,\"peer\":3,\"ratio\":0.5}" `isInfixOf` json)
          length json `seq` removeFile trace

checkEff :: [String] -> Assertion
checkEff events
  | rtsSupportsBoundThreads =
      events
        @?= [ "NameOsThreadA tid=self \"eff\""
            , "NameCategoryA 4 \"effects\""
            , "RangeStartA \"eff range\" -> 1"
            , "RangeStartEx {msg=\"eff colored\" color=0xffffff00} -> 2"
            , "MarkA \"eff mark\""
            , "RangeEnd 2"
            , "RangeEnd 1"
            , "RangeStartA \"eff throws\" -> 3"
            , "RangePushA \"eff push\" -> 0"
            , "RangePop -> 0"
            ]
  | otherwise = assertBool "the eff scenario recorded its marks" ("MarkA \"eff mark\"" `elem` events)

-- | The nvtx-hs compatibility program (examples/NvtxHsCompat.hs).
checkCompat :: [String] -> Assertion
checkCompat events = do
  let has e = assertBool ("missing: " ++ e ++ " in " ++ show events) (e `elem` events)
  has "NameOsThreadA tid=self \"compat\""
  has "NameCategoryA 7 \"compat category\""
  has "RangePushA \"raw push\" -> 0"
  has "RangePop -> 0"
  has "MarkEx {msg=\"payloads\" payload=u64:1}"
  has "MarkEx {msg=\"payloads\" payload=i32:-3}"
  has "MarkEx {msg=\"payloads\" payload=f32:0.5}"
  has "MarkEx {msg=\"colors\" color=0xffff00ff category=7}"
  has "DomainCreateA \"compat domain\""
  has "DomainRangePushEx domain=\"compat domain\" {msg=\"in domain\"} -> 0"
  has "DomainRangePop domain=\"compat domain\" -> 0"
  has "DomainDestroy domain=\"compat domain\""
  has "MarkA \"compat done\""
  balanced (filter (not . ("Domain" `isPrefixOf`)) events) $
    Map.fromList [("raw push", 1), ("attribs range", 1), ("with range", 1), ("start attribs", 1)]

cacheCalls :: Int
cacheCalls = 1000

-- | With a tool, a repeated 'String' message costs no encoding: a long
-- message allocates no more per call than a one-letter one (measured in
-- bytes, not timed). Fails the child otherwise.
cacheScenario :: IO ()
cacheScenario = do
  let perCall action = do
        _ <- action -- the first call encodes and keeps it
        a0 <- getAllocationCounter
        replicateM_ cacheCalls action
        a1 <- getAllocationCounter
        pure (fromIntegral (a0 - a1) `div` cacheCalls :: Int)
  short <- perCall (mark shortMessage)
  long <- perCall (mark longMessage)
  when (nvtxEnabled && long > short) $
    throwIO (userError ("a 200-character message allocates " ++ show long ++ " bytes per call, a 1-character one " ++ show short))

-- | Strings built once (a let would be rebuilt per call by the optimizer),
-- not literals (those take another path: see the rules in "NVTX").
shortMessage, longMessage :: String
shortMessage = replicate 1 'x'
{-# NOINLINE shortMessage #-}
longMessage = replicate 200 'x'
{-# NOINLINE longMessage #-}

checkCache :: [String] -> Assertion
checkCache events = length events @?= 2 * (cacheCalls + 1)

checkExceptions :: [String] -> Assertion
checkExceptions events = do
  balanced events $
    Map.fromList [(l, 1) | l <- ["throws", "timed out", "killed", "start-end throws", "domain throws"]]
  assertBool "the domain is destroyed despite the exception" ("DomainDestroy domain=\"exc domain\"" `elem` events)
