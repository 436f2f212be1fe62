package store

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

// schema2Links are the links of the home page in testdata/schema2.bolt,
// which the schema-2 build wrote in the first link list format: a pair of
// tag and attribute of every kind, fragments, lines up and down.
var schema2Links = []Link{
	{URL: "http://127.0.0.1/a", Line: 3, Tag: "a", Attr: "href"},
	{URL: "http://127.0.0.1/a", Fragment: "top", Line: 3, Tag: "a", Attr: "href"},
	{URL: "http://127.0.0.1/img/x.png", Line: 10, Tag: "img", Attr: "srcset"},
	{URL: "http://127.0.0.1/site.css", Line: 2, Tag: "link", Attr: "href"},
	{URL: "http://127.0.0.1/font.woff", Line: 40, Tag: "css"},
	{URL: "http://127.0.0.1/bg.png", Line: 41, Tag: "div", Attr: "style"},
	{URL: "http://127.0.0.1/odd", Line: 1 << 40, Tag: "x-widget", Attr: "data-href"},
	{URL: "mailto:someone@example.com", Line: 0},
	{URL: "http://127.0.0.1/b", Fragment: "sec-2", Line: 7, Tag: "area", Attr: "href"},
}

// TestMigrateSchema2 opens a file the schema-2 build wrote (testdata, made
// by commit 2e9eae2): its link lists, in format 1, read the same before
// and after it becomes schema 3 (now 4), and a page stored again is written in
// format 2, smaller, under a number, and reads the same.
func TestMigrateSchema2(t *testing.T) {
	t.Parallel()
	const home = "http://127.0.0.1/"
	path, orig := copyTestdata(t, "schema2.bolt", 2)
	stored := func(db *DB) []byte { return storedList(t, db, home) }
	same := func(what string, db *DB) {
		t.Helper()
		if got, err := db.Links(home); err != nil || !reflect.DeepEqual(got, schema2Links) {
			t.Errorf("%s: Links = %+v, %v\nwant %+v", what, got, err, schema2Links)
		}
		n := 0
		err := db.PageLinks(1, func(_ *URLRecord, got []Link) error {
			n++
			if !reflect.DeepEqual(got, schema2Links) {
				t.Errorf("%s: PageLinks = %+v", what, got)
			}
			return nil
		})
		if err != nil || n != 1 {
			t.Errorf("%s: PageLinks called %d times, %v", what, n, err)
		}
	}

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open of a schema-2 file: %v", err)
	}
	same("read-only", ro)
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, orig) {
		t.Error("a read-only Open changed the schema-2 file")
	}

	db, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open of a schema-2 file for writing: %v", err)
	}
	same("migrated", db)
	old := stored(db)
	if old[0] != linksFormat1 {
		t.Fatalf("the schema-2 file's list has format %d, want %d", old[0], linksFormat1)
	}
	p := begin(t, db, home)
	r := page(home)
	r.Links = schema2Links
	commit(t, db, p.ID, r)
	if got, err := db.Links(home); err != nil || !reflect.DeepEqual(got, schema2Links) {
		t.Errorf("stored again: Links = %+v, %v", got, err)
	}
	if v := stored(db); v[0] != linksFormat2 || len(v) >= len(old) {
		t.Errorf("stored again: format %d in %d bytes; want format %d in fewer than %d", v[0], len(v), linksFormat2, len(old))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := schemaOf(t, path); got != SchemaVersion {
		t.Errorf("after migration schema = %d, want %d", got, SchemaVersion)
	}
}
