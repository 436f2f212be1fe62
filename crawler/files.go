package crawler

import (
	"io/fs"
	"net/http"
	"os"
	"path"
)

// newFileTransport serves a built site from disk under file:///, so a site
// can be checked before it is deployed without opening a port, and its URLs
// stay the same from one run to the next (a loopback port would not).
func newFileTransport(root string) http.RoundTripper {
	return fileTransport{http.NewFileTransportFS(staticHostFS{os.DirFS(root)})}
}

// fileTransport drops the charset net/http's file server adds to every HTML
// file: it claims UTF-8 without looking, which would override a page's own
// <meta charset>. Static web servers send plain text/html and let the page
// say, so we do too.
type fileTransport struct{ http.RoundTripper }

func (t fileTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(req)
	if err == nil && resp.Header.Get("Content-Type") == "text/html; charset=utf-8" {
		resp.Header.Set("Content-Type", "text/html")
	}
	return resp, err
}

// staticHostFS answers like a typical static host: a directory is served by
// its index.html, and a directory without one is "not found" rather than a
// generated listing whose links would be crawled.
type staticHostFS struct{ fs.FS }

func (s staticHostFS) Open(name string) (fs.File, error) {
	f, err := s.FS.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		if _, err := fs.Stat(s.FS, path.Join(name, "index.html")); err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
	}
	return f, nil
}
