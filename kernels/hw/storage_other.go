//go:build !linux

package hw

import "os"

func statFS(dir string) (fsStat, error) { return fsStat{}, errNotSupported }

func dropCache(f *os.File) error { return errNotSupported }
