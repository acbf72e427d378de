package report

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/spanprof/spanprof/spanprofile"
)

// The HTML report's two pictures, as inline SVG: the critical path as an
// icicle chart of the calling contexts, and the speedup bounds against the
// number of processors. Both are laid out here, in Go, so that the template
// only copies numbers into elements and the tests can check the geometry.

// Icicle chart geometry, in SVG user units (the chart scales to the page).
const (
	icicleWidth    = 1200
	icicleRow      = 20
	icicleMaxDepth = 40  // rows below the root; deeper contexts are cut
	icicleMinWidth = 0.5 // narrower boxes (and their callees) are not drawn
	icicleCharW    = 6.7 // width of a character at the labels' size
)

// icicleBox is one box of the icicle chart: a site in one calling context.
type icicleBox struct {
	X, Y, W, H float64
	Label      string // "" when the box is too narrow for one
	Title      string // the tooltip, always
	Fill       string
	URL        template.URL // the site's source, "" for the root
}

// TextX and TextY place a box's label.
func (b icicleBox) TextX() float64 { return b.X + 3 }
func (b icicleBox) TextY() float64 { return b.Y + b.H - 6 }

// icicleChart is the critical path as boxes: the root on top, each
// context's callees below it, a box's width its share of the span.
type icicleChart struct {
	Width, Height float64
	Boxes         []icicleBox
	Cut           int // contexts deeper than icicleMaxDepth, drawn no deeper
}

// icicleNode is a calling context in the tree of stacks.
type icicleNode struct {
	site     int
	span     int64 // inclusive: the local span on span of its contexts and those below
	self     int64 // the local span on span of its own context
	children []*icicleNode
}

func (n *icicleNode) child(site int) *icicleNode {
	for _, c := range n.children {
		if c.site == site {
			return c
		}
	}
	c := &icicleNode{site: site}
	n.children = append(n.children, c)
	return c
}

// icicle builds the icicle chart of p's critical path from the local span
// on span of its calling contexts: a context's box is as wide as the span
// of its invocations on the critical path with their callees, so the root
// box is the whole span. It is nil for a profile without a span.
func icicle(p *spanprofile.Profile, sourceURL string) *icicleChart {
	root := &icicleNode{site: -1}
	chart := &icicleChart{Width: icicleWidth}
	for _, c := range p.Contexts {
		v := c.OnSpan.Local.Span
		if v <= 0 || slices.ContainsFunc(c.Stack, func(s int) bool { return s < 0 || s >= len(p.Sites) }) {
			continue
		}
		stack := c.Stack
		if len(stack) > icicleMaxDepth {
			stack = stack[:icicleMaxDepth]
			chart.Cut++
		}
		n := root
		n.span += v
		for _, s := range stack {
			n = n.child(s)
			n.span += v
		}
		n.self += v
	}
	total := max(p.Span, root.span)
	if total <= 0 {
		return nil
	}
	scale := icicleWidth / float64(total)
	depth := 0
	var lay func(n *icicleNode, x float64, d int)
	lay = func(n *icicleNode, x float64, d int) {
		w := float64(n.span) * scale
		if w < icicleMinWidth {
			return
		}
		depth = max(depth, d)
		chart.Boxes = append(chart.Boxes, icicleBoxOf(p, n, total, x, float64(d*icicleRow), w, sourceURL))
		// The heaviest callee first, so the widest boxes line up on the
		// left; ties in site order, so the chart is the same every time.
		slices.SortFunc(n.children, func(a, b *icicleNode) int {
			return cmp.Or(cmp.Compare(b.span, a.span), cmp.Compare(a.site, b.site))
		})
		for _, c := range n.children {
			lay(c, x, d+1)
			x += float64(c.span) * scale
		}
	}
	lay(root, 0, 0)
	chart.Height = float64((depth + 1) * icicleRow)
	return chart
}

