package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// bindEnv makes every flag of cmd settable as TIDEMQ_<FLAG_NAME> (dashes
// become underscores). A flag given on the command line wins over the
// environment. It names the variable in the flag's help.
func bindEnv(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		f.Usage += fmt.Sprintf(" [$%s]", envName(f.Name))
	})
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		err := setFromEnv(cmd.Flags())
		if err == nil && prev != nil {
			err = prev(cmd, args)
		}
		return err
	}
}

// setFromEnv sets every flag of fs not given on the command line from its
// TIDEMQ_ variable, if set.
func setFromEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("invalid $%s: %w", envName(f.Name), e)
				return
			}
			_ = fs.SetAnnotation(f.Name, fromEnvAnnotation, []string{"true"})
		}
	})
	return err
}

// fromEnvAnnotation marks a flag that setFromEnv set from its variable.
const fromEnvAnnotation = "tidemq-from-env"

// onCommandLine reports whether flag name of fs was given on the command
// line, not only through its TIDEMQ_ variable (Changed is true for both).
func onCommandLine(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed && f.Annotations[fromEnvAnnotation] == nil
}

func envName(flag string) string {
	return "TIDEMQ_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}
