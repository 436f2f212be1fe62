package crawler_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
	"github.com/linkpatrol/linkpatrol/throttle"
)

// Servers send "deflate" unasked (zlib, or raw deflate from old IIS) and
// "gzip, gzip"; Go's transport undoes only a lone gzip it asked for. Read
// as they came, a page was "ok" with its links silently lost, and a
// robots.txt's Disallow was read as no rules (qa6 Q7).
func TestContentEncodingsAreUndone(t *testing.T) {
	t.Parallel()
	encode := map[string]func([]byte) []byte{
		"zlib": func(b []byte) []byte {
			var buf bytes.Buffer
			w := zlib.NewWriter(&buf)
			w.Write(b)
			w.Close()
			return buf.Bytes()
		},
		"rawdeflate": func(b []byte) []byte {
			var buf bytes.Buffer
			w, _ := flate.NewWriter(&buf, flate.DefaultCompression)
			w.Write(b)
			w.Close()
			return buf.Bytes()
		},
		"double": func(b []byte) []byte { return gz(gz(b)) },
		"br": func(b []byte) []byte {
			var buf bytes.Buffer
			w := brotli.NewWriter(&buf)
			w.Write(b)
			w.Close()
			return buf.Bytes()
		},
		"zstd": func(b []byte) []byte {
			w, _ := zstd.NewWriter(nil)
			return w.EncodeAll(b, nil)
		},
		"unknown": func(b []byte) []byte { return b }, // labelled x-unknown, which we cannot undo
	}
	coding := map[string]string{"zlib": "deflate", "rawdeflate": "deflate", "double": "gzip, gzip", "br": "br", "zstd": "zstd", "unknown": "x-unknown"}
	var rec recorder
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "deflate")
		w.Write(encode["zlib"]([]byte("User-agent: *\nDisallow: /private/\n")))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/private/secret">s</a>`)
		for name := range encode {
			fmt.Fprintf(w, `<a href="/%s">%s</a>`, name, name)
		}
	})
	for name, enc := range encode {
		mux.HandleFunc("/"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", coding[name])
			w.Write(enc([]byte(`<html><body><a href="/dead/` + name + `">d</a></body></html>`)))
		})
	}
	srv := httptest.NewServer(rec.wrap(mux))
	defer srv.Close()
	db := openDB(t)
	politePass(t, db, srv.URL+"/", throttle.Settings{}, context.Background())
	for _, p := range rec.paths {
		if strings.HasPrefix(p, "/private/") {
			t.Errorf("requested %s, which the deflated robots.txt disallows", p)
		}
	}
	for _, name := range []string{"zlib", "rawdeflate", "double", "br", "zstd"} {
		r, ok, err := db.Get(srv.URL + "/dead/" + name)
		if err != nil || !ok || r.Verdict != store.VerdictBroken {
			t.Errorf("the link on the %s page: %+v (found %v, %v), want broken: the page's body was not undone", name, r, ok, err)
		}
	}
	r, _, _ := db.Get(srv.URL + "/unknown")
	if r.Verdict != store.VerdictUnverifiable || r.Error != "unsupported encoding" || r.Note != "could not decode (Content-Encoding x-unknown)" {
		t.Errorf("a page in an encoding we cannot undo: %+v, want unverifiable: unsupported encoding, the coding said, not ok with no links", r)
	}
	pass, _, err := db.LastPass()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(db, pass.ID, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.SectionHelp(store.VerdictUnverifiable); strings.Contains(got, "would not let a robot look") || !strings.Contains(got, "could not read or decode") {
		t.Errorf("Unverifiable heading %q: nothing refused a robot; linkpatrol could not decode the page (qa10 Q5)", got)
	}
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}
