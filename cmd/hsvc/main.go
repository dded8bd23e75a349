// Command hsvc controls the services of hinit, the container's PID 1, over
// its control socket. All the work is in package hsvc. Called by an s6
// name (s6-svc, s6-svstat, ...: a link to hsvc), it is that s6 command,
// from package s6cmd.
package main

import (
	"os"
	"path/filepath"

	"hinit/hsvc"
	"hinit/s6cmd"
)

func main() {
	if name := filepath.Base(os.Args[0]); s6cmd.Is(name) {
		os.Exit(s6cmd.Main(name, os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(hsvc.Main(os.Args[1:], os.Stdout, os.Stderr))
}
