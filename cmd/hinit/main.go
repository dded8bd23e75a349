// Command hinit is the PID 1 of the Hermes Agent container image: see
// package pid1.
package main

import (
	"os"

	"hinit/pid1"
)

func main() { os.Exit(pid1.Main(os.Args)) }
