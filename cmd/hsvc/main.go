// Command hsvc controls the services of hinit, the container's PID 1, over
// its control socket. All the work is in package hsvc.
package main

import (
	"os"

	"hinit/hsvc"
)

func main() {
	os.Exit(hsvc.Main(os.Args[1:], os.Stdout, os.Stderr))
}
