package crawler_test

import (
	"os"
	"testing"

	"github.com/linkpatrol/linkpatrol/crawler/crawltest"
)

// The tests mostly wait: on servers that hang or trickle until a timeout,
// on backoff steps and pauses, on polite rates.
func TestMain(m *testing.M) { os.Exit(crawltest.Main(m)) }
