// Pipeline is a three-stage channel pipeline whose stages cost 1, 4 and 2
// units of work per item: produce, transform and consume, each in a
// goroutine of its own, joined by channels. It is not fork/join: no stage
// waits for another to end, each hands items to the next, so serial and
// parallel mode see little of it; trace mode (docs/trace-mode.md) sees the
// hand-offs as edges.
//
// Its critical path runs through transform, the slowest stage, once per
// item: the span is about 4 units per item, the work 7, and the
// parallelism 7/4 = 1.75 however many cores run it, with transform's
// function on top of the critical path. The first item's production and
// the last one's consumption are on the path too: for n items the
// parallelism is 7n/(4n+3), 1.69 for the default 20.
//
// Usage:
//
//	pipeline [-n items] [-unit iterations] [-buffer size] [-serial]
//
// A unit is -unit iterations of a multiply-add chain, about 10 ms by
// default: strands of 10 to 40 ms, long against the time slices in which a
// busy machine's system runs other processes, so that on such a machine
// every strand reads long by about the same factor and the parallelism
// holds (with 25 µs units, a consumer descheduled for a few milliseconds
// makes the middle stage wait on it, and the trace rightly shows that
// run's critical path through the consumer). -buffer gives the channels a
// buffer (default 0, unbuffered). With -serial it runs the three stages
// one item at a time in one goroutine. Either way it prints one line, the
// same for both, and exits 1 if an item was lost or came out of order:
//
//	pipeline: 20 items, checksum 0fc9aeeafacb68be
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("pipeline", flag.ContinueOnError)
	n := fs.Int("n", 20, "push `items` through the pipeline")
	unit := fs.Int("unit", 8_000_000, "a unit of work is `iterations` of a multiply-add chain")
	buffer := fs.Int("buffer", 0, "the channels' buffer `size`")
	serial := fs.Bool("serial", false, "run the stages one item at a time in one goroutine")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 0 || *unit < 1 || *buffer < 0 {
		return fmt.Errorf("want -n >= 0, -unit >= 1, -buffer >= 0")
	}
	var sum uint64
	count := *n
	if *serial {
		for i := range *n {
			sum += consume1(transform1(produce1(item{i, uint64(i)}, *unit), *unit), *unit).x
		}
	} else {
		a := make(chan item, *buffer)
		b := make(chan item, *buffer)
		go produce(a, *n, *unit)
		go transform(a, b, *unit)
		sum, count = consume(b, *unit)
	}
	if count != *n {
		return fmt.Errorf("%d items came through, want %d in order", count, *n)
	}
	fmt.Fprintf(stdout, "pipeline: %d items, checksum %016x\n", *n, sum)
	return nil
}

// An item is its place in the input and its value.
type item struct {
	i int
	x uint64
}

// Each stage's work is written out in its own function, not in a shared
// helper, so that a profile names the stage, not the helper.

// produce sends n items, each costing 1 unit.
func produce(out chan<- item, n, unit int) {
	for i := range n {
		out <- produce1(item{i, uint64(i)}, unit)
	}
	close(out)
}

func produce1(it item, unit int) item {
	x := it.x
	for range unit {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return item{it.i, x}
}

// transform passes on every item, each costing 4 units.
func transform(in <-chan item, out chan<- item, unit int) {
	for it := range in {
		out <- transform1(it, unit)
	}
	close(out)
}

func transform1(it item, unit int) item {
	x := it.x
	for range 4 * unit {
		x = x*2862933555777941757 + 3037000493
	}
	return item{it.i, x}
}

// consume sums every item, each costing 2 units, and counts those that
// came in order.
func consume(in <-chan item, unit int) (sum uint64, count int) {
	for it := range in {
		if it.i == count {
			count++
		}
		sum += consume1(it, unit).x
	}
	return sum, count
}

func consume1(it item, unit int) item {
	x := it.x
	for range 2 * unit {
		x = x*3935559000370003845 + 2691343689449507681
	}
	return item{it.i, x}
}
