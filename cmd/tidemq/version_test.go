package main

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// buildFrom reads the VCS stamp Go records (vcs.revision, vcs.time,
// vcs.modified) and the module version, and -ldflags -X values win.
func TestBuildFrom(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "35a372f0c0ffee"},
		{Key: "vcs.time", Value: "2026-12-03T07:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}}
	for _, c := range []struct {
		name                      string
		bi                        *debug.BuildInfo
		ldVersion, ldCommit, date string
		want                      build
	}{
		{"no build info", nil, "", "", "", build{Version: "dev", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}},
		{"vcs stamp", stamped, "", "", "", build{Version: "dev", Commit: "35a372f0c0ffee", Modified: true, Date: "2026-12-03T07:00:00Z", GoVersion: "go1.26.8", Platform: "linux/arm64"}},
		{"go install @version", installed, "", "", "", build{Version: "v1.4.0", GoVersion: "go1.26.8", Platform: runtime.GOOS + "/" + runtime.GOARCH}},
		{"release ldflags", stamped, "v1.5.0", "abcdef", "2026-12-04T00:00:00Z", build{Version: "v1.5.0", Commit: "abcdef", Date: "2026-12-04T00:00:00Z", GoVersion: "go1.26.8", Platform: "linux/arm64"}},
		{"version only", stamped, "v1.5.0", "", "", build{Version: "v1.5.0", Commit: "35a372f0c0ffee", Modified: true, Date: "2026-12-03T07:00:00Z", GoVersion: "go1.26.8", Platform: "linux/arm64"}},
	} {
		if got := buildFrom(c.bi, c.ldVersion, c.ldCommit, c.date); got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
	text := buildFrom(stamped, "", "", "").text()
	for _, want := range []string{"tidemq dev\n", "commit:   35a372f0c0ffee (modified)\n", "built:    2026-12-03T07:00:00Z\n", "go:       go1.26.8\n", "platform: linux/arm64\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

// 'tidemq version' and 'tidemq --version' print the same; -X values
// reach both, and the JSON form.
func TestVersionCommand(t *testing.T) {
	saved := [3]string{version, commit, buildDate}
	defer func() { version, commit, buildDate = saved[0], saved[1], saved[2] }()
	version, commit, buildDate = "v2.0.0-rc.1", "feedface", "2026-12-03T09:00:00Z"

	out, err := run(newRootCommand(), "version")
	if err != nil || !strings.HasPrefix(out, "tidemq v2.0.0-rc.1\ncommit:   feedface\nbuilt:    2026-12-03T09:00:00Z\ngo:       go1.") {
		t.Fatalf("version: %v\n%s", err, out)
	}
	flag, err := run(newRootCommand(), "--version")
	if err != nil || flag != out {
		t.Errorf("--version: %v\n%s\nwant\n%s", err, flag, out)
	}
	js, err := run(newRootCommand(), "version", "--format", "json")
	var b build
	if err != nil || json.Unmarshal([]byte(js), &b) != nil || b.Version != "v2.0.0-rc.1" || b.Commit != "feedface" || b.Date != "2026-12-03T09:00:00Z" || b.GoVersion == "" {
		t.Errorf("json: %v %+v\n%s", err, b, js)
	}
	if _, err := run(newRootCommand(), "version", "--format", "yaml"); err == nil {
		t.Error("--format yaml accepted")
	}
}
