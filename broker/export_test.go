package broker

// SetDefaultDumpLimitForTest makes a browsing dump without -n read at most
// n, as it reads DefaultDumpLimit: a test of the bound without 100,000
// messages. It returns what undoes it.
func SetDefaultDumpLimitForTest(n int) (restore func()) {
	prev := dumpLimit
	dumpLimit = n
	return func() { dumpLimit = prev }
}
