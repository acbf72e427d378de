module github.com/spanprof/spanprof

go 1.26.8

require (
	github.com/dave/dst v0.28.0
	github.com/golangci/plugin-module-register v0.1.2
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	github.com/hodgesds/perf-utils v0.7.0
	go.uber.org/goleak v1.3.0
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/mod v0.42.0
	golang.org/x/sync v0.24.0
	golang.org/x/sys v0.49.0
	golang.org/x/tools v0.52.1-0.20261106145633-d407941a339a
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.6.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)
