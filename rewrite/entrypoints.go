package rewrite

// The runtime's entry points: the names of package shadow (shadowPath) that
// rewritten code calls, imported as shadowAlias. The rewriter writes them
// from these constants only (rtCall, and the generated files of gen.go),
// and TestEntryPoints checks each against shadow's exported API, with the
// signature it has there: a name or a signature changed on one side only
// fails that test rather than the build of a user's program.
const (
	// The run.
	rtInit          = "Init"          // the package's site table; registering it starts the run
	rtSiteInfo      = "SiteInfo"      // a row of the site table (a type)
	rtStartIfNeeded = "StartIfNeeded" // first in main and in the generated TestMain
	rtFinish        = "Finish"        // deferred in main; after the tests in TestMain
	rtTestOutput    = "TestOutput"    // where a test binary's profile goes (-spanprofile)
	rtBeforeExit    = "BeforeExit"    // os.Exit(BeforeExit(code))
	rtLeftOut       = "LeftOut"       // the calls left out that may carry work, for the reports

	// Instrumented calls.
	rtCallBegin   = "CallBegin"   // before a statement that makes the call
	rtCallEnd     = "CallEnd"     // after it
	rtEnter       = "Enter"       // Leave(Enter(S), f(x)): a call in an expression
	rtLeave       = "Leave"       // its return
	rtEnterAfter  = "EnterAfter"  // wraps the last event of a call's operands
	rtLeave1      = "Leave1"      // the return of a call begun by EnterAfter
	rtLeave2      = "Leave2"      // the return of a call with 2 results
	rtLeave3      = "Leave3"      // 3 results
	rtLeave4      = "Leave4"      // 4 results
	rtLeaveGlue   = "LeaveGlue"   // Leave right before a wait (glue.go)
	rtCallEndGlue = "CallEndGlue" // CallEnd right before a wait
	rtGlued       = "Glued"       // Glued(S): a spawn's site, the child's end right before a call's begin

	// Spawns, join contributions and waits, by idiom.
	rtGo                = "Go"                // go f(x)
	rtWaitGroupGo       = "WaitGroupGo"       // wg.Go(f)
	rtWaitGroupDone     = "WaitGroupDone"     // wg.Done()
	rtWaitGroupDoneLast = "WaitGroupDoneLast" // defer wg.Done() first in a go statement's literal (glue.go)
	rtWaitGroupAdd      = "WaitGroupAdd"      // wg.Add(n), n negative or not known
	rtWaitGroupWait     = "WaitGroupWait"     // wg.Wait()
	rtGroupGo           = "GroupGo"           // errgroup's g.Go(f)
	rtGroupTryGo        = "GroupTryGo"        // errgroup's g.TryGo(f)
	rtGroupWait         = "GroupWait"         // errgroup's g.Wait()
	rtGroupSetLimit     = "GroupSetLimit"     // errgroup's g.SetLimit(n)
	rtSemAcquire        = "SemAcquire"        // sem <- v, a semaphore's acquire around a spawn
	rtSemRelease        = "SemRelease"        // <-sem, its release at the child's end
	rtParlibGroupSpawn  = "ParlibGroupSpawn"  // parlib's g.Spawn(f)
	rtParlibGroupSync   = "ParlibGroupSync"   // parlib's g.Sync()
	rtParlibSpawn       = "ParlibSpawn"       // parlib.Spawn(f)
	rtParlibTaskWait    = "ParlibTaskWait"    // parlib's t.Wait()
	rtParlibDo          = "ParlibDo"          // parlib.Do(fs...)
	rtParlibFor         = "ParlibFor"         // parlib.For
	rtParlibForRange    = "ParlibForRange"    // parlib.ForRange
	rtParlibForEach     = "ParlibForEach"     // parlib.ForEach

	// Regions (region.go): region.Begin is an instrumented call's
	// EnterAfter.
	rtRegionEnd = "RegionEnd" // r.End()
	rtRegionDo  = "RegionDo"  // region.Do(name, f)

	// Tests (tests.go).
	rtBeginTest    = "BeginTest"    // defer EndTest(BeginTest()) first in a test
	rtEndTest      = "EndTest"      // the test's end
	rtTestRun      = "TestRun"      // t.Run, b.Run
	rtTestParallel = "TestParallel" // t.Parallel()
	rtTestFuzz     = "TestFuzz"     // f.Fuzz
)

