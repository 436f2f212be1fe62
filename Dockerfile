# linkpatrol as a container: a static binary on distroless, nothing else.
#
#   docker build -t linkpatrol .
#   docker run --rm -v "$PWD:/work" linkpatrol check ./public
#
# The working directory is /work, so a mounted directory keeps the
# database (linkpatrol.db) and the -o report files between runs.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# Static (no cgo), reproducible (-trimpath), with the version stamped.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/linkpatrol ./cmd/linkpatrol

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/linkpatrol /linkpatrol
WORKDIR /work
ENTRYPOINT ["/linkpatrol"]
CMD ["--help"]
