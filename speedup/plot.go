package speedup

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The size of the plot. The PNG image is Width·DPI by Height·DPI pixels:
// 1200 by 750. Text sizes are in points, so the DPI makes the image sharper
// without making the text smaller.
const (
	Width  = 8 * vg.Inch
	Height = 5 * vg.Inch
	DPI    = 150
)

// Chart is a factored speedup plot.
type Chart struct {
	Title    string // the first line of the title, naming the program
	Subtitle string // a second line, the measurements that set the scale
	Points   []Point

	// Busy, when not "", is a third line, in red: the machine was busy
	// (Load.Warning). The gap the notes call inflation is then named for
	// other processes' load as well.
	Busy string
}

// A curve is one line of the plot and its legend entry.
type curve struct {
	name  string
	value func(Point) float64
	line  draw.LineStyle
	glyph draw.GlyphStyle // no glyph when Radius is 0
}

// The colours are the Okabe–Ito palette, which readers with the common
// forms of colour blindness can tell apart, and stay apart in grey.
var (
	grey      = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	black     = color.RGBA{A: 255}
	orange    = color.RGBA{R: 230, G: 159, B: 0, A: 255}
	green     = color.RGBA{R: 0, G: 158, B: 115, A: 255}
	blue      = color.RGBA{R: 0, G: 114, B: 178, A: 255}
	vermilion = color.RGBA{R: 213, G: 94, B: 0, A: 255}
	band      = color.NRGBA{R: 213, G: 94, B: 0, A: 40} // the range between the bounds
)

// boundLine is the style of Cilkview's bounds: dashed, where every measured
// curve is solid (the elision dotted), so that predicted and measured
// speedups are told apart without colour.
var boundLine = draw.LineStyle{Color: vermilion, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(4)}}

// curves returns the measured lines of the plot, top to bottom as the
// paper's Figure 2 stacks them.
func curves() []curve {
	solid := func(c color.Color, w vg.Length) draw.LineStyle {
		return draw.LineStyle{Color: c, Width: w}
	}
	glyph := func(c color.Color, s draw.GlyphDrawer) draw.GlyphStyle {
		return draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: s}
	}
	dotted := draw.LineStyle{Color: black, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(1.5), vg.Points(3)}}
	return []curve{
		{"linear  P", func(p Point) float64 { return p.Linear }, solid(grey, vg.Points(1)), draw.GlyphStyle{}},
		{"elision  P·T_s/T_elision", func(p Point) float64 { return p.Elision }, dotted, draw.GlyphStyle{}},
		{"maximal  P·T_s/T_1", func(p Point) float64 { return p.Maximal }, solid(black, vg.Points(1.5)), glyph(black, draw.CrossGlyph{})},
		{"idle-specific  P·T_s/(T_1+I_P)", func(p Point) float64 { return p.IdleSpecific }, solid(orange, vg.Points(1.5)), glyph(orange, draw.TriangleGlyph{})},
		{"inflation-specific  P·T_s/W_P", func(p Point) float64 { return p.InflationSpecific }, solid(green, vg.Points(1.5)), glyph(green, draw.BoxGlyph{})},
		{"actual  T_s/T_P", func(p Point) float64 { return p.Actual }, solid(blue, vg.Points(2.5)), glyph(blue, draw.CircleGlyph{})},
	}
}

// notes are printed under the legend: how to read the gaps between the
// curves (the paper's Section 2.4).
var notes = []string{
	"W_P = P·T_P − I_P, the parallel work",
	"linear to maximal: overhead over T_s",
	"maximal to idle-specific: idle time",
	"maximal to inflation-specific: inflation",
}

// busyNote replaces the last of notes on a busy machine.
const busyNote = "maximal to inflation-specific: inflation + other processes' load"

// boundsNote explains the scale of the bounds, when they are drawn.
const boundsNote = "band: Cilkview bounds × T_s/T_1"

