package present

import "github.com/ladder-tui/ladder/retry"

// Severity glyphs: they carry a finding's or a warning's severity where
// colour does not (NO_COLOR), so every screen uses the same ones. ▲, not
// ⚠: ⚠ is drawn one or two cells wide depending on the terminal.
const (
	GlyphError   = "✖"
	GlyphWarning = "▲"
	GlyphInfo    = "ℹ"
)

// SeverityGlyph is the glyph of a severity.
func SeverityGlyph(s retry.Severity) string {
	switch s {
	case retry.SeverityError:
		return GlyphError
	case retry.SeverityWarning:
		return GlyphWarning
	}
	return GlyphInfo
}
