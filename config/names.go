package config

import (
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaxNameLen is the longest service name: a scandir dir name that still
// fits a file name (255 bytes) once a writer adds ".tmp" to build it.
const MaxNameLen = 251

// Rules as they appear in messages.
const (
	nameRule     = "^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes"
	instanceRule = "^[a-z0-9][a-z0-9_-]*$, at most 251 bytes with the \"<template>-\" prefix"
)

// ValidName reports whether name may name a service (or a template):
// ^[a-z0-9][a-z0-9_.-]*$, at most MaxNameLen bytes. Such a name is safe as
// a single path element: no "/", no leading ".", never "." or "..".
func ValidName(name string) bool {
	return len(name) <= MaxNameLen && validChars(name, true)
}

// ValidProfile reports whether name may name a Hermes profile, and so a
// template instance: ^[a-z0-9][a-z0-9_-]*$ (no dot), at most MaxNameLen
// bytes.
func ValidProfile(name string) bool {
	return len(name) <= MaxNameLen && validChars(name, false)
}

// validInstance reports whether instance is valid and <template>-<instance>
// is a valid service name.
func validInstance(template, instance string) bool {
	return ValidProfile(instance) && len(template)+1+len(instance) <= MaxNameLen
}

func validChars(s string, dot bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '-' || dot && c == '.'):
		default:
			return false
		}
	}
	return true
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
