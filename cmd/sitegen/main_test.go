package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{}, ""},
		{[]string{"-addr", "127.0.0.1:0"}, ""},
		{[]string{"-addr", "127.8.9.10:8080", "-external-addr", "127.0.0.2:8081"}, ""},
		{[]string{"-addr", "[::1]:8080"}, ""},
		{[]string{"-addr", "0.0.0.0:8080"}, "only on loopback"},
		{[]string{"-addr", ":8080"}, "only on loopback"},
		{[]string{"-addr", "localhost:8080"}, "only on loopback"},
		{[]string{"-addr", "192.168.1.4:8080"}, "only on loopback"},
		{[]string{"-addr", "[::]:8080"}, "only on loopback"},
		{[]string{"-addr", "127.0.0.1"}, "missing port"},
		{[]string{"-external-addr", "10.0.0.1:80"}, "-external-addr"},
		{[]string{"-pages", "0"}, "at least 1"},
		{[]string{"extra"}, "unexpected argument"},
	}
	for _, tt := range tests {
		_, err := parseFlags(tt.args, io.Discard)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tt.args, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%q: error %v, want one containing %q", tt.args, err, tt.wantErr)
		}
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	var stderr strings.Builder
	if code := run(context.Background(), []string{"-addr", "0.0.0.0:0"}, io.Discard, &stderr); code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "loopback") {
		t.Errorf("stderr %q does not say why", stderr.String())
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-addr", "127.0.0.1:0", "-external-addr", "127.0.0.1:0",
			"-pages", "300", "-page-bytes", "1000", "-broken-every", "10"}, pw, io.Discard)
		pw.Close()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	base := <-lines
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/$`).MatchString(base) {
		t.Fatalf("first line %q is not the site's URL", base)
	}

	resp, err := http.Get(base + "p/9.html")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `href="/missing/`) {
		t.Fatalf("GET p/9.html: %d, no broken link in %d bytes", resp.StatusCode, len(body))
	}
	ext := regexp.MustCompile(`href="(http://127\.0\.0\.1:\d+/[^"]*)"`).FindStringSubmatch(string(body))
	if ext == nil {
		t.Fatal("page has no link to the external site")
	}
	resp, err = http.Head(ext[1])
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD %s: %v %v", ext[1], resp, err)
	}

	var st crawltest.Stats
	getJSON(t, base+"__stats", &st)
	if st.Requests != 1 || st.ByMethod["GET"] != 1 {
		t.Errorf("stats after one page: %+v", st)
	}
	getJSON(t, base+"__reset", &st)
	getJSON(t, base+"__stats", &st)
	if st.Requests != 0 {
		t.Errorf("stats after reset: %+v", st)
	}
	var exp crawltest.Expected
	getJSON(t, base+"__expected", &exp)
	if exp.Pages != 300 || len(exp.Broken) == 0 {
		t.Errorf("expected: %d pages, %d broken", exp.Pages, len(exp.Broken))
	}

	cancel()
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	if c := <-code; c != 0 {
		t.Errorf("exit code %d after cancel", c)
	}
	if len(rest) != 2 || !strings.HasPrefix(rest[0], "stats "+base+" {") || !strings.Contains(rest[1], `"requests":1`) {
		t.Errorf("final output %q, want the stats of both servers", rest)
	}
}
