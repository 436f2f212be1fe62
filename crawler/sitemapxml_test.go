package crawler

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/linkpatrol/linkpatrol/store"
)

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const urlset = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url><loc>https://example.com/a</loc><lastmod>2026-11-01</lastmod></url>
  <url>
    <loc>
      https://example.com/b?x=1&amp;y=2
    </loc>
    <image:image><image:loc>https://example.com/photo.jpg</image:loc></image:image>
  </url>
  <url><loc>  </loc></url>
  <url><loc>https://example.com/c</loc></url>
</urlset>
`

func TestParseSitemap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		limit int
		kind  sitemapKind
		want  []sitemapEntry
		over  int // entries past the limit, counted
		err   string
	}{
		{
			name: "urlset", in: urlset, limit: 10, kind: sitemapURLSet,
			want: []sitemapEntry{{"https://example.com/a", 4}, {"https://example.com/b?x=1&y=2", 7}, {"https://example.com/c", 12}},
		},
		{
			name: "limit", in: urlset, limit: 1, kind: sitemapURLSet, over: 2,
			want: []sitemapEntry{{"https://example.com/a", 4}},
		},
		{
			name: "index",
			in: `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>https://example.com/s1.xml</loc></sitemap>
<sitemap><loc>https://example.com/s2.xml.gz</loc><lastmod>2026-11-01</lastmod></sitemap>
</sitemapindex>`,
			limit: 10, kind: sitemapIndex,
			want: []sitemapEntry{{"https://example.com/s1.xml", 2}, {"https://example.com/s2.xml.gz", 3}},
		},
		{
			name: "no namespace", in: `<urlset><url><loc>/relative</loc></url></urlset>`, limit: 10, kind: sitemapURLSet,
			want: []sitemapEntry{{"/relative", 1}},
		},
		{
			name: "loc outside an entry is not one", in: `<urlset><loc>https://x/1</loc><url><foo><loc>https://x/2</loc></foo></url></urlset>`,
			limit: 10, kind: sitemapURLSet,
		},
		{
			name: "an index's <url> is not an entry", in: `<sitemapindex><url><loc>https://x/1</loc></url></sitemapindex>`,
			limit: 10, kind: sitemapIndex,
		},
		{
			name: "other namespace", in: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:o="urn:other"><url><o:loc>https://x/1</o:loc></url></urlset>`,
			limit: 10, kind: sitemapURLSet,
		},
		{
			name: "declared charset", in: "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<urlset><url><loc>https://x/caf\xe9</loc></url></urlset>",
			limit: 10, kind: sitemapURLSet, want: []sitemapEntry{{"https://x/café", 2}},
		},
		{
			name: "after the root", in: `<urlset><url><loc>https://x/1</loc></url></urlset><urlset><url><loc>https://x/2</loc></url></urlset>`,
			limit: 10, kind: sitemapURLSet, want: []sitemapEntry{{"https://x/1", 1}},
		},
		{
			name: "syntax error keeps what came before", in: "<urlset>\n<url><loc>https://x/1</loc></url>\n<url><loc>https://x/2</lo></url>",
			limit: 10, kind: sitemapURLSet, want: []sitemapEntry{{"https://x/1", 2}}, err: "XML syntax error on line 3",
		},
		{name: "html", in: `<!doctype html><html><body><a href="/x">x</a></body></html>`, limit: 10, err: errNotSitemap.Error()},
		{name: "rss", in: `<rss version="2.0"><channel><link>https://x/</link></channel></rss>`, limit: 10, err: errNotSitemap.Error()},
		{name: "empty", in: ``, limit: 10, err: errNotSitemap.Error()},
		{name: "nested too deep", in: strings.Repeat("<urlset>", maxSitemapNesting+1), limit: 10, kind: sitemapURLSet, err: "nested more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parseSitemap(strings.NewReader(tt.in), tt.limit)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if doc.kind != tt.kind || doc.over != tt.over {
				t.Errorf("kind %d over %d, want %d %d", doc.kind, doc.over, tt.kind, tt.over)
			}
			if len(doc.entries) != len(tt.want) {
				t.Fatalf("entries %+v, want %+v", doc.entries, tt.want)
			}
			for i := range tt.want {
				if doc.entries[i] != tt.want[i] {
					t.Errorf("entry %d = %+v, want %+v", i, doc.entries[i], tt.want[i])
				}
			}
		})
	}
}

