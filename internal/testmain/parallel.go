package testmain

import (
	"flag"
	"runtime"
	"strconv"
)

// WaitingTestsPerCPU is how many parallel tests RunWaiting runs per CPU.
const WaitingTestsPerCPU = 4

// RunWaiting runs the tests of a package whose tests mostly wait rather
// than compute: on a site's latency and a polite crawler's rate, on
// timeouts and backoff, on child processes, servers and fsync. go test
// runs one parallel test per CPU (-parallel defaults to GOMAXPROCS), so on
// a 2-core machine two tests waiting out a rate limit, or an fsync, hold
// every slot while the CPUs idle. RunWaiting runs WaitingTestsPerCPU per
// CPU instead, unless -test.parallel is given. Call it from TestMain with
// its *testing.M: testmain.Exit(testmain.RunWaiting(m)).
func RunWaiting(m interface{ Run() int }) int { return RunPerCPU(m, WaitingTestsPerCPU) }

// RunPerCPU is RunWaiting with perCPU parallel tests per CPU: fewer for
// tests that wait on real time but must also get the CPU on time when
// they do (lease renewals, which a starved process misses).
func RunPerCPU(m interface{ Run() int }, perCPU int) int {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		// The flag exists in every test binary; Set cannot fail on it.
		_ = flag.Set("test.parallel", strconv.Itoa(perCPU*runtime.GOMAXPROCS(0)))
	}
	return m.Run()
}
