package main

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ladder's version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.json() {
				return writeJSON(a.stdout, map[string]string{
					"version": version, "commit": commit, "date": date, "go": runtime.Version(),
				})
			}
			_, err := fmt.Fprintf(a.stdout, "ladder %s (commit %s, built %s, %s)\n", version, commit, date, runtime.Version())
			return err
		},
	}
}

// writeJSON prints v as indented JSON: the stable output for scripts.
func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
