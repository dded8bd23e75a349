//go:build race

package hostile

// rssFactor: the race detector's shadow memory makes hinit's RSS several
// times larger; memory bounds are scaled by rssFactor.
const rssFactor = 6

// junkDirs: under the race detector each dir's 64 KiB of YAML takes hinit
// ten times longer to read (80 ms), and CI's busy machine eight times more
// again. 150 dirs still fail the memory bound on the code that kept each
// dir's whole error (1.9 MB a dir, several copies).
const junkDirs = 150
