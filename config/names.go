package config

import (
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"hinit/svcname"
)

// MaxNameLen is the longest service name (svcname.MaxLen).
const MaxNameLen = svcname.MaxLen

// Rules as they appear in messages.
const (
	nameRule     = svcname.Rule
	instanceRule = "^[a-z0-9][a-z0-9_-]*$, at most 251 bytes with the \"<template>-\" prefix"
)

// ValidName reports whether name may name a service (or a template).
func ValidName(name string) bool { return svcname.Valid(name) }

// ValidProfile reports whether name may name a Hermes profile, and so a
// template instance.
func ValidProfile(name string) bool { return svcname.ValidProfile(name) }

// validInstance reports whether instance is valid and <template>-<instance>
// is a valid service name.
func validInstance(template, instance string) bool {
	return ValidProfile(instance) && len(template)+1+len(instance) <= MaxNameLen
}

// SignalByName returns the Linux signal named name, with or without the
// "SIG" prefix, in any case: "TERM", "SIGTERM" and "term" are SIGTERM.
// Numbers are not names and are refused.
func SignalByName(name string) (syscall.Signal, error) {
	upper := strings.ToUpper(name)
	if !strings.HasPrefix(upper, "SIG") {
		upper = "SIG" + upper
	}
	if sig := unix.SignalNum(upper); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("signal %q: %w", name, ErrUnknownSignal)
}

// signalName is the name of sig without "SIG", as Stop.Signal holds it.
func signalName(sig syscall.Signal) string {
	return strings.TrimPrefix(unix.SignalName(sig), "SIG")
}
