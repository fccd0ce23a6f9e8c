package main

import (
	"github.com/spf13/cobra"

	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/metrics"
)

func newRulesCommand() *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "Print Prometheus alerting rules equivalent to the built-in alarms",
		Long: `Print a Prometheus rules file with the built-in alarms and their thresholds
(the defaults, or those of --alarms-config), for teams that alert from their
own Prometheus. deploy/prometheus-rules.yml is this output with the defaults.`,
		Example: `  tidemq alarms rules > /etc/prometheus/rules/tidemq.yml
  tidemq alarms rules --alarms-config alarms.yml | promtool check rules /dev/stdin`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := alarms.DefaultConfig()
			if config != "" {
				var err error
				if cfg, err = alarms.LoadConfig(config); err != nil {
					return err
				}
			}
			_, err := cmd.OutOrStdout().Write(alarms.PrometheusRules(cfg))
			return err
		},
	}
	cmd.Flags().StringVar(&config, "alarms-config", "", "alarm thresholds file, as for tidemq serve")
	return cmd
}

func newDashboardCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "dashboard",
		Short: "Print the Grafana dashboard of tidemq's metrics (JSON)",
		Long:  `Print the Grafana dashboard JSON shipped as deploy/grafana-dashboard.json.`,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := cmd.OutOrStdout().Write(metrics.GrafanaDashboard())
			return err
		},
	}
}
