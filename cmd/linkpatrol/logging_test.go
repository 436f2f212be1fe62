package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"strings"
	"testing"
)

func TestLoggerLevels(t *testing.T) {
	for _, c := range []struct {
		verbosity int
		want      []string // messages that get through, of debug, info, warn, error
	}{
		{0, []string{"warn", "error"}},
		{1, []string{"info", "warn", "error"}},
		{2, []string{"debug", "info", "warn", "error"}},
		{3, []string{"debug", "info", "warn", "error"}},
	} {
		var buf bytes.Buffer
		log, err := newLogger(&buf, c.verbosity, "text")
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("debug")
		log.Info("info")
		log.Warn("warn")
		log.Error("error")
		var got []string
		for line := range strings.Lines(buf.String()) {
			_, msg, _ := strings.Cut(line, "msg=")
			got = append(got, strings.Fields(msg)[0])
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("-v×%d logged %v, want %v", c.verbosity, got, c.want)
		}
	}
}

func TestLoggerFormats(t *testing.T) {
	var text bytes.Buffer
	log, err := newLogger(&text, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("fetched", "url", "http://127.0.0.1/a b", "status", 404)
	if got := text.String(); !strings.Contains(got, `level=INFO msg=fetched url="http://127.0.0.1/a b" status=404`) {
		t.Errorf("text record = %q", got)
	}

	var js bytes.Buffer
	log, err = newLogger(&js, 1, "json")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("fetched", "url", "http://127.0.0.1/", "status", 404)
	var rec struct {
		Time   string `json:"time"`
		Level  string `json:"level"`
		Msg    string `json:"msg"`
		URL    string `json:"url"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal(js.Bytes(), &rec); err != nil {
		t.Fatalf("json record %q: %v", js.String(), err)
	}
	if rec.Time == "" || rec.Level != "INFO" || rec.Msg != "fetched" || rec.URL != "http://127.0.0.1/" || rec.Status != 404 {
		t.Errorf("json record = %+v", rec)
	}

	if _, err := newLogger(&js, 0, "xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("an unknown format gave %v", err)
	}
}

// What net/http prints through package log comes out as one warning in
// the run's format, cut to a readable line (qa9 T4: 7 KB of a page, raw).
func TestLibraryLogIsOneWarning(t *testing.T) {
	t.Parallel()
	line := "http: TLS handshake error from 127.0.0.1:1: " + strings.Repeat("lorem ipsum ", 700) + "\n"
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		log.New(&libraryLog{w: &buf, format: format}, "", 0).Print(line)
		out := buf.String()
		if strings.Count(out, "\n") != 1 || len(out) > maxLibraryLine+100 || !strings.Contains(out, "TLS handshake error") {
			t.Errorf("%s: %d bytes, %d lines: %.200q", format, len(out), strings.Count(out, "\n"), out)
		}
		if format == "json" {
			var rec map[string]any
			if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec["level"] != "WARN" {
				t.Errorf("json: %v, record %v", err, rec)
			}
		} else if !strings.HasPrefix(out, "time=") || !strings.Contains(out, "level=WARN") {
			t.Errorf("text: %.200q, want a logfmt warning", out)
		}
	}
}

// Bytes a server sent past its response's end are told once, in words,
// without them: net/http's message quotes them, names no host, and comes
// for each such response (qa11 §7). Other library messages still come
// each time.
func TestLibraryLogSaysUnsolicitedBytesOnce(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		l := log.New(&libraryLog{w: &buf, format: format}, "", 0)
		for i := range 3 {
			l.Printf("Unsolicited response received on idle HTTP channel starting with %q; err=<nil>", fmt.Sprintf("secret page bytes %d", i))
			l.Print("another library message")
		}
		out := buf.String()
		if n := strings.Count(out, "Content-Length"); n != 1 || strings.Contains(out, "secret page") || strings.Count(out, "another library message") != 3 {
			t.Errorf("%s: told %d times, want once without the page's bytes, and the other message each time:\n%s", format, n, out)
		}
	}
}
