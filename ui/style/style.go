// Package style holds ladder's one Styles struct and the theme it is built
// from. Views take styles from here and never build their own, so NO_COLOR
// and the user's palette apply everywhere at once.
package style

import (
	"image/color"
	"strconv"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// Theme names colours by ANSI index (0–15), so they follow the user's
// terminal palette instead of imposing ours. -1 means "terminal default".
type Theme struct {
	Accent  int // titles, the selected tab, keys in help
	Muted   int // secondary text, column headers
	OK      int // healthy, live
	Warning int // warnings, side-effect banners
	Error   int // errors, unreachable broker
	Info    int // informational findings
	Stale   int // data kept from before the broker went away
}

// DefaultTheme uses the basic 16 colours.
func DefaultTheme() Theme {
	return Theme{Accent: 6, Muted: 8, OK: 2, Warning: 3, Error: 1, Info: 4, Stale: 8}
}

// Styles is every style the UI draws with.
type Styles struct {
	NoColor bool

	App       lipgloss.Style // the whole title bar
	Title     lipgloss.Style // "ladder" in the title bar
	Muted     lipgloss.Style
	Header    lipgloss.Style // column headers
	Section   lipgloss.Style // section titles ("Headers", "x-death")
	Label     lipgloss.Style // property names
	Value     lipgloss.Style
	Strong    lipgloss.Style // emphasised values (the selected queue's name)
	Selected  lipgloss.Style // the cursor row: reverse, so it shows without colour
	Marked    lipgloss.Style // marked rows (and the mark glyph)
	Stale     lipgloss.Style // greyed rows while the broker is unreachable
	Dimmed    lipgloss.Style // rows shown for context that a filter does not match
	Live      lipgloss.Style // "● live"
	Down      lipgloss.Style // "broker unreachable"
	Error     lipgloss.Style
	Warning   lipgloss.Style
	Info      lipgloss.Style
	OK        lipgloss.Style
	Banner    lipgloss.Style // peek side effects
	Dialog    lipgloss.Style // the move dialog's frame
	Focused   lipgloss.Style // the focused dialog field
	Cursor    lipgloss.Style // the text cursor of a typed field: reverse, so it shows without colour
	Key       lipgloss.Style // a key name in prompts
	Help      help.Styles
	ProgressA color.Color // progress bar filled
	ProgressB color.Color // progress bar empty
}

// New builds Styles from a theme. With noColor it sets no colour at all:
// only bold, faint and reverse, which NO_COLOR allows and which keep the
// selection visible.
func New(t Theme, noColor bool) *Styles {
	c := func(i int) color.Color {
		if noColor || i < 0 {
			return lipgloss.NoColor{}
		}
		return lipgloss.Color(strconv.Itoa(i))
	}
	base := lipgloss.NewStyle()
	fg := func(i int) lipgloss.Style {
		if noColor || i < 0 {
			return base
		}
		return base.Foreground(c(i))
	}
	s := &Styles{
		NoColor:   noColor,
		App:       base,
		Title:     fg(t.Accent).Bold(true),
		Muted:     fg(t.Muted),
		Header:    fg(t.Muted).Bold(true),
		Section:   fg(t.Accent).Bold(true),
		Label:     fg(t.Muted),
		Value:     base,
		Strong:    base.Bold(true),
		Selected:  base.Reverse(true).Bold(true),
		Marked:    fg(t.Accent).Bold(true),
		Stale:     fg(t.Stale).Faint(true),
		Dimmed:    fg(t.Muted).Faint(true),
		Live:      fg(t.OK).Bold(true),
		Down:      fg(t.Error).Bold(true),
		Error:     fg(t.Error).Bold(true),
		Warning:   fg(t.Warning),
		Info:      fg(t.Info),
		OK:        fg(t.OK),
		Banner:    fg(t.Warning).Bold(true),
		Dialog:    base.Border(lipgloss.RoundedBorder()).BorderForeground(c(t.Accent)).Padding(0, 1),
		Focused:   base.Reverse(true),
		Cursor:    base.Reverse(true),
		Key:       fg(t.Accent).Bold(true),
		ProgressA: c(t.Accent),
		ProgressB: c(t.Muted),
	}
	if noColor {
		// Without colour, warnings and errors still stand out.
		s.Warning = base.Bold(true)
		s.Stale = base.Faint(true)
		s.Dimmed = base.Faint(true)
	}
	s.Help = help.Styles{
		Ellipsis:       s.Muted,
		ShortKey:       s.Key,
		ShortDesc:      s.Muted,
		ShortSeparator: s.Muted,
		FullKey:        s.Key,
		FullDesc:       base,
		FullSeparator:  s.Muted,
	}
	return s
}
