// Command hinit is the PID 1 of the Hermes Agent container image: see
// package pid1.
//
// The runtime's periodic GOMAXPROCS update is off: from a background
// thread it would re-read the cgroup CPU quota every second, wake-ups an
// init that mostly sleeps does not need (docs/decisions.md, "GOMAXPROCS").
//
//go:debug updatemaxprocs=0
package main

import (
	"os"

	"hinit/pid1"
)

func main() { os.Exit(pid1.Main(os.Args)) }
