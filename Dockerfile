# tidemq container image: a static binary on an empty base, run as a
# non-root user, its store in the /data volume. Nothing is pulled from a
# registry: deploy/image/build.sh builds the binary on the host
# (CGO_ENABLED=0) and stages it, with the host's CA certificates and time
# zone data and the empty /data directory, in the context this file builds:
#
#   VERSION=v1.2.3 deploy/image/build.sh tidemq:v1.2.3
#   docker run -p 127.0.0.1:9324:9324 -v tidemq-data:/data tidemq:v1.2.3
#
# Without --auth the server answers only requests addressed to an IP
# address, localhost, --public-url's host or --allowed-hosts: from another
# container, add the name it is reached by, e.g.
#   docker run ... tidemq serve --listen 0.0.0.0:9324 --data-dir /data --allowed-hosts tidemq
# (or set TIDEMQ_ALLOWED_HOSTS=tidemq). Anything beyond one machine wants
# --auth; see the README's "Container" and "Security" sections.

FROM scratch
ARG VERSION=dev
ARG COMMIT=
ARG BUILD_DATE=
LABEL org.opencontainers.image.title="tidemq" \
      org.opencontainers.image.description="Self-hosted Amazon SQS and SNS: AWS SDKs and the AWS CLI as clients, one static binary" \
      org.opencontainers.image.url="https://github.com/tidemq/tidemq" \
      org.opencontainers.image.source="https://github.com/tidemq/tidemq" \
      org.opencontainers.image.documentation="https://github.com/tidemq/tidemq#container" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="tidemq" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.created="${BUILD_DATE}"
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY zoneinfo /usr/share/zoneinfo
COPY tidemq /tidemq
# The store's directory, owned by the user the server runs as, private
# (the server warns about a data directory others can read): mode 0700
# in the context, kept by COPY.
COPY --chown=65532:65532 data /data
USER 65532:65532
VOLUME /data
EXPOSE 9324
# 'tidemq health' GETs /health (no curl in the image); with --auth, give
# the container AWS credentials or serve with --auth-exempt health.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["/tidemq", "health", "--endpoint", "http://127.0.0.1:9324", "--timeout", "4s"]
ENTRYPOINT ["/tidemq"]
CMD ["serve", "--listen", "0.0.0.0:9324", "--data-dir", "/data"]
