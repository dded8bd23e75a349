// Package hostile holds the hostile trials of issue 14 as tests: each one
// plays the hermes user (uid 10000, no passwd entry needed) against a real
// hinit running as PID 1 of a fresh PID namespace, and asserts that root's
// rights, PID 1's resources and root's answers survive. Each trial failed on
// the main of the day the hole was found.
//
// The test binary is hinit, hsvc and the hostile user's tools at once (see
// harness_test.go), so nothing is built first. Trials that need root (every
// one that plays two users) skip without it and say so; CI runs as root.
//
// Files: harness_test.go (hinit, hsvc, acting as hermes), one file per
// trial family (trust_test.go, logdir_test.go, ...).
package hostile
