package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// runIdle is `hermes` without a command: the agent as the container's main
// program. It prints a banner naming who it runs as and where, then waits;
// a signal ends it with the default action (SIGTERM: exit status 143), as a
// Python program that does not handle it would.
func runIdle() int {
	wd, _ := os.Getwd()
	fmt.Printf("Hermes Agent (fake) ready: pid=%d uid=%d gid=%d home=%s cwd=%s\n",
		os.Getpid(), os.Getuid(), os.Getgid(), os.Getenv("HERMES_HOME"), wd)
	for {
		time.Sleep(time.Hour)
	}
}

// runChat is `hermes chat [-q TEXT]`: one answer to -q, or a line-by-line
// echo of stdin until EOF.
func runChat(args []string) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	q := fs.String("q", "", "ask once and exit")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *q != "" {
		fmt.Printf("hermes: %s\n", answer(*q))
		return exitOK
	}
	return echo(os.Stdin, os.Stdout)
}

// echo answers each line of in until EOF.
func echo(in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		fmt.Fprintf(out, "hermes: %s\n", answer(sc.Text()))
	}
	return exitOK
}

// answer is the fake agent's whole intelligence.
func answer(q string) string {
	return "you said " + strings.TrimSpace(q)
}
