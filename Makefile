# Convenience targets; the scripts are the source of truth.
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -checklinkname=0 -X hinit/pid1.Version=$(VERSION) -X hinit/hsvc.Version=$(VERSION)
GO ?= /usr/local/go/bin/go

.PHONY: build cross demo test fuzz bench clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ ./cmd/hinit ./cmd/hsvc

cross:
	for arch in amd64 arm64; do \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
			-o dist/linux-$$arch/ ./cmd/hinit ./cmd/hsvc || exit 1; \
	done

demo:
	./scripts/demo

test:
	./scripts/test

fuzz:
	./scripts/fuzz

bench:
	./scripts/bench

clean:
	rm -rf bin dist

# The container image (docs/image.md): hinit and hsvc cross-compiled here,
# added to a Hermes base image by the Dockerfile.
IMAGE ?= hermes-agent:hinit
BASE_IMAGE ?=
.PHONY: image test-image

image: cross
	docker build $(if $(BASE_IMAGE),--build-arg BASE_IMAGE=$(BASE_IMAGE)) -t $(IMAGE) .

# The offline test image hinit-test:latest (tests/docker/build-test-image).
test-image:
	./tests/docker/build-test-image
