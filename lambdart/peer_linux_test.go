//go:build linux

package lambdart

import (
	"net"
	"net/netip"
	"testing"
)

func TestParseProcAddr(t *testing.T) {
	got, err := parseProcAddr("0100007F:1F90")
	if err != nil || got != netip.MustParseAddrPort("127.0.0.1:8080") {
		t.Fatalf("parseProcAddr = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0100007F", "0100007G:1F90", "0100007F:XYZ", "00000000000000000000000001000000:0050"} {
		if _, err := parseProcAddr(bad); err == nil {
			t.Errorf("parseProcAddr(%q) accepted", bad)
		}
	}
}

// A connection from this process is ours.
func TestPeerIsOursForOwnConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ours, err := peerIsOurs(s); err != nil || !ours {
		t.Fatalf("peerIsOurs = %v, %v; want true", ours, err)
	}
}
