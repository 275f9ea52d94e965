// Package refdocs writes ladder's command reference from its cobra
// commands (cli.Reference): one Markdown page per command, committed in
// docs/commands so it reads on the forge and a test sees it go stale, and
// man pages (section 1), made at release time for the archives and the
// deb/rpm. scripts/gendocs is its command line (make docs, make man).
package refdocs

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Header opens every Markdown page: whoever edits one by hand learns that
// the next make docs undoes it.
const Header = "<!-- Generated from ladder's commands by `make docs` (scripts/gendocs); do not edit. -->\n\n"

// Markdown writes one page per available command of root (hidden ones and
// cobra's help command left out, as --help leaves them out) into dir,
// named like ladder_peek.md and linked to each other relatively, so the
// pages read the same in a clone, on the forge and in a release archive.
// Nothing in them depends on the date or the machine.
func Markdown(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("markdown reference: %w", err)
	}
	prepare(root)
	prepend := func(string) string { return Header }
	link := func(name string) string { return name } // ladder_peek.md beside this page
	if err := doc.GenMarkdownTreeCustom(root, dir, prepend, link); err != nil {
		return fmt.Errorf("markdown reference in %s: %w", dir, err)
	}
	return nil
}

// Man writes a section 1 man page per available command of root into dir
// (ladder.1, ladder-peek.1, …). version goes into the footer ("ladder
// v1.2.0"); date is the month shown there, given so a release's pages are
// the same wherever they are built (its commit's date).
func Man(root *cobra.Command, dir, version string, date time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	prepare(root)
	source := "ladder"
	if version != "" {
		source += " " + strings.TrimPrefix(version, "v")
	}
	date = date.UTC()
	h := &doc.GenManHeader{Title: strings.ToUpper(root.Name()), Section: "1", Source: source, Manual: "ladder manual", Date: &date}
	if err := doc.GenManTree(root, h, dir); err != nil {
		return fmt.Errorf("man pages in %s: %w", dir, err)
	}
	return nil
}

// Files are the pages Markdown writes for root, by file name: what
// docs/commands must hold, no more and no less.
func Files(root *cobra.Command) []string {
	var names []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		names = append(names, strings.ReplaceAll(c.CommandPath(), " ", "_")+".md")
		for _, sub := range Available(c) {
			walk(sub)
		}
	}
	walk(root)
	return names
}

// Available are c's subcommands that get a page: those --help lists, less
// cobra's help command (ladder help X is ladder X --help).
func Available(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			out = append(out, sub)
		}
	}
	return out
}

// prepare readies every command of root for cobra's generators, once
// (Markdown and Man change root: give each a fresh cli.Reference()).
//
// The "Auto generated … on <today>" line goes (cobra checks each
// command's own field). Each long description becomes a fenced block:
// it is written for the terminal, with aligned tables, indented lists and
// words like <ms> and Q_error that Markdown (and go-md2man, which the man
// pages go through) would reflow, swallow as HTML or turn to italics; a
// fence keeps it as --help prints it.
func prepare(c *cobra.Command) {
	c.DisableAutoGenTag = true
	if c.Long != "" {
		fence := "```"
		for strings.Contains(c.Long, fence) {
			fence += "`"
		}
		c.Long = fence + "text\n" + strings.TrimRight(c.Long, "\n") + "\n" + fence
	}
	for _, sub := range c.Commands() {
		prepare(sub)
	}
}
