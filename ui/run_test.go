package ui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunQuitsAndLogsToFile: q ends Run cleanly, logs go to the file and
// the standard logger is given back as it was.
func TestRunQuitsAndLogsToFile(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "ladder.log")
	var out bytes.Buffer
	before := log.Writer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, w := io.Pipe()
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, _ = w.Write([]byte("q"))
	}()
	err := Run(ctx, Options{Client: newFake(), LogFile: logPath, Input: in, Output: &out, Title: "test"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if log.Writer() != before {
		t.Fatal("Run left the standard logger redirected")
	}
	if _, err := os.Stat(logPath); err != nil {
		t.Fatalf("no log file: %v", err)
	}
	// The alternate screen was entered and left again: the terminal is restored.
	o := out.String()
	if enter, leave := strings.Index(o, "\x1b[?1049h"), strings.LastIndex(o, "\x1b[?1049l"); enter < 0 || leave < enter {
		t.Fatalf("alternate screen not entered and left: %q", o)
	}
}

// TestRunEndsWithContext: cancelling ctx ends Run with ctx's error.
func TestRunEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	in, _ := io.Pipe()
	err := Run(ctx, Options{Client: newFake(), Input: in, Output: io.Discard})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run returned %v", err)
	}
}

func TestRunNeedsClient(t *testing.T) {
	if err := Run(context.Background(), Options{}); err == nil {
		t.Fatal("Run without a client did not fail")
	}
}
