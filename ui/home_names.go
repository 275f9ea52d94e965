package ui

import (
	"github.com/ladder-tui/ladder/internal/present"
	"github.com/ladder-tui/ladder/internal/termtext"
)

// homeNames is the names one layout of the home table shows, shared by its
// rows, so that a row's name cell is cut knowing its siblings
// (present.ShortenNames: a ladder's queues keep the ends that tell them
// apart). Cut once per width, on the first row drawn at that width: a row
// is drawn every frame, the names change only with the rows. No lock: View
// runs on the event loop, after Update (charm.land/bubbletea/v2: tea.go,
// eventLoop then render).
type homeNames struct {
	names []string // sanitised
	cut   map[int]map[string]string
}

// shareNames gives rows one homeNames of their names.
func shareNames(rows []homeRow) []homeRow {
	h := &homeNames{cut: map[int]map[string]string{}}
	for i := range rows {
		if rows[i].kind != rowSection {
			h.names = append(h.names, termtext.Sanitize(rows[i].name))
			rows[i].names = h
		}
	}
	return rows
}

// fit is name (sanitised) as a cell of width cells shows it among its
// siblings; a row built without siblings (nil) shows it as it is, for the
// table to cut.
func (h *homeNames) fit(name string, width int) string {
	if h == nil {
		return name
	}
	cut, ok := h.cut[width]
	if !ok {
		short := present.ShortenNames(h.names, width)
		cut = make(map[string]string, len(short))
		for i, n := range h.names {
			cut[n] = short[i]
		}
		h.cut[width] = cut
	}
	if s, ok := cut[name]; ok {
		return s
	}
	return name
}
