//go:build !race

package hostile

// rssFactor scales the trials' memory bounds; see race_test.go.
const rssFactor = 1
