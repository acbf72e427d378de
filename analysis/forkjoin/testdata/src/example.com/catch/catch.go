// Package catch stands for a sibling package of the module, such as
// conc's panics: its code is not visible to the package that calls it.
package catch

// Try calls f and recovers its panic.
func Try(f func()) {
	defer func() { recover() }()
	f()
}
