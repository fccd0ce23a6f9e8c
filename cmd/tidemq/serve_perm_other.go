//go:build !unix

package main

// privateFiles does nothing where there is no umask; the data directory's
// own permissions (ACLs) must protect it.
func privateFiles() {}
