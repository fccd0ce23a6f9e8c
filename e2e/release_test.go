package e2e

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dockerfile reads the repository's Dockerfile, its continuation lines
// joined.
func dockerfile(t *testing.T) (lines []string) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	cur := ""
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		lines = append(lines, cur+l)
		cur = ""
	}
	return lines
}

// TestDockerfile checks what can be checked without Docker (.ci/embed
// builds and runs the image for real): the image's build command (in
// deploy/image/build.sh, which stages the binary for the FROM scratch
// Dockerfile), run as a shell command with the build arguments in its
// environment, makes a static binary that reports the version, commit and date it was
// given; that binary's 'health' (the HEALTHCHECK, no curl needed) passes
// against a running server and fails against none, without a home
// directory (the image has none); and the image runs as a non-root user,
// with /data as a volume, port 9324, and 'serve --listen 0.0.0.0:9324
// --data-dir /data'.
func TestDockerfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tidemq from scratch (-trimpath, CGO_ENABLED=0)")
	}
	t.Parallel()
	lines := dockerfile(t)
	var build, user, health, cmd, expose, volume string
	var froms, labels []string
	for _, l := range lines {
		word, rest, _ := strings.Cut(l, " ")
		switch strings.ToUpper(word) {
		case "FROM":
			froms = append(froms, rest)
		case "LABEL":
			labels = append(labels, rest)
		case "USER":
			user = rest
		case "HEALTHCHECK":
			health = rest
		case "CMD":
			cmd = rest
		case "EXPOSE":
			expose = rest
		case "VOLUME":
			volume = rest
		}
	}
	if len(froms) != 1 || froms[0] != "scratch" {
		t.Errorf("stages: %q, want one: scratch (nothing to pull)", froms)
	}
	for _, want := range []string{"org.opencontainers.image.version=\"${VERSION}\"", "org.opencontainers.image.revision=\"${COMMIT}\"",
		"org.opencontainers.image.created=\"${BUILD_DATE}\"", "org.opencontainers.image.source=", "org.opencontainers.image.licenses=\"Apache-2.0\""} {
		if !strings.Contains(strings.Join(labels, " "), want) {
			t.Errorf("LABEL: no %s", want)
		}
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "deploy", "image", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(script), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "CGO_ENABLED=0 go build ") {
			build = l
		}
	}
	if user == "" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root") {
		t.Errorf("USER %q: the server must not run as root", user)
	}
	if expose != "9324" || volume != "/data" {
		t.Errorf("EXPOSE %q, VOLUME %q", expose, volume)
	}
	if cmd != `["serve", "--listen", "0.0.0.0:9324", "--data-dir", "/data"]` {
		t.Errorf("CMD %s", cmd)
	}
	if !strings.Contains(health, `CMD ["/tidemq", "health"`) {
		t.Errorf("HEALTHCHECK %s", health)
	}
	if !strings.HasPrefix(build, "CGO_ENABLED=0 go build ") || !strings.Contains(build, ` -o "$out/tidemq" ./cmd/tidemq`) {
		t.Fatalf("build command %q", build)
	}

	bin := filepath.Join(t.TempDir(), "tidemq")
	sh := exec.Command("sh", "-c", strings.Replace(build, `"$out/tidemq"`, bin, 1))
	sh.Dir = root
	sh.Env = append(os.Environ(), "VERSION=v9.8.7-test", "COMMIT=0123456789abcdef", "BUILD_DATE=2026-12-03T08:00:00Z")
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary has a dynamic loader: not static")
		}
	}
	f.Close()
	if len(libs) != 0 {
		t.Errorf("the binary needs %v: not static", libs)
	}

	env := []string{"HOME=", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="}
	out, stderr, code := runBinary(t, bin, env, "version", "--format", "json")
	var v struct{ Version, Commit, Date, GoVersion string }
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Version != "v9.8.7-test" || v.Commit != "0123456789abcdef" ||
		v.Date != "2026-12-03T08:00:00Z" || !strings.HasPrefix(v.GoVersion, "go1.") {
		t.Errorf("version: exit %d %+v\n%s%s", code, v, out, stderr)
	}

	s := startServer(t)
	if out, stderr, code := runBinary(t, bin, env, "health", "--endpoint", s.url); code != 0 || !strings.Contains(out, `"status":"ok"`) {
		t.Errorf("health of a running server: exit %d\n%s%s", code, out, stderr)
	}
	s.stop()
	if _, stderr, code := runBinary(t, bin, env, "health", "--endpoint", s.url, "--timeout", "2s"); code == 0 || !strings.HasPrefix(stderr, "tidemq: ") {
		t.Errorf("health of a stopped server: exit %d\n%s", code, stderr)
	}
}

// runBinary runs another tidemq binary to completion, as runTidemq runs
// the one TestMain built, env overriding the variables it names.
func runBinary(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(serverEnv(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s %s still running after 10s", bin, strings.Join(args, " "))
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("run %s: %v", bin, err)
	}
	return o.String(), e.String(), code
}

// TestSystemdUnit checks deploy/tidemq.service with systemd-analyze
// (skipped where it is missing): 'verify' finds nothing to say (it
// prints what it ignores and exits 0, so its output must be empty too),
// with ExecStart pointed at the binary under test; the unit keeps the
// hardening the README promises, and 'security --offline' rates its
// exposure at most 2.0 ("OK"). A unit with a typo is caught, so the check
// bites.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not available (Debian package systemd)")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "deploy", "tidemq.service"))
	if err != nil {
		t.Fatal(err)
	}
	unit := string(data)
	for _, want := range []string{"\nType=exec\n", "\nExecStart=/usr/local/bin/tidemq serve\n", "\nDynamicUser=yes\n", "\nStateDirectory=tidemq\n", "\nStateDirectory=tidemq-backups\n",
		"\nEnvironment=TIDEMQ_DATA_DIR=/var/lib/tidemq\n", "\nNoNewPrivileges=yes\n", "\nProtectSystem=strict\n", "\nPrivateTmp=yes\n",
		"\nRestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX\n", "\nLimitNOFILE=65536\n", "\nWantedBy=multi-user.target\n"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q", strings.TrimSpace(want))
		}
	}
	dir := t.TempDir()
	check := func(name, text string) (string, error) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, "/usr/local/bin/tidemq", tidemqBin)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(analyze, "verify", "--man=no", p).CombinedOutput()
		return string(out), err
	}
	if out, err := check("tidemq.service", unit); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	if out, err := check("typo.service", strings.Replace(unit, "Type=exec", "Type=exce", 1)); err == nil && !strings.Contains(out, "exce") {
		t.Errorf("a typo passed systemd-analyze verify: %s", out)
	}
	out, err := exec.Command(analyze, "security", "--offline=yes", "--no-pager", filepath.Join(dir, "tidemq.service")).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "Overall exposure level") {
		t.Skipf("systemd-analyze security --offline not supported here: %v\n%s", err, out)
	}
	var level float64
	if i := strings.Index(string(out), "Overall exposure level for tidemq.service: "); i < 0 {
		t.Errorf("no exposure level in:\n%s", out)
	} else if _, err := fmt.Sscanf(string(out[i:]), "Overall exposure level for tidemq.service: %f", &level); err != nil || level > 2.0 {
		t.Errorf("exposure level %.1f (%v), want at most 2.0:\n%s", level, err, out)
	}
}