func TestReadSitemapGzip(t *testing.T) {
	t.Parallel()
	plain := []byte(urlset)
	for name, body := range map[string][]byte{
		"plain":       plain,
		"gzip":        gz(t, plain),
		"gzip twice":  gz(t, gz(t, plain)),
		"one byte at": plain, // read through iotest.OneByteReader below
	} {
		t.Run(name, func(t *testing.T) {
			var r io.Reader = bytes.NewReader(body)
			if name == "one byte at" {
				r = iotest.OneByteReader(r)
			}
			doc, err := readSitemap(r, 10, maxSitemapSize)
			if err != nil || len(doc.entries) != 3 || doc.truncated {
				t.Errorf("got %+v, %v; want the three entries", doc, err)
			}
		})
	}
	if _, err := readSitemap(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0}), 10, maxSitemapSize); err == nil {
		t.Error("a broken gzip stream must be an error")
	}
	// A network error is the reader's, not a syntax error.
	boom := errors.New("connection reset")
	if _, err := readSitemap(io.MultiReader(strings.NewReader("<urlset><url>"), iotest.ErrReader(boom)), 10, maxSitemapSize); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the read error", err)
	}
}

// A file over the size cap is read up to it and its entries so far kept,
// as a note, not an error; a gzip bomb stops at the same cap, which counts
// uncompressed bytes.
func TestReadSitemapCap(t *testing.T) {
	t.Parallel()
	const size = 64 << 10
	entry := "<url><loc>https://example.com/page</loc></url>\n"
	var big bytes.Buffer
	big.WriteString("<urlset>\n")
	for big.Len() < 4*size { // zipped, far under the cap
		big.WriteString(entry)
	}
	big.WriteString("</urlset>\n")
	want := (size - len("<urlset>\n")) / len(entry)
	for name, body := range map[string][]byte{"plain": big.Bytes(), "gzip": gz(t, big.Bytes())} {
		doc, err := readSitemap(bytes.NewReader(body), 1<<30, size)
		if err != nil || !doc.truncated || len(doc.entries) != want {
			t.Errorf("%s: truncated %v, %d entries, err %v; want truncated with %d entries", name, doc.truncated, len(doc.entries), err, want)
		}
	}
	exact := "<urlset>" + strings.Repeat(" ", size-len("<urlset></urlset>")) + "</urlset>"
	if doc, err := readSitemap(strings.NewReader(exact), 10, size); err != nil || doc.truncated {
		t.Errorf("a file of exactly the cap: truncated %v, err %v", doc.truncated, err)
	}
}

func TestSitemapLocTooLong(t *testing.T) {
	t.Parallel()
	long := "https://example.com/" + strings.Repeat("a", store.MaxURLLength)
	doc, err := parseSitemap(strings.NewReader("<urlset><url><loc>"+long+"</loc></url></urlset>"), 10)
	if err != nil || len(doc.entries) != 1 || len(doc.entries[0].loc) != store.MaxURLLength+1 {
		t.Fatalf("got %d entries, err %v; want one cut just past the longest URL kept", len(doc.entries), err)
	}
}

func FuzzReadSitemap(f *testing.F) {
	f.Add([]byte(urlset), 3)
	f.Add(gz(f, []byte(urlset)), 2)
	f.Add([]byte(`<sitemapindex><sitemap><loc>https://x/s.xml</loc></sitemap></sitemapindex>`), 5)
	f.Add([]byte("<urlset><url><loc>\n\n a</loc><loc>b</loc></url>"), 1)
	f.Add([]byte(`<?xml version="1.0" encoding="x-unknown"?><urlset/>`), 1)
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		limit = max(1, limit%100)
		doc, err := readSitemap(bytes.NewReader(data), limit, 1<<20)
		if len(doc.entries) > limit {
			t.Fatalf("%d entries over the limit %d", len(doc.entries), limit)
		}
		if doc.over > 0 && len(doc.entries) != limit {
			t.Fatalf("%d over the limit with %d entries, limit %d", doc.over, len(doc.entries), limit)
		}
		if err == nil && doc.kind == sitemapNone {
			t.Fatal("no error and no sitemap")
		}
		last := 1
		for _, e := range doc.entries {
			if e.loc == "" || e.loc != strings.TrimSpace(e.loc) || len(e.loc) > store.MaxURLLength+1 {
				t.Fatalf("entry %q: empty, untrimmed or too long", e.loc)
			}
			if e.line < last {
				t.Fatalf("line %d after line %d", e.line, last)
			}
			last = e.line
		}
	})
}

