package cluster

import (
	"testing"

	"github.com/linkpatrol/linkpatrol/internal/testmain"
)

// Most of these tests wait: on lease rounds and TTLs, a politeness window,
// a server restarting. At one test per CPU those waits ran one after
// another and the package took about 50 s. Two per CPU, not the four of
// testmain.RunWaiting: a worker whose lease renewals do not get the CPU in
// time gives its shards up, which is right, but not what most of these
// tests are about.
func TestMain(m *testing.M) { testmain.Exit(testmain.RunPerCPU(m, 2)) }
