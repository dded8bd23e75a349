//go:build !race

package hostile

// rssFactor scales the trials' memory bounds; see race_test.go.
const rssFactor = 1

// junkDirs is how many dirs of junk TestJunkDefinitions plants; see
// race_test.go.
const junkDirs = 300
