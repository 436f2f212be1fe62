package store

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocalFile(t *testing.T) {
	t.Parallel()
	roots := []string{"/srv/site", "/srv/site/blog", "/home/me/a b"}
	tests := []struct {
		url, root, rel string
		ok             bool
	}{
		{"file:///srv/site/", "/srv/site", "", true},
		{"file:///srv/site", "/srv/site", "", true},
		{"file:///srv/site/a/b.html", "/srv/site", "a/b.html", true},
		{"file:///srv/site/a/", "/srv/site", "a/", true},
		{"file:///srv/site/blog/post.html", "/srv/site/blog", "post.html", true},
		{"file:///home/me/a%20b/x.html", "/home/me/a b", "x.html", true},
		{"file:///srv/site/x.css?v=3", "/srv/site", "x.css", true},
		// Climbing is resolved inside the root, however it is spelled.
		{"file:///srv/site/a/..%2F..%2F..%2Fetc%2Fpasswd", "/srv/site", "etc/passwd", true},
		{"file:///srv/site/%2e%2e/%2e%2e/etc/passwd", "/srv/site", "etc/passwd", true},
		{"file:///srv/site/../../etc/passwd", "/srv/site", "etc/passwd", true},
		{"file:///srv/sitemap.html", "", "", false},
		{"file:///etc/passwd", "", "", false},
		{"file://elsewhere/srv/site/x", "", "", false},
		{"https://srv/site/x", "", "", false},
	}
	for _, tt := range tests {
		root, rel, ok := LocalFile(roots, tt.url)
		if root != tt.root || rel != tt.rel || ok != tt.ok {
			t.Errorf("LocalFile(%q) = %q, %q, %v; want %q, %q, %v", tt.url, root, rel, ok, tt.root, tt.rel, tt.ok)
		}
	}
}

func TestRootURL(t *testing.T) {
	t.Parallel()
	for dir, want := range map[string]string{
		"/srv/site":   "file:///srv/site/",
		"/srv/site/":  "file:///srv/site/",
		"/home/a b":   "file:///home/a%20b/",
		"/":           "file:///",
		"/x/%2e#?.d/": "file:///x/%252e%23%3F.d/",
	} {
		if got := RootURL(dir); got != want {
			t.Errorf("RootURL(%q) = %q, want %q", dir, got, want)
		}
		if root, rel, ok := LocalFile([]string{dir}, RootURL(dir)); !ok || rel != "" || root != dir {
			t.Errorf("LocalFile(RootURL(%q)) = %q, %q, %v", dir, root, rel, ok)
		}
	}
}

// FuzzLocalFile holds the directory path resolver to its promise: whatever
// URL a page makes us resolve, the file it names is inside its root.
func FuzzLocalFile(f *testing.F) {
	f.Add("/srv/site", "file:///srv/site/a/..%2F..%2Fetc%2Fpasswd")
	f.Add("/srv/site", "file:///srv/site/%2E%2E/x")
	f.Add("/srv/site", "file:///srv/site/a\\..\\..\\x")
	f.Add("/a b", "file:///a%20b/..%00/x")
	f.Add("/", "file:///../../x")
	f.Fuzz(func(t *testing.T, root, u string) {
		if !filepath.IsAbs(root) {
			return
		}
		root = filepath.Clean(root)
		got, rel, ok := LocalFile([]string{root}, u)
		if !ok {
			return
		}
		if got != root {
			t.Fatalf("root %q for the only root %q", got, root)
		}
		if p := strings.TrimSuffix(rel, "/"); p != "" && (path.Clean(p) != p || strings.HasPrefix(p, "/")) {
			t.Fatalf("rel %q of %q is not clean", rel, u)
		}
		for _, seg := range strings.Split(rel, "/") {
			if seg == ".." {
				t.Fatalf("rel %q of %q climbs", rel, u)
			}
		}
		full := filepath.Join(root, filepath.FromSlash(rel))
		if r, err := filepath.Rel(root, full); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			t.Fatalf("%q names %q, outside %q", u, full, root)
		}
		if pu, err := url.Parse(u); err != nil || pu.Scheme != "file" {
			t.Fatalf("%q is not a file: URL but was resolved", u)
		}
	})
}