// icicleBoxOf returns the box of a node, its label fitted to its width.
func icicleBoxOf(p *spanprofile.Profile, n *icicleNode, total int64, x, y, w float64, sourceURL string) icicleBox {
	site := p.RootSite()
	if n.site >= 0 {
		site = p.Sites[n.site]
	}
	share := float64(n.span) / float64(total)
	pct := strconv.FormatFloat(100*share, 'f', 1, 64) + "%"
	where := sitePlace(site)
	if n.site < 0 {
		where = "the whole run; its own time is outside every site"
	}
	b := icicleBox{
		X: round2(x), Y: y, W: round2(w), H: icicleRow - 1,
		Fill: heat(float64(n.self) / float64(total)),
		Title: fmt.Sprintf("%s (%s, %s)\n%s of the span with its callees: %s\nits own time: %s, %s",
			site.Func, where, orDash(string(site.Kind)), pct, quantity(n.span, p.Unit),
			quantity(n.self, p.Unit), percent(n.self, total)),
	}
	if n.site >= 0 {
		b.URL = sourceLink(sourceURL, site)
	}
	var candidates []string
	if site.File != "" {
		candidates = append(candidates, site.Func+" "+siteName(site)+" "+pct)
	}
	short := site.Func[strings.LastIndex(site.Func, "/")+1:]
	if _, name, ok := strings.Cut(short, "."); ok && name != "" {
		short = name // the package's name goes first: partition, (*T).m
	}
	candidates = append(candidates, site.Func+" "+pct, site.Func, short)
	for _, l := range candidates {
		if float64(len([]rune(l)))*icicleCharW+6 <= w {
			b.Label = l
			break
		}
	}
	// Else the end of the function's name, which tells methods and
	// closures apart, if enough of it fits to mean something.
	if n := int((w - 6) / icicleCharW); b.Label == "" && n >= 5 {
		b.Label = keepEnd(short, n)
	}
	return b
}

// heat colours a box by its own share of the span: pale yellow for none,
// deep orange-red for all of it, so that the time on the critical path
// stands out from the contexts that only pass through.
func heat(self float64) string {
	self = math.Max(0, math.Min(1, self))
	step := math.Round(math.Sqrt(self) * 10) // ten shades; the root of the share shows small ones
	return fmt.Sprintf("hsl(%.0f,85%%,%.0f%%)", 48-4.6*step, 82-3*step)
}

