# The commands a newcomer needs: `make test` runs everything CI runs.
GO ?= go

.PHONY: test vet fmt lint bench microbench microbench-instr pgo spanvet html-check

# -timeout: cmd/spanprof's tests take 6-7 minutes beside two busy loops on
# two cores, near go test's default of 10 per package.
test: fmt vet
	$(GO) test -timeout 20m ./...
	$(GO) test -race -run 'Parallel' ./shadow/

vet:
	$(GO) vet ./...

# fmt fails if any file needs gofmt (testdata holds deliberate oddities).
fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '/testdata/')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@latest ./...

# The overhead of profiling on the benchmark suite (examples/suite.txt), as
# Figure 11 of the Cilkprof paper measures it: docs/benchmarks.md explains the
# table. It takes several minutes; `go run ./bench -runs 1 -only fib` is quick.
bench:
	$(GO) run ./bench

# Microbenchmarks of the hot path: the shadow runtime's events (CPU time per
# op and per event, and instructions where a hardware counter opens), the
# prof structure, the measures and parlib; and the profile's write. shadow
# and perf compile with the runtime's profile, as spanprof's builds compile
# them: the flags name a copy of the profile by its content, since the go
# command's build cache does not look into the file a flag names
# (rewrite.EnginePGO).
PGOFLAGS = $(shell $(GO) run ./bench/pgo -flags)
microbench:
	$(GO) test -run '^$$' -bench . -benchmem $(PGOFLAGS) ./shadow/ ./perf/ ./parlib/ ./spanprofile/

# The same events' instructions, counted by Valgrind's callgrind: exact and
# the same on every run, where no hardware counter opens (bench/instr; with
# the runtime's profile, -pgo=false without).
microbench-instr:
	$(GO) run ./bench/instr

# The runtime's CPU profile, shadow/engine.pgo, which spanprof's builds
# compile shadow and perf with (profile-guided optimization): the suite's
# examples profiled, their runtime frames merged (bench/pgo). Run it after
# changing the engine; TestEngineProfileIsFresh says when.
pgo:
	$(GO) run ./bench/pgo

spanvet:
	$(GO) build -o spanvet ./vettool

# The HTML report in headless Chromium: a screenshot of the golden quicksort
# page at 1,280 px that must not be blank, and its table sorted by clicks.
# The tests skip, saying so, where no chromium is installed (apt-get install
# chromium); HTML_CHECK_SCREENSHOT=DIR keeps the screenshot.
html-check:
	$(GO) test -count=1 -v -run 'TestHTMLInBrowser' ./report/
