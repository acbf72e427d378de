package spanprofile

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/pprof/profile"
)

// The pprof encoding (docs/profile-format.md).
//
// Sample types: the first two are the flame-graph values, exclusive so that
// pprof's cumulative sums along a stack are the inclusive values and the
// totals are the run's work and span:
//
//	work/<unit>  OnWork.Local.Work of the context
//	span/<unit>  OnSpan.Local.Span of the context
//
// then all 18 numbers of the context, named <profile>_<measurement>_<field>,
// in the order of Context.OnWork, Context.OnSpan, Measurement and Triple:
//
//	onwork_top_call_site_count/count, onwork_top_call_site_work/<unit>,
//	onwork_top_call_site_span/<unit>, onwork_top_caller_count/count, ...,
//	onspan_local_span/<unit>
//
// The duplicates (work = onwork_local_work, span = onspan_local_span) keep the
// naming mechanical. DefaultSampleType is "span": a plain `go tool pprof FILE`
// shows the critical path, the view spanprof exists for; -sample_index=work
// gives the work.
//
// Locations: location i+1 is Sites[i], with one line in a function named
// Site.Func (file Site.File, line Site.Line, column Site.Column); location
// len(Sites)+1 is the root of every stack, named after RootSite. Functions
// are shared between locations with the same name and file. Each Context is
// one sample, in order: its stack leaf first, then the root location.
//
// Comments: a few human-readable "spanprof: key=value" lines, which pprof
// prints above every report (one per what-if target, its parallelism by
// factor, factor 0 for ∞), then one "# spanprof.v1 {json}" line holding the
// whole-run values, the site table and the what-if estimates (what_if),
// which pprof leaves out of its reports
// because it starts with '#' (`go tool pprof -comments` shows it). Read
// trusts only the JSON.

// MappingFile names the profile's one mapping: pprof shows it as the
// profile's file ("File: spanprof") and titles its web UI with it.
const MappingFile = "spanprof"

// Sample type names beyond work and span, in the order of the sample values.
var measurementTypes = func() []string {
	var names []string
	for _, prof := range []string{"onwork", "onspan"} {
		for _, m := range []string{"top_call_site", "top_caller", "local"} {
			for _, f := range []string{"count", "work", "span"} {
				names = append(names, prof+"_"+m+"_"+f)
			}
		}
	}
	return names
}()

// headerPrefix starts the comment that carries the whole-run values.
const headerPrefix = "# spanprof.v1 "

// header is the JSON of the spanprof.v1 comment. Its field names are part of
// the file format: add fields, never rename them.
type header struct {
	Mode         string        `json:"mode"`
	Measure      string        `json:"measure"`
	Unit         string        `json:"unit"`
	Work         int64         `json:"work"`
	Span         int64         `json:"span"`
	BurdenedSpan int64         `json:"burdened_span"`
	Burden       int64         `json:"burden"`
	Spawns       int64         `json:"spawns"`
	Syncs        int64         `json:"syncs"`
	Overhead     int64         `json:"overhead"`
	Subtracted   int64         `json:"subtracted"`
	ShadowBytes  int64         `json:"shadow_bytes,omitempty"`
	Procs        int64         `json:"procs,omitempty"`
	Trust        *Trust        `json:"trust,omitempty"`
	Sites        []Site        `json:"sites,omitempty"`
	Ended        string        `json:"ended,omitempty"`
	NotProfiled  []NotProfiled `json:"not_profiled,omitempty"`
	Limits       []LimitUse    `json:"limits,omitempty"`
	LeftOut      []LeftOutCall `json:"left_out,omitempty"`
	// Trace mode's (docs/trace-mode.md).
	Trace *TraceInfo    `json:"trace,omitempty"`
	Tasks []TaskSummary `json:"tasks,omitempty"`
	// The what-if profile (docs/what-if.md).
	WhatIf []WhatIf `json:"what_if,omitempty"`
}

// sampleUnit returns the pprof unit of the profile's measure.
func (p *Profile) sampleUnit() string {
	if p.Unit == "" {
		return "count"
	}
	return p.Unit
}

// sampleTypes returns the value types of every sample, in order.
func (p *Profile) sampleTypes() []*profile.ValueType {
	unit := p.sampleUnit()
	types := []*profile.ValueType{{Type: "work", Unit: unit}, {Type: "span", Unit: unit}}
	for _, name := range measurementTypes {
		u := unit
		if strings.HasSuffix(name, "_count") {
			u = "count"
		}
		types = append(types, &profile.ValueType{Type: name, Unit: u})
	}
	return types
}

