package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemq/tidemq/storage/pebble"
)

func newBackupCommand() *cobra.Command {
	var (
		admin   adminOptions
		dataDir string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "backup DEST",
		Short: "Copy a tidemq store, consistently, into a new directory (online, while the server runs)",
		Long: `Write a consistent copy of a tidemq server's store into DEST, a directory that
must not exist yet (its parent must).

Online (the default): the running server at --endpoint writes a checkpoint of
its store into DEST on its own machine, while it goes on serving. DEST must be
a new directory directly under the directory the server was started with as
--backup-dir (online backups are off without it, and refused without --auth
unless the server was started with --backup-without-auth). The copy
holds everything the server had answered when the backup started (it answers
only once a change is on disk); what it answers meanwhile may or may not be
in it. DEST is made absolute here, so a relative DEST names a directory on the
server's machine only when the server runs here. The request is signed like
the other admin commands; with --auth the credentials must be the server's.
The tables are hard-linked when DEST is on the store's file system (fast, and
little space until the server compacts them away), copied otherwise.

Offline (--data-dir DIR): copy the store of a stopped server. It refuses a
store a running server holds.

To restore, start a server on the copy: tidemq serve --data-dir DEST`,
		Example: `  tidemq backup /var/backups/tidemq/$(date -u +%Y%m%dT%H%M%SZ)
  tidemq backup /backups/tidemq-1 --endpoint https://queues.internal:9324
  tidemq backup --data-dir /var/lib/tidemq /backups/tidemq-offline
  tidemq serve --data-dir /backups/tidemq-1     # restore`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dest, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			// A flag on the command line wins over a variable (a
			// TIDEMQ_ENDPOINT exported for the other commands, the
			// TIDEMQ_DATA_DIR of a systemd or container deployment).
			fs := cmd.Flags()
			dataCL, endpointCL := onCommandLine(fs, "data-dir"), onCommandLine(fs, "endpoint")
			switch {
			case dataCL && endpointCL:
				return errors.New("--data-dir backs up a stopped server's store; --endpoint a running server: give one")
			case dataDir != "" && !dataCL && fs.Changed("endpoint") && !endpointCL:
				return fmt.Errorf("$%s and $%s are both set: give --data-dir (a stopped server's store) or --endpoint (a running server)", envName("data-dir"), envName("endpoint"))
			}
			if dataDir != "" && !endpointCL {
				start := time.Now()
				if err := offlineBackup(dataDir, dest); err != nil {
					return err
				}
				fmt.Fprintf(out, "backed up the store in %s to %s in %v\nrestore: tidemq serve --data-dir %s\n", dataDir, dest, time.Since(start).Round(time.Millisecond), dest)
				return nil
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			client, err := admin.client(ctx, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			client.Timeout = 0 // --timeout
			res, err := client.Backup(ctx, dest)
			if err != nil {
				return adminError(err)
			}
			fmt.Fprintf(out, "backed up %s to %s (on the server's machine): %d files, %s, in %v\nrestore: tidemq serve --data-dir %s\n",
				admin.endpoint, res.Destination, res.Files, byteSize(res.Bytes), time.Duration(res.Milliseconds)*time.Millisecond, res.Destination)
			return nil
		},
	}
	f := cmd.Flags()
	admin.register(f)
	f.StringVar(&dataDir, "data-dir", "", "back up the store in this directory, of a stopped server, instead of asking a running one")
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "give up on an online backup after this long (0: never)")
	bindEnv(cmd)
	return cmd
}

// offlineBackup checkpoints the store in dataDir, which no server may hold.
func offlineBackup(dataDir, dest string) error {
	if fi, err := os.Stat(filepath.Join(dataDir, "CURRENT")); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s holds no tidemq store (no Pebble CURRENT file)", dataDir)
	}
	privateFiles()
	st, err := pebble.Open(dataDir, pebble.Options{})
	if err != nil {
		return fmt.Errorf("%w (is a server running on it? back it up online instead: tidemq backup %s --endpoint URL)", err, dest)
	}
	if err := st.Checkpoint(dest); err != nil {
		st.Close()
		return err
	}
	return st.Close()
}

// byteSize renders a size for people: 512 B, 3.4 MiB.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
