# The Hermes Agent image with hinit as PID 1 (docs/image.md).
#
# hinit and hsvc are static Go binaries cross-compiled outside the image
# (`make cross` puts them in dist/linux-amd64 and dist/linux-arm64); this file
# only adds them and docker/ to a Hermes base image. It builds with the legacy
# builder and with BuildKit alike: no heredocs, no COPY --chmod/--link, and
# TARGETARCH (set by BuildKit, absent in the legacy builder) defaults to amd64.
#
#   make cross && docker build -t hermes-agent:hinit .
#   docker buildx build --platform linux/amd64,linux/arm64 -t hermes-agent:hinit .
#   make test-image   # the offline test image: BASE_IMAGE=hinit-test-base:latest
ARG BASE_IMAGE=nousresearch/hermes-agent:latest

# The files hinit runs on, with fixed modes: COPY keeps the build context's,
# and a checkout made under umask 002 has group-writable files, a root-owned
# hinit.yaml hinit then refuses (and binaries root runs that a gid 0 user
# could rewrite). A stage, so that the chmod copies nothing into the image.
FROM ${BASE_IMAGE} AS files
ARG TARGETARCH
USER root
COPY docker/hinit.yaml docker/hermes-setup.sh /hinit/etc/
COPY dist/linux-${TARGETARCH:-amd64}/hinit dist/linux-${TARGETARCH:-amd64}/hsvc /hinit/bin/
RUN chmod 0755 /hinit /hinit/etc /hinit/bin /hinit/etc/hermes-setup.sh /hinit/bin/hinit /hinit/bin/hsvc && \
    chmod 0644 /hinit/etc/hinit.yaml

FROM ${BASE_IMAGE}

USER root

# The hermes account (UID/GID 10000, home /opt/data) when the base lacks it,
# with useradd where there is one and by hand on a minimal base; its home is
# the data volume. /run is world-writable with the sticky bit, like the tmpfs
# `docker run --tmpfs /run` mounts, so that hinit can make its runtime dirs
# under --user 10000 too. /usr/bin/tini points at hinit, which reads tini's
# flags as tini does (docs/tini.md), so old `tini -g --` entrypoints keep working. For today's hermes,
# which speaks s6 (docs/s6-compat.md), /init is hinit and /command holds
# with-contenv and hsvc's s6 names, replacing s6-overlay's.
RUN set -e; \
    if ! grep -q '^hermes:' /etc/group; then \
        if command -v groupadd >/dev/null 2>&1; then groupadd -g 10000 hermes; \
        else echo 'hermes:x:10000:' >>/etc/group; fi; \
    fi; \
    if ! grep -q '^hermes:' /etc/passwd; then \
        if command -v useradd >/dev/null 2>&1; then useradd -u 10000 -g 10000 -M -d /opt/data -s /bin/sh hermes; \
        else echo 'hermes:x:10000:10000:Hermes Agent:/opt/data:/bin/sh' >>/etc/passwd; fi; \
    fi; \
    mkdir -p /opt/data /etc/hinit /run /usr/bin /usr/local/bin; \
    chown 10000:10000 /opt/data; \
    chmod 1777 /run; \
    ln -sf /usr/local/bin/hinit /usr/bin/tini; \
    ln -sf /usr/local/bin/hinit /usr/local/bin/with-contenv; \
    mkdir -p /command; \
    ln -sf /usr/local/bin/hinit /init; \
    ln -sf /usr/local/bin/hinit /command/with-contenv; \
    for c in s6-svc s6-svstat s6-svscanctl s6-svwait s6-setuidgid s6-log; do \
        ln -sf /usr/local/bin/hsvc /command/$c; ln -sf /usr/local/bin/hsvc /usr/local/bin/$c; \
    done

ENV HERMES_HOME=/opt/data

COPY --from=files /hinit/etc/ /etc/hinit/
COPY --from=files /hinit/bin/ /usr/local/bin/

VOLUME ["/opt/data"]
HEALTHCHECK --interval=30s --timeout=10s --start-period=6m --retries=3 CMD ["/usr/local/bin/hsvc", "check"]
ENTRYPOINT ["/usr/local/bin/hinit"]
CMD []
