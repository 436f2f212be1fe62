package store

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"go.etcd.io/bbolt"
)

// schema3Home is what the schema-3 build stored in testdata/schema3.bolt:
// in pass 1, the home page links to /a twice and to /b, /a links back
// home and to /c, /b is broken and /c a plain check.
func schema3Home() []Link {
	r := page("http://127.0.0.1/", "http://127.0.0.1/a", "http://127.0.0.1/b")
	return append(r.Links, Link{URL: "http://127.0.0.1/a", Fragment: "top", Line: 9, Tag: "img", Attr: "srcset"})
}

func schema3A() []Link {
	return page("http://127.0.0.1/a", "http://127.0.0.1/", "http://127.0.0.1/c").Links
}

// pageLinksOf returns, in PageLinks order, the pages of the pass and their lists.
func pageLinksOf(t *testing.T, db *DB, pass uint64) (pages []string, lists [][]Link) {
	t.Helper()
	err := db.PageLinks(pass, func(p *URLRecord, l []Link) error {
		pages, lists = append(pages, p.URL), append(lists, l)
		return nil
	})
	if err != nil {
		t.Fatalf("PageLinks(%d): %v", pass, err)
	}
	return pages, lists
}

// linkKeys returns the keys of the links bucket.
func linkKeys(t *testing.T, db *DB) (keys []string) {
	t.Helper()
	err := db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketLinks).ForEach(func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestMigrateSchema3 opens a file the schema-3 build wrote (testdata, made
// by main 6f3cba7), whose link lists are keyed by page URL and whose records
// (format 1) say nothing of where their lists are: the lists read the same
// read-only, and after the file becomes schema 4; a page stored again with
// links has its list moved under a number (the old one deleted), a page
// stored again without new links keeps its old list, and a page whose new
// list is empty has none.
func TestMigrateSchema3(t *testing.T) {
	t.Parallel()
	const home, a, b, c = "http://127.0.0.1/", "http://127.0.0.1/a", "http://127.0.0.1/b", "http://127.0.0.1/c"
	path, orig := copyTestdata(t, "schema3.bolt", 3)
	same := func(what string, db *DB) {
		t.Helper()
		for _, tc := range []struct {
			url  string
			want []Link
		}{{home, schema3Home()}, {a, schema3A()}, {b, nil}} {
			if got, err := db.Links(tc.url); err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: Links(%s) = %+v, %v\nwant %+v", what, tc.url, got, err, tc.want)
			}
		}
		pages, lists := pageLinksOf(t, db, 1)
		if want := []string{home, a}; !reflect.DeepEqual(pages, want) || !reflect.DeepEqual(lists, [][]Link{schema3Home(), schema3A()}) {
			t.Errorf("%s: PageLinks(1) gave pages %q, lists %+v", what, pages, lists)
		}
		if got := resolved(t, db, 1); !reflect.DeepEqual(got, []string{home, a, b, c}) {
			t.Errorf("%s: ResolvedIn(1) = %q", what, got)
		}
	}

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open of a schema-3 file: %v", err)
	}
	same("read-only", ro)
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, orig) {
		t.Error("a read-only Open changed the schema-3 file")
	}

	db := openAt(t, path)
	same("migrated", db)

	// Pass 2: home is parsed again with other links, /a is kept as it was
	// (a 304: no new list), /c turns out to be a page without links.
	p := begin(t, db, home)
	newHome := page(home, a, "http://127.0.0.1/d")
	kept := checked(a, VerdictOK, 304)
	empty := page(c)
	commit(t, db, p.ID, newHome, kept, checked(b, VerdictBroken, 404), empty)
	if got, err := db.Links(home); err != nil || !reflect.DeepEqual(got, newHome.Links) {
		t.Errorf("home stored again: Links = %+v, %v", got, err)
	}
	if v := storedList(t, db, home); v[0] != linksFormat2 {
		t.Errorf("home stored again: list format %d, want %d", v[0], linksFormat2)
	}
	if got, err := db.Links(a); err != nil || !reflect.DeepEqual(got, schema3A()) {
		t.Errorf("/a kept: Links = %+v, %v", got, err)
	}
	if got, err := db.Links(c); err != nil || got != nil {
		t.Errorf("/c without links: Links = %+v, %v", got, err)
	}
	pages, lists := pageLinksOf(t, db, 2)
	if want := []string{home, a}; !reflect.DeepEqual(pages, want) || !reflect.DeepEqual(lists, [][]Link{newHome.Links, schema3A()}) {
		t.Errorf("PageLinks(2) gave pages %q, lists %+v; want the new list of home, then the kept one of /a", pages, lists)
	}
	if got := linkKeys(t, db); len(got) != 2 || len(got[0]) != 8 || got[1] != a {
		t.Errorf("links keys = %q, want one number and %s (home's old list deleted)", got, a)
	}

	// /a parsed again: its list under its URL goes too.
	commit(t, db, p.ID, page(a, home))
	for _, k := range linkKeys(t, db) {
		if len(k) != 8 {
			t.Errorf("links key %q left after every page was stored again", k)
		}
	}
	if got, err := db.Links(a); err != nil || !reflect.DeepEqual(got, page(a, home).Links) {
		t.Errorf("/a stored again: Links = %+v, %v", got, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := schemaOf(t, path); got != SchemaVersion {
		t.Errorf("after migration schema = %d, want %d", got, SchemaVersion)
	}
}

// PageLinks gives the pages in URL order whatever order their lists were
// written in (report.Merge reads several files side by side by it), and
// only those of the pass.
func TestPageLinksInURLOrder(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	const z, m, a = "http://127.0.0.1/z", "http://127.0.0.1/m", "http://127.0.0.1/a"
	p1 := begin(t, db, z)
	commit(t, db, p1.ID, page(z, m))
	commit(t, db, p1.ID, page(m, a))
	commit(t, db, p1.ID, page(a, z))
	finish(t, db, p1, PassComplete)
	p2 := begin(t, db, z)
	commit(t, db, p2.ID, page(z, a, m))
	commit(t, db, p2.ID, page(a, m))
	if pages, _ := pageLinksOf(t, db, p1.ID); !reflect.DeepEqual(pages, []string{m}) {
		t.Errorf("PageLinks(1) = %q, want only %s (the others were stored again)", pages, m)
	}
	pages, lists := pageLinksOf(t, db, p2.ID)
	if !reflect.DeepEqual(pages, []string{a, z}) || !reflect.DeepEqual(lists, [][]Link{page(a, m).Links, page(z, a, m).Links}) {
		t.Errorf("PageLinks(2) = %q %+v", pages, lists)
	}
}
