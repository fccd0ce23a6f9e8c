package topology

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tidemq/tidemq/trigger"
)

// TriggerTarget is what the applier needs from tidemq's triggers.
// ManagerTarget adapts a trigger.Manager (in process, for 'tidemq serve
// --config'); the CLI adapts the /tidemq/triggers admin API.
type TriggerTarget interface {
	// Trigger returns the named trigger as the admin API shows it (its
	// secrets redacted, their digest beside them), or nil when there is no
	// such trigger.
	Trigger(ctx context.Context, name string) (*trigger.Status, error)
	// CreateTrigger creates a trigger and returns its warnings.
	CreateTrigger(ctx context.Context, c trigger.Config) (warnings []string, err error)
	// UpdateTrigger replaces every setting of the trigger c.Name with c's
	// (see TriggerPatch) and returns its warnings.
	UpdateTrigger(ctx context.Context, c trigger.Config) (warnings []string, err error)
}

var triggerNameBad = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// TriggerName is the name of a topology trigger on tidemq: its Name, or
// FUNCTION.QUEUE with characters a trigger name cannot hold replaced by
// '-' (and, past 64 characters, cut and suffixed with a hash).
func TriggerName(t *Trigger) string {
	if t.Name != "" {
		return t.Name
	}
	n := triggerNameBad.ReplaceAllString(t.Function+"."+queueName(t.Queue), "-")
	if len(n) > 64 {
		sum := sha256.Sum256([]byte(n))
		n = n[:55] + "-" + hex.EncodeToString(sum[:4])
	}
	return n
}

// TriggerConfig is the trigger that stands for an event source whose
// function has a local target: the event source's settings, the function's
// timeout, its URL or command, and its reserved concurrency as a cap on
// the trigger's concurrency. notes say what was adjusted.
func TriggerConfig(t *Trigger, f *Function) (c trigger.Config, notes []string, err error) {
	if f.URL != "" && len(f.Command) > 0 {
		return c, nil, fmt.Errorf("function %s has both a url and a command: give one", f.Name)
	}
	enabled := t.IsEnabled()
	c = trigger.Config{
		Name:                           TriggerName(t),
		Queue:                          queueName(t.Queue),
		Target:                         trigger.Target{URL: f.URL, Headers: f.Headers, Command: f.Command, Dir: f.Dir},
		BatchSize:                      t.EffectiveBatchSize(),
		MaximumBatchingWindowInSeconds: intOr(t.MaximumBatchingWindowInSeconds, 0),
		Timeout:                        float64(f.EffectiveTimeout()),
	}
	if t.ReportBatchItemFailures {
		c.FunctionResponseTypes = []string{trigger.ReportBatchItemFailures}
	}
	if t.MaximumConcurrency != nil {
		c.ScalingConfig = &trigger.ScalingConfig{MaximumConcurrency: *t.MaximumConcurrency}
	}
	if rc := f.ReservedConcurrency; rc != nil {
		mc := trigger.DefaultConcurrency
		if c.ScalingConfig != nil {
			mc = c.ScalingConfig.MaximumConcurrency
		}
		switch {
		case *rc == 0:
			if enabled {
				notes = append(notes, fmt.Sprintf("function %s reserves no concurrency (every invocation is throttled): the trigger is disabled", f.Name))
			}
			enabled = false
		case *rc < mc:
			capped := max(*rc, trigger.MinConcurrency)
			c.ScalingConfig = &trigger.ScalingConfig{MaximumConcurrency: capped}
			notes = append(notes, fmt.Sprintf("concurrency capped at %d by the function's reserved concurrency %d", capped, *rc))
		}
	}
	c.Enabled = &enabled
	return c, notes, nil
}

