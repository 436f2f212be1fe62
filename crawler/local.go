package crawler

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/linkpatrol/linkpatrol/rules"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// site is one directory checked as a built site. Its files are read
// straight from disk: no HTTP, no politeness (a stat costs no host
// anything), no status code that no server sent.
type site struct {
	dir string // absolute, as given
	// url is the canonical file: URL of dir: its real absolute path, so
	// another directory is another site with its own history.
	url string
	// published is where the site's pages are served: file:/// (the root
	// of a web server), or --base-url. A page's links are resolved against
	// its published URL, so /x means the site's /x, .. stops at the site's
	// root, and absolute URLs of the production site are its files.
	published string
	root      *os.Root // open while a pass runs
	reads     atomic.Int64
	bytes     atomic.Int64
}

func newSites(dirs []string, baseURL *url.URL) []*site {
	published := "file:///"
	if baseURL != nil {
		published = rules.Canonicalize(baseURL).String()
		published = published[:strings.LastIndexByte(published, '/')+1]
	}
	out := make([]*site, 0, len(dirs))
	for _, d := range dirs {
		out = append(out, &site{dir: d, url: DirURL(d), published: published})
	}
	return out
}

func (c *Crawler) openSites() error {
	for _, s := range c.sites {
		r, err := os.OpenRoot(s.dir)
		if err != nil {
			c.closeSites()
			return fmt.Errorf("open the checked directory: %w", err)
		}
		s.root = r
	}
	return nil
}

func (c *Crawler) closeSites() {
	for _, s := range c.sites {
		if s.root != nil {
			s.root.Close()
			s.root = nil
		}
	}
}

// siteOf returns the checked directory that holds the file: URL u and the
// path of u below it (see store.LocalFile).
func (c *Crawler) siteOf(u string) (*site, string, bool) {
	if len(c.sites) == 0 || !strings.HasPrefix(u, "file:") {
		return nil, "", false
	}
	root, rel, ok := store.LocalFile(c.cfg.Roots, u)
	if !ok {
		return nil, "", false
	}
	for _, s := range c.sites {
		if s.dir == root {
			return s, rel, true
		}
	}
	return nil, "", false
}

// publishedURL is where page, a file of s, is served, for resolving its
// links: file:///a/b.html, or https://example.com/docs/a/b.html.
func (s *site) publishedURL(page *url.URL) *url.URL {
	p := page.String()
	if !strings.HasPrefix(p, s.url) {
		return page
	}
	pub, err := url.Parse(s.published + p[len(s.url):])
	if err != nil {
		return page
	}
	return pub
}

// local maps a resolved link of one of s's pages back into the directory
// when it lies on the published site, and leaves any other URL alone. A
// directory's index.html is the directory, as a static host serves it,
// so dir/index.html#x and dir/#x are one page with one set of anchors.
func (s *site) local(u *url.URL) *url.URL {
	var cu string
	if p := u.EscapedPath(); s.published == "file:///" && !strings.Contains(p, "%") {
		if u.Scheme != "file" || u.Host != "" {
			return u
		}
		// Resolved against file:///, with no escape that could hide a dot
		// segment (%2E%2E climbs once canonical, which must happen here,
		// below the site's root): only the path and query matter, and
		// the rules canonicalize the result anyway.
		cu = "file://" + p
		if u.RawQuery != "" {
			cu += "?" + u.RawQuery
		}
	} else {
		cu = rules.Canonicalize(u).String()
	}
	var l string
	switch {
	case strings.HasPrefix(cu, s.published):
		l = s.url + cu[len(s.published):]
	case cu+"/" == s.published:
		l = s.url
	default:
		return u
	}
	lu, err := url.Parse(foldIndex(l))
	if err != nil {
		return u
	}
	s.slashDir(lu)
	lu.Fragment, lu.RawFragment = u.Fragment, u.RawFragment
	return lu
}

