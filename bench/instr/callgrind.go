package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// profile is what instr reads from a callgrind output file: the program's
// instructions, and the calls to the functions that read the measure.
type profile struct {
	total int64 // instructions executed (the file's summary)
	reads int64 // calls to a read function from outside one
	// readCost is the instructions of those calls, callees included.
	readCost int64
}

// parseCallgrind reads a callgrind output file (format version 1, one event)
// and counts the calls to the functions whose names match isRead, with
// their inclusive cost, leaving out calls made from inside such a function
// so that a wrapper and the method it calls count once.
//
// The format (Valgrind's manual, "Callgrind Format Specification") names
// a function once as "fn=(id) name" and by "fn=(id)" after; a call is a
// "cfn=" line, then "calls=count target", then a cost line whose cost is
// the call's inclusive cost.
func parseCallgrind(r io.Reader, isRead *regexp.Regexp) (profile, error) {
	var p profile
	names := map[string]string{} // "(id)" -> name
	name := func(v string) string {
		id, rest, ok := strings.Cut(v, " ")
		if ok {
			names[id] = rest
			return rest
		}
		if n, ok := names[id]; ok {
			return n
		}
		return id // no compression: the name itself
	}
	var fn, cfn string
	inCall := false // the next cost line is a call's
	sawSummary := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 0; sc.Scan(); line++ {
		s := sc.Text()
		switch {
		case strings.HasPrefix(s, "fn="):
			fn = name(s[3:])
		case strings.HasPrefix(s, "cfn="):
			cfn = name(s[4:])
		case strings.HasPrefix(s, "calls="):
			f := strings.Fields(s[6:])
			if len(f) == 0 {
				return p, fmt.Errorf("line %d: calls= without a count", line+1)
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return p, fmt.Errorf("line %d: %v", line+1, err)
			}
			inCall = isRead.MatchString(cfn) && !isRead.MatchString(fn)
			if inCall {
				p.reads += n
			}
		case strings.HasPrefix(s, "summary:"), strings.HasPrefix(s, "totals:"):
			_, v, _ := strings.Cut(s, ":")
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return p, fmt.Errorf("line %d: %v", line+1, err)
			}
			if !sawSummary {
				p.total, sawSummary = n, true
			}
		case len(s) > 0 && (s[0] >= '0' && s[0] <= '9' || s[0] == '+' || s[0] == '-' || s[0] == '*'):
			// A cost line: position, then the cost of the one event.
			if inCall {
				f := strings.Fields(s)
				if len(f) < 2 {
					return p, fmt.Errorf("line %d: cost line without a cost", line+1)
				}
				n, err := strconv.ParseInt(f[1], 10, 64)
				if err != nil {
					return p, fmt.Errorf("line %d: %v", line+1, err)
				}
				p.readCost += n
			}
			inCall = false
		}
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	if !sawSummary {
		return p, fmt.Errorf("no summary line: not a complete callgrind output file")
	}
	return p, nil
}
