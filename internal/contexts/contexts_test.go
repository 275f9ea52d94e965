package contexts

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const twoContexts = `# ladder's brokers
current-context = "staging"

[contexts.staging]
amqp-url = "amqp://ladder@rabbit.staging:5672/"
vhost = "orders"
password-env = "STAGING_PW"

[contexts.prod]
amqp-url = "amqps://ladder@rabbit.prod:5671/"
api-url = "https://rabbit.prod:15671"
ca-cert = "prod-ca.pem"
audit-log = "~/prod-audit.jsonl"
read-only = true
password-file = "/etc/ladder/prod.password"
`

func TestLoadReadsContexts(t *testing.T) {
	p := write(t, twoContexts)
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if f.Current != "staging" || strings.Join(f.Names(), " ") != "prod staging" {
		t.Fatalf("current %q, names %q", f.Current, f.Names())
	}
	prod, err := f.Get("prod")
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	if prod.Name != "prod" || !prod.ReadOnly || prod.CACert != filepath.Join(filepath.Dir(p), "prod-ca.pem") ||
		prod.AuditLog != filepath.Join(home, "prod-audit.jsonl") || prod.PasswordFile != "/etc/ladder/prod.password" {
		t.Errorf("prod = %+v", prod)
	}
	if _, err := f.Get("qa"); err == nil || !strings.Contains(err.Error(), `no context "qa" in `+p+" (it has prod, staging)") {
		t.Errorf("Get(qa) = %v", err)
	}
}

func TestLoadRefuses(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{"[contexts.prod]\namqp-url = \"amqp://ladder:s3cret@h/\"\n", `context "prod": amqp-url holds a password`},
		{"[contexts.prod]\napi-url = \"http://u:s3cret@h:15672\"\n", `context "prod": api-url holds a password`},
		{"[contexts.prod]\npassword-file = \"a\"\npassword-env = \"B\"\n", "both set"},
		{"[contexts.prod]\npassword-env = \"s3cret value\"\n", "the name of an environment variable"},
		{"[contexts.prod]\namqp_url = \"amqp://h/\"\n", `unknown key "contexts.prod.amqp_url"`},
		{"[contexts.\"a b\"]\n", "a name is 1 to 64"},
		{"[contexts.prod\n", "line 2: expected"},
		{"current-context = 3\n", "config file"},
	} {
		_, err := Load(write(t, tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.body, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %q shows the password or spans lines", tt.body, err)
		}
	}
	_, err := Load(filepath.Join(t.TempDir(), "none.toml"))
	if !errors.Is(err, ErrNoFile) {
		t.Errorf("missing file: %v, want ErrNoFile", err)
	}
}

func TestSetCurrentKeepsTheFile(t *testing.T) {
	p := write(t, twoContexts)
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := SetCurrent(f, "prod"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if want := strings.Replace(twoContexts, `current-context = "staging"`, `current-context = "prod"`, 1); string(b) != want {
		t.Errorf("file now\n%s\nwant\n%s", b, want)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
	if g, err := Load(p); err != nil || g.Current != "prod" {
		t.Errorf("read back: %v, %v", g, err)
	}
	if err := SetCurrent(f, "qa"); err == nil {
		t.Error("SetCurrent to a context the file lacks: no error")
	}
	// No current-context line yet: one is added first.
	p = write(t, "[contexts.a]\nvhost = \"x\"\n")
	f, _ = Load(p)
	if err := SetCurrent(f, "a"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !strings.HasPrefix(string(b), "current-context = \"a\"\n[contexts.a]") {
		t.Errorf("file now %q", b)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv(EnvConfig, "/x/ladder.toml")
	if p, _ := DefaultPath(); p != "/x/ladder.toml" {
		t.Errorf("with $%s: %q", EnvConfig, p)
	}
	t.Setenv(EnvConfig, "")
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	if p, _ := DefaultPath(); p != "/cfg/ladder/config.toml" {
		t.Errorf("with $XDG_CONFIG_HOME: %q", p)
	}
}

func FuzzLoad(f *testing.F) {
	f.Add(twoContexts)
	f.Add("[contexts.a]\namqp-url = \"amqp://u:p@h/\"\n")
	f.Fuzz(func(t *testing.T, body string) {
		if fl, err := parse("/c/config.toml", []byte(body)); err == nil {
			for _, n := range fl.Names() {
				if _, err := fl.Get(n); err != nil {
					t.Fatal(err)
				}
			}
		} else if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error spans lines: %q", err)
		}
	})
}
