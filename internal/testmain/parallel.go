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
//
// Both run the tests with their temporary files in memory where the
// machine has a /dev/shm with room and TMPDIR is not set: t.TempDir, and
// the databases and JetStream stores of the child processes the tests
// start, which inherit TMPDIR. The files are the same bbolt files and
// stores, fsynced as always; only the kernel's part differs, and on an
// ext4 disk it was a tenth to a seventh of these packages' CPU time
// (cmd/linkpatrol 33.9 -> 29.3 CPU-s, store 6.1 -> 4.7, crawler 9.8 -> 9.1,
// alone, three and two runs each).
func RunPerCPU(m interface{ Run() int }, perCPU int) int {
	defer tempInMemory()()
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		// The flag exists in every test binary; Set cannot fail on it.
		_ = flag.Set("test.parallel", strconv.Itoa(perCPU*runtime.GOMAXPROCS(0)))
	}
	return m.Run()
}