// appendValues appends the sample values of c to v, in the order of
// sampleTypes.
func (c *Context) appendValues(v []int64) []int64 {
	v = append(v, c.OnWork.Local.Work, c.OnSpan.Local.Span)
	for _, m := range []*Measurement{&c.OnWork, &c.OnSpan} {
		for _, t := range []*Triple{&m.TopCallSite, &m.TopCaller, &m.Local} {
			v = append(v, t.Count, t.Work, t.Span)
		}
	}
	return v
}

// setValues is the inverse of values.
func (c *Context) setValues(v []int64) {
	v = v[2:]
	for _, m := range []*Measurement{&c.OnWork, &c.OnSpan} {
		for _, t := range []*Triple{&m.TopCallSite, &m.TopCaller, &m.Local} {
			t.Count, t.Work, t.Span = v[0], v[1], v[2]
			v = v[3:]
		}
	}
}

// Check reports the first inconsistency that would make p impossible to
// encode: a context whose stack names a site that does not exist.
func (p *Profile) Check() error {
	for i, c := range p.Contexts {
		for _, s := range c.Stack {
			if s < 0 || s >= len(p.Sites) {
				return fmt.Errorf("context %d: site index %d out of range [0, %d)", i, s, len(p.Sites))
			}
		}
	}
	return nil
}

// Pprof returns p as a pprof profile (see the encoding above). It fails only
// when p is inconsistent (see Check).
func (p *Profile) Pprof() (*profile.Profile, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	pp := &profile.Profile{
		SampleType:        p.sampleTypes(),
		DefaultSampleType: "span",
		// pprof prints the period type beside the sample types; the span
		// is the quantity the profile is of.
		PeriodType:    &profile.ValueType{Type: "span", Unit: p.sampleUnit()},
		TimeNanos:     p.TimeNanos,
		DurationNanos: p.DurationNanos,
		Comments:      p.comments(),
	}
	// pprof's web UI titles a profile with its first mapping's file and
	// the sample type; without a file it reads "unknown span".
	mapping := &profile.Mapping{ID: 1, File: MappingFile, HasFunctions: true}
	pp.Mapping = []*profile.Mapping{mapping}

	type funcKey struct{ name, file string }
	funcs := make(map[funcKey]*profile.Function)
	location := func(s Site) *profile.Location {
		key := funcKey{s.Func, s.File}
		fn := funcs[key]
		if fn == nil {
			fn = &profile.Function{ID: uint64(len(pp.Function) + 1), Name: s.Func, SystemName: s.Func, Filename: s.File}
			funcs[key] = fn
			pp.Function = append(pp.Function, fn)
		}
		loc := &profile.Location{
			ID:      uint64(len(pp.Location) + 1),
			Mapping: mapping,
			Line:    []profile.Line{{Function: fn, Line: int64(s.Line), Column: int64(s.Column)}},
		}
		pp.Location = append(pp.Location, loc)
		return loc
	}
	// One location per site, not per file:line: two sites on one line (two
	// recursive calls) stay apart, and location i+1 is site i.
	for _, s := range p.Sites {
		location(s)
	}
	root := location(p.RootSite())

	// The samples, their locations and their values are carved out of
	// three arrays: a profile can hold tens of thousands of contexts
	// (examples/matmul has 24k), and an allocation each for the three made
	// a tenth of such a run's garbage.
	nlocs := 0
	for i := range p.Contexts {
		nlocs += len(p.Contexts[i].Stack) + 1
	}
	samples := make([]profile.Sample, len(p.Contexts))
	allLocs := make([]*profile.Location, 0, nlocs)
	nv := 2 + len(measurementTypes)
	allValues := make([]int64, 0, nv*len(p.Contexts))
	pp.Sample = make([]*profile.Sample, len(p.Contexts))
	for i := range p.Contexts {
		c := &p.Contexts[i]
		start := len(allLocs)
		for j := len(c.Stack) - 1; j >= 0; j-- {
			allLocs = append(allLocs, pp.Location[c.Stack[j]])
		}
		allLocs = append(allLocs, root)
		vs := len(allValues)
		allValues = c.appendValues(allValues)
		samples[i] = profile.Sample{Location: allLocs[start:len(allLocs):len(allLocs)], Value: allValues[vs:len(allValues):len(allValues)]}
		pp.Sample[i] = &samples[i]
	}
	if err := pp.CheckValid(); err != nil {
		return nil, fmt.Errorf("building pprof profile: %w", err)
	}
	return pp, nil
}

