//go:build !linux

package testmain

func tempInMemory() (cleanup func()) { return func() {} }