// xys returns the points that have a value.
func xys(points []Point, value func(Point) float64) plotter.XYs {
	var xys plotter.XYs
	for _, p := range points {
		if v := value(p); !math.IsNaN(v) && !math.IsInf(v, 0) {
			xys = append(xys, plotter.XY{X: float64(p.Procs), Y: v})
		}
	}
	return xys
}

// stepTicks marks an axis at round steps (1, 2 or 5 times a power of ten)
// chosen to give five to ten labelled ticks, with a minor tick between two
// labelled ones: plot's default ticker labels as few as three.
type stepTicks struct{}

func (stepTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10(hi-lo)))
	for _, m := range []float64{0.1, 0.2, 0.5, 1, 2} {
		if (hi-lo)/(step*m) <= 10 {
			step *= m
			break
		}
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo / step * 2); i*step/2 <= hi; i++ {
		v := i * step / 2
		t := plot.Tick{Value: v}
		if int(i)%2 == 0 {
			t.Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// plot builds the axes and the curves, and the legend.
func (ch Chart) plot() (*plot.Plot, *plot.Legend, []string, error) {
	if len(ch.Points) == 0 {
		return nil, nil, nil, errors.New("no points to plot")
	}
	p := plot.New()
	p.X.Label.Text = "processors P (GOMAXPROCS)"
	p.Y.Label.Text = "speedup over the baseline T_s"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(12)
		a.Tick.Label.Font.Size = vg.Points(11)
		a.Padding = 0
	}

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	grid.Horizontal.Dashes = nil
	p.Add(grid)

	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font = font.From(plot.DefaultFont, 11)
	legend.ThumbnailWidth = vg.Points(28)
	legend.Padding = vg.Points(3.5)

	// The range Cilkview predicts is shaded, so that its two dashed edges
	// read as one band that the actual speedup falls in or not. The band
	// goes under the curves and its edges over them: the upper bound is the
	// maximal curve until the parallelism caps it, and its dashes must show
	// there. Its legend entry comes last.
	top := 0.0
	var bounds []plot.Thumbnailer
	var edges []plot.Plotter
	upper := xys(ch.Points, func(p Point) float64 { return p.Upper })
	lower := xys(ch.Points, func(p Point) float64 { return p.Lower })
	if len(upper) > 0 && len(upper) == len(lower) {
		ring := slices.Clone(lower)
		for i := len(upper) - 1; i >= 0; i-- {
			ring = append(ring, upper[i])
		}
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, nil, nil, err
		}
		poly.Color = band
		poly.LineStyle.Width = 0
		p.Add(poly)
		bounds = append(bounds, poly)
		for i, edge := range []plotter.XYs{upper, lower} {
			line, err := plotter.NewLine(edge)
			if err != nil {
				return nil, nil, nil, err
			}
			line.LineStyle = boundLine
			edges = append(edges, line)
			if i == 0 {
				bounds = append(bounds, line)
			}
		}
		for _, xy := range upper {
			top = max(top, xy.Y)
		}
	}

	for _, c := range curves() {
		xys := xys(ch.Points, c.value)
		if len(xys) == 0 {
			continue // not measured: no line and no legend entry
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", c.name, err)
		}
		line.LineStyle = c.line
		thumbs := []plot.Thumbnailer{line}
		p.Add(line)
		if c.glyph.Radius > 0 {
			s, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, nil, nil, err
			}
			s.GlyphStyle = c.glyph
			p.Add(s)
			thumbs = append(thumbs, s)
		}
		legend.Add(c.name, thumbs...)
		for _, xy := range xys {
			top = max(top, xy.Y)
		}
	}

	p.Add(edges...)
	notes := notes
	if ch.Busy != "" {
		notes = append(slices.Clone(notes[:len(notes)-1]), busyNote)
	}
	if bounds != nil {
		legend.Add("Cilkview bounds (span profile)", bounds...)
		notes = append(slices.Clip(notes), boundsNote)
	}

	// Both axes start at 0 so that the slope of a curve reads as its
	// efficiency; the processor counts measured are the ticks.
	maxProcs := 0
	for _, pt := range ch.Points {
		maxProcs = max(maxProcs, pt.Procs)
	}
	p.X.Min, p.X.Max = 0, float64(maxProcs)*1.04
	p.Y.Min, p.Y.Max = 0, math.Max(top, 1)*1.08
	p.Y.Tick.Marker = stepTicks{}
	if len(ch.Points) <= 16 {
		ticks := plot.ConstantTicks{{Value: 0, Label: "0"}}
		for _, pt := range ch.Points {
			ticks = append(ticks, plot.Tick{Value: float64(pt.Procs), Label: strconv.Itoa(pt.Procs)})
		}
		p.X.Tick.Marker = ticks
	} else {
		p.X.Tick.Marker = stepTicks{}
	}
	return p, &legend, notes, nil
}

