package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler"
	"github.com/linkpatrol/linkpatrol/rules"
)

// The live progress line counts problems as the report does: a failing
// redirect chain is one problem, on the link the page has, not one per
// hop recorded (qa5 N1 fixed the report; the counter still said 22 for
// one link to an endless redirect, or to a chain ending in a 404).
func TestProgressCountsAChainAsOneProblem(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/":
			fmt.Fprint(w, `<a href="/redir/0">endless</a> <a href="/m/0">to a 404</a>`)
		case strings.HasPrefix(p, "/redir/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/redir/"))
			http.Redirect(w, r, fmt.Sprintf("/redir/%d", n+1), http.StatusFound)
		case p == "/m/0", p == "/m/1":
			http.Redirect(w, r, "/m/"+string(rune(p[3]+1)), http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	engine, err := rules.New(rules.Config{Start: []string{srv.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	c := crawler.New(crawler.Config{Concurrency: 2}, engine, openDB(t))
	if _, out, err := c.Run(context.Background(), context.Background(), passOf(srv.URL+"/")); err != nil || !out.Complete {
		t.Fatalf("run: complete %v, %v", out.Complete, err)
	}
	if n := c.Progress().Problems; n != 2 {
		t.Errorf("progress counts %d problems; want 2, one per failing chain a page links", n)
	}
}
