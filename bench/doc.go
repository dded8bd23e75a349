// Package bench is hinit's benchmark harness: it runs hinit and the peers
// users would otherwise pick (s6, supervisord, tini, dumb-init, catatonit)
// on the same workloads, each init as PID 1 of a fresh PID namespace, and
// writes what it measured as JSON rows, a Markdown table and one SVG chart
// per scenario.
//
// Every service under test is the project's own probe (bench/probe), which
// stamps CLOCK_MONOTONIC as soon as the Go runtime hands it control and
// reports the stamp on a FIFO. Latencies are therefore "from the instant the
// harness (or the namespace's first process) acted to the probe's stamp",
// and each includes the same floor for every init: fork+exec of a small
// static Go program and the Go runtime's start. The harness measures that
// floor on its own and reports it beside the systems.
//
// Benchmarks are never pass/fail: the harness reports, it does not judge,
// except that docs/benchmarks.md shows each figure next to hinit's goal.
package bench
