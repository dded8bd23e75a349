package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// runProfile is `hermes profile create|delete|list`.
func runProfile(args []string) int {
	if len(args) == 0 {
		return usage("profile needs create, delete or list")
	}
	switch args[0] {
	case "list":
		return listProfiles()
	case "create", "delete":
		if len(args) < 2 {
			return usage("profile " + args[0] + " needs a name")
		}
		name := args[1]
		if !profileRE.MatchString(name) || len(name) > 64 { // as hermes_cli/profiles.py allows
			fmt.Fprintf(os.Stderr, "✗ invalid profile name %q: use a-z, 0-9, _ and -\n", name)
			return exitUsage
		}
		if args[0] == "create" {
			return createProfile(name)
		}
		return deleteProfile(name, slices.Contains(args[2:], "--yes") || slices.Contains(args[2:], "-y"))
	}
	return usage("unknown profile command " + args[0])
}

// createProfile makes the profile dir with its SOUL.md (what makes it a
// real profile for the boot reconcile), then registers its gateway slot
// down: `hsvc register gateway NAME --down`. A failed registration is a
// warning; creating the profile never fails because of the supervisor.
func createProfile(name string) int {
	if name == "default" {
		fmt.Fprintln(os.Stderr, "✗ 'default' is the root profile; it always exists")
		return exitFailed
	}
	dir := profileDir(name)
	if exists(filepath.Join(dir, "SOUL.md")) {
		fmt.Fprintf(os.Stderr, "✗ profile %s already exists\n", name)
		return exitFailed
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "✗ create profile %s: %v\n", name, err)
		return exitFailed
	}
	soul := fmt.Sprintf("# %s\n\nA fake hermes profile for hinit's container tests.\n", name)
	if err := os.WriteFile(filepath.Join(dir, "SOUL.md"), []byte(soul), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "✗ create profile %s: %v\n", name, err)
		return exitFailed
	}
	if underHinit() {
		if r := callHsvc("register", "gateway", name, "--down"); r.code != 0 {
			fmt.Fprintf(os.Stderr, "⚠ Could not register the gateway service: %s\n", r.stderr)
		}
	}
	fmt.Printf("✓ Created profile %s\n", name)
	return exitOK
}

// deleteProfile stops and removes the profile's gateway slot
// (`hsvc unregister gateway-NAME --wait`, which writes the planned-stop
// marker first), then removes the profile dir.
func deleteProfile(name string, yes bool) int {
	if name == "default" {
		fmt.Fprintln(os.Stderr, "✗ the default profile cannot be deleted")
		return exitFailed
	}
	dir := profileDir(name)
	if !exists(dir) {
		fmt.Fprintf(os.Stderr, "✗ no profile %s\n", name)
		return exitFailed
	}
	if !yes {
		fmt.Fprintf(os.Stderr, "✗ deleting profile %s removes %s; pass --yes\n", name, dir)
		return exitFailed
	}
	if underHinit() {
		r := callHsvc("unregister", "gateway-"+name, "--wait")
		if r.code != 0 && r.code != hsvcNoService {
			fmt.Fprintf(os.Stderr, "✗ could not stop gateway-%s: %s\n", name, r.stderr)
			return exitFailed
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(os.Stderr, "✗ delete profile %s: %v\n", name, err)
		return exitFailed
	}
	fmt.Printf("✓ Deleted profile %s\n", name)
	return exitOK
}

// listProfiles prints default and every profile dir that holds SOUL.md.
func listProfiles() int {
	fmt.Println("default")
	ents, _ := os.ReadDir(filepath.Join(hermesHome(), "profiles"))
	for _, e := range ents {
		if exists(filepath.Join(profileDir(e.Name()), "SOUL.md")) {
			fmt.Println(e.Name())
		}
	}
	return exitOK
}
