package store

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// fill sets every field reachable from v to a non-zero value derived from
// seed, so a field added to a type but forgotten by the codec fails the
// round trips below.
func fill(t testing.TB, v reflect.Value, seed int) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d", v.Type().Name(), seed))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(seed*1000 + 7))
	case reflect.Uint64:
		v.SetUint(uint64(seed*1000 + 9))
	case reflect.Uint8:
		v.SetUint(uint64(seed%255 + 1))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), seed*10+i)
		}
		v.Set(s)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(t0.Add(time.Duration(seed) * time.Hour)))
			return
		}
		for i := range v.NumField() {
			fill(t, v.Field(i), seed+i+1)
		}
	default:
		t.Fatalf("fill: no rule for %s; teach fill (and the codec) about it", v.Type())
	}
}

func TestRecordRoundTripKeepsEveryField(t *testing.T) {
	t.Parallel()
	var want URLRecord
	fill(t, reflect.ValueOf(&want).Elem(), 1)
	v, err := appendRecord(nil, &want)
	if err != nil {
		t.Fatal(err)
	}
	var got URLRecord
	if err := decodeRecord(want.URL, v, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the record:\n got %+v\nwant %+v", got, want)
	}
	if p, err := recordPass(v); err != nil || p != want.Pass {
		t.Errorf("recordPass = %d, %v; want %d", p, err, want.Pass)
	}
}

// TestStoredRecordRoundTrip: the urls bucket's format carries where the
// page's list is beside the record, and a format-1 record has its list
// under its URL.
func TestStoredRecordRoundTrip(t *testing.T) {
	t.Parallel()
	var want URLRecord
	fill(t, reflect.ValueOf(&want).Elem(), 2)
	one, err := appendRecord(nil, &want)
	if err != nil {
		t.Fatal(err)
	}
	if p, at, err := recordHead(one); err != nil || p != want.Pass || at != linksUnderURL {
		t.Errorf("recordHead of format 1 = %d, %d, %v; want %d, %d", p, at, err, want.Pass, linksUnderURL)
	}
	for _, linksAt := range []uint64{linksNone, linksUnderURL, linksFirstSeq, 1 << 40} {
		v, err := appendStoredRecord(nil, &want, linksAt)
		if err != nil {
			t.Fatal(err)
		}
		var got URLRecord
		if err := decodeRecord(want.URL, v, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("linksAt %d: round trip = %+v, %v\nwant %+v", linksAt, got, err, want)
		}
		if p, at, err := recordHead(v); err != nil || p != want.Pass || at != linksAt {
			t.Errorf("recordHead = %d, %d, %v; want %d, %d", p, at, err, want.Pass, linksAt)
		}
	}
}

func TestRecordRoundTripKeepsZones(t *testing.T) {
	t.Parallel()
	paris := time.FixedZone("", 3600)
	tests := []struct {
		name string
		at   time.Time
	}{
		{"UTC", t0},
		{"fixed offset", t0.In(paris)},
		{"local with monotonic reading", time.Now()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := URLRecord{URL: "http://127.0.0.1/", FetchedAt: tt.at}
			v, err := appendRecord(nil, &in)
			if err != nil {
				t.Fatal(err)
			}
			var out URLRecord
			if err := decodeRecord(in.URL, v, &out); err != nil {
				t.Fatal(err)
			}
			if !out.FetchedAt.Equal(tt.at) || out.FetchedAt.Format(time.RFC3339Nano) != tt.at.Format(time.RFC3339Nano) {
				t.Errorf("FetchedAt = %s, want %s", out.FetchedAt.Format(time.RFC3339Nano), tt.at.Format(time.RFC3339Nano))
			}
		})
	}
}

func TestLinksRoundTrip(t *testing.T) {
	t.Parallel()
	var filled []Link
	fill(t, reflect.ValueOf(&filled).Elem(), 3)
	tests := []struct {
		name  string
		links []Link
	}{
		{"every field", filled},
		{"shared prefixes", []Link{
			{URL: "http://127.0.0.1/docs/a.html", Line: 3, Tag: "a", Attr: "href"},
			{URL: "http://127.0.0.1/docs/b.html", Fragment: "top", Line: 4, Tag: "a", Attr: "href"},
			{URL: "http://127.0.0.1/docs/", Line: 4, Tag: "link", Attr: "href"},
			{URL: "http://127.0.0.1/docs/", Line: 5, Tag: "img", Attr: "srcset"},
			{URL: "https://other.example/", Line: 9, Tag: "style", Attr: "style"},
			{URL: "", Line: 0},
			{URL: "http://127.0.0.1/é?q=1", Line: -1, Tag: "custom-tag", Attr: "data-x"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := appendLinks(nil, tt.links)
			got, err := decodeLinks(v)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.links) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, tt.links)
			}
			if n, err := linkCount(v); err != nil || n != len(tt.links) {
				t.Errorf("linkCount = %d, %v; want %d", n, err, len(tt.links))
			}
		})
	}
}

