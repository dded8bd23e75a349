// Package docker tests the Hermes image in real containers: hinit as PID 1
// of the image the repository's Dockerfile builds, on an offline base with
// a fake hermes (tests/docker/fakehermes) that behaves as SPEC §1 says real
// hermes does. TestMain builds hinit-test:latest with build-test-image (or
// uses HINIT_TEST_IMAGE as it is when HINIT_TEST_NO_BUILD=1).
//
// Every container runs with --network none, carries this run's label and
// is removed with its anonymous volumes when its test ends, failed or not;
// TestMain removes whatever is left with the label. Without a Docker engine
// every test skips, and says why, loudly; scripts/test refuses to skip in
// CI (CI=true).
package docker

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// image is the image under test.
var image = envOr("HINIT_TEST_IMAGE", "hinit-test:latest")

// runLabel marks the containers and volumes of this test run.
var runLabel = fmt.Sprintf("org.hinit.test.run=%d-%d", os.Getpid(), time.Now().Unix())

// noEngine is why the suite skips; "" when an engine answers and the image
// is built.
var noEngine string

func TestMain(m *testing.M) {
	flag.Parse()
	// Most of the time goes to waiting for containers, not CPU: run more
	// of them at once than -parallel's default of GOMAXPROCS.
	if !flagSet("test.parallel") {
		flag.Set("test.parallel", "8")
	}
	if err := engine(); err != nil {
		noEngine = err.Error()
		fmt.Fprintf(os.Stderr, "\n!!! tests/docker: SKIPPING EVERY CONTAINER TEST: %s\n\n", noEngine)
		os.Exit(m.Run())
	}
	if os.Getenv("HINIT_TEST_NO_BUILD") != "1" {
		if err := buildImage(); err != nil {
			fmt.Fprintf(os.Stderr, "tests/docker: %v\n", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	sweep()
	os.Exit(code)
}

// engine checks that a Docker engine answers.
func engine() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("no Docker engine answers (docker version: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// buildImage runs build-test-image, printing its output only on failure.
func buildImage() error {
	start := time.Now()
	cmd := exec.Command("./build-test-image")
	cmd.Env = append(os.Environ(), "HINIT_TEST_IMAGE="+image)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("build-test-image: %v\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "tests/docker: %s built in %v\n", image, time.Since(start).Round(time.Millisecond))
	return nil
}

// sweep removes what this run left behind (a test killed by -timeout).
func sweep() {
	out, _ := exec.Command("docker", "ps", "-aq", "--filter", "label="+runLabel).Output()
	if ids := strings.Fields(string(out)); len(ids) > 0 {
		exec.Command("docker", append([]string{"rm", "-f", "-v"}, ids...)...).Run()
	}
	out, _ = exec.Command("docker", "volume", "ls", "-q", "--filter", "label="+runLabel).Output()
	if ids := strings.Fields(string(out)); len(ids) > 0 {
		exec.Command("docker", append([]string{"volume", "rm", "-f"}, ids...)...).Run()
	}
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