// TriggerPatch renders c as an update of every setting, so that a setting
// c leaves out is reset rather than kept (trigger.Manager.Update merges).
func TriggerPatch(c trigger.Config) []byte {
	var scaling any
	if c.ScalingConfig != nil {
		scaling = c.ScalingConfig
	}
	var filters any
	if c.FilterCriteria != nil {
		filters = c.FilterCriteria
	}
	types := c.FunctionResponseTypes
	if types == nil {
		types = []string{}
	}
	b, _ := json.Marshal(map[string]any{
		"Name": c.Name, "Queue": c.Queue, "Enabled": c.IsEnabled(),
		"Target":                         map[string]any{"URL": c.Target.URL, "Headers": c.Target.Headers, "Command": c.Target.Command, "Dir": c.Target.Dir, "Function": c.Target.Function},
		"BatchSize":                      c.BatchSize,
		"MaximumBatchingWindowInSeconds": c.MaximumBatchingWindowInSeconds,
		"FunctionResponseTypes":          types,
		"ScalingConfig":                  scaling,
		"Timeout":                        c.Timeout,
		"FilterCriteria":                 filters,
	})
	return b
}

// triggerFields renders the settings the applier compares, with Lambda's
// defaults filled in. The secrets of the target (its header values and the
// URL's userinfo) are compared by their digest (trigger.SecretsDigest):
// the server shows them redacted, and plans and logs must not show them.
func triggerFields(c *trigger.Config, secretsDigest string) map[string]string {
	target := trigger.RedactURL(c.Target.URL)
	if len(c.Target.Command) > 0 {
		b, _ := json.Marshal(c.Target.Command)
		target = "command " + string(b)
	}
	if c.Target.Dir != "" {
		target += " in " + c.Target.Dir
	}
	env := ""
	if fn := c.Target.Function; fn != nil {
		target = fmt.Sprintf("function %s %s in %s", fn.Runtime, fn.Handler, fn.CodeUri)
		if fn.MemorySize != 0 {
			target += fmt.Sprintf(" (%d MB)", fn.MemorySize)
		}
		env = strings.Join(sortedKeys(fn.Environment), ", ")
	}
	headers := strings.Join(sortedKeys(c.Target.Headers), ", ")
	secrets := ""
	if secretsDigest != "" {
		secrets = hiddenValue(secretsDigest)
	}
	batch := c.BatchSize
	if batch == 0 {
		batch = trigger.DefaultBatchSize
	}
	conc := trigger.DefaultConcurrency
	if c.ScalingConfig != nil && c.ScalingConfig.MaximumConcurrency != 0 {
		conc = c.ScalingConfig.MaximumConcurrency
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = trigger.DefaultTimeout
	}
	filters := ""
	if c.FilterCriteria != nil && len(c.FilterCriteria.Filters) > 0 {
		b, _ := json.Marshal(c.FilterCriteria)
		filters = string(b)
	}
	return map[string]string{
		"Queue":                          c.Queue,
		"Target":                         target,
		"Headers":                        headers,
		"Environment":                    env,
		"Secrets":                        secrets,
		"Enabled":                        fmt.Sprint(c.IsEnabled()),
		"BatchSize":                      fmt.Sprint(batch),
		"MaximumBatchingWindowInSeconds": fmt.Sprint(c.MaximumBatchingWindowInSeconds),
		"ReportBatchItemFailures":        fmt.Sprint(slices.Contains(c.FunctionResponseTypes, trigger.ReportBatchItemFailures)),
		"MaximumConcurrency":             fmt.Sprint(conc),
		"Timeout":                        fmt.Sprint(timeout),
		"FilterCriteria":                 filters,
	}
}

// hiddenValue stands for a target's secrets in plans and logs: a few
// characters of their digest, which tell a changed value from an
// unchanged one.
func hiddenValue(digest string) string {
	short := digest[strings.LastIndexByte(digest, ':')+1:]
	if len(short) > 12 {
		short = short[:12]
	}
	return "(hidden, digest " + short + ")"
}