func TestTaskRoundTrip(t *testing.T) {
	t.Parallel()
	var want Task
	fill(t, reflect.ValueOf(&want).Elem(), 5)
	got, err := decodeTask(want.URL, appendTask(nil, &want))
	if err != nil || got != want {
		t.Errorf("round trip = %+v, %v; want %+v", got, err, want)
	}
}

func TestDecodersRejectDamage(t *testing.T) {
	t.Parallel()
	rec := record("http://127.0.0.1/")
	rv, err := appendRecord(nil, &rec)
	if err != nil {
		t.Fatal(err)
	}
	lv := appendLinks(nil, []Link{{URL: "http://127.0.0.1/a", Line: 1}, {URL: "http://127.0.0.1/b", Line: 2}})
	tv := appendTask(nil, &Task{Action: "parse", Depth: 2})
	decoders := map[string]func([]byte) error{
		"record": func(v []byte) error { var r URLRecord; return decodeRecord("u", v, &r) },
		"links":  func(v []byte) error { _, err := decodeLinks(v); return err },
		"task":   func(v []byte) error { _, err := decodeTask("u", v); return err },
	}
	srv, err := appendStoredRecord(nil, &rec, 7)
	if err != nil {
		t.Fatal(err)
	}
	decoders["stored record"] = decoders["record"]
	values := map[string][]byte{"record": rv, "links": lv, "task": tv, "stored record": srv}
	for name, decode := range decoders {
		v := values[name]
		cases := map[string][]byte{
			"empty":        {},
			"newer format": append([]byte{9}, v[1:]...),
			"trailing":     append(append([]byte{}, v...), 0),
			"cut short":    v[:len(v)-1],
		}
		for cname, bad := range cases {
			if err := decode(bad); !errors.Is(err, errShort) && !errors.Is(err, errFormat) && !errors.Is(err, errTrailing) && !errors.Is(err, errOverflow) {
				t.Errorf("%s, %s: err = %v, want a decode error", name, cname, err)
			}
		}
	}
	// A shared prefix longer than the previous URL cannot be rebuilt.
	e := encoder{}
	e.byte(linksFormat1)
	e.uvarint(1)
	e.uvarint(3) // shares 3 bytes with a previous URL that does not exist
	e.str("x")
	e.str("")
	e.int(1)
	e.str("")
	e.str("")
	if _, err := decodeLinks(e.bytes()); !errors.Is(err, errFormat) {
		t.Errorf("decodeLinks of a shared prefix longer than the previous URL: err = %v, want errFormat", err)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	var full URLRecord
	fill(f, reflect.ValueOf(&full).Elem(), 1)
	for _, r := range []URLRecord{record("http://127.0.0.1/"), full, {}} {
		v, err := appendRecord(nil, &r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(v)
		if v, err = appendStoredRecord(nil, &r, 12345); err != nil {
			f.Fatal(err)
		}
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		var r URLRecord
		if err := decodeRecord("k", v, &r); err != nil {
			return
		}
		p, err := recordPass(v)
		if err != nil || p != r.Pass {
			t.Fatalf("recordPass = %d, %v after decoding pass %d", p, err, r.Pass)
		}
		again, err := appendRecord(nil, &r)
		if err != nil {
			return // an instant time cannot encode again, such as a zone offset of seconds beyond int16 minutes
		}
		var r2 URLRecord
		if err := decodeRecord("k", again, &r2); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if !sameRecord(r, r2) {
			t.Fatalf("re-encoding changed the record:\n%+v\n%+v", r, r2)
		}
	})
}

// sameRecord compares records with time.Equal, as a time that went through
// the codec may come back with an equal but differently represented zone.
func sameRecord(a, b URLRecord) bool {
	ta := []time.Time{a.FetchedAt, a.FirstSeen, a.LastGood, a.FirstBroken}
	tb := []time.Time{b.FetchedAt, b.FirstSeen, b.LastGood, b.FirstBroken}
	for i := range ta {
		if !ta[i].Equal(tb[i]) {
			return false
		}
	}
	a.FetchedAt, a.FirstSeen, a.LastGood, a.FirstBroken = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	b.FetchedAt, b.FirstSeen, b.LastGood, b.FirstBroken = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

func FuzzDecodeLinks(f *testing.F) {
	f.Add(appendLinks(nil, []Link{{URL: "http://127.0.0.1/a", Line: 1, Tag: "a", Attr: "href"}, {URL: "http://127.0.0.1/b", Fragment: "x", Line: 2}}))
	f.Add(appendLinks(nil, nil))
	f.Add(appendLinks(nil, schema2Links))
	f.Add(format1Links(f))
	f.Fuzz(func(t *testing.T, v []byte) {
		links, err := decodeLinks(v)
		if err != nil {
			return
		}
		if n, err := linkCount(v); err != nil || n != len(links) {
			t.Fatalf("linkCount = %d, %v; decoded %d links", n, err, len(links))
		}
		got, err := decodeLinks(appendLinks(nil, links))
		if err != nil {
			t.Fatalf("re-encoded links do not decode: %v", err)
		}
		if len(got) != len(links) || (len(links) > 0 && !reflect.DeepEqual(got, links)) {
			t.Fatalf("re-encoding changed the links:\n%+v\n%+v", links, got)
		}
	})
}

// format1Links is a list in format 1, as the schema-2 build wrote it.
func format1Links(f *testing.F) []byte {
	f.Helper()
	b, err := bbolt.Open("testdata/schema2.bolt", 0, &bbolt.Options{ReadOnly: true})
	if err != nil {
		f.Fatal(err)
	}
	defer b.Close()
	var v []byte
	err = b.View(func(tx *bbolt.Tx) error {
		v = bytes.Clone(tx.Bucket(bucketLinks).Get([]byte("http://127.0.0.1/")))
		return nil
	})
	if err != nil || len(v) == 0 || v[0] != linksFormat1 {
		f.Fatalf("no format-1 list in testdata/schema2.bolt: %q, %v", v, err)
	}
	return v
}

// FuzzLinksRoundTrip builds link lists from arbitrary text: whatever the
// URLs share, the list must come back as it went in.
func FuzzLinksRoundTrip(f *testing.F) {
	f.Add("http://127.0.0.1/a\nhttp://127.0.0.1/ab\nhttp://127.0.0.1/\n\nx", 7)
	f.Fuzz(func(t *testing.T, text string, line int) {
		var links []Link
		start := 0
		for i := 0; i <= len(text); i++ {
			if i == len(text) || text[i] == '\n' {
				links = append(links, Link{URL: text[start:i], Fragment: text[:start], Line: line + i, Tag: "a"})
				start = i + 1
			}
		}
		got, err := decodeLinks(appendLinks(nil, links))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, links) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, links)
		}
	})
}