// comments returns the pprof comments carrying the whole-run values.
func (p *Profile) comments() []string {
	h := header{
		Mode: p.Mode, Measure: p.Measure, Unit: p.Unit,
		Work: p.Work, Span: p.Span, BurdenedSpan: p.BurdenedSpan, Burden: p.Burden,
		Spawns: p.Spawns, Syncs: p.Syncs, Overhead: p.Overhead, Subtracted: p.Subtracted,
		ShadowBytes: p.ShadowBytes, Procs: p.Procs, Trust: p.Trust, Sites: p.Sites, Ended: p.Ended,
		NotProfiled: p.NotProfiled, Limits: p.Limits, LeftOut: p.LeftOut,
		Trace: p.Trace, Tasks: p.Tasks, WhatIf: p.WhatIf,
	}
	js, err := json.Marshal(h)
	if err != nil {
		// A header holds only strings and integers.
		panic(fmt.Sprintf("spanprofile: encoding header: %v", err))
	}
	lines := []string{
		fmt.Sprintf("spanprof: mode=%s measure=%s unit=%s", p.Mode, p.Measure, p.Unit),
		fmt.Sprintf("spanprof: work=%d span=%d parallelism=%.2f", p.Work, p.Span, p.Parallelism()),
		fmt.Sprintf("spanprof: burdened_span=%d burden=%d burdened_parallelism=%.2f", p.BurdenedSpan, p.Burden, p.BurdenedParallelism()),
		fmt.Sprintf("spanprof: spawns=%d syncs=%d average_strand=%.0f", p.Spawns, p.Syncs, p.AverageStrand()),
		fmt.Sprintf("spanprof: overhead=%d subtracted=%d", p.Overhead, p.Subtracted),
	}
	// A line per what-if target, for the eye: its parallelism by factor.
	for i := 0; i < len(p.WhatIf); {
		target := p.WhatIf[i].Target
		line := fmt.Sprintf("spanprof: what_if target=%q", target)
		for ; i < len(p.WhatIf) && p.WhatIf[i].Target == target; i++ {
			line += fmt.Sprintf(" parallelism/%d=%.2f", p.WhatIf[i].Factor, p.WhatIf[i].Parallelism())
		}
		lines = append(lines, line)
	}
	return append(lines, headerPrefix+string(js))
}

// Write writes p to w as a gzipped pprof protobuf. The same Profile always
// gives the same bytes.
func Write(w io.Writer, p *Profile) error {
	pp, err := p.Pprof()
	if err != nil {
		return fmt.Errorf("writing span profile: %w", err)
	}
	// pprof's own Write compresses at gzip's default level, which took 3%
	// of a profiled run with 24k calling contexts (examples/matmul, perf);
	// BestSpeed gives the same format, as deterministic, in a fraction of
	// the time for a somewhat larger file.
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return fmt.Errorf("writing span profile: %w", err)
	}
	if err := pp.WriteUncompressed(zw); err != nil {
		zw.Close()
		return fmt.Errorf("writing span profile: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("writing span profile: %w", err)
	}
	return nil
}

// WriteFile writes p to the named file (see Write).
func WriteFile(name string, p *Profile) error {
	var buf bytes.Buffer
	if err := Write(&buf, p); err != nil {
		return err
	}
	return os.WriteFile(name, buf.Bytes(), 0o666)
}

// ErrNotSpanProfile is what every FormatError matches with errors.Is.
var ErrNotSpanProfile = errors.New("not a span profile")

// FormatError says that a file is not a span profile: not a pprof profile at
// all, another kind of pprof profile (CPU, heap), or a corrupt one.
type FormatError struct {
	Name string // the file, when known
	Err  error  // what is wrong
}

func (e *FormatError) Error() string {
	if e.Name == "" {
		return "not a span profile: " + e.Err.Error()
	}
	return e.Name + " is not a span profile: " + e.Err.Error()
}

func (e *FormatError) Unwrap() error { return e.Err }

// Is reports whether target is ErrNotSpanProfile.
func (e *FormatError) Is(target error) bool { return target == ErrNotSpanProfile }

// Read reads a span profile written by Write. Anything else gives a
// *FormatError.
func Read(r io.Reader) (*Profile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading span profile: %w", err)
	}
	// profile.ParseData also parses legacy text formats; only the protobuf
	// (gzipped or not) can be a span profile, and a legacy parser's error
	// would only confuse.
	if len(data) == 0 {
		return nil, &FormatError{Err: errors.New("empty file")}
	}
	pp, err := profile.ParseData(data)
	if err != nil {
		return nil, &FormatError{Err: oneLine(err)}
	}
	p, err := fromPprof(pp)
	if err != nil {
		return nil, &FormatError{Err: err}
	}
	return p, nil
}

