package main

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// runTUI is `hermes --tui`: a tiny full-screen program. It clears the
// screen and draws one line with the terminal size it sees, whether it is
// the terminal's foreground process group, and TERM; it redraws on every
// SIGWINCH. Echo is off, as in any TUI; Ctrl-C (SIGINT from the terminal)
// ends it with the default action, exit status 130. A line "q" ends it
// with 0.
//
// Every line it draws starts with "fake-tui ", so a test can tell that
// nothing else reached the terminal.
func runTUI() int {
	saved, err := unix.IoctlGetTermios(0, unix.TCGETS)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hermes --tui: stdin is not a terminal; run with docker run -it")
		return exitUsage
	}
	noEcho := *saved
	noEcho.Lflag &^= unix.ECHO
	unix.IoctlSetTermios(0, unix.TCSETS, &noEcho)
	restore := func() { unix.IoctlSetTermios(0, unix.TCSETS, saved) }

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGWINCH, syscall.SIGINT, syscall.SIGTERM)
	lines := make(chan string)
	go readLines(lines)

	draw("first")
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGWINCH {
				draw("redraw")
				continue
			}
			restore()
			dieOf(s.(syscall.Signal))
		case l, ok := <-lines:
			if !ok || l == "q" {
				restore()
				fmt.Print("\x1b[2J\x1b[H")
				return exitOK
			}
		}
	}
}

// draw clears the screen and shows what the TUI sees.
func draw(why string) {
	ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ)
	size := "unknown"
	if err == nil {
		size = fmt.Sprintf("%dx%d", ws.Col, ws.Row)
	}
	fg := "no"
	if pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && pgrp == unix.Getpgrp() {
		fg = "yes"
	}
	fmt.Printf("\x1b[2J\x1b[Hfake-tui size=%s %s fg=%s TERM=%s\n", size, why, fg, os.Getenv("TERM"))
}

// readLines sends each line typed on stdin, then closes lines at EOF.
func readLines(lines chan<- string) {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		lines <- sc.Text()
	}
	close(lines)
}

// dieOf ends the process by sig with the default action, so its parent
// sees "killed by sig" (exit status 128+sig), as for a program that never
// caught it.
func dieOf(sig syscall.Signal) {
	signal.Reset(sig)
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second) // not reached: the signal ends the process
	os.Exit(128 + int(sig))
}