func FuzzDecodeTask(f *testing.F) {
	f.Add(appendTask(nil, &Task{Action: "parse", Depth: 3}))
	f.Fuzz(func(t *testing.T, v []byte) {
		tk, err := decodeTask("k", v)
		if err != nil {
			return
		}
		if again, err := decodeTask("k", appendTask(nil, &tk)); err != nil || again != tk {
			t.Fatalf("re-encoding changed the task: %+v, %v; want %+v", again, err, tk)
		}
	})
}

// TestTaskRunRoundTrip: a task's template run and public mark survive the
// frontier, and a task written without them (as before they existed) reads
// back as run 0, not public.
func TestTaskRunRoundTrip(t *testing.T) {
	t.Parallel()
	for _, want := range []Task{
		{URL: "u", Action: "parse", Depth: 7, Run: 3},
		{URL: "u", Action: "check", Depth: 1},
		{URL: "u", Action: "check", Depth: 1, Public: true},
		{URL: "u", Action: "parse", Depth: 2, Run: 5, Public: true},
		{URL: "u", Action: "check", Depth: 1, Tries: 2},
		{URL: "u", Action: "parse", Depth: 2, Run: 1, Public: true, Tries: 1, Comebacks: 3, ComebacksWaited: 90 * time.Second},
	} {
		got, err := decodeTask("u", appendTask(nil, &want))
		if err != nil || got != want {
			t.Errorf("round trip = %+v, %v; want %+v", got, err, want)
		}
	}
	old := []byte{taskFormat1, 5, 'p', 'a', 'r', 's', 'e', 4} // format 1, "parse", depth 2
	if got, err := decodeTask("u", old); err != nil || got != (Task{URL: "u", Action: "parse", Depth: 2}) {
		t.Errorf("old task = %+v, %v", got, err)
	}
}
