package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

// runDashboard is `hermes dashboard --host H --port P --no-open`: an HTTP
// server on H:P. Like the real dashboard after hermes#49567 it refuses a
// non-loopback bind without an auth configuration with exit 78 (EX_CONFIG),
// which hinit must not restart. SIGTERM ends it with exit 0.
func runDashboard(args []string) int {
	fs := flag.NewFlagSet("dashboard", flag.ContinueOnError)
	host := fs.String("host", "127.0.0.1", "address to bind")
	port := fs.String("port", "9119", "port to bind")
	fs.Bool("no-open", false, "do not open a browser")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if !loopback(*host) && !authConfigured() {
		fmt.Fprintf(os.Stderr, "dashboard: refusing to bind %s without authentication "+
			"(set HERMES_DASHBOARD_BASIC_AUTH_USERNAME and _PASSWORD); exit 78\n", *host)
		return exitConfig
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, *port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "dashboard: %v\n", err)
		return exitFailed
	}
	fmt.Printf("dashboard listening on http://%s pid=%d\n", ln.Addr(), os.Getpid())
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "fake hermes dashboard pid=%d\n", os.Getpid())
	}))
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	fmt.Println("dashboard: stopping")
	return exitOK
}

// loopback reports whether host is a loopback address or name.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authConfigured reports whether the dashboard has a way to authenticate.
func authConfigured() bool {
	return (os.Getenv("HERMES_DASHBOARD_BASIC_AUTH_USERNAME") != "" && os.Getenv("HERMES_DASHBOARD_BASIC_AUTH_PASSWORD") != "") ||
		os.Getenv("HERMES_DASHBOARD_OAUTH_CLIENT_ID") != ""
}