// rtLeaveN is the Leave of a call with n results, 1 to 4.
var rtLeaveN = [...]string{1: rtLeave1, 2: rtLeave2, 3: rtLeave3, 4: rtLeave4}

// rtParlibLoop is the entry point of each of parlib's loops.
var rtParlibLoop = map[string]string{"For": rtParlibFor, "ForRange": rtParlibForRange, "ForEach": rtParlibForEach}

// entryPoints is the signature of each entry point as shadow declares it,
// in shadow's terms (its own names unqualified, other packages' by name,
// parameter names left out), or "type" for a type.
var entryPoints = map[string]string{
	rtInit:          "func([]SiteInfo) SiteID",
	rtSiteInfo:      "type",
	rtStartIfNeeded: "func()",
	rtFinish:        "func()",
	rtTestOutput:    "func(*string, string)",
	rtBeforeExit:    "func(int) int",
	rtLeftOut:       "func([]SiteInfo) int",

	rtCallBegin:   "func(SiteID)",
	rtCallEnd:     "func()",
	rtEnter:       "func(SiteID) Entered",
	rtLeave:       "func[T any](Entered, T) T",
	rtEnterAfter:  "func[T any](T, SiteID) T",
	rtLeave1:      "func[T any](T) T",
	rtLeave2:      "func[A any, B any](A, B) (A, B)",
	rtLeave3:      "func[A any, B any, C any](A, B, C) (A, B, C)",
	rtLeave4:      "func[A any, B any, C any, D any](A, B, C, D) (A, B, C, D)",
	rtLeaveGlue:   "func[T any](Entered, T) T",
	rtCallEndGlue: "func()",
	rtGlued:       "func(SiteID) SiteID",

	rtGo:                "func(SiteID, func())",
	rtWaitGroupGo:       "func(SiteID, *sync.WaitGroup, func())",
	rtWaitGroupDone:     "func(*sync.WaitGroup)",
	rtWaitGroupDoneLast: "func(*sync.WaitGroup)",
	rtWaitGroupAdd:      "func(*sync.WaitGroup, int)",
	rtWaitGroupWait:     "func(*sync.WaitGroup)",
	rtGroupGo:           "func[G any, PG ErrGroup[G]](SiteID, PG, func() error)",
	rtGroupTryGo:        "func[G any, PG ErrGroup[G]](SiteID, PG, func() error) bool",
	rtGroupWait:         "func[G any, PG ErrGroup[G]](PG) error",
	rtGroupSetLimit:     "func[G any, PG LimitGroup[G]](PG, int)",
	rtSemAcquire:        "func[T any](SiteID, chan T, T)",
	rtSemRelease:        "func[T any](chan T) T",
	rtParlibGroupSpawn:  "func[G any, PG ParlibGroup[G]](SiteID, PG, func())",
	rtParlibGroupSync:   "func[G any, PG ParlibGroup[G]](PG)",
	rtParlibSpawn:       "func[T any](SiteID, func(func() T) *parlib.Task[T], func() T) *parlib.Task[T]",
	rtParlibTaskWait:    "func[T any, Task any, PT interface{Wait() T; *Task}](PT) T",
	rtParlibDo:          "func(SiteID, func(...func()), ...func())",
	rtParlibFor:         "func(SiteID, func(int, int, int, func(int)), int, int, int, func(int))",
	rtParlibForRange:    "func(SiteID, func(int, int, int, func(int, int)), int, int, int, func(int, int))",
	rtParlibForEach:     "func[T any](SiteID, func([]T, int, func(int, *T)), []T, int, func(int, *T))",

	rtRegionEnd: "func[R interface{End()}](R)",
	rtRegionDo:  "func(SiteID, func(string, func()), string, func())",

	rtBeginTest:    "func() *TestHold",
	rtEndTest:      "func(*TestHold)",
	rtTestRun:      "func[T any](SiteID, func(string, func(T)) bool, string, func(T)) bool",
	rtTestParallel: "func(func())",
	rtTestFuzz:     "func(SiteID, func(any), any)",
}
