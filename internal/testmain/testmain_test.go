package testmain

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv makes this test binary, run again by TestExitCodes, the
// binary under test: "race" runs TestChild with a race in it, "outside"
// makes a race in TestMain before the tests, "pass" runs TestChild clean.
const childEnv = "TESTMAIN_CHILD"

func TestMain(m *testing.M) {
	child := os.Getenv(childEnv)
	if child == "outside" {
		race()
	}
	code := m.Run()
	if child == "" && code != 0 {
		// Not through Exit: a wrong Exit must not turn the failure of
		// the test that tests it into a pass.
		os.Exit(code)
	}
	Exit(code)
}

// race writes one variable from two goroutines, nothing ordering the two.
func race() {
	x := 0
	done := make(chan struct{})
	go func() {
		x++
		close(done)
	}()
	x++
	<-done
}

func TestChild(t *testing.T) {
	switch os.Getenv(childEnv) {
	case "":
		t.Skip("the binary under test in TestExitCodes")
	case "race":
		race()
	}
}

// TestExitCodes: a binary whose tests passed exits 0 with all its output
// written; a race seen while the tests ran, in a test or outside one,
// still fails it. That is what Exit keeps of the race runtime's finaliser.
func TestExitCodes(t *testing.T) {
	if !raceEnabled {
		t.Skip("Exit differs from os.Exit only with -race")
	}
	t.Parallel()
	for _, tc := range []struct {
		child string
		code  int
		says  string
	}{
		{"pass", 0, "PASS"},
		{"race", 1, "race detected during execution of test"},
		{"outside", 1, "race detected outside of test execution"},
	} {
		t.Run(tc.child, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), childEnv+"="+tc.child)
			out, err := cmd.CombinedOutput()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || !strings.Contains(string(out), tc.says) {
				t.Errorf("exit code %d, want %d, and the output should say %q:\n%s", code, tc.code, tc.says, out)
			}
		})
	}
}
