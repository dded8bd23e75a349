// Command hbench is hinit's benchmark command: hinit beside s6,
// supervisord, tini, dumb-init and catatonit on the same workloads. See
// package bench, scripts/bench and docs/benchmarks.md.
package main

import (
	"os"

	"hinit/bench"
)

func main() { os.Exit(bench.Main(os.Args[1:])) }
