//go:build !linux

package gen

// peakRSS returns 0: the peak RSS is read on Linux only.
func peakRSS() uint64 { return 0 }
