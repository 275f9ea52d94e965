package present

import "github.com/ladder-tui/ladder/retry/topology"

// Severity glyphs: they carry a finding's or a warning's severity where
// colour does not (NO_COLOR), so every screen uses the same ones. ▲, not
// ⚠: ⚠ is drawn one or two cells wide depending on the terminal.
const (
	GlyphError   = "✖"
	GlyphWarning = "▲"
	GlyphInfo    = "ℹ"
)

// SeverityGlyph is the glyph of a severity.
func SeverityGlyph(s topology.Severity) string {
	switch s {
	case topology.SeverityError:
		return GlyphError
	case topology.SeverityWarning:
		return GlyphWarning
	}
	return GlyphInfo
}
