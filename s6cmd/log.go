package s6cmd

// runLog is s6-log for the directives hermes uses; see logdirs.go.
func runLog(e *env, args []string) int {
	return e.fatal(exitUsage, "not supported yet")
}
