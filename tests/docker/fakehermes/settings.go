package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// readConfig is a profile's config.yaml, or an empty one.
func readConfig(dir string) map[string]any {
	cfg := map[string]any{}
	if data, err := os.ReadFile(filepath.Join(dir, "config.yaml")); err == nil {
		yaml.Unmarshal(data, &cfg)
	}
	return cfg
}

// drainTimeout is hermes' restart_drain_timeout for the profile in dir:
// HERMES_RESTART_DRAIN_TIMEOUT, else agent.restart_drain_timeout of its
// config.yaml, else 0 (interrupt at once).
func drainTimeout(dir string) time.Duration {
	raw := strings.TrimSpace(os.Getenv("HERMES_RESTART_DRAIN_TIMEOUT"))
	if raw == "" {
		if agent, ok := readConfig(dir)["agent"].(map[string]any); ok {
			raw = strings.TrimSpace(toString(agent["restart_drain_timeout"]))
		}
	}
	secs, err := strconv.ParseFloat(raw, 64)
	if err != nil || secs < 0 {
		return 0
	}
	return time.Duration(secs * float64(time.Second))
}

// multiplexOn is hermes' multiplex_profiles: GATEWAY_MULTIPLEX_PROFILES
// when it holds a recognised word, else multiplex_profiles (top level or
// under gateway:) of the root config.yaml, else off.
func multiplexOn() bool {
	if on, ok := word(os.Getenv("GATEWAY_MULTIPLEX_PROFILES")); ok {
		return on
	}
	cfg := readConfig(hermesHome())
	v, ok := cfg["multiplex_profiles"]
	if gw, isMap := cfg["gateway"].(map[string]any); !ok && isMap {
		v = gw["multiplex_profiles"]
	}
	b, _ := v.(bool)
	return b
}

// standalone is hermes' profile_is_standalone: gateway.standalone of the
// profile's config.yaml, true or an on word.
func standalone(profile string) bool {
	gw, _ := readConfig(profileDir(profile))["gateway"].(map[string]any)
	switch v := gw["standalone"].(type) {
	case bool:
		return v
	case string:
		on, _ := word(v)
		return on
	}
	return false
}

// word reads hermes' boolean words (1/true/yes/on, 0/false/no/off); ok is
// false for anything else.
func word(s string) (on, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		b, _ := yaml.Marshal(x)
		return string(b)
	}
}
