package report

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/linkpatrol/linkpatrol/store"
)

// FailOn says which of the listed problems make the exit code 1 (and which
// links that could not be verified make it 5), so that a CI job can fail
// on the site's own links while third-party rot is reported but not fatal.
type FailOn string

const (
	// FailBroken: broken links and missing fragments (the default); links
	// that could not be verified make the pass PARTLY CHECKED.
	FailBroken FailOn = "broken"
	// FailInternal: only broken links to the site's own hosts (or, for a
	// directory, its files) and missing fragments; of the links that could
	// not be verified, only the site's own make the pass PARTLY CHECKED.
	FailInternal FailOn = "internal"
	// FailAny: every problem, transient and unverifiable included.
	FailAny FailOn = "any"
	// FailNever: the exit code says only whether the pass finished.
	FailNever FailOn = "never"
)

// FailOnValues lists the accepted values, for help and errors.
func FailOnValues() []string {
	return []string{string(FailBroken), string(FailInternal), string(FailAny), string(FailNever)}
}

// ParseFailOn reads a --fail-on value; "" is the default.
func ParseFailOn(s string) (FailOn, error) {
	switch f := FailOn(strings.TrimSpace(s)); f {
	case "":
		return FailBroken, nil
	case FailBroken, FailInternal, FailAny, FailNever:
		return f, nil
	}
	return "", fmt.Errorf("%q: want one of %s", s, strings.Join(FailOnValues(), ", "))
}

// HasBroken reports whether what the report lists makes the exit code 1,
// by Options.FailOn. It follows OnlyNew and ReportAfter, so a cron job can
// fail only on what it shows. Permanent redirects never count.
func (r *Report) HasBroken() bool {
	on := r.Options.FailOn
	if on == FailNever {
		return false
	}
	for _, e := range r.Entries {
		switch {
		case on == FailAny && e.Record.Verdict.Problem():
			return true
		case e.Record.Verdict != store.VerdictBroken:
		case on != FailInternal || r.Internal(e.Record.URL):
			return true
		}
	}
	for _, m := range r.Fragments {
		if on != FailInternal || r.Internal(m.URL) {
			return true
		}
	}
	return false
}

// Internal says whether u belongs to the site checked: a file of the
// directory, or a URL on the host of a start URL (host aliases are folded
// into the start host before URLs are stored).
func (r *Report) Internal(u string) bool {
	if r.Pass.Root != "" {
		return strings.HasPrefix(u, "file:")
	}
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	for _, s := range r.Pass.StartURLs {
		if su, err := url.Parse(s); err == nil && strings.EqualFold(su.Host, pu.Host) {
			return true
		}
	}
	return false
}

// failHelp says which entries of a section make the exit code 1, or "".
// On a night a start URL could not be fetched the exit code is 4 whatever the
// sections hold, so saying a section makes it 1 would be false.
func (r *Report) failHelp(v store.Verdict) string {
	if r.StartFailure != "" {
		return ""
	}
	switch r.Options.FailOn {
	case FailNever:
		return ""
	case FailAny:
		return "these make the exit code 1"
	case FailInternal:
		if v == store.VerdictBroken {
			return "those on the site make the exit code 1"
		}
		if v == store.VerdictTransient || v == store.VerdictUnverifiable {
			return "those on the site make the exit code 5 if nothing worse applies"
		}
		return ""
	}
	switch v {
	case store.VerdictBroken:
		return "these make the exit code 1"
	case store.VerdictTransient, store.VerdictUnverifiable:
		return "these make the exit code 5 if nothing worse applies (--fail-on internal: only the site's own)"
	}
	return ""
}

// SectionHelp says in a few words what a section means and whether it
// fails the run, or "".
func (r *Report) SectionHelp(v store.Verdict) string {
	var what string
	switch v {
	case store.VerdictBroken:
		what = "dead links"
	case store.VerdictTransient:
		what = "server errors and timeouts; they may work next time"
		if len(r.Down) > 0 {
			what = "server errors, timeouts, and URLs not checked because their host stopped answering; they may work next time"
		}
	case store.VerdictUnverifiable:
		// Each cause named only when an entry has it: a page sent in an
		// encoding linkpatrol cannot decode is not a server refusing
		// (qa10 Q5).
		unread := func(e Entry) bool {
			return e.Record.Error == store.ErrorUnsupportedEncoding || e.Record.Error == store.ErrorMalformedHeader
		}
		var whys []string
		if slices.ContainsFunc(r.Entries, func(e Entry) bool {
			return e.Record.Verdict == v && !unread(e) && e.Record.Error != store.ErrorUnsupportedScheme
		}) {
			whys = append(whys, "the server would not let a robot look")
		}
		if slices.ContainsFunc(r.Entries, func(e Entry) bool { return e.Record.Verdict == v && unread(e) }) {
			whys = append(whys, "linkpatrol could not read or decode the answer")
		}
		if r.Summary.Unsupported > 0 {
			whys = append(whys, "the link's scheme cannot be checked")
		}
		if len(whys) == 0 {
			whys = append(whys, "the server would not let a robot look")
		}
		what = strings.Join(whys, ", or ")
	case store.VerdictSkipped:
		if r.Summary.Traps > 0 || r.Summary.Quota > 0 {
			return "not checked: held back by a limit (each names the setting that lets it through), or on purpose"
		}
		return "not checked on purpose"
	default:
		return ""
	}
	if f := r.failHelp(v); f != "" {
		return what + "; " + f
	}
	return what
}

// FragmentHelp says what the missing fragments are and whether they fail
// the run.
func (r *Report) FragmentHelp() string {
	const what = "the page exists but has no element with this id or name"
	if f := r.failHelp(store.VerdictBroken); f != "" {
		return what + "; " + f
	}
	return what
}
