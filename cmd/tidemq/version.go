package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// What a release build sets with
//
//	go build -ldflags "-X main.version=v1.2.3 -X main.commit=$(git rev-parse HEAD) -X main.buildDate=$(date -u +%FT%TZ)"
//
// Left empty, they come from the build information Go records in the
// binary: the module version ("go install ...@v1.2.3") and the VCS stamp
// of a build in a git checkout (vcs.revision, vcs.time, vcs.modified).
var (
	version   string
	commit    string
	buildDate string
)

// build describes this binary.
type build struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"` // built from a checkout with uncommitted changes
	Date      string `json:"date,omitempty"`     // build date, or else the commit's time
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// currentBuild is this binary's build.
func currentBuild() build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return buildFrom(bi, version, commit, buildDate)
}

// buildFrom combines Go's build information (nil if there is none) with
// the -ldflags -X values, which win when set.
func buildFrom(bi *debug.BuildInfo, ldVersion, ldCommit, ldDate string) build {
	b := build{Version: "dev", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
		}
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Date = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			case "GOOS":
				b.Platform = s.Value + "/" + b.Platform[strings.IndexByte(b.Platform, '/')+1:]
			case "GOARCH":
				b.Platform = b.Platform[:strings.IndexByte(b.Platform, '/')+1] + s.Value
			}
		}
	}
	if ldVersion != "" {
		b.Version = ldVersion
	}
	if ldCommit != "" {
		b.Commit, b.Modified = ldCommit, false
	}
	if ldDate != "" {
		b.Date = ldDate
	}
	return b
}

// text is the build as 'tidemq version' and 'tidemq --version' print it.
func (b build) text() string {
	var s strings.Builder
	fmt.Fprintf(&s, "tidemq %s\n", b.Version)
	c := b.Commit
	if c == "" {
		c = "unknown"
	}
	if b.Modified {
		c += " (modified)"
	}
	fmt.Fprintf(&s, "commit:   %s\n", c)
	d := b.Date
	if d == "" {
		d = "unknown"
	}
	fmt.Fprintf(&s, "built:    %s\n", d)
	fmt.Fprintf(&s, "go:       %s\n", b.GoVersion)
	fmt.Fprintf(&s, "platform: %s\n", b.Platform)
	return s.String()
}

func newVersionCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and Go version of this binary",
		Long: `Print what this binary is: its version, the commit it was built from (marked
"(modified)" when the checkout had uncommitted changes), its build date (or,
without one, the time of that commit), the Go version and the platform.

A release build sets the version, commit and date with
  go build -ldflags "-X main.version=v1.2.3 -X main.commit=$(git rev-parse HEAD) -X main.buildDate=$(date -u +%FT%TZ)"
otherwise they come from what Go records in the binary ('go version -m tidemq'
shows it). 'tidemq --version' prints the same.`,
		Example: `  tidemq version
  tidemq version --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			b := currentBuild()
			switch format {
			case "text":
				_, err := fmt.Fprint(cmd.OutOrStdout(), b.text())
				return err
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			}
			return fmt.Errorf("--format must be text or json, not %q", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}
