package hsvc

import (
	"slices"
	"strings"

	"hinit/control"
)

// didYouMean returns " (did you mean X?)" for the candidate word most
// likely meant, each written with prefix, or "" when none is close enough.
func (c *cli) didYouMean(word string, candidates []string, prefix string) string {
	best := closest(word, candidates)
	if len(best) == 0 {
		return ""
	}
	for i := range best {
		best[i] = prefix + best[i]
	}
	return " (did you mean " + strings.Join(best, " or ") + "?)"
}

// closest picks what word was meant among candidates: the one candidate it
// begins (stat: status), else the template instance it names (x:
// gateway-x), else those one or two edits away (dashbord: dashboard) when
// the word is long enough for that to mean something.
func closest(word string, candidates []string) []string {
	var prefixed, instances, near []string
	bestDist := 3
	for _, cand := range candidates {
		if cand == word {
			return nil
		}
		if strings.HasPrefix(cand, word) {
			prefixed = append(prefixed, cand)
		}
		if strings.HasSuffix(cand, "-"+word) {
			instances = append(instances, cand)
		}
		d := distance(word, cand)
		if 2*d >= len(word) || d > bestDist {
			continue
		}
		if d < bestDist {
			near, bestDist = nil, d
		}
		near = append(near, cand)
	}
	for _, set := range [][]string{prefixed, instances, near} {
		if len(set) == 1 || len(set) == 2 {
			return slices.Clone(set)
		}
	}
	return nil
}

// distance is the Levenshtein distance of a and b (bytes: names are ASCII).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// noSuchService rewrites hinit's "no such service" answer with a guess at
// the name meant, from one status request made only on this error path
// (status lists every service, broken scandir entries included).
func (c *cli) noSuchService(err error, names []string) error {
	resp, serr := c.do(&control.Request{Verb: control.VerbStatus}, 0)
	if serr != nil {
		return err
	}
	known := make([]string, 0, len(resp.Services))
	for _, s := range resp.Services {
		known = append(known, s.Name)
	}
	for _, n := range names {
		if slices.Contains(known, n) {
			continue
		}
		if best := closest(n, known); len(best) > 0 {
			return exitf(control.CodeNoService, "no such service: %s; did you mean %s? (hsvc list shows the services)", n, strings.Join(best, " or "))
		}
		return err
	}
	return err
}
