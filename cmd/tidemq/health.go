package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func newHealthCommand() *cobra.Command {
	var (
		admin   adminOptions
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Check that a tidemq server is up and can serve (exit 0), for container health checks",
		Long: `GET /health of a tidemq server: exit 0 when it answers 200 (the store can serve),
1 otherwise, with the reason. The request is signed like the other admin
commands, so it passes a server that runs with --auth when the standard AWS
credentials are set (or when the server opens the probe with --auth-exempt
health). The container image uses it as its HEALTHCHECK: it needs no curl.`,
		Example: `  tidemq health
  tidemq health --endpoint https://queues.internal:9324`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			client, err := admin.client(ctx, nil)
			if err != nil {
				return err
			}
			body, err := client.Health(ctx)
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("%s/health: no answer within %v", strings.TrimSuffix(admin.endpoint, "/"), timeout)
			}
			if err != nil {
				return adminError(err)
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), body)
			return err
		},
	}
	f := cmd.Flags()
	admin.register(f)
	f.DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	bindEnv(cmd)
	return cmd
}
