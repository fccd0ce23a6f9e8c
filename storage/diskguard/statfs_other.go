//go:build !unix

package diskguard

import "errors"

func freeBytes(string) (uint64, error) {
	return 0, errors.New("free space is read on Unix systems only")
}
