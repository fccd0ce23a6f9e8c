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
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command that only groups others
// (dlq, trigger...) refuse an argument that names none of them: cobra
// printed the group's help and exited 0 for 'tidemq dlq lsit', so a script
// went on as if it had listed. The error names the closest commands.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if c.Parent() == nil || !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		cmd.SuggestionsMinimumDistance = 2
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf(": did you mean %q?", cmd.CommandPath()+" "+s[0])
		} else {
			msg += fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())
		}
		return &exitError{code: 2, err: errors.New(msg)}
	}
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
	if errors.Is(err, syscall.EADDRINUSE) && cmd == "serve" {
		return "another process (another tidemq?) already listens there: choose another address with --listen (or $TIDEMQ_LISTEN), e.g. --listen 127.0.0.1:9325, and give clients that endpoint"
	}
	return ""
}
