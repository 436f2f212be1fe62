package store

import (
	"reflect"
	"testing"
)

// A page's anchors survive the codec with nil (not collected) and empty
// (collected, none) kept apart, and a record written before IDs existed
// still decodes, without them.
func TestRecordIDs(t *testing.T) {
	t.Parallel()
	for _, ids := range [][]string{nil, {}, {"", "top", "a b", "section-2"}} {
		rec := record("http://127.0.0.1/")
		rec.IDs = ids
		v, err := appendRecord(nil, &rec)
		if err != nil {
			t.Fatal(err)
		}
		var got URLRecord
		if err := decodeRecord(rec.URL, v, &got); err != nil {
			t.Fatalf("IDs %#v: %v", ids, err)
		}
		if (got.IDs == nil) != (ids == nil) || !reflect.DeepEqual(got.IDs, ids) {
			t.Errorf("IDs %#v came back as %#v", ids, got.IDs)
		}
	}
	old := record("http://127.0.0.1/")
	v, err := appendRecord(nil, &old)
	if err != nil {
		t.Fatal(err)
	}
	withIDs := old
	withIDs.IDs = []string{"x"}
	w, err := appendRecord(nil, &withIDs)
	if err != nil {
		t.Fatal(err)
	}
	if len(w) <= len(v) || string(w[:len(v)]) != string(v) {
		t.Fatal("IDs must be a suffix of the record, or older records would not decode")
	}
	var bad URLRecord
	if err := decodeRecord(old.URL, append(append([]byte{}, v...), recordIDsTag, 5, 1, 'x'), &bad); err == nil {
		t.Error("a record claiming more IDs than it holds decoded without error")
	}
}
