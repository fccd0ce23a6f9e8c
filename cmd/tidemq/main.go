// Command tidemq runs the tidemq server and its tools. main only wires: each
// subcommand lives in its own file and calls into the library packages.
package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"
)

// exitError carries a process exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// newRootCommand is the tidemq command and its subcommands.
func newRootCommand() *cobra.Command {
	b := currentBuild()
	root := &cobra.Command{
		Use:   "tidemq",
		Short: "A self-hosted message queue that speaks the Amazon SQS protocols",
		Long: `tidemq is a message queue that speaks the Amazon SQS wire protocols (AWS JSON 1.0
and Query/XML), so unmodified AWS SDKs and the AWS CLI work against it.

Start a server with 'tidemq serve', then point any SQS client at it:

  aws sqs create-queue --queue-name orders --endpoint-url http://127.0.0.1:9324`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       b.Version,
	}
	root.SetVersionTemplate(b.text())
	root.AddCommand(newServeCommand())
	root.AddCommand(newDLQCommand())
	root.AddCommand(newAlarmsCommand())
	root.AddCommand(newTopCommand())
	root.AddCommand(newBenchCommand())
	root.AddCommand(newTriggerCommand())
	root.AddCommand(newLintCommand(), newApplyCommand(), newImportCommand())
	root.AddCommand(newVersionCommand(), newHealthCommand(), newBackupCommand())
	return root
}

func main() {
	root := newRootCommand()
	if cmd, err := root.ExecuteC(); err != nil {
		fmt.Fprintln(os.Stderr, "tidemq:", err)
		name := ""
		if cmd != nil {
			name = cmd.Name()
		}
		if hint := errorHint(name, err); hint != "" {
			fmt.Fprintln(os.Stderr, "tidemq:", hint)
		}
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(1)
	}
}

// errorHint suggests what to do about an error a user commonly meets in
// command cmd, or returns "". A refused connection is a client command's
// server that is not running; not for serve itself, whose refused
// connections are its --store database's (the error says which).
func errorHint(cmd string, err error) string {
	if errors.Is(err, syscall.ECONNREFUSED) && cmd != "serve" {
		return "nothing answers at that address: is the server running ('tidemq serve')? --endpoint (or $TIDEMQ_ENDPOINT) says where it is"
	}
	return ""
}
