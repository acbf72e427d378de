package report_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The HTML report in a real browser: headless Chromium renders the golden
// quicksort page, and runs its script. `make html-check` runs these tests
// alone.

// chromium returns the path of a Chromium or Chrome binary: $CHROMIUM if
// set, else the first of the usual names on $PATH; the test is skipped
// when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	if c := os.Getenv("CHROMIUM"); c != "" {
		return c
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("no chromium, chromium-browser or google-chrome on $PATH (and $CHROMIUM unset): the HTML report is not checked in a browser " +
		"(on Debian or Ubuntu: apt-get install chromium)")
	return ""
}

// headless runs the browser on a page with args, with its own profile
// directory, and returns its standard output. A browser that dies of a
// signal is run again, twice at most: on a loaded machine Chromium now and
// then crashes on start-up, whatever the page.
func headless(t *testing.T, page string, args ...string) []byte {
	t.Helper()
	// --no-sandbox: the sandbox refuses to run as root, as in containers.
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--no-first-run"}, args...)
	for try := 1; ; try++ {
		out, stderr, err := runBrowser(t, append(args, "file://"+page))
		if err == nil {
			return out
		}
		var exit *exec.ExitError
		crashed := errors.As(err, &exit) && exit.ExitCode() == -1 // -1: killed by a signal
		if !crashed || try == 3 {
			t.Fatalf("%s %s: %v\n%s", chromium(t), strings.Join(args, " "), err, stderr)
		}
		t.Logf("try %d: the browser crashed (%v); running it again", try, err)
	}
}

// runBrowser runs the browser once, with a profile directory of its own.
func runBrowser(t *testing.T, args []string) (stdout, stderr []byte, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Not t.TempDir: the browser's helper processes (crashpad) may still
	// write into its profile directory after it exits, and t.TempDir
	// fails the test when it cannot remove a directory.
	dir, err := os.MkdirTemp("", "spanprof-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 5 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("could not remove %s", dir)
	})
	cmd := exec.CommandContext(ctx, chromium(t), append([]string{"--user-data-dir=" + filepath.Join(dir, "profile")}, args...)...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%v: %v", ctx.Err(), err) // timed out: not a crash to run again
		return out.Bytes(), errOut.Bytes(), err
	}
	return out.Bytes(), errOut.Bytes(), err
}

// goldenPage copies the golden quicksort page, with extra just before
// </body>, into a temporary directory and returns its absolute path.
func goldenPage(t *testing.T, extra string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "quicksort.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := strings.Replace(string(src), "</body>", extra+"</body>", 1)
	path, err := filepath.Abs(filepath.Join(t.TempDir(), "quicksort.html"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(page), 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHTMLInBrowserScreenshot renders the page at 1,280 px and checks the
// screenshot is a page, not a blank: many colours, the background far from
// everything, and the page's own colours (the verdict's bar, the span
// shares' bars, the icicle chart's hottest boxes) drawn.
func TestHTMLInBrowserScreenshot(t *testing.T) {
	chromium(t)
	page := goldenPage(t, "")
	shot := filepath.Join(filepath.Dir(page), "screenshot.png")
	headless(t, page, "--screenshot="+shot, "--window-size=1280,1600")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 1600 {
		t.Errorf("screenshot is %dx%d, want 1280x1600", b.Dx(), b.Dy())
	}
	counts := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			counts[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255}]++
		}
	}
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	total := b.Dx() * b.Dy()
	t.Logf("%d distinct colours; the commonest covers %.0f%% of the screenshot", len(counts), 100*float64(most)/float64(total))
	if len(counts) < 200 {
		t.Errorf("the screenshot has %d distinct colours: a blank or unstyled page?", len(counts))
	}
	if most > total*9/10 {
		t.Errorf("one colour covers %d of %d pixels: the page is nearly blank", most, total)
	}
	for name, c := range map[string]color.RGBA{
		"the verdict's bar (#d9480f)":     {0xd9, 0x48, 0x0f, 255},
		"the span shares' bars (#e8590c)": {0xe8, 0x59, 0x0c, 255},
		"the work shares' bars (#1c7ed6)": {0x1c, 0x7e, 0xd6, 255},
	} {
		if counts[c] < 100 {
			t.Errorf("%s: %d pixels; the page's styles were not applied", name, counts[c])
		}
	}
	if dir := os.Getenv("HTML_CHECK_SCREENSHOT"); dir != "" {
		data, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "report-html-check.png"), data, 0o666)
		}
		if err != nil {
			t.Error(err)
		}
	}
}

// TestHTMLInBrowserSort clicks the site table's headers in the browser and
// reads the rows' order after each click back from the DOM: as served
// (the span's share), then by calls, largest first, then smallest first,
// then by site, in order.
func TestHTMLInBrowserSort(t *testing.T) {
	chromium(t)
	const script = `<script>
(function () {
  var b = document.querySelectorAll("#site-table th button");
  var snap = function () {
    return Array.prototype.map.call(document.querySelectorAll("#site-table tbody tr"), function (r) {
      return r.cells[0].textContent + "=" + r.cells[6].dataset.v;
    }).join(" ");
  };
  var out = [snap()];
  b[6].click(); out.push(snap());
  b[6].click(); out.push(snap());
  b[0].click(); out.push(snap());
  var pre = document.createElement("pre");
  pre.id = "sort-check";
  pre.textContent = out.join("\n");
  document.body.appendChild(pre);
})();
</script>
`
	dom := string(headless(t, goldenPage(t, script), "--dump-dom"))
	m := regexp.MustCompile(`(?s)<pre id="sort-check">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the script left no result: did it run?\n%s", dom)
	}
	type row struct {
		site  string
		calls float64
	}
	var orders [][]row
	for _, line := range strings.Split(m[1], "\n") {
		var rows []row
		for _, f := range strings.Fields(line) {
			site, calls, _ := strings.Cut(f, "=")
			n, err := strconv.ParseFloat(calls, 64)
			if err != nil {
				t.Fatalf("calls of %s: %v", site, err)
			}
			rows = append(rows, row{site, n})
		}
		orders = append(orders, rows)
	}
	if len(orders) != 4 || len(orders[0]) != 8 || orders[0][0].site != "qsort.go:20" {
		t.Fatalf("orders %v; want 4 orders of the 8 rows of the golden page, qsort.go:20 first", orders)
	}
	for i, tc := range []struct {
		what  string
		after func(a, b row) bool
	}{
		{"one click on calls: largest first", func(a, b row) bool { return b.calls <= a.calls }},
		{"two clicks on calls: smallest first", func(a, b row) bool { return b.calls >= a.calls }},
		{"a click on site: in order", func(a, b row) bool { return a.site == "-" || a.site <= b.site }},
	} {
		rows := orders[i+1]
		for j := 1; j < len(rows); j++ {
			if !tc.after(rows[j-1], rows[j]) {
				t.Errorf("after %s: %v", tc.what, rows)
				break
			}
		}
	}
}
