package fleet

import "github.com/go-logr/logr"

// Assign is assign, for the tests.
var Assign = assign

// RunMain is runMain, for the tests.
var RunMain = runMain

// The tests run many fleets in one process: klog's global logger is left
// alone, so that setting it races with no other test's reflectors.
func init() { setKlogLogger = func(logr.Logger) {} }
