package store

import (
	"errors"
	"reflect"
	"testing"
)

// A field a newer build adds takes a tag from skippableTag on, with its
// length: this build skips it and reads the rest, where before it called
// the file damaged (version skew, R3's note: tags 9 and 10 were unreadable
// to the builds before them). A tag below that it does not know is still
// an error, which says the file may be newer.
func TestFieldsOfANewerBuildAreSkipped(t *testing.T) {
	t.Parallel()
	var rec URLRecord
	fill(t, reflect.ValueOf(&rec).Elem(), 3)
	rv, err := appendRecord(nil, &rec)
	if err != nil {
		t.Fatal(err)
	}
	task := Task{URL: "http://127.0.0.1/t", Action: "parse", Depth: 2, Run: 3, Public: true, From: 0x0102030405060708}
	tv := appendTask(nil, &task)
	newer := func(v []byte, tag byte) []byte {
		return append(append([]byte{}, v...), tag, 3, 'x', 'y', 'z', skippableTag+40, 0)
	}
	var got URLRecord
	if err := decodeRecord(rec.URL, newer(rv, skippableTag+1), &got); err != nil || !reflect.DeepEqual(got, rec) {
		t.Errorf("record with a newer field: %v, equal %v", err, reflect.DeepEqual(got, rec))
	}
	if gt, err := decodeTask(task.URL, newer(tv, skippableTag+2)); err != nil || gt != task {
		t.Errorf("task with a newer field: %+v, %v; want %+v", gt, err, task)
	}
	if err := decodeRecord(rec.URL, newer(rv, skippableTag-1), &got); !errors.Is(err, errUnknownTag) {
		t.Errorf("record with an unknown tag below %d: %v, want errUnknownTag", skippableTag, err)
	}
	// What the user reads: the file may be newer, not only damaged.
	db := &DB{path: "lp.db"}
	err = db.corrupt("record", []byte(rec.URL), errUnknownTag)
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, ErrTooNew) {
		t.Errorf("%v: want both ErrCorrupt and ErrTooNew", err)
	}
}
