package audit

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func readEvents(t *testing.T, path string) []Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func TestWriteAndRotate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, 300, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		l.Write(Event{Kind: KindDenied, Principal: "arn:aws:iam::000000000000:user/b", Action: "sqs:PurgeQueue",
			Resource: "arn:aws:sqs:us-east-1:000000000000:a", Source: "127.0.0.1:5", Reason: "no"})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cur := readEvents(t, path)
	if len(cur) == 0 || cur[0].Action != "sqs:PurgeQueue" || cur[0].Time.IsZero() {
		t.Fatalf("current file: %+v", cur)
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Fatalf("no rotated file: %v", err)
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Fatal("more old files kept than asked")
	}
	st, _ := os.Stat(path)
	if st.Size() > 300 {
		t.Fatalf("the current file grew past MaxBytes: %d", st.Size())
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
	var nilLog *Log
	nilLog.Write(Event{}) // a nil log writes nothing and does not panic
}
