//go:build race

package hostile

// rssFactor: the race detector's shadow memory makes hinit's RSS several
// times larger; memory bounds are scaled by rssFactor.
const rssFactor = 6
