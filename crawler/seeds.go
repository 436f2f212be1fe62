package crawler

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
)

// FileURL is the canonical file: URL of the absolute path p, the form every
// URL of a checked directory takes; a directory's index.html is the
// directory itself, as a static host serves it.
func FileURL(p string) string {
	u, err := url.Parse(store.RootURL(p))
	if err != nil {
		return ""
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return foldIndex(rules.Canonicalize(u).String())
}

// DirURL is the canonical file: URL of the absolute directory d, ending in
// a slash: the URL of a checked directory, and the prefix of its files'.
func DirURL(d string) string {
	u, err := url.Parse(store.RootURL(d))
	if err != nil {
		return ""
	}
	return rules.Canonicalize(u).String()
}

// foldIndex drops index.html from the path of a file: URL.
func foldIndex(l string) string {
	p, q, hasQuery := strings.Cut(l, "?")
	if !strings.HasSuffix(p, "/index.html") {
		return l
	}
	l = strings.TrimSuffix(p, "index.html")
	if hasQuery {
		l += "?" + q
	}
	return l
}

// isHTMLName says whether a file name is a page by its extension, the way a
// static host decides what it serves as text/html.
func isHTMLName(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm", ".xhtml":
		return true
	}
	return false
}

// HTMLFiles lists every page below dir (files named .html, .htm or .xhtml),
// so that pages no link reaches (orphans, an entry page with another name)
// are checked too. Symlinked directories are not entered; a symlinked or
// special file is listed, and reading it later says what it is.
func HTMLFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		if !d.IsDir() && isHTMLName(d.Name()) {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// HasGlob says whether a path argument is a pattern rather than a name.
func HasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// Glob lists the files matching pattern, where * and ? stay within one
// path segment and a ** segment matches any number of directories (none
// included): public/**/*.html is every page of public. For shells without
// globstar, and for patterns quoted on purpose. base is the directory
// before the first wildcard.
func Glob(pattern string) (base string, files []string, err error) {
	pattern = filepath.ToSlash(filepath.Clean(pattern))
	segs := strings.Split(pattern, "/")
	fixed := 0
	for fixed < len(segs)-1 && !HasGlob(segs[fixed]) {
		fixed++
	}
	base = strings.Join(segs[:fixed], "/")
	switch {
	case base == "" && strings.HasPrefix(pattern, "/"):
		base = "/"
	case base == "":
		base = "."
	}
	rest := segs[fixed:]
	for _, s := range rest {
		if _, err := path.Match(s, ""); err != nil {
			return "", nil, fmt.Errorf("pattern %q: %w", pattern, err)
		}
	}
	base = filepath.FromSlash(base)
	err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		rel, err := filepath.Rel(base, p)
		if err != nil || rel == "." || d.IsDir() {
			return nil
		}
		if matchSegments(rest, strings.Split(filepath.ToSlash(rel), "/")) {
			files = append(files, p)
		}
		return nil
	})
	return base, files, err
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// Seeds are the URLs of files (absolute paths), sorted and without repeats.
func Seeds(files []string) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		if u := FileURL(f); u != "" {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
