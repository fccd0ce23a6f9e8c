//go:build linux

package lambdart

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// peerIsOurs reports whether the process at the other end of c, a TCP
// connection over IPv4 loopback, runs as this process's user: the kernel's
// socket table (/proc/self/net/tcp, this network namespace's) gives the
// owner of the client's socket, the one whose local address is c's remote.
func peerIsOurs(c net.Conn) (bool, error) {
	local, ok1 := c.LocalAddr().(*net.TCPAddr)
	remote, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return false, errors.New("not a TCP connection")
	}
	f, err := os.Open("/proc/self/net/tcp")
	if err != nil {
		return false, err
	}
	defer f.Close()
	want := [2]netip.AddrPort{remote.AddrPort(), local.AddrPort()}
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// fields[3] is the state: a TIME_WAIT entry (06) is an earlier
		// connection of the same addresses (loopback reuses them), owned
		// by no one (uid 0).
		if len(fields) < 8 || fields[3] == "06" {
			continue
		}
		from, err1 := parseProcAddr(fields[1])
		to, err2 := parseProcAddr(fields[2])
		if err1 != nil || err2 != nil || from != unmap(want[0]) || to != unmap(want[1]) {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		if err != nil {
			return false, fmt.Errorf("/proc/self/net/tcp: uid %q: %w", fields[7], err)
		}
		return uid == os.Getuid(), nil
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	return false, nil // gone already, or not an IPv4 socket of this namespace: not answered
}

// unmap writes an IPv4-mapped IPv6 address as IPv4, as the table has it.
func unmap(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// parseProcAddr reads an address of /proc/net/tcp: "0100007F:1F90", the
// IPv4 address as the kernel's 32-bit word in host byte order, then the
// port.
func parseProcAddr(s string) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	if !ok || len(a) != 8 {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(a)
	if err != nil {
		return netip.AddrPort{}, err
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	var ip [4]byte
	binary.NativeEndian.PutUint32(ip[:], binary.BigEndian.Uint32(raw))
	return netip.AddrPortFrom(netip.AddrFrom4(ip), uint16(port)), nil
}