// render draws the chart on c: the title across the top, the plot on the
// left, the legend and the notes on the right, level with the plot's top.
func (ch Chart) render(c draw.Canvas) error {
	p, legend, notes, err := ch.plot()
	if err != nil {
		return err
	}
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())

	// The title spans the whole width, which the plot's own title (centred
	// over the axes only) would not: the subtitle is long.
	y := c.Max.Y - vg.Points(6)
	for _, t := range []struct {
		text  string
		size  vg.Length
		color color.Color
	}{{ch.Title, 14, nil}, {ch.Subtitle, 11, nil}, {ch.Busy, 9.5, vermilion}} {
		if t.text == "" {
			continue
		}
		sty := p.Title.TextStyle
		sty.Font.Size = t.size
		if t.color != nil {
			sty.Color = t.color
		}
		for _, line := range wrap(sty, t.text, c.Size().X-vg.Points(16)) {
			c.FillText(sty, vg.Point{X: c.Center().X, Y: y}, line)
			y -= sty.Rectangle(line).Size().Y + vg.Points(3)
		}
	}
	body := draw.Crop(c, vg.Points(4), 0, vg.Points(4), y-c.Max.Y-vg.Points(6))

	// The legend and the notes go on the right, outside the axes, so that
	// no curve runs under their text; they take the width they need.
	noteStyle := legend.TextStyle
	noteStyle.Font.Size = vg.Points(9.5)
	noteStyle.Color = color.Gray{Y: 70}
	side := legend.Rectangle(body).Size().X
	for _, n := range notes {
		side = max(side, noteStyle.Rectangle(n).Size().X)
	}
	side += vg.Points(12)
	p.Draw(draw.Crop(body, 0, -side, 0, 0))
	right := draw.Crop(body, body.Size().X-side+vg.Points(8), 0, 0, 0)
	legend.Draw(right)
	ny := right.Max.Y - legend.Rectangle(right).Size().Y - vg.Points(22)
	for _, n := range notes {
		c.FillText(noteStyle, vg.Point{X: right.Min.X, Y: ny}, n)
		ny -= noteStyle.Rectangle(n).Size().Y + vg.Points(2)
	}
	return nil
}

// wrap breaks text at spaces into lines no wider than width in style sty;
// a word wider than width gets a line of its own.
func wrap(sty text.Style, s string, width vg.Length) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		next := w
		if line != "" {
			next = line + " " + w
		}
		if line != "" && sty.Rectangle(next).Size().X > width {
			lines = append(lines, line)
			next = w
		}
		line = next
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// WriteSVG writes the chart as an SVG image of Width by Height.
func (ch Chart) WriteSVG(w io.Writer) error {
	c := vgsvg.New(Width, Height)
	if err := ch.render(draw.New(c)); err != nil {
		return err
	}
	_, err := c.WriteTo(w)
	return err
}

// WritePNG writes the chart as a PNG image of Width by Height at DPI.
func (ch Chart) WritePNG(w io.Writer) error {
	c := vgimg.NewWith(vgimg.UseWH(Width, Height), vgimg.UseDPI(DPI))
	if err := ch.render(draw.New(c)); err != nil {
		return err
	}
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

// PNGSize returns the size of the PNG image in pixels.
func PNGSize() (width, height int) {
	return int(math.Round(float64(Width/vg.Inch) * DPI)), int(math.Round(float64(Height/vg.Inch) * DPI))
}