// currentSecretsDigest is the digest of the secrets of a trigger as a
// server returned it: the one it gives, or, from a server that shows the
// secrets themselves (tidemq before they were redacted), their digest.
func currentSecretsDigest(cur *trigger.Status) string {
	if cur.SecretsDigest != "" {
		return cur.SecretsDigest
	}
	return trigger.SecretsDigest(&cur.Config)
}

// applyTriggers creates or updates a trigger for every event source whose
// function has a local target, and lists the others as skipped. Triggers
// the topology does not name are left alone.
func applyTriggers(ctx context.Context, target TriggerTarget, c *Config, dryRun bool, plan *Plan) error {
	for _, t := range c.Triggers {
		name := TriggerName(t)
		f := c.Function(t.Function)
		if f == nil {
			plan.Changes = append(plan.Changes, Change{Kind: KindTrigger, Name: name, Action: ActionSkip,
				Reason: fmt.Sprintf("function %s is not declared", t.Function)})
			continue
		}
		code, why := c.LambdaTarget(f)
		if !f.HasLocalTarget() && code == nil {
			if why == "" {
				why = fmt.Sprintf("function %s has no url or command to stand for it locally", f.Name)
			}
			plan.Changes = append(plan.Changes, Change{Kind: KindTrigger, Name: name, Action: ActionSkip, Reason: why})
			continue
		}
		want, notes, err := TriggerConfig(t, f)
		if err != nil {
			return fmt.Errorf("trigger %s: %w", name, err)
		}
		want.Target.Function = code
		// A server that runs no code on behalf of its triggers skips the
		// function's triggers, as it would one without a local target.
		codeRefused := func(err error) bool {
			if code == nil || !strings.Contains(err.Error(), "--allow-trigger-commands") {
				return false
			}
			plan.Changes = append(plan.Changes, Change{Kind: KindTrigger, Name: name, Action: ActionSkip,
				Reason: fmt.Sprintf("function %s runs its code (%s) on the server, which does not allow it: start it with --allow-trigger-commands", f.Name, f.Runtime)})
			return true
		}
		cur, err := target.Trigger(ctx, name)
		if err != nil {
			return fmt.Errorf("trigger %s: %w", name, err)
		}
		ch := Change{Kind: KindTrigger, Name: name, Notes: notes}
		wf := triggerFields(&want, trigger.SecretsDigest(&want))
		if cur == nil {
			ch.Action = ActionCreate
			for _, k := range sortedKeys(wf) {
				if wf[k] != "" {
					ch.Attributes = append(ch.Attributes, AttributeChange{Name: k, New: wf[k]})
				}
			}
			if !dryRun {
				warnings, err := target.CreateTrigger(ctx, want)
				if err != nil && codeRefused(err) {
					continue
				}
				if err != nil {
					return fmt.Errorf("create trigger %s: %w", name, err)
				}
				ch.Notes = append(ch.Notes, warnings...)
			}
			plan.Changes = append(plan.Changes, ch)
			continue
		}
		if cur.Queue != want.Queue {
			return fmt.Errorf("trigger %s exists and polls queue %s, not %s: a trigger's queue cannot change (delete it, or name the event source)", name, cur.Queue, want.Queue)
		}
		hf := triggerFields(&cur.Config, currentSecretsDigest(cur))
		for _, k := range sortedKeys(wf) {
			if hf[k] != wf[k] {
				ch.Attributes = append(ch.Attributes, AttributeChange{Name: k, Old: hf[k], New: wf[k]})
			}
		}
		ch.Action = ActionUnchanged
		if len(ch.Attributes) > 0 {
			ch.Action = ActionUpdate
			if !dryRun {
				warnings, err := target.UpdateTrigger(ctx, want)
				if err != nil && codeRefused(err) {
					continue
				}
				if err != nil {
					return fmt.Errorf("update trigger %s: %w", name, err)
				}
				ch.Notes = append(ch.Notes, warnings...)
			}
		}
		plan.Changes = append(plan.Changes, ch)
	}
	return nil
}
