// Package lambdatest gives tests real Lambda handlers: a Go function built
// with github.com/aws/aws-lambda-go and a Python one (their sources are in
// lambdart/testdata). See those sources for what each message body makes
// them do.
package lambdatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// testdata is lambdart/testdata, found from this file.
func testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "lambdart", "testdata")
}

// BuildGo builds the Go handler as dir/name (name "bootstrap" for the
// provided.al2023 runtime) and returns dir. aws-lambda-go comes from the
// module cache or the Go module proxy.
func BuildGo(t testing.TB, dir, name string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is needed to build the Go handler")
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), ".")
	cmd.Dir = filepath.Join(testdata(), "gohandler")
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the Go handler: %v\n%s", err, out)
	}
	return dir
}

// PythonDir is the directory of the Python handlers: app.handler,
// app.not_json and broken.handler (whose import fails).
func PythonDir(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed to run the Python handler")
	}
	dir, err := filepath.Abs(filepath.Join(testdata(), "pyhandler"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// CopyPython copies the Python handlers into dir.
func CopyPython(t testing.TB, dir string) {
	t.Helper()
	src := PythonDir(t)
	for _, f := range []string{"app.py", "broken.py"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
