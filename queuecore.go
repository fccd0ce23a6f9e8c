package tidemq

import (
	"context"
	"strconv"
	"time"
)

// QueueCore implements the Broker calls that read or change only a queue's
// record, once for every broker: TagQueue, UntagQueue, ListQueueTags,
// AddPermission, RemovePermission and GetQueueAttributes. The broker embeds
// it (NewQueueCore) and supplies a QueueDriver, whose verbs are storage
// only; validation, the edits and the answer's assembly are here.
type QueueCore struct {
	d QueueDriver
}

// NewQueueCore returns the queue calls over d.
func NewQueueCore(d QueueDriver) QueueCore { return QueueCore{d: d} }

// QueueDriver is what QueueCore needs from a store.
type QueueDriver interface {
	// EditQueue runs edit on the record of the queue named name (a name or
	// URL as the client gave it; QueueDoesNotExist when there is none),
	// with the queue kept from changing meanwhile, and stores the record
	// when edit succeeds. An edit changes Tags in place and replaces Attrs
	// through SetAttribute.
	EditQueue(ctx context.Context, name string, edit func(*QueueRecord) error) error
	// QueueTags returns the queue's tags, a map the caller may keep.
	QueueTags(ctx context.Context, name string) (map[string]string, error)
	// QueueView returns the queue's record and depth for
	// GetQueueAttributes. The record's maps are only read.
	QueueView(ctx context.Context, name string) (QueueView, error)
}

// QueueRecord is a queue's record as an edit sees it.
type QueueRecord struct {
	Name, ARN string
	Tags      map[string]string
	// Attrs are the queue's attributes. An edit does not change the map:
	// SetAttribute replaces it and sets AttrsChanged, and the driver then
	// applies the new attributes (ParseQueueSettings).
	Attrs        map[string]string
	AttrsChanged bool
}

// SetAttribute sets one attribute ("" removes it) in a copy of r.Attrs.
func (r *QueueRecord) SetAttribute(name, value string) {
	attrs := make(map[string]string, len(r.Attrs)+1)
	for k, v := range r.Attrs {
		attrs[k] = v
	}
	attrs[name] = value
	r.Attrs, r.AttrsChanged = attrs, true
}

// QueueView is what GetQueueAttributes reports of a queue: its record and
// its depth at the time of the call.
type QueueView struct {
	Attrs             map[string]string
	ARN               string
	Created, Modified time.Time
	Visible, Inflight int // ApproximateNumberOfMessages, ...NotVisible
	Delayed           int // ApproximateNumberOfMessagesDelayed
}

// TagQueue adds or overwrites tags; a queue holds at most MaxTagsPerQueue.
func (c QueueCore) TagQueue(ctx context.Context, p TagQueueParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return c.d.EditQueue(ctx, p.Queue, func(r *QueueRecord) error {
		return p.ApplyTo(r.Name, r.Tags)
	})
}

// UntagQueue removes tags; unknown keys are ignored.
func (c QueueCore) UntagQueue(ctx context.Context, p UntagQueueParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return c.d.EditQueue(ctx, p.Queue, func(r *QueueRecord) error {
		p.ApplyTo(r.Tags)
		return nil
	})
}

// ListQueueTags returns the queue's tags.
func (c QueueCore) ListQueueTags(ctx context.Context, p ListQueueTagsParams) (map[string]string, error) {
	return c.d.QueueTags(ctx, p.Queue)
}

// AddPermission adds a statement, labelled p.Label, to the queue's Policy.
func (c QueueCore) AddPermission(ctx context.Context, p AddPermissionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return c.editPolicy(ctx, p.Queue, p.AddTo)
}

// RemovePermission removes the statement labelled p.Label.
func (c QueueCore) RemovePermission(ctx context.Context, p RemovePermissionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return c.editPolicy(ctx, p.Queue, p.RemoveFrom)
}

// editPolicy sets the queue's Policy to what edit makes of it.
func (c QueueCore) editPolicy(ctx context.Context, queue string, edit func(policy, queueARN string) (string, error)) error {
	return c.d.EditQueue(ctx, queue, func(r *QueueRecord) error {
		policy, err := edit(r.Attrs[AttrPolicy], r.ARN)
		if err == nil {
			r.SetAttribute(AttrPolicy, policy)
		}
		return err
	})
}

// GetQueueAttributes returns the asked-for attributes, computed ones
// included. No names, no attributes; "All", all of them.
func (c QueueCore) GetQueueAttributes(ctx context.Context, p GetQueueAttributesParams) (map[string]string, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	v, err := c.d.QueueView(ctx, p.Queue)
	if err != nil {
		return nil, err
	}
	all := v.Attributes()
	out := make(map[string]string)
	for _, n := range p.Names {
		if n == AttrAll {
			return all, nil
		}
		if v, ok := all[n]; ok {
			out[n] = v
		}
	}
	return out, nil
}

// Attributes returns every attribute GetQueueAttributes can report of v:
// the set ones (an empty value is not set) and the computed ones.
func (v *QueueView) Attributes() map[string]string {
	all := make(map[string]string, len(v.Attrs)+6)
	for k, val := range v.Attrs {
		if val != "" {
			all[k] = val
		}
	}
	all[AttrApproximateNumberOfMessages] = strconv.Itoa(v.Visible)
	all[AttrApproximateNumberOfMessagesNotVisible] = strconv.Itoa(v.Inflight)
	all[AttrApproximateNumberOfMessagesDelayed] = strconv.Itoa(v.Delayed)
	all[AttrCreatedTimestamp] = strconv.FormatInt(v.Created.Unix(), 10)
	all[AttrLastModifiedTimestamp] = strconv.FormatInt(v.Modified.Unix(), 10)
	all[AttrQueueArn] = v.ARN
	return all
}