// slashDir adds the slash to a link to a directory written without one
// (guide, guide#setup), so it is the same URL as guide/ and its fragments
// are checked against guide/index.html. Only a last segment without a dot
// is looked at: one stat per such link, while x.html costs nothing. A
// directory named v1.2 still works when read (see readLocal), only its
// fragments go unchecked.
func (s *site) slashDir(u *url.URL) {
	if s.root == nil || strings.HasSuffix(u.Path, "/") || strings.Contains(path.Base(u.Path), ".") {
		return
	}
	_, rel, ok := store.LocalFile([]string{s.dir}, u.String())
	if !ok || rel == "" {
		return
	}
	if st, _, _, err := s.stat(rel); err == nil && st.IsDir() {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
}

// Local verdicts, as the report names them.
const (
	errNoFile     = "no such file"
	errNoIndex    = "no index.html"
	errOutside    = "outside the checked directory"
	errNotRegular = "not a regular file"
	errDangling   = "dangling symlink"
)

// readLocal resolves a file: URL of a checked directory: one stat for a
// link that is only checked, a read for a page to parse. Only regular
// files inside the root are read: a symlink leading out of it is looked
// up (it works, as a web server serves it) but never opened, and a named
// pipe, a device or a socket is refused with a reason (a pipe would block
// the run forever).
func (c *Crawler) readLocal(t task) fetched {
	f := fetched{local: true, finalURL: t.URL}
	f.reached = true
	s, rel, ok := c.siteOf(t.URL)
	if !ok || s.root == nil {
		f.errClass = errOutside
		return f
	}
	s.reads.Add(1)
	c.stats.requests.Add(1)
	name := strings.TrimSuffix(rel, "/")
	if name == "" {
		name = "."
	}
	st, name, outside, err := s.stat(name)
	if err != nil {
		f.errClass, f.note = localError(err)
		return f
	}
	if st.IsDir() {
		if !strings.HasSuffix(rel, "/") && rel != "" {
			// A static host answers dir with dir/ (its links resolve
			// against dir/): the page is parsed there, once.
			f.finalURL = dirURL(t.URL)
			return f
		}
		name = path.Join(name, "index.html")
		if st, name, outside, err = s.stat(name); err != nil {
			f.errClass, f.note = localError(err)
			if f.errClass == errNoFile {
				f.errClass = errNoIndex
			}
			return f
		}
	}
	if !st.Mode().IsRegular() {
		f.errClass = notRegular(st.Mode())
		return f
	}
	f.size = st.Size()
	// Go's table says text/html; charset=utf-8 without looking; a static
	// host sends plain text/html and lets the page's <meta charset> say.
	f.contentType, _, _ = strings.Cut(mime.TypeByExtension(path.Ext(name)), ";")
	if outside != "" {
		// Served, so it works; but only what the user named is read:
		// a symlink to /proc/self/environ or ~/.netrc in a pull request
		// must not feed its text to the link extractor.
		f.note = store.LinkedOutNote + outside + ": it exists, and is not read"
		if parsable(f.contentType) {
			f.note += ", so links in it are not checked"
		}
		return f
	}
	// A page, or a stylesheet, is read whatever the link was (an <img> or
	// a <link> to a page parses it, as over HTTP); anything else is only
	// looked at, or sniffed when its name says nothing.
	if f.contentType != "" && !parsable(f.contentType) {
		return f
	}
	if c.decision(&t).Action != rules.Parse || !c.mayParse(t.Depth) {
		return f
	}
	body, truncated, ct, err := s.read(name, c.cfg.MaxSize, f.contentType)
	if err != nil {
		f.errClass, f.note = localError(err)
		return f
	}
	s.bytes.Add(int64(len(body)))
	f.contentType = ct
	if parsable(ct) {
		f.body, f.truncated, f.size = body, truncated, int64(len(body))
	}
	return f
}

// stat looks name up inside the root, following symlinks that stay in it.
// os.Root refuses any path that passes outside the root, even one that
// comes back in (a symlink to ../site/x, or to the root's absolute path):
// those are resolved here and looked up again by their real path, which
// the root checks again. A symlink whose target lies outside the root is
// what a web server serves too (Debian's docs link their scripts to
// /usr/share/javascript): its target is looked up, never opened, and
// outside is its real path. A symlink to nothing is errDangling.
func (s *site) stat(name string) (st fs.FileInfo, in, outside string, err error) {
	st, err = s.root.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		if li, lerr := s.root.Lstat(name); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			return nil, name, "", s.dangling(name)
		}
	}
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) {
		return st, name, "", err
	}
	full := filepath.Join(s.dir, filepath.FromSlash(name))
	real, err := filepath.EvalSymlinks(full)
	if errors.Is(err, fs.ErrNotExist) {
		if li, lerr := os.Lstat(full); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			return nil, name, "", s.dangling(name)
		}
	}
	if err != nil {
		return nil, name, "", err
	}
	realRoot, err := filepath.EvalSymlinks(s.dir)
	if err != nil {
		return nil, name, "", err
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		// Only looked up: whatever it is (a device, /proc), nothing
		// outside the root is opened.
		st, err = os.Stat(real)
		return st, name, real, err
	}
	in = filepath.ToSlash(rel)
	st, err = s.root.Stat(in)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		err = errOutsideRoot
	}
	return st, in, "", err
}

