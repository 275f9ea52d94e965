# ladder — build, lint and test. `make test` starts the RabbitMQ the tests need.
GO       ?= go
BIN      ?= bin/ladder
PKGS     ?= ./...
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
DATE     ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS  := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)
FUZZTIME ?= 20s

.PHONY: all build test test-matrix test-short lint bench fuzz broker-up broker-down clients docs man clean

all: lint test build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

broker-up:
	scripts/rabbitmq.sh up
	scripts/rabbitmq.sh up --version 4.3
	scripts/rabbitmq.sh up --version 4.3 --no-stats
	scripts/rabbitmq.sh up --version 4.0

broker-down:
	scripts/rabbitmq.sh down --version 4.3 --tls
	scripts/rabbitmq.sh down --version 4.3 --no-stats
	scripts/rabbitmq.sh down --cluster
	scripts/rabbitmq.sh down --version 4.3
	scripts/rabbitmq.sh down --version 4.0
	scripts/rabbitmq.sh down

clients:
	scripts/clients.sh

# Real brokers are required here: integration tests fail instead of skipping.
# Every package on RabbitMQ 3.10, the broker-facing ones again on 4.3; tests
# of what differs by version also reach 4.0 (brokertest.RequireVersion); each
# broker is left as found (scripts/test.sh checks); LADDER_TEST_NOISE=1
# fills the first with unrelated ladders and queues first. The alert rules
# are tested by promtool (scripts/promtool-rules.sh).
test: broker-up clients
	LADDER_REQUIRE_BROKER=1 scripts/promtool-rules.sh
	GO=$(GO) PKGS='$(PKGS)' scripts/test.sh

# test and RabbitMQ 4.0 too.
test-matrix: broker-up clients
	LADDER_REQUIRE_BROKER=1 scripts/promtool-rules.sh
	GO=$(GO) PKGS='$(PKGS)' VERSIONS='3.10 4.3 4.0' scripts/test.sh

# Unit tests only where no broker answers (integration tests skip with a reason).
test-short:
	$(GO) test -count=1 $(PKGS)

# gofmt, go vet and staticcheck (its default checks; pinned in
# scripts/lint/go.mod, a module of its own so it does not move ladder's).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool -modfile=scripts/lint/go.mod staticcheck $(PKGS)

# The command reference, generated from the cobra commands
# (scripts/gendocs): docs/commands/*.md, committed (a test fails when they
# are stale), and the man pages in man/, not committed (goreleaser makes
# them for the archives and the deb/rpm), dated by the last commit.
docs: man
	$(GO) run ./scripts/gendocs -md docs/commands

man:
	$(GO) run ./scripts/gendocs -man man -version $(VERSION) -date $$(git log -1 --format=%ct 2>/dev/null || date +%s)

bench: broker-up
	scripts/bench.sh

fuzz:
	scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin dist man
