package config

import (
	"errors"
	"strconv"
	"strings"
)

// SplitHostPort splits the address of a tcp readiness probe, host:port or
// [host]:port (an IPv6 literal), into host (brackets removed) and a port in
// 1..65535. The host may be empty ("":9119 probes the loopback address).
func SplitHostPort(s string) (host string, port uint16, err error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, errors.New("missing port")
	}
	host, ps := s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", 0, errors.New("missing ] after an IPv6 address")
		}
		host = host[1 : len(host)-1]
	} else if strings.ContainsAny(host, ":[]") {
		return "", 0, errors.New("an IPv6 address needs brackets: [::1]:9119")
	}
	p, perr := strconv.ParseUint(ps, 10, 16)
	if perr != nil || p == 0 {
		return "", 0, errors.New("port " + strconv.Quote(ps) + " is not a number in 1..65535")
	}
	return host, uint16(p), nil
}