// round2 rounds a coordinate to two decimals, which keeps the page small.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// sourceLink returns the URL of a site's source line: prefix, the site's
// file relative to the module root, and "#L<line>". With no prefix, a file
// given as an absolute path is a file:// URL and a relative one is relative
// to the page.
//
// html/template lets only http, https and mailto URLs into links; the
// report's also come from the command line, where file:// is the default,
// so they are checked here and marked safe. A URL of any other scheme
// (javascript:) or none that parses makes no link.
func sourceLink(prefix string, s spanprofile.Site) template.URL {
	if s.File == "" {
		return ""
	}
	file := strings.ReplaceAll(s.File, "\\", "/")
	if prefix == "" && strings.HasPrefix(file, "/") {
		prefix = "file://"
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") && !strings.HasPrefix(file, "/") {
		prefix += "/"
	}
	segs := strings.Split(file, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	u := prefix + strings.Join(segs, "/")
	if s.Line > 0 {
		u += "#L" + strconv.Itoa(s.Line)
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return ""
	}
	switch strings.ToLower(parsed.Scheme) {
	case "", "file", "http", "https":
		return template.URL(u)
	}
	return ""
}

// Speedup chart geometry.
const (
	chartW, chartH        = 560, 330
	chartLeft, chartRight = 48, 16
	chartTop, chartBottom = 14, 44
	plotW                 = chartW - chartLeft - chartRight
	plotH                 = chartH - chartTop - chartBottom
	linearSamples         = 64 // segments of the linear speedup's curve
	minSpeedupAxis        = 2  // the speedup axis goes at least this high
)

// speedupChart is the speedup estimate as a picture: the lower and upper
// bounds on a log2 axis of processors, the linear speedup for comparison,
// and the parallelism where the upper bound levels off.
type speedupChart struct {
	Width, Height  int
	Left, Top      int
	PlotW, PlotH   int
	XTicks, YTicks []chartTick
	Lower, Upper   string // polyline points
	Band           string // polygon between the bounds
	Linear         string
	Points         []chartPoint
	ParY           float64 // the parallelism's height; -1 above the chart
	ParLabel       string
}

type chartTick struct {
	Pos   float64
	Label string
}

type chartPoint struct {
	X, Lower, Upper float64
	Title           string
}

// speedup lays out the chart of the bounds, which come in increasing
// order of processors; it is nil without a span or processors to plot.
func speedup(p *spanprofile.Profile, bounds []spanprofile.Bound) *speedupChart {
	if p.Span <= 0 || p.Work <= 0 {
		return nil
	}
	// One processor runs the work in the serial time: the bounds start
	// there.
	procs := []int{1}
	for _, b := range bounds {
		if b.Procs > procs[len(procs)-1] {
			procs = append(procs, b.Procs)
		}
	}
	if len(procs) < 2 {
		return nil
	}
	pts := p.SpeedupEstimate(procs)
	maxP := float64(procs[len(procs)-1])
	top := float64(minSpeedupAxis)
	for _, b := range pts {
		top = max(top, b.Upper*1.15)
	}
	step := niceStep(top / 5)
	top = step * math.Ceil(top/step)
	xOf := func(n float64) float64 { return round2(plotW * math.Log2(n) / math.Log2(maxP)) }
	yOf := func(s float64) float64 { return round2(plotH * (1 - s/top)) }

	c := &speedupChart{Width: chartW, Height: chartH, Left: chartLeft, Top: chartTop, PlotW: plotW, PlotH: plotH, ParY: -1}
	for n := 1.0; n <= maxP; n *= 2 {
		c.XTicks = append(c.XTicks, chartTick{xOf(n), strconv.FormatFloat(n, 'f', 0, 64)})
	}
	for s := 0.0; s <= top+step/2; s += step {
		c.YTicks = append(c.YTicks, chartTick{yOf(s), strconv.FormatFloat(s, 'f', -1, 64)})
	}
	var lower, upper, band []string
	for _, b := range pts {
		x := xOf(float64(b.Procs))
		lower = append(lower, point(x, yOf(b.Lower)))
		upper = append(upper, point(x, yOf(b.Upper)))
		c.Points = append(c.Points, chartPoint{X: x, Lower: yOf(b.Lower), Upper: yOf(b.Upper),
			Title: fmt.Sprintf("%d processors: speedup %s to %s", b.Procs, decimal(b.Lower, 2), decimal(b.Upper, 2))})
	}
	band = append(band, upper...)
	for i := len(lower) - 1; i >= 0; i-- {
		band = append(band, lower[i])
	}
	c.Lower, c.Upper, c.Band = strings.Join(lower, " "), strings.Join(upper, " "), strings.Join(band, " ")
	// Speedup P on P processors, up to where it leaves the chart.
	end := math.Min(maxP, top)
	var linear []string
	for i := 0; i <= linearSamples; i++ {
		n := math.Pow(end, float64(i)/linearSamples)
		linear = append(linear, point(xOf(n), yOf(n)))
	}
	c.Linear = strings.Join(linear, " ")
	if par := p.Parallelism(); par <= top {
		c.ParY = yOf(par)
		c.ParLabel = "parallelism " + decimal(par, 2)
	}
	return c
}

func point(x, y float64) string {
	return strconv.FormatFloat(x, 'f', -1, 64) + "," + strconv.FormatFloat(y, 'f', -1, 64)
}

// niceStep returns the smallest of 1, 2 and 5 times a power of ten that is
// at least x.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	pow := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= x*(1-1e-9) {
			return m * pow
		}
	}
	return 10 * pow
}
