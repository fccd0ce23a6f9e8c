package top

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// Model is the bubbletea model of `tidemq top`.
type Model struct {
	src      Source
	interval time.Duration
	prev     *Frame
	cur      Frame
	rows     []Row
	sort     int
	filter   string
	editing  bool
	err      error
	width    int
}

// New returns a model that reads src every interval.
func New(src Source, interval time.Duration) Model {
	if interval <= 0 {
		interval = time.Second
	}
	return Model{src: src, interval: interval}
}

// SortBy returns the model sorted by one of SortKeys (unknown keys are
// ignored).
func (m Model) SortBy(key string) Model {
	for i, k := range SortKeys {
		if k == key {
			m.sort = i
		}
	}
	return m
}

type frameMsg struct {
	f   Frame
	err error
}

type tickMsg struct{}

func (m Model) fetch() tea.Msg {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, err := m.src.Fetch(ctx)
	return frameMsg{f, err}
}

// Init fetches the first frame.
func (m Model) Init() tea.Cmd { return m.fetch }

// Update handles frames, ticks, keys and resizes.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case frameMsg:
		m.err = msg.err
		if msg.err == nil {
			if m.cur.At.IsZero() {
				m.rows = Rows(nil, msg.f)
			} else {
				prev := m.cur
				m.prev = &prev
				m.rows = Rows(m.prev, msg.f)
			}
			m.cur = msg.f
		}
		return m, tea.Tick(m.interval, func(time.Time) tea.Msg { return tickMsg{} })
	case tickMsg:
		return m, m.fetch
	case tea.WindowSizeMsg:
		m.width = msg.Width
	case tea.KeyMsg:
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
			// Keys typed quickly can arrive together ("/dlq"): one at a time.
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
				m = next.(Model)
				cmds = append(cmds, cmd)
			}
			return m, tea.Sequence(cmds...)
		}
		if m.editing {
			switch msg.Type {
			case tea.KeyEnter:
				m.editing = false
			case tea.KeyEsc:
				m.editing, m.filter = false, ""
			case tea.KeyBackspace:
				if r := []rune(m.filter); len(r) > 0 {
					m.filter = string(r[:len(r)-1])
				}
			case tea.KeyCtrlC:
				return m, tea.Quit
			case tea.KeyRunes, tea.KeySpace:
				m.filter += string(msg.Runes)
			}
			return m, nil
		}
		switch msg.String() {
		case "q", "ctrl+c", "esc":
			return m, tea.Quit
		case "s":
			m.sort = (m.sort + 1) % len(SortKeys)
		case "/":
			m.editing, m.filter = true, ""
		}
	}
	return m, nil
}

// View renders the current state.
func (m Model) View() string {
	return Render(View{Source: m.src.Name(), At: m.cur.At, Rows: m.rows, Sort: SortKeys[m.sort],
		Filter: m.filter, Editing: m.editing, Err: m.err, Width: m.width})
}
