package secret

import (
	"errors"
	"strings"
	"testing"
)

func TestRedactTextAndErr(t *testing.T) {
	s := RedactText(`dial "amqp://bob:hunter2@h:1/" failed; also http://x:y@z`, "hunter2")
	if strings.Contains(s, "hunter2") || strings.Contains(s, ":y@") {
		t.Errorf("RedactText left a secret: %s", s)
	}
	base := errors.New("auth failed for password s3cret-pw")
	err := redactErr(base, "amqp://u:s3cret-pw@h/")
	if strings.Contains(err.Error(), "s3cret-pw") || !errors.Is(err, base) {
		t.Errorf("redactErr: %v (chain kept: %v)", err, errors.Is(err, base))
	}
}

func TestRedactTextKeepsUserName(t *testing.T) {
	// The password is the user name: the URL keeps its user, the bare word
	// elsewhere is left too (it is the user, shown anyway).
	got := redactErr(errors.New(`dial amqp://guest:guest@h:5672/ as guest`), "amqp://guest:guest@h:5672/").Error()
	if got != "dial amqp://guest:xxxxx@h:5672/ as guest" {
		t.Errorf("same user and password: %q", got)
	}
	got = RedactText("amqp://bob:hunter2@h/ said hunter2", "hunter2", "bob")
	if got != "amqp://bob:xxxxx@h/ said xxxxx" {
		t.Errorf("%q", got)
	}
}