// ReadFile reads the named span profile (see Read); its errors name the
// file.
func ReadFile(name string) (*Profile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := Read(f)
	if fe, ok := err.(*FormatError); ok {
		fe.Name = name
	}
	return p, err
}

// oneLine keeps an error message on one line.
func oneLine(err error) error {
	msg := err.Error()
	if !strings.ContainsAny(msg, "\r\n") {
		return err
	}
	return errors.New(strings.Join(strings.Fields(msg), " "))
}

// fromPprof restores a Profile from its pprof encoding, checking that the
// encoding is the one Pprof produces.
func fromPprof(pp *profile.Profile) (*Profile, error) {
	var h *header
	for _, c := range pp.Comments {
		if js, ok := strings.CutPrefix(c, headerPrefix); ok {
			h = new(header)
			if err := json.Unmarshal([]byte(js), h); err != nil {
				return nil, fmt.Errorf("decoding the spanprof.v1 comment: %w", err)
			}
			break
		}
	}
	if h == nil {
		types := make([]string, len(pp.SampleType))
		for i, t := range pp.SampleType {
			types[i] = t.Type + "/" + t.Unit
		}
		return nil, fmt.Errorf("no spanprof.v1 comment (sample types %s)", strings.Join(types, ", "))
	}
	p := &Profile{
		Mode: h.Mode, Measure: h.Measure, Unit: h.Unit,
		Work: h.Work, Span: h.Span, BurdenedSpan: h.BurdenedSpan, Burden: h.Burden,
		Spawns: h.Spawns, Syncs: h.Syncs, Overhead: h.Overhead, Subtracted: h.Subtracted,
		ShadowBytes: h.ShadowBytes, Procs: h.Procs, Trust: h.Trust, TimeNanos: pp.TimeNanos, DurationNanos: pp.DurationNanos,
		Sites: h.Sites, Ended: h.Ended, NotProfiled: h.NotProfiled, Limits: h.Limits, LeftOut: h.LeftOut,
		Trace: h.Trace, Tasks: h.Tasks, WhatIf: h.WhatIf,
	}

	want := p.sampleTypes()
	if len(pp.SampleType) != len(want) {
		return nil, fmt.Errorf("%d sample types, want %d", len(pp.SampleType), len(want))
	}
	for i, t := range pp.SampleType {
		if t.Type != want[i].Type || t.Unit != want[i].Unit {
			return nil, fmt.Errorf("sample type %d is %s/%s, want %s/%s", i, t.Type, t.Unit, want[i].Type, want[i].Unit)
		}
	}

	// Location i+1 is site i and location len(Sites)+1 the root; check that
	// the file agrees with its own site table before trusting the IDs.
	sites := append(p.Sites[:len(p.Sites):len(p.Sites)], p.RootSite())
	siteOf := make(map[uint64]int, len(pp.Location))
	for _, loc := range pp.Location {
		i := int(loc.ID) - 1
		if loc.ID == 0 || i >= len(sites) {
			return nil, fmt.Errorf("location %d has no site (%d sites)", loc.ID, len(p.Sites))
		}
		s := sites[i]
		if len(loc.Line) != 1 || loc.Line[0].Function.Name != s.Func || loc.Line[0].Function.Filename != s.File ||
			loc.Line[0].Line != int64(s.Line) || loc.Line[0].Column != int64(s.Column) {
			return nil, fmt.Errorf("location %d does not match site %s:%d %s", loc.ID, s.File, s.Line, s.Func)
		}
		siteOf[loc.ID] = i
	}

	rootIndex := len(p.Sites)
	p.Contexts = make([]Context, len(pp.Sample))
	for i, s := range pp.Sample {
		n := len(s.Location)
		if n == 0 || siteOf[s.Location[n-1].ID] != rootIndex {
			return nil, fmt.Errorf("sample %d does not start at the root", i)
		}
		c := &p.Contexts[i]
		if n > 1 {
			c.Stack = make([]int, n-1)
			for j, loc := range s.Location[:n-1] {
				k := siteOf[loc.ID]
				if k == rootIndex {
					return nil, fmt.Errorf("sample %d has the root inside its stack", i)
				}
				c.Stack[n-2-j] = k
			}
		}
		c.setValues(s.Value)
		if s.Value[0] != c.OnWork.Local.Work || s.Value[1] != c.OnSpan.Local.Span {
			return nil, fmt.Errorf("sample %d: work and span values disagree with the local measurements", i)
		}
	}
	if len(p.Contexts) == 0 {
		p.Contexts = nil
	}
	return p, nil
}
