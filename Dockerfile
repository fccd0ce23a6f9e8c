# tidemq container image: a static binary on an empty base, run as a
# non-root user, its store in the /data volume.
#
#   docker build -t tidemq --build-arg VERSION=v1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg BUILD_DATE=$(date -u +%FT%TZ) .
#   docker run -p 127.0.0.1:9324:9324 -v tidemq-data:/data tidemq
#
# Without --auth the server answers only requests addressed to an IP
# address, localhost, --public-url's host or --allowed-hosts: from another
# container, add the name it is reached by, e.g.
#   docker run ... tidemq serve --listen 0.0.0.0:9324 --data-dir /data --allowed-hosts tidemq
# (or set TIDEMQ_ALLOWED_HOSTS=tidemq). Anything beyond one machine wants
# --auth; see the README's "Container" and "Security" sections.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=
ARG BUILD_DATE=
# The one build command (e2e/release_test.go runs this very line).
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.buildDate=${BUILD_DATE}" -o /out/tidemq ./cmd/tidemq
# The store's directory, owned by the user the server runs as, private
# (the server warns about a data directory others can read).
RUN install -d -m 0700 -o 65532 -g 65532 /out/data

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/tidemq /tidemq
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME /data
EXPOSE 9324
# 'tidemq health' GETs /health (no curl in the image); with --auth, give
# the container AWS credentials or serve with --auth-exempt health.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["/tidemq", "health", "--endpoint", "http://127.0.0.1:9324", "--timeout", "4s"]
ENTRYPOINT ["/tidemq"]
CMD ["serve", "--listen", "0.0.0.0:9324", "--data-dir", "/data"]
