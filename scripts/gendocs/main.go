// Command gendocs writes ladder's command reference from its cobra
// commands (package refdocs):
//
//	gendocs -md docs/commands                       the Markdown pages (committed; make docs)
//	gendocs -man man -version v1.2.0 -date 1733400000   the man pages (make man, goreleaser)
//
// -md replaces every page in its directory, so a removed command's page
// goes too. -date is a Unix time (a release passes its commit's), default
// $SOURCE_DATE_EPOCH, else now.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ladder-tui/ladder/internal/cli"
	"github.com/ladder-tui/ladder/internal/refdocs"
)

func main() {
	md := flag.String("md", "", "directory of the Markdown pages (its *.md are replaced)")
	man := flag.String("man", "", "directory of the man pages (its *.1 are replaced)")
	version := flag.String("version", "", "ladder's version for the man pages' footer")
	date := flag.String("date", os.Getenv("SOURCE_DATE_EPOCH"), "the man pages' date, a Unix time (default now)")
	flag.Parse()
	if *md == "" && *man == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gendocs [-md DIR] [-man DIR [-version V] [-date UNIX]]")
		os.Exit(2)
	}
	if err := run(*md, *man, *version, *date); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(md, man, version, date string) error {
	if md != "" {
		if err := clear(md, "*.md"); err != nil {
			return err
		}
		if err := refdocs.Markdown(cli.Reference(), md); err != nil {
			return err
		}
	}
	if man != "" {
		when := time.Now()
		if date != "" {
			sec, err := strconv.ParseInt(date, 10, 64)
			if err != nil {
				return fmt.Errorf("-date %q: want a Unix time: %w", date, err)
			}
			when = time.Unix(sec, 0)
		}
		if err := clear(man, "*.1"); err != nil {
			return err
		}
		if err := refdocs.Man(cli.Reference(), man, version, when); err != nil {
			return err
		}
	}
	return nil
}

// clear removes dir's files matching pattern: pages of commands that are
// gone must not stay behind.
func clear(dir, pattern string) error {
	old, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("remove stale page: %w", err)
		}
	}
	return nil
}
