//go:build !linux

package main

import "os/exec"

// dieWithParent is Linux's Pdeathsig; elsewhere the tests' cleanups are
// all there is.
func dieWithParent(*exec.Cmd) {}
