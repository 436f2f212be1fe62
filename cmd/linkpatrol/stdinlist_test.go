package main

import (
	"slices"
	"strings"
	"testing"
)

// A # starts a comment at the start of a line or after a blank; in a URL
// it is the fragment (qa5 N5: the comment after a URL became part of it).
func TestReadTargetsComments(t *testing.T) {
	t.Parallel()
	in := "# sites\nhttps://a.example/   # the shop\n\thttps://b.example/#top\n  # indented comment\nhttps://c.example/\t# tab\n\n"
	got, err := readTargets(strings.NewReader(in))
	want := []string{"https://a.example/", "https://b.example/#top", "https://c.example/"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("readTargets = %q, %v; want %q", got, err, want)
	}
}

// An -o file in the --format's own format already holds that report:
// standard output gets the text report then, not a second copy (qa5 N13).
func TestStdoutFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format  string
		quiet   bool
		outputs []string
		want    string
	}{
		{"json", false, nil, "json"},
		{"html", false, []string{"report.html"}, "text"},
		{"junit", false, []string{"junit:rep.junit"}, "text"},
		{"json", false, []string{"report.html"}, "json"},
		{"text", false, []string{"report.txt"}, "text"},
		{"html", true, []string{"report.html"}, ""},
		{"html", true, nil, "html"},
	}
	for _, tt := range tests {
		if got := stdoutFormat(tt.format, tt.quiet, tt.outputs); got != tt.want {
			t.Errorf("stdoutFormat(%q, %v, %q) = %q, want %q", tt.format, tt.quiet, tt.outputs, got, tt.want)
		}
	}
}
