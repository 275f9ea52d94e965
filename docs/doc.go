// Package docs holds ladder's documentation (Markdown) and no code: its
// test checks that every relative link of README.md, CONTRIBUTING.md and
// docs/*.md reaches a file, and every #anchor a heading, so moving a
// section cannot leave a reader at a dead link.
package docs
