package store

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// RootURL is the file: URL under which the files of dir, an absolute
// directory checked as a built site, are known: its own absolute path, so
// that two directories never share a URL, and so never a history.
func RootURL(dir string) string {
	p := filepath.ToSlash(dir)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows path, C:/site
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// LocalFile says which file of a checked directory the file: URL u names:
// the root among roots (absolute directories) that holds it, and the path
// below that root, slash-separated, cleaned and never climbing out of it.
// However u is written (dot segments, %2F, %2E), rel is
// resolved inside root as a static web server would resolve it, so what
// is read and what is reported are the same file. rel ends in "/" when u
// names a directory, and is "" for the root itself. With roots nested, the
// deepest holding u wins.
func LocalFile(roots []string, u string) (root, rel string, ok bool) {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "file" || (pu.Host != "" && pu.Host != "localhost") {
		return "", "", false
	}
	p := pu.Path
	for _, r := range roots {
		prefix := strings.TrimSuffix(filepath.ToSlash(r), "/") + "/"
		if !strings.HasPrefix(prefix, "/") {
			prefix = "/" + prefix
		}
		if (strings.HasPrefix(p, prefix) || p+"/" == prefix) && len(r) > len(root) {
			root, rel, ok = r, strings.TrimPrefix(p, strings.TrimSuffix(prefix, "/")), true
		}
	}
	if !ok {
		return "", "", false
	}
	dir := strings.HasSuffix(rel, "/") || rel == ""
	if filepath.Separator == '\\' {
		// There a backslash would climb out of the root after Clean.
		rel = strings.ReplaceAll(rel, `\`, "/")
	}
	rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
	if dir && rel != "" {
		rel += "/"
	}
	return root, rel, true
}

// Dirs are the directories of a check of built sites: Roots, or Root
// alone in a pass recorded before there could be several.
func (p Pass) Dirs() []string {
	if len(p.Roots) > 0 {
		return p.Roots
	}
	if p.Root != "" {
		return []string{p.Root}
	}
	return nil
}