// BenchmarkReadSitemap reads a full sitemap: the protocol's 50,000 URLs.
func BenchmarkReadSitemap(b *testing.B) {
	var doc bytes.Buffer
	doc.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range DefaultSitemapLimit {
		fmt.Fprintf(&doc, "  <url><loc>https://example.com/posts/%d/a-title-of-some-length</loc><lastmod>2026-11-01</lastmod></url>\n", i)
	}
	doc.WriteString("</urlset>\n")
	for name, body := range map[string][]byte{"plain": doc.Bytes(), "gzip": gz(b, doc.Bytes())} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(doc.Len()))
			b.ReportAllocs()
			for b.Loop() {
				d, err := readSitemap(bytes.NewReader(body), DefaultSitemapLimit, maxSitemapSize)
				if err != nil || len(d.entries) != DefaultSitemapLimit {
					b.Fatalf("%d entries, %v", len(d.entries), err)
				}
			}
		})
	}
}

// hostileSitemaps are documents of about size bytes built to make a
// streaming XML decoder hold a lot: one element with a huge number of
// attributes (and namespace declarations), and one text run as long as the
// file.
func hostileSitemaps(size int) map[string][]byte {
	head := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url `
	var attrs bytes.Buffer
	attrs.WriteString(head)
	for i := 0; attrs.Len() < size; i++ {
		fmt.Fprintf(&attrs, `a%d="x" xmlns:n%d="u" `, i, i)
	}
	attrs.WriteString("><loc>https://example.com/</loc></url></urlset>")
	text := []byte(head + "><loc>https://example.com/</loc></url><x>" + strings.Repeat("a", size) + "</x></urlset>")
	return map[string][]byte{"attributes": attrs.Bytes(), "text": text}
}

// BenchmarkHostileSitemap measures the heap a sitemap built to exhaust the
// decoder takes while it is read (peak-MB): it must stay bounded whatever
// the file holds, not grow with its size.
//
//	go test -run '^$' -bench HostileSitemap -benchtime 1x ./crawler/
func BenchmarkHostileSitemap(b *testing.B) {
	for _, mb := range []int{5, 49} {
		for name, body := range hostileSitemaps(mb << 20) {
			b.Run(fmt.Sprintf("%s-%dMB", name, mb), func(b *testing.B) {
				var peak atomic.Uint64
				for range b.N {
					runtime.GC()
					var base runtime.MemStats
					runtime.ReadMemStats(&base)
					done := make(chan struct{})
					sampled := make(chan struct{})
					go func() {
						defer close(sampled)
						var ms runtime.MemStats
						t := time.NewTicker(5 * time.Millisecond)
						defer t.Stop()
						for {
							runtime.ReadMemStats(&ms)
							if ms.HeapInuse > base.HeapInuse && ms.HeapInuse-base.HeapInuse > peak.Load() {
								peak.Store(ms.HeapInuse - base.HeapInuse)
							}
							select {
							case <-done:
								return
							case <-t.C:
							}
						}
					}()
					readSitemap(bytes.NewReader(body), DefaultSitemapLimit, maxSitemapSize)
					close(done)
					<-sampled
				}
				b.ReportMetric(float64(peak.Load())/(1<<20), "peak-MB")
			})
		}
	}
}

// A tag or a text run too long for any real sitemap fails the document
// before the decoder holds it; what real sitemaps hold (comments with
// quotes and ">", attribute values with ">", a <loc> past the longest URL
// kept) still reads. BenchmarkHostileSitemap measures the memory.
func TestSitemapTokenCap(t *testing.T) {
	t.Parallel()
	for name, body := range hostileSitemaps(4 * maxSitemapToken) {
		doc, err := readSitemap(bytes.NewReader(body), 10, maxSitemapSize)
		if err == nil || !strings.Contains(err.Error(), "longer than") {
			t.Errorf("%s bomb: %d entries, err %v; want a token error", name, len(doc.entries), err)
		}
	}
	long := "https://example.com/" + strings.Repeat("a", store.MaxURLLength)
	fine := `<?xml version="1.0"?><!-- it's "quoted" > and <odd> ` + strings.Repeat("x", maxSitemapToken/2) + ` -->
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" title='a > b "c"'>
<url><loc>https://example.com/a</loc></url><url><loc>` + long + `</loc></url>
<![CDATA[ ' " > ]]></urlset>`
	doc, err := readSitemap(strings.NewReader(fine), 10, maxSitemapSize)
	if err != nil || len(doc.entries) != 2 {
		t.Errorf("a real sitemap: %d entries, err %v; want 2", len(doc.entries), err)
	}
}
