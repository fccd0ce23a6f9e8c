//go:build linux

package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the test holds the master, the
// child gets the slave as its controlling terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 160}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestTopExitsOnSignalsInATerminalThatDoesNotAnswer (issue 22, item 7): in
// a terminal that answers no query (not the colour query at start-up, nor
// anything after), top draws its frame and exits promptly and cleanly on
// SIGTERM and SIGINT. And when the terminal stops taking output (its
// reader is gone or stopped), top used to ignore both signals until kill
// -9: its event loop was stuck writing, and Bubble Tea's signal handler
// only queued a message for it. Now it restores the terminal and exits
// (143) after a short grace.
func TestTopExitsOnSignalsInATerminalThatDoesNotAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a terminal")
	}
	bin := buildBinary(t)
	endpoint := startServer(t, bin, "--in-memory")
	const queues = 60
	for i := range queues {
		sqsCall(t, endpoint, "CreateQueue", fmt.Sprintf(`{"QueueName":"queue-%02d-with-a-rather-long-name"}`, i))
	}

	start := func(t *testing.T) (*exec.Cmd, *os.File, func() string, func(bool)) {
		master, slave := openPTY(t)
		cmd := exec.Command(bin, "top", "--endpoint", endpoint, "--interval", "50ms")
		cmd.Env = append(os.Environ(), "TERM=xterm-256color")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		// The terminal: it reads what top writes (while reading is on) and
		// answers nothing.
		var mu sync.Mutex
		var screen bytes.Buffer
		reading := true
		go func() {
			buf := make([]byte, 4096)
			for {
				mu.Lock()
				on := reading
				mu.Unlock()
				if !on {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				n, err := master.Read(buf)
				if err != nil {
					return
				}
				mu.Lock()
				screen.Write(buf[:n])
				mu.Unlock()
			}
		}()
		get := func() string { mu.Lock(); defer mu.Unlock(); return screen.String() }
		set := func(on bool) { mu.Lock(); reading = on; mu.Unlock() }
		return cmd, master, get, set
	}
	exited := func(cmd *exec.Cmd, within time.Duration) (int, bool) {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
			return cmd.ProcessState.ExitCode(), true
		case <-time.After(within):
			return 0, false
		}
	}
	waitScreen := func(t *testing.T, get func() string) {
		t.Helper()
		// Bubble Tea v1 asks the terminal for its colour when the program
		// starts and waits up to 5 s for an answer that does not come.
		for deadline := time.Now().Add(15 * time.Second); !strings.Contains(get(), "q quit"); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no frame in a terminal that answers nothing; it shows %q", get())
			}
		}
	}

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run("answers nothing/"+sig.String(), func(t *testing.T) {
			cmd, _, get, _ := start(t)
			waitScreen(t, get)
			cmd.Process.Signal(sig)
			if code, ok := exited(cmd, 5*time.Second); !ok || code != 0 {
				t.Fatalf("after %v: exited %v, status %d", sig, ok, code)
			}
		})
	}

	t.Run("takes no output/SIGTERM", func(t *testing.T) {
		cmd, _, get, set := start(t)
		waitScreen(t, get)
		set(false)
		stop := make(chan struct{})
		var churn sync.WaitGroup
		defer func() { close(stop); churn.Wait() }()
		churn.Add(1)
		go func() { // keep the numbers moving, so top keeps writing
			defer churn.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := fmt.Sprintf("queue-%02d-with-a-rather-long-name", i%queues)
				req, _ := http.NewRequest(http.MethodPost, endpoint+"/", strings.NewReader(`{"QueueUrl":"`+endpoint+`/000000000000/`+q+`","MessageBody":"x"}`))
				req.Header.Set("Content-Type", "application/x-amz-json-1.0")
				req.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		}()
		time.Sleep(20 * time.Second) // the terminal's buffer fills; top's writes block
		cmd.Process.Signal(syscall.SIGTERM)
		code, ok := exited(cmd, 8*time.Second)
		if !ok {
			t.Fatal("top ignored SIGTERM in a terminal that takes no output")
		}
		if code != 0 && code != 143 {
			t.Errorf("exit status %d, want 0 or 143", code)
		}
	})
}
