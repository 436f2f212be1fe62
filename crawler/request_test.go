package crawler

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"strings"
	"testing"
	"testing/iotest"
)

// readCapped reads the whole body, or max bytes of it, whatever size the
// response announced: the size only picks the first buffer.
func TestReadCapped(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("<a href=x>", 700) // 7,000 bytes
	tests := []struct {
		name      string
		size, max int64
		want      int
		truncated bool
	}{
		{"size announced", 7000, 1 << 20, 7000, false},
		{"size unknown", -1, 1 << 20, 7000, false},
		{"announced too small", 100, 1 << 20, 7000, false},
		{"announced too large", 1 << 40, 1 << 20, 7000, false},
		{"empty announced", 0, 1 << 20, 7000, false},
		{"cut at max", 7000, 4000, 4000, true},
		{"cut at max, size unknown", -1, 4000, 4000, true},
		{"exactly max", 7000, 7000, 7000, false},
	}
	for _, tt := range tests {
		for _, r := range []struct {
			name string
			wrap func(*strings.Reader) io.Reader
		}{
			{"", func(r *strings.Reader) io.Reader { return r }},
			{" one byte at a time", func(r *strings.Reader) io.Reader { return iotest.OneByteReader(r) }},
		} {
			got, truncated, err := readCapped(r.wrap(strings.NewReader(body)), tt.max, tt.size)
			if err != nil || truncated != tt.truncated || !bytes.Equal(got, []byte(body[:tt.want])) {
				t.Errorf("%s%s: %d bytes, truncated %v, %v; want %d, %v", tt.name, r.name, len(got), truncated, err, tt.want, tt.truncated)
			}
		}
	}
	if _, _, err := readCapped(iotest.TimeoutReader(strings.NewReader(body)), 1<<20, 7000); err == nil {
		t.Error("a read error was not returned")
	}
}

// mediaType is what mime.ParseMediaType makes of the type, and what the
// header says before any ";" where it cannot parse it.
func TestMediaType(t *testing.T) {
	t.Parallel()
	for _, ct := range []string{
		"text/html; charset=utf-8", "TEXT/HTML", " text/css ", "text/html;;", "text/html; charset",
		"text/html; a=1; a=2", "garbage", "", "application/xhtml+xml;q=0.9", "text/html ; charset=\"x\"",
		"text/ html", "text/html; title*=us-ascii'en-us'This%20is", "Text/Html\t; x=y",
	} {
		want, _, err := mime.ParseMediaType(ct)
		if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
			want = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
		}
		if got := mediaType(ct); got != want {
			t.Errorf("mediaType(%q) = %q, want %q", ct, got, want)
		}
	}
}
