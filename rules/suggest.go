package rules

// DidYouMean returns the candidate closest to word by edit distance, or ""
// when none is close enough to be what was meant: a typo of a flag, a
// subcommand or a config key, not a different word.
func DidYouMean(word string, candidates []string) string {
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editDistance(word, c)
		if best == "" || d < bestDist {
			best, bestDist = c, d
		}
	}
	// A third of the word, at least 1 and at most 3 edits: "concurency"
	// is concurrency, but a word of one or two letters is not a typo of
	// anything ("b" is not "db").
	limit := min(max(len(word)/3, 1), 3)
	if len(word) < 3 {
		limit = 0
	}
	if best == "" || bestDist > limit {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, by bytes (keys and
// flags are ASCII).
func editDistance(a, b string) int {
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