// dangling is the error for name, a symlink whose target does not exist,
// naming the target as the link says it.
func (s *site) dangling(name string) error {
	to, err := os.Readlink(filepath.Join(s.dir, filepath.FromSlash(name)))
	if err != nil {
		return danglingError{}
	}
	return danglingError{to: to}
}

type danglingError struct{ to string }

func (e danglingError) Error() string { return errDangling }

// note says where the symlink leads, for the report.
func (e danglingError) note() string {
	if e.to == "" {
		return ""
	}
	return "a symlink to " + e.to + ", which does not exist"
}

var errOutsideRoot = errors.New(errOutside)

// read reads a regular file of the root up to max bytes. It opens without
// blocking and checks the opened file again, so a file swapped for a pipe
// after the stat cannot hang the run. An unknown type is sniffed.
func (s *site) read(name string, max int64, contentType string) ([]byte, bool, string, error) {
	fh, err := s.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, "", err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, false, "", err
	}
	if !st.Mode().IsRegular() {
		return nil, false, "", notRegularError{st.Mode()}
	}
	// The size is known: one allocation and one read, where a growing
	// buffer would copy a large page several times.
	body := make([]byte, min(st.Size(), max)+1)
	n, err := io.ReadFull(fh, body)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, false, "", err
	}
	body = body[:n]
	truncated := int64(n) > max
	if truncated {
		body = body[:max]
	}
	if contentType == "" {
		contentType = http.DetectContentType(body)
	}
	return body, truncated, contentType, nil
}

type notRegularError struct{ mode fs.FileMode }

func (e notRegularError) Error() string { return notRegular(e.mode) }

func notRegular(m fs.FileMode) string {
	kind := "special file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		kind = "named pipe"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		kind = "device"
	case m&fs.ModeSocket != 0:
		kind = "socket"
	}
	return errNotRegular + " (" + kind + ")"
}

// localError names why a file could not be looked at, and says more
// when there is more to say.
func localError(err error) (class, note string) {
	var nr notRegularError
	var dl danglingError
	switch {
	case errors.As(err, &dl):
		return errDangling, dl.note()
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return errNoFile, ""
	case errors.Is(err, errOutsideRoot):
		return errOutside, ""
	case errors.As(err, &nr):
		return nr.Error(), ""
	case errors.Is(err, fs.ErrPermission):
		return "permission denied", ""
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return "unreadable: " + err.Error(), ""
}

// dirURL adds the slash that makes u a directory, before any query.
func dirURL(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i] + "/" + u[i:]
	}
	return u + "/"
}

// localStats are the checked directories as rows of the -v host table.
func (c *Crawler) localStats() []throttle.HostStats {
	var out []throttle.HostStats
	for _, s := range c.sites {
		out = append(out, throttle.HostStats{Key: s.dir, Requests: s.reads.Load(), Bytes: s.bytes.Load()})
	}
	return out
}
