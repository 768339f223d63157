# linkout: build with the Swift toolchain, run on a slim Debian with only the runtime libraries.
#   docker build -t linkout .        (podman: podman build --format docker -t linkout .)
#   docker run -d -p 8080:8080 -v linkout-data:/app/data linkout

FROM swift:6.3-bookworm AS build
WORKDIR /build
# The manifest names every target, tests included, so the whole package tree is copied.
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
# --static-swift-stdlib: the Swift runtime and Foundation go into the binary; only C libraries stay shared.
RUN swift build -c release --product linkout --static-swift-stdlib \
 && install -D "$(swift build -c release --show-bin-path)/linkout" /out/linkout

FROM debian:bookworm-slim
# Versions are not pinned: bookworm's security updates should land on every rebuild.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4 libsqlite3-0 libpq5 libssl3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 linkout \
 && useradd --system --uid 10001 --gid linkout --home-dir /app --shell /usr/sbin/nologin linkout
WORKDIR /app
COPY --from=build /out/linkout /usr/local/bin/linkout
COPY Public ./Public
COPY config.json ./config.json
# The ledger lives here; mount a volume so it outlives the container. Secrets come from the environment or
# *_FILE variables at run time, never from the image.
RUN install -d -m 0700 -o linkout -g linkout /app/data
VOLUME ["/app/data"]
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 CMD ["linkout", "healthcheck"]
# linkout handles SIGTERM itself (also as PID 1): it stops accepting, finishes in-flight requests, exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["linkout"]
CMD ["serve"]
